//! Hostile programs, in C and in Python, each run in a fresh box with its
//! safe outcome asserted. After every run the harness checks that no process
//! of the box is left, its cgroup is gone and host files are unchanged
//! (`common::run_hostile`).

mod common;

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::time::Duration;

use common::{field, host_pids, hostile_limits, run_hostile, scaled, Lang, LANGS};
use koth_sandbox::{Exit, Outcome};

const EAGAIN: i64 = libc::EAGAIN as i64;

fn no_args() -> Vec<String> {
    Vec::new()
}

#[test]
fn fork_bomb_hits_the_pids_limit() {
    require_sandbox!();
    for lang in LANGS {
        let r = run_hostile(lang, "fork_bomb", &no_args(), hostile_limits());
        assert_eq!(r.out.usage.outcome, Outcome::Ok, "{lang:?}: {}", r.stdout);
        assert_eq!(field(&r.stdout, "errno"), EAGAIN, "{lang:?}");
        assert!(field(&r.stdout, "forks") < 64, "{lang:?}: {}", r.stdout);
    }
}

#[test]
fn thread_bomb_hits_the_pids_limit() {
    require_sandbox!();
    for lang in LANGS {
        let r = run_hostile(lang, "thread_bomb", &no_args(), hostile_limits());
        assert_eq!(field(&r.stdout, "errno"), EAGAIN, "{lang:?}: {}", r.stdout);
        assert!(field(&r.stdout, "threads") < 64, "{lang:?}: {}", r.stdout);
    }
}

#[test]
fn memory_bomb_is_killed_for_memory() {
    require_sandbox!();
    for lang in LANGS {
        let limits = hostile_limits();
        let r = run_hostile(lang, "memory_bomb", &no_args(), limits.clone());
        let u = &r.out.usage;
        assert_eq!(u.outcome, Outcome::MemoryLimit, "{lang:?}: {u:?}");
        assert!(u.oom_kills >= 1, "{lang:?}: {u:?}");
        if let Some(peak) = u.peak_memory {
            assert!(peak <= limits.memory + (1 << 20), "{lang:?}: peak {peak} above the limit");
        }
    }
}

#[test]
fn filling_tmp_shm_and_the_work_folder_stops_at_the_disk_limit() {
    require_sandbox!();
    let limits = hostile_limits();
    for lang in LANGS {
        for dir in ["/tmp", "/dev/shm", "/var/tmp", "."] {
            let r = run_hostile(lang, "fill", &[dir.to_owned(), "many".to_owned()], limits.clone());
            assert_eq!(field(&r.stdout, "errno"), libc::ENOSPC as i64, "{lang:?} {dir}: {}", r.stdout);
            assert!(field(&r.stdout, "bytes") as u64 <= limits.disk, "{lang:?} {dir}: {}", r.stdout);
        }
        // One big file stops at the file size limit first.
        let r = run_hostile(lang, "fill", &[".".to_owned(), "one".to_owned()], limits.clone());
        assert_eq!(field(&r.stdout, "errno"), libc::EFBIG as i64, "{lang:?}: {}", r.stdout);
        assert_eq!(field(&r.stdout, "bytes") as u64, limits.file_size, "{lang:?}: {}", r.stdout);
    }
}

#[test]
fn file_descriptors_stop_at_the_limit() {
    require_sandbox!();
    for lang in LANGS {
        let r = run_hostile(lang, "fds", &no_args(), hostile_limits());
        assert_eq!(field(&r.stdout, "errno"), libc::EMFILE as i64, "{lang:?}: {}", r.stdout);
        assert!(field(&r.stdout, "fds") <= 64, "{lang:?}: {}", r.stdout);
    }
}

#[test]
fn busy_loop_is_stopped_at_its_cpu_time() {
    require_sandbox!();
    for lang in LANGS {
        let limit = scaled(Duration::from_secs(1));
        let limits = koth_sandbox::Limits { cpu_time: Some(limit), ..hostile_limits() };
        let r = run_hostile(lang, "busy", &no_args(), limits);
        let u = &r.out.usage;
        assert_eq!(u.outcome, Outcome::CpuTimeLimit, "{lang:?}: {u:?}");
        assert!(u.cpu_time >= limit, "{lang:?}: {u:?}");
        assert!(u.cpu_time < limit + scaled(Duration::from_millis(300)), "{lang:?}: overshoot {u:?}");
    }
}

#[test]
fn sleeping_forever_is_stopped_at_its_wall_time() {
    require_sandbox!();
    for lang in LANGS {
        let limit = scaled(Duration::from_secs(1));
        let limits = koth_sandbox::Limits { wall_time: Some(limit), ..hostile_limits() };
        let r = run_hostile(lang, "sleep", &no_args(), limits);
        let u = &r.out.usage;
        assert_eq!(u.outcome, Outcome::WallTimeLimit, "{lang:?}: {u:?}");
        assert!(u.wall_time >= limit && u.wall_time < limit + scaled(Duration::from_millis(500)), "{lang:?}: {u:?}");
        assert!(u.cpu_time < scaled(Duration::from_millis(500)), "{lang:?}: {u:?}");
    }
}

#[test]
fn a_daemon_does_not_outlive_its_box() {
    require_sandbox!();
    for lang in LANGS {
        // run_hostile asserts that no process of the box's uid is left.
        let r = run_hostile(lang, "daemon", &no_args(), hostile_limits());
        assert_eq!(r.out.usage.outcome, Outcome::Ok, "{lang:?}");
        assert!(r.stdout.contains("parent leaving"), "{lang:?}: {}", r.stdout);
    }
}

