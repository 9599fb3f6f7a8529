//! The job queue, in PostgreSQL.
//!
//! ```text
//!            claim (one UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED))
//! available ───────────────────────────────────────────────▶ running ──complete──▶ completed
//!     ▲                                                        │  (fenced by lease)
//!     │ retry after backoff (attempt < max)                    │
//!     └──────── fail / lease expired (rescue) ◀────────────────┘──▶ failed (attempt = max)
//! ```
//!
//! * **Claim** is one short statement: it picks the best available job
//!   (priority, then age) that no one else has locked, marks it running,
//!   counts the attempt and hands out a new **lease** number from a sequence
//!   with a deadline. No transaction stays open while the job runs.
//! * **Heartbeat** extends the deadline, only for the current lease.
//! * **Complete and claim the next** is one statement too, in the
//!   transaction that writes the job's results: a busy worker pays one
//!   statement and one commit per job. It claims first and completes
//!   second; a completion that finds the lease lost fails the statement,
//!   and the claim with it.
//! * **Recording** ([`Recorder`]): `koth runner` sends that statement with
//!   its `BEGIN`, in one round trip, on a connection each worker loop
//!   keeps; the results follow, then `COMMIT`: two round trips a job.
//! * **Conflicts between claims** ([`QueueError::Conflict`]). A claim's
//!   `FOR UPDATE SKIP LOCKED` skips rows others hold, but a row whose old
//!   version it still sees (another worker claimed it since the claim's
//!   snapshot was taken) it follows to the newest version, and locks that
//!   or waits for whoever is changing it: PostgreSQL's wait there ("while
//!   locking updated version", `heap_lock_updated_tuple`) does not honour
//!   `SKIP LOCKED`, and the lock stays though the row is not claimed. Two
//!   workers' complete-and-claim can so wait on each other, and the server
//!   breaks the cycle after its `deadlock_timeout` (1 s) by rolling one
//!   back (SQLSTATE 40P01). Nothing of that transaction was kept, so it is
//!   run again at once: the [`Recorder`] runs its statement again (up to
//!   [`CONFLICT_TRIES`] times), and the worker loop runs a recording again
//!   without the pause it takes after other errors. `koth bench queue`
//!   met such a cycle in 6 of 32 runs with four workers on two cores, and
//!   stopped on it, until it ran such statements again as the runner does.
//! * **Complete**, **fail** and **release** match on `(id, lease, running)`:
//!   a worker that lost its lease (it stalled, the job was rescued and
//!   claimed again) changes nothing; completion happens inside the caller's
//!   transaction, so the job's results and its completion commit together
//!   or not at all.
//! * **Defer** ([`Queue::defer_in`]): a try the machine voided (a match
//!   ended as overloaded, no bot at fault) goes back after a backoff
//!   without spending an attempt, up to [`MAX_OVERLOADS`] times.
//! * **Rescue** returns jobs whose lease expired to `available` after a
//!   backoff, or fails them for good once `max_attempts` is spent, with the
//!   reason in `last_error`.
//! * Inserting or re-opening a job sends `NOTIFY koth_jobs` (a trigger), so
//!   idle workers wake at once; they also poll, as a backstop for a lost
//!   connection.
//! * The claim reads a partial index of available jobs only: finished rows,
//!   however many, are not on the hot path.
//! * **Fair share** ([`FairShare`]): jobs of one priority (challenges) go
//!   ahead of those below it (ladder matches) only while they took at most
//!   a share of the recent starts of both; past it they wait behind them,
//!   and are still claimed when nothing else waits. Strict priority would
//!   let one account's stream of challenges take every runner.

use std::time::Duration;

use serde_json::Value;
use sqlx::postgres::{PgListener, PgPool};
use sqlx::{Executor, Postgres, Row, Transaction};

/// A job this worker holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Claimed {
    pub id: i64,
    pub kind: String,
    pub payload: Value,
    /// 1 for the first try.
    pub attempt: i32,
    pub max_attempts: i32,
    /// The fencing token of this claim.
    pub lease: i64,
    /// Tries the machine voided before this one ([`Queue::defer_in`]).
    pub overloads: i32,
}

