//! The job queue against a real PostgreSQL: claims under concurrency,
//! leases, rescue, fencing, retries, release, notifications, and the hot
//! path's independence from finished rows; completing a job and claiming
//! the next in one statement; challenges held to their fair share of the
//! starts while ladder matches wait.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use koth_scheduler::db::queue::{wait_for_work, Claimed, FailOutcome, FairShare, Queue, QueueError, Recorder, MAX_OVERLOADS};
use serde_json::json;
use sqlx::Row;

const LEASE: Duration = Duration::from_secs(30);

async fn state(q: &Queue, id: i64) -> (String, i32, Option<String>) {
    let r = sqlx::query("SELECT state, attempt, last_error FROM jobs WHERE id = $1").bind(id).fetch_one(q.pool()).await.unwrap();
    (r.get("state"), r.get("attempt"), r.get("last_error"))
}

/// Make a job's lease run out now (instead of sleeping through it).
async fn expire(q: &Queue, id: i64) {
    sqlx::query("UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = $1").bind(id).execute(q.pool()).await.unwrap();
}

/// Skip a retry's backoff (its value is checked separately).
async fn due_now(q: &Queue, id: i64) {
    sqlx::query("UPDATE jobs SET run_after = now() WHERE id = $1").bind(id).execute(q.pool()).await.unwrap();
}

async fn complete(q: &Queue, job: &Claimed) -> Result<(), QueueError> {
    let mut tx = q.pool().begin().await?;
    Queue::complete(&mut tx, job).await?;
    tx.commit().await?;
    Ok(())
}

/// How the workers of [`eight_workers_run_every_job_once`] go through jobs.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    /// Claim, then complete.
    Claims,
    /// Complete a job and claim the next in one statement, in a pooled
    /// transaction.
    Chained,
    /// As `koth runner` does: the same statement opening the transaction
    /// on the worker's own connection ([`Recorder`]), then `COMMIT`.
    Recorded,
}

