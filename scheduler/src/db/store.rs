//! Rows the rest of koth reads and writes: users, games, ladders, bots and
//! their versions, and the jobs that go with them. Each function is one
//! transaction (or runs inside the caller's).

use serde_json::Value;
use sqlx::{PgConnection, PgPool, Row};

use super::audit::{self, Actor};
use crate::audit::{AuditAction, Subjects};
use crate::db::queue::enqueue_on;
use crate::job::Job;
use koth_ladder::format::{CommonSettings, LadderBot, LadderConfig, LadderState, MatchRecord};
use koth_ladder::rating::Rating;
use koth_ladder::served::{ServedGame, ADDED_KIND};
use koth_ladder::settle::AfterCompile;

/// A stored row that cannot be used, or the database failing.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    /// A row koth cannot read (written by a newer version, or edited by hand).
    #[error("{0}")]
    Invalid(String),
}

/// Job priorities: compiles first (an author waits for them), challenges
/// next, ladder matches last.
pub const PRIORITY_COMPILE: i32 = 100;
pub const PRIORITY_CHALLENGE: i32 = 50;
pub const PRIORITY_LADDER: i32 = 0;
/// Attempts before a job fails for good.
pub const MAX_ATTEMPTS: i32 = 5;

pub async fn create_user(pool: &PgPool, name: &str, is_host: bool) -> Result<i64, sqlx::Error> {
    let mut conn = pool.acquire().await?;
    create_user_on(&mut conn, name, is_host).await
}

pub async fn create_user_on(conn: &mut PgConnection, name: &str, is_host: bool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO users (name, is_host) VALUES ($1, $2) RETURNING id").bind(name).bind(is_host).fetch_one(conn).await
}

/// The game row for a koth game kind (created on first use).
pub async fn game(pool: &PgPool, kind: koth_games::GameKind) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO games (name, kind) VALUES ($1, $1) ON CONFLICT (name) DO UPDATE SET kind = EXCLUDED.kind RETURNING id")
        .bind(kind.name())
        .fetch_one(pool)
        .await
}

/// A ladder of `game`: one of koth's own (its row made on first use), or
/// an added game, which must be ready ([`super::games`]); made by koth
/// itself (the example ladders, tools, tests).
pub async fn create_ladder(pool: &PgPool, name: &str, game: &ServedGame, config: &LadderConfig) -> Result<i64, sqlx::Error> {
    create_ladder_by(pool, name, game, config, Actor::Koth).await
}

/// [`create_ladder`] by `actor` (a host), in the audit trail.
pub async fn create_ladder_by(
    pool: &PgPool,
    name: &str,
    game: &ServedGame,
    config: &LadderConfig,
    actor: Actor,
) -> Result<i64, sqlx::Error> {
    let game_id = match game {
        ServedGame::Builtin(kind) => self::game(pool, *kind).await?,
        ServedGame::Added(m) => {
            sqlx::query_scalar("SELECT id FROM games WHERE name = $1 AND kind = $2 AND status = 'ready'")
                .bind(&m.name)
                .bind(ADDED_KIND)
                .fetch_one(pool)
                .await?
        }
    };
    let (format, settings) = config.to_stored();
    let mut tx = pool.begin().await?;
    let id: i64 = sqlx::query_scalar("INSERT INTO ladders (game_id, name, format, settings) VALUES ($1, $2, $3, $4) RETURNING id")
        .bind(game_id)
        .bind(name)
        .bind(format)
        .bind(&settings)
        .fetch_one(&mut *tx)
        .await?;
    let why = format!("{name:?}: {}, {format} {settings}", game.name());
    audit::record(&mut tx, actor, AuditAction::LadderCreated, Subjects { ladder: Some(id), ..Subjects::default() }, &why).await?;
    tx.commit().await?;
    Ok(id)
}

/// A ladder's game and configuration; None if there is no such ladder.
/// A stored configuration that no longer parses is an error that names the
/// ladder (the scheduler skips that ladder and says why).
pub async fn ladder_config(conn: &mut PgConnection, ladder: i64) -> Result<Option<(ServedGame, LadderConfig)>, StoreError> {
    let Some(row) =
        sqlx::query("SELECT l.format, l.settings, g.kind, g.manifest FROM ladders l JOIN games g ON g.id = l.game_id WHERE l.id = $1")
            .bind(ladder)
            .fetch_optional(&mut *conn)
            .await?
    else {
        return Ok(None);
    };
    let game = ServedGame::from_row(&row.get::<String, _>("kind"), row.get::<Option<Value>, _>("manifest").as_ref())
        .map_err(|e| StoreError::Invalid(format!("ladder {ladder}: {e}")))?;
    let config = LadderConfig::parse(&row.get::<String, _>("format"), &row.get::<Value, _>("settings"))
        .map_err(|e| StoreError::Invalid(format!("ladder {ladder}: {e}")))?;
    Ok(Some((game, config)))
}

/// Which of a ladder's matches a format is given: the ladder's own, or its
/// finals' (between the finalists only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage<'a> {
    Ladder,
    Finals(&'a [i64]),
}

