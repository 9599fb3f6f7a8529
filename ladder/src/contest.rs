//! Contests: a ladder's life from open to final standings. Pure: plain
//! data in, decisions out; the store keeps the state and the scheduler's
//! tick carries it out.
//!
//! Any ladder becomes a contest when its host sets a deadline:
//!
//! | phase | how it starts | what happens |
//! |---|---|---|
//! | `open` | the ladder is created | submissions accepted; the ladder's format plays and rates them |
//! | `closed` | the deadline passes | submissions refused (the message names the deadline); the ladder plays on with the versions it has, as Kaggle keeps playing after its deadline |
//! | `finals` | the host starts them | the top N of the standings at that moment, with their versions then, play a finite format of the host's choice (a full round robin with every seat order, or Swiss rounds in waves) on matches of their own; the ladder's own matches stop |
//! | `final` | the finals' format has nothing left to play (adaptive finals: every adjacent place ordered, or the budget spent) | the finals' standings are frozen with how settled each place is, published and exportable (JSON, CSV) |
//!
//! **Adaptive finals** (the host gives a match budget): a base round, then
//! paired games for the adjacent places least settled, until every
//! adjacent pair is ordered with 95% confidence or the budget is spent;
//! each place gets a rank interval ([`crate::finals`] has the statistic).
//!
//! The finals are only formats that end ([`finals_formats`]): a rated or
//! neighbours ladder never runs out of matches, so it could not say when
//! the standings are final.
//!
//! **How settled** ([`settle`]): each finalist's per-match points (in the
//! unit its format ranks by, [`crate::format::Format::match_points`]) give
//! a 95% interval of its mean (normal approximation, mean ± 1.96 s/√n). A
//! place is settled when its interval overlaps neither the place above's
//! nor the place below's: no plausible run of the same matches would swap
//! them. The count of unsettled places is what a host quotes when asked
//! "how sure is this order?".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::format::{Column, Format, FormatName, LadderConfig, LadderState, NewMatch, Standings};

/// Where a contest is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Submissions accepted (no deadline, or before it).
    Open,
    /// The deadline has passed: no submissions; the ladder plays on.
    Closed,
    /// The finals are being played.
    Finals,
    /// The finals are over; the standings are frozen.
    Final,
}

impl Phase {
    pub const ALL: [Phase; 4] = [Phase::Open, Phase::Closed, Phase::Finals, Phase::Final];

    pub fn of(deadline_passed: bool, finals_started: bool, finished: bool) -> Phase {
        match (deadline_passed, finals_started, finished) {
            (_, _, true) => Phase::Final,
            (_, true, false) => Phase::Finals,
            (true, false, false) => Phase::Closed,
            (false, false, false) => Phase::Open,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Open => "open",
            Phase::Closed => "closed",
            Phase::Finals => "finals",
            Phase::Final => "final",
        }
    }
}

/// Formats the finals may be played in: those that end ([`Format::ends`]).
pub fn finals_formats() -> [FormatName; 2] {
    [FormatName::RoundRobin, FormatName::Swiss]
}

/// Whether a stage played in `format` has played all it will: the format
/// ends, asks for no more matches (`next`, what it asked for now), none is
/// queued, and some were played. For finals, that is their end; for a
/// ladder, its standings are complete until a bot joins.
pub fn played_out(format: &Format, state: &LadderState, next: &[NewMatch]) -> bool {
    format.ends() && next.is_empty() && state.queued == 0 && !state.matches.is_empty()
}

/// What a ladder plays now: its own configuration, or during its finals
/// the finals' and their finalists.
pub fn current_stage(ladder: LadderConfig, finals: Option<&FinalsPlan>) -> Result<(LadderConfig, Option<&[i64]>), String> {
    match finals {
        None => Ok((ladder, None)),
        Some(plan) => Ok((plan.config().map_err(|e| format!("its finals: {e}"))?, Some(plan.finalists.as_slice()))),
    }
}

