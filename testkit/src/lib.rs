//! What koth's test suites share, so that each rule is written once:
//!
//! - [`in_ci`] and [`missing`]: a test whose prerequisite (root, the
//!   sandbox, a language image, Docker, PostgreSQL's binaries) is missing
//!   fails in CI and is skipped elsewhere, saying so; CI never skips
//!   silently.
//! - [`postgres`] (feature `postgres`): a private PostgreSQL server per
//!   test, in a scratch folder removed once the test passes.
//! - [`bot_sandbox`] and [`sandbox_works`] (feature `sandbox`): a test
//!   binary's bot boxes, and whether boxes can be made here.
//! - [`browser`] (feature `browser`): Debian's chromium driven through
//!   chromedriver, for the pages' tests.
//! - [`assert_golden`]: a text compared with its golden file, which
//!   `UPDATE_GOLDEN=1` rewrites.
//!
//! A dev-dependency only (`tests/architecture.rs` checks that no crate's
//! `[dependencies]` names it); production code carries none of it.

use std::fmt::Display;
use std::path::Path;

/// Whether this is a CI run: `CI` is set, and not to "", "0" or "false".
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// A test's prerequisite is missing (`why` says which, and what to do): in
/// CI this panics with `CI=true and {why}`; elsewhere it prints
/// `SKIPPED (not in CI): {why}` and returns `false`, so that a test writes
/// `if !available() { return; }` with `available` ending in
/// `Err(why) => missing(why)`.
#[track_caller]
pub fn missing(why: impl Display) -> bool {
    if in_ci() {
        panic!("CI=true and {why}");
    }
    eprintln!("SKIPPED (not in CI): {why}");
    false
}

/// Whether `result` is `Ok`; an error is a missing prerequisite ([`missing`]).
#[track_caller]
pub fn available<T, E: Display>(result: Result<T, E>) -> bool {
    match result {
        Ok(_) => true,
        Err(why) => missing(why),
    }
}

/// The text in `path` is `written`, else the test fails with `what`
/// (what changed, and who reads it). With `UPDATE_GOLDEN` in the
/// environment the file is rewritten first (its folder made): change a
/// golden file deliberately, and say so where its shape is documented.
/// Returns the golden text, for the checks that read it back.
#[track_caller]
pub fn assert_golden(path: &Path, written: &str, what: &str) -> String {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        }
        std::fs::write(path, written).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
    let golden = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(written, golden, "{}: {what}; if on purpose, UPDATE_GOLDEN=1 rewrites it", path.display());
    golden
}

/// The most tries [`again_while_overloaded`] makes.
pub const OVERLOADED_TRIES: u32 = 6;

/// Play a match as the service does with one the machine failed (it ended
/// `HostOverloaded`: this shared machine stalled, or was too busy to time
/// the bots fairly, and nobody was charged): again, after a pause that
/// doubles (0.25 s, then 0.5, 1, 2, 4), up to [`OVERLOADED_TRIES`] tries,
/// saying so; the last try's result is returned whatever it is. A test
/// asserts what the bots and the rules did, which such a match does not
/// tell. `overloaded` gives the reason of a result the machine failed.
///
/// The pause is the point: a test binary's tests run two at a time on CI's
/// two cores, and three tries in a row, at once, all met the same busy
/// moment of the other test (a per-turn Python bot's start-up waited 39 ms
/// for a CPU and the engine 12 ms more, past a 50 ms move's bound).
pub fn again_while_overloaded<T>(play: impl FnMut() -> T, overloaded: impl Fn(&T) -> Option<String>) -> T {
    again_after(std::time::Duration::from_millis(250), play, overloaded)
}

fn again_after<T>(first_pause: std::time::Duration, mut play: impl FnMut() -> T, overloaded: impl Fn(&T) -> Option<String>) -> T {
    let mut pause = first_pause;
    for _ in 1..OVERLOADED_TRIES {
        let result = play();
        match overloaded(&result) {
            Some(reason) => {
                eprintln!("the machine was overloaded ({reason}): playing the match again in {pause:?}, as the service would");
                std::thread::sleep(pause);
                pause *= 2;
            }
            None => return result,
        }
    }
    play()
}