impl<'a> From<Option<&'a [i64]>> for Stage<'a> {
    /// The finalists, if the finals are on.
    fn from(finalists: Option<&'a [i64]>) -> Self {
        finalists.map_or(Stage::Ladder, Stage::Finals)
    }
}

impl Stage<'_> {
    fn finals(self) -> bool {
        matches!(self, Stage::Finals(_))
    }
    fn only(self) -> Option<Vec<i64>> {
        match self {
            Stage::Ladder => None,
            Stage::Finals(bots) => Some(bots.to_vec()),
        }
    }
}

/// What a ladder's format sees of one stage of it ([`LadderState`]); its
/// past matches only when `with_history`. Its own matches only: not the
/// validation games, nor the challenges people asked for on it (those
/// neither fill the format's slots, nor hold its newcomers, nor count as
/// a round robin's pairings played).
pub async fn ladder_state(conn: &mut PgConnection, ladder: i64, with_history: bool, stage: Stage<'_>) -> Result<LadderState, sqlx::Error> {
    let bots = sqlx::query(
        "SELECT b.id, b.name, b.current_version IS NOT NULL AS ready, r.mu, r.sigma, r.games, \
                (SELECT count(*) FROM match_seats s JOIN matches m ON m.id = s.match_id \
                 WHERE s.bot_id = b.id AND m.state = 'queued' AND m.validates IS NULL AND m.requested_by IS NULL \
                   AND m.finals = $2) AS in_flight \
         FROM bots b LEFT JOIN ratings r ON r.ladder_id = b.ladder_id AND r.bot_id = b.id \
         WHERE b.ladder_id = $1 AND b.disabled_reason IS NULL AND ($3::bigint[] IS NULL OR b.id = ANY($3)) ORDER BY b.id",
    )
    .bind(ladder)
    .bind(stage.finals())
    .bind(stage.only())
    .fetch_all(&mut *conn)
    .await?
    .iter()
    .map(|r| LadderBot {
        id: r.get("id"),
        name: r.get("name"),
        ready: r.get("ready"),
        rating: match (r.get::<Option<f64>, _>("mu"), r.get::<Option<f64>, _>("sigma"), r.get::<Option<i32>, _>("games")) {
            (Some(mu), Some(sigma), Some(games)) => Some((Rating { mu, sigma }, games.max(0) as u32)),
            _ => None,
        },
        in_flight: r.get::<i64, _>("in_flight") as u32,
    })
    .collect();
    let queued: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM matches WHERE ladder_id = $1 AND state = 'queued' AND validates IS NULL AND requested_by IS NULL \
             AND finals = $2",
    )
    .bind(ladder)
    .bind(stage.finals())
    .fetch_one(&mut *conn)
    .await?;
    let matches = if with_history {
        sqlx::query(
            "SELECT m.state, m.round, array_agg(s.bot_id ORDER BY s.seat) AS seats, array_agg(s.rank ORDER BY s.seat) AS ranks, \
                    array_agg(s.score ORDER BY s.seat) AS scores \
             FROM matches m JOIN match_seats s ON s.match_id = m.id \
             WHERE m.ladder_id = $1 AND m.state NOT IN ('failed', 'cancelled') AND m.validates IS NULL AND m.requested_by IS NULL \
               AND m.finals = $2 \
             GROUP BY m.id ORDER BY m.id",
        )
        .bind(ladder)
        .bind(stage.finals())
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| {
            let ranks: Vec<Option<i32>> = r.get("ranks");
            let scores: Vec<Option<f64>> = r.get("scores");
            let finished = r.get::<String, _>("state") == crate::job::MatchState::Finished.as_str();
            MatchRecord {
                seats: r.get("seats"),
                results: finished
                    .then(|| ranks.iter().zip(&scores).map(|(k, s)| (k.unwrap_or(1).max(1) as u32, s.unwrap_or(0.0))).collect()),
                round: r.get::<Option<i32>, _>("round").map(|n| n.max(1) as u32),
            }
        })
        .collect()
    } else {
        Vec::new()
    };
    Ok(LadderState { bots, matches, queued: queued as u32 })
}

pub async fn create_bot(pool: &PgPool, ladder_id: i64, owner_id: i64, name: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO bots (ladder_id, owner_id, name) VALUES ($1, $2, $3) RETURNING id")
        .bind(ladder_id)
        .bind(owner_id)
        .bind(name)
        .fetch_one(pool)
        .await
}

/// A new version of a bot, with its compile job, in one transaction (no
/// limits: the host's and the tests' way; the API's is [`submit`]).
/// `source` is the checked sources as a tar archive.
pub async fn submit_version(
    pool: &PgPool,
    bot_id: i64,
    language: &str,
    main: &str,
    source: &[u8],
    source_hash: &str,
) -> Result<(i64, i64), sqlx::Error> {
    let mut tx = pool.begin().await?;
    // Serialise version numbers per bot.
    sqlx::query("SELECT id FROM bots WHERE id = $1 FOR UPDATE").bind(bot_id).execute(&mut *tx).await?;
    let (id, _, job) = insert_version(&mut tx, bot_id, language, main, source, source_hash).await?;
    tx.commit().await?;
    Ok((id, job))
}

