//! Linkage for two bots, More (seat 0) and Fewer (seat 1), a new process
//! per turn exchanging files.
//!
//! Rules from the seed, with the decisions a host must make:
//! * A 7 × 7 board, columns A-G, rows 1-7 from the top; the centre D4 is
//!   blocked. 24 dominoes, 6 of each colour R, B, G, Y, shared by both.
//! * More plays first; turns alternate. A domino covers two orthogonally
//!   adjacent empty cells (not the centre) and may not touch, orthogonally,
//!   the domino the opponent played last.
//! * The request is the content of `input.txt`: `M` or `F` and the four
//!   remaining counts in the order R B G Y, then the 7 rows, where `X` is
//!   the centre, `x` an empty cell next to the opponent's last domino, `.` an
//!   empty cell and a colour letter a played domino. The answer is the
//!   content of `order.txt`: `CX1Y1X2Y2` (e.g. `YA1A2`) or `Skip`.
//!   Letters may be in either case; surrounding white space is ignored.
//! * `Skip` is legal only when no domino can be placed. The game ends when
//!   all 24 dominoes are played or both players skip in a row.
//! * A skip lifts the restriction (decision, from the original game's rules
//!   on IgGameCenter and BoardGameArena, to which the seed sends its
//!   readers): after a player skips, the next player may play anywhere, not
//!   only away from the skipper's last domino.
//! * Groups are the connected areas of one colour (orthogonal). Fewer than
//!   12 groups: Fewer wins; 12 or more: More wins.
//! * Decisions: a bot over the time limit forfeits (the seed disqualified
//!   it); so does an illegal order (a careful host does not guess a move).

use serde::Deserialize;
use serde_json::{json, Value};

use crate::view::{Legend, LegendEntry, Mark, View};
use crate::words::{Names, SeatRole};
use crate::{Judgement, MatchResult, Referee, Reply, Request, Seat, SeatResult, Step, Verdict};

pub const SIZE: usize = 7;
pub const CENTRE: (usize, usize) = (3, 3);
pub const COLOURS: [char; 4] = ['R', 'B', 'G', 'Y'];
pub const PER_COLOUR: u8 = 6;
pub const GROUPS_FOR_MORE: usize = 12;

/// A placement: colour index and two cells as (column, row), 0-based.
pub type Domino = (usize, [(usize, usize); 2]);

pub struct Linkage {
    /// [row][col]: None empty, Some(colour index).
    board: [[Option<usize>; SIZE]; SIZE],
    left: [u8; 4],
    to_move: Seat,
    last: [Option<Domino>; 2],
    skips_in_a_row: u32,
    forfeit: Option<Seat>,
    moves: u32,
}

fn cell_name((c, r): (usize, usize)) -> String {
    format!("{}{}", (b'A' + c as u8) as char, r + 1)
}

fn orth((c, r): (usize, usize)) -> impl Iterator<Item = (usize, usize)> {
    [(0isize, 1isize), (0, -1), (1, 0), (-1, 0)].into_iter().filter_map(move |(dc, dr)| {
        let (cc, rr) = (c as isize + dc, r as isize + dr);
        (cc >= 0 && rr >= 0 && cc < SIZE as isize && rr < SIZE as isize).then_some((cc as usize, rr as usize))
    })
}

impl Default for Linkage {
    fn default() -> Self {
        Linkage::new()
    }
}

impl Linkage {
    pub fn new() -> Linkage {
        Linkage {
            board: [[None; SIZE]; SIZE],
            left: [PER_COLOUR; 4],
            to_move: 0,
            last: [None, None],
            skips_in_a_row: 0,
            forfeit: None,
            moves: 0,
        }
    }

    fn empty(&self, (c, r): (usize, usize)) -> bool {
        (c, r) != CENTRE && self.board[r][c].is_none()
    }

    /// Cells next to the opponent's last domino, where `seat` may not play.
    pub fn forbidden(&self, seat: Seat) -> Vec<(usize, usize)> {
        match self.last[1 - seat] {
            None => vec![],
            Some((_, cells)) => cells.iter().flat_map(|&c| orth(c)).filter(|&c| self.empty(c)).collect(),
        }
    }

