//! A/B tests on the server: "is version #N of my bot better than #M?"
//! (docs/ab.md). Every statement about them is here: starting one (its
//! limits counted after a lock, in the transaction that inserts it),
//! queueing its pairs, counting a finished pair and reading where a test
//! stands.
//!
//! A test plays **pairs** of matches between the bot's two versions on one
//! seed, the seats swapped in the second (NEW, OLD, NEW, ... then OLD,
//! NEW, OLD, ...). They are ordinary matches with replays, on the bot's
//! ladder, but **unrated** and asked for by the bot's owner
//! (`requested_by`), so no ladder format, rating or leaderboard counts them
//! (as for challenges); `ab_test` and `ab_pair` tie them to the test. Their
//! jobs go in at the challenges' priority, charged to the owner
//! (`jobs.account_id`), so the claim holds them to the challenges' share of
//! the match starts and to the account's share of the runners
//! ([`crate::db::queue::FairShare`]): a test cannot starve the ladders nor
//! other authors. At most [`PAIRS_IN_FLIGHT`] pairs of a test are queued at
//! once; the next is queued when one is counted, and by the scheduler's tick
//! ([`top_up`]) after a pair that could not be played.
//!
//! When both matches of a pair are finished, the pair is counted
//! ([`count_pair`], in the transaction that records the second match):
//! the statistic and the verdict are `koth_ladder::sprt`'s, pure, resumed
//! from the stored tally. Every transaction that counts or queues a test's
//! pairs locks the test's row first (the one recording a match, before it
//! writes the match), so two pairs finishing together count one after the
//! other; holding it, none waits for another's rows (cancelling skips
//! what is locked), so none can wait for each other.

use sqlx::{PgConnection, PgPool, Row};

use super::store::{self, StoreError};
use crate::job::{AbState, Job, MatchState};
use crate::types::{AbMatch, AbTest};
use koth_ladder::sprt::{GameScore, Hypothesis, Sprt, Verdict};

/// Pairs of one test queued at once: one playing while the next waits.
pub const PAIRS_IN_FLIGHT: i64 = 2;
/// Pairs a test plays at most unless told otherwise.
pub const DEFAULT_MAX_PAIRS: i32 = 200;
/// The most pairs a test may ask for.
pub const MAX_PAIRS: i32 = 1000;
/// Pairs that could not be played (a match failed or was cancelled) after
/// which a test stops without a verdict.
pub const MAX_UNPLAYED_PAIRS: i64 = 5;

/// What an author asks for.
#[derive(Clone, Debug)]
pub struct NewTest {
    pub bot: i64,
    /// The caller: only the bot's owner may test its versions.
    pub account: i64,
    pub new_number: i32,
    pub old_number: i32,
    pub hypothesis: Hypothesis,
    pub max_pairs: i32,
    /// Pair k plays on seed + k.
    pub seed: i64,
}

