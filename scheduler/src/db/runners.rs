//! What the runners can run (`runners`, `sql/0008_runner_languages.sql`).
//!
//! Each runner process reports, for every language, whether it can compile
//! and run its bots ([`koth_runner::bot::Builder::availability`]) when it
//! starts and every [`REPORT_EVERY`]. A language is available when a runner
//! seen within [`RUNNER_FORGOTTEN_AFTER`] can run it. Before any runner has
//! reported (a fresh `koth web` with its runners still starting) nothing is
//! known and nothing is refused.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::{PgPool, Row};

use super::store::StoreError;

/// How often a runner reports (images may be built while it runs).
pub const REPORT_EVERY: Duration = Duration::from_secs(300);

/// A runner not seen for this long no longer counts (it was scaled down).
pub const RUNNER_FORGOTTEN_AFTER: Duration = Duration::from_secs(3600);

/// One language on one runner, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Can {
    /// With what: `image 1a2b3c4d5e6f`, `host toolchain: go version go1.19`.
    Ok(String),
    /// Why not, and what a host does about it.
    Err(String),
}

impl From<Result<String, String>> for Can {
    fn from(r: Result<String, String>) -> Self {
        match r {
            Ok(how) => Can::Ok(how),
            Err(why) => Can::Err(why),
        }
    }
}

/// Record what runner `name` can run.
pub async fn report(pool: &PgPool, name: &str, languages: &BTreeMap<String, Can>) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO runners (name, languages, seen_at) VALUES ($1, $2, now()) \
         ON CONFLICT (name) DO UPDATE SET languages = EXCLUDED.languages, seen_at = now()",
    )
    .bind(name)
    .bind(serde_json::to_value(languages).map_err(|e| StoreError::Invalid(e.to_string()))?)
    .execute(pool)
    .await?;
    Ok(())
}

/// A runner that stopped for good (scaled down) stops counting at once.
pub async fn forget(pool: &PgPool, name: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM runners WHERE name = $1").bind(name).execute(pool).await?;
    Ok(())
}

/// Every language some runner reported, merged over the runners seen
/// lately: `Ok` if any can run it, else one runner's reason. `None`: no
/// runner has reported.
pub async fn availability(pool: &PgPool) -> Result<Option<BTreeMap<String, Can>>, StoreError> {
    let rows = sqlx::query("SELECT languages FROM runners WHERE seen_at > now() - make_interval(secs => $1) ORDER BY name")
        .bind(RUNNER_FORGOTTEN_AFTER.as_secs_f64())
        .fetch_all(pool)
        .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let reports: Vec<BTreeMap<String, Can>> = rows
        .iter()
        // A row koth cannot read (hand-edited) counts as no report.
        .filter_map(|r| serde_json::from_value(r.get("languages")).ok())
        .collect();
    Ok(Some(merge(&reports)))
}

/// Runners' reports merged: a language any runner can run is available.
pub fn merge(reports: &[BTreeMap<String, Can>]) -> BTreeMap<String, Can> {
    let mut out: BTreeMap<String, Can> = BTreeMap::new();
    for report in reports {
        for (lang, can) in report {
            match (out.get(lang), can) {
                (Some(Can::Ok(_)), _) => {}
                (_, Can::Ok(_)) | (None, _) => {
                    out.insert(lang.clone(), can.clone());
                }
                (Some(Can::Err(_)), Can::Err(_)) => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(pairs: &[(&str, Result<&str, &str>)]) -> BTreeMap<String, Can> {
        pairs.iter().map(|(l, r)| (l.to_string(), r.map(str::to_owned).map_err(str::to_owned).into())).collect()
    }

    #[test]
    fn a_language_is_available_when_any_runner_can_run_it() {
        let a = report(&[("python", Ok("image a")), ("go", Err("no go here")), ("c", Err("no cc on a"))]);
        let b = report(&[("python", Err("broken")), ("go", Err("no go there either")), ("c", Ok("host toolchain: cc 12"))]);
        let merged = merge(&[a.clone(), b.clone()]);
        assert_eq!(merged["python"], Can::Ok("image a".into()));
        assert_eq!(merged["c"], Can::Ok("host toolchain: cc 12".into()));
        assert_eq!(merged["go"], Can::Err("no go here".into()), "the first runner's reason");
        assert_eq!(merge(&[b, a])["go"], Can::Err("no go there either".into()));
        assert!(merge(&[]).is_empty());
    }

    #[test]
    fn the_stored_shape_is_ok_or_err() {
        let r = report(&[("go", Err("why")), ("c", Ok("how"))]);
        assert_eq!(serde_json::to_value(&r).unwrap(), serde_json::json!({"c": {"ok": "how"}, "go": {"err": "why"}}));
    }
}
