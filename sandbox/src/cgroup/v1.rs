//! cgroup v1: one directory per controller hierarchy, each under the
//! supervisor's own cgroup in that hierarchy. The hierarchies come from
//! [`CONTROLLERS`]: the required ones must be mounted, `cpu` and `cpuset`
//! are used where they are. Controllers mounted together (`cpu,cpuacct`)
//! share one hierarchy, so one directory.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{cpu_list, keyed, open_ro, open_rw, parse_u64, pread, pwrite, read_pids, rmdir_retry, wait_until, write_file};
use super::{dir_under_mount, open_leave, Controller, Group, Hierarchy, Mounts, Version, CONTROLLERS, KILL_WAIT};
use crate::{Error, Limits, Result};

pub(crate) struct V1 {
    /// The parent directory of box cgroups in each hierarchy used, once each.
    parents: Vec<PathBuf>,
    /// Each controller used, and the index of its hierarchy in `parents`.
    controllers: Vec<(Controller, usize)>,
    /// `tasks` of the supervisor's own memory cgroup (the memory
    /// hierarchy's parent of the boxes): [`Group::leave_fd`].
    leave: Option<Arc<OwnedFd>>,
}

impl V1 {
    pub(crate) fn open(m: &Mounts) -> Result<V1> {
        let mut parents: Vec<PathBuf> = Vec::new();
        let mut controllers = Vec::new();
        let mut missing = Vec::new();
        for ctrl in CONTROLLERS {
            let Some(name) = ctrl.v1_name() else { continue };
            let mount = m.v1.iter().find(|(_, _, opts)| opts.iter().any(|o| o == name));
            let own = m.own.iter().find(|(_, ctrls, _)| ctrls.iter().any(|c| c == name));
            let dir = match (mount, own) {
                (Some((point, root, _)), Some((_, _, path))) => {
                    let dir = dir_under_mount(point, root, path);
                    if dir.join("cgroup.procs").exists() {
                        Ok(dir)
                    } else {
                        Err(format!("{name} (no {})", dir.display()))
                    }
                }
                _ => Err(format!("{name} (not mounted)")),
            };
            match dir {
                Ok(dir) => {
                    let at = parents.iter().position(|p| *p == dir).unwrap_or_else(|| {
                        parents.push(dir);
                        parents.len() - 1
                    });
                    controllers.push((ctrl, at));
                }
                Err(why) if ctrl.required() => missing.push(why),
                Err(_) => {}
            }
        }
        if !missing.is_empty() {
            return Err(Error::Unsupported(format!("controllers missing: {}", missing.join(", "))));
        }
        // Probe that we may create cgroups in each (root, or a user the
        // cgroups were delegated to; a writable cgroupfs). A fairness
        // controller we may not use is left out, not an error.
        let mut usable = vec![true; parents.len()];
        for (i, parent) in parents.iter().enumerate() {
            let probe = parent.join(format!("koth-probe-{}", std::process::id()));
            if let Err(e) = std::fs::create_dir(&probe).and_then(|_| std::fs::remove_dir(&probe)) {
                if controllers.iter().any(|(c, at)| *at == i && c.required()) {
                    return Err(Error::Unsupported(format!("cannot create cgroups under {}: {e}", parent.display())));
                }
                usable[i] = false;
            }
        }
        controllers.retain(|(_, at)| usable[*at]);
        let mut kept: Vec<PathBuf> = Vec::new();
        for (_, at) in controllers.iter_mut() {
            let dir = &parents[*at];
            *at = kept.iter().position(|p| p == dir).unwrap_or_else(|| {
                kept.push(dir.clone());
                kept.len() - 1
            });
        }
        let mut v1 = V1 { parents: kept, controllers, leave: None };
        v1.leave = v1.dir_of(Controller::Memory).and_then(|dir| open_leave(&dir.join("tasks")));
        Ok(v1)
    }

    fn dir_of(&self, ctrl: Controller) -> Option<&PathBuf> {
        self.controllers.iter().find(|(c, _)| *c == ctrl).map(|(_, at)| &self.parents[*at])
    }
}

