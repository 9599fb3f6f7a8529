//! The rated ladder end to end through PostgreSQL: the scheduler's ticks
//! choose matches, a stand-in worker claims their jobs and records results
//! decided by the bots' known strengths (a seeded model, so the test is
//! about matchmaking and rating, not about bots), until the leaderboard's
//! order is the strength order. Also: superseded versions are not rated,
//! and a new bot's first games are played one at a time.

mod common;
use common::stand_in::{any_replay, play_queued};

use std::time::Duration;

use koth_games::MatchResult;
use koth_ladder::format::{LadderConfig, Standings};
use koth_ladder::outcome::SeatOutcome;
use koth_runner::BotStatus;
use koth_scheduler::db::queue::Queue;
use koth_scheduler::db::results::{record_match, standings, MatchOutcome};
use koth_scheduler::db::store;
use koth_scheduler::job::Job;
use koth_scheduler::ladder::tick;
use rand::SeedableRng;
use serde_json::json;
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
    store::accept_compiled(&mut conn, version, b"", "sha256:test").await.unwrap();
    version
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_bots_of_known_strength_end_in_strength_order() {
    let Some(pg) = common::postgres("ladder20") else { return };
    let pool = common::pool(&pg, 4).await;
    let settings = config("rated", json!({"seats": 2, "concurrency": 10}));
    let ladder = store::create_ladder(&pool, "snake-20", &koth_games::GameKind::Snake.into(), &settings).await.unwrap();
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
        let board = table(&pool, ladder).await;
        let order: Vec<i64> = board.rows.iter().map(|r| r.bot).collect();
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
    let min_games: i32 =
        sqlx::query_scalar("SELECT min(games) FROM ratings WHERE ladder_id = $1").bind(ladder).fetch_one(&pool).await.unwrap();
    assert!(min_games >= 5, "every bot played several games ({min_games})");
}