/// The version's row (its id and number) and its compile job; the caller
/// holds the bot's lock.
async fn insert_version(
    conn: &mut PgConnection,
    bot_id: i64,
    language: &str,
    main: &str,
    source: &[u8],
    source_hash: &str,
) -> Result<(i64, i32, i64), sqlx::Error> {
    let (version_id, number): (i64, i32) = sqlx::query_as(
        "INSERT INTO bot_versions (bot_id, number, language, main, source, source_hash) \
         VALUES ($1, (SELECT coalesce(max(number), 0) + 1 FROM bot_versions WHERE bot_id = $1), $2, $3, $4, $5) \
         RETURNING id, number",
    )
    .bind(bot_id)
    .bind(language)
    .bind(main)
    .bind(source)
    .bind(source_hash)
    .fetch_one(&mut *conn)
    .await?;
    let job = enqueue_job(&mut *conn, Job::Compile { version: version_id }, PRIORITY_COMPILE).await?;
    charge_to_owner(&mut *conn, job, version_id).await?;
    sqlx::query("UPDATE bot_versions SET compile_job = $2 WHERE id = $1").bind(version_id).bind(job).execute(&mut *conn).await?;
    Ok((version_id, number, job))
}

/// A new version as the API submits it: to bot `bot_name` of `ladder`,
/// made by `owner` if it does not exist yet.
#[derive(Clone, Debug)]
pub struct NewVersion<'a> {
    pub ladder: i64,
    pub bot_name: &'a str,
    pub owner: i64,
    /// A host may add versions to anyone's bot.
    pub owner_is_host: bool,
    pub language: &'a str,
    pub main: &'a str,
    /// The checked sources as a tar archive.
    pub source: &'a [u8],
    pub source_hash: &'a str,
}

/// A version stored, with its compile job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubmittedVersion {
    pub bot: i64,
    /// The bot was made by this submission.
    pub created: bool,
    pub version: i64,
    /// Its number among its bot's versions.
    pub number: i32,
    pub compile_job: i64,
}

/// Why [`submit`] stored nothing.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The ladder's deadline had passed when the version would have been
    /// committed (the time it closed).
    #[error("submissions to this ladder closed at its deadline, {0}")]
    Closed(String),
    #[error("{}", .0.message)]
    OverLimit(koth_ladder::quota::OverLimit),
    #[error("this bot belongs to someone else; choose another name")]
    NotYours,
    #[error("no such ladder")]
    NoLadder,
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Store a submitted version and its compile job, creating its bot if
/// needed, in one transaction that also applies the account's limits
/// (`limits`: `None` for hosts) and the ladder's deadline:
///
/// 1. the account's lock ([`super::accounts::lock_account`]): the
///    account's other submissions wait here, so the usage read next counts
///    every version committed before this one;
/// 2. the ladder's row, shared: the deadline cannot move and the finals
///    cannot start until this commits;
/// 3. the usage, checked against the limits with this version's size;
/// 4. the bot (made, or found and its owner checked) and the version;
/// 5. the deadline, against the clock at that moment
///    (`clock_timestamp()`, not the transaction's start), just before the
///    commit.
///
/// A refusal rolls everything back: nothing of it is stored.
pub async fn submit(
    pool: &PgPool,
    new: &NewVersion<'_>,
    limits: Option<&koth_ladder::quota::SubmissionLimits>,
) -> Result<SubmittedVersion, SubmitError> {
    let mut tx = pool.begin().await?;
    super::accounts::lock_account(&mut tx, new.owner).await?;
    let ladder: Option<i64> =
        sqlx::query_scalar("SELECT id FROM ladders WHERE id = $1 FOR SHARE").bind(new.ladder).fetch_optional(&mut *tx).await?;
    if ladder.is_none() {
        return Err(SubmitError::NoLadder);
    }
    if let Some(limits) = limits {
        let usage = super::accounts::submission_usage(&mut tx, new.owner).await?;
        koth_ladder::quota::check_submission(limits, &usage, Some(new.source.len())).map_err(SubmitError::OverLimit)?;
    }
    // Made here, or found (and locked, which also serialises version
    // numbers per bot); a bot made at the same moment by another account's
    // transaction is waited for, then found.
    let made: Option<i64> = sqlx::query_scalar(
        "INSERT INTO bots (ladder_id, owner_id, name) VALUES ($1, $2, $3) ON CONFLICT (ladder_id, name) DO NOTHING RETURNING id",
    )
    .bind(new.ladder)
    .bind(new.owner)
    .bind(new.bot_name)
    .fetch_optional(&mut *tx)
    .await?;
    let (bot, created) = match made {
        Some(id) => (id, true),
        None => {
            let r = sqlx::query("SELECT id, owner_id FROM bots WHERE ladder_id = $1 AND name = $2 FOR UPDATE")
                .bind(new.ladder)
                .bind(new.bot_name)
                .fetch_one(&mut *tx)
                .await?;
            if r.get::<i64, _>("owner_id") != new.owner && !new.owner_is_host {
                return Err(SubmitError::NotYours);
            }
            (r.get("id"), false)
        }
    };
    let (version, number, compile_job) = insert_version(&mut tx, bot, new.language, new.main, new.source, new.source_hash).await?;
    let closed: Option<String> = sqlx::query_scalar(&format!(
        "SELECT to_char(deadline AT TIME ZONE 'UTC', {UTC}) FROM ladders WHERE id = $1 AND deadline <= clock_timestamp()",
        UTC = super::contests::UTC
    ))
    .bind(new.ladder)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(at) = closed {
        return Err(SubmitError::Closed(at));
    }
    tx.commit().await?;
    Ok(SubmittedVersion { bot, created, version, number, compile_job })
}

