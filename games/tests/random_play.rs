//! Random matches of every game, played by random bots that speak each
//! game's protocol text (so the text is exercised too). For every match:
//! it ends, every answer is judged, every event can be put in words,
//! results are well formed, and replaying the recorded answers through a
//! fresh referee with the same seed gives the same judgements, events and
//! result (a replay is checkable against the rules).

use koth_games::words::{self, Names};
use koth_games::{competition_ranks, GameKind, Reply, Seat, Step};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A bot that knows the protocol but plays at random, sometimes badly.
struct RandomBot {
    rng: ChaCha8Rng,
    game: GameKind,
    /// Flit: the board as told by updates, [y][x].
    board: Vec<u8>,
    colour: u8,
}

impl RandomBot {
    fn new(game: GameKind, seed: u64) -> RandomBot {
        RandomBot { rng: ChaCha8Rng::seed_from_u64(seed), game, board: vec![0; 1024], colour: 0 }
    }

    fn notice(&mut self, line: &str) {
        let f: Vec<usize> = line.split_whitespace().filter_map(|t| t.parse().ok()).collect();
        match f.as_slice() {
            [c] => self.colour = *c as u8,
            [x, y, c] => self.board[y * 32 + x] = *c as u8,
            _ => {}
        }
    }

    fn answer(&mut self, payload: &str) -> Reply {
        let roll: f64 = self.rng.gen();
        if roll < 0.03 {
            return Reply::Timeout;
        }
        if roll < 0.06 {
            return Reply::Answer("garbage !".into());
        }
        let r = &mut self.rng;
        Reply::Answer(match self.game {
            GameKind::Snake => ["u", "d", "l", "r"][r.gen_range(0..4)].into(),
            GameKind::Target => r.gen_range(0..5).to_string(),
            GameKind::Slime => {
                let (me, rows) = payload.split_once(',').unwrap();
                let rows: Vec<&[u8]> = rows.split(',').map(str::as_bytes).collect();
                let n = rows.len();
                let mine: Vec<(usize, usize)> =
                    (0..n * n).map(|i| (i / n, i % n)).filter(|&(a, b)| rows[a][b] == me.as_bytes()[0]).collect();
                if mine.is_empty() {
                    "0 0 0 0".into()
                } else {
                    let (a, b) = mine[r.gen_range(0..mine.len())];
                    let c = (a as i64 + r.gen_range(-2..=2)).clamp(0, n as i64 - 1);
                    let d = (b as i64 + r.gen_range(-2..=2)).clamp(0, n as i64 - 1);
                    format!("{a} {b} {c} {d}")
                }
            }
            GameKind::Linkage => {
                let lines: Vec<&[u8]> = payload.lines().map(str::as_bytes).collect();
                let left = &lines[0][1..5];
                let colours: Vec<char> = "RBGY".chars().zip(left).filter(|(_, &n)| n != b'0').map(|(c, _)| c).collect();
                let free = |c: usize, row: usize| lines[row + 1][c] == b'.';
                let mut spots = Vec::new();
                for row in 0..7 {
                    for c in 0..7 {
                        if c + 1 < 7 && free(c, row) && free(c + 1, row) {
                            spots.push(((c, row), (c + 1, row)));
                        }
                        if row + 1 < 7 && free(c, row) && free(c, row + 1) {
                            spots.push(((c, row), (c, row + 1)));
                        }
                    }
                }
                if spots.is_empty() || colours.is_empty() {
                    "Skip".into()
                } else {
                    let ((a, b), (c, d)) = spots[r.gen_range(0..spots.len())];
                    let k = colours[r.gen_range(0..colours.len())];
                    let cell = |x: usize, y: usize| format!("{}{}", (b'A' + x as u8) as char, y + 1);
                    format!("{k}{}{}", cell(a, b), cell(c, d))
                }
            }
            GameKind::Flit => {
                let own: Vec<usize> = (0..1024).filter(|&i| self.board[i] == self.colour).collect();
                let nb = |i: usize| {
                    let (x, y) = (i % 32, i / 32);
                    [(x + 1) % 32 + y * 32, (x + 31) % 32 + y * 32, x + (y + 1) % 32 * 32, x + (y + 31) % 32 * 32]
                };
                let from = own[r.gen_range(0..own.len())];
                let targets: Vec<usize> = own.iter().filter(|&&o| o != from).flat_map(|&o| nb(o)).filter(|&t| self.board[t] == 0).collect();
                if targets.is_empty() || r.gen_bool(0.05) {
                    format!("{0} {1} {0} {1}", from % 32, from / 32)
                } else {
                    let to = targets[r.gen_range(0..targets.len())];
                    format!("{} {} {} {}", from % 32, from / 32, to % 32, to / 32)
                }
            }
        })
    }
}

