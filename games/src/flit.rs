//! Flit for four bots, one long-lived process each, alternating moves.
//!
//! Rules from the seed, with the decisions a host must make:
//! * 32 × 32 cells on a torus; neighbours are orthogonal only.
//! * **Coordinates** (decision): `x` is the column and `y` the row, both
//!   0..31, as in "x y" screen coordinates.
//! * **Own colour** (decision; the seed does not say how a bot learns it):
//!   the first line each bot receives is its colour alone, `1` to `4`
//!   (seat order). Every other line is an update `x y c` or the request `M`.
//! * An *available* square is empty with 4 empty neighbours. Start: one piece
//!   per bot on a uniformly chosen available square, in seat order, then a
//!   second piece per bot the same way. The 8 updates go to every bot, then
//!   bot 1 gets `M`.
//! * A move `x0 y0 x1 y1` is legal if (x0, y0) holds the bot's piece and
//!   (x1, y1) is empty and next to another of its pieces (decision: the moved
//!   piece itself does not count, as the seed says "to be next to another of
//!   its pieces"). Equal origin and destination is a deliberate pass, not
//!   broadcast, whatever the four numbers are ("If origin and destination
//!   are identical, no move will be made. This is valid and does not lead
//!   to the bot being penalised": `99 99 99 99` too). An illegal or
//!   unparsable answer is a pass, recorded as invalid output with the reason.
//! * After a move, every neutral piece next to the moved piece takes its
//!   colour. Updates go to every bot: origin emptied, destination, conversions.
//! * After every turn (decision: passes included, since "each turn one bot
//!   will move" counts the turn), one square is drawn uniformly; if it is
//!   available a neutral piece (`5`) appears there with probability 1/16.
//! * A bot that timed out 5 turns in a row is frozen (the runner decides and
//!   answers [`Reply::Gone`]); a frozen bot's turns are passes. It is still
//!   asked (the runner answers for it at once, sending it nothing), so each
//!   of its turns, and the neutral draw after it, is in the replay.
//! * The game ends once more than 32 768 turns have been taken (after turn
//!   32 769), when all 4 bots passed in a
//!   row, or when a bot cannot be caught: with D its pieces, A, B, C the
//!   others', N neutral and E empty squares, P = N + E − 4 and
//!   M = max(A, B, C) + P, the game ends if D > M.
//! * Score = pieces. The bot with the most pieces wins; if two or more tie
//!   for the most, none wins (they are recorded as tied).

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::view::{self, Legend, LegendEntry, Mark, View};
use crate::words::{self, Names, SeatRole};
use crate::{parse_coordinates, results_by_score, Judgement, Referee, Reply, Request, Seat, SeatResult, Step, Verdict};

pub const SIZE: usize = 32;
pub const MAX_TURNS: u32 = 32_768;
pub const NEUTRAL: u8 = 5;
pub const NEUTRAL_CHANCE: f64 = 1.0 / 16.0;

pub struct Flit {
    rng: ChaCha8Rng,
    /// Indexed [y][x]: 0 empty, 1..=4 bots, 5 neutral.
    board: Vec<u8>,
    turn: u32,
    /// Seat whose turn is next.
    next: Seat,
    passes_in_a_row: u32,
    ended: Option<&'static str>,
    /// Updates to broadcast with the next step.
    outbox: Vec<String>,
    started: bool,
    initial: Vec<(usize, usize, u8)>,
    /// The last turn's move, for the view: seat and `x0 y0 x1 y1`.
    last_move: Option<(Seat, [usize; 4])>,
}

fn idx(x: usize, y: usize) -> usize {
    y * SIZE + x
}

fn neighbours(x: usize, y: usize) -> [(usize, usize); 4] {
    [((x + 1) % SIZE, y), ((x + SIZE - 1) % SIZE, y), (x, (y + 1) % SIZE), (x, (y + SIZE - 1) % SIZE)]
}

impl Flit {
    pub fn new(seed: u64) -> Flit {
        let mut g = Flit {
            rng: crate::rng(seed),
            board: vec![0; SIZE * SIZE],
            turn: 0,
            next: 0,
            passes_in_a_row: 0,
            ended: None,
            outbox: Vec::new(),
            started: false,
            initial: Vec::new(),
            last_move: None,
        };
        for _round in 0..2 {
            for colour in 1..=4u8 {
                let avail: Vec<(usize, usize)> =
                    (0..SIZE * SIZE).map(|i| (i % SIZE, i / SIZE)).filter(|&(x, y)| g.available(x, y)).collect();
                let (x, y) = avail[g.rng.gen_range(0..avail.len())];
                g.board[idx(x, y)] = colour;
                g.initial.push((x, y, colour));
                g.outbox.push(format!("{x} {y} {colour}"));
            }
        }
        g
    }

