//! `koth bench queue`: throughput of no-op jobs through koth's queue with
//! 1, 2 and 4 workers, against the raw `FOR UPDATE SKIP LOCKED` claim and
//! the completion, each committed on its own, run by `pgbench` with as many
//! clients, in the same run on the same server. koth is measured three
//! ways:
//! - a claim, then the completion in a transaction of its own;
//! - as `koth runner` works: on its worker loop's own connection, `BEGIN`
//!   and the completion claiming the next job in one round trip
//!   ([`Recorder`]), then `COMMIT`; the runner writes the job's results in
//!   that transaction, between the two;
//! - the queue alone: that one statement, its own transaction, on a
//!   connection the worker keeps, each worker on a thread of its own as
//!   pgbench's clients are: what the queue itself costs a job (one
//!   round trip, fenced and exactly-once all the same).
//!
//! Everything runs twice: with commits synced to disk (the server's
//! default; both sides bound by the syncs) and with `synchronous_commit =
//! off` (commits cheap; what each side costs in round trips and CPU shows).
//! Beside the rates: the CPU time per job of the client (this process, or
//! pgbench) and, on the run's own server, of every PostgreSQL process.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Args;
use koth_scheduler::db::queue::{claim_on, FairShare, Queue, QueueError, Recorder};
use koth_scheduler::pg::PrivatePostgres;
use sqlx::PgPool;

#[derive(Args)]
pub struct QueueBenchArgs {
    /// PostgreSQL URL (default: a private server started for the run).
    #[arg(long)]
    database_url: Option<String>,
    /// No-op jobs per measurement.
    #[arg(long, default_value_t = 5000)]
    jobs: u32,
    /// Worker counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    workers: Vec<u32>,
    /// Measurements of each, alternated; medians are printed.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
}

/// CPU time (user + system) of this process, or of its waited-for
/// children: what each side's client spends, server aside.
fn cpu(who: libc::c_int) -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// CPU time of a PostgreSQL server, given its postmaster's pid: the
/// postmaster's own, its exited children's (backends of closed
/// connections, counted when it reaps them) and its live children's. The
/// difference of two readings is what the server spent between them,
/// whichever backends came and went. From /proc, in clock ticks.
fn server_cpu(postmaster: i32) -> Option<Duration> {
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // The fields from the 4th (ppid) on, after the command's closing
    // parenthesis and the state: ppid is [0], utime, stime, cutime and
    // cstime (the 14th to 17th) are [10] to [13].
    let fields = |pid: &str| -> Option<Vec<u64>> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &stat[stat.rfind(')')? + 2..];
        Some(rest.split(' ').skip(1).take(14).map(|f| f.parse().unwrap_or(0)).collect())
    };
    let me = fields(&postmaster.to_string())?;
    let mut ticks = me.get(10..14)?.iter().sum::<u64>();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|n| n.bytes().all(|b| b.is_ascii_digit())) else { continue };
        if let Some(f) = fields(pid).filter(|f| f.len() == 14 && f[0] == postmaster as u64) {
            ticks += f[10] + f[11];
        }
    }
    Some(Duration::from_secs_f64(ticks as f64 / tick))
}

/// One measurement: jobs per second, and the client's and the server's CPU
/// time per job in microseconds (the server's when it is this run's own);
/// for koth's workers, each job's claim-to-start latency: from the moment
/// a worker is done with a job to the moment it holds the next one,
/// committed (its completion and the claim of the next, with the
/// transaction's `BEGIN` and `COMMIT` where there is one), in µs.
#[derive(Clone)]
struct Measured {
    rate: f64,
    client_us: f64,
    server_us: Option<f64>,
    latency_us: Vec<f64>,
    /// Jobs whose statements the server rolled back to break a deadlock
    /// with another worker's, and that were run again, as the runner does.
    conflicts: u64,
}

