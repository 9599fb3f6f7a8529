//! The one thread that forks.
//!
//! `PR_SET_PDEATHSIG` is tied to the thread that created a process: if that
//! thread exits, the child gets the signal although the supervisor lives on.
//! Every fork of the sandbox therefore runs on this thread, which lives as
//! long as the process.

use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

fn sender() -> &'static Mutex<Sender<Job>> {
    static LAUNCHER: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("koth-sandbox-launcher".into())
            .spawn(move || {
                // Every box's programs descend from this thread: it must not
                // keep a priority of the thread that happened to create it
                // (the match engine's is real-time while it plays).
                crate::wakeup::ordinary_scheduling();
                for job in rx {
                    job();
                }
            })
            .expect("spawning the sandbox launcher thread");
        Mutex::new(tx)
    })
}

/// Run `f` on the launcher thread and return its result.
pub(crate) fn on_launcher<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    on_launcher_watched(f, std::time::Duration::MAX, || {})
}

/// Start `f` on the launcher thread; its result comes on the receiver. The
/// caller does other work meanwhile (a box's cgroups are made while the
/// launcher builds its namespaces and mounts) and must take the result:
/// what `f` made (a process, descriptors) is the caller's to clean up.
pub(crate) fn start_on_launcher<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> mpsc::Receiver<R> {
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    sender().lock().unwrap_or_else(|p| p.into_inner()).send(job).expect("the sandbox launcher thread is gone");
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
