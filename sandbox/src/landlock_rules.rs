//! The box's Landlock ruleset.
//!
//! Built once per box in the supervisor (the paths are opened through
//! `/proc/<holder>/root`, so the rules name the box's own inodes) and applied
//! in each program's child with one `landlock_restrict_self`.
//!
//! The ABI is pinned ([`PINNED_ABI`]) and enforcement is best effort: on an
//! older kernel the ruleset is applied with what the kernel knows. To report
//! what was really achieved, the ruleset is applied once to a throwaway
//! thread of the supervisor (Landlock restricts only the calling thread) and
//! the kernel's answer is kept in [`LandlockStatus`].

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use landlock::{
    Access, AccessFs, AccessNet, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use crate::mounts::{DEVICES, WORK_DIR};
use crate::{Error, Result};

/// The Landlock ABI koth's ruleset is written for: filesystem (v1-v3, v5),
/// TCP bind/connect (v4), signal and abstract-unix-socket scoping (v6), and
/// connecting to path-named unix sockets (v9, `ResolveUnix`). On a kernel
/// with an older ABI the ruleset is applied with what that kernel knows and
/// the status says `partially_enforced` (Linux 6.12-6.18 have ABI 6 or 7:
/// everything but `ResolveUnix`, see docs/sandbox.md).
pub const PINNED_ABI: ABI = ABI::V9;

/// What Landlock achieved for a box.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LandlockStatus {
    /// Every right of the pinned ABI is enforced.
    FullyEnforced,
    /// The kernel knows an older ABI; some rights are not enforced.
    PartiallyEnforced,
    /// The kernel has no Landlock (or it is disabled).
    NotEnforced,
    /// The kernel has Landlock, but a seccomp profile refuses its system
    /// calls to this process: Docker's default profile did until it allowed
    /// them in 2022 (moby/moby#43199; Debian's 20.10.24 allows them), and a
    /// host's own profile may. The box runs without Landlock's layer; a
    /// newer engine, or a profile allowing `landlock_create_ruleset`,
    /// `landlock_add_rule` and `landlock_restrict_self`, gives it back
    /// (docs/operations.md, "Privileges of the runner container").
    RefusedBySeccomp,
}

/// The serde name, for log lines.
impl std::fmt::Display for LandlockStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LandlockStatus::FullyEnforced => "fully_enforced",
            LandlockStatus::PartiallyEnforced => "partially_enforced",
            LandlockStatus::NotEnforced => "not_enforced",
            LandlockStatus::RefusedBySeccomp => "refused_by_seccomp",
        })
    }
}

pub(crate) struct Policy {
    pub fd: Option<OwnedFd>,
    pub status: LandlockStatus,
}