/// What `f` did to `jobs` jobs in `elapsed`: its rate, the CPU time per job
/// of the client (`client` before) and of the server.
fn measured(jobs: u32, elapsed: Duration, client: Duration, server: Option<(i32, Duration)>, who: libc::c_int) -> Measured {
    let per_job = |d: Duration| d.as_secs_f64() * 1e6 / jobs as f64;
    Measured {
        rate: jobs as f64 / elapsed.as_secs_f64(),
        client_us: per_job(cpu(who).saturating_sub(client)),
        server_us: server.and_then(|(pid, before)| Some(per_job(server_cpu(pid)?.saturating_sub(before)))),
        latency_us: Vec::new(),
        conflicts: 0,
    }
}

fn median(v: Vec<f64>) -> f64 {
    quantile(v, 0.5)
}

fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(((v.len().max(1) - 1) as f64 * q).round() as usize).copied().unwrap_or(f64::NAN)
}

fn us(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e6
}

/// The claim and the completion as a queue must run them: each its own
/// transaction (a claim must commit before the job runs).
const CLAIM_SCRIPT: &str = "UPDATE jobs SET state = 'running', attempt = attempt + 1, holder = 'pgbench', lease = nextval('job_lease_seq'), lease_until = now() + interval '60 seconds' WHERE id = (SELECT id FROM jobs WHERE state = 'available' AND run_after <= now() AND kind = ANY('{noop}') ORDER BY priority DESC, run_after, id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id AS job \\gset
UPDATE jobs SET state = 'completed', finished_at = now(), lease_until = NULL WHERE id = :job AND state = 'running';
";

/// Queue `n` no-op jobs on a clean table: the last measurement's jobs
/// deleted and vacuumed away, so that every measurement starts from the
/// same table, not from the dead rows and index entries the ones before
/// it left (how many remain depends on when autovacuum last ran); then
/// the statistics of the table as it is now. (Taken before the insert,
/// they showed an empty table, and whether a claim scanned the table or
/// the index depended on when autovacuum analyzed it during the run: the
/// raw claim went at 1,600 or 9,000 jobs/s from one run to the next.)
async fn fill(pool: &PgPool, n: u32) -> anyhow::Result<()> {
    sqlx::query("DELETE FROM jobs WHERE kind = 'noop'").execute(pool).await?;
    sqlx::query("VACUUM jobs").execute(pool).await?;
    sqlx::query("INSERT INTO jobs (kind, max_attempts) SELECT 'noop', 1 FROM generate_series(1, $1)").bind(n as i32).execute(pool).await?;
    sqlx::query("ANALYZE jobs").execute(pool).await?;
    Ok(())
}

/// How koth's workers go through jobs.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    /// Claim; then complete in a transaction.
    ClaimThenComplete,
    /// As `koth runner`: the loop's own connection ([`Recorder`]), `BEGIN`
    /// with the completion claiming the next, and `COMMIT`: the
    /// transaction of the job's results.
    Runner,
    /// The queue alone: that statement as its own transaction, on a
    /// connection the worker keeps, on a thread of its own.
    QueueAlone,
}

/// The queue alone with `workers` workers, each on a thread of its own
/// with a single-threaded runtime and a connection of its own, as pgbench
/// runs its clients (`-j`): the queue's statements against pgbench's, not
/// one client's scheduler against another's. (On tokio's shared
/// multi-threaded runtime the same workers went 10-15% slower with two of
/// them, `QueueAlone` on 20,000 jobs.) Connections are made before the
/// clock starts, as pgbench's are.
async fn queue_alone(pool: &PgPool, workers: u32, jobs: u32, synced: bool, server: Option<i32>) -> anyhow::Result<Measured> {
    fill(pool, jobs).await?;
    let options = pool.connect_options();
    let ready = std::sync::Arc::new(std::sync::Barrier::new(workers as usize + 1));
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let (options, ready) = (options.clone(), ready.clone());
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                rt.block_on(async move {
                    use sqlx::Connection;
                    let connected = async {
                        let mut conn = sqlx::PgConnection::connect_with(&options).await?;
                        if !synced {
                            sqlx::query("SET synchronous_commit = off").execute(&mut conn).await?;
                        }
                        anyhow::Ok(conn)
                    }
                    .await;
                    // Past the barrier whatever happened, so that no one waits for ever.
                    ready.wait();
                    let mut conn = connected?;
                    let (name, lease, share) = (format!("bench-{w}"), Duration::from_secs(60), FairShare::default());
                    let (mut done, mut latency, mut conflicts) = (0u32, Vec::with_capacity(jobs as usize), 0u64);
                    let mut job = claim_on(&mut conn, &name, &["noop"], lease, &share).await?;
                    while let Some(j) = job {
                        let t = Instant::now();
                        // Rolled back to break a deadlock: run again, as the runner does.
                        job = loop {
                            match Queue::complete_and_claim(&mut conn, &j, &name, &["noop"], lease, &share).await {
                                Err(QueueError::Conflict(_)) => conflicts += 1,
                                other => break other?,
                            }
                        };
                        latency.push(us(t));
                        done += 1;
                    }
                    anyhow::Ok((done, latency, conflicts))
                })
            })
        })
        .collect();
    ready.wait();
    let server = server.and_then(|pid| Some((pid, server_cpu(pid)?)));
    let started = Instant::now();
    let cpu_before = cpu(libc::RUSAGE_SELF);
    let (mut total, mut latency, mut conflicts) = (0, Vec::new(), 0);
    for t in threads {
        let (done, l, c) = t.join().map_err(|_| anyhow::anyhow!("a worker thread panicked"))??;
        total += done;
        latency.extend(l);
        conflicts += c;
    }
    anyhow::ensure!(total == jobs, "koth completed {total} of {jobs} jobs");
    Ok(Measured { latency_us: latency, conflicts, ..measured(jobs, started.elapsed(), cpu_before, server, libc::RUSAGE_SELF) })
}

