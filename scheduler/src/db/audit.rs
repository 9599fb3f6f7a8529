//! The audit trail's rows (`sql/0020_audit.sql`): written by [`record`]
//! inside the transaction of what they record (the functions of
//! [`super::store`], [`super::results`], [`super::contests`],
//! [`super::reads`], [`super::games`] and [`super::accounts`] that do it),
//! read by the host's API ([`list`]). Each row is also a log line.

use sqlx::{PgConnection, PgPool, Row};

use crate::audit::{one_line, AuditAction, AuditEntry, AuditPage, Subjects};
use crate::db::store::StoreError;

/// Who did what an entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    /// koth itself: the scheduler, a lease that ran out, a rule.
    Koth,
    /// An account (its name is copied into the row).
    Account(i64),
    /// The runner that holds (or completed) this job; koth when none does.
    HolderOf(i64),
}

/// Write one entry in the caller's transaction and log it (target
/// `koth::audit`). The subjects the caller leaves out are filled from
/// those it gives: a match's ladder, a version's bot, a bot's ladder.
///
/// The line is logged as the row is written, before the transaction
/// commits: a transaction that fails after it (the database failing
/// mid-way) leaves a line whose entry is not in the table.
pub async fn record(
    conn: &mut PgConnection,
    actor: Actor,
    action: AuditAction,
    subjects: Subjects,
    why: &str,
) -> Result<AuditEntry, sqlx::Error> {
    let (account, job) = match actor {
        Actor::Koth => (None, None),
        Actor::Account(id) => (Some(id), None),
        Actor::HolderOf(job) => (None, Some(job)),
    };
    let why = crate::audit::brief(why);
    let r = sqlx::query(&format!(
        "WITH v AS (SELECT bot_id FROM bot_versions WHERE id = $6), \
              b AS (SELECT coalesce($5, (SELECT bot_id FROM v)) AS id) \
         INSERT INTO audit (actor, actor_name, action, ladder_id, bot_id, version_id, match_id, game_id, why) \
         SELECT $1, coalesce((SELECT name FROM users WHERE id = $1), (SELECT 'runner ' || holder FROM jobs WHERE id = $2), 'koth'), \
                $3, coalesce($4, (SELECT ladder_id FROM matches WHERE id = $7), (SELECT ladder_id FROM bots WHERE id = (SELECT id FROM b))), \
                (SELECT id FROM b), $6, $7, $8, $9 \
         RETURNING id, to_char(at AT TIME ZONE 'UTC', {UTC}) AS at, actor, actor_name, ladder_id, bot_id, version_id, match_id, game_id",
        UTC = super::contests::UTC
    ))
    .bind(account)
    .bind(job)
    .bind(action.as_str())
    .bind(subjects.ladder)
    .bind(subjects.bot)
    .bind(subjects.version)
    .bind(subjects.match_id)
    .bind(subjects.game)
    .bind(&why)
    .fetch_one(&mut *conn)
    .await?;
    let e = entry(&r, action, why);
    tracing::info!(
        target: "koth::audit",
        audit = e.id,
        action = %e.action,
        actor = %e.actor_name,
        ladder = e.ladder,
        bot = e.bot,
        version = e.version,
        match_id = e.match_id,
        game = e.game,
        why = %one_line(&e.why),
        "{}",
        e.what
    );
    Ok(e)
}

fn entry(r: &sqlx::postgres::PgRow, action: AuditAction, why: String) -> AuditEntry {
    let subjects = Subjects {
        ladder: r.get("ladder_id"),
        bot: r.get("bot_id"),
        version: r.get("version_id"),
        match_id: r.get("match_id"),
        game: r.get("game_id"),
    };
    AuditEntry::new(r.get("id"), r.get("at"), r.get("actor"), r.get("actor_name"), action, subjects, why)
}

/// Which entries a host reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub ladder: Option<i64>,
    /// The bot's own entries and those of every match it played.
    pub bot: Option<i64>,
    pub action: Option<AuditAction>,
    /// Entries older than this one (the previous page's `next_before`).
    pub before: Option<i64>,
    pub limit: u32,
}

/// The newest `limit` entries that pass the filter, newest first.
pub async fn list(pool: &PgPool, f: &Filter) -> Result<AuditPage, StoreError> {
    let rows = sqlx::query(&format!(
        "SELECT id, to_char(at AT TIME ZONE 'UTC', {UTC}) AS at, actor, actor_name, action, \
                ladder_id, bot_id, version_id, match_id, game_id, why \
         FROM audit \
         WHERE ($1::int8 IS NULL OR ladder_id = $1) \
           AND ($2::int8 IS NULL OR bot_id = $2 OR match_id IN (SELECT match_id FROM match_seats WHERE bot_id = $2)) \
           AND ($3::text IS NULL OR action = $3) \
           AND ($4::int8 IS NULL OR id < $4) \
         ORDER BY id DESC LIMIT $5",
        UTC = super::contests::UTC
    ))
    .bind(f.ladder)
    .bind(f.bot)
    .bind(f.action.map(AuditAction::as_str))
    .bind(f.before)
    // One more than asked: whether there is an older page.
    .bind(i64::from(f.limit) + 1)
    .fetch_all(pool)
    .await?;
    let more = rows.len() > f.limit as usize;
    let entries = rows
        .iter()
        .take(f.limit as usize)
        .map(|r| {
            let action = AuditAction::from_stored(&r.get::<String, _>("action")).map_err(StoreError::Invalid)?;
            Ok(entry(r, action, r.get("why")))
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let next_before = if more { entries.last().map(|e| e.id) } else { None };
    Ok(AuditPage { entries, next_before })
}
