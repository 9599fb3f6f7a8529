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
//! | what the box shows of the root | all of it, with `/home`, `/run`, `/sys`, koth's state shown empty | only an allowlist ([`crate::view`]) |
//! | everything else | | the same steps: mounts, limits, no capabilities, `no_new_privs`, Landlock, seccomp |
//!
//! What keeps a rootless bot from the user's things, although it runs as the
//! user's uid: it sees only an allowlist of the root ([`crate::view`]:
//! the toolchains' folders read-only, its own folder, a private `/tmp`), so
//! none of the user's files and sockets (the home, the folder koth was run
//! from, the host's `/tmp`, `/run/user/UID`, `/dev/shm`), its own `/proc`,
//! no network, no capability, and Landlock lets it read only what the view
//! shows and write only its own scratch folders. Its
//! cgroup's files are the user's and so could be rewritten by the uid, but
//! the box has no cgroup filesystem (`/sys` is an empty folder) and may not
//! mount one (no capability; seccomp refuses `mount` and new namespaces).
//! The user's supplementary groups stay with its processes (dropping them
//! needs `setgroups`, which the kernel refuses in an unprivileged user
//! namespace), so a file readable by one of the user's groups but not by
//! everyone, and under the allowlist's folders, is readable by the bot: local play is
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

use std::path::{Path, PathBuf};

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

/// Make `dir` (and any missing parent, mode 0700) a folder of this user's
/// that no other user planted or may write: each folder of the path, from
/// `dir` up, must be the user's own, not a link and not writable by
/// everyone, up to a folder of root's (`/run/user`, `/tmp`) or a sticky
/// one (`/tmp`, for root). A shared `/tmp` is everyone's to create names
/// in: a `/tmp/koth-UID` another user made first could swap what koth puts
/// there. The error says which folder and what to do.
pub fn private_dir(dir: &Path) -> std::result::Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut at = Some(dir);
    while let Some(p) = at {
        let m = std::fs::symlink_metadata(p).map_err(|e| format!("reading {}: {e}", p.display()))?;
        let link = m.file_type().is_symlink();
        if m.uid() != uid || link {
            if p != dir && m.uid() == 0 {
                return Ok(()); // root's folder (or link): the user's part is checked
            }
            return Err(if link {
                format!("{} is a link, not a folder: remove it", p.display())
            } else {
                format!("{} belongs to uid {}, not to you (uid {uid}): remove it", p.display(), m.uid())
            });
        }
        if m.mode() & 0o1000 != 0 {
            return Ok(()); // a sticky folder (/tmp, for root): what is below it is checked
        }
        if m.mode() & 0o002 != 0 {
            return Err(format!("{} may be written by every user (mode {:o}): remove it", p.display(), m.mode() & 0o7777));
        }
        at = p.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A private folder is made and accepted again; one that every user may
    /// write, one behind a link, and one of another user's are refused.
    #[test]
    fn a_private_folder_is_the_users_own_and_no_one_elses() {
        let base = std::env::temp_dir().join(format!("koth-private-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = base.join("a/b");
        private_dir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        private_dir(&dir).unwrap();

        std::fs::set_permissions(base.join("a"), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = private_dir(&dir).unwrap_err();
        assert!(e.contains("may be written by every user") && e.contains("/a "), "{e}");
        std::fs::set_permissions(base.join("a"), std::fs::Permissions::from_mode(0o700)).unwrap();

        let link = base.join("link");
        std::os::unix::fs::symlink(base.join("a"), &link).unwrap();
        assert!(private_dir(&link).unwrap_err().contains("is a link"));

        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let planted = base.join("planted");
            std::fs::create_dir(&planted).unwrap();
            std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
            let e = private_dir(&planted.join("sandbox")).unwrap_err();
            assert!(e.contains("belongs to uid 65534"), "{e}");
        }
        std::fs::remove_dir_all(&base).unwrap();
    }
}
