//! Rows the rest of koth reads and writes: users, games, ladders, bots and
//! their versions, and the jobs that go with them. Each function is one
//! transaction (or runs inside the caller's).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sqlx::{PgConnection, PgPool, Row};

use crate::queue::enqueue_on;

/// Job priorities: compiles first (an author waits for them), challenges
/// next, ladder matches last.
pub const PRIORITY_COMPILE: i32 = 100;
pub const PRIORITY_CHALLENGE: i32 = 50;
pub const PRIORITY_LADDER: i32 = 0;
/// Attempts before a job fails for good.
pub const MAX_ATTEMPTS: i32 = 5;

/// A ladder's settings (`ladders.settings`), with defaults.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LadderSettings {
    /// Seats per match (default: the game's smallest).
    pub seats: Option<usize>,
    /// Matches of this ladder queued or running at once.
    pub concurrency: u32,
    /// Rating system of a rated ladder.
    pub rating: crate::rating::RatingSystem,
    /// Games under which a bot counts as new (one match at a time, first in line).
    pub newcomer_games: u32,
    /// Stop matches after this many turns (quick ladders, tests); None = to the end.
    pub max_turns: Option<u32>,
    /// Stop a match that has run this many seconds and score it as it
    /// stands; None = the engine's default cap for the game.
    pub max_match_seconds: Option<u32>,
    /// Round robin: times each pairing is played on each side.
    pub rounds: u32,
    /// Neighbours ladder: games against each neighbour.
    pub games_per_neighbour: u32,
    /// Round robin: how a match scores (default: points 2 / 1 / 0).
    pub scoring: crate::formats::RoundRobinScoring,
}

impl Default for LadderSettings {
    fn default() -> Self {
        LadderSettings {
            seats: None,
            concurrency: 4,
            rating: crate::rating::RatingSystem::WengLin,
            newcomer_games: 10,
            max_turns: None,
            max_match_seconds: None,
            rounds: 1,
            games_per_neighbour: 10,
            scoring: crate::formats::RoundRobinScoring::Points { win: 2.0, tie: 1.0, loss: 0.0 },
        }
    }
}

/// The format and settings a game's seed describes:
///
/// | game | format | from the seed |
/// |---|---|---|
/// | Flit | rated, 4 seats | winner only (most pieces): rated by finishing order |
/// | Slime | round robin, 4 seats, average score | every 4-bot combination plays; average score |
/// | Linkage | neighbours, 10 games per neighbour | the weekly ladder, 100 × won / played |
/// | Target | rated, 2 seats | games until a clear winner; joint winners each score |
/// | Snake | round robin, 2 seats, win 2 / tie 1 / loss 0 | each pair M times on each side |
pub fn default_format(kind: koth_games::GameKind) -> (&'static str, LadderSettings) {
    use crate::formats::RoundRobinScoring;
    use koth_games::GameKind;
    let d = LadderSettings::default();
    match kind {
        GameKind::Flit => ("rated", LadderSettings { seats: Some(4), ..d }),
        GameKind::Slime => ("round_robin", LadderSettings { seats: Some(4), scoring: RoundRobinScoring::AverageScore, ..d }),
        GameKind::Linkage => ("neighbours", LadderSettings { seats: Some(2), games_per_neighbour: 10, ..d }),
        GameKind::Target => ("rated", LadderSettings { seats: Some(2), ..d }),
        GameKind::Snake => {
            ("round_robin", LadderSettings { seats: Some(2), scoring: RoundRobinScoring::Points { win: 2.0, tie: 1.0, loss: 0.0 }, ..d })
        }
    }
}

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

pub async fn create_ladder(
    pool: &PgPool,
    name: &str,
    kind: koth_games::GameKind,
    format: &str,
    settings: &LadderSettings,
) -> Result<i64, sqlx::Error> {
    let game_id = game(pool, kind).await?;
    sqlx::query_scalar("INSERT INTO ladders (game_id, name, format, settings) VALUES ($1, $2, $3, $4) RETURNING id")
        .bind(game_id)
        .bind(name)
        .bind(format)
        .bind(serde_json::to_value(settings).unwrap())
        .fetch_one(pool)
        .await
}

pub async fn create_bot(pool: &PgPool, ladder_id: i64, owner_id: i64, name: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO bots (ladder_id, owner_id, name) VALUES ($1, $2, $3) RETURNING id")
        .bind(ladder_id)
        .bind(owner_id)
        .bind(name)
        .fetch_one(pool)
        .await
}

