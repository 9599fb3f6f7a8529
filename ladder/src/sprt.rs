//! "Is my new version better?": a sequential probability ratio test on
//! pairs of games, the way Stockfish's fishtest answers it. Pure: game
//! results in, the test's statistic and verdict out; no clock, file,
//! database or randomness.
//!
//! It lives in the ladder domain beside [`crate::rating`], the other
//! statistics over match results: `koth ab` (the binary, on this machine)
//! calls it, and so can the service; the games crate holds rules and
//! replays, and the runner plays matches, so neither is the place for a
//! statistic over many matches.
//!
//! **The method** (docs/ab.md has it with its sources): NEW and OLD play
//! pairs of games on the same seed with their seats swapped, so that a
//! seat's or a seed's advantage cancels within the pair. A game gives NEW
//! a score against OLD in [0, 1]: each (NEW seat, OLD seat) of the game
//! counts 1 when NEW's seat ranks better, ½ when they tie, 0 when worse,
//! averaged; in a two-player game that is win 1, draw ½, loss 0. A pair's
//! score is the mean of its two games', one of `4c + 1` values for `c`
//! comparisons a game: for two players the five of the **pentanomial**
//! model (0, ¼, ½, ¾, 1: LL, LD, DD or WL, WD, WW).
//!
//! The hypotheses are stated in logistic Elo: H0: NEW's expected score is
//! `s0 = L(elo0)`, H1: it is `s1 = L(elo1)`, `L(e) = 1 / (1 + 10^(-e/400))`.
//! After `N` pairs with empirical distribution `p̂` over the pair scores
//! `a_i`, the **generalized log-likelihood ratio** is
//! `LLR = N · Σ p̂_i · ln(p1_i / p0_i)`, where `pj` is the distribution of
//! largest likelihood whose mean is `sj`: `pj_i = p̂_i / (1 + λ (a_i − sj))`
//! with `λ` the root of `Σ p̂_i (a_i − sj) / (1 + λ (a_i − sj)) = 0` (Van den
//! Bergh, as fishtest computes it). The test stops with **Better** once
//! `LLR ≥ ln((1 − β) / α)` and **NotBetter** once `LLR ≤ ln(β / (1 − α))`
//! (Wald's bounds), or **BudgetSpent** when the games allowed are played
//! first. While any pair score has not been seen, a prior of total weight
//! 10⁻³ is spread over all of them (fishtest's regularization), so the
//! first pairs, all alike, give a finite statistic.

use serde::{Deserialize, Serialize};

/// The error rates and effect `koth ab` uses unless told otherwise.
pub const DEFAULT_ALPHA: f64 = 0.05;
pub const DEFAULT_BETA: f64 = 0.05;
pub const DEFAULT_ELO0: f64 = 0.0;
pub const DEFAULT_ELO1: f64 = 30.0;
/// Games (two per pair) played at most before the test gives up.
pub const DEFAULT_MAX_GAMES: u64 = 2000;

/// Elo differences a hypothesis may state: beyond them the expected score
/// is within 0.3% of 0 or 1, and no pair of bots is told apart better.
pub const MAX_ELO: f64 = 1000.0;

/// The weight of the prior spread over the pair scores while one is unseen.
const PRIOR: f64 = 1e-3;

/// NEW's expected score against OLD at a logistic Elo difference.
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The logistic Elo difference of an expected score; `None` at 0 or 1
/// (infinite) or outside them.
pub fn elo_of_score(score: f64) -> Option<f64> {
    (score > 0.0 && score < 1.0).then(|| -400.0 * (1.0 / score - 1.0).log10())
}

/// What the test decides between, and at which error rates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hypothesis {
    /// H0: NEW is this many Elo better than OLD (0: no better).
    pub elo0: f64,
    /// H1: NEW is this many Elo better (the effect worth detecting).
    pub elo1: f64,
    /// The chance of saying Better when H0 holds.
    pub alpha: f64,
    /// The chance of saying NotBetter when H1 holds.
    pub beta: f64,
}

