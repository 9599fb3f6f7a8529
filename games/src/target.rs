//! Invisible target for 2 to 16 bots, simultaneous moves.
//!
//! Rules from the seed, with the decisions a host must make:
//! * 32 × 32 cells on a torus, numbered 0..1023 in reading order. One
//!   random cell is the target; no bot is told where.
//! * Start: bots are placed one by one on random cells whose 5 × 5
//!   neighbourhood (on the torus) holds no other bot.
//! * Each turn every bot gets `pos wall enemy...`: its position, the wall
//!   added after the previous turn (1024 if none) and the other bots'
//!   positions, always in seat order. It answers one digit: 0 up, 1 left,
//!   2 stay, 3 right, 4 down. Anything else, or no answer in 50 ms, is "stay"
//!   (recorded as invalid or timed out).
//! * Moves resolve as the seed describes: a move into a wall becomes "stay";
//!   then, repeatedly, every bot whose destination is shared with another
//!   bot's destination stays instead, until nothing changes. So bots can swap
//!   and follow each other, but never share a cell.
//! * After each turn, with probability 1/7, a wall is added on a cell chosen
//!   uniformly among the cells that are free (no wall, no bot, not the
//!   target), still connected to the target, and whose walling leaves every
//!   bot a route to the target (other bots do not block routes).
//! * End (decision): the seed's "no wall can be placed for 10 consecutive
//!   turns" is read as 10 consecutive turns in which *no cell qualifies* for
//!   a wall (the arena is saturated), not 10 turns in which the 1/7 draw
//!   failed. Whether a cell qualifies is judged at the turn's wall step,
//!   before its wall is placed: the turn whose wall takes the last
//!   qualifying cell is not one of the ten. A safety cap ends the game
//!   after 50 000 turns.
//! * The bots at the smallest Manhattan distance to the target (on the
//!   torus) are the joint winners and score 1; the others score 0.

#[cfg(test)]
use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::view::{self, Legend, LegendEntry, Mark, View};
use crate::words::{self, Names, SeatRole};
use crate::{Judgement, MatchResult, Referee, Reply, Request, Seat, SeatResult, Step, Verdict};

pub const SIZE: usize = 32;
pub const CELLS: usize = SIZE * SIZE;
pub const NO_WALL: usize = CELLS;
pub const WALL_CHANCE: f64 = 1.0 / 7.0;
pub const SATURATED_TURNS: u32 = 10;
pub const MAX_TURNS: u32 = 50_000;

pub struct Target {
    rng: ChaCha8Rng,
    target: usize,
    wall: Vec<bool>,
    players: Vec<usize>,
    last_wall: usize,
    turn: u32,
    saturated_for: u32,
}

fn neighbour(p: usize, dir: u8) -> usize {
    let (r, c) = (p / SIZE, p % SIZE);
    match dir {
        0 => ((r + SIZE - 1) % SIZE) * SIZE + c,
        1 => r * SIZE + (c + SIZE - 1) % SIZE,
        3 => r * SIZE + (c + 1) % SIZE,
        4 => ((r + 1) % SIZE) * SIZE + c,
        _ => p,
    }
}

/// Manhattan distance on the torus.
pub fn distance(a: usize, b: usize) -> usize {
    let d = |x: usize, y: usize| {
        let d = x.abs_diff(y);
        d.min(SIZE - d)
    };
    d(a / SIZE, b / SIZE) + d(a % SIZE, b % SIZE)
}

impl Target {
    pub fn new(seats: usize, seed: u64) -> Target {
        let mut rng = crate::rng(seed);
        let target = rng.gen_range(0..CELLS);
        let mut players: Vec<usize> = Vec::with_capacity(seats);
        for _ in 0..seats {
            let free: Vec<usize> = (0..CELLS)
                .filter(|&c| {
                    players.iter().all(|&p| {
                        let d = |x: usize, y: usize| {
                            let d = x.abs_diff(y);
                            d.min(SIZE - d)
                        };
                        d(c / SIZE, p / SIZE) > 2 || d(c % SIZE, p % SIZE) > 2
                    })
                })
                .collect();
            players.push(free[rng.gen_range(0..free.len())]);
        }
        Target { rng, target, wall: vec![false; CELLS], players, last_wall: NO_WALL, turn: 0, saturated_for: 0 }
    }

