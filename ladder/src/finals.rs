//! Adaptive finals: play until the order of the finalists is settled, or
//! a match budget the host set is spent. Pure: the scheduler's tick loads
//! the finals' matches, asks [`next`] what to queue, and freezes
//! [`standings`] when it says [`Next::Done`].
//!
//! **The unit of evidence is a paired game**: two matches between the same
//! two bots with their seats swapped, on one seed. Whatever the seat or the
//! seed gives one side, it gives the other in the twin game, so a pair
//! that each bot wins from the same seat (a split) says nothing about
//! which bot is better. Both matches of a paired game carry the same
//! `round` (the pair's number), which is how they are found again.
//!
//! **The order** is by Bradley–Terry strength fitted to every finished
//! game of the finals (a win 1, a tie ½; [`strengths`]), best first; equal
//! strengths go by bot id. Unlike points per match, it does not lower a
//! bot for having played its stronger neighbour more often, which
//! adaptive finals do by design. Points per match are shown beside it.
//!
//! **The statistic**: two adjacent places, upper U and lower L, are
//! *ordered* when their finished paired games against each other show U
//! ahead with 95% confidence by an exact one-sided sign test: of the `m`
//! decisive paired games (one bot scored more points than the other over
//! both games; splits and ties are left out), U was ahead in `k`, and
//! P(Bin(m, ½) ≥ k) ≤ 0.05. A clear winner needs 5 decisive paired games
//! out of 5 (p = 1/32), 7 of 8, 9 of 11, ...; a pair of equal bots is
//! ordered on a given look with chance at most 5%. The looks are not
//! corrected for repetition (a host who reads "settled" reads "95% on the
//! evidence now"). A place is **settled** when its order with the place
//! above and the place below are both ordered.
//!
//! **What is played** ([`next`]): first a base round, every pair of
//! finalists once as a paired game (n(n−1) matches); then, whenever
//! nothing is in flight, one paired game for each adjacent pair not yet
//! ordered, least settled first (the highest sign-test p, then the fewest
//! paired games), as many as the budget has room for. The finals end when
//! every adjacent pair is ordered, or the budget has no room for another
//! paired game.
//!
//! **The rank interval** of each place ([`rank_intervals`]): a bootstrap
//! over the paired games (resampled with replacement, [`RESAMPLES`] times,
//! from a seeded generator, so the same matches and seed give the same
//! interval): the 2.5% and 97.5% quantiles of the bot's rank by
//! Bradley–Terry strength in the resamples. It reads all the games, the
//! settled flag only the two bots' own paired games, so a settled place
//! can still show a rank interval of two places when its neighbour's
//! strength is close through the rest of the field.
//!
//! [`simulate`] plays many finals on a seeded strength model (Elo win
//! probabilities with ties and a seat advantage) and compares them with a
//! full round robin of the same budget: `koth bench finals` prints it.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use crate::contest::{interval, settle, FinalRow, FinalStandings, FinalsPlan};
use crate::format::{Column, Format, FormatName, LadderBot, LadderState, MatchRecord, RoundRobinSettings};
use crate::formats::{self, RoundRobinRecord};

/// The one-sided confidence an adjacent pair's order needs.
pub const CONFIDENCE: f64 = 0.95;
/// Bootstrap resamples behind a rank interval.
pub const RESAMPLES: usize = 200;

/// One paired game to queue: `first` v `second`, then `second` v `first`,
/// on one seed, both with `round` = `unit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairedGame {
    pub first: i64,
    pub second: i64,
    pub unit: u32,
}

impl PairedGame {
    /// The two matches' seats, in order.
    pub fn seat_orders(&self) -> [Vec<i64>; 2] {
        [vec![self.first, self.second], vec![self.second, self.first]]
    }
}

/// Why adaptive finals ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every adjacent pair is ordered.
    Settled,
    /// The budget has no room for another paired game.
    BudgetSpent,
}

/// What adaptive finals do now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    Play(Vec<PairedGame>),
    /// Matches are in flight: the next choice waits for their results.
    Wait,
    Done(Ended),
}