/// Why no test was started, each in words that say what to do.
#[derive(Debug, thiserror::Error)]
pub enum AbError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Forbidden(String),
    /// The versions cannot be tested (the caller's mistake).
    #[error("{0}")]
    Invalid(String),
    /// The bot has a test running already.
    #[error("{message}")]
    Running { test: i64, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for AbError {
    fn from(e: sqlx::Error) -> Self {
        AbError::Store(StoreError::Db(e))
    }
}

/// Start a test and queue its first pairs. The bot's row is locked before
/// its running tests are counted, in the transaction that inserts the new
/// one, so requests sent at once start one test.
pub async fn start(pool: &PgPool, t: &NewTest) -> Result<i64, AbError> {
    if t.new_number == t.old_number {
        return Err(AbError::Invalid(format!("new and old are both version #{}: name two versions of the bot", t.new_number)));
    }
    if !(1..=MAX_PAIRS).contains(&t.max_pairs) {
        return Err(AbError::Invalid(format!("max_pairs {}: give 1 to {MAX_PAIRS} pairs", t.max_pairs)));
    }
    let mut tx = pool.begin().await?;
    let Some(bot) = sqlx::query("SELECT owner_id, ladder_id, name, disabled_reason FROM bots WHERE id = $1 FOR UPDATE")
        .bind(t.bot)
        .fetch_optional(&mut *tx)
        .await?
    else {
        return Err(AbError::NotFound(format!("bot {} does not exist", t.bot)));
    };
    let name: String = bot.get("name");
    if bot.get::<i64, _>("owner_id") != t.account {
        return Err(AbError::Forbidden(format!("only the owner of {name} can test its versions against each other")));
    }
    if let Some(why) = bot.get::<Option<String>, _>("disabled_reason") {
        return Err(AbError::Invalid(format!("{name} is disabled ({why}): its versions cannot be tested")));
    }
    let mut versions = Vec::new();
    for number in [t.new_number, t.old_number] {
        let v = sqlx::query("SELECT id, status FROM bot_versions WHERE bot_id = $1 AND number = $2")
            .bind(t.bot)
            .bind(number)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(v) = v else {
            let last: Option<i32> =
                sqlx::query_scalar("SELECT max(number) FROM bot_versions WHERE bot_id = $1").bind(t.bot).fetch_one(&mut *tx).await?;
            return Err(AbError::NotFound(match last {
                Some(last) => format!("{name} has no version #{number}: its versions are #1 to #{last}"),
                None => format!("{name} has no versions yet: submit one first"),
            }));
        };
        let status: String = v.get("status");
        if status != crate::job::VersionStatus::Ready.as_str() {
            return Err(AbError::Invalid(format!(
                "version #{number} of {name} is {status}: only versions that compiled and passed their validation game can be tested"
            )));
        }
        versions.push(v.get::<i64, _>("id"));
    }
    let running: Option<(i64, i32, i32)> = sqlx::query_as(
        "SELECT t.id, n.number, o.number FROM ab_tests t JOIN bot_versions n ON n.id = t.new_version \
         JOIN bot_versions o ON o.id = t.old_version WHERE t.bot_id = $1 AND t.state = 'running'",
    )
    .bind(t.bot)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some((test, n, o)) = running {
        return Err(AbError::Running {
            test,
            message: format!(
                "{name} has an A/B test running already (test {test}, #{n} against #{o}): one at a time; wait for its verdict"
            ),
        });
    }
    let ladder: i64 = bot.get("ladder_id");
    let (game, config) =
        store::ladder_config(&mut tx, ladder).await?.ok_or_else(|| AbError::NotFound(format!("the ladder of {name} does not exist")))?;
    let seats = game.seats(&config);
    if seats < 2 {
        return Err(AbError::Invalid(format!("{} on this ladder has {seats} seat: a test needs two", game.name())));
    }
    let h = t.hypothesis;
    let comparisons = comparisons(seats as i32);
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO ab_tests (bot_id, new_version, old_version, account_id, seats, elo0, elo1, alpha, beta, max_pairs, seed, counts) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
    )
    .bind(t.bot)
    .bind(versions[0])
    .bind(versions[1])
    .bind(t.account)
    .bind(seats as i32)
    .bind(h.elo0)
    .bind(h.elo1)
    .bind(h.alpha)
    .bind(h.beta)
    .bind(t.max_pairs)
    .bind(t.seed)
    .bind(vec![0i64; 4 * comparisons as usize + 1])
    .fetch_one(&mut *tx)
    .await?;
    let test = running_test(&mut tx, id).await?.ok_or_else(|| AbError::NotFound(format!("test {id} vanished")))?;
    fill(&mut tx, &test).await?;
    tx.commit().await?;
    Ok(id)
}

/// (NEW seat, OLD seat) comparisons of one game of `seats` seats.
fn comparisons(seats: i32) -> u32 {
    let seats = seats.max(2) as u32;
    seats.div_ceil(2) * (seats / 2)
}

/// Whether seat `seat` of game `game` (0 or 1) of a pair is NEW's.
fn is_new(game: i32, seat: i32) -> bool {
    (seat + game) % 2 == 0
}

/// A running test, as its pairs are queued and counted.
struct Running {
    id: i64,
    bot: i64,
    ladder: i64,
    paused: bool,
    disabled: Option<String>,
    new_version: i64,
    old_version: i64,
    account: i64,
    seats: i32,
    max_pairs: i32,
    seed: i64,
    hypothesis: Hypothesis,
    counts: Vec<i64>,
}

