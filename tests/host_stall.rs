//! A machine that stops is not a bot that is slow (issue 31): `koth match`
//! stopped from outside in the middle of a match (SIGSTOP, as a paused VM
//! or a stopped runner would be) ends the match as the machine's fault,
//! with no result and no bot blamed, instead of scoring the timeouts it
//! saw when it woke up. Before, a 16-minute stop ended a match "both bots
//! timed out by 996 s", counted as a tie.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

/// Answers "2" after 5 ms of sleep: 3000 moves take over 15 s, most of
/// them with the engine waiting for an answer.
const SLOW_STILL: &str = r#"
#include <stdio.h>
#include <unistd.h>
int main(void) {
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        usleep(5000);
        puts("2");
        fflush(stdout);
    }
    return 0;
}
"#;

#[test]
fn a_match_whose_engine_was_stopped_ends_as_the_machines_fault() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        koth_testkit::missing("not root: this test runs koth match's sandbox as root");
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("host-stall");
    std::fs::create_dir_all(&dir).unwrap();
    let bot = dir.join("slow_still.c");
    std::fs::write(&bot, SLOW_STILL).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["match", "--game", "target", "--max-turns", "3000", "--json", "--seed", "7"])
        .arg(&bot)
        .arg(&bot)
        .args(["--logs"])
        .arg(dir.join("logs"))
        .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/host-stall")
        .env("KOTH_SANDBOX_UID_BASE", "64700")
        .env("KOTH_CACHE", dir.join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting koth match");
    let pid = child.id() as libc::pid_t;
    // Let the bots compile and the match begin, then stop the whole koth
    // process (the bots keep running in their boxes) for 300 ms, a few
    // times: a stop that falls between two turns stalls no clock, one that
    // falls in a turn must end the match.
    std::thread::sleep(Duration::from_millis(1500));
    let began = Instant::now();
    for _ in 0..8 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        // SAFETY: kill(2) with a pid of our own child and a plain signal.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(began.elapsed() < Duration::from_secs(60), "koth match took too long");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    let ended = &report["ended_by"];
    assert_eq!(ended["kind"], "host_overloaded", "the stop was scored: {ended}\n{stderr}");
    let reason = ended["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("engine itself was stopped or starved"), "{reason}");
    // No bot is blamed: no timeouts counted, every bot still ok.
    for o in report["outcomes"].as_array().unwrap() {
        assert_eq!(o["timeouts"], 0, "{o}");
        assert!(o["status"] == "ok" || o["status"]["kind"] == "ok", "{o}");
    }
    assert_eq!(out.status.code(), Some(1), "a match with no result exits 1");
}