/// The matches of the base round of `finalists` bots (every pair once, on
/// both sides).
pub fn base_round_matches(finalists: usize) -> u32 {
    (finalists * finalists.saturating_sub(1)) as u32
}

/// The most matches adaptive finals may be given: the finals plan their
/// next matches over every one played so far, so a budget is work the
/// scheduler repeats; 100,000 is hundreds of rounds among 16 finalists
/// and refuses a typo's billions.
pub const MAX_BUDGET: u32 = 100_000;

/// Whether adaptive finals can be played as asked: two-seat round-robin
/// matches scored by points, and a budget with room for the base round.
pub fn check(format: &Format, seats: usize, finalists: usize, budget: u32) -> Result<(), String> {
    if !matches!(format, Format::RoundRobin(RoundRobinSettings { scoring: formats::RoundRobinScoring::Points { .. }, .. })) {
        return Err(
            "adaptive finals (a budget) are played as round_robin scored by points; leave out the format or ask for round_robin".into()
        );
    }
    if seats != 2 {
        return Err(format!("adaptive finals pair two bots a match; this ladder's matches have {seats} seats"));
    }
    let base = base_round_matches(finalists);
    if budget > MAX_BUDGET {
        return Err(format!("a budget of {budget} matches is more than the {MAX_BUDGET} adaptive finals may take; ask for fewer"));
    }
    if budget < base {
        return Err(format!(
            "a budget of {budget} matches is less than the base round of {finalists} finalists ({base} matches: every pair on both sides); \
             ask for at least {base}, or fewer finalists"
        ));
    }
    Ok(())
}

/// One place in the order, before its statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub bot: i64,
    /// Points of each finished match, in the order played.
    pub points: Vec<f64>,
}

impl Place {
    pub fn mean(&self) -> f64 {
        if self.points.is_empty() {
            0.0
        } else {
            self.points.iter().sum::<f64>() / self.points.len() as f64
        }
    }
}

fn playing(state: &LadderState) -> Vec<i64> {
    let mut bots: Vec<i64> = state.bots.iter().filter(|b| b.ready).map(|b| b.id).collect();
    bots.sort_unstable();
    bots
}

/// Two-seat finished matches as (first, second, first's share: 1 won,
/// ½ tied, 0 lost), by the format's points.
fn games<'a>(format: &Format, matches: impl IntoIterator<Item = &'a MatchRecord>) -> Vec<(i64, i64, f64)> {
    matches
        .into_iter()
        .filter_map(|m| {
            let [a, b] = m.seats.as_slice() else { return None };
            let p = format.match_points(m)?;
            let total = p[0] + p[1];
            Some((*a, *b, if total > 0.0 { p[0] / total } else { 0.5 }))
        })
        .collect()
}

/// Bradley–Terry strengths of `bots` (in their order) from `games`, by
/// Hunter's MM iteration; each bot also has one game, half won, against
/// an anchor of strength 1, so that a bot that won (or lost) everything
/// keeps a finite strength. Who met whom is accounted for: a bot is not
/// lowered for having played its stronger neighbour more often.
pub fn strengths(bots: &[i64], games: &[(i64, i64, f64)]) -> Vec<f64> {
    let n = bots.len();
    let index: BTreeMap<i64, usize> = bots.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let mut wins = vec![0.5; n];
    let mut met = vec![vec![0.0; n]; n];
    for (a, b, share) in games {
        let (Some(&i), Some(&j)) = (index.get(a), index.get(b)) else { continue };
        wins[i] += share;
        wins[j] += 1.0 - share;
        met[i][j] += 1.0;
        met[j][i] += 1.0;
    }
    let mut p = vec![1.0; n];
    for _ in 0..200 {
        let next: Vec<f64> = (0..n)
            .map(|i| {
                let denom = 1.0 / (p[i] + 1.0) + (0..n).filter(|j| met[i][*j] > 0.0).map(|j| met[i][j] / (p[i] + p[j])).sum::<f64>();
                wins[i] / denom
            })
            .collect();
        let change = next.iter().zip(&p).map(|(a, b)| (a / b).ln().abs()).fold(0.0, f64::max);
        p = next;
        if change < 1e-9 {
            break;
        }
    }
    p
}

