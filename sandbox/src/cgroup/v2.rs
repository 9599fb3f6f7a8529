//! cgroup v2: one directory per box in the unified hierarchy.
//!
//! The v2 "no internal processes" rule forbids enabling controllers for
//! children of a cgroup that itself holds processes. So, as container init
//! systems do, the supervisor moves the processes of its own cgroup into a
//! leaf named `koth-runner` and creates box cgroups beside that leaf.

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{cpu_list, keyed, open_ro, open_rw, open_wo, parse_u64, pread, pwrite, read_pids, rmdir_retry, write_file};
use super::{dir_under_mount, open_leave, Controller, Group, Hierarchy, Mounts, Version, CONTROLLERS, KILL_WAIT};
use crate::{Error, Limits, Result};

const RUNNER_LEAF: &str = "koth-runner";

pub(crate) struct V2 {
    parent: PathBuf,
    /// The controllers enabled for the box cgroups (v2 names from
    /// [`CONTROLLERS`]: the required ones, and the fairness ones offered).
    controllers: Vec<Controller>,
    /// `cgroup.procs` of the cgroup the supervisor is in once the box
    /// cgroups' controllers are enabled (the runner leaf, or where it
    /// was): [`Group::leave_fd`].
    leave: Option<Arc<OwnedFd>>,
}

impl V2 {
    pub(crate) fn open(m: &Mounts) -> Result<V2> {
        let (point, root) = m.v2.as_ref().ok_or_else(|| Error::Unsupported("no cgroup2 filesystem is mounted".into()))?;
        let own = m
            .own
            .iter()
            .find(|(id, _, _)| id == "0")
            .ok_or_else(|| Error::Unsupported("/proc/self/cgroup has no cgroup v2 line".into()))?;
        let own_dir = dir_under_mount(point, root, &own.2);
        let parent = if own_dir.file_name().is_some_and(|n| n == RUNNER_LEAF) {
            own_dir.parent().map(Path::to_path_buf).unwrap_or(own_dir)
        } else {
            own_dir
        };
        let available = fs::read_to_string(parent.join("cgroup.controllers")).unwrap_or_default();
        let offered = |name: &str| available.split_whitespace().any(|a| a == name);
        let missing: Vec<&str> = CONTROLLERS.iter().filter(|c| c.required()).filter_map(|c| c.v2_name()).filter(|n| !offered(n)).collect();
        if !missing.is_empty() {
            return Err(Error::Unsupported(format!(
                "controllers {} are not available in {} (enabled in its parent's cgroup.subtree_control?)",
                missing.join(", "),
                parent.display()
            )));
        }
        let mut controllers: Vec<Controller> = CONTROLLERS.iter().copied().filter(|c| c.v2_name().is_some_and(offered)).collect();
        let names = |cs: &[Controller]| cs.iter().filter_map(|c| c.v2_name()).collect::<Vec<_>>();
        if let Err(e) = enable_controllers(&parent, &names(&controllers)) {
            // A fairness controller the kernel will not enable here (v2's
            // cpu controller with real-time tasks under RT group
            // scheduling, say) leaves the boxes without it, not unbuilt.
            controllers.retain(|c| c.required());
            enable_controllers(&parent, &names(&controllers)).map_err(|_| e)?;
        }
        // Where this process is now: `enable_controllers` may have moved
        // it into the runner leaf.
        let now = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let leave = now
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .and_then(|path| open_leave(&dir_under_mount(point, root, path).join("cgroup.procs")));
        Ok(V2 { parent, controllers, leave })
    }
}

