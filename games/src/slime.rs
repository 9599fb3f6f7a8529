//! Slime for four bots, a new process per turn with the state in argv.
//!
//! Rules from the seed and its original controller:
//! * An 8 × 8 board indexed (row, column) from (0, 0) at the top left;
//!   players 1-4 start with one slime in the top-left, top-right,
//!   bottom-left and bottom-right corners. No randomness.
//! * Players move in turn 1, 2, 3, 4. The request (the bot's argument) is
//!   `p,row0,row1,...`: its player number, then the rows with `.` for empty.
//! * The answer is `r0 c0 r1 c1` (only the first line is read), read as
//!   the original controller read it ([`read_move`]): the first four
//!   integers of the line, whatever follows them. Distance is Chebyshev
//!   (diagonals count):
//!   - spread: distance 1 to an empty cell; a new slime there;
//!   - jump: distance exactly 2 to an empty cell; the slime moves there;
//!   - after a spread or jump, enemy slimes among the 8 neighbours of the
//!     target become the mover's;
//!   - merge: distance 1 to one's own slime; the moved slime is removed and
//!     the *empty* neighbours of the target (not the vacated cell) become the
//!     mover's; nothing is converted.
//! * Anything else (invalid or unparsable) is a pass, as in the original.
//!   koth records it as invalid output with the reason.
//! * A player with no slime is still asked and can only pass.
//! * The game ends when the board is full or after 2000 turns in all.
//!   Score = squares held; matches of a round robin are averaged by the
//!   scheduler.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::view::{self, Mark, View};
use crate::words::{self, Names, SeatRole};
use crate::{results_by_score, Judgement, Referee, Reply, Request, Seat, SeatResult, Step, Verdict};

pub const SIZE: usize = 8;
pub const MAX_TURNS: u32 = 2000;

pub struct Slime {
    size: usize,
    /// How an answer is read.
    reading: Reading,
    /// 0 empty, 1..=4 players.
    board: Vec<u8>,
    turn: u32,
    /// The last turn's move, for the view: seat and `r0 c0 r1 c1`.
    last_move: Option<(Seat, [usize; 4])>,
}

/// How an answer's line is read. A replay's initial state names the
/// reading its match was played with (`"answers": "original"`); one that
/// names none was played before koth read answers as the original
/// controller did, and is checked and drawn with the reading it had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// [`read_move`]: the first four integers, as the original controller.
    Original,
    /// Exactly four fields, each a coordinate (koth until 2026-11-27):
    /// `0 0 1 1 extra` was a pass.
    FourFields,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Spread,
    Jump,
    Merge,
}

impl Slime {
    pub fn new(size: usize) -> Slime {
        let mut board = vec![0; size * size];
        let last = size - 1;
        for (p, (r, c)) in [(0, 0), (0, last), (last, 0), (last, last)].into_iter().enumerate() {
            board[r * size + c] = p as u8 + 1;
        }
        Slime { size, reading: Reading::Original, board, turn: 0, last_move: None }
    }

    /// A board from rows of `.1234` (for tests and replays).
    pub fn from_rows(rows: &[&str]) -> Slime {
        let size = rows.len();
        let board = rows.iter().flat_map(|r| r.bytes().map(|b| if b == b'.' { 0 } else { b - b'0' })).collect();
        Slime { size, reading: Reading::Original, board, turn: 0, last_move: None }
    }

    pub fn rows(&self) -> Vec<String> {
        self.board.chunks(self.size).map(|row| row.iter().map(|&v| if v == 0 { '.' } else { (b'0' + v) as char }).collect()).collect()
    }

    fn at(&self, r: usize, c: usize) -> u8 {
        self.board[r * self.size + c]
    }

    fn set(&mut self, r: usize, c: usize, v: u8) {
        self.board[r * self.size + c] = v;
    }

    fn neighbours(&self, r: usize, c: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let n = self.size as isize;
        (-1isize..=1).flat_map(move |dr| (-1isize..=1).map(move |dc| (dr, dc))).filter_map(move |(dr, dc)| {
            let (rr, cc) = (r as isize + dr, c as isize + dc);
            ((dr, dc) != (0, 0) && rr >= 0 && cc >= 0 && rr < n && cc < n).then_some((rr as usize, cc as usize))
        })
    }

