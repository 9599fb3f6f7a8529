//! The validation game: a new version's first match, before it plays on
//! its ladder (Kaggle's validation episode).
//!
//! A compiled version does not replace its bot's current version at once.
//! It first plays one short, unrated match in which every seat is a copy of
//! itself ([`MAX_TURNS`] turns at most, [`MAX_SECONDS`] of wall time at
//! most, the ladder's own limits if they are tighter). The match is queued
//! with the compiles' priority, so the author hears within seconds. Then
//! [`judge`] (pure, tested with a table) decides:
//!
//! * **refused** when a copy's program failed (crashed, ran out of memory,
//!   stopped reading, closed its output, never connected), was frozen for
//!   timeouts, never answered within the time per move, or answered only
//!   invalid moves. The version's status becomes `refused`, its validation
//!   log says why and holds that copy's stderr, and the bot's previous
//!   version keeps playing;
//! * **passed** otherwise: the version becomes the bot's current version
//!   (if no newer one did meanwhile).
//!
//! A validation game is not its ladder's: no format counts it and no ladder
//! page lists it (`matches.validates`). Hosts turn it off per ladder with
//! the common setting `skip_validation`. A validation game that is never
//! played (cancelled with its bot, or failed on the runners) refuses the
//! version with a log that says so ([`not_played`]).

use crate::format::CommonSettings;
use crate::outcome::SeatOutcome;

/// Turns a validation game lasts at most: enough to start, read the
/// protocol and play a few hundred moves; a bot that fails later is caught
/// by its ladder's failure count.
pub const MAX_TURNS: u32 = 300;
/// Wall time a validation game lasts at most (a bot that never answers
/// costs the whole time per move on every turn of a slow game).
pub const MAX_SECONDS: u32 = 60;
/// Bytes of the failing copy's stderr kept in the log (its end).
const STDERR_TAIL: usize = 8 << 10;

/// A validation game's limits: its ladder's, or [`MAX_TURNS`] and
/// [`MAX_SECONDS`], whichever are tighter. It carries no bot data: its
/// seats are copies of one new version playing itself, not its matches on
/// the ladder, so the version's first ladder match starts empty.
pub fn limits(ladder: CommonSettings) -> CommonSettings {
    let tighter = |own: Option<u32>, cap: u32| Some(own.map_or(cap, |o| o.min(cap)));
    CommonSettings {
        max_turns: tighter(ladder.max_turns, MAX_TURNS),
        max_match_seconds: tighter(ladder.max_match_seconds, MAX_SECONDS),
        bot_data: false,
        bot_data_max_bytes: None,
        bot_data_max_files: None,
        ..ladder
    }
}

/// What the validation game showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The version plays: a summary for its log.
    Passed(String),
    /// The version is refused: why, and the failing copy's stderr.
    Refused(String),
}

/// Judge a validation game from its seats (every seat the same version).
pub fn judge(seats: &[SeatOutcome], turns: u32) -> Verdict {
    for s in seats {
        if let Some(why) = refusal(s) {
            let seat = s.seat + 1;
            let mut log = format!(
                "refused by its validation game (a match against copies of itself): the copy in seat {seat} {why}. \
                 The bot's previous version, if any, keeps playing; fix this and submit again."
            );
            let tail = tail(&s.stderr, STDERR_TAIL);
            if tail.is_empty() {
                log.push_str(&format!("\n\n(the copy in seat {seat} wrote nothing on stderr)"));
            } else {
                let cut = if tail.len() < s.stderr.len() { " (its end)" } else { "" };
                log.push_str(&format!("\n\nIts stderr{cut}:\n{tail}"));
            }
            return Verdict::Refused(log);
        }
    }
    let moves: u32 = seats.iter().map(|s| s.moves).sum();
    let timeouts: u32 = seats.iter().map(|s| s.timeouts).sum();
    let invalid: u32 = seats.iter().map(|s| s.invalid_moves).sum();
    Verdict::Passed(format!(
        "passed its validation game: {} copies played {turns} turns, {moves} answers ({timeouts} timeouts, {invalid} invalid)",
        seats.len()
    ))
}

/// Why one copy's play refuses the version, if it does.
fn refusal(s: &SeatOutcome) -> Option<String> {
    use koth_runner::BotStatus;
    if s.status.is_bot_failure() {
        return Some(s.status.describe());
    }
    if let BotStatus::Frozen { .. } = s.status {
        return Some(format!("was {}: it never answers in time", s.status.describe()));
    }
    if s.moves == 0 && s.timeouts > 0 {
        return Some(format!("never answered within the time per move ({} timeouts, no answer)", s.timeouts));
    }
    if s.moves > 0 && s.invalid_moves >= s.moves {
        let last = match &s.status {
            BotStatus::InvalidOutput { answer, reason, .. } => format!("; the last was {answer:?}: {reason}"),
            _ => String::new(),
        };
        return Some(format!("answered {} times and every answer was invalid{last}", s.moves));
    }
    None
}

