//! Who the supervisor is, and what that changes in a box: root (a runner)
//! or an ordinary user (a bot author's `koth match`, *rootless*).
//!
//! # Rootless boxes
//!
//! A runner is root: each box runs as its own unprivileged uid (a slot), in
//! namespaces root creates, under cgroups root owns. An author playing on
//! their own machine is not root, and should not need to be. Then each box
//! gets one more namespace, a **user namespace** the supervisor creates
//! (unprivileged, as bubblewrap and rootless Podman do), which gives it the
//! right to build the box's mount, PID, network, IPC and UTS namespaces
//! exactly as root does. What differs:
//!
//! | | root | rootless |
//! |---|---|---|
//! | the box's uid | a slot's (61000 + n), one per box | the user's own, mapped to itself (one uid, no helper binaries) |
//! | supplementary groups | none | the user's (only root may drop them; see below) |
//! | cgroup | under the runner's own, owned by root | under the user's own, which must be *delegated* to the user |
//! | host folders hidden | `/home`, `/run`, `/sys`, koth's state | the same, and the user's home, `/media` and `/mnt` |
//! | everything else | | the same steps: mounts, limits, no capabilities, `no_new_privs`, Landlock, seccomp |
//!
//! What keeps a rootless bot from the user's things, although it runs as the
//! user's uid: it sees the host's root read-only, with the user's home and
//! removable media replaced by empty folders, no `/run` (no sockets of the
//! user's session, no Docker socket), its own `/proc`, no network, no
//! capability, and Landlock lets it write only its own scratch folders. Its
//! cgroup's files are the user's and so could be rewritten by the uid, but
//! the box has no cgroup filesystem (`/sys` is an empty folder) and may not
//! mount one (no capability; seccomp refuses `mount` and new namespaces).
//! The user's supplementary groups stay with its processes (dropping them
//! needs `setgroups`, which the kernel refuses in an unprivileged user
//! namespace), so a file readable by one of the user's groups but not by
//! everyone, and visible in the box, is readable by the bot: local play is
//! the author running bots they chose, which a host's runner never is.
//!
//! The cgroup: limits and CPU accounting are the same as root's, so an
//! unprivileged user needs a cgroup they may write. With systemd and cgroup
//! v2 that is one command: `systemd-run --user --scope -p Delegate=yes koth
//! match ...` (a desktop session's terminals usually already run in such a
//! delegated subtree). On cgroup v1, root delegates by creating a cgroup
//! owned by the user in each of the memory, pids, cpuacct and freezer
//! hierarchies and moving the user's shell into it. Without one, box
//! creation fails and says this; it never runs a bot unconfined.

use std::path::PathBuf;

/// Who this process is, for the sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Privilege {
    /// Effective uid 0: boxes run as slot uids.
    Root,
    /// Any other user: boxes run as this uid and gid in a user namespace.
    Rootless { uid: u32, gid: u32 },
}

impl Privilege {
    /// This process's, from its effective ids.
    pub fn current() -> Privilege {
        // SAFETY: geteuid and getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        if uid == 0 {
            Privilege::Root
        } else {
            Privilege::Rootless { uid, gid }
        }
    }

    pub fn is_root(self) -> bool {
        self == Privilege::Root
    }

    /// Host folders a rootless box also shows empty: what the user's uid
    /// could read there is the user's own (their home, wherever it is;
    /// removable and other mounted media).
    pub(crate) fn extra_hidden(self) -> Vec<PathBuf> {
        if self.is_root() {
            return Vec::new();
        }
        let mut v = vec![PathBuf::from("/media"), PathBuf::from("/mnt")];
        if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
            if home.is_absolute() && home != std::path::Path::new("/") {
                v.push(home);
            }
        }
        v.retain(|d| d.is_dir());
        v
    }
}

/// Where boxes keep their mount points and slot locks unless told: for root
/// `/run/koth/sandbox`; for a user `$XDG_RUNTIME_DIR/koth/sandbox`, else
/// `/tmp/koth-<uid>/sandbox`.
pub fn default_runtime_dir() -> PathBuf {
    match Privilege::current() {
        Privilege::Root => PathBuf::from("/run/koth/sandbox"),
        Privilege::Rootless { uid, .. } => match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
            Some(d) if d.is_absolute() => d.join("koth/sandbox"),
            _ => PathBuf::from(format!("/tmp/koth-{uid}/sandbox")),
        },
    }
}
