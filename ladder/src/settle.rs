//! What a finished match means, decided without I/O: whether it was a
//! validation game and its verdict, which bots it gets disabled for
//! failing, whether and how it is rated.
//!
//! The database layer (`koth_scheduler::db::results::record_match`) reads
//! the facts a decision needs ([`Finished`]), calls [`settle`] and writes
//! the [`Settlement`], in the transaction that completes the match's job:
//! the rules live here, tested with tables, and the SQL only stores.
//!
//! * A **validation game** rates nobody, counts for no ladder and no
//!   failure tally: only its verdict ([`crate::validation::judge`]) is kept.
//! * A bot whose current version **failed** (crashed, ran out of memory,
//!   stopped reading its input, closed its output, never connected:
//!   [`BotStatus::is_bot_failure`], or `disqualified`, which koth-runner
//!   0.1 wrote) in [`FAILURE_LIMIT`] of its last [`FAILURE_WINDOW`]
//!   finished matches is disabled, with the reason for its owner.
//! * A match is **rated** when it was queued rated, its ladder's format
//!   rates ([`crate::format::Format::rating_system`]) and every seat still
//!   plays the version it played with: results of superseded versions are
//!   recorded but not rated.
//!
//! What follows a compile is decided the same way: [`after_compile`], called
//! by `koth_scheduler::db::store::record_compile`.

use koth_runner::BotStatus;

use crate::format::LadderConfig;
use crate::served::ServedGame;

use crate::outcome::SeatOutcome;
use crate::rating::RatingSystem;
use crate::validation::{self, Verdict};

/// A bot failing in this many of its current version's last
/// [`FAILURE_WINDOW`] matches is disabled.
pub const FAILURE_LIMIT: usize = 7;
/// How many of a bot's latest finished matches its failures are counted in.
pub const FAILURE_WINDOW: usize = 10;

/// What the match was queued as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The validation game of this version.
    Validation { version: i64 },
    /// A challenge between chosen bots.
    Challenge,
    /// A game of an A/B test between two versions of a bot: never rated,
    /// whatever it was queued as.
    AbTest { test: i64 },
    /// A match of a contest's finals.
    Finals,
    /// A match the ladder's format chose.
    Ladder,
}

impl Role {
    /// How the audit trail names it.
    pub fn describe(self) -> String {
        match self {
            Role::Validation { version } => format!("the validation game of version {version}"),
            Role::Challenge => "a challenge".to_owned(),
            Role::AbTest { test } => format!("a game of A/B test {test}"),
            Role::Finals => "a finals match".to_owned(),
            Role::Ladder => "a ladder match".to_owned(),
        }
    }
}

/// One of the match's bots, as its record stands with this match in it.
#[derive(Clone, Debug, PartialEq)]
pub struct BotRecord {
    pub bot: i64,
    /// Already disabled (by a host, or for failing): nothing to decide.
    pub disabled: bool,
    /// The status kinds (`BotStatus`'s `kind`, as stored) of its current
    /// version's latest finished matches, at most [`FAILURE_WINDOW`],
    /// newest first.
    pub recent: Vec<String>,
}

/// The facts a finished match is settled on.
#[derive(Clone, Debug)]
pub struct Finished<'a> {
    pub role: Role,
    pub seats: &'a [SeatOutcome],
    pub turns: u32,
    /// Whether it was queued as rated.
    pub queued_rated: bool,
    /// Its ladder format's rating system; None when it has no ladder, its
    /// format does not rate, or its settings cannot be read.
    pub rating_system: Option<RatingSystem>,
    /// Seats whose bot has a newer current version than the one it played.
    pub superseded_seats: usize,
    /// The match's bots.
    pub bots: Vec<BotRecord>,
}

/// Why a match changes no rating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unrated {
    Validation,
    /// A game of an A/B test: it compares two versions of one bot.
    AbTest,
    /// Queued unrated (a challenge, a finals match, a format that counts
    /// matches its own way).
    Queued,
    /// No ladder, or a format with no rating system.
    NoRatingSystem,
    /// A seat's bot moved on to a newer version: the match is marked
    /// unrated, so that it reads as it counted.
    Superseded,
}

/// What the match settles.
#[derive(Clone, Debug, PartialEq)]
pub struct Settlement {
    /// A validation game's version and verdict.
    pub validation: Option<(i64, Verdict)>,
    /// Bots to disable, with the reason their owners read.
    pub disable: Vec<(i64, String)>,
    /// The system to rate the seats with, in rank order of the outcome.
    pub rating: Result<RatingSystem, Unrated>,
}

/// Status kinds, as stored, that count as the bot's own failure.
pub fn failure_kinds() -> Vec<&'static str> {
    BotStatus::FAILURE_KINDS.iter().copied().chain(["disqualified"]).collect()
}