/// 8 workers through 600 jobs at once: every job is run exactly once, on
/// its first attempt, and the work is shared.
async fn eight_workers_run_every_job_once(name: &str, way: Way) {
    let Some(pg) = common::postgres(name) else { return };
    let q = Queue::new(common::pool(&pg, 20).await);
    const JOBS: usize = 600;
    for i in 0..JOBS {
        q.enqueue("noop", &json!({ "i": i }), (i % 3) as i32, 3).await.unwrap();
    }
    let mut workers = Vec::new();
    for w in 0..8 {
        let q = q.clone();
        workers.push(tokio::spawn(async move {
            let holder = format!("w{w}");
            let mut got = Vec::new();
            let mut recorder = Recorder::new(q.pool());
            let mut job = q.claim(&holder, &["noop"], LEASE).await.unwrap();
            while let Some(j) = job {
                got.push(j.id);
                job = match way {
                    // Rolled back to break a deadlock: run again, as the worker loop does.
                    Way::Chained => loop {
                        match chain(&q, &holder, &j).await {
                            Err(QueueError::Conflict(_)) => continue,
                            next => break next.unwrap(),
                        }
                    },
                    Way::Recorded => {
                        let next = recorder.begin_complete_and_claim(&j, &holder, &["noop"], LEASE, &FairShare::default()).await.unwrap();
                        recorder.commit().await.unwrap();
                        next
                    }
                    Way::Claims => {
                        complete(&q, &j).await.unwrap();
                        q.claim(&holder, &["noop"], LEASE).await.unwrap()
                    }
                };
            }
            got
        }));
    }
    let mut seen: HashMap<i64, usize> = HashMap::new();
    let mut per_worker = Vec::new();
    for w in workers {
        let got = w.await.unwrap();
        per_worker.push(got.len());
        for id in got {
            *seen.entry(id).or_default() += 1;
        }
    }
    assert_eq!(seen.len(), JOBS, "every job claimed");
    assert!(seen.values().all(|&n| n == 1), "no job claimed twice");
    let done: i64 =
        sqlx::query_scalar("SELECT count(*) FROM jobs WHERE state = 'completed' AND attempt = 1").fetch_one(q.pool()).await.unwrap();
    assert_eq!(done as usize, JOBS);
    assert!(per_worker.iter().filter(|&&n| n > 0).count() >= 2, "work was shared: {per_worker:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_job_is_claimed_twice_under_concurrency() {
    eight_workers_run_every_job_once("claims", Way::Claims).await;
}

#[tokio::test]
async fn claims_take_priority_then_age() {
    let Some(pg) = common::postgres("priority") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let low = q.enqueue("noop", &json!({}), 0, 1).await.unwrap();
    let high = q.enqueue("noop", &json!({}), 10, 1).await.unwrap();
    let low2 = q.enqueue("noop", &json!({}), 0, 1).await.unwrap();
    let other = q.enqueue("compile", &json!({}), 100, 1).await.unwrap();
    let mut got = Vec::new();
    while let Some(j) = q.claim("w", &["noop"], LEASE).await.unwrap() {
        got.push(j.id);
    }
    assert_eq!(got, vec![high, low, low2], "priority first, then oldest; other kinds untouched");
    assert_eq!(state(&q, other).await.0, "available");
}

#[tokio::test]
async fn an_expired_lease_is_rescued_retried_and_failed_at_the_limit() {
    let Some(pg) = common::postgres("rescue") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let id = q.enqueue("match", &json!({}), 0, 2).await.unwrap();
    let first = q.claim("crashing-worker", &["match"], LEASE).await.unwrap().unwrap();
    assert_eq!(q.rescue_expired().await.unwrap(), (0, 0), "a live lease is left alone");
    expire(&q, id).await;
    assert_eq!(q.rescue_expired().await.unwrap(), (1, 0));
    let (st, attempt, err) = state(&q, id).await;
    assert_eq!((st.as_str(), attempt), ("available", 1));
    assert!(err.unwrap().contains("lease expired on attempt 1 (holder crashing-worker)"));
    // Retried after a backoff, not at once.
    assert!(q.claim("w2", &["match"], LEASE).await.unwrap().is_none());
    let wait: f64 = sqlx::query_scalar("SELECT extract(epoch FROM run_after - now())::float8 FROM jobs WHERE id = $1")
        .bind(id)
        .fetch_one(q.pool())
        .await
        .unwrap();
    assert!(wait > 1.0 && wait <= 2.0, "backoff of attempt 1 is 2 s, {wait} left");
    due_now(&q, id).await;
    let second = q.claim("w2", &["match"], LEASE).await.unwrap().unwrap();
    assert_eq!(second.attempt, 2);
    assert_ne!(second.lease, first.lease);
    expire(&q, id).await;
    assert_eq!(q.rescue_expired().await.unwrap(), (0, 1), "out of attempts: failed");
    let (st, attempt, err) = state(&q, id).await;
    assert_eq!((st.as_str(), attempt), ("failed", 2));
    assert!(err.unwrap().contains("attempt 2"));
}

#[tokio::test]
async fn a_stale_worker_cannot_heartbeat_complete_fail_or_release() {
    let Some(pg) = common::postgres("fencing") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let id = q.enqueue("match", &json!({}), 0, 5).await.unwrap();
    let stale = q.claim("slow", &["match"], LEASE).await.unwrap().unwrap();
    q.heartbeat(&stale, LEASE).await.unwrap();
    expire(&q, id).await;
    q.rescue_expired().await.unwrap();
    due_now(&q, id).await;
    let fresh = q.claim("fast", &["match"], LEASE).await.unwrap().unwrap();
    assert!(matches!(q.heartbeat(&stale, LEASE).await, Err(QueueError::Stale(i)) if i == id));
    assert!(matches!(complete(&q, &stale).await, Err(QueueError::Stale(_))));
    assert!(matches!(q.fail(&stale, "boom", true).await, Err(QueueError::Stale(_))));
    assert!(matches!(q.release(&stale).await, Err(QueueError::Stale(_))));
    assert_eq!(state(&q, id).await.0, "running", "the stale worker changed nothing");
    // The stale worker's results, written in the same transaction as its
    // completion, are rolled back with it.
    let mut tx = q.pool().begin().await.unwrap();
    sqlx::query("INSERT INTO jobs (kind, payload) VALUES ('noop', '{\"stale\": true}')").execute(&mut *tx).await.unwrap();
    assert!(Queue::complete(&mut tx, &stale).await.is_err());
    drop(tx);
    let leaked: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE payload ? 'stale'").fetch_one(q.pool()).await.unwrap();
    assert_eq!(leaked, 0);
    complete(&q, &fresh).await.unwrap();
    assert_eq!(state(&q, id).await.0, "completed");
}

#[tokio::test]
async fn failures_retry_with_backoff_until_the_limit() {
    let Some(pg) = common::postgres("retries") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let id = q.enqueue("compile", &json!({}), 0, 3).await.unwrap();
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        let job = q.claim("w", &["compile"], LEASE).await.unwrap().expect("due");
        outcomes.push(q.fail(&job, &format!("try {} broke", job.attempt), true).await.unwrap());
        due_now(&q, id).await;
    }
    assert_eq!(
        outcomes,
        vec![FailOutcome::Retried(Duration::from_secs(2)), FailOutcome::Retried(Duration::from_secs(4)), FailOutcome::Failed]
    );
    let (st, attempt, err) = state(&q, id).await;
    assert_eq!((st.as_str(), attempt, err.as_deref()), ("failed", 3, Some("try 3 broke")));
    assert!(q.claim("w", &["compile"], LEASE).await.unwrap().is_none());
    // A failure that retrying cannot fix fails at once.
    let id = q.enqueue("compile", &json!({}), 0, 3).await.unwrap();
    let job = q.claim("w", &["compile"], LEASE).await.unwrap().unwrap();
    assert_eq!(q.fail(&job, "bad input", false).await.unwrap(), FailOutcome::Failed);
    assert_eq!(state(&q, id).await.0, "failed");
}

