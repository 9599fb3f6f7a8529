//! The supervisor runs the moment a box's program speaks, and is not
//! interrupted by the box until it has paused it.
//!
//! A supervisor that times moves sleeps until a bot answers, then pauses
//! that bot's box. Between the answer being written and the pause taking
//! effect, the bot keeps the CPU: a bot that answers and then spins a
//! thread on every core gets all of that delay as free computation, taken
//! from whoever moves next. Two things make the delay long on an ordinary
//! scheduler, both measured here with eight spinning threads on two cores
//! (`koth bench match`, `runner/tests/adversarial.rs`):
//!
//! * **Waking.** With EEVDF (Linux 6.6 and later) a woken thread of the
//!   default slice waits for a spinning thread to use up its slice before it
//!   runs; in Snake the bot got 14–15 ms of CPU after each answer at the
//!   median.
//! * **Running.** Once awake, the supervisor shares the CPU fairly with the
//!   spinning threads while it reads the answer and pauses the box; with
//!   autogroup (the box is a session of its own) even a nice of −20 does not
//!   change that. 2–4% of moves gave the bot its whole window (10 ms of wall
//!   time, ~20 ms of CPU).
//!
//! So while it plays, the supervising thread has the scheduler's shortest
//! *custom slice* (`sched_setattr` with `sched_runtime`, Linux 6.12 and
//! later, no privilege needed): EEVDF lets a woken thread with a shorter
//! slice than the running one's preempt it at once, which fixes the waking
//! at the median. And from the moment it has read an answer until the box
//! is paused ([`PromptWakeups::urgent`]) it takes the lowest real-time
//! priority (`SCHED_RR` 1), so no ordinary thread interrupts it, which
//! fixes the running. The match engine holds it for a whole turn, from
//! resuming its bots to pausing the last of them: a real-time thread also
//! preempts other matches' bots on the same host, for microseconds at each
//! wake-up, and that used to time out a 40 ms bot of a concurrent match
//! (`runner/tests/matches.rs`) when the engine waited real-time; since the
//! engine's clock forgives a bot the time it waited for a CPU (the
//! runner's `engine::clock`), that cost is no longer charged to anyone,
//! and an engine at ordinary priority was seen reading answers 8 to 40 ms
//! late a turn on a host at load 10. Measured before that change (`koth
//! bench match`, alternated with an ordinary engine thread): the bot's CPU
//! from the answer being read to the pause, p99 0.23 ms instead of 10–20
//! ms; by the bot's own clock, from writing its answer, p99 1.7–3.6 ms
//! instead of 13–18 ms. The boxes keep the host's ordinary priority
//! (lowering them instead, say to nice 19, lets any busy program on the
//! host starve a bot whose clock runs), and the kernel's real-time
//! throttling (by default 95% of each second) bounds what a runaway thread
//! could take. A box's holder (its small init, koth's code) runs at the
//! same lowest real-time priority where allowed ([`real_time_holder`]):
//! the engine waits for it when it pauses a box on cgroup v1.
//!
//! A real-time policy needs `CAP_SYS_NICE`, and on kernels with real-time
//! group scheduling a real-time budget for the thread's cgroup (a container
//! has none unless given one). Without them the thread keeps the short
//! slice only: the medians are as good, the tail is longer. Older kernels
//! accept and ignore the slice; their scheduler (CFS) favours a thread
//! waking from sleep anyway.

use std::io;

/// The shortest slice the kernel accepts for a custom slice (100 µs).
const SHORTEST_SLICE_NS: u64 = 100_000;

/// `SCHED_FLAG_RESET_ON_FORK`: threads and processes a real-time thread
/// creates start with the ordinary policy. (The sandbox's launcher thread,
/// which every box's programs descend from, also resets itself, whoever
/// created it: [`ordinary_scheduling`].)
const RESET_ON_FORK: u64 = 0x01;

/// How the calling thread was made prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Promptness {
    /// The shortest slice, and the lowest real-time priority while urgent.
    RealTime,
    /// The shortest slice only (the real-time policy was refused).
    ShortSlice,
    /// Left as it was: the thread already has a policy other than the
    /// ordinary one, or no setting was accepted, or it was not asked.
    Unchanged,
}

impl std::fmt::Display for Promptness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Promptness::RealTime => "the shortest slice and a real-time priority",
            Promptness::ShortSlice => "the shortest slice only",
            Promptness::Unchanged => "its scheduling unchanged",
        })
    }
}

