//! Which matches to play next, per ladder format. Pure: plain data in,
//! seat orders out; no clock, no I/O, randomness only through the caller's
//! `Rng`, so the same inputs and the same generator state give the same
//! answer.
//!
//! Three formats:
//!
//! * the **continuous rated ladder** ([`next_rated_match`]), every game's
//!   default: one match at a time, chosen around the bot that has played
//!   least, rated by [`crate::rating`];
//! * the **round robin** ([`round_robin_schedule`], [`round_robin_standings`])
//!   of the Snake and Slime seeds: every pairing (or every 4-bot
//!   combination) on every side, scored by points or by average score;
//! * Linkage's **neighbours ladder** ([`neighbours_next`],
//!   [`neighbours_ratings`]): games against the bots just above and below,
//!   rated 100 × won / played.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};

use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::rating::{leaderboard_score, Rating};

// ---------------------------------------------------------------------------
// Continuous rated ladder
// ---------------------------------------------------------------------------

/// A bot that may play on a rated ladder.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    pub bot: i64,
    pub rating: Rating,
    /// Rated games finished.
    pub games: u32,
    /// Matches queued or running.
    pub in_flight: u32,
}

/// How a rated ladder picks its matches.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderSettings {
    /// Seats per match (below 2 counts as 2).
    pub seats: usize,
    /// Below this many games a bot is new: first in line (it has the fewest
    /// games) and one match at a time. Default 10.
    pub newcomer_games: u32,
    /// Matches in flight at once for a bot that is no longer new. Default 2.
    pub max_in_flight_per_bot: u32,
    /// Opponents are drawn from this many eligible bots nearest the focus
    /// bot in leaderboard score (at least `seats − 1`). Default 4.
    pub nearest: usize,
}

impl Default for LadderSettings {
    fn default() -> Self {
        LadderSettings { seats: 2, newcomer_games: 10, max_in_flight_per_bot: 2, nearest: 4 }
    }
}

/// The next match of a continuous rated ladder, as bots in seat order, or
/// None when fewer than `settings.seats` bots may play now.
///
/// * **Eligible** bots have fewer matches in flight than allowed: one for a
///   newcomer (fewer than `newcomer_games` games), so its first games are
///   played one after another and each result informs the next pairing;
///   `max_in_flight_per_bot` (at least 1) for the others. A bot listed twice
///   counts once (its first entry).
/// * The **focus** bot is an eligible one with the fewest games, counting
///   its matches in flight as games to come (so several matches queued at
///   once spread over the bots instead of all going to the same one); ties
///   are broken at random. Newcomers and bots with few games come first.
/// * **Opponents** are drawn without replacement among the `nearest`
///   eligible bots closest to the focus bot in
///   [`leaderboard_score`](crate::rating::leaderboard_score), the k-th
///   closest with weight 1 / k, so the closest is the likeliest but
///   pairings vary. Bots at the same distance are ordered at random.
/// * **Seats**: the chosen bots are shuffled into a uniformly random seat
///   order. Entrants carry no seat history, so rotating deliberately is not
///   possible here; at random each bot plays each seat equally often in
///   expectation, and no seat is systematically the focus bot's.
pub fn next_rated_match<R: Rng>(entrants: &[Entrant], settings: &LadderSettings, rng: &mut R) -> Option<Vec<i64>> {
    let seats = settings.seats.max(2);
    let mut seen = HashSet::new();
    let eligible: Vec<&Entrant> = entrants
        .iter()
        .filter(|e| seen.insert(e.bot))
        .filter(|e| {
            let cap = if e.games < settings.newcomer_games { 1 } else { settings.max_in_flight_per_bot.max(1) };
            e.in_flight < cap
        })
        .collect();
    if eligible.len() < seats {
        return None;
    }
    let load = |e: &Entrant| u64::from(e.games) + u64::from(e.in_flight);
    let fewest = eligible.iter().map(|e| load(e)).min()?;
    let focus_pool: Vec<&Entrant> = eligible.iter().copied().filter(|e| load(e) == fewest).collect();
    let focus = *focus_pool.choose(rng)?;
    let key = leaderboard_score(focus.rating);
    let mut others: Vec<&Entrant> = eligible.iter().copied().filter(|e| e.bot != focus.bot).collect();
    // Shuffle, then a stable sort by distance: equal distances (every
    // newcomer is at 0) end up in random order, not by id.
    others.shuffle(rng);
    others.sort_by(|a, b| (leaderboard_score(a.rating) - key).abs().total_cmp(&(leaderboard_score(b.rating) - key).abs()));
    others.truncate(settings.nearest.max(seats - 1));
    let mut chosen = vec![focus.bot];
    while chosen.len() < seats {
        let total: f64 = (1..=others.len()).map(|k| 1.0 / k as f64).sum();
        let mut x = rng.gen::<f64>() * total;
        let mut pick = others.len() - 1;
        for k in 1..=others.len() {
            let w = 1.0 / k as f64;
            if x < w {
                pick = k - 1;
                break;
            }
            x -= w;
        }
        chosen.push(others.remove(pick).bot);
    }
    chosen.shuffle(rng);
    Some(chosen)
}

// ---------------------------------------------------------------------------
// Round robin
// ---------------------------------------------------------------------------

/// Every match of a round robin, in the order to play them.
///
/// **Which matches.** The bots (duplicates dropped) form every pairing for
/// 2 seats, every k-combination for k = `seats` (Slime's seed: "an
/// exhaustive list of all possible 4-slime combinations"). Each combination
/// is played in each of its k cyclic seat rotations, so every bot plays
/// every seat once per combination, and all that `rounds` times:
///
/// * 2 seats: each ordered pair `rounds` times, n·(n−1)·rounds matches
///   (Snake's seed: "each pair M times on each side", M·N·(N−1) games);
/// * k seats: C(n, k)·k·rounds matches. Rotations keep the cyclic turn
///   order, so in the 2nd, 4th, ... round a combination's bots are taken in
///   descending instead of ascending id order: over two rounds every bot
///   moves right before, and right after, each other bot of the combination
///   equally often (for k = 3 the two rounds are all six orders). In a
///   single round, ascending id order decides who follows whom.
///
/// **In which order** (deterministic; it depends only on the set of bots,
/// `seats` and `rounds`):
///
/// 1. The combinations are split once into *slates* of disjoint ones. For
///    2 seats, the circle method: n − 1 slates (n if n is odd) in which
///    every bot plays once (but for one resting bot). For more seats, a
///    greedy packing of the combinations taken in a fixed pseudo-random
///    order (a perfect split is hard to construct and lexicographic order
///    packs badly), with big and small slates alternating.
/// 2. The schedule is k·`rounds` *passes*; each plays every combination
///    once, slate after slate, and pass p seats the i-th combination in
///    rotation (p + i) mod k. After each pass every combination has met
///    once, so a tournament stopped early is still fair.
/// 3. A short lookahead then smooths the seams: each next match is, among
///    the next 8 (2 seats) or 32 (more) of that sequence, the first in
///    which every bot has sat out at least ⌊n/k⌋ − 1 matches since its
///    last; failing that, the one whose least rested bot has rested
///    longest, then whose bots on a run of consecutive matches have the
///    shortest run, then whose bots have rested longest in total.
///
/// Measured (unit tests hold these): for 2 seats and 6 or more bots nobody
/// plays twice in a row (with 3 to 5 bots it cannot always be avoided),
/// and with 20 bots every bot sits out at least 8 matches between two of
/// its own (9 would be perfect); for 4 seats and 20 bots, 3 times in 19 380
/// matches does a bot play twice in a row, never three times. With fewer
/// than 2k bots every match holds more than half of them and runs cannot be
/// avoided (6 bots, 4 seats: runs of up to 5).
///
/// Fewer than k bots, or no rounds: no matches.
pub fn round_robin_schedule(bots: &[i64], seats: usize, rounds: u32) -> Vec<Vec<i64>> {
    let k = seats.max(2);
    let mut ids = bots.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let n = ids.len();
    if n < k || rounds == 0 {
        return Vec::new();
    }
    let slates = if k == 2 { circle_slates(n) } else { packed_slates(n, k) };
    let per_pass: usize = slates.iter().map(Vec::len).sum();
    let passes = k * rounds as usize;
    let canonical = (0..passes).flat_map(|pass| {
        slates.iter().flatten().enumerate().map(move |(i, combo)| {
            let mut t = combo.clone();
            if (pass / k) % 2 == 1 {
                t.reverse();
            }
            t.rotate_left((pass + i) % k);
            t
        })
    });
    // Measured: the circle method needs little smoothing, and a long
    // lookahead there trades its regular rests for greedy ones.
    let lookahead = if k == 2 { 8 } else { 32 };
    interleave(canonical, per_pass * passes, n, k, lookahead).into_iter().map(|t| t.into_iter().map(|b| ids[b]).collect()).collect()
}

