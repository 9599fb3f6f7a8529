//! What the HTTP API reads and changes, one function per statement, each
//! returning the API's own types ([`crate::types`]). Who may call what is
//! the API's business; these only run the SQL.

use serde_json::Value;
use sqlx::{PgPool, Row};

use super::audit::{self, Actor};
use super::store::StoreError;
use crate::audit::{AuditAction, Subjects};
use crate::job::{JobState, MatchState, VersionStatus};

/// [`MatchKind`] of `matches m`: a validation game, a finals match, a
/// game of an A/B test, a challenge (someone asked for it), else rated or
/// counted in standings by its ladder's format.
const MATCH_KIND_SQL: &str = "CASE WHEN m.validates IS NOT NULL THEN 'validation' WHEN m.finals THEN 'finals' \
     WHEN m.ab_test IS NOT NULL THEN 'ab' WHEN m.requested_by IS NOT NULL THEN 'challenge' WHEN m.rated THEN 'rated' ELSE 'standings' END";
use crate::types::*;
use koth_ladder::rating::{leaderboard_score, Rating};

type Result<T> = std::result::Result<T, StoreError>;

/// A state column, typed: a value outside its `CHECK` cannot be stored, so
/// failing here means a hand-edited row.
fn stored<T>(text: String, parse: fn(&str) -> std::result::Result<T, String>) -> Result<T> {
    parse(&text).map_err(StoreError::Invalid)
}

pub async fn ping(pool: &PgPool) -> std::result::Result<(), sqlx::Error> {
    sqlx::query("SELECT 1").execute(pool).await.map(|_| ())
}

/// Counts for `/metrics`: jobs by kind and state, matches by state, enabled bots.
pub struct Counts {
    pub jobs: Vec<(String, String, i64)>,
    pub matches: Vec<(String, i64)>,
    pub bots: i64,
}

pub async fn counts(pool: &PgPool) -> Result<Counts> {
    let jobs = sqlx::query("SELECT kind, state, count(*) AS n FROM jobs GROUP BY kind, state ORDER BY kind, state")
        .fetch_all(pool)
        .await?
        .iter()
        .map(|r| (r.get("kind"), r.get("state"), r.get("n")))
        .collect();
    let matches = sqlx::query("SELECT state, count(*) AS n FROM matches GROUP BY state ORDER BY state")
        .fetch_all(pool)
        .await?
        .iter()
        .map(|r| (r.get("state"), r.get("n")))
        .collect();
    let bots = sqlx::query_scalar("SELECT count(*) FROM bots WHERE disabled_reason IS NULL").fetch_one(pool).await?;
    Ok(Counts { jobs, matches, bots })
}

/// What `/metrics` shows operators, read from the database (runners may be
/// on other machines): duration histograms over every finished job, and
/// gauges of now.
pub struct Operations {
    /// Finished matches' run time (claimed to finished), by game and ladder.
    pub match_seconds: Vec<crate::metrics::BucketCount>,
    /// Jobs' wait from queued to claimed, by kind, game and ladder.
    pub wait_seconds: Vec<crate::metrics::BucketCount>,
    /// Finished compiles' run time, by language.
    pub compile_seconds: Vec<crate::metrics::BucketCount>,
    /// Matches finished in the last 10 minutes, by game and ladder.
    pub finished_last_10_minutes: Vec<(String, String, i64)>,
    /// Runners seen lately, and job holders with a job running now.
    pub runners_alive: i64,
    pub workers_busy: i64,
}

