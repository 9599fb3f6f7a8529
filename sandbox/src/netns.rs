//! Network namespaces made ahead of need, for boxes built by root.
//!
//! A box's network namespace was the costliest step of its build: the
//! unsharer's `unshare` of five namespaces took 0.85–0.99 ms at the median
//! here (`koth sandbox bench`), most of it the network namespace, and
//! creating one sleeps on kernel-wide locks (in a `perf` trace of the
//! bench's unsharers: sysfs's kernfs lock while the loopback device's files
//! are made, which the background teardown of earlier boxes' namespaces
//! takes to remove theirs, and the per-CPU allocator's mutex). Nothing of
//! a new network namespace depends on the box it is for: it is empty (not
//! even its loopback is up) and owned by the initial user namespace,
//! whoever made it. So a thread of its own (the *maker*) keeps up to
//! [`DEPTH`] of them ready, each made by `unshare(CLONE_NEWNET)` on that
//! thread and held by a descriptor of `/proc/thread-self/ns/net`; the maker
//! goes back to its own namespace after each, so that it never lives in
//! one a box is given. A box built by root takes one ([`take`]); its
//! unsharer enters it (`setns`) and unshares the other namespaces. The holder brings its loopback up where the box asks for it,
//! as before.
//!
//! * **Only from the second box of a process.** A process that builds one
//!   box (`koth sandbox run`) never starts the maker: its namespace would
//!   be made for nothing, and the process's exit would wait for a maker
//!   inside `unshare`. From the second request on, the maker runs and
//!   refills the stock after each take; an empty stock (the first boxes, a
//!   burst larger than [`DEPTH`]) means the unsharer makes the namespace
//!   itself, as it did before.
//! * **One namespace, one box.** A descriptor is taken out of the stock
//!   under its lock and closed by the supervisor once the holder is
//!   started, so no two boxes share a namespace; the box's processes hold
//!   it from then on, and it goes with them.
//! * **A maker that fails stops.** If the maker cannot make a namespace or
//!   go back to its own, it says why (at debug level), ends, and every
//!   later box makes its own: the unsharer's `unshare` then reports the
//!   error, if there is one, as the step it failed at.
//! * **Rootless boxes** make theirs in their own user namespace, which owns
//!   it; they do not use the stock.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::{Condvar, Mutex, MutexGuard};

/// How many namespaces the maker keeps ready: a runner builds a box per
/// seat of a match, and a few at once when matches start together.
pub(crate) const DEPTH: usize = 4;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Maker {
    NotStarted,
    Running,
    Stopped,
}

struct State {
    ready: Vec<OwnedFd>,
    /// A box asked before: the maker starts at the second request.
    asked_before: bool,
    maker: Maker,
}

static STATE: Mutex<State> = Mutex::new(State { ready: Vec::new(), asked_before: false, maker: Maker::NotStarted });
static WANTED: Condvar = Condvar::new();

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A network namespace made ahead, for a box built by root; `None` when
/// none is ready (the unsharer then makes the box's own). Starts the maker
/// at a process's second request, and asks it to refill after each.
pub(crate) fn take() -> Option<OwnedFd> {
    let mut s = state();
    let got = s.ready.pop();
    let first = !std::mem::replace(&mut s.asked_before, true);
    match s.maker {
        Maker::NotStarted if !first => {
            s.maker = Maker::Running;
            let spawned = std::thread::Builder::new().name("koth-netns-maker".into()).spawn(maker);
            if let Err(e) = spawned {
                tracing::debug!("no network namespaces made ahead: the maker thread could not start: {e}");
                s.maker = Maker::Stopped;
            }
        }
        Maker::Running => WANTED.notify_one(),
        Maker::NotStarted | Maker::Stopped => {}
    }
    got
}

fn maker() {
    // Made by whichever thread asked second: it must not keep that
    // thread's real-time priority (the engine's while it plays).
    crate::wakeup::ordinary_scheduling();
    let stopped = |why: io::Error| {
        tracing::debug!("no more network namespaces made ahead: {why}");
        state().maker = Maker::Stopped;
    };
    let home = match open_own_namespace() {
        Ok(fd) => fd,
        Err(e) => return stopped(e),
    };
    loop {
        {
            let mut s = state();
            while s.ready.len() >= DEPTH {
                s = WANTED.wait(s).unwrap_or_else(|p| p.into_inner());
            }
        }
        match make(&home) {
            Ok(fd) => state().ready.push(fd),
            // The thread ends here, and with it its hold on a namespace it
            // could not leave.
            Err(e) => return stopped(e),
        }
    }
}

/// A new network namespace, made on this thread, which then goes back to
/// `home`.
fn make(home: &OwnedFd) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    // SAFETY: integer flags only; it changes this thread's namespace, and
    // this thread does nothing else with the network.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } < 0 {
        return Err(io::Error::other(format!("unshare(CLONE_NEWNET): {}", io::Error::last_os_error())));
    }
    let made = open_own_namespace();
    // SAFETY: a descriptor of a network namespace, owned by `home` and
    // alive across the call; it changes this thread's namespace only.
    if unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
        return Err(io::Error::other(format!("going back to the supervisor's network namespace (setns): {}", io::Error::last_os_error())));
    }
    made
}

/// This thread's network namespace, as a descriptor (close-on-exec).
fn open_own_namespace() -> io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated static path.
    let fd = unsafe { libc::open(c"/proc/thread-self/ns/net".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::other(format!("opening /proc/thread-self/ns/net: {}", io::Error::last_os_error())));
    }
    // SAFETY: `fd` was just opened (checked >= 0) and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