/// A try the machine voided (a match ended as overloaded) goes back after
/// a backoff without spending an attempt: a job of two attempts survives
/// [`MAX_OVERLOADS`] voids, and only the ones after that count, so it still
/// fails in the end rather than coming back forever. A stale holder's
/// deferral changes nothing.
#[tokio::test]
async fn overloaded_tries_come_back_without_spending_attempts_up_to_a_bound() {
    let Some(pg) = common::postgres("overloads") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let id = q.enqueue("match", &json!({}), 0, 2).await.unwrap();
    let defer = |job: Claimed, why: &'static str| {
        let q = q.clone();
        async move {
            let mut tx = q.pool().begin().await?;
            let out = Queue::defer_in(&mut tx, &job, why).await;
            tx.commit().await?;
            out
        }
    };
    let mut delays = Vec::new();
    for _ in 0..MAX_OVERLOADS {
        let job = q.claim("w", &["match"], LEASE).await.unwrap().expect("due");
        assert_eq!(job.attempt, 1, "an overloaded try spends no attempt");
        match defer(job, "the machine was overloaded").await.unwrap() {
            FailOutcome::Retried(d) => delays.push(d.as_secs()),
            FailOutcome::Failed => panic!("failed after {} overloads", delays.len()),
        }
        let r = sqlx::query("SELECT state, run_after > now() + interval '1 second' AS later FROM jobs WHERE id = $1")
            .bind(id)
            .fetch_one(q.pool())
            .await
            .unwrap();
        assert_eq!((r.get::<String, _>("state").as_str(), r.get::<bool, _>("later")), ("available", true), "backed off");
        due_now(&q, id).await;
    }
    assert_eq!(delays[..4], [2, 4, 8, 16]);
    assert!(delays.iter().all(|&d| d <= 300), "{delays:?}");
    let overloads: i32 = sqlx::query_scalar("SELECT overloads FROM jobs WHERE id = $1").bind(id).fetch_one(q.pool()).await.unwrap();
    assert_eq!(overloads, MAX_OVERLOADS);
    // Past the bound each void is a failed attempt: two attempts, two voids.
    let job = q.claim("w", &["match"], LEASE).await.unwrap().unwrap();
    assert_eq!(defer(job, "overloaded again").await.unwrap(), FailOutcome::Retried(Duration::from_secs(2)));
    due_now(&q, id).await;
    let job = q.claim("w", &["match"], LEASE).await.unwrap().unwrap();
    assert_eq!(job.attempt, 2);
    // A holder whose lease was lost defers nothing.
    expire(&q, id).await;
    q.rescue_expired().await.unwrap();
    due_now(&q, id).await;
    let stale = job;
    let current = q.claim("other", &["match"], LEASE).await.unwrap();
    assert!(current.is_none(), "out of attempts after the rescue");
    assert!(matches!(defer(stale, "late").await, Err(QueueError::Stale(_))));
    let (st, attempt, err) = state(&q, id).await;
    assert_eq!((st.as_str(), attempt), ("failed", 2));
    assert!(err.unwrap_or_default().starts_with("lease expired"), "the stale deferral wrote nothing");
}

#[tokio::test]
async fn release_gives_the_job_back_without_spending_an_attempt() {
    let Some(pg) = common::postgres("release") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let id = q.enqueue("match", &json!({}), 0, 1).await.unwrap();
    let job = q.claim("stopping", &["match"], LEASE).await.unwrap().unwrap();
    q.release(&job).await.unwrap();
    assert_eq!(state(&q, id).await, ("available".into(), 0, None));
    let again = q.claim("other", &["match"], LEASE).await.unwrap().unwrap();
    assert_eq!(again.attempt, 1, "max_attempts 1 and still claimable");
    assert!(matches!(complete(&q, &job).await, Err(QueueError::Stale(_))));
    complete(&q, &again).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_wakes_an_idle_worker() {
    let Some(pg) = common::postgres("notify") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let mut listener = q.listener().await.unwrap();
    let q2 = q.clone();
    let producer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        q2.enqueue("noop", &json!({}), 0, 1).await.unwrap()
    });
    let started = Instant::now();
    wait_for_work(&mut listener, Duration::from_secs(30)).await;
    let waited = started.elapsed();
    let id = producer.await.unwrap();
    assert!(waited < Duration::from_secs(10), "woken by NOTIFY, not the 30 s poll ({waited:?})");
    assert_eq!(q.claim("w", &["noop"], LEASE).await.unwrap().unwrap().id, id);
}

#[tokio::test]
async fn finished_rows_are_not_on_the_claim_path() {
    let Some(pg) = common::postgres("hot-path") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    sqlx::query(
        "INSERT INTO jobs (kind, state, attempt, finished_at) \
         SELECT 'noop', 'completed', 1, now() FROM generate_series(1, 200000)",
    )
    .execute(q.pool())
    .await
    .unwrap();
    sqlx::query("ANALYZE jobs").execute(q.pool()).await.unwrap();
    let id = q.enqueue("noop", &json!({}), 0, 1).await.unwrap();
    let plan: Vec<String> = sqlx::query_scalar(
        "EXPLAIN SELECT id FROM jobs WHERE state = 'available' AND run_after <= now() AND kind = ANY('{noop}') \
         ORDER BY priority DESC, run_after, id FOR UPDATE SKIP LOCKED LIMIT 1",
    )
    .fetch_all(q.pool())
    .await
    .unwrap();
    let plan = plan.join("\n");
    assert!(plan.contains("jobs_available"), "the claim reads the partial index of available jobs:\n{plan}");
    assert_eq!(q.claim("w", &["noop"], LEASE).await.unwrap().unwrap().id, id);
}

/// Buffers of the index of running jobs read so far, from the server's
/// statistics (flushed first): the reads of the (one) connection of `q`'s
/// pool, the only one.
async fn running_index_reads(q: &Queue) -> i64 {
    sqlx::query("SELECT pg_stat_force_next_flush()").execute(q.pool()).await.unwrap();
    sqlx::query_scalar("SELECT (idx_blks_hit + idx_blks_read)::int8 FROM pg_statio_user_indexes WHERE indexrelname = 'jobs_running'")
        .fetch_one(q.pool())
        .await
        .unwrap()
}

/// Complete 20 of the jobs running now (10 by completion, 10 by
/// completion-and-claim); what that read of the index of running jobs.
async fn reads_to_complete_twenty(q: &Queue, running: &mut Vec<Claimed>) -> i64 {
    let before = running_index_reads(q).await;
    for i in 0..20 {
        let job = running.pop().unwrap();
        let mut tx = q.pool().begin().await.unwrap();
        if i % 2 == 0 {
            Queue::complete(&mut tx, &job).await.unwrap();
        } else {
            let next = Queue::complete_and_claim(&mut tx, &job, "w", &["noop"], LEASE, &FairShare::default()).await.unwrap();
            assert!(next.is_none(), "nothing left to claim");
        }
        tx.commit().await.unwrap();
    }
    running_index_reads(q).await - before
}

