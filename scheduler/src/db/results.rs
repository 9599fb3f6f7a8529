//! Recording a finished match: outcomes, replay and ratings, in the
//! transaction that completes the match's job (see [`crate::db::queue`]), so a
//! match's ratings change exactly once, or not at all.
//!
//! What the match means (its validation verdict, the bots it disables, and
//! whether it is rated) is decided by [`koth_ladder::settle`], pure: this
//! module reads the facts it needs, and writes what it decides. Rating
//! rows of the match's bots are locked in bot order before they are read,
//! so matches sharing a bot apply their updates one after another, in
//! commit order.

use koth_ladder::outcome::SeatOutcome;
use koth_ladder::settle::{self, BotRecord, Finished, Role, Unrated, FAILURE_WINDOW};
use koth_runner::BotStatus;
use sqlx::{PgConnection, Row};

use super::audit::{self, Actor};
use crate::audit::{match_summary, AuditAction, SeatLine, Subjects};
use crate::db::store::{self, StoreError};
use crate::packed::PackedReplay;
use koth_ladder::format::Standings;
use koth_ladder::rating::{Rating, RatingSystem};

#[derive(Clone, Debug)]
pub struct MatchOutcome {
    pub engine: String,
    pub turns: u32,
    /// Packed by the runner before the result's transaction opens.
    pub replay: PackedReplay,
    pub seats: Vec<SeatOutcome>,
}

/// Write the outcome of `match_id`; returns whether it was rated.
pub async fn record_match(conn: &mut PgConnection, match_id: i64, outcome: &MatchOutcome) -> Result<bool, sqlx::Error> {
    // A game of an A/B test: its test is locked before the match is
    // written, as every transaction that counts or queues its pairs does
    // (`db::ab`).
    let ab_test = super::ab::lock_test_of(conn, match_id).await?;
    let m = sqlx::query(
        "UPDATE matches SET state = 'finished', engine = $2, turns = $3, finished_at = now(), error = NULL \
         WHERE id = $1 AND state = 'queued' \
         RETURNING ladder_id, rated, validates, job_id, requested_by IS NOT NULL AS challenge, finals, ab_test",
    )
    .bind(match_id)
    .bind(&outcome.engine)
    .bind(outcome.turns as i32)
    .fetch_one(&mut *conn)
    .await?;
    super::replays::record(conn, match_id, &outcome.replay).await?;
    let ladder_id: Option<i64> = m.get("ladder_id");
    for s in &outcome.seats {
        sqlx::query(
            "UPDATE match_seats SET score = $3, rank = $4, result = $5, status = $6, stderr = $7, stderr_turns = $8 \
             WHERE match_id = $1 AND seat = $2",
        )
        .bind(match_id)
        .bind(s.seat)
        .bind(s.score)
        .bind(s.rank as i32)
        .bind(s.result.name())
        .bind(serde_json::to_value(&s.status).unwrap_or_default())
        .bind(&s.stderr)
        .bind(serde_json::to_value(&s.stderr_turns).unwrap_or_default())
        .execute(&mut *conn)
        .await?;
    }
    let role = match m.get::<Option<i64>, _>("validates") {
        Some(version) => Role::Validation { version },
        None => match m.get::<Option<i64>, _>("ab_test") {
            Some(test) => Role::AbTest { test },
            None if m.get("challenge") => Role::Challenge,
            None if m.get("finals") => Role::Finals,
            None => Role::Ladder,
        },
    };
    audit_finished(conn, match_id, m.get("job_id"), &role.describe(), outcome).await?;
    let rating_system = match ladder_id {
        None => None,
        Some(ladder_id) => match store::ladder_config(&mut *conn, ladder_id).await {
            Ok(Some((_, config))) => config.format.rating_system(),
            Ok(None) => None,
            Err(StoreError::Db(e)) => return Err(e),
            // The result is kept; ratings wait for a configuration koth can read.
            Err(StoreError::Invalid(why)) => {
                tracing::warn!(match_id, "not rated: {why}");
                None
            }
        },
    };
    let superseded: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM match_seats s JOIN bots b ON b.id = s.bot_id \
         WHERE s.match_id = $1 AND b.current_version IS DISTINCT FROM s.version_id",
    )
    .bind(match_id)
    .fetch_one(&mut *conn)
    .await?;
    let facts = Finished {
        role,
        seats: &outcome.seats,
        turns: outcome.turns,
        queued_rated: m.get("rated"),
        rating_system,
        superseded_seats: superseded as usize,
        bots: bot_records(conn, match_id).await?,
    };
    let settled = settle::settle(&facts);
    if let Some(test) = ab_test {
        match super::ab::count_pair(conn, test, match_id).await {
            Ok(()) => {}
            Err(StoreError::Db(e)) => return Err(e),
            // The match is kept; the test's row is not one koth can read.
            Err(StoreError::Invalid(why)) => tracing::warn!(match_id, test, "A/B pair not counted: {why}"),
        }
    }
    if let Some((version, verdict)) = &settled.validation {
        store::record_validation(conn, *version, verdict).await?;
    }
    disable_bots(conn, &settled.disable).await?;
    match (settled.rating, ladder_id) {
        (Ok(system), Some(ladder_id)) => {
            apply_ratings(conn, ladder_id, match_id, system).await?;
            Ok(true)
        }
        (Err(Unrated::Superseded), _) => {
            sqlx::query("UPDATE matches SET rated = false WHERE id = $1").bind(match_id).execute(&mut *conn).await?;
            Ok(false)
        }
        _ => Ok(false),
    }
}

