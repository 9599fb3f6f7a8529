//! Rating systems, pure: one match's finishing order in, new ratings out.
//!
//! Both systems keep a skill estimate `mu` and its uncertainty `sigma`.
//! Every seat is its own team of one, ranked by finishing order (1 = best,
//! equal ranks tie), so two-player games and free-for-all games go through
//! the same function: skillratings' multi-team updates, Weng-Lin (the
//! default; a Bayesian approximation in closed form, cheap and stable) or
//! TrueSkill (a factor graph solved by message passing), each with its
//! library's default configuration.
//!
//! Nothing here reads a clock, a file or a database, and no randomness is
//! involved: the same ratings and ranks give the same result, bit for bit,
//! which is what lets [`replay`] check stored ratings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skillratings::trueskill::{trueskill_multi_team, TrueSkillConfig, TrueSkillRating};
use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::MultiTeamOutcome;

/// A skill estimate: mean `mu` and standard deviation `sigma`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub mu: f64,
    pub sigma: f64,
}

/// The smallest `sigma` an update is computed with. TrueSkill's arithmetic
/// panics on a zero deviation; a stored rating should never get there (the
/// defaults stay far above it), but a hand-edited one could.
pub const MIN_SIGMA: f64 = 1e-6;

/// How a rated ladder turns finishing orders into ratings. Stored in a
/// ladder's settings as `"weng_lin"` or `"true_skill"` (`"trueskill"` is
/// accepted too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatingSystem {
    #[default]
    WengLin,
    #[serde(alias = "trueskill")]
    TrueSkill,
}

impl RatingSystem {
    /// A new bot's rating, skillratings' default: mu 25, sigma 25/3.
    pub fn initial(&self) -> Rating {
        match self {
            RatingSystem::WengLin => {
                let r = WengLinRating::new();
                Rating { mu: r.rating, sigma: r.uncertainty }
            }
            RatingSystem::TrueSkill => {
                let r = TrueSkillRating::new();
                Rating { mu: r.rating, sigma: r.uncertainty }
            }
        }
    }

    /// New ratings after one match; `seats` are (rating before, rank), rank
    /// 1 the best and equal ranks a tie (only the order of the ranks
    /// matters: 1, 2, 2, 4 and 1, 2, 2, 3 rate alike). Every seat is a team
    /// of one, so this is a two-player update for two seats and a
    /// free-for-all by finishing order for more. Same order out as in.
    ///
    /// Total: fewer than two seats change nothing; a `sigma` below
    /// [`MIN_SIGMA`] (or not a number) is computed as [`MIN_SIGMA`]; a seat
    /// whose new rating would not be finite (TrueSkill under absurd inputs,
    /// or a rating that was already not finite) keeps its old rating.
    pub fn update(&self, seats: &[(Rating, u32)]) -> Vec<Rating> {
        if seats.len() < 2 {
            return seats.iter().map(|(r, _)| *r).collect();
        }
        let ranks: Vec<MultiTeamOutcome> = seats.iter().map(|(_, k)| MultiTeamOutcome::new(*k as usize)).collect();
        let sigma = |r: &Rating| if r.sigma >= MIN_SIGMA { r.sigma } else { MIN_SIGMA };
        let new: Vec<Rating> = match self {
            RatingSystem::WengLin => {
                let teams: Vec<[WengLinRating; 1]> =
                    seats.iter().map(|(r, _)| [WengLinRating { rating: r.mu, uncertainty: sigma(r) }]).collect();
                let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams.iter().zip(&ranks).map(|(t, k)| (&t[..], *k)).collect();
                weng_lin_multi_team(&input, &WengLinConfig::new())
                    .into_iter()
                    .map(|t| Rating { mu: t[0].rating, sigma: t[0].uncertainty })
                    .collect()
            }
            RatingSystem::TrueSkill => {
                let teams: Vec<[TrueSkillRating; 1]> =
                    seats.iter().map(|(r, _)| [TrueSkillRating { rating: r.mu, uncertainty: sigma(r) }]).collect();
                let input: Vec<(&[TrueSkillRating], MultiTeamOutcome)> = teams.iter().zip(&ranks).map(|(t, k)| (&t[..], *k)).collect();
                trueskill_multi_team(&input, &TrueSkillConfig::new())
                    .into_iter()
                    .map(|t| Rating { mu: t[0].rating, sigma: t[0].uncertainty })
                    .collect()
            }
        };
        new.into_iter()
            .zip(seats)
            .map(|(n, (old, _))| if n.mu.is_finite() && n.sigma.is_finite() && n.sigma > 0.0 { n } else { *old })
            .collect()
    }
}

