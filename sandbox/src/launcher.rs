//! The threads that fork.
//!
//! `PR_SET_PDEATHSIG` is tied to the thread that created a process: if that
//! thread exits, the child gets the signal although the supervisor lives on.
//! Every fork of the sandbox therefore runs on a launcher thread, and the
//! launchers live as long as the process.
//!
//! There are two launchers per CPU (at most [`MAX_LAUNCHERS`]), taking jobs
//! from one queue. A launcher is busy for the whole of its job: a program's
//! start until its joiner has seen its `execve` and exited (its children
//! share the supervisor's memory and run on the launcher's stacks), a box's
//! namespaces and mount tree until its init runs. With a single launcher,
//! every spawn of the process waited behind the one before it and behind
//! any box being built (a pool's replacement, another match's boxes): four
//! boxes spawning at once each on a thread of its own started 0.40–0.55× as
//! many programs a second as bare fork+exec on this 2-core machine (`koth
//! sandbox bench`). One per CPU was enough while the joiner exited at once;
//! since the joiner waits for the program's `execve` (`spawn`'s module
//! docs: the OOM killer's exemption), a launcher spends much of a spawn
//! asleep, waiting for the joiner to be woken and scheduled, and one per
//! CPU left four boxes at once at 0.55–0.58× quiet and 0.26–0.28× on a busy
//! host; two per CPU: 0.61–0.74× and 0.50–0.56× (`docs/sandbox.md`).

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

/// The most launcher threads, however many CPUs: each keeps two child
/// stacks, and many more starts at once than CPUs only queue in the kernel.
pub(crate) const MAX_LAUNCHERS: usize = 8;

/// How many launcher threads this process has (two per CPU it may use, at
/// most [`MAX_LAUNCHERS`], or what [`set_launcher_threads`] asked).
#[cfg(test)]
pub(crate) fn launchers() -> usize {
    count().launchers()
}

/// What [`set_launcher_threads`] asked (0: the default), and whether the
/// launchers have started: one lock, so that a request and the start
/// never cross.
struct Count {
    asked: usize,
    started: bool,
}

impl Count {
    fn launchers(&self) -> usize {
        match self.asked {
            0 => (2 * std::thread::available_parallelism().map_or(1, |n| n.get())).clamp(1, MAX_LAUNCHERS),
            n => n,
        }
    }
}

static COUNT: Mutex<Count> = Mutex::new(Count { asked: 0, started: false });

fn count() -> std::sync::MutexGuard<'static, Count> {
    COUNT.lock().unwrap_or_else(|p| p.into_inner())
}

/// How many launcher threads this process starts with its first box
/// (1 to [`MAX_LAUNCHERS`]; by default two per CPU, so that boxes built and
/// programs started at once do not wait for each other). A process that
/// builds one box and starts its programs one at a time (`koth sandbox
/// run`) needs one: each thread costs its start (its stack, guard page and
/// signal stack, its allocator's caches, 41 `prctl`s narrowing its
/// bounding set), and a command pays for all of them before its one box.
/// Fewer launchers only queue jobs: no job waits for another.
/// False, and nothing changed, once the launchers have started.
pub fn set_launcher_threads(n: usize) -> bool {
    let mut c = count();
    if c.started {
        return false;
    }
    c.asked = n.clamp(1, MAX_LAUNCHERS);
    true
}

fn sender() -> &'static Mutex<Sender<Job>> {
    static LAUNCHER: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let n = {
            let mut c = count();
            c.started = true;
            c.launchers()
        };
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..n {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("koth-launcher-{i}"))
                .spawn(move || {
                    // Every box's programs descend from these threads: they
                    // must not keep a priority of the thread that happened
                    // to create them (the match engine's is real-time while
                    // it plays).
                    crate::wakeup::ordinary_scheduling();
                    narrow_bounding_set();
                    while let Some(job) = next_job(&rx) {
                        job();
                    }
                })
                .expect("spawning a sandbox launcher thread");
        }
        Mutex::new(tx)
    })
}

/// The one capability a box's init uses after its exec (`holder/init.c`):
/// `kill(-1, SIGSTOP)` and `SIGCONT` reach the box's programs, which run
/// as another uid.
const INIT_KEEPS: u32 = 5; // CAP_KILL

/// Drop from this thread's capability bounding set everything but
/// [`INIT_KEEPS`], once, when the thread starts.
///
/// The bounding set is a thread's own and every process it starts inherits
/// it; every box's holder and every program descend from these threads. So
/// a box's init, root in its box, gets CAP_KILL alone from its exec (it
/// got every capability before), and a program finds one capability left
/// to drop instead of 41: each drop commits new credentials, about 50 µs
/// of every spawn in all (`koth sandbox bench`, "capability bounding set").
/// The thread's own effective capabilities, which building a box needs
/// (mounts, namespaces, cgroups), are not touched: the bounding set only
/// limits what an `execve` grants. Without CAP_SETPCAP (a rootless
/// supervisor) the first drop fails and nothing changes: the programs drop
/// every capability themselves, as they always check.
fn narrow_bounding_set() {
    let last = crate::sys::cap_last_cap();
    for cap in (0..=last).filter(|&c| c != INIT_KEEPS) {
        // SAFETY: prctl with integer arguments, on this thread's credentials.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) } < 0 {
            tracing::debug!(cap, error = %std::io::Error::last_os_error(), "a launcher thread keeps its capability bounding set");
            return;
        }
    }
}

