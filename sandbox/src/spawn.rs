//! Starting a program in a live box: the steps between the supervisor's
//! request and the program's `execve`.
//!
//! # Design
//!
//! ```text
//!  launcher thread ──clone(VM, VFORK)──▶ joiner ──clone(VM, PARENT, VFORK)──▶ program
//!   (waits for the joiner's exit,         setns(holder pidfd)                    setsid, streams, rlimits,
//!    then for the report pipe's           join the box's cgroup (v1)             uid/gid, no caps,
//!    end of file)                         waits for the program's execve,        no_new_privs, Landlock,
//!                                         exits                                  seccomp, execve
//! ```
//!
//! On cgroup v2 the joiner forks the program straight into the box's
//! cgroup (`clone3` with `CLONE_INTO_CGROUP`) and never joins it itself: a
//! move into a cgroup waits for an RCU grace period when no other move
//! ended within the last one (milliseconds, paid by every program started
//! after a quiet spell: a per-turn bot after its opponents' think time),
//! and a fork into one does not. v1 has no such fork: there the joiner
//! moves itself in through each hierarchy's `tasks` file, as the single
//! thread it is, which the kernel does without its global threadgroup
//! lock, so without that wait either (a move through `cgroup.procs` takes
//! the lock: it moves a whole process, whose threads must hold still). On
//! a v2 kernel without `CLONE_INTO_CGROUP` (before 5.7) the joiner moves
//! itself in through `cgroup.procs` and forks.
//!
//! Two processes are needed: `setns` into a mount namespace is refused to a
//! multi-threaded process, and a PID namespace is entered only by the
//! *children* of the process that joins it. So a *joiner* joins the box's
//! namespaces and cgroup, and clones the program, which is the supervisor's
//! child (`CLONE_PARENT`, so the supervisor reaps it and it dies with the
//! launcher thread through `PR_SET_PDEATHSIG`) and pid N of the box.
//!
//! Both are cloned with `CLONE_VM` and `CLONE_VFORK`, as `posix_spawn`
//! does: they run on the supervisor's memory, the joiner waits until the
//! program has exec'd or exited, and the launcher thread until the joiner
//! has exited (and then reads the program's close-on-exec report pipe to
//! its end of file). The program's `CLONE_VFORK` is what keeps the box's
//! memory limit from killing the supervisor: until its `execve` the program
//! shares the supervisor's memory while it is already in the box's memory
//! cgroup, and an OOM killer that picked it (rating it by that memory)
//! would kill every process sharing it; the kernel never picks the vfork
//! child of a process sharing its memory while that one waits
//! (`in_vfork()` in `oom_badness`). A `fork` would copy the supervisor's page
//! tables twice per program (a runner holds tens to hundreds of MiB) and
//! then pay a copy-on-write fault for every page the supervisor touches
//! while the copies live; a game that starts a process per turn pays this
//! every turn. The price is discipline in the two children, which share
//! every byte with a supervisor whose other threads keep running:
//!
//! * **No allocation, no locks.** Everything a child needs (argument and
//!   environment pointer arrays, descriptors, limits, the seccomp program,
//!   the Landlock ruleset) is built by the launcher thread before the
//!   clone ([`Prepared`]); the children only make system calls and write to
//!   their own stacks, which are the launcher thread's ([`Stacks`]), idle
//!   while it waits. A failure, and the program's pid, are written to
//!   [`Prepared`] itself, which the supervisor reads once the child is gone
//!   ([`Prepared::fail`]): no pipe. A pipe's write allocates a page,
//!   charged to the writer's memory cgroup, which is the box's by then; a
//!   box at its limit failed it (`ENOMEM`), and the spawn lost the
//!   program's pid (it reported "starting the program failed: Success").
//!   The report pipe's end of file, which allocates nothing, is what says
//!   that the program has exec'd or died.
//! * **Raw system calls where glibc would act for the whole process.**
//!   In a multi-threaded process glibc's `setgroups`, `setresgid` and
//!   `setresuid` take its thread-list lock and ask every thread it knows of
//!   to change its ids too: from a child that shares the memory, that lock
//!   may be held by a supervisor thread for ever. The children call the
//!   kernel directly. Capabilities are cleared and checked with
//!   `capset`/`capget` (the `caps` crate allocates).
//! * **No signal handler runs in a child.** Every signal is blocked on the
//!   launcher thread across the clones, so both children start with every
//!   signal blocked; the program resets every handled signal to its default
//!   (its own table, not the supervisor's: no `CLONE_SIGHAND`) and only then
//!   takes the launcher's original mask back, right before `execve`. Ignored
//!   signals stay ignored, as across any `execve`.
//! * **Its own files and folder.** Neither child shares the supervisor's
//!   descriptor table or root and working folder (no `CLONE_FILES`, no
//!   `CLONE_FS`): `setns` into a mount namespace requires that, and the
//!   program's `dup2`s and `chdir` stay its own.
//!
//! The steps of the program are [`Stage`]s, in order; a failed step is
//! reported by its name.
//!
//! # The box's memory limit and the supervisor
//!
//! The OOM killer of a box's memory cgroup rates each task in it by the
//! memory it runs on, and when it kills one it kills every process
//! sharing that memory. A child of the supervisor in the box's memory
//! cgroup before its `execve` runs on the supervisor's memory: picked, it
//! would take the supervisor (a runner, with every match it plays) with
//! it. The kernel spares a vfork child whose parent shares its memory
//! (`in_vfork()` in `oom_badness`), but only until the child lets its
//! parent go, which it does as it *exits* or *execs*, before it lets go of
//! the memory (`mm_release`, then the switch of memory, which waits for the
//! supervisor's memory map lock whenever another thread of the supervisor
//! maps or unmaps memory). So:
//!
//! * **The joiner never exits in the box's memory cgroup.** On v1 it joins
//!   every hierarchy but memory's, and the program joins that one itself,
//!   as its first step ([`ExecPlan::join_memory`]), as the joiner's vfork
//!   child; on v2 the program is forked into the box's cgroup, and a joiner
//!   that had to move itself in (the fallback) moves back out before it
//!   exits ([`ExecPlan::leave`]).
//! * **A child that fails goes back to the supervisor's memory cgroup
//!   before it exits** ([`Prepared::fail`]): a spawn into a full box fails
//!   at its fork, its Landlock or its `execve`, exactly while the box's
//!   other programs meet its limit.
//!
//! Before these, the `racing` supervisor of `sandbox/tests/hostile.rs`
//! (spawns at once into a full box, on a host busy with a build) was
//! killed by its box's OOM killer in 5 of 100 runs, the killed task a
//! joiner (uid 0) twice and a program (the box's uid) three times; with
//! them, in 3 of 140, a program each time (`docs/sandbox.md`). What is
//! left, that no step of a spawn can close: a program's `execve` between
//! its parent's release and its switch to the new program's memory (the
//! program's own code runs next), and a program killed by a signal before
//! its `execve` (the box's programs killed at a spawn's deadline). The
//! first is as wide as the wait for the supervisor's memory map lock;
//! closing it needs the first `execve` made outside the box's memory
//! cgroup, or spawns made by a process of their own with little memory.
//!
//! # A parked first program
//!
//! Most of a program's start does not depend on what it runs: joining the
//! box, the session, the work folder, limits, ids, capabilities,
//! `no_new_privs`, Landlock, seccomp, the signal handlers. For a box built
//! ahead of need ([`crate::BoxPool`]) those are done ahead too: [`park`]
//! starts a program as [`launch`] does, with no argument vector and no
//! streams yet, and it goes through every step up to its `execve`, closes
//! every inherited descriptor but its end of a socket pair, says it is
//! parked (one byte) and waits in `recvmsg` (which its seccomp filter
//! allows, as it allows everything it does next). The box's first spawn
//! ([`ParkedProgram::start`], on the caller's thread: no launcher thread)
//! points it at the argument and environment arrays and the paths to try
//! (shared memory: a pointer stored before the message, read after it),
//! and sends one byte with the three streams (`SCM_RIGHTS`). The program
//! puts them on 0-2, takes the launcher's signal mask back and execs; the
//! caller waits for the socket's end of file as [`launch`] waits for the
//! report pipe's. A failure is recorded as any program's ([`Prepared::fail`]).
//!
//! The parked program shares the supervisor's memory for as long as it
//! waits, so it runs on a stack and plan of its own (owned by the
//! [`ParkedProgram`], not the launcher thread's), freed only once it has
//! let go of that memory: its socket's end of file (its `execve` or its
//! death; a process's descriptors are closed after its memory is let go of)
//! or, when it is dropped unused, its exit, awaited on its pidfd after a
//! `SIGKILL`. It is already in the box (its cgroup, its PID namespace, as
//! pid 2): `Sandbox::pids` lists it, a freeze stops it, a kill ends it; its
//! own CPU time is koth's and is not counted as the box's
//! (`Sandbox::cpu_usage` starts from after it). A parked program that
//! died before its start (killed from outside the box; nothing in the box
//! runs before it) is reaped, and the program is started as any other.
//!
//! A parked program is nobody's vfork child, so the OOM killer's exemption
//! of the module's design does not cover it. It is alone in its box until
//! it execs: `Sandbox::spawn` starts nothing else in the box while it
//! starts, and gives it only programs whose arguments and environment fit
//! in a quarter of the box's memory ([`fits_a_parked_start`]); for others
//! it is killed and the program started as any other.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU64, Ordering};

