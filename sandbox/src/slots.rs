//! Sandbox slots: each live box runs as its own uid/gid.
//!
//! A slot is held by an exclusive `flock` on `<runtime_dir>/slots/<n>.lock`,
//! so boxes of several runner processes on one host (sharing the runtime
//! dir) never share a uid, and a crashed runner's slots free themselves.

use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;

use crate::{Error, Result};

/// A held slot; dropping it frees the slot.
#[derive(Debug)]
pub struct Slot {
    pub index: u32,
    pub uid: u32,
    _lock: File,
}

impl Slot {
    /// Another hold on the slot: it stays taken until this is dropped too
    /// (for a teardown that finishes after its box is gone).
    pub(crate) fn hold(&self) -> Option<File> {
        self._lock.try_clone().ok()
    }
}

/// Take the first free slot.
pub fn acquire(runtime_dir: &Path, uid_base: u32, slots: u32) -> Result<Slot> {
    let dir = runtime_dir.join("slots");
    fs::create_dir_all(&dir).map_err(|e| Error::os(format!("creating {}", dir.display()), e))?;
    for index in 0..slots {
        let path = dir.join(format!("{index}.lock"));
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::os(format!("opening {}", path.display()), e))?;
        // SAFETY: `file` is open for the call; flock takes integers.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(Slot { index, uid: uid_base + index, _lock: file });
        }
    }
    Err(Error::Config(format!("all {slots} sandbox slots are in use; raise the slot count or run fewer boxes at once")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn slots_are_exclusive_and_reused() {
        let dir = std::env::temp_dir().join(format!("koth-slots-test-{}", std::process::id()));
        let a = super::acquire(&dir, 70000, 3).unwrap();
        let b = super::acquire(&dir, 70000, 3).unwrap();
        assert_ne!(a.uid, b.uid);
        let c = super::acquire(&dir, 70000, 3).unwrap();
        assert!(super::acquire(&dir, 70000, 3).is_err(), "only three slots exist");
        let freed = b.uid;
        drop(b);
        assert_eq!(super::acquire(&dir, 70000, 3).unwrap().uid, freed);
        drop((a, c));
        let _ = std::fs::remove_dir_all(dir);
    }
}