#[tokio::test]
async fn newcomers_play_one_at_a_time_and_superseded_versions_are_not_rated() {
    let Some(pg) = common::postgres("ladder-rules") else { return };
    let pool = common::pool(&pg, 4).await;
    let settings = config("rated", json!({"seats": 2, "concurrency": 6, "newcomer_games": 3}));
    let ladder = store::create_ladder(&pool, "target-rules", &koth_games::GameKind::Target.into(), &settings).await.unwrap();
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
    let queued: Vec<i64> =
        sqlx::query_scalar("SELECT m.id FROM matches m JOIN match_seats s ON s.match_id = m.id WHERE m.state = 'queued' AND s.bot_id = $1")
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

async fn queued_tuples(pool: &PgPool, ladder: i64) -> Vec<Vec<i64>> {
    sqlx::query_scalar(
        "SELECT array_agg(s.bot_id ORDER BY s.seat) FROM matches m JOIN match_seats s ON s.match_id = m.id \
         WHERE m.ladder_id = $1 GROUP BY m.id ORDER BY m.id",
    )
    .bind(ladder)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn round_robin_and_neighbours_ladders_schedule_what_is_owed_once() {
    let Some(pg) = common::postgres("formats") else { return };
    let pool = common::pool(&pg, 4).await;
    let owner = store::create_user(&pool, "host", true).await.unwrap();
    let q = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);

    let rr = store::create_ladder(&pool, "snake-rr", &koth_games::GameKind::Snake.into(), &config("round_robin", json!({}))).await.unwrap();
    let mut bots = Vec::new();
    for i in 0..3 {
        bots.push(ready_bot(&pool, rr, owner, &format!("r{i}")).await);
    }
    tick(&pool, &q, &mut rng).await.unwrap();
    let mut got = queued_tuples(&pool, rr).await;
    got.sort();
    let mut want: Vec<Vec<i64>> = Vec::new();
    for a in &bots {
        for b in &bots {
            if a != b {
                want.push(vec![*a, *b]);
            }
        }
    }
    want.sort();
    assert_eq!(got, want, "every ordered pair once");
    assert!(sqlx::query_scalar::<_, bool>("SELECT bool_and(NOT rated) FROM matches WHERE ladder_id = $1")
        .bind(rr)
        .fetch_one(&pool)
        .await
        .unwrap());
    tick(&pool, &q, &mut rng).await.unwrap();
    assert_eq!(queued_tuples(&pool, rr).await.len(), 6, "nothing scheduled twice");
    // A late bot gets its games.
    ready_bot(&pool, rr, owner, "late").await;
    tick(&pool, &q, &mut rng).await.unwrap();
    assert_eq!(queued_tuples(&pool, rr).await.len(), 12);

    let settings = config("neighbours", json!({"concurrency": 3, "games_per_neighbour": 4}));
    let nb = store::create_ladder(&pool, "linkage-nb", &koth_games::GameKind::Linkage.into(), &settings).await.unwrap();
    for i in 0..3 {
        ready_bot(&pool, nb, owner, &format!("n{i}")).await;
    }
    let mut total = 0;
    for _ in 0..10 {
        tick(&pool, &q, &mut rng).await.unwrap();
        let queued: i64 = sqlx::query_scalar("SELECT count(*) FROM matches WHERE ladder_id = $1 AND state = 'queued'")
            .bind(nb)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert!(queued <= 3, "concurrency respected");
        total += play_queued(&pool, &|b| b as f64, &mut rng).await;
    }
    // 2 adjacent pairs × 4 games; the order may change as results come in,
    // so a pair that becomes adjacent later is owed games too.
    assert!(total >= 8, "{total}");
    let tuples = queued_tuples(&pool, nb).await;
    assert!(tuples.iter().all(|t| t.len() == 2));
}

#[tokio::test]
async fn challenges_are_unrated_and_failing_bots_are_disabled() {
    let Some(pg) = common::postgres("challenge") else { return };
    let pool = common::pool(&pg, 4).await;
    let owner = store::create_user(&pool, "author", false).await.unwrap();
    let settings = config("rated", json!({"seats": 2, "concurrency": 2, "newcomer_games": 0}));
    let ladder = store::create_ladder(&pool, "target-ch", &koth_games::GameKind::Target.into(), &settings).await.unwrap();
    let a = ready_bot(&pool, ladder, owner, "a").await;
    let b = ready_bot(&pool, ladder, owner, "b").await;
    let m = store::create_challenge(&pool, ladder, &[a, b], 9, owner, None).await.unwrap();
    let q = Queue::new(pool.clone());
    let job = q.claim("w", &["match"], Duration::from_secs(60)).await.unwrap().unwrap();
    assert_eq!(job.job(), Ok(Job::Match { match_id: m }), "challenges go first");
    q.release(&job).await.unwrap();
    let err = store::create_challenge(&pool, ladder, &[a, 999_999], 9, owner, None).await.unwrap_err();
    assert!(matches!(&err, store::ChallengeError::Invalid(why) if why.contains("every bot")), "{err}");

    // Bot a crashes in every match: after 10 it is disabled, with the reason.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    for _ in 0..8 {
        tick(&pool, &q, &mut rng).await.unwrap();
        while let Some(job) = q.claim("w", &["match"], Duration::from_secs(60)).await.unwrap() {
            let Job::Match { match_id } = job.job().unwrap() else { panic!("{job:?} is not a match") };
            let bots: Vec<i64> = sqlx::query_scalar("SELECT bot_id FROM match_seats WHERE match_id = $1 ORDER BY seat")
                .bind(match_id)
                .fetch_all(&pool)
                .await
                .unwrap();
            let seats = bots
                .iter()
                .enumerate()
                .map(|(i, bot)| SeatOutcome {
                    seat: i as i32,
                    score: 0.0,
                    rank: if *bot == a { 2 } else { 1 },
                    result: if *bot == a { MatchResult::Loss } else { MatchResult::Win },
                    status: if *bot == a { BotStatus::Crashed { code: Some(1), signal: None, turn: 1 } } else { BotStatus::Ok },
                    stderr: String::new(),
                    stderr_turns: Vec::new(),
                    moves: 1,
                    timeouts: 0,
                    invalid_moves: 0,
                })
                .collect();
            let mut tx = pool.begin().await.unwrap();
            Queue::complete(&mut tx, &job).await.unwrap();
            record_match(&mut tx, match_id, &MatchOutcome { engine: "t".into(), turns: 1, replay: any_replay(), seats }).await.unwrap();
            tx.commit().await.unwrap();
        }
    }
    let reason: Option<String> =
        sqlx::query_scalar("SELECT disabled_reason FROM bots WHERE id = $1").bind(a).fetch_one(&pool).await.unwrap();
    let reason = reason.expect("a crashing bot is disabled");
    assert!(reason.contains("crashed") && reason.contains("submit a fixed version"), "{reason}");
    let rated_challenge: bool = sqlx::query_scalar("SELECT rated FROM matches WHERE id = $1").bind(m).fetch_one(&pool).await.unwrap();
    assert!(!rated_challenge);
    // No new match for the disabled bot (only one enabled bot is left).
    let t = tick(&pool, &q, &mut rng).await.unwrap();
    assert_eq!(t.created, 0);
}

