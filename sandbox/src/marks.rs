//! Where a box's time goes: a timestamp at the end of each step of building
//! a box ([`Sandbox::phases`](crate::Sandbox::phases)) and of starting a
//! program in one ([`Child::phases`](crate::Child::phases)), as crun's and
//! nsjail's write-ups break a container's start down. `koth sandbox bench`
//! prints the median of each step beside bare fork+exec.
//!
//! # Design
//!
//! The steps run in four places: the caller's thread, the launcher thread,
//! and the children that share the supervisor's memory until they exec
//! (the joiner and the program, the unsharer and the holder: see `spawn`).
//! Those children may not allocate or take a lock, so a [`Marks`] is a
//! fixed array of atomics, made before the first step: a mark takes the
//! next entry with one `fetch_add` and stores the step's name (a `&'static
//! str`, as pointer and length) and `CLOCK_MONOTONIC` read through the
//! vDSO (no lock, no allocation: safe in those children). A mark costs
//! about 30 ns, so every box and every spawn keep theirs.
//!
//! A step's duration is its mark minus the one before it in time, so a
//! mark is named after the step that *ends* there; where two processes run
//! at once (the program confining itself while its joiner exits), the
//! steps interleave in the order they ended. Marks past the capacity are
//! dropped (counted, never written out of bounds).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Steps a [`Marks`] holds; the holder's mount tree is the longest list.
const CAPACITY: usize = 96;

/// A step's end: its name and the time.
struct Mark {
    name_ptr: AtomicUsize,
    name_len: AtomicUsize,
    at_ns: AtomicU64,
}

/// The timestamps of one box's build or one program's start.
pub(crate) struct Marks {
    next: AtomicUsize,
    marks: [Mark; CAPACITY],
}

/// `CLOCK_MONOTONIC` in nanoseconds (the vDSO: no system call, no lock).
fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec on this stack; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Marks {
    /// Marks starting now (the first step is measured from here).
    pub(crate) fn start() -> Marks {
        let marks = Marks {
            next: AtomicUsize::new(0),
            marks: std::array::from_fn(|_| Mark { name_ptr: AtomicUsize::new(0), name_len: AtomicUsize::new(0), at_ns: AtomicU64::new(0) }),
        };
        marks.mark("");
        marks
    }

    /// The step `name` ends now. Safe in a child sharing the supervisor's
    /// memory: atomics and the vDSO clock only.
    pub(crate) fn mark(&self, name: &'static str) {
        let at = now_ns();
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if let Some(m) = self.marks.get(i) {
            m.name_ptr.store(name.as_ptr() as usize, Ordering::Relaxed);
            m.name_len.store(name.len(), Ordering::Relaxed);
            // Release: a reader that sees the time sees the name.
            m.at_ns.store(at.max(1), Ordering::Release);
        }
    }

    /// Each step's name and duration, in order. Read once the steps are
    /// over (a child's marks are seen after it has been waited for).
    pub(crate) fn phases(&self) -> Phases {
        let n = self.next.load(Ordering::Acquire).min(CAPACITY);
        let mut marks: Vec<(u64, &'static str)> = Vec::with_capacity(n);
        for m in &self.marks[..n] {
            let at = m.at_ns.load(Ordering::Acquire);
            if at == 0 {
                // Taken but not yet written: the step is still running.
                continue;
            }
            let (ptr, len) = (m.name_ptr.load(Ordering::Relaxed), m.name_len.load(Ordering::Relaxed));
            // SAFETY: `ptr` and `len` were stored together from a `&'static
            // str` by `mark` (the Release store of `at_ns` above orders them
            // before it), so they describe a live UTF-8 string for ever.
            let name: &'static str = unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr as *const u8, len)) };
            marks.push((at, name));
        }
        // In time order: two processes may run steps at once (the program
        // confines itself while the joiner exits), and each step is the time
        // since the mark before it, whoever made that one.
        marks.sort_by_key(|&(at, _)| at);
        let steps = marks.windows(2).map(|w| (w[1].1, Duration::from_nanos(w[1].0 - w[0].0))).collect();
        Phases { steps, beside: Vec::new() }
    }
}

impl std::fmt::Debug for Marks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.phases().fmt(f)
    }
}

/// How long each step of a box's build or a program's start took, in order,
/// and the steps that ran beside them on another thread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phases {
    steps: Vec<(&'static str, Duration)>,
    /// Timed on their own thread while the steps ran (a box's cgroups are
    /// made while the launcher thread builds its namespaces and mounts):
    /// not part of the steps' sum.
    beside: Vec<(&'static str, Duration)>,
}

impl Phases {
    /// The steps, each with its duration.
    pub fn steps(&self) -> &[(&'static str, Duration)] {
        &self.steps
    }

    /// All the steps together.
    pub fn total(&self) -> Duration {
        self.steps.iter().map(|(_, d)| *d).sum()
    }

    /// The steps that ran beside these on another thread, each with its
    /// own duration.
    pub fn beside(&self) -> &[(&'static str, Duration)] {
        &self.beside
    }

    pub(crate) fn with_beside(mut self, name: &'static str, took: Duration) -> Phases {
        self.beside.push((name, took));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_named_by_where_they_end_in_order() {
        let m = Marks::start();
        m.mark("one");
        std::thread::sleep(Duration::from_millis(2));
        m.mark("two");
        let p = m.phases();
        let names: Vec<_> = p.steps().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["one", "two"]);
        assert!(p.steps()[1].1 >= Duration::from_millis(2), "{p:?}");
        assert_eq!(p.total(), p.steps()[0].1 + p.steps()[1].1);
    }

    #[test]
    fn marks_past_the_capacity_are_dropped() {
        let m = Marks::start();
        for _ in 0..CAPACITY + 10 {
            m.mark("step");
        }
        assert_eq!(m.phases().steps().len(), CAPACITY - 1);
    }

    #[test]
    fn marks_from_other_threads_are_all_kept() {
        let m = std::sync::Arc::new(Marks::start());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        m.mark("thread");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(m.phases().steps().len(), 20);
    }
}
