//! A program is started by children that share the supervisor's memory
//! (`CLONE_VM | CLONE_VFORK`, see `sandbox/src/spawn.rs`). What could go
//! wrong with that, tried: a child that changed the ids, capabilities,
//! handlers, folder or descriptors of the supervisor or of its other
//! threads; a program that inherits the supervisor's signal handlers or its
//! blocked signals; concurrent spawns that mix up their programs; a failed
//! spawn that leaves something behind.

mod common;

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{config, hostile_limits, scaled};
use koth_sandbox::cgroup::Version;
use koth_sandbox::{Command, Exit, Sandbox, Stdio};

/// Each thread's ids, groups and capabilities, from /proc. A launcher
/// thread's bounding set is CAP_KILL alone (the sandbox's launchers narrow
/// their own when they start; `the_boxs_init_holds_cap_kill_alone`): it is
/// checked to be that and then shown as the process's, so that every
/// thread compares equal.
fn threads_credentials() -> Vec<(String, String)> {
    let process_bounding =
        std::fs::read_to_string("/proc/self/status").unwrap().lines().find(|l| l.starts_with("CapBnd:")).unwrap().to_owned();
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(status) = std::fs::read_to_string(t.path().join("status")) else { continue };
        let launcher = status.lines().any(|l| l.starts_with("Name:") && l.contains("koth-launcher"));
        let keep: Vec<&str> = status
            .lines()
            .filter(|l| {
                ["Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:", "NoNewPrivs:", "Seccomp:"]
                    .iter()
                    .any(|k| l.starts_with(k))
            })
            .map(|l| {
                if launcher && l.starts_with("CapBnd:") {
                    assert_eq!(l, "CapBnd:\t0000000000000020", "a launcher thread's bounding set is not CAP_KILL alone");
                    process_bounding.as_str()
                } else {
                    l
                }
            })
            .collect();
        out.push((t.file_name().to_string_lossy().into_owned(), keep.join("\n")));
    }
    out.sort();
    out
}

/// What each of this process's descriptors is, without its inode: the
/// network namespaces made ahead for boxes (`net:`) are left out, since
/// building boxes takes and replaces them.
fn descriptor_kinds() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .map(|l| l.to_string_lossy().split(":[").next().unwrap().to_owned())
        .filter(|k| k != "net")
        .collect();
    v.sort();
    v
}

fn open_descriptors() -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir("/proc/self/fd").unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// The tests of this file compare the whole process before and after: one
/// at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

static HANDLED: AtomicUsize = AtomicUsize::new(0);

/// Counts SIGUSR1 (the other signals it is installed for are only there to
/// be seen, or not, by the programs).
extern "C" fn count_signal(sig: libc::c_int) {
    if sig == libc::SIGUSR1 {
        HANDLED.fetch_add(1, Ordering::SeqCst);
    }
}

fn handler_of(sig: libc::c_int) -> libc::sighandler_t {
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old);
        old.sa_sigaction
    }
}

fn output_of(sb: &Sandbox, cmd: Command) -> (Exit, String) {
    let mut child = sb.spawn(cmd.stdout(Stdio::Pipe)).unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    (child.wait().unwrap(), out)
}

/// Spawns (good ones and failed ones) leave the supervisor and each of its
/// threads with the ids, capabilities, security state, folder, descriptors
/// and signal handlers they had: nothing a child does to itself (ids,
/// capabilities, seccomp, Landlock, `dup2`, `chdir`, handlers) reaches the
/// supervisor whose memory it shares.
#[test]
fn spawning_leaves_the_supervisor_and_its_threads_as_they_were() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let sb = Sandbox::create(config(hostile_limits())).unwrap();
    // Other threads, alive across the spawns, as in a runner.
    let stop = Arc::new(AtomicBool::new(false));
    let others: Vec<_> = (0..3)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
        })
        .collect();
    unsafe { libc::signal(libc::SIGUSR1, count_signal as *const () as libc::sighandler_t) };
    // The first spawn starts the sandbox's own threads; compare from then on.
    assert_eq!(sb.spawn(Command::new("/bin/true")).unwrap().wait().unwrap(), Exit::Code(0));
    let creds = threads_credentials();
    let cwd = std::env::current_dir().unwrap();
    let fds = open_descriptors();
    let handler = handler_of(libc::SIGUSR1);
    assert!(creds.iter().all(|(_, s)| s.contains("Uid:\t0\t0\t0\t0")), "{creds:?}");

    for i in 0..40 {
        match i % 4 {
            // A program that runs and exits.
            0 | 1 => assert_eq!(sb.spawn(Command::new("/bin/true")).unwrap().wait().unwrap(), Exit::Code(0)),
            // An execve that fails (the program's child reports and exits).
            2 => assert!(sb.spawn(Command::new("/no/such/program")).is_err()),
            // A program that itself changes what it can: its own, not ours.
            _ => {
                let (exit, _) =
                    output_of(&sb, Command::new("/bin/sh").args(["-c", "cd /tmp; ulimit -n 16; trap 'echo' USR1; exec 7>/dev/null"]));
                assert_eq!(exit, Exit::Code(0));
            }
        }
    }
    // Threads come and go (the test harness's): every thread alive now must
    // hold what every thread held before.
    let after = threads_credentials();
    let expected = &creds[0].1;
    assert!(creds.iter().all(|(_, c)| c == expected), "the threads differed before the spawns: {creds:?}");
    for (tid, c) in &after {
        assert_eq!(c, expected, "a spawn changed thread {tid} of the supervisor");
    }
    assert_eq!(std::env::current_dir().unwrap(), cwd);
    assert_eq!(open_descriptors(), fds, "a spawn left descriptors open in the supervisor");
    assert_eq!(handler_of(libc::SIGUSR1), handler, "a spawn changed the supervisor's signal handler");
    // The supervisor's handler still runs, in the supervisor.
    let before = HANDLED.load(Ordering::SeqCst);
    unsafe { libc::raise(libc::SIGUSR1) };
    assert_eq!(HANDLED.load(Ordering::SeqCst), before + 1);
    stop.store(true, Ordering::Relaxed);
    for t in others {
        t.join().unwrap();
    }
}

