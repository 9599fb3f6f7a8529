//! `koth runner`: a worker that claims compile, match and game-validation
//! jobs from the queue in PostgreSQL ([`crate::db::queue`]), runs them with
//! koth-runner, and writes the results back.
//!
//! One job at a time per worker loop (a process may run several loops). For
//! each job: read what it needs, run it on a blocking thread while a
//! heartbeat extends the lease, then write the result and complete the job
//! in **one transaction**, fenced by the lease: a worker that stalled past
//! its lease (and whose job was rescued and given to another) writes
//! nothing. No transaction is open while a compile or a match runs.
//!
//! * A compile that the author must fix (compiler error, limits) completes
//!   the job with the version marked failed and the log kept; a problem of
//!   this runner (no image, sandbox failure) fails the job for a retry,
//!   perhaps on another runner.
//! * A match's bots run from their stored artifacts when this runner has
//!   the image they were built in, else they are rebuilt from source here
//!   (through the artifact cache).
//! * On shutdown (SIGTERM) the worker stops claiming, lets the current job
//!   finish for up to `grace`, then gives it back (`release`) so another
//!   runner takes it at once; it exits when its job is recorded or released.
//! * A lost database connection (PostgreSQL restarting) is waited out: the
//!   claim loop retries, and so does the recording of a finished job, while
//!   the lease lasts.

use std::sync::Arc;
use std::time::Duration;

use koth_games::replay::Turn;
use koth_games::GameKind;
use koth_runner::bot::{BotSpec, Builder, PrepareError};
use koth_runner::compile::{Artifact, BuildError};
use koth_runner::cores::CoreBudget;
use koth_runner::engine::live::LiveTurns;
use koth_runner::engine::{play, MatchOptions, ReplayTo, ENGINE_VERSION};
use koth_runner::game::{ExternalGame, Game, GameError, GamePackage};
use koth_runner::machine::{self, MachineTurns, Use};
use koth_runner::storage::SeatData;
use koth_runner::submission::Submission;
use koth_sandbox::{BoxPool, SandboxConfig};
use sqlx::PgPool;
use tokio::sync::watch;

use crate::db::queue::{wait_for_work, Claimed, FailOutcome, FairShare, Queue, QueueError, Recorder};
use crate::db::results::{record_match, MatchOutcome};
use crate::db::runners;
use crate::db::store;
use crate::job::{CompileOutcome, Job};
use crate::packed::PackedReplay;
use koth_ladder::outcome::SeatOutcome;
use koth_ladder::validation;

#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Shown as the jobs' holder: host, process and loop.
    pub name: String,
    /// Compiles: images, artifact cache, sandbox settings.
    pub builder: Builder,
    /// Boxes of match bots (limits).
    pub match_sandbox: SandboxConfig,
    pub lease: Duration,
    pub heartbeat: Duration,
    /// Backstop poll when no notification arrives.
    pub poll: Duration,
    /// How long a shutting-down worker lets its job run before releasing it.
    pub grace: Duration,
    /// How much of the runners challenges may take while ladder matches
    /// wait ([`FairShare`]).
    pub fair_share: FairShare,
    /// Match bots' boxes, built ahead of the next match: each box a match
    /// takes is replaced, so the pool keeps the shape of the last matches
    /// (two boxes of one config after a match of two bots in one
    /// language), up to [`POOLED_PER_CONFIG`] of a language and network,
    /// eight in all, each for five minutes at most.
    pub boxes: BoxPool,
    /// Games hosts added, written out and their referees built.
    pub added_games: AddedGames,
    /// The cores this process's matches share (every loop of the process
    /// must hold the same budget): a match takes as many as it has bots
    /// thinking at once when they are free, and is played unpinned under
    /// the clock's rules when not ([`koth_runner::cores`]).
    pub cores: CoreBudget,
    /// Bytes of compact JSON a match's replay may hold
    /// ([`MatchOptions::replay_limit`]; `koth runner --replay-limit`).
    pub replay_limit: u64,
    /// The machine's turns, shared with its other runner processes: a job
    /// the machine voided before runs with no other job of the machine
    /// ([`koth_runner::machine`]). Every runner process of a machine must
    /// name the same directory (by default the sandbox's `slots`).
    pub machine: MachineTurns,
}

/// The added games a runner has loaded, by their files' hash: written out
/// under a folder of their own and their referee built once, not per
/// match. A server has a handful; past [`AddedGames::KEPT`] (a host adding
/// and re-adding refused games) all are forgotten and loaded again as
/// their matches come.
#[derive(Clone, Debug)]
pub struct AddedGames {
    dir: std::path::PathBuf,
    loaded: Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<ExternalGame>>>>,
}

impl AddedGames {
    /// Games written out under `dir` (`koth_runner::state::games_dir`).
    pub fn new(dir: std::path::PathBuf) -> AddedGames {
        AddedGames { dir, loaded: Default::default() }
    }

    /// Games kept loaded at most.
    pub const KEPT: usize = 32;

    /// The game whose files hash to `hash`, if loaded.
    pub fn get(&self, hash: &str) -> Option<Arc<ExternalGame>> {
        self.loaded.lock().unwrap_or_else(|p| p.into_inner()).get(hash).cloned()
    }

    pub fn load(&self, package: &GamePackage, builder: &Builder) -> Result<Arc<ExternalGame>, GameError> {
        let hash = package.source_hash();
        if let Some(g) = self.get(&hash) {
            return Ok(g);
        }
        // Built outside the lock: a referee's build may take seconds.
        let game = Arc::new(package.unpack(&self.dir, builder)?);
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if loaded.len() >= Self::KEPT {
            loaded.clear();
        }
        loaded.insert(hash, game.clone());
        Ok(game)
    }
}

