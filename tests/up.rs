//! `koth up` as a host starts it: a private PostgreSQL, ladders seeded with
//! the example bots and playing at once, the API answering; stopped with
//! SIGTERM and started again, it continues with nothing lost.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::{finished, http_get, postgres_binaries, start, stop};

fn wait_finished(addr: &str, at_least: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let n = finished(addr);
        if n >= at_least {
            return n;
        }
        assert!(Instant::now() < deadline, "only {n} matches finished, waiting for {at_least}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn up_starts_everything_plays_at_once_and_continues_after_a_restart() {
    if !postgres_binaries() {
        return;
    }
    let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("up-data");
    let _ = std::fs::remove_dir_all(&data);
    let port = koth_scheduler::pg::free_port().unwrap();
    let addr = format!("127.0.0.1:{port}");
    let (child, url) = start(&data, &addr, "up", 67000);
    assert_eq!(url, format!("http://{addr}/"));
    assert_eq!(http_get(&addr, "/health"), (200, r#"{"status":"ok","database":"ok"}"#.to_owned()));
    let (_, ladders) = http_get(&addr, "/api/ladders");
    let ladders: serde_json::Value = serde_json::from_str(&ladders).unwrap();
    let games: Vec<&str> = ladders.as_array().unwrap().iter().map(|l| l["game"].as_str().unwrap()).collect();
    assert_eq!(games, ["flit", "slime", "linkage", "target", "snake"]);
    assert!(data.join("host-token").exists());
    second_up_refuses(&data, &addr);
    wait_finished(&addr, 5);
    cli_against(&addr, &data);
    let ladders_of =
        |addr: &str| serde_json::from_str::<serde_json::Value>(&http_get(addr, "/api/ladders").1).unwrap().as_array().unwrap().len();
    // The five examples and the one the CLI's host made.
    let ladders = ladders_of(&addr);
    assert_eq!(ladders, 6);
    let before = finished(&addr);
    assert_eq!(stop(child), Some(0), "koth up stops cleanly on SIGTERM");

    // Again: the same data, no second seeding, and the ladders play on.
    let (child, _) = start(&data, &addr, "up", 67000);
    let after_restart = finished(&addr);
    assert!(after_restart >= before, "finished matches survived the restart ({before} -> {after_restart})");
    assert_eq!(ladders_of(&addr), ladders, "not seeded twice");
    wait_finished(&addr, after_restart + 3);
    assert_eq!(stop(child), Some(0));
}

fn koth_cli(args: &[&str], server: &str, token: Option<&str>) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_koth"));
    c.args(args).env("KOTH_SERVER", format!("http://{server}")).env_remove("KOTH_TOKEN");
    if let Some(t) = token {
        c.env("KOTH_TOKEN", t);
    }
    c.output().unwrap()
}

/// The CLI client as an author uses it against the running service.
fn cli_against(addr: &str, data: &std::path::Path) {
    let token = std::fs::read_to_string(data.join("host-token")).unwrap().trim().to_owned();
    let out = koth_cli(&["leaderboard", "target"], addr, None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.starts_with("target (rated)") && text.contains("μ − 3σ"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = koth_cli(&["bots", "snake"], addr, None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("tcp_survivor"), "{text}");

    // Submitting needs a token, and says so.
    let out = koth_cli(&["submit", "--ladder", "target", "--name", "mine", "bots/target/still.c"], addr, None);
    assert_eq!(out.status.code(), Some(210));
    assert!(String::from_utf8_lossy(&out.stderr).contains("token"));
    // A good bot: compiled, then its first match is shown.
    let out = koth_cli(&["submit", "--ladder", "target", "--name", "mine", "--watch", "1", "bots/target/still.c"], addr, Some(&token));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains("compiled in"), "{stderr}");
    let line = stdout.lines().find(|l| l.starts_with("match ")).unwrap_or_else(|| panic!("no match shown: {stdout}"));
    let match_id: String = line["match ".len()..].chars().take_while(|c| c.is_ascii_digit()).collect();
    // The author's own result, rank, score and opponents, and the page (not `? (rank null, ...)`).
    assert!(line.contains(" against ") && !line.contains('?') && !line.contains("null"), "{line}");
    assert!(["win", "tie", "loss"].iter().any(|r| line.contains(r)) && line.contains("(rank "), "{line}");
    assert!(line.ends_with(&format!("/matches/{match_id}")), "{line}");
    // And ends with its place on the leaderboard.
    let place = stdout.lines().last().unwrap();
    assert!(place.starts_with("mine is ") && place.contains(" on target") && place.contains("/ladders/"), "{stdout}");
    // A broken bot: the compiler's message, exit 1.
    let broken = data.join("broken.c");
    std::fs::write(&broken, "int main(void) { return missing_name; }\n").unwrap();
    let out = koth_cli(&["submit", "--ladder", "target", "--name", "broken", broken.to_str().unwrap()], addr, Some(&token));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("compile failed") && stderr.contains("missing_name"), "{stderr}");
    // When no match will come, it says why and ends, rather than wait in
    // silence until its timeout; on a pipe it writes lines, not `\r`.
    let ends_with = |args: &[&str], why: &str| {
        let out = koth_cli(args, addr, Some(&token));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success() && stderr.contains(why) && stderr.contains("Its page: http://"), "{stderr}");
        assert!(!stderr.contains("matches finished within"), "it waited for its timeout: {stderr}");
        assert!(!stderr.contains('\r'), "{stderr:?}");
    };
    let out = koth_cli(&["ladder", "create", "lonely", "--game", "target"], addr, Some(&token));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let submit = |ladder: &'static str, name: &'static str| {
        ["submit", "--ladder", ladder, "--name", name, "--timeout-secs", "600", "bots/target/still.c"]
    };
    ends_with(&submit("lonely", "alone"), "it is the only bot ready on lonely: its matches start when another bot is ready");
    let out = koth_cli(&["ladder", "pause", "target"], addr, Some(&token));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    ends_with(&submit("target", "late"), "the ladder target is paused by its host");
    let out = koth_cli(&["ladder", "resume", "target"], addr, Some(&token));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The replay and the bot's stderr of the match it played.
    let file = data.join("replay.json");
    let out = koth_cli(&["replay", "download", &match_id, "-o", file.to_str().unwrap()], addr, None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let replay: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(replay["turns"].is_array());
    // Seats numbered from 1, as on the page; the host owns every seat here,
    // so it must say which.
    let out = koth_cli(&["logs", &match_id], addr, Some(&token));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("several seats") && stderr.contains("--seat N"), "{stderr}");
    let out = koth_cli(&["logs", &match_id, "--seat", "0"], addr, Some(&token));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has seats 1 to 2"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = koth_cli(&["logs", &match_id, "--seat", "1"], addr, Some(&token));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // That match again on this machine, by its id: its bot in its seat,
    // the opponent from the recording. The host owns both seats, so the
    // seat must be named; then every turn comes out as recorded.
    let rerun = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_koth"))
            .args(["replay", "rerun", &match_id, "--bot", "bots/target/still.c"])
            .args(extra)
            .env("KOTH_SERVER", format!("http://{addr}"))
            .env("KOTH_TOKEN", &token)
            .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/up-rerun")
            .env("KOTH_SANDBOX_UID_BASE", "64700")
            .env("KOTH_CACHE", data.join("rerun-cache"))
            .output()
            .unwrap()
    };
    let out = rerun(&[]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("say which seat is your bot's with --seat N"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seats: serde_json::Value = ureq::get(&format!("http://{addr}/api/matches/{match_id}")).call().unwrap().into_json().unwrap();
    let seat = seats["seats"].as_array().unwrap().iter().find(|s| s["name"] == "mine").unwrap()["seat"].as_i64().unwrap() + 1;
    // With four times the match's time a move: this machine's two runners
    // go on playing beside the rerun, and at the match's own 50 ms the bot
    // missed a deadline there (turn 1082 of one CI run) and the rerun
    // diverged. (`tests/cli_replay.rs` reruns at the match's own time.)
    let out = rerun(&["--seat", &seat.to_string(), "--time-scale", "4"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("with --time-scale 4: your bot had 200 ms a move, the match 50 ms\nreproduced: all "), "{text}");
    let out = koth_cli(&["leaderboard", "chess"], addr, None);
    assert_eq!(out.status.code(), Some(210));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no ladder \"chess\""));
}

/// `koth web` serves the pages and the API of an existing database, seeds it
/// on first start when asked, and logs every request as a JSON line. Three
/// started at once on the empty database (as web replicas start) seed it
/// once: one `host`, one ladder per game.
#[test]
fn web_serves_a_database_and_logs_requests_as_json() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let Some(pg) = koth_testkit::postgres(&tmp.join("pg-web")) else { return };
    let start = |i: usize| {
        let data = tmp.join(format!("web-data-{i}"));
        let _ = std::fs::remove_dir_all(&data);
        let addr = format!("127.0.0.1:{}", koth_scheduler::pg::free_port().unwrap());
        let mut child = Command::new(env!("CARGO_BIN_EXE_koth"))
            .args(["web", "--database-url", &pg.url(), "--listen", &addr, "--examples", "--data-dir", data.to_str().unwrap()])
            .env("KOTH_LOG_FORMAT", "json")
            .env_remove("KOTH_LOG")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in lines.map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        (child, rx, addr, data)
    };
    let webs: Vec<_> = (0..3).map(start).collect();
    for (_, rx, addr, _) in &webs {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut printed = Vec::new();
        loop {
            let line = rx
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("koth web at {addr} did not come up: {printed:#?}"));
            if line.starts_with("koth web is up at") {
                break;
            }
            printed.push(line);
            assert!(std::time::Instant::now() < deadline, "koth web at {addr} did not come up: {printed:#?}");
        }
    }
    for (_, _, addr, data) in &webs {
        let (status, body) = http_get(addr, "/api/ladders");
        assert_eq!(status, 200);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&body).unwrap().as_array().unwrap().len(), 5, "seeded once: {body}");
        assert!(data.join("host-token").exists());
    }
    let (_, _, addr, _) = &webs[0];
    assert_eq!(http_get(addr, "/ladders/1").0, 200);
    // The request's log line: JSON, with the path and the status.
    let (_, rx, _, _) = &webs[0];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let logged = loop {
        let line = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("no request log");
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else { panic!("not JSON: {line}") };
        if v["span"]["uri"] == "/api/ladders" && v["fields"]["status"] == 200 {
            break v;
        }
        assert!(std::time::Instant::now() < deadline, "no log line for GET /api/ladders");
    };
    assert_eq!(logged["level"], "INFO");
    assert!(logged["fields"]["latency"].is_string(), "{logged}");
    for (mut child, _, _, _) in webs {
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        assert_eq!(child.wait().unwrap().code(), Some(0), "stops cleanly on SIGTERM");
    }
}