/// The pairings of 0..n as n − 1 slates of n/2 disjoint pairs (n even) or
/// n slates of (n − 1)/2 (n odd, one bot resting per slate): the last place
/// stays put while the others turn around a circle.
fn circle_slates(n: usize) -> Vec<Vec<Vec<usize>>> {
    let m = n + n % 2; // an empty place when n is odd
    let turning = m - 1;
    (0..turning)
        .map(|r| {
            let mut slate = vec![[r, m - 1]];
            for i in 1..m / 2 {
                slate.push([(r + i) % turning, (r + turning - i) % turning]);
            }
            slate.into_iter().filter(|p| p[0] < n && p[1] < n).map(|p| vec![p[0].min(p[1]), p[0].max(p[1])]).collect()
        })
        .collect()
}

/// Every k-subset of 0..n, in slates of disjoint subsets: the subsets in a
/// fixed pseudo-random order, each slate taking those that fit beside the
/// ones it already has; then the slates ordered biggest, smallest, second
/// biggest, second smallest, ... so the small ones (the packing's leftovers)
/// sit between big ones.
fn packed_slates(n: usize, k: usize) -> Vec<Vec<Vec<usize>>> {
    use rand::SeedableRng;
    let mut combos = combinations(n, k);
    combos.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(0x6b6f_7468));
    let mut taken = vec![false; combos.len()];
    let mut first = 0; // every combination before this one is taken
    let mut slates: Vec<Vec<Vec<usize>>> = Vec::new();
    while first < combos.len() {
        let mut free = vec![true; n];
        let mut free_count = n;
        let mut slate = Vec::new();
        for (j, c) in combos.iter().enumerate().skip(first) {
            if free_count < k {
                break;
            }
            if !taken[j] && c.iter().all(|b| free[*b]) {
                taken[j] = true;
                for b in c {
                    free[*b] = false;
                }
                free_count -= k;
                slate.push(c.clone());
            }
        }
        slates.push(slate);
        while first < combos.len() && taken[first] {
            first += 1;
        }
    }
    slates.sort_by_key(|s| Reverse(s.len()));
    let mut mixed = Vec::with_capacity(slates.len());
    let mut rest = std::collections::VecDeque::from(slates);
    while let Some(big) = rest.pop_front() {
        mixed.push(big);
        mixed.extend(rest.pop_back());
    }
    mixed
}

/// All k-subsets of 0..n in lexicographic order.
fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        out.push(idx.clone());
        // The rightmost index that can still move right.
        let Some(i) = (0..k).rev().find(|&i| idx[i] < n - k + i) else { return out };
        idx[i] += 1;
        for j in i + 1..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

/// Reorders `tuples` (of bot indices below `n`, `len` of them) for rest:
/// each next match is the best of the next `lookahead` by (its least rested
/// bot's rest, capped at ⌊n/k⌋ − 1; the longest current run of consecutive
/// matches among its bots, shorter first; its bots' total rest, each capped
/// likewise; the earliest).
fn interleave(tuples: impl Iterator<Item = Vec<usize>>, len: usize, n: usize, k: usize, lookahead: usize) -> Vec<Vec<usize>> {
    let target = n / k - 1;
    // Per bot: the match it last played, and how many in a row it has played up to it.
    let mut last: Vec<Option<usize>> = vec![None; n];
    let mut run: Vec<usize> = vec![0; n];
    let mut out: Vec<Vec<usize>> = Vec::with_capacity(len);
    let mut tuples = tuples.fuse();
    let mut window: Vec<Vec<usize>> = tuples.by_ref().take(lookahead.max(1)).collect();
    while !window.is_empty() {
        let now = out.len();
        let score = |t: &[usize]| {
            let (mut least, mut total, mut longest_run) = (target, 0, 0);
            for b in t {
                let rest = last[*b].map_or(target, |l| (now - l - 1).min(target));
                least = least.min(rest);
                total += rest;
                if last[*b].is_some_and(|l| l + 1 == now) {
                    longest_run = longest_run.max(run[*b]);
                }
            }
            (least, Reverse(longest_run), total)
        };
        let pick = (0..window.len()).max_by_key(|&j| (score(&window[j]), Reverse(j))).unwrap_or(0);
        let t = window.remove(pick);
        for b in &t {
            run[*b] = if last[*b].is_some_and(|l| l + 1 == now) { run[*b] + 1 } else { 1 };
            last[*b] = Some(now);
        }
        out.push(t);
        window.extend(tuples.next());
    }
    out
}

/// How a round-robin match scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundRobinScoring {
    /// Points per match: the best rank alone wins, the best rank shared
    /// ties, any other rank loses. Snake's seed: win 2, tie 1, loss 0.
    Points { win: f64, tie: f64, loss: f64 },
    /// The mean of the bot's scores over its matches (Slime's seed: the
    /// number of squares it holds at the end, averaged over all games).
    AverageScore,
}

/// One finished round-robin match.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundRobinRecord {
    /// (bot, rank, score) per seat; rank 1 is the best, equal ranks tie.
    pub seats: Vec<(i64, u32, f64)>,
}

/// One line of a round robin's table.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    pub bot: i64,
    /// Total points, or the average score (by the scoring).
    pub points: f64,
    /// Matches played.
    pub played: u32,
    /// Competition ranking: 1, 1, 3, ...
    pub rank: u32,
}

/// What seat `i` of a finished match adds to its bot's line: points, or
/// its score (averaged by [`round_robin_standings`]).
pub fn round_robin_points(seats: &[(i64, u32, f64)], i: usize, scoring: &RoundRobinScoring) -> f64 {
    let Some(best) = seats.iter().map(|(_, rank, _)| *rank).min() else { return 0.0 };
    let at_best = seats.iter().filter(|(_, rank, _)| *rank == best).count();
    let (_, rank, score) = seats[i];
    match scoring {
        RoundRobinScoring::Points { win, tie, loss } => match (rank == best, at_best) {
            (true, 1) => *win,
            (true, _) => *tie,
            (false, _) => *loss,
        },
        RoundRobinScoring::AverageScore => score,
    }
}

