//! Recording a finished match: outcomes, replay and ratings, in the
//! transaction that completes the match's job (see [`crate::queue`]), so a
//! match's ratings change exactly once, or not at all.
//!
//! A match is rated when it was queued as rated, its ladder's format is
//! `rated`, and every seat still plays the version it played with: results
//! of superseded versions are recorded but not rated. Rating rows of the
//! match's bots are locked in bot order before they are read, so matches
//! sharing a bot apply their updates one after another, in commit order.

use koth_games::MatchResult;
use koth_runner::BotStatus;
use sqlx::{PgConnection, Row};

use super::audit::{self, Actor};
use crate::audit::{match_summary, AuditAction, SeatLine, Subjects};
use crate::format::Standings;
use crate::packed::PackedReplay;
use crate::rating::{Rating, RatingSystem};
use crate::store::{self, StoreError};

/// One seat's outcome.
#[derive(Clone, Debug)]
pub struct SeatOutcome {
    pub seat: i32,
    pub score: f64,
    /// 1 = best; equal ranks tie.
    pub rank: u32,
    pub result: MatchResult,
    /// How the bot's program fared (ok, crashed, timed out, ...).
    pub status: BotStatus,
    pub stderr: String,
    /// (turn, end offset in `stderr`) for the turns that wrote something.
    pub stderr_turns: Vec<(u32, usize)>,
    /// Answers counted as moves, timeouts and invalid answers (what a
    /// validation game is judged on; not stored).
    pub moves: u32,
    pub timeouts: u32,
    pub invalid_moves: u32,
}

#[derive(Clone, Debug)]
pub struct MatchOutcome {
    pub engine: String,
    pub turns: u32,
    /// Packed by the runner before the result's transaction opens.
    pub replay: PackedReplay,
    pub seats: Vec<SeatOutcome>,
}

/// Status kinds, as stored, that count as the bot's own failure: the
/// engine's ([`BotStatus::is_bot_failure`]) and `disqualified`, which
/// koth-runner 0.1 wrote for a Snake bot that never spoke.
pub fn failure_kinds() -> Vec<&'static str> {
    BotStatus::FAILURE_KINDS.iter().copied().chain(["disqualified"]).collect()
}
/// A bot failing in this many of its current version's last
/// [`FAILURE_WINDOW`] matches is disabled.
const FAILURE_LIMIT: i64 = 7;
const FAILURE_WINDOW: i64 = 10;

/// Write the outcome of `match_id`; returns whether it was rated.
pub async fn record_match(conn: &mut PgConnection, match_id: i64, outcome: &MatchOutcome) -> Result<bool, sqlx::Error> {
    let m = sqlx::query(
        "UPDATE matches SET state = 'finished', engine = $2, turns = $3, finished_at = now(), error = NULL \
         WHERE id = $1 AND state = 'queued' RETURNING ladder_id, rated, validates, job_id, requested_by IS NOT NULL AS challenge, finals",
    )
    .bind(match_id)
    .bind(&outcome.engine)
    .bind(outcome.turns as i32)
    .fetch_one(&mut *conn)
    .await?;
    super::replays::record(conn, match_id, &outcome.replay).await?;
    let ladder_id: Option<i64> = m.get("ladder_id");
    let queued_rated: bool = m.get("rated");
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
    let validates: Option<i64> = m.get("validates");
    let kind = match validates {
        Some(v) => format!("the validation game of version {v}"),
        None if m.get("challenge") => "a challenge".to_owned(),
        None if m.get("finals") => "a finals match".to_owned(),
        None => "a ladder match".to_owned(),
    };
    audit_finished(conn, match_id, m.get("job_id"), &kind, outcome).await?;
    if let Some(version) = validates {
        // A validation game rates nobody and counts for no ladder.
        let verdict = crate::validation::judge(&outcome.seats, outcome.turns);
        store::record_validation(conn, version, &verdict).await?;
        return Ok(false);
    }
    disable_failing_bots(conn, match_id).await?;
    let Some(ladder_id) = ladder_id else { return Ok(false) };
    let system = match store::ladder_config(&mut *conn, ladder_id).await {
        Ok(Some((_, config))) => config.format.rating_system(),
        Ok(None) => None,
        Err(StoreError::Db(e)) => return Err(e),
        // The result is kept; ratings wait for a configuration koth can read.
        Err(StoreError::Invalid(why)) => {
            tracing::warn!(match_id, "not rated: {why}");
            None
        }
    };
    let Some(system) = system.filter(|_| queued_rated) else { return Ok(false) };
    let superseded: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM match_seats s JOIN bots b ON b.id = s.bot_id \
         WHERE s.match_id = $1 AND b.current_version IS DISTINCT FROM s.version_id",
    )
    .bind(match_id)
    .fetch_one(&mut *conn)
    .await?;
    if superseded > 0 {
        sqlx::query("UPDATE matches SET rated = false WHERE id = $1").bind(match_id).execute(&mut *conn).await?;
        return Ok(false);
    }
    apply_ratings(conn, ladder_id, match_id, system).await?;
    Ok(true)
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