    pub fn at(&self, x: usize, y: usize) -> u8 {
        self.board[idx(x, y)]
    }

    fn available(&self, x: usize, y: usize) -> bool {
        self.at(x, y) == 0 && neighbours(x, y).iter().all(|&(a, b)| self.at(a, b) == 0)
    }

    pub fn pieces(&self) -> [usize; 4] {
        let mut n = [0; 4];
        for &v in &self.board {
            if (1..=4).contains(&v) {
                n[v as usize - 1] += 1;
            }
        }
        n
    }

    /// Check `x0 y0 x1 y1` for `colour`. `Ok(None)` is a deliberate pass.
    pub fn judge(&self, colour: u8, text: &str) -> Result<Option<[usize; 4]>, String> {
        // Identical origin and destination is a valid non-move, on the board
        // or not.
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() == 4 && fields[0] == fields[2] && fields[1] == fields[3] && fields.iter().all(|f| f.parse::<i64>().is_ok()) {
            return Ok(None);
        }
        let v = parse_coordinates::<4>(text, SIZE, "\"x0 y0 x1 y1\"")?;
        let [x0, y0, x1, y1] = v;
        if (x0, y0) == (x1, y1) {
            return Ok(None);
        }
        if self.at(x0, y0) != colour {
            return Err(format!("({x0}, {y0}) is not your piece"));
        }
        if self.at(x1, y1) != 0 {
            return Err(format!("({x1}, {y1}) is not empty"));
        }
        let next_to_own = neighbours(x1, y1).iter().any(|&(a, b)| (a, b) != (x0, y0) && self.at(a, b) == colour);
        if !next_to_own {
            return Err(format!("({x1}, {y1}) is not next to another of your pieces"));
        }
        Ok(Some(v))
    }

    /// Play a legal move; returns the changed squares.
    fn play(&mut self, colour: u8, [x0, y0, x1, y1]: [usize; 4]) -> Vec<(usize, usize, u8)> {
        self.board[idx(x0, y0)] = 0;
        self.board[idx(x1, y1)] = colour;
        let mut changes = vec![(x0, y0, 0), (x1, y1, colour)];
        for (a, b) in neighbours(x1, y1) {
            if self.at(a, b) == NEUTRAL {
                self.board[idx(a, b)] = colour;
                changes.push((a, b, colour));
            }
        }
        changes
    }

    /// The catch-up rule: some bot has more pieces than any other can reach.
    pub fn uncatchable(&self) -> Option<usize> {
        let pieces = self.pieces();
        let neutral = self.board.iter().filter(|&&v| v == NEUTRAL).count() as i64;
        let empty = self.board.iter().filter(|&&v| v == 0).count() as i64;
        let potential = neutral + empty - 4;
        (0..4).find(|&s| {
            let best_other = (0..4).filter(|&o| o != s).map(|o| pieces[o] as i64 + potential).max().unwrap_or(0);
            pieces[s] as i64 > best_other
        })
    }

    /// End of a turn: neutral draw, then the end conditions.
    fn end_turn(&mut self, moved: bool, events: &mut Vec<serde_json::Value>) {
        self.turn += 1;
        self.passes_in_a_row = if moved { 0 } else { self.passes_in_a_row + 1 };
        let i = self.rng.gen_range(0..SIZE * SIZE);
        let (x, y) = (i % SIZE, i / SIZE);
        if self.available(x, y) && self.rng.gen_bool(NEUTRAL_CHANCE) {
            self.board[i] = NEUTRAL;
            self.outbox.push(format!("{x} {y} {NEUTRAL}"));
            events.push(json!({"type": "neutral", "x": x, "y": y}));
        }
        self.next = (self.next + 1) % 4;
        if self.turn > MAX_TURNS {
            self.ended = Some("more than 32768 turns");
        } else if self.passes_in_a_row >= 4 {
            self.ended = Some("all four bots passed in a row");
        } else if self.uncatchable().is_some() {
            self.ended = Some("a bot cannot be caught");
        }
        if let Some(why) = self.ended {
            events.push(json!({"type": "end", "reason": why, "pieces": self.pieces()}));
        }
    }
}