/// Enable `names` for the children of `parent`, first moving the processes
/// that live in `parent` itself into the runner leaf.
fn enable_controllers(parent: &Path, names: &[&str]) -> Result<()> {
    let dir = fs::File::open(parent).map_err(|e| Error::os(format!("opening {}", parent.display()), e))?;
    // Serialise with other runners sharing this cgroup.
    // SAFETY: `dir` is an open directory this function holds; flock takes integers.
    unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX) };
    let control = parent.join("cgroup.subtree_control");
    let enabled = fs::read_to_string(&control).unwrap_or_default();
    if names.iter().all(|c| enabled.split_whitespace().any(|e| e == *c)) {
        return Ok(());
    }
    let want = names.iter().map(|n| format!("+{n}")).collect::<Vec<_>>().join(" ");
    if fs::write(&control, &want).is_ok() {
        return Ok(());
    }
    let leaf = parent.join(RUNNER_LEAF);
    match fs::create_dir(&leaf) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(Error::Unsupported(format!("cannot create {}: {e}", leaf.display()))),
    }
    for pid in read_pids(&parent.join("cgroup.procs"))? {
        // A process may exit meanwhile; that is fine.
        let _ = fs::write(leaf.join("cgroup.procs"), pid.to_string());
    }
    write_file(&control, &want)
}

impl Hierarchy for V2 {
    fn version(&self) -> Version {
        Version::V2
    }

    fn parents(&self) -> Vec<PathBuf> {
        vec![self.parent.clone()]
    }

    fn create(&self, name: &str, limits: &Limits) -> Result<Box<dyn Group>> {
        super::sweep_stale(std::slice::from_ref(&self.parent), false);
        let dir = self.parent.join(name);
        fs::create_dir(&dir).map_err(|e| Error::os(format!("creating cgroup {}", dir.display()), e))?;
        let result = (|| {
            for ctrl in &self.controllers {
                ctrl.configure(Version::V2, &dir, &self.parent, limits)?;
            }
            let peak = dir.join("memory.peak");
            Ok(V2Group {
                dir_fd: fs::File::open(&dir).map_err(|e| Error::os(format!("opening cgroup {}", dir.display()), e))?.into(),
                procs: open_rw(&dir.join("cgroup.procs"))?,
                cpu_stat: open_ro(&dir.join("cpu.stat"))?,
                memory_peak: if peak.exists() { Some(open_ro(&peak)?) } else { None },
                memory_events: open_ro(&dir.join("memory.events"))?,
                freeze: open_rw(&dir.join("cgroup.freeze"))?,
                events: open_ro(&dir.join("cgroup.events"))?,
                kill: open_wo(&dir.join("cgroup.kill"))?,
                cpu_isolated: self.controllers.contains(&Controller::Cpu),
                cpuset: self.controllers.contains(&Controller::Cpuset),
                dir: dir.clone(),
                leave: self.leave.clone(),
            })
        })();
        match result {
            Ok(g) => Ok(Box::new(g)),
            Err(e) => {
                let _ = fs::remove_dir(&dir);
                Err(e)
            }
        }
    }
}

pub(crate) struct V2Group {
    dir: PathBuf,
    cpu_isolated: bool,
    cpuset: bool,
    /// The directory itself, for `CLONE_INTO_CGROUP`.
    dir_fd: OwnedFd,
    procs: OwnedFd,
    cpu_stat: OwnedFd,
    memory_peak: Option<OwnedFd>,
    memory_events: OwnedFd,
    freeze: OwnedFd,
    events: OwnedFd,
    kill: OwnedFd,
    leave: Option<Arc<OwnedFd>>,
}

impl V2Group {
    fn event(&self, key: &str) -> Result<u64> {
        let mut buf = [0u8; 128];
        Ok(keyed(pread(&self.events, &mut buf, "cgroup.events")?, key).unwrap_or(0))
    }

