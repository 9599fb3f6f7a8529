//! Starting a contest's finals (hosts): which requests are refused, and
//! why, and the plan the finals are played by.
//!
//! [`plan`] decides on the facts the handler read (the contest's phase,
//! the ladder's game and configuration, versions still compiling or in
//! their validation game, the standings, the bots that can play); the
//! store starts the finals with the plan, unless the deadline was just
//! moved or another host started them first.

use koth_ladder::contest::{finalists, finals_config, FinalsPlan, Phase};
use koth_ladder::format::{FormatName, LadderConfig, Standings};
use koth_ladder::served::ServedGame;
use koth_scheduler::types::FinalsRequest;

/// What the handler read before deciding.
#[derive(Clone, Copy, Debug)]
pub struct Facts<'a> {
    pub phase: Phase,
    /// The contest's deadline, if it has one.
    pub deadline: Option<&'a str>,
    /// The ladder's game and configuration; `None`: no such ladder.
    pub ladder: Option<(&'a ServedGame, &'a LadderConfig)>,
    /// Versions of the ladder's bots still compiling or in their
    /// validation game: the finals wait for them.
    pub versions_in_progress: i64,
    /// The ladder's standings; `None`: no such ladder.
    pub standings: Option<&'a Standings>,
    /// The bots that can play (a ready version, not disabled).
    pub playable: &'a [i64],
}

/// Why the finals cannot start, in words for the host.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("ladder {0} does not exist")]
    NoLadder(i64),
    /// Submissions are still open.
    #[error("{}", open_words(*ladder, deadline.as_deref()))]
    Open { ladder: i64, deadline: Option<String> },
    #[error("the finals have already started")]
    Started,
    /// The format or its settings cannot be the finals' (the ladder
    /// format's own words).
    #[error("{0}")]
    Settings(String),
    /// Fewer finalists asked for than a match seats.
    #[error("the finals need at least {seats} bots (a match's seats), not top {top}")]
    TopBelowSeats { seats: usize, top: u32 },
    #[error(
        "{0} version(s) submitted before the deadline are still compiling or in their validation game; start the finals when they \
         are done"
    )]
    Waiting(i64),
    /// Fewer bots can play than a match seats.
    #[error("only {playable} bot(s) can play (a ready version, not disabled); a finals match needs {seats}")]
    TooFewPlayable { playable: usize, seats: usize },
}

fn open_words(ladder: i64, deadline: Option<&str>) -> String {
    match deadline {
        Some(d) => format!(
            "submissions are open until the deadline, {d}; start the finals after it, or move the deadline first (on the ladder's \
             page, /ladders/{ladder}, or `koth contest deadline {ladder} --now`)"
        ),
        None => format!(
            "this ladder has no deadline; set one first: on the ladder's page (/ladders/{ladder}), or close submissions now with \
             `koth contest deadline {ladder} --now`"
        ),
    }
}

impl Refusal {
    /// The request's fault (a format, settings or top that cannot be),
    /// not the contest's state.
    pub fn is_the_requests(&self) -> bool {
        matches!(self, Refusal::Settings(_) | Refusal::TopBelowSeats { .. })
    }
}

/// The finals' plan, or why they cannot start, in the order a host is
/// told (the first refusal wins).
pub fn plan(ladder: i64, req: &FinalsRequest, facts: &Facts) -> Result<FinalsPlan, Refusal> {
    match facts.phase {
        Phase::Open => return Err(Refusal::Open { ladder, deadline: facts.deadline.map(str::to_owned) }),
        Phase::Finals | Phase::Final => return Err(Refusal::Started),
        Phase::Closed => {}
    }
    let (game, config) = facts.ladder.ok_or(Refusal::NoLadder(ladder))?;
    let format = req.format.unwrap_or(FormatName::RoundRobin);
    let finals =
        finals_config(config, format, req.settings.as_ref()).and_then(|c| game.check(&c).map(|()| c)).map_err(Refusal::Settings)?;
    let seats = game.seats(&finals);
    if (req.top as usize) < seats {
        return Err(Refusal::TopBelowSeats { seats, top: req.top });
    }
    if facts.versions_in_progress > 0 {
        return Err(Refusal::Waiting(facts.versions_in_progress));
    }
    let table = facts.standings.ok_or(Refusal::NoLadder(ladder))?;
    let finalists = finalists(table, facts.playable, req.top as usize);
    if finalists.len() < seats {
        return Err(Refusal::TooFewPlayable { playable: finalists.len(), seats });
    }
    // Adaptive finals (a budget) must be playable as asked.
    if let Some(budget) = req.budget {
        koth_ladder::finals::check(&finals.format, seats, finalists.len(), budget).map_err(Refusal::Settings)?;
    }
    Ok(FinalsPlan { top: req.top, format, settings: finals.to_stored().1, finalists, budget: req.budget })
}