fn bucket_rows(rows: &[sqlx::postgres::PgRow], labels: &[&'static str]) -> Vec<crate::metrics::BucketCount> {
    rows.iter()
        .map(|r| crate::metrics::BucketCount {
            labels: labels.iter().map(|l| (*l, r.get::<Option<String>, _>(*l).unwrap_or_default())).collect(),
            bucket: r.get::<i32, _>("bucket").max(0) as usize,
            count: r.get::<i64, _>("n").max(0) as u64,
            sum: r.get::<Option<f64>, _>("s").unwrap_or(0.0),
        })
        .collect()
}

pub async fn operations(pool: &PgPool) -> Result<Operations> {
    let bounds: Vec<f64> = crate::metrics::SECONDS.to_vec();
    let matches = sqlx::query(
        "WITH d AS (SELECT g.name AS game, l.name AS ladder, extract(epoch FROM j.finished_at - j.started_at)::float8 AS secs \
                    FROM matches m JOIN jobs j ON j.id = m.job_id LEFT JOIN ladders l ON l.id = m.ladder_id \
                    LEFT JOIN games g ON g.id = l.game_id \
                    WHERE m.state = 'finished' AND j.started_at IS NOT NULL AND j.finished_at IS NOT NULL) \
         SELECT game, ladder, width_bucket(secs, $1::float8[]) AS bucket, count(*) AS n, sum(secs) AS s FROM d GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )
    .bind(&bounds)
    .fetch_all(pool)
    .await?;
    let waits = sqlx::query(
        "WITH d AS (SELECT j.kind, g.name AS game, l.name AS ladder, extract(epoch FROM j.started_at - j.created_at)::float8 AS secs \
                    FROM jobs j LEFT JOIN matches m ON m.job_id = j.id \
                    LEFT JOIN bot_versions v ON v.compile_job = j.id LEFT JOIN bots b ON b.id = v.bot_id \
                    LEFT JOIN ladders l ON l.id = coalesce(m.ladder_id, b.ladder_id) LEFT JOIN games g ON g.id = l.game_id \
                    WHERE j.started_at IS NOT NULL AND j.kind IN ('match', 'compile')) \
         SELECT kind, game, ladder, width_bucket(secs, $1::float8[]) AS bucket, count(*) AS n, sum(secs) AS s FROM d \
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
    )
    .bind(&bounds)
    .fetch_all(pool)
    .await?;
    let compiles = sqlx::query(
        "WITH d AS (SELECT v.language, extract(epoch FROM j.finished_at - j.started_at)::float8 AS secs \
                    FROM bot_versions v JOIN jobs j ON j.id = v.compile_job \
                    WHERE j.state = 'completed' AND j.started_at IS NOT NULL AND j.finished_at IS NOT NULL) \
         SELECT language, width_bucket(secs, $1::float8[]) AS bucket, count(*) AS n, sum(secs) AS s FROM d GROUP BY 1, 2 ORDER BY 1, 2",
    )
    .bind(&bounds)
    .fetch_all(pool)
    .await?;
    let finished = sqlx::query(
        "SELECT coalesce(g.name, '') AS game, coalesce(l.name, '') AS ladder, count(*) AS n \
         FROM matches m LEFT JOIN ladders l ON l.id = m.ladder_id LEFT JOIN games g ON g.id = l.game_id \
         WHERE m.state = 'finished' AND m.finished_at > now() - interval '10 minutes' GROUP BY 1, 2 ORDER BY 1, 2",
    )
    .fetch_all(pool)
    .await?
    .iter()
    .map(|r| (r.get("game"), r.get("ladder"), r.get("n")))
    .collect();
    let alive: i64 = sqlx::query_scalar("SELECT count(*) FROM runners WHERE seen_at > now() - $1::interval")
        .bind(format!("{} seconds", (crate::db::runners::REPORT_EVERY * 2).as_secs()))
        .fetch_one(pool)
        .await?;
    let busy: i64 = sqlx::query_scalar("SELECT count(DISTINCT holder) FROM jobs WHERE state = 'running'").fetch_one(pool).await?;
    Ok(Operations {
        match_seconds: bucket_rows(&matches, &["game", "ladder"]),
        wait_seconds: bucket_rows(&waits, &["kind", "game", "ladder"]),
        compile_seconds: bucket_rows(&compiles, &["language"]),
        finished_last_10_minutes: finished,
        runners_alive: alive,
        workers_busy: busy,
    })
}

pub async fn ladders(pool: &PgPool) -> Result<Vec<LadderSummary>> {
    let rows = sqlx::query(
        "SELECT l.id, l.name, l.format, l.paused, g.name AS kind, (SELECT count(*) FROM bots b WHERE b.ladder_id = l.id AND b.current_version IS NOT NULL AND b.disabled_reason IS NULL) AS bots, \
                to_char(l.deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS deadline, \
                coalesce(l.deadline <= now(), false) AS passed, l.finals IS NOT NULL AS finals, l.finished_at IS NOT NULL AS finished \
         FROM ladders l JOIN games g ON g.id = l.game_id ORDER BY l.id",
    )
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(LadderSummary {
                id: r.get("id"),
                name: r.get("name"),
                game: r.get("kind"),
                format: stored(r.get("format"), str::parse)?,
                paused: r.get("paused"),
                bots: r.get("bots"),
                phase: koth_ladder::contest::Phase::of(r.get("passed"), r.get("finals"), r.get("finished")),
                deadline: r.get("deadline"),
            })
        })
        .collect()
}