#[test]
fn kill_minus_one_and_killing_the_parent_reach_nothing_outside() {
    require_sandbox!();
    for lang in LANGS {
        // Our pid first, then every other pid the host has now: the program
        // tries each (and its own namespace's first 1024) rather than every
        // number up to 70000, which took Python 0.2 s of CPU here and its
        // whole CPU limit in the emulated VM beside CI's builds.
        let me = std::process::id().to_string();
        let mut pids = vec![me.clone()];
        pids.extend(host_pids().into_iter().filter(|p| *p != me));
        let r = run_hostile(lang, "killer", &pids, hostile_limits());
        // It sees no other process, cannot signal the holder (pid 1) or our
        // pid (which means nothing in its PID namespace)...
        assert!(r.stdout.contains("visible=0 kill1=-1 killhost=-1"), "{lang:?}: {:?}: {}", r.out.usage, r.stdout);
        assert!(r.stdout.contains("survived kill(-1)"), "{lang:?}: {:?}: {}", r.out.usage, r.stdout);
        // ...and "killing its parent" (pid 0 in its namespace: its own process
        // group) kills only itself.
        assert_eq!(r.out.usage.exit, Exit::Signal(libc::SIGKILL), "{lang:?}: {}", r.stdout);
        assert_eq!(r.out.usage.outcome, Outcome::Crashed, "{lang:?}");
    }
}

#[test]
fn flooding_stdout_without_newlines_is_cut_at_the_output_limit() {
    require_sandbox!();
    for lang in LANGS {
        let limits = hostile_limits();
        let r = run_hostile(lang, "flood", &no_args(), limits.clone());
        assert_eq!(r.out.usage.outcome, Outcome::OutputLimit, "{lang:?}");
        assert_eq!(r.out.stdout.len() as u64, limits.output, "{lang:?}");
        assert!(r.out.usage.stdout_bytes > limits.output, "{lang:?}");
    }
}

#[test]
fn secrets_and_other_boxes_are_out_of_reach() {
    require_sandbox!();
    // Another box, alive, with a secret in its work folder.
    let other = koth_sandbox::Sandbox::create(common::config(hostile_limits())).unwrap();
    let secret = format!("secret-{}-{}", std::process::id(), other.id());
    other.workdir().write_file("secret", secret.as_bytes(), 0o644).unwrap();
    let paths = vec![
        "/etc/shadow".to_owned(),
        "/proc/1/environ".to_owned(),
        "/proc/1/root/etc/shadow".to_owned(),
        format!("/proc/{}/root/home/bot/secret", other.holder_pid()),
        format!("/proc/{}/environ", std::process::id()),
        format!("/run/koth-test/sandbox/boxes/{}/work/secret", other.id()),
        // Where each box started from the template mounts its scratch, in
        // the template's tmpfs under the box's root (sandbox/src/mounts.rs).
        "/box/work/secret".to_owned(),
        "/root/.bashrc".to_owned(),
    ];
    // Host-wide counters that move with other bots' activity read empty.
    let counters = ["/proc/loadavg", "/proc/pressure/cpu", "/proc/interrupts", "/proc/diskstats", "/proc/schedstat", "/proc/vmstat"];
    let mut all = paths.clone();
    all.extend(counters.iter().map(|c| c.to_string()));
    for lang in LANGS {
        let r = run_hostile(lang, "snoop", &all, hostile_limits());
        for c in counters {
            // Read as empty (C prints nothing after READ, Python b''), or
            // absent (in a folder shown empty).
            let line = r.stdout.lines().find(|l| l.starts_with(&format!("{c}: "))).unwrap_or("");
            assert!(["READ", "READ b''", "errno=2"].iter().any(|w| line.trim_end() == format!("{c}: {w}")), "{lang:?}: {c}: {line:?}");
        }
        assert!(
            !r.stdout.lines().any(|l| l.contains("READ") && !counters.iter().any(|c| l.starts_with(c))),
            "{lang:?} read something: {}",
            r.stdout
        );
        assert!(!r.stdout.contains(&secret), "{lang:?}");
        let refused = r.stdout.lines().filter(|l| paths.iter().any(|p| l.starts_with(&format!("{p}: errno=")))).count();
        assert_eq!(refused, paths.len(), "{lang:?}: {}", r.stdout);
        assert!(r.stdout.contains("/etc/shadow: errno=13"), "{lang:?}: {}", r.stdout);
    }
    // The other box is untouched.
    let (back, _) = other.workdir().read_file("secret", 1024).unwrap();
    assert_eq!(back, secret.as_bytes());
}

#[test]
fn writing_outside_the_folder_fails_and_changes_nothing() {
    require_sandbox!();
    let tag = format!("koth-pwned-{}", std::process::id());
    let manifest = env!("CARGO_MANIFEST_DIR");
    let targets = vec![
        format!("/etc/{tag}"),
        format!("/usr/{tag}"),
        format!("/{tag}"),
        format!("{manifest}/{tag}"),
        format!("/dev/{tag}"),
        format!("/home/{tag}"),
        format!("/sys/{tag}"),
        format!("/run/{tag}"),
        "/proc/sys/kernel/hostname".to_owned(),
        "/etc/passwd".to_owned(),
    ];
    for lang in LANGS {
        let r = run_hostile(lang, "scribble", &targets, hostile_limits());
        assert!(!r.stdout.contains("WROTE"), "{lang:?}: {}", r.stdout);
        assert_eq!(r.stdout.matches("errno=").count(), targets.len(), "{lang:?}: {}", r.stdout);
        for t in &targets[..8] {
            assert!(!std::path::Path::new(t).exists(), "{t} appeared on the host");
        }
    }
}