/// The fenced statements (complete, complete-and-claim, heartbeat, fail,
/// release) find their job by key: what completing a job reads does not
/// grow with the jobs running beside it, nor with the dead entries that
/// finished ones leave in the index until a vacuum. Before migration 0016
/// the index was keyed by lease deadline and the plan a server settles on
/// (generic, forced here) read all of it for every completion: 20
/// completions read 159 buffers of it with 2,020 jobs running, 39 with 20
/// (now 40 and 20: a descent each).
#[tokio::test]
async fn completing_a_job_reads_the_same_however_many_others_run() {
    let Some(pg) = common::postgres("fence-reads") else { return };
    common::pool(&pg, 1).await; // migrated
                                // One connection, so the statistics read are those of the completions;
                                // the generic plans a long-running server's statements settle on.
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .after_connect(|conn, _| {
            Box::pin(async move { sqlx::query("SET plan_cache_mode = force_generic_plan").execute(conn).await.map(|_| ()) })
        })
        .connect(&pg.url())
        .await
        .unwrap();
    let q = Queue::new(pool);
    sqlx::query("ALTER TABLE jobs SET (autovacuum_enabled = false)").execute(q.pool()).await.unwrap();
    // A server's history (finished jobs, few running) in the statistics.
    sqlx::query(
        "INSERT INTO jobs (kind, state, attempt, started_at, finished_at) \
         SELECT 'noop', 'completed', 1, now(), now() FROM generate_series(1, 20000)",
    )
    .execute(q.pool())
    .await
    .unwrap();
    sqlx::query("ANALYZE jobs").execute(q.pool()).await.unwrap();
    let claim_all = |n: usize| {
        let q = q.clone();
        async move {
            sqlx::query("INSERT INTO jobs (kind, max_attempts) SELECT 'noop', 1 FROM generate_series(1, $1)")
                .bind(n as i32)
                .execute(q.pool())
                .await
                .unwrap();
            let mut running = Vec::new();
            while let Some(j) = q.claim("w", &["noop"], LEASE).await.unwrap() {
                running.push(j);
            }
            assert_eq!(running.len(), n);
            running
        }
    };
    let mut few = claim_all(20).await;
    let alone = reads_to_complete_twenty(&q, &mut few).await;
    let mut many = claim_all(2020).await;
    let crowded = reads_to_complete_twenty(&q, &mut many).await;
    eprintln!("buffers of the running jobs' index read to complete 20 jobs: {alone} with 20 running, {crowded} with 2,020");
    assert!(alone > 0, "the statistics saw no reads: the test measures nothing");
    assert!(crowded <= 2 * alone + 20, "completing 20 jobs read {crowded} buffers with 2,020 running, {alone} with 20");
}

/// A worker's claims are planned once per connection, not at every
/// claim: PostgreSQL re-plans a prepared statement whenever the values
/// bound to it make that look cheaper, and the kinds and fair share, bound,
/// did so at every execution (117 µs of planning a job against 66 of work).
/// Here 40 completions-and-claims on one connection, 5,000 jobs queued: at
/// most the five custom plans PostgreSQL always tries first, then its
/// generic plan (the old statement: 40 custom plans, no generic one).
#[tokio::test]
async fn claims_are_planned_once_per_connection() {
    let Some(pg) = common::postgres("claim-plans") else { return };
    let q = Queue::new(common::pool(&pg, 1).await);
    sqlx::query("INSERT INTO jobs (kind, max_attempts) SELECT 'noop', 1 FROM generate_series(1, 5000)").execute(q.pool()).await.unwrap();
    sqlx::query("ANALYZE jobs").execute(q.pool()).await.unwrap();
    let mut job = q.claim("w", &["noop"], LEASE).await;
    for _ in 0..40 {
        let j = job.unwrap().unwrap();
        let mut conn = q.pool().acquire().await.unwrap();
        job = Queue::complete_and_claim(&mut conn, &j, "w", &["noop"], LEASE, &FairShare::default()).await;
    }
    let plans: Vec<(String, i64, i64)> =
        sqlx::query_as("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%SKIP LOCKED%'")
            .fetch_all(q.pool())
            .await
            .unwrap();
    let chained = plans.iter().find(|p| p.0.starts_with("WITH next")).expect("the chained claim was prepared on this connection");
    assert!(chained.1 >= 30 && chained.2 <= 5, "complete-and-claim: {} generic plans, {} custom: {}", chained.1, chained.2, chained.0);
}

