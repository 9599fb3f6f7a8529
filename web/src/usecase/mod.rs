//! The API's use cases as pure functions: what a request decides, given
//! the facts the handler gathered (rows read, limits, what the runners
//! run). No I/O here — no database, no HTTP, no async (`tests/architecture.rs`
//! checks the source) — so each is tested with tables; the handler in
//! [`crate::http`] gathers the facts, calls the use case and stores what it
//! admits.

pub mod challenge;
pub mod finals;
pub mod submit;

/// What a name of a user, bot, token or ladder may be.
pub const NAME_RULE: &str = "a name is 1 to 40 letters, digits, '_', '.' or '-', and not only dots";

/// A name that cannot be confused with a path (`.`, `..`).
pub fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.len() <= 40 && n.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)) && !n.chars().all(|c| c == '.')
}

#[cfg(test)]
mod tests {
    #[test]
    fn names() {
        for (name, ok) in [
            ("bot", true),
            ("my_bot-2.1", true),
            (".hidden", true),
            ("", false),
            (".", false),
            ("..", false),
            ("a b", false),
            ("a/b", false),
            ("é", false),
            (&"x".repeat(40), true),
            (&"x".repeat(41), false),
        ] {
            assert_eq!(super::valid_name(name), ok, "{name:?}");
        }
    }
}
