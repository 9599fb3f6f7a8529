//! A flood of challenges from one account against a running ladder, with a
//! real runner (an in-process worker, real sandboxes, the host's Python)
//! and a real PostgreSQL: while both kinds wait, challenges take only their
//! fair share of the match starts ([`FairShare`]), and ladder matches the
//! rest. The same flood against strict priority (a share of 1, as koth had
//! it) takes nearly every start: the measure sees the difference.
//!
//! What is asserted is the mechanism, counted in the jobs table (which job
//! the runner claimed while the other kind waited), not a pace: a pace is
//! wall-clock time on a shared machine, and the earlier form of this test
//! ("the ladder keeps 80% of its pace") failed a clean CI run at 0.797
//! (issue 31). Paces are the benchmarks' business.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use koth_ladder::format::LadderConfig;
use koth_runner::bot::Builder;
use koth_sandbox::SandboxConfig;
use koth_scheduler::db::queue::{FairShare, Queue};
use koth_scheduler::db::store;
use koth_scheduler::worker::{self, WorkerConfig};
use serde_json::json;
use sqlx::PgPool;

mod in_process;
use in_process::{postgres, Api};

const PLAYS: &str = "import sys\nfor line in sys.stdin:\n    print(2, flush=True)\n";

/// Match starts counted in each phase (starts made while both kinds
/// waited). With a share of 0.1 a phase of 150 holds about 15 challenges:
/// the fraction's resolution is under 0.01, far inside the tolerances.
const STARTS: i64 = 150;
/// A phase that has not counted [`STARTS`] by then fails (the runner
/// stalled): it bounds the test's time, it measures nothing. On two busy
/// cores a phase takes 10-40 s.
const PHASE_CAP: Duration = Duration::from_secs(240);
/// The fair share asserted: challenges took at most the share plus this
/// of the starts while ladder matches waited. By construction a challenge
/// is claimed only while challenges took at most the share of the window's
/// starts, so the fraction exceeds the share by at most one start in
/// [`STARTS`] (0.007) and by nothing that depends on timing; the control
/// (strict priority) sits near 1.
const TOLERANCE: f64 = 0.05;

fn sandbox() -> SandboxConfig {
    koth_testkit::bot_sandbox("fair-share", 59000, 256 << 20, 100)
}

