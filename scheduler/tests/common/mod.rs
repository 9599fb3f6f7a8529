//! A private PostgreSQL per test, from the machine's binaries.

#![allow(dead_code)]

use koth_scheduler::pg::PrivatePostgres;
use koth_testkit::TestPostgres;
use sqlx::PgPool;

/// A fresh server for one test (None = skip outside CI; in CI a missing
/// PostgreSQL fails the test).
pub fn postgres(name: &str) -> Option<TestPostgres> {
    koth_testkit::postgres(&koth_testkit::target_tmpdir!().join(format!("pg-{name}")))
}

pub async fn pool(pg: &PrivatePostgres, max: u32) -> PgPool {
    koth_scheduler::db::connect_and_migrate(&pg.url(), max).await.unwrap()
}

pub mod stand_in;