/// koth's queue with `workers` workers; `server`: the postmaster's pid.
async fn koth_rate(pool: &PgPool, workers: u32, jobs: u32, way: Way, synced: bool, server: Option<i32>) -> anyhow::Result<Measured> {
    if way == Way::QueueAlone {
        return queue_alone(pool, workers, jobs, synced, server).await;
    }
    fill(pool, jobs).await?;
    let server = server.and_then(|pid| Some((pid, server_cpu(pid)?)));
    let started = Instant::now();
    let cpu_before = cpu(libc::RUSAGE_SELF);
    let mut tasks = Vec::new();
    for w in 0..workers {
        let q = Queue::new(pool.clone());
        let mut recorder = Recorder::new(pool);
        tasks.push(tokio::spawn(async move {
            let name = format!("bench-{w}");
            let lease = Duration::from_secs(60);
            let (mut done, mut latency, mut conflicts) = (0u32, Vec::new(), 0u64);
            let mut job = q.claim(&name, &["noop"], lease).await?;
            while let Some(j) = job {
                let t = Instant::now();
                job = match way {
                    Way::ClaimThenComplete => {
                        let mut tx = q.pool().begin().await?;
                        Queue::complete(&mut tx, &j).await?;
                        tx.commit().await?;
                        loop {
                            match q.claim(&name, &["noop"], lease).await {
                                Err(QueueError::Conflict(_)) => conflicts += 1,
                                other => break other?,
                            }
                        }
                    }
                    // The runner's way (the queue alone is `queue_alone`'s):
                    // its loop's own connection, `BEGIN` with the
                    // completion claiming the next, the results (none
                    // here), `COMMIT`.
                    _ => {
                        let next = recorder.begin_complete_and_claim(&j, &name, &["noop"], lease, q.fair_share()).await?;
                        recorder.commit().await?;
                        next
                    }
                };
                latency.push(us(t));
                done += 1;
            }
            // The recorder runs a recording again itself after a conflict.
            anyhow::Ok((done, latency, conflicts + recorder.conflicts()))
        }));
    }
    let (mut total, mut latency, mut conflicts) = (0, Vec::new(), 0);
    for t in tasks {
        let (done, l, c) = t.await??;
        total += done;
        latency.extend(l);
        conflicts += c;
    }
    anyhow::ensure!(total == jobs, "koth completed {total} of {jobs} jobs");
    Ok(Measured { latency_us: latency, conflicts, ..measured(jobs, started.elapsed(), cpu_before, server, libc::RUSAGE_SELF) })
}