#[test]
fn no_socket_reaches_the_host_or_the_outside() {
    require_sandbox!();
    let pid = std::process::id();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let mut unix_paths = Vec::new();
    let mut unix_listeners = Vec::new();
    for dir in ["/run", "/tmp", "/var/tmp"] {
        let p = format!("{dir}/koth-hostile-{pid}.sock");
        let _ = std::fs::remove_file(&p);
        let l = UnixListener::bind(&p).unwrap();
        l.set_nonblocking(true).unwrap();
        // World-writable, so only the sandbox stands between it and the bot.
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        unix_paths.push(p);
        unix_listeners.push(l);
    }
    let abstract_name = format!("koth-hostile-{pid}");
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        let l = UnixListener::bind_addr(&addr).unwrap();
        l.set_nonblocking(true).unwrap();
        l
    };
    let mut args = vec![tcp.local_addr().unwrap().port().to_string(), udp.local_addr().unwrap().port().to_string()];
    args.extend(unix_paths.iter().cloned());
    args.push("--".into());
    args.push(abstract_name);
    for lang in LANGS {
        let r = run_hostile(lang, "sockets", &args, hostile_limits());
        let attempts: Vec<&str> = r.stdout.lines().filter(|l| !l.starts_with("interfaces=")).collect();
        assert_eq!(attempts.len(), 7 + unix_paths.len() + 1, "{lang:?}: {}", r.stdout);
        for line in attempts {
            if line.starts_with("tcp bind:") && koth_sandbox::landlock_rules::kernel_abi() < 4 {
                // Without Landlock's TCP rules a bind succeeds, but only in the
                // box's own empty namespace, which nothing can reach.
                continue;
            }
            assert!(line.contains(": errno="), "{lang:?}: {line}");
        }
        if koth_sandbox::landlock_rules::kernel_abi() >= 4 {
            assert!(r.stdout.contains("tcp bind: errno=13"), "{lang:?}: {}", r.stdout);
        }
        // Only an interface that is down: nothing leads out.
        assert_eq!(field(&r.stdout, "interfaces"), 1, "{lang:?}: {}", r.stdout);
        assert!(r.stdout.contains("raw icmp socket: errno=1"), "{lang:?}: {}", r.stdout);
        // Families no bot needs do not exist for it (seccomp).
        let eafnosupport = libc::EAFNOSUPPORT;
        for what in ["packet socket", "vsock socket", "crypto api socket"] {
            assert!(r.stdout.contains(&format!("{what}: errno={eafnosupport}")), "{lang:?}: {what}: {}", r.stdout);
        }
    }
    assert!(tcp.accept().is_err(), "a box reached the host's TCP listener");
    assert!(udp.recv(&mut [0u8; 16]).is_err(), "a box reached the host's UDP socket");
    for l in unix_listeners.iter().chain([&abstract_listener]) {
        assert!(l.accept().is_err(), "a box reached a host unix socket");
    }
    for p in unix_paths {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn ptrace_is_denied() {
    require_sandbox!();
    for lang in LANGS {
        let r = run_hostile(lang, "ptrace", &no_args(), hostile_limits());
        assert_eq!(r.stdout.matches("denied").count(), 3, "{lang:?}: {}", r.stdout);
        assert!(!r.stdout.contains(": ok"), "{lang:?}: {}", r.stdout);
    }
}

#[test]
fn a_setuid_binary_gives_no_privilege() {
    require_sandbox!();
    use std::os::unix::fs::PermissionsExt;
    // A setuid-root program on the host, visible in the box's root.
    let dir = std::path::PathBuf::from(format!("/opt/koth-test-suid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.join("whoami");
    common::copy_compiled_c("whoami", &exe);
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let exe_s = exe.to_string_lossy().into_owned();
    let out = koth_sandbox::run_once(common::config(hostile_limits()), &exe_s, &[], &[], b"", |_| Ok(())).unwrap();
    let py = koth_sandbox::run_once(
        common::config(hostile_limits()),
        common::PYTHON,
        &[
            "-c".into(),
            "import subprocess, sys; sys.stdout.write(subprocess.run([sys.argv[1]], capture_output=True, text=True).stdout)".into(),
            exe_s.clone(),
        ],
        &[],
        b"",
        |_| Ok(()),
    )
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    for (what, r) in [("exec", out), ("python subprocess", py)] {
        let text = String::from_utf8_lossy(&r.stdout).into_owned();
        let uid = r.uid.to_string();
        assert_eq!(text.trim(), format!("uid={uid} euid={uid}"), "{what}: the setuid bit took effect");
    }
}

#[test]
fn links_and_fifos_left_in_the_folder_do_not_trip_the_supervisor() {
    require_sandbox!();
    use koth_sandbox::{Command, Error, Sandbox};
    let shadow_before = std::fs::read("/etc/shadow").unwrap_or_default();
    for lang in LANGS {
        let sb = Sandbox::create(common::config(hostile_limits())).unwrap();
        let cmd = match lang {
            Lang::C => {
                sb.workdir().write_file("prog", &common::compile_c("plant"), 0o755).unwrap();
                Command::new("./prog")
            }
            Lang::Python => {
                let src = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/programs/plant.py")).unwrap();
                sb.workdir().write_file("prog.py", &src, 0o644).unwrap();
                Command::new(common::PYTHON).arg("prog.py")
            }
        };
        let mut child = sb.spawn(cmd.stdout(koth_sandbox::Stdio::Pipe)).unwrap();
        let mut out = String::new();
        child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
        assert_eq!(child.wait().unwrap(), Exit::Code(0), "{lang:?}");
        assert!(out.contains("hard link to /etc/passwd: -1"), "{lang:?}: {out}");
        let wd = sb.workdir();
        for (path, why) in [
            ("out.txt", "symbolic link"),
            ("rootlink/etc/shadow", "symbolic link"),
            ("etclink/passwd", "symbolic link"),
            ("fifo", "FIFO"),
            ("hard", "hard links"),
            ("dir", "directory"),
            ("../../etc/shadow", "plain relative"),
            ("/etc/shadow", "plain relative"),
        ] {
            match wd.read_file(path, 1 << 20) {
                Err(Error::UnsafePath { reason, .. }) => assert!(reason.contains(why), "{lang:?} {path}: {reason}"),
                other => panic!("{lang:?}: reading {path} gave {other:?}"),
            }
        }
        // Writing replaces a planted link or FIFO instead of going through it.
        wd.write_file("out.txt", b"new", 0o644).unwrap();
        wd.write_file("fifo", b"new", 0o644).unwrap();
        assert_eq!(wd.read_file("out.txt", 100).unwrap().0, b"new");
        assert_eq!(wd.read_file("fifo", 100).unwrap().0, b"new");
        assert!(matches!(wd.write_file("etclink/x", b"x", 0o644), Err(Error::UnsafePath { .. })), "{lang:?}");
        assert!(matches!(wd.write_file("dir", b"x", 0o644), Err(Error::UnsafePath { .. })), "{lang:?}");
        let (uid, cgroups, holder) = (sb.uid(), sb.cgroup_paths(), sb.holder_pid());
        drop(child);
        drop(sb);
        common::assert_clean(&format!("plant ({lang:?})"), uid, &cgroups, holder);
    }
    assert_eq!(std::fs::read("/etc/shadow").unwrap_or_default(), shadow_before);
    assert!(!std::path::Path::new("/etc/x").exists());
}

/// Threads held in uninterruptible disk waits (O_DIRECT reads of a large
/// file on the host's disk, visible in the box's read-only root): the v1
/// freezer cannot freeze them and SIGKILL waits for their reads to return.
/// The run still ends at its wall-time limit, reported as such, with every
/// kill sent at once and nothing waited for without a bound; the tasks die
/// as their reads return and nothing of the box is left.
#[test]
fn threads_stuck_in_the_kernel_are_killed_and_hold_nothing_up() {
    require_sandbox!();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dstate");
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big");
    let size: u64 = 512 << 20;
    if std::fs::metadata(&big).map(|m| m.len()).unwrap_or(0) != size {
        use std::io::Write;
        let mut f = std::fs::File::create(&big).unwrap();
        let block: Vec<u8> = (0..1u32 << 20).map(|i| (i * 31 + 7) as u8).collect();
        for _ in 0..size >> 20 {
            f.write_all(&block).unwrap();
        }
        f.sync_all().unwrap();
    }
    for p in [dir.as_path(), big.as_path()] {
        use std::os::unix::fs::PermissionsExt;
        let mode = if p.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    // 16 readers × 64 MiB buffers, with room to spare.
    let limits =
        koth_sandbox::Limits { memory: 2 << 30, cpu_time: None, wall_time: Some(scaled(Duration::from_secs(1))), ..hostile_limits() };
    // Watch for tasks in state D while it runs.
    let uid_seen = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (uid_seen, stop) = (uid_seen.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut d_seen = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let uid = uid_seen.load(std::sync::atomic::Ordering::Relaxed);
                if uid != 0 {
                    d_seen += common::tasks_in_state(uid, 'D');
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            d_seen
        })
    };
    let started = std::time::Instant::now();
    let args = vec![big.display().to_string(), "16".into(), "64".into()];
    let r = common::run_hostile_watched(Lang::C, "dstate", &args, limits, |uid| uid_seen.store(uid, std::sync::atomic::Ordering::Relaxed));
    let took = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let d_seen = watcher.join().unwrap();
    eprintln!("{} ; tasks seen in state D: {d_seen}; the run took {took:?}", r.stdout.trim());
    assert_eq!(r.out.usage.outcome, Outcome::WallTimeLimit, "{:?}", r.out.usage);
    assert!(r.stdout.contains("readers=16"), "{}", r.stdout);
    if common::slowdown() == 1 && r.stdout.contains("direct=1") {
        assert!(d_seen > 0, "no task was ever seen in state D: the test did not test anything");
    }
    // Bounded: the limit, a teardown that does not wait for the reads, and
    // slack for a loaded machine (the old code failed after 5 s freezer waits).
    assert!(took < scaled(Duration::from_secs(20)), "the run took {took:?}");
    // Half a GiB of scratch: gone once the test has passed.
    let _ = std::fs::remove_file(&big);
}

/// The environment variable that makes this test binary one of the
/// supervisors of [`a_box_out_of_memory_never_kills_its_supervisor`]: its
/// value says which.
const OOM_SUPERVISOR: &str = "KOTH_TEST_OOM_SUPERVISOR";

/// A program between its clone and its `execve` runs on the supervisor's
/// memory while it is already in the box's memory cgroup. If the box runs
/// out of memory in that window, the OOM killer rates that program by the
/// supervisor's memory; were it picked, the kernel would kill every
/// process sharing that memory: the supervisor (a runner, with every match
/// it runs). Each supervisor holds 256 MiB and runs in a process of its
/// own (this binary, run again), so that its death is reported, not
/// suffered:
/// * `spawns`: `/bin/true` started in a loop in a 64 MiB box where a
///   memory bomb is restarted for ever, until the box has counted 100 OOM
///   kills. Before the fix (the program is its joiner's vfork child,
///   `sandbox/src/spawn.rs`) the supervisor was killed within a second.
/// * `arguments`: a box's first program, parked or not, whose arguments
///   alone fill its 4 MiB box: the copy its `execve` makes is charged to
///   the box before the program leaves the supervisor's memory. A parked
///   program (nobody's vfork child) took the supervisor with it when it
///   exec'd 12 MiB of arguments, before `spawn::fits_a_parked_start`.
/// * `racing`: six memory bombs spawned at once, from as many threads, into
///   a 16 MiB box whose first program is parked, each with 3.5 MiB of
///   arguments (the parked one's fit a quarter of the box), on a host kept
///   busy by as many spinners as it has CPUs, box after box: the parked
///   program runs one of them and the others start beside the OOM kills
///   of the first. A spawn that came in while the parked program was on
///   its way to `execve` (nobody's vfork child) could fill the box in that
///   window; `Sandbox::spawn` makes such a spawn wait. A spawn that finds
///   the box full fails at the step that did, and says so.
#[test]
fn a_box_out_of_memory_never_kills_its_supervisor() {
    require_sandbox!();
    for role in ["spawns", "arguments", "racing"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "oom_supervisor", "--include-ignored", "--nocapture", "--test-threads=1"])
            .env(OOM_SUPERVISOR, role)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("{}", stderr.trim());
        use std::os::unix::process::ExitStatusExt;
        assert_ne!(
            out.status.signal(),
            Some(libc::SIGKILL),
            "{role}: the supervisor was killed (SIGKILL), most likely by its box's OOM killer; the kernel's last kills:\n{}",
            last_oom_kills()
        );
        assert!(out.status.success(), "{role}: the supervisor failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stdout));
        let line = stderr.lines().find(|l| l.starts_with(&format!("oom-supervisor {role}:"))).expect("the supervisor's report");
        if role == "spawns" {
            let (ooms, spawns) = (field(line, "oom_kills"), field(line, "spawns"));
            // Else it tested nothing: spawns beside the OOM kills
            // (the window is about half of each spawn here).
            assert!(ooms >= oom_kills_wanted() as i64 / 2 && spawns >= ooms, "too few OOM kills or spawns to have tested anything: {line}");
        }
        if role == "racing" {
            // Else it tested nothing: every box met its limit with
            // programs starting beside its parked one.
            let (boxes, ooms) = (field(line, "boxes"), field(line, "oom_kills"));
            assert!(ooms >= boxes, "fewer OOM kills than boxes: {line}");
        }
    }
}

/// The kernel's last OOM kills (`dmesg`), for a supervisor's death: a
/// task named after a launcher thread ("koth-launcher-N") with the
/// supervisor's memory is a child not yet exec'd; uid 0, a joiner or a
/// program before it took the box's ids (`sandbox/src/spawn.rs`, "The
/// box's memory limit and the supervisor").
fn last_oom_kills() -> String {
    match std::process::Command::new("dmesg").output() {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            let kills: Vec<&str> = text.lines().filter(|l| l.contains("Killed process")).collect();
            kills[kills.len().saturating_sub(3)..].join("\n")
        }
        Err(e) => format!("(dmesg: {e})"),
    }
}

/// How many OOM kills the `spawns` supervisor waits for (in its box): fewer under
/// emulation (the v2 VM), where an OOM kill took 2.7 s and a spawn 0.7 s
/// beside the rest of this suite (100 kills and 400 spawns took 270 s).
fn oom_kills_wanted() -> u64 {
    if common::slowdown() > 1 {
        20
    } else {
        100
    }
}

/// The supervisors of [`a_box_out_of_memory_never_kills_its_supervisor`],
/// run by it alone.
#[test]
#[ignore = "run by a_box_out_of_memory_never_kills_its_supervisor, in a process of its own"]
fn oom_supervisor() {
    let role = std::env::var(OOM_SUPERVISOR).expect("run by a_box_out_of_memory_never_kills_its_supervisor only");
    // Resident, so that the supervisor's memory outweighs any program's.
    // Filled by one memset (an element-by-element fill took 7 s in this
    // debug build, and many times that under emulation).
    let ballast = vec![1u8; 256usize << 20];
    let resident_mib = ballast.iter().step_by(4096).filter(|&&b| b != 0).count() >> 8;
    match role.as_str() {
        "spawns" => {
            let limits = koth_sandbox::Limits { memory: 64 << 20, cpu_time: None, wall_time: None, ..hostile_limits() };
            let sb = koth_sandbox::Sandbox::create(common::config(limits)).unwrap();
            sb.workdir().write_file("bomb", &common::compile_c("memory_bomb"), 0o755).unwrap();
            let mut bombs = sb.spawn(koth_sandbox::Command::new("/bin/sh").args(["-c", "while :; do ./bomb; done"])).unwrap();
            let started = std::time::Instant::now();
            let mut spawns = 0u64;
            while sb.oom_kills().unwrap() < oom_kills_wanted() && started.elapsed() < scaled(Duration::from_secs(20)) {
                let exit = sb.spawn(koth_sandbox::Command::new("/bin/true")).unwrap().wait().unwrap();
                assert_eq!(exit, Exit::Code(0));
                spawns += 1;
            }
            assert!(bombs.try_wait().unwrap().is_none(), "the bombs' loop ended");
            eprintln!(
                "oom-supervisor spawns: oom_kills={} spawns={spawns} in {:?} (ballast {resident_mib} MiB)",
                sb.oom_kills().unwrap(),
                started.elapsed()
            );
            sb.kill_all().unwrap();
        }
        "arguments" => {
            // 64 MiB of stack lets an execve take up to 6 MiB of arguments.
            let limits = koth_sandbox::Limits { memory: 4 << 20, stack: 64 << 20, cpu_time: None, wall_time: None, ..hostile_limits() };
            let mut seen = Vec::new();
            for (park, mib) in [(true, 0.9), (true, 1.5), (true, 12.0), (false, 12.0)] {
                let mut sb = koth_sandbox::Sandbox::create(common::config(limits.clone())).unwrap();
                if park {
                    assert!(sb.park_first_program().unwrap());
                }
                let arg = "x".repeat(100 << 10);
                let args = vec![arg; (mib * 10.24) as usize];
                let what = match sb.spawn(koth_sandbox::Command::new("/bin/true").args(args)) {
                    Ok(mut child) => {
                        let parked = !child.phases().steps().iter().any(|(step, _)| step.contains("launcher"));
                        format!("exit {}{}", child.wait().unwrap(), if parked { ", parked" } else { "" })
                    }
                    Err(e) => format!("{e}"),
                };
                seen.push(format!("parked box {park}, {mib} MiB of arguments: {what}"));
            }
            eprintln!("oom-supervisor arguments: {} (ballast {resident_mib} MiB)", seen.join("; "));
            // Small enough: the parked program runs it. Larger: run as any
            // other, or refused; the supervisor lives either way.
            assert!(seen[0].ends_with("exit code 0, parked"), "{seen:?}");
            assert!(!seen[1].contains(", parked") && !seen[2].contains(", parked"), "{seen:?}");
        }
        "racing" => {
            let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
            let _busy = common::Spinners::start(cpus);
            let limits = koth_sandbox::Limits { memory: 16 << 20, stack: 64 << 20, cpu_time: None, wall_time: None, ..hostile_limits() };
            let (boxes, takers) = if common::slowdown() > 1 { (2, 4) } else { (24, 6) };
            let bomb = common::compile_c("memory_bomb");
            let arg = "x".repeat(100 << 10);
            let args = vec![arg; 35];
            let (mut parked_runs, mut oom_kills, mut refused) = (0, 0, 0);
            let started = std::time::Instant::now();
            for _ in 0..boxes {
                let mut sb = koth_sandbox::Sandbox::create(common::config(limits.clone())).unwrap();
                sb.workdir().write_file("bomb", &bomb, 0o755).unwrap();
                assert!(sb.park_first_program().unwrap());
                let barrier = std::sync::Barrier::new(takers);
                let seen: Vec<Result<(bool, Exit), String>> = std::thread::scope(|s| {
                    let takers: Vec<_> = (0..takers)
                        .map(|_| {
                            let (sb, barrier, args) = (&sb, &barrier, &args);
                            s.spawn(move || {
                                barrier.wait();
                                let mut child =
                                    sb.spawn(koth_sandbox::Command::new("./bomb").args(args.clone())).map_err(|e| e.to_string())?;
                                let parked = !child.phases().steps().iter().any(|(step, _)| step.contains("launcher"));
                                Ok((parked, child.wait().unwrap()))
                            })
                        })
                        .collect();
                    takers.into_iter().map(|t| t.join().unwrap()).collect()
                });
                // The parked program ran exactly one of them (nothing else
                // of the box ran while it started: its arguments fit).
                assert_eq!(seen.iter().filter(|r| matches!(r, Ok((true, _)))).count(), 1, "{seen:?}");
                parked_runs += 1;
                // Each ran and met the box's limit, or failed at a step
                // that found the box full (forking, Landlock, execve: each
                // takes memory charged to the box) and says which, with the
                // kernel's error. Before the children recorded their
                // failures and the program's pid in the memory they share
                // with the supervisor, the report pipe's write could fail
                // in a full box, and a program that ran was reported as
                // "starting the program failed: Success (os error 0)".
                for r in &seen {
                    match r {
                        Ok((_, exit)) => assert_eq!(*exit, Exit::Signal(libc::SIGKILL), "{seen:?}"),
                        Err(e) => {
                            assert!(
                                !e.contains("starting the program failed") && !e.contains("os error 0)") && e.contains("os error"),
                                "a spawn failed without saying why: {seen:?}"
                            );
                            refused += 1;
                        }
                    }
                }
                oom_kills += sb.oom_kills().unwrap();
            }
            eprintln!(
                "oom-supervisor racing: boxes={boxes} takers={takers} parked={parked_runs} oom_kills={oom_kills} refused={refused} in {:?} with {cpus} spinners (ballast {resident_mib} MiB)",
                started.elapsed()
            );
        }
        other => panic!("no such supervisor: {other}"),
    }
}

/// The environment variable that makes this test binary one of the two
/// processes of [`a_killed_supervisor_leaves_none_of_its_boxes_programs`]:
/// `reaper` or `supervisor`.
const DYING_SUPERVISOR: &str = "KOTH_TEST_DYING_SUPERVISOR";

/// A supervisor (a runner) killed at any moment leaves none of its boxes'
/// programs alive: not one on its way to `execve`, not one its box's kill
/// was ending, and none frozen. Each round runs this binary again as a
/// supervisor whose threads each loop over a box: start a program that
/// forks for ever and two more, kill them all, now and then a new box;
/// it is sent SIGKILL at a random moment, and every process still in one
/// of its boxes' cgroups must be gone within seconds, with no sweep by a
/// later supervisor. On cgroup v1 the box's kill once froze the box for a
/// moment (`Sandbox::kill_all`): a runner killed then left a program
/// frozen, its SIGKILL pending, which only a later runner's sweep ended (a
/// CI run of `tests/scheduler_faults.rs` found one, a program killed on its
/// way to `execve`). A busy host (spinners) stretches every window.
///
/// The supervisor is started by a *reaper* (this binary too), which adopts
/// what the killed supervisor leaves (`PR_SET_CHILD_SUBREAPER`), reaps it,
/// and exits once it has no child left: every box's init (a child of the
/// supervisor, outliving its namespace's last process) is gone then. It
/// stands for whatever adopts a killed runner's orphans (the host's init,
/// a container's PID 1); without it, where this binary is PID 1 of its
/// namespace (the runner's container, `tests/compose.rs`), the orphans
/// were its own, never reaped, and every later test of the suite saw
/// their zombies as processes left behind.
#[test]
fn a_killed_supervisor_leaves_none_of_its_boxes_programs() {
    require_sandbox!();
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let _busy = common::Spinners::start(cpus);
    let rounds = if common::slowdown() > 1 { 6 } else { 40 };
    let mut seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64 | 1;
    let mut left = Vec::new();
    let parents = <dyn koth_sandbox::cgroup::Hierarchy>::detect().unwrap().parents();
    let mut moments = std::collections::BTreeMap::new();
    for round in 0..rounds {
        let mut reaper =
            dying_supervisor_command("reaper").stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        // Wait until the supervisor's boxes run programs, then a while
        // more: 0-150 ms (xorshift: no crate for one number).
        let mut stderr = std::io::BufReader::new(reaper.stderr.take().unwrap());
        let mut line = String::new();
        let mut supervisor = None;
        while !line.contains("dying-supervisor: running") {
            line.clear();
            assert!(std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() > 0, "the supervisor ended before it ran programs");
            if let Some(pid) = line.trim().strip_prefix("dying-supervisor: pid ") {
                supervisor = pid.parse::<libc::pid_t>().ok();
            }
        }
        let supervisor = supervisor.expect("the reaper names the supervisor's pid");
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Its boxes' groups are named after it (`koth-<pidns>-<pid>-...`).
        let group = format!("koth-{}-{}-", koth_sandbox::cgroup::pid_namespace(), supervisor);
        // A random moment, or in two rounds of three the first of a worst
        // one seen: one of its boxes frozen (v1's freezer), or holding a
        // program on its way to `execve` (still named after its launcher
        // thread); the random one when none is seen in time.
        let until = std::time::Instant::now() + scaled(Duration::from_micros(seed % 150_000));
        let mut moment = "random";
        while std::time::Instant::now() < until {
            let seen = match round % 3 {
                0 => {
                    std::thread::sleep(Duration::from_millis(1));
                    None
                }
                1 => box_frozen(&parents, &group).then_some("frozen"),
                _ => program_on_its_way(&parents, &group).then_some("a program on its way to execve"),
            };
            if let Some(seen) = seen {
                moment = seen;
                break;
            }
        }
        // SAFETY: kill(2) on the supervisor, a child of the reaper, which
        // reaps it: the pid is not reused before the kill.
        assert_eq!(unsafe { libc::kill(supervisor, libc::SIGKILL) }, 0);
        *moments.entry(moment).or_insert(0) += 1;
        let deadline = std::time::Instant::now() + scaled(Duration::from_secs(5));
        let survivors = loop {
            let survivors = processes_in_groups(&group);
            if survivors.is_empty() || std::time::Instant::now() > deadline {
                break survivors;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if !survivors.is_empty() {
            left.push(format!("round {round}: {survivors:?}"));
        }
        // The groups themselves are left to a sweep, as a killed runner's
        // are (which also ends a program found left above: else it would
        // hold its box's init, and the reaper, for ever).
        koth_sandbox::cgroup::sweep_stale_groups().unwrap();
        // Everything the supervisor left is dead and reaped: its reaper
        // has no child left, and says how its supervisor ended.
        let deadline = std::time::Instant::now() + scaled(Duration::from_secs(20));
        while reaper.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = reaper.kill();
                panic!("round {round}: the reaper still has children 20 s after the supervisor's death: {:?}", processes_in_groups(&group));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
        let ended = rest.lines().find_map(|l| l.strip_prefix("dying-supervisor: ended ")).unwrap_or("").to_owned();
        assert_eq!(ended, format!("signal {}", libc::SIGKILL), "round {round}: the supervisor's end: {rest}");
        assert!(reaper.wait().unwrap().success(), "round {round}: the reaper failed: {rest}");
    }
    eprintln!("{rounds} supervisors killed (at moments {moments:?}); {} left programs behind", left.len());
    assert!(left.is_empty(), "programs outlived their supervisor: {left:#?}");
}

/// The groups under `parents` whose names start with `group`.
fn groups(parents: &[std::path::PathBuf], group: &str) -> Vec<std::path::PathBuf> {
    let named = |e: &std::fs::DirEntry| e.file_name().to_str().is_some_and(|n| n.starts_with(group));
    parents.iter().flat_map(|p| std::fs::read_dir(p).into_iter().flatten().flatten()).filter(named).map(|e| e.path()).collect()
}

/// Whether v1's freezer holds one of the groups starting with `group`.
fn box_frozen(parents: &[std::path::PathBuf], group: &str) -> bool {
    groups(parents, group).iter().any(|g| std::fs::read_to_string(g.join("freezer.state")).is_ok_and(|s| s.trim() != "THAWED"))
}

/// Whether one of the groups starting with `group` holds a process between
/// its clone and its `execve`: still named after the launcher thread it was
/// cloned from.
fn program_on_its_way(parents: &[std::path::PathBuf], group: &str) -> bool {
    groups(parents, group).iter().any(|g| {
        let procs = std::fs::read_to_string(g.join("cgroup.procs")).unwrap_or_default();
        procs.lines().any(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.starts_with("koth-launcher")))
    })
}

/// Live processes in a cgroup whose name starts with `group` (on any
/// hierarchy), each with its name, state and where the kernel holds it.
fn processes_in_groups(group: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if !e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        let Ok(cgroup) = std::fs::read_to_string(e.path().join("cgroup")) else { continue };
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else { continue };
        let field = |key: &str| status.lines().find(|l| l.starts_with(key)).unwrap_or("").replace('\t', " ");
        if !cgroup.contains(group) || field("State:").contains("Z (zombie)") {
            continue;
        }
        let wchan = std::fs::read_to_string(e.path().join("wchan")).unwrap_or_default();
        out.push(format!("{}; {}; {}; wchan {wchan}; {}", field("Name:"), field("State:"), field("Uid:"), field("SigPnd:")));
    }
    out
}

/// This binary, run again as one of the processes of
/// [`a_killed_supervisor_leaves_none_of_its_boxes_programs`].
fn dying_supervisor_command(role: &str) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "dying_supervisor", "--include-ignored", "--nocapture", "--test-threads=1"]).env(DYING_SUPERVISOR, role);
    command
}

