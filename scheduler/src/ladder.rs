//! `koth scheduler`: keeps every ladder busy.
//!
//! Each tick rescues expired leases and, per unpaused ladder, inside one
//! transaction holding that ladder's advisory lock (so several schedulers
//! can run; one fills a ladder at a time), asks the ladder's format
//! ([`crate::formats`], pure) which matches to add and creates them with
//! their jobs:
//!
//! * `rated`: keeps `concurrency` matches queued or running, chosen by
//!   [`formats::next_rated_match`] from the bots with a ready current version
//!   that are not disabled;
//! * `round_robin`: every pairing (or k-combination) of the ladder's bots
//!   `rounds` times on each side; pairings already played or queued are not
//!   added again, so a bot that joins late gets its games too;
//! * `neighbours`: Linkage's ladder, the games each bot still owes its
//!   neighbours in the current order, `concurrency` at a time.

use std::collections::HashMap;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use sqlx::{PgConnection, PgPool, Row};

use crate::formats;
use crate::queue::Queue;
use crate::rating::Rating;
use crate::store::{self, LadderSettings};

/// What one tick did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    pub rescued: u64,
    pub failed: u64,
    pub created: u64,
}

/// Run ticks until `stop` resolves.
pub async fn run(pool: PgPool, every: Duration, stop: impl std::future::Future<Output = ()>) -> Result<(), String> {
    let queue = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::from_entropy();
    tokio::pin!(stop);
    loop {
        match tick(&pool, &queue, &mut rng).await {
            Ok(t) if t != Tick::default() => tracing::info!(?t, "scheduler tick"),
            Ok(_) => {}
            // A database restart: log, wait, carry on.
            Err(e) => tracing::warn!("scheduler tick failed: {e}"),
        }
        tokio::select! {
            _ = &mut stop => return Ok(()),
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// One pass over the queue and every ladder.
pub async fn tick<R: Rng>(pool: &PgPool, queue: &Queue, rng: &mut R) -> Result<Tick, sqlx::Error> {
    let (rescued, failed) = match queue.rescue_expired().await {
        Ok(x) => x,
        Err(crate::queue::QueueError::Db(e)) => return Err(e),
        Err(e) => return Err(sqlx::Error::Protocol(e.to_string())),
    };
    mark_failed_matches(pool).await?;
    let ladders = sqlx::query(
        "SELECT l.id, l.format, l.settings, g.kind FROM ladders l JOIN games g ON g.id = l.game_id \
         WHERE NOT l.paused ORDER BY l.id",
    )
    .fetch_all(pool)
    .await?;
    let mut created = 0;
    for l in ladders {
        let id: i64 = l.get("id");
        let format: String = l.get("format");
        let settings: LadderSettings = serde_json::from_value(l.get("settings")).unwrap_or_default();
        let Some(kind) = koth_games::GameKind::from_name(&l.get::<String, _>("kind")) else { continue };
        let mut tx = pool.begin().await?;
        let mine: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock(7370, $1::int)").bind(id as i32).fetch_one(&mut *tx).await?;
        if !mine {
            continue;
        }
        let seats = settings.seats.unwrap_or(kind.seat_range().0);
        created += match format.as_str() {
            "rated" => fill_rated(&mut tx, id, &settings, seats, rng).await?,
            "round_robin" => fill_round_robin(&mut tx, id, &settings, seats, rng).await?,
            "neighbours" => fill_neighbours(&mut tx, id, &settings, rng).await?,
            _ => 0,
        };
        tx.commit().await?;
    }
    Ok(Tick { rescued, failed, created })
}

/// Matches whose job failed for good (e.g. its lease expired once too
/// often) are marked failed, with the job's error.
pub async fn mark_failed_matches(pool: &PgPool) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE matches m SET state = 'failed', error = j.last_error, finished_at = now() \
         FROM jobs j WHERE j.id = m.job_id AND j.state = 'failed' AND m.state = 'queued'",
    )
    .execute(pool)
    .await?;
    Ok(())
}

fn seed<R: Rng>(rng: &mut R) -> i64 {
    (rng.gen::<u64>() >> 1) as i64
}

async fn in_flight(conn: &mut PgConnection, ladder: i64) -> Result<u32, sqlx::Error> {
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM matches WHERE ladder_id = $1 AND state = 'queued'")
        .bind(ladder)
        .fetch_one(&mut *conn)
        .await?;
    Ok(n as u32)
}

async fn fill_rated<R: Rng>(
    conn: &mut PgConnection,
    ladder: i64,
    settings: &LadderSettings,
    seats: usize,
    rng: &mut R,
) -> Result<u64, sqlx::Error> {
    let mut queued = in_flight(conn, ladder).await?;
    let initial = settings.rating.initial();
    let mut created = 0;
    while queued < settings.concurrency {
        let rows = sqlx::query(
            "SELECT b.id, r.mu, r.sigma, coalesce(r.games, 0) AS games, \
                    (SELECT count(*) FROM match_seats s JOIN matches m ON m.id = s.match_id \
                     WHERE s.bot_id = b.id AND m.state = 'queued') AS in_flight \
             FROM bots b LEFT JOIN ratings r ON r.ladder_id = b.ladder_id AND r.bot_id = b.id \
             WHERE b.ladder_id = $1 AND b.current_version IS NOT NULL AND b.disabled_reason IS NULL ORDER BY b.id",
        )
        .bind(ladder)
        .fetch_all(&mut *conn)
        .await?;
        let entrants: Vec<formats::Entrant> = rows
            .iter()
            .map(|r| formats::Entrant {
                bot: r.get("id"),
                rating: match (r.get::<Option<f64>, _>("mu"), r.get::<Option<f64>, _>("sigma")) {
                    (Some(mu), Some(sigma)) => Rating { mu, sigma },
                    _ => initial,
                },
                games: r.get::<i32, _>("games") as u32,
                in_flight: r.get::<i64, _>("in_flight") as u32,
            })
            .collect();
        let ladder_settings =
            formats::LadderSettings { seats, newcomer_games: settings.newcomer_games, ..formats::LadderSettings::default() };
        let Some(pick) = formats::next_rated_match(&entrants, &ladder_settings, rng) else { break };
        store::create_match(conn, ladder, &pick, seed(rng), true, store::PRIORITY_LADDER).await?;
        queued += 1;
        created += 1;
    }
    Ok(created)
}

/// Bots with a ready current version, not disabled.
async fn playing_bots(conn: &mut PgConnection, ladder: i64) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM bots WHERE ladder_id = $1 AND current_version IS NOT NULL AND disabled_reason IS NULL ORDER BY id")
        .bind(ladder)
        .fetch_all(&mut *conn)
        .await
}