    fn whose_turn(&self) -> u8 {
        (self.turn % 4) as u8 + 1
    }

    fn over(&self) -> bool {
        self.turn >= MAX_TURNS || self.board.iter().all(|&v| v != 0)
    }

    /// Check a move for `player`; `Err` says why it is not one.
    pub fn judge(&self, player: u8, text: &str) -> Result<(Action, [usize; 4]), String> {
        let mut v = [0usize; 4];
        match self.reading {
            Reading::Original => {
                for (slot, n) in v.iter_mut().zip(read_move(text)?) {
                    *slot = usize::try_from(n)
                        .ok()
                        .filter(|&n| n < self.size)
                        .ok_or_else(|| format!("{n} is off the board (0-{})", self.size - 1))?;
                }
            }
            Reading::FourFields => v = crate::parse_coordinates::<4>(text, self.size, "4 integers \"row col row col\"")?,
        }
        let [r0, c0, r1, c1] = v;
        if self.at(r0, c0) != player {
            return Err(format!("({r0}, {c0}) is not your slime"));
        }
        let dist = r0.abs_diff(r1).max(c0.abs_diff(c1));
        let target = self.at(r1, c1);
        match (dist, target) {
            (1, 0) => Ok((Action::Spread, v)),
            (2, 0) => Ok((Action::Jump, v)),
            (1, t) if t == player => Ok((Action::Merge, v)),
            (1 | 2, _) => Err(format!("({r1}, {c1}) is occupied")),
            _ => Err(format!("({r1}, {c1}) is {dist} squares away; spread and merge go 1, jump 2")),
        }
    }

    fn play(&mut self, player: u8, action: Action, [r0, c0, r1, c1]: [usize; 4]) {
        match action {
            Action::Spread | Action::Jump => {
                if action == Action::Jump {
                    self.set(r0, c0, 0);
                }
                self.set(r1, c1, player);
                let conv: Vec<_> = self.neighbours(r1, c1).filter(|&(r, c)| self.at(r, c) != 0).collect();
                for (r, c) in conv {
                    self.set(r, c, player);
                }
            }
            Action::Merge => {
                self.set(r0, c0, 0);
                let fill: Vec<_> = self.neighbours(r1, c1).filter(|&(r, c)| self.at(r, c) == 0 && (r, c) != (r0, c0)).collect();
                for (r, c) in fill {
                    self.set(r, c, player);
                }
            }
        }
    }

    pub fn scores(&self) -> [usize; 4] {
        let mut s = [0; 4];
        for &v in &self.board {
            if v > 0 {
                s[v as usize - 1] += 1;
            }
        }
        s
    }
}

impl Referee for Slime {
    fn seats(&self) -> usize {
        4
    }

    fn step(&mut self) -> Option<Step> {
        if self.over() {
            return None;
        }
        let p = self.whose_turn();
        let payload = format!("{p},{}", self.rows().join(","));
        Some(Step { notices: vec![], requests: vec![Request::new(p as usize - 1, payload)] })
    }

