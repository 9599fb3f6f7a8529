//! The README's two quick starts, run as written, in a fresh home folder:
//! a newcomer's first commands are the ones most likely to rot unseen.
//!
//! Each command line of the quick starts' code blocks is run by `bash` as
//! it stands, with the `koth` under test first on the PATH, except three
//! things the test cannot do as a newcomer does, each checked instead:
//! `cargo install --locked --path .` (the line must be there, naming this
//! package, whose binary the test puts on the PATH), `cargo run --release
//! -- up` (started as `koth up` with a data folder and port of its own,
//! as every suite that runs it does), and the server's address
//! `http://127.0.0.1:8080`, replaced by that port's. A command with
//! `--open` serves its viewer until stopped: the test reads the URL it
//! prints, loads the page and the replay behind it, then stops it.
mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const README_URL: &str = "http://127.0.0.1:8080";

/// The command lines of the `n`th ```sh block under the `## heading`
/// (comments after `  #` dropped).
fn commands(readme: &str, heading: &str, n: usize) -> Vec<String> {
    let start = readme.find(&format!("\n## {heading}\n")).unwrap_or_else(|| panic!("README has no section {heading:?}"));
    let section = &readme[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let block = section.split("```sh\n").nth(n + 1).unwrap_or_else(|| panic!("{heading:?} has no code block {n}"));
    let block = &block[..block.find("```").expect("an unclosed code block")];
    block.lines().map(|l| l.find("  #").map_or(l, |i| &l[..i]).trim().to_owned()).filter(|l| !l.is_empty()).collect()
}

/// Run `line` with bash in `dir` as the newcomer's shell would.
fn shell(line: &str, dir: &Path, env: &[(&str, String)]) -> Command {
    let mut c = Command::new("bash");
    // exec: the command itself gets the signals the test sends.
    c.arg("-c").arg(format!("exec {line}")).current_dir(dir).env_remove("KOTH_SERVER").env_remove("KOTH_TOKEN");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn run(line: &str, dir: &Path, env: &[(&str, String)]) -> String {
    eprintln!("$ {line}");
    let out = shell(line, dir, env).stdin(Stdio::null()).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("{stdout}{stderr}");
    assert!(out.status.success(), "`{line}` failed ({}):\n{stdout}{stderr}", out.status);
    format!("{stdout}{stderr}")
}

/// Run a command that serves a viewer: load what it serves, then stop it.
fn run_viewer(line: &str, dir: &Path, env: &[(&str, String)]) {
    eprintln!("$ {line}");
    let mut child = shell(line, dir, env).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
    // The report comes first, then the viewer's URL alone on its line.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        match lines.next() {
            Some(Ok(l)) if l.starts_with("http://") => break l,
            Some(Ok(l)) => eprintln!("{l}"),
            _ => panic!("`{line}` ended without printing its viewer's URL ({:?})", child.wait()),
        }
    };
    std::thread::spawn(move || for _ in lines {});
    // The match page itself (`?turn=N` may be added to it).
    let (addr, path) = url.trim_start_matches("http://").split_once('/').expect("a URL with a path");
    let (addr, path) = (addr.to_owned(), format!("/{path}"));
    assert_eq!(path, "/matches/0", "{url}");
    let (status, page) = common::http_get(&addr, &path);
    assert!(status == 200 && page.contains("data-page=\"match\""), "{status} {page}");
    let (status, replay) = common::http_get(&addr, "/api/matches/0/replay");
    assert!(status == 200 && replay.contains("\"turns\""), "the viewer serves its replay: {status} {replay:.300}");
    let (status, frames) = common::http_get(&addr, "/api/matches/0/frames");
    assert_eq!(status, 200, "the viewer serves its frames: {frames:.300}");
    // SAFETY: kill takes integers only; the child is ours and not reaped yet.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(0), "`{line}` stops cleanly on SIGTERM");
}

#[test]
fn the_quick_starts_work_as_written() {
    if !common::postgres_binaries() {
        return;
    }
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme");
    let _ = std::fs::remove_dir_all(&root);
    let (home, work, bin) = (root.join("home"), root.join("work"), root.join("bin"));
    for d in [&home, &work, &bin] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_koth"), bin.join("koth")).unwrap();
    let env = vec![
        ("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())),
        ("HOME", home.display().to_string()),
        ("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/readme".to_owned()),
        ("KOTH_SANDBOX_UID_BASE", "57000".to_owned()),
        ("KOTH_CACHE", root.join("cache").display().to_string()),
    ];

    // Play on your machine.
    let local = commands(&readme, "Quick start: play on your machine", 0);
    assert_eq!(local.first().map(String::as_str), Some("cargo install --locked --path ."), "{local:?}");
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"koth\""), "`cargo install --path .` installs the koth package");
    assert!(local.len() >= 3, "{local:?}");
    for line in &local[1..] {
        if line.contains("--open") {
            run_viewer(line, &work, &env);
        } else {
            run(line, &work, &env);
        }
    }

    // A server, and the bot on it.
    let server = commands(&readme, "Quick start: a server, and your bot on it", 0);
    assert_eq!(server, ["cargo run --release -- up"]);
    let data = root.join("up");
    let (up, url) = common::start(&data, "127.0.0.1:18099", "readme-up", 56000);
    let url = url.trim_end_matches('/');
    let author = commands(&readme, "Quick start: a server, and your bot on it", 1);
    assert!(author.iter().all(|l| l.starts_with("koth ")), "{author:?}");
    let mut said = String::new();
    for line in &author {
        said += &run(&line.replace(README_URL, url), &work, &env);
    }
    // The account was made and saved, the bot compiled, validated and played.
    assert!(home.join(".config/koth").exists(), "the token is saved under ~/.config/koth");
    assert!(said.contains("compiled in"), "{said}");
    assert!(said.lines().any(|l| l.starts_with("match ") && l.contains(&format!("{url}/matches/"))), "no match shown: {said}");
    assert_eq!(common::stop(up), Some(0));
}
