//! A real browser for the pages' tests: Debian's chromium, driven through
//! chromedriver (WebDriver) on loopback.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Whether chromium and chromedriver are installed; if not, a missing
/// prerequisite ([`crate::missing`]: fails in CI).
#[track_caller]
pub fn available() -> bool {
    if Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists() {
        return true;
    }
    crate::missing(format!("chromium or chromedriver are missing: needs {CHROMIUM}, {CHROMEDRIVER} (Debian: chromium chromium-driver)"))
}

/// chromedriver, and the browser it started, found by its own profile
/// folder: a test that fails half-way must not leave a chromium behind
/// (it outlives its chromedriver).
pub struct Driver(Child, PathBuf);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = Command::new("pkill").args(["-f", "--"]).arg(format!("--user-data-dir={}", self.1.display())).status();
    }
}

/// A headless chromium with its profile in `profile` (emptied first), and
/// a WebDriver session on it.
pub async fn browser(profile: PathBuf) -> (Client, Driver) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let driver = Driver(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromedriver"),
        profile.clone(),
    );
    let _ = std::fs::remove_dir_all(&profile);
    let mut caps = serde_json::Map::new();
    // As root, in a machine with no network: no sandbox of its own (it runs
    // no untrusted page here), no background connections.
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": CHROMIUM, "args": [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--window-size=1400,1000", format!("--user-data-dir={}", profile.display()),
        ]}),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut b = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
        b.capabilities(caps.clone());
        match b.connect(&format!("http://127.0.0.1:{port}")).await {
            Ok(c) => return (c, driver),
            Err(e) => {
                assert!(Instant::now() < deadline, "chromedriver did not start a session: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Wait until `script` (a JavaScript expression) is truthy; returns its
/// value. Past `secs`, panics with what the page says.
pub async fn until(c: &Client, what: &str, script: &str, secs: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let v = c.execute(&format!("return ({script});"), vec![]).await.unwrap_or(Value::Null);
        if !v.is_null() && v != json!(false) && v != json!("") {
            return v;
        }
        if Instant::now() > deadline {
            let text = c.execute("return document.body.innerText", vec![]).await.unwrap_or_default();
            panic!("waited {secs} s for {what} ({script}); the page says:\n{text}");
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}