/// `work` done on every item by two threads, each taking the next item
/// when it is free (CI's machines have two cores, and a test that plays
/// matches or checks replays one after the other leaves one idle); the
/// results in the items' order.
pub fn two_at_a_time<T: Send, R: Send>(items: Vec<T>, work: impl Fn(T) -> R + Sync) -> Vec<R> {
    let queue = std::sync::Mutex::new(items.into_iter().enumerate());
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                // The lock is released before the work: the statement ends.
                let Some((i, item)) = queue.lock().unwrap_or_else(|p| p.into_inner()).next() else { break };
                let r = work(item);
                done.lock().unwrap_or_else(|p| p.into_inner()).push((i, r));
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The test binary's scratch folder, `CARGO_TARGET_TMPDIR` (set by Cargo
/// for integration tests and benchmarks, as the calling crate is built).
#[macro_export]
macro_rules! target_tmpdir {
    () => {
        ::std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
    };
}

#[cfg(feature = "browser")]
pub mod browser;
#[cfg(feature = "sandbox")]
mod sandbox;
#[cfg(feature = "sandbox")]
pub use sandbox::{bot_sandbox, sandbox_works};

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
pub use postgres::{postgres, postgres_binaries, TestPostgres};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_at_a_time_does_every_item_once_in_two_threads_and_keeps_their_order() {
        let threads = std::sync::Mutex::new(std::collections::HashSet::new());
        let out = two_at_a_time((0..40u64).collect(), |i| {
            threads.lock().unwrap().insert(std::thread::current().id());
            // The first item is held until the other thread has taken one
            // (for at most 5 s: one thread alone then fails the test).
            let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while i == 0 && threads.lock().unwrap().len() < 2 && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            i * i
        });
        assert_eq!(out, (0..40u64).map(|i| i * i).collect::<Vec<_>>());
        assert_eq!(threads.into_inner().unwrap().len(), 2);
    }

    #[test]
    fn a_match_the_machine_failed_is_played_again_until_it_is_not_or_the_tries_are_spent() {
        // (how many tries the machine fails, tries made, the result's try)
        for (failed, tries, result) in [(0, 1, 1), (2, 3, 3), (5, 6, 6), (9, 6, 6)] {
            let mut made = 0;
            let got = again_after(
                std::time::Duration::from_millis(1),
                || {
                    made += 1;
                    made
                },
                |&n| (n <= failed).then(|| format!("try {n}")),
            );
            assert_eq!((made, got), (tries, result), "the machine failing {failed} tries");
        }
    }

    /// The only test here that touches `CI` (tests run in threads of one
    /// process, sharing the environment).
    #[test]
    fn ci_is_what_the_variable_says_and_a_missing_prerequisite_fails_only_there() {
        let before = std::env::var_os("CI");
        for (value, ci) in
            [(Some("true"), true), (Some("1"), true), (Some("false"), false), (Some("0"), false), (Some(""), false), (None, false)]
        {
            match value {
                Some(v) => std::env::set_var("CI", v),
                None => std::env::remove_var("CI"),
            }
            assert_eq!(in_ci(), ci, "CI={value:?}");
            let outcome = std::panic::catch_unwind(|| missing("no frobnicator (install it)"));
            if ci {
                let message = outcome.expect_err("CI fails").downcast::<String>().unwrap();
                assert_eq!(*message, "CI=true and no frobnicator (install it)");
            } else {
                assert!(!outcome.expect("elsewhere it skips"));
            }
            assert_eq!(std::panic::catch_unwind(|| available(Ok::<(), String>(()))).ok(), Some(true));
        }
        match before {
            Some(v) => std::env::set_var("CI", v),
            None => std::env::remove_var("CI"),
        }
    }

    #[test]
    fn a_golden_file_matches_and_a_changed_text_does_not() {
        let dir = std::env::temp_dir().join(format!("koth-testkit-golden-{}", std::process::id()));
        let path = dir.join("sub/shape.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"a\": 1}\n").unwrap();
        assert_eq!(assert_golden(&path, "{\"a\": 1}\n", "the shape changed"), "{\"a\": 1}\n");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            // Rewriting: a changed text is written, and then matches.
            assert_eq!(assert_golden(&path, "{\"a\": 2}\n", "the shape changed"), "{\"a\": 2}\n");
            std::fs::remove_dir_all(&dir).unwrap();
            return;
        }
        let changed = std::panic::catch_unwind(|| assert_golden(&path, "{\"a\": 2}\n", "the shape changed"));
        let message = changed.expect_err("a changed text fails").downcast::<String>().unwrap();
        assert!(message.contains("the shape changed") && message.contains("UPDATE_GOLDEN=1"), "{message}");
        let absent = std::panic::catch_unwind(|| assert_golden(&dir.join("absent.json"), "x", "new"));
        let message = absent.expect_err("an absent file fails").downcast::<String>().unwrap();
        assert!(message.contains("UPDATE_GOLDEN=1 writes it"), "{message}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
