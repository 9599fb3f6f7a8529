//! Snake (Tron light cycles) for two bots.
//!
//! Rules from the seed and the original server:
//! * 32 × 32 cells, cell = row × 32 + column; the edge is a wall (no wrap).
//! * Seat 0 starts at 484, seat 1 at 1023 − 484 = 539. Each bot sees the
//!   board as if it were seat 0: seat 1's view is rotated by 180°, positions
//!   `p → 1023 − p` and directions `u ↔ d`, `l ↔ r`. So both first get
//!   `484 539` ("my position, the opponent's").
//! * Both heads move at once. A head crashes when it leaves the board,
//!   enters any cell either snake has occupied (trails are permanent), or
//!   enters the same cell as the other head; swapping heads crashes both.
//!   Both crashing is a tie.
//! * A bot that does not answer in time loses (both: a tie), and so does one
//!   whose answer is not `u`, `d`, `l` or `r` (decision: the seed defines no
//!   other answer; a careful host treats it like a crash rather than guess).
//! * At the end each bot gets `WIN`, `LOSS` or `TIE`.
//! * Points as the seed's tournament: win 2, tie 1, loss 0.
//!
//! Unlike the original server, each bot is timed on its own clock (the
//! runner asks both at once), so the second bot has no advantage.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::view::{self, Mark, View};
use crate::words::{self, Names, SeatRole};
use crate::{competition_ranks, Judgement, MatchResult, Referee, Reply, Request, Seat, SeatResult, Step, Verdict};

pub const SIZE: usize = 32;
pub const CELLS: usize = SIZE * SIZE;
pub const START: usize = 15 * SIZE + 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Up,
    Down,
    Left,
    Right,
}

impl Dir {
    fn parse(s: &str) -> Option<Dir> {
        match s.trim() {
            "u" => Some(Dir::Up),
            "d" => Some(Dir::Down),
            "l" => Some(Dir::Left),
            "r" => Some(Dir::Right),
            _ => None,
        }
    }
    fn rotated(self) -> Dir {
        match self {
            Dir::Up => Dir::Down,
            Dir::Down => Dir::Up,
            Dir::Left => Dir::Right,
            Dir::Right => Dir::Left,
        }
    }
    fn word(self) -> &'static str {
        match self {
            Dir::Up => "up",
            Dir::Down => "down",
            Dir::Left => "left",
            Dir::Right => "right",
        }
    }
    fn letter(self) -> &'static str {
        match self {
            Dir::Up => "u",
            Dir::Down => "d",
            Dir::Left => "l",
            Dir::Right => "r",
        }
    }
    /// The cell reached from `p`, or `None` past the edge.
    fn step(self, p: usize) -> Option<usize> {
        let (r, c) = (p / SIZE, p % SIZE);
        match self {
            Dir::Up => (r > 0).then(|| p - SIZE),
            Dir::Down => (r + 1 < SIZE).then(|| p + SIZE),
            Dir::Left => (c > 0).then(|| p - 1),
            Dir::Right => (c + 1 < SIZE).then(|| p + 1),
        }
    }
}

pub struct Snake {
    /// Whose trail covers each cell: 0 none, seat + 1.
    trail: Vec<u8>,
    heads: [usize; 2],
    crashed: [bool; 2],
    turn: u32,
    /// The final WIN/LOSS/TIE notices have been handed out.
    told: bool,
}

impl Default for Snake {
    fn default() -> Self {
        Snake::new()
    }
}

impl Snake {
    pub fn new() -> Snake {
        let heads = [START, CELLS - 1 - START];
        let mut trail = vec![0; CELLS];
        for (s, h) in heads.into_iter().enumerate() {
            trail[h] = s as u8 + 1;
        }
        Snake { trail, heads, crashed: [false; 2], turn: 0, told: false }
    }

    fn over(&self) -> bool {
        self.crashed.iter().any(|&c| c)
    }

    /// `(mine, theirs)` as seat `s` sees them.
    pub fn view(&self, s: Seat) -> (usize, usize) {
        let (me, them) = (self.heads[s], self.heads[1 - s]);
        if s == 0 {
            (me, them)
        } else {
            (CELLS - 1 - me, CELLS - 1 - them)
        }
    }

    fn outcome(&self, s: Seat) -> MatchResult {
        match (self.crashed[s], self.crashed[1 - s]) {
            (true, true) => MatchResult::Tie,
            (true, false) => MatchResult::Loss,
            (false, true) => MatchResult::Win,
            (false, false) => MatchResult::Tie,
        }
    }
}

impl Referee for Snake {
    fn seats(&self) -> usize {
        2
    }