impl Default for Hypothesis {
    fn default() -> Self {
        Hypothesis { elo0: DEFAULT_ELO0, elo1: DEFAULT_ELO1, alpha: DEFAULT_ALPHA, beta: DEFAULT_BETA }
    }
}

/// Wald's bounds on the LLR: at or below `lower` H0 is accepted (NotBetter),
/// at or above `upper` H1 (Better).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    pub lower: f64,
    pub upper: f64,
}

/// A hypothesis the test cannot use, in words that say what to change.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum HypothesisError {
    #[error("alpha {0}: give an error rate between 0 and 0.5, e.g. 0.05")]
    Alpha(f64),
    #[error("beta {0}: give an error rate between 0 and 0.5, e.g. 0.05")]
    Beta(f64),
    #[error("elo0 {elo0} and elo1 {elo1}: give elo0 below elo1, both from -{MAX_ELO} to {MAX_ELO} (e.g. elo0 0, elo1 30)")]
    Elo { elo0: f64, elo1: f64 },
}

impl Hypothesis {
    /// A hypothesis with both rates in (0, 0.5) and `elo0 < elo1` within
    /// ±[`MAX_ELO`].
    pub fn new(elo0: f64, elo1: f64, alpha: f64, beta: f64) -> Result<Hypothesis, HypothesisError> {
        if !(alpha > 0.0 && alpha < 0.5) {
            return Err(HypothesisError::Alpha(alpha));
        }
        if !(beta > 0.0 && beta < 0.5) {
            return Err(HypothesisError::Beta(beta));
        }
        let within = |e: f64| e.is_finite() && e.abs() <= MAX_ELO;
        if !(within(elo0) && within(elo1) && elo0 < elo1) {
            return Err(HypothesisError::Elo { elo0, elo1 });
        }
        Ok(Hypothesis { elo0, elo1, alpha, beta })
    }

    pub fn bounds(&self) -> Bounds {
        Bounds { lower: (self.beta / (1.0 - self.alpha)).ln(), upper: ((1.0 - self.beta) / self.alpha).ln() }
    }

    /// The expected scores `(s0, s1)` of H0 and H1.
    pub fn scores(&self) -> (f64, f64) {
        (expected_score(self.elo0), expected_score(self.elo1))
    }
}

/// NEW's result against OLD in one game, in half points: each (NEW seat,
/// OLD seat) of the game gives 2 when NEW's seat ranks better, 1 when they
/// tie, 0 when worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameScore {
    pub half_points: u32,
    /// (NEW seat, OLD seat) pairs the game has: 1 in a two-player game.
    pub comparisons: u32,
}

impl GameScore {
    /// From the finishing ranks (1 = best, equal ranks tie) of NEW's seats
    /// and of OLD's; `None` if either has none.
    pub fn from_ranks(new: &[usize], old: &[usize]) -> Option<GameScore> {
        if new.is_empty() || old.is_empty() {
            return None;
        }
        let half_points = new
            .iter()
            .flat_map(|n| {
                old.iter().map(move |o| match n.cmp(o) {
                    std::cmp::Ordering::Less => 2,
                    std::cmp::Ordering::Equal => 1,
                    std::cmp::Ordering::Greater => 0,
                })
            })
            .sum();
        Some(GameScore { half_points, comparisons: (new.len() * old.len()) as u32 })
    }

    /// NEW's score in [0, 1].
    pub fn score(&self) -> f64 {
        f64::from(self.half_points) / f64::from(2 * self.comparisons)
    }
}

/// Why a pair could not be counted (a caller's mistake, not a bot's).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    #[error("a game of the pair has {got} comparisons of NEW's and OLD's seats where the test counts {want}: both games of every pair must seat NEW and OLD alike")]
    Comparisons { got: u32, want: u32 },
    #[error("a game's score of {half_points} half points is more than its {comparisons} comparisons allow")]
    Score { half_points: u32, comparisons: u32 },
}

