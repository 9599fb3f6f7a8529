//! `koth runner`, `koth scheduler` and `koth web`: the long-running services
//! (`koth up` runs all three in one process).
//!
//! The service is wired in one place: [`start_scheduler`], [`start_runners`]
//! and [`start_web`] each start one part, running until the shutdown watch
//! turns true. `koth up` starts all three on one database; each of the
//! other commands starts one, after its own arguments.

use std::time::Duration;

use clap::Args;
use koth_runner::bot::{Builder, ImagePolicy};
use koth_sandbox::{parse_duration, parse_size};
use koth_scheduler::worker::{self, WorkerConfig, WorkerStats};
use sqlx::PgPool;
use tokio::sync::watch;
use tokio::task::JoinHandle;

fn duration(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}
fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

#[derive(Args)]
pub struct RunnerArgs {
    /// PostgreSQL URL of the contest's database.
    #[arg(long, env = "DATABASE_URL")]
    database_url: String,
    /// A file holding the database's password (its first line), put into
    /// the URL: a Docker secret (/run/secrets/NAME) instead of a password
    /// in the environment.
    #[arg(long, env = "KOTH_DATABASE_PASSWORD_FILE")]
    database_password_file: Option<std::path::PathBuf>,
    /// The cores this runner's matches may use (a list such as 0-3 or 0,2,
    /// or all): a match takes a core for each bot that thinks at the same
    /// time when they are free, and each bot on move runs on its own (when
    /// they are taken, it plays unpinned; the clock forgives waiting for a
    /// CPU). Give several runners on one host disjoint lists.
    #[arg(long, default_value = "all", value_parser = koth_runner::cores::parse_cpus)]
    cpus: koth_runner::cores::CoreList,
    /// Jobs this process runs at once (one worker loop each).
    #[arg(long, default_value_t = 1)]
    jobs: u32,
    /// Name shown as the holder of its jobs (default: host and pid).
    #[arg(long)]
    name: Option<String>,
    /// Lease of a claimed job; the heartbeat renews it every quarter.
    #[arg(long, default_value = "60s", value_parser = duration)]
    lease: Duration,
    /// On SIGTERM, how long the current job may still run before it is given back.
    #[arg(long, default_value = "30s", value_parser = duration)]
    grace: Duration,
    /// Memory of each bot's box in matches.
    #[arg(long, default_value = "512M", value_parser = size)]
    memory: u64,
    /// Bytes of JSON a match's replay may hold: the turn that takes it past
    /// them ends the match (scored as it stands; an added game's referee
    /// whose events did it has failed). At most 56M.
    #[arg(long, env = "KOTH_REPLAY_LIMIT", default_value = "32M", value_parser = super::replay_limit)]
    replay_limit: u64,
    /// Use the host's toolchains where a language has no image (default: images only).
    #[arg(long)]
    allow_host_toolchains: bool,
    #[command(flatten)]
    queue: super::QueueArgs,
    #[command(flatten)]
    store: super::BotStoreArgs,
}

#[derive(Args)]
pub struct SchedulerArgs {
    /// PostgreSQL URL of the contest's database.
    #[arg(long, env = "DATABASE_URL")]
    database_url: String,
    /// A file holding the database's password (its first line), put into
    /// the URL: a Docker secret (/run/secrets/NAME) instead of a password
    /// in the environment.
    #[arg(long, env = "KOTH_DATABASE_PASSWORD_FILE")]
    database_password_file: Option<std::path::PathBuf>,
    /// Time between two passes over the ladders.
    #[arg(long, default_value = "500ms", value_parser = duration)]
    tick: Duration,
}

#[derive(Args)]
pub struct WebArgs {
    /// PostgreSQL URL of the contest's database.
    #[arg(long, env = "DATABASE_URL")]
    database_url: String,
    /// A file holding the database's password (its first line), put into
    /// the URL: a Docker secret (/run/secrets/NAME) instead of a password
    /// in the environment.
    #[arg(long, env = "KOTH_DATABASE_PASSWORD_FILE")]
    database_password_file: Option<std::path::PathBuf>,
    /// Address to serve the API and the pages on.
    #[arg(long, env = "KOTH_LISTEN", default_value = "127.0.0.1:8080")]
    listen: String,
    /// On first start (no ladders yet), create the `host` account, a ladder
    /// per game and the example bots, as `koth up` does; the host's token is
    /// written to `<data-dir>/host-token`.
    #[arg(long)]
    examples: bool,
    /// A file holding the host's token (its first line; 32 to 256 letters,
    /// digits, '-' or '_'): the `host` account gets it, created if needed,
    /// and `--examples` writes no token of its own. A Docker secret
    /// (/run/secrets/NAME) in a swarm.
    #[arg(long, env = "KOTH_HOST_TOKEN_FILE")]
    host_token_file: Option<std::path::PathBuf>,
    /// Where `--examples` writes the host's token.
    #[arg(long, env = "KOTH_DATA", default_value = "/var/lib/koth/web")]
    data_dir: std::path::PathBuf,
    #[command(flatten)]
    api: super::ApiArgs,
    #[command(flatten)]
    http: super::HttpArgs,
}

/// A watch that turns true on SIGTERM or SIGINT.
pub(super) fn shutdown_signal() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        tracing::info!("shutting down: no new jobs; finishing or releasing the current ones");
        let _ = tx.send(true);
    });
    rx
}

/// The ladders' tick: every `tick`, each ladder's next matches.
pub(super) fn start_scheduler(pool: &PgPool, tick: Duration, stop: &watch::Receiver<bool>) -> JoinHandle<Result<(), String>> {
    let (pool, mut stop) = (pool.clone(), stop.clone());
    tokio::spawn(koth_scheduler::ladder::run(pool, tick, async move {
        let _ = stop.wait_for(|s| *s).await;
    }))
}

