//! How long a box waited for a CPU: the time its threads were runnable but
//! not running, because other tasks had the cores.
//!
//! The engine does not charge a bot for that wait (see the runner's clock):
//! a bot that needs 35 ms of CPU on a 50 ms clock must not time out because
//! the host was busy, or because another box kept a core.
//!
//! **Where it comes from.** The kernel counts, for every thread, the time
//! it spent on a run queue waiting for a CPU: `run_delay`, the second field
//! of `/proc/<tid>/schedstat` (`CONFIG_SCHED_INFO`, on in every distribution
//! kernel). It is there on cgroup v1 and v2 alike and needs no controller,
//! so one mechanism serves both backends. The alternative, v2's per-cgroup
//! CPU pressure (`cpu.pressure`, "some"), also counts threads that have
//! exited, but it exists only on v2 and only where the kernel was booted
//! with PSI on (Debian's kernel has it off unless `psi=1`).
//!
//! **What it misses, and which way that errs.** A thread's count leaves
//! with it: the wait of a thread that exited between two samples, after
//! the last one, is not seen. The engine samples every few milliseconds
//! while a move is timed, so what is missed is at most one sample's worth,
//! and always *against* the bot (it is charged as if it had not waited),
//! never in its favour. A thread id reused by a new thread reads lower than
//! before and counts nothing.
//!
//! **What it counts too much.** A bot whose own threads compete for its
//! cores waits behind itself; that is not the machine's fault. The clock
//! therefore never credits more than `wall - cpu` (a bot that kept its
//! cores busy the whole move waited for nothing), and never more than its
//! bound.

use std::collections::HashMap;
use std::time::Duration;

/// The run-queue wait of a box's threads since the tracker was made.
#[derive(Clone, Debug, Default)]
pub struct CpuWait {
    /// Each thread's count when first seen (0 for one born after the start).
    base: HashMap<i32, u64>,
    /// Each thread's latest count.
    last: HashMap<i32, u64>,
    started: bool,
}

impl CpuWait {
    /// A tracker whose starting point is the first [`sample`](Self::sample).
    pub fn new() -> CpuWait {
        CpuWait::default()
    }

    /// Take the threads' counts now. The first call sets the starting
    /// point; a thread first seen later was born since and counts from 0.
    pub fn sample(&mut self, threads: &[i32]) {
        for &tid in threads {
            let Some(delay) = read_run_delay(tid) else { continue };
            self.record(tid, delay);
        }
        self.started = true;
    }

    fn record(&mut self, tid: i32, delay_ns: u64) {
        let born_since = self.started;
        self.base.entry(tid).or_insert(if born_since { 0 } else { delay_ns });
        self.last.insert(tid, delay_ns);
    }

    /// The wait seen so far, every thread's added.
    pub fn waited(&self) -> Duration {
        let ns: u64 = self.last.iter().map(|(tid, now)| now.saturating_sub(self.base.get(tid).copied().unwrap_or(0))).sum();
        Duration::from_nanos(ns)
    }
}

/// The calling thread's run-queue wait so far: the engine's own, which
/// delays its reading of an answer as much as a bot's delays the answer.
pub fn this_thread() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|t| parse_schedstat(&t))
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// A thread's `run_delay` in ns, if it still exists.
fn read_run_delay(tid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/schedstat")).ok()?;
    parse_schedstat(&text)
}

/// The second of `/proc/<tid>/schedstat`'s three fields: time on the CPU,
/// time waiting on a run queue, slices run (ns, ns, count).
pub fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

/// Whether this kernel counts run-queue waits (`/proc/self/schedstat`).
pub fn supported() -> bool {
    std::fs::read_to_string("/proc/self/schedstat").ok().and_then(|t| parse_schedstat(&t)).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_run_delay_field() {
        assert_eq!(parse_schedstat("4093384 2504212 17\n"), Some(2_504_212));
        assert_eq!(parse_schedstat("4093384\n"), None);
        assert_eq!(parse_schedstat(""), None);
        assert_eq!(parse_schedstat("a b c"), None);
    }

    #[test]
    fn counts_from_the_first_sample_and_new_threads_from_zero() {
        let mut w = CpuWait::new();
        // First sample: two threads with waits from before the move.
        w.record(10, 5_000_000);
        w.record(11, 1_000_000);
        w.started = true;
        assert_eq!(w.waited(), Duration::ZERO);
        // Later: thread 10 waited 3 ms more, 11 nothing, 12 (new) 2 ms.
        w.record(10, 8_000_000);
        w.record(12, 2_000_000);
        assert_eq!(w.waited(), Duration::from_millis(5));
        // A reused id reading lower than its base counts nothing, not a
        // negative or a wrapped wait.
        w.record(11, 10);
        assert_eq!(w.waited(), Duration::from_millis(5));
    }

    #[test]
    fn this_thread_has_a_count() {
        assert!(supported(), "the kernel has no /proc/self/schedstat");
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        assert!(read_run_delay(tid).is_some());
    }
}