/// Decide what `m` means.
pub fn settle(m: &Finished) -> Settlement {
    if let Role::Validation { version } = m.role {
        return Settlement {
            validation: Some((version, validation::judge(m.seats, m.turns))),
            disable: Vec::new(),
            rating: Err(Unrated::Validation),
        };
    }
    let kinds = failure_kinds();
    let disable = m
        .bots
        .iter()
        .filter(|b| !b.disabled)
        .filter_map(|b| {
            let recent = &b.recent[..b.recent.len().min(FAILURE_WINDOW)];
            let failed = recent.iter().filter(|k| kinds.contains(&k.as_str())).count();
            (recent.len() >= FAILURE_WINDOW && failed >= FAILURE_LIMIT).then(|| {
                let reason = format!(
                    "disabled: its current version crashed, ran out of memory, stopped reading its input or never connected \
                     in {failed} of its last {} matches; read its stderr logs and submit a fixed version",
                    recent.len()
                );
                (b.bot, reason)
            })
        })
        .collect();
    let rating = if let Role::AbTest { .. } = m.role {
        Err(Unrated::AbTest)
    } else if !m.queued_rated {
        Err(Unrated::Queued)
    } else if let Some(system) = m.rating_system {
        if m.superseded_seats > 0 {
            Err(Unrated::Superseded)
        } else {
            Ok(system)
        }
    } else {
        Err(Unrated::NoRatingSystem)
    };
    Settlement { validation: None, disable, rating }
}

/// What follows a version's successful compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterCompile {
    /// Its validation game ([`crate::validation`]): the version against
    /// copies of itself, in this many seats.
    Validate { seats: usize },
    /// It becomes its bot's current version at once, for this reason (the
    /// audit trail's words).
    PlayAtOnce { why: &'static str },
}

/// What follows a successful compile on a ladder of this game and
/// configuration (`None`: the ladder's configuration could not be read,
/// so it plays nothing a validation game could check; its versions are
/// accepted as before validation games existed).
pub fn after_compile(ladder: Option<(&ServedGame, &LadderConfig)>) -> AfterCompile {
    match ladder {
        Some((game, config)) if !config.common.skip_validation => AfterCompile::Validate { seats: game.seats(config) },
        Some(_) => AfterCompile::PlayAtOnce { why: "its ladder has no validation games" },
        None => AfterCompile::PlayAtOnce { why: "its ladder's configuration could not be read" },
    }
}

#[cfg(test)]
mod tests {
    use koth_games::{GameKind, MatchResult};

    use super::*;