/// A stored tally that is not one of this test's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a tally of {got} pair scores where games of this many seats have {want}")]
pub struct CountsError {
    pub got: usize,
    pub want: usize,
}

/// Where a test stands: what a caller prints or stores after each pair.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub pairs: u64,
    pub games: u64,
    /// NEW's points against OLD over all games (a game is worth 1).
    pub points: f64,
    /// NEW's mean score, `points / games` (0.5 before any game).
    pub score: f64,
    /// The logistic Elo of `score` and its 95% interval from the pairs'
    /// spread; `None` while infinite (every game won or lost) or undefined.
    pub elo: Option<f64>,
    pub elo_95: Option<(f64, f64)>,
    pub llr: f64,
    pub bounds: Bounds,
    pub verdict: Verdict,
}

/// What the test says after a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// H1 accepted: NEW is better by the stated effect (at error rate α).
    Better,
    /// H0 accepted: NEW is not better (at error rate β).
    NotBetter,
    /// Neither yet: play another pair.
    Continue,
    /// The games allowed were played before either bound was reached.
    BudgetSpent,
}

impl Verdict {
    pub fn is_final(self) -> bool {
        self != Verdict::Continue
    }

    pub fn words(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::NotBetter => "not better",
            Verdict::Continue => "undecided",
            Verdict::BudgetSpent => "undecided: the games allowed were played first",
        }
    }
}

/// A sequential test under way: the pairs' tally and what it is tested for.
#[derive(Clone, Debug, PartialEq)]
pub struct Sprt {
    hypothesis: Hypothesis,
    max_games: u64,
    comparisons: u32,
    /// Pairs per pair score, in half points out of `4 · comparisons`.
    counts: Vec<u64>,
}

impl Sprt {
    /// A test of `hypothesis` over games of `comparisons` (NEW seat, OLD
    /// seat) pairs each (1 for two players), stopping at `max_games`.
    pub fn new(hypothesis: Hypothesis, max_games: u64, comparisons: u32) -> Sprt {
        let comparisons = comparisons.max(1);
        Sprt { hypothesis, max_games, comparisons, counts: vec![0; 4 * comparisons as usize + 1] }
    }

    pub fn hypothesis(&self) -> Hypothesis {
        self.hypothesis
    }

    /// A test under way again, from its stored tally (`counts[k]` pairs
    /// scored `k / (4 · comparisons)`, as [`Sprt::counts`] gives it): what
    /// the service keeps between pairs. The tally must have the
    /// `4 · comparisons + 1` scores of its games.
    pub fn from_counts(hypothesis: Hypothesis, max_games: u64, comparisons: u32, counts: &[u64]) -> Result<Sprt, CountsError> {
        let mut test = Sprt::new(hypothesis, max_games, comparisons);
        if counts.len() != test.counts.len() {
            return Err(CountsError { got: counts.len(), want: test.counts.len() });
        }
        test.counts.copy_from_slice(counts);
        Ok(test)
    }

    /// Counts a pair: the game with NEW in its seats and the game on the
    /// same seed with the seats swapped. Returns the verdict; any but
    /// [`Verdict::Continue`] ends the test.
    pub fn record(&mut self, first: GameScore, second: GameScore) -> Result<Verdict, PairError> {
        for g in [first, second] {
            if g.comparisons != self.comparisons {
                return Err(PairError::Comparisons { got: g.comparisons, want: self.comparisons });
            }
            if g.half_points > 2 * g.comparisons {
                return Err(PairError::Score { half_points: g.half_points, comparisons: g.comparisons });
            }
        }
        self.counts[(first.half_points + second.half_points) as usize] += 1;
        Ok(self.verdict())
    }