/// A worker that completes each job and claims the next in one statement
/// (in its result's transaction), as `koth runner` does.
async fn chain(q: &Queue, holder: &str, job: &Claimed) -> Result<Option<Claimed>, QueueError> {
    let mut tx = q.pool().begin().await?;
    match Queue::complete_and_claim(&mut tx, job, holder, &["noop"], LEASE, &FairShare::default()).await {
        Ok(next) => {
            tx.commit().await?;
            Ok(next)
        }
        // Rolled back before returning: a dropped transaction is rolled
        // back later, on the connection's next use, and until then the
        // failed statement's row locks stand (a claim right after skipped
        // the locked job and took the next: CI, 2026-11-26).
        Err(e) => {
            tx.rollback().await?;
            Err(e)
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn completing_and_claiming_the_next_in_one_statement_runs_every_job_once() {
    eight_workers_run_every_job_once("chain", Way::Chained).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn recording_on_a_workers_own_connection_runs_every_job_once() {
    eight_workers_run_every_job_once("recorded", Way::Recorded).await;
}

/// A job's results, as a runner writes them in the transaction that
/// completes it (a row here).
async fn results(conn: &mut sqlx::PgConnection, tag: &str) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO jobs (kind, payload, state) VALUES ('noop', jsonb_build_object('tag', $1::text), 'completed')")
        .bind(tag)
        .execute(conn)
        .await
        .map(|_| ())
}

/// The runner's recording ([`Recorder`]): the completion and the next claim
/// commit with the results written between them, or none of them does; a
/// lost lease claims nothing and writes nothing; a recording cut off
/// half-way (its future dropped) is rolled back and its connection never
/// used again.
#[tokio::test]
async fn a_recording_commits_its_completion_claim_and_results_together_or_not_at_all() {
    let Some(pg) = common::postgres("recorder") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let share = FairShare::default();
    let ids: Vec<i64> = {
        let mut v = Vec::new();
        for i in 0..4 {
            v.push(q.enqueue("noop", &json!({ "i": i }), 0, 3).await.unwrap());
        }
        v
    };
    let written = |tag: &'static str| {
        let pool = q.pool().clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM jobs WHERE payload->>'tag' = $1").bind(tag).fetch_one(&pool).await.unwrap()
        }
    };
    // A holder's name is bound, never quoted into the statement: a quote
    // and a backslash in it stay its own, on a connection where a
    // backslash in a literal escapes (standard_conforming_strings off).
    let holder = "w\\'1; --";
    let escaping = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect_with(pg.url().parse::<sqlx::postgres::PgConnectOptions>().unwrap().options([("standard_conforming_strings", "off")]))
        .await
        .unwrap();
    let mut r = Recorder::new(&escaping);
    let first = q.claim(holder, &["noop"], LEASE).await.unwrap().unwrap();
    assert_eq!(first.id, ids[0]);
    // Completed, the next claimed and the results written: all or nothing.
    let next = r.begin_complete_and_claim(&first, holder, &["noop"], LEASE, &share).await.unwrap().unwrap();
    assert_eq!(next.id, ids[1]);
    results(r.conn().unwrap(), "kept").await.unwrap();
    assert_eq!(state(&q, first.id).await.0, "running", "not committed yet");
    assert_eq!(written("kept").await, 0);
    let scs: String = sqlx::query_scalar("SHOW standard_conforming_strings").fetch_one(r.conn().unwrap()).await.unwrap();
    assert_eq!(scs, "off");
    r.commit().await.unwrap();
    assert_eq!(state(&q, first.id).await.0, "completed");
    assert_eq!(written("kept").await, 1);
    let got: String = sqlx::query_scalar("SELECT holder FROM jobs WHERE id = $1").bind(next.id).fetch_one(q.pool()).await.unwrap();
    assert_eq!(got, holder);
    // Abandoned (the results failed to write): the completion and the
    // claim roll back with them.
    let claimed = r.begin_complete_and_claim(&next, holder, &["noop"], LEASE, &share).await.unwrap().unwrap();
    assert_eq!(claimed.id, ids[2]);
    results(r.conn().unwrap(), "dropped").await.unwrap();
    r.abandon().await;
    assert_eq!(state(&q, next.id).await.0, "running");
    assert_eq!(state(&q, ids[2]).await.0, "available");
    assert_eq!(written("dropped").await, 0);
    // A lost lease: nothing claimed, and the recorder goes on working.
    expire(&q, next.id).await;
    q.rescue_expired().await.unwrap();
    due_now(&q, next.id).await;
    assert!(matches!(r.begin_complete_and_claim(&next, holder, &["noop"], LEASE, &share).await, Err(QueueError::Stale(i)) if i == next.id));
    assert_eq!(state(&q, next.id).await.0, "available");
    assert_eq!(state(&q, ids[2]).await.0, "available");
    // (The rescued job waits behind the older ones.)
    let again = q.claim("w2", &["noop"], LEASE).await.unwrap().unwrap();
    assert_eq!(again.id, ids[2]);
    // Cut off half-way: the transaction is opened, the future dropped
    // before the commit. What it did is rolled back before the recorder's
    // next use (run inside it, the next recording would have committed
    // the cut-off claim too).
    {
        let claimed = r.begin_complete_and_claim(&again, "w2", &["noop"], LEASE, &share).await.unwrap().unwrap();
        assert_eq!(claimed.id, ids[3]);
        // No commit, no abandon: as if the recording's future were dropped here.
    }
    let next2 = r.begin_complete_and_claim(&again, "w2", &["noop"], LEASE, &share).await.unwrap().unwrap();
    assert_eq!(next2.id, ids[3], "the cut-off claim was undone, and claimed again");
    r.commit().await.unwrap();
    // Its connection closed by the server (a restart, an idle timeout)
    // while a job ran: the next recording makes a new one and succeeds.
    let backend: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(r.conn().unwrap()).await.unwrap();
    let killed: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1, 5000)").bind(backend).fetch_one(q.pool()).await.unwrap();
    assert!(killed);
    let last = r.begin_complete_and_claim(&next2, "w2", &["noop"], LEASE, &share).await.unwrap();
    assert_eq!(last.map(|j| j.id), Some(next.id), "the rescued job, the last one waiting");
    r.commit().await.unwrap();
    assert_eq!(state(&q, next2.id).await.0, "completed");
    let other: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(r.conn().unwrap()).await.unwrap();
    assert_ne!(other, backend);
    assert_eq!(state(&q, again.id).await.0, "completed");
    let attempts: i32 = sqlx::query_scalar("SELECT attempt FROM jobs WHERE id = $1").bind(ids[3]).fetch_one(q.pool()).await.unwrap();
    assert_eq!(attempts, 1, "the cut-off claim did not count");
}

