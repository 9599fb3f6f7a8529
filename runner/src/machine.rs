//! One machine, several runner processes: who may play on it at once.
//!
//! The clock does not charge a bot for time it waited for a CPU, up to a
//! bound; past it the match is voided as the machine's fault and played
//! again later ([`crate::engine::clock`]). On a machine whose runners keep
//! it busy, *again later* meets the same load: CI of stop 45 saw one
//! 300-turn validation match voided nine times in fifteen minutes on three
//! runner containers on two cores, while short ladder matches, which
//! rarely meet a bad turn, went on around it. Pausing the loop that saw the
//! void does not help: the load is the other loops'.
//!
//! So every job holds a turn on its machine while it runs: a **shared**
//! turn normally, and a turn **alone** when the machine voided it before.
//! A turn alone waits for the jobs running on the machine to end, starts
//! no sooner, and holds every new job of the machine back until it ends:
//! the match the machine could not time is played with the machine to
//! itself (as far as koth's own jobs go; other programs on the host still
//! count, and a void then is as honest as before).
//!
//! The turns are `flock`s on two files in a directory every runner process
//! of the machine shares (the sandbox's `slots` directory, which already
//! holds the uid slots, and which docker-compose's runner containers
//! share): `machine.lock`, held shared or exclusive for the job, and
//! `machine-gate.lock`, held exclusive only while taking the first. A turn
//! alone waits for `machine.lock` while it holds the gate, so jobs that
//! come after it wait at the gate instead of slipping in shared turns
//! ahead of it (`flock` itself prefers nobody, and a busy machine would
//! never be free). Locks belong to open files, so the loops of one process
//! exclude each other like separate processes do, and a killed runner's
//! turns end with it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// How a job shares the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// With the other jobs of the machine.
    Shared,
    /// With no other job of the machine running.
    Alone,
}

/// The turns of one machine's jobs: lock files in `dir`.
#[derive(Clone, Debug)]
pub struct MachineTurns {
    dir: PathBuf,
}

/// A turn on the machine; dropping it ends the turn.
#[derive(Debug)]
pub struct Turn {
    _machine: File,
}

const MACHINE: &str = "machine.lock";
const GATE: &str = "machine-gate.lock";

