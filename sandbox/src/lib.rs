//! Run untrusted programs (bots, compilers) in a hardened Linux sandbox.
//!
//! # Model
//!
//! A [`Sandbox`] is a *box*: a set of namespaces, one cgroup and one bounded
//! scratch filesystem that live for as long as the caller keeps the value
//! (one bot for one match, or one compile).  Any number of programs can be
//! [`spawned`](Sandbox::spawn) into the box, one after another or at once;
//! games that start a new process every turn pay the cost of the box once
//! and only a cheap spawn per turn.
//!
//! ```text
//!  supervisor (runner, root)          box namespaces (mnt, pid, net, ipc, uts)
//!  ───────────────────────            ──────────────────────────────────────
//!  launcher thread ──clone(VM)──▶ unsharer ──setns(net made ahead)──unshare──clone(VM,VFORK,PARENT)──▶ holder (pid 1, root)
//!   (the caller makes the box's cgroups meanwhile)  mounts the box, execs the box's init, which only reaps
//!  launcher thread ──clone(VM,VFORK)──▶ joiner ──setns(holder pidfd)──join cgroup──clone(VM,VFORK,PARENT)──▶ program
//!                                                    rlimits, setsid, drop caps, setresuid(slot),
//!                                                    no_new_privs, Landlock, seccomp, execve
//!                                                    (the program's steps: [`spawn`])
//! ```
//!
//! * **Holder.** The first process of a box is a tiny init that stays root,
//!   outside the box's cgroup, and does nothing after it has built the mount
//!   tree but reap orphans. It keeps the namespaces alive, so a spawn only
//!   joins them (`setns` with a pidfd: one system call for all five). When it
//!   dies, the kernel kills every process of the box's PID namespace.
//! * **Mounts** ([`mounts`]). The chosen root filesystem is cloned recursively
//!   and made read-only, nosuid and nodev in one `mount_setattr`. The box gets a
//!   private tmpfs of bounded size holding its work folder (`/home/bot`),
//!   `/tmp` and `/dev/shm`; an empty read-only `/home`, `/run` and `/sys` hide
//!   the host's; `/dev` has only null, zero, full, random, urandom; `/proc` is
//!   a new procfs for the box's PID namespace. The scratch tmpfs exists only in
//!   the box's mount namespace, so nothing of a box is left on the host when
//!   its holder dies, even if the supervisor was killed. A box built by root
//!   starts from a template namespace made once a process (nothing of the
//!   host's to make private or detach); see [`mounts`].
//!   A rootless box (one running as the user) does not clone the root: it
//!   shows only the allowlist of [`view`], the toolchains' folders
//!   read-only and its own.
//! * **cgroups** ([`cgroup`]). One cgroup per box, created under the
//!   supervisor's own cgroup and owned by root. One trait, two backends (v2 and
//!   v1), detected at start: memory limit with swap off, pids limit, CPU time of
//!   the whole tree, peak memory, OOM kills, freeze/thaw, kill of the whole
//!   tree. No usable hierarchy is an error, never an unconfined program.
//!   (On v1 a box pauses by SIGSTOP from its holder, not v1's freezer, whose
//!   frozen tasks ignore SIGKILL: see [`cgroup`].)
//! * **Privileges.** Each box runs as its own unprivileged uid/gid (a *slot*,
//!   [`slots`]), with no supplementary groups, every capability set cleared
//!   (bounding, inheritable, ambient; effective and permitted by the uid
//!   change), `no_new_privs`, and `SIGKILL` as parent-death signal. A
//!   supervisor that is not root (an author's `koth match`) builds each box
//!   in a user namespace of its own, running as the user's uid, under a
//!   cgroup delegated to the user: [`Privilege`] says what that changes.
//! * **Landlock** ([`landlock_rules`]): read and execute on the root (in a
//!   rootless box, beneath the allowlist's read-only folders), write only in
//!   the work folder, `/tmp` and `/dev/shm`; TCP bind forbidden and TCP connect
//!   forbidden except to the ports a protocol allows; signals and abstract
//!   unix sockets scoped to the box. Best effort against a pinned ABI; the
//!   achieved status is measured once per box and reported.
//! * **seccomp** ([`seccomp`]): a deny list in classic BPF (see that module
//!   for the list and why).
//! * **rlimits**: file size, open files, no core dumps, stack, CPU seconds as a
//!   backstop. Address space is deliberately not limited (it breaks the JVM,
//!   Go and Node); memory is the cgroup's job.
//! * **Files** ([`workdir`]). The supervisor puts files into the work folder
//!   before a program starts and reads them back with `openat2`
//!   (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
//!   RESOLVE_NO_XDEV`), refusing anything but regular files; it never follows
//!   a path the program controls.
//!
//! # Why clone from launcher threads, sharing memory
//!
//! All clones happen on long-lived *launcher* threads, two per CPU
//! (`launcher.rs`). `PR_SET_PDEATHSIG` fires when the *thread* that created
//! a process exits, so cloning from a pool thread that may retire would
//! kill boxes at random. Every child runs
//! on the supervisor's memory (`CLONE_VM`, as `posix_spawn` does; the
//! launcher waits until it has exec'd or exited) until it execs, the
//! program its bot, the holder the box's small
//! init ([`init`]): a `fork` copied the supervisor's page tables for every
//! box and every program, and a forked holder kept its pages for the box's
//! life. The rules those children keep (no allocation, raw system calls for
//! ids, signals blocked) are in [`spawn`].

// Every unsafe block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod cgroup;
pub mod cpu_wait;
mod error;
mod init;
pub mod landlock_rules;
mod launcher;
mod limits;
mod marks;
pub mod mounts;
mod netns;
mod pool;
mod privilege;
mod run;
mod sandbox;
pub mod seccomp;
pub mod slots;
pub(crate) mod spawn;
mod sys;
mod usage;
pub mod view;
mod wakeup;
pub mod workdir;

pub use cpu_wait::CpuWait;
pub use error::{Error, Result};
pub use launcher::set_launcher_threads;
pub use limits::{parse_duration, parse_size, Limits, Network, SandboxConfig, CPU_WEIGHT_DEFAULT, STATE_DIR};
pub use marks::Phases;
pub use pool::{BoxPool, PoolStats, REFILL_AFTER};
pub use privilege::{default_runtime_dir, private_dir, Privilege};
pub use run::{run_in, run_once, RunOutput};
pub use sandbox::{Child, Command, Sandbox, Stdio};
pub use usage::{Exit, Outcome, Usage};
pub use wakeup::{PromptWakeups, Promptness, Urgent};
pub use workdir::TreeFile;