impl Claimed {
    /// The job, typed ([`crate::job::Job`]).
    pub fn job(&self) -> Result<crate::job::Job, String> {
        crate::job::Job::from_row(&self.kind, &self.payload)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The job's lease is no longer ours: it expired and was rescued (and
    /// perhaps claimed again). Whatever we computed must be dropped.
    #[error("job {0}: the lease was lost (expired and rescued); the result is dropped")]
    Stale(i64),
    #[error("database: {0}")]
    Db(sqlx::Error),
    /// The server rolled the transaction back to break a conflict with
    /// another one (a deadlock, or a serialization failure): nothing of it
    /// was kept, and the remedy is to run it again at once ("Conflicts
    /// between claims", in the module docs).
    #[error("database conflict with another transaction, rolled back; it is run again: {0}")]
    Conflict(sqlx::Error),
    /// A worker asked for a kind of job that is not a plain name.
    #[error("job kind {0:?} is not a plain name (letters, digits and _)")]
    Kind(String),
}

/// SQLSTATEs of a transaction the server rolled back to break a conflict
/// with another: `deadlock_detected` and `serialization_failure`.
const CONFLICTS: [&str; 2] = ["40P01", "40001"];

impl From<sqlx::Error> for QueueError {
    fn from(e: sqlx::Error) -> QueueError {
        match &e {
            sqlx::Error::Database(d) if d.code().is_some_and(|c| CONFLICTS.contains(&c.as_ref())) => QueueError::Conflict(e),
            _ => QueueError::Db(e),
        }
    }
}

impl QueueError {
    /// The database error under this one, if any.
    pub fn into_db(self) -> Option<sqlx::Error> {
        match self {
            QueueError::Db(e) | QueueError::Conflict(e) => Some(e),
            QueueError::Stale(_) | QueueError::Kind(_) => None,
        }
    }
}

/// How many times a recording's first statement is run again at once
/// after a conflict ([`QueueError::Conflict`]) before the conflict is the
/// caller's: each try waited the server's `deadlock_timeout` (1 s by
/// default) before it was rolled back.
pub const CONFLICT_TRIES: u32 = 5;

/// What [`Queue::fail`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOutcome {
    /// Back to available after this delay.
    Retried(Duration),
    /// Out of attempts (or not retryable): failed for good.
    Failed,
}

/// Delay before attempt `attempt + 1` after attempt `attempt` failed:
/// 2, 4, 8, ... seconds, at most 5 minutes.
pub fn backoff(attempt: i32) -> Duration {
    let exp = attempt.clamp(1, 20) as u32;
    Duration::from_secs((1u64 << exp).min(300))
}

/// A fenced statement touched the job's row, or the lease is not ours.
fn fenced(rows: u64, job: i64) -> Result<(), QueueError> {
    if rows == 1 {
        Ok(())
    } else {
        Err(QueueError::Stale(job))
    }
}

/// How much of the runners some jobs may take while others wait.
///
/// **Challenges** (jobs of `priority`): ahead of the jobs below them only
/// while they took at most `share` of the jobs started in the last
/// `window` at that priority or below (compiles and validation games, above
/// it, are not counted). A job over its share waits behind the others; with
/// no other job waiting it is claimed all the same.
///
/// **An account's submissions** (the compiles and validation games charged
/// to an account, `jobs.account_id`; a host's are not): at most
/// `compiles_per_account` of one account's run at once, always; and while
/// other jobs wait they start only while such jobs used at most
/// `compile_share` of the runner time spent in the last `compile_window`
/// (time, not starts: a compile can hold a runner for minutes, a move
/// takes milliseconds). One account, or a flood of fresh ones, then holds
/// at most that share of the runners while the ladders have matches to
/// play; with nothing else waiting, compiles take every free runner.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FairShare {
    pub priority: i32,
    pub share: f64,
    pub window: Duration,
    pub compile_share: f64,
    pub compile_window: Duration,
    pub compiles_per_account: u32,
}

impl FairShare {
    /// Nothing held back: strict priority.
    pub const NONE: FairShare = FairShare {
        priority: NO_PRIORITY,
        share: 1.0,
        window: Duration::ZERO,
        compile_share: 1.0,
        compile_window: Duration::ZERO,
        compiles_per_account: u32::MAX,
    };

    /// The claim made when nothing was found with these shares: nothing
    /// held back behind other jobs (there are none), but one account's
    /// compiles at once still bounded.
    pub fn relaxed(&self) -> FairShare {
        FairShare { compiles_per_account: self.compiles_per_account, ..FairShare::NONE }
    }

    /// Whether a job may wait behind others under these shares.
    fn holds_back(&self) -> bool {
        self.priority != NO_PRIORITY || self.compile_share < 1.0
    }
}

impl Default for FairShare {
    /// Challenges take at most a tenth of the match starts of the last
    /// minute while ladder matches wait (`tests/fair_share.rs` counts the
    /// starts under a flood of them).
    ///
    /// An account's compiles: one at a time, and together at most 10 % of
    /// the runners busy and of the runner time of the last 15 minutes while
    /// matches wait (a window many times the longest compile, 120 s, so
    /// that one compile moves the share by little)
    /// (`tests/compile_share.rs` floods the queue with slow compiles from
    /// fresh accounts while a ladder plays).
    fn default() -> Self {
        FairShare {
            priority: super::store::PRIORITY_CHALLENGE,
            share: 0.1,
            window: Duration::from_secs(60),
            compile_share: DEFAULT_COMPILE_SHARE,
            compile_window: Duration::from_secs(900),
            compiles_per_account: DEFAULT_COMPILES_PER_ACCOUNT,
        }
    }
}