    /// Pairs per pair score: `counts()[k]` pairs scored `k / (4c)`.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn llr(&self) -> f64 {
        let (s0, s1) = self.hypothesis.scores();
        llr(&self.counts, s0, s1)
    }

    pub fn verdict(&self) -> Verdict {
        let (llr, b) = (self.llr(), self.hypothesis.bounds());
        if llr >= b.upper {
            Verdict::Better
        } else if llr <= b.lower {
            Verdict::NotBetter
        } else if 2 * self.pairs() >= self.max_games {
            Verdict::BudgetSpent
        } else {
            Verdict::Continue
        }
    }

    pub fn status(&self) -> Status {
        let pairs = self.pairs();
        let top = (self.counts.len() - 1) as f64;
        let sum: f64 = self.counts.iter().enumerate().map(|(k, &n)| k as f64 / top * n as f64).sum();
        let score = if pairs == 0 { 0.5 } else { sum / pairs as f64 };
        let elo_95 = (pairs >= 2)
            .then(|| {
                let var: f64 = self.counts.iter().enumerate().map(|(k, &n)| (k as f64 / top - score).powi(2) * n as f64).sum::<f64>()
                    / (pairs - 1) as f64;
                let half = 1.959964 * (var / pairs as f64).sqrt();
                Some((elo_of_score(score - half)?, elo_of_score(score + half)?))
            })
            .flatten();
        Status {
            pairs,
            games: 2 * pairs,
            points: 2.0 * sum,
            score,
            elo: elo_of_score(score),
            elo_95,
            llr: self.llr(),
            bounds: self.hypothesis.bounds(),
            verdict: self.verdict(),
        }
    }
}

/// The generalized log-likelihood ratio of mean `s1` against mean `s0`
/// (both strictly between 0 and 1) for pairs counted per score,
/// `counts[k]` pairs scoring `k / (counts.len() − 1)`. 0 before any pair.
pub fn llr(counts: &[u64], s0: f64, s1: f64) -> f64 {
    let n: u64 = counts.iter().sum();
    if n == 0 || counts.len() < 2 {
        return 0.0;
    }
    let n = n as f64;
    let k = counts.len();
    let regularize = counts.contains(&0);
    let pdf: Vec<(f64, f64)> = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let c = c as f64;
            let c = if regularize { c * (1.0 - PRIOR / n) + PRIOR / k as f64 } else { c };
            (i as f64 / (k - 1) as f64, c / n)
        })
        .collect();
    let (p0, p1) = (mle(&pdf, s0), mle(&pdf, s1));
    n * pdf.iter().zip(p0.iter().zip(&p1)).map(|(&(_, p), (q0, q1))| p * (q1 / q0).ln()).sum::<f64>()
}