/// A running match's live turns belong to the attempt that holds its job:
/// written only under that job's lease (a runner that lost it writes
/// nothing), the earlier attempt's rows dropped by the new attempt's first
/// write and never shown with it, nothing shown of a match no runner
/// plays, and the tick's sweep drops the rows of a match that ended.
#[tokio::test]
async fn live_turns_belong_to_the_attempt_that_holds_the_job() {
    use koth_scheduler::db::reads;
    let Some(pg) = common::postgres("live") else { return };
    let pool = common::pool(&pg, 4).await;
    let owner = store::create_user(&pool, "author", false).await.unwrap();
    let settings = config("rated", json!({"seats": 2, "concurrency": 1}));
    let ladder = store::create_ladder(&pool, "target-live", &koth_games::GameKind::Target.into(), &settings).await.unwrap();
    let (a, b) = (ready_bot(&pool, ladder, owner, "a").await, ready_bot(&pool, ladder, owner, "b").await);
    let m = store::create_challenge(&pool, ladder, &[a, b], 3, owner, None).await.unwrap();
    let rows = |pool: PgPool| async move {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM match_live WHERE match_id = $1").bind(m).fetch_one(&pool).await.unwrap()
    };
    assert_eq!(reads::live_turns(&pool, m).await.unwrap(), None, "queued, not played: nothing live");

    let q = Queue::new(pool.clone());
    let first = q.claim("w1", &["match"], Duration::from_secs(60)).await.unwrap().unwrap();
    assert_eq!(first.job(), Ok(Job::Match { match_id: m }));
    assert_eq!(reads::live_turns(&pool, m).await.unwrap(), Some(vec![]), "played, nothing written yet");
    assert!(store::report_live(&pool, m, first.lease, 2, 1, b"[1,2]").await.unwrap());
    assert!(store::report_live(&pool, m, first.lease, 3, 3, b"[3]").await.unwrap());
    assert_eq!(reads::live_turns(&pool, m).await.unwrap(), Some(vec![b"[1,2]".to_vec(), b"[3]".to_vec()]));
    let progress: Option<i32> = sqlx::query_scalar("SELECT progress FROM matches WHERE id = $1").bind(m).fetch_one(&pool).await.unwrap();
    assert_eq!(progress, Some(3));

    // Its runner gives the job back (or its lease runs out): nothing live.
    q.release(&first).await.unwrap();
    assert_eq!(reads::live_turns(&pool, m).await.unwrap(), None);
    let second = q.claim("w2", &["match"], Duration::from_secs(60)).await.unwrap().unwrap();
    assert_ne!(second.lease, first.lease);
    assert_eq!(reads::live_turns(&pool, m).await.unwrap(), Some(vec![]), "the new attempt shows none of the old one's turns");
    // The old runner, still writing, writes nothing.
    assert!(!store::report_live(&pool, m, first.lease, 4, 4, b"[4]").await.unwrap());
    assert!(store::report_live(&pool, m, second.lease, 1, 1, b"[9]").await.unwrap());
    assert_eq!(reads::live_turns(&pool, m).await.unwrap(), Some(vec![b"[9]".to_vec()]));
    assert_eq!(rows(pool.clone()).await, 1, "the old attempt's rows are gone");
    // A write that failed is written again with the next turns: one row.
    assert!(store::report_live(&pool, m, second.lease, 3, 1, b"[9,10,11]").await.unwrap());
    assert_eq!(reads::live_turns(&pool, m).await.unwrap(), Some(vec![b"[9,10,11]".to_vec()]));

    // Ended: the sweep drops its rows; a match still played keeps its own.
    assert_eq!(store::sweep_live_turns(&pool).await.unwrap(), 0);
    let mut conn = pool.acquire().await.unwrap();
    store::fail_match(&mut conn, m, "a test ends it").await.unwrap();
    drop(conn);
    assert_eq!(reads::live_turns(&pool, m).await.unwrap(), None);
    assert_eq!(store::sweep_live_turns(&pool).await.unwrap(), 1);
    assert_eq!(rows(pool.clone()).await, 0);
}