/// Build the ruleset for a box whose holder is `holder`. A root box may
/// read (and execute) anything of its root; a rootless one (`allowlist`)
/// only what its view shows ([`crate::view`]): its read-only folders and
/// `/proc`, and may list folders from `/` down (what is in them is the
/// view's).
pub(crate) fn build(holder: libc::pid_t, connect_ports: &[u16], allowlist: bool) -> Result<Policy> {
    let err = |e: landlock::RulesetError| Error::Unsupported(format!("building the Landlock ruleset: {e}"));
    let abi = PINNED_ABI;
    let box_path = |inside: &str| format!("/proc/{holder}/root{inside}");
    // The box's root, opened once through its holder; each path of a rule
    // is then resolved in it (one lookup, not the holder's /proc entry and
    // its root link again for every rule).
    let root = PathFd::new(box_path("/")).map_err(|e| Error::Unsupported(format!("opening the box's root for Landlock: {e}")))?;
    let fd_of = |inside: &str| -> Result<OwnedFd> {
        let path = std::ffi::CString::new(inside).map_err(|_| Error::Config(format!("{inside:?} contains a NUL byte")))?;
        crate::sys::open_path_in_root(root.as_fd().as_raw_fd(), &path)
            .map_err(|e| Error::Unsupported(format!("opening {inside} in the box for Landlock: {e}")))
    };

    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?
        .handle_access(AccessNet::from_all(abi))
        .map_err(err)?
        .scope(Scope::from_all(abi))
        .map_err(err)?
        .create()
        .map_err(err)?;
    if allowlist {
        ruleset = ruleset.add_rule(PathBeneath::new(fd_of("/")?, AccessFs::ReadDir)).map_err(err)?;
        let mut readable = vec!["/proc".to_owned()];
        for rel in crate::view::read_only() {
            // Folders only: a link of the root (`/bin -> usr/bin`) leads to
            // a folder that has its own rule.
            if std::fs::symlink_metadata(box_path(&format!("/{rel}"))).is_ok_and(|m| m.is_dir()) {
                readable.push(format!("/{rel}"));
            }
        }
        for dir in &readable {
            ruleset = ruleset.add_rule(PathBeneath::new(fd_of(dir)?, AccessFs::from_read(abi))).map_err(err)?;
        }
    } else {
        ruleset = ruleset.add_rule(PathBeneath::new(fd_of("/")?, AccessFs::from_read(abi))).map_err(err)?;
    }
    for dir in [WORK_DIR, "/tmp", "/dev/shm"] {
        ruleset = ruleset.add_rule(PathBeneath::new(fd_of(dir)?, AccessFs::from_all(abi))).map_err(err)?;
    }
    let device_rights = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    for dev in DEVICES {
        ruleset = ruleset.add_rule(PathBeneath::new(fd_of(&format!("/dev/{dev}"))?, device_rights)).map_err(err)?;
    }
    for &port in connect_ports {
        ruleset = ruleset.add_rule(NetPort::new(port, AccessNet::ConnectTcp)).map_err(err)?;
    }

    let status = match PROBED.get() {
        Some(status) => status.clone(),
        None => {
            let status = probe(&ruleset)?;
            PROBED.get_or_init(|| status).clone()
        }
    };
    Ok(Policy { fd: ruleset.into(), status })
}

/// What the kernel enforced of the first box's ruleset. Every box asks for
/// the same rights (those of [`PINNED_ABI`], whatever its rules), and what
/// is enforced of them depends on the kernel and on this process's own
/// seccomp profile, neither of which changes while it runs; so one probe
/// (a thread made, restricted and joined: about a tenth of a box's build
/// here, longer on a busy host) serves the process. Each program's own
/// `landlock_restrict_self` still fails its spawn if it fails.
static PROBED: std::sync::OnceLock<LandlockStatus> = std::sync::OnceLock::new();

/// Measure what the kernel enforces of `ruleset` on a throwaway thread
/// (Landlock restricts only the calling thread).
fn probe(ruleset: &landlock::RulesetCreated) -> Result<LandlockStatus> {
    let probe = ruleset.try_clone().map_err(|e| Error::os("duplicating the Landlock ruleset", e))?;
    let status = std::thread::spawn(move || probe.restrict_self().map(|s| s.ruleset))
        .join()
        .map_err(|_| Error::Unsupported("the Landlock probe thread panicked".into()))?
        .map_err(|e| Error::Unsupported(format!("building the Landlock ruleset: {e}")))?;
    Ok(match status {
        RulesetStatus::FullyEnforced => LandlockStatus::FullyEnforced,
        RulesetStatus::PartiallyEnforced => LandlockStatus::PartiallyEnforced,
        RulesetStatus::NotEnforced if refused_by_seccomp() => LandlockStatus::RefusedBySeccomp,
        RulesetStatus::NotEnforced => LandlockStatus::NotEnforced,
    })
}

/// The Landlock ABI version of the running kernel (0: no Landlock).
pub fn kernel_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query: a null attribute with size 0 is what the ABI asks for.
    let v = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, LANDLOCK_CREATE_RULESET_VERSION) };
    v.max(0) as i32
}

/// Whether a seccomp filter refuses Landlock to this process: the version
/// query needs no privilege, and the kernel answers it with a version,
/// `ENOSYS` (not built) or `EOPNOTSUPP` (disabled at boot), never `EPERM`,
/// which only a filter gives (Docker's default profile before 2022).
pub fn refused_by_seccomp() -> bool {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query, as in `kernel_abi`.
    let v = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, LANDLOCK_CREATE_RULESET_VERSION) };
    v < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Apply a ruleset built by [`build`] to the calling (child) process.
/// `no_new_privs` must already be set. Makes one system call and allocates
/// nothing (it runs in a child that shares the supervisor's memory).
pub(crate) fn restrict_self(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: `fd` is an open Landlock ruleset; the call restricts only this thread.
    let r = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
