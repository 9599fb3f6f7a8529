//! A ladder's contest as stored: its deadline, its finals and their final
//! standings ([`koth_ladder::contest`] says what each phase means).

use sqlx::{PgConnection, PgPool, Row};

use super::audit::{self, Actor};
use crate::audit::{AuditAction, Subjects};
use crate::db::store::{self, Stage, StoreError};
use koth_ladder::contest::{self, FinalStandings, FinalsPlan, Phase};

/// Times as the API gives them: RFC 3339 in UTC.
pub(super) const UTC: &str = r#"'YYYY-MM-DD"T"HH24:MI:SS"Z"'"#;

/// A ladder's contest columns.
#[derive(Clone, Debug, PartialEq)]
pub struct ContestRow {
    pub deadline: Option<String>,
    pub deadline_passed: bool,
    pub finals: Option<FinalsPlan>,
    pub finals_started_at: Option<String>,
    pub final_standings: Option<FinalStandings>,
    pub finished_at: Option<String>,
}

impl ContestRow {
    pub fn phase(&self) -> Phase {
        Phase::of(self.deadline_passed, self.finals.is_some(), self.finished_at.is_some())
    }
}

/// The contest of a ladder; None if there is no such ladder.
pub async fn contest(conn: &mut PgConnection, ladder: i64) -> Result<Option<ContestRow>, StoreError> {
    let Some(r) = sqlx::query(&format!(
        "SELECT to_char(deadline AT TIME ZONE 'UTC', {UTC}) AS deadline, coalesce(deadline <= now(), false) AS passed, finals, \
                to_char(finals_started_at AT TIME ZONE 'UTC', {UTC}) AS started, final_standings, \
                to_char(finished_at AT TIME ZONE 'UTC', {UTC}) AS finished \
         FROM ladders WHERE id = $1"
    ))
    .bind(ladder)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    fn stored<T: serde::de::DeserializeOwned>(ladder: i64, what: &str, v: Option<serde_json::Value>) -> Result<Option<T>, StoreError> {
        v.map(|v| serde_json::from_value(v).map_err(|e| StoreError::Invalid(format!("ladder {ladder}: its stored {what}: {e}"))))
            .transpose()
    }
    Ok(Some(ContestRow {
        deadline: r.get("deadline"),
        deadline_passed: r.get("passed"),
        finals: stored(ladder, "finals", r.get("finals"))?,
        finals_started_at: r.get("started"),
        final_standings: stored(ladder, "final standings", r.get("final_standings"))?,
        finished_at: r.get("finished"),
    }))
}

/// A new deadline.
#[derive(Clone, Debug, PartialEq)]
pub enum Deadline {
    /// A time PostgreSQL reads as a `timestamptz` (RFC 3339 is best).
    At(String),
    /// This many seconds from now (0: now).
    InSeconds(u32),
    /// No deadline: submissions are open again.
    Remove,
}

/// What setting a deadline found.
#[derive(Debug, PartialEq)]
pub enum DeadlineSet {
    Done,
    NoSuchLadder,
    /// The finals have started: their entrants are fixed.
    FinalsStarted,
    /// The time could not be read; PostgreSQL's words.
    NotATime(String),
}

/// Set, move or remove a ladder's deadline, by host `by` (in the audit
/// trail).
pub async fn set_deadline(pool: &PgPool, ladder: i64, deadline: &Deadline, by: i64) -> Result<DeadlineSet, StoreError> {
    let mut tx = pool.begin().await?;
    let Some(row) = sqlx::query(&format!(
        "SELECT finals IS NOT NULL AS finals, to_char(deadline AT TIME ZONE 'UTC', {UTC}) AS deadline FROM ladders WHERE id = $1 FOR UPDATE"
    ))
    .bind(ladder)
    .fetch_optional(&mut *tx)
    .await?
    else {
        return Ok(DeadlineSet::NoSuchLadder);
    };
    if row.get::<bool, _>("finals") {
        return Ok(DeadlineSet::FinalsStarted);
    }
    let was: Option<String> = row.get("deadline");
    let q = match deadline {
        Deadline::At(at) => sqlx::query("UPDATE ladders SET deadline = $2::timestamptz WHERE id = $1").bind(ladder).bind(at.clone()),
        // From the clock once the row is ours, not from the transaction's
        // start: a submission that held the row (`store::submit`) committed
        // before this deadline, never after it.
        Deadline::InSeconds(s) => sqlx::query("UPDATE ladders SET deadline = clock_timestamp() + make_interval(secs => $2) WHERE id = $1")
            .bind(ladder)
            .bind(f64::from(*s)),
        Deadline::Remove => sqlx::query("UPDATE ladders SET deadline = NULL WHERE id = $1").bind(ladder),
    };
    match q.execute(&mut *tx).await {
        Ok(_) => {}
        // SQLSTATE class 22: the text is not a time (or out of range).
        Err(sqlx::Error::Database(e)) if e.code().is_some_and(|c| c.starts_with("22")) => {
            return Ok(DeadlineSet::NotATime(e.message().into()))
        }
        Err(e) => return Err(e.into()),
    }
    let now: Option<String> = sqlx::query_scalar(&format!("SELECT to_char(deadline AT TIME ZONE 'UTC', {UTC}) FROM ladders WHERE id = $1"))
        .bind(ladder)
        .fetch_one(&mut *tx)
        .await?;
    let why = format!("{} (was {})", now.as_deref().unwrap_or("none"), was.as_deref().unwrap_or("none"));
    audit::record(&mut tx, Actor::Account(by), AuditAction::DeadlineSet, Subjects { ladder: Some(ladder), ..Subjects::default() }, &why)
        .await?;
    tx.commit().await?;
    Ok(DeadlineSet::Done)
}