/// While alive, the calling thread runs promptly (see the module docs);
/// dropping it gives the thread back its policy, nice value and the
/// kernel's default slice. Not `Send`: it describes the thread it was
/// made on.
#[must_use = "the setting lasts only while the guard is alive"]
pub struct PromptWakeups {
    /// What to give back when dropped: the thread's attributes before.
    previous: Option<libc::sched_attr>,
    /// The thread's attributes while prompt (the short slice).
    prompt: libc::sched_attr,
    /// What [`urgent`](Self::urgent) sets, if the kernel allowed it.
    real_time: Option<libc::sched_attr>,
    how: Promptness,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl PromptWakeups {
    /// Make the calling thread prompt. Never fails: what could not be set
    /// is said by [`how`](Self::how) and the errors returned beside the
    /// guard, for the caller to log.
    pub fn enter() -> (PromptWakeups, Vec<io::Error>) {
        let before = match get_attr() {
            Ok(a) => a,
            Err(e) => return (PromptWakeups::unchanged(), vec![e]),
        };
        if !matches!(before.sched_policy as libc::c_int, libc::SCHED_OTHER | libc::SCHED_BATCH) {
            return (PromptWakeups::unchanged(), Vec::new());
        }
        let mut errors = Vec::new();
        // The default slice is given back, not the one read (a slice that
        // is set is "custom" to the kernel, even if it equals the default).
        let previous = libc::sched_attr { sched_runtime: 0, ..before };
        let prompt = libc::sched_attr { sched_runtime: SHORTEST_SLICE_NS, ..before };
        let short_slice = set_attr(&prompt).map_err(|e| errors.push(e)).is_ok();
        let real_time = libc::sched_attr {
            sched_policy: libc::SCHED_RR as u32,
            sched_flags: RESET_ON_FORK,
            sched_priority: 1,
            sched_nice: 0,
            sched_runtime: 0,
            ..before
        };
        // Is the real-time policy allowed here? Try it once, and go back.
        let real_time = match set_attr(&real_time) {
            Ok(()) => {
                let _ = set_attr(if short_slice { &prompt } else { &previous });
                Some(real_time)
            }
            Err(e) => {
                errors.push(e);
                None
            }
        };
        let how = match (&real_time, short_slice) {
            (Some(_), _) => Promptness::RealTime,
            (None, true) => Promptness::ShortSlice,
            (None, false) => return (PromptWakeups::unchanged(), errors),
        };
        let prompt = if short_slice { prompt } else { previous };
        (PromptWakeups { previous: Some(previous), prompt, real_time, how, _not_send: std::marker::PhantomData }, errors)
    }

    /// A guard that changes nothing (to measure what [`enter`](Self::enter)
    /// buys).
    pub fn none() -> (PromptWakeups, Vec<io::Error>) {
        (PromptWakeups::unchanged(), Vec::new())
    }

    fn unchanged() -> PromptWakeups {
        PromptWakeups {
            previous: None,
            prompt: empty_attr(),
            real_time: None,
            how: Promptness::Unchanged,
            _not_send: std::marker::PhantomData,
        }
    }

    /// How the thread was made prompt.
    pub fn how(&self) -> Promptness {
        self.how
    }

    /// While the returned guard lives, the thread has the lowest real-time
    /// priority, where allowed: for a match engine's turn (its waits are
    /// short, and bounded by the moves' limits), never for long work.
    pub fn urgent(&self) -> Urgent<'_> {
        let raised = self.real_time.as_ref().is_some_and(|rt| set_attr(rt).is_ok());
        Urgent { prompt: self, raised }
    }
}

impl Drop for PromptWakeups {
    fn drop(&mut self) {
        if let Some(previous) = &self.previous {
            let _ = set_attr(previous);
        }
    }
}

/// The thread is real-time until this is dropped
/// ([`PromptWakeups::urgent`]).
#[must_use = "the thread is urgent only while the guard is alive"]
pub struct Urgent<'a> {
    prompt: &'a PromptWakeups,
    raised: bool,
}

impl Drop for Urgent<'_> {
    fn drop(&mut self) {
        if self.raised {
            let _ = set_attr(&self.prompt.prompt);
        }
    }
}

/// Give the calling thread the ordinary policy and the default slice,
/// keeping its nice value (raising it could need a privilege).
pub(crate) fn ordinary_scheduling() {
    if let Ok(attr) = get_attr() {
        let _ = set_attr(&libc::sched_attr {
            sched_policy: libc::SCHED_OTHER as u32,
            sched_flags: 0,
            sched_priority: 0,
            sched_runtime: 0,
            ..attr
        });
    }
}

fn empty_attr() -> libc::sched_attr {
    libc::sched_attr {
        size: std::mem::size_of::<libc::sched_attr>() as u32,
        sched_policy: 0,
        sched_flags: 0,
        sched_nice: 0,
        sched_priority: 0,
        sched_runtime: 0,
        sched_deadline: 0,
        sched_period: 0,
    }
}

/// The calling thread's scheduling attributes.
fn get_attr() -> io::Result<libc::sched_attr> {
    let mut attr = empty_attr();
    let size = attr.size;
    // SAFETY: sched_getattr writes at most `size` bytes (the size of the
    // struct passed) into `attr`, which lives across the call; pid 0 is the
    // calling thread.
    let r = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr as *mut libc::sched_attr, size, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(attr)
}

