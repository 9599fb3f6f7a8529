//! What the suites that drive the API in-process share: a private
//! PostgreSQL per suite and a client of the router.
#![allow(dead_code)] // each suite uses its own part

use std::path::PathBuf;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use koth_scheduler::pg::PrivatePostgres;
use serde_json::Value;
use tower::ServiceExt;

/// A private PostgreSQL for one suite (`None`: skipped outside CI, as
/// `start_for_tests` says).
pub fn postgres(name: &str) -> Option<PrivatePostgres> {
    koth_scheduler::pg::start_for_tests(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pg-{name}")))
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
        let mut req = Request::builder().method(method).uri(uri);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
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