/// The program starts as after an `execve` from a fresh process: no
/// handlers of the supervisor's caught (they would run on the supervisor's
/// memory before `execve`), no signal blocked, not root, no capability.
#[test]
fn a_program_starts_with_no_handlers_no_blocked_signals_and_no_privileges() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let signals = [libc::SIGUSR1, libc::SIGUSR2, libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGCHLD, libc::SIGRTMIN() + 3];
    let before: Vec<_> = signals.iter().map(|&sig| unsafe { libc::signal(sig, count_signal as *const () as libc::sighandler_t) }).collect();
    let sb = Sandbox::create(config(hostile_limits())).unwrap();
    let (exit, out) = output_of(&sb, Command::new("/bin/cat").arg("/proc/self/status"));
    assert_eq!(exit, Exit::Code(0));
    let field = |k: &str| {
        out.lines().find(|l| l.starts_with(k)).unwrap_or_else(|| panic!("no {k} in {out}")).split_whitespace().nth(1).unwrap().to_owned()
    };
    assert_eq!(field("SigCgt:"), "0000000000000000", "the program has handlers installed: {out}");
    assert_eq!(field("SigBlk:"), "0000000000000000", "the program starts with signals blocked: {out}");
    for k in ["CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"] {
        assert_eq!(field(k), "0000000000000000", "{k} {out}");
    }
    assert_eq!(field("Uid:"), sb.uid().to_string(), "{out}");
    assert_eq!(field("NoNewPrivs:"), "1");
    assert_eq!(field("Seccomp:"), "2");
    for (&sig, &old) in signals.iter().zip(&before) {
        unsafe { libc::signal(sig, old) };
    }
}

/// The box's init is root in its box and uses one capability: CAP_KILL,
/// to stop and continue the box's programs (`holder/init.c`), which run as
/// another uid. Its exec gives it that one alone, through the launcher
/// threads' bounding set, not every capability root has; its program
/// drops even that one. The supervisor's other threads keep their whole
/// bounding set (building a box needs the launchers' effective
/// capabilities, not their bounding set).
#[test]
fn the_boxs_init_holds_cap_kill_alone() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    if !koth_sandbox::Privilege::current().is_root() {
        common::missing("root: a rootless box's init has the capabilities of its own user namespace");
        return;
    }
    let status = |path: &str| std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let field = |text: &str, k: &str| -> u64 {
        let v = text.lines().find(|l| l.starts_with(k)).unwrap_or_else(|| panic!("no {k} in {text}")).split_whitespace().nth(1).unwrap();
        u64::from_str_radix(v, 16).unwrap()
    };
    // The process's bounding set as it started (this host's may lack some).
    let process = field(&status("/proc/self/status"), "CapBnd:");
    const CAP_KILL: u64 = 1 << 5;
    for round in 0..2 {
        // A box built by the launcher threads, and one built after a spawn
        // (the same threads, their set narrowed once).
        let sb = Sandbox::create(config(hostile_limits())).unwrap();
        let init = status(&format!("/proc/{}/status", sb.holder_pid()));
        assert_eq!(field(&init, "Uid:"), 0, "{init}");
        for k in ["CapPrm:", "CapEff:", "CapBnd:"] {
            assert_eq!(field(&init, k), CAP_KILL, "round {round}: the init's {k} is not CAP_KILL alone: {init}");
        }
        assert_eq!(field(&init, "CapAmb:"), 0, "{init}");
        let (exit, out) = output_of(&sb, Command::new("/bin/cat").arg("/proc/self/status"));
        assert_eq!(exit, Exit::Code(0));
        for k in ["CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"] {
            assert_eq!(field(&out, k), 0, "round {round}: the program's {k}: {out}");
        }
    }
    // This thread is not a launcher: its bounding set is the process's.
    let mine = status("/proc/thread-self/status");
    assert_eq!(field(&mine, "CapBnd:"), process, "{mine}");
    assert_ne!(process, CAP_KILL, "the process's own bounding set was narrowed");
}

/// Many threads spawning into many boxes at once: every program gets its
/// own arguments, environment and streams.
#[test]
fn concurrent_spawns_each_run_their_own_program() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let boxes: Vec<Arc<Sandbox>> = (0..4).map(|_| Arc::new(Sandbox::create(config(hostile_limits())).unwrap())).collect();
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let sb = boxes[w % boxes.len()].clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    let word = format!("w{w}-i{i}");
                    let cmd =
                        Command::new("/bin/sh").args(["-c", "echo \"$1 $KOTH_WORD $(pwd)\"", "sh", &word]).env("KOTH_WORD", word.clone());
                    let (exit, out) = output_of(&sb, cmd);
                    assert_eq!(exit, Exit::Code(0));
                    assert_eq!(out, format!("{word} {word} /home/bot\n"));
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}

