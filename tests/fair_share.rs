//! A flood of challenges from one account against a running ladder, with a
//! real runner (an in-process worker, real sandboxes, the host's Python)
//! and a real PostgreSQL: ladder matches keep at least 80% of the pace
//! they have alone, because challenges take only their fair share of the
//! runner while ladder matches wait ([`FairShare`]). The same flood
//! against strict priority (a share of 1, as koth had it) starves the
//! ladder: the measure sees the difference.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use koth_runner::bot::Builder;
use koth_sandbox::{Limits, SandboxConfig};
use koth_scheduler::format::LadderConfig;
use koth_scheduler::queue::{FairShare, Queue};
use koth_scheduler::store;
use koth_scheduler::worker::{self, WorkerConfig};
use serde_json::json;
use sqlx::PgPool;

mod in_process;
use in_process::{postgres, Api};

const PLAYS: &str = "import sys\nfor line in sys.stdin:\n    print(2, flush=True)\n";

/// How long each pace is measured.
const WINDOW: Duration = Duration::from_secs(30);
/// The fair share's window: starts older than this no longer count. The
/// service's is a minute; a shorter one here lets each pace reach its
/// steady state in seconds (the pace before it forgotten).
const SHARE_WINDOW: Duration = Duration::from_secs(8);

fn sandbox() -> SandboxConfig {
    SandboxConfig {
        limits: Limits { memory: 256 << 20, cpu_time: None, wall_time: None, ..Limits::default() },
        runtime_dir: "/run/koth-test/fair-share".into(),
        uid_base: 59000,
        slots: 100,
        ..SandboxConfig::default()
    }
}

/// Matches of `priority` (ladder matches, or challenges) finished so far.
async fn finished(pool: &PgPool, priority: i32) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM jobs WHERE kind = 'match' AND priority = $1 AND state = 'completed'")
        .bind(priority)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Ladder matches finished per minute over [`WINDOW`], with one runner of
/// `share` and, when `flood`, one account keeping its challenges in
/// flight all the while. Also returns the challenges finished meanwhile.
async fn pace(pool: &PgPool, api: &Api, token: &str, ladder: i64, bots: &[i64], share: f64, flood: bool) -> (f64, i64) {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let cfg = WorkerConfig {
        fair_share: FairShare { share, window: SHARE_WINDOW, ..FairShare::default() },
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
                let _ = tokio::time::timeout(Duration::from_millis(200), stopped.changed()).await;
            }
        })
    };
    // The flood starts at once; what is measured starts once the share's
    // window holds only this pace's starts.
    let began = Instant::now();
    let mut asked = Vec::new();
    let mut counts = None;
    while began.elapsed() < SHARE_WINDOW + Duration::from_secs(2) + WINDOW {
        if counts.is_none() && began.elapsed() >= SHARE_WINDOW + Duration::from_secs(2) {
            counts = Some((finished(pool, store::PRIORITY_LADDER).await, finished(pool, store::PRIORITY_CHALLENGE).await));
        }
        if flood {
            // Twenty times a second, keeping the account's cap full: refused
            // (429) while three are queued or playing, accepted as one ends.
            let body = json!({"ladder": ladder, "bots": [bots[0], bots[1]]}).to_string();
            let (st, _, r) = api.call_full("POST", "/api/challenges", Some(token), body).await;
            assert!(matches!(st, StatusCode::CREATED | StatusCode::TOO_MANY_REQUESTS), "{st}: {r}");
            asked.extend(r["match"].as_i64());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (before, challenges_before) = counts.unwrap();
    let done = finished(pool, store::PRIORITY_LADDER).await - before;
    let challenges = finished(pool, store::PRIORITY_CHALLENGE).await - challenges_before;
    stop.send(true).unwrap();
    runner.await.unwrap();
    ladder_tick.await.unwrap();
    // Nothing left over for the next pace: the account cancels what of its
    // challenges no runner started (one being played is refused: it ended).
    for m in asked {
        api.call_full("POST", &format!("/api/matches/{m}/cancel"), Some(token), String::new()).await;
    }
    (done as f64 * 60.0 / WINDOW.as_secs_f64(), challenges)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_flood_leaves_the_ladder_at_least_80_percent_of_its_pace() {
    let Some(pg) = postgres("fair-share") else { return };
    if koth_sandbox::Sandbox::create(sandbox()).is_err() {
        assert!(std::env::var("CI").is_err(), "CI=true and the sandbox cannot run");
        return;
    }
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 8).await.unwrap();
    // Enough queued that a runner rarely finds the ladder's queue empty between
    // two ticks: what is measured is the share, not the tick.
    let settings = LadderConfig::parse("rated", &json!({"seats": 2, "concurrency": 8, "max_turns": 40, "skip_validation": true})).unwrap();
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &settings).await.unwrap();
    let api = Api(koth_scheduler::api::router(pool.clone()));
    let (_, token) = koth_scheduler::api::create_account(&pool, "flooder", false).await.unwrap();
    let mut bots = Vec::new();
    for name in ["a", "b", "c", "d"] {
        let (st, made) = api.call("POST", &format!("/api/ladders/{ladder}/bots/{name}?file=bot.py"), Some(&token), PLAYS).await;
        assert!(matches!(st, StatusCode::CREATED | StatusCode::ACCEPTED), "{st}: {made}");
        bots.push(made["bot"].as_i64().unwrap());
    }
    // Compiled by a runner first, so every pace below is matches only.
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
    let (alone, _) = pace(&pool, &api, &token, ladder, &bots, 0.1, false).await;
    let (flooded, challenges) = pace(&pool, &api, &token, ladder, &bots, 0.1, true).await;
    let (strict, strict_challenges) = pace(&pool, &api, &token, ladder, &bots, 1.0, true).await;
    println!(
        "ladder matches per minute, one runner: alone {alone:.1}; under a flood of challenges {flooded:.1} ({:.2}x, {challenges} challenges \
         played); the same flood with strict priority {strict:.1} ({:.2}x, {strict_challenges} challenges)",
        flooded / alone,
        strict / alone
    );
    assert!(alone >= 20.0, "the ladder alone played only {alone:.1} matches a minute: too few to measure");
    assert!(flooded >= 0.8 * alone, "under the flood the ladder kept {:.2} of its pace ({flooded:.1} vs {alone:.1})", flooded / alone);
    assert!(challenges > 0, "the challenges were not starved either");
    // What fair share prevents: strict priority gives the flood the runner.
    assert!(strict < 0.5 * alone, "strict priority kept the ladder at {:.2} of its pace: the flood did not flood", strict / alone);
}
