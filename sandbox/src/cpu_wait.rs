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
use std::time::{Duration, Instant};

/// One thread as last seen.
#[derive(Clone, Copy, Debug)]
struct Seen {
    /// Its count when first seen (0 for one born after the start).
    base: u64,
    /// Its latest count.
    delay: u64,
    /// Its CPU time at the latest sample.
    on_cpu: u64,
    /// Runnable at a sample and not run since: since when (see [`CpuWait::waited`]).
    stuck_since: Option<Instant>,
}

/// The run-queue wait of a box's threads since the tracker was made.
#[derive(Debug, Default)]
pub struct CpuWait {
    threads: HashMap<i32, Seen>,
    last_sample: Option<Instant>,
    /// Threads' `schedstat` files kept open between samples, for a
    /// tracker made with [`CpuWait::keeping_files`]: a read through a kept
    /// descriptor costs a sixth of an open, a read and a close (0.5–0.8
    /// against 3.5–5.3 µs on the 2-core VM). At most [`KEPT_FILES`].
    kept: Option<HashMap<i32, std::fs::File>>,
}

/// The most `schedstat` files one tracker keeps open (a box has up to its
/// `pids` limit of threads; the rest are read by their path each time).
pub const KEPT_FILES: usize = 8;

/// A copy counts what the original counted; it keeps no files (they are
/// opened again as it samples).
impl Clone for CpuWait {
    fn clone(&self) -> CpuWait {
        CpuWait { threads: self.threads.clone(), last_sample: self.last_sample, kept: self.kept.as_ref().map(|_| HashMap::new()) }
    }
}

/// What one sample reads of a thread: CPU time and run-queue wait (ns)
/// from `schedstat`, and whether it is runnable (`R` in `stat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadSample {
    pub on_cpu: u64,
    pub delay: u64,
    pub runnable: bool,
}

impl CpuWait {
    /// A tracker whose starting point is the first [`sample`](Self::sample).
    pub fn new() -> CpuWait {
        CpuWait::default()
    }

    /// Take the threads' counts now. The first call sets the starting
    /// point; a thread first seen later was born since and counts from 0.
    ///
    /// The first sample reads each thread's `schedstat` only: whether a
    /// thread is runnable counts from the second on ([`CpuWait::record`]),
    /// and a call to an external referee takes a first sample every time.
    pub fn sample(&mut self, threads: &[i32]) {
        let now = Instant::now();
        let state = self.last_sample.is_some();
        let read: Vec<(i32, ThreadSample)> = match self.kept.as_mut() {
            None => threads.iter().filter_map(|&tid| Some((tid, read_thread(tid, state)?))).collect(),
            Some(kept) => {
                kept.retain(|tid, _| threads.contains(tid));
                threads.iter().filter_map(|&tid| Some((tid, read_thread_kept(kept, tid, state)?))).collect()
            }
        };
        self.record(now, &read);
    }

    /// A tracker that keeps its threads' `schedstat` files open between
    /// samples, and across [`CpuWait::restart`]: for a box sampled again
    /// and again (an external referee's, at the start of every call).
    pub fn keeping_files() -> CpuWait {
        CpuWait { kept: Some(HashMap::new()), ..CpuWait::default() }
    }

    /// Start counting afresh, as a new tracker: the next sample is the
    /// first. Kept files stay open.
    pub fn restart(&mut self) {
        self.threads.clear();
        self.last_sample = None;
    }

