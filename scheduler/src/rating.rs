//! Rating systems, pure: one match's finishing order in, new ratings out.
//!
//! Both systems keep a skill estimate `mu` and its uncertainty `sigma`.
//! Every seat is its own team of one, ranked by finishing order (1 = best,
//! equal ranks tie), so two-player games and free-for-all games go through
//! the same function. The arithmetic is skillratings': Weng-Lin (the
//! default; a Bayesian approximation in closed form, cheap and stable) or
//! TrueSkill.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skillratings::trueskill::{trueskill_multi_team, TrueSkillConfig, TrueSkillRating};
use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::MultiTeamOutcome;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub mu: f64,
    pub sigma: f64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatingSystem {
    #[default]
    WengLin,
    TrueSkill,
}

impl RatingSystem {
    /// A new bot's rating: mu 25, sigma 25/3.
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

    /// New ratings after one match; `seats` are (rating, rank), rank 1 the
    /// best and equal ranks a tie. Same order out as in.
    pub fn update(&self, seats: &[(Rating, u32)]) -> Vec<Rating> {
        if seats.len() < 2 {
            return seats.iter().map(|(r, _)| *r).collect();
        }
        match self {
            RatingSystem::WengLin => {
                let teams: Vec<[WengLinRating; 1]> =
                    seats.iter().map(|(r, _)| [WengLinRating { rating: r.mu, uncertainty: r.sigma }]).collect();
                let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
                    .iter()
                    .zip(seats)
                    .map(|(t, (_, rank))| (&t[..], MultiTeamOutcome::new(*rank as usize)))
                    .collect();
                weng_lin_multi_team(&input, &WengLinConfig::new())
                    .into_iter()
                    .map(|t| Rating { mu: t[0].rating, sigma: t[0].uncertainty })
                    .collect()
            }
            RatingSystem::TrueSkill => {
                let teams: Vec<[TrueSkillRating; 1]> =
                    seats.iter().map(|(r, _)| [TrueSkillRating { rating: r.mu, uncertainty: r.sigma }]).collect();
                let input: Vec<(&[TrueSkillRating], MultiTeamOutcome)> = teams
                    .iter()
                    .zip(seats)
                    .map(|(t, (_, rank))| (&t[..], MultiTeamOutcome::new(*rank as usize)))
                    .collect();
                trueskill_multi_team(&input, &TrueSkillConfig::new())
                    .into_iter()
                    .map(|t| Rating { mu: t[0].rating, sigma: t[0].uncertainty })
                    .collect()
            }
        }
    }
}

/// The leaderboard's key: mu − 3σ, a conservative estimate (the skill the
/// bot has with about 99.7 % confidence), so a bot climbs by proving itself
/// over games, not by one lucky win while its uncertainty is high.
pub fn leaderboard_score(r: Rating) -> f64 {
    r.mu - 3.0 * r.sigma
}

/// One recorded match: (bot, rank) per seat, in seat order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchRecord {
    pub seats: Vec<(i64, u32)>,
}

/// Ratings from scratch: every bot starts at [`RatingSystem::initial`] and
/// the records are applied in order, exactly as they were when recorded.
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

    #[test]
    fn a_win_moves_mu_and_every_game_shrinks_sigma() {
        for system in [RatingSystem::WengLin, RatingSystem::TrueSkill] {
            let r0 = system.initial();
            assert_eq!((r0.mu, (r0.sigma * 3.0).round()), (25.0, 25.0));
            let new = system.update(&[(r0, 1), (r0, 2)]);
            assert!(new[0].mu > r0.mu && new[1].mu < r0.mu, "{system:?}: {new:?}");
            assert!(new[0].sigma < r0.sigma && new[1].sigma < r0.sigma);
            let tie = system.update(&[(r0, 1), (r0, 1)]);
            assert!((tie[0].mu - tie[1].mu).abs() < 1e-9, "a tie between equals keeps them equal");
        }
    }

    #[test]
    fn free_for_all_follows_the_finishing_order() {
        let r0 = RatingSystem::WengLin.initial();
        let new = RatingSystem::WengLin.update(&[(r0, 3), (r0, 1), (r0, 4), (r0, 2)]);
        let mut by_mu: Vec<usize> = (0..4).collect();
        by_mu.sort_by(|a, b| new[*b].mu.total_cmp(&new[*a].mu));
        assert_eq!(by_mu, vec![1, 3, 0, 2]);
    }

    #[test]
    fn replay_equals_step_by_step_updates() {
        let system = RatingSystem::WengLin;
        let records = vec![
            MatchRecord { seats: vec![(1, 1), (2, 2)] },
            MatchRecord { seats: vec![(2, 1), (3, 2)] },
            MatchRecord { seats: vec![(3, 1), (1, 1)] },
        ];
        let mut by_hand: BTreeMap<i64, Rating> = BTreeMap::new();
        for rec in &records {
            let input: Vec<(Rating, u32)> = rec.seats.iter().map(|(b, k)| (*by_hand.entry(*b).or_insert(system.initial()), *k)).collect();
            for ((b, _), r) in rec.seats.iter().zip(system.update(&input)) {
                by_hand.insert(*b, r);
            }
        }
        assert_eq!(replay(system, &records), by_hand);
        assert!(leaderboard_score(by_hand[&1]) < by_hand[&1].mu);
    }
}