/// The deadline, if it has passed: submissions are closed.
pub async fn submissions_closed(pool: &PgPool, ladder: i64) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(&format!("SELECT to_char(deadline AT TIME ZONE 'UTC', {UTC}) FROM ladders WHERE id = $1 AND deadline <= now()"))
        .bind(ladder)
        .fetch_optional(pool)
        .await
}

/// Versions of the ladder's bots (not disabled) still compiling or in
/// their validation game: the finals wait for them, so every finalist
/// plays the version it will keep.
pub async fn versions_in_progress(pool: &PgPool, ladder: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT count(*) FROM bot_versions v JOIN bots b ON b.id = v.bot_id \
         WHERE b.ladder_id = $1 AND b.disabled_reason IS NULL AND v.status IN ('pending', 'validating')",
    )
    .bind(ladder)
    .fetch_one(pool)
    .await
}

/// Start the finals with this plan, if the deadline has passed and they
/// have not started; the ladder's own queued matches that no runner holds
/// are cancelled (the finals have the runners now). False if the ladder
/// was not in its closed phase. Started by host `by` (in the audit trail).
pub async fn start_finals(pool: &PgPool, ladder: i64, plan: &FinalsPlan, by: i64) -> Result<bool, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let plan_json = serde_json::to_value(plan).map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
    let started = sqlx::query(
        "UPDATE ladders SET finals = $2, finals_started_at = now() WHERE id = $1 AND finals IS NULL AND deadline <= now() RETURNING id",
    )
    .bind(ladder)
    .bind(plan_json)
    .fetch_optional(&mut *tx)
    .await?
    .is_some();
    if started {
        let queued: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM matches WHERE ladder_id = $1 AND state = 'queued' AND NOT finals AND validates IS NULL AND requested_by IS NULL",
        )
        .bind(ladder)
        .fetch_all(&mut *tx)
        .await?;
        let cancelled = store::cancel_queued_matches(&mut tx, &queued, "cancelled: the ladder's finals started").await?;
        let finalists: Vec<String> = plan.finalists.iter().map(|b| format!("bot {b}")).collect();
        let adaptive = plan.budget.map(|b| format!(", adaptive: at most {b} matches")).unwrap_or_default();
        let why = format!(
            "top {} in {} {}{adaptive}: {}; {} queued ladder match(es) cancelled",
            plan.top,
            plan.format,
            plan.settings,
            finalists.join(", "),
            cancelled.len()
        );
        let subjects = Subjects { ladder: Some(ladder), ..Subjects::default() };
        audit::record(&mut tx, Actor::Account(by), AuditAction::FinalsStarted, subjects, &why).await?;
    }
    tx.commit().await?;
    Ok(started)
}

/// Freeze the finals' standings: the ladder is done.
pub async fn finish_finals(conn: &mut PgConnection, ladder: i64, standings: &FinalStandings) -> Result<(), sqlx::Error> {
    let json = serde_json::to_value(standings).map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
    sqlx::query("UPDATE ladders SET final_standings = $2, finished_at = now() WHERE id = $1 AND finished_at IS NULL")
        .bind(ladder)
        .bind(json)
        .execute(conn)
        .await?;
    Ok(())
}

/// The finals' standings as they stand (while they are played), with how
/// settled each place is; None before the finals.
pub async fn finals_standings(pool: &PgPool, ladder: i64) -> Result<Option<FinalStandings>, StoreError> {
    let mut conn = pool.acquire().await?;
    let Some(row) = contest(&mut conn, ladder).await? else { return Ok(None) };
    if let Some(frozen) = row.final_standings {
        return Ok(Some(frozen));
    }
    let Some(plan) = row.finals else { return Ok(None) };
    let config = plan.config().map_err(|e| StoreError::Invalid(format!("ladder {ladder}: its finals: {e}")))?;
    let state = store::ladder_state(&mut conn, ladder, true, Stage::Finals(&plan.finalists)).await?;
    Ok(Some(koth_ladder::finals::of_plan(&plan, &config.format, &state, ladder as u64)))
}

/// Whether the ladder's current stage (its own format, or its finals')
/// has played all it will ([`contest::played_out`]).
pub async fn played_out(pool: &PgPool, ladder: i64) -> Result<bool, StoreError> {
    let mut conn = pool.acquire().await?;
    let (Some(row), Some((kind, config))) = (contest(&mut conn, ladder).await?, store::ladder_config(&mut conn, ladder).await?) else {
        return Ok(false);
    };
    let (config, finalists) =
        contest::current_stage(config, row.finals.as_ref()).map_err(|e| StoreError::Invalid(format!("ladder {ladder}: {e}")))?;
    if !config.format.ends() {
        return Ok(false);
    }
    let state = store::ladder_state(&mut conn, ladder, true, Stage::from(finalists)).await?;
    if let Some(budget) = row.finals.as_ref().and_then(|p| p.budget) {
        return Ok(matches!(koth_ladder::finals::next(&config.format, &state, budget), koth_ladder::finals::Next::Done(_)));
    }
    // Whether a format asks for more does not hang on its random choices
    // (which bots meet), only on what is left: any generator will do.
    let next =
        config.format.next_matches(&state, kind.seats(&config), &mut <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0));
    Ok(contest::played_out(&config.format, &state, &next))
}