    #[test]
    fn after_a_compile_comes_the_validation_game_unless_the_ladder_skips_them() {
        let snake = ServedGame::from(GameKind::Snake);
        let target = ServedGame::from(GameKind::Target);
        let validated = LadderConfig::default_for(GameKind::Snake);
        let mut skipping = validated.clone();
        skipping.common.skip_validation = true;
        let mut four = LadderConfig::default_for(GameKind::Target);
        four.common.seats = Some(4);
        type Case<'a> = (&'a str, Option<(&'a ServedGame, &'a LadderConfig)>, AfterCompile);
        let cases: [Case; 4] = [
            ("validated ladder", Some((&snake, &validated)), AfterCompile::Validate { seats: 2 }),
            ("its seats as the ladder sets them", Some((&target, &four)), AfterCompile::Validate { seats: 4 }),
            ("skip_validation", Some((&snake, &skipping)), AfterCompile::PlayAtOnce { why: "its ladder has no validation games" }),
            ("unreadable configuration", None, AfterCompile::PlayAtOnce { why: "its ladder's configuration could not be read" }),
        ];
        for (what, ladder, want) in cases {
            assert_eq!(after_compile(ladder), want, "{what}");
        }
    }

    fn seat(seat: i32, status: BotStatus) -> SeatOutcome {
        SeatOutcome {
            seat,
            score: 1.0,
            rank: 1,
            result: MatchResult::Tie,
            status,
            stderr: String::new(),
            stderr_turns: Vec::new(),
            moves: 10,
            timeouts: 0,
            invalid_moves: 0,
        }
    }

    /// A record of `n` matches, the first `failed` of them failures.
    fn record(bot: i64, n: usize, failed: usize) -> BotRecord {
        let recent = (0..n).map(|i| if i < failed { "crashed" } else { "ok" }.to_owned()).collect();
        BotRecord { bot, disabled: false, recent }
    }

    fn finished<'a>(role: Role, seats: &'a [SeatOutcome], bots: Vec<BotRecord>) -> Finished<'a> {
        Finished { role, seats, turns: 50, queued_rated: true, rating_system: Some(RatingSystem::WengLin), superseded_seats: 0, bots }
    }

    #[test]
    fn whom_a_match_disables() {
        let seats = [seat(0, BotStatus::Ok), seat(1, BotStatus::Ok)];
        // (records, bots disabled)
        let cases: Vec<(Vec<BotRecord>, Vec<i64>)> = vec![
            (vec![record(1, 10, 7), record(2, 10, 6)], vec![1]),
            (vec![record(1, 10, 10), record(2, 10, 9)], vec![1, 2]),
            // Fewer than the window: a newcomer is not judged yet.
            (vec![record(1, 9, 9)], vec![]),
            // Only the window counts (newest first).
            (
                vec![BotRecord { bot: 1, disabled: false, recent: [vec!["ok".to_owned(); 4], vec!["crashed".to_owned(); 8]].concat() }],
                vec![],
            ),
            // Already disabled: left as it is.
            (vec![BotRecord { disabled: true, ..record(1, 10, 10) }], vec![]),
            // Timeouts, invalid answers and freezing are play, not failure;
            // the old runner's `disqualified` is failure.
            (
                vec![BotRecord {
                    bot: 3,
                    disabled: false,
                    recent: ["timed_out", "frozen", "invalid_output"].repeat(4).iter().map(|s| s.to_string()).collect(),
                }],
                vec![],
            ),
            (vec![BotRecord { bot: 4, disabled: false, recent: vec!["disqualified".to_owned(); 10] }], vec![4]),
        ];
        for (bots, want) in cases {
            let s = settle(&finished(Role::Ladder, &seats, bots.clone()));
            let got: Vec<i64> = s.disable.iter().map(|(b, _)| *b).collect();
            assert_eq!(got, want, "{bots:?}");
            for (_, why) in &s.disable {
                assert!(why.contains("of its last 10 matches") && why.contains("submit a fixed version"), "{why}");
            }
        }
    }

    #[test]
    fn whether_a_match_is_rated() {
        let seats = [seat(0, BotStatus::Ok), seat(1, BotStatus::Ok)];
        let base = || finished(Role::Ladder, &seats, vec![record(1, 3, 0), record(2, 3, 0)]);
        // (the facts, the decision)
        let cases: Vec<(Finished, Result<RatingSystem, Unrated>)> = vec![
            (base(), Ok(RatingSystem::WengLin)),
            (Finished { rating_system: Some(RatingSystem::TrueSkill), ..base() }, Ok(RatingSystem::TrueSkill)),
            (Finished { queued_rated: false, ..base() }, Err(Unrated::Queued)),
            (Finished { rating_system: None, ..base() }, Err(Unrated::NoRatingSystem)),
            (Finished { superseded_seats: 1, ..base() }, Err(Unrated::Superseded)),
            (Finished { role: Role::Validation { version: 9 }, ..base() }, Err(Unrated::Validation)),
        ];
        for (facts, want) in cases {
            assert_eq!(settle(&facts).rating, want, "{facts:?}");
        }
    }

    #[test]
    fn a_validation_game_is_judged_and_nothing_else() {
        let crashed = [seat(0, BotStatus::Crashed { code: Some(1), signal: None, turn: 2 }), seat(1, BotStatus::Ok)];
        let s = settle(&finished(Role::Validation { version: 7 }, &crashed, vec![record(1, 10, 10)]));
        assert!(matches!(&s.validation, Some((7, Verdict::Refused(log))) if log.contains("crashed on turn 2")), "{s:?}");
        assert!(s.disable.is_empty(), "a validation game counts for no failure tally");
        let fine = [seat(0, BotStatus::Ok), seat(1, BotStatus::Ok)];
        let s = settle(&finished(Role::Validation { version: 8 }, &fine, vec![]));
        assert!(matches!(&s.validation, Some((8, Verdict::Passed(_)))), "{s:?}");
        // Other matches have no verdict.
        assert_eq!(settle(&finished(Role::Challenge, &fine, vec![])).validation, None);
        assert_eq!(settle(&finished(Role::AbTest { test: 1 }, &fine, vec![])).validation, None);
    }

    #[test]
    fn an_ab_test_game_is_never_rated_even_if_queued_rated() {
        let fine = [seat(0, BotStatus::Ok), seat(1, BotStatus::Ok)];
        // `finished` queues it rated, with a rating system: still unrated.
        assert_eq!(settle(&finished(Role::AbTest { test: 2 }, &fine, vec![])).rating, Err(Unrated::AbTest));
        assert_eq!(settle(&finished(Role::Challenge, &fine, vec![])).rating, Ok(RatingSystem::WengLin));
    }

    #[test]
    fn roles_read_as_the_audit_trail_names_them() {
        assert_eq!(Role::Validation { version: 3 }.describe(), "the validation game of version 3");
        assert_eq!(Role::Challenge.describe(), "a challenge");
        assert_eq!(Role::AbTest { test: 4 }.describe(), "a game of A/B test 4");
        assert_eq!(Role::Finals.describe(), "a finals match");
        assert_eq!(Role::Ladder.describe(), "a ladder match");
    }
}