#[tokio::test]
async fn standings_follow_each_games_seed_format() {
    let Some(pg) = common::postgres("standings") else { return };
    let pool = common::pool(&pg, 4).await;
    let owner = store::create_user(&pool, "host", true).await.unwrap();
    let q = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    // Snake's seed: round robin, win 2, tie 1, loss 0.
    let snake = LadderConfig::default_for(koth_games::GameKind::Snake);
    assert_eq!(snake.format.name(), "round_robin");
    let rr = store::create_ladder(&pool, "snake", &koth_games::GameKind::Snake.into(), &snake).await.unwrap();
    let mut bots = Vec::new();
    for i in 0..3 {
        bots.push(ready_bot(&pool, rr, owner, &format!("s{i}")).await);
    }
    tick(&pool, &q, &mut rng).await.unwrap();
    // The strongest (highest id) wins with near certainty.
    let played = play_queued(&pool, &|b| b as f64 * 100.0, &mut rng).await;
    assert_eq!(played, 6);
    let st = table(&pool, rr).await;
    let got: Vec<(i64, f64, i64)> =
        st.rows.iter().map(|r| (r.bot, r.values["points"].as_f64().unwrap(), r.values["games"].as_i64().unwrap())).collect();
    assert_eq!(got, vec![(bots[2], 8.0, 4), (bots[1], 4.0, 4), (bots[0], 0.0, 4)]);
    // Linkage's seed: the neighbours ladder.
    let linkage = LadderConfig::default_for(koth_games::GameKind::Linkage);
    assert_eq!(linkage.to_stored().0, "neighbours");
    assert_eq!(linkage.to_stored().1["games_per_neighbour"], 10);
    let nb = LadderConfig::with_request(&linkage, None, Some(&json!({"games_per_neighbour": 2}))).unwrap();
    let nb = store::create_ladder(&pool, "linkage", &koth_games::GameKind::Linkage.into(), &nb).await.unwrap();
    let a = ready_bot(&pool, nb, owner, "weak").await;
    let b = ready_bot(&pool, nb, owner, "strong").await;
    tick(&pool, &q, &mut rng).await.unwrap();
    play_queued(&pool, &|x| if x == b { 100.0 } else { 0.0 }, &mut rng).await;
    let st = table(&pool, nb).await;
    assert_eq!(st.rows.len(), 2);
    let v = &st.rows[0].values;
    assert_eq!(
        (st.rows[0].bot, &v["rating"], &v["as_first"], &v["as_second"], &v["games"]),
        (b, &json!(100.0), &json!(100.0), &json!(100.0), &json!(2))
    );
    assert_eq!((st.rows[1].bot, &st.rows[1].values["rating"]), (a, &json!(0.0)));
    assert_eq!(LadderConfig::default_for(koth_games::GameKind::Slime).to_stored().1["scoring"], "average_score");
}

