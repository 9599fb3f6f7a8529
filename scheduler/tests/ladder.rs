//! The rated ladder end to end through PostgreSQL: the scheduler's ticks
//! choose matches, a stand-in worker claims their jobs and records results
//! decided by the bots' known strengths (a seeded model, so the test is
//! about matchmaking and rating, not about bots), until the leaderboard's
//! order is the strength order. Also: superseded versions are not rated,
//! and a new bot's first games are played one at a time.

mod common;

use std::time::Duration;

use koth_scheduler::ladder::tick;
use koth_scheduler::queue::Queue;
use koth_scheduler::results::{leaderboard, record_match, MatchOutcome, SeatOutcome};
use koth_scheduler::store::{self, LadderSettings};
use rand::{Rng, SeedableRng};
use sqlx::{PgPool, Row};

/// A bot with a ready version (sources and artifact are not needed here).
async fn ready_bot(pool: &PgPool, ladder: i64, owner: i64, name: &str) -> i64 {
    let bot = store::create_bot(pool, ladder, owner, name).await.unwrap();
    new_ready_version(pool, bot).await;
    bot
}

async fn new_ready_version(pool: &PgPool, bot: i64) -> i64 {
    let (version, job) = store::submit_version(pool, bot, "c", "bot.c", b"", "hash").await.unwrap();
    sqlx::query("UPDATE jobs SET state = 'completed' WHERE id = $1").bind(job).execute(pool).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    store::record_compile(&mut conn, version, Ok((b"", "sha256:test")), "").await.unwrap();
    version
}

/// Claim every queued match job and record an outcome from `strength`:
/// the stronger bot wins with probability 1 / (1 + 10^(-diff / 4)).
async fn play_queued<R: Rng>(pool: &PgPool, strength: &dyn Fn(i64) -> f64, rng: &mut R) -> usize {
    let q = Queue::new(pool.clone());
    let mut played = 0;
    while let Some(job) = q.claim("stand-in", &["match"], Duration::from_secs(60)).await.unwrap() {
        let match_id = job.payload["match"].as_i64().unwrap();
        let bots: Vec<i64> = sqlx::query_scalar("SELECT bot_id FROM match_seats WHERE match_id = $1 ORDER BY seat")
            .bind(match_id)
            .fetch_all(pool)
            .await
            .unwrap();
        let (a, b) = (strength(bots[0]), strength(bots[1]));
        let p_first = 1.0 / (1.0 + 10f64.powf((b - a) / 4.0));
        let first_wins = rng.gen::<f64>() < p_first;
        let ranks = if first_wins { [1, 2] } else { [2, 1] };
        let outcome = MatchOutcome {
            engine: "stand-in".into(),
            turns: 1,
            replay: serde_json::json!({}),
            seats: (0..2)
                .map(|i| SeatOutcome {
                    seat: i as i32,
                    score: if ranks[i] == 1 { 1.0 } else { 0.0 },
                    rank: ranks[i],
                    result: if ranks[i] == 1 { "win".into() } else { "loss".into() },
                    status: serde_json::json!({"kind": "ok"}),
                    stderr: String::new(),
                })
                .collect(),
        };
        let mut tx = pool.begin().await.unwrap();
        Queue::complete(&mut tx, &job).await.unwrap();
        record_match(&mut tx, match_id, &outcome).await.unwrap();
        tx.commit().await.unwrap();
        played += 1;
    }
    played
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_bots_of_known_strength_end_in_strength_order() {
    let Some(pg) = common::postgres("ladder20") else { return };
    let pool = common::pool(&pg, 4).await;
    let settings = LadderSettings { seats: Some(2), concurrency: 10, ..LadderSettings::default() };
    let ladder = store::create_ladder(&pool, "snake-20", koth_games::GameKind::Snake, "rated", &settings).await.unwrap();
    let owner = store::create_user(&pool, "host", true).await.unwrap();
    let mut bots = Vec::new();
    for i in 0..20 {
        bots.push(ready_bot(&pool, ladder, owner, &format!("s{i:02}")).await);
    }
    // Strength i for the i-th bot: bot ids are created in order.
    let first = bots[0];
    let strength = move |bot: i64| (bot - first) as f64;
    let q = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20);
    let mut matches = 0;
    let mut converged_at = None;
    while matches < 20_000 {
        tick(&pool, &q, &mut rng).await.unwrap();
        matches += play_queued(&pool, &strength, &mut rng).await;
        let board = leaderboard(&pool, ladder).await.unwrap();
        let order: Vec<i64> = board.iter().map(|(b, ..)| *b).collect();
        let mut by_strength = bots.clone();
        by_strength.reverse();
        if order == by_strength {
            converged_at = Some(matches);
            break;
        }
    }
    let n = converged_at.unwrap_or_else(|| panic!("not in strength order after {matches} matches"));
    println!("20 bots: the leaderboard matched the strength order after {n} matches");
    eprintln!("20 bots: the leaderboard matched the strength order after {n} matches");
    // Every bot played; newcomers were served.
    let min_games: i32 = sqlx::query_scalar("SELECT min(games) FROM ratings WHERE ladder_id = $1").bind(ladder).fetch_one(&pool).await.unwrap();
    assert!(min_games >= 5, "every bot played several games ({min_games})");
}