    fn placeable(&self, seat: Seat, a: (usize, usize), b: (usize, usize)) -> bool {
        let forbidden = self.forbidden(seat);
        self.empty(a) && self.empty(b) && !forbidden.contains(&a) && !forbidden.contains(&b)
    }

    pub fn has_move(&self, seat: Seat) -> bool {
        if self.left.iter().all(|&n| n == 0) {
            return false;
        }
        (0..SIZE)
            .flat_map(|r| (0..SIZE).map(move |c| (c, r)))
            .any(|a| [(a.0 + 1, a.1), (a.0, a.1 + 1)].into_iter().any(|b| b.0 < SIZE && b.1 < SIZE && self.placeable(seat, a, b)))
    }

    /// `input.txt` for `seat`.
    pub fn input_file(&self, seat: Seat) -> String {
        let forbidden = self.forbidden(seat);
        let mut out = format!("{}{}{}{}{}\n", if seat == 0 { 'M' } else { 'F' }, self.left[0], self.left[1], self.left[2], self.left[3]);
        for r in 0..SIZE {
            for c in 0..SIZE {
                out.push(match self.board[r][c] {
                    Some(k) => COLOURS[k],
                    None if (c, r) == CENTRE => 'X',
                    None if forbidden.contains(&(c, r)) => 'x',
                    None => '.',
                });
            }
            out.push('\n');
        }
        out
    }

    /// Parse and check an order. `Ok(None)` is a legal skip.
    pub fn judge(&self, seat: Seat, text: &str) -> Result<Option<Domino>, String> {
        let t = text.trim().to_ascii_uppercase();
        if t == "SKIP" {
            return if self.has_move(seat) { Err("Skip while a domino can be placed".into()) } else { Ok(None) };
        }
        let b = t.as_bytes();
        if b.len() != 5 {
            return Err("expected an order like YA1A2 (colour, cell, cell) or Skip".into());
        }
        let colour =
            COLOURS.iter().position(|&k| k as u8 == b[0]).ok_or_else(|| format!("{:?} is not a colour (R, B, G, Y)", b[0] as char))?;
        let cell = |i: usize| -> Result<(usize, usize), String> {
            let (c, r) = (b[i], b[i + 1]);
            if !(b'A'..=b'G').contains(&c) || !(b'1'..=b'7').contains(&r) {
                return Err(format!("{}{} is not a cell (A1 to G7)", c as char, r as char));
            }
            Ok(((c - b'A') as usize, (r - b'1') as usize))
        };
        let (x, y) = (cell(1)?, cell(3)?);
        if self.left[colour] == 0 {
            return Err(format!("no {} dominoes are left", COLOURS[colour]));
        }
        if x.0.abs_diff(y.0) + x.1.abs_diff(y.1) != 1 {
            return Err(format!("{} and {} are not side by side", cell_name(x), cell_name(y)));
        }
        for c in [x, y] {
            if c == CENTRE {
                return Err("D4, the centre, is blocked".into());
            }
            if !self.empty(c) {
                return Err(format!("{} is taken", cell_name(c)));
            }
            if self.forbidden(seat).contains(&c) {
                return Err(format!("{} touches the opponent's last domino", cell_name(c)));
            }
        }
        Ok(Some((colour, [x, y])))
    }

    /// Connected areas of one colour.
    pub fn groups(&self) -> usize {
        let mut seen = [[false; SIZE]; SIZE];
        let mut count = 0;
        for r in 0..SIZE {
            for c in 0..SIZE {
                let Some(k) = self.board[r][c] else { continue };
                if seen[r][c] {
                    continue;
                }
                count += 1;
                let mut stack = vec![(c, r)];
                seen[r][c] = true;
                while let Some(p) = stack.pop() {
                    for (nc, nr) in orth(p) {
                        if !seen[nr][nc] && self.board[nr][nc] == Some(k) {
                            seen[nr][nc] = true;
                            stack.push((nc, nr));
                        }
                    }
                }
            }
        }
        count
    }

    fn over(&self) -> bool {
        self.forfeit.is_some() || self.left.iter().all(|&n| n == 0) || self.skips_in_a_row >= 2
    }

