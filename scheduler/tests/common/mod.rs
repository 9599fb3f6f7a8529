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
    koth_scheduler::pg::start_for_tests(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pg-{name}")))
}

pub async fn pool(pg: &PrivatePostgres, max: u32) -> PgPool {
    koth_scheduler::db::connect_and_migrate(&pg.url(), max).await.unwrap()
}

pub mod stand_in;