const RUNNING: &str = "SELECT t.id, t.bot_id, b.ladder_id, l.paused OR l.finished_at IS NOT NULL AS paused, b.disabled_reason, \
            t.new_version, t.old_version, t.account_id, t.seats, t.max_pairs, t.seed, t.elo0, t.elo1, t.alpha, t.beta, t.counts \
     FROM ab_tests t JOIN bots b ON b.id = t.bot_id JOIN ladders l ON l.id = b.ladder_id";

fn running_row(r: &sqlx::postgres::PgRow) -> Running {
    Running {
        id: r.get("id"),
        bot: r.get("bot_id"),
        ladder: r.get("ladder_id"),
        paused: r.get("paused"),
        disabled: r.get("disabled_reason"),
        new_version: r.get("new_version"),
        old_version: r.get("old_version"),
        account: r.get("account_id"),
        seats: r.get("seats"),
        max_pairs: r.get("max_pairs"),
        seed: r.get("seed"),
        hypothesis: Hypothesis { elo0: r.get("elo0"), elo1: r.get("elo1"), alpha: r.get("alpha"), beta: r.get("beta") },
        counts: r.get("counts"),
    }
}

/// Test `id` locked, if it is running.
async fn running_test(conn: &mut PgConnection, id: i64) -> Result<Option<Running>, sqlx::Error> {
    let sql = format!("{RUNNING} WHERE t.id = $1 AND t.state = 'running' FOR UPDATE OF t");
    Ok(sqlx::query(&sql).bind(id).fetch_optional(conn).await?.as_ref().map(running_row))
}

/// Lock the A/B test `match_id` belongs to, if any: the first thing the
/// transaction that records the match does, so that every transaction
/// that counts or queues a test's pairs takes the test's lock before any
/// of its matches'. Returns the test.
pub async fn lock_test_of(conn: &mut PgConnection, match_id: i64) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT t.id FROM ab_tests t WHERE t.id = (SELECT ab_test FROM matches WHERE id = $1) FOR UPDATE")
        .bind(match_id)
        .fetch_optional(conn)
        .await
}

/// Queue pairs of `t` until [`PAIRS_IN_FLIGHT`] are queued or the pairs
/// allowed are all counted or queued; stop it without a verdict when its
/// bot is disabled or too many pairs could not be played. Its ladder
/// paused, it waits. Returns the matches queued.
async fn fill(conn: &mut PgConnection, t: &Running) -> Result<u64, sqlx::Error> {
    if let Some(why) = &t.disabled {
        stop(conn, t.id, &format!("its bot was disabled ({why})")).await?;
        return Ok(0);
    }
    let (last, queued, unplayed, failure): (i32, i64, i64, Option<String>) = sqlx::query_as(
        "SELECT coalesce(max(ab_pair), 0), count(DISTINCT ab_pair) FILTER (WHERE state = 'queued'), \
                count(DISTINCT ab_pair) FILTER (WHERE state IN ('failed', 'cancelled')), \
                (array_agg(error ORDER BY id DESC) FILTER (WHERE state IN ('failed', 'cancelled')))[1] \
         FROM matches WHERE ab_test = $1",
    )
    .bind(t.id)
    .fetch_one(&mut *conn)
    .await?;
    if unplayed >= MAX_UNPLAYED_PAIRS {
        let why = format!("{unplayed} pairs could not be played (the last: {})", failure.as_deref().unwrap_or("no reason given"));
        stop(conn, t.id, &why).await?;
        return Ok(0);
    }
    if t.paused {
        return Ok(0);
    }
    let counted: i64 = t.counts.iter().sum();
    let mut made = 0;
    let mut pair = last;
    let mut queued = queued;
    while queued < PAIRS_IN_FLIGHT && counted + queued < i64::from(t.max_pairs) {
        pair += 1;
        queue_pair(conn, t, pair).await?;
        queued += 1;
        made += 2;
    }
    Ok(made)
}

