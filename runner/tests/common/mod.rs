//! What the runner's match tests share: the sandbox settings, bots from the
//! repository, and the rule that a missing sandbox fails in CI.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use koth_games::GameKind;
use koth_runner::engine::MatchOptions;
use koth_runner::BotSpec;
use koth_sandbox::{Limits, SandboxConfig};

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Whether the sandbox works here; in CI its absence fails the test.
pub fn sandbox_ok() -> bool {
    match koth_sandbox::Sandbox::create(sandbox_config()) {
        Ok(_) => true,
        Err(e) if in_ci() => panic!("CI=true and the sandbox cannot run: {e}"),
        Err(e) => {
            eprintln!("SKIPPED (not in CI): {e}");
            false
        }
    }
}

pub fn sandbox_config() -> SandboxConfig {
    SandboxConfig {
        limits: Limits { memory: 512 << 20, cpu_time: None, wall_time: None, ..Limits::default() },
        runtime_dir: PathBuf::from("/run/koth-test/runner"),
        uid_base: 63000,
        slots: 200,
        ..SandboxConfig::default()
    }
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
