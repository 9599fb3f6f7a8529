//! The API against its own OpenAPI document, by an independent client:
//! Schemathesis (`pip install schemathesis`) reads `/api/openapi.json` from
//! a running `koth web` (seeded with the example ladders, called with the
//! host's token) and generates requests for every operation, valid and
//! invalid. Every check (all are on by default) must pass: no server error, every status, content
//! type, header and body as documented, invalid input refused.
//!
//! Where the document cannot say what makes a request acceptable (see
//! `tests/schemathesis.toml`), only that one check is off, for those
//! operations. The number of examples per operation is bounded (`KOTH_SCHEMATHESIS_EXAMPLES`,
//! default 30) so the run stays a few minutes; the seed is fixed so a
//! failure reproduces. Schemathesis is found as `$KOTH_SCHEMATHESIS`, else
//! `schemathesis` on the PATH; with CI set, a missing one fails the test.

mod common;

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::http_get;

fn schemathesis() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("KOTH_SCHEMATHESIS") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| PathBuf::from(d).join("schemathesis")).find(|p| p.exists())
}

#[test]
fn the_api_keeps_to_its_openapi_document() {
    let Some(st) = schemathesis() else {
        koth_testkit::missing("schemathesis is not installed (pip install schemathesis; or set KOTH_SCHEMATHESIS)");
        return;
    };
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let Some(pg) = koth_testkit::postgres(&tmp.join("pg-schemathesis")) else { return };
    let data = tmp.join("schemathesis-data");
    let _ = std::fs::remove_dir_all(&data);
    let addr = format!("127.0.0.1:{}", koth_scheduler::pg::free_port().unwrap());
    let mut web = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["web", "--database-url", &pg.url(), "--listen", &addr, "--examples", "--data-dir", data.to_str().unwrap()])
        .env("KOTH_LOG", "warn")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(web.stderr.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let line = lines.next().expect("koth web exited").unwrap();
        if line.starts_with("koth web is up at") {
            break;
        }
        assert!(Instant::now() < deadline, "koth web did not come up");
    }
    std::thread::spawn(move || for _ in lines {});
    assert_eq!(http_get(&addr, "/health").0, 200);
    let token = std::fs::read_to_string(data.join("host-token")).unwrap().trim().to_owned();
    let examples = std::env::var("KOTH_SCHEMATHESIS_EXAMPLES").unwrap_or_else(|_| "30".into());
    let report = tmp.join("schemathesis-report");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemathesis.toml");
    let out = Command::new(&st)
        .args(["--config-file", config, "run", &format!("http://{addr}/api/openapi.json"), "--max-examples", &examples])
        // One worker: with two, hypothesis parses source in two threads at
        // once, and CPython 3.11 (Debian's and pyenv's) sometimes fails that
        // with "SystemError: AST constructor recursion depth mismatch", a
        // runtime error of the tool, not a finding about the API.
        .args(["--seed", "20261124", "--workers", "1", "--no-color", "--request-timeout", "30"])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--report", "junit", "--report-dir", report.to_str().unwrap()])
        .current_dir(&tmp)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", st.display()));
    let _ = web.kill();
    let _ = web.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "schemathesis found the API and its document disagreeing (above; report in {})", report.display());
}