    /// Wait until `cgroup.events` says `key want`, asleep: the kernel
    /// signals every change of that file as `POLLPRI` (each read re-arms
    /// it), so a change between the read and the poll ends the poll at
    /// once. No spinning: the caller may be the match engine at real-time
    /// priority, and the box's tasks need the CPU to reach the freezer.
    fn wait_event(&self, key: &str, want: u64, limit: Duration) -> Result<()> {
        let until = Instant::now() + limit;
        loop {
            if self.event(key)? == want {
                return Ok(());
            }
            let Some(rest) = until.checked_duration_since(Instant::now()) else {
                let what = format!("waiting for cgroup.events {key} {want}");
                return Err(Error::os(what, io::Error::from(io::ErrorKind::TimedOut)));
            };
            // At most 10 ms a poll: a missed notification costs no more.
            let ms = rest.min(Duration::from_millis(10)).as_micros().div_ceil(1000) as i32;
            let mut pfd = libc::pollfd { fd: self.events.as_raw_fd(), events: libc::POLLPRI, revents: 0 };
            // SAFETY: one valid pollfd, borrowed for the call.
            unsafe { libc::poll(&mut pfd, 1, ms) };
        }
    }
}

impl Group for V2Group {
    fn join_fds(&self) -> Vec<&OwnedFd> {
        vec![&self.procs]
    }

    fn clone_into(&self) -> Option<&OwnedFd> {
        Some(&self.dir_fd)
    }

    fn leave_fd(&self) -> Option<&OwnedFd> {
        self.leave.as_deref()
    }

    fn cpu_usage(&self) -> Result<Duration> {
        let mut buf = [0u8; 512];
        let us = keyed(pread(&self.cpu_stat, &mut buf, "cpu.stat")?, "usage_usec")
            .ok_or_else(|| Error::Unsupported("cpu.stat has no usage_usec".into()))?;
        Ok(Duration::from_micros(us))
    }

    fn memory_peak(&self) -> Result<Option<u64>> {
        let Some(fd) = &self.memory_peak else { return Ok(None) };
        let mut buf = [0u8; 32];
        Ok(parse_u64(pread(fd, &mut buf, "memory.peak")?))
    }

    fn oom_kills(&self) -> Result<u64> {
        let mut buf = [0u8; 256];
        Ok(keyed(pread(&self.memory_events, &mut buf, "memory.events")?, "oom_kill").unwrap_or(0))
    }

    fn freeze(&self) -> Result<()> {
        pwrite(&self.freeze, b"1", "cgroup.freeze")?;
        self.wait_event("frozen", 1, Duration::from_secs(5))
    }

    fn thaw(&self) -> Result<()> {
        pwrite(&self.freeze, b"0", "cgroup.freeze")?;
        self.wait_event("frozen", 0, Duration::from_secs(5))
    }

    fn request_frozen(&self, frozen: bool) -> Result<()> {
        pwrite(&self.freeze, if frozen { b"1" } else { b"0" }, "cgroup.freeze")
    }

    fn pids(&self) -> Result<Vec<i32>> {
        read_pids(&self.dir.join("cgroup.procs"))
    }

    fn threads(&self) -> Result<Vec<i32>> {
        read_pids(&self.dir.join("cgroup.threads"))
    }

    fn cpu_isolated(&self) -> bool {
        self.cpu_isolated
    }

    fn set_cores(&self, cores: &[u32]) -> Result<bool> {
        if !self.cpuset {
            return Ok(false);
        }
        write_file(&self.dir.join("cpuset.cpus"), &cpu_list(cores))?;
        Ok(true)
    }

    /// `cgroup.kill` reaches every task at once, forks included, frozen or
    /// not; a task in an uninterruptible wait dies when its call returns, so
    /// the wait for an empty group is bounded by [`KILL_WAIT`].
    fn kill_all(&self) -> Result<()> {
        pwrite(&self.kill, b"1", "cgroup.kill")?;
        if self.wait_event("populated", 0, KILL_WAIT).is_err() {
            tracing::warn!("killed tasks are still in the kernel; they die when their calls return");
        }
        Ok(())
    }

    fn remove(&self) -> Result<()> {
        rmdir_retry(&self.dir)
    }

    fn paths(&self) -> Vec<PathBuf> {
        vec![self.dir.clone()]
    }
}