    fn place(&mut self, seat: Seat, (k, cells): Domino) {
        for (c, r) in cells {
            self.board[r][c] = Some(k);
        }
        self.left[k] -= 1;
        self.last[seat] = Some((k, cells));
    }

    pub fn rows(&self) -> Vec<String> {
        self.input_file(0).lines().skip(1).map(|l| l.replace('x', ".")).collect()
    }
}

impl Referee for Linkage {
    fn seats(&self) -> usize {
        2
    }

    fn step(&mut self) -> Option<Step> {
        if self.over() {
            return None;
        }
        Some(Step { notices: vec![], requests: vec![Request::new(self.to_move, self.input_file(self.to_move))] })
    }

    fn apply(&mut self, replies: Vec<(Seat, Reply)>) -> (Vec<Judgement>, Vec<serde_json::Value>) {
        let seat = self.to_move;
        let reply = replies.into_iter().find(|(s, _)| *s == seat).map(|(_, r)| r).unwrap_or(Reply::Gone);
        let mut events = Vec::new();
        let verdict = match reply {
            Reply::Answer(text) => match self.judge(seat, &text) {
                Ok(Some(d)) => {
                    self.place(seat, d);
                    self.skips_in_a_row = 0;
                    self.moves += 1;
                    let order = format!("{}{}{}", COLOURS[d.0], cell_name(d.1[0]), cell_name(d.1[1]));
                    events.push(json!({"type": "place", "seat": seat, "order": order}));
                    Verdict::Accepted { r#move: order }
                }
                Ok(None) => {
                    self.skips_in_a_row += 1;
                    // As in the original game, a pass lifts the restriction:
                    // the next player may play anywhere.
                    self.last[seat] = None;
                    events.push(json!({"type": "skip", "seat": seat}));
                    Verdict::Accepted { r#move: "Skip".into() }
                }
                Err(reason) => {
                    self.forfeit = Some(seat);
                    events.push(json!({"type": "forfeit", "seat": seat, "reason": reason}));
                    Verdict::Invalid { answer: text, reason: format!("{reason}; the game is forfeited") }
                }
            },
            Reply::Timeout => {
                self.forfeit = Some(seat);
                events.push(json!({"type": "forfeit", "seat": seat, "reason": "no order in time"}));
                Verdict::TimedOut
            }
            Reply::Gone => {
                self.forfeit = Some(seat);
                events.push(json!({"type": "forfeit", "seat": seat, "reason": "its bot left the match"}));
                Verdict::Gone
            }
        };
        self.to_move = 1 - seat;
        if self.over() && self.forfeit.is_none() {
            events.push(json!({"type": "end", "groups": self.groups()}));
        }
        (vec![Judgement { seat, verdict }], events)
    }

    fn is_over(&self) -> bool {
        self.over()
    }

    fn standings(&self) -> Vec<SeatResult> {
        let winner = match self.forfeit {
            Some(s) => 1 - s,
            None if self.groups() >= GROUPS_FOR_MORE => 0,
            None => 1,
        };
        (0..2)
            .map(|s| SeatResult {
                seat: s,
                score: if s == winner { 1.0 } else { 0.0 },
                rank: if s == winner { 1 } else { 2 },
                result: if s == winner { MatchResult::Win } else { MatchResult::Loss },
            })
            .collect()
    }

    fn initial_state(&self) -> serde_json::Value {
        json!({"size": SIZE, "rows": self.rows(), "left": self.left})
    }

    /// Dominoes in their colours; each player's last domino is marked in
    /// that player's colour (the cells next to it are where the other may
    /// not play).
    fn view(&self) -> View {
        let mut v = View::grid(SIZE, SIZE);
        for (r, row) in self.board.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                v.cells[r * SIZE + c] = match cell {
                    Some(k) => COLOURS[*k] as u8,
                    None if (c, r) == CENTRE => b'X',
                    None => b'.',
                };
            }
        }
        for (seat, last) in self.last.iter().enumerate() {
            if let Some((_, cells)) = last {
                for &(c, r) in cells {
                    v.marks.push(Mark { cell: r * SIZE + c, seat: Some(seat), label: "last".into() });
                }
            }
        }
        let l = self.left;
        v.caption =
            format!("{} groups (More wins with {GROUPS_FOR_MORE} or more); left R{} B{} G{} Y{}", self.groups(), l[0], l[1], l[2], l[3]);
        if let Some(s) = self.forfeit {
            v.caption.push_str(&format!("; {} forfeited", if s == 0 { "More" } else { "Fewer" }));
        }
        v
    }

