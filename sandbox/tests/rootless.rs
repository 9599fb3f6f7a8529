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
/// delegated cgroup, with a home holding a secret and, as its working
/// folder, a folder of the user's holding a mode-0600 secret (where an
/// author runs `koth match`); fail with its output if it fails.
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
    let work = d.user_dir("work");
    std::fs::write(work.join("secret"), "the user's working folder's secret").unwrap();
    std::os::unix::fs::chown(work.join("secret"), Some(USER), Some(USER)).unwrap();
    std::fs::set_permissions(work.join("secret"), std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
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
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .current_dir(&work);
    for k in ["CI", "KOTH_TEST_SLOWDOWN", "KOTH_CGROUP"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    let out = d.run(cmd);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "as uid {USER}, {name} failed:\n{text}");
    assert!(text.contains("1 passed"), "as uid {USER}, {name} did not run:\n{text}");
    eprintln!("as uid {USER}:\n{text}");
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
    // A first program parked ahead (as the pool parks one in every box it
    // builds) starts as the user too, exactly as this one did.
    let mut parked = Sandbox::create(config(hostile_limits())).unwrap();
    assert!(parked.park_first_program().unwrap());
    let seen = sh(&parked, "id -u; id -g; grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status; cat /proc/self/uid_map");
    assert_eq!(seen, (exit, out.clone()));
    assert_eq!(parked.parked_program(), None);
    // On v2 the program is forked into the delegated cgroup, as root's are
    // (no move, no wait for the kernel's grace period).
    let mut child = sb.spawn(Command::new("/bin/true")).unwrap();
    assert_eq!(child.wait().unwrap(), Exit::Code(0));
    let forked = child.phases().steps().iter().any(|(step, _)| step.contains("CLONE_INTO_CGROUP"));
    assert_eq!(forked, sb.cgroup_version() == koth_sandbox::cgroup::Version::V2, "{:?}", child.phases().steps());

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
    // `kill_all` waits `KILL_WAIT` (250 ms) for the killed to be gone, and
    // returns with them killed if they are not: 16 processes exiting in
    // CI's emulated VM, beside the build, took longer. Killed, they are gone
    // soon after, and none comes back.
    let until = std::time::Instant::now() + scaled(Duration::from_secs(10));
    while !sb.pids().unwrap().is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(sb.pids().unwrap().is_empty(), "still in the box after kill_all: {:?}", sb.pids());

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
/// not the home (not in the box, wherever it is), not the box's cgroup
/// files (the user's, but no cgroup filesystem is in the box, nor may one
/// be mounted), not a user namespace of its own, not the supervisor, not the
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
tried("list home", lambda: os.listdir({home:?}))
tried("read secret", lambda: open({secret:?}).read())
tried("list sys", lambda: os.listdir("/sys"))
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
    assert_eq!(line("list home"), "list home refused 2", "the user's home is in the box:\n{out}");
    assert_eq!(line("read secret"), "read secret refused 2", "{out}");
    assert_eq!(line("list sys"), "list sys refused 2", "a cgroup filesystem is reachable:\n{out}");
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

/// `/run/user/UID` of [`USER`], as logind makes it (the user's, 0700), for
/// as long as the value lives.
struct RunUser(PathBuf);

impl RunUser {
    fn path() -> PathBuf {
        PathBuf::from(format!("/run/user/{USER}"))
    }
    fn new() -> RunUser {
        let dir = RunUser::path();
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(USER), Some(USER)).unwrap();
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        RunUser(dir)
    }
}

impl Drop for RunUser {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A mode-0600 file of the user's at `path`.
fn secret_file(path: &std::path::Path) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).unwrap();
    f.write_all(b"the user's secret").unwrap();
}