/// The order of the finalists: by Bradley–Terry strength ([`strengths`])
/// from their finished games, best first; equal strengths by bot id.
pub fn order(format: &Format, state: &LadderState) -> Vec<Place> {
    let bots = playing(state);
    let mut points: BTreeMap<i64, Vec<f64>> = bots.iter().map(|b| (*b, Vec::new())).collect();
    for m in &state.matches {
        let Some(per_seat) = format.match_points(m) else { continue };
        for (bot, p) in m.seats.iter().zip(per_seat) {
            if let Some(xs) = points.get_mut(bot) {
                xs.push(p);
            }
        }
    }
    let strength = strengths(&bots, &games(format, &state.matches));
    let mut places: Vec<(f64, Place)> = points.into_iter().zip(strength).map(|((bot, points), s)| (s, Place { bot, points })).collect();
    places.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.bot.cmp(&b.1.bot)));
    places.into_iter().map(|(_, p)| p).collect()
}

/// What the paired games of two bots say about their order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evidence {
    /// Finished paired games (both matches done).
    pub paired: u32,
    /// Of those, the ones where one bot scored more over both games.
    pub decisive: u32,
    /// Of the decisive ones, those where the upper bot was ahead.
    pub upper_ahead: u32,
    /// The one-sided sign test's p: P(Bin(decisive, ½) ≥ upper_ahead).
    pub p: f64,
}

impl Evidence {
    /// The upper bot is ahead with [`CONFIDENCE`].
    pub fn ordered(&self) -> bool {
        self.p <= 1.0 - CONFIDENCE + 1e-12
    }
}

/// P(X ≥ k) for X ~ Bin(n, ½), exact (in log space, so any n).
pub fn sign_test_p(n: u32, k: u32) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    let ln_half_n = f64::from(n) * 0.5f64.ln();
    // ln C(n, i) built up from i = k.
    let mut ln_c = (0..k).map(|i| (f64::from(n - i)).ln() - (f64::from(i + 1)).ln()).sum::<f64>();
    let mut p = 0.0;
    for i in k..=n {
        p += (ln_c + ln_half_n).exp();
        if i < n {
            ln_c += f64::from(n - i).ln() - f64::from(i + 1).ln();
        }
    }
    p.min(1.0)
}

/// The finished paired games of `upper` and `lower`, as (upper's points −
/// lower's over both matches).
fn paired_differences(format: &Format, matches: &[MatchRecord], upper: i64, lower: i64) -> Vec<f64> {
    let mut units: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for m in matches {
        let (Some(unit), [a, b]) = (m.round, m.seats.as_slice()) else { continue };
        if !((*a == upper && *b == lower) || (*a == lower && *b == upper)) {
            continue;
        }
        let Some(p) = format.match_points(m) else { continue };
        let d = if *a == upper { p[0] - p[1] } else { p[1] - p[0] };
        units.entry(unit).or_default().push(d);
    }
    units.into_values().filter(|ds| ds.len() == 2).map(|ds| ds.iter().sum()).collect()
}

/// The sign test of `upper` over `lower` on their finished paired games.
pub fn evidence(format: &Format, matches: &[MatchRecord], upper: i64, lower: i64) -> Evidence {
    let ds = paired_differences(format, matches, upper, lower);
    let decisive = ds.iter().filter(|d| **d != 0.0).count() as u32;
    let upper_ahead = ds.iter().filter(|d| **d > 0.0).count() as u32;
    Evidence { paired: ds.len() as u32, decisive, upper_ahead, p: sign_test_p(decisive, upper_ahead) }
}

/// The evidence for each adjacent pair of `places` (place i over i + 1).
pub fn adjacent(format: &Format, state: &LadderState, places: &[Place]) -> Vec<Evidence> {
    places.windows(2).map(|w| evidence(format, &state.matches, w[0].bot, w[1].bot)).collect()
}