impl Hierarchy for V1 {
    fn version(&self) -> Version {
        Version::V1
    }

    fn parents(&self) -> Vec<PathBuf> {
        self.parents.to_vec()
    }

    fn create(&self, name: &str, limits: &Limits) -> Result<Box<dyn Group>> {
        super::sweep_stale(&self.parents, false);
        let dirs: Vec<PathBuf> = self.parents.iter().map(|p| p.join(name)).collect();
        let mut created: Vec<PathBuf> = Vec::new();
        let result = (|| {
            for d in &dirs {
                std::fs::create_dir(d).map_err(|e| Error::os(format!("creating cgroup {}", d.display()), e))?;
                created.push(d.clone());
            }
            for &(ctrl, at) in &self.controllers {
                ctrl.configure(Version::V1, &dirs[at], &self.parents[at], limits)?;
            }
            let box_dir = |c: Controller| self.dir_of(c).map(|p| p.join(name)).expect("a required controller has a hierarchy");
            let (mem, cpu, freezer) = (box_dir(Controller::Memory), box_dir(Controller::Cpuacct), box_dir(Controller::Freezer));
            // The memory hierarchy is the program's to join, not the
            // joiner's (`Group::memory_join_fd`).
            let mut join = Vec::with_capacity(dirs.len());
            let mut memory_join = None;
            for d in &dirs {
                // `tasks`, not `cgroup.procs`: the joiner and the program
                // are one thread each and move themselves (`0`), which the
                // kernel does without its global threadgroup lock (and so
                // without waiting for an RCU grace period after a quiet
                // spell, as a move of a whole process does; `docs/sandbox.md`).
                let fd = open_rw(&d.join("tasks"))?;
                if *d == mem {
                    memory_join = Some(fd);
                } else {
                    join.push(fd);
                }
            }
            Ok(V1Group {
                join,
                memory_join: memory_join.expect("memory is a required controller"),
                leave: self.leave.clone(),
                cpuacct_usage: open_ro(&cpu.join("cpuacct.usage"))?,
                freezer_state: open_rw(&freezer.join("freezer.state"))?,
                mem_peak: open_ro(&mem.join("memory.max_usage_in_bytes"))?,
                oom_control: open_ro(&mem.join("memory.oom_control"))?,
                cpuset: self.dir_of(Controller::Cpuset).map(|p| p.join(name)),
                cpu_isolated: self.dir_of(Controller::Cpu).is_some(),
                freezer_dir: freezer,
                dirs: dirs.clone(),
            })
        })();
        match result {
            Ok(g) => Ok(Box::new(g)),
            Err(e) => {
                for d in created.iter().rev() {
                    let _ = std::fs::remove_dir(d);
                }
                Err(e)
            }
        }
    }
}

pub(crate) struct V1Group {
    dirs: Vec<PathBuf>,
    freezer_dir: PathBuf,
    cpuset: Option<PathBuf>,
    cpu_isolated: bool,
    /// `tasks` of every hierarchy but memory's: the joiner's.
    join: Vec<OwnedFd>,
    /// `tasks` of the memory hierarchy's: the program's.
    memory_join: OwnedFd,
    leave: Option<Arc<OwnedFd>>,
    cpuacct_usage: OwnedFd,
    freezer_state: OwnedFd,
    mem_peak: OwnedFd,
    oom_control: OwnedFd,
}

impl V1Group {
    fn freezer_is(&self, want: &[u8]) -> Result<bool> {
        let mut buf = [0u8; 32];
        Ok(pread(&self.freezer_state, &mut buf, "freezer.state")?.trim_ascii() == want)
    }
    fn freezer_dir(&self) -> &Path {
        &self.freezer_dir
    }
}

impl Group for V1Group {
    fn join_fds(&self) -> Vec<&OwnedFd> {
        self.join.iter().collect()
    }

    fn memory_join_fd(&self) -> Option<&OwnedFd> {
        Some(&self.memory_join)
    }