/// The round robin's table: one line per bot of `bots` (duplicates
/// dropped), best first.
///
/// * Every record counts for the listed bots in it; a bot in a record but
///   not in `bots` (say, disabled since) gets no line, though its matches
///   still count for its opponents.
/// * Points: per match, the best rank in the match (normally 1) held by one
///   seat wins, held by several seats ties (for Snake, both crashing at
///   once); every other seat loses, so with more than 2 seats second place
///   is a loss like last (as in Flit's "no reward for second place").
/// * Average score: total score / matches; 0 for a bot without matches.
/// * Equal points share a rank (1, 1, 3); within equal points, lines go by
///   bot id.
pub fn round_robin_standings(bots: &[i64], records: &[RoundRobinRecord], scoring: &RoundRobinScoring) -> Vec<Standing> {
    // bot -> (sum of points or scores, matches)
    let mut sum: BTreeMap<i64, (f64, u32)> = bots.iter().map(|b| (*b, (0.0, 0))).collect();
    for r in records {
        for (i, (bot, _, _)) in r.seats.iter().enumerate() {
            let Some(e) = sum.get_mut(bot) else { continue };
            e.1 += 1;
            e.0 += round_robin_points(&r.seats, i, scoring);
        }
    }
    let mut out: Vec<Standing> = sum
        .into_iter()
        .map(|(bot, (total, played))| Standing {
            bot,
            points: match scoring {
                RoundRobinScoring::AverageScore if played > 0 => total / f64::from(played),
                RoundRobinScoring::AverageScore => 0.0,
                RoundRobinScoring::Points { .. } => total,
            },
            played,
            rank: 0,
        })
        .collect();
    out.sort_by(|a, b| b.points.total_cmp(&a.points).then(a.bot.cmp(&b.bot)));
    assign_competition_ranks(&mut out);
    out
}

fn assign_competition_ranks(table: &mut [Standing]) {
    for i in 0..table.len() {
        table[i].rank = if i > 0 && table[i].points == table[i - 1].points { table[i - 1].rank } else { i as u32 + 1 };
    }
}

// ---------------------------------------------------------------------------
// Linkage's neighbours ladder
// ---------------------------------------------------------------------------

/// One game of Linkage's neighbours ladder: `first` moved first (More),
/// `second` second (Fewer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairRecord {
    pub first: i64,
    pub second: i64,
    /// None: a draw, or not played yet (queued).
    pub winner: Option<i64>,
}

/// The games still owed between adjacent bots of `order` (the current
/// ladder, best first), as [first, second].
///
/// Linkage's seed: "your Bot will play 10 games against the Bot above you
/// in the ladder and ten games against the Bot beneath you. Half of these
/// games will be as the More player and half as Fewer". So each adjacent
/// pair owes `games_per_neighbour` games, half with each bot first.
/// Decisions where the text is open:
///
/// * An odd `games_per_neighbour` is rounded up to the next even number:
///   equal sides matter more than the exact count.
/// * `records` are every game between the bots already played *or queued*;
///   each side is counted on its own (games beyond a side's half do not
///   make up for the other side). Only games between the two bots of a pair
///   count, whenever they were played: the seed's weekly fresh start is the
///   caller's choice (pass only this week's records to get it).
/// * Within a pair the sides alternate, the side with more games owed
///   first, the bot placed higher moving first on a tie; a partly played
///   schedule stays balanced.
/// * Across pairs the list is interleaved: the first owed game of every
///   other pair (which share no bot), then of the pairs in between, then
///   the second games, and so on, so the first games queued spread over the
///   whole ladder.
/// * A bot listed twice in `order` keeps its first place.
pub fn neighbours_next(order: &[i64], records: &[PairRecord], games_per_neighbour: u32) -> Vec<[i64; 2]> {
    let mut seen = HashSet::new();
    let order: Vec<i64> = order.iter().copied().filter(|b| seen.insert(*b)).collect();
    let mut played: HashMap<(i64, i64), u32> = HashMap::new();
    for r in records {
        *played.entry((r.first, r.second)).or_default() += 1;
    }
    let per_side = games_per_neighbour.div_ceil(2);
    let owed_by_pair: Vec<Vec<[i64; 2]>> = order
        .windows(2)
        .map(|w| {
            let (a, b) = (w[0], w[1]);
            let mut ab_left = per_side.saturating_sub(played.get(&(a, b)).copied().unwrap_or(0));
            let mut ba_left = per_side.saturating_sub(played.get(&(b, a)).copied().unwrap_or(0));
            let mut owed = Vec::new();
            while ab_left + ba_left > 0 {
                if ab_left >= ba_left {
                    owed.push([a, b]);
                    ab_left -= 1;
                } else {
                    owed.push([b, a]);
                    ba_left -= 1;
                }
            }
            owed
        })
        .collect();
    let longest = owed_by_pair.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::with_capacity(owed_by_pair.iter().map(Vec::len).sum());
    for step in 0..longest {
        for parity in [0, 1] {
            for owed in owed_by_pair.iter().skip(parity).step_by(2) {
                if let Some(game) = owed.get(step) {
                    out.push(*game);
                }
            }
        }
    }
    out
}

/// A bot's line on the neighbours ladder: 100 × won / played, overall and
/// by side (0 for a side not played yet).
#[derive(Clone, Debug, PartialEq)]
pub struct NeighbourRating {
    pub bot: i64,
    /// 100 × won / played.
    pub overall: f64,
    /// As the first player (Linkage: More).
    pub as_first: f64,
    /// As the second player (Linkage: Fewer).
    pub as_second: f64,
    pub played: u32,
}

/// The neighbours ladder's ratings from finished games (pass no queued
/// ones: they would count as played and not won), best first: by `overall`,
/// then by more games played (the same rate over more games is better
/// established), then by bot id. A draw (no winner; Linkage has none, but a
/// game may end without one) counts as played and not won, as the seed's
/// 100 × won / played has it.
pub fn neighbours_ratings(records: &[PairRecord]) -> Vec<NeighbourRating> {
    #[derive(Default)]
    struct Tally {
        won_first: u32,
        played_first: u32,
        won_second: u32,
        played_second: u32,
    }
    let mut t: BTreeMap<i64, Tally> = BTreeMap::new();
    for r in records {
        let f = t.entry(r.first).or_default();
        f.played_first += 1;
        f.won_first += u32::from(r.winner == Some(r.first));
        let s = t.entry(r.second).or_default();
        s.played_second += 1;
        s.won_second += u32::from(r.winner == Some(r.second));
    }
    let pct = |w: u32, p: u32| if p == 0 { 0.0 } else { 100.0 * f64::from(w) / f64::from(p) };
    let mut out: Vec<NeighbourRating> = t
        .into_iter()
        .map(|(bot, x)| NeighbourRating {
            bot,
            overall: pct(x.won_first + x.won_second, x.played_first + x.played_second),
            as_first: pct(x.won_first, x.played_first),
            as_second: pct(x.won_second, x.played_second),
            played: x.played_first + x.played_second,
        })
        .collect();
    out.sort_by(|a, b| b.overall.total_cmp(&a.overall).then(b.played.cmp(&a.played)).then(a.bot.cmp(&b.bot)));
    out
}

// ---------------------------------------------------------------------------
// Swiss rounds
// ---------------------------------------------------------------------------

/// One match of a Swiss ladder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwissRecord {
    pub round: u32,
    /// Bots in seat order.
    pub seats: Vec<i64>,
    /// Rank per seat once finished (1 = best, equal ranks tie); None while queued.
    pub ranks: Option<Vec<u32>>,
}

