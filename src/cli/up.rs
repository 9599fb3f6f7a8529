//! `koth up`: the whole service on one machine with embedded defaults.
//!
//! Without `--database-url` it starts a private PostgreSQL from the
//! machine's binaries in `<data-dir>/postgres`; it applies the migrations;
//! on first start it creates a ladder per game (each in the format its seed
//! describes) and seeds the example bots, so the ladders start playing at
//! once; it runs the scheduler, `--runners` worker loops and the HTTP API,
//! and prints the URL. SIGTERM or Ctrl-C stops it: runners finish or give
//! back their jobs, PostgreSQL shuts down cleanly, nothing is lost; starting
//! it again continues where it stopped.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use koth_games::GameKind;
use koth_runner::bot::ImagePolicy;
use koth_runner::submission::{Submission, SubmissionLimits};
use koth_runner::worker::{self, WorkerConfig};
use koth_sandbox::{Limits, SandboxConfig};
use koth_scheduler::pg::PrivatePostgres;
use koth_scheduler::store;
use sqlx::PgPool;

mod examples {
    include!(concat!(env!("OUT_DIR"), "/examples.rs"));
}

#[derive(Args)]
pub struct UpArgs {
    /// Where the private database and the host's token are kept.
    #[arg(long, env = "KOTH_DATA", default_value = "/var/lib/koth/up")]
    data_dir: PathBuf,
    /// Use this PostgreSQL instead of a private one.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
    /// Address of the HTTP API.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: String,
    /// Worker loops (jobs run at once).
    #[arg(long, default_value_t = 2)]
    runners: u32,
    /// Do not create ladders and example bots on first start.
    #[arg(long)]
    no_examples: bool,
    #[command(flatten)]
    store: super::BotStoreArgs,
}

pub fn run(a: UpArgs) -> anyhow::Result<i32> {
    // Root's only (the host token is in it); PostgreSQL's start adds the
    // search bit for its server user.
    koth_runner::state::private_dir(&a.data_dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", a.data_dir.display()))?;
    let private = match &a.database_url {
        Some(_) => None,
        None => Some(PrivatePostgres::start(&a.data_dir.join("postgres"), None).map_err(|e| anyhow::anyhow!(e))?),
    };
    let url = a.database_url.clone().unwrap_or_else(|| private.as_ref().unwrap().url());
    let rt = tokio::runtime::Runtime::new()?;
    let result = rt.block_on(serve(&a, &url));
    rt.shutdown_timeout(Duration::from_secs(1));
    drop(private); // a clean shutdown of the private server
    result
}

async fn serve(a: &UpArgs, url: &str) -> anyhow::Result<i32> {
    let pool = koth_scheduler::db::connect_and_migrate(url, a.runners + 8).await.map_err(|e| anyhow::anyhow!(e))?;
    if !a.no_examples {
        seed(&pool, &a.data_dir).await?;
    }
    let stop = super::service::shutdown_signal();
    let mut tasks = Vec::new();
    {
        let mut stop = stop.clone();
        let pool = pool.clone();
        tasks.push(tokio::spawn(async move {
            let _ = koth_scheduler::ladder::run(pool, Duration::from_millis(500), async move {
                let _ = stop.wait_for(|s| *s).await;
            })
            .await;
        }));
    }
    let mut sandbox = a.store.sandbox();
    if let Ok(data) = std::path::absolute(&a.data_dir) {
        sandbox.hidden.push(data);
    }
    let builder = a.store.builder(ImagePolicy::Auto);
    for i in 0..a.runners.max(1) {
        let cfg = WorkerConfig {
            name: format!("up-{}/{i}", std::process::id()),
            builder: builder.clone(),
            match_sandbox: SandboxConfig {
                limits: Limits { memory: 512 << 20, cpu_time: None, wall_time: None, ..Limits::default() },
                ..sandbox.clone()
            },
            lease: Duration::from_secs(60),
            heartbeat: Duration::from_secs(15),
            poll: Duration::from_secs(2),
            grace: Duration::from_secs(10),
        };
        let (pool, stop) = (pool.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            worker::run(pool, cfg, stop).await;
        }));
    }
    let listener = tokio::net::TcpListener::bind(&a.listen)
        .await
        .map_err(|e| anyhow::anyhow!("listening on {}: {e}; pick another with --listen", a.listen))?;
    let addr = listener.local_addr()?;
    let app = koth_scheduler::api::router(pool.clone(), worker::uploads());
    let mut stop_http = stop.clone();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop_http.wait_for(|s| *s).await;
            })
            .await
    });
    let token_file = a.data_dir.join("host-token");
    eprintln!("koth is up at http://{addr}/ (API: /api/ladders, /health, /metrics; host token in {})", token_file.display());
    for t in tasks {
        let _ = t.await;
    }
    server.await??;
    pool.close().await;
    Ok(0)
}

/// First start: a ladder per game in its seed's format, and the example
/// bots (enough copies to fill the game's seats), owned by the `host`
/// account whose token is written to `<data-dir>/host-token`.
pub(super) async fn seed(pool: &PgPool, data_dir: &std::path::Path) -> anyhow::Result<()> {
    let ladders: i64 = sqlx::query_scalar("SELECT count(*) FROM ladders").fetch_one(pool).await?;
    if ladders > 0 {
        return Ok(());
    }
    let (host, token) = koth_scheduler::api::create_account(pool, "host", true).await?;
    let token_file = data_dir.join("host-token");
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&token_file)?;
        writeln!(f, "{token}")?;
    }
    for kind in GameKind::ALL {
        let (format, settings) = store::default_format(kind);
        let ladder = store::create_ladder(pool, kind.name(), kind, format, &settings).await?;
        let files: Vec<&(&str, &str, &[u8])> = examples::EXAMPLES.iter().filter(|(g, _, _)| *g == kind.name()).collect();
        let seats = settings.seats.unwrap_or(kind.seat_range().0).max(2);
        let copies = seats.div_ceil(files.len().max(1));
        for (_, file, bytes) in &files {
            let sub = Submission::from_upload(file, bytes, &SubmissionLimits::default())
                .map_err(|e| anyhow::anyhow!("example bot {}/{file}: {e}", kind.name()))?;
            let stem = file.rsplit_once('.').map(|(s, _)| s).unwrap_or(file);
            for c in 1..=copies {
                let name = if copies == 1 { stem.to_owned() } else { format!("{stem}-{c}") };
                let bot = store::create_bot(pool, ladder, host, &name).await?;
                store::submit_version(pool, bot, &sub.language.name, &sub.main, &worker::source_tar(&sub), &sub.source_hash()).await?;
            }
        }
    }
    eprintln!("koth: created a ladder per game and seeded the example bots");
    Ok(())
}
