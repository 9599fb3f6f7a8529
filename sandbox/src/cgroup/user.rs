//! The cgroups root hands a user once so that the user's `koth match`
//! can build rootless boxes on cgroup v1 (`koth rootless allow USER`).
//!
//! Each v1 hierarchy koth uses (memory, pids, cpuacct, freezer, and cpu
//! and cpuset where mounted) gets `koth-user-UID` at its top, owned by the
//! user with every file in it (as `cgcreate -a USER -t USER` makes it); a
//! new cpuset gets its parent's cores and memory nodes, without which
//! nobody may join it. koth run by that user finds these cgroups and moves
//! itself into them ([`enter`]) before it makes its boxes' cgroups under
//! them: on v1 a process may join a cgroup whose `cgroup.procs` it may
//! write, so nobody has to move the user's shell by hand.
//!
//! cgroup v2 has no such step for root to do once: a process may move
//! only between cgroups below one whose `cgroup.procs` it may write, so a
//! user's cgroup is usable only when the user's processes start in a
//! subtree delegated to them, which is what systemd gives
//! (`systemd-run --user --scope -p Delegate=yes koth ...`). [`allow`] says
//! so on a v2 host rather than make cgroups nobody could enter.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::{Mounts, CONTROLLERS};
use crate::{Error, Result};

/// The name of the cgroup a user gets at the top of each v1 hierarchy.
pub fn user_cgroup_name(uid: u32) -> String {
    format!("koth-user-{uid}")
}

/// The mount points of the v1 hierarchies koth uses, once each
/// (controllers mounted together share one); an error names a required
/// controller that is not mounted.
fn hierarchies(m: &Mounts) -> Result<Vec<PathBuf>> {
    let mut points: Vec<PathBuf> = Vec::new();
    let mut missing = Vec::new();
    for ctrl in CONTROLLERS {
        let Some(name) = ctrl.v1_name() else { continue };
        match m.v1.iter().find(|(_, _, opts)| opts.iter().any(|o| o == name)) {
            Some((point, _, _)) if !points.contains(point) => points.push(point.clone()),
            Some(_) => {}
            None if ctrl.required() => missing.push(name),
            None => {}
        }
    }
    if !missing.is_empty() {
        return Err(Error::Unsupported(format!(
            "this host has no cgroup v1 hierarchy of {} (koth needs memory, pids, cpuacct and freezer)",
            missing.join(", ")
        )));
    }
    Ok(points)
}

/// Whether this host's cgroups are v2 only (no v1 memory hierarchy, a
/// cgroup2 mount).
fn v2_only(m: &Mounts) -> bool {
    m.v2.is_some() && !m.v1.iter().any(|(_, _, opts)| opts.iter().any(|o| o == "memory"))
}

/// As root: make `koth-user-UID` in every v1 hierarchy koth uses and hand
/// it, with its files, to `uid`:`gid`. Again for a user who has them: the
/// same cgroups, handed over again. Returns the cgroups' folders.
pub fn allow(uid: u32, gid: u32) -> Result<Vec<PathBuf>> {
    let m = Mounts::read()?;
    if v2_only(&m) {
        return Err(Error::Unsupported(
            "this host's cgroups are v2, where a user may move processes only between cgroups below one they own, \
             so a cgroup made by root cannot be entered by the user's koth: on v2 the user runs koth in a scope \
             systemd delegates to them, `systemd-run --user --scope -p Delegate=yes koth match ...` (docs/sandbox.md, \
             \"Rootless boxes\"); nothing was made"
                .into(),
        ));
    }
    let name = user_cgroup_name(uid);
    let mut made = Vec::new();
    for point in hierarchies(&m)? {
        let dir = point.join(&name);
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::os(format!("creating cgroup {}", dir.display()), e)),
        }
        for file in ["cpuset.cpus", "cpuset.mems"] {
            let Ok(parent) = std::fs::read_to_string(point.join(file)) else { continue };
            let mine = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            if mine.trim().is_empty() {
                super::write_file(&dir.join(file), parent.trim())?;
            }
        }
        let chown = |p: &std::path::Path| {
            std::os::unix::fs::chown(p, Some(uid), Some(gid)).map_err(|e| Error::os(format!("handing {} to uid {uid}", p.display()), e))
        };
        chown(&dir)?;
        for f in std::fs::read_dir(&dir).map_err(|e| Error::os(format!("listing {}", dir.display()), e))?.flatten() {
            if f.file_type().is_ok_and(|t| t.is_file()) {
                chown(&f.path())?;
            }
        }
        made.push(dir);
    }
    Ok(made)
}

/// As root: remove the user's cgroups (and the boxes' cgroups left in
/// them). Refused while a process of the user's is in one (their koth is
/// running). Returns the folders removed.
pub fn revoke(uid: u32) -> Result<Vec<PathBuf>> {
    let m = Mounts::read()?;
    let name = user_cgroup_name(uid);
    let mut removed = Vec::new();
    for point in hierarchies(&m)? {
        let dir = point.join(&name);
        if !dir.exists() {
            continue;
        }
        remove_tree(&dir).map_err(|e| {
            Error::os(format!("removing cgroup {} (is a koth of uid {uid}'s still running? its processes are in it)", dir.display()), e)
        })?;
        removed.push(dir);
    }
    Ok(removed)
}

fn remove_tree(dir: &std::path::Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)?.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            remove_tree(&e.path())?;
        }
    }
    std::fs::remove_dir(dir)
}

/// As a user on cgroup v1: move this process into the cgroups root made
/// for it with [`allow`], in every hierarchy that has one this user owns
/// and this process is not in yet. Returns whether it moved; an error says
/// which cgroup could not be entered.
pub(crate) fn enter(m: &Mounts) -> Result<bool> {
    if m.v1.is_empty() {
        return Ok(false);
    }
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let name = user_cgroup_name(uid);
    let mut moved = false;
    for (point, root, opts) in &m.v1 {
        let used = CONTROLLERS.iter().filter_map(|c| c.v1_name()).any(|n| opts.iter().any(|o| o == n));
        let dir = point.join(&name);
        if !used || !std::fs::metadata(&dir).is_ok_and(|md| md.is_dir() && md.uid() == uid) {
            continue;
        }
        let own = m.own.iter().find(|(_, ctrls, _)| ctrls.iter().any(|c| opts.contains(c))).map(|(_, _, p)| p.as_str());
        if own.is_some_and(|p| super::dir_under_mount(point, root, p).starts_with(&dir)) {
            continue;
        }
        let procs = dir.join("cgroup.procs");
        std::fs::write(&procs, std::process::id().to_string()).map_err(|e| {
            Error::Unsupported(format!(
                "cannot enter {}, the cgroup root made for you: {e} (root runs `koth rootless allow` again)",
                dir.display()
            ))
        })?;
        moved = true;
    }
    Ok(moved)
}