#[cfg(test)]
mod tests {
    use super::*;
    use koth_games::GameKind;
    use koth_ladder::format::StandingRow;

    fn standings(bots: &[i64]) -> Standings {
        Standings {
            format: FormatName::Rated,
            columns: Vec::new(),
            rows: bots
                .iter()
                .enumerate()
                .map(|(i, b)| StandingRow { rank: i as u32 + 1, bot: *b, name: format!("b{b}"), values: Default::default() })
                .collect(),
        }
    }

    /// What is asked, on which facts, and the finalists or the refusal's start.
    type Case<'a> = (&'a str, FinalsRequest, Facts<'a>, Result<&'a [i64], &'a str>);

    #[test]
    fn plan_refuses_in_order_and_names_why() {
        let game = ServedGame::from(GameKind::Snake);
        let config = LadderConfig::default_for(GameKind::Snake);
        let table = standings(&[4, 2, 9, 7]);
        let playable = [2, 4, 7, 9];
        let closed = Facts {
            phase: Phase::Closed,
            deadline: Some("2026-11-27 06:00:00"),
            ladder: Some((&game, &config)),
            versions_in_progress: 0,
            standings: Some(&table),
            playable: &playable,
        };
        let top = |n| FinalsRequest { top: n, format: None, settings: None, budget: None };
        let rated = FinalsRequest { top: 3, format: Some(FormatName::Rated), settings: None, budget: None };
        let budget = |b| FinalsRequest { budget: Some(b), ..top(3) };
        let two = [2, 9];
        let cases: [Case; 12] = [
            ("the top three of the standings", top(3), closed, Ok(&[4, 2, 9])),
            ("adaptive, within a budget", budget(40), closed, Ok(&[4, 2, 9])),
            (
                "a budget past the bound",
                budget(4_000_000_000),
                closed,
                Err("a budget of 4000000000 matches is more than the 100000 adaptive finals may take"),
            ),
            (
                "a budget below the base round",
                budget(5),
                closed,
                Err("a budget of 5 matches is less than the base round of 3 finalists (6 matches"),
            ),
            (
                "open, with a deadline",
                top(3),
                Facts { phase: Phase::Open, ..closed },
                Err("submissions are open until the deadline, 2026-11-27 06:00:00"),
            ),
            (
                "open, none",
                top(3),
                Facts { phase: Phase::Open, deadline: None, ..closed },
                Err("this ladder has no deadline; set one first"),
            ),
            ("started", top(3), Facts { phase: Phase::Finals, ..closed }, Err("the finals have already started")),
            ("no ladder", top(3), Facts { ladder: None, ..closed }, Err("ladder 6 does not exist")),
            ("a format that never ends", rated, closed, Err("finals are played as")),
            ("top below a match's seats", top(1), closed, Err("the finals need at least 2 bots (a match's seats), not top 1")),
            (
                "versions still compiling",
                top(3),
                Facts { versions_in_progress: 2, ..closed },
                Err("2 version(s) submitted before the deadline"),
            ),
            ("one bot can play", top(3), Facts { playable: &two[..1], ..closed }, Err("only 1 bot(s) can play")),
        ];
        for (what, req, facts, want) in cases {
            match (plan(6, &req, &facts), want) {
                (Ok(p), Ok(finalists)) => {
                    assert_eq!(p.finalists, finalists, "{what}");
                    assert_eq!((p.top, p.format, p.budget), (req.top, FormatName::RoundRobin, req.budget), "{what}");
                }
                (Err(e), Err(want)) => assert!(e.to_string().starts_with(want), "{what}: {e} should start {want:?}"),
                (got, want) => panic!("{what}: {got:?}, expected {want:?}"),
            }
        }
        // Refused for the request's own fault (400) or the contest's state (409).
        assert!(plan(6, &top(1), &closed).unwrap_err().is_the_requests());
        assert!(plan(6, &budget(5), &closed).unwrap_err().is_the_requests());
        assert!(!plan(6, &top(3), &Facts { versions_in_progress: 1, ..closed }).unwrap_err().is_the_requests());
    }
}