/// What a compile job needs.
#[derive(Clone, Debug)]
pub struct VersionSource {
    pub version_id: i64,
    pub bot_id: i64,
    pub language: String,
    pub main: String,
    pub source: Vec<u8>,
    pub source_hash: String,
}

pub async fn version_source(pool: &PgPool, version_id: i64) -> Result<Option<VersionSource>, sqlx::Error> {
    let row = sqlx::query("SELECT id, bot_id, language, main, source, source_hash FROM bot_versions WHERE id = $1")
        .bind(version_id)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| VersionSource {
        version_id: r.get("id"),
        bot_id: r.get("bot_id"),
        language: r.get("language"),
        main: r.get("main"),
        source: r.get("source"),
        source_hash: r.get("source_hash"),
    }))
}

/// Record a compile's outcome (inside the transaction that completes its
/// job). What follows a successful one is decided by
/// [`koth_ladder::settle::after_compile`]: a compiled version plays its
/// validation game first ([`koth_ladder::validation`]), unless its ladder
/// skips them: then it becomes its bot's current version at once.
pub async fn record_compile(
    conn: &mut PgConnection,
    version_id: i64,
    outcome: &crate::job::CompileOutcome,
    log: &str,
) -> Result<(), sqlx::Error> {
    let version = Subjects { version: Some(version_id), ..Subjects::default() };
    let crate::job::CompileOutcome::Compiled { artifact, image: image_id } = outcome else {
        let Some(job) = sqlx::query_scalar::<_, Option<i64>>(
            "UPDATE bot_versions SET status = 'failed', compile_log = $2 WHERE id = $1 RETURNING compile_job",
        )
        .bind(version_id)
        .bind(log)
        .fetch_optional(&mut *conn)
        .await?
        else {
            return Ok(());
        };
        let actor = job.map_or(Actor::Koth, Actor::HolderOf);
        audit::record(conn, actor, AuditAction::CompileFailed, version, log).await?;
        return Ok(());
    };
    let row = sqlx::query(
        "UPDATE bot_versions v SET artifact = $2, image_id = $3, compile_log = $4 FROM bots b \
         WHERE v.id = $1 AND b.id = v.bot_id RETURNING b.id AS bot, b.ladder_id, v.compile_job",
    )
    .bind(version_id)
    .bind(artifact)
    .bind(image_id)
    .bind(log)
    .fetch_one(&mut *conn)
    .await?;
    let (bot, ladder): (i64, i64) = (row.get("bot"), row.get("ladder_id"));
    let actor = row.get::<Option<i64>, _>("compile_job").map_or(Actor::Koth, Actor::HolderOf);
    let config = match ladder_config(&mut *conn, ladder).await {
        Ok(config) => config,
        Err(StoreError::Db(e)) => return Err(e),
        Err(StoreError::Invalid(why)) => {
            tracing::warn!(version_id, "no validation game: {why}");
            None
        }
    };
    let why = match koth_ladder::settle::after_compile(config.as_ref().map(|(game, config)| (game, config))) {
        AfterCompile::Validate { seats } => {
            let game = start_validation(conn, ladder, bot, version_id, seats).await?;
            format!("in image {image_id}; its validation game is match {game}")
        }
        AfterCompile::PlayAtOnce { why } => {
            accept_version(conn, version_id, None).await?;
            format!("in image {image_id}; it plays at once ({why})")
        }
    };
    audit::record(conn, actor, AuditAction::CompileSucceeded, version, &why).await?;
    Ok(())
}

/// A compiled version that plays at once, with no validation game: for
/// tools and tests that make versions without a runner.
pub async fn accept_compiled(conn: &mut PgConnection, version_id: i64, artifact: &[u8], image_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE bot_versions SET artifact = $2, image_id = $3, compile_log = '' WHERE id = $1")
        .bind(version_id)
        .bind(artifact)
        .bind(image_id)
        .execute(&mut *conn)
        .await?;
    accept_version(conn, version_id, None).await
}

/// Queue `version`'s validation game: `seats` copies of it, unrated, with
/// the compiles' priority (its author is waiting). Returns the match.
async fn start_validation(conn: &mut PgConnection, ladder: i64, bot: i64, version: i64, seats: usize) -> Result<i64, sqlx::Error> {
    let seed = (rand::random::<u64>() >> 1) as i64;
    let match_id: i64 =
        sqlx::query_scalar("INSERT INTO matches (ladder_id, seed, rated, validates) VALUES ($1, $2, false, $3) RETURNING id")
            .bind(ladder)
            .bind(seed)
            .bind(version)
            .fetch_one(&mut *conn)
            .await?;
    for seat in 0..seats as i32 {
        sqlx::query("INSERT INTO match_seats (match_id, seat, bot_id, version_id) VALUES ($1, $2, $3, $4)")
            .bind(match_id)
            .bind(seat)
            .bind(bot)
            .bind(version)
            .execute(&mut *conn)
            .await?;
    }
    let job = enqueue_job(conn, Job::Match { match_id }, PRIORITY_COMPILE).await?;
    charge_to_owner(&mut *conn, job, version).await?;
    sqlx::query("UPDATE matches SET job_id = $2 WHERE id = $1").bind(match_id).bind(job).execute(&mut *conn).await?;
    sqlx::query("UPDATE bot_versions SET status = 'validating', validation_match = $2 WHERE id = $1")
        .bind(version)
        .bind(match_id)
        .execute(&mut *conn)
        .await?;
    Ok(match_id)
}