/// The claim: the best available job (priority, then age) of `kinds`
/// that no one else has locked, for holder `$1`, with a new lease of `$2`;
/// a job of the share's priority only while such jobs took at most its
/// share of the starts at that priority or below in its window
/// ([`FairShare`]). The count is evaluated (once) only when a job of that
/// priority is the candidate. When this finds nothing, the claim is made
/// again with no priority held back ([`FairShare::NONE`]), so a job over
/// its share still runs when nothing else waits.
///
/// The kinds and the share are written into the statement, not bound: a
/// worker's are the same at every claim. Bound, their values let the
/// planner find each claim's own plan cheaper than the one plan for any
/// values, so PostgreSQL planned the statement anew at every execution
/// (87 µs of planning for 49 of work, 117 for 66 in complete-and-claim,
/// `koth bench queue` with `pg_stat_statements`); written in, a
/// connection plans a worker's statement once.
fn claim_statement(kinds: &[impl AsRef<str>], share: &FairShare) -> Result<String, QueueError> {
    let mut list = Vec::with_capacity(kinds.len());
    for kind in kinds {
        let kind = kind.as_ref();
        if kind.is_empty() || !kind.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(QueueError::Kind(kind.to_owned()));
        }
        list.push(format!("'{kind}'"));
    }
    let mut held_back = if share.priority == NO_PRIORITY {
        String::new()
    } else {
        format!(
            "AND (c.priority <> {p} \
                  OR (SELECT count(*) FILTER (WHERE s.priority = c.priority) <= '{s}'::float8 * count(*) FROM jobs s \
                      WHERE s.started_at > now() - interval '{w} milliseconds' AND s.priority <= c.priority)) ",
            p = share.priority,
            s = share.share,
            w = share.window.as_millis(),
        )
    };
    if share.compiles_per_account != u32::MAX {
        held_back += &format!(
            "AND (c.account_id IS NULL \
                  OR (SELECT count(*) FROM jobs r WHERE r.state = 'running' AND r.account_id = c.account_id) < {n}) ",
            n = share.compiles_per_account,
        );
    }
    if share.compile_share < 1.0 {
        // Two looks, each a subquery correlated with the candidate
        // (`c.account_id IS NOT NULL` inside it), so PostgreSQL evaluates it
        // only when an account's job is the candidate: uncorrelated, they
        // were init-plans run on every claim, and `koth bench queue` fell
        // from 1.05-1.19x of pgbench to 0.34-0.36x with two workers and
        // cheap commits (measured, then fixed). (1) the accounts' jobs
        // running hold at most the share of the runners busy (this claim's
        // included), and always one may run; (2) they used at most the
        // share of the runner time spent in the window, each job's part of
        // it, running ones to now. (1) keeps several runners from starting
        // compiles in the same instant, (2) bounds them over time: a compile
        // holds a runner for up to minutes, a move takes milliseconds. The
        // time is at least one runner's window: on a quiet server, or early
        // in its life, an account's jobs may use the share of one runner's
        // window whatever else ran.
        held_back += &format!(
            "AND (c.account_id IS NULL \
                  OR ((SELECT count(*) FILTER (WHERE r.account_id IS NOT NULL) < greatest(1, floor('{s}'::float8 * (count(*) + 1))) \
                       FROM jobs r WHERE r.state = 'running' AND c.account_id IS NOT NULL) \
                      AND (SELECT coalesce(sum(t.secs) FILTER (WHERE t.account_id IS NOT NULL), 0) \
                                  <= '{s}'::float8 * greatest(coalesce(sum(t.secs), 0), {ws}) \
                           FROM (SELECT u.account_id, \
                                        extract(epoch FROM (CASE WHEN u.state = 'running' THEN now() ELSE u.finished_at END) \
                                                           - greatest(u.started_at, now() - interval '{w} milliseconds')) AS secs \
                                 FROM jobs u \
                                 WHERE c.account_id IS NOT NULL AND u.started_at IS NOT NULL \
                                   AND (u.state = 'running' \
                                        OR (u.started_at > now() - interval '{w} milliseconds' - interval '1 hour' \
                                            AND u.finished_at > now() - interval '{w} milliseconds'))) t))) ",
            s = share.compile_share,
            w = share.compile_window.as_millis(),
            ws = share.compile_window.as_secs_f64(),
        );
    }
    Ok(format!(
        "UPDATE jobs SET state = 'running', attempt = attempt + 1, holder = $1, started_at = now(), \
                lease = nextval('job_lease_seq'), lease_until = now() + $2::interval \
         WHERE id = (SELECT c.id FROM jobs c \
                     WHERE c.state = 'available' AND c.run_after <= now() AND c.kind = ANY(ARRAY[{kinds}]::text[]) \
                       {held_back}\
                     ORDER BY c.priority DESC, c.run_after, c.id \
                     FOR UPDATE OF c SKIP LOCKED LIMIT 1)",
        kinds = list.join(", "),
    ))
}

