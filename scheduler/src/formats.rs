//! Which matches to play next, per ladder format. Pure: plain data in,
//! seat orders out; randomness only through the caller's `Rng`.

use std::collections::{BTreeMap, HashMap};

use rand::seq::SliceRandom;
use rand::Rng;

use crate::rating::{leaderboard_score, Rating};

/// A bot that may play on a rated ladder.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    pub bot: i64,
    pub rating: Rating,
    /// Rated games played.
    pub games: u32,
    /// Matches queued or running.
    pub in_flight: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LadderSettings {
    pub seats: usize,
    /// Below this many games a bot is new: first in line, one match at a time.
    pub newcomer_games: u32,
    pub max_in_flight_per_bot: u32,
    /// Opponents are drawn from this many nearest in leaderboard score.
    pub nearest: usize,
}

impl Default for LadderSettings {
    fn default() -> Self {
        LadderSettings { seats: 2, newcomer_games: 10, max_in_flight_per_bot: 2, nearest: 4 }
    }
}

/// The next match of a continuous rated ladder, as bots in seat order.
///
/// The focus bot is an eligible one with the fewest games (ties broken at
/// random): newcomers and bots with few games play first. A bot is eligible
/// while it has fewer matches in flight than allowed: one for a newcomer (so
/// its first games are played one after another and each result informs
/// the next pairing), `max_in_flight_per_bot` for the others. Opponents are
/// drawn among the `nearest` eligible bots closest in leaderboard score,
/// closer ones more likely (weight 1 / (1 + rank)). Seats are shuffled, so
/// over many matches each bot plays each seat about equally often.
pub fn next_rated_match<R: Rng>(entrants: &[Entrant], settings: &LadderSettings, rng: &mut R) -> Option<Vec<i64>> {
    let seats = settings.seats.max(2);
    let eligible: Vec<&Entrant> = entrants
        .iter()
        .filter(|e| {
            let cap = if e.games < settings.newcomer_games { 1 } else { settings.max_in_flight_per_bot.max(1) };
            e.in_flight < cap
        })
        .collect();
    if eligible.len() < seats {
        return None;
    }
    let fewest = eligible.iter().map(|e| e.games).min()?;
    let focus_pool: Vec<&&Entrant> = eligible.iter().filter(|e| e.games == fewest).collect();
    let focus = **focus_pool.choose(rng)?;
    let key = leaderboard_score(focus.rating);
    let mut others: Vec<&Entrant> = eligible.iter().copied().filter(|e| e.bot != focus.bot).collect();
    // Nearest first; ties in score broken by id so the order is stable.
    others.sort_by(|a, b| {
        (leaderboard_score(a.rating) - key).abs().total_cmp(&(leaderboard_score(b.rating) - key).abs()).then(a.bot.cmp(&b.bot))
    });
    others.truncate(settings.nearest.max(seats - 1));
    let mut chosen = vec![focus.bot];
    while chosen.len() < seats {
        let weights: Vec<f64> = (0..others.len()).map(|i| 1.0 / (1.0 + i as f64)).collect();
        let total: f64 = weights.iter().sum();
        let mut x = rng.gen::<f64>() * total;
        let mut pick = others.len() - 1;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                pick = i;
                break;
            }
            x -= w;
        }
        chosen.push(others.remove(pick).bot);
    }
    chosen.shuffle(rng);
    Some(chosen)
}

/// Every pairing (seats = 2) or k-combination (k = seats) of `bots`, each in
/// every seat rotation (for 2 seats: both sides), `rounds` times. The order
/// is deterministic: round by round, rotation by rotation, combination by
/// combination, so a bot's games spread over the schedule.
pub fn round_robin_schedule(bots: &[i64], seats: usize, rounds: u32) -> Vec<Vec<i64>> {
    let k = seats.max(2);
    let mut sorted = bots.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() < k {
        return Vec::new();
    }
    let combos = combinations(&sorted, k);
    let mut out = Vec::new();
    for _ in 0..rounds {
        for rot in 0..k {
            for c in &combos {
                let mut t = c.clone();
                t.rotate_left(rot);
                out.push(t);
            }
        }
    }
    out
}