/// What to do now, with at most `budget` matches in all (failed matches,
/// which the state leaves out, are not counted).
pub fn next(format: &Format, state: &LadderState, budget: u32) -> Next {
    let bots = playing(state);
    let room = (budget as usize).saturating_sub(state.matches.len()) / 2;
    if state.matches.is_empty() {
        let mut unit = 0;
        let mut base = Vec::new();
        for (i, a) in bots.iter().enumerate() {
            for b in &bots[i + 1..] {
                unit += 1;
                base.push(PairedGame { first: *a, second: *b, unit });
            }
        }
        base.truncate(room);
        return if base.is_empty() { Next::Done(Ended::BudgetSpent) } else { Next::Play(base) };
    }
    if state.queued > 0 {
        return Next::Wait;
    }
    let places = order(format, state);
    let evidence = adjacent(format, state, &places);
    let mut open: Vec<(usize, Evidence)> = evidence.into_iter().enumerate().filter(|(_, e)| !e.ordered()).collect();
    if open.is_empty() {
        return Next::Done(Ended::Settled);
    }
    if room == 0 {
        return Next::Done(Ended::BudgetSpent);
    }
    open.sort_by(|(i, a), (j, b)| b.p.total_cmp(&a.p).then(a.paired.cmp(&b.paired)).then(i.cmp(j)));
    let mut unit = state.matches.iter().filter_map(|m| m.round).max().unwrap_or(0);
    Next::Play(
        open.into_iter()
            .take(room)
            .map(|(i, _)| {
                unit += 1;
                PairedGame { first: places[i].bot, second: places[i + 1].bot, unit }
            })
            .collect(),
    )
}

/// Each place's rank interval: the 2.5% and 97.5% quantiles of its rank
/// by Bradley–Terry strength in [`RESAMPLES`] bootstrap resamples of the
/// finished paired games (a match without a round counting alone), in the
/// order of `places`; bots of equal strength span the ranks they share.
pub fn rank_intervals(format: &Format, state: &LadderState, places: &[Place], seed: u64) -> Vec<(u32, u32)> {
    let mut units: BTreeMap<(bool, u64), Vec<&MatchRecord>> = BTreeMap::new();
    for (i, m) in state.matches.iter().enumerate().filter(|(_, m)| m.results.is_some()) {
        let key = match m.round {
            Some(r) => (true, u64::from(r)),
            None => (false, i as u64),
        };
        units.entry(key).or_default().push(m);
    }
    let units: Vec<Vec<(i64, i64, f64)>> = units.into_values().map(|ms| games(format, ms)).collect();
    let n = places.len();
    if units.is_empty() {
        return vec![(1, n as u32); n];
    }
    let bots: Vec<i64> = places.iter().map(|p| p.bot).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut best, mut worst): (Vec<Vec<u32>>, Vec<Vec<u32>>) = (vec![Vec::new(); n], vec![Vec::new(); n]);
    for _ in 0..RESAMPLES {
        let sample: Vec<(i64, i64, f64)> = (0..units.len()).flat_map(|_| units[rng.gen_range(0..units.len())].iter().copied()).collect();
        // Strengths compared to 9 digits: equal records tie exactly.
        let s: Vec<f64> = strengths(&bots, &sample).iter().map(|x| (x * 1e9).round()).collect();
        for i in 0..n {
            best[i].push(1 + s.iter().filter(|x| **x > s[i]).count() as u32);
            worst[i].push(s.iter().filter(|x| **x >= s[i]).count() as u32);
        }
    }
    let quantile = |mut r: Vec<u32>, q: f64| {
        r.sort_unstable();
        r[((q * RESAMPLES as f64).ceil() as usize).clamp(1, RESAMPLES) - 1]
    };
    best.into_iter().zip(worst).map(|(b, w)| (quantile(b, 0.025), quantile(w, 0.975))).collect()
}

/// Finals' standings from their state (finalists and matches), as they
/// stand, whichever kind the plan is: [`settle`] for a fixed format,
/// [`standings`] (rank intervals bootstrapped from `seed`) for adaptive
/// finals.
pub fn of_plan(plan: &FinalsPlan, format: &Format, state: &LadderState, seed: u64) -> FinalStandings {
    match plan.budget {
        Some(budget) => standings(format, state, budget, seed),
        None => settle(format, state),
    }
}