/// The version plays: ready, and its bot's current version unless a newer
/// one already is (compiles and validation games may finish out of order).
async fn accept_version(conn: &mut PgConnection, version_id: i64, log: Option<&str>) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE bot_versions SET status = 'ready', validation_log = coalesce($2, validation_log) WHERE id = $1")
        .bind(version_id)
        .bind(log)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "UPDATE bots b SET current_version = $1 FROM bot_versions v \
         WHERE v.id = $1 AND b.id = v.bot_id AND (b.current_version IS NULL OR \
               (SELECT number FROM bot_versions WHERE id = b.current_version) < v.number)",
    )
    .bind(version_id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Record what a version's validation game showed (in the transaction that
/// records the game), in the audit trail too.
pub async fn record_validation(
    conn: &mut PgConnection,
    version_id: i64,
    verdict: &koth_ladder::validation::Verdict,
) -> Result<(), sqlx::Error> {
    use koth_ladder::validation::Verdict;
    let version = Subjects { version: Some(version_id), ..Subjects::default() };
    match verdict {
        Verdict::Passed(log) => {
            accept_version(conn, version_id, Some(log)).await?;
            audit::record(conn, Actor::Koth, AuditAction::VersionAccepted, version, log).await?;
        }
        Verdict::Refused(log) => {
            if refuse_version(conn, version_id, log).await? {
                audit::record(conn, Actor::Koth, AuditAction::VersionRefused, version, log).await?;
            }
        }
    }
    Ok(())
}

/// A version waiting for its validation game is refused, with why; false
/// if it was not waiting.
async fn refuse_version(conn: &mut PgConnection, version_id: i64, log: &str) -> Result<bool, sqlx::Error> {
    let n = sqlx::query("UPDATE bot_versions SET status = 'refused', validation_log = $2 WHERE id = $1 AND status = 'validating'")
        .bind(version_id)
        .bind(log)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    Ok(n > 0)
}

/// Versions whose validation game ended without being played (failed or
/// cancelled): refused, with why; their bots' previous versions play on.
async fn refuse_unplayed_validations(conn: &mut PgConnection, matches: &[i64], why: &str) -> Result<(), sqlx::Error> {
    let log = koth_ladder::validation::not_played(why);
    let refused: Vec<i64> = sqlx::query_scalar(
        "UPDATE bot_versions SET status = 'refused', validation_log = $2 \
         WHERE validation_match = ANY($1) AND status = 'validating' RETURNING id",
    )
    .bind(matches)
    .bind(&log)
    .fetch_all(&mut *conn)
    .await?;
    for version in refused {
        audit::record(conn, Actor::Koth, AuditAction::VersionRefused, Subjects { version: Some(version), ..Subjects::default() }, &log)
            .await?;
    }
    Ok(())
}

/// A running match's turns so far, written by the runner that holds its
/// job under `lease` (a runner that lost the job writes nothing): how many
/// were played, and the turns played since its last write (`first_turn`
/// is the first of them; JSON, as in the replay). The first write of an
/// attempt drops what earlier attempts wrote. Returns whether it held the
/// job.
pub async fn report_live(
    pool: &PgPool,
    match_id: i64,
    lease: i64,
    played: u32,
    first_turn: u32,
    turns: &[u8],
) -> Result<bool, sqlx::Error> {
    let held: Option<i64> = sqlx::query_scalar(
        "WITH holder AS (SELECT m.id FROM matches m JOIN jobs j ON j.id = m.job_id \
           WHERE m.id = $1 AND m.state = 'queued' AND j.lease = $2 AND j.state = 'running'), \
         progressed AS (UPDATE matches m SET progress = $3, progress_at = now() FROM holder h WHERE m.id = h.id), \
         stale AS (DELETE FROM match_live l USING holder h WHERE l.match_id = h.id AND l.lease <> $2) \
         INSERT INTO match_live (match_id, lease, first_turn, turns) SELECT id, $2, $4, $5 FROM holder \
         ON CONFLICT (match_id, lease, first_turn) DO UPDATE SET turns = EXCLUDED.turns \
         RETURNING match_id",
    )
    .bind(match_id)
    .bind(lease)
    .bind(played as i32)
    .bind(first_turn as i32)
    .bind(turns)
    .fetch_optional(pool)
    .await?;
    Ok(held.is_some())
}

/// Drop what runners wrote of matches no longer being played.
pub async fn sweep_live_turns(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let r = sqlx::query(
        "DELETE FROM match_live l USING matches m LEFT JOIN jobs j ON j.id = m.job_id \
         WHERE m.id = l.match_id AND (m.state <> 'queued' OR j.state IS DISTINCT FROM 'running' OR j.lease <> l.lease)",
    )
    .execute(pool)
    .await?;
    Ok(r.rows_affected())
}

/// One seat of a match to play.
#[derive(Clone, Debug)]
pub struct SeatToPlay {
    pub seat: i32,
    pub bot_id: i64,
    pub bot_name: String,
    pub version_id: i64,
    pub language: String,
    pub main: String,
    pub source: Vec<u8>,
    pub source_hash: String,
    pub artifact: Option<Vec<u8>>,
    pub image_id: Option<String>,
}

/// What a match job needs.
#[derive(Clone, Debug)]
pub struct MatchToPlay {
    pub match_id: i64,
    /// `games.kind`: one of koth's own, or [`ADDED_KIND`].
    pub game: String,
    /// An added game: its `games.id` and its files' hash (runners read the
    /// files themselves only when they have not loaded that hash yet).
    pub added_game: Option<(i64, String)>,
    pub seed: i64,
    pub settings: CommonSettings,
    pub seats: Vec<SeatToPlay>,
}

pub async fn match_to_play(pool: &PgPool, match_id: i64) -> Result<Option<MatchToPlay>, sqlx::Error> {
    let Some(m) = sqlx::query(
        "SELECT m.id, m.seed, g.kind, g.id AS game_id, g.source_hash, coalesce(l.settings, '{}'::jsonb) AS settings, \
                m.validates IS NOT NULL AS validation \
         FROM matches m LEFT JOIN ladders l ON l.id = m.ladder_id LEFT JOIN games g ON g.id = l.game_id \
         WHERE m.id = $1",
    )
    .bind(match_id)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let settings: Value = m.get("settings");
    let mut settings = CommonSettings::from_stored(&settings);
    if m.get::<bool, _>("validation") {
        settings = koth_ladder::validation::limits(settings);
    }
    let seats = sqlx::query(
        "SELECT s.seat, s.bot_id, b.name, s.version_id, v.language, v.main, v.source, v.source_hash, v.artifact, v.image_id \
         FROM match_seats s JOIN bots b ON b.id = s.bot_id JOIN bot_versions v ON v.id = s.version_id \
         WHERE s.match_id = $1 ORDER BY s.seat",
    )
    .bind(match_id)
    .fetch_all(pool)
    .await?;
    Ok(Some(MatchToPlay {
        match_id: m.get("id"),
        game: m.get("kind"),
        added_game: m.get::<Option<String>, _>("source_hash").map(|hash| (m.get("game_id"), hash)),
        seed: m.get("seed"),
        settings,
        seats: seats
            .iter()
            .map(|r| SeatToPlay {
                seat: r.get("seat"),
                bot_id: r.get("bot_id"),
                bot_name: r.get("name"),
                version_id: r.get("version_id"),
                language: r.get("language"),
                main: r.get("main"),
                source: r.get("source"),
                source_hash: r.get("source_hash"),
                artifact: r.get("artifact"),
                image_id: r.get("image_id"),
            })
            .collect(),
    }))
}

/// An unrated challenge between bots of one ladder, in this seat order,
/// queued ahead of ladder matches within its fair share of the runners
/// ([`crate::db::queue::FairShare`]), asked for by `requested_by` (who may
/// cancel it). Every bot must have a ready version, and appear once.
/// `in_flight_limit` (`None` for hosts): the challenges the account may
/// have queued or playing, counted after the account's lock in the
/// transaction that adds this one.
pub async fn create_challenge(
    pool: &PgPool,
    ladder_id: i64,
    seats: &[i64],
    seed: i64,
    requested_by: i64,
    in_flight_limit: Option<u32>,
) -> Result<i64, ChallengeError> {
    let distinct: std::collections::HashSet<&i64> = seats.iter().collect();
    if distinct.len() != seats.len() {
        return Err(ChallengeError::Invalid("a bot cannot play itself: name each bot once".into()));
    }
    let mut tx = pool.begin().await?;
    super::accounts::lock_account(&mut tx, requested_by).await?;
    if let Some(limit) = in_flight_limit {
        // An A/B test's games are limited by the test (one at a time per bot).
        let in_flight: i64 =
            sqlx::query_scalar("SELECT count(*) FROM matches WHERE requested_by = $1 AND state = 'queued' AND ab_test IS NULL")
                .bind(requested_by)
                .fetch_one(&mut *tx)
                .await?;
        koth_ladder::quota::check_challenge(limit, in_flight).map_err(ChallengeError::OverLimit)?;
    }
    let ready: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM bots WHERE id = ANY($1) AND ladder_id = $2 AND current_version IS NOT NULL AND disabled_reason IS NULL",
    )
    .bind(seats)
    .bind(ladder_id)
    .fetch_one(&mut *tx)
    .await?;
    if ready as usize != distinct.len() {
        return Err(ChallengeError::Invalid("every bot of a challenge must be on this ladder, enabled, with a compiled version".into()));
    }
    let id = create_match(&mut tx, ladder_id, seats, seed, false, PRIORITY_CHALLENGE).await?;
    sqlx::query("UPDATE matches SET requested_by = $2 WHERE id = $1").bind(id).bind(requested_by).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(id)
}