    fn over(&self) -> bool {
        self.saturated_for >= SATURATED_TURNS || self.turn >= MAX_TURNS
    }

    /// Resolve intended moves (0..=4 per seat) into new positions.
    pub fn resolve(&self, dirs: &[u8]) -> Vec<usize> {
        let mut dest: Vec<usize> = self
            .players
            .iter()
            .zip(dirs)
            .map(|(&p, &d)| {
                let n = neighbour(p, d);
                if self.wall[n] {
                    p
                } else {
                    n
                }
            })
            .collect();
        loop {
            // Every mover whose destination is shared aims at its own cell,
            // all at once, then look again.
            let clashing: Vec<usize> = (0..dest.len())
                .filter(|&i| dest[i] != self.players[i] && dest.iter().enumerate().any(|(j, &d)| j != i && d == dest[i]))
                .collect();
            if clashing.is_empty() {
                return dest;
            }
            for i in clashing {
                dest[i] = self.players[i];
            }
        }
    }

    /// Every cell where a wall may go now.
    ///
    /// One depth-first search from the target over the cells without a wall
    /// (Tarjan's articulation points): walling a reached cell `v` cuts off
    /// exactly the DFS subtrees of its children `w` with `low[w] >= disc[v]`,
    /// so `v` qualifies unless one of those subtrees holds a bot. O(cells).
    pub fn wall_candidates(&self) -> Vec<usize> {
        const UNSEEN: u32 = u32::MAX;
        let mut disc = vec![UNSEEN; CELLS];
        let mut low = vec![0u32; CELLS];
        let mut parent = vec![usize::MAX; CELLS];
        let mut bots_below = vec![0u32; CELLS];
        let mut cuts_off_a_bot = vec![false; CELLS];
        for &p in &self.players {
            bots_below[p] += 1;
        }
        let mut time = 0u32;
        // (cell, index of the next neighbour direction to look at)
        let mut stack = vec![(self.target, 0usize)];
        disc[self.target] = time;
        low[self.target] = time;
        const DIRS: [u8; 4] = [0, 1, 3, 4];
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if *next < DIRS.len() {
                let w = neighbour(v, DIRS[*next]);
                *next += 1;
                if self.wall[w] {
                    continue;
                }
                if disc[w] == UNSEEN {
                    time += 1;
                    disc[w] = time;
                    low[w] = time;
                    parent[w] = v;
                    stack.push((w, 0));
                } else if w != parent[v] {
                    low[v] = low[v].min(disc[w]);
                }
            } else {
                stack.pop();
                let u = parent[v];
                if u != usize::MAX {
                    low[u] = low[u].min(low[v]);
                    bots_below[u] += bots_below[v];
                    if low[v] >= disc[u] && bots_below[v] > 0 {
                        cuts_off_a_bot[u] = true;
                    }
                }
            }
        }
        (0..CELLS).filter(|&c| disc[c] != UNSEEN && c != self.target && !self.players.contains(&c) && !cuts_off_a_bot[c]).collect()
    }

    /// Cells reachable from the target (for tests).
    #[cfg(test)]
    fn reachable(&self) -> Vec<bool> {
        let mut seen = vec![false; CELLS];
        let mut queue = VecDeque::from([self.target]);
        seen[self.target] = true;
        while let Some(p) = queue.pop_front() {
            for d in [0, 1, 3, 4] {
                let n = neighbour(p, d);
                if !seen[n] && !self.wall[n] {
                    seen[n] = true;
                    queue.push_back(n);
                }
            }
        }
        seen
    }
}

impl Referee for Target {
    fn seats(&self) -> usize {
        self.players.len()
    }

    fn step(&mut self) -> Option<Step> {
        if self.over() {
            return None;
        }
        let requests = (0..self.players.len())
            .map(|s| {
                let mut line = format!("{} {}", self.players[s], self.last_wall);
                for (o, p) in self.players.iter().enumerate() {
                    if o != s {
                        line.push_str(&format!(" {p}"));
                    }
                }
                Request::new(s, line)
            })
            .collect();
        Some(Step { notices: vec![], requests })
    }

