//! The continuous rated ladder finds the true order: 20 bots of known
//! strength play the matches [`next_rated_match`] picks, each match
//! finishes at once (nothing in flight), Weng-Lin updates the ratings, and
//! the leaderboard (by [`leaderboard_score`]) must reach the strength order.
//!
//! The outcome model is logistic on a scale of 4 strength points per factor
//! 10 in odds: P(a beats b) = 1 / (1 + 10^((s_b − s_a) / 4)), so neighbours
//! one point apart split about 64 : 36. Free-for-all matches order the seats
//! by strength plus Gumbel noise of scale 4 / ln 10, which gives the same
//! pairwise probabilities (a Plackett–Luce model).

use std::collections::BTreeMap;

use koth_ladder::formats::{next_rated_match, Entrant, LadderSettings};
use koth_ladder::rating::{leaderboard_score, Rating, RatingSystem};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const BOTS: i64 = 20;
const LIMIT: u32 = 20_000;

/// Bot ids are 101..=120; bot 100 + i has strength i.
fn strength(bot: i64) -> f64 {
    (bot - 100) as f64
}

/// Ranks (1 best) of the seats of one simulated match.
fn play<R: Rng>(seats: &[i64], rng: &mut R) -> Vec<u32> {
    if seats.len() == 2 {
        let (a, b) = (strength(seats[0]), strength(seats[1]));
        let p_a = 1.0 / (1.0 + 10f64.powf((b - a) / 4.0));
        return if rng.gen::<f64>() < p_a { vec![1, 2] } else { vec![2, 1] };
    }
    let scale = 4.0 / std::f64::consts::LN_10;
    let perf: Vec<f64> = seats
        .iter()
        .map(|b| {
            let u: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
            strength(*b) - scale * (-u.ln()).ln()
        })
        .collect();
    perf.iter().map(|p| 1 + perf.iter().filter(|q| *q > p).count() as u32).collect()
}

/// Pairs of bots the leaderboard orders against their strengths (0 of 190
/// when it is right).
fn discordant(entrants: &[Entrant]) -> usize {
    let mut n = 0;
    for a in entrants {
        for b in entrants {
            if strength(a.bot) > strength(b.bot) && leaderboard_score(a.rating) < leaderboard_score(b.rating) {
                n += 1;
            }
        }
    }
    n
}

struct Run {
    /// Matches until the leaderboard first equalled the strength order.
    converged: Option<u32>,
    /// Discordant pairs after `AFTER` more matches.
    discordant_after: usize,
}

/// Matches played after convergence to see that the order holds.
const AFTER: u32 = 2_000;

fn simulate(seats: usize, seed: u64) -> Run {
    let system = RatingSystem::WengLin;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut entrants: Vec<Entrant> =
        (101..=100 + BOTS).map(|bot| Entrant { bot, rating: system.initial(), games: 0, in_flight: 0 }).collect();
    let settings = LadderSettings { seats, ..LadderSettings::default() };
    let want: Vec<i64> = (101..=100 + BOTS).rev().collect();
    let mut converged = None;
    for n in 1..=LIMIT {
        let pick = next_rated_match(&entrants, &settings, &mut rng).expect("20 idle bots always make a match");
        assert_eq!(pick.len(), seats);
        let ranks = play(&pick, &mut rng);
        let index: BTreeMap<i64, usize> = entrants.iter().enumerate().map(|(i, e)| (e.bot, i)).collect();
        let input: Vec<(Rating, u32)> = pick.iter().zip(&ranks).map(|(b, k)| (entrants[index[b]].rating, *k)).collect();
        for (b, r) in pick.iter().zip(system.update(&input)) {
            let e = &mut entrants[index[b]];
            e.rating = r;
            e.games += 1;
        }
        if converged.is_none() {
            let mut board: Vec<&Entrant> = entrants.iter().collect();
            board.sort_by(|a, b| leaderboard_score(b.rating).total_cmp(&leaderboard_score(a.rating)));
            if board.iter().map(|e| e.bot).eq(want.iter().copied()) {
                converged = Some(n);
            }
        }
        if converged.is_some_and(|c| n == c + AFTER) {
            break;
        }
    }
    Run { converged, discordant_after: discordant(&entrants) }
}

fn check(seats: usize) {
    let mut counts = Vec::new();
    for seed in 1..=5 {
        let run = simulate(seats, seed);
        eprintln!(
            "{seats} seats, seed {seed}: leaderboard in strength order after {:?} matches; {AFTER} matches later {} of 190 pairs out of order",
            run.converged, run.discordant_after
        );
        counts.push(run.converged.unwrap_or_else(|| panic!("{seats} seats, seed {seed}: no convergence within {LIMIT} matches")));
        assert!(run.discordant_after <= 10, "{seats} seats, seed {seed}: the order did not hold");
    }
    counts.sort_unstable();
    eprintln!("{seats} seats: median {} matches, worst {}", counts[counts.len() / 2], counts[counts.len() - 1]);
}

#[test]
fn two_seat_ladder_converges_to_the_strength_order() {
    check(2);
}

#[test]
fn four_seat_free_for_all_ladder_converges_to_the_strength_order() {
    check(4);
}