impl MachineTurns {
    /// Turns kept in `dir` (created when first needed); every runner
    /// process of a machine must be given the same directory.
    pub fn in_dir(dir: impl Into<PathBuf>) -> MachineTurns {
        MachineTurns { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Wait for a turn (blocks the thread: call it where blocking is
    /// allowed).
    pub fn take(&self, how: Use) -> io::Result<Turn> {
        std::fs::create_dir_all(&self.dir)?;
        let gate = self.open(GATE)?;
        lock(&gate, libc::LOCK_EX)?;
        let machine = self.open(MACHINE)?;
        lock(
            &machine,
            match how {
                Use::Shared => libc::LOCK_SH,
                Use::Alone => libc::LOCK_EX,
            },
        )?;
        // The gate is let go here (dropped): with the turn taken, whoever
        // waits behind it may go on to wait for its own.
        drop(gate);
        Ok(Turn { _machine: machine })
    }

    fn open(&self, name: &str) -> io::Result<File> {
        let path = self.dir.join(name);
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("opening {}: {e}", path.display())))
    }
}

/// `flock(file, op)`, through interruptions.
fn lock(file: &File, op: libc::c_int) -> io::Result<()> {
    loop {
        // SAFETY: `file` is open for the whole call; flock takes a
        // descriptor and an operation, and touches no memory of ours.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("koth-machine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// Whether `name` in `dir` can be locked with `op` now (and lets it go).
    fn free(dir: &Path, name: &str, op: libc::c_int) -> bool {
        let f = MachineTurns::in_dir(dir).open(name).unwrap();
        // SAFETY: as in `lock`.
        unsafe { libc::flock(f.as_raw_fd(), op | libc::LOCK_NB) == 0 }
    }

    /// Polls `cond` for up to 10 s.
    fn until(what: &str, cond: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !cond() {
            assert!(Instant::now() < deadline, "{what}: not after 10 s");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn shared_turns_run_together_and_a_turn_alone_waits_for_them_and_holds_later_ones_back() {
        let d = dir("order");
        let turns = MachineTurns::in_dir(&d);
        let a = turns.take(Use::Shared).unwrap();
        let b = turns.take(Use::Shared).unwrap();
        assert!(!free(&d, MACHINE, libc::LOCK_EX), "two shared turns hold the machine");

        // A turn alone waits while shared ones run, holding the gate.
        let (alone_tx, alone_rx) = mpsc::channel();
        let (end_tx, end_rx) = mpsc::channel::<()>();
        let t = turns.clone();
        let alone = std::thread::spawn(move || {
            let turn = t.take(Use::Alone).unwrap();
            alone_tx.send(()).unwrap();
            end_rx.recv().unwrap();
            drop(turn);
        });
        until("the turn alone waits at the machine, holding the gate", || !free(&d, GATE, libc::LOCK_EX));
        assert!(alone_rx.try_recv().is_err(), "the turn alone began while shared turns ran");

        // A shared turn asked for now waits behind it, though the machine
        // is only held shared.
        let (later_tx, later_rx) = mpsc::channel();
        let t = turns.clone();
        let later = std::thread::spawn(move || {
            let turn = t.take(Use::Shared).unwrap();
            later_tx.send(()).unwrap();
            drop(turn);
        });
        // Without the gate it would take its shared turn at once, beside
        // `a` and `b`; a tenth of a second is ample for that to show.
        std::thread::sleep(Duration::from_millis(100));
        assert!(later_rx.try_recv().is_err(), "a shared turn slipped in ahead of the waiting turn alone");
        drop(a);
        assert!(alone_rx.try_recv().is_err(), "the turn alone began while a shared turn ran");
        drop(b);
        alone_rx.recv_timeout(Duration::from_secs(10)).expect("the turn alone begins when the shared ones end");
        assert!(later_rx.try_recv().is_err(), "a later shared turn ran beside the turn alone");
        assert!(!free(&d, MACHINE, libc::LOCK_SH), "the turn alone holds the machine to itself");
        end_tx.send(()).unwrap();
        later_rx.recv_timeout(Duration::from_secs(10)).expect("the later turn begins when the turn alone ends");
        alone.join().unwrap();
        later.join().unwrap();
        assert!(free(&d, MACHINE, libc::LOCK_EX) && free(&d, GATE, libc::LOCK_EX), "every turn ended");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn many_takers_at_once_never_share_the_machine_with_a_turn_alone() {
        // 16 threads, 40 turns each, one in four alone, each held a moment:
        // whoever holds a turn counts itself in, and a turn alone must find
        // nobody else in, a shared one no turn alone.
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        use std::sync::Arc;
        let d = dir("many");
        let turns = MachineTurns::in_dir(&d);
        let (shared, alone, most_shared) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let threads: Vec<_> = (0..16)
            .map(|t| {
                let (turns, shared, alone, most_shared) = (turns.clone(), shared.clone(), alone.clone(), most_shared.clone());
                std::thread::spawn(move || {
                    for i in 0..40 {
                        if (t + i) % 4 == 0 {
                            let turn = turns.take(Use::Alone).unwrap();
                            assert_eq!(alone.fetch_add(1, SeqCst), 0, "two turns alone at once");
                            assert_eq!(shared.load(SeqCst), 0, "a turn alone beside a shared one");
                            std::thread::sleep(Duration::from_micros(300));
                            alone.fetch_sub(1, SeqCst);
                            drop(turn);
                        } else {
                            let turn = turns.take(Use::Shared).unwrap();
                            let now = shared.fetch_add(1, SeqCst) + 1;
                            most_shared.fetch_max(now, SeqCst);
                            assert_eq!(alone.load(SeqCst), 0, "a shared turn beside a turn alone");
                            std::thread::sleep(Duration::from_micros(300));
                            shared.fetch_sub(1, SeqCst);
                            drop(turn);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("a taker saw the machine shared with a turn alone");
        }
        assert!(most_shared.load(SeqCst) > 1, "shared turns never overlapped: the test did not test sharing");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_turn_of_a_dead_process_ends_with_it() {
        // A child that takes a turn alone and is killed: the lock goes with
        // its open file.
        let d = dir("dead");
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join(MACHINE);
        let mut child = std::process::Command::new("sh")
            .args(["-c", "exec 9>\"$1\" && flock -x 9 && exec sleep 600", "sh"])
            .arg(&path)
            .spawn()
            .expect("sh and flock(1), from util-linux");
        until("the child holds the machine", || !free(&d, MACHINE, libc::LOCK_SH));
        child.kill().unwrap();
        child.wait().unwrap();
        let turn = MachineTurns::in_dir(&d).take(Use::Alone).expect("the machine is free once its holder is dead");
        drop(turn);
        let _ = std::fs::remove_dir_all(&d);
    }
}
