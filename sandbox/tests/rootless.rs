//! Rootless boxes (`koth_sandbox::Privilege`): built by an ordinary user
//! with a delegated cgroup, they confine as root's do, and what a program
//! running as the user's own uid would reach first (the user's files, its
//! own cgroup's limits, a namespace of its own, the supervisor) stays out
//! of reach.
//!
//! Each test runs as root, delegates a cgroup to an unused uid as systemd
//! or an administrator would (`common/delegate.rs`), and runs itself again
//! as that uid (`KOTH_ROOTLESS_CHILD`), where the checks are made.

mod common;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Command as HostCommand;
use std::time::Duration;

use common::delegate::{Delegation, USER};
use common::{hostile_limits, scaled};
use koth_sandbox::cgroup::Hierarchy;
use koth_sandbox::{run_in, Command, Exit, Limits, Outcome, Privilege, Sandbox, SandboxConfig, Stdio};

const CHILD: &str = "KOTH_ROOTLESS_CHILD";

/// As root: run the test `name` of this binary again as [`USER`], in a
/// delegated cgroup, with a home holding a secret; fail with its output if
/// it fails.
fn as_user(name: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    if !common::sandbox_available() {
        return true;
    }
    let parents = <dyn Hierarchy>::detect().unwrap().parents();
    let d = Delegation::new(&parents, name.rsplit("::").next().unwrap());
    let home = d.user_dir("home");
    std::fs::write(home.join("secret"), "the user's secret").unwrap();
    std::os::unix::fs::chown(home.join("secret"), Some(USER), Some(USER)).unwrap();
    // Its own runtime folder (as a login session's XDG_RUNTIME_DIR): the
    // other test runs at the same time as the same uid.
    let run = d.user_dir("run");
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let exe = d.copy_exe(&std::env::current_exe().unwrap());
    let mut cmd = HostCommand::new(&exe);
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env_clear()
        .env(CHILD, "1")
        .env("HOME", &home)
        .env("XDG_RUNTIME_DIR", &run)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    for k in ["CI", "KOTH_TEST_SLOWDOWN", "KOTH_CGROUP"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    let out = d.run(cmd);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "as uid {USER}, {name} failed:\n{text}");
    assert!(text.contains("1 passed"), "as uid {USER}, {name} did not run:\n{text}");
    true
}

fn config(limits: Limits) -> SandboxConfig {
    SandboxConfig { limits, ..SandboxConfig::default() }
}

fn sh(sb: &Sandbox, script: &str) -> (Exit, String) {
    let mut child = sb.spawn(Command::new("/bin/sh").args(["-c", script]).stdout(Stdio::Pipe).stderr(Stdio::Pipe)).unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (child.wait().unwrap(), out + &err)
}

/// A spinning program's CPU time is counted, and none while the box is
/// paused.
fn counts_and_pauses(sb: &Sandbox) {
    let mut spinner = sb.spawn(Command::new("/bin/sh").args(["-c", "while :; do :; done"])).unwrap();
    std::thread::sleep(scaled(Duration::from_millis(300)));
    let spun = sb.cpu_usage().unwrap();
    assert!(spun >= scaled(Duration::from_millis(100)), "CPU counted {spun:?}");
    sb.freeze().unwrap();
    let frozen = sb.cpu_usage().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(sb.cpu_usage().unwrap() - frozen < Duration::from_millis(20), "ran while paused");
    sb.thaw().unwrap();
    spinner.kill().unwrap();
    let _ = spinner.wait();
}

