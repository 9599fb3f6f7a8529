use std::time::Duration;

use serde::Serialize;

/// How a program ended, as the kernel reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exit {
    /// It called exit with this code.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
}

/// As people read it: "code 1", "signal 9 (SIGKILL)".
impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Exit::Code(c) => write!(f, "code {c}"),
            Exit::Signal(s) => match signal_name(s) {
                Some(name) => write!(f, "signal {s} ({name})"),
                None => write!(f, "signal {s}"),
            },
        }
    }
}

/// The usual name of a signal a program is killed by.
fn signal_name(s: i32) -> Option<&'static str> {
    Some(match s {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return None,
    })
}

/// Why the program ended, with the sandbox's own verdict first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Exited on its own with code 0.
    Ok,
    /// Exited on its own with a non-zero code.
    Failed,
    /// Killed by a signal it did not get from the sandbox.
    Crashed,
    /// Killed because its tree used more CPU time than allowed.
    CpuTimeLimit,
    /// Killed because it ran longer than the wall-time limit.
    WallTimeLimit,
    /// The kernel's OOM killer killed a process of the box.
    MemoryLimit,
    /// Killed because it wrote more output than allowed.
    OutputLimit,
}

impl Outcome {
    /// The exit code of `koth sandbox run` for this outcome (see `--help`).
    pub fn cli_exit_code(&self, exit: Exit) -> i32 {
        match self {
            Outcome::Ok => 0,
            Outcome::Failed => match exit {
                Exit::Code(c) => c,
                Exit::Signal(s) => 128 + s,
            },
            Outcome::Crashed => match exit {
                Exit::Signal(s) => 128 + s,
                Exit::Code(c) => c,
            },
            Outcome::CpuTimeLimit | Outcome::WallTimeLimit => 201,
            Outcome::MemoryLimit => 202,
            Outcome::OutputLimit => 203,
        }
    }
}

/// The usage report of one program run.
#[derive(Clone, Debug, Serialize)]
pub struct Usage {
    pub outcome: Outcome,
    pub exit: Exit,
    #[serde(serialize_with = "as_secs")]
    pub wall_time: Duration,
    /// CPU time of the whole box during the run, from the cgroup.
    #[serde(serialize_with = "as_secs")]
    pub cpu_time: Duration,
    /// Peak memory of the box in bytes, where the kernel reports it.
    pub peak_memory: Option<u64>,
    pub oom_kills: u64,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
}

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

pub(crate) fn decode_wait_status(status: libc::c_int) -> Exit {
    if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(libc::WEXITSTATUS(status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_reads_as_words() {
        assert_eq!(Exit::Code(1).to_string(), "code 1");
        assert_eq!(Exit::Signal(libc::SIGKILL).to_string(), "signal 9 (SIGKILL)");
        assert_eq!(Exit::Signal(64).to_string(), "signal 64");
    }
}