use crate::marks::Marks;
use crate::mounts::{self, MountPaths};
use crate::seccomp::Filter;
use crate::{landlock_rules, sys, Error, Result};

pub(crate) const BOX_NAMESPACES: libc::c_int =
    libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;

/// What to run: the program's arguments, environment and streams.
pub(crate) struct Program {
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    /// Paths to try in order (the program's `PATH` search, done here).
    pub candidates: Vec<CString>,
    pub stdio: [OwnedFd; 3],
}

/// Everything the program needs, built by the caller before the launcher
/// thread runs it.
pub(crate) struct ExecPlan {
    /// What to run; `None` for a program parked before its `execve` (see
    /// [`park`]), which is sent what to run when it is started.
    pub program: Option<Program>,
    /// The write end of the spawn report (close-on-exec), whose end of
    /// file says the program has exec'd or died: the children's copies;
    /// the launcher's own is [`launch`]'s to close. A parked program's is
    /// its end of the socket it waits on.
    pub err_w: RawFd,
    pub holder_pidfd: RawFd,
    /// `tasks` of each of the box's v1 cgroups but memory's, or its v2
    /// `cgroup.procs` (`Group::join_fds`): the joiner's.
    pub join: Vec<RawFd>,
    /// `tasks` of the box's v1 memory cgroup, which the program joins
    /// itself (`Group::memory_join_fd`; "The box's memory limit and the
    /// supervisor", above).
    pub join_memory: Option<RawFd>,
    /// The supervisor's own memory cgroup, where a child that fails goes
    /// back before it exits (`Group::leave_fd`; the same section).
    pub leave: Option<RawFd>,
    /// The box's v2 cgroup directory: the program is forked into it
    /// (`clone3`, `CLONE_INTO_CGROUP`) rather than its joiner moved there
    /// through `join`, which is the fallback (and v1's only way).
    pub into_cgroup: Option<RawFd>,
    pub uid: u32,
    pub gid: u32,
    /// A rootless box: its namespaces are owned by a user namespace of its
    /// own, which the joiner enters first (see `crate::Privilege`).
    pub user_namespace: bool,
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    pub cap_last_cap: u32,
    pub landlock: Option<RawFd>,
    pub seccomp: &'static Filter,
    /// Where each step's end is marked (`crate::marks`), by every process
    /// of the launch.
    pub marks: std::sync::Arc<Marks>,
}

/// The steps a program goes through between the clone and its `execve`, in
/// order: a step that fails is recorded ([`Prepared::fail`]), and the
/// supervisor says which one failed by its name (`Stage::text`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    JoinNamespaces,
    JoinCgroup,
    Fork,
    Setsid,
    Streams,
    WorkFolder,
    Rlimits,
    BoundingSet,
    Groups,
    Gid,
    Uid,
    ClearCaps,
    CapsRemain,
    DeathSignal,
    NoNewPrivs,
    Landlock,
    Seccomp,
    Signals,
    Parked,
    Exec,
}

impl Stage {
    pub(crate) const ALL: [Stage; 20] = [
        Stage::JoinNamespaces,
        Stage::JoinCgroup,
        Stage::Fork,
        Stage::Setsid,
        Stage::Streams,
        Stage::WorkFolder,
        Stage::Rlimits,
        Stage::BoundingSet,
        Stage::Groups,
        Stage::Gid,
        Stage::Uid,
        Stage::ClearCaps,
        Stage::CapsRemain,
        Stage::DeathSignal,
        Stage::NoNewPrivs,
        Stage::Landlock,
        Stage::Seccomp,
        Stage::Signals,
        Stage::Parked,
        Stage::Exec,
    ];

    pub(crate) fn text(self) -> &'static str {
        match self {
            Stage::JoinNamespaces => "joining the box namespaces (setns, which needs CAP_SYS_ADMIN and CAP_SYS_CHROOT)",
            Stage::JoinCgroup => "joining the box cgroup",
            Stage::Fork => "forking the program",
            Stage::Setsid => "setsid",
            Stage::Streams => "redirecting standard streams",
            Stage::WorkFolder => "entering the work folder",
            Stage::Rlimits => "setting resource limits",
            Stage::BoundingSet => "dropping the capability bounding set",
            Stage::Groups => "dropping supplementary groups",
            Stage::Gid => "switching to the box's gid",
            Stage::Uid => "switching to the box's uid",
            Stage::ClearCaps => "clearing capabilities",
            Stage::CapsRemain => "capabilities remain after dropping them",
            Stage::DeathSignal => "setting the parent-death signal",
            Stage::NoNewPrivs => "setting no_new_privs",
            Stage::Landlock => "applying Landlock",
            Stage::Seccomp => "installing the seccomp filter",
            Stage::Signals => "resetting signal handlers",
            Stage::Parked => "receiving the program's streams (a parked program's recvmsg)",
            Stage::Exec => "execve",
        }
    }
}

/// What a spawn that missed its deadline failed at (see `Sandbox::spawn`).
pub(crate) const OVERDUE: &str =
    "reaching execve in time (something in the box stopped the program on its way; the box's programs were killed)";

/// Why a program did not start: the step that failed (a [`Stage`]'s text,
/// or [`OVERDUE`]) and the error it met.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) stage: &'static str,
    pub(crate) source: io::Error,
}

/// What the children read: the plan, what to run with its pointer arrays
/// built, and the signal mask the program must start with.
struct Prepared {
    /// The plan, alive until the program has exec'd or died: on the
    /// launcher's frame ([`launch`]), or owned with this by a
    /// [`ParkedProgram`].
    plan: *const ExecPlan,
    /// What to run: set before the clone ([`launch`]), or by whoever
    /// starts a parked program, before it sends the streams
    /// ([`ParkedProgram::start`]).
    start: AtomicPtr<Start>,
    mask: libc::sigset_t,
    program_stack: *mut libc::c_void,
    /// Set by the joiner before it forks the program into the box's
    /// cgroup, cleared when that fails: the program's first step says how
    /// it got there.
    forked_into_cgroup: std::sync::atomic::AtomicBool,
    /// The program's pid, set by the joiner once it has cloned it (0 until
    /// then).
    program_pid: AtomicI32,
    /// The failed step of the joiner or the program and its errno
    /// ([`Prepared::fail`]); 0 while none failed.
    failure: AtomicU64,
}

impl Prepared {
    fn new(plan: &ExecPlan, start: *mut Start, program_stack: *mut libc::c_void) -> Prepared {
        Prepared {
            plan,
            start: AtomicPtr::new(start),
            // SAFETY: sigset_t is plain data; `run_joiner` fills it in.
            mask: unsafe { std::mem::zeroed() },
            program_stack,
            forked_into_cgroup: std::sync::atomic::AtomicBool::new(false),
            program_pid: AtomicI32::new(0),
            failure: AtomicU64::new(0),
        }
    }

