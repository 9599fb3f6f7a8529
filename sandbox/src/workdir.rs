//! Files in and out of the box's work folder, without trusting its contents.
//!
//! The supervisor is root; the folder belongs to the program. Everything here
//! goes through one directory descriptor opened before any program ran, and
//! every name is resolved with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
//! | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)`:
//!
//! * a symlink anywhere in the path is refused (`ELOOP`), never followed;
//! * `..` cannot climb out of the folder;
//! * reading refuses anything but a regular file with one link (a FIFO would
//!   block the supervisor; a hard link cannot reach outside the box's own
//!   tmpfs, but a name with several links is not what a protocol wrote);
//! * writing creates a fresh file under a temporary name and renames it over
//!   the target, so a planted symlink, FIFO or hard link is replaced, never
//!   written through. A directory in the way is an error.
//!
//! This closes the hole of the 2024 Judge0 escapes (CVE-2024-28185,
//! CVE-2024-28189), where a root supervisor followed a planted symlink.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Component, Path};

use crate::sys::openat2_beneath;
use crate::{Error, Result};

/// A file read back from the work folder by [`WorkDir::read_tree`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeFile {
    /// `/`-separated path relative to the folder.
    pub path: String,
    pub bytes: Vec<u8>,
    /// Permission bits (`0o755`, `0o644`, ...).
    pub mode: u32,
}

/// The work folder of a box, as seen by the supervisor.
#[derive(Debug)]
pub struct WorkDir {
    dir: OwnedFd,
    uid: u32,
    gid: u32,
}

fn unsafe_path(path: &str, reason: impl Into<String>) -> Error {
    Error::UnsafePath { path: path.to_owned(), reason: reason.into() }
}

/// Split a caller-given relative path into plain components.
fn components(path: &str) -> Result<Vec<CString>> {
    let p = Path::new(path);
    let mut out = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => {
                out.push(CString::new(s.as_encoded_bytes()).map_err(|_| unsafe_path(path, "the name contains a NUL byte"))?)
            }
            Component::CurDir => {}
            _ => return Err(unsafe_path(path, "only plain relative names are allowed (no /, no ..)")),
        }
    }
    if out.is_empty() {
        return Err(unsafe_path(path, "the name is empty"));
    }
    Ok(out)
}

fn explain(path: &str, e: io::Error) -> Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) => unsafe_path(path, "it is or goes through a symbolic link"),
        Some(libc::EXDEV) => unsafe_path(path, "it leaves the work folder"),
        Some(libc::ENOENT) => Error::os(format!("{path:?} does not exist in the work folder"), e),
        _ => Error::os(format!("opening {path:?} in the work folder"), e),
    }
}

impl WorkDir {
    pub(crate) fn new(dir: OwnedFd, uid: u32, gid: u32) -> WorkDir {
        WorkDir { dir, uid, gid }
    }