    fn apply(&mut self, replies: Vec<(Seat, Reply)>) -> (Vec<Judgement>, Vec<serde_json::Value>) {
        let player = self.whose_turn();
        let seat = player as usize - 1;
        let reply = replies.into_iter().find(|(s, _)| *s == seat).map(|(_, r)| r).unwrap_or(Reply::Gone);
        self.turn += 1;
        self.last_move = None;
        let (verdict, event) = match reply {
            Reply::Answer(text) => {
                let first = text.lines().next().unwrap_or("").to_owned();
                match self.judge(player, &first) {
                    Ok((action, v)) => {
                        self.play(player, action, v);
                        self.last_move = Some((seat, v));
                        let name = format!("{action:?}").to_lowercase();
                        (
                            Verdict::Accepted { r#move: first.trim().to_owned() },
                            json!({"type": name, "seat": seat, "from": [v[0], v[1]], "to": [v[2], v[3]], "board": self.rows()}),
                        )
                    }
                    Err(reason) => (
                        Verdict::Invalid { answer: first, reason: format!("{reason}; treated as a pass") },
                        json!({"type": "pass", "seat": seat}),
                    ),
                }
            }
            // The policy is soft: the runner passes late answers on as Answer.
            Reply::Timeout => (Verdict::TimedOut, json!({"type": "pass", "seat": seat})),
            Reply::Gone => (Verdict::Gone, json!({"type": "pass", "seat": seat})),
        };
        (vec![Judgement { seat, verdict }], vec![event])
    }

    fn is_over(&self) -> bool {
        self.over()
    }

    fn standings(&self) -> Vec<SeatResult> {
        results_by_score(&self.scores().map(|s| s as f64))
    }

    fn initial_state(&self) -> serde_json::Value {
        match self.reading {
            Reading::Original => json!({"size": self.size, "board": self.rows(), "answers": "original"}),
            Reading::FourFields => json!({"size": self.size, "board": self.rows()}),
        }
    }

    fn replaying(&mut self, initial: &Value) {
        if initial.get("answers").and_then(Value::as_str) != Some("original") {
            self.reading = Reading::FourFields;
        }
    }

    fn view(&self) -> View {
        let mut v = View::grid(self.size, self.size);
        for (cell, &p) in v.cells.iter_mut().zip(&self.board) {
            *cell = if p == 0 { view::EMPTY } else { view::seat_code(p as usize - 1) };
        }
        if let Some((seat, [r0, c0, r1, c1])) = self.last_move {
            v.marks.push(Mark { cell: r0 * self.size + c0, seat: Some(seat), label: "from".into() });
            v.marks.push(Mark { cell: r1 * self.size + c1, seat: Some(seat), label: "moved".into() });
        }
        let s = self.scores();
        v.caption = format!("turn {}: squares {} {} {} {}", self.turn, s[0], s[1], s[2], s[3]);
        v
    }
}

/// Bytes of an answer's line the original controller read: `fgets` into a
/// buffer of 128.
pub const ORIGINAL_LINE_BYTES: usize = 127;

/// The four integers of an answer's first line (without its line ending),
/// read exactly as the original controller (`tckmn/slime-territory-war`,
/// `Player::getMove`) read them: `fgets` of at most 127 bytes into a C
/// string (so a NUL byte ends it), then `iss >> n` four times.
///
/// So each integer is `[+-]?[0-9]+` after any ASCII whitespace (C's
/// `isspace`: space, `\t`, `\n`, `\v`, `\f`, `\r`), and it ends at the first
/// character that is not a digit: `0 0 1 1 extra` is the move `0 0 1 1`, so
/// are `0 0 1 1;` and `0 0 1 1.5`, and `0-1-2-3` reads 0, -1, -2, -3 (a
/// sign starts the next number). Nothing after the fourth is looked at.
/// Refused, as there: fewer than four numbers, or anything else where a
/// number should start (`1,2,3,4`, `[0, 0, 1, 1]`, `pass`); a number too
/// large for a C `int`.
///
/// The original also refused a fourth number that reached the end of what
/// it read (`iss.eof()`): its text always ended in the newline, unless the
/// bot wrote none before exiting, or the line was cut at 127 bytes or by a
/// NUL. koth's runner hands over the line without its ending and cannot
/// tell whether there was one, so the end of the line counts as the
/// newline; a line cut at 127 bytes or by a NUL has none, as there.
pub fn read_move(line: &str) -> Result<[i64; 4], String> {
    let bytes = line.as_bytes();
    let nul = bytes.iter().position(|&b| b == 0);
    let end = nul.unwrap_or(bytes.len()).min(ORIGINAL_LINE_BYTES);
    let cut = end < bytes.len();
    let text = &bytes[..end];
    let usage = "4 integers \"row col row col\"";
    let mut at = 0;
    let mut v = [0i64; 4];
    for (i, slot) in v.iter_mut().enumerate() {
        while at < text.len() && matches!(text[at], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
            at += 1;
        }
        if at == text.len() {
            return Err(format!("expected {usage}, found {i}"));
        }
        let start = at;
        let negative = text[at] == b'-';
        if matches!(text[at], b'+' | b'-') {
            at += 1;
        }
        let digits = at;
        let mut n: i64 = 0;
        while at < text.len() && text[at].is_ascii_digit() {
            n = (n * 10 + i64::from(text[at] - b'0')).min(1 << 40);
            at += 1;
        }
        let word = String::from_utf8_lossy(&text[start..]);
        let word = word.split_ascii_whitespace().next().unwrap_or("");
        if at == digits {
            return Err(format!("expected {usage}: {word:?} is not an integer"));
        }
        *slot = if negative { -n } else { n };
        if *slot > i64::from(i32::MAX) || *slot < i64::from(i32::MIN) {
            return Err(format!("{word} is too large a number"));
        }
        if at == text.len() && (i < 3 || cut) {
            return Err(if i < 3 {
                format!("expected {usage}, found {}", i + 1)
            } else if nul == Some(end) {
                "a NUL byte right after the fourth number ends what the original read: no line ending after it".into()
            } else {
                format!("the fourth number runs to byte {ORIGINAL_LINE_BYTES} of the line, where the original stopped reading")
            });
        }
    }
    Ok(v)
}

/// Every player plays the same game from its own corner: no seat has a
/// role.
pub fn seat_role(_seat: Seat) -> Option<SeatRole> {
    None
}

/// Slime's replay events, as [`Slime::apply`] writes them: a move (its
/// type is the action) with the board after it, or a pass.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    Spread { seat: Seat, from: [usize; 2], to: [usize; 2], board: Vec<String> },
    Jump { seat: Seat, from: [usize; 2], to: [usize; 2], board: Vec<String> },
    Merge { seat: Seat, from: [usize; 2], to: [usize; 2], board: Vec<String> },
    Pass { seat: Seat },
}