pub async fn ladder_exists(pool: &PgPool, id: i64) -> Result<bool> {
    let found: Option<i64> = sqlx::query_scalar("SELECT id FROM ladders WHERE id = $1").bind(id).fetch_optional(pool).await?;
    Ok(found.is_some())
}

pub async fn bot_exists(pool: &PgPool, id: i64) -> Result<bool> {
    let found: Option<i64> = sqlx::query_scalar("SELECT id FROM bots WHERE id = $1").bind(id).fetch_optional(pool).await?;
    Ok(found.is_some())
}

/// The game a ladder plays (`None`: no such ladder).
pub async fn ladder_game(pool: &PgPool, ladder: i64) -> Result<Option<String>> {
    Ok(sqlx::query_scalar("SELECT g.kind FROM ladders l JOIN games g ON g.id = l.game_id WHERE l.id = $1")
        .bind(ladder)
        .fetch_optional(pool)
        .await?)
}

/// Pause or resume a ladder, by host `by` (in the audit trail); false if
/// there is no such ladder.
pub async fn set_paused(pool: &PgPool, id: i64, paused: bool, by: i64) -> Result<bool> {
    let mut tx = pool.begin().await?;
    let Some(was) =
        sqlx::query_scalar::<_, bool>("SELECT paused FROM ladders WHERE id = $1 FOR UPDATE").bind(id).fetch_optional(&mut *tx).await?
    else {
        return Ok(false);
    };
    sqlx::query("UPDATE ladders SET paused = $2 WHERE id = $1").bind(id).bind(paused).execute(&mut *tx).await?;
    let (action, why) = match (paused, was == paused) {
        (true, false) => (AuditAction::LadderPaused, "no new matches are scheduled; those queued are played"),
        (true, true) => (AuditAction::LadderPaused, "it was paused already"),
        (false, false) => (AuditAction::LadderResumed, "its matches are scheduled again"),
        (false, true) => (AuditAction::LadderResumed, "it was not paused"),
    };
    audit::record(&mut tx, Actor::Account(by), action, Subjects { ladder: Some(id), ..Subjects::default() }, why).await?;
    tx.commit().await?;
    Ok(true)
}

pub async fn ladder_bots(pool: &PgPool, id: i64) -> Result<Vec<LadderBot>> {
    let rows = sqlx::query(
        "SELECT b.id, b.name, u.name AS owner, b.disabled_reason, v.number AS current, v.language, \
                (SELECT status FROM bot_versions WHERE bot_id = b.id ORDER BY number DESC LIMIT 1) AS latest_status \
         FROM bots b JOIN users u ON u.id = b.owner_id LEFT JOIN bot_versions v ON v.id = b.current_version \
         WHERE b.ladder_id = $1 ORDER BY b.id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(LadderBot {
                id: r.get("id"),
                name: r.get("name"),
                owner: r.get("owner"),
                current_version: r.get("current"),
                language: r.get("language"),
                latest_status: r.get::<Option<String>, _>("latest_status").map(|t| stored(t, VersionStatus::from_stored)).transpose()?,
                disabled_reason: r.get("disabled_reason"),
            })
        })
        .collect()
}