    /// In the joiner or the program: record that `stage` failed with `err`,
    /// and exit. Only an atomic store into the memory the child shares with
    /// the supervisor: nothing is allocated, by the child or by the kernel
    /// on its behalf (a pipe's write would be, in the box's memory cgroup).
    ///
    /// The child first goes back to the supervisor's own memory cgroup
    /// ([`leave_the_box_memory`]): it exits on the supervisor's memory.
    fn fail(&self, stage: Stage, err: io::Error) -> ! {
        let index = Stage::ALL.iter().position(|s| *s == stage).unwrap_or(Stage::ALL.len() - 1) as u64;
        let errno = err.raw_os_error().unwrap_or(0) as u32 as u64;
        self.failure.store((index + 1) << 32 | errno, Ordering::SeqCst);
        leave_the_box_memory(self.plan());
        // SAFETY: _exit ends this child at once; nothing of the parent's is touched.
        unsafe { libc::_exit(127) }
    }

    /// In the supervisor, once the children are gone (the report's end of
    /// file): the failure they recorded, if one did.
    fn failure(&self) -> Option<Failure> {
        let failure = self.failure.load(Ordering::SeqCst);
        let stage = (failure >> 32).checked_sub(1).and_then(|i| Stage::ALL.get(i as usize))?;
        Some(Failure { stage: stage.text(), source: io::Error::from_raw_os_error(failure as u32 as i32) })
    }

    /// Clone the joiner on this launcher thread's stack and wait for its
    /// exit (it clones the program, records its pid, and exits); then the
    /// program's pid, if it was cloned.
    ///
    /// # Safety
    /// `self` and what it points at (the plan, the start, the program's
    /// stack) stay valid until the program has exec'd or died, which the
    /// caller waits for (the module's rules).
    unsafe fn run_joiner(&mut self, joiner_stack: *mut libc::c_void) -> (Result<()>, Option<libc::pid_t>) {
        let arg: *mut Prepared = self;
        // SAFETY: the caller's promise; the joiner follows the module's rules.
        let joined = unsafe {
            run_child(
                joiner_main,
                arg.cast(),
                joiner_stack,
                std::ptr::addr_of_mut!((*arg).mask),
                "the spawn helper",
                libc::CLONE_VM | libc::CLONE_VFORK,
                || {},
            )
        };
        // The joiner has exited (or was never cloned): its pid record is
        // made, or never will be.
        let pid = self.program_pid.load(Ordering::SeqCst);
        (joined, (pid > 0).then_some(pid))
    }

    fn plan(&self) -> &ExecPlan {
        // SAFETY: `plan` outlives every reader of this `Prepared` (see the field).
        unsafe { &*self.plan }
    }
}

/// What to run, as `execve` takes it: pointers into a [`Program`] that
/// outlives the program's `execve`, and where its last steps are marked.
struct Start {
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    candidates: *const [CString],
    marks: *const Marks,
}

impl Start {
    fn of(program: &Program, marks: &Marks) -> Start {
        Start {
            argv: program.argv.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect(),
            envp: program.envp.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect(),
            candidates: program.candidates.as_slice(),
            marks,
        }
    }
}

/// The two children's stacks (the joiner's and the program's, or the
/// unsharer's and the holder's): the launcher thread's own, kept for its
/// life (only it clones, one program or box at a time, and it waits while
/// they run).
struct Stacks {
    outer: sys::Stack,
    inner: sys::Stack,
}

thread_local! {
    static STACKS: std::cell::OnceCell<Stacks> = const { std::cell::OnceCell::new() };
}

/// Stack of each child: room for the child's frames in a debug build, with a
/// guard page below.
const STACK_SIZE: usize = 256 << 10;

/// Runs on the launcher thread: clone the joiner, which clones the program,
/// waits for its `execve` or death and exits; then read the report pipe to
/// its end of file. Returns the program's pid (`None` if a child failed
/// before it) and, when it did not exec, the failed step.
///
/// The report pipe is close-on-exec: its end of file comes when the
/// program has exec'd (and so left the supervisor's memory, which happens
/// first in `execve`) or died. Read even when the joiner waited: it is the
/// one proof for a joiner that could not be reaped.
///
/// The joiner's wait is the price of the OOM killer's exemption (module
/// docs): on v1 the joiner has joined the box's cgroups and is woken there,
/// where the program has just started running; on v2 it is outside them
/// (the program is forked in). An earlier version let the joiner exit at
/// once for that reason (its wake-up on a busy host was 0.55 ms at the
/// median, traced at load 3-5, on the old code path); `docs/sandbox.md`
/// has the cost measured with the wait back.
pub(crate) fn launch(plan: &ExecPlan, err_w: OwnedFd, err_r: &OwnedFd) -> Result<(Option<libc::pid_t>, Option<Failure>)> {
    let (joiner_stack, program_stack) = stacks()?;
    let program = plan.program.as_ref().expect("a program started at once has its arguments");
    let mut start = Start::of(program, &plan.marks);
    let mut prepared = Prepared::new(plan, &mut start, program_stack);
    plan.marks.mark("argument and environment arrays");
    // SAFETY: `prepared` (and what it points at: `start` and `plan`) lives
    // on this frame, and the program's stack is this thread's; the program
    // uses them until its execve or exit, which `wait_for_exec` waits for
    // below, before this frame ends.
    let (joined, pid) = unsafe { prepared.run_joiner(joiner_stack) };
    plan.marks.mark("execve of the program, the joiner's exit and reaping");
    // Only the program's copy of the report's write end is left open now.
    drop(err_w);
    // Waited for even when the joiner could not be reaped: the clone
    // returned after it had gone, and a program it cloned may still be
    // running on this thread's stacks and plan.
    let unread = wait_for_exec(err_r, pid);
    plan.marks.mark("the report pipe's end of file");
    joined?;
    Ok((pid, prepared.failure().or(unread)))
}

/// Wait for the spawn report's end of file: the program has exec'd or
/// died, and so no longer runs on this thread's stacks and plan. Whatever
/// happens, this returns only then; a failure only when the wait itself
/// failed (what the children recorded is [`Prepared::failure`]).
fn wait_for_exec(err_r: &OwnedFd, pid: Option<libc::pid_t>) -> Option<Failure> {
    match read_to_end_of_file(err_r.as_raw_fd()) {
        Ok(()) => None,
        Err(e) => {
            // A blocking read of our own pipe fails only on EINTR; were it
            // ever to fail otherwise, the program is killed and reaped, so
            // that it is gone before its plan is.
            if let Some(pid) = pid {
                // SAFETY: kill with a pid of our own child and a signal number.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let _ = sys::waitpid(pid, 0);
            }
            Some(Failure { stage: WAITING_FOR_EXEC, source: e })
        }
    }
}

/// What a spawn failed at when the wait for its program's `execve` did.
const WAITING_FOR_EXEC: &str = "waiting for the program's execve (reading the spawn report)";

/// Read `fd` to its end of file (the children write nothing on it: its end
/// is the news), or the error that ended the read (EINTR is retried).
fn read_to_end_of_file(fd: RawFd) -> io::Result<()> {
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: reads at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        match n {
            0 => return Ok(()),
            n if n > 0 => {}
            _ => match io::Error::last_os_error() {
                e if e.raw_os_error() == Some(libc::EINTR) => {}
                e => return Err(e),
            },
        }
    }
}

/// Whether `program` may be started by a box's parked program, in a box
/// whose memory limit is `memory` bytes.
///
/// Until its `execve` has left the supervisor's memory, a program that is
/// nobody's vfork child may be picked by the box's OOM killer, which rates
/// it by that memory and kills every process sharing it: the supervisor.
/// A parked program is such a program (its joiner cannot wait for it), and
/// it is alone in its box (`Sandbox::spawn` starts nothing beside it), but
/// its own `execve` charges the box with a copy of its arguments and
/// environment before it leaves that memory (the kernel allows up to 6
/// MiB). So it is used only when they take at most a quarter of the box's
/// memory, leaving at least 3 MiB at the smallest limit (4 MiB) for what
/// the box held (0.5 MiB measured on a parked box) and the `execve`'s own
/// allocations. Larger ones are started as any other program, a vfork
/// child, whose `execve` fails with `E2BIG` where they do not fit.
pub(crate) fn fits_a_parked_start(program: &Program, memory: u64) -> bool {
    let pointer = std::mem::size_of::<*const libc::c_char>();
    let strings: usize = program.argv.iter().chain(&program.envp).map(|s| s.as_bytes_with_nul().len() + pointer).sum();
    let path = program.candidates.iter().map(|c| c.as_bytes_with_nul().len()).max().unwrap_or(0);
    (strings + path) as u64 <= memory / 4
}