/// A box built without root runs its program as the user, with no
/// capability left, and confined as root's boxes are: its memory, process
/// and CPU limits hold, its CPU time is counted, and it can be paused.
#[test]
fn an_ordinary_user_builds_a_box_that_confines_its_program() {
    if as_user("an_ordinary_user_builds_a_box_that_confines_its_program") {
        return;
    }
    assert_eq!(Privilege::current(), Privilege::Rootless { uid: USER, gid: USER });
    let run = PathBuf::from(std::env::var_os("XDG_RUNTIME_DIR").unwrap());
    assert_eq!(koth_sandbox::default_runtime_dir(), run.join("koth/sandbox"));
    let sb = Sandbox::create(config(hostile_limits())).unwrap();
    assert_eq!(sb.uid(), USER);
    let (exit, out) = sh(&sb, "id -u; id -g; grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status; cat /proc/self/uid_map");
    assert_eq!(exit, Exit::Code(0), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(&lines[..2], &[USER.to_string().as_str(), USER.to_string().as_str()], "{out}");
    for cap in &lines[2..7] {
        assert!(cap.ends_with("0000000000000000"), "a capability is left: {cap}\n{out}");
    }
    // Its user namespace maps the user's uid alone, to itself.
    assert_eq!(lines[7].split_whitespace().collect::<Vec<_>>(), [USER.to_string(), USER.to_string(), "1".into()], "{out}");

    // Memory: a program allocating past the limit is OOM-killed in the box.
    let mut small = hostile_limits();
    small.memory = 48 << 20;
    let sb = Sandbox::create(config(small)).unwrap();
    let out = run_in(&sb, "/usr/bin/python3", &["-c".into(), "a = [bytearray(1 << 20) for _ in range(200)]".into()], &[], b"").unwrap();
    assert_eq!(out.usage.outcome, Outcome::MemoryLimit, "{:?}", out.usage);
    assert!(sb.oom_kills().unwrap() >= 1);

    // Processes: a fork bomb stops at the pids limit, and the box is killed whole.
    let mut few = hostile_limits();
    few.pids = 16;
    let sb = Sandbox::create(config(few)).unwrap();
    let (_, out) = sh(&sb, "for i in $(seq 40); do sleep 30 >/dev/null 2>&1 & done; echo spawned");
    assert!(sb.pids().unwrap().len() <= 16, "{} processes in a box of 16: {out}", sb.pids().unwrap().len());
    sb.kill_all().unwrap();
    assert!(sb.pids().unwrap().is_empty());

    // CPU: counted for the whole tree, and nothing runs while paused.
    counts_and_pauses(&Sandbox::create(config(hostile_limits())).unwrap());

    // The CPU time limit ends a program that spins.
    let mut brief = hostile_limits();
    brief.cpu_time = Some(scaled(Duration::from_millis(300)));
    let sb = Sandbox::create(config(brief)).unwrap();
    let out = run_in(&sb, "/bin/sh", &["-c".into(), "while :; do :; done".into()], &[], b"").unwrap();
    assert_eq!(out.usage.outcome, Outcome::CpuTimeLimit, "{:?}", out.usage);
}

/// A program running as the user's own uid reaches nothing of the user's:
/// not the home (hidden, wherever it is), not the box's cgroup files (the
/// user's, but no cgroup filesystem is in the box, nor may one be
/// mounted), not a user namespace of its own, not the supervisor, not the
/// network. And the supervisor's TCP listener in the box still works.
#[test]
fn a_program_in_a_rootless_box_reaches_nothing_of_the_users() {
    if as_user("a_program_in_a_rootless_box_reaches_nothing_of_the_users") {
        return;
    }
    let home = PathBuf::from(std::env::var_os("HOME").unwrap());
    assert_eq!(std::fs::read_to_string(home.join("secret")).unwrap(), "the user's secret");
    let mut cfg = config(hostile_limits());
    cfg.network = koth_sandbox::Network::Loopback { connect_ports: vec![4040] };
    let sb = Sandbox::create(cfg).unwrap();
    let supervisor = std::process::id();
    let script = format!(
        r#"
import ctypes, os, socket, sys
def unshare_user():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
def tried(what, f):
    try:
        f()
        print(what, "ALLOWED")
    except OSError as e:
        print(what, "refused", e.errno)
print("home", sorted(os.listdir({home:?})))
tried("read secret", lambda: open({secret:?}).read())
print("sys", sorted(os.listdir("/sys")))
tried("user namespace", unshare_user)
tried("kill supervisor", lambda: os.kill({supervisor}, 0))
tried("internet", lambda: socket.create_connection(("1.1.1.1", 53), timeout=2))
# The box's init runs as this same uid in a rootless box: neither its memory
# nor a stop or a kill may reach it.
tried("init's memory", lambda: open("/proc/1/mem", "r+b"))
for sig in (19, 9):
    tried("signal init", lambda: os.kill(1, sig))
s = socket.create_connection(("127.0.0.1", 4040), timeout=5)
s.sendall(b"hello from the box\n")
s.close()
"#,
        home = home.display().to_string(),
        secret = home.join("secret").display().to_string(),
    );
    let listener = sb.listen_tcp(4040).unwrap();
    let reader = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = String::new();
        conn.read_to_string(&mut got).unwrap();
        got
    });
    let mut child = sb
        .spawn(Command::new("/usr/bin/python3").args(["-c", &script]).stdout(Stdio::Pipe).stderr(Stdio::Pipe).stdin(Stdio::Pipe))
        .unwrap();
    child.stdin.take().unwrap().flush().unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(child.wait().unwrap(), Exit::Code(0), "{out}{err}");
    assert_eq!(reader.join().unwrap(), "hello from the box\n");
    let line = |key: &str| out.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no {key:?} in {out}")).to_owned();
    assert_eq!(line("home"), "home []", "the user's home shows its files:\n{out}");
    assert_eq!(line("read secret"), "read secret refused 2", "{out}");
    assert_eq!(line("sys"), "sys []", "a cgroup filesystem is reachable:\n{out}");
    assert_eq!(line("user namespace"), "user namespace refused 1", "{out}");
    // ESRCH: no such process in the box's PID namespace (EPERM where Landlock scopes signals).
    assert!(["kill supervisor refused 3", "kill supervisor refused 1"].contains(&line("kill supervisor").as_str()), "{out}");
    assert!(line("internet").starts_with("internet refused"), "{out}");
    assert!(line("init's memory").starts_with("init's memory refused"), "{out}");
    // The box's init took neither signal: the box still starts programs and
    // pauses (on v1 the init completes each pause).
    let (exit, still) = sh(&sb, "echo still here");
    assert_eq!((exit, still.trim()), (Exit::Code(0), "still here"));
    counts_and_pauses(&sb);
    // Nor may it mount a cgroup filesystem to rewrite its limits.
    let (exit, out) = sh(&sb, "mkdir -p /tmp/cg && mount -t cgroup2 none /tmp/cg && echo MOUNTED; cat /proc/self/cgroup");
    assert!(!out.contains("MOUNTED"), "{exit:?} {out}");
}