/// Judge an added game's validation match, played between its example
/// bots (`names`, in seat order): refused when its referee failed (with
/// the referee's stderr for the host), or when an example bot failed as a
/// version's copy would be refused for ([`judge`]): a game whose own
/// examples cannot play it is not offered.
pub fn judge_game(names: &[String], seats: &[SeatOutcome], turns: u32, referee_failed: Option<&str>, referee_stderr: &str) -> Verdict {
    let stderr_note = |log: &mut String, whose: &str, text: &str| {
        let t = tail(text, STDERR_TAIL);
        if t.is_empty() {
            log.push_str(&format!("\n\n({whose} wrote nothing on stderr)"));
        } else {
            let cut = if t.len() < text.len() { " (its end)" } else { "" };
            log.push_str(&format!("\n\n{whose}'s stderr{cut}:\n{t}"));
        }
    };
    if let Some(reason) = referee_failed {
        let mut log = format!(
            "refused: in the validation match between its example bots, the referee failed on turn {turns}: {reason}. \
             Fix the referee (try it with `koth match --game FOLDER`) and add the game again."
        );
        stderr_note(&mut log, "The referee", referee_stderr);
        return Verdict::Refused(log);
    }
    for s in seats {
        if let Some(why) = refusal(s) {
            let name = names.get(s.seat as usize).map_or("?", String::as_str);
            let mut log = format!(
                "refused: in the validation match between its example bots, {name} (seat {}) {why}. \
                 Every example bot must play the game; fix it (or the referee) and add the game again.",
                s.seat + 1
            );
            stderr_note(&mut log, name, &s.stderr);
            return Verdict::Refused(log);
        }
    }
    let moves: u32 = seats.iter().map(|s| s.moves).sum();
    Verdict::Passed(format!("passed its validation match: {} played {turns} turns, {moves} answers", names.join(", ")))
}

/// The log of a version whose validation game ended without being played
/// (cancelled with its bot, or failed for good on the runners). It is
/// refused: a version no game has shown to play does not replace one that
/// plays. The author may submit it again; the host sees the reason too.
pub fn not_played(why: &str) -> String {
    format!(
        "refused: its validation game was not played ({why}). The bot's previous version, if any, keeps playing; \
         submit the version again, or ask the host if this repeats"
    )
}

