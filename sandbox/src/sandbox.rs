use std::ffi::CString;
use std::fs::File;
use std::io;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::cgroup::{Group, Hierarchy, Version};
use crate::landlock_rules::{self, LandlockStatus};
use crate::launcher::{on_launcher, on_launcher_watched, start_on_launcher};
use crate::marks::{Marks, Phases};
use crate::mounts::{self, MountPlan, RootSwitch, WORK_DIR};
use crate::seccomp::Filter;
use crate::slots::{self, Slot};
use crate::spawn::{self, ExecPlan, ParkedProgram, Parking, Program};
use crate::usage::{decode_wait_status, Exit};
use crate::workdir::WorkDir;
use crate::{sys, Error, Limits, Network, Privilege, Result, SandboxConfig};

/// How long a spawn may take to reach its program's `execve` before the
/// box's programs are killed (see `Sandbox::spawn`). Setting a program up
/// takes a millisecond; an emulated VM's exec, a second.
const SPAWN_DEADLINE: Duration = Duration::from_secs(20);

/// The waits before each new attempt at a program whose `execve` failed
/// with `ETXTBSY` (its file is open for writing), 255 ms in all. The file
/// was written by this process (a bot's program put in its folder), and a
/// child that another thread forked while the file was open (a box's
/// unsharer, a `docker` or compiler command) keeps the write descriptor
/// until it execs, a millisecond or, on a busy host, several. The waits
/// are on the caller's thread, between attempts: the launcher threads,
/// shared by every box of the process, are never held. A file that stays
/// busy (a program of the box keeping it open) fails the spawn.
const BUSY_PROGRAM_WAITS: [Duration; 8] = [
    Duration::from_millis(1),
    Duration::from_millis(2),
    Duration::from_millis(4),
    Duration::from_millis(8),
    Duration::from_millis(16),
    Duration::from_millis(32),
    Duration::from_millis(64),
    Duration::from_millis(128),
];

enum Launched {
    Running {
        pid: libc::pid_t,
        started: Instant,
    },
    /// The step that failed, in the child or on its way there.
    Failed {
        stage: &'static str,
        source: io::Error,
    },
}

/// Environment every program starts with; [`Command::env`] adds to it.
const BASE_ENV: [(&str, &str); 5] = [
    ("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
    ("HOME", WORK_DIR),
    ("TMPDIR", "/tmp"),
    ("LANG", "C.UTF-8"),
    ("USER", "bot"),
];

/// Where a program's standard stream goes.
#[derive(Debug, Default)]
pub enum Stdio {
    /// `/dev/null`.
    #[default]
    Null,
    /// A pipe; the supervisor's end is in [`Child`].
    Pipe,
    /// A descriptor the caller owns (a socket, a file, a pipe end).
    Fd(OwnedFd),
}

/// A program to start in a box.
#[derive(Debug, Default)]
pub struct Command {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub stdin: Stdio,
    pub stdout: Stdio,
    pub stderr: Stdio,
}

impl Command {
    pub fn new(program: impl Into<String>) -> Command {
        Command { program: program.into(), ..Default::default() }
    }
    pub fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, a: I) -> Self {
        self.args.extend(a.into_iter().map(Into::into));
        self
    }
    pub fn env(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }
    pub fn stdin(mut self, s: Stdio) -> Self {
        self.stdin = s;
        self
    }
    pub fn stdout(mut self, s: Stdio) -> Self {
        self.stdout = s;
        self
    }
    pub fn stderr(mut self, s: Stdio) -> Self {
        self.stderr = s;
        self
    }
}

/// State shared between a box and the children spawned in it.
struct Shared {
    destroyed: std::sync::atomic::AtomicBool,
    /// Every program spawned in the box that is not reaped yet, and the exit
    /// status of those the box reaped itself. All reaping goes through this
    /// lock, so a pid is never waited for twice.
    ///
    /// Why the box reaps: a program is our child but lives in the box's PID
    /// namespace, and the kernel lets the box's init (the holder) finish dying
    /// only once every process of the namespace is reaped. Teardown therefore
    /// reaps the programs before it waits for the holder.
    children: Mutex<std::collections::HashMap<libc::pid_t, Option<Exit>>>,
}

impl Shared {
    /// Reap `pid` if it has exited (or wait for it with `block`).
    fn reap(&self, pid: libc::pid_t, block: bool) -> Result<Option<Exit>> {
        let mut children = self.children.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(Some(exit)) = children.get(&pid) {
            return Ok(Some(*exit));
        }
        let flags = if block { 0 } else { libc::WNOHANG };
        match sys::waitpid(pid, flags).map_err(|e| Error::os("waitpid", e))? {
            Some(st) => {
                let exit = decode_wait_status(st);
                children.insert(pid, Some(exit));
                Ok(Some(exit))
            }
            None => Ok(None),
        }
    }
}

/// A box: namespaces, a cgroup, a scratch filesystem and a uid, alive until dropped.
pub struct Sandbox {
    id: String,
    config: SandboxConfig,
    slot: Slot,
    /// Root's boxes run as their slot's uid, rootless ones as the user
    /// ([`box_ids`]).
    privilege: Privilege,
    version: Version,
    cgroup: Box<dyn Group>,
    holder_pid: libc::pid_t,
    holder_pidfd: OwnedFd,
    /// The holder's commands and answers; closing it tells the holder to exit.
    control: Option<OwnedFd>,
    /// The scratch tmpfs's mount point on the host: a box started from the
    /// template mounts it in the template's folder instead, and has none.
    scratch_dir: Option<PathBuf>,
    workdir: WorkDir,
    landlock: Option<OwnedFd>,
    landlock_status: LandlockStatus,
    root_switch: RootSwitch,
    cap_last_cap: u32,
    shared: Arc<Shared>,
    /// Between `freeze` and a successful `thaw`: no spawn.
    paused: AtomicBool,
    /// Commands sent to the holder whose acknowledgements are not read yet
    /// ([`Sandbox::request_freeze`], [`Sandbox::request_thaw`]), oldest
    /// first: the holder answers in order, so the next exchange reads these
    /// first. The lock also keeps two threads' exchanges apart.
    unacknowledged: Mutex<std::collections::VecDeque<u8>>,
    /// How long each step of building this box took ([`Sandbox::phases`]).
    phases: Phases,
    /// The box's first program, confined and waiting for what to run
    /// ([`Sandbox::park_first_program`]); the next spawn takes it.
    parked: Mutex<Option<ParkedProgram>>,
    /// CPU time the box's cgroup had counted when it was handed over: a
    /// parked program's own steps, koth's and not the box's programs'.
    cpu_before_use: Duration,
}

/// The uid and gid a box's programs run as: its slot's, or in a rootless
/// box the user's own (see [`Privilege`]).
fn box_ids(privilege: Privilege, slot: &Slot) -> (u32, u32) {
    match privilege {
        Privilege::Root => (slot.uid, slot.uid),
        Privilege::Rootless { uid, gid } => (uid, gid),
    }
}

fn seccomp_filter() -> &'static Filter {
    static FILTER: OnceLock<Filter> = OnceLock::new();
    FILTER.get_or_init(Filter::koth)
}

fn cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Config(format!("{what} {s:?} contains a NUL byte")))
}