/// The match's bots, each with the status kinds of its current version's
/// latest finished matches (this one included), newest first.
async fn bot_records(conn: &mut PgConnection, match_id: i64) -> Result<Vec<BotRecord>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT b.id, b.disabled_reason IS NOT NULL AS disabled, \
                ARRAY(SELECT s.status->>'kind' FROM match_seats s JOIN matches m ON m.id = s.match_id AND m.state = 'finished' \
                      WHERE s.bot_id = b.id AND s.version_id = b.current_version ORDER BY s.match_id DESC LIMIT $2) AS recent \
         FROM bots b WHERE b.id IN (SELECT bot_id FROM match_seats WHERE match_id = $1) ORDER BY b.id",
    )
    .bind(match_id)
    .bind(FAILURE_WINDOW as i64)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .iter()
        .map(|r| BotRecord {
            bot: r.get("id"),
            disabled: r.get("disabled"),
            recent: r.get::<Vec<Option<String>>, _>("recent").into_iter().map(Option::unwrap_or_default).collect(),
        })
        .collect())
}

/// The match's entry in the audit trail: who played it, and each seat's
/// bot, rank, score and trouble.
async fn audit_finished(
    conn: &mut PgConnection,
    match_id: i64,
    job: Option<i64>,
    kind: &str,
    outcome: &MatchOutcome,
) -> Result<(), sqlx::Error> {
    let names: std::collections::HashMap<i32, String> =
        sqlx::query("SELECT s.seat, b.name FROM match_seats s JOIN bots b ON b.id = s.bot_id WHERE s.match_id = $1")
            .bind(match_id)
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .map(|r| (r.get("seat"), r.get("name")))
            .collect();
    let seats: Vec<SeatLine> = outcome
        .seats
        .iter()
        .map(|s| SeatLine {
            seat: s.seat,
            bot: names.get(&s.seat).cloned().unwrap_or_else(|| "?".into()),
            rank: s.rank,
            score: s.score,
            trouble: (s.status != BotStatus::Ok).then(|| s.status.describe()),
        })
        .collect();
    let actor = job.map_or(Actor::Koth, Actor::HolderOf);
    let subjects = Subjects { match_id: Some(match_id), ..Subjects::default() };
    audit::record(conn, actor, AuditAction::MatchFinished, subjects, &match_summary(kind, outcome.turns, &seats)).await?;
    Ok(())
}