/// At most the last `max` bytes of `text`, cut at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use koth_games::MatchResult;
    use koth_runner::BotStatus;

    use super::*;

    fn seat(seat: i32, status: BotStatus, moves: u32, timeouts: u32, invalid: u32, stderr: &str) -> SeatOutcome {
        SeatOutcome {
            seat,
            score: 0.0,
            rank: 1,
            result: MatchResult::Tie,
            status,
            stderr: stderr.into(),
            stderr_turns: Vec::new(),
            moves,
            timeouts,
            invalid_moves: invalid,
        }
    }

    #[test]
    fn what_refuses_a_version_and_what_does_not() {
        let invalid = BotStatus::InvalidOutput { turn: 3, answer: "x".into(), reason: "not a move".into() };
        // (seats, refused?, words the log must hold)
        let cases: Vec<(Vec<SeatOutcome>, bool, &[&str])> = vec![
            (vec![seat(0, BotStatus::Ok, 40, 0, 0, ""), seat(1, BotStatus::Ok, 40, 0, 0, "")], false, &["passed", "80 answers"]),
            // Some timeouts and some invalid answers are play, not failure.
            (vec![seat(0, invalid.clone(), 40, 3, 5, ""), seat(1, BotStatus::Ok, 40, 2, 0, "")], false, &["5 timeouts", "5 invalid"]),
            // A match that asked a seat nothing (the other ended it) passes.
            (vec![seat(0, BotStatus::Ok, 1, 0, 0, ""), seat(1, BotStatus::Ok, 0, 0, 0, "")], false, &["passed"]),
            (
                vec![
                    seat(0, BotStatus::Ok, 4, 0, 0, ""),
                    seat(1, BotStatus::Crashed { code: Some(1), signal: None, turn: 5 }, 4, 0, 0, "boom\n"),
                ],
                true,
                &["seat 2", "crashed on turn 5 (exit code 1)", "Its stderr:\nboom", "previous version"],
            ),
            (
                vec![seat(0, BotStatus::OutOfMemory { turn: 2, limit: Some(64 << 20) }, 1, 0, 0, "")],
                true,
                &["out of memory", "wrote nothing on stderr"],
            ),
            (vec![seat(0, BotStatus::NotConnected { reason: "it never connected".into() }, 0, 0, 0, "")], true, &["never connected"]),
            (vec![seat(0, BotStatus::Frozen { turn: 5, timeouts: 5 }, 0, 5, 0, "")], true, &["frozen", "never answers in time"]),
            // Target freezes nobody: a silent bot is seen by its timeouts.
            (vec![seat(0, BotStatus::Ok, 0, 300, 0, "")], true, &["never answered", "300 timeouts"]),
            // Snake: the first timeout loses; a bot that answered before is playing.
            (vec![seat(0, BotStatus::TimedOut { turn: 1, by_ms: 5 }, 0, 1, 0, "")], true, &["never answered"]),
            (vec![seat(0, BotStatus::TimedOut { turn: 9, by_ms: 5 }, 8, 1, 0, "")], false, &["passed"]),
            (vec![seat(0, invalid.clone(), 7, 0, 7, "")], true, &["every answer was invalid", "\"x\": not a move"]),
        ];
        for (seats, refused, words) in cases {
            let v = judge(&seats, 300);
            let log = match &v {
                Verdict::Passed(l) => {
                    assert!(!refused, "{seats:?} passed: {l}");
                    l
                }
                Verdict::Refused(l) => {
                    assert!(refused, "{seats:?} refused: {l}");
                    l
                }
            };
            for w in words {
                assert!(log.contains(w), "{log:?} lacks {w:?}");
            }
        }
    }

    #[test]
    fn what_refuses_an_added_game_and_what_does_not() {
        let names = vec!["counter.c".to_owned(), "cycler.py".to_owned()];
        let ok = || vec![seat(0, BotStatus::Ok, 100, 0, 0, ""), seat(1, BotStatus::Ok, 100, 2, 0, "")];
        let crashed = vec![
            seat(0, BotStatus::Ok, 4, 0, 0, ""),
            seat(1, BotStatus::Crashed { code: Some(1), signal: None, turn: 5 }, 4, 0, 0, "oops\n"),
        ];
        // (referee failed, its stderr, seats, refused?, words the log must hold)
        type Case = (Option<&'static str>, &'static str, Vec<SeatOutcome>, bool, &'static [&'static str]);
        let cases: Vec<Case> = vec![
            (None, "", ok(), false, &["passed", "counter.c, cycler.py played 100 turns", "200 answers"]),
            (
                Some("it exited (code 1)"),
                "Traceback: boom\n",
                ok(),
                true,
                &["referee failed on turn 100", "exited (code 1)", "The referee's stderr:\nTraceback: boom"],
            ),
            (Some("its line is not JSON"), "", ok(), true, &["not JSON", "The referee wrote nothing on stderr"]),
            (None, "", crashed, true, &["cycler.py (seat 2) crashed on turn 5", "cycler.py's stderr:\noops", "Every example bot"]),
        ];
        for (failed, referee_stderr, seats, refused, words) in cases {
            let v = judge_game(&names, &seats, 100, failed, referee_stderr);
            let log = match &v {
                Verdict::Passed(l) => {
                    assert!(!refused, "{failed:?} passed: {l}");
                    l
                }
                Verdict::Refused(l) => {
                    assert!(refused, "{failed:?} refused: {l}");
                    l
                }
            };
            for w in words {
                assert!(log.contains(w), "{log:?} lacks {w:?}");
            }
        }
    }

    #[test]
    fn limits_are_the_tighter_of_the_ladders_and_the_games() {
        let l = |t, s| CommonSettings { max_turns: t, max_match_seconds: s, seats: Some(4), ..CommonSettings::default() };
        assert_eq!(limits(l(None, None)), l(Some(MAX_TURNS), Some(MAX_SECONDS)));
        assert_eq!(limits(l(Some(20), Some(600))), l(Some(20), Some(MAX_SECONDS)));
        assert_eq!(limits(l(Some(20_000), Some(5))), l(Some(MAX_TURNS), Some(5)));
        // No bot data, whatever the ladder carries.
        let data = CommonSettings { bot_data: true, bot_data_max_bytes: Some(9), ..l(None, None) };
        assert_eq!(limits(data.clone()), l(Some(MAX_TURNS), Some(MAX_SECONDS)));
        assert_eq!(limits(data).data_quota(), Ok(None));
    }

    #[test]
    fn only_the_end_of_a_long_stderr_is_kept() {
        let long = "é".repeat(10_000) + "the end";
        let v = judge(&[seat(0, BotStatus::Crashed { code: None, signal: Some(11), turn: 1 }, 0, 0, 0, &long)], 1);
        let Verdict::Refused(log) = v else { panic!("{v:?}") };
        assert!(log.contains("Its stderr (its end):") && log.ends_with("the end"), "{}", &log[..200]);
        assert!(log.len() < STDERR_TAIL + 1000);
    }
}
