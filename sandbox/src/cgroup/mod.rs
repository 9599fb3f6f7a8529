//! One cgroup per box, behind one interface, on cgroup v2 or v1.
//!
//! The supervisor creates each box's cgroup under its *own* cgroup (read from
//! `/proc/self/cgroup`), so limits the host put on the runner still hold and
//! several runners on one host never collide. The cgroup belongs to root; the
//! program's uid cannot write any of its files.
//!
//! | need                  | v2                          | v1                                   |
//! |-----------------------|-----------------------------|--------------------------------------|
//! | memory limit, no swap | `memory.max`, `memory.swap.max = 0` | `memory.limit_in_bytes`, `memory.memsw.limit_in_bytes` |
//! | pids limit            | `pids.max`                  | `pids.max`                           |
//! | CPU time of the tree  | `cpu.stat` `usage_usec`     | `cpuacct.usage` (ns)                 |
//! | the same CPU weight per box, whatever its thread count | `cpu.weight` | `cpu.shares`     |
//! | the cores a box runs on | `cpuset.cpus`             | `cpuset.cpus`, `cpuset.mems`         |
//! | peak memory           | `memory.peak`               | `memory.max_usage_in_bytes`          |
//! | OOM kills             | `memory.events` `oom_kill`  | `memory.oom_control` `oom_kill`      |
//! | freeze / thaw         | `cgroup.freeze`, `cgroup.events` | `freezer.state`                 |
//! | kill the tree         | `cgroup.kill`               | the box's init's `kill(-1, SIGKILL)`, then SIGKILL each, repeat |
//! | the box's threads     | `cgroup.threads`            | `tasks`                              |
//!
//! **One list of controllers** ([`CONTROLLERS`]) drives both backends, as
//! youki's `libcgroups` drives its own from one table: v1 finds a
//! hierarchy for each entry's v1 name, v2 enables each entry's v2 name in
//! `cgroup.subtree_control`, and `Controller::configure` writes a box's
//! settings for either version. A new controller is one entry and one arm.
//!
//! `memory` and `pids` (and on v1 `cpuacct` and `freezer`, which v2 has
//! built in) are *required*: without them no box is built. `cpu` and
//! `cpuset` are *fairness* controllers: every box gets one CPU weight
//! ([`Limits::cpu_weight`]; the engine gives every bot the same) whatever
//! its thread count (the kernel then shares a busy core between boxes, not
//! between threads, so 56 threads buy a bot no more CPU than one), and a match can
//! confine its boxes to the cores it was given ([`Group::set_cores`]).
//! Where the hierarchy lacks them (a user's delegated cgroup without
//! them), boxes are still built, and [`Group::cpu_isolated`] says so: the
//! runner warns, and the clock's uncharged wait (see the engine) still
//! keeps a fair bot from being charged for the CPU it waited for.
//!
//! Pausing a box between its moves ([`crate::Sandbox::freeze`]) uses v2's
//! freezer, whose tasks still die on SIGKILL. On v1 it does not: v1's
//! freezer holds its tasks in an uninterruptible sleep where even SIGKILL
//! waits, so a box left frozen by a killed supervisor would stay for ever
//! (and a supervisor that is a container's PID 1 could never finish dying).
//! There the box's holder stops, continues and kills its programs with
//! signals instead (`kill(-1)` from the PID namespace's init: one pass that
//! no fork slips), and no box is ever frozen by v1's freezer: its kill
//! once froze the box for a moment, and a runner killed in that moment left
//! a program frozen, its SIGKILL pending, until a later runner's sweep
//! (`Sandbox::kill_all`). The freezer hierarchy still lists a box's
//! processes, and frees a group a dead supervisor of an older version
//! left frozen ([`sweep_stale`]).
//!
//! Detection ([`Hierarchy::detect`]) prefers v2 when the supervisor's own v2
//! cgroup offers the `memory` and `pids` controllers, else v1 when `memory`,
//! `pids`, `cpuacct` and `freezer` are mounted, else fails with a message
//! naming what is missing. `KOTH_CGROUP=v1|v2` forces one backend.
//!
//! Files that are written or read on a hot path (freeze, thaw, CPU usage) are
//! opened once when the cgroup is created and used with `pread`/`pwrite`.

pub mod user;
mod v1;
mod v2;

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::{Error, Limits, Result};