#[tokio::test]
async fn newcomers_play_one_at_a_time_and_superseded_versions_are_not_rated() {
    let Some(pg) = common::postgres("ladder-rules") else { return };
    let pool = common::pool(&pg, 4).await;
    let settings = LadderSettings { seats: Some(2), concurrency: 6, newcomer_games: 3, ..LadderSettings::default() };
    let ladder = store::create_ladder(&pool, "target-rules", koth_games::GameKind::Target, "rated", &settings).await.unwrap();
    let owner = store::create_user(&pool, "author", false).await.unwrap();
    let mut bots = Vec::new();
    for i in 0..4 {
        bots.push(ready_bot(&pool, ladder, owner, &format!("b{i}")).await);
    }
    let q = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    tick(&pool, &q, &mut rng).await.unwrap();
    // All four are newcomers: each has at most one match in flight.
    let most: i64 = sqlx::query_scalar(
        "SELECT max(n) FROM (SELECT count(*) AS n FROM match_seats s JOIN matches m ON m.id = s.match_id \
         WHERE m.state = 'queued' GROUP BY s.bot_id) t",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(most, 1, "a newcomer's first games are played one after another");

    // A new version arrives while its bot's match is queued: that match's
    // result is recorded but not rated.
    let queued: Vec<i64> = sqlx::query_scalar(
        "SELECT m.id FROM matches m JOIN match_seats s ON s.match_id = m.id WHERE m.state = 'queued' AND s.bot_id = $1",
    )
    .bind(bots[0])
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(queued.len(), 1);
    new_ready_version(&pool, bots[0]).await;
    let mut rng2 = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    play_queued(&pool, &|b| b as f64, &mut rng2).await;
    let r = sqlx::query("SELECT state, rated FROM matches WHERE id = $1").bind(queued[0]).fetch_one(&pool).await.unwrap();
    assert_eq!((r.get::<String, _>("state"), r.get::<bool, _>("rated")), ("finished".into(), false));
    let history: i64 =
        sqlx::query_scalar("SELECT count(*) FROM rating_history WHERE match_id = $1").bind(queued[0]).fetch_one(&pool).await.unwrap();
    assert_eq!(history, 0);
    let rated: i64 = sqlx::query_scalar("SELECT count(*) FROM matches WHERE rated AND state = 'finished'").fetch_one(&pool).await.unwrap();
    assert!(rated >= 1, "the other matches were rated");

    // A paused ladder gets no new matches.
    sqlx::query("UPDATE ladders SET paused = true WHERE id = $1").bind(ladder).execute(&pool).await.unwrap();
    let t = tick(&pool, &q, &mut rng).await.unwrap();
    assert_eq!(t.created, 0);
}
