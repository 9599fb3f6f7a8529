//! Boxes built ahead of need.
//!
//! Building a box costs a few milliseconds (namespaces, a network namespace
//! with its loopback device, cgroups, the mount tree, the holder's init:
//! `koth sandbox bench`), and a match builds one per seat before its first
//! move. A [`BoxPool`] takes that off the match's path: [`BoxPool::take`]
//! hands out a box built earlier for an equal [`SandboxConfig`] when it has
//! one, builds one on the spot when not, and either way asks its builder
//! thread for another of that config, for the next caller.
//!
//! **Every box is used once.** A box from the pool is exactly a box from
//! [`Sandbox::create`] that nobody has used yet: nothing ran in it, its
//! folder and scratch filesystem are empty, its cgroup has counted nothing.
//! Boxes are never given back and reset: what one program could leave for
//! the next (files, a stopped process, a socket, a cgroup counter, a tmpfs
//! inode) is not carried over because nothing is, and the test of that is
//! the pool's own (`sandbox/tests/pool.rs`): a box taken after another was
//! used sees nothing of it.
//!
//! **A taken box's replacement waits a moment.** A take is the start of a
//! match or a compile: its first programs are spawned in the next
//! milliseconds, and building a box beside them (the builder's thread, the
//! unsharer, the holder, a launcher thread) takes the CPUs and the
//! launchers they need: on a 2-core machine a pooled box's take + spawn to
//! exit took 2.8–3.0 ms at the median with the replacement built at once
//! against 1.6–1.8 ms with it built after (`koth sandbox bench`). So the box
//! that replaces a taken one is built [`REFILL_AFTER`] after the take, not
//! at once; the next match is seldom that close, and if it is, its take
//! builds on the spot as an empty pool's does. [`BoxPool::prepare`] asks
//! for one at once: nothing is starting then.
//!
//! **A ready box's first program is parked.** Once built, a box has its
//! first program started up to its `execve` and waiting for what to run
//! ([`Sandbox::park_first_program`], `spawn`'s "A parked first program"):
//! the take's first spawn then skips every step of its confinement (0.78
//! ms of the 1.73 ms its steps took on this 2-core machine, `koth sandbox
//! bench`; docs/sandbox.md, "A pooled box's first program is parked").
//!
//! Bounds: at most `per_config` ready boxes of one config (a box being
//! built counts), at most `capacity` in all (the oldest goes), and a box
//! unused for `idle` is dropped. Within them the pool follows its takers:
//! each take asks for one box more, so after a match of two bots of one
//! config it holds two of that config, however high `per_config` is (one,
//! when the box built for the match's first take was ready in time for
//! its second; the next match grows it again). A
//! ready box holds a uid slot, a holder process (the small init, under a
//! MiB), its cgroups and its parked first program (a process sharing the
//! supervisor's memory, with a 256 KiB stack of its own).

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::{Result, Sandbox, SandboxConfig};

/// How long after a take the builder waits before building its
/// replacement: longer than a match's or a compile's first spawns take
/// (a few milliseconds each), short beside the time between two matches.
pub const REFILL_AFTER: Duration = Duration::from_millis(25);

/// A pool of ready boxes with a builder thread; clones share the pool. The
/// builder stops, and the ready boxes are torn down, when the last clone is
/// dropped.
#[derive(Clone)]
pub struct BoxPool {
    inner: Arc<Handle>,
}

/// Dropped with the last `BoxPool`: tells the builder to stop.
struct Handle {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    per_config: usize,
    capacity: usize,
    idle: Duration,
}

#[derive(Default)]
struct State {
    ready: Vec<Ready>,
    /// Configs of which one more box is wanted, oldest first, each with
    /// the moment its building may start.
    wanted: Vec<(SandboxConfig, Instant)>,
    /// The config the builder is building now, outside the lock: it counts
    /// toward `per_config` like a ready box (without it a take during a
    /// build asked for one box too many).
    building: Option<SandboxConfig>,
    closed: bool,
    built: u64,
    handed_out: u64,
}

struct Ready {
    config: SandboxConfig,
    sandbox: Sandbox,
    built: Instant,
}

/// How the pool has served its callers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Boxes ready now.
    pub ready: usize,
    /// Boxes the builder thread has built.
    pub built: u64,
    /// Takes served by a ready box (the others built one on the spot).
    pub handed_out: u64,
}

impl std::fmt::Debug for BoxPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxPool").field("stats", &self.stats()).finish()
    }
}

