//! `koth scheduler`: keeps every ladder busy.
//!
//! Each tick rescues expired leases and, per unpaused ladder, inside one
//! transaction holding that ladder's advisory lock (so several schedulers
//! can run; one fills a ladder at a time), loads what the ladder's format
//! needs ([`store::ladder_state`]), asks the format which matches to add
//! ([`koth_ladder::format::Format::next_matches`], pure) and creates them with
//! their jobs. What each format does is in [`koth_ladder::format`]; nothing here
//! knows one format from another. A ladder in its finals
//! ([`koth_ladder::contest`]) is filled the same way from the finals' format and
//! matches; when that format has nothing left to play, the finals'
//! standings are frozen and the ladder is done. Adaptive finals (a match
//! budget) ask [`koth_ladder::finals::next`] instead: paired games on one
//! seed for the adjacent places least settled, until all are ordered or
//! the budget is spent. Each tick also queues the pairs of the A/B tests
//! under way ([`crate::db::ab::top_up`]).

use std::time::Duration;

use rand::{Rng, SeedableRng};
use sqlx::PgPool;

use crate::db::contests;
use crate::db::queue::Queue;
use crate::db::store::{self, Stage, StoreError};

/// What one tick did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    pub rescued: u64,
    pub failed: u64,
    pub created: u64,
}

/// Run ticks until `stop` resolves.
pub async fn run(pool: PgPool, every: Duration, stop: impl std::future::Future<Output = ()>) -> Result<(), String> {
    let queue = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::from_entropy();
    tokio::pin!(stop);
    loop {
        match tick(&pool, &queue, &mut rng).await {
            Ok(t) if t != Tick::default() => {
                tracing::info!(rescued = t.rescued, failed = t.failed, created = t.created, "scheduler tick")
            }
            Ok(_) => {}
            // A database restart: log, wait, carry on.
            Err(e) => tracing::warn!("scheduler tick failed: {e}"),
        }
        tokio::select! {
            _ = &mut stop => return Ok(()),
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// One pass over the queue and every ladder.
pub async fn tick<R: Rng>(pool: &PgPool, queue: &Queue, rng: &mut R) -> Result<Tick, sqlx::Error> {
    let (rescued, failed) = match queue.rescue_expired().await {
        Ok(x) => x,
        Err(e) => return Err(e.into_db().unwrap_or_else(|| sqlx::Error::Protocol("rescuing expired jobs".into()))),
    };
    store::mark_failed_matches(pool).await?;
    store::sweep_live_turns(pool).await?;
    let ladders = store::unpaused_ladders(pool).await?;
    let mut created = 0;
    for id in ladders {
        let mut tx = pool.begin().await?;
        if !store::lock_ladder(&mut tx, id).await? {
            continue;
        }
        let Some((kind, config)) = readable(id, store::ladder_config(&mut tx, id).await)? else { continue };
        let Some(contest) = readable(id, contests::contest(&mut tx, id).await)? else { continue };
        // During the finals the finalists play the finals' format on
        // matches of their own; the ladder's own format rests.
        let (config, stage) = match koth_ladder::contest::current_stage(config, contest.finals.as_ref()) {
            Ok((config, finalists)) => (config, Stage::from(finalists)),
            Err(why) => {
                tracing::warn!(ladder = id, "not scheduling: {why}");
                continue;
            }
        };
        if let (Some(plan), Stage::Finals(_)) = (contest.finals.as_ref().filter(|p| p.budget.is_some()), stage) {
            created += adaptive_finals(&mut tx, id, plan, &config.format, stage, rng).await?;
            tx.commit().await?;
            continue;
        }
        let state = store::ladder_state(&mut tx, id, config.format.needs_history(), stage).await?;
        let next = config.format.next_matches(&state, kind.seats(&config), rng);
        if stage != Stage::Ladder && koth_ladder::contest::played_out(&config.format, &state, &next) {
            // Nothing left to play: the finals are over.
            contests::finish_finals(&mut tx, id, &koth_ladder::contest::settle(&config.format, &state)).await?;
            tracing::info!(ladder = id, "finals over: standings frozen");
        }
        for m in next {
            store::create_match_in_round(&mut tx, id, &m.seats, seed(rng), m.rated, store::PRIORITY_LADDER, m.round, stage).await?;
            created += 1;
        }
        tx.commit().await?;
    }
    // The A/B tests' pairs: queued as their pairs are counted; here after
    // a pair that could not be played, or a ladder that was paused.
    created += crate::db::ab::top_up(pool).await?;
    Ok(Tick { rescued, failed, created })
}

/// One tick of adaptive finals ([`koth_ladder::finals::next`]): queue the
/// paired games it asks for (both seat orders on one seed, the pair's
/// number as their round), or freeze the standings when it is done.
/// Returns the matches created.
async fn adaptive_finals<R: Rng>(
    tx: &mut sqlx::PgConnection,
    id: i64,
    plan: &koth_ladder::contest::FinalsPlan,
    format: &koth_ladder::format::Format,
    stage: Stage<'_>,
    rng: &mut R,
) -> Result<u64, sqlx::Error> {
    use koth_ladder::finals::{self, Next};
    let budget = plan.budget.unwrap_or(0);
    let state = store::ladder_state(&mut *tx, id, true, stage).await?;
    match finals::next(format, &state, budget) {
        Next::Wait => Ok(0),
        Next::Done(why) => {
            contests::finish_finals(&mut *tx, id, &finals::standings(format, &state, budget, id as u64)).await?;
            tracing::info!(ladder = id, matches = state.matches.len(), "adaptive finals over ({why:?}): standings frozen");
            Ok(0)
        }
        Next::Play(games) => {
            let mut created = 0;
            for g in games {
                let seed = seed(rng);
                for seats in g.seat_orders() {
                    store::create_match_in_round(&mut *tx, id, &seats, seed, false, store::PRIORITY_LADDER, Some(g.unit), stage).await?;
                    created += 1;
                }
            }
            Ok(created)
        }
    }
}

/// A ladder's stored row as the tick reads it: a database error ends the
/// tick; a row koth cannot read skips the ladder (said in the log), as
/// does a ladder that is gone.
fn readable<T>(ladder: i64, row: Result<Option<T>, StoreError>) -> Result<Option<T>, sqlx::Error> {
    match row {
        Ok(row) => Ok(row),
        Err(StoreError::Db(e)) => Err(e),
        Err(StoreError::Invalid(why)) => {
            tracing::warn!(ladder, "not scheduling: {why}");
            Ok(None)
        }
    }
}

fn seed<R: Rng>(rng: &mut R) -> i64 {
    (rng.gen::<u64>() >> 1) as i64
}