fn combinations(items: &[i64], k: usize) -> Vec<Vec<i64>> {
    let mut out = Vec::new();
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        out.push(idx.iter().map(|&i| items[i]).collect());
        let mut i = k;
        loop {
            if i == 0 {
                return out;
            }
            i -= 1;
            if idx[i] < items.len() - k + i {
                idx[i] += 1;
                for j in i + 1..k {
                    idx[j] = idx[j - 1] + 1;
                }
                break;
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundRobinScoring {
    /// Per match: rank 1 alone wins, rank 1 shared ties, else loses (Snake: 2, 1, 0).
    Points { win: f64, tie: f64, loss: f64 },
    /// The mean of the bot's scores (Slime).
    AverageScore,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RoundRobinRecord {
    /// (bot, rank, score) per seat.
    pub seats: Vec<(i64, u32, f64)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    pub bot: i64,
    pub points: f64,
    pub played: u32,
    /// Competition ranking: 1, 1, 3, ...
    pub rank: u32,
}

pub fn round_robin_standings(bots: &[i64], records: &[RoundRobinRecord], scoring: &RoundRobinScoring) -> Vec<Standing> {
    let mut sum: BTreeMap<i64, (f64, u32)> = bots.iter().map(|b| (*b, (0.0, 0))).collect();
    for r in records {
        let winners = r.seats.iter().filter(|(_, rank, _)| *rank == 1).count();
        for (bot, rank, score) in &r.seats {
            let e = sum.entry(*bot).or_insert((0.0, 0));
            e.1 += 1;
            e.0 += match scoring {
                RoundRobinScoring::Points { win, tie, loss } => {
                    if *rank == 1 && winners == 1 {
                        *win
                    } else if *rank == 1 {
                        *tie
                    } else {
                        *loss
                    }
                }
                RoundRobinScoring::AverageScore => *score,
            };
        }
    }
    let mut out: Vec<Standing> = sum
        .into_iter()
        .map(|(bot, (total, played))| Standing {
            bot,
            points: match scoring {
                RoundRobinScoring::AverageScore if played > 0 => total / played as f64,
                _ => total,
            },
            played,
            rank: 0,
        })
        .collect();
    out.sort_by(|a, b| b.points.total_cmp(&a.points).then(a.bot.cmp(&b.bot)));
    for i in 0..out.len() {
        out[i].rank = if i > 0 && out[i].points == out[i - 1].points { out[i - 1].rank } else { i as u32 + 1 };
    }
    out
}

/// One game of Linkage's neighbours ladder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairRecord {
    pub first: i64,
    pub second: i64,
    /// None: a draw, or not played yet (queued).
    pub winner: Option<i64>,
}

/// The games still owed between adjacent bots of `order` (best first):
/// `games_per_neighbour` per adjacent pair, half with each bot first.
pub fn neighbours_next(order: &[i64], records: &[PairRecord], games_per_neighbour: u32) -> Vec<[i64; 2]> {
    let mut played: HashMap<(i64, i64), u32> = HashMap::new();
    for r in records {
        *played.entry((r.first, r.second)).or_default() += 1;
    }
    let per_side = games_per_neighbour.div_ceil(2);
    let mut owed = Vec::new();
    for w in order.windows(2) {
        let (a, b) = (w[0], w[1]);
        let ab = played.get(&(a, b)).copied().unwrap_or(0);
        let ba = played.get(&(b, a)).copied().unwrap_or(0);
        // Alternate sides so a partial schedule stays balanced.
        let (mut ab_left, mut ba_left) = (per_side.saturating_sub(ab), per_side.saturating_sub(ba));
        while ab_left + ba_left > 0 {
            if ab_left >= ba_left && ab_left > 0 {
                owed.push([a, b]);
                ab_left -= 1;
            } else {
                owed.push([b, a]);
                ba_left -= 1;
            }
        }
    }
    owed
}

#[derive(Clone, Debug, PartialEq)]
pub struct NeighbourRating {
    pub bot: i64,
    /// 100 × won / played.
    pub overall: f64,
    pub as_first: f64,
    pub as_second: f64,
    pub played: u32,
}

/// Ratings of the neighbours ladder from finished games, best first.
pub fn neighbours_ratings(records: &[PairRecord]) -> Vec<NeighbourRating> {
    // bot -> (won first, played first, won second, played second)
    let mut t: BTreeMap<i64, (u32, u32, u32, u32)> = BTreeMap::new();
    for r in records {
        let f = t.entry(r.first).or_default();
        f.1 += 1;
        if r.winner == Some(r.first) {
            f.0 += 1;
        }
        let s = t.entry(r.second).or_default();
        s.3 += 1;
        if r.winner == Some(r.second) {
            s.2 += 1;
        }
    }
    let pct = |w: u32, p: u32| if p == 0 { 0.0 } else { 100.0 * w as f64 / p as f64 };
    let mut out: Vec<NeighbourRating> = t
        .into_iter()
        .map(|(bot, (wf, pf, ws, ps))| NeighbourRating {
            bot,
            overall: pct(wf + ws, pf + ps),
            as_first: pct(wf, pf),
            as_second: pct(ws, ps),
            played: pf + ps,
        })
        .collect();
    out.sort_by(|a, b| b.overall.total_cmp(&a.overall).then(a.bot.cmp(&b.bot)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn entrant(bot: i64, mu: f64, games: u32, in_flight: u32) -> Entrant {
        Entrant { bot, rating: Rating { mu, sigma: 1.0 }, games, in_flight }
    }

    #[test]
    fn newcomers_first_one_at_a_time_opponents_near() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let s = LadderSettings { nearest: 1, ..LadderSettings::default() };
        let es = vec![entrant(1, 40.0, 50, 0), entrant(2, 30.0, 50, 0), entrant(3, 29.0, 0, 0), entrant(4, 10.0, 50, 0)];
        for _ in 0..20 {
            let mut m = next_rated_match(&es, &s, &mut rng).unwrap();
            m.sort();
            assert_eq!(m, vec![2, 3], "the newcomer plays first, against the nearest bot");
        }
        // A newcomer with a match in flight waits.
        let es = vec![entrant(1, 40.0, 50, 0), entrant(2, 30.0, 50, 0), entrant(3, 29.0, 0, 1)];
        let m = next_rated_match(&es, &s, &mut rng).unwrap();
        assert!(!m.contains(&3));
        // Not enough eligible bots: nothing.
        let es = vec![entrant(1, 40.0, 50, 2), entrant(2, 30.0, 0, 0)];
        assert_eq!(next_rated_match(&es, &s, &mut rng), None);
    }

    #[test]
    fn seats_rotate_over_many_matches() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let s = LadderSettings { seats: 4, newcomer_games: 0, ..LadderSettings::default() };
        let es: Vec<Entrant> = (1..=4).map(|b| entrant(b, 25.0, 5, 0)).collect();
        let mut first_seat: HashMap<i64, u32> = HashMap::new();
        for _ in 0..400 {
            let m = next_rated_match(&es, &s, &mut rng).unwrap();
            assert_eq!(m.len(), 4);
            *first_seat.entry(m[0]).or_default() += 1;
        }
        assert!(first_seat.values().all(|&n| (60..=140).contains(&n)), "{first_seat:?}");
    }

    #[test]
    fn round_robin_covers_every_pairing_on_each_side() {
        let s = round_robin_schedule(&[3, 1, 2], 2, 2);
        assert_eq!(s.len(), 3 * 2 * 2);
        for pair in [[1, 2], [2, 1], [1, 3], [3, 1], [2, 3], [3, 2]] {
            assert_eq!(s.iter().filter(|t| **t == pair).count(), 2, "{pair:?}");
        }
        let s4 = round_robin_schedule(&[1, 2, 3, 4, 5], 4, 1);
        assert_eq!(s4.len(), 5 * 4, "5 choose 4 combinations × 4 rotations");
        assert!(round_robin_schedule(&[1], 2, 1).is_empty());
    }

    #[test]
    fn round_robin_standings_by_points_and_by_average() {
        let recs = vec![
            RoundRobinRecord { seats: vec![(1, 1, 3.0), (2, 2, 1.0)] },
            RoundRobinRecord { seats: vec![(2, 1, 2.0), (3, 1, 2.0)] },
            RoundRobinRecord { seats: vec![(3, 1, 5.0), (1, 2, 0.0)] },
        ];
        let snake = RoundRobinScoring::Points { win: 2.0, tie: 1.0, loss: 0.0 };
        let st = round_robin_standings(&[1, 2, 3], &recs, &snake);
        let got: Vec<(i64, f64, u32)> = st.iter().map(|s| (s.bot, s.points, s.rank)).collect();
        assert_eq!(got, vec![(3, 3.0, 1), (1, 2.0, 2), (2, 1.0, 3)]);
        let avg = round_robin_standings(&[1, 2, 3], &recs, &RoundRobinScoring::AverageScore);
        assert_eq!((avg[0].bot, avg[0].points), (3, 3.5));
        let tie = round_robin_standings(&[1, 2], &[], &snake);
        assert_eq!((tie[0].rank, tie[1].rank), (1, 1));
    }

    #[test]
    fn neighbours_owe_balanced_games_and_rate_by_side() {
        let owed = neighbours_next(&[10, 20, 30], &[], 4);
        assert_eq!(owed.len(), 8);
        assert_eq!(owed.iter().filter(|g| **g == [10, 20]).count(), 2);
        assert_eq!(owed.iter().filter(|g| **g == [20, 10]).count(), 2);
        assert_eq!(owed.iter().filter(|g| **g == [30, 20]).count(), 2);
        assert!(!owed.contains(&[10, 30]), "only adjacent bots meet");
        let done = vec![
            PairRecord { first: 10, second: 20, winner: Some(10) },
            PairRecord { first: 20, second: 10, winner: Some(10) },
            PairRecord { first: 10, second: 20, winner: Some(20) },
            PairRecord { first: 20, second: 10, winner: None },
        ];
        assert_eq!(neighbours_next(&[10, 20], &done, 4), Vec::<[i64; 2]>::new());
        let r = neighbours_ratings(&done);
        assert_eq!(r[0].bot, 10);
        assert_eq!((r[0].overall, r[0].as_first, r[0].as_second, r[0].played), (50.0, 50.0, 50.0, 4));
        assert_eq!((r[1].overall, r[1].as_first, r[1].as_second), (25.0, 0.0, 50.0));
    }
}