    /// Record one sample taken at `now` (pure: the tests feed it). A
    /// thread's `runnable` is not looked at the first time it is seen.
    pub fn record(&mut self, now: Instant, read: &[(i32, ThreadSample)]) {
        let previous = self.last_sample;
        for &(tid, t) in read {
            match self.threads.get_mut(&tid) {
                None => {
                    let base = if previous.is_some() { 0 } else { t.delay };
                    self.threads.insert(tid, Seen { base, delay: t.delay, on_cpu: t.on_cpu, stuck_since: None });
                }
                Some(seen) => {
                    // Runnable and not run since the last look: waiting on
                    // a run queue right now, a wait the kernel adds to its
                    // count only once the thread runs again.
                    let stuck = t.runnable && t.on_cpu == seen.on_cpu;
                    seen.stuck_since = if stuck { seen.stuck_since.or(previous) } else { None };
                    seen.delay = t.delay;
                    seen.on_cpu = t.on_cpu;
                }
            }
        }
        self.last_sample = Some(now);
    }

    /// The wait seen so far, every thread's added: what the kernel has
    /// counted, and, for a thread waiting on a run queue right now, the
    /// time since the first of the samples that saw it runnable without
    /// running in between (a runnable thread leaves the run queue only by
    /// running, so it waited all that time; at most one sample interval
    /// short of the truth, never longer).
    pub fn waited(&self) -> Duration {
        let counted: u64 = self.threads.values().map(|s| s.delay.saturating_sub(s.base)).sum();
        let waiting: Duration = match self.last_sample {
            Some(last) => self.threads.values().filter_map(|s| s.stuck_since).map(|since| last.saturating_duration_since(since)).sum(),
            None => Duration::ZERO,
        };
        Duration::from_nanos(counted) + waiting
    }
}

/// How long the calling thread was *stopped* since the meter started:
/// neither running, nor waiting for a CPU, nor asleep where it chose to
/// sleep. A `SIGSTOP`, a paused VM, CPUs a hypervisor took: the machine,
/// not the thread, held it. Wall time less the thread's CPU time (its
/// thread CPU clock), less its run-queue wait (`schedstat`), less its
/// sleeps, each counted up to what was asked (a sleep that ends late,
/// because the machine stopped, counts its overrun as stopped).
#[derive(Clone, Copy, Debug)]
pub struct Stopped {
    start: std::time::Instant,
    on_cpu: Duration,
    queued: Duration,
    slept: Duration,
}

/// Below this a meter reads nothing: clock granularity and timer slack.
const STOPPED_NOISE: Duration = Duration::from_millis(1);

impl Stopped {
    pub fn start() -> Stopped {
        Stopped { start: std::time::Instant::now(), on_cpu: thread_cpu(), queued: this_thread(), slept: Duration::ZERO }
    }

    /// Sleep (`sleep` blocks at most `asked`, e.g. a `poll`), counted as
    /// chosen up to `asked`.
    pub fn asleep<T>(&mut self, asked: Duration, sleep: impl FnOnce() -> T) -> T {
        let t0 = std::time::Instant::now();
        let r = sleep();
        self.slept += t0.elapsed().min(asked);
        r
    }

    /// The thread's run-queue wait ([`this_thread`]) when the meter
    /// started: read then already.
    pub fn queued_at_start(&self) -> Duration {
        self.queued
    }

    /// Time stopped so far.
    pub fn so_far(&self) -> Duration {
        let accounted = thread_cpu().saturating_sub(self.on_cpu) + this_thread().saturating_sub(self.queued) + self.slept;
        let stopped = self.start.elapsed().saturating_sub(accounted);
        if stopped < STOPPED_NOISE {
            Duration::ZERO
        } else {
            stopped
        }
    }
}

/// The calling thread's CPU time, to the nanosecond.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into `t`, which lives across the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// A thread's counts, if it still exists; whether it is runnable only if
/// `state` (else `false`: `stat` is not read).
fn read_thread(tid: i32, state: bool) -> Option<ThreadSample> {
    let mut buf = [0u8; 1024];
    let sched = read_small(&format!("/proc/{tid}/schedstat"), &mut buf)?;
    let (on_cpu, delay) = parse_schedstat_pair(sched)?;
    let runnable = state && read_small(&format!("/proc/{tid}/stat"), &mut buf).is_some_and(|stat| parse_state(stat) == Some('R'));
    Some(ThreadSample { on_cpu, delay, runnable })
}