/// Every bot of `owner`, by ladder then name.
pub async fn bots_of(pool: &PgPool, owner: i64) -> Result<Vec<MyBot>> {
    let rows = sqlx::query(
        "SELECT b.id, b.name, l.id AS ladder, l.name AS ladder_name, g.name AS game, b.disabled_reason, \
                v.number AS current, v.language, latest.number AS latest, latest.status AS latest_status \
         FROM bots b JOIN ladders l ON l.id = b.ladder_id JOIN games g ON g.id = l.game_id \
         LEFT JOIN bot_versions v ON v.id = b.current_version \
         LEFT JOIN LATERAL (SELECT number, status FROM bot_versions WHERE bot_id = b.id ORDER BY number DESC LIMIT 1) latest ON true \
         WHERE b.owner_id = $1 ORDER BY l.name, b.name",
    )
    .bind(owner)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(MyBot {
                id: r.get("id"),
                name: r.get("name"),
                ladder: r.get("ladder"),
                ladder_name: r.get("ladder_name"),
                game: r.get("game"),
                current_version: r.get("current"),
                language: r.get("language"),
                latest_version: r.get("latest"),
                latest_status: r.get::<Option<String>, _>("latest_status").map(|t| stored(t, VersionStatus::from_stored)).transpose()?,
                disabled_reason: r.get("disabled_reason"),
            })
        })
        .collect()
}

/// A ladder's last 50 matches, newest first, with every seat.
pub async fn ladder_matches(pool: &PgPool, ladder: i64) -> Result<Vec<MatchSummary>> {
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM matches WHERE ladder_id = $1 AND validates IS NULL ORDER BY id DESC LIMIT 50")
        .bind(ladder)
        .fetch_all(pool)
        .await?;
    matches_with_seats(pool, &ids).await
}

/// A bot's last 50 matches, newest first, with every seat (its versions'
/// validation games are listed with the versions, not here).
pub async fn bot_matches(pool: &PgPool, bot: i64) -> Result<Vec<MatchSummary>> {
    let ids: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT s.match_id FROM match_seats s JOIN matches m ON m.id = s.match_id \
         WHERE s.bot_id = $1 AND m.validates IS NULL ORDER BY s.match_id DESC LIMIT 50",
    )
    .bind(bot)
    .fetch_all(pool)
    .await?;
    matches_with_seats(pool, &ids).await
}

/// Matches (newest first) with every seat's bot and outcome.
async fn matches_with_seats(pool: &PgPool, ids: &[i64]) -> Result<Vec<MatchSummary>> {
    let matches = sqlx::query(&format!(
        "SELECT m.id, m.state, m.rated, {MATCH_KIND_SQL} AS purpose, m.turns, m.finished_at::text AS finished, m.finals, \
                    coalesce(m.state = 'queued' AND j.state = 'running', false) AS running \
             FROM matches m LEFT JOIN jobs j ON j.id = m.job_id WHERE m.id = ANY($1) ORDER BY m.id DESC"
    ))
    .bind(ids)
    .fetch_all(pool)
    .await?;
    let seats = sqlx::query(
        "SELECT s.match_id, s.seat, s.bot_id, b.name, s.rank, s.result, s.score, s.data_note \
         FROM match_seats s JOIN bots b ON b.id = s.bot_id \
         WHERE s.match_id = ANY($1) ORDER BY s.match_id, s.seat",
    )
    .bind(ids)
    .fetch_all(pool)
    .await?;
    let mut by_match: std::collections::HashMap<i64, Vec<SeatSummary>> = std::collections::HashMap::new();
    for r in &seats {
        by_match.entry(r.get("match_id")).or_default().push(SeatSummary {
            seat: r.get("seat"),
            bot: r.get("bot_id"),
            name: r.get("name"),
            rank: r.get("rank"),
            result: r.get::<Option<String>, _>("result").map(|t| stored(t, SeatResult::from_stored)).transpose()?,
            score: r.get("score"),
            data_note: r.get("data_note"),
        });
    }
    matches
        .iter()
        .map(|r| {
            let id: i64 = r.get("id");
            Ok(MatchSummary {
                match_id: id,
                state: stored(r.get("state"), MatchState::from_stored)?,
                rated: r.get("rated"),
                kind: stored(r.get("purpose"), MatchKind::from_stored)?,
                turns: r.get("turns"),
                finished: r.get("finished"),
                running: r.get("running"),
                finals: r.get("finals"),
                seats: by_match.remove(&id).unwrap_or_default(),
            })
        })
        .collect()
}