/// Which cgroup version a backend drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    V1,
    V2,
}

/// A cgroup controller koth uses (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    Memory,
    Pids,
    /// v1 only: v2's `cpu.stat` counts CPU time without a controller.
    Cpuacct,
    /// v1 only: v2's `cgroup.freeze` is built in.
    Freezer,
    Cpu,
    Cpuset,
}

/// Every controller, in the order hierarchies are created and joined.
pub const CONTROLLERS: [Controller; 6] =
    [Controller::Memory, Controller::Pids, Controller::Cpuacct, Controller::Freezer, Controller::Cpu, Controller::Cpuset];

/// v1's `cpu.shares` for a v2 weight: 1024 is v1's ordinary process, as
/// 100 is v2's.
pub fn shares_v1(weight: u64) -> u64 {
    (weight * 1024 / 100).max(2)
}

impl Controller {
    /// Its name in a v1 mount's options; `None` where v1 has no such controller.
    pub fn v1_name(self) -> Option<&'static str> {
        Some(match self {
            Controller::Memory => "memory",
            Controller::Pids => "pids",
            Controller::Cpuacct => "cpuacct",
            Controller::Freezer => "freezer",
            Controller::Cpu => "cpu",
            Controller::Cpuset => "cpuset",
        })
    }

    /// Its name in v2's `cgroup.controllers`; `None` where v2 has it built in.
    pub fn v2_name(self) -> Option<&'static str> {
        match self {
            Controller::Memory => Some("memory"),
            Controller::Pids => Some("pids"),
            Controller::Cpu => Some("cpu"),
            Controller::Cpuset => Some("cpuset"),
            Controller::Cpuacct | Controller::Freezer => None,
        }
    }

    /// Without it no box is built; the others are used where offered.
    pub fn required(self) -> bool {
        !matches!(self, Controller::Cpu | Controller::Cpuset)
    }

    /// Write a new box's settings of this controller into `dir` (its
    /// directory in this controller's hierarchy on v1, the box's one
    /// directory on v2); `parent` is the directory it was created in.
    pub(crate) fn configure(self, version: Version, dir: &Path, parent: &Path, limits: &Limits) -> Result<()> {
        match (self, version) {
            (Controller::Memory, Version::V1) => {
                write_file(&dir.join("memory.limit_in_bytes"), &limits.memory.to_string())?;
                // Swap off: memory+swap may not exceed memory alone (file exists only
                // with swap accounting); swappiness 0 where there is no such file.
                let memsw = dir.join("memory.memsw.limit_in_bytes");
                if memsw.exists() {
                    write_file(&memsw, &limits.memory.to_string())?;
                }
                let _ = write_file(&dir.join("memory.swappiness"), "0");
                Ok(())
            }
            (Controller::Memory, Version::V2) => {
                write_file(&dir.join("memory.max"), &limits.memory.to_string())?;
                let swap = dir.join("memory.swap.max");
                if swap.exists() {
                    write_file(&swap, "0")?;
                }
                Ok(())
            }
            (Controller::Pids, _) => write_file(&dir.join("pids.max"), &limits.pids.to_string()),
            (Controller::Cpu, Version::V1) => write_file(&dir.join("cpu.shares"), &shares_v1(limits.cpu_weight).to_string()),
            (Controller::Cpu, Version::V2) => write_file(&dir.join("cpu.weight"), &limits.cpu_weight.to_string()),
            // A new v1 cpuset is empty, and a task cannot join it until it
            // has cores and memory nodes: the parent's, until a match
            // confines it. A new v2 cpuset uses its parent's already.
            (Controller::Cpuset, Version::V1) => {
                for file in ["cpuset.cpus", "cpuset.mems"] {
                    let from = fs::read_to_string(parent.join(file))
                        .map_err(|e| Error::os(format!("reading {}", parent.join(file).display()), e))?;
                    write_file(&dir.join(file), from.trim())?;
                }
                Ok(())
            }
            (Controller::Cpuset, Version::V2) | (Controller::Cpuacct | Controller::Freezer, _) => Ok(()),
        }
    }
}