/// [`Queue::complete_and_claim`]'s statement: `$1` the holder, `$2` the
/// lease, `$3` and `$4` the completed job's id and lease.
fn complete_and_claim_statement(kinds: &[impl AsRef<str>], share: &FairShare) -> Result<String, QueueError> {
    // `done` reads `next`'s count only so that the claim runs first.
    Ok(format!(
        "WITH next AS ({claim} RETURNING {CLAIMED}), \
              done AS (UPDATE jobs SET state = 'completed', finished_at = now(), lease_until = NULL \
                       WHERE id = $3 AND lease = $4 AND state = 'running' AND (SELECT count(*) FROM next) >= 0 RETURNING id) \
         SELECT CASE WHEN EXISTS (SELECT 1 FROM done) THEN 1 ELSE koth_lease_lost($3) END AS fence, next.* \
         FROM (SELECT 1) AS one LEFT JOIN next ON true",
        claim = claim_statement(kinds, share)?,
    ))
}

/// [`FairShare::compile_share`] by default.
pub const DEFAULT_COMPILE_SHARE: f64 = 0.1;
/// [`FairShare::compiles_per_account`] by default.
pub const DEFAULT_COMPILES_PER_ACCOUNT: u32 = 1;

/// How many tries of a job the machine's overload may void before they
/// count as its attempts ([`Queue::defer_in`]): with [`backoff`] between
/// them, about an hour of a machine too busy to time a match.
pub const MAX_OVERLOADS: i32 = 20;

/// A priority no job has: a share of it holds nothing back.
const NO_PRIORITY: i32 = i32::MIN;

/// What a claim returns.
const CLAIMED: &str = "id, kind, payload, attempt, max_attempts, lease, overloads";

fn claimed(r: &sqlx::postgres::PgRow) -> Claimed {
    Claimed {
        id: r.get("id"),
        kind: r.get("kind"),
        payload: r.get("payload"),
        attempt: r.get("attempt"),
        max_attempts: r.get("max_attempts"),
        lease: r.get("lease"),
        overloads: r.get("overloads"),
    }
}

/// `d` as PostgreSQL's interval, sent in its binary form (as text, the
/// server parsed it at every claim and heartbeat).
fn interval(d: Duration) -> sqlx::postgres::types::PgInterval {
    sqlx::postgres::types::PgInterval { months: 0, days: 0, microseconds: d.as_micros().min(i64::MAX as u128) as i64 }
}

/// The SQLSTATE of `koth_lease_lost()` (migration 0017): a chained
/// completion found the lease lost, and its statement failed so that the
/// claim it made is undone.
const LEASE_LOST: &str = "KQ001";

#[derive(Clone, Debug)]
pub struct Queue {
    pool: PgPool,
    share: FairShare,
}

impl Queue {
    /// The queue, with the default [`FairShare`].
    pub fn new(pool: PgPool) -> Queue {
        Queue { pool, share: FairShare::default() }
    }

