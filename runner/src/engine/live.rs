//! A match's turns as they are played, for whoever shows the match while it
//! runs (the service writes them for the match's page).
//!
//! The engine pushes each turn once it is judged, between turns, outside
//! any bot's clock: one short lock and a copy of the turn. A reader takes
//! what was pushed since it last took. Nothing here can slow or stop a
//! match: a reader that never comes leaves at most the match's own turns
//! waiting, which the match's replay limit bounds
//! ([`MatchOptions::replay_limit`](super::MatchOptions::replay_limit)).

use std::sync::Mutex;

use koth_games::replay::Turn;

#[derive(Debug, Default)]
pub struct LiveTurns {
    inner: Mutex<Unread>,
}

#[derive(Debug, Default)]
struct Unread {
    played: u32,
    turns: Vec<Turn>,
}

impl LiveTurns {
    pub fn new() -> LiveTurns {
        LiveTurns::default()
    }

    /// The engine: `turn` was played and judged.
    pub fn push(&self, turn: &Turn) {
        let mut u = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        u.played = turn.turn;
        u.turns.push(turn.clone());
    }

    /// Turns played in all, and those pushed since the last take, in order.
    pub fn take(&self) -> (u32, Vec<Turn>) {
        let mut u = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        (u.played, std::mem::take(&mut u.turns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_turn_is_taken_once_in_order() {
        let live = LiveTurns::new();
        assert_eq!(live.take(), (0, vec![]));
        let t = |n| Turn { turn: n, ..Turn::default() };
        live.push(&t(1));
        live.push(&t(2));
        assert_eq!(live.take(), (2, vec![t(1), t(2)]));
        assert_eq!(live.take(), (2, vec![]));
        live.push(&t(3));
        assert_eq!(live.take(), (3, vec![t(3)]));
    }
}
