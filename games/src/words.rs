//! A match in words, for people watching it: what each seat is where a
//! game gives seats different roles ([`SeatRole`]), and each event of a
//! replay as one short sentence that names the bots.
//!
//! Replay events are the games' JSON objects (`{"type": "move", "seat": 0,
//! ...}`), exact and meant for programs; a viewer showing them raw makes a
//! reader decode `{"changes": [[22, 20, 0], ...]}`. Each game says in its
//! own module what its events mean in words, with its protocol's way of
//! writing places (`3 4`, `B3`, cell `517`), dispatched from
//! [`GameKind`](crate::GameKind). An event a game does not know, or one
//! missing its fields (a replay from a newer or broken engine), gets
//! [`not_understood`]: viewers must show every replay, so nothing here
//! panics on what a replay holds.

use serde::Serialize;
use serde_json::Value;

use crate::Seat;

/// What one seat is in its game, for the people watching.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SeatRole {
    /// A word or two to put beside the bot's name ("More").
    pub name: String,
    /// What that means, in a short sentence.
    pub note: String,
}

/// The bots' names by seat, as sentences use them.
#[derive(Clone, Copy, Debug)]
pub struct Names<'a>(pub &'a [String]);

impl Names<'_> {
    /// The bot in `seat`, or "seat N" (counted from 1, as the pages do)
    /// for a seat with no name or no seat at all.
    pub fn of(&self, seat: Seat) -> String {
        match self.0.get(seat) {
            Some(name) if !name.is_empty() => name.clone(),
            _ => format!("seat {}", seat + 1),
        }
    }
}

/// The sentence for an event no game's words fit: its type, and the rest as
/// it was written, so nothing is hidden.
pub fn not_understood(event: &Value) -> String {
    match event.get("type").and_then(Value::as_str) {
        Some(kind) => {
            let mut rest = event.clone();
            if let Some(m) = rest.as_object_mut() {
                m.remove("type");
            }
            if rest.as_object().is_some_and(|m| m.is_empty()) {
                format!("{kind} (an event this viewer cannot put in words)")
            } else {
                format!("{kind} {rest} (an event this viewer cannot put in words)")
            }
        }
        None => format!("{event} (not a game event)"),
    }
}

/// `n thing` or `n things` ("1 piece", "2 pieces").
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Clauses joined into one sentence: "a", "a and b", "a, b and c".
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The event as `T`, the game's own type for its events; `None` when it
/// does not fit (an unknown type, a field missing or of the wrong kind).
pub fn parse<T: serde::de::DeserializeOwned>(event: &Value) -> Option<T> {
    T::deserialize(event).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_fall_back_to_seat_numbers() {
        let names = ["alice".to_owned(), String::new()];
        let n = Names(&names);
        assert_eq!((n.of(0), n.of(1), n.of(7)), ("alice".into(), "seat 2".into(), "seat 8".into()));
    }

    #[test]
    fn what_cannot_be_put_in_words_is_shown_as_written() {
        let cases = [
            (json!({"type": "teleport", "seat": 1}), r#"teleport {"seat":1} (an event this viewer cannot put in words)"#),
            (json!({"type": "bang"}), "bang (an event this viewer cannot put in words)"),
            (json!([1, 2]), "[1,2] (not a game event)"),
            (json!({"type": 5}), r#"{"type":5} (not a game event)"#),
            (json!(null), "null (not a game event)"),
        ];
        for (event, sentence) in cases {
            assert_eq!(not_understood(&event), sentence);
        }
    }

    #[test]
    fn lists_and_counts() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(and_list(&s(&[])), "");
        assert_eq!(and_list(&s(&["a"])), "a");
        assert_eq!(and_list(&s(&["a", "b"])), "a and b");
        assert_eq!(and_list(&s(&["a", "b", "c"])), "a, b and c");
        assert_eq!((count(1, "piece", "pieces"), count(0, "piece", "pieces")), ("1 piece".into(), "0 pieces".into()));
    }
}