/// Queue pair `pair` of `t`: two matches on one seed, NEW in the first
/// game's even seats and in the second game's odd ones.
async fn queue_pair(conn: &mut PgConnection, t: &Running, pair: i32) -> Result<(), sqlx::Error> {
    let seed = t.seed.wrapping_add(i64::from(pair)) & i64::MAX;
    for game in 0..2 {
        let match_id: i64 = sqlx::query_scalar(
            "INSERT INTO matches (ladder_id, seed, rated, requested_by, ab_test, ab_pair) VALUES ($1, $2, false, $3, $4, $5) RETURNING id",
        )
        .bind(t.ladder)
        .bind(seed)
        .bind(t.account)
        .bind(t.id)
        .bind(pair)
        .fetch_one(&mut *conn)
        .await?;
        for seat in 0..t.seats {
            sqlx::query("INSERT INTO match_seats (match_id, seat, bot_id, version_id) VALUES ($1, $2, $3, $4)")
                .bind(match_id)
                .bind(seat)
                .bind(t.bot)
                .bind(if is_new(game, seat) { t.new_version } else { t.old_version })
                .execute(&mut *conn)
                .await?;
        }
        let job = store::enqueue_job(conn, Job::Match { match_id }, store::PRIORITY_CHALLENGE).await?;
        // The owner's work: held to the account's share of the runners.
        sqlx::query("UPDATE jobs SET account_id = $2 WHERE id = $1").bind(job).bind(t.account).execute(&mut *conn).await?;
        sqlx::query("UPDATE matches SET job_id = $2 WHERE id = $1").bind(match_id).bind(job).execute(&mut *conn).await?;
    }
    Ok(())
}

/// End `test` without a verdict, its queued matches cancelled.
async fn stop(conn: &mut PgConnection, test: i64, why: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE ab_tests SET state = 'stopped', error = $2, finished_at = now() WHERE id = $1 AND state = 'running'")
        .bind(test)
        .bind(why)
        .execute(&mut *conn)
        .await?;
    cancel_queued(conn, test, &format!("its A/B test stopped: {why}")).await
}

/// Cancel the test's queued matches that no runner holds, skipping any a
/// runner is claiming this instant (it plays it, and its result is not
/// counted): whoever holds a test's lock never waits for another
/// transaction's rows, so no two can wait for each other.
async fn cancel_queued(conn: &mut PgConnection, test: i64, why: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "WITH c AS (SELECT j.id FROM jobs j JOIN matches m ON m.job_id = j.id \
                    WHERE m.ab_test = $1 AND m.state = 'queued' AND j.state = 'available' FOR UPDATE OF j, m SKIP LOCKED), \
              j AS (UPDATE jobs SET state = 'cancelled', finished_at = now(), last_error = $2 WHERE id IN (SELECT id FROM c) RETURNING id) \
         UPDATE matches SET state = 'cancelled', error = $2, finished_at = now() WHERE job_id IN (SELECT id FROM j)",
    )
    .bind(test)
    .bind(why)
    .execute(conn)
    .await?;
    Ok(())
}

/// The scheduler's part, each tick: every running test that no other
/// transaction holds gets its pairs queued ([`fill`]). Returns the matches
/// queued.
pub async fn top_up(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM ab_tests WHERE state = 'running' ORDER BY id").fetch_all(pool).await?;
    let mut made = 0;
    for id in ids {
        let mut tx = pool.begin().await?;
        let sql = format!("{RUNNING} WHERE t.id = $1 AND t.state = 'running' FOR UPDATE OF t SKIP LOCKED");
        if let Some(t) = sqlx::query(&sql).bind(id).fetch_optional(&mut *tx).await?.as_ref().map(running_row) {
            made += fill(&mut tx, &t).await?;
        }
        tx.commit().await?;
    }
    Ok(made)
}