/// The names a rootless box's `/` must hold: the first component of every
/// entry of its allowlist, the read-only ones where the host has them.
fn expected_root() -> Vec<String> {
    use koth_sandbox::view::{Mode, ROOTLESS_VIEW};
    let mut names: Vec<String> = ROOTLESS_VIEW
        .iter()
        .filter(|e| e.mode != Mode::ReadOnly || std::fs::symlink_metadata(e.path).is_ok())
        .map(|e| e.path.trim_start_matches('/').split('/').next().unwrap().to_owned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The rootless box shows only its allowlist (`koth_sandbox::view`). A
/// program running as the user tries what an author's own `koth match`
/// used to show it: a mode-0600 file in the folder the box was started
/// from, the host's `/tmp`, `/run/user/UID`, `/dev/shm` and the user's
/// home, and the user's unix sockets in the working folder, `/tmp` and
/// `/run/user/UID`: each is refused (none of it exists in the box), and
/// nobody connected to the sockets. It still runs: it reads its own
/// folder, writes it, and writes a `/tmp` that is its own (the host's
/// `/tmp` does not get the file).
#[test]
fn a_rootless_box_shows_only_its_allowlist() {
    const NAME: &str = "a_rootless_box_shows_only_its_allowlist";
    let _run_user = (std::env::var_os(CHILD).is_none() && common::sandbox_available()).then(RunUser::new);
    if as_user(NAME) {
        return;
    }
    let me = std::process::id();
    let home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let work = std::env::current_dir().unwrap();
    assert_eq!(std::fs::read_to_string(work.join("secret")).unwrap(), "the user's working folder's secret");
    let run_user = RunUser::path();
    let tmp_secret = PathBuf::from(format!("/tmp/koth-rootless-secret-{me}"));
    let shm_secret = PathBuf::from(format!("/dev/shm/koth-rootless-secret-{me}"));
    let tmp_sock = PathBuf::from(format!("/tmp/koth-rootless-{me}.sock"));
    let work_sock = work.join("user.sock");
    let run_sock = run_user.join("bus");
    for p in [&tmp_secret, &shm_secret, &run_user.join("secret")] {
        secret_file(p);
    }
    let sockets: Vec<std::os::unix::net::UnixListener> =
        [&work_sock, &tmp_sock, &run_sock].iter().map(|p| std::os::unix::net::UnixListener::bind(p).unwrap()).collect();
    let box_file = format!("koth-rootless-box-{me}.txt");

    let sb = Sandbox::create(config(hostile_limits())).unwrap();
    sb.workdir().write_file("mine.txt", b"the bot's own", 0o600).unwrap();
    let script = format!(
        r#"
import os, socket
def tried(what, f):
    try:
        r = f()
        print(what, "ALLOWED", r)
    except OSError as e:
        print(what, "refused", e.errno)
def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
for what, path in [("working folder", {work:?}), ("home", {home:?}), ("run user", {run_user:?})]:
    tried("list " + what, lambda: os.listdir(path))
for what, path in [("working folder", {work_secret:?}), ("home", {home_secret:?}), ("run user", {run_secret:?}),
                   ("tmp", {tmp_secret:?}), ("shm", {shm_secret:?})]:
    tried("read " + what, lambda: open(path).read())
for what, path in [("working folder", {work_sock:?}), ("tmp", {tmp_sock:?}), ("run user", {run_sock:?})]:
    tried("connect " + what, lambda: connect(path))
for d in ["/root", "/run", "/srv", "/opt", "/mnt", "/media", "/sys", "/var/cache", "/var/run"]:
    tried("list " + d, lambda: os.listdir(d))
print("root", " ".join(sorted(os.listdir("/"))))
print("var", " ".join(sorted(os.listdir("/var"))))
print("tmp", " ".join(sorted(os.listdir("/tmp"))))
print("shm", " ".join(sorted(os.listdir("/dev/shm"))))
print("own", open("/home/bot/mine.txt").read())
open("/home/bot/out.txt", "w").write("written by the bot")
open("/tmp/{box_file}", "w").write("private")
print("private tmp", open("/tmp/{box_file}").read(), sorted(os.listdir("/tmp")) == ["{box_file}"])
"#,
        work = work.display().to_string(),
        home = home.display().to_string(),
        run_user = run_user.display().to_string(),
        work_secret = work.join("secret").display().to_string(),
        home_secret = home.join("secret").display().to_string(),
        run_secret = run_user.join("secret").display().to_string(),
        tmp_secret = tmp_secret.display().to_string(),
        shm_secret = shm_secret.display().to_string(),
        work_sock = work_sock.display().to_string(),
        tmp_sock = tmp_sock.display().to_string(),
        run_sock = run_sock.display().to_string(),
    );
    let out = run_in(&sb, "/usr/bin/python3", &["-c".into(), script], &[], b"").unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    for p in [&tmp_secret, &shm_secret, &tmp_sock] {
        let _ = std::fs::remove_file(p);
    }
    assert_eq!(out.usage.outcome, Outcome::Ok, "{:?}\n{text}", out.usage);
    eprintln!("the program in the rootless box:\n{text}");
    let line =
        |key: &str| text.lines().find(|l| l.starts_with(&format!("{key} "))).unwrap_or_else(|| panic!("no {key:?} in {text}")).to_owned();
    let tries = [
        "list working folder",
        "list home",
        "list run user",
        "read working folder",
        "read home",
        "read run user",
        "read tmp",
        "read shm",
        "connect working folder",
        "connect tmp",
        "connect run user",
    ];
    for what in tries
        .iter()
        .map(|t| t.to_string())
        .chain(["/root", "/run", "/srv", "/opt", "/mnt", "/media", "/sys", "/var/cache", "/var/run"].iter().map(|d| format!("list {d}")))
    {
        // ENOENT: none of it is in the box.
        assert_eq!(line(&what), format!("{what} refused 2"), "{text}");
    }
    for s in &sockets {
        s.set_nonblocking(true).unwrap();
        assert_eq!(s.accept().map(|_| ()).unwrap_err().kind(), std::io::ErrorKind::WouldBlock, "a box connected to a socket of the user's");
    }
    assert_eq!(line("root"), format!("root {}", expected_root().join(" ")), "the box's / is not its allowlist:\n{text}");
    assert_eq!(line("var"), "var tmp", "{text}");
    assert_eq!(line("tmp").trim(), "tmp", "the host's /tmp shows in the box:\n{text}");
    assert_eq!(line("shm").trim(), "shm", "the host's /dev/shm shows in the box:\n{text}");
    // The positive control: its own folder, both ways, and a /tmp of its own.
    assert_eq!(line("own"), "own the bot's own", "{text}");
    assert_eq!(sb.workdir().read_file("out.txt", 100).unwrap().0, b"written by the bot");
    assert_eq!(line("private tmp"), "private tmp private True", "{text}");
    assert!(!std::path::Path::new("/tmp").join(&box_file).exists(), "the box's /tmp file reached the host's /tmp");
}

/// Real toolchains run in a rootless box's allowlist view: C compiled with
/// `cc` and run, Python, Java compiled with `javac` and run with several
/// threads, and Node with worker threads, all inside the box.
#[test]
fn real_languages_run_in_a_rootless_box() {
    if as_user("real_languages_run_in_a_rootless_box") {
        return;
    }
    if !["cc", "javac", "java", "node"].iter().all(|t| common::require_ci_tool(t)) {
        return;
    }
    let program = |name: &str| std::fs::read(format!("{}/tests/programs/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut limits = hostile_limits();
    // What the runner gives a Java compile (languages/java/language.json).
    limits.pids = 256;
    limits.memory = 512 << 20;
    limits.cpu_time = Some(scaled(Duration::from_secs(20)));
    limits.wall_time = Some(scaled(Duration::from_secs(60)));
    let sb = Sandbox::create(config(limits)).unwrap();
    sb.workdir().write_file("hello.c", b"#include <stdio.h>\nint main(void) { puts(\"c ok\"); return 0; }\n", 0o644).unwrap();
    sb.workdir().write_file("Threads.java", &program("Threads.java"), 0o644).unwrap();
    sb.workdir().write_file("threads.js", &program("threads.js"), 0o644).unwrap();
    for (what, script, expect) in [
        ("C", "cc -O2 -o hello hello.c && ./hello", "c ok"),
        ("Python", "python3 -c 'import json, ssl, sqlite3; print(\"python ok\")'", "python ok"),
        ("Java", "javac -J-XX:+UseSerialGC -d . Threads.java && java -XX:+UseSerialGC -Xss64m -cp . Threads", "java threads ok"),
        ("Node", "node threads.js", "node workers ok"),
    ] {
        let (exit, out) = sh(&sb, script);
        assert_eq!(exit, Exit::Code(0), "{what} in a rootless box:\n{out}");
        assert!(out.starts_with(expect), "{what} in a rootless box:\n{out}");
    }
}
