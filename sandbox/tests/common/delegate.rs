//! Running a test's program as an ordinary user with a cgroup delegated to
//! it, the way systemd delegates one (`Delegate=yes`) on cgroup v2, or an
//! administrator on v1: what rootless boxes need (`koth_sandbox::Privilege`).
//! Shared by the sandbox's rootless tests and the CLI's (`tests/rootless.rs`
//! includes this file).

#![allow(dead_code)]

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The uid (and gid) the rootless tests run as: no account needed, and
/// outside koth's box slots (61000-62999 in tests and by default).
pub const USER: u32 = 64123;

/// A folder every user may enter, for what the user's programs must reach
/// (copied executables, a home), with cgroups delegated to [`USER`];
/// everything is removed on drop.
pub struct Delegation {
    pub dir: PathBuf,
    cgroups: Vec<PathBuf>,
}

impl Delegation {
    /// Must run as root. `parents` are the folders the sandbox makes its
    /// box cgroups in (`Hierarchy::parents`): one on v2 (whose subtree has
    /// memory and pids enabled), the memory, pids, cpuacct, freezer, cpu
    /// and cpuset ones on v1.
    pub fn new(parents: &[PathBuf], tag: &str) -> Delegation {
        let name = format!("koth-rootless-{tag}-{}", std::process::id());
        // /var/cache: every user may enter it, and a box shows it as it is
        // (not hidden, not replaced like /tmp), so hiding the user's home
        // there is a real test.
        let dir = Path::new("/var/cache").join(&name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut cgroups = Vec::new();
        for parent in parents {
            let cg = parent.join(&name);
            std::fs::create_dir(&cg).unwrap_or_else(|e| panic!("creating {}: {e}", cg.display()));
            // A new v1 cpuset has no cores and no memory nodes, and nobody
            // may join it until it has (ENOSPC): the parent's, as an
            // administrator gives them (cgcreate does not).
            for file in ["cpuset.cpus", "cpuset.mems"] {
                if let Ok(v) = std::fs::read_to_string(parent.join(file)) {
                    if !cg.join("cgroup.controllers").exists() {
                        std::fs::write(cg.join(file), v.trim()).unwrap_or_else(|e| panic!("writing {}: {e}", cg.join(file).display()));
                    }
                }
            }
            // What systemd hands a delegated unit's user: the folder and the
            // files that move processes and enable controllers (on v1 the
            // whole folder, as cgcreate -a/-t does).
            chown(&cg);
            for f in std::fs::read_dir(&cg).unwrap().flatten() {
                let n = f.file_name();
                let n = n.to_string_lossy();
                let v2_delegated = matches!(&*n, "cgroup.procs" | "cgroup.threads" | "cgroup.subtree_control");
                if v2_delegated || !cg.join("cgroup.controllers").exists() {
                    chown(&f.path());
                }
            }
            cgroups.push(cg);
        }
        Delegation { dir, cgroups }
    }

    /// A folder of [`USER`]'s under [`Self::dir`].
    pub fn user_dir(&self, name: &str) -> PathBuf {
        let d = self.dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        chown(&d);
        d
    }

    /// Copy `exe` into [`Self::dir`], where [`USER`] may run it.
    pub fn copy_exe(&self, exe: &Path) -> PathBuf {
        let to = self.dir.join(exe.file_name().unwrap());
        std::fs::copy(exe, &to).unwrap();
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
        to
    }

    /// Run `cmd` as [`USER`], no supplementary groups, in the delegated
    /// cgroups (joined while still root, as systemd does before it drops
    /// to the user).
    pub fn run(&self, mut cmd: Command) -> Output {
        let procs: Vec<CString> =
            self.cgroups.iter().map(|c| CString::new(c.join("cgroup.procs").as_os_str().as_bytes()).unwrap()).collect();
        // SAFETY: the closure runs in the forked child before exec and makes
        // only async-signal-safe calls (open, write, close, set*id) on data
        // prepared before the fork.
        unsafe {
            cmd.pre_exec(move || {
                for p in &procs {
                    let fd = libc::open(p.as_ptr(), libc::O_WRONLY);
                    if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    libc::close(fd);
                }
                if libc::setgroups(0, std::ptr::null()) < 0
                    || libc::setresgid(USER, USER, USER) < 0
                    || libc::setresuid(USER, USER, USER) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // A copied executable may be busy for a moment: another test's fork
        // can hold the copy's descriptor until that child execs.
        for _ in 0..100 {
            match cmd.output() {
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => std::thread::sleep(std::time::Duration::from_millis(20)),
                other => return other.unwrap_or_else(|e| panic!("running {cmd:?} as uid {USER}: {e}")),
            }
        }
        panic!("running {cmd:?} as uid {USER}: its executable stayed busy")
    }
}

impl Drop for Delegation {
    fn drop(&mut self) {
        for cg in &self.cgroups {
            rmdir_tree(cg);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn chown(p: &Path) {
    std::os::unix::fs::chown(p, Some(USER), Some(USER)).unwrap_or_else(|e| panic!("chown {}: {e}", p.display()));
}

/// Remove a cgroup and the ones the user made under it (cgroup folders go
/// with rmdir, deepest first).
fn rmdir_tree(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                rmdir_tree(&e.path());
            }
        }
    }
    for _ in 0..100 {
        match std::fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => std::thread::sleep(std::time::Duration::from_millis(20)),
            _ => return,
        }
    }
}