/// The finals, as stored with their ladder (`ladders.finals`): who plays
/// and how. Fixed when the host starts them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FinalsPlan {
    /// How many of the standings' top the host asked for.
    pub top: u32,
    /// A format that ends ([`finals_formats`]).
    pub format: FormatName,
    /// The finals' settings, common and the format's own, as stored.
    #[schema(value_type = Object)]
    pub settings: Value,
    /// The bots that play the finals, in their order in the standings when
    /// the finals started.
    pub finalists: Vec<i64>,
    /// Adaptive finals ([`crate::finals`]): at most this many matches,
    /// ending early once every adjacent place is ordered; None: the
    /// format's fixed schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
}

impl FinalsPlan {
    pub fn config(&self) -> Result<LadderConfig, String> {
        LadderConfig::of(self.format, &self.settings)
    }
}

/// The finals' configuration: the ladder's common settings (seats, turn
/// and time limits), the requested format with its defaults, then the
/// requested fields over them.
pub fn finals_config(ladder: &LadderConfig, format: FormatName, settings: Option<&Value>) -> Result<LadderConfig, String> {
    let finals = finals_formats();
    if !finals.contains(&format) {
        return Err(format!(
            "finals are played as {}, formats that end; {format} does not end, so the standings would never be final",
            finals.map(FormatName::as_str).join(" or ")
        ));
    }
    let base = LadderConfig { common: ladder.common.clone(), format: Format::default_of(format) };
    LadderConfig::with_request(&base, None, settings)
}

/// The finalists: the first `top` bots of the standings that may play (a
/// ready version, not disabled), in the standings' order. Bots the
/// standings do not list yet (no games) come after, by id.
pub fn finalists(standings: &Standings, playable: &[i64], top: usize) -> Vec<i64> {
    let mut order: Vec<i64> = standings.rows.iter().map(|r| r.bot).filter(|b| playable.contains(b)).collect();
    let mut rest: Vec<i64> = playable.iter().copied().filter(|b| !order.contains(b)).collect();
    rest.sort_unstable();
    order.extend(rest);
    order.dedup();
    order.truncate(top);
    order
}

/// One line of the final standings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FinalRow {
    pub rank: u32,
    pub bot: i64,
    pub name: String,
    /// A value per column of [`FinalStandings::columns`], by its key.
    #[serde(flatten)]
    pub values: BTreeMap<String, Value>,
    /// The 95% interval of the bot's mean points per match; None with
    /// fewer than two matches (nothing is known).
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// The interval overlaps neither neighbour's: the place would not
    /// change if the same matches were played again (adaptive finals:
    /// ordered with both neighbours, [`crate::finals`]).
    pub settled: bool,
    /// Adaptive finals: the 95% interval of the place's rank (a bootstrap
    /// over the paired games, [`crate::finals::rank_intervals`]); None for
    /// finals played in a fixed format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_low: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_high: Option<u32>,
}

/// The finals' standings, frozen when the finals end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FinalStandings {
    /// The finals' format.
    pub format: FormatName,
    /// The columns after rank and name, in order (then low, high, settled).
    pub columns: Vec<Column>,
    pub rows: Vec<FinalRow>,
    /// Places whose order with a neighbour is within the uncertainty.
    pub unsettled: u32,
    /// Finished finals matches the standings are from: when final, how
    /// many matches the finals took.
    pub matches: u32,
    /// Adaptive finals: the most matches the host allowed them
    /// ([`crate::finals`]); None for finals played in a fixed format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
}

/// The 95% interval of the mean of `xs` (mean ± 1.96 s/√n, s the sample
/// standard deviation), kept within the values seen (a mean of points
/// cannot be below the fewest a match gave); None with fewer than two
/// values.
pub fn interval(xs: &[f64]) -> Option<(f64, f64)> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = 1.96 * (var / n as f64).sqrt();
    let (lo, hi) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
    Some(((mean - half).max(lo), (mean + half).min(hi)))
}