/// Why [`create_challenge`] queued nothing.
#[derive(Debug, thiserror::Error)]
pub enum ChallengeError {
    /// The bots cannot play this challenge (the caller's mistake).
    #[error("{0}")]
    Invalid(String),
    #[error("{}", .0.message)]
    OverLimit(koth_ladder::quota::OverLimit),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Cancel the queued matches in `matches` whose job no runner holds yet
/// (the job is cancelled too; a running one is played to its end). Returns
/// the matches cancelled.
pub async fn cancel_queued_matches(conn: &mut PgConnection, matches: &[i64], why: &str) -> Result<Vec<i64>, sqlx::Error> {
    let cancelled: Vec<i64> = sqlx::query_scalar(
        "WITH j AS (UPDATE jobs SET state = 'cancelled', finished_at = now(), last_error = $2                     WHERE state = 'available' AND id IN (SELECT job_id FROM matches WHERE id = ANY($1) AND state = 'queued')                     RETURNING id)          UPDATE matches SET state = 'cancelled', error = $2, finished_at = now() WHERE job_id IN (SELECT id FROM j) RETURNING id",
    )
    .bind(matches)
    .bind(why)
    .fetch_all(&mut *conn)
    .await?;
    refuse_unplayed_validations(conn, &cancelled, why).await?;
    Ok(cancelled)
}

/// Cancel every queued match of these bots that no runner holds yet (they
/// were disabled, withdrawn, or their owner left).
pub async fn cancel_matches_of(conn: &mut PgConnection, bots: &[i64], why: &str) -> Result<Vec<i64>, sqlx::Error> {
    let queued: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT s.match_id FROM match_seats s JOIN matches m ON m.id = s.match_id WHERE s.bot_id = ANY($1) AND m.state = 'queued'",
    )
    .bind(bots)
    .fetch_all(&mut *conn)
    .await?;
    cancel_queued_matches(conn, &queued, why).await
}