impl Referee for Flit {
    fn seats(&self) -> usize {
        4
    }

    fn step(&mut self) -> Option<Step> {
        let mut notices = Vec::new();
        if !self.started {
            self.started = true;
            for s in 0..4 {
                notices.push((s, (s + 1).to_string()));
            }
        }
        for line in self.outbox.drain(..) {
            for s in 0..4 {
                notices.push((s, line.clone()));
            }
        }
        if self.ended.is_some() {
            return None;
        }
        Some(Step { notices, requests: vec![Request::new(self.next, "M")] })
    }

    fn apply(&mut self, replies: Vec<(Seat, Reply)>) -> (Vec<Judgement>, Vec<serde_json::Value>) {
        let seat = self.next;
        let colour = seat as u8 + 1;
        let reply = replies.into_iter().find(|(s, _)| *s == seat).map(|(_, r)| r).unwrap_or(Reply::Gone);
        let mut events = Vec::new();
        self.last_move = None;
        let (verdict, moved) = match reply {
            Reply::Answer(text) => match self.judge(colour, &text) {
                Ok(Some(v)) => {
                    let changes = self.play(colour, v);
                    self.last_move = Some((seat, v));
                    for &(x, y, c) in &changes {
                        self.outbox.push(format!("{x} {y} {c}"));
                    }
                    events.push(json!({"type": "move", "turn": self.turn + 1, "seat": seat, "move": v, "changes": changes}));
                    (Verdict::Accepted { r#move: text.trim().to_owned() }, true)
                }
                Ok(None) => {
                    events.push(json!({"type": "pass", "turn": self.turn + 1, "seat": seat}));
                    (Verdict::Accepted { r#move: text.trim().to_owned() }, false)
                }
                Err(reason) => {
                    events.push(json!({"type": "pass", "turn": self.turn + 1, "seat": seat}));
                    (Verdict::Invalid { answer: text, reason: format!("{reason}; treated as a pass") }, false)
                }
            },
            Reply::Timeout => {
                events.push(json!({"type": "pass", "turn": self.turn + 1, "seat": seat}));
                (Verdict::TimedOut, false)
            }
            Reply::Gone => {
                events.push(json!({"type": "pass", "turn": self.turn + 1, "seat": seat}));
                (Verdict::Gone, false)
            }
        };
        self.end_turn(moved, &mut events);
        (vec![Judgement { seat, verdict }], events)
    }

    fn is_over(&self) -> bool {
        self.ended.is_some()
    }

    fn standings(&self) -> Vec<SeatResult> {
        results_by_score(&self.pieces().map(|p| p as f64))
    }

    fn initial_state(&self) -> serde_json::Value {
        json!({"size": SIZE, "pieces": self.initial})
    }

    fn view(&self) -> View {
        let mut v = View::grid(SIZE, SIZE);
        for (cell, &c) in v.cells.iter_mut().zip(&self.board) {
            *cell = match c {
                0 => view::EMPTY,
                NEUTRAL => b'n',
                c => view::seat_code(c as usize - 1),
            };
        }
        if let Some((seat, [x0, y0, x1, y1])) = self.last_move {
            v.marks.push(Mark { cell: idx(x0, y0), seat: Some(seat), label: "from".into() });
            v.marks.push(Mark { cell: idx(x1, y1), seat: Some(seat), label: "moved".into() });
        }
        let p = self.pieces();
        v.caption = format!("turn {}: pieces {} {} {} {}", self.turn, p[0], p[1], p[2], p[3]);
        if let Some(why) = self.ended {
            v.caption.push_str(&format!("; over: {why}"));
        }
        v
    }

    fn legend(&self) -> Legend {
        vec![LegendEntry { code: 'n', name: "neutral piece".into(), colour: "#9a9a9a".into() }]
    }
}

/// Every bot plays the same game in its own colour: no seat has a role.
pub fn seat_role(_seat: Seat) -> Option<SeatRole> {
    None
}

/// Flit's replay events, as [`Flit::apply`] writes them.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    Move { seat: Seat, r#move: [usize; 4], changes: Vec<(usize, usize, u8)> },
    Pass { seat: Seat },
    Neutral { x: usize, y: usize },
    End { reason: String, pieces: Vec<usize> },
}

/// An event in words, places as `x y` like the protocol's lines; `None` if
/// it is not one of Flit's.
pub fn event_sentence(event: &Value, names: Names) -> Option<String> {
    Some(match words::parse::<Event>(event)? {
        Event::Move { seat, r#move: [x0, y0, x1, y1], changes } => {
            // The changes are the origin, the destination, then each
            // neutral piece converted.
            let taken = match changes.len().saturating_sub(2) {
                0 => String::new(),
                1 => ", taking a neutral piece".to_owned(),
                n => format!(", taking {n} neutral pieces"),
            };
            format!("{} moved {x0} {y0} → {x1} {y1}{taken}", names.of(seat))
        }
        Event::Pass { seat } => format!("{} passed", names.of(seat)),
        Event::Neutral { x, y } => format!("a neutral piece appeared at {x} {y}"),
        Event::End { reason, pieces } => {
            let each: Vec<String> = pieces.iter().enumerate().map(|(s, n)| format!("{n} for {}", names.of(s))).collect();
            format!("the game is over ({reason}); pieces: {}", words::and_list(&each))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GameKind, MatchResult};

    fn empty() -> Flit {
        let mut g = Flit::new(0);
        g.board = vec![0; SIZE * SIZE];
        g.outbox.clear();
        g
    }

    fn put(g: &mut Flit, x: usize, y: usize, c: u8) {
        g.board[idx(x, y)] = c;
    }

    #[test]
    fn start_pieces_are_on_available_squares_and_reproducible() {
        for seed in 0..10 {
            let g = Flit::new(seed);
            assert_eq!(g.pieces(), [2, 2, 2, 2]);
            // Placed on available squares: no piece touches another at the start.
            for &(x, y, _) in &g.initial {
                assert!(neighbours(x, y).iter().all(|&(a, b)| g.at(a, b) == 0), "seed {seed}");
            }
            assert_eq!(Flit::new(seed).initial, g.initial);
        }
    }

    #[test]
    fn the_first_step_tells_colours_then_pieces_then_asks_bot_1() {
        let mut g = Flit::new(3);
        let step = g.step().unwrap();
        assert_eq!(step.notices[0], (0, "1".to_owned()));
        assert_eq!(step.notices[3], (3, "4".to_owned()));
        assert_eq!(step.notices.len(), 4 + 8 * 4);
        assert_eq!(step.requests, vec![Request::new(0, "M")]);
    }

    #[test]
    fn move_legality() {
        let mut g = empty();
        put(&mut g, 5, 5, 1);
        put(&mut g, 10, 10, 1);
        put(&mut g, 12, 10, 2);
        let cases: &[(&str, Result<bool, &str>)] = &[
            ("5 5 10 11", Ok(true)),
            ("5 5 5 5", Ok(false)),
            ("10 10 11 10", Err("not next to another")), // only next to itself
            ("12 10 11 10", Err("not your piece")),
            ("5 5 12 10", Err("not empty")),
            ("5 5 40 1", Err("off the board")),
            ("5 5 1", Err("expected")),
            ("a 5 1 1", Err("not a coordinate")),
            ("5 5 9 10", Ok(true)),
            ("5 5 10 9", Ok(true)),
            ("5 5 10 31", Err("not next to another")),
        ];
        for (mv, want) in cases {
            match (g.judge(1, mv), want) {
                (Ok(v), Ok(moves)) => assert_eq!(v.is_some(), *moves, "{mv}"),
                (Err(e), Err(why)) => assert!(e.contains(why), "{mv}: {e}"),
                (got, _) => panic!("{mv}: got {got:?}, want {want:?}"),
            }
        }
        // Adjacency wraps around the torus.
        put(&mut g, 0, 20, 1);
        assert!(g.judge(1, "5 5 31 20").unwrap().is_some());
    }

    #[test]
    fn neutral_pieces_convert_to_the_piece_that_lands_next_to_them() {
        let mut g = empty();
        put(&mut g, 5, 5, 2);
        put(&mut g, 20, 20, 2);
        put(&mut g, 20, 22, NEUTRAL);
        let changes = g.play(2, [5, 5, 20, 21]);
        assert_eq!(changes, vec![(5, 5, 0), (20, 21, 2), (20, 22, 2)]);
        assert_eq!(g.at(20, 22), 2);
    }

    #[test]
    fn the_catch_up_rule() {
        let mut g = empty();
        // Fill the board with bot 1 except a few squares.
        for i in 0..SIZE * SIZE {
            g.board[i] = 1;
        }
        put(&mut g, 0, 0, 2);
        put(&mut g, 2, 0, 3);
        put(&mut g, 4, 0, 4);
        for x in 6..12 {
            put(&mut g, x, 0, 0);
        }
        // D = 1024 - 9 = 1015; P = 0 + 6 - 4 = 2; M = 1 + 2 = 3.
        assert_eq!(g.uncatchable(), Some(0));
        // A nearly empty board: nobody is out of reach.
        let mut g = empty();
        put(&mut g, 0, 0, 1);
        assert_eq!(g.uncatchable(), None);
    }

    #[test]
    fn four_passes_in_a_row_end_the_game_and_a_tie_for_first_wins_nothing() {
        let mut g = Flit::new(9);
        for _ in 0..4 {
            let s = g.step().unwrap().requests[0].seat;
            g.apply(vec![(s, Reply::Answer("0 0 0 0".into()))]);
        }
        assert!(g.step().is_none());
        let r = g.result().unwrap();
        assert!(r.iter().all(|s| s.result == MatchResult::Tie && s.score == 2.0), "{r:?}");
    }

    /// "If a bot exceeds the time limit on 5 consecutive turns then it will
    /// no longer be prompted for moves. That bot will be frozen for the
    /// rest of the game." Its turns still count and still draw a neutral
    /// piece: they are asked (the runner answers Gone for it, sending it
    /// nothing), so the replay has each of them with its draw.
    #[test]
    fn frozen_bots_turns_are_passes_in_the_replay_with_their_draws() {
        let mut g = Flit::new(4);
        let mut neutral_after_gone = 0;
        for turn in 0..4000 {
            let Some(step) = g.step() else { break };
            let seat = step.requests[0].seat;
            assert_eq!(seat, turn % 4, "every seat is asked in turn, frozen or not");
            // Bot 1 is gone from the start; the others pass politely.
            let reply = if seat == 0 { Reply::Gone } else { Reply::Answer("0 0 0 0".into()) };
            let (j, events) = g.apply(vec![(seat, reply)]);
            if seat == 0 {
                assert_eq!(j[0].verdict, Verdict::Gone);
                assert_eq!(events[0]["type"], "pass");
                neutral_after_gone += events.iter().filter(|e| e["type"] == "neutral").count();
            }
            if g.is_over() {
                break;
            }
        }
        // Four passes in a row end it at once; so a game of polite passers
        // is short. Play one with moves instead to see draws after gone turns.
        let mut g = Flit::new(11);
        for _ in 0..2000 {
            let Some(step) = g.step() else { break };
            let seat = step.requests[0].seat;
            let reply = if seat == 0 { Reply::Gone } else { Reply::Answer(a_legal_move(&g, seat)) };
            let (_, events) = g.apply(vec![(seat, reply)]);
            if seat == 0 {
                neutral_after_gone += events.iter().filter(|e| e["type"] == "neutral").count();
            }
        }
        assert!(neutral_after_gone > 0, "no neutral piece drawn after a frozen bot's turn in 2000 turns");
    }

    /// A legal move for `seat`: a piece moved next to another of its pieces.
    fn a_legal_move(g: &Flit, seat: Seat) -> String {
        let colour = seat as u8 + 1;
        let mine: Vec<(usize, usize)> = (0..SIZE * SIZE).map(|i| (i % SIZE, i / SIZE)).filter(|&(x, y)| g.at(x, y) == colour).collect();
        for &(ax, ay) in &mine {
            for &(bx, by) in mine.iter().filter(|&&b| b != (ax, ay)) {
                if let Some((x, y)) = neighbours(bx, by).into_iter().find(|&(x, y)| g.at(x, y) == 0 && (x, y) != (ax, ay)) {
                    return format!("{ax} {ay} {x} {y}");
                }
            }
        }
        "0 0 0 0".into()
    }

    /// "If origin and destination are identical, no move will be made. This
    /// is valid and does not lead to the bot being penalised."
    #[test]
    fn identical_coordinates_are_a_valid_pass_even_off_the_board() {
        let g = Flit::new(3);
        for pass in ["99 99 99 99", "5 5 5 5", "-1 7 -1 7", " 40 2  40 2 "] {
            assert_eq!(g.judge(1, pass), Ok(None), "{pass}");
        }
        // Not identical, or not numbers: judged as moves, and refused.
        assert!(g.judge(1, "99 99 99 98").unwrap_err().contains("off the board"));
        assert!(g.judge(1, "a a a a").unwrap_err().contains("not a coordinate"));
    }

    /// "The game ends when ... the total number of turns taken exceeds
    /// 32,768": turn 32,769 is played, and the game ends after it.
    #[test]
    fn the_game_ends_once_more_than_32768_turns_were_taken() {
        let mut g = Flit::new(2);
        g.turn = MAX_TURNS - 1;
        let s = g.step().unwrap().requests[0].seat;
        g.apply(vec![(s, Reply::Answer(a_legal_move(&g, s)))]);
        assert_eq!((g.turn, g.is_over()), (MAX_TURNS, false), "after turn 32,768");
        let s = g.step().unwrap().requests[0].seat;
        let (_, events) = g.apply(vec![(s, Reply::Answer(a_legal_move(&g, s)))]);
        assert_eq!((g.turn, g.is_over()), (MAX_TURNS + 1, true), "after turn 32,769");
        assert_eq!(events.last().unwrap()["reason"], "more than 32768 turns");
    }

    #[test]
    fn moves_are_broadcast_to_every_bot() {
        let mut g = Flit::new(5);
        g.step().unwrap();
        let mine: Vec<(usize, usize)> = (0..SIZE * SIZE).map(|i| (i % SIZE, i / SIZE)).filter(|&(x, y)| g.at(x, y) == 1).collect();
        let (ax, ay) = mine[0];
        let (bx, by) = mine[1];
        let (tx, ty) = neighbours(bx, by).into_iter().find(|&(x, y)| g.at(x, y) == 0).unwrap();
        g.apply(vec![(0, Reply::Answer(format!("{ax} {ay} {tx} {ty}")))]);
        let step = g.step().unwrap();
        for s in 0..4 {
            assert!(step.notices.contains(&(s, format!("{ax} {ay} 0"))));
            assert!(step.notices.contains(&(s, format!("{tx} {ty} 1"))));
        }
        assert_eq!(step.requests[0].seat, 1);
    }

    /// Each of Flit's events in words; what is not one of them is shown as
    /// written.
    #[test]
    fn events_in_words() {
        let names = ["alice".to_owned(), "bob".to_owned(), "carol".to_owned(), String::new()];
        let cases = [
            (
                json!({"type": "move", "turn": 1, "seat": 0, "move": [3, 4, 5, 4], "changes": [[3, 4, 0], [5, 4, 1]]}),
                "alice moved 3 4 → 5 4",
            ),
            (
                json!({"type": "move", "turn": 2, "seat": 1, "move": [22, 20, 22, 21], "changes": [[22, 20, 0], [22, 21, 2], [22, 22, 2]]}),
                "bob moved 22 20 → 22 21, taking a neutral piece",
            ),
            (
                json!({"type": "move", "turn": 3, "seat": 2, "move": [0, 0, 31, 0], "changes": [[0, 0, 0], [31, 0, 3], [30, 0, 3], [31, 31, 3]]}),
                "carol moved 0 0 → 31 0, taking 2 neutral pieces",
            ),
            (json!({"type": "pass", "turn": 4, "seat": 3}), "seat 4 passed"),
            (json!({"type": "neutral", "x": 7, "y": 9}), "a neutral piece appeared at 7 9"),
            (
                json!({"type": "end", "reason": "a bot cannot be caught", "pieces": [40, 3, 2, 1]}),
                "the game is over (a bot cannot be caught); pieces: 40 for alice, 3 for bob, 2 for carol and 1 for seat 4",
            ),
            // Malformed: a move without its changes, a seat that is no number.
            (
                json!({"type": "move", "seat": 0, "move": [3, 4, 5, 4]}),
                r#"move {"move":[3,4,5,4],"seat":0} (an event this viewer cannot put in words)"#,
            ),
            (json!({"type": "pass", "seat": "x"}), r#"pass {"seat":"x"} (an event this viewer cannot put in words)"#),
            (json!({"type": "wall", "cell": 5}), r#"wall {"cell":5} (an event this viewer cannot put in words)"#),
        ];
        for (event, sentence) in cases {
            assert_eq!(GameKind::Flit.event_sentence(&event, Names(&names)), sentence, "{event}");
        }
        assert_eq!(GameKind::Flit.seat_roles(4), vec![None; 4]);
    }
}