    fn legend(&self) -> Legend {
        vec![
            LegendEntry { code: 'R', name: "red domino".into(), colour: "#d9412b".into() },
            LegendEntry { code: 'B', name: "blue domino".into(), colour: "#2b6cd9".into() },
            LegendEntry { code: 'G', name: "green domino".into(), colour: "#2e9e44".into() },
            LegendEntry { code: 'Y', name: "yellow domino".into(), colour: "#e3c21c".into() },
            LegendEntry { code: 'X', name: "blocked centre".into(), colour: "#333333".into() },
        ]
    }
}

/// More (seat 0) plays first and wants many groups, Fewer (seat 1) few:
/// the one thing that tells the two bots apart.
pub fn seat_role(seat: Seat) -> Option<SeatRole> {
    let (name, note) = match seat {
        0 => ("More", format!("plays first; wins with {GROUPS_FOR_MORE} or more groups")),
        1 => ("Fewer", format!("wins with fewer than {GROUPS_FOR_MORE} groups")),
        _ => return None,
    };
    Some(SeatRole { name: name.to_owned(), note })
}

/// Linkage's replay events, as [`Linkage::apply`] writes them.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    Place { seat: Seat, order: String },
    Skip { seat: Seat },
    Forfeit { seat: Seat, reason: String },
    End { groups: usize },
}