/// A recording the server rolls back to break a deadlock is run again at
/// once, and commits as if the conflict had not been.
///
/// Claims lock rows they do not take: `FOR UPDATE SKIP LOCKED` that meets
/// the old version of a row another worker just claimed follows its update
/// chain and may wait there, holding what it has locked, and `koth bench
/// queue` met such a cycle between two workers' complete-and-claim about
/// once in 20,000 jobs. Here another transaction makes the cycle on
/// purpose: it holds the job being completed, the recording claims the
/// next job and waits for it, and then it asks for that next job. The
/// recording waits longer than the server's `deadlock_timeout` (1 s) and
/// is the one rolled back (the other's timeout is 10 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_rolled_back_to_break_a_deadlock_is_run_again() {
    let Some(pg) = common::postgres("deadlock") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let first_id = q.enqueue("noop", &json!({}), 0, 3).await.unwrap();
    let next_id = q.enqueue("noop", &json!({}), 0, 3).await.unwrap();
    let first = q.claim("w", &["noop"], LEASE).await.unwrap().unwrap();
    assert_eq!(first.id, first_id);
    let mut other = q.pool().begin().await.unwrap();
    sqlx::query("SET LOCAL deadlock_timeout = '10s'").execute(&mut *other).await.unwrap();
    sqlx::query("SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE").bind(first.id).execute(&mut *other).await.unwrap();
    let mut r = Recorder::new(q.pool());
    let job = first.clone();
    let recording = tokio::spawn(async move {
        let next = r.begin_complete_and_claim(&job, "w", &["noop"], LEASE, &FairShare::NONE).await;
        (r, next)
    });
    // The recording has claimed the next job and waits for the first.
    let waiting = Instant::now();
    loop {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%EXECUTE koth_complete_and_claim%'",
        )
        .fetch_one(q.pool())
        .await
        .unwrap();
        if n == 1 {
            break;
        }
        assert!(waiting.elapsed() < Duration::from_secs(30), "the recording never waited for the first job");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The cycle: this waits for the recording until the server rolls the
    // recording back.
    sqlx::query("SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE").bind(next_id).execute(&mut *other).await.unwrap();
    other.commit().await.unwrap();
    let (mut r, next) = recording.await.unwrap();
    // Run again: it claimed the next job, or found it the other
    // transaction's still and claimed nothing; the completion went through.
    let next = next.expect("the recording, run again after the deadlock");
    r.commit().await.unwrap();
    assert_eq!(state(&q, first.id).await.0, "completed");
    match next {
        Some(j) => {
            assert_eq!((j.id, j.attempt), (next_id, 1), "claimed once: the rolled-back claim did not count");
            assert_eq!(state(&q, next_id).await, ("running".into(), 1, None));
        }
        None => assert_eq!(state(&q, next_id).await, ("available".into(), 0, None), "the rolled-back claim left nothing"),
    }
}

#[tokio::test]
async fn a_chained_completion_is_fenced_and_claims_by_priority() {
    let Some(pg) = common::postgres("chain-fence") else { return };
    let q = Queue::new(common::pool(&pg, 4).await);
    let first = q.enqueue("noop", &json!({}), 5, 3).await.unwrap();
    let low = q.enqueue("noop", &json!({}), 0, 3).await.unwrap();
    let high = q.enqueue("noop", &json!({}), 9, 3).await.unwrap();
    let other = q.enqueue("compile", &json!({}), 100, 3).await.unwrap();
    let a = q.claim("a", &["noop"], LEASE).await.unwrap().unwrap();
    assert_eq!(a.id, high);
    // Completed, and the best remaining job of the asked kinds claimed for "a".
    let next = chain(&q, "a", &a).await.unwrap().unwrap();
    assert_eq!((next.id, next.attempt), (first, 1));
    assert_eq!(state(&q, high).await.0, "completed");
    let holder: String = sqlx::query_scalar("SELECT holder FROM jobs WHERE id = $1").bind(first).fetch_one(q.pool()).await.unwrap();
    assert_eq!(holder, "a");
    // A stale completion (the lease expired, the job went to another
    // worker) completes nothing and claims nothing; the caller's results
    // roll back with it.
    expire(&q, first).await;
    q.rescue_expired().await.unwrap();
    due_now(&q, first).await;
    let fresh = q.claim("b", &["noop"], LEASE).await.unwrap().unwrap();
    assert_eq!(fresh.id, first);
    let mut tx = q.pool().begin().await.unwrap();
    sqlx::query("INSERT INTO jobs (kind, payload) VALUES ('noop', '{\"stale\": true}')").execute(&mut *tx).await.unwrap();
    assert!(
        matches!(Queue::complete_and_claim(&mut tx, &next, "a", &["noop"], LEASE, &FairShare::default()).await, Err(QueueError::Stale(i)) if i == first)
    );
    tx.rollback().await.unwrap();
    assert_eq!(state(&q, low).await.0, "available", "nothing claimed by the stale worker");
    let leaked: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE payload ? 'stale'").fetch_one(q.pool()).await.unwrap();
    assert_eq!(leaked, 0);
    // The same as its own transaction, on a connection of its own (no
    // results to write): the claim the statement made is undone, and the
    // connection goes on working.
    let mut conn = q.pool().acquire().await.unwrap();
    assert!(
        matches!(Queue::complete_and_claim(&mut conn, &next, "a", &["noop"], LEASE, &FairShare::default()).await, Err(QueueError::Stale(i)) if i == first)
    );
    assert_eq!(state(&q, low).await.0, "available", "nothing claimed by the stale worker");
    let one: i32 = sqlx::query_scalar("SELECT 1").fetch_one(&mut *conn).await.unwrap();
    assert_eq!(one, 1);
    drop(conn);
    // A worker whose own job was rescued and waits again, the best there
    // is: its stale completion, which claims before it completes, neither
    // keeps that job nor takes another.
    expire(&q, first).await;
    q.rescue_expired().await.unwrap();
    due_now(&q, first).await;
    assert!(matches!(chain(&q, "b", &fresh).await, Err(QueueError::Stale(i)) if i == first));
    assert_eq!(state(&q, first).await.0, "available");
    assert_eq!(state(&q, low).await.0, "available");
    let fresh = q.claim("b", &["noop"], LEASE).await.unwrap().unwrap();
    assert_eq!(fresh.id, first);
    // The last job: completed, nothing left of its kind to claim.
    let next = chain(&q, "b", &fresh).await.unwrap().unwrap();
    assert_eq!(next.id, low);
    assert_eq!(chain(&q, "b", &next).await.unwrap(), None);
    assert_eq!(state(&q, other).await.0, "available", "other kinds untouched");
}