/// A second `koth up` on the same data folder says who runs it and exits;
/// the first keeps its database and answers as before.
fn second_up_refuses(data: &std::path::Path, addr: &str) {
    let other = format!("127.0.0.1:{}", koth_scheduler::pg::free_port().unwrap());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["up", "--data-dir", data.to_str().unwrap(), "--listen", &other])
        .env_remove("DATABASE_URL")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a second koth up started: {stderr}");
    assert!(stderr.contains("koth up is already running") && stderr.contains(&format!("at http://{addr}/")), "{stderr}");
    assert_eq!(http_get(addr, "/health"), (200, r#"{"status":"ok","database":"ok"}"#.to_owned()), "the first one lost its database");
    assert_eq!(http_get(addr, "/api/ladders").0, 200);
}

/// `koth up --no-examples`: no ladders, but the host token the banner
/// names is there and works (a host can then create ladders and add
/// games); a lost token file gets a new token at the next start.
#[test]
fn an_empty_server_still_has_a_host_with_a_token() {
    if !postgres_binaries() {
        return;
    }
    let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("up-empty");
    let _ = std::fs::remove_dir_all(&data);
    let port = koth_scheduler::pg::free_port().unwrap();
    let addr = format!("127.0.0.1:{port}");
    let token_file = data.join("host-token");
    let create = |name: &str| {
        let token = std::fs::read_to_string(&token_file).unwrap_or_else(|e| panic!("{}: {e}", token_file.display()));
        koth_cli(&["ladder", "create", name, "--game", "snake"], &addr, Some(token.trim()))
    };
    let (up, _) = common::start_with(&data, &addr, "up-empty", 67500, &["--no-examples"]);
    assert_eq!(http_get(&addr, "/api/ladders").1, "[]", "--no-examples seeds no ladder");
    let out = create("first");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let first_token = std::fs::read_to_string(&token_file).unwrap();
    assert_eq!(stop(up), Some(0));
    // The same token after a restart; a new one if the file is lost.
    let (up, _) = common::start_with(&data, &addr, "up-empty", 67500, &["--no-examples"]);
    assert_eq!(std::fs::read_to_string(&token_file).unwrap(), first_token);
    assert_eq!(stop(up), Some(0));
    std::fs::remove_file(&token_file).unwrap();
    let (up, _) = common::start_with(&data, &addr, "up-empty", 67500, &["--no-examples"]);
    let second_token = std::fs::read_to_string(&token_file).unwrap();
    assert_ne!(second_token, first_token);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777, 0o600);
    let out = create("second");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The old token was not revoked by the new one.
    let out = koth_cli(&["ladder", "pause", "second"], &addr, Some(first_token.trim()));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = koth_cli(&["ladder", "pause", "second"], &addr, Some("0000"));
    assert!(!out.status.success(), "a wrong token is refused");
    assert_eq!(stop(up), Some(0));
}