/// Count the pair of `match_id` (a match of `test` just recorded, in this
/// transaction, which holds the test's lock: [`lock_test_of`]) once both
/// its matches are finished: the test's tally, statistic and verdict are
/// updated; a verdict cancels the test's queued matches, else the next
/// pair is queued.
pub async fn count_pair(conn: &mut PgConnection, test: i64, match_id: i64) -> Result<(), StoreError> {
    let Some(t) = running_test(conn, test).await? else { return Ok(()) };
    let pair: i32 = sqlx::query_scalar("SELECT ab_pair FROM matches WHERE id = $1").bind(match_id).fetch_one(&mut *conn).await?;
    let games = sqlx::query(
        "SELECT m.id, m.state, array_agg(s.rank ORDER BY s.seat) AS ranks, array_agg(s.seat ORDER BY s.seat) AS seats \
         FROM matches m JOIN match_seats s ON s.match_id = m.id WHERE m.ab_test = $1 AND m.ab_pair = $2 GROUP BY m.id ORDER BY m.id",
    )
    .bind(test)
    .bind(pair)
    .fetch_all(&mut *conn)
    .await?;
    let finished = MatchState::Finished.as_str();
    if games.len() != 2 || games.iter().any(|g| g.get::<String, _>("state") != finished) {
        return Ok(());
    }
    let mut scores = Vec::new();
    for (game, g) in games.iter().enumerate() {
        scores.push(game_score(game as i32, &g.get::<Vec<i32>, _>("seats"), &g.get::<Vec<Option<i32>>, _>("ranks")).ok_or_else(|| {
            StoreError::Invalid(format!("match {} of A/B test {test} has no ranks for both versions", g.get::<i64, _>("id")))
        })?);
    }
    let counts: Vec<u64> = t.counts.iter().map(|&n| n.max(0) as u64).collect();
    let mut sprt = Sprt::from_counts(t.hypothesis, 2 * t.max_pairs as u64, comparisons(t.seats), &counts)
        .map_err(|e| StoreError::Invalid(format!("A/B test {test}: {e}")))?;
    let verdict = sprt.record(scores[0], scores[1]).map_err(|e| StoreError::Invalid(format!("A/B test {test}: {e}")))?;
    let state = match verdict {
        Verdict::Better => AbState::Better,
        Verdict::NotBetter => AbState::NotBetter,
        Verdict::BudgetSpent => AbState::Undecided,
        Verdict::Continue => AbState::Running,
    };
    let counts: Vec<i64> = sprt.counts().iter().map(|&n| n as i64).collect();
    sqlx::query(
        "UPDATE ab_tests SET counts = $2, llr = $3, state = $4, \
                finished_at = CASE WHEN $4 = 'running' THEN NULL ELSE now() END WHERE id = $1",
    )
    .bind(test)
    .bind(&counts)
    .bind(sprt.llr())
    .bind(state.as_str())
    .execute(&mut *conn)
    .await?;
    if verdict.is_final() {
        cancel_queued(conn, test, &format!("its A/B test ended: {}", verdict.words())).await?;
    } else {
        fill(conn, &Running { counts, ..t }).await?;
    }
    Ok(())
}

/// NEW's score in game `game` of a pair, from its seats and their ranks.
fn game_score(game: i32, seats: &[i32], ranks: &[Option<i32>]) -> Option<GameScore> {
    let side = |new: bool| -> Option<Vec<usize>> {
        seats.iter().zip(ranks).filter(|(s, _)| is_new(game, **s) == new).map(|(_, r)| r.map(|r| r.max(1) as usize)).collect()
    };
    GameScore::from_ranks(&side(true)?, &side(false)?)
}

/// A bot's A/B tests, newest first.
pub async fn tests_of(pool: &PgPool, bot: i64) -> Result<Vec<AbTest>, StoreError> {
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM ab_tests WHERE bot_id = $1 ORDER BY id DESC").bind(bot).fetch_all(pool).await?;
    let mut tests = Vec::with_capacity(ids.len());
    for id in ids {
        tests.extend(test(pool, id).await?);
    }
    Ok(tests)
}