impl WorkerConfig {
    /// A worker with the service's defaults: a 60 s lease renewed every
    /// 15 s, a 2 s backstop poll, 10 s of grace on shutdown, and match bots
    /// in boxes of `sandbox` with `memory` bytes each and no CPU or wall
    /// limit of the box's own (the engine times every move).
    pub fn new(name: String, builder: Builder, sandbox: &SandboxConfig, memory: u64) -> WorkerConfig {
        let limits = koth_sandbox::Limits { memory, cpu_time: None, wall_time: None, ..koth_sandbox::Limits::default() };
        WorkerConfig {
            name,
            builder,
            match_sandbox: SandboxConfig { limits, ..sandbox.clone() },
            lease: Duration::from_secs(60),
            heartbeat: Duration::from_secs(15),
            poll: Duration::from_secs(2),
            grace: Duration::from_secs(10),
            fair_share: FairShare::default(),
            boxes: BoxPool::new(POOLED_PER_CONFIG, 8, Duration::from_secs(300)),
            added_games: AddedGames::new(koth_runner::state::games_dir()),
            replay_limit: koth_runner::engine::DEFAULT_REPLAY_LIMIT,
            cores: CoreBudget::all_allowed(),
            machine: MachineTurns::in_dir(sandbox.runtime_dir.join("slots")),
        }
    }
}

/// Ready boxes a worker keeps of one config at most: enough for every seat
/// of a four-player match in one language, or two two-player matches at
/// once. With one, a match of two bots in one language built its second
/// box on the spot: a start of two turns took 0.80–0.85× of the time with
/// no pool at all, against 0.53–0.55× with both boxes ready (`koth bench
/// match --start-only`).
pub const POOLED_PER_CONFIG: usize = 4;

/// Memory of a match bot's box unless the host says otherwise.
pub const DEFAULT_BOT_MEMORY: u64 = 512 << 20;

/// What a worker loop did.
#[derive(Clone, Debug, Default)]
pub struct WorkerStats {
    pub completed: u64,
    pub failed: u64,
    pub released: u64,
    pub stale: u64,
    /// Jobs given back because the machine was too busy to time them.
    pub overloaded: u64,
    /// Recordings the database rolled back to break a conflict with
    /// another transaction, and that were run again.
    pub conflicts: u64,
}

/// How a job ended on this worker.
enum JobResult {
    Compiled {
        version: i64,
        outcome: CompileOutcome,
        log: String,
    },
    Played {
        match_id: i64,
        outcome: MatchOutcome,
        /// An added game's frames, drawn here by its referee (gzip JSON).
        frames_gz: Option<Vec<u8>>,
        /// The seats' data, where the ladder carries it, to write back.
        data: Vec<crate::db::bot_data::SeatData>,
    },
    /// An added game's validation match, judged.
    GameValidated {
        game: i64,
        passed: bool,
        log: String,
    },
    /// Retry (maybe elsewhere): the problem is this runner's, not the job's.
    Retry(String),
    /// Play again later: the machine was too busy to time it, nobody was at
    /// fault ([`Queue::defer_in`]: no attempt spent). The loop that saw it
    /// also pauses before its next claim ([`overload_pause`]).
    Overloaded(String),
    /// Fail for good: the job cannot succeed.
    Fail(String),
}

/// Report what this runner can run ([`runners`]) once; whether it can run
/// any language at all.
pub async fn report_languages(pool: &PgPool, runner: &str, builder: &Builder) -> bool {
    let b = builder.clone();
    let found = tokio::task::spawn_blocking(move || {
        koth_runner::language::all().iter().map(|l| (l.name.clone(), runners::Can::from(b.availability(l)))).collect()
    })
    .await;
    let Ok(found) = found else { return false };
    let found: std::collections::BTreeMap<String, runners::Can> = found;
    let runs_any = found.values().any(|c| !matches!(c, runners::Can::Err(_)));
    let missing: Vec<&str> = found.iter().filter(|(_, c)| matches!(c, runners::Can::Err(_))).map(|(l, _)| l.as_str()).collect();
    if !missing.is_empty() {
        tracing::info!(runner = %runner, "languages this runner cannot run: {}", missing.join(", "));
    }
    if let Err(e) = runners::report(pool, runner, &found).await {
        tracing::warn!(runner = %runner, "reporting its languages failed ({e}); trying again later");
    }
    runs_any
}

/// How soon a runner that can run no language yet reports again: its
/// image store may be being built beside it (in a swarm the machine's
/// `images` job and its runners start together).
pub const REPORT_SOON: std::time::Duration = std::time::Duration::from_secs(5);

/// After a first [`report_languages`]: report again every
/// [`runners::REPORT_EVERY`] (images may be built meanwhile), or every
/// [`REPORT_SOON`] while it can run no language at all (its first wait is
/// that short too), until `shutdown`; then forget the runner, so one scaled
/// down stops counting at once.
pub async fn keep_reporting_languages(pool: PgPool, runner: String, builder: Builder, shutdown: watch::Receiver<bool>) {
    let mut runs_any = false;
    loop {
        let wait = if runs_any { runners::REPORT_EVERY } else { REPORT_SOON };
        tokio::select! {
            _ = tokio::time::sleep(wait) => runs_any = report_languages(&pool, &runner, &builder).await,
            _ = wait_true(shutdown.clone()) => {
                if let Err(e) = runners::forget(&pool, &runner).await {
                    tracing::warn!(runner = %runner, "forgetting its languages failed: {e}");
                }
                return;
            }
        }
    }
}

