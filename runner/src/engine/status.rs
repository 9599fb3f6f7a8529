//! How a bot's match went, from the host's point of view, and in words: the
//! same words go into the replay and onto the pages.

use koth_sandbox::Exit;
use serde::{Deserialize, Serialize};

/// How a bot's match went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum BotStatus {
    Ok,
    /// Its process ended while it was still needed (exit code or signal;
    /// neither when it could not be reaped).
    Crashed {
        code: Option<i32>,
        signal: Option<i32>,
        turn: u32,
    },
    /// The kernel killed it for memory.
    OutOfMemory {
        turn: u32,
        /// Its box's memory limit in bytes, which the files it wrote in
        /// its scratch folders count against too (a bot that keeps its
        /// state in files can fill it that way); absent in what was
        /// recorded before koth said it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u64>,
    },
    /// It ran out of time where the game does not forgive that (a loss or
    /// a forfeit), by this many milliseconds.
    TimedOut {
        turn: u32,
        by_ms: u64,
    },
    /// Frozen for the rest of the game after `timeouts` consecutive
    /// timeouts; not asked again.
    Frozen {
        turn: u32,
        timeouts: u32,
    },
    /// It stopped reading its input: `unread` bytes were still waiting for
    /// it at a move's deadline. Not asked again.
    NotReading {
        turn: u32,
        unread: u64,
    },
    /// It closed its output and lived on. Not asked again.
    ClosedOutput {
        turn: u32,
    },
    /// It never got going (Snake: it neither connected nor wrote its id
    /// line; or its program could not be started).
    NotConnected {
        reason: String,
    },
    /// Its last invalid answer (the game went on; see `invalid_moves`).
    InvalidOutput {
        turn: u32,
        answer: String,
        reason: String,
    },
}

