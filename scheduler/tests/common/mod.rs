//! A private PostgreSQL per test, from the machine's binaries.

#![allow(dead_code)]

use std::path::PathBuf;

use koth_scheduler::pg::PrivatePostgres;
use sqlx::PgPool;

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// A fresh server for one test (None = skip outside CI; in CI a missing
/// PostgreSQL fails the test).
pub fn postgres(name: &str) -> Option<PrivatePostgres> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pg-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    match PrivatePostgres::start(&dir, None) {
        Ok(pg) => Some(pg),
        Err(e) if in_ci() => panic!("CI=true and PostgreSQL cannot start: {e}"),
        Err(e) => {
            eprintln!("SKIPPED (not in CI): {e}");
            None
        }
    }
}

pub async fn pool(pg: &PrivatePostgres, max: u32) -> PgPool {
    koth_scheduler::db::connect_and_migrate(&pg.url(), max).await.unwrap()
}