    /// Claims keep `share` ([`FairShare`]).
    pub fn with_fair_share(self, share: FairShare) -> Queue {
        Queue { share, ..self }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub fn fair_share(&self) -> &FairShare {
        &self.share
    }

    /// Add a job; returns its id.
    pub async fn enqueue(&self, kind: &str, payload: &Value, priority: i32, max_attempts: i32) -> Result<i64, QueueError> {
        let mut conn = self.pool.acquire().await?;
        Ok(enqueue_on(&mut conn, kind, payload, priority, max_attempts).await?)
    }

    /// Claim the best available job of one of `kinds`, or `None`.
    pub async fn claim(&self, holder: &str, kinds: &[&str], lease: Duration) -> Result<Option<Claimed>, QueueError> {
        let mut conn = self.pool.acquire().await?;
        claim_on(&mut conn, holder, kinds, lease, &self.share).await
    }

    /// Complete `job` and claim the next one for the same worker, in one
    /// statement inside the caller's transaction (where it also writes the
    /// job's results): the completion is fenced like [`Queue::complete`]
    /// (`Err(Stale)` if the lease is not ours, and then nothing is
    /// claimed), and the next claim commits with it. A worker that goes on
    /// to the next job pays one statement and one commit per job instead
    /// of a claim and a completion, each with its commit. The claim keeps
    /// `share` as [`Queue::claim`] does.
    ///
    /// The statement claims first and completes second: 70-76 µs a
    /// statement against 90-101 the other way round, with two workers
    /// (`koth bench queue --database-url` on a server with
    /// `pg_stat_statements`).
    /// Every statement reads the table as it was when it began, so a claim
    /// made after the completion read it as of before the completion; the
    /// likely cost is that with several workers it met more jobs claimed
    /// by others in the meantime, each locked and re-checked before it was
    /// skipped. A completion that finds the lease lost makes the statement
    /// fail ([`LEASE_LOST`]), which undoes the claim.
    pub async fn complete_and_claim(
        conn: &mut sqlx::PgConnection,
        job: &Claimed,
        holder: &str,
        kinds: &[&str],
        lease: Duration,
        share: &FairShare,
    ) -> Result<Option<Claimed>, QueueError> {
        let sql = complete_and_claim_statement(kinds, share)?;
        let fetched = sqlx::query(&sql).bind(holder).bind(interval(lease)).bind(job.id).bind(job.lease).fetch_one(&mut *conn).await;
        next_after_completion(conn, fetched, job, holder, kinds, lease, share).await
    }

    /// Extend the lease; `Err(Stale)` when it is no longer ours.
    pub async fn heartbeat(&self, job: &Claimed, lease: Duration) -> Result<(), QueueError> {
        let n = sqlx::query(
            "UPDATE jobs SET lease_until = now() + $3::interval \
             WHERE id = $1 AND lease = $2 AND state = 'running'",
        )
        .bind(job.id)
        .bind(job.lease)
        .bind(interval(lease))
        .execute(&self.pool)
        .await?
        .rows_affected();
        fenced(n, job.id)
    }

    /// Mark the job completed inside `tx`, where the caller also writes the
    /// job's results: both commit together, and only while the lease is ours.
    pub async fn complete(tx: &mut Transaction<'_, Postgres>, job: &Claimed) -> Result<(), QueueError> {
        let n = sqlx::query(
            "UPDATE jobs SET state = 'completed', finished_at = now(), lease_until = NULL \
             WHERE id = $1 AND lease = $2 AND state = 'running'",
        )
        .bind(job.id)
        .bind(job.lease)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        fenced(n, job.id)
    }

    /// The job failed: retry after [`backoff`] while attempts remain (and
    /// `retryable`), else fail it for good with `error`.
    pub async fn fail(&self, job: &Claimed, error: &str, retryable: bool) -> Result<FailOutcome, QueueError> {
        let mut tx = self.pool.begin().await?;
        let outcome = Self::fail_in(&mut tx, job, error, retryable).await?;
        tx.commit().await?;
        Ok(outcome)
    }

    /// [`Queue::fail`] inside the caller's transaction.
    pub async fn fail_in(
        tx: &mut Transaction<'_, Postgres>,
        job: &Claimed,
        error: &str,
        retryable: bool,
    ) -> Result<FailOutcome, QueueError> {
        let retry = retryable && job.attempt < job.max_attempts;
        let delay = backoff(job.attempt);
        let n = sqlx::query(
            "UPDATE jobs SET state = CASE WHEN $3 THEN 'available' ELSE 'failed' END, \
                    run_after = CASE WHEN $3 THEN now() + $4::interval ELSE run_after END, \
                    finished_at = CASE WHEN $3 THEN NULL ELSE now() END, \
                    holder = NULL, lease_until = NULL, last_error = $5 \
             WHERE id = $1 AND lease = $2 AND state = 'running'",
        )
        .bind(job.id)
        .bind(job.lease)
        .bind(retry)
        .bind(interval(delay))
        .bind(error)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        fenced(n, job.id)?;
        Ok(if retry { FailOutcome::Retried(delay) } else { FailOutcome::Failed })
    }

    /// The machine, not the job, failed this try (a match ended as
    /// overloaded: no bot was at fault): back to available after
    /// [`backoff`] of its overloads so far, without spending an attempt, up
    /// to [`MAX_OVERLOADS`] times; past that the try counts as a failure
    /// ([`Queue::fail_in`], retryable). A runner that plays more bots than
    /// it has cores then plays its matches again later instead of failing
    /// them after `max_attempts` voids (five voids in a minute refused a
    /// new version on docker-compose's three runners on two cores).
    pub async fn defer_in(tx: &mut Transaction<'_, Postgres>, job: &Claimed, error: &str) -> Result<FailOutcome, QueueError> {
        let deferred: Option<i32> = sqlx::query_scalar(
            "UPDATE jobs SET state = 'available', attempt = attempt - 1, overloads = overloads + 1, \
                    run_after = now() + make_interval(secs => LEAST(300, power(2, LEAST(overloads + 1, 20)))), \
                    holder = NULL, lease_until = NULL, last_error = $3 \
             WHERE id = $1 AND lease = $2 AND state = 'running' AND overloads < $4 \
             RETURNING overloads",
        )
        .bind(job.id)
        .bind(job.lease)
        .bind(error)
        .bind(MAX_OVERLOADS)
        .fetch_optional(&mut **tx)
        .await?;
        match deferred {
            Some(overloads) => Ok(FailOutcome::Retried(backoff(overloads))),
            // Out of overloads, or the lease is lost (which `fail_in` says).
            None => {
                let why = format!("{error} (the machine was overloaded on {MAX_OVERLOADS} tries before)");
                Self::fail_in(tx, job, &why, true).await
            }
        }
    }

    /// Give the job back untouched (a worker shutting down): available at
    /// once, and this attempt does not count.
    pub async fn release(&self, job: &Claimed) -> Result<(), QueueError> {
        let n = sqlx::query(
            "UPDATE jobs SET state = 'available', attempt = attempt - 1, holder = NULL, lease_until = NULL, \
                    run_after = now() \
             WHERE id = $1 AND lease = $2 AND state = 'running'",
        )
        .bind(job.id)
        .bind(job.lease)
        .execute(&self.pool)
        .await?
        .rows_affected();
        fenced(n, job.id)
    }

    /// Return every job whose lease expired to the queue (after a backoff),
    /// or fail it when its attempts are spent. Returns (retried, failed).
    /// Safe to run from any number of processes at once.
    pub async fn rescue_expired(&self) -> Result<(u64, u64), QueueError> {
        // The delay is [`backoff`] written in SQL (one statement for every
        // expired job): 2^attempt seconds, at most 300.
        let rows = sqlx::query(
            "UPDATE jobs SET \
                state = CASE WHEN attempt >= max_attempts THEN 'failed' ELSE 'available' END, \
                run_after = now() + make_interval(secs => LEAST(300, power(2, LEAST(attempt, 20)))), \
                finished_at = CASE WHEN attempt >= max_attempts THEN now() ELSE NULL END, \
                last_error = format('lease expired on attempt %s (holder %s)', attempt, holder), \
                holder = NULL, lease_until = NULL \
             WHERE id IN (SELECT id FROM jobs WHERE state = 'running' AND lease_until < now() \
                          FOR UPDATE SKIP LOCKED) \
             RETURNING state",
        )
        .fetch_all(&self.pool)
        .await?;
        let failed = rows.iter().filter(|r| r.get::<String, _>("state") == crate::job::JobState::Failed.as_str()).count() as u64;
        Ok((rows.len() as u64 - failed, failed))
    }

    /// A listener for `NOTIFY koth_jobs`.
    pub async fn listener(&self) -> Result<PgListener, QueueError> {
        let mut l = PgListener::connect_with(&self.pool).await?;
        l.listen("koth_jobs").await?;
        Ok(l)
    }
}

/// A worker's own connection for recording its jobs, kept between jobs
/// (not taken from the pool, which pings a connection as it hands it out
/// and as it takes it back) and reconnected after an error; the transaction
/// that completes a job, claims the next and writes the results opens with
/// its first statement.
///
/// The runner's recording paid four round trips a job before: the pool's
/// ping, `BEGIN`, complete-and-claim, `COMMIT`, where pgbench's claim and
/// completion pay two. Here it pays two: `BEGIN` and the completion
/// claiming the next go in one message (a simple query: `BEGIN; EXECUTE
/// koth_complete_and_claim(...)`, the statement prepared once per
/// connection, so its plan is kept as the pool's prepared statements'
/// are), the results' statements follow in the same transaction, and
/// `COMMIT` ends it. The statement is [`Queue::complete_and_claim`]'s, so
/// the queue's rules (fencing, fair share, at-most-once) are the same.
///
/// The simple query carries no value but numbers: the holder's name and
/// the lease are set on the connection once, as bound parameters of
/// `set_config` (the session's `koth.holder` and `koth.lease`), and
/// `EXECUTE` reads them with `current_setting`; the job's id and lease are
/// integers. So no text of a worker's is quoted into SQL, and nothing
/// depends on `standard_conforming_strings`.
pub struct Recorder {
    options: sqlx::postgres::PgConnectOptions,
    conn: Option<sqlx::PgConnection>,
    /// The claim statement prepared on `conn`, for these kinds and shares.
    prepared: Option<String>,
    /// The holder and lease set on `conn` (`koth.holder`, `koth.lease`).
    session: Option<(String, Duration)>,
    /// A transaction was opened on `conn` and not yet committed or rolled
    /// back: set before `BEGIN` is sent, so that what a recording cut off
    /// half-way (its future dropped) left open is rolled back before the
    /// connection is used again (or the connection dropped).
    open: bool,
    /// Recordings run again after a conflict ([`QueueError::Conflict`]).
    conflicts: u64,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Recorder {{ connected: {} }}", self.conn.is_some())
    }
}

