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
use koth_runner::bot::ImagePolicy;
use koth_scheduler::pg::PrivatePostgres;
use koth_scheduler::worker::{self, WorkerConfig};

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
    /// The cores matches may use (0-3, 0,2, or all): a match takes a core
    /// for each bot that thinks at the same time when they are free, and
    /// each bot on move then has a core of its own (when they are taken, it
    /// plays unpinned; the clock forgives waiting for a CPU).
    #[arg(long, default_value = "all", value_parser = koth_runner::cores::parse_cpus)]
    cpus: koth_runner::cores::CoreList,
    /// Bytes of JSON a match's replay may hold: the turn that takes it past
    /// them ends the match (scored as it stands; an added game's referee
    /// whose events did it has failed). At most 56M.
    #[arg(long, env = "KOTH_REPLAY_LIMIT", default_value = "32M", value_parser = super::replay_limit)]
    replay_limit: u64,
    /// Do not create ladders and example bots on first start.
    #[arg(long)]
    no_examples: bool,
    #[command(flatten)]
    queue: super::QueueArgs,
    #[command(flatten)]
    store: super::BotStoreArgs,
    #[command(flatten)]
    api: super::ApiArgs,
    #[command(flatten)]
    http: super::HttpArgs,
}

pub fn run(a: UpArgs) -> anyhow::Result<i32> {
    // One koth up per data folder, checked before anything in it is
    // touched: a second one must not change what the first relies on (the
    // folder's modes, which its PostgreSQL server user needs).
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&a.data_dir)
            .map_err(|e| anyhow::anyhow!("creating {}: {e}", a.data_dir.display()))?;
    }
    let lock = UpLock::take(&a.data_dir)?;
    // Root's only (the host token is in it); PostgreSQL's start adds the
    // search bit for its server user.
    koth_runner::state::private_dir(&a.data_dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", a.data_dir.display()))?;
    let private = match &a.database_url {
        Some(_) => None,
        None => Some(PrivatePostgres::start(&a.data_dir.join("postgres"), None).map_err(|e| anyhow::anyhow!(e))?),
    };
    let url = a.database_url.clone().unwrap_or_else(|| private.as_ref().unwrap().url());
    let rt = tokio::runtime::Runtime::new()?;
    let result = rt.block_on(serve(&a, &url, &lock));
    rt.shutdown_timeout(Duration::from_secs(1));
    drop(private); // a clean shutdown of the private server
    result
}

async fn serve(a: &UpArgs, url: &str, lock: &UpLock) -> anyhow::Result<i32> {
    let pool = koth_scheduler::db::connect_and_migrate(url, a.runners + 8).await.map_err(|e| anyhow::anyhow!(e))?;
    if a.no_examples {
        // No ladders or bots, but a host to make them: its token is where
        // the banner says.
        super::examples::ensure_host(&pool, &a.data_dir).await?;
    } else {
        super::examples::seed(&pool, &a.data_dir).await?;
    }
    let stop = super::service::shutdown_signal();
    let scheduler = super::service::start_scheduler(&pool, Duration::from_millis(500), &stop);
    let mut sandbox = a.store.sandbox();
    if let Ok(data) = std::path::absolute(&a.data_dir) {
        sandbox.hidden.push(data);
    }
    let builder = a.store.builder(ImagePolicy::Auto);
    let cores = koth_runner::cores::CoreBudget::new(&a.cpus.0);
    let name = format!("up-{}", std::process::id());
    // Started before the pages open: their languages are reported first.
    let (reporting, runners) = super::service::start_runners(&pool, &name, &builder, a.runners, &stop, |name| WorkerConfig {
        fair_share: a.queue.fair_share(),
        cores: cores.clone(),
        replay_limit: a.replay_limit,
        ..WorkerConfig::new(name, builder.clone(), &sandbox, worker::DEFAULT_BOT_MEMORY)
    })
    .await;
    let (addr, server) = super::service::start_web(&pool, &a.listen, a.api.options(), a.http.limits(), &stop).await?;
    lock.record(&format!("http://{addr}/"));
    let token_file = a.data_dir.join("host-token");
    eprintln!("koth is up at http://{addr}/ (API: /api/ladders, /health, /metrics; host token in {})", token_file.display());
    for r in runners {
        let _ = r.await;
    }
    let _ = reporting.await;
    if let Err(e) = scheduler.await? {
        tracing::warn!("the ladders' tick stopped: {e}");
    }
    server.await??;
    pool.close().await;
    Ok(0)
}

/// One `koth up` per data folder: an exclusive `flock` on `<data>/up.lock`,
/// held for the process's life (the kernel drops it when the process dies,
/// however it dies), with the holder's pid and URL in the file for the next
/// one's message.
struct UpLock {
    file: std::fs::File,
}

impl UpLock {
    fn take(data: &std::path::Path) -> anyhow::Result<UpLock> {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        let path = data.join("up.lock");
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| anyhow::anyhow!("opening {}: {e}", path.display()))?;
        // SAFETY: flock on a file this function just opened.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            anyhow::bail!(
                "koth up is already running with {} ({}); stop it first, or start this one with another --data-dir",
                data.display(),
                if holder.is_empty() { "its pid and address are not recorded yet" } else { holder }
            );
        }
        let lock = UpLock { file };
        lock.write(&format!("pid {}, starting", std::process::id()));
        Ok(lock)
    }

    /// Say who holds the lock: `pid N at URL`.
    fn record(&self, url: &str) {
        self.write(&format!("pid {} at {url}", std::process::id()));
    }

    fn write(&self, text: &str) {
        use std::io::{Seek, Write};
        let mut f = &self.file;
        let _ = f.set_len(0);
        let _ = f.seek(std::io::SeekFrom::Start(0));
        let _ = f.write_all(text.as_bytes());
    }
}