/// The next job of the shared queue: the launcher holding the lock waits
/// for it; the others wait for the lock, which it lets go before it runs
/// the job.
fn next_job(rx: &Mutex<Receiver<Job>>) -> Option<Job> {
    rx.lock().unwrap_or_else(|p| p.into_inner()).recv().ok()
}

/// Run `f` on a launcher thread and return its result.
pub(crate) fn on_launcher<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    on_launcher_watched(f, std::time::Duration::MAX, || {})
}

/// Start `f` on a launcher thread; its result comes on the receiver. The
/// caller does other work meanwhile (a box's cgroups are made while the
/// launcher builds its namespaces and mounts) and must take the result:
/// what `f` made (a process, descriptors) is the caller's to clean up.
pub(crate) fn start_on_launcher<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> mpsc::Receiver<R> {
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    sender().lock().unwrap_or_else(|p| p.into_inner()).send(job).expect("the sandbox launcher threads are gone");
    rx
}

/// [`on_launcher`], calling `slow` each time `every` passes before `f` has
/// returned (to end whatever keeps it waiting).
pub(crate) fn on_launcher_watched<R: Send + 'static>(
    f: impl FnOnce() -> R + Send + 'static,
    every: std::time::Duration,
    mut slow: impl FnMut(),
) -> R {
    let rx = start_on_launcher(f);
    loop {
        match rx.recv_timeout(every) {
            Ok(r) => return r,
            Err(mpsc::RecvTimeoutError::Timeout) => slow(),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the sandbox launcher thread dropped a job"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// How many launcher threads this process has, by name.
    fn launcher_threads() -> usize {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter(|t| {
                let comm = std::fs::read_to_string(t.as_ref().unwrap().path().join("comm")).unwrap_or_default();
                comm.starts_with("koth-launcher-")
            })
            .count()
    }

    /// `set_launcher_threads` before the first job sets how many start,
    /// and changes nothing after. Run in a process of its own (this test
    /// binary again, this test alone), since the launchers start once a
    /// process and the other tests here start them.
    #[test]
    fn the_launchers_asked_for_before_the_first_job_are_the_ones_that_start() {
        if std::env::var_os("KOTH_LAUNCHER_TEST_CHILD").is_some() {
            assert!(set_launcher_threads(1), "no launcher has started in this process yet");
            let name = on_launcher(|| std::thread::current().name().map(str::to_owned));
            assert_eq!(name.as_deref(), Some("koth-launcher-0"));
            assert_eq!(launcher_threads(), 1, "one launcher thread asked for");
            assert!(!set_launcher_threads(4), "asked for after the launchers started");
            assert_eq!(launchers(), 1);
            // Jobs only queue on one launcher: three in a row all run.
            let results: Vec<_> = (0..3).map(|i| start_on_launcher(move || i * 2)).collect();
            assert_eq!(results.into_iter().map(|r| r.recv().unwrap()).collect::<Vec<_>>(), [0, 2, 4]);
            assert_eq!(launcher_threads(), 1);
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "launcher::tests::the_launchers_asked_for_before_the_first_job_are_the_ones_that_start", "--nocapture"])
            .env("KOTH_LAUNCHER_TEST_CHILD", "1")
            .output()
            .unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && said.contains("1 passed"), "the test's own process failed: {said}");
        // In this process the default holds once started.
        on_launcher(|| ());
        assert!(!set_launcher_threads(1));
    }

    /// A launcher held by a long job (a program stopped on its way to
    /// `execve`, a box built on a slow host) does not hold the others: a
    /// second job runs meanwhile wherever there is more than one CPU.
    #[test]
    fn a_busy_launcher_does_not_hold_the_next_job_when_there_are_others() {
        let (ran_tx, ran_rx) = mpsc::channel::<()>();
        let held = start_on_launcher(move || ran_rx.recv_timeout(Duration::from_secs(5)).is_ok());
        // Let the first job reach its launcher before the second is queued.
        std::thread::sleep(Duration::from_millis(50));
        let second = start_on_launcher(move || {
            let _ = ran_tx.send(());
            std::thread::current().name().map(str::to_owned)
        });
        let first_saw_second = held.recv().unwrap();
        let second_thread = second.recv().unwrap().unwrap();
        assert!(second_thread.starts_with("koth-launcher-"), "{second_thread}");
        if launchers() >= 2 {
            assert!(first_saw_second, "the second job waited for the first one's launcher ({} launchers)", launchers());
        } else {
            assert!(!first_saw_second, "one launcher ran two jobs at once");
        }
    }
}