/// The standings of adaptive finals as they stand: per place its points
/// per match, games, 95% interval of points per match, rank interval
/// (bootstrap with `seed`) and whether it is settled (ordered with both
/// neighbours).
pub fn standings(format: &Format, state: &LadderState, budget: u32, seed: u64) -> FinalStandings {
    let places = order(format, state);
    let evidence = adjacent(format, state, &places);
    let ranks = rank_intervals(format, state, &places, seed);
    let name = |bot: i64| state.bots.iter().find(|b| b.id == bot).map(|b| b.name.clone()).unwrap_or_default();
    let rows: Vec<FinalRow> = places
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let above = i.checked_sub(1).map(|j| evidence[j].ordered());
            let below = evidence.get(i).map(Evidence::ordered);
            let iv = interval(&p.points);
            FinalRow {
                rank: i as u32 + 1,
                bot: p.bot,
                name: name(p.bot),
                values: [("points".to_owned(), json!(p.mean())), ("games".to_owned(), json!(p.points.len()))].into_iter().collect(),
                low: iv.map(|x| x.0),
                high: iv.map(|x| x.1),
                settled: places.len() > 1 && above.unwrap_or(true) && below.unwrap_or(true),
                rank_low: Some(ranks[i].0),
                rank_high: Some(ranks[i].1),
            }
        })
        .collect();
    FinalStandings {
        format: FormatName::RoundRobin,
        columns: vec![
            Column { key: "points".into(), label: "points per match".into() },
            Column { key: "games".into(), label: "games".into() },
        ],
        unsettled: rows.iter().filter(|r| !r.settled).count() as u32,
        rows,
        matches: state.matches.iter().filter(|m| m.results.is_some()).count() as u32,
        budget: Some(budget),
    }
}

/// The strength model of [`simulate`]: bot i (0 the strongest) has Elo
/// `−gap · i`; a game is a tie with chance `tie`, else won by the first
/// seat with chance 1 / (1 + 10^((r₂ − r₁ − seat_advantage) / 400)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    pub bots: usize,
    pub gap: f64,
    pub tie: f64,
    pub seat_advantage: f64,
}

/// How one method did over many simulated finals.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SimResult {
    pub runs: u32,
    /// Finals whose top 3 (in order) was the true top 3.
    pub top3_right: u32,
    /// Matches played, summed over the runs.
    pub matches: u64,
    /// Finals that ended with every place settled.
    pub settled: u32,
}

impl SimResult {
    pub fn accuracy(&self) -> f64 {
        f64::from(self.top3_right) / f64::from(self.runs.max(1))
    }
    pub fn mean_matches(&self) -> f64 {
        self.matches as f64 / f64::from(self.runs.max(1))
    }
}

/// One simulated game: (rank, score) per seat.
fn play<R: Rng>(field: &Field, strength: &BTreeMap<i64, f64>, seats: &[i64], rng: &mut R) -> Vec<(u32, f64)> {
    let (r1, r2) = (strength[&seats[0]], strength[&seats[1]]);
    let first = 1.0 / (1.0 + 10f64.powf((r2 - r1 - field.seat_advantage) / 400.0));
    let x: f64 = rng.gen();
    if x < field.tie {
        vec![(1, 0.5), (1, 0.5)]
    } else if x < field.tie + (1.0 - field.tie) * first {
        vec![(1, 1.0), (2, 0.0)]
    } else {
        vec![(2, 0.0), (1, 1.0)]
    }
}