/// A bot of a ladder by name: (id, owner).
pub async fn bot_by_name(pool: &PgPool, ladder: i64, name: &str) -> Result<Option<(i64, i64)>> {
    let row = sqlx::query("SELECT id, owner_id FROM bots WHERE ladder_id = $1 AND name = $2")
        .bind(ladder)
        .bind(name)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| (r.get("id"), r.get("owner_id"))))
}

pub async fn bot_owner(pool: &PgPool, bot: i64) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar("SELECT owner_id FROM bots WHERE id = $1").bind(bot).fetch_optional(pool).await?)
}

pub async fn bot_info(pool: &PgPool, id: i64) -> Result<Option<BotInfo>> {
    let Some(b) = sqlx::query(
        "SELECT b.id, b.name, b.ladder_id, l.name AS ladder_name, l.format, g.name AS kind, b.current_version, b.disabled_reason, u.name AS owner \
         FROM bots b JOIN users u ON u.id = b.owner_id JOIN ladders l ON l.id = b.ladder_id JOIN games g ON g.id = l.game_id WHERE b.id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let versions = sqlx::query(
        "SELECT v.id, v.number, v.language, v.main, v.status, v.image_id, v.created_at::text AS at, v.validation_match, \
                CASE v.status WHEN 'pending' THEN cj.state WHEN 'validating' THEN vj.state END AS job_state \
         FROM bot_versions v LEFT JOIN jobs cj ON cj.id = v.compile_job \
         LEFT JOIN matches vm ON vm.id = v.validation_match LEFT JOIN jobs vj ON vj.id = vm.job_id \
         WHERE v.bot_id = $1 ORDER BY v.number",
    )
    .bind(id)
    .fetch_all(pool)
    .await?
    .iter()
    .map(|v| {
        Ok(VersionInfo {
            id: v.get("id"),
            number: v.get("number"),
            language: v.get("language"),
            main: v.get("main"),
            status: stored(v.get("status"), VersionStatus::from_stored)?,
            image: v.get("image_id"),
            submitted: v.get("at"),
            validation_match: v.get("validation_match"),
            job: v.get::<Option<String>, _>("job_state").map(|t| stored(t, JobState::from_stored)).transpose()?,
        })
    })
    .collect::<Result<Vec<_>>>()?;
    let rating = sqlx::query("SELECT mu, sigma, games FROM ratings WHERE bot_id = $1").bind(id).fetch_optional(pool).await?;
    Ok(Some(BotInfo {
        id: b.get("id"),
        name: b.get("name"),
        owner: b.get("owner"),
        ladder: b.get("ladder_id"),
        ladder_name: b.get("ladder_name"),
        format: stored(b.get("format"), str::parse)?,
        game: b.get("kind"),
        current_version: b.get("current_version"),
        disabled_reason: b.get("disabled_reason"),
        rating: rating.map(|r| RatingNow { mu: r.get("mu"), sigma: r.get("sigma"), games: r.get("games") }),
        versions,
    }))
}