/// The distribution of largest likelihood for the empirical `pdf` (value,
/// probability; the first value below `s`, the last above it, both with
/// positive probability) among those with mean `s`: `p_i / (1 + λ(a_i − s))`,
/// `λ` found by Newton's method kept inside its interval by bisection.
fn mle(pdf: &[(f64, f64)], s: f64) -> Vec<f64> {
    let (v, w) = (pdf[0].0, pdf[pdf.len() - 1].0);
    // 1 + λ(a − s) > 0 for every a: λ within (−1/(w − s), 1/(s − v)).
    let (mut lo, mut hi) = (-1.0 / (w - s), 1.0 / (s - v));
    let f = |x: f64| pdf.iter().map(|&(a, p)| p * (a - s) / (1.0 + x * (a - s))).sum::<f64>();
    let fp = |x: f64| -pdf.iter().map(|&(a, p)| p * (a - s).powi(2) / (1.0 + x * (a - s)).powi(2)).sum::<f64>();
    let mut x = 0.0;
    for _ in 0..200 {
        let fx = f(x);
        if fx == 0.0 {
            break;
        }
        // f falls with x: its root is above x when f(x) > 0.
        if fx > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let mut next = x - fx / fp(x);
        if !(next > lo && next < hi) {
            next = (lo + hi) / 2.0;
        }
        let done = (next - x).abs() < 1e-13;
        x = next;
        if done {
            break;
        }
    }
    pdf.iter().map(|&(a, p)| p / (1.0 + x * (a - s))).collect()
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn a_test_resumed_from_its_counts_is_the_test_that_counted_them() {
        let h = Hypothesis::new(0.0, 200.0, 0.05, 0.05).unwrap();
        let (win, draw, loss) = (
            GameScore::from_ranks(&[1], &[2]).unwrap(),
            GameScore::from_ranks(&[1], &[1]).unwrap(),
            GameScore::from_ranks(&[2], &[1]).unwrap(),
        );
        // (pairs played, verdict of the resumed test)
        let table: [(&[(GameScore, GameScore)], Verdict); 4] = [
            (&[], Verdict::Continue),
            (&[(win, draw), (loss, win)], Verdict::Continue),
            (&[(win, win); 12], Verdict::Better),
            (&[(loss, loss); 12], Verdict::NotBetter),
        ];
        for (pairs, verdict) in table {
            let mut played = Sprt::new(h, 1000, 1);
            for (a, b) in pairs {
                played.record(*a, *b).unwrap();
            }
            let resumed = Sprt::from_counts(h, 1000, 1, played.counts()).unwrap();
            assert_eq!(resumed, played);
            assert_eq!(resumed.verdict(), verdict, "{pairs:?}: {:?}", resumed.status());
        }
        // The budget counts the resumed pairs too.
        assert_eq!(Sprt::from_counts(h, 4, 1, &[0, 1, 0, 1, 0]).unwrap().verdict(), Verdict::BudgetSpent);
        assert_eq!(Sprt::from_counts(h, 100, 1, &[0, 0, 1]), Err(CountsError { got: 3, want: 5 }));
        assert_eq!(Sprt::from_counts(h, 100, 2, &[0; 5]).unwrap_err().want, 9);
    }

    #[test]
    fn bounds_are_walds() {
        // (alpha, beta, lower, upper)
        let table = [
            (0.05, 0.05, -2.944439, 2.944439),
            (0.01, 0.05, -2.985682, 4.553877),
            (0.05, 0.10, -2.251292, 2.890372),
            (0.10, 0.20, -1.504077, 2.079442),
        ];
        for (alpha, beta, lower, upper) in table {
            let b = Hypothesis::new(0.0, 10.0, alpha, beta).unwrap().bounds();
            assert!(close(b.lower, lower, 1e-6) && close(b.upper, upper, 1e-6), "{alpha} {beta}: {b:?}");
        }
    }

    #[test]
    fn elo_and_score_convert_both_ways() {
        for (elo, score) in [(0.0, 0.5), (400.0, 10.0 / 11.0), (-400.0, 1.0 / 11.0), (100.0, 0.640065)] {
            assert!(close(expected_score(elo), score, 1e-6), "{elo}");
            assert!(close(elo_of_score(score).unwrap(), elo, 1e-3), "{score}");
        }
        assert_eq!(elo_of_score(0.0), None);
        assert_eq!(elo_of_score(1.0), None);
    }

    #[test]
    fn a_hypothesis_out_of_range_is_refused_with_what_to_give() {
        for (elo0, elo1, alpha, beta, words) in [
            (0.0, 10.0, 0.0, 0.05, "alpha 0: give an error rate between 0 and 0.5"),
            (0.0, 10.0, 0.5, 0.05, "alpha 0.5: give"),
            (0.0, 10.0, 0.05, 1.0, "beta 1: give"),
            (0.0, 10.0, 0.05, f64::NAN, "beta NaN: give"),
            (10.0, 10.0, 0.05, 0.05, "elo0 10 and elo1 10: give elo0 below elo1"),
            (5.0, 0.0, 0.05, 0.05, "elo0 5 and elo1 0: give elo0 below elo1"),
            (0.0, 2000.0, 0.05, 0.05, "from -1000 to 1000"),
        ] {
            let e = Hypothesis::new(elo0, elo1, alpha, beta).unwrap_err().to_string();
            assert!(e.starts_with(words) || e.contains(words), "{e}");
        }
        assert!(Hypothesis::new(-5.0, 5.0, 0.01, 0.2).is_ok());
    }

    #[test]
    fn a_games_score_counts_each_new_seat_against_each_old_seat() {
        // (NEW's ranks, OLD's ranks, half points, comparisons)
        let table: [(&[usize], &[usize], u32, u32); 7] = [
            (&[1], &[2], 2, 1), // a win
            (&[2], &[1], 0, 1), // a loss
            (&[1], &[1], 1, 1), // a draw
            (&[1, 3], &[2, 4], 6, 4),
            (&[2, 2], &[1, 2], 2, 4),
            (&[1, 1, 4], &[2, 3], 8, 6),
            (&[4, 4], &[1, 1], 0, 4),
        ];
        for (new, old, half_points, comparisons) in table {
            assert_eq!(GameScore::from_ranks(new, old), Some(GameScore { half_points, comparisons }), "{new:?} {old:?}");
        }
        assert_eq!(GameScore::from_ranks(&[], &[1]), None);
        assert_eq!(GameScore { half_points: 6, comparisons: 4 }.score(), 0.75);
    }

    /// Figures from fishtest's own `LLR_logistic` (Van den Bergh's
    /// LLRcalc, Python) on the same counts, as a second implementation.
    #[test]
    fn the_llr_agrees_with_fishtests_llrcalc() {
        // (pentanomial counts LL, LD, DD+WL, WD, WW; elo0; elo1; LLR)
        let table = [
            ([0, 0, 0, 0, 0], 0.0, 10.0, 0.0),
            ([10, 20, 40, 20, 10], 0.0, 10.0, -0.137_899),
            ([5, 20, 40, 25, 10], 0.0, 10.0, 0.671_580),
            ([100, 200, 400, 200, 100], 0.0, 10.0, -1.378_992),
            ([1, 3, 6, 10, 20], 0.0, 50.0, 4.761_325),
            ([20, 10, 6, 3, 1], 0.0, 50.0, -5.697_212),
            ([0, 0, 3, 0, 0], 0.0, 30.0, -0.268_641),
        ];
        for (counts, elo0, elo1, want) in table {
            let got = llr(&counts, expected_score(elo0), expected_score(elo1));
            assert!(close(got, want, 1e-4), "{counts:?}: {got} where LLRcalc gives {want}");
        }
    }

    #[test]
    fn the_llr_of_a_balanced_tally_falls_and_a_winning_one_rises() {
        let h = Hypothesis::new(0.0, 30.0, 0.05, 0.05).unwrap();
        let mut even = Sprt::new(h, 100_000, 1);
        let mut winning = Sprt::new(h, 100_000, 1);
        let (win, draw, loss) = (
            GameScore { half_points: 2, comparisons: 1 },
            GameScore { half_points: 1, comparisons: 1 },
            GameScore { half_points: 0, comparisons: 1 },
        );
        let mut last = (0.0, 0.0);
        for i in 0..40 {
            even.record(win, loss).unwrap();
            even.record(draw, draw).unwrap();
            winning.record(win, draw).unwrap();
            let now = (even.llr(), winning.llr());
            assert!(now.0 < last.0 && now.1 > last.1, "{i}: {last:?} then {now:?}");
            last = now;
        }
        assert_eq!(winning.status().verdict, Verdict::Better);
        assert_eq!(even.status().verdict, Verdict::NotBetter);
    }

    #[test]
    fn the_verdict_follows_the_bounds_and_the_budget() {
        let h = Hypothesis::new(0.0, 50.0, 0.05, 0.05).unwrap();
        let win = GameScore { half_points: 2, comparisons: 1 };
        let loss = GameScore { half_points: 0, comparisons: 1 };
        let draw = GameScore { half_points: 1, comparisons: 1 };
        // Every game won: Better after a few pairs, not at the first.
        let mut t = Sprt::new(h, 1000, 1);
        let mut verdicts = vec![];
        while verdicts.last() != Some(&Verdict::Better) {
            verdicts.push(t.record(win, win).unwrap());
        }
        assert!(verdicts.len() > 1 && verdicts[..verdicts.len() - 1].iter().all(|v| *v == Verdict::Continue), "{verdicts:?}");
        let s = t.status();
        assert_eq!((s.games, s.points, s.score, s.elo, s.verdict), (2 * s.pairs, s.games as f64, 1.0, None, Verdict::Better));
        assert!(s.llr >= s.bounds.upper);
        // Every game lost: NotBetter.
        let mut t = Sprt::new(h, 1000, 1);
        while t.record(loss, loss).unwrap() == Verdict::Continue {}
        assert_eq!(t.verdict(), Verdict::NotBetter);
        // LLRcalc: -2.9303 after 19 pairs, -3.0846 after 20.
        assert_eq!(t.pairs(), 20);
        assert!(close(t.llr(), -3.0846, 1e-4), "{}", t.llr());
        // A budget of 60 games: thirty even pairs, then BudgetSpent.
        let mut t = Sprt::new(h, 60, 1);
        for i in 0..30 {
            let v = t.record([win, draw, loss][i % 3], [win, draw, loss][i % 3]).unwrap();
            assert_eq!(v, if i < 29 { Verdict::Continue } else { Verdict::BudgetSpent }, "{i}");
        }
        let s = t.status();
        assert_eq!((s.pairs, s.games, s.points, s.score, s.elo), (30, 60, 30.0, 0.5, Some(0.0)));
        // The pairs' spread: twenty of thirty ½ away from the mean, a sample
        // variance of 5/29, a standard error of sqrt(5/29 / 30).
        let (lo, hi) = s.elo_95.unwrap();
        assert!(
            close(hi, -lo, 1e-9) && close(hi, elo_of_score(0.5 + 1.959964 * (5.0 / 29.0 / 30.0f64).sqrt()).unwrap(), 1e-9),
            "{lo} {hi}"
        );
        assert!(s.llr > s.bounds.lower && s.llr < s.bounds.upper);
        assert_eq!(t.counts(), &[10, 0, 10, 0, 10]);
        // Too few pairs for an interval within (0, 1): none.
        let mut t = Sprt::new(h, 60, 1);
        t.record(win, win).unwrap();
        t.record(loss, loss).unwrap();
        assert_eq!(t.status().elo_95, None);
    }

    #[test]
    fn a_pair_unlike_the_test_is_refused() {
        let mut t = Sprt::new(Hypothesis::default(), 100, 4);
        let four = GameScore { half_points: 5, comparisons: 4 };
        assert_eq!(t.record(four, GameScore { half_points: 1, comparisons: 1 }), Err(PairError::Comparisons { got: 1, want: 4 }));
        assert_eq!(t.record(four, GameScore { half_points: 9, comparisons: 4 }), Err(PairError::Score { half_points: 9, comparisons: 4 }));
        assert_eq!(t.pairs(), 0);
        assert_eq!(t.record(four, four), Ok(Verdict::Continue));
        assert_eq!(t.counts().len(), 17);
        assert_eq!(t.counts()[10], 1);
    }

    /// Simulated bots: a pair of games where NEW's expected score is
    /// `score`, with a seat's advantage (+0.1 in the first seat, −0.1 in
    /// the second, so the pair's mean is exactly `score`). Two players:
    /// draws at rate 0.2, the rest wins and losses. Four players (two seats
    /// each, four comparisons): NEW's half points binomial over the eight.
    fn simulated_pair(rng: &mut ChaCha8Rng, score: f64, comparisons: u32) -> (GameScore, GameScore) {
        let game = |rng: &mut ChaCha8Rng, s: f64| {
            if comparisons == 1 {
                let (draw, u) = (0.2, rng.gen::<f64>());
                let half_points = if u < s - draw / 2.0 {
                    2
                } else if u < s + draw / 2.0 {
                    1
                } else {
                    0
                };
                GameScore { half_points, comparisons }
            } else {
                GameScore { half_points: (0..2 * comparisons).filter(|_| rng.gen::<f64>() < s).count() as u32, comparisons }
            }
        };
        (game(rng, score + 0.1), game(rng, score - 0.1))
    }

    /// Runs `runs` tests of `h` against bots whose true Elo difference is
    /// `true_elo`; returns the fractions of (Better, NotBetter,
    /// BudgetSpent) and the mean games played.
    fn simulate(h: Hypothesis, true_elo: f64, comparisons: u32, runs: u32, seed: u64) -> ([f64; 3], f64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut tally, mut games) = ([0u32; 3], 0u64);
        for _ in 0..runs {
            let mut t = Sprt::new(h, 20_000, comparisons);
            let verdict = loop {
                let (a, b) = simulated_pair(&mut rng, expected_score(true_elo), comparisons);
                let v = t.record(a, b).unwrap();
                if v.is_final() {
                    break v;
                }
            };
            games += 2 * t.pairs();
            tally[match verdict {
                Verdict::Better => 0,
                Verdict::NotBetter => 1,
                _ => 2,
            }] += 1;
        }
        (tally.map(|n| f64::from(n) / f64::from(runs)), games as f64 / f64::from(runs))
    }

    /// The stated error rates hold: with NEW exactly elo0 better, "better"
    /// comes at most α of the time; with NEW exactly elo1 better, "not
    /// better" at most β; plus three standard deviations of sampling.
    #[test]
    fn the_verdicts_hold_the_stated_error_rates_on_simulated_bots() {
        let runs = 1000;
        for (comparisons, elo0, elo1, alpha, beta, seed) in
            [(1, 0.0, 30.0, 0.05, 0.05, 1), (1, 0.0, 60.0, 0.10, 0.02, 2), (4, -10.0, 20.0, 0.05, 0.10, 3)]
        {
            let h = Hypothesis::new(elo0, elo1, alpha, beta).unwrap();
            let slack = |rate: f64| rate + 3.0 * (rate * (1.0 - rate) / f64::from(runs)).sqrt();
            let ([better, _, spent0], games0) = simulate(h, elo0, comparisons, runs, seed);
            let ([_, not_better, spent1], games1) = simulate(h, elo1, comparisons, runs, seed + 100);
            let ([better_far, _, _], games_far) = simulate(h, elo1 + 2.0 * (elo1 - elo0), comparisons, runs / 4, seed + 200);
            println!(
                "{comparisons} comparison(s) a game, elo0 {elo0}, elo1 {elo1}, alpha {alpha}, beta {beta}: \
                 at elo0 {better:.3} better in {games0:.0} games on average; \
                 at elo1 {not_better:.3} not better in {games1:.0} games; \
                 at elo1 + 2(elo1 - elo0) {better_far:.3} better in {games_far:.0} games"
            );
            assert!(better <= slack(alpha), "at elo0: {better} better, more than alpha {alpha}");
            assert!(not_better <= slack(beta), "at elo1: {not_better} not better, more than beta {beta}");
            assert!(spent0 + spent1 < 0.01, "budget spent in {spent0} and {spent1} of the runs");
            // Far beyond elo1 the test says better nearly always, sooner.
            assert!(better_far > 0.99 && games_far < games1, "{better_far} better in {games_far} games");
        }
    }
}