/// Match starts since `since` (seconds since the epoch, the database's clock) made while a match
/// of the other kind (ladder or challenge) was waiting: created before the
/// start and not started (nor cancelled) until after it. Returns (starts
/// that went to challenges, all such starts, all match starts).
async fn starts(pool: &PgPool, since: f64) -> (i64, i64, i64) {
    sqlx::query_as(
        "SELECT count(*) FILTER (WHERE m.priority = $2 AND waited), count(*) FILTER (WHERE waited), count(*) \
         FROM (SELECT m.priority, EXISTS (SELECT 1 FROM jobs o \
                   WHERE o.kind = 'match' AND o.priority IN ($2, $3) AND o.priority <> m.priority \
                     AND o.created_at < m.started_at \
                     AND (o.started_at > m.started_at OR (o.started_at IS NULL AND (o.finished_at IS NULL OR o.finished_at > m.started_at)))) AS waited \
               FROM jobs m WHERE m.kind = 'match' AND m.priority IN ($2, $3) AND m.started_at >= to_timestamp($1)) m",
    )
    .bind(since)
    .bind(store::PRIORITY_CHALLENGE)
    .bind(store::PRIORITY_LADDER)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// What one phase counted.
#[derive(Debug)]
struct Phase {
    /// Starts that went to challenges while ladder matches waited.
    challenges: i64,
    /// Starts made while both kinds waited.
    contested: i64,
    /// Every match start of the phase.
    all: i64,
    took: Duration,
}

impl Phase {
    fn fraction(&self) -> f64 {
        self.challenges as f64 / self.contested as f64
    }
}

/// One runner claiming with `share` while the ladder keeps its matches
/// queued and one account keeps its challenges in flight, until
/// [`STARTS`] starts were made with both kinds waiting.
async fn phase(pool: &PgPool, api: &Api, token: &str, ladder: i64, bots: &[i64], share: f64) -> Phase {
    let since: f64 = sqlx::query_scalar("SELECT extract(epoch FROM now())::float8").fetch_one(pool).await.unwrap();
    let began = Instant::now();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    // The service's window (a minute): a phase's starts all count.
    let cfg = WorkerConfig {
        fair_share: FairShare { share, ..FairShare::default() },
        ..WorkerConfig::new(format!("fair-share-{share}"), Builder::host(sandbox()), &sandbox(), 256 << 20)
    };
    let runner = tokio::spawn(worker::run(pool.clone(), cfg, stopped));
    let ladder_tick = {
        let (pool, mut stopped) = (pool.clone(), stop.subscribe());
        tokio::spawn(async move {
            let q = Queue::new(pool.clone());
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(7);
            while !*stopped.borrow() {
                koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
                let _ = tokio::time::timeout(Duration::from_millis(50), stopped.changed()).await;
            }
        })
    };
    let mut asked = Vec::new();
    let mut polls = 0u32;
    let counted = loop {
        // Twenty times a second, keeping the account's cap full: refused
        // (429) while three are queued or playing, accepted as one ends.
        let body = json!({"ladder": ladder, "bots": [bots[0], bots[1]]}).to_string();
        let (st, _, r) = api.call_full("POST", "/api/challenges", Some(token), body).await;
        assert!(matches!(st, StatusCode::CREATED | StatusCode::TOO_MANY_REQUESTS), "{st}: {r}");
        asked.extend(r["match"].as_i64());
        polls += 1;
        if polls.is_multiple_of(4) {
            let counted = starts(pool, since).await;
            if counted.1 >= STARTS {
                break counted;
            }
            assert!(began.elapsed() < PHASE_CAP, "share {share}: only {counted:?} starts (challenges, contested, all) after {PHASE_CAP:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    stop.send(true).unwrap();
    runner.await.unwrap();
    ladder_tick.await.unwrap();
    // Nothing left over for the next phase: the account cancels what of its
    // challenges no runner started (one being played is refused: it ended).
    for m in asked {
        api.call_full("POST", &format!("/api/matches/{m}/cancel"), Some(token), String::new()).await;
    }
    Phase { challenges: counted.0, contested: counted.1, all: counted.2, took: began.elapsed() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_flood_takes_only_its_fair_share_of_the_match_starts() {
    let Some(pg) = postgres("fair-share") else { return };
    if koth_sandbox::Sandbox::create(sandbox()).is_err() {
        assert!(std::env::var("CI").is_err(), "CI=true and the sandbox cannot run");
        return;
    }
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 8).await.unwrap();
    // Eight bots, two matches in flight each and no newcomer's one-at-a-time:
    // the ladder keeps up to eight matches queued, so it rarely runs dry
    // between two ticks (a start made while it had, by then, none waiting is
    // not counted: no share applies to it).
    let settings =
        LadderConfig::parse("rated", &json!({"seats": 2, "concurrency": 8, "newcomer_games": 0, "max_turns": 40, "skip_validation": true}))
            .unwrap();
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &settings).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (_, token) = koth_web::http::create_account(&pool, "flooder", false).await.unwrap();
    let mut bots = Vec::new();
    for name in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        let (st, made) = api.call("POST", &format!("/api/ladders/{ladder}/bots/{name}?file=bot.py"), Some(&token), PLAYS).await;
        assert!(matches!(st, StatusCode::CREATED | StatusCode::ACCEPTED), "{st}: {made}");
        bots.push(made["bot"].as_i64().unwrap());
    }
    // Compiled by a runner first, so every phase below is matches only.
    {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let cfg = WorkerConfig::new("compiler".into(), Builder::host(sandbox()), &sandbox(), 256 << 20);
        let runner = tokio::spawn(worker::run(pool.clone(), cfg, stopped));
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let waiting: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE kind = 'compile' AND state <> 'completed'")
                .fetch_one(&pool)
                .await
                .unwrap();
            if waiting == 0 {
                break;
            }
            assert!(Instant::now() < deadline, "the bots still compile after 120 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        stop.send(true).unwrap();
        runner.await.unwrap();
    }
    let share = FairShare::default().share;
    let fair = phase(&pool, &api, &token, ladder, &bots, share).await;
    let strict = phase(&pool, &api, &token, ladder, &bots, 1.0).await;
    println!(
        "match starts made while both kinds waited, one runner: with a share of {share} challenges took {}/{} ({:.3}; {} starts in all, {:.0?}); \
         with strict priority {}/{} ({:.3}; {} in all, {:.0?})",
        fair.challenges,
        fair.contested,
        fair.fraction(),
        fair.all,
        fair.took,
        strict.challenges,
        strict.contested,
        strict.fraction(),
        strict.all,
        strict.took,
    );
    assert!(
        fair.fraction() <= share + TOLERANCE,
        "challenges took {:.3} of the starts while ladder matches waited, over their share {share} (+{TOLERANCE}): {fair:?}",
        fair.fraction()
    );
    // Nor are the challenges starved: below their share they go first.
    assert!(
        fair.fraction() >= share - TOLERANCE,
        "challenges took only {:.3} of the starts while ladder matches waited, under their share {share} (-{TOLERANCE}): {fair:?}",
        fair.fraction()
    );
    // What fair share prevents: strict priority gives the flood the runner.
    assert!(
        strict.fraction() >= 0.9,
        "with strict priority challenges took only {:.3} of the starts while ladder matches waited: the flood did not flood: {strict:?}",
        strict.fraction()
    );
}