pub async fn rating_history(pool: &PgPool, bot: i64) -> Result<Vec<RatingPoint>> {
    let rows = sqlx::query("SELECT match_id, mu, sigma, at::text AS at FROM rating_history WHERE bot_id = $1 ORDER BY id")
        .bind(bot)
        .fetch_all(pool)
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let (mu, sigma) = (r.get::<f64, _>("mu"), r.get::<f64, _>("sigma"));
            RatingPoint { match_id: r.get("match_id"), mu, sigma, score: leaderboard_score(Rating { mu, sigma }), at: r.get("at") }
        })
        .collect())
}

/// A bot's record against each bot it met: a win is a better rank in the
/// same match (so it means the same in 2-seat and free-for-all games).
pub async fn head_to_head(pool: &PgPool, bot: i64) -> Result<Vec<HeadToHead>> {
    let rows = sqlx::query(
        "SELECT o.bot_id, b.name, count(*) AS played, \
                count(*) FILTER (WHERE me.rank < o.rank) AS won, \
                count(*) FILTER (WHERE me.rank > o.rank) AS lost, \
                count(*) FILTER (WHERE me.rank = o.rank) AS tied \
         FROM match_seats me \
         JOIN matches m ON m.id = me.match_id AND m.state = 'finished' \
         JOIN match_seats o ON o.match_id = me.match_id AND o.bot_id <> me.bot_id \
         JOIN bots b ON b.id = o.bot_id \
         WHERE me.bot_id = $1 GROUP BY o.bot_id, b.name ORDER BY played DESC, b.name LIMIT 100",
    )
    .bind(bot)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| HeadToHead {
            bot: r.get("bot_id"),
            name: r.get("name"),
            played: r.get("played"),
            won: r.get("won"),
            lost: r.get("lost"),
            tied: r.get("tied"),
        })
        .collect())
}

/// Disable a bot with `reason` (shown to its owner; its queued matches
/// that no runner holds yet are cancelled with it), or enable it with
/// none, by account `by`; `action` says which for the audit trail
/// (disabled, deleted, enabled). False if there is no such bot.
pub async fn set_disabled(pool: &PgPool, bot: i64, reason: Option<&str>, by: i64, action: AuditAction) -> Result<bool> {
    let mut tx = pool.begin().await?;
    let Some(was) = sqlx::query_scalar::<_, Option<String>>("SELECT disabled_reason FROM bots WHERE id = $1 FOR UPDATE")
        .bind(bot)
        .fetch_optional(&mut *tx)
        .await?
    else {
        return Ok(false);
    };
    sqlx::query("UPDATE bots SET disabled_reason = $2 WHERE id = $1").bind(bot).bind(reason).execute(&mut *tx).await?;
    let why = match reason {
        Some(why) => {
            let cancelled = super::store::cancel_matches_of(&mut tx, &[bot], &format!("cancelled: a bot was withdrawn ({why})")).await?;
            format!("{why}; {} queued match(es) cancelled", cancelled.len())
        }
        None => match was {
            Some(was) => format!("it was {was}"),
            None => "it was not disabled".to_owned(),
        },
    };
    audit::record(&mut tx, Actor::Account(by), action, Subjects { bot: Some(bot), ..Subjects::default() }, &why).await?;
    tx.commit().await?;
    Ok(true)
}

/// A version's bot, status, compile and validation logs and stored sources.
pub struct VersionRow {
    pub bot: i64,
    pub status: VersionStatus,
    pub log: Option<String>,
    pub validation: Option<String>,
    pub validation_match: Option<i64>,
    pub source: Vec<u8>,
}