/// The priorities of the jobs one worker claims, one at a time, until none
/// is left: claimed and completed, `chained` as `koth runner` does or not.
async fn claim_all(q: &Queue, chained: bool) -> Vec<i32> {
    let mut order = Vec::new();
    let mut job = q.claim("w", &["match"], LEASE).await.unwrap();
    while let Some(j) = job {
        let p: i32 = sqlx::query_scalar("SELECT priority FROM jobs WHERE id = $1").bind(j.id).fetch_one(q.pool()).await.unwrap();
        order.push(p);
        job = if chained {
            let mut tx = q.pool().begin().await.unwrap();
            let next = Queue::complete_and_claim(&mut tx, &j, "w", &["match"], LEASE, q.fair_share()).await.unwrap();
            tx.commit().await.unwrap();
            next
        } else {
            complete(q, &j).await.unwrap();
            q.claim("w", &["match"], LEASE).await.unwrap()
        };
    }
    order
}

/// Challenges (priority 50) queued before 20 ladder matches (priority 0):
/// while ladder matches wait, challenges take at most their share (a fifth
/// here) of the starts, counted over the window; once none waits, the
/// rest of the challenges run (nothing idles); and at a share of 1 (strict
/// priority, as before) every challenge would have gone first.
#[tokio::test]
async fn challenges_take_their_share_of_starts_and_no_more_while_ladder_matches_wait() {
    let Some(pg) = common::postgres("fair-share") else { return };
    let pool = common::pool(&pg, 4).await;
    let share = FairShare { priority: 50, share: 0.2, window: Duration::from_secs(300), ..FairShare::NONE };
    for (chained, strict) in [(false, false), (true, false), (false, true)] {
        sqlx::query("DELETE FROM jobs").execute(&pool).await.unwrap();
        let q = Queue::new(pool.clone()).with_fair_share(FairShare { share: if strict { 1.0 } else { share.share }, ..share });
        for i in 0..10 {
            q.enqueue("match", &json!({ "challenge": i }), 50, 3).await.unwrap();
        }
        for i in 0..20 {
            q.enqueue("match", &json!({ "ladder": i }), 0, 3).await.unwrap();
        }
        let order = claim_all(&q, chained).await;
        assert_eq!(order.len(), 30, "every job ran: {order:?}");
        if strict {
            assert_eq!(&order[..10], &[50; 10], "strict priority: challenges first: {order:?}");
            continue;
        }
        // While ladder matches remained, the challenges' starts stayed
        // within their share (one more than a fifth, for the first start).
        let last_ladder = order.iter().rposition(|&p| p == 0).unwrap();
        for k in 1..=last_ladder + 1 {
            let challenges = order[..k].iter().filter(|&&p| p == 50).count();
            assert!(challenges as f64 <= 0.2 * k as f64 + 1.0, "after {k} starts, {challenges} challenges: {order:?}");
        }
        assert!(order[..last_ladder].contains(&50), "challenges were not starved either: {order:?}");
        assert!(order[last_ladder + 1..].iter().all(|&p| p == 50), "then the remaining challenges: {order:?}");
    }
}

/// `n` jobs of `kind` at `priority`, charged to `account` (as
/// `store::submit` charges a version's compile to its owner).
async fn enqueue_for(q: &Queue, kind: &str, priority: i32, account: Option<i64>, n: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in 0..n {
        let id = q.enqueue(kind, &json!({ "i": i, "account": account }), priority, 3).await.unwrap();
        sqlx::query("UPDATE jobs SET account_id = $2 WHERE id = $1").bind(id).bind(account).execute(q.pool()).await.unwrap();
        ids.push(id);
    }
    ids
}