/// Whether process `pid` is in the cgroup `dir`, by its own
/// `/proc/<pid>/cgroup`: the line of the hierarchy mounted above `dir`
/// (v1: the line naming the mount's controllers; v2: `0::`) names `dir`'s
/// path below the mount's root.
fn in_cgroup(pid: &str, dir: &std::path::Path) -> bool {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    // (mount point, root in the hierarchy, v1 super options or None for v2)
    let mount = mountinfo
        .lines()
        .filter_map(|l| {
            let (before, after) = l.split_once(" - ")?;
            let f: Vec<&str> = before.split(' ').collect();
            let a: Vec<&str> = after.split(' ').collect();
            let options = match a[0] {
                "cgroup2" => None,
                "cgroup" => Some(a[2].split(',').map(str::to_owned).collect::<Vec<_>>()),
                _ => return None,
            };
            Some((std::path::PathBuf::from(f[4]), f[3].to_owned(), options))
        })
        .filter(|(at, _, _)| dir.starts_with(at))
        .max_by_key(|(at, _, _)| at.as_os_str().len())
        .unwrap_or_else(|| panic!("no cgroup mount above {}", dir.display()));
    let (at, root, options) = mount;
    let below = dir.strip_prefix(&at).unwrap();
    let want = std::path::Path::new(&root).join(below);
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    cgroups.lines().any(|l| {
        let mut parts = l.splitn(3, ':');
        let (id, controllers, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let this_hierarchy = match &options {
            None => id == "0" && controllers.is_empty(),
            Some(o) => !controllers.is_empty() && controllers.split(',').all(|c| o.iter().any(|x| x == c)),
        };
        this_hierarchy && std::path::Path::new(path) == want
    })
}

/// A program starts in every one of its box's cgroups (each v1 hierarchy:
/// its joiner moved there as a single thread; v2: forked there), whether
/// started right after another program or after a quiet spell, from
/// several threads into several boxes at once, while other processes
/// spin: nothing of it is left in the supervisor's cgroups, where the
/// box's limits would not hold.
#[test]
fn a_program_starts_in_every_cgroup_of_its_box() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let spinners: Vec<std::process::Child> =
        (0..2).map(|_| std::process::Command::new("/bin/sh").args(["-c", "while :; do :; done"]).spawn().unwrap()).collect();
    let boxes: Vec<Arc<Sandbox>> = (0..3).map(|_| Arc::new(Sandbox::create(config(hostile_limits())).unwrap())).collect();
    let workers: Vec<_> = (0..6)
        .map(|w| {
            let sb = boxes[w % boxes.len()].clone();
            std::thread::spawn(move || {
                for round in 0..4 {
                    if round % 2 == 1 {
                        // A quiet spell for this worker (the others may not be quiet).
                        std::thread::sleep(Duration::from_millis(120));
                    }
                    let mut child = sb.spawn(Command::new("/bin/sleep").arg("30")).unwrap();
                    let pid = child.pid().to_string();
                    for dir in sb.cgroup_paths() {
                        // The program's own record of its cgroups, not the
                        // group's `cgroup.procs`: on v1 that listing, read
                        // while other programs of the box join its memory
                        // cgroup, once in a few hundred runs left out a
                        // program that its /proc/<pid>/cgroup and a second
                        // read of the listing placed in the box.
                        if !in_cgroup(&pid, &dir) {
                            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                            let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_else(|e| format!("({e})"));
                            panic!(
                                "worker {w}, round {round}: {pid} is not in {} ({procs:?}); its /proc/{pid}/cgroup:\n{cgroups}",
                                dir.display()
                            );
                        }
                    }
                    child.kill().unwrap();
                    child.wait().unwrap();
                }
            })
        })
        .collect();
    let joined: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
    for mut s in spinners {
        let _ = s.kill();
        let _ = s.wait();
    }
    for j in joined {
        j.unwrap();
    }
}

/// A program of the box that stops everything it can (`kill(-1, SIGSTOP)`
/// in a loop) while another is being started: once the new program has
/// the box's uid it may be stopped before its `execve` (on kernels without
/// Landlock's signal scoping), and the launcher, which waits for that
/// execve, would be held for ever, and with it every box of the process.
/// The spawn ends in bounded time, and the launcher serves other boxes.
#[test]
fn a_program_stopped_on_its_way_to_execve_does_not_hold_the_launcher() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let sb = Sandbox::create(config(hostile_limits())).unwrap();
    let mut stopper = sb.spawn(Command::new("/bin/sh").args(["-c", "while :; do kill -STOP -1; done"])).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let began = std::time::Instant::now();
    for _ in 0..5 {
        match sb.spawn(Command::new("/bin/true")) {
            // Started (Landlock keeps the stopper's signals in its own
            // domain): it may still be stopped after its execve; that is
            // the box's own business, and killing the box ends it.
            Ok(mut c) => {
                if c.wait_timeout(Some(common::scaled(Duration::from_secs(2)))).unwrap().is_none() {
                    sb.kill_all().unwrap();
                    c.wait().unwrap();
                }
            }
            // Killed on its way: the box's programs were killed, the stopper too.
            Err(e) => {
                assert!(e.to_string().contains("reaching execve in time"), "{e}");
                break;
            }
        }
    }
    assert!(began.elapsed() < Duration::from_secs(60), "the spawns took {:?}", began.elapsed());
    sb.kill_all().unwrap();
    let _ = stopper.wait();
    // The launcher is free: another box starts programs.
    let other = Sandbox::create(config(hostile_limits())).unwrap();
    assert_eq!(other.spawn(Command::new("/bin/true")).unwrap().wait().unwrap(), Exit::Code(0));
}

/// A paused box refuses new programs (on cgroup v2 the program would join
/// a frozen cgroup and never reach its `execve`), and takes them again once
/// thawed.
#[test]
fn a_paused_box_refuses_new_programs_until_thawed() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let sb = Sandbox::create(config(hostile_limits())).unwrap();
    sb.freeze().unwrap();
    let err = sb.spawn(Command::new("/bin/true")).unwrap_err();
    assert!(err.to_string().contains("paused"), "{err}");
    sb.thaw().unwrap();
    assert_eq!(sb.spawn(Command::new("/bin/true")).unwrap().wait().unwrap(), Exit::Code(0));
}