/// One test and where it stands.
pub async fn test(pool: &PgPool, id: i64) -> Result<Option<AbTest>, StoreError> {
    let Some(r) = sqlx::query(
        "SELECT t.*, n.number AS new_number, o.number AS old_number, t.created_at::text AS started, t.finished_at::text AS finished \
         FROM ab_tests t JOIN bot_versions n ON n.id = t.new_version JOIN bot_versions o ON o.id = t.old_version WHERE t.id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let seats: i32 = r.get("seats");
    let counts: Vec<i64> = r.get("counts");
    let max_pairs: i32 = r.get("max_pairs");
    let hypothesis = Hypothesis { elo0: r.get("elo0"), elo1: r.get("elo1"), alpha: r.get("alpha"), beta: r.get("beta") };
    let tally: Vec<u64> = counts.iter().map(|&n| n.max(0) as u64).collect();
    let status = Sprt::from_counts(hypothesis, 2 * max_pairs as u64, comparisons(seats), &tally)
        .map_err(|e| StoreError::Invalid(format!("A/B test {id}: {e}")))?
        .status();
    let matches = sqlx::query(
        "SELECT m.id, m.ab_pair, m.state, array_agg(s.rank ORDER BY s.seat) AS ranks, array_agg(s.seat ORDER BY s.seat) AS seats, \
                row_number() OVER (PARTITION BY m.ab_pair ORDER BY m.id) - 1 AS game \
         FROM matches m JOIN match_seats s ON s.match_id = m.id WHERE m.ab_test = $1 GROUP BY m.id ORDER BY m.id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?
    .iter()
    .map(|m| {
        let state = MatchState::from_stored(&m.get::<String, _>("state")).map_err(StoreError::Invalid)?;
        let game = m.get::<i64, _>("game") as i32;
        let new_score = (state == MatchState::Finished)
            .then(|| game_score(game, &m.get::<Vec<i32>, _>("seats"), &m.get::<Vec<Option<i32>>, _>("ranks")))
            .flatten()
            .map(|g| g.score());
        Ok(AbMatch { match_id: m.get("id"), pair: m.get("ab_pair"), state, new_score })
    })
    .collect::<Result<Vec<_>, StoreError>>()?;
    let bounds = hypothesis.bounds();
    Ok(Some(AbTest {
        id,
        bot: r.get("bot_id"),
        new_version: r.get("new_version"),
        new_number: r.get("new_number"),
        old_version: r.get("old_version"),
        old_number: r.get("old_number"),
        seats,
        elo0: hypothesis.elo0,
        elo1: hypothesis.elo1,
        alpha: hypothesis.alpha,
        beta: hypothesis.beta,
        max_pairs,
        state: AbState::from_stored(&r.get::<String, _>("state")).map_err(StoreError::Invalid)?,
        pairs: status.pairs as i64,
        counts,
        score: status.score,
        elo: status.elo,
        llr: r.get("llr"),
        lower: bounds.lower,
        upper: bounds.upper,
        error: r.get("error"),
        matches,
        started: r.get("started"),
        finished: r.get("finished"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_takes_the_even_seats_then_the_odd_ones_and_is_scored_by_them() {
        assert_eq!((0..4).map(|s| is_new(0, s)).collect::<Vec<_>>(), [true, false, true, false]);
        assert_eq!((0..4).map(|s| is_new(1, s)).collect::<Vec<_>>(), [false, true, false, true]);
        // (game, ranks by seat, NEW's half points, comparisons)
        let table: [(i32, &[Option<i32>], u32, u32); 5] = [
            (0, &[Some(1), Some(2)], 2, 1),
            (1, &[Some(1), Some(2)], 0, 1),
            (1, &[Some(1), Some(1)], 1, 1),
            (0, &[Some(1), Some(3), Some(2)], 4, 2),
            (1, &[Some(2), Some(1), Some(3), Some(4)], 4, 4),
        ];
        for (game, ranks, half_points, comparisons) in table {
            let seats: Vec<i32> = (0..ranks.len() as i32).collect();
            assert_eq!(game_score(game, &seats, ranks), Some(GameScore { half_points, comparisons }), "{game} {ranks:?}");
        }
        assert_eq!(game_score(0, &[0, 1], &[Some(1), None]), None, "an unranked seat is not scored");
        assert_eq!(comparisons(2), 1);
        assert_eq!(comparisons(3), 2);
        assert_eq!(comparisons(4), 4);
    }
}