impl BoxPool {
    /// A pool keeping up to `per_config` ready boxes of each config it is
    /// asked for, `capacity` in all, each for at most `idle`.
    pub fn new(per_config: usize, capacity: usize, idle: Duration) -> BoxPool {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            per_config: per_config.max(1),
            capacity: capacity.max(1),
            idle,
        });
        let builder = shared.clone();
        std::thread::Builder::new()
            .name("koth-box-pool".into())
            .spawn(move || build_ahead(&builder))
            .expect("spawning the box pool's builder thread");
        BoxPool { inner: Arc::new(Handle { shared }) }
    }

    /// A box for `config`: one built ahead when the pool has one, else one
    /// built now (with its error, if it cannot be built). Either way one
    /// more of this config is then built for the next caller.
    pub fn take(&self, config: SandboxConfig) -> Result<Sandbox> {
        let shared = &self.inner.shared;
        let taken = {
            let mut st = shared.lock();
            let taken = st.ready.iter().position(|r| r.config == config).map(|i| st.ready.remove(i).sandbox);
            if taken.is_some() {
                st.handed_out += 1;
            }
            self.want(&mut st, &config, Instant::now() + REFILL_AFTER);
            taken
        };
        match taken {
            Some(sandbox) => Ok(sandbox),
            None => Sandbox::create(config),
        }
    }

    /// Have a box of `config` ready before the first [`take`](Self::take).
    pub fn prepare(&self, config: SandboxConfig) {
        let mut st = self.inner.shared.lock();
        self.want(&mut st, &config, Instant::now());
    }

    /// Ask the builder for one more box of `config`, unless enough are ready
    /// or on their way; its building starts at `start` or later.
    fn want(&self, st: &mut State, config: &SandboxConfig, start: Instant) {
        let shared = &self.inner.shared;
        let have = st.ready.iter().filter(|r| r.config == *config).count()
            + st.wanted.iter().filter(|(c, _)| c == config).count()
            + usize::from(st.building.as_ref() == Some(config));
        if have < shared.per_config {
            st.wanted.push((config.clone(), start));
            // All: waiters for ready boxes share the condition variable.
            shared.wake.notify_all();
        }
    }

    pub fn stats(&self) -> PoolStats {
        let st = self.inner.shared.lock();
        PoolStats { ready: st.ready.len(), built: st.built, handed_out: st.handed_out }
    }

    /// Wait up to `timeout` until `n` boxes are ready (tests, benchmarks).
    pub fn wait_ready(&self, n: usize, timeout: Duration) -> bool {
        let shared = &self.inner.shared;
        let deadline = Instant::now() + timeout;
        let mut st = shared.lock();
        while st.ready.len() < n {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            st = shared.wake.wait_timeout(st, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
        true
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.wake.notify_all();
    }
}

/// The builder thread: build what is wanted, drop what idled too long.
fn build_ahead(shared: &Shared) {
    loop {
        let (config, stale) = {
            let mut st = shared.lock();
            loop {
                let (now, closed) = (Instant::now(), st.closed);
                let (stale, keep): (Vec<Ready>, Vec<Ready>) =
                    std::mem::take(&mut st.ready).into_iter().partition(|r| closed || now.duration_since(r.built) > shared.idle);
                st.ready = keep;
                if !stale.is_empty() || st.closed {
                    break (None, stale);
                }
                if let Some(i) = st.wanted.iter().position(|(_, start)| *start <= now) {
                    let config = st.wanted.remove(i).0;
                    st.building = Some(config.clone());
                    break (Some(config), Vec::new());
                }
                let next_start = st.wanted.iter().map(|(_, start)| start.duration_since(now)).min();
                let nap = next_start.unwrap_or(shared.idle.max(Duration::from_millis(100)));
                st = shared.wake.wait_timeout(st, nap).unwrap_or_else(|p| p.into_inner()).0;
            }
        };
        // Teardown and building happen outside the lock: takers never wait
        // for them.
        drop(stale);
        let Some(config) = config else {
            if shared.lock().closed {
                return;
            }
            continue;
        };
        match Sandbox::create(config.clone()) {
            Ok(mut sandbox) => {
                // Its first program's start, too, is made ahead (a box
                // whose first program cannot be parked is used as it is).
                if let Err(e) = sandbox.park_first_program() {
                    tracing::warn!(error = %e, "parking a box's first program ahead of need failed");
                }
                let evicted = {
                    let mut st = shared.lock();
                    st.building = None;
                    st.built += 1;
                    st.ready.push(Ready { config, sandbox, built: Instant::now() });
                    let over = st.ready.len().saturating_sub(shared.capacity);
                    st.ready.drain(..over).collect::<Vec<_>>()
                };
                shared.wake.notify_all();
                drop(evicted);
            }
            // Taken boxes are built on the spot then, and say why.
            Err(e) => {
                shared.lock().building = None;
                tracing::warn!(error = %e, "building a box ahead of need failed")
            }
        }
    }
}