/// Every match of the ladder (queued or finished) as its seat order.
async fn existing_tuples(conn: &mut PgConnection, ladder: i64) -> Result<Vec<Vec<i64>>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT m.id, array_agg(s.bot_id ORDER BY s.seat) AS seats FROM matches m JOIN match_seats s ON s.match_id = m.id \
         WHERE m.ladder_id = $1 AND m.state <> 'failed' GROUP BY m.id",
    )
    .bind(ladder)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.iter().map(|r| r.get("seats")).collect())
}

async fn fill_round_robin<R: Rng>(
    conn: &mut PgConnection,
    ladder: i64,
    settings: &LadderSettings,
    seats: usize,
    rng: &mut R,
) -> Result<u64, sqlx::Error> {
    let bots = playing_bots(conn, ladder).await?;
    let mut have: HashMap<Vec<i64>, u32> = HashMap::new();
    for t in existing_tuples(conn, ladder).await? {
        *have.entry(t).or_default() += 1;
    }
    let mut created = 0;
    for tuple in formats::round_robin_schedule(&bots, seats, settings.rounds) {
        match have.get_mut(&tuple) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                store::create_match(conn, ladder, &tuple, seed(rng), false, store::PRIORITY_LADDER).await?;
                created += 1;
            }
        }
    }
    Ok(created)
}

async fn fill_neighbours<R: Rng>(conn: &mut PgConnection, ladder: i64, settings: &LadderSettings, rng: &mut R) -> Result<u64, sqlx::Error> {
    let bots = playing_bots(conn, ladder).await?;
    let rows = sqlx::query(
        "SELECT m.state, array_agg(s.bot_id ORDER BY s.seat) AS seats, array_agg(s.rank ORDER BY s.seat) AS ranks \
         FROM matches m JOIN match_seats s ON s.match_id = m.id \
         WHERE m.ladder_id = $1 AND m.state <> 'failed' GROUP BY m.id",
    )
    .bind(ladder)
    .fetch_all(&mut *conn)
    .await?;
    let mut finished = Vec::new();
    let mut all = Vec::new();
    for r in &rows {
        let seats: Vec<i64> = r.get("seats");
        let ranks: Vec<Option<i32>> = r.get("ranks");
        if seats.len() != 2 {
            continue;
        }
        let winner = match (ranks[0], ranks[1]) {
            (Some(a), Some(b)) if a < b => Some(seats[0]),
            (Some(a), Some(b)) if b < a => Some(seats[1]),
            _ => None,
        };
        let rec = formats::PairRecord { first: seats[0], second: seats[1], winner };
        if r.get::<String, _>("state") == "finished" {
            finished.push(rec.clone());
        }
        all.push(rec);
    }
    // Current order: by rating, unrated bots (newcomers) at the bottom.
    let ratings = formats::neighbours_ratings(&finished);
    let mut order: Vec<i64> = ratings.iter().map(|r| r.bot).filter(|b| bots.contains(b)).collect();
    let newcomers: Vec<i64> = bots.iter().copied().filter(|b| !order.contains(b)).collect();
    order.extend(newcomers);
    let mut queued = in_flight(conn, ladder).await?;
    let mut created = 0;
    for [first, second] in formats::neighbours_next(&order, &all, settings.games_per_neighbour) {
        if queued >= settings.concurrency {
            break;
        }
        store::create_match(conn, ladder, &[first, second], seed(rng), false, store::PRIORITY_LADDER).await?;
        queued += 1;
        created += 1;
    }
    Ok(created)
}
