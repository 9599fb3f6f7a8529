//! Run one program in a fresh box and report what happened.
//!
//! Used by `koth sandbox run` and compiles: create the box, start the
//! program, feed it stdin, drain stdout and stderr (keeping at most
//! `limits.output` bytes of each), enforce the tree's CPU time and the wall
//! time, and kill everything when the program exits or breaks a limit.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::time::Duration;

use serde::Serialize;

use crate::cgroup::Version;
use crate::landlock_rules::LandlockStatus;
use crate::mounts::RootSwitch;
use crate::sandbox::{Command, Sandbox, Stdio};
use crate::usage::{Exit, Outcome, Usage};
use crate::{Result, SandboxConfig};

/// How often the supervisor looks at the cgroup's CPU time while waiting.
const CPU_POLL: Duration = Duration::from_millis(5);

/// The report of [`run_once`].
#[derive(Debug, Serialize)]
pub struct RunOutput {
    #[serde(flatten)]
    pub usage: Usage,
    #[serde(skip)]
    pub stdout: Vec<u8>,
    #[serde(skip)]
    pub stderr: Vec<u8>,
    pub cgroup: Version,
    pub landlock: LandlockStatus,
    /// `pivot_root`, or `move_and_chroot` where a seccomp profile refuses it.
    pub root: RootSwitch,
    pub uid: u32,
}

struct Stream {
    file: Option<std::fs::File>,
    kept: Vec<u8>,
    total: u64,
}

impl Stream {
    /// Read what is available; false at EOF.
    fn pump(&mut self, cap: u64) -> bool {
        let Some(f) = self.file.as_mut() else { return false };
        let mut buf = [0u8; 65536];
        loop {
            match f.read(&mut buf) {
                Ok(0) => {
                    self.file = None;
                    return false;
                }
                Ok(n) => {
                    self.total += n as u64;
                    let room = cap.saturating_sub(self.kept.len() as u64) as usize;
                    self.kept.extend_from_slice(&buf[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.file = None;
                    return false;
                }
            }
        }
    }
}

fn set_nonblocking(f: &std::fs::File) {
    // SAFETY: fcntl on the descriptor `f` owns, which outlives the calls.
    unsafe {
        let fd = f.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// How long a killed program is waited for before it counts as killed.
const KILLED_WAIT: Duration = Duration::from_millis(250);

/// Create a box from `config`, run `program args` in it with `stdin` as
/// input, and tear the box down.
///
/// `prepare` runs after the box exists and before the program starts: the
/// place to put files into the work folder.
pub fn run_once(
    config: SandboxConfig,
    program: &str,
    args: &[String],
    env: &[(String, String)],
    stdin: &[u8],
    prepare: impl FnOnce(&Sandbox) -> Result<()>,
) -> Result<RunOutput> {
    let sandbox = Sandbox::create(config)?;
    prepare(&sandbox)?;
    run_in(&sandbox, program, args, env, stdin)
}

/// Run `program args` in an existing box under the box's limits, then kill
/// whatever it left running. The box (and its folder) stays for the caller,
/// e.g. to read a compiler's output back.
pub fn run_in(sandbox: &Sandbox, program: &str, args: &[String], env: &[(String, String)], stdin: &[u8]) -> Result<RunOutput> {
    let limits = sandbox.limits().clone();
    let mut cmd = Command::new(program).args(args.iter().cloned()).stdin(Stdio::Pipe).stdout(Stdio::Pipe).stderr(Stdio::Pipe);
    cmd.env = env.to_vec();
    let cpu_before = sandbox.cpu_usage()?;
    let mut child = sandbox.spawn(cmd)?;
    let start = child.started();

    // Feed stdin from a thread: the program may not read it all, or at all.
    let input = child.stdin.take();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        if let Some(mut f) = input {
            let _ = f.write_all(&data);
        }
    });

    let mut out = Stream { file: child.stdout.take(), kept: Vec::new(), total: 0 };
    let mut err = Stream { file: child.stderr.take(), kept: Vec::new(), total: 0 };
    for s in [&out, &err] {
        if let Some(f) = &s.file {
            set_nonblocking(f);
        }
    }

    let mut verdict: Option<Outcome> = None;
    let exit: Exit = loop {
        let mut fds = vec![libc::pollfd { fd: child.pidfd(), events: libc::POLLIN, revents: 0 }];
        for s in [&out, &err] {
            if let Some(f) = &s.file {
                fds.push(libc::pollfd { fd: f.as_raw_fd(), events: libc::POLLIN, revents: 0 });
            }
        }
        let mut wait = CPU_POLL;
        if let Some(w) = limits.wall_time {
            wait = wait.min(w.saturating_sub(start.elapsed()));
        }
        let ms = wait.as_millis().max(1) as libc::c_int;
        // SAFETY: `fds` is a live array of `fds.len()` pollfds.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        out.pump(limits.output);
        err.pump(limits.output);
        if let Some(e) = child.try_wait()? {
            break e;
        }
        if out.total > limits.output || err.total > limits.output {
            verdict = Some(Outcome::OutputLimit);
        } else if limits.cpu_time.is_some_and(|c| sandbox.cpu_usage().map(|u| u - cpu_before > c).unwrap_or(false)) {
            verdict = Some(Outcome::CpuTimeLimit);
        } else if limits.wall_time.is_some_and(|w| start.elapsed() >= w) {
            verdict = Some(Outcome::WallTimeLimit);
        }
        if verdict.is_some() {
            // Bounded: a program stuck in the kernel dies when its call
            // returns; until then it counts as killed (the box's teardown
            // waits for it, in the background if need be).
            let _ = sandbox.kill_all();
            break child.wait_timeout(Some(KILLED_WAIT))?.unwrap_or(Exit::Signal(libc::SIGKILL));
        }
    };
    let wall_time = start.elapsed();
    // Whatever the program left behind (daemons, children) dies with it.
    let _ = sandbox.kill_all();
    out.pump(limits.output);
    err.pump(limits.output);
    // The feeder ends when the program's stdin closes, which a program
    // stuck in the kernel delays: never wait for it here.
    if feeder.is_finished() {
        let _ = feeder.join();
    }

    let cpu_time = sandbox.cpu_usage()?.saturating_sub(cpu_before);
    let oom_kills = sandbox.oom_kills()?;
    let outcome = verdict.unwrap_or(match exit {
        Exit::Code(0) => Outcome::Ok,
        Exit::Code(_) => Outcome::Failed,
        Exit::Signal(libc::SIGKILL) if oom_kills > 0 => Outcome::MemoryLimit,
        Exit::Signal(libc::SIGXCPU) => Outcome::CpuTimeLimit,
        Exit::Signal(_) => Outcome::Crashed,
    });
    let usage = Usage {
        outcome,
        exit,
        wall_time,
        cpu_time,
        peak_memory: sandbox.memory_peak()?,
        oom_kills,
        stdout_bytes: out.total,
        stderr_bytes: err.total,
    };
    Ok(RunOutput {
        usage,
        stdout: out.kept,
        stderr: err.kept,
        cgroup: sandbox.cgroup_version(),
        landlock: sandbox.landlock_status().clone(),
        root: sandbox.root_switch(),
        uid: sandbox.uid(),
    })
}