/// The reaper and the supervisor of
/// [`a_killed_supervisor_leaves_none_of_its_boxes_programs`], run by it
/// alone: the reaper starts the supervisor, names its pid, adopts and
/// reaps whatever it leaves, says how it ended, and exits once it has no
/// child left; the supervisor runs boxes until it is killed.
#[test]
#[ignore = "run by a_killed_supervisor_leaves_none_of_its_boxes_programs, in processes of their own"]
fn dying_supervisor() {
    let role = std::env::var(DYING_SUPERVISOR).expect("run by a_killed_supervisor_leaves_none_of_its_boxes_programs only");
    if role == "reaper" {
        // SAFETY: prctl with integer arguments, on this process.
        assert_eq!(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }, 0);
        // Reaped by the loop below, as every orphan it leaves.
        let pid = dying_supervisor_command("supervisor").spawn().unwrap().id() as libc::pid_t;
        eprintln!("dying-supervisor: pid {pid}");
        loop {
            let mut status = 0;
            // SAFETY: waitpid on this process's children, with a status on this stack.
            let reaped = unsafe { libc::waitpid(-1, &mut status, 0) };
            if reaped < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ECHILD) {
                    return;
                }
                assert_eq!(e.raw_os_error(), Some(libc::EINTR), "{e}");
            } else if reaped == pid {
                let ended =
                    if libc::WIFSIGNALED(status) { format!("signal {}", libc::WTERMSIG(status)) } else { format!("status {status}") };
                eprintln!("dying-supervisor: ended {ended}");
            }
        }
    }
    assert_eq!(role, "supervisor");
    let threads: Vec<_> = (0..3)
        .map(|thread| {
            std::thread::spawn(move || loop {
                let sb = koth_sandbox::Sandbox::create(common::config(hostile_limits())).unwrap();
                for turn in 0..20 {
                    let mut forking = sb.spawn(koth_sandbox::Command::new("/bin/sh").args(["-c", "while :; do /bin/true; done"])).unwrap();
                    let mut others: Vec<_> =
                        (0..2).map(|_| sb.spawn(koth_sandbox::Command::new("/bin/sleep").arg("1000")).unwrap()).collect();
                    if thread == 0 && turn == 0 {
                        eprintln!("dying-supervisor: running");
                    }
                    sb.kill_all().unwrap();
                    assert_eq!(forking.wait().unwrap(), Exit::Signal(libc::SIGKILL));
                    for o in &mut others {
                        o.wait().unwrap();
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