/// The steps `Sandbox::phases` and `Child::phases` report are marked by
/// every process of a build and a spawn (the caller, the launcher thread,
/// and the children sharing the supervisor's memory), in order, and they
/// all fall within the call: their sum is never more than the call took.
#[test]
fn a_box_and_a_program_report_each_step_of_their_start_in_order() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let names = |steps: &[(&'static str, Duration)]| steps.iter().map(|(n, _)| *n).collect::<Vec<_>>();
    let position = |all: &[&str], step: &str| all.iter().position(|n| *n == step).unwrap_or_else(|| panic!("no step {step:?} in {all:?}"));
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let sb = Sandbox::create(config(hostile_limits())).unwrap();
        let took = t.elapsed();
        let built = names(sb.phases().steps());
        // The caller's, the launcher's, the unsharer's, the holder's (its
        // mounts), then the caller's again; the cgroups were made on the
        // caller's thread meanwhile, timed apart.
        let order = [
            "taking a uid slot",
            "waiting for the launcher thread",
            "creating the box's namespaces (unshare)",
            "cloning the holder (clone, CLONE_VM | CLONE_VFORK | CLONE_PARENT)",
            "mounting the scratch tmpfs",
            "binding a device",
            "setting the hostname",
            "execveat of the box's init, until the unsharer resumes",
            "the unsharer's exit and reaping",
            "the init's report that the box is ready, the holder's pidfd",
            "the box's Landlock ruleset",
        ];
        let at: Vec<usize> = order.iter().map(|s| position(&built, s)).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "steps out of order: {built:?}");
        assert_eq!(built.last(), Some(&"the box's Landlock ruleset"));
        assert!(sb.phases().total() <= took, "{:?} of steps in a create of {took:?}", sb.phases().total());
        let beside = names(sb.phases().beside());
        assert_eq!(beside, ["creating the box's cgroups and their limits"], "{:?}", sb.phases());
        assert!(sb.phases().beside()[0].1 <= took, "{:?} in a create of {took:?}", sb.phases().beside());

        let t = std::time::Instant::now();
        let mut child = sb.spawn(Command::new("/bin/true")).unwrap();
        let took = t.elapsed();
        let spawned = child.phases();
        let steps = names(spawned.steps());
        // Every step, once, in this order: the joiner waits for the
        // program's execve (CLONE_VFORK) before it exits.
        // On v2 the program is forked into the box's cgroup (clone3); on v1
        // its joiner moves itself there first.
        let into_cgroup: &[&str] = match sb.cgroup_version() {
            Version::V2 => {
                &["cloning the program into the box's cgroup (clone3, CLONE_VM | CLONE_PARENT | CLONE_VFORK | CLONE_INTO_CGROUP)"]
            }
            // The memory hierarchy is joined by the program itself.
            Version::V1 => &[
                "joining the box's cgroups (tasks on v1, but memory's; cgroup.procs on v2)",
                "cloning the program (clone, CLONE_VM | CLONE_PARENT | CLONE_VFORK)",
                "joining the box's memory cgroup (tasks, v1)",
            ],
        };
        let in_order: Vec<&str> = [
            "the program's plan: arguments, environment, pipes",
            "waiting for the launcher thread",
            "argument and environment arrays",
            "cloning the joiner (clone, CLONE_VM | CLONE_VFORK)",
            "joining the box's namespaces (setns)",
        ]
        .into_iter()
        .chain(into_cgroup.iter().copied())
        .chain([
            "session, streams, work folder",
            "resource limits (setrlimit)",
            "capability bounding set (read each, drop what is left)",
            "groups, gid, uid",
            "capabilities cleared, death signal, no_new_privs",
            "Landlock (landlock_restrict_self)",
            "seccomp filter",
            "signal handlers",
            "signal mask",
            "execve of the program, the joiner's exit and reaping",
            "the report pipe's end of file",
            "back from the launcher thread, the program's pidfd",
        ])
        .collect();
        assert_eq!(steps, in_order, "{steps:?}");
        assert!(spawned.total() <= took, "{:?} of steps in a spawn of {took:?}", spawned.total());
        assert_eq!(child.wait().unwrap(), Exit::Code(0));
    }
}

/// A box built by root starts from the process's template mount namespace
/// (`sandbox/src/mounts.rs`): nothing of the host's tree is made private or
/// detached, no mount point is made on the host, and the template, which
/// every box's namespace is a copy of, is no way between boxes: two boxes
/// alive at once each have their own scratch (a file written in one's
/// work folder, `/tmp` and `/dev/shm` is not in the other's), neither sees
/// the template's folder, and their roots are read-only.
#[test]
fn boxes_built_by_root_start_from_the_template_each_with_its_own_scratch() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let cfg = config(hostile_limits());
    let boxes_dir = cfg.runtime_dir.join("boxes");
    let (a, b) = (Sandbox::create(cfg.clone()).unwrap(), Sandbox::create(cfg).unwrap());
    for sb in [&a, &b] {
        let steps: Vec<&str> = sb.phases().steps().iter().map(|(n, _)| *n).collect();
        assert!(steps.contains(&"entering the template mount namespace (setns)"), "{steps:?}");
        for old in ["making mounts private", "pivot_root", "detaching the old root"] {
            assert!(!steps.contains(&old), "{old:?} in {steps:?}");
        }
        assert!(!boxes_dir.join(sb.id()).exists(), "a mount point on the host for {}", sb.id());
    }
    let write = "echo a > /home/bot/from-a && echo a > /tmp/from-a && echo a > /dev/shm/from-a && echo written";
    assert_eq!(output_of(&a, Command::new("/bin/sh").args(["-c", write])), (Exit::Code(0), "written\n".to_string()));
    let look = "for f in /home/bot/from-a /tmp/from-a /dev/shm/from-a /box /old_root/box; do test -e $f && echo \"seen $f\"; done; \
                touch /x 2>/dev/null && echo 'root writable'; echo looked";
    for (sb, name) in [(&b, "the other box"), (&a, "the writer")] {
        let (exit, out) = output_of(sb, Command::new("/bin/sh").args(["-c", look]));
        assert_eq!(exit, Exit::Code(0), "{name}: {out}");
        let want =
            if name == "the writer" { "seen /home/bot/from-a\nseen /tmp/from-a\nseen /dev/shm/from-a\nlooked\n" } else { "looked\n" };
        assert_eq!(out, want, "{name}");
    }
}