    fn step(&mut self) -> Option<Step> {
        if self.over() {
            if self.told {
                return None;
            }
            self.told = true;
            let notices = (0..2)
                .map(|s| {
                    let word = match self.outcome(s) {
                        MatchResult::Win => "WIN",
                        MatchResult::Loss => "LOSS",
                        MatchResult::Tie => "TIE",
                    };
                    (s, word.to_owned())
                })
                .collect();
            return Some(Step { notices, requests: vec![] });
        }
        let requests = (0..2)
            .map(|s| {
                let (me, them) = self.view(s);
                Request::new(s, format!("{me} {them}"))
            })
            .collect();
        Some(Step { notices: vec![], requests })
    }

    fn apply(&mut self, replies: Vec<(Seat, Reply)>) -> (Vec<Judgement>, Vec<serde_json::Value>) {
        self.turn += 1;
        let mut judgements = Vec::new();
        let mut events = Vec::new();
        let mut dirs: [Option<Dir>; 2] = [None, None];
        // Why a seat has no move, if it has none (a seat not answered at all
        // is gone).
        let mut no_move = ["its bot left the match"; 2];
        for (s, reply) in replies {
            let verdict = match reply {
                Reply::Answer(text) => match Dir::parse(&text) {
                    Some(d) => {
                        dirs[s] = Some(if s == 0 { d } else { d.rotated() });
                        Verdict::Accepted { r#move: d.letter().to_owned() }
                    }
                    None => {
                        no_move[s] = "an invalid move";
                        Verdict::Invalid { answer: text, reason: "expected one of u, d, l, r on a line; the snake crashes".into() }
                    }
                },
                Reply::Timeout => {
                    no_move[s] = "no move in time";
                    Verdict::TimedOut
                }
                Reply::Gone => {
                    no_move[s] = "its bot left the match";
                    Verdict::Gone
                }
            };
            judgements.push(Judgement { seat: s, verdict });
        }
        let mut next = [None, None];
        let mut why: [Option<&str>; 2] = [None, None];
        for s in 0..2 {
            match dirs[s] {
                None => why[s] = Some(no_move[s]),
                Some(d) => match d.step(self.heads[s]) {
                    None => why[s] = Some("hit the edge"),
                    Some(p) if self.trail[p] != 0 => why[s] = Some("hit a trail"),
                    Some(p) => next[s] = Some(p),
                },
            }
        }
        if let (Some(a), Some(b)) = (next[0], next[1]) {
            if a == b {
                why = [Some("head-on collision"), Some("head-on collision")];
            }
        }
        // Swapping heads means entering the other's current cell, which is
        // occupied, so it is already a crash for both above.
        for (s, reason) in why.iter().enumerate() {
            if let Some(reason) = *reason {
                self.crashed[s] = true;
                events.push(json!({"type": "crash", "seat": s, "reason": reason}));
            }
        }
        for (s, n) in next.iter().enumerate() {
            if let (Some(p), false) = (*n, self.crashed[s]) {
                self.heads[s] = p;
                self.trail[p] = s as u8 + 1;
            }
        }
        events.insert(
            0,
            json!({"type": "move", "turn": self.turn,
                   "moves": dirs.map(|d| d.map(|d| d.letter())), "heads": self.heads}),
        );
        (judgements, events)
    }

    fn is_over(&self) -> bool {
        self.over()
    }

    fn standings(&self) -> Vec<SeatResult> {
        let scores: Vec<f64> = (0..2)
            .map(|s| match self.outcome(s) {
                MatchResult::Win => 2.0,
                MatchResult::Tie => 1.0,
                MatchResult::Loss => 0.0,
            })
            .collect();
        let ranks = competition_ranks(&scores);
        (0..2).map(|s| SeatResult { seat: s, score: scores[s], rank: ranks[s], result: self.outcome(s) }).collect()
    }

    fn initial_state(&self) -> serde_json::Value {
        json!({"size": SIZE, "heads": self.heads})
    }

    /// Both trails in their seats' colours, heads marked.
    fn view(&self) -> View {
        let mut v = View::grid(SIZE, SIZE);
        for (cell, &t) in v.cells.iter_mut().zip(&self.trail) {
            if t != 0 {
                *cell = view::seat_code(t as usize - 1);
            }
        }
        for (s, &h) in self.heads.iter().enumerate() {
            v.marks.push(Mark { cell: h, seat: Some(s), label: (if self.crashed[s] { "crashed" } else { "head" }).into() });
        }
        v.caption = format!("turn {}", self.turn);
        for s in 0..2 {
            if self.crashed[s] {
                v.caption.push_str(&format!("; seat {} crashed", s + 1));
            }
        }
        v
    }
}

/// The second seat sees the board turned 180° and answers in that frame,
/// which a viewer of the board must be told: its `u` moves down.
pub fn seat_role(seat: Seat) -> Option<SeatRole> {
    (seat == 1).then(|| SeatRole {
        name: "rotated 180°".to_owned(),
        note: "sees the board turned 180° and answers in that frame: its u moves down on the board, its l moves right".to_owned(),
    })
}

/// Snake's replay events, as [`Snake::apply`] writes them.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    /// `moves` are board directions (seat 1's already turned back).
    Move {
        moves: Vec<Option<String>>,
    },
    Crash {
        seat: Seat,
        reason: String,
    },
}