pub async fn version(pool: &PgPool, id: i64) -> Result<Option<VersionRow>> {
    let Some(v) =
        sqlx::query("SELECT bot_id, status, compile_log, validation_log, validation_match, source FROM bot_versions WHERE id = $1")
            .bind(id)
            .fetch_optional(pool)
            .await?
    else {
        return Ok(None);
    };
    Ok(Some(VersionRow {
        bot: v.get("bot_id"),
        status: stored(v.get("status"), VersionStatus::from_stored)?,
        log: v.get("compile_log"),
        validation: v.get("validation_log"),
        validation_match: v.get("validation_match"),
        source: v.get("source"),
    }))
}

pub async fn match_info(pool: &PgPool, id: i64) -> Result<Option<MatchInfo>> {
    let Some(m) = sqlx::query(&format!(
        "SELECT m.id, m.ladder_id, l.name AS ladder_name, g.name AS kind, m.state, m.seed, m.rated, {MATCH_KIND_SQL} AS purpose, \
                m.engine, m.turns, m.error, m.created_at::text AS created, m.finished_at::text AS finished, l.format, l.settings, \
                m.validates, m.ab_test, m.ab_pair, (m.state = 'queued' AND j.state = 'running') AS running, m.progress \
         FROM matches m LEFT JOIN ladders l ON l.id = m.ladder_id LEFT JOIN games g ON g.id = l.game_id \
         LEFT JOIN jobs j ON j.id = m.job_id WHERE m.id = $1"
    ))
    .bind(id)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let seats = sqlx::query(
        "SELECT s.seat, s.bot_id, b.name, u.name AS owner, s.version_id, s.score, s.rank, s.result, s.status, v.language, \
                s.data_from, s.data_written, s.data_note \
         FROM match_seats s JOIN bots b ON b.id = s.bot_id JOIN users u ON u.id = b.owner_id \
         JOIN bot_versions v ON v.id = s.version_id WHERE s.match_id = $1 ORDER BY s.seat",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let seed = (m.get::<i64, _>("seed") as u64).to_string();
    let reproduce = match (m.get::<Option<String>, _>("kind"), m.get::<Option<String>, _>("format"), m.get::<Option<Value>, _>("settings"))
    {
        (Some(game), Some(format), Some(settings)) => {
            // A ladder whose settings koth cannot read: the command without limits.
            let mut common = koth_ladder::format::LadderConfig::parse(&format, &settings).map(|c| c.common).unwrap_or_default();
            if m.get::<Option<i64>, _>("validates").is_some() {
                common = koth_ladder::validation::limits(common);
            }
            let seats: Vec<(String, String)> = seats
                .iter()
                .map(|r| {
                    let lang: String = r.get("language");
                    let ext = koth_runner::language::by_name(&lang).and_then(|l| l.extensions.first().cloned()).unwrap_or(lang);
                    (r.get("name"), ext)
                })
                .collect();
            // An added game is played from its folder (`GET /api/games/{name}/folder`).
            let game = if koth_games::GameKind::from_name(&game).is_some() { game } else { format!("./{game}") };
            Some(reproduce_command(&game, &seed, &seats, common.max_turns, common.max_match_seconds))
        }
        _ => None,
    };
    Ok(Some(MatchInfo {
        id: m.get("id"),
        ladder: m.get("ladder_id"),
        ladder_name: m.get("ladder_name"),
        game: m.get("kind"),
        state: stored(m.get("state"), MatchState::from_stored)?,
        // Stored as bigint; seeds are drawn below 2^63, so the cast is exact.
        seed,
        rated: m.get("rated"),
        kind: stored(m.get("purpose"), MatchKind::from_stored)?,
        engine: m.get("engine"),
        turns: m.get("turns"),
        error: m.get("error"),
        created: m.get("created"),
        finished: m.get("finished"),
        seats: seats
            .iter()
            .map(|r| {
                Ok(MatchSeat {
                    seat: r.get("seat"),
                    bot: r.get("bot_id"),
                    name: r.get("name"),
                    owner: r.get("owner"),
                    version: r.get("version_id"),
                    score: r.get("score"),
                    rank: r.get("rank"),
                    result: r.get::<Option<String>, _>("result").map(|t| stored(t, SeatResult::from_stored)).transpose()?,
                    status: r.get("status"),
                    data: r.get::<Option<String>, _>("data_from").map(|started_from| SeatDataInfo {
                        started_from,
                        written: r.get("data_written"),
                        note: r.get("data_note"),
                    }),
                })
            })
            .collect::<Result<Vec<_>>>()?,
        reproduce,
        validates: m.get("validates"),
        ab_test: m.get("ab_test"),
        ab_pair: m.get("ab_pair"),
        running: m.get::<Option<bool>, _>("running").unwrap_or(false),
        progress: if m.get::<Option<bool>, _>("running").unwrap_or(false) { m.get("progress") } else { None },
    }))
}

/// A seat's bot, stderr and turn ends (`[[turn, end], ...]`).
pub async fn seat_stderr(pool: &PgPool, match_id: i64, seat: i32) -> Result<Option<(i64, Option<String>, Vec<(u32, usize)>)>> {
    let row = sqlx::query("SELECT bot_id, stderr, stderr_turns FROM match_seats WHERE match_id = $1 AND seat = $2")
        .bind(match_id)
        .bind(seat)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| {
        let ends = r.get::<Option<Value>, _>("stderr_turns").and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default();
        (r.get("bot_id"), r.get("stderr"), ends)
    }))
}