/// Swiss rounds through the scheduler: a round is created whole, the next
/// only when it has finished, the round numbers are stored, and after
/// ⌈log₂ 4⌉ = 2 rounds nothing more is scheduled; the strongest bot leads.
#[tokio::test]
async fn swiss_rounds_follow_one_another() {
    let Some(pg) = common::postgres("swiss") else { return };
    let pool = common::pool(&pg, 4).await;
    let owner = store::create_user(&pool, "host", true).await.unwrap();
    let q = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let ladder = store::create_ladder(&pool, "target-swiss", &koth_games::GameKind::Target.into(), &config("swiss", json!({"seats": 2})))
        .await
        .unwrap();
    let mut bots = Vec::new();
    for i in 0..4 {
        bots.push(ready_bot(&pool, ladder, owner, &format!("w{i}")).await);
    }
    let rounds = |pool: PgPool| async move {
        sqlx::query_scalar::<_, Option<i32>>("SELECT round FROM matches WHERE ladder_id = $1 ORDER BY id")
            .bind(ladder)
            .fetch_all(&pool)
            .await
            .unwrap()
    };
    assert_eq!(tick(&pool, &q, &mut rng).await.unwrap().created, 2);
    assert_eq!(tick(&pool, &q, &mut rng).await.unwrap().created, 0, "round 1 is still queued");
    assert_eq!(play_queued(&pool, &|b| b as f64 * 100.0, &mut rng).await, 2);
    assert_eq!(tick(&pool, &q, &mut rng).await.unwrap().created, 2);
    assert_eq!(play_queued(&pool, &|b| b as f64 * 100.0, &mut rng).await, 2);
    assert_eq!(tick(&pool, &q, &mut rng).await.unwrap().created, 0, "two rounds for four bots");
    assert_eq!(rounds(pool.clone()).await, [Some(1), Some(1), Some(2), Some(2)]);
    let st = table(&pool, ladder).await;
    assert_eq!(st.format, koth_ladder::format::FormatName::Swiss);
    assert_eq!((st.rows[0].bot, &st.rows[0].values["points"]), (bots[3], &json!(2.0)));
    assert_eq!(st.columns.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["points", "buchholz", "games"]);
}

/// The formats the database accepts are the formats koth knows.
#[tokio::test]
async fn the_sql_checks_list_every_format_and_job_kind() {
    let Some(pg) = common::postgres("format-check") else { return };
    let pool = common::pool(&pg, 2).await;
    let def: String = sqlx::query_scalar("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'ladders_format_check'")
        .fetch_one(&pool)
        .await
        .unwrap();
    let mut in_sql: Vec<&str> = def.split('\'').skip(1).step_by(2).collect();
    let mut known: Vec<&str> = koth_ladder::format::FormatName::ALL.iter().map(|f| f.as_str()).collect();
    in_sql.sort_unstable();
    known.sort_unstable();
    assert_eq!(in_sql, known, "{def}");
    // The state columns hold exactly the typed states.
    for (constraint, states) in [
        ("jobs_state_check", koth_scheduler::job::JobState::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>()),
        ("matches_state_check", koth_scheduler::job::MatchState::ALL.iter().map(|s| s.as_str()).collect()),
        ("bot_versions_status_check", koth_scheduler::job::VersionStatus::ALL.iter().map(|s| s.as_str()).collect()),
        ("games_status_check", koth_scheduler::job::GameStatus::ALL.iter().map(|s| s.as_str()).collect()),
        ("audit_action_check", koth_scheduler::audit::AuditAction::ALL.iter().map(|s| s.as_str()).collect()),
        ("ab_tests_state_check", koth_scheduler::job::AbState::ALL.iter().map(|s| s.as_str()).collect()),
    ] {
        let def: String = sqlx::query_scalar("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = $1")
            .bind(constraint)
            .fetch_one(&pool)
            .await
            .unwrap_or_else(|e| panic!("{constraint}: {e}"));
        let mut in_sql: Vec<&str> = def.split('\'').skip(1).step_by(2).collect();
        let mut typed = states.clone();
        in_sql.sort_unstable();
        typed.sort_unstable();
        assert_eq!(in_sql, typed, "{constraint}: {def}");
    }
    // Every job kind a runner claims may be stored.
    let def: String = sqlx::query_scalar("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'jobs_kind_check'")
        .fetch_one(&pool)
        .await
        .unwrap();
    let in_sql: Vec<&str> = def.split('\'').skip(1).step_by(2).collect();
    assert!(Job::KINDS.iter().all(|k| in_sql.contains(k)), "{def}");
}

fn config(format: &str, settings: serde_json::Value) -> LadderConfig {
    LadderConfig::parse(format, &settings).unwrap()
}

async fn table(pool: &PgPool, ladder: i64) -> Standings {
    standings(pool, ladder).await.unwrap().unwrap()
}