/// Disable a bot whose current version failed (crashed, ran out of
/// memory, stopped reading, never connected) in most of its recent matches.
async fn disable_failing_bots(conn: &mut PgConnection, match_id: i64) -> Result<(), sqlx::Error> {
    let kinds = failure_kinds();
    let disabled = sqlx::query(
        "WITH recent AS ( \
             SELECT s.bot_id, s.status->>'kind' AS kind, \
                    row_number() OVER (PARTITION BY s.bot_id ORDER BY s.match_id DESC) AS n \
             FROM match_seats s JOIN bots b ON b.id = s.bot_id AND b.current_version = s.version_id \
             JOIN matches m ON m.id = s.match_id AND m.state = 'finished' \
             WHERE s.bot_id IN (SELECT bot_id FROM match_seats WHERE match_id = $1)), \
         tally AS ( \
             SELECT bot_id, count(*) AS played, count(*) FILTER (WHERE kind = ANY($2)) AS failed \
             FROM recent WHERE n <= $3 GROUP BY bot_id) \
         UPDATE bots SET disabled_reason = format( \
             'disabled: its current version crashed, ran out of memory, stopped reading its input or never connected in %s of its last %s matches; \
              read its stderr logs and submit a fixed version', tally.failed, tally.played) \
         FROM tally WHERE bots.id = tally.bot_id AND tally.played >= $3 AND tally.failed >= $4 \
               AND bots.disabled_reason IS NULL \
         RETURNING bots.id, bots.disabled_reason",
    )
    .bind(match_id)
    .bind(&kinds)
    .bind(FAILURE_WINDOW)
    .bind(FAILURE_LIMIT)
    .fetch_all(&mut *conn)
    .await?;
    for r in &disabled {
        let (bot, reason): (i64, String) = (r.get("id"), r.get("disabled_reason"));
        let cancelled = store::cancel_matches_of(conn, &[bot], "cancelled: a bot was disabled for failing in its matches").await?;
        let why = format!("{reason}; {} queued match(es) cancelled", cancelled.len());
        let subjects = Subjects { bot: Some(bot), ..Subjects::default() };
        audit::record(conn, Actor::Koth, AuditAction::BotAutoDisabled, subjects, &why).await?;
    }
    Ok(())
}

/// A ladder's leaderboard, by its format ([`crate::format::Format::standings`]);
/// None if there is no such ladder.
pub async fn standings(pool: &sqlx::PgPool, ladder_id: i64) -> Result<Option<Standings>, StoreError> {
    let mut conn = pool.acquire().await?;
    let Some((_, config)) = store::ladder_config(&mut conn, ladder_id).await? else { return Ok(None) };
    let state = store::ladder_state(&mut conn, ladder_id, config.format.needs_history(), store::Stage::Ladder).await?;
    Ok(Some(config.format.standings(&state)))
}