struct Record {
    answers: Vec<Vec<(Seat, Reply)>>,
    judgements: Vec<serde_json::Value>,
    events: Vec<serde_json::Value>,
    result: serde_json::Value,
    turns: usize,
}

fn play(game: GameKind, seats: usize, seed: u64) -> Record {
    let mut referee = game.referee(seats, seed).unwrap();
    let mut bots: Vec<RandomBot> = (0..seats).map(|s| RandomBot::new(game, seed * 31 + s as u64)).collect();
    let names: Vec<String> = (0..seats).map(|s| format!("bot{s}")).collect();
    let names = Names(&names);
    let mut rec = Record { answers: vec![], judgements: vec![], events: vec![], result: serde_json::Value::Null, turns: 0 };
    while let Some(Step { notices, requests }) = referee.step() {
        for (s, line) in &notices {
            assert!(*s < seats);
            bots[*s].notice(line);
        }
        if requests.is_empty() {
            continue; // final notices (Snake's WIN/LOSS/TIE)
        }
        let replies: Vec<(Seat, Reply)> = requests.iter().map(|r| (r.seat, bots[r.seat].answer(&r.payload))).collect();
        let (judgements, events) = referee.apply(replies.clone());
        assert_eq!(judgements.len(), replies.len(), "{game:?}: one judgement per answer");
        for e in &events {
            assert!(e["type"].is_string(), "{game:?}: event without a type: {e}");
            // Every event the rules write has its sentence.
            let sentence = game.event_sentence(e, names);
            assert_ne!(sentence, words::not_understood(e), "{game:?}: an event with no words");
        }
        rec.answers.push(replies);
        rec.judgements.push(serde_json::to_value(&judgements).unwrap());
        rec.events.extend(events);
        rec.turns += 1;
        assert!(rec.turns < 60_000, "{game:?} seed {seed}: no end");
    }
    let result = referee.result().expect("a finished game has a result");
    assert_eq!(result.len(), seats);
    let scores: Vec<f64> = result.iter().map(|r| r.score).collect();
    if game != GameKind::Target {
        assert_eq!(result.iter().map(|r| r.rank).collect::<Vec<_>>(), competition_ranks(&scores), "{game:?}");
    }
    rec.result = serde_json::to_value(&result).unwrap();
    rec
}

/// Feed recorded answers to a fresh referee and compare everything.
fn replay(game: GameKind, seats: usize, seed: u64, rec: &Record) {
    let mut referee = game.referee(seats, seed).unwrap();
    let mut turn = 0;
    let mut events = Vec::new();
    while let Some(step) = referee.step() {
        if step.requests.is_empty() {
            continue;
        }
        let (j, e) = referee.apply(rec.answers[turn].clone());
        assert_eq!(serde_json::to_value(&j).unwrap(), rec.judgements[turn], "{game:?} turn {turn}");
        events.extend(e);
        turn += 1;
    }
    assert_eq!(turn, rec.turns);
    assert_eq!(events, rec.events);
    assert_eq!(serde_json::to_value(referee.result().unwrap()).unwrap(), rec.result);
}

#[test]
fn random_matches_end_and_replay_exactly() {
    for game in GameKind::ALL {
        let (lo, hi) = game.seat_range();
        // Flit and Target matches run thousands of turns; fewer of them.
        let matches = match game {
            GameKind::Flit => 6,
            GameKind::Target => 3,
            _ => 20,
        };
        for seed in 0..matches {
            let seats = if lo == hi { lo } else { lo + (seed as usize % (hi.min(6) - lo + 1)) };
            let rec = play(game, seats, seed);
            replay(game, seats, seed, &rec);
        }
    }
}

#[test]
fn different_seeds_give_different_matches() {
    for game in [GameKind::Flit, GameKind::Target] {
        let a = game.referee(game.seat_range().0, 1).unwrap().initial_state();
        let b = game.referee(game.seat_range().0, 2).unwrap().initial_state();
        assert_ne!(a, b, "{game:?}");
    }
}