impl Sandbox {
    /// Build a box. Fails, never degrades, when the host cannot confine it.
    pub fn create(config: SandboxConfig) -> Result<Sandbox> {
        let marks = Arc::new(Marks::start());
        config.validate()?;
        let privilege = Privilege::current();
        let hierarchy = <dyn Hierarchy>::detect()?;
        marks.mark("checking the configuration, finding the cgroup hierarchy");
        if !privilege.is_root() {
            // Under /tmp, a folder another user made first could swap the
            // boxes' mount points.
            crate::privilege::private_dir(&config.runtime_dir)
                .map_err(|e| Error::Config(format!("the sandbox's runtime folder: {e}; or set KOTH_SANDBOX_RUNTIME_DIR")))?;
        }
        let slot = slots::acquire(&config.runtime_dir, config.uid_base, config.slots)?;
        let (uid, gid) = box_ids(privilege, &slot);
        marks.mark("taking a uid slot");
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        // Named after this supervisor as seen from its PID namespace, so that
        // supervisors in different containers sharing a cgroup tree never
        // collide, and a sweep only judges its own namespace's supervisors.
        let id = format!(
            "koth-{}-{}-{}-{}",
            crate::cgroup::pid_namespace(),
            std::process::id(),
            slot.index,
            SERIAL.fetch_add(1, Ordering::Relaxed)
        );
        let root_switch = RootSwitch::for_this_process(privilege.is_root());
        // Root, where pivot_root is allowed, starts each box from the
        // template mount namespace (`mounts`'s docs); a rootless box, or a
        // host that refuses pivot_root, from a copy of the host's.
        let template =
            if privilege.is_root() && root_switch == RootSwitch::PivotRoot { Some(template_namespace(&config.runtime_dir)?) } else { None };
        let scratch_dir = template.is_none().then(|| config.runtime_dir.join("boxes").join(&id));
        if root_switch != RootSwitch::PivotRoot {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                tracing::warn!(
                    root_switch = %root_switch,
                    "pivot_root is refused to this process (a seccomp profile: Docker's default one refuses it): each box's root is \
                     moved over / and chrooted into instead, the host's tree staying mounted under it, out of the bots' reach \
                     (no capability, chroot refused by koth's filter); docs/operations.md, \"Privileges of the runner container\""
                )
            });
        }
        let launched = (|| {
            if let Some(dir) = &scratch_dir {
                std::fs::create_dir_all(dir).map_err(|e| Error::os(format!("creating {}", dir.display()), e))?;
                marks.mark("the scratch tmpfs's mount point");
            }
            let plan = MountPlan {
                root: config.root.clone(),
                scratch: scratch_dir.clone().unwrap_or_else(|| PathBuf::from(mounts::TEMPLATE_SCRATCH)),
                disk: config.limits.disk,
                uid,
                gid,
                loopback: matches!(config.network, Network::Loopback { .. }),
                hidden: config.hidden.clone(),
                allowlist: !privilege.is_root(),
                root_switch,
                from_template: template.is_some(),
            };
            launch_holder(plan, privilege, template, marks.clone())
        })();
        let launched = match launched {
            Ok(l) => l,
            Err(e) => {
                remove_scratch(&scratch_dir);
                return Err(e);
            }
        };
        // The cgroups are made here while the launcher thread builds the
        // namespaces and mounts (the holder never joins them): on a free
        // core the two overlap. Timed apart, since the marks of the
        // launcher's steps run meanwhile.
        let cgroups_began = Instant::now();
        let cgroup = hierarchy.create(&id, &config.limits);
        let cgroups_took = cgroups_began.elapsed();
        let built = launched.wait();
        let (cgroup, (holder_pid, holder_pidfd, control)) = match (cgroup, built) {
            (Ok(cgroup), Ok(holder)) => (cgroup, holder),
            (cgroup, built) => {
                let holder_error = match built {
                    Ok((pid, pidfd, control)) => {
                        drop(control);
                        let _ = sys::pidfd_send_signal(pidfd.as_raw_fd(), libc::SIGKILL);
                        let _ = sys::waitpid(pid, 0);
                        None
                    }
                    Err(e) => Some(e),
                };
                let cgroup_error = match cgroup {
                    Ok(cgroup) => {
                        let _ = cgroup.remove();
                        None
                    }
                    Err(e) => Some(e),
                };
                remove_scratch(&scratch_dir);
                // The cgroups' error first, as when they were made first.
                return Err(cgroup_error.or(holder_error).expect("the cgroups or the holder failed"));
            }
        };
        // Refused without CAP_SYS_NICE (a user's own box) or a real-time
        // budget (a container without one): the holder then stays ordinary.
        let _ = crate::wakeup::real_time_holder(holder_pid);
        marks.mark("real-time priority for the holder");
        let workdir = match mounts::open_in_box(holder_pid, WORK_DIR, libc::O_PATH | libc::O_DIRECTORY) {
            Ok(fd) => {
                marks.mark("opening the work folder");
                WorkDir::new(fd, uid, gid)
            }
            Err(e) => {
                drop(control);
                let _ = sys::pidfd_send_signal(holder_pidfd.as_raw_fd(), libc::SIGKILL);
                let _ = sys::waitpid(holder_pid, 0);
                let _ = cgroup.remove();
                remove_scratch(&scratch_dir);
                return Err(Error::os("opening the work folder", e));
            }
        };
        // From here on, Drop tears everything down if a step fails.
        let mut sandbox = Sandbox {
            id,
            slot,
            privilege,
            version: hierarchy.version(),
            cgroup,
            holder_pid,
            holder_pidfd,
            control: Some(control),
            scratch_dir,
            workdir,
            landlock: None,
            landlock_status: LandlockStatus::NotEnforced,
            root_switch,
            cap_last_cap: sys::cap_last_cap(),
            shared: Arc::new(Shared { destroyed: false.into(), children: Mutex::new(Default::default()) }),
            paused: AtomicBool::new(false),
            unacknowledged: Mutex::new(std::collections::VecDeque::new()),
            phases: Phases::default(),
            parked: Mutex::new(None),
            cpu_before_use: Duration::ZERO,
            config,
        };
        let ports = match &sandbox.config.network {
            Network::Loopback { connect_ports } => connect_ports.clone(),
            Network::None => Vec::new(),
        };
        let policy = landlock_rules::build(holder_pid, &ports, !sandbox.privilege.is_root())?;
        sandbox.landlock = policy.fd;
        sandbox.landlock_status = policy.status;
        marks.mark("the box's Landlock ruleset");
        sandbox.phases = marks.phases().with_beside("creating the box's cgroups and their limits", cgroups_took);
        if sandbox.landlock_status != LandlockStatus::FullyEnforced {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                if sandbox.landlock_status == LandlockStatus::RefusedBySeccomp {
                    tracing::warn!(
                        status = %sandbox.landlock_status,
                        "Landlock is refused by this process's seccomp profile (Docker's default one before 2022, or the host's own): boxes run \
                         without its layer (namespaces, mounts, cgroups, uids and koth's own seccomp filter still hold); a newer \
                         engine or a profile allowing the landlock_* calls gives it back (docs/operations.md)"
                    );
                    return;
                }
                tracing::info!(
                    status = %sandbox.landlock_status,
                    kernel_abi = landlock_rules::kernel_abi(),
                    pinned_abi = landlock_rules::PINNED_ABI as i32,
                    "Landlock is not fully enforced on this kernel (see docs/sandbox.md for what is missing)"
                )
            });
        }
        Ok(sandbox)
    }

    /// Start a program in the box (not while it is paused: thaw it first).
    pub fn spawn(&self, cmd: Command) -> Result<Child> {
        let marks = Arc::new(Marks::start());
        if self.shared.destroyed.load(Ordering::SeqCst) {
            return Err(Error::Config("the box was already killed".into()));
        }
        if self.paused.load(Ordering::SeqCst) {
            // On v2 the program would join a frozen cgroup and never reach
            // its execve; on v1 it would run while the rest is stopped.
            return Err(Error::Config("the box is paused: thaw it before starting a program in it".into()));
        }
        let argv: Vec<CString> = std::iter::once(cmd.program.as_str())
            .chain(cmd.args.iter().map(String::as_str))
            .map(|a| cstring(a, "argument"))
            .collect::<Result<_>>()?;
        let mut env: Vec<(String, String)> = BASE_ENV.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        for (k, v) in &cmd.env {
            if k.is_empty() || k.contains('=') {
                return Err(Error::Config(format!("environment name {k:?} is not valid")));
            }
            env.retain(|(ek, _)| ek != k);
            env.push((k.clone(), v.clone()));
        }
        let path_var = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default();
        let envp: Vec<CString> = env.iter().map(|(k, v)| cstring(&format!("{k}={v}"), "environment")).collect::<Result<_>>()?;
        let candidates: Vec<CString> = if cmd.program.contains('/') {
            vec![cstring(&cmd.program, "program")?]
        } else {
            path_var
                .split(':')
                .filter(|d| !d.is_empty())
                .map(|d| cstring(&format!("{d}/{}", cmd.program), "program"))
                .collect::<Result<_>>()?
        };
        let (stdin, parent_in) = child_end(cmd.stdin, true)?;
        let (stdout, parent_out) = child_end(cmd.stdout, false)?;
        let (stderr, parent_err) = child_end(cmd.stderr, false)?;
        let mut attempt = Program { argv, envp, candidates, stdio: [stdin, stdout, stderr] };
        let mut busy_waits = BUSY_PROGRAM_WAITS.iter();
        let mut parked_slot = self.parked.lock().unwrap_or_else(|p| p.into_inner());
        let mut parked = parked_slot.take();
        if let Some(unfit) = parked.take_if(|_| !spawn::fits_a_parked_start(&attempt, self.config.limits.memory)) {
            tracing::debug!(r#box = %self.id, "arguments too large for the box's parked program; starting the program as any other");
            self.discard_parked(unfit);
        }
        // No other program of the box starts while its parked program
        // does: it is nobody's vfork child, and another program's memory
        // could make it the OOM killer's pick (`spawn::fits_a_parked_start`).
        // A spawn beside this one waits for the slot.
        let _starting = if parked.is_some() {
            Some(parked_slot)
        } else {
            drop(parked_slot);
            None
        };
        let mut last_mark;
        let (pid, started) = loop {
            let (outcome, back) = match parked.take() {
                Some(parked) => {
                    last_mark = "the program's pidfd";
                    self.start_parked(parked, attempt, &marks)?
                }
                None => {
                    last_mark = "back from the launcher thread, the program's pidfd";
                    self.launch(attempt, &marks)?
                }
            };
            match outcome {
                Launched::Running { pid, started } => break (pid, started),
                // The program's file is open for writing somewhere: most
                // often by a child that some thread of this process forked
                // while it was writing that file, and that holds the
                // descriptor until its own exec (see `BUSY_PROGRAM_WAITS`).
                Launched::Failed { stage, source }
                    if stage == spawn::Stage::Exec.text() && source.raw_os_error() == Some(libc::ETXTBSY) =>
                {
                    let Some(wait) = busy_waits.next() else { return Err(Error::Spawn { stage, source }) };
                    tracing::info!(r#box = %self.id, program = %cmd.program, wait_ms = wait.as_millis() as u64, "the program's file is busy (open for writing); starting it again after a wait");
                    std::thread::sleep(*wait);
                    attempt = back;
                }
                Launched::Failed { stage, source } => return Err(Error::Spawn { stage, source }),
            }
        };
        self.shared.children.lock().unwrap_or_else(|p| p.into_inner()).insert(pid, None);
        let pidfd = sys::pidfd_open(pid).map_err(|e| Error::os("pidfd_open on the program", e))?;
        marks.mark(last_mark);
        Ok(Child {
            pid,
            pidfd,
            stdin: parent_in.map(File::from),
            stdout: parent_out.map(File::from),
            stderr: parent_err.map(File::from),
            started,
            status: None,
            shared: self.shared.clone(),
            marks,
        })
    }

    /// One attempt at starting a program: the launcher thread clones it and
    /// waits for its `execve`. The attempt's arguments and streams come
    /// back for another attempt.
    fn launch(&self, attempt: Program, marks: &Arc<Marks>) -> Result<(Launched, Program)> {
        let (err_r, err_w) = sys::pipe_cloexec().map_err(|e| Error::os("creating a pipe", e))?;
        let plan = self.exec_plan(Some(attempt), err_w.as_raw_fd(), marks);
        marks.mark("the program's plan: arguments, environment, pipes");
        // The raw descriptors in `plan` belong to `self`, which outlives this call.
        // Started when the launcher thread takes it up, not when it was
        // asked: a spawn that waited behind another box's build (the pool's
        // builder, another match of this process) has not begun, and a
        // bot's clock that starts here does not pay for the wait.
        let mut overdue = false;
        // The launcher waits until the program has exec'd (its children
        // share the supervisor's memory: `spawn`). A program stopped on its
        // way there, by SIGSTOP from another program of the box once it has
        // the box's uid (kernels without Landlock's signal scoping), would
        // hold its launcher, and the boxes queued behind it, for ever: past
        // SPAWN_DEADLINE the box's programs are killed, which ends it.
        let (launched, started, plan) = on_launcher_watched(
            move || {
                let started = Instant::now();
                plan.marks.mark("waiting for the launcher thread");
                // Returns once the program has exec'd or failed (the end of
                // file of the report pipe, `err_r`).
                let launched = spawn::launch(&plan, err_w, &err_r);
                (launched, started, plan)
            },
            SPAWN_DEADLINE,
            || {
                tracing::warn!(r#box = %self.id, "a program did not reach execve in time; killing the box's programs");
                overdue = true;
                let _ = self.kill_all();
            },
        );
        let back = plan.program.expect("a program started at once keeps its arguments");
        // No failure when the program's execve succeeded; otherwise the
        // step that failed, as the child recorded it.
        let (pid, failure) = launched?;
        Ok((self.outcome(pid, failure, started, overdue), back))
    }

    /// What a program's start came to, from its pid and failure (none when
    /// it exec'd); a program that did not start is reaped.
    fn outcome(&self, pid: Option<libc::pid_t>, failure: Option<spawn::Failure>, started: Instant, overdue: bool) -> Launched {
        match (pid, failure) {
            (Some(pid), None) if !overdue => Launched::Running { pid, started },
            (pid, failure) => {
                if let Some(pid) = pid {
                    let _ = sys::waitpid(pid, 0);
                }
                match failure {
                    _ if overdue => Launched::Failed { stage: spawn::OVERDUE, source: io::Error::from_raw_os_error(libc::ETIMEDOUT) },
                    Some(spawn::Failure { stage, source }) => Launched::Failed { stage, source },
                    // No pid and no failure recorded: the joiner was killed
                    // from outside before it cloned the program.
                    None => Launched::Failed {
                        stage: "starting the program",
                        source: io::Error::other("killed on its way, before any step failed"),
                    },
                }
            }
        }
    }

    /// Everything a program of this box is started with but what to run.
    fn exec_plan(&self, program: Option<Program>, err_w: RawFd, marks: &Arc<Marks>) -> ExecPlan {
        let (uid, gid) = box_ids(self.privilege, &self.slot);
        ExecPlan {
            program,
            err_w,
            holder_pidfd: self.holder_pidfd.as_raw_fd(),
            join: self.cgroup.join_fds().iter().map(|f| f.as_raw_fd()).collect(),
            join_memory: self.cgroup.memory_join_fd().map(|f| f.as_raw_fd()),
            leave: self.cgroup.leave_fd().map(|f| f.as_raw_fd()),
            into_cgroup: self.cgroup.clone_into().map(|f| f.as_raw_fd()),
            uid,
            gid,
            user_namespace: !self.privilege.is_root(),
            rlimits: rlimits(&self.config.limits),
            cap_last_cap: self.cap_last_cap,
            landlock: self.landlock.as_ref().map(|f| f.as_raw_fd()),
            seccomp: seccomp_filter(),
            marks: marks.clone(),
        }
    }

    /// Start the box's first program ahead of need, up to its `execve`:
    /// every step of [`Sandbox::spawn`] that does not depend on what it
    /// runs (joining the box's namespaces and cgroup, the session, the work
    /// folder, resource limits, ids, capabilities, `no_new_privs`,
    /// Landlock, seccomp, signal handlers) is done now, off the caller's
    /// path, and the program then waits. The next [`Sandbox::spawn`] sends
    /// it its arguments and streams and it execs at once; see `spawn`'s
    /// module docs ("A parked first program"). A box the pool builds ahead
    /// is parked so ([`crate::BoxPool`]).
    ///
    /// Returns whether a program was parked: not when one already is.
    pub fn park_first_program(&mut self) -> Result<bool> {
        let already = self.parked.get_mut().unwrap_or_else(|p| p.into_inner()).is_some();
        if already || self.shared.destroyed.load(Ordering::SeqCst) {
            return Ok(false);
        }
        let marks = Arc::new(Marks::start());
        let (sock, program_end) = sys::socketpair_cloexec().map_err(|e| Error::os("creating a socket pair", e))?;
        let plan = Box::new(self.exec_plan(None, program_end.as_raw_fd(), &marks));
        let this = &*self;
        let parking = on_launcher_watched(
            move || spawn::park(plan, program_end, sock),
            SPAWN_DEADLINE,
            || {
                tracing::warn!(r#box = %this.id, "a parked program did not reach its wait in time; killing the box's programs");
                let _ = this.kill_all();
            },
        )?;
        let parked = match parking {
            Parking::Parked(parked) => parked,
            Parking::Failed { pid, failure } => {
                if let Some(pid) = pid {
                    let _ = sys::waitpid(pid, 0);
                }
                let spawn::Failure { stage, source } =
                    failure.unwrap_or(spawn::Failure { stage: spawn::OVERDUE, source: io::Error::from_raw_os_error(libc::ETIMEDOUT) });
                return Err(Error::Spawn { stage, source });
            }
        };
        self.shared.children.lock().unwrap_or_else(|p| p.into_inner()).insert(parked.pid(), None);
        // Its steps are counted in the box's cgroup: read them once it
        // sleeps in its wait, and count the box's CPU time from there.
        wait_until_asleep(parked.pid());
        self.cpu_before_use = self.cgroup.cpu_usage().unwrap_or_default();
        *self.parked.get_mut().unwrap_or_else(|p| p.into_inner()) = Some(parked);
        Ok(true)
    }

    /// The pid of the box's parked first program, until a spawn takes it.
    pub fn parked_program(&self) -> Option<libc::pid_t> {
        self.parked.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|p| p.pid())
    }

    /// Start `attempt` in the parked program, or, when that has died (it
    /// cannot be reached), as any other program.
    fn start_parked(&self, mut parked: ParkedProgram, attempt: Program, marks: &Arc<Marks>) -> Result<(Launched, Program)> {
        let started = Instant::now();
        let mut overdue = false;
        let report = parked.start(&attempt, marks, SPAWN_DEADLINE, || {
            tracing::warn!(r#box = %self.id, "a parked program did not reach execve in time; killing the box's programs");
            overdue = true;
            let _ = self.kill_all();
        });
        let pid = parked.pid();
        match report {
            Ok(failure) => {
                if failure.is_some() || overdue {
                    // `outcome` reaps it; the box's map must agree.
                    self.shared.children.lock().unwrap_or_else(|p| p.into_inner()).remove(&pid);
                }
                Ok((self.outcome(Some(pid), failure, started, overdue), attempt))
            }
            // Killed on its way by the deadline, before it took its streams.
            Err(_) if overdue => {
                self.shared.children.lock().unwrap_or_else(|p| p.into_inner()).remove(&pid);
                drop(parked);
                Ok((self.outcome(Some(pid), None, started, true), attempt))
            }
            Err(e) => {
                tracing::info!(r#box = %self.id, error = %e, "the box's parked program is gone; starting the program as any other");
                self.discard_parked(parked);
                self.launch(attempt, marks)
            }
        }
    }

    /// Kill a parked program that will run nothing (dropping it does) and
    /// reap it, so that the box's map of its programs forgets it.
    fn discard_parked(&self, parked: ParkedProgram) {
        let pid = parked.pid();
        drop(parked);
        let _ = self.shared.reap(pid, true);
    }

    /// Stop every process of the box (see [`Group::freeze`]).
    ///
    /// On cgroup v2 this is the cgroup freezer. On v1 it is `SIGSTOP` to
    /// every program of the box, sent by the box's holder: v1's freezer
    /// holds its tasks in an uninterruptible sleep where even SIGKILL waits,
    /// so a runner killed while a bot was frozen would leave that bot for
    /// ever, and a runner that is a container's PID 1 could never finish
    /// dying (the kernel waits for every process of the namespace). A
    /// stopped program dies on SIGKILL like any other.
    ///
    /// On v1 the supervisor first sends `SIGSTOP` to every thread of every
    /// process of the box's cgroup itself: it is running already, so the
    /// box stops at once, whereas the holder must first be scheduled, which
    /// on a machine whose cores a bot keeps busy can take a scheduler tick
    /// (4 ms, seen with a bot spinning eight threads), all of it CPU the bot
    /// would get after its answer. Every thread, not the process: see
    /// [`stop_every_thread`]. The holder's pass then makes the stop
    /// complete: a process forked, or continued by a sibling, between the
    /// cgroup read and the signals is caught by its `kill(-1)`.
    pub fn freeze(&self) -> Result<()> {
        self.paused.store(true, Ordering::SeqCst);
        match self.version {
            Version::V1 => {
                for pid in self.cgroup.pids().unwrap_or_default() {
                    stop_every_thread(pid);
                }
                self.signal_all(crate::mounts::STOP_ALL)
            }
            Version::V2 => self.cgroup.freeze(),
        }
    }
    /// Resume the box; returns once it runs again, so a move's clock may start.
    pub fn thaw(&self) -> Result<()> {
        match self.version {
            Version::V1 => self.signal_all(crate::mounts::CONTINUE_ALL),
            Version::V2 => self.cgroup.thaw(),
        }?;
        self.paused.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// Stop every program of the box as [`Sandbox::freeze`] does, without
    /// waiting to see it done: on cgroup v1 every thread of the box is sent
    /// `SIGSTOP` at once by this thread (so a program running now stops
    /// now) and the holder's pass is sent but not waited for; on v2 the
    /// freeze is asked of the kernel. For a box whose programs are blocked
    /// reading (an external referee that has answered) this costs no wait
    /// for the holder or the kernel to be scheduled, which on a loaded
    /// machine is most of a freeze. [`Sandbox::thaw`] or
    /// [`Sandbox::request_thaw`] ends it.
    pub fn request_freeze(&self) -> Result<()> {
        self.paused.store(true, Ordering::SeqCst);
        match self.version {
            Version::V1 => {
                for pid in self.cgroup.pids().unwrap_or_default() {
                    stop_every_thread(pid);
                }
                self.signal_all_later(crate::mounts::STOP_ALL)
            }
            Version::V2 => self.cgroup.request_frozen(true),
        }
    }

    /// Continue the box without waiting for the holder (v1) or the kernel
    /// (v2) to be scheduled: on v1 every thread of the box's cgroup is
    /// sent `SIGCONT` by this thread, once the holder has answered every
    /// earlier command (its `SIGSTOP` pass must not land after the
    /// continue; by the next call it has long answered); on v2 the thaw
    /// is asked of the kernel. A stopped program can neither fork nor start
    /// a thread, so the cgroup's list is every program to continue. Its
    /// threads' list (`tasks`), not its processes': `SIGCONT` to any thread
    /// continues its whole process, and the same list serves
    /// [`Sandbox::request_thaw_sampled`]. (A thread id in that list whose
    /// thread exits before the signal could in principle be another's by
    /// then, as for [`stop_every_thread`]; `SIGCONT` changes nothing for a
    /// program that is not stopped.)
    pub fn request_thaw(&self) -> Result<()> {
        self.continue_listed(None)
    }

    /// [`Sandbox::request_thaw`], with a sample of the box's run-queue
    /// wait taken into `wait` just before the continue, from the same read
    /// of its thread list: an external referee's call starts so, one read
    /// of a cgroup file fewer. The box is stopped until the continue, so
    /// the sample is the one its call would have taken first.
    pub fn request_thaw_sampled(&self, wait: &mut crate::CpuWait) -> Result<()> {
        self.continue_listed(Some(wait))
    }

    fn continue_listed(&self, wait: Option<&mut crate::CpuWait>) -> Result<()> {
        match self.version {
            Version::V1 => {
                self.acknowledge_all()?;
                let threads = self.cgroup.threads().unwrap_or_default();
                if let Some(wait) = wait {
                    wait.sample(&threads);
                }
                for tid in threads {
                    // SAFETY: kill(2) on a thread id read from the box's
                    // cgroup just now (it names the thread's process); see
                    // above for one reused since.
                    unsafe { libc::kill(tid, libc::SIGCONT) };
                }
            }
            Version::V2 => {
                if let Some(wait) = wait {
                    wait.sample(&self.cgroup.threads().unwrap_or_default());
                }
                self.cgroup.request_frozen(false)?
            }
        }
        self.paused.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// Read the holder's answers to every command sent and not yet answered.
    fn acknowledge_all(&self) -> Result<()> {
        let mut unacknowledged = self.unacknowledged.lock().unwrap_or_else(|p| p.into_inner());
        let Some(control) = self.control.as_ref() else { return Ok(()) };
        while !unacknowledged.is_empty() {
            read_ack(control.as_raw_fd(), &mut unacknowledged, 5000)?;
        }
        Ok(())
    }

    /// Have the holder stop or continue every program of the box; returns
    /// once its `kill(2)` has returned. Then every program is signalled and
    /// woken: none runs another instruction of its own before it stops, and
    /// after SIGCONT each is runnable again.
    fn signal_all(&self, command: u8) -> Result<()> {
        let mut unacknowledged = self.unacknowledged.lock().unwrap_or_else(|p| p.into_inner());
        let fd = self.send_command(command)?;
        unacknowledged.push_back(command);
        // The holder's answers come in order: every earlier one, then this.
        while !unacknowledged.is_empty() {
            read_ack(fd, &mut unacknowledged, 5000)?;
        }
        Ok(())
    }

    /// Send the holder `command` without waiting for it to be carried out;
    /// the answers to earlier commands already there are read on the way
    /// (not this one's: sent this instant, it is not there yet, and looking
    /// would cost a call each time).
    fn signal_all_later(&self, command: u8) -> Result<()> {
        let mut unacknowledged = self.unacknowledged.lock().unwrap_or_else(|p| p.into_inner());
        let fd = self.send_command(command)?;
        while !unacknowledged.is_empty() && read_ack(fd, &mut unacknowledged, 0)? {}
        unacknowledged.push_back(command);
        Ok(())
    }

    fn send_command(&self, command: u8) -> Result<RawFd> {
        let control = self.control.as_ref().ok_or_else(|| Error::Config("the box is being torn down".into()))?;
        let fd = control.as_raw_fd();
        // send, not write: a holder that died must be an error here, not a
        // SIGPIPE for a program that uses this library without ignoring it.
        // SAFETY: a one-byte buffer that lives for the call; `fd` is the control socket this box owns.
        if unsafe { libc::send(fd, [command].as_ptr().cast(), 1, libc::MSG_NOSIGNAL) } != 1 {
            return Err(Error::os("sending the box's holder a command", io::Error::last_os_error()));
        }
        Ok(fd)
    }

    /// CPU time of everything that ran in the box so far.
    pub fn cpu_usage(&self) -> Result<Duration> {
        Ok(self.cgroup.cpu_usage()?.saturating_sub(self.cpu_before_use))
    }
    pub fn memory_peak(&self) -> Result<Option<u64>> {
        self.cgroup.memory_peak()
    }
    pub fn oom_kills(&self) -> Result<u64> {
        self.cgroup.oom_kills()
    }
    /// Processes of the box now running (global pids).
    pub fn pids(&self) -> Result<Vec<i32>> {
        self.cgroup.pids()
    }
    /// Threads of the box now running (global thread ids).
    pub fn threads(&self) -> Result<Vec<i32>> {
        self.cgroup.threads()
    }
    /// Take a sample of the box's run-queue wait into `wait` (see
    /// [`CpuWait`](crate::CpuWait)).
    pub fn sample_cpu_wait(&self, wait: &mut crate::CpuWait) {
        wait.sample(&self.cgroup.threads().unwrap_or_default());
    }
    /// Whether the box has a CPU weight of its own, equal to every other
    /// box's whatever its thread count (the `cpu` controller; see [`cgroup`](crate::cgroup)).
    pub fn cpu_isolated(&self) -> bool {
        self.cgroup.cpu_isolated()
    }
    /// Run the box's programs on these cores only; `Ok(false)` where the
    /// hierarchy has no `cpuset` controller.
    pub fn set_cores(&self, cores: &[u32]) -> Result<bool> {
        self.cgroup.set_cores(cores)
    }
    /// Kill every program of the box; the box stays usable for new spawns.
    ///
    /// On cgroup v2 this is `cgroup.kill`. On v1, which has none, the box's
    /// init kills every program of its PID namespace in one pass
    /// (`kill(-1, SIGKILL)`, as its `SIGSTOP` for [`Sandbox::freeze`]: no
    /// fork slips through), and the cgroup's own rounds then kill what it
    /// still lists and wait for them to be gone (the programs on their way
    /// out; a joiner, which is outside the namespace, waits for its program
    /// and exits). No freezer: a supervisor killed between v1's `FROZEN`
    /// and `THAWED` left its box frozen, and a frozen program acts on the
    /// `SIGKILL` its init's death sends it only once thawed, so it lived on
    /// until a later supervisor swept the group (seen in CI: a program
    /// killed on its way to `execve` outlived its runner). A box whose
    /// init cannot be reached (it died, and its namespace's programs with
    /// it) gets the rounds alone.
    pub fn kill_all(&self) -> Result<()> {
        if self.version == Version::V1 {
            // Nothing to kill is the common case (a turn's process that
            // exited): one read of the list, no round trip to the init.
            if self.cgroup.pids()?.is_empty() {
                return Ok(());
            }
            let _ = self.signal_all(crate::mounts::KILL_ALL);
        }
        self.cgroup.kill_all()
    }
    /// The box's work folder, for putting files in and reading them back.
    pub fn workdir(&self) -> &WorkDir {
        &self.workdir
    }
    pub fn landlock_status(&self) -> &LandlockStatus {
        &self.landlock_status
    }
    /// How the box's root was made its root (see [`RootSwitch`]).
    pub fn root_switch(&self) -> RootSwitch {
        self.root_switch
    }
    pub fn cgroup_version(&self) -> Version {
        self.version
    }
    pub fn cgroup_paths(&self) -> Vec<PathBuf> {
        self.cgroup.paths()
    }
    /// The uid the box's programs run as.
    pub fn uid(&self) -> u32 {
        box_ids(self.privilege, &self.slot).0
    }
    /// How long each step of building this box took, from
    /// [`Sandbox::create`]'s call to the box being ready for its first
    /// program (`koth sandbox bench` prints their medians).
    pub fn phases(&self) -> &Phases {
        &self.phases
    }
    pub fn id(&self) -> &str {
        &self.id
    }
    pub fn limits(&self) -> &Limits {
        &self.config.limits
    }
    /// The holder (pid 1 of the box), as a global pid.
    pub fn holder_pid(&self) -> libc::pid_t {
        self.holder_pid
    }

    /// Listen on 127.0.0.1:`port` inside the box's network namespace (for
    /// protocols where the program connects to the referee). Requires
    /// [`Network::Loopback`] with `port` among the allowed connect ports.
    pub fn listen_tcp(&self, port: u16) -> Result<TcpListener> {
        match &self.config.network {
            Network::Loopback { connect_ports } if connect_ports.contains(&port) => {}
            _ => return Err(Error::Config(format!("listening on port {port} needs Network::Loopback with that port allowed"))),
        }
        // Made by a child in the box's network namespace (as root, a thread
        // could enter it; a rootless supervisor must first enter the box's
        // user namespace, which only a single-threaded process may).
        let (pidfd, user_namespace) = (self.holder_pidfd.as_raw_fd(), !self.privilege.is_root());
        // The pidfd belongs to `self`, which outlives the call.
        let fd = on_launcher(move || spawn::listen_in_box(pidfd, user_namespace, port))?;
        Ok(TcpListener::from(fd))
    }

    /// Kill everything and remove the box, never waiting without a bound:
    /// a program stuck in the kernel when it was killed (a disk read) dies
    /// only when its call returns, and so does the holder, which as the PID
    /// namespace's init waits for every process of the namespace. If that
    /// takes longer than [`TEARDOWN_WAIT`], a thread finishes the teardown
    /// (reaps, removes the cgroup and the scratch folder, releases the uid
    /// slot) once they are gone, and the caller goes on at once.
    fn destroy(&mut self) -> Result<()> {
        if self.shared.destroyed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let until = Instant::now() + TEARDOWN_WAIT;
        let killed = self.kill_all();
        // Killed, if parked still, and gone before its memory is.
        drop(self.parked.get_mut().unwrap_or_else(|p| p.into_inner()).take());
        let pending: Vec<libc::pid_t> = {
            let children = self.shared.children.lock().unwrap_or_else(|p| p.into_inner());
            children.iter().filter(|(_, st)| st.is_none()).map(|(&pid, _)| pid).collect()
        };
        self.control.take();
        let _ = sys::pidfd_send_signal(self.holder_pidfd.as_raw_fd(), libc::SIGKILL);
        let mut left: Vec<libc::pid_t> = pending;
        loop {
            left.retain(|&pid| !matches!(self.shared.reap(pid, false), Ok(Some(_)) | Err(_)));
            let Some(rest) = until.checked_duration_since(Instant::now()) else {
                self.finish_later(left);
                return killed;
            };
            if left.is_empty() {
                // The holder's pidfd turns readable when it exits: waited
                // for as such (a nap of 1 ms here was most of a teardown),
                // whole milliseconds, the last one rounded up.
                if sys::wait_readable(self.holder_pidfd.as_raw_fd(), rest.max(Duration::from_millis(1))) {
                    let _ = sys::waitpid(self.holder_pid, 0);
                    break;
                }
                continue;
            }
            // Programs not yet reaped (their exit follows the kill within
            // microseconds): short naps.
            std::thread::sleep(rest.min(Duration::from_millis(1)));
        }
        let removed = self.cgroup.remove();
        remove_scratch(&self.scratch_dir);
        killed.and(removed)
    }

    /// The rest of [`destroy`](Sandbox::destroy), on a thread: wait for the
    /// killed programs and the holder, then remove the cgroup and the scratch
    /// folder and release the slot.
    fn finish_later(&self, children: Vec<libc::pid_t>) {
        let (shared, holder) = (self.shared.clone(), self.holder_pid);
        let (paths, scratch, slot) = (self.cgroup.paths(), self.scratch_dir.clone(), self.slot.hold());
        let id = self.id.clone();
        tracing::warn!(box_id = %id, programs = children.len(), "a killed box is still in the kernel; its teardown finishes in the background");
        std::thread::spawn(move || {
            for pid in children {
                let _ = shared.reap(pid, true);
            }
            let _ = sys::waitpid(holder, 0);
            for p in paths.iter().rev() {
                if let Err(e) = crate::cgroup::rmdir_retry(p) {
                    tracing::error!(box_id = %id, error = %e, "removing a box's cgroup after a delayed teardown failed");
                }
            }
            remove_scratch(&scratch);
            drop(slot);
        });
    }
}

/// How long [`Sandbox`]'s teardown waits for its programs to be gone before
/// finishing in the background.
pub const TEARDOWN_WAIT: Duration = Duration::from_millis(250);

/// Wait, briefly, until a parked program sleeps in its wait (its state in
/// `/proc/<pid>/stat` is `S`): its CPU time is all counted then.
fn wait_until_asleep(pid: libc::pid_t) {
    let path = format!("/proc/{pid}/stat");
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        let state = std::fs::read_to_string(&path).ok().and_then(|s| s.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next()));
        if matches!(state, Some('S') | None) {
            return;
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Err(e) = self.destroy() {
            tracing::error!(box_id = %self.id, error = %e, "tearing down a box failed");
        }
    }
}

/// `(descriptor for the child, supervisor's end)` of one standard stream.
fn child_end(s: Stdio, input: bool) -> Result<(OwnedFd, Option<OwnedFd>)> {
    match s {
        Stdio::Null => {
            let f =
                std::fs::OpenOptions::new().read(input).write(!input).open("/dev/null").map_err(|e| Error::os("opening /dev/null", e))?;
            Ok((f.into(), None))
        }
        Stdio::Fd(fd) => Ok((fd, None)),
        Stdio::Pipe => {
            let (r, w) = sys::pipe_cloexec().map_err(|e| Error::os("creating a pipe", e))?;
            Ok(if input { (r, Some(w)) } else { (w, Some(r)) })
        }
    }
}

fn rlimits(l: &Limits) -> Vec<(libc::__rlimit_resource_t, u64)> {
    let mut v =
        vec![(libc::RLIMIT_FSIZE, l.file_size), (libc::RLIMIT_NOFILE, l.open_files), (libc::RLIMIT_CORE, 0), (libc::RLIMIT_STACK, l.stack)];
    if let Some(cpu) = l.cpu_time {
        // Backstop only: the supervisor enforces the tree's CPU time exactly.
        v.push((libc::RLIMIT_CPU, cpu.as_secs() + 2));
    }
    v
}

/// A holder being started on the launcher thread ([`launch_holder`]); its
/// pid, pidfd and the control socket's end come from [`HolderLaunch::wait`],
/// which must be called (the holder is the caller's to reap).
struct HolderLaunch {
    forked: std::sync::mpsc::Receiver<Result<()>>,
    pid_r: OwnedFd,
    report_r: OwnedFd,
    control_w: OwnedFd,
    privilege: Privilege,
    marks: Arc<Marks>,
}

/// Remove a box's scratch mount point on the host, if it has one (a box
/// started from the template has none).
fn remove_scratch(dir: &Option<PathBuf>) {
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir(dir);
    }
}

/// The template mount namespace of this process's boxes (see `mounts`),
/// made at the first box built by root on a launcher thread, its tmpfs
/// mounted on `runtime_dir` in its own namespace only, and kept for the
/// process's life. A failure to make it (descriptors or memory short for a
/// moment) is the error of the box that asked: the next box tries again.
fn template_namespace(runtime_dir: &std::path::Path) -> Result<RawFd> {
    static TEMPLATE: OnceLock<OwnedFd> = OnceLock::new();
    static MAKING: Mutex<()> = Mutex::new(());
    if let Some(fd) = TEMPLATE.get() {
        return Ok(fd.as_raw_fd());
    }
    // One maker at a time: the boxes that waited take the one it made.
    let _making = MAKING.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(fd) = TEMPLATE.get() {
        return Ok(fd.as_raw_fd());
    }
    std::fs::create_dir_all(runtime_dir).map_err(|e| Error::os(format!("creating {}", runtime_dir.display()), e))?;
    let at = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(runtime_dir.as_os_str()))
        .map_err(|_| Error::Config(format!("the sandbox's runtime folder {} has a NUL byte", runtime_dir.display())))?;
    let made = on_launcher(move || spawn::make_template(&at))?;
    Ok(TEMPLATE.get_or_init(|| made).as_raw_fd())
}

/// Start the holder on the launcher thread and return at once: the caller
/// makes the box's cgroups meanwhile (the holder never joins them).
fn launch_holder(plan: MountPlan, privilege: Privilege, template: Option<RawFd>, marks: Arc<Marks>) -> Result<HolderLaunch> {
    let (report_r, report_w) = sys::pipe_cloexec().map_err(|e| Error::os("creating a pipe", e))?;
    // Commands to the holder and its answers (see `Sandbox::freeze`); closing
    // our end tells it to exit.
    let (control_r, control_w) = sys::socketpair_cloexec().map_err(|e| Error::os("creating a socket pair", e))?;
    let (pid_r, pid_w) = sys::pipe_cloexec().map_err(|e| Error::os("creating a pipe", e))?;
    let init = crate::init::executable()?;
    let paths = plan.paths();
    let user_maps = match privilege {
        Privilege::Root => None,
        Privilege::Rootless { uid, gid } => Some(spawn::UserMaps::identity(uid, gid)),
    };
    // A rootless box's namespaces are owned by its own user namespace.
    let netns = if privilege.is_root() { crate::netns::take() } else { None };
    marks.mark("pipes, the init's memfd, the mount plan");
    let launch_marks = marks.clone();
    let (running_tx, running_rx) = std::sync::mpsc::sync_channel::<()>(1);
    let forked = start_on_launcher(move || -> Result<()> {
        launch_marks.mark("waiting for the launcher thread");
        let start = spawn::HolderStart {
            paths,
            user_maps,
            netns: netns.as_ref().map(|fd| fd.as_raw_fd()),
            template,
            init,
            report: report_w.as_raw_fd(),
            control: control_r.as_raw_fd(),
            pid_w: pid_w.as_raw_fd(),
            marks: launch_marks,
        };
        // The caller is told once the unsharer is cloned (see
        // `spawn::launch_holder`), or when the start failed before.
        spawn::launch_holder(&start, move || {
            let _ = running_tx.send(());
        })
        // report_w, control_r, pid_w and netns drop here: only the holder
        // keeps them.
    });
    // Wait until the launcher thread has cloned the unsharer before making
    // the cgroups: woken on this thread's CPU, it waited there for the whole
    // of them (0.6-0.7 ms at the median here) instead of running beside
    // them. A start that failed before, or a launcher thread gone, drops
    // the sender; `wait` then says why.
    let _ = running_rx.recv();
    Ok(HolderLaunch { forked, pid_r, report_r, control_w, privilege, marks })
}

impl HolderLaunch {
    /// The started holder: its pid, pidfd and the control socket's end.
    fn wait(self) -> Result<(libc::pid_t, OwnedFd, OwnedFd)> {
        let HolderLaunch { forked, pid_r, report_r, control_w, privilege, marks } = self;
        forked.recv().map_err(|_| Error::Unsupported("the sandbox launcher thread dropped the holder's start".into()))??;
        let pid_bytes = sys::read_to_end(pid_r.as_raw_fd(), 4).map_err(|e| Error::os("reading the holder pid", e))?;
        let report = sys::read_to_end(report_r.as_raw_fd(), 1).map_err(|e| Error::os("reading the holder report", e))?;
        if report != [0] {
            let mut msg = report;
            msg.extend(sys::read_to_end(report_r.as_raw_fd(), 4096).unwrap_or_default());
            if let Ok(b) = <[u8; 4]>::try_from(pid_bytes.as_slice()) {
                let _ = sys::waitpid(libc::pid_t::from_ne_bytes(b), 0);
            }
            let (stage, source) = sys::decode_child_failure(&msg);
            return Err(match source.raw_os_error() {
                Some(libc::EPERM) | Some(libc::ENOSYS) | Some(libc::EINVAL) | Some(libc::ENOSPC) if !privilege.is_root() => {
                    Error::Unsupported(format!(
                        "building the box failed at {stage}: {source} (without root, the kernel must let users create \
                         user namespaces (sysctls user.max_user_namespaces > 0, kernel.unprivileged_userns_clone = 1 where \
                         it exists, and on Ubuntu kernel.apparmor_restrict_unprivileged_userns = 0 or an AppArmor profile \
                         for koth), and Linux 5.12+ for open_tree and mount_setattr; or run koth as root)"
                    ))
                }
                Some(libc::EPERM) | Some(libc::ENOSYS) | Some(libc::EINVAL) => Error::Unsupported(format!(
                    "building the box failed at {stage}: {source} (the kernel must allow namespaces, \
                     open_tree and mount_setattr (Linux 5.12+) to root)"
                )),
                _ => Error::os(format!("building the box failed at {stage}"), source),
            });
        }
        let pid = libc::pid_t::from_ne_bytes(
            pid_bytes.as_slice().try_into().map_err(|_| Error::Unsupported("the holder pid was not reported".into()))?,
        );
        let pidfd = sys::pidfd_open(pid).map_err(|e| Error::os("pidfd_open on the holder", e))?;
        marks.mark("the init's report that the box is ready, the holder's pidfd");
        Ok((pid, pidfd, control_w))
    }
}

/// A program running in a box.
#[derive(Debug)]
pub struct Child {
    pid: libc::pid_t,
    pidfd: OwnedFd,
    pub stdin: Option<File>,
    pub stdout: Option<File>,
    pub stderr: Option<File>,
    started: Instant,
    status: Option<Exit>,
    shared: Arc<Shared>,
    /// Each step's end, from the request to the program's `execve`.
    marks: Arc<Marks>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared")
    }
}

impl Child {
    /// Global pid of the program.
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }
    /// A pidfd that becomes readable when the program exits (for poll/epoll).
    pub fn pidfd(&self) -> RawFd {
        self.pidfd.as_raw_fd()
    }
    /// When the spawn began: when the sandbox's launcher thread took it up
    /// (a spawn may wait behind other boxes' builds before that).
    pub fn started(&self) -> Instant {
        self.started
    }
    /// How long each step of starting this program took, from
    /// [`Sandbox::spawn`]'s call to its `execve` having succeeded and the
    /// spawn's report read (`koth sandbox bench` prints their medians).
    pub fn phases(&self) -> Phases {
        self.marks.phases()
    }
    /// Send SIGKILL to this program (not to the rest of its box).
    pub fn kill(&self) -> Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        sys::pidfd_send_signal(self.pidfd.as_raw_fd(), libc::SIGKILL).map_err(|e| Error::os("killing the program", e))
    }
    /// Reap the program if it has exited, without waiting.
    pub fn try_wait(&mut self) -> Result<Option<Exit>> {
        if self.status.is_none() {
            self.status = self.shared.reap(self.pid, false)?;
            if self.status.is_some() {
                self.shared.children.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.pid);
            }
        }
        Ok(self.status)
    }
    /// Wait up to `timeout` (forever with `None`) for the program to exit.
    pub fn wait_timeout(&mut self, timeout: Option<Duration>) -> Result<Option<Exit>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
        let mut pfd = libc::pollfd { fd: self.pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd on the program's pidfd, borrowed for the call.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(Error::last_os("poll on the program's pidfd"));
        }
        self.try_wait()
    }
    /// Wait for the program to exit.
    pub fn wait(&mut self) -> Result<Exit> {
        loop {
            if let Some(e) = self.wait_timeout(None)? {
                return Ok(e);
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        let _ = sys::pidfd_send_signal(self.pidfd.as_raw_fd(), libc::SIGKILL);
        // If it is frozen it cannot die yet; the box reaps it at teardown.
        if let Ok(Some(_)) = self.try_wait() {
            return;
        }
        if self.shared.destroyed.load(Ordering::SeqCst) {
            let _ = self.shared.reap(self.pid, true);
        }
        let mut children = self.shared.children.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(children.get(&self.pid), Some(Some(_))) {
            children.remove(&self.pid);
        }
    }
}

/// Read the holder's answer to the oldest command of `unacknowledged` from
/// the control socket `fd`, waiting at most `wait_ms`: `Ok(false)` if none
/// came in that time and `wait_ms` is 0 (it is on its way), an error if
/// the holder died, answered out of order or not within a wait.
/// The answer is read without waiting first (`MSG_DONTWAIT`): usually it
/// is there, and one call does; `poll` only when it is not.
fn read_ack(fd: RawFd, unacknowledged: &mut std::collections::VecDeque<u8>, wait_ms: libc::c_int) -> Result<bool> {
    let holder_failed = || Error::Config("the box's holder did not answer (it died, or the machine is stalled)".into());
    let mut ack = [0u8; 1];
    // SAFETY: receives at most one byte into the one-byte `ack`.
    let mut got = unsafe { libc::recv(fd, ack.as_mut_ptr().cast(), 1, libc::MSG_DONTWAIT) };
    if got < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN) {
        if wait_ms == 0 {
            return Ok(false);
        }
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, borrowed for the call.
        if unsafe { libc::poll(&mut pfd, 1, wait_ms) } != 1 {
            return Err(holder_failed());
        }
        // SAFETY: as above.
        got = unsafe { libc::recv(fd, ack.as_mut_ptr().cast(), 1, libc::MSG_DONTWAIT) };
    }
    // 0: the holder closed its end (it died).
    if got != 1 || Some(&ack[0]) != unacknowledged.front() {
        return Err(holder_failed());
    }
    unacknowledged.pop_front();
    Ok(true)
}

