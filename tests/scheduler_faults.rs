//! The scheduler and runners as separate `koth` processes against a real
//! PostgreSQL, under faults: runners killed with SIGKILL in the middle of
//! matches, many times over, and PostgreSQL restarted under running
//! workers. At the end every match has exactly one recorded result, nothing
//! is stuck, and the stored ratings equal a replay of the recorded results.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use koth_ladder::format::LadderConfig;
use koth_ladder::rating::{replay, MatchRecord, Rating, RatingSystem};
use koth_runner::submission::{Submission, SubmissionLimits};
use koth_scheduler::db::store;
use koth_testkit::TestPostgres;
use sqlx::{PgPool, Row};

fn postgres(name: &str) -> Option<TestPostgres> {
    koth_testkit::postgres(&koth_testkit::target_tmpdir!().join(format!("pg-{name}")))
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

// Each test's boxes run in a uid range of their own: the tests of this file
// run at once, and the killed-runner test's last check (no bot process of
// its range outlives its runners) must not see another test's bots still
// playing (CI failed so: it found a python3 bot and a C bot, the pair the
// SIGTERM test, still running, plays).
const UID_RANGE: u32 = 1000;
const KILLED_UIDS: u32 = 66000;
const RESTART_UIDS: u32 = KILLED_UIDS + UID_RANGE;
const SIGTERM_UIDS: u32 = RESTART_UIDS + UID_RANGE;
const STALLED_UIDS: u32 = SIGTERM_UIDS + UID_RANGE;

/// A `koth` service process; killed (SIGKILL) when dropped if still running.
struct Service {
    child: Child,
    name: String,
}

impl Service {
    fn start(args: &[&str], url: &str, name: &str, uids: u32) -> Service {
        let log = std::fs::File::create(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.log"))).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_koth"))
            .args(args)
            .env("DATABASE_URL", url)
            .env("KOTH_LOG", "info")
            .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/faults")
            .env("KOTH_SANDBOX_UID_BASE", uids.to_string())
            .env("KOTH_CACHE", PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("faults-cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting koth");
        Service { child, name: name.to_owned() }
    }

    fn runner(url: &str, name: &str, uids: u32) -> Service {
        Service::start(
            &["runner", "--name", name, "--lease", "3s", "--grace", "1s", "--allow-host-toolchains", "--memory", "256M"],
            url,
            name,
            uids,
        )
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then wait for a clean exit.
    fn stop(&mut self) -> Option<i32> {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill();
        None
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A rated Target ladder of four example bots (two Python, two C), short
/// matches.
async fn setup(pool: &PgPool) -> i64 {
    let settings = serde_json::json!({"seats": 2, "concurrency": 3, "newcomer_games": 2, "max_turns": 40});
    let settings = LadderConfig::parse("rated", &settings).unwrap();
    let ladder = store::create_ladder(pool, "target-faults", &koth_games::GameKind::Target.into(), &settings).await.unwrap();
    let owner = store::create_user(pool, "author", false).await.unwrap();
    for (i, path) in ["bots/target/drifter.py", "bots/target/still.c", "bots/target/drifter.py", "bots/target/still.c"].iter().enumerate() {
        let sub = Submission::from_path(&repo().join(path), &SubmissionLimits::default()).unwrap();
        let bot = store::create_bot(pool, ladder, owner, &format!("bot{i}")).await.unwrap();
        store::submit_version(pool, bot, &sub.language.name, &sub.main, &sub.source_tar(), &sub.source_hash()).await.unwrap();
    }
    ladder
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

/// Every finished match has all its seats' results and, when rated, one
/// rating change per seat; no job is left running or waiting; the stored
/// ratings equal a replay of the recorded results in the order they were
/// recorded.
async fn check_consistency(pool: &PgPool, ladder: i64) -> (i64, i64) {
    let finished = count(pool, "SELECT count(*) FROM matches WHERE state = 'finished'").await;
    let failed = count(pool, "SELECT count(*) FROM matches WHERE state = 'failed'").await;
    assert_eq!(count(pool, "SELECT count(*) FROM matches WHERE state = 'queued'").await, 0, "no match left queued");
    assert_eq!(count(pool, "SELECT count(*) FROM jobs WHERE state IN ('running', 'available')").await, 0, "no job left");
    assert_eq!(
        count(pool, "SELECT count(*) FROM match_seats s JOIN matches m ON m.id = s.match_id WHERE m.state = 'finished' AND s.rank IS NULL")
            .await,
        0,
        "every seat of a finished match has its result"
    );
    assert_eq!(
        count(
            pool,
            "SELECT count(*) FROM matches m WHERE m.state = 'finished' AND m.rated AND \
             (SELECT count(*) FROM rating_history h WHERE h.match_id = m.id) <> (SELECT count(*) FROM match_seats s WHERE s.match_id = m.id)"
        )
        .await,
        0,
        "each rated match changed each seat's rating exactly once"
    );
    assert_eq!(
        count(pool, "SELECT count(*) FROM rating_history h JOIN matches m ON m.id = h.match_id WHERE NOT m.rated OR m.state <> 'finished'")
            .await,
        0
    );
    // Replay in recording order.
    let rows = sqlx::query(
        "SELECT h.match_id, array_agg(s.bot_id ORDER BY s.seat) AS bots, array_agg(s.rank ORDER BY s.seat) AS ranks \
         FROM (SELECT match_id, min(id) AS first FROM rating_history WHERE ladder_id = $1 GROUP BY match_id) h \
         JOIN match_seats s ON s.match_id = h.match_id GROUP BY h.match_id, h.first ORDER BY h.first",
    )
    .bind(ladder)
    .fetch_all(pool)
    .await
    .unwrap();
    let records: Vec<MatchRecord> = rows
        .iter()
        .map(|r| {
            let bots: Vec<i64> = r.get("bots");
            let ranks: Vec<i32> = r.get("ranks");
            MatchRecord { seats: bots.into_iter().zip(ranks.into_iter().map(|k| k as u32)).collect() }
        })
        .collect();
    let replayed = replay(RatingSystem::WengLin, &records);
    let stored: BTreeMap<i64, Rating> = sqlx::query("SELECT bot_id, mu, sigma FROM ratings WHERE ladder_id = $1")
        .bind(ladder)
        .fetch_all(pool)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get("bot_id"), Rating { mu: r.get("mu"), sigma: r.get("sigma") }))
        .collect();
    assert_eq!(stored, replayed, "stored ratings equal a replay of the recorded results");
    (finished, failed)
}

/// Let the runners finish what is queued, with the scheduler stopped.
async fn drain(pool: &PgPool, within: Duration) {
    let deadline = Instant::now() + within;
    while count(pool, "SELECT count(*) FROM jobs WHERE state IN ('running', 'available')").await > 0 {
        assert!(Instant::now() < deadline, "the queue did not drain");
        // Expired leases of killed runners come back through rescue.
        let _ = koth_scheduler::db::queue::Queue::new(pool.clone()).rescue_expired().await;
        sqlx::query("UPDATE jobs SET run_after = now() WHERE state = 'available'").execute(pool).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // What the (stopped) scheduler's tick would do for jobs that failed for good.
    koth_scheduler::db::store::mark_failed_matches(pool).await.unwrap();
}

/// Make this process the adopter of its runners' orphans
/// (`PR_SET_CHILD_SUBREAPER`). A killed runner's children (its boxes'
/// holders, their programs, a pooled box's parked first program) die with
/// it and are handed to the nearest adopter; without one, to the
/// machine's PID 1, which reaps them when it likes (CI's took minutes for
/// some), and the check below would see their zombies.
fn adopt_orphans() {
    // SAFETY: prctl with integer arguments, on this process.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }, 0, "{}", std::io::Error::last_os_error());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runners_killed_mid_match_lose_nothing_and_ratings_replay_exactly() {
    let Some(pg) = postgres("faults") else { return };
    adopt_orphans();
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let ladder = setup(&pool).await;
    let url = pg.url();
    let mut scheduler = Service::start(&["scheduler", "--tick", "200ms"], &url, "faults-scheduler", KILLED_UIDS);
    let mut runners: Vec<Service> = (0..2).map(|i| Service::runner(&url, &format!("faults-r{i}-0"), KILLED_UIDS)).collect();
    let mut generation = 1;
    let mut kills = 0;
    let started = Instant::now();
    // Kill a runner that holds a running match, over and over.
    while kills < 12 && started.elapsed() < Duration::from_secs(240) {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let holders: Vec<String> =
            sqlx::query_scalar("SELECT holder FROM jobs WHERE state = 'running' AND kind = 'match' AND attempt < 3 AND holder IS NOT NULL")
                .fetch_all(&pool)
                .await
                .unwrap();
        if let Some(i) = runners.iter().position(|r| holders.contains(&r.name)) {
            runners[i].kill();
            kills += 1;
            runners[i] = Service::runner(&url, &format!("faults-r{i}-{generation}"), KILLED_UIDS);
            generation += 1;
        }
    }
    assert!(kills >= 12, "only {kills} runners were killed mid-match in 240 s");
    // Let the ladder run a little more, then stop scheduling and drain.
    let before = count(&pool, "SELECT count(*) FROM matches WHERE state = 'finished'").await;
    let deadline = Instant::now() + Duration::from_secs(120);
    while count(&pool, "SELECT count(*) FROM matches WHERE state = 'finished'").await < before + 5 {
        assert!(Instant::now() < deadline, "matches stopped finishing after the kills");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(scheduler.stop(), Some(0), "the scheduler stops cleanly on SIGTERM");
    drain(&pool, Duration::from_secs(180)).await;
    for r in &mut runners {
        assert_eq!(r.stop(), Some(0), "a runner stops cleanly on SIGTERM");
    }
    let (finished, failed) = check_consistency(&pool, ladder).await;
    let rescued = count(&pool, "SELECT count(*) FROM jobs WHERE last_error LIKE 'lease expired%'").await;
    eprintln!("{kills} runners killed mid-match; {finished} matches finished, {failed} failed; {rescued} jobs rescued after a lost lease");
    assert!(finished >= 10);
    assert!(rescued >= 1);
    assert_eq!(failed, 0, "no match ran out of attempts");
    // Bots of killed runners do not live on (frozen ones included): the
    // restarted runners swept their groups.
    let survivors = bot_processes(KILLED_UIDS..KILLED_UIDS + UID_RANGE);
    assert!(survivors.is_empty(), "bot processes outlived their runners: {survivors:?}");
}

/// A rated Target ladder of two bots playing full-length games, one match
/// at a time: long enough to be caught running. `bots`: their files.
async fn long_target_ladder(pool: &PgPool, name: &str, bots: &[PathBuf]) -> i64 {
    let settings = LadderConfig::parse("rated", &serde_json::json!({"seats": 2, "concurrency": 1, "newcomer_games": 0})).unwrap();
    let ladder = store::create_ladder(pool, name, &koth_games::GameKind::Target.into(), &settings).await.unwrap();
    let owner = store::create_user(pool, "author", false).await.unwrap();
    for (i, path) in bots.iter().enumerate() {
        let sub = Submission::from_path(path, &SubmissionLimits::default()).unwrap();
        let bot = store::create_bot(pool, ladder, owner, &format!("{name}-{i}")).await.unwrap();
        store::submit_version(pool, bot, &sub.language.name, &sub.main, &sub.source_tar(), &sub.source_hash()).await.unwrap();
    }
    ladder
}

/// Processes running as a uid of the range.
/// The processes running as one of `uids` that are alive, or dead but
/// held by someone else. A zombie this process adopted (a killed runner's
/// orphan: see [`adopt_orphans`]) is reaped here and not counted: it is
/// dead, and its reaping is its adopter's.
fn bot_processes(uids: std::ops::Range<u32>) -> Vec<(u32, String)> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    let mut reaped = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else { continue };
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else { continue };
        let uid =
            status.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(1)).and_then(|u| u.parse::<u32>().ok());
        if uid.is_some_and(|u| uids.contains(&u)) {
            // What it is, where it is and who holds it: enough to tell a
            // zombie from a live program, and whose box it was.
            let field = |key: &str| status.lines().find(|l| l.starts_with(key)).unwrap_or("").replace('\t', " ");
            let parent = field("PPid:");
            if field("State:").starts_with("State: Z") && parent.split_whitespace().nth(1) == Some(me.as_str()) {
                // SAFETY: waitpid on a zombie child of this process, without a status.
                if unsafe { libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG) } == pid as i32 {
                    reaped += 1;
                    continue;
                }
            }
            let cgroup = std::fs::read_to_string(e.path().join("cgroup")).unwrap_or_default().replace('\n', " ");
            // Where the kernel holds it, and whether its freezer does: what
            // tells a frozen program from one stuck in a call, or alive.
            let read = |name: &str| std::fs::read_to_string(e.path().join(name)).unwrap_or_default().trim().replace('\n', " | ");
            let freezer = cgroup
                .split_whitespace()
                .find_map(|l| l.split_once(":freezer:").map(|(_, dir)| dir.to_owned()))
                .map(|dir| std::fs::read_to_string(format!("/sys/fs/cgroup/freezer{dir}/freezer.state")).unwrap_or_default())
                .unwrap_or_default();
            out.push((
                pid,
                format!(
                    "{}; {}; {}; {}; {}; {}; wchan {}; stack {}; freezer {}; cgroup {cgroup}",
                    field("Name:"),
                    field("State:"),
                    field("PPid:"),
                    field("NSpid:"),
                    field("SigPnd:"),
                    field("ShdPnd:"),
                    read("wchan"),
                    read("stack"),
                    freezer.trim(),
                ),
            ));
        }
    }
    eprintln!("{reaped} dead bot processes (zombies) adopted from killed runners reaped");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_restart_under_running_workers_loses_nothing() {
    let Some(pg) = postgres("restart") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let ladder = setup(&pool).await;
    let url = pg.url();
    let mut scheduler = Service::start(&["scheduler", "--tick", "200ms"], &url, "restart-scheduler", RESTART_UIDS);
    let mut runners: Vec<Service> = (0..2).map(|i| Service::runner(&url, &format!("restart-r{i}"), RESTART_UIDS)).collect();
    let wait_finished = |n: i64| {
        let pool = pool.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(180);
            loop {
                let done: Result<i64, _> =
                    sqlx::query_scalar("SELECT count(*) FROM matches WHERE state = 'finished'").fetch_one(&pool).await;
                if done.is_ok_and(|d| d >= n) {
                    return;
                }
                assert!(Instant::now() < deadline, "fewer than {n} matches finished");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    wait_finished(5).await;
    for round in 1..=2 {
        pg.restart().unwrap();
        let after: i64 = loop {
            match sqlx::query_scalar("SELECT count(*) FROM matches WHERE state = 'finished'").fetch_one(&pool).await {
                Ok(n) => break n,
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        wait_finished(after + 5).await;
        eprintln!("restart {round}: matches kept finishing ({after} before, 5 more after)");
    }
    assert_eq!(scheduler.stop(), Some(0));
    drain(&pool, Duration::from_secs(180)).await;
    for r in &mut runners {
        assert_eq!(r.stop(), Some(0));
    }
    let (finished, failed) = check_consistency(&pool, ladder).await;
    eprintln!("after two PostgreSQL restarts: {finished} matches finished, {failed} failed");
    assert_eq!(failed, 0);
}

/// SIGTERM while a match runs: with no grace left the runner gives the job
/// back (available at once, the attempt not spent) and exits cleanly;
/// another runner then plays it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_match_gives_the_job_back() {
    let Some(pg) = postgres("sigterm") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    long_target_ladder(&pool, "target-long", &[repo().join("bots/target/drifter.py"), repo().join("bots/target/still.c")]).await;
    let url = pg.url();
    let mut runner = Service::start(
        &["runner", "--name", "term-1", "--lease", "30s", "--grace", "0s", "--allow-host-toolchains"],
        &url,
        "sigterm-runner",
        SIGTERM_UIDS,
    );
    let mut scheduler = Service::start(&["scheduler", "--tick", "200ms"], &url, "sigterm-scheduler", SIGTERM_UIDS);
    let deadline = Instant::now() + Duration::from_secs(120);
    let job: i64 = loop {
        let running: Option<i64> =
            sqlx::query_scalar("SELECT id FROM jobs WHERE kind = 'match' AND state = 'running' AND holder = 'term-1'")
                .fetch_optional(&pool)
                .await
                .unwrap();
        if let Some(id) = running {
            break id;
        }
        assert!(Instant::now() < deadline, "no match started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(scheduler.stop(), Some(0));
    assert_eq!(runner.stop(), Some(0), "the runner exits cleanly");
    // Nothing left held: neither the match it was playing nor a job its
    // last completion claimed (a worker claims its next job as it
    // completes one, and gives it back when it stops).
    let held: i64 =
        sqlx::query_scalar("SELECT count(*) FROM jobs WHERE state = 'running' AND holder = 'term-1'").fetch_one(&pool).await.unwrap();
    assert_eq!(held, 0, "a stopped runner holds no job");
    let (state, attempt): (String, i32) = {
        let r = sqlx::query("SELECT state, attempt FROM jobs WHERE id = $1").bind(job).fetch_one(&pool).await.unwrap();
        (r.get("state"), r.get("attempt"))
    };
    // Either the match ended in the instant before the signal landed, or it was given back.
    if state == "completed" {
        eprintln!("the match finished before SIGTERM landed; nothing to release");
        return;
    }
    assert_eq!((state.as_str(), attempt), ("available", 0), "released at once, attempt not spent");
    let mut other = Service::runner(&url, "term-2", SIGTERM_UIDS);
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let st: String = sqlx::query_scalar("SELECT state FROM jobs WHERE id = $1").bind(job).fetch_one(&pool).await.unwrap();
        if st == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "the released match was not played");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(other.stop(), Some(0));
}

/// A runner stopped from outside in the middle of a match (SIGSTOP, as a
/// paused VM or a stalled host would be) charges no bot for it: the match
/// ends with no result (`host_overloaded`), rates nobody, is given back to
/// the queue with the reason, and is played again to one result; voided
/// more often than a job has attempts, it spends none of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_stopped_mid_match_rates_nobody_and_the_match_is_played_again() {
    let Some(pg) = postgres("stalled") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    // A bot that takes 5 ms a move: the engine spends most of each turn
    // waiting for it, where a stop is caught (with answers in microseconds
    // most stops fell between turns, and were rightly charged to nobody).
    let slow = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stalled-slow-still.c");
    std::fs::write(&slow, "#include <stdio.h>\n#include <unistd.h>\nint main(void) {\n    char line[4096];\n    while (fgets(line, sizeof line, stdin)) { usleep(5000); puts(\"2\"); fflush(stdout); }\n    return 0;\n}\n").unwrap();
    long_target_ladder(&pool, "target-stalled", &[repo().join("bots/target/drifter.py"), slow]).await;
    let url = pg.url();
    let mut runner = Service::start(
        &["runner", "--name", "stalled-1", "--lease", "60s", "--grace", "1s", "--allow-host-toolchains"],
        &url,
        "stalled-runner",
        STALLED_UIDS,
    );
    let mut scheduler = Service::start(&["scheduler", "--tick", "200ms"], &url, "stalled-scheduler", STALLED_UIDS);
    let deadline = Instant::now() + Duration::from_secs(120);
    let job: i64 = loop {
        let running: Option<i64> = sqlx::query_scalar(
            "SELECT j.id FROM jobs j JOIN matches m ON m.job_id = j.id WHERE j.kind = 'match' AND j.state = 'running' AND m.validates IS NULL",
        )
        .fetch_optional(&pool)
        .await
        .unwrap();
        if let Some(id) = running {
            break id;
        }
        assert!(Instant::now() < deadline, "no ladder match started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // Stop the runner for 400 ms, a few times, while it plays that match:
    // a stop that falls between two turns stalls no clock, one in a turn
    // ends the match as the machine's fault. Until the match was voided
    // more often than a job has attempts: a void spends none (issue 37's
    // CI: five voids in a minute on an overcommitted host failed matches
    // and refused a new version). The retry's backoff is skipped; the
    // runner's own pause after each void is not.
    let want = koth_scheduler::db::store::MAX_ATTEMPTS + 1;
    let deadline = Instant::now() + Duration::from_secs(400);
    loop {
        let r = sqlx::query("SELECT state, attempt, overloads FROM jobs WHERE id = $1").bind(job).fetch_one(&pool).await.unwrap();
        let (st, attempt, overloads): (String, i32, i32) = (r.get("state"), r.get("attempt"), r.get("overloads"));
        assert!(st != "failed", "the match's job failed for good after {overloads} voids");
        assert!(attempt <= 1, "a void spent an attempt: attempt {attempt} after {overloads} voids");
        if overloads >= want {
            break;
        }
        assert_ne!(st, "completed", "played to its end before {want} voids ({overloads}): the stops fell between turns");
        assert!(Instant::now() < deadline, "the match was voided {overloads} times, not {want}");
        if st == "running" {
            tokio::time::sleep(Duration::from_millis(300)).await;
            // SAFETY: kill(2) on our own child with a plain signal.
            unsafe { libc::kill(runner.child.id() as i32, libc::SIGSTOP) };
            tokio::time::sleep(Duration::from_millis(400)).await;
            // SAFETY: as above.
            unsafe { libc::kill(runner.child.id() as i32, libc::SIGCONT) };
        } else {
            sqlx::query("UPDATE jobs SET run_after = now() WHERE id = $1 AND state = 'available'").bind(job).execute(&pool).await.unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let st: String = sqlx::query_scalar("SELECT state FROM jobs WHERE id = $1").bind(job).fetch_one(&pool).await.unwrap();
        if st == "completed" {
            break;
        }
        assert!(st != "failed", "the match's job failed for good");
        assert!(Instant::now() < deadline, "the match was not played again");
        sqlx::query("UPDATE jobs SET run_after = now() WHERE id = $1 AND state = 'available'").bind(job).execute(&pool).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(scheduler.stop(), Some(0));
    assert_eq!(runner.stop(), Some(0));
    let r = sqlx::query("SELECT attempt, overloads, last_error FROM jobs WHERE id = $1").bind(job).fetch_one(&pool).await.unwrap();
    let (attempt, overloads, error): (i32, i32, Option<String>) = (r.get("attempt"), r.get("overloads"), r.get("last_error"));
    assert!(attempt == 1 && overloads >= want, "voided {overloads} times (at least {want}), played on attempt {attempt}, not its first");
    let error = error.unwrap_or_default();
    assert!(error.contains("overloaded, no bot was at fault") && error.contains("stopped or starved"), "{error}");
    // One result, one rating change per seat, ratings as recorded.
    let m = sqlx::query("SELECT id, state, error FROM matches WHERE job_id = $1").bind(job).fetch_one(&pool).await.unwrap();
    let (match_id, state, shown): (i64, String, Option<String>) = (m.get("id"), m.get("state"), m.get("error"));
    assert_eq!((state.as_str(), shown), ("finished", None), "played, and the retry's note cleared");
    let changes = count(&pool, &format!("SELECT count(*) FROM rating_history WHERE match_id = {match_id}")).await;
    assert_eq!(changes, 2, "rated once, when it was played to its end");
    assert_eq!(count(&pool, "SELECT count(*) FROM jobs WHERE state = 'running'").await, 0, "the stopped runner holds nothing");
    // Every try after a void ran with the machine to itself
    // (`runner/src/machine.rs`): the runner logs each such turn.
    let log = std::fs::read_to_string(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stalled-runner.log")).unwrap();
    let alone =
        log.lines().filter(|l| l.contains("it runs with no other job of the machine") && l.contains(&format!("job={job} "))).count();
    assert!(alone as i32 >= overloads, "{overloads} voids, but {alone} tries after them ran with the machine to themselves:\n{log}");
}