    fn apply(&mut self, replies: Vec<(Seat, Reply)>) -> (Vec<Judgement>, Vec<serde_json::Value>) {
        self.turn += 1;
        let mut dirs = vec![2u8; self.players.len()];
        let mut judgements = Vec::new();
        for (s, reply) in replies {
            let verdict = match reply {
                Reply::Answer(text) => match text.trim().parse::<u8>() {
                    Ok(d) if d <= 4 => {
                        dirs[s] = d;
                        Verdict::Accepted { r#move: d.to_string() }
                    }
                    _ => Verdict::Invalid { answer: text, reason: "expected one digit 0-4; treated as 2 (stay)".into() },
                },
                Reply::Timeout => Verdict::TimedOut,
                Reply::Gone => Verdict::Gone,
            };
            judgements.push(Judgement { seat: s, verdict });
        }
        self.players = self.resolve(&dirs);
        let mut events = vec![json!({"type": "move", "turn": self.turn, "moves": dirs, "positions": self.players})];
        self.last_wall = NO_WALL;
        // Whether a wall can be placed this turn is judged when its wall is
        // drawn: the turn whose wall takes the last qualifying cell is a turn
        // in which a wall could be placed, not the first of the ten without.
        let cands = self.wall_candidates();
        if self.rng.gen_bool(WALL_CHANCE) && !cands.is_empty() {
            let c = cands[self.rng.gen_range(0..cands.len())];
            self.wall[c] = true;
            self.last_wall = c;
            events.push(json!({"type": "wall", "cell": c}));
        }
        if cands.is_empty() {
            self.saturated_for += 1;
        } else {
            self.saturated_for = 0;
        }
        (judgements, events)
    }

    fn is_over(&self) -> bool {
        self.over()
    }

    fn standings(&self) -> Vec<SeatResult> {
        let dist: Vec<usize> = self.players.iter().map(|&p| distance(p, self.target)).collect();
        let best = dist.iter().copied().min().unwrap_or(0);
        let winners = dist.iter().filter(|&&d| d == best).count();
        dist.iter()
            .enumerate()
            .map(|(s, &d)| SeatResult {
                seat: s,
                score: if d == best { 1.0 } else { 0.0 },
                rank: 1 + dist.iter().filter(|&&o| o < d).count(),
                result: match (d == best, winners) {
                    (true, 1) => MatchResult::Win,
                    (true, _) => MatchResult::Tie,
                    _ => MatchResult::Loss,
                },
            })
            .collect()
    }

    fn initial_state(&self) -> serde_json::Value {
        json!({"size": SIZE, "target": self.target, "positions": self.players})
    }

    /// Walls, the bots and the target, which spectators see and bots do not.
    fn view(&self) -> View {
        let mut v = View::grid(SIZE, SIZE);
        for (cell, &w) in v.cells.iter_mut().zip(&self.wall) {
            if w {
                *cell = b'#';
            }
        }
        v.cells[self.target] = b'*';
        v.marks.push(Mark { cell: self.target, seat: None, label: "target".into() });
        for (s, &p) in self.players.iter().enumerate() {
            v.cells[p] = view::seat_code(s);
        }
        let d: Vec<String> = self.players.iter().map(|&p| distance(p, self.target).to_string()).collect();
        v.caption = format!("turn {}: distance to the target {}", self.turn, d.join(" "));
        v
    }

    fn legend(&self) -> Legend {
        vec![
            LegendEntry { code: '#', name: "wall".into(), colour: "#444444".into() },
            LegendEntry { code: '*', name: "target (unseen by the bots)".into(), colour: "#f2b705".into() },
        ]
    }
}

/// Every bot hunts the same target by the same rules: no seat has a role.
pub fn seat_role(_seat: Seat) -> Option<SeatRole> {
    None
}

/// Target's replay events, as [`Target::apply`] writes them.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    Move { moves: Vec<u8>, positions: Vec<usize> },
    Wall { cell: usize },
}