/// A process's runner loops: `jobs` of them, named `name` (`name/i` when
/// several), each with the configuration `config` makes for its name; and
/// the report of the languages they run, made before they start (so the
/// first upload is checked against it) and kept current.
pub(super) async fn start_runners(
    pool: &PgPool,
    name: &str,
    builder: &Builder,
    jobs: u32,
    stop: &watch::Receiver<bool>,
    config: impl Fn(String) -> WorkerConfig,
) -> (JoinHandle<()>, Vec<JoinHandle<WorkerStats>>) {
    worker::report_languages(pool, name, builder).await;
    let reporting = tokio::spawn(worker::keep_reporting_languages(pool.clone(), name.to_owned(), builder.clone(), stop.clone()));
    let loops = (0..jobs.max(1))
        .map(|i| {
            let name = if jobs > 1 { format!("{name}/{i}") } else { name.to_owned() };
            tokio::spawn(worker::run(pool.clone(), config(name), stop.clone()))
        })
        .collect();
    (reporting, loops)
}

/// The API and the pages on `listen`; returns the address it took.
pub(super) async fn start_web(
    pool: &PgPool,
    listen: &str,
    options: koth_web::http::ApiOptions,
    limits: koth_web::serve::HttpLimits,
    stop: &watch::Receiver<bool>,
) -> anyhow::Result<(std::net::SocketAddr, JoinHandle<std::io::Result<()>>)> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("listening on {listen}: {e}; pick another with --listen"))?;
    let addr = listener.local_addr()?;
    let app = koth_web::http::router_with(pool.clone(), options);
    let mut stop = stop.clone();
    let server = tokio::spawn(koth_web::serve::serve(listener, app, limits, async move {
        let _ = stop.wait_for(|s| *s).await;
    }));
    Ok((addr, server))
}

pub fn runner(a: RunnerArgs) -> anyhow::Result<i32> {
    let rt = tokio::runtime::Runtime::new()?;
    let result = rt.block_on(async move {
        let pool = koth_scheduler::db::connect_and_migrate(
            &super::secrets::database_url(&a.database_url, a.database_password_file.as_deref())?,
            a.jobs + 4,
        )
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
        let sandbox = a.store.sandbox();
        let builder = a.store.builder(if a.allow_host_toolchains { ImagePolicy::Auto } else { ImagePolicy::Images });
        let name = a.name.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
            format!("{}-{}", host.trim(), std::process::id())
        });
        let stop = shutdown_signal();
        let cores = koth_runner::cores::CoreBudget::new(&a.cpus.0);
        let (reporting, loops) = start_runners(&pool, &name, &builder, a.jobs, &stop, |name| WorkerConfig {
            lease: a.lease,
            heartbeat: a.lease / 4,
            grace: a.grace,
            fair_share: a.queue.fair_share(),
            cores: cores.clone(),
            replay_limit: a.replay_limit,
            ..WorkerConfig::new(name, builder.clone(), &sandbox, a.memory)
        })
        .await;
        tracing::info!(runner = %name, jobs = a.jobs, "runner started");
        for l in loops {
            let stats = l.await?;
            tracing::info!(
                completed = stats.completed,
                failed = stats.failed,
                released = stats.released,
                stale = stats.stale,
                overloaded = stats.overloaded,
                conflicts = stats.conflicts,
                "worker loop stopped"
            );
        }
        let _ = reporting.await;
        Ok(0)
    });
    // A released job's match may still run on a blocking thread: do not wait
    // for it (its boxes die with this process; a frozen bot of cgroup v1 is
    // thawed and killed by the next runner's sweep).
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

pub fn scheduler(a: SchedulerArgs) -> anyhow::Result<i32> {
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let pool = koth_scheduler::db::connect_and_migrate(
            &super::secrets::database_url(&a.database_url, a.database_password_file.as_deref())?,
            4,
        )
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
        let stop = shutdown_signal();
        tracing::info!("scheduler started");
        start_scheduler(&pool, a.tick, &stop).await?.map_err(|e| anyhow::anyhow!(e))?;
        Ok(0)
    })
}

pub fn web(a: WebArgs) -> anyhow::Result<i32> {
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let pool = koth_scheduler::db::connect_and_migrate(
            &super::secrets::database_url(&a.database_url, a.database_password_file.as_deref())?,
            16,
        )
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
        match &a.host_token_file {
            Some(f) => {
                let token = super::secrets::read_secret(f, "the host's token", "--host-token-file, KOTH_HOST_TOKEN_FILE")?;
                super::secrets::check_host_token(&token).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
                // Web replicas start at once: one makes the host and the examples.
                let lock = koth_scheduler::db::store::first_start_lock(&pool).await?;
                let host = koth_web::http::ensure_host_token(&pool, "host", &token).await.map_err(|e| anyhow::anyhow!(e))?;
                if a.examples {
                    super::examples::seed_for(&pool, host).await?;
                }
                lock.commit().await?;
            }
            None if a.examples => {
                std::fs::create_dir_all(&a.data_dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", a.data_dir.display()))?;
                super::examples::seed(&pool, &a.data_dir).await?;
            }
            None => {}
        }
        let stop = shutdown_signal();
        let (addr, server) = start_web(&pool, &a.listen, a.api.options(), a.http.limits(), &stop).await?;
        eprintln!("koth web is up at http://{addr}/");
        server.await??;
        pool.close().await;
        Ok(0)
    })
}