/// The joiner: into the box's namespaces and cgroup, then clone the program.
extern "C" fn joiner_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the launcher's `Prepared`, alive while this child runs (the launcher waits).
    let prepared = unsafe { &*(arg as *const Prepared) };
    let plan = prepared.plan();
    plan.marks.mark("cloning the joiner (clone, CLONE_VM | CLONE_VFORK)");
    let namespaces = if plan.user_namespace { BOX_NAMESPACES | libc::CLONE_NEWUSER } else { BOX_NAMESPACES };
    // SAFETY: `holder_pidfd` is the box holder's pidfd, open for the plan's life.
    if unsafe { libc::setns(plan.holder_pidfd, namespaces) } < 0 {
        prepared.fail(Stage::JoinNamespaces, io::Error::last_os_error());
    }
    plan.marks.mark("joining the box's namespaces (setns)");
    // On v2 the program is forked into the box's cgroup: no move, so no
    // wait for the kernel's RCU grace period that a move into a cgroup
    // pays after a quiet spell (`sys::clone3_into_cgroup`). Where that
    // fails (a kernel before 5.7), the joiner moves itself in and forks.
    // A program started at once is this joiner's vfork child: the joiner
    // waits for its `execve` (or death), and until then the kernel's OOM
    // killer never picks it (`in_vfork()` in `oom_badness`), where it would
    // rate it by the supervisor's memory, which it shares, and kill every
    // process sharing it with it: the supervisor. A parked program cannot
    // be waited for here (it waits for its start); it is alone in its box
    // until it execs, so no other program of the box can fill its memory.
    let vfork = if plan.program.is_some() { libc::CLONE_VFORK } else { 0 };
    let mut cloned = Err(io::Error::from_raw_os_error(libc::ENOSYS));
    if let Some(cgroup) = plan.into_cgroup {
        prepared.forked_into_cgroup.store(true, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: as for the clone below.
        cloned = unsafe {
            sys::clone3_into_cgroup(
                program_main,
                arg,
                prepared.program_stack,
                STACK_SIZE,
                libc::CLONE_VM | libc::CLONE_PARENT | vfork,
                cgroup,
            )
        };
        if cloned.is_err() {
            // No program was made: nothing else reads the flag.
            prepared.forked_into_cgroup.store(false, std::sync::atomic::Ordering::Relaxed);
        }
    }
    // Whether this joiner moved itself into the box's memory cgroup: only
    // in v2's fallback (on v1 the program joins memory itself).
    let mut in_box_memory = false;
    if cloned.is_err() {
        in_box_memory = plan.join_memory.is_none();
        for &fd in &plan.join {
            // SAFETY: `fd` is an open `tasks` or `cgroup.procs` file of the box; a one-byte buffer that lives for the call.
            if unsafe { libc::pwrite(fd, b"0".as_ptr().cast(), 1, 0) } < 0 {
                prepared.fail(Stage::JoinCgroup, io::Error::last_os_error());
            }
        }
        plan.marks.mark("joining the box's cgroups (tasks on v1, but memory's; cgroup.procs on v2)");
        // SAFETY: as for the joiner: the program runs on the other stack and
        // reads `prepared`, alive until the launcher has seen the program's
        // execve or exit (`launch`), and follows the module's rules. This
        // joiner then only writes the pid, from its own stack, and exits.
        cloned = unsafe { sys::clone_with_stack(program_main, arg, prepared.program_stack, libc::CLONE_VM | libc::CLONE_PARENT | vfork) };
    }
    match cloned {
        Err(e) => prepared.fail(Stage::Fork, e),
        Ok(pid) => {
            prepared.program_pid.store(pid, Ordering::SeqCst);
            // It exits out of the box's memory cgroup (the module docs).
            if in_box_memory {
                leave_the_box_memory(plan);
            }
            // SAFETY: the joiner's work is done; _exit skips destructors that belong to the supervisor.
            unsafe { libc::_exit(0) }
        }
    }
}

/// In a child sharing the supervisor's memory, before it exits: move it
/// back to the supervisor's own memory cgroup (a failed write is ignored:
/// it exits all the same). See "The box's memory limit and the
/// supervisor" in the module docs: a child that exits is no longer a
/// vfork child, and until the kernel has taken the supervisor's memory
/// from it, the box's OOM killer could pick it and kill the supervisor.
fn leave_the_box_memory(plan: &ExecPlan) {
    if let Some(fd) = plan.leave {
        // SAFETY: `fd` is the supervisor's memory cgroup's `tasks` or
        // `cgroup.procs`, open for the plan's life; a one-byte buffer that
        // lives for the call.
        unsafe { libc::pwrite(fd, b"0".as_ptr().cast(), 1, 0) };
    }
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// The program: confine itself, then `execve`.
extern "C" fn program_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: as in `joiner_main`.
    let prepared = unsafe { &*(arg as *const Prepared) };
    let plan = prepared.plan();
    let fail = |stage: Stage| -> ! { prepared.fail(stage, io::Error::last_os_error()) };
    let mark = |step: &'static str| plan.marks.mark(step);
    mark(match (prepared.forked_into_cgroup.load(std::sync::atomic::Ordering::Relaxed), plan.program.is_some()) {
        (true, true) => "cloning the program into the box's cgroup (clone3, CLONE_VM | CLONE_PARENT | CLONE_VFORK | CLONE_INTO_CGROUP)",
        (true, false) => "cloning the program into the box's cgroup (clone3, CLONE_VM | CLONE_PARENT | CLONE_INTO_CGROUP)",
        (false, true) => "cloning the program (clone, CLONE_VM | CLONE_PARENT | CLONE_VFORK)",
        (false, false) => "cloning the program (clone, CLONE_VM | CLONE_PARENT)",
    });
    // v1: the box's memory cgroup is joined here, by the program, a vfork
    // child of its joiner, never by the joiner, which would exit in it
    // ("The box's memory limit and the supervisor").
    if let Some(fd) = plan.join_memory {
        // SAFETY: `fd` is the box's memory cgroup's `tasks`, open for the plan's life; a one-byte buffer that lives for the call.
        if unsafe { libc::pwrite(fd, b"0".as_ptr().cast(), 1, 0) } < 0 {
            fail(Stage::JoinCgroup);
        }
        mark("joining the box's memory cgroup (tasks, v1)");
    }
    // SAFETY: system calls with integer arguments, or pointers into `plan`
    // and `prepared` (alive, see `joiner_main`) and static C strings. Ids
    // are changed by raw system calls: glibc's wrappers act on every thread
    // of the process, under a lock (module docs).
    unsafe {
        if libc::setsid() < 0 {
            fail(Stage::Setsid);
        }
        // No priority of its own: a program in a box runs at the host's
        // ordinary priority, like everything else there. Lowering it (nice
        // 19) shortened the supervisor's wake-up by ~20 µs a move, but let
        // any busy program on the host take nearly all of a core from a bot
        // whose clock is running (runner/tests/adversarial.rs,
        // a_busy_host_does_not_starve_the_bots).
        // A parked program is sent its streams when it is started.
        for (target, fd) in plan.program.iter().flat_map(|p| p.stdio.iter().enumerate()) {
            if libc::dup2(fd.as_raw_fd(), target as RawFd) < 0 {
                fail(Stage::Streams);
            }
        }
        // Every inherited descriptor but the three streams closes at execve.
        libc::syscall(libc::SYS_close_range, 3 as libc::c_uint, libc::c_uint::MAX, 4 as libc::c_uint);
        if libc::chdir(c"/home/bot".as_ptr()) < 0 {
            fail(Stage::WorkFolder);
        }
        libc::umask(0o022);
        mark("session, streams, work folder");
        for &(res, value) in &plan.rlimits {
            let lim = libc::rlimit { rlim_cur: value, rlim_max: value };
            if libc::setrlimit(res, &lim) < 0 {
                fail(Stage::Rlimits);
            }
        }
        mark("resource limits (setrlimit)");
        // The launcher thread's set holds CAP_KILL alone (`launcher`), so
        // this reads every capability and drops the one left; a drop
        // commits new credentials (about 1 µs each), a read does not. Where
        // the launcher could not narrow its own (no CAP_SETPCAP), every
        // capability is dropped here, as before.
        for cap in 0..=plan.cap_last_cap {
            match libc::prctl(libc::PR_CAPBSET_READ, cap as libc::c_ulong, 0, 0, 0) {
                0 => {}
                1 if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) == 0 => {}
                _ => fail(Stage::BoundingSet),
            }
        }
        mark("capability bounding set (read each, drop what is left)");
        // In a rootless box's user namespace the kernel refuses setgroups
        // for good (`/proc/self/setgroups` is "deny"): the user's groups stay.
        if !plan.user_namespace && libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>()) < 0 {
            fail(Stage::Groups);
        }
        if libc::syscall(libc::SYS_setresgid, plan.gid, plan.gid, plan.gid) < 0 {
            fail(Stage::Gid);
        }
        if libc::syscall(libc::SYS_setresuid, plan.uid, plan.uid, plan.uid) < 0 {
            fail(Stage::Uid);
        }
        mark("groups, gid, uid");
        // Leaving uid 0 already emptied the permitted and effective sets (a
        // rootless program still has the full set that entering the box's
        // user namespace gave it); clear the rest and check. The ambient set
        // is always a subset of permitted and inheritable (the kernel keeps
        // it so), so it is empty once they are; it is cleared first all the
        // same.
        let mut header = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
        let mut data = [CapData::default(); 2];
        if libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong, 0, 0, 0) < 0
            || libc::syscall(libc::SYS_capset, &mut header as *mut CapHeader, data.as_ptr()) < 0
        {
            fail(Stage::ClearCaps);
        }
        data = [CapData { effective: !0, permitted: !0, inheritable: !0 }; 2];
        if libc::syscall(libc::SYS_capget, &mut header as *mut CapHeader, data.as_mut_ptr()) < 0
            || data.iter().any(|d| d.effective | d.permitted | d.inheritable != 0)
        {
            prepared.fail(Stage::CapsRemain, io::Error::from_raw_os_error(libc::EPERM));
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) < 0 {
            fail(Stage::DeathSignal);
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 {
            fail(Stage::NoNewPrivs);
        }
    }
    mark("capabilities cleared, death signal, no_new_privs");
    if let Some(fd) = plan.landlock {
        if let Err(e) = landlock_rules::restrict_self(fd) {
            prepared.fail(Stage::Landlock, e);
        }
    }
    mark("Landlock (landlock_restrict_self)");
    if let Err(e) = plan.seccomp.install() {
        prepared.fail(Stage::Seccomp, e);
    }
    mark("seccomp filter");
    // SAFETY: signal calls on this process's own table and mask, with
    // sigaction values on this stack; `prepared.mask` is the launcher's saved
    // mask.
    unsafe {
        for sig in 1..=libc::SIGRTMAX() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            // glibc refuses its own two internal signals: those are only
            // ever sent to the supervisor's threads, never to this process.
            if libc::sigaction(sig, std::ptr::null(), &mut old) < 0 {
                continue;
            }
            if old.sa_sigaction != libc::SIG_IGN && old.sa_sigaction != libc::SIG_DFL {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                if libc::sigaction(sig, &dfl, std::ptr::null_mut()) < 0 {
                    fail(Stage::Signals);
                }
            }
        }
    }
    mark("signal handlers");
    if plan.program.is_none() {
        wait_to_start(prepared, plan.err_w);
    }
    // SAFETY: set before the clone, or by the waker before it sent the
    // streams (`wait_to_start`); it outlives this program's execve.
    let start = unsafe { &*prepared.start.load(Ordering::Acquire) };
    // SAFETY: the launcher's saved mask, a live sigset_t; this process's own mask.
    if unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &prepared.mask, std::ptr::null_mut()) } != 0 {
        fail(Stage::Signals);
    }
    // SAFETY: the start's marks outlive this program's execve (`Start`).
    unsafe { &*start.marks }.mark("signal mask");
    let mut last = io::Error::from_raw_os_error(libc::ENOENT);
    // SAFETY: the start's candidates outlive this program's execve (`Start`).
    for path in unsafe { &*start.candidates } {
        // SAFETY: `argv` and `envp` are NULL-terminated arrays of pointers into CStrings of the program's, alive across the call; so is `path`.
        unsafe { libc::execve(path.as_ptr(), start.argv.as_ptr(), start.envp.as_ptr()) };
        last = io::Error::last_os_error();
        if !matches!(last.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::EACCES)) {
            break;
        }
    }
    prepared.fail(Stage::Exec, last)
}

