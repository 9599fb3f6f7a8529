//! Reading replays: a recorded match played again through a fresh referee.
//!
//! A replay (written by the runner's engine) holds the game, the seed, the
//! seats and, for every turn that asked something, each bot's answer. The
//! rules are deterministic given the seed, so a fresh referee fed the
//! recorded answers passes through the same states. That gives viewers a
//! picture of every turn ([`frames`]) without replays carrying a board per
//! turn, and lets tests check a replay against the rules ([`check`]).
//!
//! Replay fields read here: `game`, `seed`, `seats` (one entry per seat),
//! `turns[].answers[]` (`{"seat", "answer"}`, `{"seat", "timeout": true}`
//! or `{"seat", "gone": true}`), and for [`check`] also
//! `turns[].judgements`, `turns[].events` and `result`.

use serde::Serialize;
use serde_json::Value;

use crate::view::{Legend, Mark, View};
use crate::{GameKind, Referee, Reply, Seat};

/// Every turn of a match as pictures, compactly: the first frame has all
/// the cells, each later one only the cells that changed.
#[derive(Clone, Debug, Serialize)]
pub struct Frames {
    pub game: &'static str,
    pub width: usize,
    pub height: usize,
    pub legend: Legend,
    pub frames: Vec<Frame>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Frame {
    /// 0 before the first move; else the replay's turn number.
    pub turn: usize,
    /// Every cell (first frame only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells: Option<String>,
    /// (cell index, new code) since the previous frame.
    pub changes: Vec<(usize, char)>,
    pub marks: Vec<Mark>,
    pub caption: String,
}

/// The frames of a replay: the initial picture and one after each turn.
pub fn frames(replay: &Value) -> Result<Frames, String> {
    let kind = game_of(replay)?;
    let mut out: Option<Frames> = None;
    let mut previous: Option<View> = None;
    replay_through(replay, |referee, turn, _, _| {
        let v = referee.view();
        let frames = out.get_or_insert_with(|| Frames {
            game: kind.name(),
            width: v.width,
            height: v.height,
            legend: referee.legend(),
            frames: Vec::new(),
        });
        let changes = match &previous {
            Some(p) if p.cells.len() == v.cells.len() => {
                p.cells.iter().zip(&v.cells).enumerate().filter(|(_, (a, b))| a != b).map(|(i, (_, &b))| (i, b as char)).collect()
            }
            _ => Vec::new(),
        };
        frames.frames.push(Frame {
            turn,
            cells: previous.is_none().then(|| String::from_utf8_lossy(&v.cells).into_owned()),
            changes,
            marks: v.marks.clone(),
            caption: v.caption.clone(),
        });
        previous = Some(v);
        Ok(())
    })?;
    out.ok_or_else(|| "the replay has no picture".to_owned())
}

/// Check a replay against the rules: every judgement, every event and the
/// result must be what a fresh referee makes of the recorded answers.
pub fn check(replay: &Value) -> Result<(), String> {
    let turns = replay["turns"].as_array().ok_or("the replay has no turns")?;
    let referee = replay_through(replay, |_, turn, judgements, events| {
        if turn == 0 {
            return Ok(());
        }
        let t = &turns[turn - 1];
        let j = serde_json::to_value(judgements).map_err(|e| e.to_string())?;
        if j != t["judgements"] {
            return Err(format!("turn {turn}: judgements differ: rules say {j}, replay says {}", t["judgements"]));
        }
        if Value::from(events.to_vec()) != t["events"] {
            return Err(format!("turn {turn}: events differ: rules say {events:?}, replay says {}", t["events"]));
        }
        Ok(())
    })?;
    if replay["cut_short"].as_bool() != Some(true) {
        let result = serde_json::to_value(referee.result().ok_or("the rules say the game is not over")?).map_err(|e| e.to_string())?;
        if result != replay["result"] {
            return Err(format!("results differ: rules say {result}, replay says {}", replay["result"]));
        }
    }
    Ok(())
}

fn game_of(replay: &Value) -> Result<GameKind, String> {
    let name = replay["game"].as_str().ok_or("the replay does not say its game")?;
    GameKind::from_name(name).ok_or_else(|| format!("unknown game {name:?} in the replay"))
}

/// Play the replay's answers through a fresh referee, calling `each` with
/// the referee before the first turn (turn 0, no judgements) and after every
/// turn. Returns the referee at the end.
fn replay_through(
    replay: &Value,
    mut each: impl FnMut(&dyn Referee, usize, &[crate::Judgement], &[Value]) -> Result<(), String>,
) -> Result<Box<dyn Referee>, String> {
    let kind = game_of(replay)?;
    let seed = replay["seed"].as_u64().ok_or("the replay has no seed")?;
    let seats = replay["seats"].as_array().map(Vec::len).ok_or("the replay does not list its seats")?;
    let turns = replay["turns"].as_array().ok_or("the replay has no turns")?;
    let mut referee = kind.referee(seats, seed)?;
    each(referee.as_ref(), 0, &[], &[])?;
    let mut played = 0;
    while played < turns.len() {
        let Some(step) = referee.step() else {
            return Err(format!("the rules end the game after {played} turns, the replay has {}", turns.len()));
        };
        if step.requests.is_empty() {
            continue;
        }
        let answers = parse_answers(&turns[played]).map_err(|e| format!("turn {}: {e}", played + 1))?;
        let (judgements, events) = referee.apply(answers);
        played += 1;
        each(referee.as_ref(), played, &judgements, &events)?;
    }
    Ok(referee)
}

fn parse_answers(turn: &Value) -> Result<Vec<(Seat, Reply)>, String> {
    let answers = turn["answers"].as_array().ok_or("no answers")?;
    answers
        .iter()
        .map(|a| {
            let seat = a["seat"].as_u64().ok_or("an answer without a seat")? as Seat;
            let reply = if let Some(s) = a["answer"].as_str() {
                Reply::Answer(s.to_owned())
            } else if a.get("timeout").is_some() {
                Reply::Timeout
            } else if a.get("gone").is_some() {
                Reply::Gone
            } else {
                return Err(format!("seat {seat}: an answer that is neither text, timeout nor gone"));
            };
            Ok((seat, reply))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A Slime replay written by hand: seat 0 spreads, seat 1 answers
    /// nonsense, seat 2 times out, seat 3 jumps.
    fn slime_replay() -> Value {
        json!({
            "game": "slime", "seed": 0, "seats": [{}, {}, {}, {}],
            "turns": [
                {"answers": [{"seat": 0, "answer": "0 0 1 1"}]},
                {"answers": [{"seat": 1, "answer": "what"}]},
                {"answers": [{"seat": 2, "timeout": true}]},
                {"answers": [{"seat": 3, "answer": "7 7 5 5"}]},
            ],
            "cut_short": true,
        })
    }

    #[test]
    fn frames_start_full_and_then_carry_changes() {
        let f = frames(&slime_replay()).unwrap();
        assert_eq!((f.game, f.width, f.height, f.frames.len()), ("slime", 8, 8, 5));
        let first = f.frames[0].cells.as_deref().unwrap();
        assert_eq!(&first[..8], "0......1");
        assert_eq!(&first[56..], "2......3");
        // Turn 1: seat 0 spreads to (1, 1): one new cell, marked.
        assert_eq!(f.frames[1].changes, vec![(9, '0')]);
        assert!(f.frames[1].cells.is_none());
        assert_eq!(f.frames[1].marks.iter().map(|m| (m.cell, m.label)).collect::<Vec<_>>(), vec![(0, "from"), (9, "moved")]);
        // Turns 2 and 3 are passes: nothing changes, nothing marked.
        assert!(f.frames[2].changes.is_empty() && f.frames[2].marks.is_empty());
        assert!(f.frames[3].changes.is_empty());
        // Turn 4: seat 3 jumps from (7, 7) to (5, 5).
        assert_eq!(f.frames[4].changes, vec![(45, '3'), (63, '.')]);
        assert_eq!(f.frames[4].caption, "turn 4: squares 2 1 1 1");
    }

    #[test]
    fn a_replay_that_disagrees_with_the_rules_is_refused() {
        let mut r = slime_replay();
        // Five turns of Slime answers for a game of Snake: Snake ends at
        // once on the first (invalid) answers.
        r["game"] = json!("snake");
        r["seats"] = json!([{}, {}]);
        assert!(frames(&r).unwrap_err().contains("the rules end the game"));
        let mut r = slime_replay();
        r["turns"][0]["answers"] = json!([{"seat": 0}]);
        assert!(frames(&r).unwrap_err().contains("turn 1"));
        let mut r = slime_replay();
        r["game"] = json!("chess");
        assert!(frames(&r).unwrap_err().contains("unknown game"));
        // check() compares judgements: these were never recorded.
        assert!(check(&slime_replay()).unwrap_err().contains("turn 1: judgements differ"));
    }

    /// Every game's view has one code per cell, and its codes are empty,
    /// a seat's, or in its legend.
    #[test]
    fn every_view_uses_only_known_codes() {
        for kind in GameKind::ALL {
            let (lo, _) = kind.seat_range();
            let r = kind.referee(lo, 3).unwrap();
            let v = r.view();
            assert_eq!(v.cells.len(), v.width * v.height, "{kind:?}");
            let legend: Vec<u8> = r.legend().iter().map(|e| e.code as u8).collect();
            for &c in &v.cells {
                let known = c == crate::view::EMPTY || crate::view::SEAT_CODES[..lo].contains(&c) || legend.contains(&c);
                assert!(known, "{kind:?}: code {:?} is in no legend", c as char);
            }
        }
    }
}
