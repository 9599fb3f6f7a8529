//! What the suites that drive the API in-process share: a private
//! PostgreSQL per suite and a client of the router.
#![allow(dead_code)] // each suite uses its own part

use axum::body::Body;
use axum::http::{Request, StatusCode};
use koth_testkit::TestPostgres;
use serde_json::Value;
use tower::ServiceExt;

/// A private PostgreSQL for one suite (`None`: skipped outside CI, as
/// `koth_testkit::postgres` says).
pub fn postgres(name: &str) -> Option<TestPostgres> {
    koth_testkit::postgres(&koth_testkit::target_tmpdir!().join(format!("pg-{name}")))
}

/// A private PostgreSQL with koth's tables (a pool of `connections`) and
/// a Target ladder with its seed's settings: what most API suites start
/// from.
pub async fn postgres_with_target_ladder(name: &str, connections: u32) -> Option<(TestPostgres, sqlx::PgPool, i64)> {
    let pg = postgres(name)?;
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), connections).await.unwrap();
    let target = koth_ladder::format::LadderConfig::default_for(koth_games::GameKind::Target);
    let ladder = koth_scheduler::db::store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &target).await.unwrap();
    Some((pg, pool, ladder))
}

/// The API and pages, called without a socket.
pub struct Api(pub axum::Router);

impl Api {
    /// Status and body (JSON, or the text as a JSON string).
    pub async fn call(&self, method: &str, uri: &str, token: Option<&str>, body: impl Into<Vec<u8>>) -> (StatusCode, Value) {
        let (status, _, json) = self.call_full(method, uri, token, body).await;
        (status, json)
    }

    /// Status, `Retry-After` and body.
    pub async fn call_full(
        &self,
        method: &str,
        uri: &str,
        token: Option<&str>,
        body: impl Into<Vec<u8>>,
    ) -> (StatusCode, Option<String>, Value) {
        self.call_from(None, method, uri, token, body).await
    }

    /// [`Api::call_full`] as if over a socket from `peer` (what `koth web`
    /// passes its handlers).
    pub async fn call_from(
        &self,
        peer: Option<std::net::SocketAddr>,
        method: &str,
        uri: &str,
        token: Option<&str>,
        body: impl Into<Vec<u8>>,
    ) -> (StatusCode, Option<String>, Value) {
        let mut req = Request::builder().method(method).uri(uri);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        if let Some(peer) = peer {
            req = req.extension(axum::extract::ConnectInfo(peer));
        }
        let resp = self.0.clone().oneshot(req.body(Body::from(body.into())).unwrap()).await.unwrap();
        let status = resp.status();
        let retry = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
        let v = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        (status, retry, v)
    }
}

impl Api {
    /// Submit `source` as `bot.py`, a new version of the bot `name` on
    /// `ladder`, and wait (two minutes at most) until the version is no
    /// longer pending or validating: the upload's answer (`bot`,
    /// `version`) and the version's log (`status`, ...).
    pub async fn submit_and_settle(&self, token: &str, ladder: i64, name: &str, source: &str) -> (Value, Value) {
        let (st, made) = self.call("POST", &format!("/api/ladders/{ladder}/bots/{name}?file=bot.py"), Some(token), source).await;
        assert!(matches!(st, StatusCode::CREATED | StatusCode::ACCEPTED), "{st}: {made}");
        let version = made["version"].as_i64().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let (_, log) = self.call("GET", &format!("/api/versions/{version}/log"), Some(token), Vec::new()).await;
            if !matches!(log["status"].as_str(), Some("pending" | "validating")) {
                return (made, log);
            }
            assert!(std::time::Instant::now() < deadline, "version {version} still {} after 120 s", log["status"]);
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
}

impl Api {
    /// A GET with these headers: status, response headers and the body's
    /// bytes as sent (not decoded).
    pub async fn get_raw(&self, uri: &str, headers: &[(&str, &str)]) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
        let mut req = Request::builder().method("GET").uri(uri);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = self.0.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
        let (parts, body) = resp.into_parts();
        (parts.status, parts.headers, axum::body::to_bytes(body, usize::MAX).await.unwrap().to_vec())
    }
}

/// Run the `koth` binary with its login file under `config` (no server or
/// token from the environment) and `stdin` as its input: whether it
/// succeeded, and its stdout then stderr.
pub fn koth(config: &std::path::Path, args: &[&str], stdin: &str) -> (bool, String) {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .env_remove("KOTH_SERVER")
        .env_remove("KOTH_TOKEN")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}