/// An event in words, places as the cell numbers the requests carry;
/// `None` if it is not one of Target's. A move says where each bot headed
/// (the digit its answer counted as) and where it is now: a move into a
/// wall or a cell another bot wanted leaves it where it was.
pub fn event_sentence(event: &Value, names: Names) -> Option<String> {
    Some(match words::parse::<Event>(event)? {
        Event::Move { moves, positions } => {
            if moves.len() != positions.len() || moves.is_empty() {
                return None;
            }
            let each = moves.iter().zip(&positions).enumerate().map(|(seat, (&digit, &cell))| {
                let name = names.of(seat);
                Some(match digit {
                    2 => format!("{name} stayed at {cell}"),
                    0 | 1 | 3 | 4 => format!("{name} headed {} (now at {cell})", ["up", "left", "", "right", "down"][digit as usize]),
                    _ => return None,
                })
            });
            words::and_list(&each.collect::<Option<Vec<String>>>()?)
        }
        Event::Wall { cell } => format!("a wall went up at {cell}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GameKind;

    /// "Play continues until no wall can be placed for 10 consecutive
    /// turns": the turn whose wall takes the last qualifying cell is a turn
    /// in which a wall could be placed, so the game ends 10 turns after it.
    /// Seed 6 with two bots that stay still: the last wall at turn 3510,
    /// the end after turn 3520.
    #[test]
    fn the_game_ends_ten_turns_after_the_last_turn_a_wall_could_be_placed() {
        let mut g = Target::new(2, 6);
        let mut last_wall = 0;
        while let Some(step) = g.step() {
            let replies = step.requests.iter().map(|r| (r.seat, Reply::Answer("2".into()))).collect();
            let (_, events) = g.apply(replies);
            if events.iter().any(|e| e["type"] == "wall") {
                last_wall = g.turn;
            }
        }
        assert_eq!((last_wall, g.turn), (3510, 3520));
        // A saturated arena: ten turns without a qualifying cell, not nine.
        let mut g = at(&[5, 9]);
        g.wall = vec![true; CELLS];
        for c in [0, 5, 9] {
            g.wall[c] = false;
        }
        for turn in 1..=10 {
            assert!(g.step().is_some(), "turn {turn} is played");
            g.apply(vec![(0, Reply::Answer("2".into())), (1, Reply::Answer("2".into()))]);
        }
        assert!(g.step().is_none());
    }

    fn at(players: &[usize]) -> Target {
        let mut t = Target::new(players.len(), 1);
        t.players = players.to_vec();
        t.target = 0;
        t
    }

    #[test]
    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    fn move_conflicts_resolve_as_the_seed_says() {
        // (name, positions, moves, expected positions)
        let cases: &[(&str, &[usize], &[u8], &[usize])] = &[
            ("two into one cell: both stay", &[100, 102], &[3, 1], &[100, 102]),
            ("into a stayer: the mover stays", &[100, 101], &[3, 2], &[100, 101]),
            ("swap succeeds", &[100, 101], &[3, 1], &[101, 100]),
            ("a chain follows its head", &[100, 101, 102], &[3, 3, 3], &[101, 102, 103]),
            ("a chain whose head is blocked stays", &[100, 101, 102, 103], &[3, 3, 3, 2], &[100, 101, 102, 103]),
            ("wrap around the torus", &[0], &[0], &[992]),
            ("left wraps too", &[32], &[1], &[63]),
        ];
        for (name, pos, moves, want) in cases {
            let t = at(pos);
            assert_eq!(t.resolve(moves), want.to_vec(), "{name}");
        }
        let mut t = at(&[100]);
        t.wall[101] = true;
        assert_eq!(t.resolve(&[3]), vec![100], "into a wall: stays");
    }

    /// The candidates equal the definition checked by brute force: free,
    /// reachable, and walling it leaves every bot connected to the target.
    #[test]
    fn wall_candidates_match_the_definition() {
        let mut rng = crate::rng(99);
        for round in 0..12 {
            let mut t = Target::new(4, round);
            // Random walls, kept only if they do not cut anyone off.
            for _ in 0..(round * 25) {
                let c = rng.gen_range(0..CELLS);
                if c != t.target && !t.players.contains(&c) {
                    t.wall[c] = true;
                    let reach = t.reachable();
                    if !t.players.iter().all(|&p| reach[p]) {
                        t.wall[c] = false;
                    }
                }
            }
            let reach = t.reachable();
            let brute: Vec<usize> = (0..CELLS)
                .filter(|&c| {
                    if t.wall[c] || c == t.target || t.players.contains(&c) || !reach[c] {
                        return false;
                    }
                    let mut u = Target::new(4, round);
                    u.players = t.players.clone();
                    u.target = t.target;
                    u.wall = t.wall.clone();
                    u.wall[c] = true;
                    let after = u.reachable();
                    t.players.iter().all(|&p| after[p])
                })
                .collect();
            assert_eq!(t.wall_candidates(), brute, "round {round}");
        }
    }

    #[test]
    fn start_positions_keep_their_distance_and_the_seed_reproduces_them() {
        for seed in 0..20 {
            let t = Target::new(8, seed);
            for (i, &a) in t.players.iter().enumerate() {
                for &b in &t.players[i + 1..] {
                    let d = |x: usize, y: usize| x.abs_diff(y).min(SIZE - x.abs_diff(y));
                    assert!(d(a / SIZE, b / SIZE) > 2 || d(a % SIZE, b % SIZE) > 2, "seed {seed}: {a} and {b} too close");
                }
            }
            assert_eq!(Target::new(8, seed).players, t.players);
            assert_eq!(Target::new(8, seed).target, t.target);
        }
    }

    #[test]
    fn input_lines_list_self_wall_then_enemies_in_seat_order() {
        let mut t = at(&[5, 6, 7]);
        let step = t.step().unwrap();
        assert_eq!(step.requests[1].payload, "6 1024 5 7");
        t.last_wall = 40;
        assert_eq!(t.step().unwrap().requests[2].payload, "7 40 5 6");
    }

    #[test]
    fn toroidal_distance() {
        assert_eq!(distance(0, 31), 1);
        assert_eq!(distance(0, 992), 1);
        assert_eq!(distance(0, 16 * 32 + 16), 32);
    }

    #[test]
    fn joint_winners_each_score() {
        let mut t = at(&[1, 32, 99]);
        t.saturated_for = SATURATED_TURNS;
        let r = t.result().unwrap();
        assert_eq!(r.iter().map(|s| s.score).collect::<Vec<_>>(), vec![1.0, 1.0, 0.0]);
        assert_eq!(r[0].result, MatchResult::Tie);
        assert_eq!(r[2].rank, 3);
    }

    /// Each of Target's events in words; what is not one of them is shown
    /// as written.
    #[test]
    fn events_in_words() {
        let names = ["alice".to_owned(), "bob".to_owned(), "carol".to_owned()];
        let cases = [
            (
                json!({"type": "move", "turn": 1, "moves": [3, 2, 0], "positions": [246, 195, 12]}),
                "alice headed right (now at 246), bob stayed at 195 and carol headed up (now at 12)",
            ),
            (
                json!({"type": "move", "turn": 9, "moves": [1, 4], "positions": [0, 1023]}),
                "alice headed left (now at 0) and bob headed down (now at 1023)",
            ),
            (
                json!({"type": "move", "turn": 9, "moves": [2, 2, 2, 2], "positions": [1, 2, 3, 4]}),
                "alice stayed at 1, bob stayed at 2, carol stayed at 3 and seat 4 stayed at 4",
            ),
            (json!({"type": "wall", "cell": 517}), "a wall went up at 517"),
            // Malformed: a digit no move has, moves and positions that do
            // not pair up, a cell that is no number.
            (
                json!({"type": "move", "moves": [7], "positions": [5]}),
                r#"move {"moves":[7],"positions":[5]} (an event this viewer cannot put in words)"#,
            ),
            (
                json!({"type": "move", "moves": [2, 2], "positions": [5]}),
                r#"move {"moves":[2,2],"positions":[5]} (an event this viewer cannot put in words)"#,
            ),
            (json!({"type": "wall", "cell": "x"}), r#"wall {"cell":"x"} (an event this viewer cannot put in words)"#),
            (json!({"type": "found", "seat": 2}), r#"found {"seat":2} (an event this viewer cannot put in words)"#),
        ];
        for (event, sentence) in cases {
            assert_eq!(GameKind::Target.event_sentence(&event, Names(&names)), sentence, "{event}");
        }
        assert_eq!(GameKind::Target.seat_roles(16), vec![None; 16]);
    }
}