/// Run a worker loop until `shutdown` turns true.
pub async fn run(pool: PgPool, cfg: WorkerConfig, mut shutdown: watch::Receiver<bool>) -> WorkerStats {
    // Boxes of a runner that died here (SIGKILL skips teardown) go first.
    if let Err(e) = tokio::task::spawn_blocking(koth_sandbox::cgroup::sweep_stale_groups).await.unwrap_or(Ok(())) {
        tracing::warn!(worker = %cfg.name, "sweeping stale box groups failed: {e}");
    }
    let queue = Queue::new(pool.clone()).with_fair_share(cfg.fair_share);
    let cfg = Arc::new(cfg);
    let mut stats = WorkerStats::default();
    let mut listener = None;
    // This loop's own connection for recording its jobs (`Recorder`).
    let mut recorder = Recorder::new(&pool);
    // The job claimed with the last one's completion, if any.
    let mut next: Option<Claimed> = None;
    // This loop's jobs voided for the machine's overload since its last other result.
    let mut overloaded_in_a_row = 0u32;
    loop {
        if *shutdown.borrow() {
            if let Some(job) = next.take() {
                // Claimed with the last completion, never started: back at once.
                if queue.release(&job).await.is_ok() {
                    stats.released += 1;
                }
            }
            return stats;
        }
        let job = match next.take() {
            Some(job) => Some(job),
            None => {
                if listener.is_none() {
                    listener = queue.listener().await.ok();
                }
                match queue.claim(&cfg.name, &Job::KINDS, cfg.lease).await {
                    Ok(j) => j,
                    Err(e) => {
                        tracing::warn!(worker = %cfg.name, "claiming failed ({e}); retrying");
                        listener = None;
                        tokio::select! {
                            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                            _ = shutdown.changed() => {}
                        }
                        continue;
                    }
                }
            }
        };
        let Some(job) = job else {
            match listener.as_mut() {
                Some(l) => tokio::select! {
                    _ = wait_for_work(l, cfg.poll) => {}
                    _ = shutdown.changed() => {}
                },
                None => tokio::select! {
                    _ = tokio::time::sleep(cfg.poll) => {}
                    _ = shutdown.changed() => {}
                },
            }
            continue;
        };
        tracing::info!(worker = %cfg.name, job = job.id, kind = %job.kind, attempt = job.attempt, "claimed");
        let overloaded_before = stats.overloaded;
        next = run_job(&pool, &mut recorder, &queue, &cfg, job, &mut shutdown, &mut stats).await;
        if stats.overloaded == overloaded_before {
            overloaded_in_a_row = 0;
            continue;
        }
        // The machine was too busy to time the match: this loop steps back
        // before it claims again, so that the runners of an overcommitted
        // host shed load instead of voiding every match they start.
        overloaded_in_a_row += 1;
        let pause = overload_pause(overloaded_in_a_row, rand::random::<f64>());
        tracing::info!(worker = %cfg.name, pause_ms = pause.as_millis() as u64, in_a_row = overloaded_in_a_row, "the machine was overloaded; pausing before the next claim");
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = shutdown.changed() => {}
        }
    }
}

/// How long a worker loop pauses before its next claim after its
/// `in_a_row`-th match in a row voided for the machine's overload: 1 s,
/// doubling, at most 30 s, times 0.5 to 1.5 (`jitter` in 0..1) so that the
/// loops of an overloaded host do not all come back in the same instant.
fn overload_pause(in_a_row: u32, jitter: f64) -> Duration {
    let base = Duration::from_secs(1u64 << in_a_row.clamp(1, 6).saturating_sub(1)).min(Duration::from_secs(30));
    base.mul_f64(0.5 + jitter.clamp(0.0, 1.0))
}

/// Run one job and record it; returns the next job when its completion
/// claimed one ([`Queue::complete_and_claim`]).
async fn run_job(
    pool: &PgPool,
    recorder: &mut Recorder,
    queue: &Queue,
    cfg: &Arc<WorkerConfig>,
    job: Claimed,
    shutdown: &mut watch::Receiver<bool>,
    stats: &mut WorkerStats,
) -> Option<Claimed> {
    // The heartbeat runs until the result is recorded or the job released.
    let (lost_tx, lost_rx) = watch::channel(false);
    let hb = {
        let queue = queue.clone();
        let job = job.clone();
        let (lease, every) = (cfg.lease, cfg.heartbeat);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                match queue.heartbeat(&job, lease).await {
                    Ok(()) => {}
                    Err(QueueError::Stale(_)) => {
                        let _ = lost_tx.send(true);
                        return;
                    }
                    // The database may be restarting; the lease has room.
                    Err(e) => tracing::warn!(job = job.id, "heartbeat failed ({e}); retrying"),
                }
            }
        })
    };
    let work = async {
        let _turn = machine_turn(cfg, &job).await;
        execute(pool, cfg, &job).await
    };
    tokio::pin!(work);
    let result = tokio::select! {
        r = &mut work => r,
        _ = wait_true(shutdown.clone()) => {
            // Shutting down: the same run gets its grace, then the job goes back.
            match tokio::time::timeout(cfg.grace, &mut work).await {
                Ok(r) => r,
                Err(_) => {
                    hb.abort();
                    match queue.release(&job).await {
                        Ok(()) => stats.released += 1,
                        Err(e) => tracing::warn!(job = job.id, "releasing failed: {e}"),
                    }
                    return None;
                }
            }
        }
    };
    if *lost_rx.borrow() {
        hb.abort();
        stats.stale += 1;
        tracing::warn!(job = job.id, "lease lost while running; result dropped");
        return None;
    }
    // Record, retrying through database hiccups while the lease lasts; a
    // worker that is not shutting down claims its next job in the same
    // transaction.
    let deadline = tokio::time::Instant::now() + cfg.lease;
    let mut next = None;
    loop {
        let claim_next = (!*shutdown.borrow()).then_some((cfg.name.as_str(), cfg.lease, &cfg.fair_share));
        let conflicts_before = recorder.conflicts();
        let recorded = record(pool, recorder, &job, &result, claim_next).await;
        stats.conflicts += recorder.conflicts() - conflicts_before;
        match recorded {
            Ok((done, claimed)) => {
                match done {
                    Recorded::Completed => stats.completed += 1,
                    Recorded::Failed => stats.failed += 1,
                    Recorded::Overloaded => stats.overloaded += 1,
                }
                next = claimed;
                break;
            }
            Err(QueueError::Stale(_)) => {
                stats.stale += 1;
                tracing::warn!(job = job.id, "lease lost before recording; result dropped");
                break;
            }
            // The server rolled the whole recording back to break a
            // conflict with another transaction: nothing is wrong, and
            // nothing to wait for.
            Err(e @ QueueError::Conflict(_)) if tokio::time::Instant::now() < deadline => {
                stats.conflicts += 1;
                tracing::info!(job = job.id, "{e}");
            }
            Err(e) if tokio::time::Instant::now() < deadline => {
                tracing::warn!(job = job.id, "recording failed ({e}); retrying");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => {
                tracing::error!(job = job.id, "recording failed ({e}); giving up, the lease will expire");
                break;
            }
        }
    }
    hb.abort();
    next
}

