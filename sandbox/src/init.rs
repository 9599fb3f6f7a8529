//! The box's init: a small static program (`holder/init.c`, built by
//! `build.rs` and embedded here) that the holder execs once it has built
//! the box.
//!
//! The holder starts on the supervisor's memory (see `spawn`), and the
//! launcher thread waits until it leaves it: the exec is how it does, and
//! what it becomes is a program of a few pages that holds nothing of the
//! supervisor. (Before, the holder was a fork and stayed one: it kept, for
//! the whole life of its box, every page the supervisor rewrote after it;
//! with a 300 MiB supervisor four boxes pinned 300 MiB more once the
//! supervisor had rewritten its memory, `Shared_Dirty` of the holders.)
//!
//! The program is written to a sealed memfd once per process and exec'd
//! from it with `execveat(AT_EMPTY_PATH)`: the holder has no host path left
//! once it has pivoted into the box's root, and a file of the host would be
//! one more thing to keep from being tampered with.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use crate::{Error, Result};

static PROGRAM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/koth-box-init"));

/// Descriptors the init finds open (holder/init.c): the control socket and
/// the report pipe.
pub(crate) const CONTROL_FD: RawFd = 3;
pub(crate) const REPORT_FD: RawFd = 4;

/// `MFD_EXEC` (Linux 6.3+): the memfd may be executed even where
/// `vm.memfd_noexec` is 1. Older kernels refuse the flag (EINVAL).
const MFD_EXEC: libc::c_uint = 0x10;

/// The init's memfd (close-on-exec, sealed), made on first use.
pub(crate) fn executable() -> Result<RawFd> {
    static FD: OnceLock<std::result::Result<OwnedFd, String>> = OnceLock::new();
    FD.get_or_init(|| make().map_err(|e| format!("loading the box's init into memory: {e}")))
        .as_ref()
        .map(|fd| fd.as_raw_fd())
        .map_err(|e| Error::Unsupported(e.clone()))
}

fn make() -> io::Result<OwnedFd> {
    let base = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: a static C string and integer flags.
    let mut fd = unsafe { libc::memfd_create(c"koth-box-init".as_ptr(), base | MFD_EXEC) };
    if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        // SAFETY: as above.
        fd = unsafe { libc::memfd_create(c"koth-box-init".as_ptr(), base) };
    }
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: memfd_create just returned this descriptor; nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(fd);
    io::Write::write_all(&mut file, PROGRAM)?;
    let fd = OwnedFd::from(file);
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on our descriptor with integer arguments.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}