/// The cgroups of this test process's boxes (named `koth-<ns>-<pid>-...`).
fn own_groups() -> Vec<String> {
    use koth_sandbox::cgroup::Hierarchy;
    let tag = format!("-{}-", std::process::id());
    let mut names: Vec<String> = <dyn Hierarchy>::detect()
        .unwrap()
        .parents()
        .iter()
        .flat_map(|p| std::fs::read_dir(p).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()))
        .filter(|n| n.starts_with("koth-") && n.contains(&tag))
        .collect();
    names.sort();
    names
}

/// The pids of this process's children, from every thread's list.
fn children() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("children")).ok())
        .flat_map(|s| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// A box's cgroups are made on the caller's thread while the launcher
/// thread starts its holder. Eight boxes built at once, half of them with a
/// root that does not exist (their holder fails while their cgroups are
/// being made), beside two busy loops this test starts: the good ones run
/// their program, the bad ones say what failed, and none leaves a cgroup
/// or a process behind.
#[test]
fn boxes_built_at_once_some_failing_leave_no_cgroup_and_no_process() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let groups_before = own_groups();
    let mut spinners: Vec<std::process::Child> =
        (0..2).map(|_| std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap()).collect();
    let spinner_pids: Vec<String> = spinners.iter().map(|c| c.id().to_string()).collect();
    let built: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let mut cfg = config(hostile_limits());
                if i % 2 == 1 {
                    cfg.root = format!("/nonexistent-koth-root-{i}").into();
                }
                match Sandbox::create(cfg) {
                    Ok(sb) => {
                        let beside = sb.phases().beside().iter().map(|(n, _)| *n).collect::<Vec<_>>();
                        let exit = sb.spawn(Command::new("/bin/true")).and_then(|mut c| c.wait());
                        (i, Ok((format!("{exit:?}"), beside)))
                    }
                    Err(e) => (i, Err(e.to_string())),
                }
            })
        })
        .collect();
    let results: Vec<_> = built.into_iter().map(|t| t.join().unwrap()).collect();
    // The list of children is read where the spinners show: it can see one.
    let seen = children();
    assert!(spinner_pids.iter().all(|p| seen.contains(p)), "{spinner_pids:?} not among {seen:?}");
    for s in &mut spinners {
        let _ = s.kill();
        let _ = s.wait();
    }
    for (i, r) in &results {
        if i % 2 == 1 {
            let e = r.as_ref().expect_err("a box with no root was built");
            assert!(e.contains("building the box failed at"), "box {i}: {e}");
        } else {
            let (exit, beside) = r.as_ref().unwrap_or_else(|e| panic!("box {i}: {e}"));
            assert_eq!(exit, "Ok(Code(0))", "box {i}");
            assert_eq!(beside, &["creating the box's cgroups and their limits"], "box {i}");
        }
    }
    assert_eq!(own_groups(), groups_before, "cgroups left behind");
    let left: Vec<String> = children().into_iter().filter(|p| !spinner_pids.contains(p)).collect();
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

/// The network namespace of a box: its own inode, from the holder's.
fn net_namespace_of(pid: i32) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}/ns/net")).unwrap().ino()
}

/// What connecting a UDP socket to 127.0.0.1:9 from inside `sb` gives:
/// `ENETUNREACH` while the box's loopback is down, `connected` once it is up
/// (UDP, which Landlock's network rules leave alone: they refuse TCP
/// connects to ports the box was not given before any route is looked up).
fn loopback_in(sb: &Sandbox) -> String {
    let probe = "import errno, socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ntry:\n    s.connect(('127.0.0.1', 9)); print('connected')\nexcept OSError as e:\n    print(errno.errorcode[e.errno])";
    let mut child = sb.spawn(Command::new(common::PYTHON).args(["-c", probe]).stdout(Stdio::Pipe)).unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert_eq!(child.wait().unwrap(), Exit::Code(0), "{out}");
    out.trim().to_owned()
}

