//! Every SQL statement of the service: connecting to PostgreSQL and
//! applying the migrations in `sql/` (here), the job queue ([`queue`]), the
//! rows koth writes and reads ([`store`]), recording a finished match
//! ([`results`]) and its replay ([`replays`]), accounts and their tokens
//! ([`accounts`]), games hosts add ([`games`]), contests' deadlines and finals ([`contests`]), what the
//! runners can run ([`runners`]), what the API reads ([`reads`]) and the
//! audit trail, written in the transactions of what it records ([`audit`]), A/B tests between two versions of a bot ([`ab`]). Each function is one
//! statement or one transaction, with typed arguments and results.

pub mod ab;
pub mod accounts;
pub mod audit;
pub mod bot_data;
pub mod contests;
pub mod games;
pub mod queue;
pub mod reads;
pub mod replays;
pub mod results;
pub mod runners;
pub mod store;

use std::time::Duration;

use sqlx::postgres::{PgPool, PgPoolOptions};

/// The migrations in the repository's `sql/` folder, embedded at build time.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../sql");

/// Connect with a pool of `max` connections, retrying for up to `patience`
/// (a database that is starting, or restarting, is waited for).
pub async fn connect(url: &str, max: u32, patience: Duration) -> Result<PgPool, sqlx::Error> {
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        let r = PgPoolOptions::new().max_connections(max).acquire_timeout(Duration::from_secs(10)).connect(url).await;
        match r {
            Ok(pool) => return Ok(pool),
            Err(e) if tokio::time::Instant::now() < deadline => {
                tracing::info!("database not reachable yet ({e}); retrying");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Connect and bring the schema up to date.
pub async fn connect_and_migrate(url: &str, max: u32) -> Result<PgPool, String> {
    let pool = connect(url, max, Duration::from_secs(30)).await.map_err(|e| format!("connecting to {}: {e}", redact(url)))?;
    MIGRATOR.run(&pool).await.map_err(|e| format!("applying migrations: {e}"))?;
    Ok(pool)
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &creds[..c], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_redacted() {
        assert_eq!(super::redact("postgres://koth:secret@db:5432/koth"), "postgres://koth:***@db:5432/koth");
        assert_eq!(super::redact("postgres://koth@db/koth"), "postgres://koth@db/koth");
    }
}
