//! What the runner's match tests share: the sandbox settings, bots from the
//! repository, and the rule that a missing sandbox fails in CI.
#![allow(dead_code, unused_imports)] // each suite uses its own part

use std::path::Path;

use koth_games::GameKind;
use koth_runner::engine::MatchOptions;
use koth_runner::BotSpec;
use koth_sandbox::SandboxConfig;

pub use koth_testkit::missing;

/// Whether the sandbox works here; in CI its absence fails the test.
pub fn sandbox_ok() -> bool {
    koth_testkit::sandbox_works(&sandbox_config())
}

pub fn sandbox_config() -> SandboxConfig {
    koth_testkit::bot_sandbox("runner", 63000, 512 << 20, 200)
}

pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

pub fn bot(path: &str) -> BotSpec {
    koth_runner::bot::prepare(&repo().join(path), &sandbox_config()).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn test_bot(name: &str, args: &[&str]) -> BotSpec {
    let mut b = bot(&format!("runner/tests/bots/{name}"));
    b.args.extend(args.iter().map(|a| a.to_string()));
    b
}

pub fn options(game: GameKind, seed: u64) -> MatchOptions {
    MatchOptions { sandbox: sandbox_config(), ..MatchOptions::new(game, seed) }
}

/// Play a match as the service does: one the machine failed is played
/// again after a pause ([`koth_testkit::again_while_overloaded`]). A test
/// of the overload itself calls the engine directly.
pub fn play(opts: &MatchOptions, bots: Vec<BotSpec>) -> koth_runner::engine::Result<koth_runner::engine::MatchReport> {
    koth_testkit::again_while_overloaded(
        || koth_runner::engine::play(opts, bots.clone()),
        |r| match r {
            Ok(koth_runner::engine::MatchReport { ended_by: koth_games::replay::EndedBy::HostOverloaded { reason, .. }, .. }) => {
                Some(reason.clone())
            }
            _ => None,
        },
    )
}