/// The stderr of the seats of `match_id` whose bots `user` owns (every
/// seat for a host), as a replay carries it, by seat: what a downloaded
/// replay holds for its reader (`GET /api/matches/{id}/replay`). Seats
/// whose stderr was never stored (a match not played) are left out.
pub async fn owned_stderr(pool: &PgPool, match_id: i64, user: i64, is_host: bool) -> Result<Vec<(usize, koth_games::replay::SeatStderr)>> {
    let rows = sqlx::query(
        "SELECT s.seat, s.stderr, s.stderr_turns FROM match_seats s JOIN bots b ON b.id = s.bot_id \
         WHERE s.match_id = $1 AND s.stderr IS NOT NULL AND ($3 OR b.owner_id = $2) ORDER BY s.seat",
    )
    .bind(match_id)
    .bind(user)
    .bind(is_host)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let text: String = r.get("stderr");
            let ends: Vec<(u32, usize)> =
                r.get::<Option<Value>, _>("stderr_turns").and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default();
            // The runner keeps the first 64 KiB of a seat's stderr
            // (koth_runner's default cap): a log that long was cut there.
            let cut = text.len() >= koth_runner::engine::DEFAULT_STDERR_CAP;
            (r.get::<i32, _>("seat") as usize, koth_games::replay::SeatStderr::from_ends(&text, &ends, None, cut))
        })
        .collect())
}

/// How many of `bots` belong to `user`.
pub async fn owned_among(pool: &PgPool, bots: &[i64], user: i64) -> Result<i64> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM bots WHERE id = ANY($1) AND owner_id = $2").bind(bots).bind(user).fetch_one(pool).await?)
}

/// The turns a runner has written of a match it is playing now, in order
/// (JSON arrays, one per write); `None` unless the match is being played.
pub async fn live_turns(pool: &PgPool, match_id: i64) -> Result<Option<Vec<Vec<u8>>>> {
    let rows: Vec<(Option<Vec<u8>>,)> = sqlx::query_as(
        "SELECT l.turns FROM matches m JOIN jobs j ON j.id = m.job_id AND j.state = 'running' \
         LEFT JOIN match_live l ON l.match_id = m.id AND l.lease = j.lease \
         WHERE m.id = $1 AND m.state = 'queued' ORDER BY l.first_turn",
    )
    .bind(match_id)
    .fetch_all(pool)
    .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(rows.into_iter().filter_map(|(t,)| t).collect()))
}