/// An event in words, places as `row col` like the protocol's answers,
/// with the squares the mover holds after it; `None` if it is not one of
/// Slime's.
pub fn event_sentence(event: &Value, names: Names) -> Option<String> {
    let (verb, seat, [r0, c0], [r1, c1], board) = match words::parse::<Event>(event)? {
        Event::Spread { seat, from, to, board } => ("spread", seat, from, to, board),
        Event::Jump { seat, from, to, board } => ("jumped", seat, from, to, board),
        Event::Merge { seat, from, to, board } => ("merged", seat, from, to, board),
        Event::Pass { seat } => return Some(format!("{} passed", names.of(seat))),
    };
    // The board writes player p (seat p - 1) as the digit p.
    let mark = char::from_digit(seat as u32 + 1, 10)?;
    let held = board.iter().flat_map(|row| row.chars()).filter(|&c| c == mark).count();
    Some(format!("{} {verb} {r0} {c0} → {r1} {c1}, now holding {}", names.of(seat), words::count(held, "square", "squares")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GameKind;

    /// The three examples of the seed: (move, board before, board after).
    #[test]
    fn the_seeds_examples() {
        let cases: &[(&str, [&str; 4], [&str; 4])] = &[
            ("0 1 1 2", ["11.22", "1..22", "..22.", "....."], ["11.12", "1.112", "..11.", "....."]),
            ("0 1 2 3", ["11..2", "1...2", "....2", "...22"], ["1...2", "1...1", "...11", "...11"]),
            ("0 1 1 2", ["11..2", "1.1.2", "....2", "..222"], ["1.112", "11112", ".1112", "..222"]),
        ];
        for (mv, before, after) in cases {
            // The seed's figures are 4 × 5; pad them into a 5 × 5 board.
            let mut rows: Vec<String> = before.iter().map(|r| r.to_string()).collect();
            rows.push(".....".into());
            let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
            let mut g = Slime::from_rows(&refs);
            let (action, v) = g.judge(1, mv).unwrap();
            g.play(1, action, v);
            assert_eq!(&g.rows()[..4], &after.map(String::from), "{mv} ({action:?})");
        }
    }

    #[test]
    fn invalid_moves_are_passes_with_a_reason() {
        let g = Slime::new(8);
        let cases = [
            ("", "expected 4 integers"),
            ("0 0 0", "expected 4 integers"),
            ("a b c d", "\"a\" is not an integer"),
            ("0 0 0 9", "9 is off the board (0-7)"),
            ("0 0 -1 0", "-1 is off the board (0-7)"),
            ("0 0 1 x1", "\"x1\" is not an integer"),
            ("0 7 0 6", "not your slime"),
            ("0 0 0 3", "3 squares away"),
            ("0 0 0 0", "0 squares away"),
        ];
        for (mv, why) in cases {
            let err = g.judge(1, mv).unwrap_err();
            assert!(err.contains(why), "{mv:?}: {err}");
        }
    }

    /// What the original controller's `iss >> n` (four times, on at most
    /// 127 bytes of the first line) made of an answer: its four numbers, or
    /// why it was a pass.
    #[test]
    fn answers_are_read_as_the_original_controller_read_them() {
        let pad = |n: usize, rest: &str| format!("{}{rest}", " ".repeat(n));
        let long = format!("0 0 1 1 {}", "x".repeat(200));
        let read: &[(String, [i64; 4])] = &[
            ("0 0 1 1".into(), [0, 0, 1, 1]),
            ("0 0 1 1 extra".into(), [0, 0, 1, 1]),
            ("0 0 1 1 9 9".into(), [0, 0, 1, 1]),
            ("  0\t0   1 1  ".into(), [0, 0, 1, 1]),
            ("1\x0b2\x0c3\r4".into(), [1, 2, 3, 4]),
            ("0 0 1 1;".into(), [0, 0, 1, 1]),
            ("0 0 1 1.5".into(), [0, 0, 1, 1]),
            ("0 0 1 1x".into(), [0, 0, 1, 1]),
            ("0 0 1 0x10".into(), [0, 0, 1, 0]),
            ("+0 +0 +1 +1".into(), [0, 0, 1, 1]),
            ("007 00 1 1".into(), [7, 0, 1, 1]),
            ("-0 0 1 1".into(), [0, 0, 1, 1]),
            ("0-1-2+3".into(), [0, -1, -2, 3]),
            ("-2147483648 2147483647 0 0".into(), [i64::from(i32::MIN), i64::from(i32::MAX), 0, 0]),
            ("0 0 1 1 \0 junk".into(), [0, 0, 1, 1]),
            (long, [0, 0, 1, 1]),
            // 119 + 7 bytes, then a space: the 127th byte ends the fourth number.
            (pad(119, "0 0 1 1 extra"), [0, 0, 1, 1]),
        ];
        for (line, v) in read {
            assert_eq!(read_move(line).as_ref(), Ok(v), "{line:?}");
        }
        let refused: &[(String, &str)] = &[
            ("".into(), "found 0"),
            ("   ".into(), "found 0"),
            ("0 0 1".into(), "found 3"),
            ("0 0 1 ".into(), "found 3"),
            ("1,2,3,4".into(), "\",2,3,4\" is not an integer"),
            ("[0, 0, 1, 1]".into(), "\"[0,\" is not an integer"),
            ("pass".into(), "\"pass\" is not an integer"),
            ("0 0 1 x1".into(), "\"x1\" is not an integer"),
            ("- 0 0 1 1".into(), "\"-\" is not an integer"),
            ("0 0 1 +".into(), "\"+\" is not an integer"),
            ("2147483648 0 0 0".into(), "2147483648 is too large"),
            ("0 0 -2147483649 0".into(), "-2147483649 is too large"),
            ("0 0\x001 1".into(), "found 2"),
            ("0 0 1 1\x00 junk".into(), "a NUL byte right after the fourth number"),
            (pad(120, "0 0 1 1 extra"), "runs to byte 127"),
            (pad(121, "0 0 1 1 extra"), "found 3"),
            ("0\u{a0}0 1 1".into(), "is not an integer"),
        ];
        for (line, why) in refused {
            let err = read_move(line).unwrap_err();
            assert!(err.contains(why), "{line:?}: {err}");
        }
        // An answer the original played is a move here too, not a pass.
        let g = Slime::new(8);
        assert_eq!(g.judge(1, "0 0 1 1 extra").unwrap(), (Action::Spread, [0, 0, 1, 1]));
        assert_eq!(g.judge(2, "0 7 0 5 because").unwrap(), (Action::Jump, [0, 7, 0, 5]));
    }

    #[test]
    fn a_game_runs_in_turn_order_and_ends_when_full() {
        let mut g = Slime::new(4);
        let mut seen = Vec::new();
        while let Some(step) = g.step() {
            let req = &step.requests[0];
            seen.push(req.seat);
            // A greedy-ish legal move: spread from the first own slime into any empty neighbour.
            let p = req.seat as u8 + 1;
            let mv = (0..16)
                .filter(|&i| g.board[i] == p)
                .flat_map(|i| {
                    let (r, c) = (i / 4, i % 4);
                    g.neighbours(r, c)
                        .filter(|&(rr, cc)| g.at(rr, cc) == 0)
                        .map(move |(rr, cc)| format!("{r} {c} {rr} {cc}"))
                        .collect::<Vec<_>>()
                })
                .next()
                .unwrap_or_else(|| "0 0 0 0".into());
            g.apply(vec![(req.seat, Reply::Answer(mv))]);
        }
        assert_eq!(&seen[..8], &[0, 1, 2, 3, 0, 1, 2, 3]);
        let r = g.result().unwrap();
        assert_eq!(r.iter().map(|s| s.score).sum::<f64>(), 16.0, "the board is full");
    }

    #[test]
    fn the_request_is_player_and_rows() {
        let mut g = Slime::new(8);
        let step = g.step().unwrap();
        assert_eq!(step.requests[0].payload, "1,1......2,........,........,........,........,........,........,3......4");
    }

    #[test]
    fn the_game_stops_after_2000_turns() {
        let mut g = Slime::new(8);
        for _ in 0..MAX_TURNS {
            let s = g.step().unwrap().requests[0].seat;
            g.apply(vec![(s, Reply::Answer("pass".into()))]);
        }
        assert!(g.step().is_none());
        assert_eq!(g.result().unwrap()[0].score, 1.0);
    }

    /// Each of Slime's events in words, with the mover's squares counted on
    /// the board the event carries; what is not one of them is shown as
    /// written.
    #[test]
    fn events_in_words() {
        let names = ["alice".to_owned(), "bob".to_owned(), "carol".to_owned(), "dave".to_owned()];
        let board = ["11.....2", "11......", "........", "........", "........", "........", "........", "3.....44"];
        let cases = [
            (
                json!({"type": "spread", "seat": 0, "from": [0, 0], "to": [1, 1], "board": board}),
                "alice spread 0 0 → 1 1, now holding 4 squares",
            ),
            (
                json!({"type": "jump", "seat": 1, "from": [0, 7], "to": [0, 5], "board": board}),
                "bob jumped 0 7 → 0 5, now holding 1 square",
            ),
            (
                json!({"type": "merge", "seat": 3, "from": [7, 7], "to": [7, 6], "board": board}),
                "dave merged 7 7 → 7 6, now holding 2 squares",
            ),
            (json!({"type": "pass", "seat": 2}), "carol passed"),
            (json!({"type": "pass", "seat": 5}), "seat 6 passed"),
            // Malformed: a move without its board, a place with one number.
            (
                json!({"type": "spread", "seat": 0, "from": [0, 0], "to": [1, 1]}),
                r#"spread {"from":[0,0],"seat":0,"to":[1,1]} (an event this viewer cannot put in words)"#,
            ),
            (
                json!({"type": "jump", "seat": 0, "from": [0], "to": [1, 1], "board": []}),
                r#"jump {"board":[],"from":[0],"seat":0,"to":[1,1]} (an event this viewer cannot put in words)"#,
            ),
            (json!({"seat": 0}), r#"{"seat":0} (not a game event)"#),
        ];
        for (event, sentence) in cases {
            assert_eq!(GameKind::Slime.event_sentence(&event, Names(&names)), sentence, "{event}");
        }
        assert_eq!(GameKind::Slime.seat_roles(4), vec![None; 4]);
    }
}