/// The final standings of finals played in `format`, from their state
/// (the finalists and the finals' matches): the format's own table, each
/// place with its interval and whether it is settled.
pub fn settle(format: &Format, state: &LadderState) -> FinalStandings {
    let table = format.standings(state);
    let mut points: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    let mut matches = 0;
    for m in &state.matches {
        let Some(per_seat) = format.match_points(m) else { continue };
        matches += 1;
        for (bot, p) in m.seats.iter().zip(per_seat) {
            points.entry(*bot).or_default().push(p);
        }
    }
    let intervals: Vec<Option<(f64, f64)>> = table.rows.iter().map(|r| points.get(&r.bot).and_then(|xs| interval(xs))).collect();
    // Closed intervals: touching counts as overlapping (an exact tie).
    let overlap = |a: Option<(f64, f64)>, b: Option<(f64, f64)>| match (a, b) {
        (Some((lo1, hi1)), Some((lo2, hi2))) => lo1 <= hi2 && lo2 <= hi1,
        _ => true,
    };
    let rows: Vec<FinalRow> = table
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let above = i.checked_sub(1).map(|j| intervals[j]);
            let below = intervals.get(i + 1).copied();
            let settled = intervals[i].is_some()
                && above.is_none_or(|a| !overlap(a, intervals[i]))
                && below.is_none_or(|b| !overlap(b, intervals[i]));
            FinalRow {
                rank: r.rank,
                bot: r.bot,
                name: r.name.clone(),
                values: r.values.clone(),
                low: intervals[i].map(|x| x.0),
                high: intervals[i].map(|x| x.1),
                settled,
                rank_low: None,
                rank_high: None,
            }
        })
        .collect();
    let unsettled = rows.iter().filter(|r| !r.settled).count() as u32;
    FinalStandings { format: table.format, columns: table.columns, rows, unsettled, matches, budget: None }
}