/// The byte a program writes on its socket once it is parked (one that
/// fails on its way writes nothing: [`Prepared::fail`]).
const PARKED: u8 = 0;

/// A parked program's wait: say it is parked, then wait for its streams,
/// sent with `SCM_RIGHTS` by [`ParkedProgram::start`] once it has set
/// `prepared.start`, and make them the program's own. The end of file
/// (the box dropped unused) ends the program.
fn wait_to_start(prepared: &Prepared, sock: RawFd) {
    let fail = |stage: Stage, e: io::Error| -> ! { prepared.fail(stage, e) };
    // Every inherited descriptor but its socket is closed now, not at its
    // execve: it may wait for long, and a copy of another spawn's report
    // pipe, of a bot's stream or of whatever the supervisor has on 0-2
    // held meanwhile would keep their readers from seeing their end of
    // file.
    // SAFETY: close_range takes plain integers; it closes this child's own descriptors (no CLONE_FILES).
    unsafe {
        if sock > 0 {
            libc::syscall(libc::SYS_close_range, 0 as libc::c_uint, sock as libc::c_uint - 1, 0);
        }
        libc::syscall(libc::SYS_close_range, sock as libc::c_uint + 1, libc::c_uint::MAX, 0);
    }
    // The byte's failure ends the program (`park` reads the end of file):
    // else each would wait for the other.
    // SAFETY: writes one byte from a live one-byte array.
    if unsafe { libc::write(sock, [PARKED].as_ptr().cast(), 1) } != 1 {
        fail(Stage::Parked, io::Error::last_os_error())
    }
    prepared.plan().marks.mark("parked, until started");
    let mut byte = 0u8;
    // Room for one SCM_RIGHTS message of three descriptors, aligned for cmsghdr.
    let mut control = [0u64; 8];
    let fds = loop {
        let mut iov = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
        // SAFETY: a zeroed msghdr is valid; its pointers are set to this
        // stack's buffers, which outlive the call; the CMSG macros only
        // compute addresses within `control`.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control);
            match libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) {
                // The box let it go unused.
                0 => libc::_exit(0),
                n if n < 0 => {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() == Some(libc::EINTR) {
                        continue;
                    }
                    fail(Stage::Parked, e)
                }
                _ => {}
            }
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            let want = libc::CMSG_LEN(3 * std::mem::size_of::<libc::c_int>() as u32) as usize;
            // Truncated when this program could not take three more
            // descriptors (its RLIMIT_NOFILE): the kernel closed them.
            if msg.msg_flags & libc::MSG_CTRUNC != 0
                || cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
                || (*cmsg).cmsg_len as usize != want
            {
                fail(Stage::Parked, io::Error::from_raw_os_error(libc::EMFILE))
            }
            let data = libc::CMSG_DATA(cmsg).cast::<libc::c_int>();
            break [data.read_unaligned(), data.add(1).read_unaligned(), data.add(2).read_unaligned()];
        }
    };
    // The received descriptors are close-on-exec, their copies on 0-2 are
    // not. With 0-2 closed above they arrive there, in order (the lowest
    // free numbers): then it is their flag that is cleared.
    for (target, fd) in fds.into_iter().enumerate() {
        // SAFETY: descriptors of this process's own table; F_SETFD takes an integer.
        let kept = unsafe {
            if fd == target as RawFd {
                libc::fcntl(fd, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, target as RawFd)
            }
        };
        if kept < 0 {
            fail(Stage::Streams, io::Error::last_os_error())
        }
    }
    // SAFETY: set by the waker before it sent the streams.
    let start = prepared.start.load(Ordering::Acquire);
    if start.is_null() {
        fail(Stage::Parked, io::Error::from_raw_os_error(libc::EINVAL))
    }
    // SAFETY: the start's marks outlive this program's execve (`Start`).
    unsafe { &*(*start).marks }.mark("the parked program wakes: its streams (recvmsg, dup2)");
}