/// Send SIGSTOP to every thread of process `pid`, not only to the process:
/// the kernel hands a process-wide signal to one thread, preferably the
/// main one, and when that thread is asleep (a bot blocked reading its next
/// request) it must first be scheduled before the group stop reaches the
/// others, while they keep running. A running thread that is signalled
/// itself is interrupted at once, and its group stop then stops the rest.
/// SIGCONT later discards the extra pending stops.
fn stop_every_thread(pid: libc::pid_t) {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        // SAFETY: kill(2) on a pid of the box's cgroup; one that has exited
        // since the read makes it fail, harmlessly.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        return;
    };
    for tid in threads.flatten().filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok()) {
        // SAFETY: tgkill(2) names the thread by its process too, so a
        // thread that exited and whose id was reused elsewhere is not hit.
        unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, libc::SIGSTOP) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this test can make mount namespaces: as root only, which CI
    /// is, so that there a run as anyone else fails instead of skipping.
    fn as_root() -> bool {
        if Privilege::current().is_root() {
            return true;
        }
        assert!(std::env::var_os("CI").is_none(), "CI runs the tests as root: these make mount namespaces");
        eprintln!("skipped: making mount namespaces needs root");
        false
    }

    /// This process's descriptors of mount namespaces.
    fn mount_namespaces_open() -> Vec<String> {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .map(|l| l.to_string_lossy().into_owned())
            .filter(|l| l.starts_with("mnt:"))
            .collect()
    }

    /// A maker that fails after it has opened its namespace (here: its
    /// tmpfs's mount point does not exist) says at which step, and leaves
    /// no descriptor of it open.
    #[test]
    fn a_template_maker_that_fails_says_where_and_leaves_nothing_open() {
        if !as_root() {
            return;
        }
        let e = on_launcher(|| spawn::make_template(c"/nonexistent/koth-template-test")).unwrap_err().to_string();
        assert!(e.contains("failed at mounting its tmpfs") && e.contains("No such file or directory"), "{e}");
        assert_eq!(mount_namespaces_open(), Vec::<String>::new());
    }

    /// The template is made at the first box built by root; when making it
    /// fails, that box says why and the next one makes it: a failure is
    /// never kept for the process's life (a runner that ran short of
    /// descriptors for a moment would have refused every box after). Here
    /// the process is out of descriptors when its maker opens the
    /// namespace, then has them again. Run in a process of its own (this
    /// test binary again, this test alone): the template is made once a
    /// process.
    #[test]
    fn a_template_that_could_not_be_made_is_made_at_the_next_box() {
        if !as_root() {
            return;
        }
        if std::env::var_os("KOTH_TEMPLATE_TEST_CHILD").is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "sandbox::tests::a_template_that_could_not_be_made_is_made_at_the_next_box", "--nocapture"])
                .env("KOTH_TEMPLATE_TEST_CHILD", "1")
                .output()
                .unwrap();
            let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success() && said.contains("1 passed"), "the test's own process failed: {said}");
            return;
        }
        let runtime = std::env::temp_dir().join(format!("koth-template-test-{}", std::process::id()));
        // The launcher threads start before the limit, as in a runner
        // that has built boxes.
        on_launcher(|| ());
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit fills the live struct it is given.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) }, 0);
        let lowest_free = File::open("/dev/null").unwrap().as_raw_fd();
        let short = libc::rlimit { rlim_cur: lowest_free as libc::rlim_t, rlim_max: limit.rlim_max };
        // SAFETY: setrlimit reads the live struct it is given; this process
        // is this test's alone.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &short) }, 0);
        let failed = template_namespace(&runtime);
        // SAFETY: as above.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
        let e = failed.expect_err("the template was made with no descriptor free").to_string();
        assert!(e.contains("failed at opening its mount namespace") && e.contains("Too many open files"), "{e}");
        assert_eq!(mount_namespaces_open(), Vec::<String>::new());

        // The next boxes, eight at once: one makes it, the others wait
        // for it and take the same.
        let made: Vec<RawFd> = std::thread::scope(|s| {
            let askers: Vec<_> = (0..8).map(|_| s.spawn(|| template_namespace(&runtime).expect("the template, at the next box"))).collect();
            askers.into_iter().map(|a| a.join().unwrap()).collect()
        });
        let fd = made[0];
        assert!(made.iter().all(|&f| f == fd), "boxes at once got different templates: {made:?}");
        let ns = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
        assert!(ns.to_string_lossy().starts_with("mnt:"), "{ns:?}");
        assert_ne!(ns, std::fs::read_link("/proc/self/ns/mnt").unwrap(), "the template is this process's own namespace");
        assert_eq!(template_namespace(&runtime).unwrap(), fd, "made once, then kept");
        assert_eq!(mount_namespaces_open().len(), 1);
        let _ = std::fs::remove_dir(&runtime);
    }
}