/// The leaderboard's key: mu − 3·sigma, a conservative estimate. The true
/// skill lies above it with about 99.9 % probability (one-sided, under the
/// systems' normal model), so a bot climbs by proving itself over many
/// games rather than by one lucky win while its uncertainty is still high;
/// a new bot (25 − 3 · 25/3 = 0) starts at the bottom and rises as its sigma
/// shrinks.
pub fn leaderboard_score(r: Rating) -> f64 {
    r.mu - 3.0 * r.sigma
}

/// One recorded match of a rated ladder: (bot, rank) per seat, in seat
/// order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchRecord {
    pub seats: Vec<(i64, u32)>,
}

/// Ratings from scratch: every bot starts at [`RatingSystem::initial`] and
/// the records are applied in order, each through [`RatingSystem::update`]
/// with the ratings the previous records left, exactly as a ladder applies
/// results one match at a time. Stored ratings must equal this.
///
/// A bot that appears twice in one record (which a ladder never schedules)
/// is rated from its rating before the match in both seats, and the later
/// seat's new rating is the one kept.
pub fn replay(system: RatingSystem, records: &[MatchRecord]) -> BTreeMap<i64, Rating> {
    let mut ratings: BTreeMap<i64, Rating> = BTreeMap::new();
    for rec in records {
        let input: Vec<(Rating, u32)> =
            rec.seats.iter().map(|(bot, rank)| (*ratings.entry(*bot).or_insert(system.initial()), *rank)).collect();
        for ((bot, _), new) in rec.seats.iter().zip(system.update(&input)) {
            ratings.insert(*bot, new);
        }
    }
    ratings
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYSTEMS: [RatingSystem; 2] = [RatingSystem::WengLin, RatingSystem::TrueSkill];

    fn r(mu: f64, sigma: f64) -> Rating {
        Rating { mu, sigma }
    }

    #[test]
    fn both_systems_start_at_25_and_25_thirds() {
        for system in SYSTEMS {
            let r0 = system.initial();
            assert_eq!(r0.mu, 25.0, "{system:?}");
            assert!((r0.sigma - 25.0 / 3.0).abs() < 1e-12, "{system:?}");
            assert!(leaderboard_score(r0).abs() < 1e-12, "a newcomer scores 0");
        }
        assert_eq!(RatingSystem::default(), RatingSystem::WengLin);
    }

    #[test]
    fn two_player_outcomes_between_equals() {
        // (ranks, expected sign of each mu change)
        let cases: [([u32; 2], [i8; 2]); 4] = [([1, 2], [1, -1]), ([2, 1], [-1, 1]), ([1, 1], [0, 0]), ([3, 7], [1, -1])];
        for system in SYSTEMS {
            let r0 = system.initial();
            for (ranks, signs) in cases {
                let new = system.update(&[(r0, ranks[0]), (r0, ranks[1])]);
                assert_eq!(new.len(), 2);
                for (n, sign) in new.iter().zip(signs) {
                    let d = n.mu - r0.mu;
                    match sign {
                        1 => assert!(d > 0.1, "{system:?} {ranks:?}: {new:?}"),
                        -1 => assert!(d < -0.1, "{system:?} {ranks:?}: {new:?}"),
                        _ => assert!(d.abs() < 1e-9, "{system:?} {ranks:?}: {new:?}"),
                    }
                    assert!(n.sigma < r0.sigma, "{system:?} {ranks:?}: every game shrinks sigma");
                }
                assert!((new[0].mu - r0.mu + (new[1].mu - r0.mu)).abs() < 1e-9, "zero-sum between equals");
            }
        }
    }

    #[test]
    fn an_upset_moves_more_than_an_expected_result() {
        for system in SYSTEMS {
            let (strong, weak) = (r(35.0, 3.0), r(20.0, 3.0));
            let expected = system.update(&[(strong, 1), (weak, 2)]);
            let upset = system.update(&[(strong, 2), (weak, 1)]);
            assert!(upset[1].mu - weak.mu > expected[0].mu - strong.mu, "{system:?}");
            assert!(upset[0].mu < strong.mu && upset[1].mu > weak.mu);
        }
    }

    #[test]
    fn free_for_all_follows_the_finishing_order() {
        // Ranks per seat → seat indices from best to worst new mu.
        let cases: [(&[u32], &[usize]); 4] = [
            (&[3, 1, 4, 2], &[1, 3, 0, 2]),
            (&[1, 2, 3, 4], &[0, 1, 2, 3]),
            (&[4, 3, 2, 1], &[3, 2, 1, 0]),
            (&[2, 1, 3, 4, 5, 6, 7, 8], &[1, 0, 2, 3, 4, 5, 6, 7]),
        ];
        for system in SYSTEMS {
            let r0 = system.initial();
            for (ranks, order) in cases {
                let seats: Vec<(Rating, u32)> = ranks.iter().map(|k| (r0, *k)).collect();
                let new = system.update(&seats);
                let mut by_mu: Vec<usize> = (0..ranks.len()).collect();
                by_mu.sort_by(|a, b| new[*b].mu.total_cmp(&new[*a].mu));
                assert_eq!(by_mu, order, "{system:?} {ranks:?}: {new:?}");
                assert!(new.iter().all(|n| n.sigma < r0.sigma), "{system:?}: sigma shrinks for every seat");
                assert!(new[order[0]].mu > r0.mu && new[order[order.len() - 1]].mu < r0.mu);
            }
        }
    }

    #[test]
    fn free_for_all_ties_keep_equals_equal() {
        for system in SYSTEMS {
            let r0 = system.initial();
            let new = system.update(&[(r0, 2), (r0, 1), (r0, 2), (r0, 4)]);
            // TrueSkill's message passing stops at a tolerance, so its tied
            // seats may differ by a few hundredths; Weng-Lin is exact.
            let tolerance = if system == RatingSystem::WengLin { 1e-9 } else { 0.05 };
            assert!((new[0].mu - new[2].mu).abs() < tolerance, "{system:?}: {new:?}");
            assert!(new[1].mu > new[0].mu && new[0].mu > new[3].mu, "{system:?}: {new:?}");
            // Only the order of the ranks matters.
            assert_eq!(new, system.update(&[(r0, 2), (r0, 1), (r0, 2), (r0, 3)]), "{system:?}");
            let all_tied = system.update(&[(r0, 1), (r0, 1), (r0, 1)]);
            assert!(all_tied.iter().all(|n| (n.mu - r0.mu).abs() < tolerance), "{system:?}: {all_tied:?}");
        }
    }

    #[test]
    fn degenerate_inputs_never_panic_nor_give_non_finite_ratings() {
        let cases: Vec<Vec<(Rating, u32)>> = vec![
            vec![],
            vec![(r(25.0, 8.0), 1)],
            vec![(r(25.0, 0.0), 1), (r(25.0, 0.0), 2)],
            vec![(r(25.0, -1.0), 1), (r(25.0, f64::NAN), 2)],
            vec![(r(1000.0, 0.001), 2), (r(-1000.0, 0.001), 1)],
            vec![(r(1000.0, 0.001), 1), (r(-1000.0, 0.001), 1), (r(1000.0, 0.001), 1)],
        ];
        for system in SYSTEMS {
            for seats in &cases {
                let new = system.update(seats);
                assert_eq!(new.len(), seats.len());
                for (n, (old, _)) in new.iter().zip(seats) {
                    assert!((n.mu.is_finite() && n.sigma.is_finite() && n.sigma > 0.0) || n == old, "{system:?} {seats:?}: {new:?}");
                }
            }
            assert_eq!(system.update(&[(r(30.0, 2.0), 1)]), vec![r(30.0, 2.0)], "one seat: no change");
            let nan = system.update(&[(r(f64::NAN, 1.0), 1), (r(25.0, 1.0), 2)]);
            assert_eq!(nan[1], r(25.0, 1.0), "{system:?}: a broken opponent leaves a rating alone");
        }
    }

    #[test]
    fn update_is_deterministic() {
        for system in SYSTEMS {
            let seats = [(r(27.0, 4.0), 2), (r(22.0, 6.0), 1), (r(31.0, 2.0), 3), (r(25.0, 8.0), 2)];
            assert_eq!(system.update(&seats), system.update(&seats));
        }
    }

    #[test]
    fn leaderboard_score_is_mu_minus_three_sigma() {
        for (rating, want) in [(r(25.0, 25.0 / 3.0), 0.0), (r(30.0, 1.0), 27.0), (r(10.0, 5.0), -5.0)] {
            assert!((leaderboard_score(rating) - want).abs() < 1e-12, "{rating:?}");
        }
        // A proven bot outranks a lucky newcomer with a higher mu.
        assert!(leaderboard_score(r(28.0, 1.0)) > leaderboard_score(r(32.0, 6.0)));
    }

    #[test]
    fn replay_equals_step_by_step_updates() {
        let records = vec![
            MatchRecord { seats: vec![(1, 1), (2, 2)] },
            MatchRecord { seats: vec![(2, 1), (3, 2)] },
            MatchRecord { seats: vec![(3, 1), (1, 1)] },
            MatchRecord { seats: vec![(4, 2), (1, 1), (2, 4), (3, 3)] },
            MatchRecord { seats: vec![(5, 1), (4, 2)] },
        ];
        for system in SYSTEMS {
            let mut by_hand: BTreeMap<i64, Rating> = BTreeMap::new();
            for rec in &records {
                let input: Vec<(Rating, u32)> =
                    rec.seats.iter().map(|(b, k)| (by_hand.get(b).copied().unwrap_or(system.initial()), *k)).collect();
                for ((b, _), new) in rec.seats.iter().zip(system.update(&input)) {
                    by_hand.insert(*b, new);
                }
            }
            let replayed = replay(system, &records);
            assert_eq!(replayed, by_hand, "{system:?}: bit for bit");
            assert_eq!(replayed.len(), 5);
            assert!(replayed[&1].mu > replayed[&2].mu, "{system:?}");
        }
        assert!(replay(RatingSystem::WengLin, &[]).is_empty());
        // Order matters: the same results in another order rate differently.
        let mut reversed = records.clone();
        reversed.reverse();
        assert_ne!(replay(RatingSystem::WengLin, &records), replay(RatingSystem::WengLin, &reversed));
    }

    #[test]
    fn rating_system_serializes_in_snake_case() {
        for (system, name) in [(RatingSystem::WengLin, "\"weng_lin\""), (RatingSystem::TrueSkill, "\"true_skill\"")] {
            assert_eq!(serde_json::to_string(&system).unwrap(), name);
            assert_eq!(serde_json::from_str::<RatingSystem>(name).unwrap(), system);
        }
        assert_eq!(serde_json::from_str::<RatingSystem>("\"trueskill\"").unwrap(), RatingSystem::TrueSkill);
        let rating: Rating = serde_json::from_str(r#"{"mu": 30.5, "sigma": 2.0}"#).unwrap();
        assert_eq!(rating, r(30.5, 2.0));
    }
}