/// The raw statements run by pgbench (its rate as it reports it, its CPU
/// time as the client's).
#[allow(clippy::too_many_arguments)]
async fn pgbench_rate(
    pool: &PgPool,
    port: u16,
    clients: u32,
    jobs: u32,
    script: &std::path::Path,
    synced: bool,
    server: Option<i32>,
) -> anyhow::Result<Measured> {
    fill(pool, jobs).await?;
    let server = server.and_then(|pid| Some((pid, server_cpu(pid)?)));
    let started = Instant::now();
    let cpu_before = cpu(libc::RUSAGE_CHILDREN);
    let per_client = jobs / clients;
    let pgbench = koth_scheduler::pg::find_binaries().map(|d| d.join("pgbench")).unwrap_or_else(|_| "pgbench".into());
    let out = Command::new(pgbench)
        .env("PGOPTIONS", if synced { "" } else { "-c synchronous_commit=off" })
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "koth", "-n", "-M", "prepared", "-f"])
        .arg(script)
        .args(["-c", &clients.to_string(), "-j", &clients.to_string(), "-t", &per_client.to_string(), "koth"])
        .output()
        .map_err(|e| anyhow::anyhow!("running pgbench: {e}; it comes with PostgreSQL's server binaries"))?;
    let m = measured(per_client * clients, started.elapsed(), cpu_before, server, libc::RUSAGE_CHILDREN);
    let text = String::from_utf8_lossy(&out.stdout);
    anyhow::ensure!(out.status.success(), "pgbench failed: {}{}", text, String::from_utf8_lossy(&out.stderr));
    let tps = text
        .lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l["tps = ".len()..].split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| anyhow::anyhow!("no tps line in pgbench's output:\n{text}"))?;
    // Leave no job behind for the next measurement.
    sqlx::query("DELETE FROM jobs WHERE kind = 'noop' AND state = 'available'").execute(pool).await?;
    Ok(Measured { rate: tps, ..m })
}