impl Recorder {
    /// A recorder connecting as `pool` does; it connects at its first use.
    pub fn new(pool: &PgPool) -> Recorder {
        Recorder { options: (*pool.connect_options()).clone(), conn: None, prepared: None, session: None, open: false, conflicts: 0 }
    }

    async fn connection(&mut self, sql: &str, holder: &str, lease: Duration) -> Result<(), QueueError> {
        use sqlx::Connection;
        // A transaction left open (a recording cut off half-way) is rolled
        // back before anything else, or its connection dropped.
        if self.open {
            self.abandon().await;
        }
        if self.conn.is_none() {
            self.conn = Some(sqlx::PgConnection::connect_with(&self.options).await?);
            self.prepared = None;
            self.session = None;
        }
        let conn = self.conn.as_mut().expect("connected above");
        if self.session.as_ref().is_none_or(|(h, l)| h != holder || *l != lease) {
            // Outside any transaction, so that it stays for the session.
            sqlx::query("SELECT set_config('koth.holder', $1, false), set_config('koth.lease', $2, false)")
                .bind(holder)
                .bind(format!("{} microseconds", lease.as_micros().min(i64::MAX as u128)))
                .execute(&mut *conn)
                .await?;
            self.session = Some((holder.to_owned(), lease));
        }
        if self.prepared.as_deref() != Some(sql) {
            if self.prepared.is_some() {
                (&mut *conn).execute(sqlx::raw_sql("DEALLOCATE koth_complete_and_claim")).await?;
                self.prepared = None;
            }
            (&mut *conn)
                .execute(sqlx::raw_sql(&format!("PREPARE koth_complete_and_claim (text, interval, bigint, bigint) AS {sql}")))
                .await?;
            self.prepared = Some(sql.to_owned());
        }
        Ok(())
    }