impl BotStatus {
    /// Every kind, as stored (`status->>'kind'`).
    pub const KINDS: [&'static str; 9] =
        ["ok", "crashed", "out_of_memory", "timed_out", "frozen", "not_reading", "closed_output", "not_connected", "invalid_output"];

    /// The kinds that are the bot's own failure ([`BotStatus::is_bot_failure`]).
    pub const FAILURE_KINDS: [&'static str; 5] = ["crashed", "out_of_memory", "not_reading", "closed_output", "not_connected"];

    /// The kind, as stored.
    pub fn kind(&self) -> &'static str {
        match self {
            BotStatus::Ok => "ok",
            BotStatus::Crashed { .. } => "crashed",
            BotStatus::OutOfMemory { .. } => "out_of_memory",
            BotStatus::TimedOut { .. } => "timed_out",
            BotStatus::Frozen { .. } => "frozen",
            BotStatus::NotReading { .. } => "not_reading",
            BotStatus::ClosedOutput { .. } => "closed_output",
            BotStatus::NotConnected { .. } => "not_connected",
            BotStatus::InvalidOutput { .. } => "invalid_output",
        }
    }

    /// The bot's own program failed (as opposed to playing badly): what
    /// counts towards disabling a bot whose current version keeps failing.
    pub fn is_bot_failure(&self) -> bool {
        match self {
            BotStatus::Crashed { .. }
            | BotStatus::OutOfMemory { .. }
            | BotStatus::NotReading { .. }
            | BotStatus::ClosedOutput { .. }
            | BotStatus::NotConnected { .. } => true,
            BotStatus::Ok | BotStatus::TimedOut { .. } | BotStatus::Frozen { .. } | BotStatus::InvalidOutput { .. } => false,
        }
    }

    /// A bot that ended this way is not asked again.
    pub fn is_gone(&self) -> bool {
        !matches!(self, BotStatus::Ok | BotStatus::TimedOut { .. } | BotStatus::InvalidOutput { .. })
    }

    /// From how its process ended.
    pub fn from_exit(exit: Option<Exit>, turn: u32) -> BotStatus {
        match exit {
            Some(Exit::Code(c)) => BotStatus::Crashed { code: Some(c), signal: None, turn },
            Some(Exit::Signal(s)) => BotStatus::Crashed { code: None, signal: Some(s), turn },
            None => BotStatus::Crashed { code: None, signal: None, turn },
        }
    }

    /// In words, for people.
    pub fn describe(&self) -> String {
        let when = |turn: &u32| if *turn == 0 { "while starting".to_owned() } else { format!("on turn {turn}") };
        match self {
            BotStatus::Ok => "ok".into(),
            BotStatus::Crashed { code: Some(0), turn, .. } => format!("exited {} (exit code 0) while still in the game", when(turn)),
            BotStatus::Crashed { code: Some(c), turn, .. } => format!("crashed {} (exit code {c})", when(turn)),
            BotStatus::Crashed { signal: Some(s), turn, .. } => format!("crashed {} (killed by signal {s}{})", when(turn), signal_name(*s)),
            BotStatus::Crashed { turn, .. } => format!("crashed {}", when(turn)),
            BotStatus::OutOfMemory { turn, limit: None } => format!("ran out of memory {}", when(turn)),
            BotStatus::OutOfMemory { turn, limit: Some(limit) } => format!(
                "ran out of memory {} (its box's limit is {}, and the files it wrote in its folder and /tmp count against it too)",
                when(turn),
                in_mib(*limit)
            ),
            BotStatus::TimedOut { turn, by_ms } => format!("timed out {} (over the limit by {by_ms} ms)", when(turn)),
            BotStatus::Frozen { turn, timeouts } => format!("frozen {} after {timeouts} consecutive timeouts", when(turn)),
            BotStatus::NotReading { turn, unread } => {
                format!("stopped reading its input: {unread} bytes still unread at the deadline {}", when(turn))
            }
            BotStatus::ClosedOutput { turn } => format!("closed its output {} and kept running", when(turn)),
            BotStatus::NotConnected { reason } => format!("never got going: {reason}"),
            BotStatus::InvalidOutput { turn, answer, reason } => format!("invalid answer {answer:?} on turn {turn}: {reason}"),
        }
    }
}

/// Bytes in MiB, with a decimal only where it is not a whole number.
fn in_mib(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGKILL => ", SIGKILL",
        libc::SIGSEGV => ", SIGSEGV",
        libc::SIGABRT => ", SIGABRT",
        libc::SIGXCPU => ", SIGXCPU: CPU time limit",
        libc::SIGXFSZ => ", SIGXFSZ: file size limit",
        libc::SIGPIPE => ", SIGPIPE",
        libc::SIGBUS => ", SIGBUS",
        libc::SIGFPE => ", SIGFPE",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_status() -> Vec<BotStatus> {
        vec![
            BotStatus::Ok,
            BotStatus::Crashed { code: Some(3), signal: None, turn: 5 },
            BotStatus::OutOfMemory { turn: 1, limit: Some(96 << 20) },
            BotStatus::TimedOut { turn: 2, by_ms: 17 },
            BotStatus::Frozen { turn: 21, timeouts: 5 },
            BotStatus::NotReading { turn: 4, unread: 9000 },
            BotStatus::ClosedOutput { turn: 3 },
            BotStatus::NotConnected { reason: "neither connected nor wrote".into() },
            BotStatus::InvalidOutput { turn: 1, answer: "x".into(), reason: "not a digit".into() },
        ]
    }

    #[test]
    fn kinds_are_the_serde_tags_and_round_trip() {
        let all = every_status();
        assert_eq!(all.iter().map(BotStatus::kind).collect::<Vec<_>>(), BotStatus::KINDS);
        for s in all {
            let v = serde_json::to_value(&s).unwrap();
            assert_eq!(v["kind"], s.kind());
            assert_eq!(serde_json::from_value::<BotStatus>(v).unwrap(), s);
        }
    }

    /// The service disables a bot by the kinds of its statuses, stored as text.
    #[test]
    fn failure_kinds_are_the_failures() {
        let failures: Vec<&str> = every_status().iter().filter(|s| s.is_bot_failure()).map(BotStatus::kind).collect();
        assert_eq!(failures, BotStatus::FAILURE_KINDS);
    }

    #[test]
    fn statuses_say_what_happened() {
        let words: Vec<String> = every_status().iter().map(BotStatus::describe).collect();
        assert_eq!(words[1], "crashed on turn 5 (exit code 3)");
        assert_eq!(
            words[2],
            "ran out of memory on turn 1 (its box's limit is 96 MiB, and the files it wrote in its folder and /tmp count against it too)"
        );
        assert_eq!(words[3], "timed out on turn 2 (over the limit by 17 ms)");
        assert_eq!(words[4], "frozen on turn 21 after 5 consecutive timeouts");
        assert!(words[5].starts_with("stopped reading its input: 9000 bytes"));
        assert_eq!(
            BotStatus::Crashed { code: None, signal: Some(9), turn: 0 }.describe(),
            "crashed while starting (killed by signal 9, SIGKILL)"
        );
        let half = BotStatus::OutOfMemory { turn: 0, limit: Some((3 << 20) / 2) }.describe();
        assert!(half.starts_with("ran out of memory while starting (its box's limit is 1.5 MiB,"), "{half}");
    }

    /// What was recorded before the limit was (replays, stored outcomes)
    /// still reads, and says what it said then.
    #[test]
    fn an_out_of_memory_status_recorded_without_its_limit_still_reads() {
        let old: BotStatus = serde_json::from_str(r#"{"kind":"out_of_memory","turn":4}"#).unwrap();
        assert_eq!(old, BotStatus::OutOfMemory { turn: 4, limit: None });
        assert_eq!(old.describe(), "ran out of memory on turn 4");
        assert_eq!(serde_json::to_string(&old).unwrap(), r#"{"kind":"out_of_memory","turn":4}"#);
    }
}