/// One line of a Swiss table.
#[derive(Clone, Debug, PartialEq)]
pub struct SwissStanding {
    pub bot: i64,
    /// Per match: (opponents beaten + ½ × opponents tied) / (seats − 1),
    /// so 1 a win, ½ a draw, 0 a loss with two seats.
    pub points: f64,
    /// The tie-break: the sum of the points of every opponent met.
    pub buchholz: f64,
    pub played: u32,
    /// Competition ranking over (points, Buchholz): 1, 1, 3, ...
    pub rank: u32,
}

/// What seat `i` of a finished Swiss match scores: the share of its
/// opponents it beat, ties counting half.
pub fn swiss_points(ranks: &[u32], i: usize) -> f64 {
    let k = ranks.len();
    if k < 2 {
        return 0.0;
    }
    let beaten = ranks.iter().filter(|r| **r > ranks[i]).count() as f64;
    let tied = ranks.iter().filter(|r| **r == ranks[i]).count() as f64 - 1.0;
    (beaten + 0.5 * tied) / (k - 1) as f64
}

/// The Swiss table for the bots of `bots` from the finished matches of
/// `records`, best first: by points, then Buchholz, then bot id.
pub fn swiss_standings(bots: &[i64], records: &[SwissRecord]) -> Vec<SwissStanding> {
    let mut points: HashMap<i64, f64> = HashMap::new();
    let mut played: HashMap<i64, u32> = HashMap::new();
    for r in records {
        let Some(ranks) = &r.ranks else { continue };
        for (i, bot) in r.seats.iter().enumerate() {
            *points.entry(*bot).or_default() += swiss_points(ranks, i);
            *played.entry(*bot).or_default() += 1;
        }
    }
    let mut buchholz: HashMap<i64, f64> = HashMap::new();
    for r in records.iter().filter(|r| r.ranks.is_some()) {
        for bot in &r.seats {
            let opponents: f64 = r.seats.iter().filter(|o| *o != bot).map(|o| points.get(o).copied().unwrap_or(0.0)).sum();
            *buchholz.entry(*bot).or_default() += opponents;
        }
    }
    let mut seen = HashSet::new();
    let mut out: Vec<SwissStanding> = bots
        .iter()
        .filter(|b| seen.insert(**b))
        .map(|b| SwissStanding {
            bot: *b,
            points: points.get(b).copied().unwrap_or(0.0),
            buchholz: buchholz.get(b).copied().unwrap_or(0.0),
            played: played.get(b).copied().unwrap_or(0),
            rank: 0,
        })
        .collect();
    out.sort_by(|a, b| b.points.total_cmp(&a.points).then(b.buchholz.total_cmp(&a.buchholz)).then(a.bot.cmp(&b.bot)));
    for i in 0..out.len() {
        let same = i > 0 && out[i].points == out[i - 1].points && out[i].buchholz == out[i - 1].buchholz;
        out[i].rank = if same { out[i - 1].rank } else { i as u32 + 1 };
    }
    out
}

