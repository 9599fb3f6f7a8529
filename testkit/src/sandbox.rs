//! Boxes for tests that play bots: their settings, and whether boxes can
//! be made here at all.

use koth_sandbox::{Limits, Sandbox, SandboxConfig};

/// Settings for a test binary's bot boxes: `memory` bytes each, no CPU or
/// wall-time limit (the engine times the moves), at most `slots` at once,
/// in a runtime folder `/run/koth-test/<name>` and a uid range from
/// `uid_base` of its own (test binaries run at once, and must not share
/// either).
pub fn bot_sandbox(name: &str, uid_base: u32, memory: u64, slots: u32) -> SandboxConfig {
    SandboxConfig {
        limits: Limits { memory, cpu_time: None, wall_time: None, ..Limits::default() },
        runtime_dir: format!("/run/koth-test/{name}").into(),
        uid_base,
        slots,
        ..SandboxConfig::default()
    }
}

/// Whether a box can be made with `config` here; if not, the sandbox is a
/// missing prerequisite ([`crate::missing`]: fails in CI, skips elsewhere).
#[track_caller]
pub fn sandbox_works(config: &SandboxConfig) -> bool {
    match Sandbox::create(config.clone()) {
        Ok(_) => true,
        Err(e) => crate::missing(format!("the sandbox cannot run: {e}")),
    }
}