/// What cancelling one match found.
#[derive(Debug, PartialEq, Eq)]
pub enum Cancelled {
    Done,
    /// A runner has it, or it is over: nothing was changed.
    TooLate(crate::job::MatchState),
    NoSuchMatch,
}

/// Cancel one queued match whose job no runner holds yet, by account `by`
/// (in the audit trail when it is done).
pub async fn cancel_match(pool: &PgPool, id: i64, by: i64, why: &str) -> Result<Cancelled, StoreError> {
    let mut tx = pool.begin().await?;
    let Some(state) =
        sqlx::query_scalar::<_, String>("SELECT state FROM matches WHERE id = $1 FOR UPDATE").bind(id).fetch_optional(&mut *tx).await?
    else {
        return Ok(Cancelled::NoSuchMatch);
    };
    let state = crate::job::MatchState::from_stored(&state).map_err(StoreError::Invalid)?;
    let done = cancel_queued_matches(&mut tx, &[id], why).await?;
    if !done.is_empty() {
        audit::record(
            &mut tx,
            Actor::Account(by),
            AuditAction::MatchCancelled,
            Subjects { match_id: Some(id), ..Subjects::default() },
            why,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(if done.is_empty() { Cancelled::TooLate(state) } else { Cancelled::Done })
}

/// Who asked for a match: `None` if there is no such match, `Some(None)`
/// for one its ladder scheduled.
pub async fn match_requester(pool: &PgPool, id: i64) -> Result<Option<Option<i64>>, sqlx::Error> {
    sqlx::query_scalar::<_, Option<i64>>("SELECT requested_by FROM matches WHERE id = $1").bind(id).fetch_optional(pool).await
}

/// Create a match with its seats and its job, in one transaction.
pub async fn create_match(
    conn: &mut PgConnection,
    ladder_id: i64,
    seats: &[i64],
    seed: i64,
    rated: bool,
    priority: i32,
) -> Result<i64, sqlx::Error> {
    create_match_in_round(conn, ladder_id, seats, seed, rated, priority, None, Stage::Ladder).await
}

/// [`create_match`] for a format played in rounds, or for the finals.
#[allow(clippy::too_many_arguments)]
pub async fn create_match_in_round(
    conn: &mut PgConnection,
    ladder_id: i64,
    seats: &[i64],
    seed: i64,
    rated: bool,
    priority: i32,
    round: Option<u32>,
    stage: Stage<'_>,
) -> Result<i64, sqlx::Error> {
    let match_id: i64 =
        sqlx::query_scalar("INSERT INTO matches (ladder_id, seed, rated, round, finals) VALUES ($1, $2, $3, $4, $5) RETURNING id")
            .bind(ladder_id)
            .bind(seed)
            .bind(rated)
            .bind(round.map(|r| r as i32))
            .bind(stage.finals())
            .fetch_one(&mut *conn)
            .await?;
    for (i, bot) in seats.iter().enumerate() {
        sqlx::query(
            "INSERT INTO match_seats (match_id, seat, bot_id, version_id) \
             SELECT $1, $2, id, current_version FROM bots WHERE id = $3 AND current_version IS NOT NULL",
        )
        .bind(match_id)
        .bind(i as i32)
        .bind(bot)
        .execute(&mut *conn)
        .await?;
    }
    let job = enqueue_job(conn, Job::Match { match_id }, priority).await?;
    sqlx::query("UPDATE matches SET job_id = $2 WHERE id = $1").bind(match_id).bind(job).execute(&mut *conn).await?;
    Ok(match_id)
}

/// Note `job` (a compile or validation game of `version`) as its owner's
/// work, so that the claim runs a bounded number of one account's at once
/// ([`crate::db::queue::FairShare::compiles_per_account`]); a host's are not
/// counted (`koth up` compiles its example bots all at once).
async fn charge_to_owner(conn: &mut PgConnection, job: i64, version: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE jobs SET account_id = (SELECT b.owner_id FROM bot_versions v JOIN bots b ON b.id = v.bot_id \
                                       JOIN users u ON u.id = b.owner_id WHERE v.id = $2 AND NOT u.is_host) \
         WHERE id = $1",
    )
    .bind(job)
    .bind(version)
    .execute(conn)
    .await?;
    Ok(())
}

/// Queue one of koth's jobs.
pub async fn enqueue_job(conn: &mut PgConnection, job: Job, priority: i32) -> Result<i64, sqlx::Error> {
    enqueue_on(conn, job.kind(), &job.payload(), priority, MAX_ATTEMPTS).await
}

/// A pending version that will not be compiled: failed, with the reason as its log.
pub async fn fail_version(conn: &mut PgConnection, version: i64, log: &str) -> Result<(), sqlx::Error> {
    let n = sqlx::query("UPDATE bot_versions SET status = 'failed', compile_log = $2 WHERE id = $1 AND status = 'pending'")
        .bind(version)
        .bind(log)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    if n > 0 {
        audit::record(conn, Actor::Koth, AuditAction::CompileFailed, Subjects { version: Some(version), ..Subjects::default() }, log)
            .await?;
    }
    Ok(())
}

/// A queued match that will not be played: failed, with the reason.
pub async fn fail_match(conn: &mut PgConnection, match_id: i64, why: &str) -> Result<(), sqlx::Error> {
    let n = sqlx::query("UPDATE matches SET state = 'failed', error = $2, finished_at = now() WHERE id = $1 AND state = 'queued'")
        .bind(match_id)
        .bind(why)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    if n > 0 {
        audit_failed_match(conn, match_id, why).await?;
    }
    refuse_unplayed_validations(conn, &[match_id], why).await
}

/// A match failed for good, in the audit trail: koth gave up on it (the
/// runner that last tried has let go of its job by now).
async fn audit_failed_match(conn: &mut PgConnection, match_id: i64, why: &str) -> Result<(), sqlx::Error> {
    audit::record(conn, Actor::Koth, AuditAction::MatchFailed, Subjects { match_id: Some(match_id), ..Subjects::default() }, why).await?;
    Ok(())
}

/// A match whose job will be tried again: why the last try gave no result,
/// for its page (cleared when it is played).
pub async fn note_match_retry(conn: &mut PgConnection, match_id: i64, why: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE matches SET error = $2 WHERE id = $1 AND state = 'queued'").bind(match_id).bind(why).execute(&mut *conn).await?;
    Ok(())
}

/// Matches whose job failed for good (e.g. its lease expired once too
/// often) are marked failed, with the job's error.
pub async fn mark_failed_matches(pool: &PgPool) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    let failed = sqlx::query(
        "UPDATE matches m SET state = 'failed', error = j.last_error, finished_at = now() \
         FROM jobs j WHERE j.id = m.job_id AND j.state = 'failed' AND m.state = 'queued' \
         RETURNING m.id, m.error",
    )
    .fetch_all(&mut *tx)
    .await?;
    for r in &failed {
        let why: Option<String> = r.get("error");
        let why = why.as_deref().unwrap_or("its job failed");
        audit_failed_match(&mut tx, r.get("id"), why).await?;
        refuse_unplayed_validations(&mut tx, &[r.get("id")], why).await?;
    }
    tx.commit().await
}

/// Ladders the scheduler fills, by id.
pub async fn unpaused_ladders(pool: &PgPool) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM ladders WHERE NOT paused AND finished_at IS NULL ORDER BY id").fetch_all(pool).await
}

/// Take the ladder's scheduling lock for this transaction; false if another
/// scheduler holds it (several may run; one fills a ladder at a time).
pub async fn lock_ladder(conn: &mut PgConnection, ladder: i64) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT pg_try_advisory_xact_lock(7370, $1::int)").bind(ladder as i32).fetch_one(conn).await
}

/// The first-start lock: held while a service fills an empty database (the
/// `host` account, then the example ladders and bots), so that services
/// started at once (two `koth web --examples`, web replicas on a swarm) fill
/// it once. Held until the returned transaction ends, or until its
/// connection closes if the process dies first.
pub async fn first_start_lock(pool: &PgPool) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error> {
    const FIRST_START_LOCK: i64 = 0x6b6f_7468_5f66_7273; // "koth_frs"
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(FIRST_START_LOCK).execute(&mut *tx).await?;
    Ok(tx)
}

pub async fn ladder_count(pool: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM ladders").fetch_one(pool).await
}