    fn leave_fd(&self) -> Option<&OwnedFd> {
        self.leave.as_deref()
    }

    fn cpu_usage(&self) -> Result<Duration> {
        let mut buf = [0u8; 32];
        let ns = parse_u64(pread(&self.cpuacct_usage, &mut buf, "cpuacct.usage")?)
            .ok_or_else(|| Error::Unsupported("cpuacct.usage is not a number".into()))?;
        Ok(Duration::from_nanos(ns))
    }

    fn memory_peak(&self) -> Result<Option<u64>> {
        let mut buf = [0u8; 32];
        Ok(parse_u64(pread(&self.mem_peak, &mut buf, "memory.max_usage_in_bytes")?))
    }

    fn oom_kills(&self) -> Result<u64> {
        let mut buf = [0u8; 256];
        Ok(keyed(pread(&self.oom_control, &mut buf, "memory.oom_control")?, "oom_kill").unwrap_or(0))
    }

    fn freeze(&self) -> Result<()> {
        pwrite(&self.freezer_state, b"FROZEN", "freezer.state")?;
        wait_until(Duration::from_secs(5), "waiting for the v1 freezer", || self.freezer_is(b"FROZEN"))
    }

    fn thaw(&self) -> Result<()> {
        pwrite(&self.freezer_state, b"THAWED", "freezer.state")?;
        wait_until(Duration::from_secs(5), "waiting for the v1 freezer to thaw", || self.freezer_is(b"THAWED"))
    }

    fn request_frozen(&self, frozen: bool) -> Result<()> {
        pwrite(&self.freezer_state, if frozen { b"FROZEN" } else { b"THAWED" }, "freezer.state")
    }

    fn pids(&self) -> Result<Vec<i32>> {
        read_pids(&self.freezer_dir().join("cgroup.procs"))
    }

    fn threads(&self) -> Result<Vec<i32>> {
        read_pids(&self.freezer_dir().join("tasks"))
    }

    fn cpu_isolated(&self) -> bool {
        self.cpu_isolated
    }

    fn set_cores(&self, cores: &[u32]) -> Result<bool> {
        let Some(dir) = &self.cpuset else { return Ok(false) };
        write_file(&dir.join("cpuset.cpus"), &cpu_list(cores))?;
        Ok(true)
    }

    /// v1 has no `cgroup.kill`: rounds of SIGKILL to every task listed,
    /// while tasks remain, for [`KILL_WAIT`] at most; what is left then has
    /// SIGKILL pending and dies as soon as it returns from the kernel. A
    /// child forked between a round's read and its parent's SIGKILL is
    /// listed by the next round. `Sandbox::kill_all` has the box's init
    /// kill its namespace in one pass first, which nothing slips; these
    /// rounds then end what it still lists. The freezer is not used: a
    /// supervisor killed while it held the box frozen left the box so, and
    /// a frozen task acts on SIGKILL only once thawed (see
    /// `Sandbox::kill_all`).
    fn kill_all(&self) -> Result<()> {
        let until = Instant::now() + KILL_WAIT;
        loop {
            // Nothing to kill is the common case (a turn's process that
            // exited): one read then.
            let pids = self.pids()?;
            if pids.is_empty() {
                return Ok(());
            }
            for &pid in &pids {
                // SAFETY: kill(2) on a pid read from the box's cgroup; one
                // that exited since makes it fail, harmlessly.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            // Give the killed a moment to go, then look again.
            let _ = wait_until(Duration::from_millis(2), "", || Ok(self.pids()?.iter().all(|p| !pids.contains(p))));
            if Instant::now() >= until {
                let left = self.pids()?;
                if !left.is_empty() {
                    tracing::warn!(tasks = left.len(), "killed tasks are still in the kernel; they die when their calls return");
                }
                return Ok(());
            }
        }
    }

    fn remove(&self) -> Result<()> {
        let mut first_err = None;
        for d in &self.dirs {
            if let Err(e) = rmdir_retry(d) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    fn paths(&self) -> Vec<PathBuf> {
        self.dirs.clone()
    }
}