/// The final standings as CSV: rank, bot, name, the format's columns by
/// key, low, high, settled; for adaptive finals then rank_low, rank_high
/// and finals_matches (the same on every line); one line per place.
pub fn to_csv(f: &FinalStandings) -> String {
    fn cell(v: &str) -> String {
        if v.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", v.replace('"', "\"\""))
        } else {
            v.to_owned()
        }
    }
    // A text a spreadsheet would run as a formula (`-A1`, `=...`) is kept
    // as text: OWASP's advice for CSV files people open.
    fn text(v: &str) -> String {
        if v.starts_with(['=', '+', '-', '@']) {
            cell(&format!("'{v}"))
        } else {
            cell(v)
        }
    }
    fn value(v: Option<&Value>) -> String {
        match v {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => text(s),
            Some(other) => cell(&other.to_string()),
        }
    }
    let mut out = String::from("rank,bot,name");
    for c in &f.columns {
        out.push(',');
        out.push_str(&cell(&c.key));
    }
    out.push_str(",low,high,settled");
    if f.budget.is_some() {
        out.push_str(",rank_low,rank_high,finals_matches");
    }
    out.push('\n');
    for r in &f.rows {
        out.push_str(&format!("{},{},{}", r.rank, r.bot, text(&r.name)));
        for c in &f.columns {
            out.push(',');
            out.push_str(&value(r.values.get(&c.key)));
        }
        let num = |x: Option<f64>| x.map(|x| format!("{x:.6}")).unwrap_or_default();
        out.push_str(&format!(",{},{},{}", num(r.low), num(r.high), r.settled));
        if f.budget.is_some() {
            let rank = |x: Option<u32>| x.map(|x| x.to_string()).unwrap_or_default();
            out.push_str(&format!(",{},{},{}", rank(r.rank_low), rank(r.rank_high), f.matches));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{LadderBot, MatchRecord, RoundRobinSettings, SwissSettings};
    use crate::formats::RoundRobinScoring;
    use serde_json::json;

    #[test]
    fn phases_follow_the_deadline_the_finals_and_their_end() {
        let cases = [
            ((false, false, false), Phase::Open),
            ((true, false, false), Phase::Closed),
            ((true, true, false), Phase::Finals),
            ((true, true, true), Phase::Final),
            // Finals started by a host who then moved the deadline later: still finals.
            ((false, true, false), Phase::Finals),
        ];
        for ((d, f, e), want) in cases {
            assert_eq!(Phase::of(d, f, e), want, "{:?}", (d, f, e));
        }
        assert_eq!(serde_json::to_value(Phase::Closed).unwrap(), json!("closed"));
    }

    #[test]
    fn the_finals_formats_are_those_that_end() {
        let ending: Vec<FormatName> = FormatName::ALL.into_iter().filter(|n| Format::default_of(*n).ends()).collect();
        assert_eq!(ending, finals_formats());
    }

    #[test]
    fn a_stage_is_played_out_when_a_format_that_ends_has_nothing_left() {
        let rr = Format::RoundRobin(RoundRobinSettings::default());
        let rated = Format::default_of(FormatName::Rated);
        let done = LadderState { bots: vec![bot(1), bot(2)], matches: vec![played(1, 2, true), played(2, 1, true)], queued: 0 };
        let next =
            |f: &Format, st: &LadderState| f.next_matches(st, 2, &mut <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0));
        assert!(played_out(&rr, &done, &next(&rr, &done)));
        // A bot joins: its games are owed.
        let joined = LadderState { bots: vec![bot(1), bot(2), bot(3)], ..done.clone() };
        assert!(!played_out(&rr, &joined, &next(&rr, &joined)));
        // A match still queued; nothing played yet; a format that never ends.
        assert!(!played_out(&rr, &LadderState { queued: 1, ..done.clone() }, &[]));
        assert!(!played_out(&rr, &LadderState { matches: vec![], ..done.clone() }, &[]));
        assert!(!played_out(&rated, &done, &[]));
    }

    #[test]
    fn finals_take_only_formats_that_end_and_keep_the_ladders_limits() {
        let ladder = LadderConfig::parse("rated", &json!({"seats": 2, "max_turns": 80})).unwrap();
        let rr = finals_config(&ladder, FormatName::RoundRobin, Some(&json!({"rounds": 3}))).unwrap();
        assert_eq!((rr.common.seats, rr.common.max_turns), (Some(2), Some(80)));
        assert!(matches!(rr.format, Format::RoundRobin(RoundRobinSettings { rounds: 3, .. })));
        let swiss = finals_config(&ladder, FormatName::Swiss, None).unwrap();
        assert_eq!(swiss.format, Format::Swiss(SwissSettings::default()));
        for never_ends in [FormatName::Rated, FormatName::Neighbours] {
            let e = finals_config(&ladder, never_ends, None).unwrap_err();
            assert!(e.contains("does not end") && e.contains("round_robin or swiss"), "{e}");
        }
        let e = finals_config(&ladder, FormatName::RoundRobin, Some(&json!({"rondes": 3}))).unwrap_err();
        assert!(e.contains("rondes"), "{e}");
        let plan = FinalsPlan { top: 4, format: FormatName::RoundRobin, settings: rr.to_stored().1, finalists: vec![3, 1], budget: None };
        assert_eq!(plan.config().unwrap(), rr);
    }

    fn standings_of(bots: &[i64]) -> Standings {
        Standings {
            format: FormatName::Rated,
            columns: vec![],
            rows: bots
                .iter()
                .enumerate()
                .map(|(i, b)| crate::format::StandingRow { rank: i as u32 + 1, bot: *b, name: format!("b{b}"), values: BTreeMap::new() })
                .collect(),
        }
    }

    #[test]
    fn finalists_are_the_top_that_may_play_then_the_unranked_by_id() {
        let table = standings_of(&[5, 2, 9, 4]);
        assert_eq!(finalists(&table, &[2, 4, 5, 9], 3), [5, 2, 9]);
        // 2 has no ready version (or is disabled): the next one moves up.
        assert_eq!(finalists(&table, &[4, 5, 9], 3), [5, 9, 4]);
        // Bots without a line yet (a rated ladder lists bots once rated).
        assert_eq!(finalists(&table, &[5, 7, 6], 5), [5, 6, 7]);
        assert_eq!(finalists(&table, &[2, 4, 5, 9], 0), Vec::<i64>::new());
    }

    #[test]
    fn the_interval_is_the_mean_and_its_standard_error() {
        assert_eq!(interval(&[1.0]), None);
        assert_eq!(interval(&[]), None);
        let (lo, hi) = interval(&[0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]).unwrap();
        // mean ½, s = √(8/30) = 0.5164, n = 16: half-width 1.96 × 0.1291 = 0.2530.
        assert!((lo - (0.5 - 0.253_03)).abs() < 1e-4 && (hi - (0.5 + 0.253_03)).abs() < 1e-4, "{lo} {hi}");
        // Four values: the half-width (0.566) would reach below 0 and above
        // 1; the interval stays within the values seen.
        assert_eq!(interval(&[0.0, 1.0, 0.0, 1.0]), Some((0.0, 1.0)));
        assert_eq!(interval(&[2.0, 2.0, 2.0]), Some((2.0, 2.0)));
    }

    fn bot(id: i64) -> LadderBot {
        LadderBot { id, name: format!("b{id}"), ready: true, rating: None, in_flight: 0 }
    }

    fn played(a: i64, b: i64, a_wins: bool) -> MatchRecord {
        MatchRecord {
            seats: vec![a, b],
            results: Some(if a_wins { vec![(1, 1.0), (2, 0.0)] } else { vec![(2, 0.0), (1, 1.0)] }),
            round: None,
        }
    }

    /// Bot 1 beats everyone every time; 2 and 3 split their games; 4 loses
    /// every game. 1 and 4 are settled, 2 and 3 are not.
    #[test]
    fn settled_places_do_not_overlap_their_neighbours() {
        let mut matches = Vec::new();
        for _ in 0..5 {
            for (a, b) in [(1, 2), (1, 3), (1, 4), (2, 4), (3, 4)] {
                matches.push(played(a, b, true));
                matches.push(played(b, a, false));
            }
            matches.push(played(2, 3, true));
            matches.push(played(3, 2, true));
        }
        // A queued match counts for nothing.
        matches.push(MatchRecord { seats: vec![4, 1], results: None, round: None });
        let format =
            Format::RoundRobin(RoundRobinSettings { rounds: 5, scoring: RoundRobinScoring::Points { win: 2.0, tie: 1.0, loss: 0.0 } });
        let state = LadderState { bots: (1..=4).map(bot).collect(), matches, queued: 1 };
        let f = settle(&format, &state);
        assert_eq!(f.matches, 60);
        let line = |b: i64| f.rows.iter().find(|r| r.bot == b).unwrap().clone();
        assert_eq!((line(1).rank, line(1).settled, line(1).low, line(1).high), (1, true, Some(2.0), Some(2.0)));
        assert!(!line(2).settled && !line(3).settled, "{f:?}");
        assert_eq!((line(4).rank, line(4).settled, line(4).high), (4, true, Some(0.0)));
        assert_eq!(f.unsettled, 2);
        let csv = to_csv(&f);
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("rank,bot,name,points,games,low,high,settled"));
        assert_eq!(lines.next(), Some("1,1,b1,60.0,30,2.000000,2.000000,true"));
        assert_eq!(csv.lines().count(), 5);
    }

    #[test]
    fn a_place_with_fewer_than_two_matches_is_not_settled_and_csv_quotes() {
        let format = Format::Swiss(SwissSettings { rounds: Some(1) });
        let mut m = played(1, 2, true);
        m.round = Some(1);
        let mut state = LadderState { bots: vec![bot(1), bot(2)], matches: vec![m], queued: 0 };
        state.bots[0].name = "a,\"b\"".into();
        let f = settle(&format, &state);
        assert_eq!(f.unsettled, 2);
        assert!(f.rows.iter().all(|r| r.low.is_none() && !r.settled));
        assert!(to_csv(&f).contains("\"a,\"\"b\"\"\""), "{}", to_csv(&f));
        // A name a spreadsheet would run as a formula stays text.
        state.bots[0].name = "-A1".into();
        assert!(to_csv(&settle(&format, &state)).contains(",'-A1,"), "{}", to_csv(&settle(&format, &state)));
    }
}
