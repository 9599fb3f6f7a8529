//! Drawing replays for the viewer (their frames: every turn played again
//! through the game's rules), kept off the CPU the runners' bots are timed
//! on.
//!
//! A long replay is seconds of CPU to draw, and anyone may ask for one:
//! `POST /api/replays/frames` draws a file the caller sends, and a
//! finished match is drawn the first time its page is opened. So:
//!
//! - every drawing runs on a thread of its own at nice 19: beside busy
//!   threads it gets about 1.5 % of a CPU each of them gets, and the
//!   bots, in boxes of their own CPU weight, are not its neighbours at
//!   all. (`SCHED_IDLE` was tried: it gets nothing while any ordinary
//!   thread runs, and on a host where the runners compile, a match page
//!   waited for its board without end; a browser test failed so);
//! - uploaded replays are drawn one at a time ([`UPLOADED_AT_ONCE`]); a
//!   caller who finds that slot taken is told at once (429, `Retry-After`)
//!   rather than queued, before its body is read;
//! - stored matches and live ones share [`STORED_AT_ONCE`] slots of their
//!   own, so uploads cannot keep a match page waiting;
//! - a slot is held until its drawing ends, even when the caller has gone.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Uploaded replays drawn at once.
pub const UPLOADED_AT_ONCE: usize = 1;
/// Stored and live matches drawn at once.
pub const STORED_AT_ONCE: usize = 2;
/// What a caller who found the uploads' slot taken is told to wait.
pub const UPLOADED_RETRY_AFTER_SECS: f64 = 5.0;

/// The drawing slots of one service.
#[derive(Debug)]
pub struct Drawing {
    stored: Arc<Semaphore>,
    uploaded: Arc<Semaphore>,
}

/// A drawing slot, held while its drawing runs.
#[derive(Debug)]
pub struct Slot {
    _held: OwnedSemaphorePermit,
}

impl Default for Drawing {
    fn default() -> Self {
        Drawing { stored: Arc::new(Semaphore::new(STORED_AT_ONCE)), uploaded: Arc::new(Semaphore::new(UPLOADED_AT_ONCE)) }
    }
}

impl Drawing {
    /// One of the stored matches' slots, when one is free.
    pub async fn stored(&self) -> Slot {
        Slot { _held: self.stored.clone().acquire_owned().await.expect("the semaphore is never closed") }
    }

    /// The uploads' slot, if it is free now.
    pub fn uploaded(&self) -> Option<Slot> {
        self.uploaded.clone().try_acquire_owned().ok().map(|p| Slot { _held: p })
    }
}

/// Run `draw` on a thread of its own at the lowest CPU priority, holding
/// `slot` until it returns (even if the caller stops waiting for it).
/// `Err`: no thread could be started, or the drawing panicked.
pub async fn run<T: Send + 'static>(slot: Slot, draw: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("koth-draw".into())
        .spawn(move || {
            lowest_priority();
            let _ = tx.send(draw());
            drop(slot);
        })
        .map_err(|e| format!("no thread to draw on: {e}"))?;
    rx.await.map_err(|_| "the drawing failed (it panicked)".to_owned())
}

/// The calling thread (on Linux the scheduling calls take a thread) gets
/// nice 19; what it got, for the logs and tests.
pub fn lowest_priority() -> &'static str {
    // SAFETY: a plain system call on the calling thread (0).
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) } == 0 {
        "nice 19"
    } else {
        "unchanged"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drawing_runs_at_the_lowest_priority_and_holds_its_slot_to_the_end() {
        let drawing = Drawing::default();
        let slot = drawing.uploaded().expect("free");
        assert!(drawing.uploaded().is_none(), "one upload at a time");
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let (policy, nice) = {
            let run = run(slot, move || {
                wait.recv().unwrap();
                // SAFETY: reads of the calling thread's scheduling.
                unsafe { (libc::sched_getscheduler(0), libc::getpriority(libc::PRIO_PROCESS, 0)) }
            });
            tokio::pin!(run);
            // Still drawing: the slot is held.
            assert!(futures_poll_once(run.as_mut()).await.is_none());
            assert!(drawing.uploaded().is_none());
            go.send(()).unwrap();
            run.await.unwrap()
        };
        assert!(policy == libc::SCHED_OTHER && nice == 19, "policy {policy}, nice {nice}");
        // The thread ended and gave the slot back.
        let mut free = None;
        for _ in 0..1000 {
            free = drawing.uploaded();
            if free.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(free.is_some(), "the slot was never given back");
    }

    /// A caller that stops waiting does not free the slot: the drawing
    /// still runs.
    #[tokio::test]
    async fn a_caller_that_goes_away_leaves_the_slot_held_until_the_drawing_ends() {
        let drawing = Drawing::default();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        drop(run(drawing.uploaded().unwrap(), || ()));
        // `run` was never polled: nothing started, the slot is back.
        assert!(drawing.uploaded().is_some());
        let mut fut = Box::pin(run(drawing.uploaded().unwrap(), move || wait.recv().unwrap()));
        assert!(futures_poll_once(fut.as_mut()).await.is_none());
        drop(fut);
        assert!(drawing.uploaded().is_none(), "the caller went away, the drawing did not");
        go.send(()).unwrap();
        let mut free = false;
        for _ in 0..1000 {
            if drawing.uploaded().is_some() {
                free = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(free);
    }

    /// Poll once: `Some` if ready.
    async fn futures_poll_once<F: std::future::Future + Unpin>(f: F) -> Option<F::Output> {
        let mut f = f;
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut f).poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }
}