    /// Open the transaction that records `job`: complete it and claim the
    /// holder's next job, as [`Queue::complete_and_claim`] does, in the
    /// same round trip as `BEGIN`. Then write the results on the returned
    /// connection and [`Recorder::commit`]; on any error,
    /// [`Recorder::abandon`]. A lost lease is `Err(Stale)`, with nothing
    /// claimed and the transaction rolled back.
    pub async fn begin_complete_and_claim(
        &mut self,
        job: &Claimed,
        holder: &str,
        kinds: &[&str],
        lease: Duration,
        share: &FairShare,
    ) -> Result<Option<Claimed>, QueueError> {
        let sql = complete_and_claim_statement(kinds, share)?;
        // Numbers only: the holder and the lease are the session's.
        let run = format!(
            "BEGIN; EXECUTE koth_complete_and_claim(current_setting('koth.holder'), current_setting('koth.lease')::interval, {}, {})",
            job.id, job.lease
        );
        let mut result = self.begin_with(&sql, &run, job, holder, kinds, lease, share).await;
        // A conflict rolled back everything the transaction had, which is
        // this statement only: it is run again at once.
        let mut tries = 1;
        while matches!(result, Err(QueueError::Conflict(_))) && tries < CONFLICT_TRIES {
            tracing::info!(
                job = job.id,
                tries,
                "recording met a conflict with another worker's claim; running it again ({})",
                result.as_ref().err().map(|e| e.to_string()).unwrap_or_default()
            );
            self.abandon().await;
            tries += 1;
            self.conflicts += 1;
            result = self.begin_with(&sql, &run, job, holder, kinds, lease, share).await;
        }
        if result.is_err() {
            let had = self.conn.is_some();
            self.abandon().await;
            // The kept connection was dead (the server restarted, or closed
            // it while the worker was idle or its job ran): nothing it held
            // was committed, so the recording is tried once more at once,
            // on a new connection.
            if had && self.conn.is_none() && !matches!(result, Err(QueueError::Stale(_))) {
                result = self.begin_with(&sql, &run, job, holder, kinds, lease, share).await;
                if result.is_err() {
                    self.abandon().await;
                }
            }
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    async fn begin_with(
        &mut self,
        sql: &str,
        run: &str,
        job: &Claimed,
        holder: &str,
        kinds: &[&str],
        lease: Duration,
        share: &FairShare,
    ) -> Result<Option<Claimed>, QueueError> {
        self.connection(sql, holder, lease).await?;
        self.open = true;
        let conn = self.conn.as_mut().expect("connected above");
        let fetched = (&mut *conn).fetch_one(sqlx::raw_sql(run)).await;
        next_after_completion(conn, fetched, job, holder, kinds, lease, share).await
    }

    /// How many recordings' first statements were run again after a
    /// conflict, since this recorder was made.
    pub fn conflicts(&self) -> u64 {
        self.conflicts
    }

    /// The connection of the open transaction, for the results.
    pub fn conn(&mut self) -> Result<&mut sqlx::PgConnection, QueueError> {
        self.conn.as_mut().ok_or_else(|| QueueError::Db(sqlx::Error::PoolClosed))
    }

    /// Commit what the transaction holds: the completion, the next claim
    /// and the results, together or not at all.
    pub async fn commit(&mut self) -> Result<(), QueueError> {
        // Every error in the transaction goes to `abandon`, so the
        // transaction committed here has not failed (PostgreSQL would roll
        // a failed one back and say so only in the command's tag).
        let conn = self.conn()?;
        match (&mut *conn).execute(sqlx::raw_sql("COMMIT")).await {
            Ok(_) => {
                self.open = false;
                Ok(())
            }
            Err(e) => {
                self.abandon().await;
                Err(e.into())
            }
        }
    }

    /// Roll back whatever the transaction holds; a connection that cannot
    /// is dropped (a new one is made at the next use).
    pub async fn abandon(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            if (&mut *conn).execute(sqlx::raw_sql("ROLLBACK")).await.is_err() {
                self.conn = None;
                self.prepared = None;
                self.session = None;
            }
        }
        self.open = false;
    }
}

/// What complete-and-claim's statement gave, pooled or on a
/// [`Recorder`]'s connection: the next job; `Stale` when the completion
/// found its lease lost (the statement, its claim with it, was undone);
/// or, when nothing was claimed but jobs over their share wait, the claim
/// without the share.
async fn next_after_completion(
    conn: &mut sqlx::PgConnection,
    fetched: Result<sqlx::postgres::PgRow, sqlx::Error>,
    job: &Claimed,
    holder: &str,
    kinds: &[&str],
    lease: Duration,
    share: &FairShare,
) -> Result<Option<Claimed>, QueueError> {
    let row = match fetched {
        Ok(row) => row,
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(LEASE_LOST) => return Err(QueueError::Stale(job.id)),
        Err(e) => return Err(e.into()),
    };
    match row.get::<Option<i64>, _>("id") {
        Some(_) => Ok(Some(claimed(&row))),
        // Only jobs over their share wait, or none: the claim without it.
        None if share.holds_back() => claim_on(conn, holder, kinds, lease, &share.relaxed()).await,
        None => Ok(None),
    }
}

/// [`Queue::claim`] on a connection (or inside a transaction): with
/// `share`, then, if that finds nothing, with none held back.
pub async fn claim_on<S: AsRef<str>>(
    conn: &mut sqlx::PgConnection,
    holder: &str,
    kinds: &[S],
    lease: Duration,
    share: &FairShare,
) -> Result<Option<Claimed>, QueueError> {
    for s in [*share, share.relaxed()] {
        let sql = format!("{} RETURNING {CLAIMED}", claim_statement(kinds, &s)?);
        let row = sqlx::query(&sql).bind(holder).bind(interval(lease)).fetch_optional(&mut *conn).await?;
        if let Some(r) = row {
            return Ok(Some(claimed(&r)));
        }
        if !s.holds_back() {
            break;
        }
    }
    Ok(None)
}

/// Insert a job on a connection or inside a transaction.
pub async fn enqueue_on(
    conn: &mut sqlx::PgConnection,
    kind: &str,
    payload: &Value,
    priority: i32,
    max_attempts: i32,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("INSERT INTO jobs (kind, payload, priority, max_attempts) VALUES ($1, $2, $3, $4) RETURNING id")
        .bind(kind)
        .bind(payload)
        .bind(priority)
        .bind(max_attempts)
        .fetch_one(conn)
        .await
}

/// Wait until a job may be available: a notification, or `poll` elapsed
/// (the backstop). A broken listener is reconnected by sqlx on next use.
pub async fn wait_for_work(listener: &mut PgListener, poll: Duration) {
    let _ = tokio::time::timeout(poll, listener.try_recv()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claim_statement_writes_in_plain_kinds_and_the_share_and_refuses_anything_else() {
        let share = FairShare { priority: 50, share: 0.25, window: Duration::from_secs(90), ..FairShare::NONE };
        let sql = claim_statement(&["compile", "match", "validate_game"], &share).unwrap();
        assert!(sql.contains("c.kind = ANY(ARRAY['compile', 'match', 'validate_game']::text[])"), "{sql}");
        assert!(
            sql.contains("c.priority <> 50") && sql.contains("'0.25'::float8") && sql.contains("interval '90000 milliseconds'"),
            "{sql}"
        );
        let strict = claim_statement(&["match"], &FairShare::NONE).unwrap();
        assert!(!strict.contains("count(*)") && !strict.contains("account_id"), "nothing held back, nothing counted: {strict}");
        let compiles =
            FairShare { compile_share: 0.2, compile_window: Duration::from_secs(300), compiles_per_account: 2, ..FairShare::NONE };
        let sql = claim_statement(&["compile"], &compiles).unwrap();
        assert!(
            sql.contains("r.account_id = c.account_id) < 2") && sql.contains("<= '0.2'::float8") && sql.contains("300000 milliseconds"),
            "{sql}"
        );
        let relaxed = claim_statement(&["compile"], &compiles.relaxed()).unwrap();
        assert!(relaxed.contains("< 2") && !relaxed.contains("float8"), "relaxed, one account's compiles stay bounded: {relaxed}");
        for bad in ["", "match'; DROP TABLE jobs; --", "a\\'", "kind with spaces", "é"] {
            assert!(matches!(claim_statement(&["compile", bad], &share), Err(QueueError::Kind(k)) if k == bad), "{bad:?}");
        }
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff(1), Duration::from_secs(2));
        assert_eq!(backoff(2), Duration::from_secs(4));
        assert_eq!(backoff(8), Duration::from_secs(256));
        assert_eq!(backoff(9), Duration::from_secs(300));
        assert_eq!(backoff(1000), Duration::from_secs(300));
        assert_eq!(backoff(0), Duration::from_secs(2));
    }
}