/// Cores as the kernel writes them in `cpuset.cpus` (`0-3,6`).
pub fn cpu_list(cores: &[u32]) -> String {
    let mut sorted = cores.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        out.push(if i == j { sorted[i].to_string() } else { format!("{}-{}", sorted[i], sorted[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// Parse a kernel cpu list (`0-3,6`), as in `cpuset.cpus.effective` or
/// `/sys/devices/system/cpu/online`.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 4096 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().ok()?),
        }
    }
    Some(out)
}

/// Operations on one box's cgroup. Implemented by the v1 and v2 backends.
pub trait Group: Send + Sync {
    /// Files to which a process writes `0` to move itself into this cgroup:
    /// each v1 hierarchy's `tasks` (the writer is a single thread, moved
    /// without the kernel's global lock), v2's `cgroup.procs` (where a
    /// thread alone cannot leave its domain; v2 forks into the cgroup
    /// instead, [`Group::clone_into`]). Opened once, written from the child.
    fn join_fds(&self) -> Vec<&OwnedFd>;
    /// The file to which a program writes `0` to join the box's memory
    /// cgroup itself, as its first step: v1's memory hierarchy's `tasks`,
    /// which the joiner leaves out of [`Group::join_fds`], so that it never
    /// sits in the box's memory cgroup on the supervisor's memory while it
    /// exits (`spawn.rs`, "The box's memory limit and the supervisor").
    /// `None` on v2, where the program is forked into the cgroup.
    fn memory_join_fd(&self) -> Option<&OwnedFd> {
        None
    }
    /// The supervisor's own memory cgroup (v1: that hierarchy's `tasks`;
    /// v2: its cgroup's `cgroup.procs`), where a process sharing the
    /// supervisor's memory goes back before it exits on a failure, out of
    /// the box's reach (same section). `None` where it could not be opened.
    fn leave_fd(&self) -> Option<&OwnedFd> {
        None
    }
    /// The cgroup's directory, open for `clone3`'s `CLONE_INTO_CGROUP`
    /// (v2 only): a program forked into it needs no move (see
    /// `sys::clone3_into_cgroup`). `None` on v1, where a process can only
    /// be moved.
    fn clone_into(&self) -> Option<&OwnedFd> {
        None
    }
    /// CPU time (user + system) of every process that ever ran in the cgroup.
    fn cpu_usage(&self) -> Result<Duration>;
    /// Highest memory use since creation, if the kernel reports it.
    fn memory_peak(&self) -> Result<Option<u64>>;
    /// How many times the kernel's OOM killer killed a process of the cgroup.
    fn oom_kills(&self) -> Result<u64>;
    /// Stop every process; returns once all of them are frozen.
    fn freeze(&self) -> Result<()>;
    /// Resume every process; returns once the cgroup is thawed.
    fn thaw(&self) -> Result<()>;
    /// Ask the kernel to freeze (`true`) or thaw the cgroup, without
    /// waiting to see it done ([`Group::freeze`] and [`Group::thaw`] wait).
    fn request_frozen(&self, frozen: bool) -> Result<()>;
    /// Processes now in the cgroup (global pids).
    fn pids(&self) -> Result<Vec<i32>>;
    /// Threads now in the cgroup (global thread ids).
    fn threads(&self) -> Result<Vec<i32>>;
    /// Whether the box has a CPU weight of its own (the `cpu` controller).
    fn cpu_isolated(&self) -> bool;
    /// Confine the box to these cores; `Ok(false)` where the hierarchy has
    /// no `cpuset` controller.
    fn set_cores(&self, cores: &[u32]) -> Result<bool>;
    /// Send every process SIGKILL, again for any that appear meanwhile, and
    /// return once none is left, or after [`KILL_WAIT`] with every one left
    /// killed: a task in an uninterruptible wait in the kernel (a disk read)
    /// dies when the call returns, and nobody waits for it here.
    fn kill_all(&self) -> Result<()>;
    /// Remove the cgroup directories. The cgroup must be empty.
    fn remove(&self) -> Result<()>;
    /// Directories of this cgroup (for reports and tests).
    fn paths(&self) -> Vec<PathBuf>;
}

/// How long [`Group::kill_all`] waits for killed tasks to be gone.
pub const KILL_WAIT: Duration = Duration::from_millis(250);

/// A detected cgroup hierarchy able to create box cgroups.
pub trait Hierarchy: Send + Sync {
    fn version(&self) -> Version;
    /// Create an empty cgroup named `name` with the given limits.
    fn create(&self, name: &str, limits: &Limits) -> Result<Box<dyn Group>>;
    /// The folders box groups are created in.
    fn parents(&self) -> Vec<PathBuf>;
}

/// Sweep now the groups left by dead supervisors of this PID namespace
/// (see [`sweep_stale`]): what a runner does when it starts.
pub fn sweep_stale_groups() -> Result<()> {
    let h = <dyn Hierarchy>::detect()?;
    sweep_stale(&h.parents(), true);
    Ok(())
}

impl dyn Hierarchy {
    /// Detect the hierarchy once per process (see the module docs).
    pub fn detect() -> Result<&'static dyn Hierarchy> {
        static DETECTED: OnceLock<std::result::Result<Box<dyn Hierarchy>, String>> = OnceLock::new();
        match DETECTED.get_or_init(|| detect_uncached().map_err(reason)) {
            Ok(h) => Ok(h.as_ref()),
            Err(msg) => Err(Error::Unsupported(msg.clone())),
        }
    }
}

fn detect_uncached() -> Result<Box<dyn Hierarchy>> {
    let mut mounts = Mounts::read()?;
    // A user whom root gave cgroups (`koth rootless allow`) works in them.
    if !crate::Privilege::current().is_root() && user::enter(&mounts)? {
        mounts = Mounts::read()?;
    }
    let forced = std::env::var("KOTH_CGROUP").ok();
    match forced.as_deref() {
        Some("v2") => return Ok(Box::new(v2::V2::open(&mounts)?)),
        Some("v1") => return Ok(Box::new(v1::V1::open(&mounts)?)),
        Some(other) if !other.is_empty() => return Err(Error::Config(format!("KOTH_CGROUP={other:?}: expected v1 or v2"))),
        _ => {}
    }
    let v2_err = match v2::V2::open(&mounts) {
        Ok(h) => return Ok(Box::new(h)),
        Err(e) => reason(e),
    };
    let v1_err = match v1::V1::open(&mounts) {
        Ok(h) => return Ok(Box::new(h)),
        Err(e) => reason(e),
    };
    let remedy = if crate::Privilege::current().is_root() {
        "Run the runner as root on a host with cgroup v2 (memory and pids controllers delegated \
         to the runner's cgroup) or cgroup v1 (memory, pids, cpuacct, freezer mounted); in Docker, \
         see docs/operations.md for the privileges the runner container needs."
    } else {
        "Without root, koth needs a cgroup delegated to you: with systemd and cgroup v2, run it as \
         `systemd-run --user --scope -p Delegate=yes koth ...`; on cgroup v1, root runs \
         `koth rootless allow YOUR_USER` once (docs/sandbox.md, \"Rootless boxes\"). Or run koth as root."
    };
    Err(Error::Unsupported(format!(
        "no usable cgroup hierarchy (the sandbox needs one to confine memory, processes and CPU).\n  \
         cgroup v2: {v2_err}\n  cgroup v1: {v1_err}\n  {remedy}"
    )))
}

/// Why a backend cannot be used, without the "cannot run the sandbox" every
/// such error starts with (the message that quotes it says so once).
fn reason(e: Error) -> String {
    match e {
        Error::Unsupported(why) => why,
        other => other.to_string(),
    }
}

/// Cgroup mounts and this process's cgroup paths.
pub(crate) struct Mounts {
    /// (mount point, mount root, super options) of every cgroup v1 mount.
    pub v1: Vec<(PathBuf, String, Vec<String>)>,
    /// (mount point, mount root) of the cgroup2 mount, if any.
    pub v2: Option<(PathBuf, String)>,
    /// Lines of /proc/self/cgroup: (hierarchy id, controllers, path).
    pub own: Vec<(String, Vec<String>, String)>,
}

impl Mounts {
    fn read() -> Result<Mounts> {
        let info = fs::read_to_string("/proc/self/mountinfo").map_err(|e| Error::os("reading /proc/self/mountinfo", e))?;
        let own = fs::read_to_string("/proc/self/cgroup").map_err(|e| Error::os("reading /proc/self/cgroup", e))?;
        Ok(Mounts::parse(&info, &own))
    }

    fn parse(mountinfo: &str, self_cgroup: &str) -> Mounts {
        let mut v1 = Vec::new();
        let mut v2 = None;
        for line in mountinfo.lines() {
            // id parent major:minor root mountpoint opts [optional...] - fstype source superopts
            let Some((left, right)) = line.split_once(" - ") else { continue };
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            if l.len() < 5 || r.len() < 3 {
                continue;
            }
            let root = unescape(l[3]);
            let point = PathBuf::from(unescape(l[4]));
            match r[0] {
                "cgroup2" if v2.is_none() => v2 = Some((point, root)),
                "cgroup2" => {}
                "cgroup" => {
                    let opts = r[2].split(',').map(str::to_owned).collect();
                    v1.push((point, root, opts));
                }
                _ => {}
            }
        }
        let own = self_cgroup
            .lines()
            .filter_map(|line| {
                let mut parts = line.splitn(3, ':');
                let id = parts.next()?.to_owned();
                let ctrls = parts.next()?;
                let path = parts.next()?.to_owned();
                let ctrls = if ctrls.is_empty() { Vec::new() } else { ctrls.split(',').map(str::to_owned).collect() };
                Some((id, ctrls, path))
            })
            .collect();
        Mounts { v1, v2, own }
    }
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The directory of cgroup `path` (as in /proc/self/cgroup) under a mount
/// whose root is `mount_root`, e.g. inside a container.
pub(crate) fn dir_under_mount(point: &Path, mount_root: &str, path: &str) -> PathBuf {
    let rel = if mount_root == "/" { path } else { path.strip_prefix(mount_root).unwrap_or(path) };
    point.join(rel.trim_start_matches('/'))
}

// ---- small file helpers shared by both backends -------------------------

/// The supervisor's own memory cgroup's `tasks` or `cgroup.procs`, for
/// [`Group::leave_fd`]: `None`, with a warning, where it cannot be opened
/// (a failing child then exits where it is, as before).
pub(crate) fn open_leave(path: &Path) -> Option<std::sync::Arc<OwnedFd>> {
    match open_rw(path) {
        Ok(fd) => Some(std::sync::Arc::new(fd)),
        Err(e) => {
            tracing::warn!("{e}: a program that fails before its execve exits in its box's memory cgroup");
            None
        }
    }
}

pub(crate) fn open_rw(path: &Path) -> Result<OwnedFd> {
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map(OwnedFd::from)
        .map_err(|e| Error::os(format!("opening {}", path.display()), e))
}

/// For a write-only file (`cgroup.kill`, mode 0200): a user that a cgroup
/// was delegated to may not open it for reading, as root may.
pub(crate) fn open_wo(path: &Path) -> Result<OwnedFd> {
    fs::OpenOptions::new().write(true).open(path).map(OwnedFd::from).map_err(|e| Error::os(format!("opening {}", path.display()), e))
}

pub(crate) fn open_ro(path: &Path) -> Result<OwnedFd> {
    fs::File::open(path).map(OwnedFd::from).map_err(|e| Error::os(format!("opening {}", path.display()), e))
}

pub(crate) fn write_file(path: &Path, value: &str) -> Result<()> {
    fs::write(path, value).map_err(|e| Error::os(format!("writing {value:?} to {}", path.display()), e))
}

pub(crate) fn pwrite(fd: &OwnedFd, value: &[u8], what: &str) -> Result<()> {
    // SAFETY: `value` is a live slice of `value.len()` bytes; `fd` is an open cgroup file borrowed for the call.
    let n = unsafe { libc::pwrite(fd.as_raw_fd(), value.as_ptr().cast(), value.len(), 0) };
    if n < 0 {
        return Err(Error::last_os(format!("writing {what}")));
    }
    Ok(())
}

/// Read a small cgroup file through a kept descriptor.
pub(crate) fn pread<'a>(fd: &OwnedFd, buf: &'a mut [u8], what: &str) -> Result<&'a [u8]> {
    // SAFETY: reads at most `buf.len()` bytes into `buf`; `fd` is open for the call.
    let n = unsafe { libc::pread(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        return Err(Error::last_os(format!("reading {what}")));
    }
    Ok(&buf[..n as usize])
}

/// The value of `key` in a flat-keyed file (`key value` lines).
pub(crate) fn keyed(text: &[u8], key: &str) -> Option<u64> {
    std::str::from_utf8(text).ok()?.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

pub(crate) fn parse_u64(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text).ok()?.trim().parse().ok()
}

/// The ids a cgroup's `cgroup.procs`, `tasks` or `cgroup.threads` lists,
/// read to its end through a buffer on the stack: open, a read, the read
/// that finds the end, close. (`read_to_string` first asks the file's size,
/// which cgroupfs does not know, then reads 32 bytes to probe: two calls
/// more, and an external referee's call reads such a list twice.)
pub(crate) fn read_pids(path: &Path) -> Result<Vec<i32>> {
    use std::io::Read;
    let fail = |e| Error::os(format!("reading {}", path.display()), e);
    let mut file = fs::File::open(path).map_err(fail)?;
    let mut chunk = [0u8; 4096];
    let mut text = Vec::new();
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(fail(e)),
        }
    }
    Ok(parse_ids(&text))
}