/// One account's compiles run one at a time (the default), whatever else
/// waits or does not: another account's go on, a host's are not counted,
/// and the next of the account's starts when its running one ends.
#[tokio::test]
async fn one_accounts_compiles_run_one_at_a_time() {
    let Some(pg) = common::postgres("compiles-per-account") else { return };
    let q = Queue::new(common::pool(&pg, 4).await).with_fair_share(FairShare { compiles_per_account: 1, ..FairShare::NONE });
    let a = enqueue_for(&q, "compile", 100, Some(1), 3).await;
    let b = enqueue_for(&q, "compile", 100, Some(2), 2).await;
    let host = enqueue_for(&q, "compile", 100, None, 2).await;
    let ladder = enqueue_for(&q, "match", 0, None, 1).await;
    let mut held = Vec::new();
    while let Some(job) = q.claim("w", &["compile", "match"], LEASE).await.unwrap() {
        held.push(job);
    }
    let ids: Vec<i64> = held.iter().map(|j| j.id).collect();
    assert_eq!(ids, vec![a[0], b[0], host[0], host[1], ladder[0]], "one of each account's at once, the host's all");
    let a0 = held.iter().find(|j| j.id == a[0]).unwrap().clone();
    complete(&q, &a0).await.unwrap();
    let next = q.claim("w", &["compile", "match"], LEASE).await.unwrap().map(|j| j.id);
    assert_eq!(next, Some(a[1]), "the account's next compile starts when its running one ends");
    assert_eq!(q.claim("w", &["compile", "match"], LEASE).await.unwrap(), None);
}

/// A flood of slow compiles from 12 fresh accounts while a ladder has
/// matches waiting, with two simulated runners (a compile holds one for
/// 0.75 s, a match for 50 ms): the accounts' compiles get at most their
/// share of the runners' time (10 % over a 6 s window here, about the
/// default's longest compile to window, 120 s to 15 min), the ladder the
/// rest; with a share of 1 (compiles first, as koth had it) the compiles
/// take nearly all of it. Asserted is the share of runner time each kind
/// got after the first window (before it the window holds no history, and
/// runners claiming in the same instant may both start a compile), from
/// the jobs table, not a pace; the ladder's pace against a phase without
/// the flood is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn compiles_from_fresh_accounts_take_their_share_of_runner_time_while_matches_wait() {
    let Some(pg) = common::postgres("compile-share") else { return };
    let pool = common::pool(&pg, 8).await;
    const RUNNERS: usize = 2;
    const COMPILE: Duration = Duration::from_millis(750);
    const WINDOW: Duration = Duration::from_secs(6);
    let mut pace = Vec::new();
    for (flood, share, phase) in [(false, 0.1, 10), (true, 0.1, 20), (true, 1.0, 8)] {
        sqlx::query("DELETE FROM jobs").execute(&pool).await.unwrap();
        let q = Queue::new(pool.clone()).with_fair_share(FairShare {
            compile_share: share,
            compile_window: WINDOW,
            compiles_per_account: 1,
            ..FairShare::NONE
        });
        enqueue_for(&q, "match", 0, None, 2000).await;
        if flood {
            for account in 1..=12 {
                enqueue_for(&q, "compile", 100, Some(account), 4).await;
            }
        }
        let end = Instant::now() + Duration::from_secs(phase);
        let mut runners = Vec::new();
        for r in 0..RUNNERS {
            let q = q.clone();
            runners.push(tokio::spawn(async move {
                while Instant::now() < end {
                    let Some(job) = q.claim(&format!("r{r}"), &["compile", "match"], LEASE).await.unwrap() else { break };
                    tokio::time::sleep(if job.kind == "compile" { COMPILE } else { Duration::from_millis(50) }).await;
                    complete(&q, &job).await.unwrap();
                }
            }));
        }
        for r in runners {
            r.await.unwrap();
        }
        // Each job's runner time after the phase's first window.
        let r = sqlx::query(
            "WITH p AS (SELECT min(started_at) + $1 * interval '1 millisecond' AS from_, max(finished_at) AS to_ FROM jobs), \
                  t AS (SELECT kind, greatest(0, extract(epoch FROM least(finished_at, p.to_) - greatest(started_at, p.from_)))::float8 AS secs \
                        FROM jobs, p WHERE state = 'completed') \
             SELECT coalesce(sum(secs) FILTER (WHERE kind = 'compile'), 0) AS compile, coalesce(sum(secs), 0) AS all_, \
                    extract(epoch FROM (SELECT to_ - from_ FROM p))::float8 AS wall, \
                    (SELECT count(*) FROM jobs, p WHERE kind = 'match' AND state = 'completed' AND started_at >= p.from_) AS matches \
             FROM t",
        )
        .bind(WINDOW.as_millis() as f64)
        .fetch_one(&pool)
        .await
        .unwrap();
        let (compile, all, wall, matches): (f64, f64, f64, i64) = (r.get("compile"), r.get("all_"), r.get("wall"), r.get("matches"));
        let got = compile / all;
        println!(
            "flood {flood}, compile share {share}: after the first window, compiles took {got:.3} of {all:.1} s of runner time; \
             {matches} ladder matches in {wall:.1} s"
        );
        pace.push(matches as f64 / wall);
        if !flood {
            assert_eq!(compile, 0.0);
        } else if share < 1.0 {
            // A compile starts only while compiles used at most the share of
            // the window and no other holds the one runner in two they may;
            // a start adds at most one compile's time before the next look,
            // and two runners claiming in the same instant (each statement
            // sees the table as it began) may both start one: the bound.
            let bound = share + 2.0 * COMPILE.as_secs_f64() / (WINDOW.as_secs_f64() * RUNNERS as f64) + 0.04;
            assert!(got <= bound, "compiles took {got:.3} of the runner time, over {bound:.3}");
            assert!(compile > 0.0, "the flood's compiles were not starved");
        } else {
            assert!(got >= 0.8, "compiles first: the control takes nearly all ({got:.3})");
        }
    }
    println!("the ladder's pace with the flood: {:.2}x its pace without (compiles first: {:.2}x)", pace[1] / pace[0], pace[2] / pace[0]);
}