/// Wait for `job`'s turn on the machine: alone if the machine voided it
/// before, else shared. A turn that cannot be taken (the directory is not
/// writable) is logged and the job runs without one: the turns keep
/// voided matches from meeting the same load again, they guard nothing.
async fn machine_turn(cfg: &WorkerConfig, job: &Claimed) -> Option<machine::Turn> {
    let how = if job.overloads > 0 { Use::Alone } else { Use::Shared };
    let turns = cfg.machine.clone();
    let asked = std::time::Instant::now();
    // A panic in the blocking task is a failure to take the turn like any other.
    let taken = tokio::task::spawn_blocking(move || turns.take(how)).await.map_err(std::io::Error::other).and_then(|r| r);
    match taken {
        Ok(turn) => {
            if how == Use::Alone {
                tracing::info!(
                    worker = %cfg.name, job = job.id, voided = job.overloads,
                    waited_ms = asked.elapsed().as_millis() as u64,
                    "the machine voided this job before: it runs with no other job of the machine"
                );
            }
            Some(turn)
        }
        Err(e) => {
            tracing::warn!(worker = %cfg.name, job = job.id, dir = %cfg.machine.dir().display(), "taking a turn on the machine failed ({e}); running without one");
            None
        }
    }
}

async fn wait_true(mut rx: watch::Receiver<bool>) {
    while !*rx.borrow() {
        if rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

enum Recorded {
    Completed,
    Failed,
    /// Given back to be played later: the machine was overloaded.
    Overloaded,
}

/// Write a job's result and complete (or fail) it in one transaction;
/// with `claim_next` (holder, lease), a completion also claims the
/// holder's next job, on the loop's own connection (`recorder`): two round
/// trips and the results' statements ([`Recorder`]).
async fn record(
    pool: &PgPool,
    recorder: &mut Recorder,
    job: &Claimed,
    result: &JobResult,
    claim_next: Option<(&str, Duration, &FairShare)>,
) -> Result<(Recorded, Option<Claimed>), QueueError> {
    let completes = matches!(result, JobResult::Compiled { .. } | JobResult::Played { .. } | JobResult::GameValidated { .. });
    if let (Some((holder, lease, share)), true) = (claim_next, completes) {
        // Completed first in the transaction, so a lost lease stops it
        // before any result is written.
        let next = recorder.begin_complete_and_claim(job, holder, &Job::KINDS, lease, share).await?;
        let written = match recorder.conn() {
            Ok(conn) => write_completed(conn, result).await,
            Err(e) => Err(e),
        };
        return match written {
            Ok(()) => {
                recorder.commit().await?;
                Ok((Recorded::Completed, next))
            }
            Err(e) => {
                recorder.abandon().await;
                Err(e)
            }
        };
    }
    let mut tx = pool.begin().await?;
    let mut next = None;
    let recorded = match result {
        JobResult::Compiled { .. } | JobResult::Played { .. } | JobResult::GameValidated { .. } => {
            next = complete(&mut tx, job, claim_next).await?;
            write_completed(&mut tx, result).await?;
            Recorded::Completed
        }
        JobResult::Retry(why) => {
            match Queue::fail_in(&mut tx, job, why, true).await? {
                FailOutcome::Failed => fail_target(&mut tx, job, why).await?,
                FailOutcome::Retried(_) => {
                    if let Ok(Job::Match { match_id }) = job.job() {
                        store::note_match_retry(&mut tx, match_id, why).await?;
                    }
                }
            }
            Recorded::Failed
        }
        JobResult::Overloaded(why) => {
            match Queue::defer_in(&mut tx, job, why).await? {
                FailOutcome::Failed => fail_target(&mut tx, job, why).await?,
                FailOutcome::Retried(_) => {
                    if let Ok(Job::Match { match_id }) = job.job() {
                        store::note_match_retry(&mut tx, match_id, why).await?;
                    }
                }
            }
            Recorded::Overloaded
        }
        JobResult::Fail(why) => {
            Queue::fail_in(&mut tx, job, why, false).await?;
            fail_target(&mut tx, job, why).await?;
            Recorded::Failed
        }
    };
    tx.commit().await?;
    Ok((recorded, next))
}

/// The results of a completed job, in the transaction that completes it.
async fn write_completed(conn: &mut sqlx::PgConnection, result: &JobResult) -> Result<(), QueueError> {
    match result {
        JobResult::Compiled { version, outcome, log } => store::record_compile(conn, *version, outcome, log).await?,
        JobResult::Played { match_id, outcome, frames_gz, data } => {
            record_match(conn, *match_id, outcome).await?;
            crate::db::bot_data::record(conn, *match_id, data).await?;
            if let Some(gz) = frames_gz {
                crate::db::replays::record_frames(conn, *match_id, gz).await?;
            }
        }
        JobResult::GameValidated { game, passed, log } => crate::db::games::record_validation(conn, *game, *passed, log).await?,
        JobResult::Retry(_) | JobResult::Overloaded(_) | JobResult::Fail(_) => {}
    }
    Ok(())
}

/// Complete `job` in `tx`, claiming the next when asked. First in the
/// transaction, so a lost lease stops it before any result is written.
async fn complete(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    job: &Claimed,
    claim_next: Option<(&str, Duration, &FairShare)>,
) -> Result<Option<Claimed>, QueueError> {
    match claim_next {
        Some((holder, lease, share)) => Queue::complete_and_claim(tx, job, holder, &Job::KINDS, lease, share).await,
        None => Queue::complete(tx, job).await.map(|()| None),
    }
}

/// A job failed for good: say so on what it was for.
async fn fail_target(tx: &mut sqlx::PgConnection, job: &Claimed, why: &str) -> Result<(), sqlx::Error> {
    match job.job() {
        Ok(Job::Compile { version }) => store::fail_version(tx, version, &format!("koth could not compile this version: {why}")).await,
        Ok(Job::Match { match_id }) => store::fail_match(tx, match_id, why).await,
        Ok(Job::ValidateGame { game }) => {
            crate::db::games::record_validation(tx, game, false, &format!("refused: koth could not validate this game: {why}")).await
        }
        // Nothing koth made: nothing to mark.
        Err(_) => Ok(()),
    }
}

/// How often a running match's turns are written for its page.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Write the turns the engine has played (`live`) for the match's page
/// every [`PROGRESS_EVERY`], until aborted. A failed write is only logged
/// and its turns go with the next one: the page is for people watching,
/// never a reason to stop a match.
async fn report_live(pool: PgPool, match_id: i64, lease: i64, live: Arc<LiveTurns>) {
    let mut unwritten: Vec<Turn> = Vec::new();
    loop {
        tokio::time::sleep(PROGRESS_EVERY).await;
        let (played, turns) = live.take();
        unwritten.extend(turns);
        if unwritten.is_empty() {
            continue;
        }
        let json = match serde_json::to_vec(&unwritten) {
            Ok(j) => j,
            Err(e) => {
                tracing::debug!(match_id, "turns that cannot be written as JSON: {e}");
                return;
            }
        };
        match store::report_live(&pool, match_id, lease, played, unwritten[0].turn, &json).await {
            Ok(_) => unwritten.clear(),
            Err(e) => tracing::debug!(match_id, "writing its turns failed: {e}"),
        }
    }
}

async fn execute(pool: &PgPool, cfg: &Arc<WorkerConfig>, job: &Claimed) -> JobResult {
    let lease = job.lease;
    let job = match job.job() {
        Ok(j) => j,
        Err(e) => return JobResult::Fail(e),
    };
    match job {
        Job::Compile { version } => {
            let src = match store::version_source(pool, version).await {
                Ok(Some(s)) => s,
                Ok(None) => return JobResult::Fail(format!("version {version} does not exist")),
                Err(e) => return JobResult::Retry(format!("reading version {version}: {e}")),
            };
            let cfg = cfg.clone();
            match tokio::task::spawn_blocking(move || compile_job(&cfg.builder, &src)).await {
                Ok(r) => r,
                Err(e) => JobResult::Retry(format!("the compile thread failed: {e}")),
            }
        }
        Job::ValidateGame { game } => {
            let source = match crate::db::games::source(pool, game).await {
                Ok(Some(s)) => s,
                Ok(None) => return JobResult::Fail(format!("game {game} does not exist")),
                Err(e) => return JobResult::Retry(format!("reading game {game}: {e}")),
            };
            let cfg = cfg.clone();
            match tokio::task::spawn_blocking(move || validate_game_job(&cfg, game, &source)).await {
                Ok(r) => r,
                Err(e) => JobResult::Retry(format!("the validation thread failed: {e}")),
            }
        }
        Job::Match { match_id } => {
            let m = match store::match_to_play(pool, match_id).await {
                Ok(Some(m)) => m,
                Ok(None) => return JobResult::Fail(format!("match {match_id} does not exist")),
                Err(e) => return JobResult::Retry(format!("reading match {match_id}: {e}")),
            };
            // An added game's files, if this runner has not loaded them.
            let source = match &m.added_game {
                Some((id, hash)) if cfg.added_games.get(hash).is_none() => match crate::db::games::source(pool, *id).await {
                    Ok(s) => s,
                    Err(e) => return JobResult::Retry(format!("reading game {id}: {e}")),
                },
                _ => None,
            };
            // Each seat's data, where the ladder carries it (its latest
            // snapshot; empty for a version that has none).
            let data = if m.settings.bot_data {
                let versions: Vec<i64> = m.seats.iter().map(|s| s.version_id).collect();
                match crate::db::bot_data::latest(pool, &versions).await {
                    Ok(d) => Some(d),
                    Err(e) => return JobResult::Retry(e),
                }
            } else {
                None
            };
            let cfg = cfg.clone();
            // The engine hands over its turns; this task writes them for
            // the match's page.
            let live = Arc::new(LiveTurns::new());
            let reporter = tokio::spawn(report_live(pool.clone(), match_id, lease, live.clone()));
            let result = match tokio::task::spawn_blocking(move || match_job(&cfg, &m, source.as_deref(), live, data)).await {
                Ok(r) => r,
                Err(e) => JobResult::Retry(format!("the match thread failed: {e}")),
            };
            reporter.abort();
            result
        }
    }
}

fn compile_job(builder: &Builder, src: &store::VersionSource) -> JobResult {
    let sub = match Submission::from_stored(&src.language, &src.main, &src.source) {
        Ok(s) => s,
        Err(e) => return JobResult::Compiled { version: src.version_id, outcome: CompileOutcome::Failed, log: e },
    };
    // Not this runner's language (the API refuses uploads no runner can
    // run, but runners differ): another runner may have it.
    if let Err(why) = builder.availability(sub.language) {
        return JobResult::Retry(format!("this runner cannot run {}: {why}", sub.language.display));
    }
    match builder.build(&sub) {
        Ok((image, compiled)) => JobResult::Compiled {
            version: src.version_id,
            outcome: CompileOutcome::Compiled { artifact: compiled.artifact.to_tar(), image: image.id.clone() },
            log: compiled.log,
        },
        Err(PrepareError::Build(BuildError::Compile { reason, log })) => {
            JobResult::Compiled { version: src.version_id, outcome: CompileOutcome::Failed, log: format!("{reason}\n{log}") }
        }
        Err(PrepareError::Rejected(e)) => {
            JobResult::Compiled { version: src.version_id, outcome: CompileOutcome::Failed, log: e.to_string() }
        }
        Err(e) => JobResult::Retry(e.to_string()),
    }
}

/// An added game's validation: its referee built, then a match between
/// its example bots (each seat one of them, in turn, as many seats as
/// there are examples within the game's range), judged by
/// [`validation::judge_game`]. A referee or example that does not build
/// refuses the game; a language this runner lacks leaves it to another.
fn validate_game_job(cfg: &WorkerConfig, id: i64, source: &[u8]) -> JobResult {
    let refused = |log: String| JobResult::GameValidated { game: id, passed: false, log };
    let package = match GamePackage::from_tar(source) {
        Ok(p) => p,
        Err(e) => return refused(format!("refused: {e}")),
    };
    let referee = &package.manifest.referee;
    let lang = match &referee.language {
        Some(l) => koth_runner::language::by_name(l),
        None => referee.main.rsplit_once('.').and_then(|(_, ext)| koth_runner::language::by_extension(ext)),
    };
    if let Some(lang) = lang {
        if let Err(why) = cfg.builder.availability(lang) {
            return JobResult::Retry(format!("this runner cannot run {}, the referee's language: {why}", lang.display));
        }
    }
    // This machine failing to build the referee or an example (a box, an
    // image) says nothing of the game: played again, here or elsewhere.
    let game = match cfg.added_games.load(&package, &cfg.builder) {
        Ok(g) => g,
        Err(e) => return validation_fault(id, e.into(), "loading the game", ""),
    };
    // So also the example bots' languages (the same folder read again).
    for name in package.example_bots() {
        let path = game.dir.join(koth_runner::game::EXAMPLE_BOTS).join(&name);
        if let Ok(sub) = Submission::from_path(&path, &cfg.builder.limits) {
            if let Err(why) = cfg.builder.availability(sub.language) {
                return JobResult::Retry(format!("this runner cannot run {}, example bot {name}'s language: {why}", sub.language.display));
            }
        }
    }
    let bots = match game.example_bots(&cfg.builder) {
        Ok(b) => b,
        Err(e) => return validation_fault(id, e.into(), "building its example bots", ""),
    };
    let (lo, hi) = game.manifest.seat_range();
    let seats: Vec<BotSpec> = (0..bots.len().clamp(lo, hi)).map(|i| bots[i % bots.len()].clone()).collect();
    let names: Vec<String> = seats.iter().map(|b| b.name.clone()).collect();
    let game = Game::External(game);
    let cores = cfg.cores.try_lease(game.thinking_at_once(seats.len()));
    let opts = MatchOptions {
        sandbox: cfg.match_sandbox.clone(),
        max_turns: Some(validation::MAX_TURNS.min(game.turn_bound())),
        wall_cap: Some(Duration::from_secs(validation::MAX_SECONDS.into())),
        cores: cores.as_ref().map_or_else(Vec::new, |c| c.cores().to_vec()),
        replay_limit: cfg.replay_limit,
        // Its replay is not kept: compressed as it is played, its memory
        // is a fraction of the limit's.
        replay_to: ReplayTo::Zstd { level: 1 },
        ..MatchOptions::new(game, 1)
    };
    let report = match play(&opts, seats) {
        Ok(r) => r,
        Err(e) => return validation_fault(id, e.into(), "playing its validation match", "its validation match cannot be played: "),
    };
    if let koth_games::replay::EndedBy::HostOverloaded { reason, .. } = &report.ended_by {
        return JobResult::Overloaded(format!("its validation match: the machine was overloaded, no bot was at fault: {reason}"));
    }
    let outcomes: Vec<SeatOutcome> = report.outcomes.iter().map(seat_outcome).collect();
    let failed = match &report.ended_by {
        koth_games::replay::EndedBy::RefereeFailed { reason } => Some(reason.as_str()),
        _ => None,
    };
    match validation::judge_game(&names, &outcomes, report.turns, failed, report.referee_stderr.as_deref().unwrap_or("")) {
        validation::Verdict::Passed(log) => JobResult::GameValidated { game: id, passed: true, log },
        validation::Verdict::Refused(log) => refused(log),
    }
}

/// A failure on the external-game path (loading a game, building its
/// referee or example bots, playing), by whose fault it is.
#[derive(Clone, Debug, PartialEq)]
enum Fault {
    /// This machine's (a box, an image, the disk): another try, here or
    /// on another runner, may succeed.
    Host(String),
    /// The game's or the match's (its folder, its sources, seats it
    /// refuses): the same on any runner.
    Game(String),
}

impl From<GameError> for Fault {
    fn from(e: GameError) -> Self {
        match e {
            GameError::Host(why) => Fault::Host(why),
            GameError::Invalid(why) => Fault::Game(why),
        }
    }
}

impl From<koth_runner::engine::EngineError> for Fault {
    fn from(e: koth_runner::engine::EngineError) -> Self {
        match e {
            koth_runner::engine::EngineError::Host(why) => Fault::Host(why),
            koth_runner::engine::EngineError::Invalid(why) => Fault::Game(why),
        }
    }
}

/// What an added game's validation job becomes when `step` failed: the
/// machine's fault is retried, the game's refuses it (its log says why,
/// after `game_says`).
fn validation_fault(game: i64, fault: Fault, step: &str, game_says: &str) -> JobResult {
    match fault {
        Fault::Host(why) => JobResult::Retry(format!("{step}: {why}")),
        Fault::Game(why) => JobResult::GameValidated { game, passed: false, log: format!("refused: {game_says}{why}") },
    }
}

/// What a match job becomes when `step` failed: the machine's fault is
/// retried, the game's fails the match for good (`game_says`: why).
fn match_fault(fault: Fault, step: &str, game_says: &str) -> JobResult {
    match fault {
        Fault::Host(why) => JobResult::Retry(format!("{step}: {why}")),
        Fault::Game(why) => JobResult::Fail(format!("{game_says}: {why}")),
    }
}

/// What becomes of a match that ended with no result.
fn without_result(ended_by: &koth_games::replay::EndedBy) -> Option<JobResult> {
    match ended_by {
        // A referee that failed leaves a match with no result: it rates nobody.
        koth_games::replay::EndedBy::RefereeFailed { reason } => Some(JobResult::Fail(format!("the game's referee failed: {reason}"))),
        // The machine, not a bot, failed a move: nobody is charged or
        // rated, and the match is played again (the queue bounds how often,
        // and says the reason when it gives up).
        koth_games::replay::EndedBy::HostOverloaded { reason, .. } => {
            Some(JobResult::Overloaded(format!("the machine playing it was overloaded, no bot was at fault: {reason}")))
        }
        koth_games::replay::EndedBy::Rules
        | koth_games::replay::EndedBy::TurnLimit { .. }
        | koth_games::replay::EndedBy::WallClockCap { .. }
        | koth_games::replay::EndedBy::ReplayLimit { .. } => None,
    }
}

fn job_error(r: &JobResult) -> &str {
    match r {
        JobResult::Retry(why) | JobResult::Overloaded(why) | JobResult::Fail(why) => why,
        _ => "",
    }
}

/// A seat's outcome as the ladder takes it. A match with no result is
/// never recorded ([`without_result`] comes first); an added game's
/// validation match whose referee failed is judged on statuses only, so
/// its seats' missing result reads as a tie there.
fn seat_outcome(o: &koth_runner::engine::BotOutcome) -> SeatOutcome {
    SeatOutcome {
        seat: o.seat as i32,
        score: o.score,
        rank: o.rank as u32,
        result: o.result.unwrap_or(koth_games::MatchResult::Tie),
        status: o.status.clone(),
        stderr: o.stderr.clone(),
        stderr_turns: o.stderr_turns.clone(),
        moves: o.moves,
        timeouts: o.timeouts,
        invalid_moves: o.invalid_moves,
    }
}

/// `source`: an added game's stored files, read when this runner had not
/// loaded the game.
/// `data`: each version's latest snapshot, where the ladder carries bot
/// data.
fn match_job(
    cfg: &WorkerConfig,
    m: &store::MatchToPlay,
    source: Option<&[u8]>,
    live: Arc<LiveTurns>,
    data: Option<std::collections::HashMap<i64, koth_runner::storage::Snapshot>>,
) -> JobResult {
    let game: Game = match &m.added_game {
        // An added game: written out and its referee built once per runner.
        Some((id, hash)) => {
            let loaded = match (cfg.added_games.get(hash), source) {
                (Some(g), _) => Ok(g),
                (None, Some(source)) => {
                    GamePackage::from_tar(source).map_err(GameError::Invalid).and_then(|p| cfg.added_games.load(&p, &cfg.builder))
                }
                (None, None) => Err(GameError::Invalid(format!("game {id} has no files"))),
            };
            match loaded {
                Ok(g) => Game::External(g),
                // It passed its validation: this machine failed, or this
                // koth reads its folder otherwise than the one that took it.
                Err(e) => return match_fault(e.into(), "loading the game", "the game cannot be played"),
            }
        }
        None => match GameKind::from_name(&m.game) {
            Some(g) => g.into(),
            None => return JobResult::Fail(format!("unknown game {:?}", m.game)),
        },
    };
    let mut bots = Vec::new();
    for s in &m.seats {
        let sub = match Submission::from_stored(&s.language, &s.main, &s.source) {
            Ok(sub) => sub,
            Err(e) => return JobResult::Fail(format!("seat {}: {e}", s.seat)),
        };
        let image = match cfg.builder.image(sub.language) {
            Ok(i) => i,
            Err(e) => return JobResult::Retry(e.to_string()),
        };
        let stored = match (&s.artifact, &s.image_id) {
            (Some(a), Some(id)) if *id == image.id => Artifact::from_tar(a).ok(),
            _ => None,
        };
        let artifact = match stored {
            Some(a) => a,
            // Built in another image (or not at all): build here.
            None => match cfg.builder.build(&sub) {
                Ok((_, c)) => c.artifact,
                Err(PrepareError::Build(BuildError::Compile { reason, .. })) => {
                    return JobResult::Fail(format!("seat {} ({}) does not compile here: {reason}", s.seat, s.bot_name))
                }
                Err(e) => return JobResult::Retry(e.to_string()),
            },
        };
        bots.push(BotSpec::new(s.bot_name.clone(), &sub, &image, &artifact));
    }
    let quota = match m.settings.data_quota() {
        Ok(q) => q.filter(|_| game.keeps_bot_data()),
        Err(e) => return JobResult::Fail(format!("the ladder's settings: {e}")),
    };
    let seat_data: Vec<Option<SeatData>> = match (&data, quota) {
        (Some(latest), Some(quota)) => {
            m.seats.iter().map(|s| latest.get(&s.version_id).map(|from| SeatData { from: from.clone(), quota })).collect()
        }
        _ => Vec::new(),
    };
    let cores = cfg.cores.try_lease(game.thinking_at_once(bots.len()));
    let opts = MatchOptions {
        sandbox: cfg.match_sandbox.clone(),
        max_turns: m.settings.max_turns,
        wall_cap: m.settings.max_match_seconds.map(|s| std::time::Duration::from_secs(s.into())),
        live: Some(live),
        boxes: Some(cfg.boxes.clone()),
        cores: cores.as_ref().map_or_else(Vec::new, |c| c.cores().to_vec()),
        // Compressed as it is played, as it is stored: the runner holds
        // the packed replay, never the match's turns.
        replay_to: ReplayTo::Zstd { level: crate::packed::REPLAY_LEVEL },
        replay_limit: cfg.replay_limit,
        data: seat_data,
        ..MatchOptions::new(game.clone(), m.seed as u64)
    };
    let report = match play(&opts, bots) {
        Ok(r) => r,
        // The same on any runner: fail it now, with the reason.
        Err(e) => return match_fault(e.into(), "playing", "this match cannot be played"),
    };
    if let Some(unfinished) = without_result(&report.ended_by) {
        tracing::warn!(match_id = m.match_id, "the match has no result: {}", job_error(&unfinished));
        return unfinished;
    }
    let seats = report.outcomes.iter().map(seat_outcome).collect();
    let data = report
        .outcomes
        .iter()
        .zip(&m.seats)
        .filter_map(|(o, s)| {
            let d = o.data.as_ref()?;
            Some(crate::db::bot_data::SeatData {
                seat: s.seat,
                version_id: s.version_id,
                started_from: d.started_from.clone(),
                packed: d.snapshot.clone(),
                note: d.kept_because.clone(),
            })
        })
        .collect();
    // Only an added game's referee can draw its frames: drawn here, where
    // it runs, by a fresh run of it over the replay, which must make the
    // same judgements, events and result again. A failure loses the
    // pictures, not the match.
    let frames_gz = match &game {
        Game::External(_) => match report.replay.read().and_then(|r| game.checked_frames(&r, &cfg.match_sandbox)) {
            Ok(f) => serde_json::to_vec(&f).ok().map(|json| crate::packed::gzip(&json)),
            Err(e) => {
                tracing::warn!(match_id = m.match_id, "the game's referee could not draw the match: {e}");
                None
            }
        },
        Game::Builtin(_) => None,
    };
    // Packed as it was played, on the runner's thread, not in the result's transaction.
    let replay = match PackedReplay::from_recorded(report.replay) {
        Ok(r) => r,
        Err(e) => return JobResult::Retry(format!("its replay: {e}")),
    };
    JobResult::Played {
        frames_gz,
        data,
        match_id: m.match_id,
        outcome: MatchOutcome { engine: ENGINE_VERSION.to_owned(), turns: report.turns, replay, seats },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use koth_games::replay::EndedBy;

    /// On the external-game path, the machine's failures (a referee's box
    /// that cannot be built, an image missing, the disk) retry the job,
    /// the game's fail the match or refuse the game, whichever step failed.
    #[test]
    fn a_host_failure_retries_and_a_game_fault_ends_the_job() {
        use koth_runner::engine::EngineError;
        let host_referee = "the referee's box: mounting /tmp/x: Not a directory";
        let faults: [(&str, Fault, bool); 4] = [
            ("a referee box that cannot be built", EngineError::Host(host_referee.into()).into(), true),
            ("seats the game refuses", EngineError::Invalid("the game takes exactly 2 seats".into()).into(), false),
            ("an image missing for the referee", GameError::Host("no python image: run koth languages build".into()).into(), true),
            ("a referee that does not compile", GameError::Invalid("referee.c: error: expected ';'".into()).into(), false),
        ];
        for (what, fault, host) in faults {
            let why = match &fault {
                Fault::Host(w) | Fault::Game(w) => w.clone(),
            };
            match (match_fault(fault.clone(), "playing", "this match cannot be played"), host) {
                (JobResult::Retry(r), true) => assert_eq!(r, format!("playing: {why}"), "{what}"),
                (JobResult::Fail(f), false) => assert_eq!(f, format!("this match cannot be played: {why}"), "{what}"),
                (other, _) => panic!("{what}: a match job became {:?}", job_error(&other)),
            }
            match (validation_fault(7, fault, "playing its validation match", "its validation match cannot be played: "), host) {
                (JobResult::Retry(r), true) => assert_eq!(r, format!("playing its validation match: {why}"), "{what}"),
                (JobResult::GameValidated { game: 7, passed: false, log }, false) => {
                    assert_eq!(log, format!("refused: its validation match cannot be played: {why}"), "{what}")
                }
                (other, _) => panic!("{what}: a validation job became {:?} (passed or retried wrongly)", job_error(&other)),
            }
        }
    }

    /// A match the machine failed is played again and rates nobody; one
    /// whose referee failed is failed for good; the others have results.
    #[test]
    fn an_overloaded_loop_pauses_longer_each_time_in_a_row_up_to_half_a_minute() {
        for (in_a_row, jitter, want_ms) in [
            (1, 0.5, 1000),
            (2, 0.5, 2000),
            (3, 0.5, 4000),
            (5, 0.5, 16000),
            (6, 0.5, 30000),
            (40, 0.5, 30000),
            (1, 0.0, 500),
            (1, 1.0, 1500),
            (6, 1.0, 45000),
            // Out-of-range jitter is clamped, never a negative or huge pause.
            (2, -3.0, 1000),
            (2, 9.0, 3000),
        ] {
            assert_eq!(overload_pause(in_a_row, jitter), Duration::from_millis(want_ms), "{in_a_row} in a row, jitter {jitter}");
        }
    }

    #[test]
    fn a_match_with_no_result_is_retried_only_when_the_machine_failed_it() {
        let overloaded = EndedBy::HostOverloaded { turn: 3, reason: "on turn 3, a: the match engine itself was stopped".into() };
        let Some(JobResult::Overloaded(why)) = without_result(&overloaded) else { panic!("not played again") };
        assert!(why.contains("overloaded, no bot was at fault") && why.contains("turn 3"), "{why}");
        let failed = EndedBy::RefereeFailed { reason: "it crashed".into() };
        assert!(matches!(without_result(&failed), Some(JobResult::Fail(why)) if why.contains("it crashed")));
        for ended in [
            EndedBy::Rules,
            EndedBy::TurnLimit { turns: 5 },
            EndedBy::WallClockCap { seconds: 1.0 },
            EndedBy::ReplayLimit { turn: 9, limit_bytes: 1 << 20 },
        ] {
            assert!(without_result(&ended).is_none(), "{ended:?}");
        }
    }
}
