//! `koth bench api`: a load test on loopback. The whole service runs in
//! this process (a private PostgreSQL, the scheduler, runners playing the
//! example bots' ladders, the HTTP API and pages); many clients read
//! leaderboards, pages and replays (the viewer's frames) and some submit
//! bots while matches run. Prints p50 / p99 latency per kind of
//! request, against `/health` (no work but the HTTP round trip and one
//! `SELECT 1`) measured in the same run as the floor.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use koth_runner::bot::ImagePolicy;
use koth_scheduler::pg::PrivatePostgres;
use koth_scheduler::worker::{self, WorkerConfig};

#[derive(Args)]
pub struct ApiBenchArgs {
    /// Clients reading leaderboards (and /health), each in a loop.
    #[arg(long, default_value_t = 16)]
    readers: usize,
    /// Clients submitting bots, one every 200 ms each.
    #[arg(long, default_value_t = 2)]
    submitters: usize,
    /// Seconds of load.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// Runner loops playing matches meanwhile.
    #[arg(long, default_value_t = 2)]
    runners: u32,
    #[command(flatten)]
    store: super::BotStoreArgs,
}

/// (request kind, latency in ms, succeeded) of every request.
type Samples = Arc<Mutex<Vec<(&'static str, f64, bool)>>>;

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

pub fn run(a: ApiBenchArgs) -> anyhow::Result<i32> {
    let dir = std::env::temp_dir().join(format!("koth-api-bench-{}", std::process::id()));
    let pg = PrivatePostgres::start(&dir.join("postgres"), None).map_err(|e| anyhow::anyhow!(e))?;
    let rt = tokio::runtime::Runtime::new()?;
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let (addr, pool) = rt.block_on(async {
        let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 40).await.map_err(|e| anyhow::anyhow!(e))?;
        super::examples::seed(&pool, &dir).await?;
        let mut s = stop.clone();
        tokio::spawn(koth_scheduler::ladder::run(pool.clone(), Duration::from_millis(500), async move {
            let _ = s.wait_for(|v| *v).await;
        }));
        let builder = a.store.builder(ImagePolicy::Auto);
        for i in 0..a.runners.max(1) {
            let cfg = WorkerConfig {
                grace: Duration::from_secs(1),
                ..WorkerConfig::new(format!("bench/{i}"), builder.clone(), &a.store.sandbox(), worker::DEFAULT_BOT_MEMORY)
            };
            tokio::spawn(worker::run(pool.clone(), cfg, stop.clone()));
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = koth_web::http::router(pool.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        anyhow::Ok((addr, pool))
    })?;
    let token = std::fs::read_to_string(dir.join("host-token"))?.trim().to_owned();
    let base = format!("http://{addr}");
    let ladders: serde_json::Value = ureq::get(&format!("{base}/api/ladders")).call()?.into_json()?;
    let ids: Vec<i64> = ladders.as_array().into_iter().flatten().filter_map(|l| l["id"].as_i64()).collect();
    let target = ladders.as_array().into_iter().flatten().find(|l| l["game"] == "target").and_then(|l| l["id"].as_i64()).unwrap_or(1);
    let source = include_bytes!("../../bots/target/drifter.py");
    // Replays to read: matches finished before the load starts.
    let wait = Instant::now();
    let replays: Vec<i64> = loop {
        let ids = rt.block_on(
            sqlx::query_scalar::<_, i64>("SELECT id FROM matches WHERE state = 'finished' ORDER BY id LIMIT 20").fetch_all(&pool),
        )?;
        if !ids.is_empty() || wait.elapsed() > Duration::from_secs(120) {
            break ids;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    anyhow::ensure!(!replays.is_empty(), "no match finished within 2 minutes: are the runners able to build and play the example bots?");
    let finished_before = finished(&rt, &pool)?;

    let samples: Samples = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for r in 0..a.readers {
        let (base, ids, replays, samples, done) = (base.clone(), ids.clone(), replays.clone(), samples.clone(), done.clone());
        threads.push(std::thread::spawn(move || {
            let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(30)).build();
            let mut i = r;
            while !done.load(Ordering::Relaxed) {
                let (kind, path) = match i % 10 {
                    0 => ("health", "/health".to_owned()),
                    3 => ("page", format!("/ladders/{}", ids[i % ids.len()])),
                    5 => ("frames", format!("/api/matches/{}/frames", replays[i % replays.len()])),
                    _ => ("leaderboard", format!("/api/ladders/{}/leaderboard", ids[i % ids.len()])),
                };
                let t = Instant::now();
                let ok = agent.get(&format!("{base}{path}")).call().is_ok();
                samples.lock().unwrap().push((kind, t.elapsed().as_secs_f64() * 1e3, ok));
                i += 1;
            }
        }));
    }
    for w in 0..a.submitters {
        let (base, token, samples, done) = (base.clone(), token.clone(), samples.clone(), done.clone());
        threads.push(std::thread::spawn(move || {
            let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(30)).build();
            let mut n = 0;
            while !done.load(Ordering::Relaxed) {
                let url = format!("{base}/api/ladders/{target}/bots/load-{w}-{n}?file=bot.py");
                let t = Instant::now();
                let ok = agent.post(&url).set("Authorization", &format!("Bearer {token}")).send_bytes(source).is_ok();
                samples.lock().unwrap().push(("submit", t.elapsed().as_secs_f64() * 1e3, ok));
                n += 1;
                std::thread::sleep(Duration::from_millis(200));
            }
        }));
    }
    std::thread::sleep(Duration::from_secs(a.seconds));
    done.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    let finished_after = finished(&rt, &pool)?;
    let _ = stop_tx.send(true);
    let samples = samples.lock().unwrap().clone();
    println!(
        "koth bench api: {} readers, {} submitters, {} s on loopback, {} runner loops; {} matches finished meanwhile",
        a.readers,
        a.submitters,
        a.seconds,
        a.runners,
        finished_after - finished_before
    );
    println!("{:<12} {:>8} {:>7} {:>9} {:>9} {:>12}", "request", "count", "errors", "p50 ms", "p99 ms", "p99/health");
    let health_p99 = {
        let mut v: Vec<f64> = samples.iter().filter(|s| s.0 == "health").map(|s| s.1).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        pct(&v, 0.99)
    };
    for kind in ["health", "page", "leaderboard", "frames", "submit"] {
        let mut v: Vec<f64> = samples.iter().filter(|s| s.0 == kind).map(|s| s.1).collect();
        let errors = samples.iter().filter(|s| s.0 == kind && !s.2).count();
        v.sort_by(|a, b| a.total_cmp(b));
        println!(
            "{:<12} {:>8} {:>7} {:>9.2} {:>9.2} {:>11.1}x",
            kind,
            v.len(),
            errors,
            pct(&v, 0.5),
            pct(&v, 0.99),
            pct(&v, 0.99) / health_p99
        );
    }
    rt.shutdown_timeout(Duration::from_secs(2));
    drop(pg);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(0)
}

fn finished(rt: &tokio::runtime::Runtime, pool: &sqlx::PgPool) -> anyhow::Result<i64> {
    Ok(rt.block_on(sqlx::query_scalar::<_, i64>("SELECT count(*) FROM matches WHERE state = 'finished'").fetch_one(pool))?)
}