/// Set the calling thread's scheduling attributes.
/// Give a box's holder (its small init, koth's own code) the lowest
/// real-time priority, where allowed: the engine waits for the holder's
/// acknowledgement when it pauses a box on cgroup v1, and an ordinary
/// holder on a busy host answered 50 to 150 ms late, all of it time the
/// engine could not read another bot's answer (seen with a host at load
/// 10: a bot that answered in 0.1 ms measured at 88 ms). The holder only
/// ever runs to handle a command or reap: a few µs. Its children are reset
/// to the ordinary policy (`RESET_ON_FORK`), and the box's programs do not
/// descend from it (they are cloned by the launcher).
pub(crate) fn real_time_holder(pid: libc::pid_t) -> io::Result<()> {
    let attr = libc::sched_attr {
        size: std::mem::size_of::<libc::sched_attr>() as u32,
        sched_policy: libc::SCHED_RR as u32,
        sched_flags: RESET_ON_FORK,
        sched_nice: 0,
        sched_priority: 1,
        sched_runtime: 0,
        sched_deadline: 0,
        sched_period: 0,
    };
    // SAFETY: sched_setattr reads `size` bytes of `attr`, a valid struct of
    // that size that lives across the call; `pid` is a process of ours.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, pid, &attr as *const libc::sched_attr, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn set_attr(attr: &libc::sched_attr) -> io::Result<()> {
    let attr = libc::sched_attr { size: std::mem::size_of::<libc::sched_attr>() as u32, ..*attr };
    // SAFETY: sched_setattr reads `size` bytes of `attr`, a valid struct of
    // that size that lives across the call; pid 0 is the calling thread.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const libc::sched_attr, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As root (as koth runs) the thread has the short slice, is real-time
    /// while urgent and only then; dropping the guard gives back its
    /// policy, nice value and default slice.
    #[test]
    fn the_guard_makes_the_thread_real_time_while_urgent_and_gives_everything_back() {
        std::thread::spawn(|| {
            // SAFETY: setpriority on the calling thread only.
            assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 3) }, 0);
            let before = get_attr().unwrap();
            let (guard, errors) = PromptWakeups::enter();
            let prompt = get_attr().unwrap();
            assert_eq!(prompt.sched_policy, libc::SCHED_OTHER as u32);
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                assert_eq!(guard.how(), Promptness::RealTime, "{errors:?}");
                let urgent = guard.urgent();
                let during = get_attr().unwrap();
                assert_eq!((during.sched_policy, during.sched_priority), (libc::SCHED_RR as u32, 1));
                // What it creates does not inherit the priority.
                let child = std::thread::spawn(|| get_attr().unwrap()).join().unwrap();
                assert_eq!((child.sched_policy, child.sched_priority), (libc::SCHED_OTHER as u32, 0));
                // Nor does the launcher, whichever thread creates it.
                let launcher = crate::launcher::on_launcher(|| get_attr().unwrap());
                assert_eq!((launcher.sched_policy, launcher.sched_runtime), (libc::SCHED_OTHER as u32, before.sched_runtime));
                drop(urgent);
                let after = get_attr().unwrap();
                assert_eq!((after.sched_policy, after.sched_nice, after.sched_runtime), (prompt.sched_policy, 3, prompt.sched_runtime));
            } else {
                assert_ne!(guard.how(), Promptness::RealTime);
            }
            drop(guard);
            let after = get_attr().unwrap();
            assert_eq!((after.sched_policy, after.sched_nice, after.sched_runtime), (before.sched_policy, 3, before.sched_runtime));
        })
        .join()
        .unwrap();
    }

    /// Refused the real-time policy (no `CAP_SYS_NICE`: a plain user, or a
    /// container without it), the thread gets the shortest slice, on
    /// kernels that keep custom slices.
    #[test]
    fn without_the_real_time_policy_the_thread_gets_the_shortest_slice() {
        std::thread::spawn(|| {
            // Drop CAP_SYS_NICE from this thread's effective set only
            // (capabilities are per thread).
            caps::drop(None, caps::CapSet::Effective, caps::Capability::CAP_SYS_NICE).unwrap();
            let before = get_attr().unwrap();
            let (guard, errors) = PromptWakeups::enter();
            let (major, minor) = kernel_version();
            if (major, minor) >= (6, 12) {
                assert_eq!(guard.how(), Promptness::ShortSlice, "{errors:?}");
                assert_eq!(get_attr().unwrap().sched_runtime, SHORTEST_SLICE_NS);
            }
            drop(guard);
            assert_eq!(get_attr().unwrap().sched_runtime, before.sched_runtime, "the default slice was not given back");
        })
        .join()
        .unwrap();
    }

    fn kernel_version() -> (u32, u32) {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut parts = release.trim().split(|c: char| !c.is_ascii_digit()).map(|p| p.parse().unwrap_or(0));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
    }
}