/// The next Swiss round: its number and its matches (bots in seat order),
/// or None while a round is still being played, when every round has been
/// played, or with fewer than `seats` bots.
///
/// * **Rounds**: `rounds`, or ⌈log₂ n⌉ (at least 1) for the n bots of
///   `bots` (those ready now: a bot that joins late enters the next round
///   with no points).
/// * **Order**: by the table so far (points, then Buchholz); bots level on
///   both in random order, so round 1 is drawn at random.
/// * **Sitting out**: when n is not a multiple of `seats`, the n mod seats
///   bots who sit out this round are those who sat out least so far, the
///   lowest placed first; a sit-out scores nothing.
/// * **Pairing**: two seats: top down, each bot meets the highest placed
///   bot left that it has not met yet (if it has met them all, the highest
///   placed), so rematches wait until they cannot be avoided by this greedy
///   pass. More seats: consecutive groups of the order.
/// * **Seats**: shuffled within each match.
pub fn swiss_next_round<R: Rng>(
    bots: &[i64],
    records: &[SwissRecord],
    seats: usize,
    rounds: Option<u32>,
    rng: &mut R,
) -> Option<(u32, Vec<Vec<i64>>)> {
    let k = seats.max(2);
    let current = records.iter().map(|r| r.round).max().unwrap_or(0);
    if records.iter().any(|r| r.round == current && r.ranks.is_none()) {
        return None;
    }
    let mut seen = HashSet::new();
    let mut ids: Vec<i64> = bots.iter().copied().filter(|b| seen.insert(*b)).collect();
    let n = ids.len();
    let total = rounds.unwrap_or_else(|| (usize::BITS - (n.max(2) - 1).leading_zeros()).max(1));
    if n < k || current >= total {
        return None;
    }
    let table = swiss_standings(&ids, records);
    let place: HashMap<i64, usize> = table.iter().enumerate().map(|(i, s)| (s.bot, i)).collect();
    let level: HashMap<i64, (f64, f64)> = table.iter().map(|s| (s.bot, (s.points, s.buchholz))).collect();
    ids.shuffle(rng);
    ids.sort_by(|a, b| {
        let (pa, ba) = level[a];
        let (pb, bb) = level[b];
        pb.total_cmp(&pa).then(bb.total_cmp(&ba))
    });
    let played_rounds = |bot: i64| records.iter().filter(|r| r.seats.contains(&bot)).map(|r| r.round).collect::<HashSet<_>>().len() as u32;
    let mut by_rest: Vec<i64> = ids.clone();
    by_rest.sort_by_key(|b| (current - played_rounds(*b).min(current), Reverse(place[b])));
    let sitting: HashSet<i64> = by_rest.into_iter().take(n % k).collect();
    let mut pool: Vec<i64> = ids.into_iter().filter(|b| !sitting.contains(b)).collect();
    let met = |a: i64, b: i64| records.iter().any(|r| r.seats.contains(&a) && r.seats.contains(&b));
    let mut out = Vec::new();
    while !pool.is_empty() {
        let mut group = if k == 2 {
            let a = pool.remove(0);
            let j = pool.iter().position(|b| !met(a, *b)).unwrap_or(0);
            vec![a, pool.remove(j)]
        } else {
            pool.drain(..k).collect()
        };
        group.shuffle(rng);
        out.push(group);
    }
    Some((current + 1, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn entrant(bot: i64, mu: f64, games: u32, in_flight: u32) -> Entrant {
        Entrant { bot, rating: Rating { mu, sigma: 1.0 }, games, in_flight }
    }

    fn sorted(mut v: Vec<i64>) -> Vec<i64> {
        v.sort_unstable();
        v
    }

    // -- rated ladder -------------------------------------------------------

    /// (name, entrants, settings, the acceptable matches as sorted sets; none: no match)
    type PickCase = (&'static str, Vec<Entrant>, LadderSettings, Vec<Vec<i64>>);

    #[test]
    fn rated_ladder_picks_by_the_rules() {
        let near1 = LadderSettings { nearest: 1, ..LadderSettings::default() };
        let cases: Vec<PickCase> = vec![
            (
                "the newcomer plays first, against the nearest bot",
                vec![entrant(1, 40.0, 50, 0), entrant(2, 30.0, 50, 0), entrant(3, 29.0, 0, 0), entrant(4, 10.0, 50, 0)],
                near1.clone(),
                vec![vec![2, 3]],
            ),
            (
                "a newcomer with a match in flight waits",
                vec![entrant(1, 40.0, 50, 0), entrant(2, 30.0, 50, 0), entrant(3, 29.0, 0, 1)],
                near1.clone(),
                vec![vec![1, 2]],
            ),
            (
                "an established bot may have two in flight, not three",
                vec![entrant(1, 40.0, 50, 1), entrant(2, 30.0, 60, 2), entrant(3, 29.0, 70, 0)],
                near1.clone(),
                vec![vec![1, 3]],
            ),
            (
                "fewest games counts the matches in flight",
                vec![entrant(1, 10.0, 20, 1), entrant(2, 50.0, 20, 0), entrant(3, 49.0, 25, 0), entrant(4, 12.0, 30, 0)],
                near1.clone(),
                vec![vec![2, 3]],
            ),
            ("not enough eligible bots", vec![entrant(1, 40.0, 50, 2), entrant(2, 30.0, 0, 1)], near1.clone(), vec![]),
            ("one bot", vec![entrant(1, 40.0, 0, 0)], near1.clone(), vec![]),
            ("a bot listed twice is one bot", vec![entrant(1, 40.0, 0, 0), entrant(1, 40.0, 0, 0)], near1.clone(), vec![]),
            (
                "four seats need four eligible bots",
                vec![entrant(1, 40.0, 50, 0), entrant(2, 30.0, 50, 0), entrant(3, 20.0, 5, 1), entrant(4, 10.0, 50, 0)],
                LadderSettings { seats: 4, ..LadderSettings::default() },
                vec![],
            ),
            (
                "four seats: the three nearest, whatever `nearest` says; 3 and 7 are equally near",
                (1..=8).map(|b| entrant(b, 10.0 * b as f64, if b == 5 { 0 } else { 40 }, 0)).collect(),
                LadderSettings { seats: 4, nearest: 1, ..LadderSettings::default() },
                vec![vec![3, 4, 5, 6], vec![4, 5, 6, 7]],
            ),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for (name, entrants, settings, want) in cases {
            let mut seen = HashSet::new();
            for _ in 0..40 {
                match next_rated_match(&entrants, &settings, &mut rng) {
                    Some(m) => {
                        assert_eq!(m.len(), settings.seats, "{name}");
                        let m = sorted(m);
                        assert!(want.contains(&m), "{name}: {m:?}");
                        seen.insert(m);
                    }
                    None => assert!(want.is_empty(), "{name}: no match"),
                }
            }
            assert_eq!(seen.len(), want.len(), "{name}: every acceptable match comes up");
        }
    }

    #[test]
    fn rated_ladder_focus_ties_and_opponents_vary() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        // Everybody new and equal: every bot gets picked, with varied opponents.
        let es: Vec<Entrant> = (1..=10).map(|b| entrant(b, 25.0, 0, 0)).collect();
        let mut pairs = HashSet::new();
        let mut bots = HashSet::new();
        for _ in 0..300 {
            let m = sorted(next_rated_match(&es, &LadderSettings::default(), &mut rng).unwrap());
            bots.extend(m.iter().copied());
            pairs.insert(m);
        }
        assert_eq!(bots.len(), 10);
        assert!(pairs.len() > 25, "pairings vary: {}", pairs.len());
        // Closer opponents are likelier: weights 1, 1/2, 1/3, 1/4.
        let es = vec![
            entrant(1, 50.0, 0, 0),
            entrant(2, 49.0, 50, 0),
            entrant(3, 47.0, 50, 0),
            entrant(4, 44.0, 50, 0),
            entrant(5, 40.0, 50, 0),
        ];
        let mut count: HashMap<i64, u32> = HashMap::new();
        for _ in 0..2500 {
            let m = next_rated_match(&es, &LadderSettings::default(), &mut rng).unwrap();
            assert!(m.contains(&1));
            *count.entry(m.into_iter().find(|b| *b != 1).unwrap()).or_default() += 1;
        }
        assert!(count[&2] > count[&3] && count[&3] > count[&4] && count[&4] > count[&5], "{count:?}");
        assert!((1050..1350).contains(&count[&2]), "about 48 %: {count:?}");
    }

    #[test]
    fn rated_ladder_with_matches_in_flight_respects_caps_and_spreads_games() {
        // 8 bots, 4 of them new; up to 5 matches in flight, finished oldest first.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let s = LadderSettings::default();
        let mut es: Vec<Entrant> = (1..=8).map(|b| entrant(b, 20.0 + b as f64, if b <= 4 { 0 } else { 30 }, 0)).collect();
        let mut queue: std::collections::VecDeque<Vec<i64>> = Default::default();
        for _ in 0..600 {
            while queue.len() < 5 {
                let Some(m) = next_rated_match(&es, &s, &mut rng) else { break };
                for b in &m {
                    es.iter_mut().find(|e| e.bot == *b).unwrap().in_flight += 1;
                }
                queue.push_back(m);
            }
            for e in &es {
                let cap = if e.games < s.newcomer_games { 1 } else { s.max_in_flight_per_bot };
                assert!(e.in_flight <= cap, "{e:?}");
            }
            let done = queue.pop_front().expect("8 bots always have a match");
            for b in &done {
                let e = es.iter_mut().find(|e| e.bot == *b).unwrap();
                e.in_flight -= 1;
                e.games += 1;
            }
        }
        let games: Vec<u32> = es.iter().map(|e| e.games).collect();
        // The newcomers caught up with the 30 games the others started with.
        let (min, max) = (games.iter().min().unwrap(), games.iter().max().unwrap());
        assert!(max - min <= 3, "{games:?}");
    }

    #[test]
    fn rated_ladder_is_deterministic_given_the_rng() {
        let es: Vec<Entrant> = (1..=12).map(|b| entrant(b, 20.0 + b as f64, b as u32, 0)).collect();
        let s = LadderSettings { seats: 4, newcomer_games: 0, ..LadderSettings::default() };
        let run = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..50).map(|_| next_rated_match(&es, &s, &mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }

    #[test]
    fn rated_ladder_seats_rotate_over_many_matches() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let s = LadderSettings { seats: 4, newcomer_games: 0, ..LadderSettings::default() };
        let es: Vec<Entrant> = (1..=4).map(|b| entrant(b, 25.0, 5, 0)).collect();
        let mut seat_of: HashMap<(i64, usize), u32> = HashMap::new();
        for _ in 0..800 {
            let m = next_rated_match(&es, &s, &mut rng).unwrap();
            assert_eq!(sorted(m.clone()), vec![1, 2, 3, 4]);
            for (seat, bot) in m.into_iter().enumerate() {
                *seat_of.entry((bot, seat)).or_default() += 1;
            }
        }
        assert!(seat_of.values().all(|&n| (140..=260).contains(&n)), "{seat_of:?}");
    }

    // -- round robin --------------------------------------------------------

    fn count_of(schedule: &[Vec<i64>]) -> HashMap<Vec<i64>, u32> {
        let mut c = HashMap::new();
        for t in schedule {
            *c.entry(t.clone()).or_default() += 1;
        }
        c
    }

    /// The fewest matches any bot sits out between two of its own.
    fn min_rest(schedule: &[Vec<i64>]) -> usize {
        let mut last: HashMap<i64, usize> = HashMap::new();
        let mut rest = usize::MAX;
        for (i, t) in schedule.iter().enumerate() {
            for b in t {
                if let Some(l) = last.insert(*b, i) {
                    rest = rest.min(i - l - 1);
                }
            }
        }
        rest
    }

    #[test]
    fn round_robin_sizes() {
        // (bots, seats, rounds, matches)
        let cases: [(&[i64], usize, u32, usize); 9] = [
            (&[3, 1, 2], 2, 2, 3 * 2 * 2),
            (&[1, 2, 3, 4, 5, 6], 2, 1, 30),
            (&[1, 2, 3, 4, 5], 4, 1, 5 * 4),
            (&[1, 2, 3, 4, 5], 4, 2, 5 * 4 * 2),
            (&[1, 2, 3, 4, 5, 6, 7], 3, 1, 35 * 3),
            (&[1, 2, 2, 1], 2, 1, 2),
            (&[1], 2, 1, 0),
            (&[1, 2, 3], 4, 1, 0),
            (&[1, 2, 3], 2, 0, 0),
        ];
        for (bots, seats, rounds, n) in cases {
            let s = round_robin_schedule(bots, seats, rounds);
            assert_eq!(s.len(), n, "{bots:?} {seats} {rounds}");
            assert!(s.iter().all(|t| t.len() == seats && sorted(t.clone()).windows(2).all(|w| w[0] < w[1])));
        }
    }

    #[test]
    fn round_robin_two_seats_every_ordered_pair_rounds_times() {
        for (n, rounds) in [(2, 1), (3, 2), (6, 1), (7, 3), (12, 2)] {
            let bots: Vec<i64> = (1..=n).map(|b| b * 10).collect();
            let s = round_robin_schedule(&bots, 2, rounds);
            let c = count_of(&s);
            assert_eq!(c.len() as i64, n * (n - 1));
            assert!(c.values().all(|&k| k == rounds), "{n} bots: {c:?}");
        }
    }

    #[test]
    fn round_robin_k_seats_every_rotation_every_seat() {
        for (n, k, rounds) in [(5, 4, 1), (6, 4, 2), (7, 3, 2), (4, 4, 1)] {
            let bots: Vec<i64> = (1..=n).collect();
            let s = round_robin_schedule(&bots, k, rounds);
            // Each bot plays each seat the same number of times.
            let mut seat_of: HashMap<(i64, usize), u32> = HashMap::new();
            for t in &s {
                for (seat, b) in t.iter().enumerate() {
                    *seat_of.entry((*b, seat)).or_default() += 1;
                }
            }
            let per: Vec<u32> = seat_of.values().copied().collect();
            assert_eq!(per.len(), n as usize * k);
            assert!(per.iter().all(|&x| x == per[0]), "{n} {k}: {seat_of:?}");
            // Each combination `rounds` × k times, once per rotation per round.
            let mut by_set: HashMap<Vec<i64>, u32> = HashMap::new();
            for t in &s {
                *by_set.entry(sorted(t.clone())).or_default() += 1;
            }
            assert!(by_set.values().all(|&x| x == rounds * k as u32));
            // In two rounds every ordered "moves right before" pair is balanced.
            if rounds == 2 {
                let mut before: HashMap<(i64, i64), u32> = HashMap::new();
                for t in &s {
                    for i in 0..k {
                        *before.entry((t[i], t[(i + 1) % k])).or_default() += 1;
                    }
                }
                for (&(a, b), &x) in &before {
                    assert_eq!(before.get(&(b, a)), Some(&x), "{n} {k}: {a} before {b}");
                }
            }
        }
        // k = 3 over two rounds: all six orders of each triple.
        let s = round_robin_schedule(&[1, 2, 3], 3, 2);
        assert_eq!(sorted_tuples(s), vec![vec![1, 2, 3], vec![1, 3, 2], vec![2, 1, 3], vec![2, 3, 1], vec![3, 1, 2], vec![3, 2, 1]]);
    }

    fn sorted_tuples(mut s: Vec<Vec<i64>>) -> Vec<Vec<i64>> {
        s.sort();
        s
    }

    /// The longest run of consecutive matches any one bot plays.
    fn longest_run(schedule: &[Vec<i64>]) -> usize {
        let mut run: HashMap<i64, usize> = HashMap::new();
        let mut longest = 0;
        for (i, t) in schedule.iter().enumerate() {
            for b in t {
                let r = if i > 0 && schedule[i - 1].contains(b) { run[b] + 1 } else { 1 };
                run.insert(*b, r);
                longest = longest.max(r);
            }
        }
        longest
    }

    #[test]
    fn round_robin_is_interleaved_and_deterministic() {
        // (bots, seats, rounds, fewest matches a bot sits out between two
        // of its own, longest run of consecutive matches of one bot)
        let cases: [(i64, usize, u32, usize, usize); 12] = [
            (3, 2, 1, 0, 2), // 3 bots, 2 seats: every other match shares a bot
            (4, 2, 1, 0, 2),
            (5, 2, 1, 0, 2),
            (6, 2, 1, 1, 1),
            (8, 2, 2, 1, 1),
            (12, 2, 1, 2, 1),
            (20, 2, 1, 8, 1),
            (40, 2, 2, 18, 1),
            (9, 3, 1, 0, 2),
            (8, 4, 1, 0, 2),
            (12, 4, 1, 0, 2),
            (6, 4, 1, 0, 5), // 4 of 6 bots in every match
        ];
        for (n, k, rounds, rest, run) in cases {
            let bots: Vec<i64> = (1..=n).rev().collect();
            let s = round_robin_schedule(&bots, k, rounds);
            assert_eq!(s, round_robin_schedule(&bots, k, rounds));
            assert_eq!(s, round_robin_schedule(&sorted(bots.clone()), k, rounds), "the input order does not matter");
            assert!(min_rest(&s) >= rest, "{n} bots, {k} seats: rest {} < {rest}", min_rest(&s));
            assert!(longest_run(&s) <= run, "{n} bots, {k} seats: run {} > {run}", longest_run(&s));
        }
        // Lexicographic order would give bot 1 its n − 1 games in a row.
        let s = round_robin_schedule(&(1..=8).collect::<Vec<_>>(), 2, 1);
        assert!(s[..4].iter().flatten().collect::<HashSet<_>>().len() == 8, "the first slate: everybody once: {:?}", &s[..4]);
    }

    #[test]
    fn round_robin_passes_keep_a_partial_schedule_fair() {
        // After each pass (a k-th of a round) every combination has met once.
        for (n, k) in [(7i64, 2usize), (8, 2), (7, 3), (9, 4)] {
            let bots: Vec<i64> = (1..=n).collect();
            let s = round_robin_schedule(&bots, k, 1);
            let pass = s.len() / k;
            let lookahead = if k == 2 { 8 } else { 32 };
            // The lookahead may move a few matches across a pass boundary.
            let first: HashSet<Vec<i64>> = s[..pass].iter().map(|t| sorted(t.clone())).collect();
            assert!(first.len() + lookahead >= pass, "{n} bots, {k} seats: {} distinct of {pass}", first.len());
        }
    }

    #[test]
    fn round_robin_of_many_bots_is_quick() {
        // Slime with 20 bots: 4845 combinations × 4 rotations.
        let bots: Vec<i64> = (1..=20).collect();
        let t = std::time::Instant::now();
        let s = round_robin_schedule(&bots, 4, 1);
        assert_eq!(s.len(), 4845 * 4);
        let back_to_back: usize = s.windows(2).map(|w| w[1].iter().filter(|b| w[0].contains(b)).count()).sum();
        assert!(back_to_back <= 10, "a bot plays twice in a row {back_to_back} times");
        assert!(longest_run(&s) <= 2);
        // A bot sits out 4 matches (20 / 4 − 1) between two of its own on
        // average; short rests are rare.
        let (mut short, mut count) = (0, 0);
        let mut last: HashMap<i64, usize> = HashMap::new();
        for (i, t) in s.iter().enumerate() {
            for b in t {
                if let Some(l) = last.insert(*b, i) {
                    short += usize::from(i - l - 1 < 2);
                    count += 1;
                }
            }
        }
        eprintln!("rests under 2: {short} of {count}");
        assert!(short * 100 < count, "rests under 2: {short} of {count}");
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn round_robin_standings_by_points_and_by_average() {
        let recs = vec![
            RoundRobinRecord { seats: vec![(1, 1, 3.0), (2, 2, 1.0)] },
            RoundRobinRecord { seats: vec![(2, 1, 2.0), (3, 1, 2.0)] },
            RoundRobinRecord { seats: vec![(3, 1, 5.0), (1, 2, 0.0)] },
        ];
        let snake = RoundRobinScoring::Points { win: 2.0, tie: 1.0, loss: 0.0 };
        // (bots, records, scoring, (bot, points, played, rank) best first)
        type Line = (i64, f64, u32, u32);
        type Case<'a> = (&'a [i64], Vec<RoundRobinRecord>, &'a RoundRobinScoring, Vec<Line>);
        let four = vec![
            RoundRobinRecord { seats: vec![(1, 2, 10.0), (2, 1, 30.0), (3, 3, 5.0), (4, 4, 4.0)] },
            RoundRobinRecord { seats: vec![(1, 1, 20.0), (2, 1, 20.0), (3, 3, 5.0), (4, 4, 4.0)] },
        ];
        let cases: Vec<Case> = vec![
            (&[1, 2, 3], recs.clone(), &snake, vec![(3, 3.0, 2, 1), (1, 2.0, 2, 2), (2, 1.0, 2, 3)]),
            (&[1, 2, 3], recs.clone(), &RoundRobinScoring::AverageScore, vec![(3, 3.5, 2, 1), (1, 1.5, 2, 2), (2, 1.5, 2, 2)]),
            (&[1, 2], vec![], &snake, vec![(1, 0.0, 0, 1), (2, 0.0, 0, 1)]),
            (&[1, 2], vec![], &RoundRobinScoring::AverageScore, vec![(1, 0.0, 0, 1), (2, 0.0, 0, 1)]),
            // Bot 2 disabled since: no line, its games still count for 1 and 3.
            (&[1, 3], recs.clone(), &snake, vec![(3, 3.0, 2, 1), (1, 2.0, 2, 2)]),
            // Four seats: only the best rank scores; second place is a loss.
            (&[1, 2, 3, 4], four.clone(), &snake, vec![(2, 3.0, 2, 1), (1, 1.0, 2, 2), (3, 0.0, 2, 3), (4, 0.0, 2, 3)]),
            (
                &[4, 3, 2, 1],
                four.clone(),
                &RoundRobinScoring::AverageScore,
                vec![(2, 25.0, 2, 1), (1, 15.0, 2, 2), (3, 5.0, 2, 3), (4, 4.0, 2, 4)],
            ),
            // Ranks that do not start at 1: the best one present wins.
            (&[1, 2], vec![RoundRobinRecord { seats: vec![(1, 2, 0.0), (2, 3, 0.0)] }], &snake, vec![(1, 2.0, 1, 1), (2, 0.0, 1, 2)]),
            // Custom points (a 3-1-0 league), competition ranking 1, 1, 3.
            (
                &[1, 2, 3],
                vec![
                    RoundRobinRecord { seats: vec![(1, 1, 0.0), (3, 2, 0.0)] },
                    RoundRobinRecord { seats: vec![(2, 1, 0.0), (3, 2, 0.0)] },
                ],
                &RoundRobinScoring::Points { win: 3.0, tie: 1.0, loss: 0.0 },
                vec![(1, 3.0, 1, 1), (2, 3.0, 1, 1), (3, 0.0, 2, 3)],
            ),
        ];
        for (bots, records, scoring, want) in cases {
            let got: Vec<Line> =
                round_robin_standings(bots, &records, scoring).iter().map(|s| (s.bot, s.points, s.played, s.rank)).collect();
            assert_eq!(got, want, "{bots:?} {scoring:?}");
        }
    }

    #[test]
    fn round_robin_scoring_serializes_in_snake_case() {
        let p = RoundRobinScoring::Points { win: 2.0, tie: 1.0, loss: 0.0 };
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v, serde_json::json!({"points": {"win": 2.0, "tie": 1.0, "loss": 0.0}}));
        assert_eq!(serde_json::from_value::<RoundRobinScoring>(v).unwrap(), p);
        assert_eq!(serde_json::to_value(RoundRobinScoring::AverageScore).unwrap(), serde_json::json!("average_score"));
    }

    // -- neighbours ladder --------------------------------------------------

    fn game(first: i64, second: i64, winner: Option<i64>) -> PairRecord {
        PairRecord { first, second, winner }
    }

    #[test]
    fn neighbours_owe_balanced_games_to_adjacent_bots() {
        // (order, records, games per neighbour, games owed per ordered pair)
        type Owed = Vec<([i64; 2], usize)>;
        let cases: Vec<(&[i64], Vec<PairRecord>, u32, Owed)> = vec![
            (&[10, 20, 30], vec![], 4, vec![([10, 20], 2), ([20, 10], 2), ([20, 30], 2), ([30, 20], 2)]),
            (&[10, 20], vec![], 10, vec![([10, 20], 5), ([20, 10], 5)]),
            // Odd: rounded up so the sides stay equal.
            (&[10, 20], vec![], 3, vec![([10, 20], 2), ([20, 10], 2)]),
            (&[10, 20], vec![], 0, vec![]),
            (&[10], vec![], 10, vec![]),
            (&[], vec![], 10, vec![]),
            // Played or queued games count, per side.
            (&[10, 20], vec![game(10, 20, Some(10)), game(10, 20, None), game(20, 10, Some(10))], 4, vec![([20, 10], 1)]),
            (&[10, 20], vec![game(10, 20, Some(10)); 7], 4, vec![([20, 10], 2)]),
            // Games with a bot that is no longer adjacent do not count.
            (&[10, 20, 30], vec![game(10, 30, Some(10)); 2], 2, vec![([10, 20], 1), ([20, 10], 1), ([20, 30], 1), ([30, 20], 1)]),
            // Listed twice: the first place counts.
            (&[10, 20, 10], vec![], 2, vec![([10, 20], 1), ([20, 10], 1)]),
        ];
        for (order, records, g, want) in cases {
            let owed = neighbours_next(order, &records, g);
            let total: usize = want.iter().map(|(_, n)| n).sum();
            assert_eq!(owed.len(), total, "{order:?} {records:?} {g}: {owed:?}");
            for (pair, n) in want {
                assert_eq!(owed.iter().filter(|x| **x == pair).count(), n, "{order:?} {g}: {pair:?} in {owed:?}");
            }
            // Playing what is owed leaves nothing owed.
            let mut all = records.clone();
            all.extend(owed.iter().map(|[a, b]| game(*a, *b, None)));
            assert!(neighbours_next(order, &all, g).is_empty(), "{order:?} {g}");
        }
    }

    #[test]
    fn neighbours_games_alternate_sides_and_spread_over_the_ladder() {
        let owed = neighbours_next(&[1, 2, 3, 4, 5], &[], 4);
        assert_eq!(owed.len(), 16);
        // Every other pair first (no shared bot), then the pairs in between.
        assert_eq!(&owed[..4], &[[1, 2], [3, 4], [2, 3], [4, 5]]);
        assert_eq!(&owed[4..8], &[[2, 1], [4, 3], [3, 2], [5, 4]]);
        // Within a pair the sides alternate, so any prefix is balanced.
        let pair: Vec<[i64; 2]> = owed.iter().copied().filter(|g| g.contains(&1)).collect();
        assert_eq!(pair, vec![[1, 2], [2, 1], [1, 2], [2, 1]]);
        // The side that is behind goes first.
        assert_eq!(neighbours_next(&[1, 2], &[game(1, 2, None)], 4), vec![[2, 1], [1, 2], [2, 1]]);
    }

    #[test]
    fn neighbours_rate_won_over_played_by_side() {
        let done = vec![
            game(10, 20, Some(10)),
            game(20, 10, Some(10)),
            game(10, 20, Some(20)),
            game(20, 10, None),
            game(20, 30, Some(30)),
            game(30, 20, Some(30)),
        ];
        // (bot, overall, as first, as second, played), best first
        type Line = (i64, f64, f64, f64, u32);
        let got: Vec<Line> = neighbours_ratings(&done).iter().map(|r| (r.bot, r.overall, r.as_first, r.as_second, r.played)).collect();
        assert_eq!(got, vec![(30, 100.0, 100.0, 100.0, 2), (10, 50.0, 50.0, 50.0, 4), (20, 100.0 / 6.0, 0.0, 100.0 / 3.0, 6)]);
        assert!(neighbours_ratings(&[]).is_empty());
        // Equal rates: more games first, then by id.
        let tie = neighbours_ratings(&[
            game(1, 2, Some(1)),
            game(2, 1, Some(2)),
            game(3, 4, Some(3)),
            game(4, 3, Some(4)),
            game(5, 6, Some(5)),
            game(6, 5, Some(6)),
            game(5, 6, Some(6)),
            game(6, 5, Some(5)),
        ]);
        let order: Vec<i64> = tie.iter().map(|r| r.bot).collect();
        assert_eq!(order, vec![5, 6, 1, 2, 3, 4]);
        // A bot that only moved first: as_second is 0, not NaN.
        let one = neighbours_ratings(&[game(1, 2, Some(1))]);
        assert_eq!((one[0].bot, one[0].as_first, one[0].as_second), (1, 100.0, 0.0));
    }

    fn swiss_round(round: u32, pairs: &[(i64, i64, u32, u32)]) -> Vec<SwissRecord> {
        pairs.iter().map(|(a, b, ra, rb)| SwissRecord { round, seats: vec![*a, *b], ranks: Some(vec![*ra, *rb]) }).collect()
    }

    /// Eight bots, every round played to its end with the lower id winning:
    /// three rounds (⌈log₂ 8⌉), no rematch, and bot 1 alone on 3 points.
    #[test]
    fn swiss_plays_log2_rounds_without_rematches() {
        let bots: Vec<i64> = (1..=8).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut records: Vec<SwissRecord> = Vec::new();
        let mut met = HashSet::new();
        while let Some((round, groups)) = swiss_next_round(&bots, &records, 2, None, &mut rng) {
            assert_eq!(groups.len(), 4);
            for g in &groups {
                assert!(met.insert((g[0].min(g[1]), g[0].max(g[1]))), "rematch {g:?} in round {round}");
                let ranks = if g[0] < g[1] { vec![1, 2] } else { vec![2, 1] };
                records.push(SwissRecord { round, seats: g.clone(), ranks: Some(ranks) });
            }
        }
        assert_eq!(records.iter().map(|r| r.round).max(), Some(3));
        let table = swiss_standings(&bots, &records);
        assert_eq!((table[0].bot, table[0].points, table[0].rank), (1, 3.0, 1));
        assert!(table[1].points < 3.0);
        assert_eq!(table.iter().map(|s| s.played).sum::<u32>(), 24);
    }

    #[test]
    fn swiss_waits_for_the_round_and_stops_after_the_last() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut records = swiss_round(1, &[(1, 2, 1, 2)]);
        records.push(SwissRecord { round: 1, seats: vec![3, 4], ranks: None });
        assert_eq!(swiss_next_round(&[1, 2, 3, 4], &records, 2, Some(2), &mut rng), None, "round 1 is still playing");
        records[1].ranks = Some(vec![1, 2]);
        let (round, groups) = swiss_next_round(&[1, 2, 3, 4], &records, 2, Some(2), &mut rng).unwrap();
        assert_eq!(round, 2);
        let mut winners: Vec<i64> = groups.iter().find(|g| g.contains(&1)).unwrap().clone();
        winners.sort_unstable();
        assert_eq!(winners, [1, 3], "the two winners meet");
        records.extend(groups.iter().map(|g| SwissRecord { round: 2, seats: g.clone(), ranks: Some(vec![1, 2]) }));
        assert_eq!(swiss_next_round(&[1, 2, 3, 4], &records, 2, Some(2), &mut rng), None, "two rounds were asked for");
        assert_eq!(swiss_next_round(&[1], &[], 2, None, &mut rng), None, "one bot cannot play");
    }

    /// Five bots, two seats: one sits out each round, never the same one
    /// twice before everyone has, and sitting out scores nothing.
    #[test]
    fn swiss_sit_outs_rotate() {
        let bots = [1, 2, 3, 4, 5];
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut records = Vec::new();
        let mut sat = Vec::new();
        for _ in 0..5 {
            let (round, groups) = swiss_next_round(&bots, &records, 2, Some(5), &mut rng).unwrap();
            let playing: HashSet<i64> = groups.iter().flatten().copied().collect();
            let out: Vec<i64> = bots.iter().copied().filter(|b| !playing.contains(b)).collect();
            assert_eq!(out.len(), 1);
            sat.push(out[0]);
            records.extend(groups.iter().map(|g| SwissRecord { round, seats: g.clone(), ranks: Some(vec![1, 1]) }));
        }
        sat.sort_unstable();
        assert_eq!(sat, bots, "each bot sat out once");
        let table = swiss_standings(&bots, &records);
        assert!(table.iter().all(|s| s.points == 2.0 && s.played == 4), "draws only: {table:?}");
    }

    /// Points and Buchholz, by hand: a beats b and c; b beats c.
    #[test]
    fn swiss_points_and_buchholz() {
        let records: Vec<SwissRecord> =
            [swiss_round(1, &[(1, 2, 1, 2)]), swiss_round(2, &[(3, 1, 2, 1)]), swiss_round(3, &[(2, 3, 1, 2)])].concat();
        let table = swiss_standings(&[3, 2, 1], &records);
        let line = |b: i64| table.iter().find(|s| s.bot == b).unwrap().clone();
        assert_eq!((line(1).points, line(1).buchholz, line(1).rank), (2.0, 1.0, 1));
        assert_eq!((line(2).points, line(2).buchholz, line(2).rank), (1.0, 2.0, 2));
        assert_eq!((line(3).points, line(3).buchholz, line(3).rank), (0.0, 3.0, 3));
        // Four seats: ranks 1, 2, 2, 4 score 1, ½, ½, 0.
        assert_eq!([0, 1, 2, 3].map(|i| swiss_points(&[1, 2, 2, 4], i)), [1.0, 0.5, 0.5, 0.0]);
    }
}