/// A program confined and parked before its `execve` ([`park`]), and the
/// memory it runs on: the launcher thread's stacks and frame are not its
/// own for that long, so it has a stack and plan of its own, freed only
/// once it no longer runs on them (its socket's end of file: it has
/// exec'd, or died).
pub(crate) struct ParkedProgram {
    pid: libc::pid_t,
    pidfd: OwnedFd,
    /// The supervisor's end of the program's socket; `None` once its end
    /// of file was read.
    sock: Option<OwnedFd>,
    prepared: Box<Prepared>,
    _plan: Box<ExecPlan>,
    _stack: sys::Stack,
}

// SAFETY: the raw pointers in `prepared` point into `_plan` and `_stack`,
// which this value owns and which move with it (boxed, or a mapping); the
// parked process reads them wherever this value is.
unsafe impl Send for ParkedProgram {}

/// What [`park`] made.
pub(crate) enum Parking {
    Parked(ParkedProgram),
    /// It did not park: the failed step, if one was recorded (none: it
    /// was killed on its way), and the program's pid when it was cloned
    /// (it has exited; the caller reaps it).
    Failed {
        pid: Option<libc::pid_t>,
        failure: Option<Failure>,
    },
}

/// Runs on the launcher thread: start a program as [`launch`] does, through
/// every step of its confinement (namespaces, cgroup, ids, capabilities,
/// Landlock, seccomp, signal handlers) and no further: it then waits on
/// `sock`'s other end (`plan.err_w`, dropped here once the program has it)
/// until [`ParkedProgram::start`] sends it its streams, and execs. The
/// launcher is free once the program is parked.
pub(crate) fn park(plan: Box<ExecPlan>, program_end: OwnedFd, sock: OwnedFd) -> Result<Parking> {
    let (joiner_stack, _) = stacks()?;
    let stack = sys::Stack::new(STACK_SIZE).map_err(|e| Error::os("allocating a parked program's stack", e))?;
    let mut prepared = Box::new(Prepared::new(&plan, std::ptr::null_mut(), stack.top()));
    // SAFETY: as in `launch`, but the program runs on `stack` and reads
    // `prepared` and `plan`, boxed: they move, with the stack, into the
    // `ParkedProgram`, which frees them only after the program's end of
    // file; on every other path this waits for that end of file first.
    let (joined, pid) = unsafe { prepared.run_joiner(joiner_stack) };
    drop(program_end);
    // The program's one byte: it is parked; else it failed (or died) on
    // its way, and the end of file comes.
    let mut first = [0u8; 1];
    let parked = loop {
        // SAFETY: reads at most one byte into `first`.
        match unsafe { libc::read(sock.as_raw_fd(), first.as_mut_ptr().cast(), 1) } {
            1 => break first[0] == PARKED,
            n if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            _ => break false,
        }
    };
    if let (true, Some(pid), Ok(())) = (parked, pid, &joined) {
        match sys::pidfd_open(pid) {
            Ok(pidfd) => {
                return Ok(Parking::Parked(ParkedProgram { pid, pidfd, sock: Some(sock), prepared, _plan: plan, _stack: stack }));
            }
            Err(e) => {
                // Parked, but not to be kept: gone before its stack and plan are.
                // SAFETY: kill with our own child's pid (not reaped yet) and a signal number.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let _ = wait_for_exec(&sock, None);
                let _ = sys::waitpid(pid, 0);
                return Err(Error::os("pidfd_open on a parked program", e));
            }
        }
    }
    // Not parked (a step failed, or it was killed), or parked with its
    // joiner not reaped: it must be gone before its stack and plan are.
    if let Some(pid) = pid.filter(|_| parked) {
        // SAFETY: kill with our own child's pid (not reaped: only the caller reaps it) and a signal number.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let unread = wait_for_exec(&sock, pid);
    let failure = prepared.failure().or(unread);
    if let Err(e) = joined {
        if let Some(pid) = pid {
            let _ = sys::waitpid(pid, 0);
        }
        return Err(e);
    }
    Ok(Parking::Failed { pid, failure })
}

impl ParkedProgram {
    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Run `program` in the parked process: point it at the arguments, send
    /// it the streams, and wait for its `execve` (the socket's end of file)
    /// as [`launch`] does. Returns the failed step, `None` when it exec'd. Past
    /// `deadline`, `overdue` is called (it kills the box's programs) and the
    /// wait goes on to the end of file. `Err` when the parked program could
    /// not be reached (it had died): it was never started.
    pub(crate) fn start(
        &mut self,
        program: &Program,
        marks: &Marks,
        deadline: std::time::Duration,
        mut overdue: impl FnMut(),
    ) -> io::Result<Option<Failure>> {
        let sock = self.sock.as_ref().expect("a parked program is started once").as_raw_fd();
        let mut start = Start::of(program, marks);
        self.prepared.start.store(&mut start, Ordering::Release);
        let fds = program.stdio.each_ref().map(|f| f.as_raw_fd());
        let mut byte = 1u8;
        let mut iov = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
        let mut control = [0u64; 8];
        // SAFETY: a zeroed msghdr is valid; its pointers are set to this
        // frame's buffers, alive across the call; the CMSG macros write the
        // header and the three descriptors within `control`.
        let sent = unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of_val(&fds) as u32) as usize;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of_val(&fds) as u32) as usize;
            libc::CMSG_DATA(cmsg).cast::<[libc::c_int; 3]>().write_unaligned(fds);
            libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL)
        };
        if sent != 1 {
            self.prepared.start.store(std::ptr::null_mut(), Ordering::Release);
            return Err(if sent < 0 { io::Error::last_os_error() } else { io::Error::from_raw_os_error(libc::EPIPE) });
        }
        marks.mark("starting the parked program (sendmsg of its streams)");
        let until = std::time::Instant::now() + deadline;
        let mut late = false;
        while !late {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if sys::wait_readable(sock, left) {
                break;
            }
            if std::time::Instant::now() >= until {
                late = true;
                overdue();
            }
        }
        // Readable (the end of file), or killed: read to the end.
        let read = read_to_end_of_file(sock);
        match &read {
            // Closed with the streams unread (a reset): it died before it
            // took them, killed while this sent them, and never started;
            // its socket is closed, so it no longer runs on this memory.
            Err(e) if e.raw_os_error() == Some(libc::ECONNRESET) => {}
            // Any other error: not started either, as far as this can tell;
            // it is killed, and dropping this value waits for its exit.
            Err(_) => {
                let _ = sys::pidfd_send_signal(self.pidfd.as_raw_fd(), libc::SIGKILL);
                return read.map(|()| None);
            }
            Ok(_) => marks.mark("execve of the parked program (the socket's end of file)"),
        }
        // The end of file: the program no longer runs on `start`, nor on this
        // value's stack and plan.
        self.sock = None;
        self.prepared.start.store(std::ptr::null_mut(), Ordering::Release);
        read.map(|()| self.prepared.failure())
    }
}

impl Drop for ParkedProgram {
    /// A program still parked (or whose end of file was not read) is
    /// killed, and its exit awaited: only then is its memory freed.
    fn drop(&mut self) {
        if self.sock.take().is_some() {
            let _ = sys::pidfd_send_signal(self.pidfd.as_raw_fd(), libc::SIGKILL);
            // Its pidfd is readable once it has exited, which is after it
            // let go of the memory it shared.
            while !sys::wait_readable(self.pidfd.as_raw_fd(), std::time::Duration::from_secs(1)) {}
        }
    }
}

/// The contents of a rootless box's `uid_map` and `gid_map`: the user's
/// own ids mapped to themselves, the one mapping an unprivileged process
/// may write for its new user namespace.
pub(crate) struct UserMaps {
    uid_map: CString,
    gid_map: CString,
}

impl UserMaps {
    pub(crate) fn identity(uid: u32, gid: u32) -> UserMaps {
        UserMaps {
            uid_map: CString::new(format!("{uid} {uid} 1\n")).expect("digits"),
            gid_map: CString::new(format!("{gid} {gid} 1\n")).expect("digits"),
        }
    }
}

/// What a box's holder starts with (see [`launch_holder`]).
pub(crate) struct HolderStart {
    pub paths: MountPaths,
    /// A rootless box: a user namespace first, with these maps.
    pub user_maps: Option<UserMaps>,
    /// A network namespace made ahead for the box (`crate::netns`), which
    /// the unsharer enters instead of making one; its descriptor is the
    /// supervisor's to close once the holder is started.
    pub netns: Option<RawFd>,
    /// The template mount namespace (`mounts::template_main`) the box
    /// starts from (`paths.from_template`), the process's for its life.
    pub template: Option<RawFd>,
    /// The box's init program (a memfd).
    pub init: RawFd,
    pub report: RawFd,
    pub control: RawFd,
    pub pid_w: RawFd,
    /// Where each step's end is marked (`crate::marks`).
    pub marks: std::sync::Arc<Marks>,
}

