//! A bot author plays on their own machine without root: `koth match` and
//! `koth replay rerun` as an ordinary user with a delegated cgroup (see
//! `koth_sandbox::Privilege`), and a clear way forward without one.
//!
//! Run as root, like the rest of the suite: the test delegates a cgroup to
//! an unused uid as systemd or an administrator would, and runs `koth` as
//! that uid.

#[path = "../sandbox/tests/common/delegate.rs"]
mod delegate;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use delegate::{Delegation, USER};
use koth_sandbox::cgroup::Hierarchy;

fn root_or_skip() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var("CI").is_err(), "CI=true and not root: this test delegates a cgroup, which needs root");
        eprintln!("SKIPPED (not root)");
        return false;
    }
    true
}

/// `koth` with `args`, as the user, with only a home, a PATH and a runtime
/// folder of this test's (the other test runs at the same time as the same
/// uid).
fn koth_as(d: &Delegation, koth: &Path, home: &Path, args: &[&str]) -> Output {
    let run = d.user_dir("run");
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let mut cmd = Command::new(koth);
    cmd.args(args).env_clear().env("HOME", home).env("XDG_RUNTIME_DIR", &run).env("PATH", "/usr/local/bin:/usr/bin:/bin").current_dir(home);
    d.run(cmd)
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The author's first hour, without sudo: a match between a compiled C bot
/// on stdin/stdout and a Python bot over TCP, its replay checked, and one
/// bot's seat played again against the recording.
#[test]
fn an_author_plays_and_reruns_a_match_without_root() {
    if !root_or_skip() {
        return;
    }
    let parents = <dyn Hierarchy>::detect().expect("a cgroup hierarchy").parents();
    let d = Delegation::new(&parents, "cli");
    let koth = d.copy_exe(Path::new(env!("CARGO_BIN_EXE_koth")));
    let home = d.user_dir("home");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bots = Vec::new();
    for b in ["stdio_wall_hugger.c", "tcp_survivor.py"] {
        let to = home.join(b);
        std::fs::copy(repo.join("bots/snake").join(b), &to).unwrap();
        std::os::unix::fs::chown(&to, Some(USER), Some(USER)).unwrap();
        bots.push(to.display().to_string());
    }
    let replay = home.join("snake.json").display().to_string();
    let args = ["match", "--game", "snake", "--seed", "5", "--max-turns", "150", "--replay", &replay, &bots[0], &bots[1]];
    let out = koth_as(&d, &koth, &home, &args);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "koth match as uid {USER}:\n{t}");
    assert!(t.contains("snake (seed 5)"), "{t}");
    for b in ["stdio_wall_hugger.c", "tcp_survivor.py"] {
        let row = t.lines().find(|l| l.contains(b) && l.trim_end().ends_with("ok")).unwrap_or_else(|| panic!("no ok row for {b}:\n{t}"));
        assert_eq!(row.split_whitespace().nth(6), Some("0"), "{b} timed out:\n{t}");
    }
    // Its files are the user's: the replay, the stderr logs in a folder of
    // the user's own, the boxes' runtime folder.
    use std::os::unix::fs::MetadataExt;
    let logs = PathBuf::from(format!("/tmp/koth-{USER}/match-snake-5"));
    for p in [PathBuf::from(&replay), logs.join("seat2-tcp_survivor.py.stderr"), d.dir.join("run/koth/sandbox")] {
        let m = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{}: {e}\n{t}", p.display()));
        assert_eq!(m.uid(), USER, "{} belongs to uid {}", p.display(), m.uid());
    }

    let out = koth_as(&d, &koth, &home, &["replay", "check", &replay]);
    assert_eq!(out.status.code(), Some(0), "koth replay check:\n{}", text(&out));
    let out = koth_as(&d, &koth, &home, &["replay", "rerun", &replay, "--seat", "2", "--bot", &bots[1]]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "koth replay rerun as uid {USER}:\n{t}");
    assert!(t.contains("reproduced: all"), "the same bot played its seat differently:\n{t}");
    eprintln!("koth replay rerun as uid {USER}:\n{t}");
    let _ = std::fs::remove_dir_all(format!("/tmp/koth-{USER}"));
}

/// Without a delegated cgroup, `koth match` refuses to run bots unconfined
/// and says how to get one.
#[test]
fn without_a_delegated_cgroup_koth_match_says_what_to_do() {
    if !root_or_skip() {
        return;
    }
    let d = Delegation::new(&[], "nocg"); // no cgroup: the user stays in root's
    let koth = d.copy_exe(Path::new(env!("CARGO_BIN_EXE_koth")));
    let home = d.user_dir("home");
    let bot = home.join("drifter.py");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/target/drifter.py"), &bot).unwrap();
    let out = koth_as(&d, &koth, &home, &["match", "--game", "target", "--max-turns", "10", bot.to_str().unwrap()]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(210), "{t}"); // EXIT_SETUP_FAILED
    assert!(t.contains("systemd-run --user --scope -p Delegate=yes"), "{t}");
    assert!(!t.contains("panicked") && t.matches("cannot run the sandbox").count() == 1, "{t}");
}