async fn apply_ratings(conn: &mut PgConnection, ladder_id: i64, match_id: i64, system: RatingSystem) -> Result<(), sqlx::Error> {
    let initial = system.initial();
    let seats =
        sqlx::query("SELECT bot_id, rank FROM match_seats WHERE match_id = $1 ORDER BY seat").bind(match_id).fetch_all(&mut *conn).await?;
    let mut bots: Vec<i64> = seats.iter().map(|r| r.get("bot_id")).collect();
    bots.sort_unstable();
    bots.dedup();
    for bot in &bots {
        sqlx::query("INSERT INTO ratings (ladder_id, bot_id, mu, sigma) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING")
            .bind(ladder_id)
            .bind(bot)
            .bind(initial.mu)
            .bind(initial.sigma)
            .execute(&mut *conn)
            .await?;
    }
    let rows = sqlx::query("SELECT bot_id, mu, sigma FROM ratings WHERE ladder_id = $1 AND bot_id = ANY($2) ORDER BY bot_id FOR UPDATE")
        .bind(ladder_id)
        .bind(&bots)
        .fetch_all(&mut *conn)
        .await?;
    let current: std::collections::HashMap<i64, Rating> =
        rows.iter().map(|r| (r.get("bot_id"), Rating { mu: r.get("mu"), sigma: r.get("sigma") })).collect();
    let input: Vec<(Rating, u32)> =
        seats.iter().map(|r| (current[&r.get::<i64, _>("bot_id")], r.get::<i32, _>("rank").max(1) as u32)).collect();
    let updated = system.update(&input);
    for (row, new) in seats.iter().zip(updated) {
        let bot: i64 = row.get("bot_id");
        sqlx::query("UPDATE ratings SET mu = $3, sigma = $4, games = games + 1, updated_at = now() WHERE ladder_id = $1 AND bot_id = $2")
            .bind(ladder_id)
            .bind(bot)
            .bind(new.mu)
            .bind(new.sigma)
            .execute(&mut *conn)
            .await?;
        sqlx::query("INSERT INTO rating_history (ladder_id, bot_id, match_id, mu, sigma) VALUES ($1, $2, $3, $4, $5)")
            .bind(ladder_id)
            .bind(bot)
            .bind(match_id)
            .bind(new.mu)
            .bind(new.sigma)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Disable these bots (unless disabled meanwhile), cancel their queued
/// matches and say so in the audit trail.
async fn disable_bots(conn: &mut PgConnection, bots: &[(i64, String)]) -> Result<(), sqlx::Error> {
    for (bot, reason) in bots {
        let done = sqlx::query("UPDATE bots SET disabled_reason = $2 WHERE id = $1 AND disabled_reason IS NULL")
            .bind(bot)
            .bind(reason)
            .execute(&mut *conn)
            .await?;
        if done.rows_affected() == 0 {
            continue;
        }
        let cancelled = store::cancel_matches_of(conn, &[*bot], "cancelled: a bot was disabled for failing in its matches").await?;
        let why = format!("{reason}; {} queued match(es) cancelled", cancelled.len());
        let subjects = Subjects { bot: Some(*bot), ..Subjects::default() };
        audit::record(conn, Actor::Koth, AuditAction::BotAutoDisabled, subjects, &why).await?;
    }
    Ok(())
}

/// A ladder's leaderboard, by its format ([`koth_ladder::format::Format::standings`]);
/// None if there is no such ladder.
pub async fn standings(pool: &sqlx::PgPool, ladder_id: i64) -> Result<Option<Standings>, StoreError> {
    let mut conn = pool.acquire().await?;
    let Some((_, config)) = store::ladder_config(&mut conn, ladder_id).await? else { return Ok(None) };
    let state = store::ladder_state(&mut conn, ladder_id, config.format.needs_history(), store::Stage::Ladder).await?;
    Ok(Some(config.format.standings(&state)))
}