/// [`read_thread`] with the thread's `schedstat` read through `kept`'s
/// descriptor, opened (and kept, up to [`KEPT_FILES`]) if it is not there.
/// A kept file whose thread is gone reads nothing (`ESRCH`: it names that
/// thread, not its id), and is opened again by the id, which a new thread
/// may have now.
fn read_thread_kept(kept: &mut HashMap<i32, std::fs::File>, tid: i32, state: bool) -> Option<ThreadSample> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 128];
    let mut through = |f: &std::fs::File| {
        let n = f.read_at(&mut buf, 0).ok()?;
        parse_schedstat_pair(std::str::from_utf8(&buf[..n]).ok()?)
    };
    let (on_cpu, delay) = match kept.get(&tid).and_then(&mut through) {
        Some(pair) => pair,
        None => {
            kept.remove(&tid);
            let file = std::fs::File::open(format!("/proc/{tid}/schedstat")).ok()?;
            let pair = through(&file)?;
            if kept.len() < KEPT_FILES {
                kept.insert(tid, file);
            }
            pair
        }
    };
    let mut buf = [0u8; 1024];
    let runnable = state && read_small(&format!("/proc/{tid}/stat"), &mut buf).is_some_and(|stat| parse_state(stat) == Some('R'));
    Some(ThreadSample { on_cpu, delay, runnable })
}

/// A small `/proc` file in one `read` (the engine samples these every few
/// milliseconds of every move: `read_to_string` grows its buffer from 32
/// bytes, six reads for a `stat`). `None` if it cannot be read or does not
/// fit `buf` (a `stat` line is some 300 bytes).
fn read_small<'b>(path: &str, buf: &'b mut [u8]) -> Option<&'b str> {
    use std::io::Read;
    let n = std::fs::File::open(path).ok()?.read(buf).ok()?;
    if n == buf.len() {
        return None;
    }
    std::str::from_utf8(&buf[..n]).ok()
}

/// The state letter of `/proc/<tid>/stat`: the field after the name in
/// parentheses (the name may hold spaces and parentheses itself).
pub fn parse_state(stat: &str) -> Option<char> {
    stat.get(stat.rfind(')')? + 1..)?.split_whitespace().next()?.chars().next()
}