/// Boxes built by root enter network namespaces made ahead by a thread of
/// their own (`sandbox/src/netns.rs`). Built one after another, then eight
/// at once beside two busy loops this test starts: the later boxes say they
/// took one; every box's namespace is its own (not the host's, not another
/// box's); its loopback is down, or up where the box asks for it; and no
/// thread of the supervisor is left in a box's namespace.
#[test]
fn boxes_enter_network_namespaces_made_ahead_each_its_own() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    if !koth_sandbox::Privilege::current().is_root() {
        common::missing("root: only boxes built by root take network namespaces made ahead");
        return;
    }
    let made_ahead = |sb: &Sandbox| sb.phases().steps().iter().any(|(n, _)| *n == "entering a network namespace made ahead (setns)");
    let mut boxes = Vec::new();
    let mut took = Vec::new();
    for i in 0..6 {
        let mut cfg = config(hostile_limits());
        if i % 2 == 1 {
            cfg.network = koth_sandbox::Network::Loopback { connect_ports: vec![9] };
        }
        let sb = Sandbox::create(cfg).unwrap();
        took.push(made_ahead(&sb));
        boxes.push((i % 2 == 1, sb));
        // Time for the maker to refill.
        std::thread::sleep(scaled(Duration::from_millis(100)));
    }
    // The maker starts at a process's second request at the latest (other
    // tests of this binary may have made boxes before): the last four took
    // one made ahead.
    assert!(took[2..].iter().all(|t| *t), "boxes that took a namespace made ahead, in order: {took:?}");
    let mut spinners: Vec<std::process::Child> =
        (0..2).map(|_| std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap()).collect();
    let at_once: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let mut cfg = config(hostile_limits());
                if i % 2 == 1 {
                    cfg.network = koth_sandbox::Network::Loopback { connect_ports: vec![9] };
                }
                (i % 2 == 1, Sandbox::create(cfg).unwrap())
            })
        })
        .collect();
    boxes.extend(at_once.into_iter().map(|t| t.join().unwrap()));
    for s in &mut spinners {
        let _ = s.kill();
        let _ = s.wait();
    }
    let host = net_namespace_of(std::process::id() as i32);
    let mut seen = std::collections::BTreeSet::new();
    for (i, (loopback, sb)) in boxes.iter().enumerate() {
        let ns = net_namespace_of(sb.holder_pid());
        assert_ne!(ns, host, "box {i} is in the host's network namespace");
        assert!(seen.insert(ns), "box {i} shares its network namespace with another box");
        let want = if *loopback { "connected" } else { "ENETUNREACH" };
        assert_eq!(loopback_in(sb), want, "box {i} (loopback asked: {loopback})");
    }
    // Every thread of this process is in its own namespace, the maker too.
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let tid: i32 = t.file_name().to_string_lossy().parse().unwrap();
        use std::os::unix::fs::MetadataExt;
        let ns = std::fs::metadata(format!("/proc/self/task/{tid}/ns/net")).map(|m| m.ino());
        if let Ok(ns) = ns {
            assert_eq!(ns, host, "thread {tid} ({:?}) is in another network namespace", std::fs::read_to_string(t.path().join("comm")));
        }
    }
}

/// The other way round: the cgroups cannot be made (on v2, the parent's
/// `cgroup.max.descendants` is reached) while the holder starts fine. The
/// started holder is killed and reaped, and the error is the cgroups'.
/// cgroup v1 has no such limit: this runs in the v2 VM stage.
#[test]
fn a_box_whose_cgroups_cannot_be_made_leaves_no_holder() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    use koth_sandbox::cgroup::Hierarchy;
    let hierarchy = <dyn Hierarchy>::detect().unwrap();
    if hierarchy.version() != Version::V2 {
        eprintln!("cgroup v1: no cgroup.max.descendants to reach; the v2 VM stage runs this");
        return;
    }
    let parent = hierarchy.parents()[0].clone();
    let limit = parent.join("cgroup.max.descendants");
    let was = std::fs::read_to_string(&limit).unwrap();
    // Under the descendants there are already: no new one may be made.
    std::fs::write(&limit, "0").unwrap();
    let groups_before = own_groups();
    let created = Sandbox::create(config(hostile_limits()));
    std::fs::write(&limit, was.trim()).unwrap();
    let e = created.err().expect("a box was built past cgroup.max.descendants");
    assert!(e.to_string().contains("cgroup"), "{e}");
    assert_eq!(own_groups(), groups_before, "cgroups left behind");
    assert!(children().is_empty(), "processes left behind: {:?}", children());
    // And with the limit back, boxes are built again.
    let sb = Sandbox::create(config(hostile_limits())).unwrap();
    assert_eq!(sb.spawn(Command::new("/bin/true")).unwrap().wait().unwrap(), Exit::Code(0));
}

/// `prog` in the box's folder, opened for writing by this process through
/// the folder's descriptor: what a child forked by another thread while the
/// runner wrote a bot's program holds until that child execs.
fn open_for_writing(sb: &Sandbox, name: &str) -> std::fs::File {
    let path = format!("/proc/self/fd/{}/{name}", sb.workdir().as_raw_fd());
    std::fs::OpenOptions::new().write(true).open(&path).unwrap_or_else(|e| panic!("opening {path} for writing: {e}"))
}

/// The same file run outside any box, to show it is busy now.
fn exec_outside(sb: &Sandbox, name: &str) -> std::io::Result<std::process::ExitStatus> {
    std::process::Command::new(format!("/proc/self/fd/{}/{name}", sb.workdir().as_raw_fd())).status()
}

/// A program whose file is open for writing somewhere cannot be exec'd
/// (`ETXTBSY`). The runner writes each bot's program into its folder while
/// other threads fork (boxes' unsharers, `docker` and compiler commands),
/// and a child forked during the write holds the write descriptor until it
/// execs: the bot's first start then failed, and the bot lost its match
/// for it. The spawn waits and tries again; a file that stays busy fails
/// with the reason, and the box goes on working.
#[test]
fn a_program_briefly_open_for_writing_starts_and_one_kept_open_fails_with_the_reason() {
    require_sandbox!();
    // Its box would show among the groups and children that other tests
    // here count as left behind.
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let sb = Sandbox::create(config(hostile_limits())).unwrap();
    let true_bytes = std::fs::read("/bin/true").unwrap();
    sb.workdir().write_file("prog", &true_bytes, 0o755).unwrap();

    // Briefly busy: released 30 ms after the spawn begins.
    let writer = open_for_writing(&sb, "prog");
    let busy = exec_outside(&sb, "prog").expect_err("a file open for writing was exec'd");
    assert_eq!(busy.raw_os_error(), Some(libc::ETXTBSY), "{busy}");
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        drop(writer);
    });
    let mut child = sb.spawn(Command::new("./prog")).expect("a program busy for 30 ms was not started");
    assert_eq!(child.wait().unwrap(), Exit::Code(0));
    release.join().unwrap();

    // Busy for good: the spawn fails, says why, and leaves nothing behind.
    let writer = open_for_writing(&sb, "prog");
    let t = std::time::Instant::now();
    let err = sb.spawn(Command::new("./prog")).map(|_| ()).expect_err("a busy file was exec'd");
    let waited = t.elapsed();
    match &err {
        koth_sandbox::Error::Spawn { stage, source } => {
            assert_eq!(*stage, "execve", "{err}");
            assert_eq!(source.raw_os_error(), Some(libc::ETXTBSY), "{err}");
        }
        other => panic!("not a spawn error: {other}"),
    }
    assert!(err.to_string().contains("busy"), "the error does not say the file is busy: {err}");
    // It did wait: a failure at once would be the behaviour this test is for.
    assert!(waited >= Duration::from_millis(200), "gave up after {waited:?}");
    assert!(sb.pids().unwrap().is_empty(), "a failed start left {:?}", sb.pids());
    drop(writer);
    let mut child = sb.spawn(Command::new("./prog")).unwrap();
    assert_eq!(child.wait().unwrap(), Exit::Code(0), "the box after a failed start");
}

