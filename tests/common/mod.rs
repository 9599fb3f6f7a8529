//! What the suites that run `koth up` as a process share.
#![allow(dead_code, unused_imports)] // each suite uses its own part

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether PostgreSQL's binaries are here for a suite that starts its own
/// server; in CI their absence fails the test, elsewhere it is skipped
/// (and says so).
pub use koth_testkit::postgres_binaries;

pub fn http_get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status = raw.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

/// Finished matches, from the metrics.
pub fn finished(addr: &str) -> u64 {
    let (_, text) = http_get(addr, "/metrics");
    text.lines()
        .find(|l| l.starts_with("koth_matches{state=\"finished\"}"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A running `koth up`; stopped (SIGTERM, then SIGKILL) when dropped, so a
/// test that fails half-way leaves no service (and its PostgreSQL and data
/// folder lock) behind.
pub struct Up(Option<Child>);

impl Drop for Up {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            stop_child(child);
        }
    }
}

/// Start `koth up` on `addr` with its data in `data`; `name` and `uid_base`
/// keep its boxes apart from other suites'. Returns it and the URL it printed.
pub fn start(data: &std::path::Path, addr: &str, name: &str, uid_base: u32) -> (Up, String) {
    start_with(data, addr, name, uid_base, &[])
}

/// [`start`] with more of `koth up`'s flags.
pub fn start_with(data: &std::path::Path, addr: &str, name: &str, uid_base: u32, more: &[&str]) -> (Up, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["up", "--data-dir", data.to_str().unwrap(), "--listen", addr, "--runners", "2"])
        .args(more)
        .env("KOTH_SANDBOX_RUNTIME_DIR", format!("/run/koth-test/{name}"))
        .env("KOTH_SANDBOX_UID_BASE", uid_base.to_string())
        .env("KOTH_CACHE", data.join("cache"))
        .env("KOTH_GAMES", data.join("games"))
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = Vec::new();
    let url = loop {
        let line = lines.next().unwrap_or_else(|| panic!("koth up exited: {seen:?}")).unwrap();
        if let Some(rest) = line.strip_prefix("koth is up at ") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
        seen.push(line);
        assert!(Instant::now() < deadline, "koth up did not come up: {seen:?}");
    };
    // Keep draining its log so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (Up(Some(child)), url)
}

/// Stop it (SIGTERM); its exit code, or None if it had to be killed.
pub fn stop(mut up: Up) -> Option<i32> {
    stop_child(up.0.take().expect("running"))
}

fn stop_child(mut child: Child) -> Option<i32> {
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(Some(st)) = child.try_wait() {
            return st.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    None
}