fn parse_schedstat_pair(text: &str) -> Option<(u64, u64)> {
    let mut it = text.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// The calling thread's run-queue wait so far: the engine's own, which
/// delays its reading of an answer as much as a bot's delays the answer.
pub fn this_thread() -> Duration {
    this_thread_schedstat().map_or(Duration::ZERO, |(_, delay)| Duration::from_nanos(delay))
}

/// The calling thread's CPU time and run-queue wait (ns) from its
/// `schedstat`, opened once per thread (the file names the thread that
/// opened it) and read again from its start each time: the engine reads it
/// several times a move.
fn this_thread_schedstat() -> Option<(u64, u64)> {
    use std::os::unix::fs::FileExt;
    thread_local! {
        static SCHEDSTAT: Option<std::fs::File> = std::fs::File::open("/proc/thread-self/schedstat").ok();
    }
    let mut buf = [0u8; 128];
    SCHEDSTAT.with(|f| {
        let n = f.as_ref()?.read_at(&mut buf, 0).ok()?;
        parse_schedstat_pair(std::str::from_utf8(&buf[..n]).ok()?)
    })
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
        assert_eq!(parse_schedstat_pair("4093384 2504212 17\n"), Some((4_093_384, 2_504_212)));
    }

    #[test]
    fn parses_the_state_after_a_name_with_parentheses() {
        assert_eq!(parse_state("1234 (bot) R 1 2 3"), Some('R'));
        assert_eq!(parse_state("1234 (a (b) c) S 1 2 3"), Some('S'));
        assert_eq!(parse_state("garbage"), None);
    }

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn t(on_cpu_ms: u64, delay_ms: u64, runnable: bool) -> ThreadSample {
        ThreadSample { on_cpu: on_cpu_ms * 1_000_000, delay: delay_ms * 1_000_000, runnable }
    }

    #[test]
    fn counts_from_the_first_sample_and_new_threads_from_zero() {
        let start = Instant::now();
        let mut w = CpuWait::new();
        // First sample: two threads with waits from before the move.
        w.record(start, &[(10, t(1, 5, false)), (11, t(1, 1, false))]);
        assert_eq!(w.waited(), Duration::ZERO);
        // Later: thread 10 waited 3 ms more, 11 nothing, 12 (new) 2 ms.
        w.record(start + MS(5), &[(10, t(9, 8, true)), (11, t(1, 1, false)), (12, t(1, 2, true))]);
        assert_eq!(w.waited(), MS(5));
        // A reused id reading lower than its base counts nothing, not a
        // negative or a wrapped wait.
        w.record(start + MS(6), &[(11, t(0, 0, false))]);
        assert_eq!(w.waited(), MS(5));
    }

    /// The first sample's `runnable` is not read (`sample` leaves `stat`
    /// out then): the waits come out the same whatever it says.
    #[test]
    fn the_first_samples_state_changes_nothing() {
        let start = Instant::now();
        for first in [true, false] {
            let mut w = CpuWait::new();
            w.record(start, &[(7, t(10, 0, first))]);
            w.record(start + MS(5), &[(7, t(10, 0, true))]);
            assert_eq!(w.waited(), MS(5), "first sample runnable: {first}");
            w.record(start + MS(9), &[(7, t(12, 3, false))]);
            assert_eq!(w.waited(), MS(3), "first sample runnable: {first}");
        }
    }

    #[test]
    fn a_thread_waiting_right_now_counts_from_the_sample_that_saw_it_wait() {
        let start = Instant::now();
        let mut w = CpuWait::new();
        w.record(start, &[(7, t(10, 0, true))]);
        // Runnable at both looks and not run in between: it waited all
        // that time (a runnable thread leaves the run queue only by
        // running), though the kernel counts it only once it runs.
        w.record(start + MS(5), &[(7, t(10, 0, true))]);
        assert_eq!(w.waited(), MS(5));
        w.record(start + MS(10), &[(7, t(10, 0, true))]);
        assert_eq!(w.waited(), MS(10));
        // It ran: the kernel's count takes over (it waited 14 ms in all).
        w.record(start + MS(20), &[(7, t(12, 14, true))]);
        assert_eq!(w.waited(), MS(14));
        // Asleep (not runnable) with no progress is no wait.
        w.record(start + MS(25), &[(7, t(12, 14, false))]);
        w.record(start + MS(30), &[(7, t(12, 14, false))]);
        assert_eq!(w.waited(), MS(14));
    }

    #[test]
    fn a_thread_working_waiting_or_sleeping_was_not_stopped_and_a_stopped_one_was() {
        let mut m = Stopped::start();
        // Working, and sleeping where it asked to: not stopped.
        let until = std::time::Instant::now() + Duration::from_millis(20);
        while std::time::Instant::now() < until {}
        m.asleep(Duration::from_millis(30), || std::thread::sleep(Duration::from_millis(20)));
        assert!(m.so_far() < Duration::from_millis(5), "{:?}", m.so_far());
        // A sleep that overran what it asked by 40 ms: stopped that long
        // (what a SIGSTOP during a poll looks like to the thread).
        m.asleep(Duration::from_millis(10), || std::thread::sleep(Duration::from_millis(50)));
        let s = m.so_far();
        assert!(s >= Duration::from_millis(35) && s < Duration::from_millis(60), "{s:?}");
    }

    #[test]
    fn this_threads_kept_file_reads_its_own_counts_afresh() {
        // Until the thread itself has run that long (its CPU clock, not the
        // wall's: a loaded machine stretches the wall).
        let burn = |d: Duration| {
            let t = thread_cpu();
            while thread_cpu() - t < d {
                std::hint::black_box(0u64);
            }
        };
        for _ in 0..2 {
            std::thread::spawn(move || {
                let (cpu0, _) = this_thread_schedstat().expect("this thread's schedstat");
                burn(Duration::from_millis(30));
                let (cpu1, _) = this_thread_schedstat().unwrap();
                // SAFETY: gettid has no preconditions.
                let fresh = read_thread(unsafe { libc::gettid() }, false).unwrap();
                // The kept file is read again, and it is this thread's: the
                // CPU it just burned shows, and no more than a fresh read.
                assert!(cpu1 >= cpu0 + 10_000_000, "{cpu0} then {cpu1}: the kept file did not read afresh");
                assert!(cpu1 <= fresh.on_cpu, "{cpu1} > {}: another thread's file", fresh.on_cpu);
            })
            .join()
            .unwrap();
        }
    }

    /// A tracker keeping files reads each afresh (the CPU a thread burned
    /// shows through its kept file), keeps no more than `KEPT_FILES` (the
    /// rest are read by path, and counted all the same), survives a
    /// restart with them, and lets go of a thread's file once the thread
    /// is gone (its id no longer reads).
    #[test]
    fn a_tracker_keeping_files_reads_them_afresh_and_lets_go_of_gone_threads() {
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() };
        let (ids_tx, ids_rx) = std::sync::mpsc::channel();
        let (end_tx, end_rx) = std::sync::mpsc::channel::<()>();
        let end_rx = std::sync::Arc::new(std::sync::Mutex::new(end_rx));
        let others: Vec<_> = (0..KEPT_FILES + 2)
            .map(|_| {
                let (ids_tx, end_rx) = (ids_tx.clone(), end_rx.clone());
                std::thread::spawn(move || {
                    // SAFETY: gettid has no preconditions.
                    ids_tx.send(unsafe { libc::gettid() }).unwrap();
                    let _ = end_rx.lock().unwrap().recv();
                })
            })
            .collect();
        let mut all: Vec<i32> = vec![me];
        all.extend((0..others.len()).map(|_| ids_rx.recv().unwrap()));
        let mut w = CpuWait::keeping_files();
        w.sample(&all);
        assert_eq!(w.kept.as_ref().unwrap().len(), KEPT_FILES);
        assert_eq!(w.threads.len(), all.len(), "every thread counted, kept or not");
        let before = w.threads[&me].on_cpu;
        // 20 ms of this thread's own CPU, however busy the machine.
        let cpu = thread_cpu();
        while thread_cpu() < cpu + MS(20) {
            std::hint::black_box(0u64.wrapping_add(1));
        }
        w.restart();
        w.sample(&all);
        assert!(w.threads[&me].on_cpu >= before + 10_000_000, "{before} then {}: not read afresh", w.threads[&me].on_cpu);
        drop(end_tx);
        for o in others {
            o.join().unwrap();
        }
        w.restart();
        w.sample(&all);
        assert_eq!(w.threads.keys().copied().collect::<Vec<_>>(), vec![me], "only this thread is left");
        assert_eq!(w.kept.as_ref().unwrap().keys().copied().collect::<Vec<_>>(), vec![me]);
        // A copy keeps no files, and counts the same.
        let copy = w.clone();
        assert!(copy.kept.as_ref().unwrap().is_empty() && copy.threads.len() == 1);
    }

    #[test]
    fn this_thread_has_a_count() {
        assert!(supported(), "the kernel has no /proc/self/schedstat");
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let me = read_thread(tid, true).expect("this thread's counts");
        assert!(me.runnable, "a thread reading its own state is running");
        // Without its state (a first sample), `stat` is not read.
        assert!(!read_thread(tid, false).expect("this thread's counts").runnable);
    }
}