/// One id a line; lines that are not one are left out.
fn parse_ids(text: &[u8]) -> Vec<i32> {
    text.split(|&b| b == b'\n').filter_map(|l| std::str::from_utf8(l).ok()?.trim().parse().ok()).collect()
}

/// Wait until `done()` holds: check a few times back to back (freezing a
/// few processes takes microseconds), then nap, failing after `limit`.
/// Never `yield`: the caller may be the match engine at real-time priority,
/// for which yielding lets no ordinary task run, and what is waited for
/// (tasks dying, or reaching the freezer) needs them to run.
pub(crate) fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> Result<bool>) -> Result<()> {
    let start = Instant::now();
    let mut spins = 0u32;
    loop {
        if done()? {
            return Ok(());
        }
        if start.elapsed() > limit {
            return Err(Error::os(what.to_owned(), io::Error::from(io::ErrorKind::TimedOut)));
        }
        spins += 1;
        if spins < 10 {
            std::hint::spin_loop();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// The inode of this process's PID namespace: part of every box's group
/// name (`koth-<pidns>-<pid>-<slot>-<n>`).
pub fn pid_namespace() -> u64 {
    use std::os::unix::fs::MetadataExt;
    static NS: OnceLock<u64> = OnceLock::new();
    *NS.get_or_init(|| fs::metadata("/proc/self/ns/pid").map(|m| m.ino()).unwrap_or(0))
}

/// Whether this process is the only supervisor under its cgroup, apart from
/// its own earlier lives: `KOTH_SANDBOX_OWNS_CGROUP=1`, set for a
/// container's runner. A restarted container runs in a new PID namespace,
/// so the groups its previous life left carry another namespace's inode;
/// only this statement lets the sweep take them as stale.
pub fn owns_cgroup() -> bool {
    static OWNS: OnceLock<bool> = OnceLock::new();
    *OWNS.get_or_init(|| std::env::var("KOTH_SANDBOX_OWNS_CGROUP").is_ok_and(|v| v == "1"))
}

/// How often box creation sweeps (see [`sweep_stale`]).
pub const SWEEP_EVERY: Duration = Duration::from_secs(10);

/// Remove the groups that supervisors which died without tearing down
/// (SIGKILL, OOM, power cut) left under `parents`: `koth-<pidns>-<pid>-...`
/// of this PID namespace whose process is gone. Groups of other namespaces
/// (e.g. other containers' runners sharing a cgroup tree) are never touched,
/// unless this process [owns its cgroup](owns_cgroup): then they are its own
/// earlier lives' (a restarted container) and stale. Their programs got
/// SIGKILL when their holders died, but on cgroup v1 a frozen program cannot
/// act on it until thawed: thaw, kill what is left, then remove the
/// directories. Box creation calls it at most every [`SWEEP_EVERY`]; `force`
/// sweeps now (a runner starting). A group that will not go is left for the
/// next sweep.
pub(crate) fn sweep_stale(parents: &[PathBuf], force: bool) {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static SWEPT: Mutex<Option<HashMap<Vec<PathBuf>, Instant>>> = Mutex::new(None);
    {
        let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
        let last = swept.get_or_insert_with(HashMap::new);
        if !force && last.get(parents).is_some_and(|t| t.elapsed() < SWEEP_EVERY) {
            return;
        }
        last.insert(parents.to_vec(), Instant::now());
    }
    let stale: Vec<PathBuf> = parents
        .iter()
        .filter_map(|p| fs::read_dir(p).ok())
        .flat_map(|rd| rd.flatten())
        .filter(|e| {
            let name = e.file_name();
            let mut parts = name.to_str().and_then(|n| n.strip_prefix("koth-")).map(|r| r.split('-')).into_iter().flatten();
            let ns = parts.next().and_then(|p| p.parse::<u64>().ok());
            let pid = parts.next().and_then(|p| p.parse::<u32>().ok());
            match (ns, pid) {
                (Some(ns), Some(pid)) if ns == pid_namespace() => pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists(),
                (Some(_), Some(_)) => owns_cgroup(),
                _ => false,
            }
        })
        .map(|e| e.path())
        .collect();
    for dir in &stale {
        let freezer = dir.join("freezer.state");
        if freezer.exists() {
            let _ = write_file(&freezer, "THAWED");
        }
        let v2_freeze = dir.join("cgroup.freeze");
        if v2_freeze.exists() {
            let _ = write_file(&v2_freeze, "0");
        }
        for pid in read_pids(&dir.join("cgroup.procs")).unwrap_or_default() {
            // SAFETY: kill takes integers only; these pids were just read from the group being swept.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    for dir in &stale {
        if let Err(e) = rmdir_retry(dir) {
            tracing::warn!("a stale cgroup stays: {e}");
        }
    }
}

/// rmdir that retries while the kernel still lists exiting processes.
pub(crate) fn rmdir_retry(path: &Path) -> Result<()> {
    let start = Instant::now();
    loop {
        match fs::remove_dir(path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && start.elapsed() < Duration::from_secs(5) => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(Error::os(format!("removing cgroup {}", path.display()), e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
35 25 0:30 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
36 35 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 35 0:32 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
38 35 0:33 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
39 25 0:34 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
40 25 0:35 / /mnt/with\\040space rw - ext4 /dev/sda rw
";

    #[test]
    fn parses_hybrid_mounts() {
        let m = Mounts::parse(MOUNTINFO, "4:memory:/a/b\n2:cpu,cpuacct:/\n0::/\n");
        assert_eq!(m.v1.len(), 3);
        assert_eq!(m.v1[1].0, PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"));
        assert!(m.v1[1].2.contains(&"cpuacct".to_owned()));
        assert_eq!(m.v2.as_ref().unwrap().0, PathBuf::from("/sys/fs/cgroup/unified"));
        assert_eq!(m.own[0], ("4".into(), vec!["memory".into()], "/a/b".into()));
        assert_eq!(m.own[2], ("0".into(), vec![], "/".into()));
    }

    #[test]
    fn reads_one_id_a_line() {
        for (text, ids) in [
            ("", vec![]),
            ("\n", vec![]),
            ("17\n", vec![17]),
            ("17\n4194304\n2\n", vec![17, 4194304, 2]),
            ("17\n 5 \nnot a pid\n9", vec![17, 5, 9]),
        ] {
            assert_eq!(parse_ids(text.as_bytes()), ids, "{text:?}");
        }
    }

    #[test]
    fn reads_a_list_longer_than_its_buffer() {
        let dir = std::env::temp_dir().join(format!("koth-read-pids-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ids: Vec<i32> = (1..3000).collect();
        let text: String = ids.iter().map(|i| format!("{i}\n")).collect();
        assert!(text.len() > 4096 * 3);
        std::fs::write(dir.join("tasks"), &text).unwrap();
        assert_eq!(read_pids(&dir.join("tasks")).unwrap(), ids);
        assert!(read_pids(&dir.join("missing")).unwrap_err().to_string().contains("missing"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn paths_inside_a_container_mount() {
        let p = dir_under_mount(Path::new("/sys/fs/cgroup/pids"), "/docker/abc", "/docker/abc/x");
        assert_eq!(p, PathBuf::from("/sys/fs/cgroup/pids/x"));
        let p = dir_under_mount(Path::new("/sys/fs/cgroup"), "/", "/");
        assert_eq!(p, PathBuf::from("/sys/fs/cgroup"));
    }

    #[test]
    fn unescapes_octal() {
        assert_eq!(unescape("/mnt/with\\040space"), "/mnt/with space");
        assert_eq!(unescape("/plain"), "/plain");
    }

    #[test]
    fn keyed_values() {
        let t = b"usage_usec 1234\nuser_usec 1000\n";
        assert_eq!(keyed(t, "usage_usec"), Some(1234));
        assert_eq!(keyed(t, "missing"), None);
    }
}