/// What a program sees of its own start: its credentials, security state,
/// signals, limits, descriptors, folder, umask, environment and pid in the
/// box, and its three streams (read from stdin, written to stdout and
/// stderr). The uid is shown as `uid` (each box has its own).
fn what_a_program_sees(sb: &Sandbox) -> (Exit, String, String) {
    let script = "read line; echo \"stdin: $line\"; echo \"pid: $$\"; echo \"folder: $(pwd)\"; echo \"umask: $(umask)\"; \
                  grep -E '^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs|Seccomp|Seccomp_filters|Sig(Blk|Ign|Cgt)|Umask):' /proc/self/status; \
                  cat /proc/self/limits; ls /proc/self/fd; env | sort; echo to-stderr >&2";
    let mut child =
        sb.spawn(Command::new("/bin/sh").args(["-c", script]).stdin(Stdio::Pipe).stdout(Stdio::Pipe).stderr(Stdio::Pipe)).unwrap();
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"hello\n").unwrap();
    drop(stdin);
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let uid = sb.uid().to_string();
    (child.wait().unwrap(), out.replace(&uid, "uid"), err)
}

/// A box's first program parked before its `execve` (`Sandbox::park_first_program`,
/// which the pool does for every box it builds ahead) starts exactly as a
/// program started at once: the same credentials, capabilities, seccomp,
/// `no_new_privs`, signal state (the supervisor's handlers, installed
/// before the park, are not inherited), limits, descriptors, folder,
/// environment and pid, and its own three streams. It is the process that
/// was parked, and once started it is no longer parked.
#[test]
fn a_parked_program_starts_exactly_as_a_program_started_at_once() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let signals = [libc::SIGUSR1, libc::SIGTERM, libc::SIGCHLD, libc::SIGRTMIN() + 3];
    let before: Vec<_> = signals.iter().map(|&sig| unsafe { libc::signal(sig, count_signal as *const () as libc::sighandler_t) }).collect();
    let mut parked = Sandbox::create(config(hostile_limits())).unwrap();
    assert!(parked.park_first_program().unwrap());
    assert!(!parked.park_first_program().unwrap(), "a second program was parked");
    let parked_pid = parked.parked_program().unwrap();
    assert_eq!(parked.pids().unwrap(), [parked_pid]);
    let at_once = Sandbox::create(config(hostile_limits())).unwrap();
    assert_eq!(at_once.parked_program(), None);

    let (exit, seen_parked, err_parked) = what_a_program_sees(&parked);
    let (exit_at_once, seen_at_once, err_at_once) = what_a_program_sees(&at_once);
    for (&sig, &old) in signals.iter().zip(&before) {
        unsafe { libc::signal(sig, old) };
    }
    assert_eq!((exit, exit_at_once), (Exit::Code(0), Exit::Code(0)), "{seen_parked}\n{err_parked}\n{seen_at_once}\n{err_at_once}");
    assert_eq!(seen_parked, seen_at_once);
    assert_eq!((err_parked.as_str(), err_at_once.as_str()), ("to-stderr\n", "to-stderr\n"));
    for want in ["stdin: hello", "pid: 2", "folder: /home/bot", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"] {
        assert!(seen_parked.lines().any(|l| l == want), "{want:?} not in {seen_parked}");
    }
    assert_eq!(parked.parked_program(), None, "still parked after its start");

    // It was the parked process that ran: started once more, it is another.
    let child = parked.spawn(Command::new("/bin/sleep").arg("5")).unwrap();
    assert_ne!(child.pid(), parked_pid);
    drop(child);
    let mut again = Sandbox::create(config(hostile_limits())).unwrap();
    assert!(again.park_first_program().unwrap());
    let pid = again.parked_program().unwrap();
    let child = again.spawn(Command::new("/bin/sleep").arg("5")).unwrap();
    assert_eq!(child.pid(), pid, "the first program is not the parked process");
    let steps: Vec<&str> = child.phases().steps().iter().map(|(n, _)| *n).collect();
    assert!(steps.contains(&"starting the parked program (sendmsg of its streams)"), "{steps:?}");
    assert!(!steps.iter().any(|s| s.contains("seccomp")), "the parked program's start confined it again: {steps:?}");
}