/// Simulate `runs` finals of `field` each way, from `seed`: adaptive
/// finals with `budget` matches, and a full round robin of the same
/// budget (every pairing on both sides budget / (n(n−1)) times; `budget`
/// must be a multiple of n(n−1)). Bot ids are shuffled each run, so ties
/// broken by id favour no one. Returns (adaptive, round robin).
pub fn simulate(field: &Field, budget: u32, runs: u32, seed: u64) -> Result<(SimResult, SimResult), String> {
    let n = field.bots;
    let base = base_round_matches(n);
    if n < 3 || base == 0 || !budget.is_multiple_of(base) || budget < base {
        return Err(format!("the budget ({budget}) must be a positive multiple of n(n−1) = {base} for {n} bots (at least 3)"));
    }
    let format = Format::RoundRobin(RoundRobinSettings::default());
    let Format::RoundRobin(rr) = &format else { unreachable!() };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut adaptive, mut full) = (SimResult::default(), SimResult::default());
    for _ in 0..runs {
        let mut ids: Vec<i64> = (1..=n as i64).collect();
        for i in (1..n).rev() {
            ids.swap(i, rng.gen_range(0..=i));
        }
        let strength: BTreeMap<i64, f64> = ids.iter().enumerate().map(|(i, b)| (*b, -field.gap * i as f64)).collect();
        let truth = &ids[..3];
        let bots: Vec<LadderBot> =
            ids.iter().map(|b| LadderBot { id: *b, name: format!("b{b}"), ready: true, rating: None, in_flight: 0 }).collect();
        // Adaptive.
        let mut state = LadderState { bots: bots.clone(), matches: Vec::new(), queued: 0 };
        let ended = loop {
            match next(&format, &state, budget) {
                Next::Play(games) => {
                    for g in games {
                        for seats in g.seat_orders() {
                            let results = play(field, &strength, &seats, &mut rng);
                            state.matches.push(MatchRecord { seats, results: Some(results), round: Some(g.unit) });
                        }
                    }
                }
                Next::Wait => unreachable!("simulated matches finish at once"),
                Next::Done(e) => break e,
            }
        };
        let top: Vec<i64> = order(&format, &state).iter().take(3).map(|p| p.bot).collect();
        adaptive.runs += 1;
        adaptive.matches += state.matches.len() as u64;
        adaptive.top3_right += u32::from(top == truth);
        adaptive.settled += u32::from(ended == Ended::Settled);
        // The round robin of the same budget.
        let mut records = Vec::new();
        for seats in formats::round_robin_schedule(&ids, 2, budget / base) {
            let results = play(field, &strength, &seats, &mut rng);
            records.push(RoundRobinRecord { seats: seats.iter().zip(&results).map(|(b, (k, s))| (*b, *k, *s)).collect() });
        }
        let table = formats::round_robin_standings(&ids, &records, &rr.scoring);
        let top: Vec<i64> = table.iter().take(3).map(|s| s.bot).collect();
        full.runs += 1;
        full.matches += records.len() as u64;
        full.top3_right += u32::from(top == truth);
    }
    Ok((adaptive, full))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bot(id: i64) -> LadderBot {
        LadderBot { id, name: format!("b{id}"), ready: true, rating: None, in_flight: 0 }
    }

    fn rr() -> Format {
        Format::RoundRobin(RoundRobinSettings::default())
    }

    /// A finished match of `unit`: `winner` None is a tie.
    fn game(seats: [i64; 2], winner: Option<i64>, unit: u32) -> MatchRecord {
        let results = match winner {
            None => vec![(1, 0.5), (1, 0.5)],
            Some(w) if w == seats[0] => vec![(1, 1.0), (2, 0.0)],
            Some(_) => vec![(2, 0.0), (1, 1.0)],
        };
        MatchRecord { seats: seats.to_vec(), results: Some(results), round: Some(unit) }
    }

    /// Play what `next` asks with `who_wins(first seat, second seat)`
    /// until it is done; the finished state and why it ended.
    fn run(bots: &[i64], budget: u32, who_wins: impl Fn(i64, i64, u32) -> Option<i64>) -> (LadderState, Ended) {
        let mut state = LadderState { bots: bots.iter().map(|b| bot(*b)).collect(), matches: vec![], queued: 0 };
        loop {
            match next(&rr(), &state, budget) {
                Next::Play(games) => {
                    assert!(state.matches.len() + 2 * games.len() <= budget as usize, "over the budget");
                    for g in games {
                        for s in g.seat_orders() {
                            let w = who_wins(s[0], s[1], g.unit);
                            state.matches.push(game([s[0], s[1]], w, g.unit));
                        }
                    }
                }
                Next::Wait => panic!("nothing is in flight"),
                Next::Done(e) => return (state, e),
            }
        }
    }

    #[test]
    fn the_sign_test_is_exact() {
        // (decisive, upper ahead, p)
        let cases =
            [(0, 0, 1.0), (5, 5, 1.0 / 32.0), (4, 4, 1.0 / 16.0), (8, 7, 9.0 / 256.0), (10, 8, 56.0 / 1024.0), (3, 0, 1.0), (2, 1, 0.75)];
        for (n, k, want) in cases {
            assert!((sign_test_p(n, k) - want).abs() < 1e-12, "{n} {k}: {}", sign_test_p(n, k));
        }
        // Large n does not overflow: 600 of 1000 is far beyond chance.
        assert!(sign_test_p(1000, 600) < 1e-9);
        assert!((sign_test_p(1000, 500) - 0.5126).abs() < 1e-3);
    }

    #[test]
    fn paired_games_count_when_both_are_done_and_splits_say_nothing() {
        let ms = vec![
            game([1, 2], Some(1), 1),
            game([2, 1], Some(1), 1), // 1 ahead
            game([1, 2], Some(1), 2),
            game([2, 1], Some(2), 2), // split: each won from the first seat
            game([1, 2], None, 3),
            game([2, 1], Some(1), 3), // 1 ahead (tie + win)
            game([1, 2], Some(2), 4), // its twin not done: not counted
            game([1, 3], Some(1), 5),
            game([3, 1], Some(1), 5), // another pair
        ];
        let e = evidence(&rr(), &ms, 1, 2);
        assert_eq!((e.paired, e.decisive, e.upper_ahead), (3, 2, 2));
        assert_eq!(e.p, 0.25);
        let reversed = evidence(&rr(), &ms, 2, 1);
        assert_eq!((reversed.decisive, reversed.upper_ahead, reversed.p), (2, 0, 1.0));
    }

    #[test]
    fn the_base_round_pairs_everyone_once_and_waits_for_results() {
        let state = LadderState { bots: [4, 2, 9].map(bot).to_vec(), matches: vec![], queued: 0 };
        let Next::Play(games) = next(&rr(), &state, 6) else { panic!() };
        let pairs: Vec<(i64, i64, u32)> = games.iter().map(|g| (g.first, g.second, g.unit)).collect();
        assert_eq!(pairs, vec![(2, 4, 1), (2, 9, 2), (4, 9, 3)]);
        assert_eq!(games[0].seat_orders(), [vec![2, 4], vec![4, 2]]);
        let queued =
            LadderState { matches: vec![MatchRecord { seats: vec![2, 4], results: None, round: Some(1) }], queued: 1, ..state.clone() };
        assert_eq!(next(&rr(), &queued, 6), Next::Wait);
        assert!(check(&rr(), 2, 3, 5).unwrap_err().contains("at least 6"));
        assert!(check(&rr(), 3, 3, 6).unwrap_err().contains("3 seats"));
        assert!(check(&Format::default_of(FormatName::Swiss), 2, 3, 6).unwrap_err().contains("round_robin"));
        assert_eq!(check(&rr(), 2, 3, 6), Ok(()));
    }

    /// The lower id always wins: every pair is decided early, far within
    /// the budget; everyone settled, ranks exact.
    #[test]
    fn a_clear_order_settles_early() {
        let bots = [1, 2, 3, 4, 5];
        let (state, ended) = run(&bots, 400, |a, b, _| Some(a.min(b)));
        assert_eq!(ended, Ended::Settled);
        // Base round 20, then 4 more paired games per adjacent pair (5 in all).
        assert_eq!(state.matches.len(), 20 + 4 * 4 * 2);
        let s = standings(&rr(), &state, 400, 7);
        assert_eq!(s.rows.iter().map(|r| r.bot).collect::<Vec<_>>(), bots);
        assert!(s.rows.iter().all(|r| r.settled), "{s:?}");
        assert_eq!(s.unsettled, 0);
        assert_eq!((s.matches, s.budget), (52, Some(400)));
        assert_eq!(s.rows[0].rank_low, Some(1));
        assert!(s.rows.iter().all(|r| r.rank_low <= Some(r.rank) && Some(r.rank) <= r.rank_high), "{s:?}");
    }

    /// Every paired game splits (the first seat always wins): nothing is
    /// ever decisive, the budget is spent and every place is unsettled.
    #[test]
    fn coin_flips_spend_the_budget_and_stay_unsettled() {
        let (state, ended) = run(&[1, 2, 3, 4], 60, |a, _, _| Some(a));
        assert_eq!(ended, Ended::BudgetSpent);
        assert_eq!(state.matches.len(), 60);
        let s = standings(&rr(), &state, 60, 7);
        assert_eq!(s.unsettled, 4);
        assert!(s.rows.iter().all(|r| !r.settled && r.rank_low == Some(1) && r.rank_high == Some(4)), "{s:?}");
        // An odd budget leaves a match unplayed rather than half a pair.
        let (state, ended) = run(&[1, 2, 3], 13, |a, _, _| Some(a));
        assert_eq!((state.matches.len(), ended), (12, Ended::BudgetSpent));
    }

    /// 1 and 2 split every game; 3 loses to both: the pair 1–2 is never
    /// ordered, the pair over 3 is; only place 3 is settled, and the
    /// budget goes on the open pair.
    #[test]
    fn only_the_open_pair_gets_games() {
        let (state, ended) = run(&[1, 2, 3], 60, |a, b, _| if a.max(b) == 3 { Some(a.min(b)) } else { Some(a) });
        assert_eq!(ended, Ended::BudgetSpent);
        let with3 = state.matches.iter().filter(|m| m.seats.contains(&3)).count();
        assert!(with3 <= 24, "{with3} of 60 matches with bot 3: {state:?}");
        let s = standings(&rr(), &state, 60, 1);
        let settled: Vec<(i64, bool)> = s.rows.iter().map(|r| (r.bot, r.settled)).collect();
        assert_eq!(settled[2], (3, true), "{s:?}");
        assert!(!settled[0].1 && !settled[1].1);
        assert_eq!((s.rows[0].rank_low, s.rows[0].rank_high, s.rows[2].rank_low), (Some(1), Some(2), Some(3)), "{s:?}");
    }

    #[test]
    fn rank_intervals_are_deterministic_for_a_seed() {
        let (state, _) = run(&[1, 2, 3, 4], 40, |a, b, u| if u % 3 == 0 { Some(a.max(b)) } else { Some(a.min(b)) });
        let places = order(&rr(), &state);
        assert_eq!(rank_intervals(&rr(), &state, &places, 5), rank_intervals(&rr(), &state, &places, 5));
        let empty = LadderState { bots: [1, 2].map(bot).to_vec(), matches: vec![], queued: 0 };
        assert_eq!(rank_intervals(&rr(), &empty, &order(&rr(), &empty), 5), vec![(1, 2), (1, 2)]);
    }

    /// The Must show in a test: on a clear strength ladder the adaptive
    /// finals find the true top 3 at least as often as a round robin of
    /// the same budget, with at most half its matches.
    #[test]
    fn adaptive_finals_beat_a_round_robin_of_the_same_budget_on_a_clear_ladder() {
        let field = Field { bots: 6, gap: 200.0, tie: 0.1, seat_advantage: 30.0 };
        let (adaptive, full) = simulate(&field, 360, 200, 36).unwrap();
        assert!(adaptive.accuracy() >= full.accuracy(), "adaptive {adaptive:?} round robin {full:?}");
        assert!(adaptive.mean_matches() <= full.mean_matches() / 2.0, "adaptive {adaptive:?} round robin {full:?}");
        assert!(simulate(&field, 301, 1, 0).unwrap_err().contains("multiple of n(n−1) = 30"));
    }
}