    /// Open (creating as needed) the directory holding `parts[..last]`.
    fn parent_dir(&self, path: &str, parts: &[CString], create: bool) -> Result<OwnedFd> {
        let mut cur = self.dir.try_clone().map_err(|e| Error::os("duplicating the work folder descriptor", e))?;
        for part in &parts[..parts.len() - 1] {
            if create {
                // SAFETY: `part` is NUL-terminated; `cur` is an open directory.
                let r = unsafe { libc::mkdirat(cur.as_raw_fd(), part.as_ptr(), 0o755) };
                if r == 0 {
                    // SAFETY: as above; AT_SYMLINK_NOFOLLOW keeps a planted link from being followed.
                    unsafe { libc::fchownat(cur.as_raw_fd(), part.as_ptr(), self.uid, self.gid, libc::AT_SYMLINK_NOFOLLOW) };
                } else if io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
                    return Err(Error::last_os(format!("creating folders for {path:?}")));
                }
            }
            cur = openat2_beneath(cur.as_raw_fd(), part, libc::O_PATH | libc::O_DIRECTORY, 0).map_err(|e| explain(path, e))?;
        }
        Ok(cur)
    }

    /// Put a file into the folder before a program runs (or between turns),
    /// owned by the box's user.
    pub fn write_file(&self, path: &str, contents: &[u8], mode: u32) -> Result<()> {
        let parts = components(path)?;
        let parent = self.parent_dir(path, &parts, true)?;
        let name = parts.last().expect("non-empty");
        let tmp = CString::new(format!(".koth-tmp-{}-{}", std::process::id(), unique())).unwrap();
        let fd = openat2_beneath(parent.as_raw_fd(), &tmp, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW, 0o600)
            .map_err(|e| explain(path, e))?;
        let file = std::fs::File::from(fd);
        let result = (|| {
            use std::io::Write;
            (&file).write_all(contents)?;
            let fd = file.as_raw_fd();
            // SAFETY: `fd` is the open file this function created.
            if unsafe { libc::fchown(fd, self.uid, self.gid) } < 0 || unsafe { libc::fchmod(fd, mode) } < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: NUL-terminated names relative to the open directory `parent`.
            if unsafe { libc::renameat(parent.as_raw_fd(), tmp.as_ptr(), parent.as_raw_fd(), name.as_ptr()) } < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })();
        if let Err(e) = result {
            // SAFETY: a NUL-terminated name relative to the open directory `parent`.
            unsafe { libc::unlinkat(parent.as_raw_fd(), tmp.as_ptr(), 0) };
            return Err(match e.raw_os_error() {
                Some(libc::EISDIR) | Some(libc::ENOTEMPTY) | Some(libc::EEXIST) => unsafe_path(path, "a directory is in the way"),
                _ => Error::os(format!("writing {path:?} into the work folder"), e),
            });
        }
        Ok(())
    }

    /// Read back a regular file the program wrote, at most `max` bytes.
    /// Returns the bytes and whether the file was longer.
    pub fn read_file(&self, path: &str, max: usize) -> Result<(Vec<u8>, bool)> {
        let parts = components(path)?;
        let parent = self.parent_dir(path, &parts, false)?;
        // O_NONBLOCK: opening a FIFO must not wait for a writer.
        let fd = openat2_beneath(
            parent.as_raw_fd(),
            parts.last().expect("non-empty"),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
            0,
        )
        .map_err(|e| explain(path, e))?;
        let st = fstat(fd.as_raw_fd()).map_err(|e| Error::os(format!("inspecting {path:?}"), e))?;
        match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => {}
            libc::S_IFIFO => return Err(unsafe_path(path, "it is a FIFO, not a regular file")),
            libc::S_IFDIR => return Err(unsafe_path(path, "it is a directory, not a regular file")),
            _ => return Err(unsafe_path(path, "it is not a regular file")),
        }
        if st.st_nlink != 1 {
            return Err(unsafe_path(path, format!("it has {} hard links; expected a plain file", st.st_nlink)));
        }
        let mut out = Vec::with_capacity(max.min(st.st_size.max(0) as usize));
        let mut file = std::fs::File::from(fd);
        use std::io::Read;
        (&mut file).take(max as u64 + 1).read_to_end(&mut out).map_err(|e| Error::os(format!("reading {path:?}"), e))?;
        let truncated = out.len() > max;
        out.truncate(max);
        Ok((out, truncated))
    }

    /// Remove a file (or empty folder) the program left, without following links.
    pub fn remove(&self, path: &str) -> Result<()> {
        let parts = components(path)?;
        let parent = self.parent_dir(path, &parts, false)?;
        let name = parts.last().expect("non-empty");
        // SAFETY: a NUL-terminated name relative to the open directory `parent`.
        if unsafe { libc::unlinkat(parent.as_raw_fd(), name.as_ptr(), 0) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        // SAFETY: as above.
        if e.raw_os_error() == Some(libc::EISDIR) && unsafe { libc::unlinkat(parent.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) } == 0 {
            return Ok(());
        }
        if e.raw_os_error() == Some(libc::ENOENT) {
            return Ok(());
        }
        Err(explain(path, e))
    }

    /// Read back every regular file under the folder (recursively, at most
    /// 16 levels), for carrying a compiled bot to another box. Symbolic links,
    /// FIFOs and other special files are skipped, never followed; a file with
    /// several hard links is an error, as in [`WorkDir::read_file`]. Fails
    /// when there are more than `max_files` files or more than `max_total`
    /// bytes in all. Paths are `/`-separated and sorted.
    pub fn read_tree(&self, max_files: usize, max_total: u64) -> Result<Vec<TreeFile>> {
        let mut out = Vec::new();
        let mut total = 0u64;
        let dot = CString::new(".").unwrap();
        let root = openat2_beneath(self.dir.as_raw_fd(), &dot, libc::O_RDONLY | libc::O_DIRECTORY, 0)
            .map_err(|e| Error::os("opening the work folder", e))?;
        self.walk(root, String::new(), 0, max_files, max_total, &mut total, &mut out)?;
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        dir: OwnedFd,
        prefix: String,
        depth: usize,
        max_files: usize,
        max_total: u64,
        total: &mut u64,
        out: &mut Vec<TreeFile>,
    ) -> Result<()> {
        if depth > 16 {
            return Err(unsafe_path(&prefix, "folders nest deeper than 16 levels"));
        }
        let names = list_dir(&dir).map_err(|e| Error::os(format!("listing {prefix:?}"), e))?;
        for name in names {
            let shown = format!("{prefix}{}", name.to_string_lossy());
            if name.as_bytes().starts_with(b".koth-tmp-") {
                continue;
            }
            let fd = match openat2_beneath(dir.as_raw_fd(), &name, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY, 0)
            {
                Ok(fd) => fd,
                // A symbolic link (ELOOP) or a socket (ENXIO) is skipped.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENXIO)) => continue,
                Err(e) => return Err(explain(&shown, e)),
            };
            let st = fstat(fd.as_raw_fd()).map_err(|e| Error::os(format!("inspecting {shown:?}"), e))?;
            match st.st_mode & libc::S_IFMT {
                libc::S_IFDIR => self.walk(fd, format!("{shown}/"), depth + 1, max_files, max_total, total, out)?,
                libc::S_IFREG => {
                    if st.st_nlink != 1 {
                        return Err(unsafe_path(&shown, format!("it has {} hard links; expected a plain file", st.st_nlink)));
                    }
                    if out.len() >= max_files {
                        return Err(Error::Config(format!("the folder holds more than {max_files} files")));
                    }
                    let room = max_total.saturating_sub(*total);
                    let mut bytes = Vec::with_capacity((st.st_size.max(0) as u64).min(room) as usize);
                    use std::io::Read;
                    std::fs::File::from(fd)
                        .take(room + 1)
                        .read_to_end(&mut bytes)
                        .map_err(|e| Error::os(format!("reading {shown:?}"), e))?;
                    if bytes.len() as u64 > room {
                        return Err(Error::Config(format!("the folder holds more than {max_total} bytes")));
                    }
                    *total += bytes.len() as u64;
                    out.push(TreeFile { path: shown, bytes, mode: st.st_mode & 0o777 });
                }
                _ => continue,
            }
        }
        Ok(())
    }

    /// The raw descriptor (an `O_PATH` directory), for `*at` calls.
    pub fn as_raw_fd(&self) -> RawFd {
        self.dir.as_raw_fd()
    }
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: stat is plain C data, valid when zeroed.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a live stat the kernel fills in; `fd` is open.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// Names in a directory, without `.` and `..`.
fn list_dir(dir: &OwnedFd) -> io::Result<Vec<CString>> {
    // fdopendir takes ownership of the descriptor it is given: hand it a copy.
    // SAFETY: fcntl on an open descriptor; the copy is owned here.
    let copy = unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` is a descriptor we own; fdopendir takes it over.
    let d = unsafe { libc::fdopendir(copy) };
    if d.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `copy` is still ours to close.
        unsafe { libc::close(copy) };
        return Err(e);
    }
    let mut names = Vec::new();
    loop {
        // SAFETY: `d` is the open directory stream from fdopendir.
        let ent = unsafe { libc::readdir(d) };
        if ent.is_null() {
            break;
        }
        // SAFETY: readdir returned a non-null entry whose name is NUL-terminated and lives until the next readdir; it is copied at once.
        let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            names.push(name.to_owned());
        }
    }
    // SAFETY: `d` is open and not used again.
    unsafe { libc::closedir(d) };
    names.sort();
    Ok(names)
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_plain_relative() {
        assert!(components("a/b.txt").is_ok());
        assert!(components("./a").is_ok());
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "."] {
            assert!(components(bad).is_err(), "{bad:?} must be refused");
        }
    }
}