/// An event in words, directions as they are on the board; the second
/// seat's moves also as it answered them, in its rotated frame. `None` if
/// it is not one of Snake's.
pub fn event_sentence(event: &Value, names: Names) -> Option<String> {
    Some(match words::parse::<Event>(event)? {
        Event::Move { moves } => {
            if moves.is_empty() {
                return None;
            }
            let each = moves.iter().enumerate().map(|(seat, m)| {
                let name = names.of(seat);
                Some(match m {
                    None => format!("{name} made no move"),
                    Some(m) => {
                        let d = Dir::parse(m)?;
                        // The seat with a role is the one answering rotated.
                        if seat_role(seat).is_some() {
                            format!("{name} went {} (answered {} in its rotated frame)", d.word(), d.rotated().letter())
                        } else {
                            format!("{name} went {}", d.word())
                        }
                    }
                })
            });
            words::and_list(&each.collect::<Option<Vec<String>>>()?)
        }
        Event::Crash { seat, reason } => format!("{} crashed: {reason}", names.of(seat)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GameKind;

    fn play(g: &mut Snake, a: &str, b: &str) -> Vec<serde_json::Value> {
        g.step().unwrap();
        g.apply(vec![(0, Reply::Answer(a.into())), (1, Reply::Answer(b.into()))]).1
    }

    #[test]
    fn both_bots_see_the_same_start() {
        let mut g = Snake::new();
        let step = g.step().unwrap();
        assert_eq!(step.requests[0].payload, "484 539");
        assert_eq!(step.requests[1].payload, "484 539");
    }

    #[test]
    fn the_second_bots_moves_are_rotated() {
        let mut g = Snake::new();
        // Both say "up" in their own view: seat 0 goes up, seat 1 goes down.
        play(&mut g, "u", "u");
        assert_eq!(g.heads, [484 - 32, 539 + 32]);
        assert_eq!(g.view(1), (484 - 32, 539 + 32));
        assert_eq!(g.view(0), (484 - 32, 539 + 32));
    }

    #[test]
    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    fn crashes() {
        // (name, seat-0 moves, seat-1 moves, expected results)
        let cases: &[(&str, &[&str], &[&str], [MatchResult; 2])] = &[
            // 484 is row 15 column 4; seat 1's "l" is an absolute right from column 27.
            (
                "seat 0 runs into the left edge",
                &["l", "l", "l", "l", "l"],
                &["u", "u", "u", "u", "u"],
                [MatchResult::Loss, MatchResult::Win],
            ),
            (
                "both hit edges on the same turn",
                &["l", "l", "l", "l", "l"],
                &["l", "l", "l", "l", "l"],
                [MatchResult::Tie, MatchResult::Tie],
            ),
        ];
        for (name, a, b, want) in cases {
            let mut g = Snake::new();
            let mut i = 0;
            while g.result().is_none() {
                let (x, y) = (a.get(i).copied().unwrap_or("u"), b.get(i).copied().unwrap_or("u"));
                play(&mut g, x, y);
                i += 1;
                assert!(i < 100, "{name}: no end");
            }
            let got: Vec<MatchResult> = g.result().unwrap().iter().map(|r| r.result).collect();
            assert_eq!(got, want.to_vec(), "{name}");
        }
    }

    #[test]
    fn turning_back_crashes_into_the_own_trail() {
        let mut g = Snake::new();
        play(&mut g, "u", "u");
        let events = play(&mut g, "u", "d"); // seat 1 reverses (absolute: up into its trail)
        assert!(events.iter().any(|e| e["type"] == "crash" && e["seat"] == 1 && e["reason"] == "hit a trail"), "{events:?}");
        assert_eq!(g.result().unwrap()[0].result, MatchResult::Win);
        assert_eq!(g.result().unwrap()[0].score, 2.0);
    }

    #[test]
    fn head_on_into_the_same_cell_is_a_tie() {
        let mut g = Snake::new();
        // Put the heads two cells apart on one row: seat 0 at 100, seat 1 at 102.
        g.trail = vec![0; CELLS];
        g.heads = [100, 102];
        g.trail[100] = 1;
        g.trail[102] = 2;
        // Seat 0 goes right (absolute), seat 1 goes left (absolute) = "r" in its rotated view.
        let events = play(&mut g, "r", "r");
        assert!(events.iter().filter(|e| e["reason"] == "head-on collision").count() == 2, "{events:?}");
        assert!(g.result().unwrap().iter().all(|r| r.result == MatchResult::Tie && r.score == 1.0));
    }

    #[test]
    fn swapping_heads_crashes_both() {
        let mut g = Snake::new();
        g.trail = vec![0; CELLS];
        g.heads = [100, 101];
        g.trail[100] = 1;
        g.trail[101] = 2;
        play(&mut g, "r", "r"); // seat 1 absolute left: into 100 while 0 enters 101
        assert!(g.result().unwrap().iter().all(|r| r.result == MatchResult::Tie));
    }

    #[test]
    fn moving_down_from_the_bottom_left_corner_is_a_clean_crash() {
        let mut g = Snake::new();
        g.trail = vec![0; CELLS];
        g.heads = [CELLS - SIZE, 5];
        play(&mut g, "d", "u"); // seat 1's "u" is an absolute down: safe
        let r = g.result().unwrap();
        assert_eq!(r[0].result, MatchResult::Loss);
        assert_eq!(r[1].result, MatchResult::Win);
    }

    #[test]
    fn timeouts_and_bad_answers_lose() {
        let mut g = Snake::new();
        g.step().unwrap();
        let (j, _) = g.apply(vec![(0, Reply::Timeout), (1, Reply::Answer("x".into()))]);
        assert!(matches!(j[1].verdict, Verdict::Invalid { .. }));
        assert!(g.result().unwrap().iter().all(|r| r.result == MatchResult::Tie));
        let mut g = Snake::new();
        g.step().unwrap();
        g.apply(vec![(0, Reply::Timeout), (1, Reply::Answer("u".into()))]);
        assert_eq!(g.result().unwrap()[1].result, MatchResult::Win);
        // The final step tells each bot how it went, then nothing more.
        let end = g.step().unwrap();
        assert_eq!(end.notices, vec![(0, "LOSS".to_owned()), (1, "WIN".to_owned())]);
        assert!(g.step().is_none());
    }

    /// Each of Snake's events in words, the second seat's moves on the
    /// board and as it answered them; what is not one of them is shown as
    /// written.
    #[test]
    fn events_in_words() {
        let names = ["alice".to_owned(), "bob".to_owned()];
        let cases = [
            // Both answered u: seat 1's u is a move down on the board.
            (
                json!({"type": "move", "turn": 1, "moves": ["u", "d"], "heads": [452, 571]}),
                "alice went up and bob went down (answered u in its rotated frame)",
            ),
            (
                json!({"type": "move", "turn": 2, "moves": ["l", "u"], "heads": [451, 539]}),
                "alice went left and bob went up (answered d in its rotated frame)",
            ),
            (
                json!({"type": "move", "turn": 3, "moves": ["r", "l"], "heads": [452, 538]}),
                "alice went right and bob went left (answered r in its rotated frame)",
            ),
            (
                json!({"type": "move", "turn": 4, "moves": [null, "r"], "heads": [452, 539]}),
                "alice made no move and bob went right (answered l in its rotated frame)",
            ),
            (json!({"type": "crash", "seat": 1, "reason": "hit a trail"}), "bob crashed: hit a trail"),
            (json!({"type": "crash", "seat": 0, "reason": "head-on collision"}), "alice crashed: head-on collision"),
            // Malformed: a direction no snake has, no moves at all, a crash
            // without its reason.
            (json!({"type": "move", "moves": ["x", "u"]}), r#"move {"moves":["x","u"]} (an event this viewer cannot put in words)"#),
            (json!({"type": "move", "moves": []}), r#"move {"moves":[]} (an event this viewer cannot put in words)"#),
            (json!({"type": "crash", "seat": 0}), r#"crash {"seat":0} (an event this viewer cannot put in words)"#),
        ];
        for (event, sentence) in cases {
            assert_eq!(GameKind::Snake.event_sentence(&event, Names(&names)), sentence, "{event}");
        }
    }

    /// What the referee writes is what the sentences read: the second
    /// seat's u, from the start, is a move down said as such.
    #[test]
    fn the_second_seats_moves_in_words() {
        let mut g = Snake::new();
        let events = play(&mut g, "u", "u");
        let names = ["alice".to_owned(), "bob".to_owned()];
        assert_eq!(
            GameKind::Snake.event_sentence(&events[0], Names(&names)),
            "alice went up and bob went down (answered u in its rotated frame)"
        );
        let roles = GameKind::Snake.seat_roles(2);
        assert!(roles[0].is_none());
        let second = roles[1].as_ref().unwrap();
        assert_eq!(second.name, "rotated 180°");
        assert!(second.note.contains("its u moves down on the board"), "{}", second.note);
    }
}