/// Runs on the launcher thread: start a box's holder, the same way as a
/// program: an *unsharer* (sharing the supervisor's memory, waited for)
/// makes the box's namespaces and clones the holder into them (pid 1 of the
/// new PID namespace, the supervisor's child), which builds the mount tree
/// (`mounts::holder_main`, allocation-free) and execs the box's init. A
/// fork here copied the supervisor's page tables for every box (30 ms with
/// a 300 MiB supervisor, `koth sandbox bench --supervisor-mib 300`).
///
/// `began` is called once the unsharer is cloned: the caller makes the
/// box's cgroups meanwhile. The unsharer is cloned without `CLONE_VFORK`,
/// so that this thread can say so after the clone rather than before it:
/// woken before, the caller often landed on this thread's CPU and ran its
/// cgroups there while the clone waited (0.54-0.84 ms at the median of the
/// clone's step in `koth sandbox bench`, against 0.04-0.06 ms with the
/// cgroups made after). This thread touches nothing the unsharer reads
/// until it has reaped it.
///
/// Returns when the holder has exec'd the init or failed (its report is on
/// the report pipe either way) and the unsharer is reaped.
pub(crate) fn launch_holder(start: &HolderStart, began: impl FnOnce()) -> Result<()> {
    let (unsharer_stack, holder_stack) = stacks()?;
    let arg = HolderArg { start, holder_stack };
    // SAFETY: a zeroed sigset_t is a valid value for pthread_sigmask to fill.
    let mut saved: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: the unsharer reads `arg` (alive until the call returns, after
    // the unsharer has exited) and follows the module's rules; `began` only
    // wakes the caller, touching nothing the unsharer uses.
    unsafe {
        run_child(
            unsharer_main,
            (&arg as *const HolderArg).cast_mut().cast(),
            unsharer_stack,
            &mut saved,
            "the box helper",
            libc::CLONE_VM,
            began,
        )?
    };
    start.marks.mark("the unsharer's exit and reaping");
    Ok(())
}

/// Run `f(arg)` in a child cloned with `flags` (`CLONE_VM` and the rest:
/// with `CLONE_VFORK` this thread resumes once it has exec'd or exited), on
/// `stack`, with every signal blocked; call `meanwhile`, then reap it.
/// `mask` receives this thread's signal mask, as it was, before the clone.
///
/// # Safety
/// `stack` is one of the launcher's idle stacks; `f` keeps the module's
/// rules and is sound with `flags`; `arg` and `mask` are valid until this
/// returns (it returns once the child has exited, or when `waitpid` finds
/// no child left to wait for); `meanwhile` touches nothing the child uses.
unsafe fn run_child(
    f: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
    stack: *mut libc::c_void,
    mask: *mut libc::sigset_t,
    what: &str,
    flags: libc::c_int,
    meanwhile: impl FnOnce(),
) -> Result<()> {
    let all = sys::full_sigset();
    // SAFETY: `all` and `*mask` are live sigset_t values; this changes only the calling thread's mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &all, mask) };
    // SAFETY: the caller's promises.
    let child = unsafe { sys::clone_with_stack(f, arg, stack, flags) };
    // SAFETY: restores the mask saved above on this thread.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, mask, std::ptr::null_mut()) };
    let child = child.map_err(|e| Error::os(format!("cloning {what}"), e))?;
    meanwhile();
    sys::waitpid(child, 0).map_err(|e| Error::os(format!("waiting for {what}"), e))?;
    Ok(())
}

/// [`run_child`] for the short children that make a descriptor elsewhere
/// (in a box's network namespace, in a new mount namespace) and leave it,
/// and how they did, in `*arg`: they share this thread's memory and
/// descriptor table (`CLONE_VM | CLONE_VFORK | CLONE_FILES`), so what they
/// open is ours, and this returns once they have exited.
///
/// # Safety
/// `f` allocates nothing, keeps the module's rules and touches only
/// `*arg`; `stack` is one of the launcher's idle stacks.
unsafe fn run_sharing_descriptors<A>(
    f: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: &mut A,
    stack: *mut libc::c_void,
    what: &str,
) -> Result<()> {
    // SAFETY: a zeroed sigset_t is a valid value for pthread_sigmask to fill.
    let mut saved: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's promises; `arg` is borrowed until the child has
    // exited (CLONE_VFORK: this thread resumes then, and `run_child` reaps it).
    unsafe { run_child(f, (arg as *mut A).cast(), stack, &mut saved, what, libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES, || {}) }
}

struct HolderArg<'a> {
    start: &'a HolderStart,
    holder_stack: *mut libc::c_void,
}

/// The launcher thread's two child stacks (see [`Stacks`]), made on first
/// use (a failure is an error of this spawn only).
fn stacks() -> Result<(*mut libc::c_void, *mut libc::c_void)> {
    STACKS.with(|cell| {
        if cell.get().is_none() {
            let made =
                (|| -> io::Result<Stacks> { Ok(Stacks { outer: sys::Stack::new(STACK_SIZE)?, inner: sys::Stack::new(STACK_SIZE)? }) })()
                    .map_err(|e| Error::os("allocating the spawn stacks", e))?;
            let _ = cell.set(made);
        }
        let s = cell.get().expect("set above");
        Ok((s.outer.top(), s.inner.top()))
    })
}

extern "C" fn unsharer_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the launcher's `HolderArg`, alive while this child runs (the launcher waits).
    let a = unsafe { &*(arg as *const HolderArg) };
    let report = a.start.report;
    a.start.marks.mark("cloning the unsharer (clone, CLONE_VM)");
    if let Some(maps) = &a.start.user_maps {
        // SAFETY: integer flags only. The unsharer is its own thread group
        // and shares no filesystem information (no CLONE_THREAD, no
        // CLONE_FS), as a new user namespace requires.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER) } < 0 {
            sys::child_fail(report, "creating the box's user namespace (unshare)", io::Error::last_os_error());
        }
        // setgroups must be denied before an unprivileged gid_map is written.
        let files = [
            (c"/proc/self/setgroups", c"deny"),
            (c"/proc/self/uid_map", maps.uid_map.as_c_str()),
            (c"/proc/self/gid_map", maps.gid_map.as_c_str()),
        ];
        for (path, text) in files {
            if let Err(e) = sys::write_path(path, text.to_bytes()) {
                sys::child_fail(report, "mapping the user's ids in the box's user namespace", e);
            }
        }
        a.start.marks.mark("a user namespace and its id maps");
    }
    // A box started from the template: the host's trees it shows and the
    // holder's /dev/null are opened while the host's mounts are in view,
    // then the template is entered; `unshare` below copies it.
    let mut call = HolderCall { a, trees: None, null: -1 };
    if let Some(template) = a.start.template {
        call.trees = Some(mounts::HostTrees::open(&a.start.paths, report));
        // SAFETY: a static C string; the descriptor is this child's own.
        call.null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if call.null < 0 {
            sys::child_fail(report, "opening /dev/null for the holder", io::Error::last_os_error());
        }
        a.start.marks.mark("cloning the host's trees the box shows (open_tree)");
        // SAFETY: a mount namespace's descriptor, open in this child's own
        // table; this child has its own filesystem information (no CLONE_FS),
        // as entering a mount namespace requires.
        if unsafe { libc::setns(template, libc::CLONE_NEWNS) } < 0 {
            sys::child_fail(
                report,
                "entering the template mount namespace (setns, which needs CAP_SYS_ADMIN and CAP_SYS_CHROOT)",
                io::Error::last_os_error(),
            );
        }
        a.start.marks.mark("entering the template mount namespace (setns)");
    }
    let mut namespaces = BOX_NAMESPACES;
    if let Some(netns) = a.start.netns {
        // SAFETY: a descriptor of a network namespace, open in this child's
        // own table (copied at its clone); it changes this child's namespace.
        if unsafe { libc::setns(netns, libc::CLONE_NEWNET) } < 0 {
            sys::child_fail(report, "entering a network namespace made ahead (setns)", io::Error::last_os_error());
        }
        namespaces &= !libc::CLONE_NEWNET;
        a.start.marks.mark("entering a network namespace made ahead (setns)");
    }
    // SAFETY: integer flags only.
    if unsafe { libc::unshare(namespaces) } < 0 {
        sys::child_fail(report, "creating the box namespaces (unshare)", io::Error::last_os_error());
    }
    a.start.marks.mark("creating the box's namespaces (unshare)");
    let call_arg = (&call as *const HolderCall).cast_mut().cast();
    // SAFETY: the holder runs on the other idle stack, reads `call` and `a`
    // (alive: `call` is on this unsharer's stack and `a` the launcher's, and
    // both wait: the launcher for this unsharer, this unsharer for the
    // holder's execve or exit) and allocates nothing (`mounts::holder_main`).
    match unsafe { sys::clone_with_stack(holder_main, call_arg, a.holder_stack, libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PARENT) } {
        Err(e) => sys::child_fail(report, "starting the holder", e),
        Ok(pid) => {
            a.start.marks.mark("execveat of the box's init, until the unsharer resumes");
            sys::write_all(a.start.pid_w, &pid.to_ne_bytes());
            // SAFETY: the unsharer's work is done; _exit skips destructors that belong to the supervisor.
            unsafe { libc::_exit(0) }
        }
    }
}