/// An event in words, cells as the orders write them (`B3`); `None` if it
/// is not one of Linkage's.
pub fn event_sentence(event: &Value, names: Names) -> Option<String> {
    let role = |seat: Seat| seat_role(seat).map(|r| format!("{} ({})", names.of(seat), r.name)).unwrap_or_else(|| names.of(seat));
    Some(match crate::words::parse::<Event>(event)? {
        Event::Place { seat, order } => {
            // A normalised order: colour letter, cell, cell (`RB3B4`).
            let b = order.as_bytes();
            let cell = |i: usize| (b'A'..=b'G').contains(&b[i]) && (b'1'..=b'7').contains(&b[i + 1]);
            if b.len() != 5 || !cell(1) || !cell(3) {
                return None;
            }
            let colour = match b[0] {
                b'R' => "red",
                b'B' => "blue",
                b'G' => "green",
                b'Y' => "yellow",
                _ => return None,
            };
            format!("{} placed a {colour} domino on {} and {}", names.of(seat), &order[1..3], &order[3..5])
        }
        Event::Skip { seat } => format!("{} skipped", names.of(seat)),
        Event::Forfeit { seat, reason } => format!("{} forfeited: {reason}", names.of(seat)),
        Event::End { groups } if groups >= GROUPS_FOR_MORE => {
            format!("the game is over with {groups} groups, {GROUPS_FOR_MORE} or more: {} wins", role(0))
        }
        Event::End { groups } => format!("the game is over with {groups} groups, fewer than {GROUPS_FOR_MORE}: {} wins", role(1)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GameKind;

    /// The original game (Ethan Larson's Linkage, to whose rules the seed
    /// sends its readers): a pass lifts the restriction. Here every empty
    /// pair (B1-B2) touches both Fewer's last domino (A1-A2) and More's
    /// previous one (C1-C2): More must skip; Fewer may then play B1-B2, and
    /// a Skip from Fewer would be illegal.
    #[test]
    fn after_a_skip_the_next_player_may_play_anywhere() {
        let mut g = Linkage::new();
        for r in 0..SIZE {
            for c in 0..SIZE {
                if (c, r) != CENTRE {
                    g.board[r][c] = Some((r + c) % 4);
                }
            }
        }
        g.board[0][1] = None; // B1
        g.board[1][1] = None; // B2
        g.left = [1, 0, 0, 0];
        g.last = [Some((1, [(2, 0), (2, 1)])), Some((2, [(0, 0), (0, 1)]))];
        g.to_move = 0;
        assert!(!g.has_move(0));
        assert!(matches!(play(&mut g, "Skip"), Verdict::Accepted { .. }));
        assert_eq!(g.forbidden(1), vec![], "the skip lifted More's restriction");
        assert!(!g.input_file(1).contains('x'));
        assert_eq!(g.judge(1, "Skip"), Err("Skip while a domino can be placed".into()));
        assert!(matches!(play(&mut g, "RB1B2"), Verdict::Accepted { .. }));
        assert!(g.is_over(), "all 24 dominoes are played");
    }

    fn play(g: &mut Linkage, order: &str) -> Verdict {
        let s = g.step().unwrap().requests[0].seat;
        g.apply(vec![(s, Reply::Answer(order.into()))]).0.remove(0).verdict
    }

    #[test]
    fn the_starting_input_file() {
        let mut g = Linkage::new();
        let step = g.step().unwrap();
        assert_eq!(step.requests[0].payload, "M6666\n.......\n.......\n.......\n...X...\n.......\n.......\n.......\n");
    }

    /// The seed's two diagrams of the squares Fewer may not use.
    #[test]
    fn forbidden_squares_after_mores_move() {
        let mut g = Linkage::new();
        play(&mut g, "RB3B4");
        let rows: Vec<String> = g.input_file(1).lines().skip(1).map(String::from).collect();
        assert_eq!(rows[1..5], [".x.....", "xRx....", "xRxX...", ".x....."].map(String::from));
        let mut g = Linkage::new();
        play(&mut g, "gb4c4");
        let rows: Vec<String> = g.input_file(1).lines().skip(1).map(String::from).collect();
        assert_eq!(rows[2..5], [".xx....", "xGGX...", ".xx...."].map(String::from));
        assert!(g.input_file(1).starts_with("F6656\n"));
    }

    #[test]
    fn illegal_orders_forfeit_with_a_reason() {
        let cases = [
            ("RA1A3", "not side by side"),
            ("RD3D4", "centre"),
            ("QA1A2", "not a colour"),
            ("RH1H2", "not a cell"),
            ("RA1", "expected an order"),
            ("Skip", "Skip while a domino can be placed"),
        ];
        for (order, why) in cases {
            let mut g = Linkage::new();
            match play(&mut g, order) {
                Verdict::Invalid { reason, .. } => assert!(reason.contains(why), "{order}: {reason}"),
                v => panic!("{order}: {v:?}"),
            }
            let r = g.result().unwrap();
            assert_eq!(r[1].result, MatchResult::Win, "{order}: More forfeits, Fewer wins");
        }
        let mut g = Linkage::new();
        play(&mut g, "RB3B4");
        match play(&mut g, "YC3C2") {
            Verdict::Invalid { reason, .. } => assert!(reason.contains("touches the opponent's last domino"), "{reason}"),
            v => panic!("{v:?}"),
        }
        let mut g = Linkage::new();
        play(&mut g, "RA1A2");
        assert!(matches!(play(&mut g, "BA1B1"), Verdict::Invalid { reason, .. } if reason.contains("taken")));
    }

    #[test]
    fn group_count_decides_the_winner() {
        // Twelve dominoes in four one-colour stripes: four groups.
        let mut g = Linkage::new();
        let orders = ["RA1B1", "BA7B7", "RC1D1", "BC7D7", "RE1F1", "BE7F7", "GA3B3", "YA5B5", "GC3D3", "YC5D5", "GE3F3", "YE5F5"];
        for o in orders {
            assert!(matches!(play(&mut g, o), Verdict::Accepted { .. }), "{o}");
        }
        assert_eq!(g.groups(), 4);
        // Twelve dominoes, none touching one of its own colour: 12 groups.
        let mut g = Linkage::new();
        for o in ["RA1B1", "BD1E1", "GG1G2", "YA3B3", "RD2E2", "BA5B5", "GD6E6", "YG4G5", "RA7B7", "BD7E7", "RC5C6", "BF4F5"] {
            assert!(matches!(play(&mut g, o), Verdict::Accepted { .. }), "{o}");
        }
        assert_eq!(g.groups(), GROUPS_FOR_MORE);
    }

    #[test]
    fn timeouts_forfeit() {
        let mut g = Linkage::new();
        g.step().unwrap();
        g.apply(vec![(0, Reply::Timeout)]);
        assert_eq!(g.result().unwrap()[1].result, MatchResult::Win);
        assert!(g.step().is_none());
    }

    #[test]
    fn a_skip_is_legal_only_without_moves_and_two_skips_end_the_game() {
        let mut g = Linkage::new();
        g.left = [0, 0, 0, 0];
        // No dominoes left: over already.
        assert!(g.step().is_none());
        let mut g = Linkage::new();
        g.left = [1, 0, 0, 0];
        // Fill the board but for one pair next to More's last domino.
        for r in 0..SIZE {
            for c in 0..SIZE {
                if (c, r) != CENTRE {
                    g.board[r][c] = Some(1);
                }
            }
        }
        g.board[0][0] = None;
        g.board[0][1] = None;
        g.last[0] = Some((1, [(0, 1), (1, 1)]));
        g.to_move = 1;
        assert!(!g.has_move(1));
        assert!(matches!(play(&mut g, "skip"), Verdict::Accepted { .. }));
        assert!(g.has_move(0));
        assert!(matches!(play(&mut g, "RA1B1"), Verdict::Accepted { .. }));
        assert!(g.step().is_none(), "all dominoes played");
    }

    /// Each of Linkage's events in words; what is not one of them is shown
    /// as written.
    #[test]
    fn events_in_words() {
        let names = ["alice".to_owned(), "bob".to_owned()];
        let cases = [
            (json!({"type": "place", "seat": 0, "order": "RB3B4"}), "alice placed a red domino on B3 and B4"),
            (json!({"type": "place", "seat": 1, "order": "YA1A2"}), "bob placed a yellow domino on A1 and A2"),
            (json!({"type": "place", "seat": 1, "order": "GG6G7"}), "bob placed a green domino on G6 and G7"),
            (json!({"type": "place", "seat": 0, "order": "BC1D1"}), "alice placed a blue domino on C1 and D1"),
            (json!({"type": "skip", "seat": 1}), "bob skipped"),
            (json!({"type": "forfeit", "seat": 0, "reason": "no order in time"}), "alice forfeited: no order in time"),
            (json!({"type": "end", "groups": 13}), "the game is over with 13 groups, 12 or more: alice (More) wins"),
            (json!({"type": "end", "groups": 12}), "the game is over with 12 groups, 12 or more: alice (More) wins"),
            (json!({"type": "end", "groups": 11}), "the game is over with 11 groups, fewer than 12: bob (Fewer) wins"),
            // Malformed: an order that is no order, a count that is no number.
            (
                json!({"type": "place", "seat": 0, "order": "PB3B4"}),
                r#"place {"order":"PB3B4","seat":0} (an event this viewer cannot put in words)"#,
            ),
            (
                json!({"type": "place", "seat": 0, "order": "RB3"}),
                r#"place {"order":"RB3","seat":0} (an event this viewer cannot put in words)"#,
            ),
            (
                json!({"type": "place", "seat": 0, "order": "Ré3B4"}),
                r#"place {"order":"Ré3B4","seat":0} (an event this viewer cannot put in words)"#,
            ),
            (
                json!({"type": "place", "seat": 0, "order": "RB3H4"}),
                r#"place {"order":"RB3H4","seat":0} (an event this viewer cannot put in words)"#,
            ),
            (json!({"type": "end", "groups": -1}), r#"end {"groups":-1} (an event this viewer cannot put in words)"#),
        ];
        for (event, sentence) in cases {
            assert_eq!(GameKind::Linkage.event_sentence(&event, Names(&names)), sentence, "{event}");
        }
    }

    #[test]
    fn more_and_fewer() {
        let roles = GameKind::Linkage.seat_roles(2);
        let named: Vec<(&str, &str)> = roles.iter().map(|r| r.as_ref().map(|r| (r.name.as_str(), r.note.as_str())).unwrap()).collect();
        assert_eq!(named, [("More", "plays first; wins with 12 or more groups"), ("Fewer", "wins with fewer than 12 groups")]);
    }
}