/// A parked program that is gone when the box's first program is started
/// (killed from outside the box) costs nothing but the start it would have
/// saved: the program starts as any other, and the dead one is reaped.
/// One that cannot run what it is sent says why, as any other does.
#[test]
fn a_parked_program_gone_or_failing_leaves_the_box_as_usable_as_any() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let mut sb = Sandbox::create(config(hostile_limits())).unwrap();
    assert!(sb.park_first_program().unwrap());
    let pid = sb.parked_program().unwrap();
    unsafe { libc::kill(pid, libc::SIGKILL) };
    // Gone (a zombie) before its start, as one killed while it waited is.
    let state = || std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap().rsplit_once(") ").unwrap().1.chars().next();
    while state() != Some('Z') {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (exit, out) = output_of(&sb, Command::new("/bin/echo").arg("started"));
    assert_eq!((exit, out.as_str()), (Exit::Code(0), "started\n"));
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the killed parked program was not reaped");

    let mut sb = Sandbox::create(config(hostile_limits())).unwrap();
    assert!(sb.park_first_program().unwrap());
    let pid = sb.parked_program().unwrap();
    let err = sb.spawn(Command::new("/nonexistent/program")).unwrap_err();
    assert!(err.to_string().contains("execve") && err.to_string().contains("No such file"), "{err}");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the parked program that failed was not reaped");
    let (exit, out) = output_of(&sb, Command::new("/bin/echo").arg("next"));
    assert_eq!((exit, out.as_str()), (Exit::Code(0), "next\n"));

    // A paused box refuses to start it, as any program, and starts it once thawed.
    let mut sb = Sandbox::create(config(hostile_limits())).unwrap();
    assert!(sb.park_first_program().unwrap());
    let pid = sb.parked_program().unwrap();
    sb.freeze().unwrap();
    assert!(sb.spawn(Command::new("/bin/true")).unwrap_err().to_string().contains("paused"));
    sb.thaw().unwrap();
    let mut child = sb.spawn(Command::new("/bin/true")).unwrap();
    assert_eq!(child.pid(), pid);
    assert_eq!(child.wait().unwrap(), Exit::Code(0));

    // A box whose programs may hold four descriptors (the streams and one
    // for the dynamic loader): the parked program holds its socket alone
    // (its number above the limit, which only new descriptors must keep
    // under) and is sent the three streams, which take 0-2.
    let mut few = hostile_limits();
    few.open_files = 4;
    let mut sb = Sandbox::create(config(few)).unwrap();
    assert!(sb.park_first_program().unwrap());
    let pid = sb.parked_program().unwrap();
    let mut child = sb
        .spawn(
            Command::new("/bin/sh")
                .args(["-c", "read x; echo \"$x\"; ls /nonexistent; ls /proc/self/fd"])
                .stdin(Stdio::Pipe)
                .stdout(Stdio::Pipe)
                .stderr(Stdio::Pipe),
        )
        .unwrap();
    assert_eq!(child.pid(), pid);
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"in\n").unwrap();
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(child.wait().unwrap(), Exit::Code(0), "{out} {err}");
    // ls holds one more, its own listing of the folder. (No redirection in
    // the script: the shell keeps a redirected descriptor at 10 or above.)
    assert_eq!(out, "in\n0\n1\n2\n3\n");
    assert!(err.contains("/nonexistent"), "{err}");
}

/// Boxes dropped with their first program still parked, many at once on a
/// busy host, leave no process (not even a zombie) and none of the
/// supervisor's descriptors behind; the supervisor is as it was. Boxes
/// whose parked programs are started at once, from as many threads, each
/// run their own program with their own streams.
#[test]
fn parked_programs_at_once_on_a_busy_host_start_their_own_or_leave_nothing() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let fds_before = descriptor_kinds();
    let boxes: Vec<Sandbox> = (0..8)
        .map(|_| {
            let mut sb = Sandbox::create(config(hostile_limits())).unwrap();
            assert!(sb.park_first_program().unwrap());
            sb
        })
        .collect();
    let (to_start, to_drop) = boxes.split_at(4);
    let dropped: Vec<i32> = to_drop.iter().map(|sb| sb.parked_program().unwrap()).collect();
    let barrier = std::sync::Barrier::new(8);
    std::thread::scope(|s| {
        for (i, sb) in to_start.iter().enumerate() {
            let barrier = &barrier;
            s.spawn(move || {
                barrier.wait();
                let (exit, out) = output_of(sb, Command::new("/bin/sh").args(["-c", "echo box $0 $$", &i.to_string()]));
                assert_eq!((exit, out), (Exit::Code(0), format!("box {i} 2\n")));
            });
        }
        let to_drop = boxes[4..].iter().collect::<Vec<_>>();
        for _ in 0..4 {
            let barrier = &barrier;
            s.spawn(move || barrier.wait());
        }
        drop(to_drop);
    });
    drop(boxes);
    stop.store(true, Ordering::Relaxed);
    for t in spinners {
        t.join().unwrap();
    }
    for pid in dropped {
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "a dropped box's parked program {pid} is left");
    }
    assert_eq!(descriptor_kinds(), fds_before, "descriptors left open");
}

/// A parked program stopped before its start (`SIGSTOP` from outside the
/// box: nothing in it runs before it) never takes its streams: the start
/// ends at the spawn deadline, with the box's programs killed, and says so;
/// the box then starts programs as any other.
#[test]
fn a_parked_program_stopped_before_its_start_ends_at_the_deadline() {
    require_sandbox!();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let mut sb = Sandbox::create(config(hostile_limits())).unwrap();
    assert!(sb.park_first_program().unwrap());
    let pid = sb.parked_program().unwrap();
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let began = std::time::Instant::now();
    let err = sb.spawn(Command::new("/bin/true")).unwrap_err();
    assert!(err.to_string().contains("reaching execve in time"), "{err}");
    assert!(began.elapsed() < Duration::from_secs(60), "the start took {:?}", began.elapsed());
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the stopped parked program was not killed and reaped");
    let (exit, out) = output_of(&sb, Command::new("/bin/echo").arg("after"));
    assert_eq!((exit, out.as_str()), (Exit::Code(0), "after\n"));
}