pub fn run(a: QueueBenchArgs) -> anyhow::Result<i32> {
    let (private, url, port) = match &a.database_url {
        Some(u) => {
            let port = u.rsplit(':').next().and_then(|p| p.split('/').next()).and_then(|p| p.parse().ok()).unwrap_or(5432);
            (None, u.clone(), port)
        }
        None => {
            let dir = std::env::temp_dir().join(format!("koth-queue-bench-{}", std::process::id()));
            let pg = PrivatePostgres::start(&dir, None).map_err(|e| anyhow::anyhow!(e))?;
            let (url, port) = (pg.url(), pg.port());
            (Some(pg), url, port)
        }
    };
    let script: PathBuf = std::env::temp_dir().join(format!("koth-queue-bench-{}.sql", std::process::id()));
    std::fs::write(&script, CLAIM_SCRIPT)?;
    // The server's CPU is measured when it is this run's own.
    let postmaster: Option<i32> = private
        .as_ref()
        .and_then(|pg| std::fs::read_to_string(pg.data_dir().join("postmaster.pid")).ok())
        .and_then(|t| t.lines().next()?.trim().parse().ok());
    let rt = tokio::runtime::Runtime::new()?;
    let result = rt.block_on(async {
        let max = a.workers.iter().copied().max().unwrap_or(1) + 2;
        let synced_pool = koth_scheduler::db::connect_and_migrate(&url, max).await.map_err(|e| anyhow::anyhow!(e))?;
        // Set at each connection's start, so that the connections the
        // runner's way and the queue alone make from the pool's options
        // have it too.
        let cheap_options = url.parse::<sqlx::postgres::PgConnectOptions>()?.options([("synchronous_commit", "off")]);
        let cheap_pool = sqlx::postgres::PgPoolOptions::new().max_connections(max).connect_with(cheap_options).await?;
        println!("koth bench queue: {} no-op jobs per measurement, jobs/s; median of {} rounds, the four alternated", a.jobs, a.rounds);
        println!(
            "{:<7} {:>7} {:>8} {:>16} {:>6} {:>8} {:>6} {:>12} {:>6} {:>15} {:>15}   CPU µs/job, client + server: pgbench, runner, queue alone",
            "commits", "workers", "pgbench", "claim; complete", "ratio", "runner", "ratio", "queue alone", "ratio", "runner p50/p99", "alone p50/p99"
        );
        let ways = [Way::ClaimThenComplete, Way::Runner, Way::QueueAlone];
        // Deadlocks the server broke, each job's statement run again.
        let mut conflicts = [0u64; 3];
        for (synced, pool) in [(true, &synced_pool), (false, &cheap_pool)] {
            // Warm up every path once (connections, plans, caches).
            for way in ways {
                koth_rate(pool, 1, 300, way, synced, None).await?;
            }
            pgbench_rate(pool, port, 1, 300, &script, synced, None).await?;
            for &w in &a.workers {
                let mut raw = Vec::new();
                let mut koth: [Vec<Measured>; 3] = Default::default();
                for round in 0..a.rounds.max(1) as usize {
                    // Each round in another order, so none always goes first.
                    for i in 0..4 {
                        match (i + round) % 4 {
                            3 => raw.push(pgbench_rate(pool, port, w, a.jobs, &script, synced, postmaster).await?),
                            k => koth[k].push(koth_rate(pool, w, a.jobs, ways[k], synced, postmaster).await?),
                        }
                    }
                }
                let rate = |v: &[Measured]| median(v.iter().map(|x| x.rate).collect());
                let cpu = |v: &[Measured]| {
                    let client = median(v.iter().map(|x| x.client_us).collect());
                    match v.iter().map(|x| x.server_us).collect::<Option<Vec<f64>>>() {
                        Some(server) => format!("{client:.0} + {:.0}", median(server)),
                        None => format!("{client:.0}"),
                    }
                };
                let base = rate(&raw);
                for (k, v) in koth.iter().enumerate() {
                    conflicts[k] += v.iter().map(|m| m.conflicts).sum::<u64>();
                }
                // Every job's claim-to-start latency of every round, pooled.
                let latency = |v: &[Measured]| {
                    let all: Vec<f64> = v.iter().flat_map(|m| m.latency_us.iter().copied()).collect();
                    format!("{:.0}/{:.0}", quantile(all.clone(), 0.5), quantile(all, 0.99))
                };
                println!(
                    "{:<7} {:>7} {:>8.0} {:>16.0} {:>5.2}x {:>8.0} {:>5.2}x {:>12.0} {:>5.2}x {:>15} {:>15}   {}, {}, {}",
                    if synced { "synced" } else { "cheap" },
                    w,
                    base,
                    rate(&koth[0]),
                    rate(&koth[0]) / base,
                    rate(&koth[1]),
                    rate(&koth[1]) / base,
                    rate(&koth[2]),
                    rate(&koth[2]) / base,
                    latency(&koth[1]),
                    latency(&koth[2]),
                    cpu(&raw),
                    cpu(&koth[1]),
                    cpu(&koth[2]),
                );
            }
        }
        println!("pgbench: the claim and the completion as prepared statements (-M prepared), each committed on its own, as many clients as workers");
        println!("claim; complete: koth's claim, then the completion in a transaction of its own");
        println!("runner: as `koth runner` works: the worker loop's own connection, BEGIN with the completion claiming the next job in one round trip, COMMIT");
        println!("  (the runner writes the job's results in that transaction, between the two)");
        println!("queue alone: that one statement as its own transaction, on a connection the worker keeps, each worker on a thread of its own (as pgbench's clients): one round trip a job");
        println!("cheap: synchronous_commit = off on both sides");
        println!(
            "conflicts: {} claim; complete, {} runner, {} queue alone, in every measurement above: statements the server rolled back to break a deadlock between two workers' claims, each run again as the runner does",
            conflicts[0], conflicts[1], conflicts[2]
        );
        println!("p50/p99: claim-to-start latency in µs, every job of every round: from a worker done with a job to its next job claimed and committed");
        match postmaster {
            Some(_) => println!("CPU: medians of the client's (this process, or pgbench) and of the server's (every PostgreSQL process) time per job"),
            None => println!("CPU: the client's (this process, or pgbench) per job; the server's is measured only on the run's own server (no --database-url)"),
        }
        anyhow::Ok(0)
    });
    let _ = std::fs::remove_file(&script);
    if a.database_url.is_none() {
        // Stopped first: with its folder gone it could not be, and ran on.
        drop(private);
        let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("koth-queue-bench-{}", std::process::id())));
    }
    result
}