/// What the unsharer hands its holder: the launcher's argument and, for a
/// box started from the template, what it opened before entering it.
struct HolderCall<'a, 'b> {
    a: &'a HolderArg<'b>,
    trees: Option<mounts::HostTrees>,
    /// /dev/null, opened by the unsharer (-1: the holder opens it).
    null: RawFd,
}

extern "C" fn holder_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: the unsharer's `HolderCall`, alive while the holder runs (see `unsharer_main`).
    let call = unsafe { &*(arg as *const HolderCall) };
    let s = call.a.start;
    s.marks.mark("cloning the holder (clone, CLONE_VM | CLONE_VFORK | CLONE_PARENT)");
    // SAFETY: in the holder, on its own descriptor table: /dev/null (a static
    // C string, or the unsharer's descriptor of it) over the standard streams.
    unsafe {
        let null = if call.null >= 0 { call.null } else { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
    }
    let mut keep = [-1; 3 + mounts::DEVICES.len() + 1];
    keep[..3].copy_from_slice(&[s.report, s.control, s.init]);
    let kept = match &call.trees {
        Some(t) => {
            keep[3..].copy_from_slice(&t.fds());
            &mut keep[..]
        }
        None => &mut keep[..3],
    };
    close_all_but(kept);
    s.marks.mark("the holder's streams and descriptors");
    mounts::holder_main(&s.paths, call.trees.as_ref(), s.init, s.report, s.control, &s.marks)
}

/// Runs on the launcher thread: make the template mount namespace that boxes
/// built by root start from (`mounts::template_main`), its tmpfs mounted on
/// `at` (an existing folder, seen only in the new namespace). Returns its
/// descriptor (close-on-exec), which keeps it for the process's life.
pub(crate) fn make_template(at: &std::ffi::CStr) -> Result<OwnedFd> {
    let at_box = std::ffi::CString::new([at.to_bytes(), b"/box"].concat()).expect("a C string and a static suffix");
    let (stack, _) = stacks()?;
    struct MakerArg<'a> {
        at: &'a std::ffi::CStr,
        at_box: &'a std::ffi::CStr,
        made: mounts::TemplateMade,
    }
    extern "C" fn maker(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the launcher's `MakerArg`, alive and untouched until this child has exited (CLONE_VFORK).
        let m = unsafe { &mut *(arg as *mut MakerArg) };
        mounts::template_main(m.at, m.at_box, &mut m.made)
    }
    let mut arg = MakerArg { at, at_box: &at_box, made: mounts::TemplateMade { ns: -1, failed: None } };
    // SAFETY: `maker` allocates nothing and touches only `arg`; the stack is
    // the launcher's idle one.
    unsafe { run_sharing_descriptors(maker, &mut arg, stack, "the template mount namespace's maker")? };
    let made = arg.made;
    // SAFETY: a descriptor the maker opened in our shared table, owned by nothing else.
    let ns = (made.ns >= 0).then(|| unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(made.ns) });
    match (made.failed, ns) {
        (None, Some(ns)) => Ok(ns),
        (Some((stage, errno)), _) => {
            Err(Error::os(format!("making the boxes' template mount namespace failed at {stage}"), io::Error::from_raw_os_error(errno)))
        }
        (None, None) => Err(Error::Unsupported("the template mount namespace's maker exited without making it".into())),
    }
}

/// Keep only `keep` among descriptors >= 3 (a child inherits a copy of all
/// of the supervisor's, including other boxes' pipes).
fn close_all_but(keep: &mut [RawFd]) {
    keep.sort_unstable();
    let mut from: libc::c_uint = 3;
    for &fd in keep.iter() {
        if fd as libc::c_uint > from {
            // SAFETY: close_range takes plain integers; it closes this child's own descriptors (no CLONE_FILES).
            unsafe { libc::syscall(libc::SYS_close_range, from, fd as libc::c_uint - 1, 0) };
        }
        from = fd as libc::c_uint + 1;
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, from, libc::c_uint::MAX, 0) };
}

/// What [`listen_in_box`]'s child works from and reports in.
struct ListenArg {
    holder_pidfd: RawFd,
    namespaces: libc::c_int,
    addr: libc::sockaddr_in,
    /// Written by the child: the socket, or the failed step and its errno.
    fd: RawFd,
    failed: Option<&'static str>,
    errno: i32,
}

/// Runs on the launcher thread: a socket listening on 127.0.0.1:`port` in
/// the network namespace of the box whose holder is `holder_pidfd`. A child
/// sharing this process's memory and descriptor table (`CLONE_FILES`) enters
/// the namespace (and first the box's user namespace in a rootless box,
/// which a thread could not) and makes the socket, which stays in that
/// namespace wherever it is used from.
pub(crate) fn listen_in_box(holder_pidfd: RawFd, user_namespace: bool, port: u16) -> Result<OwnedFd> {
    let (stack, _) = stacks()?;
    let mut arg = ListenArg {
        holder_pidfd,
        namespaces: if user_namespace { libc::CLONE_NEWUSER | libc::CLONE_NEWNET } else { libc::CLONE_NEWNET },
        addr: libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr { s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be() },
            sin_zero: [0; 8],
        },
        fd: -1,
        failed: Some("starting the listener"),
        errno: 0,
    };
    // SAFETY: the child only makes system calls and writes `arg`'s result
    // fields; the stack is the launcher's idle one.
    unsafe { run_sharing_descriptors(listener_main, &mut arg, stack, "the listener")? };
    match arg.failed {
        // SAFETY: the child opened `fd` in this (shared) table and nothing else owns it.
        None => Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(arg.fd) }),
        Some(step) => {
            if arg.fd >= 0 {
                // SAFETY: the child's half-made socket, owned by nothing else.
                unsafe { libc::close(arg.fd) };
            }
            Err(Error::os(format!("listening on 127.0.0.1:{port} in the box: {step}"), io::Error::from_raw_os_error(arg.errno)))
        }
    }
}

extern "C" fn listener_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is `listen_in_box`'s ListenArg, alive while this child runs (the launcher waits).
    let a = unsafe { &mut *(arg as *mut ListenArg) };
    let one: libc::c_int = 1;
    // SAFETY: system calls with integers and pointers into `a` and this stack.
    unsafe {
        let step = if libc::setns(a.holder_pidfd, a.namespaces) < 0 {
            "entering the box's network namespace"
        } else {
            a.fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if a.fd < 0 {
                "socket"
            } else if libc::setsockopt(a.fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, (&one as *const libc::c_int).cast(), 4) < 0 {
                "setsockopt"
            } else if libc::bind(a.fd, (&a.addr as *const libc::sockaddr_in).cast(), std::mem::size_of::<libc::sockaddr_in>() as u32) < 0 {
                "bind"
            } else if libc::listen(a.fd, 128) < 0 {
                "listen"
            } else {
                a.failed = None;
                libc::_exit(0)
            }
        };
        a.errno = *libc::__errno_location();
        a.failed = Some(step);
        libc::_exit(1)
    }
}