/// A new version of a bot, with its compile job, in one transaction.
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
    let version_id: i64 = sqlx::query_scalar(
        "INSERT INTO bot_versions (bot_id, number, language, main, source, source_hash) \
         VALUES ($1, (SELECT coalesce(max(number), 0) + 1 FROM bot_versions WHERE bot_id = $1), $2, $3, $4, $5) \
         RETURNING id",
    )
    .bind(bot_id)
    .bind(language)
    .bind(main)
    .bind(source)
    .bind(source_hash)
    .fetch_one(&mut *tx)
    .await?;
    let job = enqueue_on(&mut tx, "compile", &json!({ "version": version_id }), PRIORITY_COMPILE, MAX_ATTEMPTS).await?;
    tx.commit().await?;
    Ok((version_id, job))
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
/// job). A ready version becomes its bot's current version, replacing the
/// old one on the ladder.
pub async fn record_compile(
    conn: &mut PgConnection,
    version_id: i64,
    outcome: Result<(&[u8], &str), ()>,
    log: &str,
) -> Result<(), sqlx::Error> {
    match outcome {
        Ok((artifact, image_id)) => {
            sqlx::query("UPDATE bot_versions SET status = 'ready', artifact = $2, image_id = $3, compile_log = $4 WHERE id = $1")
                .bind(version_id)
                .bind(artifact)
                .bind(image_id)
                .bind(log)
                .execute(&mut *conn)
                .await?;
            // Only a newer version replaces the current one (compiles may finish out of order).
            sqlx::query(
                "UPDATE bots b SET current_version = $1 FROM bot_versions v \
                 WHERE v.id = $1 AND b.id = v.bot_id AND (b.current_version IS NULL OR \
                       (SELECT number FROM bot_versions WHERE id = b.current_version) < v.number)",
            )
            .bind(version_id)
            .execute(&mut *conn)
            .await?;
        }
        Err(()) => {
            sqlx::query("UPDATE bot_versions SET status = 'failed', compile_log = $2 WHERE id = $1")
                .bind(version_id)
                .bind(log)
                .execute(&mut *conn)
                .await?;
        }
    }
    Ok(())
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
    pub game: String,
    pub seed: i64,
    pub settings: LadderSettings,
    pub seats: Vec<SeatToPlay>,
}

pub async fn match_to_play(pool: &PgPool, match_id: i64) -> Result<Option<MatchToPlay>, sqlx::Error> {
    let Some(m) = sqlx::query(
        "SELECT m.id, m.seed, g.kind, coalesce(l.settings, '{}'::jsonb) AS settings \
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
        seed: m.get("seed"),
        settings: serde_json::from_value(settings).unwrap_or_default(),
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
/// queued ahead of ladder matches. Every bot must have a ready version.
pub async fn create_challenge(pool: &PgPool, ladder_id: i64, seats: &[i64], seed: i64) -> Result<i64, String> {
    let mut tx = pool.begin().await.map_err(|e| e.to_string())?;
    let ready: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM bots WHERE id = ANY($1) AND ladder_id = $2 AND current_version IS NOT NULL AND disabled_reason IS NULL",
    )
    .bind(seats)
    .bind(ladder_id)
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| e.to_string())?;
    let distinct: std::collections::HashSet<&i64> = seats.iter().collect();
    if ready as usize != distinct.len() {
        return Err("every bot of a challenge must be on this ladder, enabled, with a compiled version".into());
    }
    let id = create_match(&mut tx, ladder_id, seats, seed, false, PRIORITY_CHALLENGE).await.map_err(|e| e.to_string())?;
    tx.commit().await.map_err(|e| e.to_string())?;
    Ok(id)
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
    let match_id: i64 = sqlx::query_scalar("INSERT INTO matches (ladder_id, seed, rated) VALUES ($1, $2, $3) RETURNING id")
        .bind(ladder_id)
        .bind(seed)
        .bind(rated)
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
    let job = enqueue_on(conn, "match", &json!({ "match": match_id }), priority, MAX_ATTEMPTS).await?;
    sqlx::query("UPDATE matches SET job_id = $2 WHERE id = $1").bind(match_id).bind(job).execute(&mut *conn).await?;
    Ok(match_id)
}
