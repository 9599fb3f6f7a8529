//! A bot author plays on their own machine without root: `koth match` and
//! `koth replay rerun` as an ordinary user with a delegated cgroup (see
//! `koth_sandbox::Privilege`), and a clear way forward without one.
//!
//! Run as root, like the rest of the suite: the test delegates a cgroup to
//! an unused uid as systemd or an administrator would, and runs `koth` as
//! that uid.

#[path = "../sandbox/tests/common/delegate.rs"]
mod delegate;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use delegate::{Delegation, USER};
use koth_sandbox::cgroup::Hierarchy;

fn root_or_skip() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var("CI").is_err(), "CI=true and not root: this test delegates a cgroup, which needs root");
        eprintln!("SKIPPED (not root)");
        return false;
    }
    true
}

/// `koth` with `args`, as the user, with only a home, a PATH and a runtime
/// folder of this test's (the other test runs at the same time as the same
/// uid).
fn koth_as(d: &Delegation, koth: &Path, home: &Path, args: &[&str]) -> Output {
    koth_in(d, koth, home, home, args)
}

/// [`koth_as`], run from the folder `cwd`.
fn koth_in(d: &Delegation, koth: &Path, home: &Path, cwd: &Path, args: &[&str]) -> Output {
    let run = d.user_dir("run");
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let mut cmd = Command::new(koth);
    cmd.args(args).env_clear().env("HOME", home).env("XDG_RUNTIME_DIR", &run).env("PATH", "/usr/local/bin:/usr/bin:/bin").current_dir(cwd);
    d.run(cmd)
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The author's first hour, without sudo: a match between a compiled C bot
/// on stdin/stdout and a Python bot over TCP, its replay checked, and one
/// bot's seat played again against the recording.
#[test]
fn an_author_plays_and_reruns_a_match_without_root() {
    if !root_or_skip() {
        return;
    }
    let parents = <dyn Hierarchy>::detect().expect("a cgroup hierarchy").parents();
    let d = Delegation::new(&parents, "cli");
    let koth = d.copy_exe(Path::new(env!("CARGO_BIN_EXE_koth")));
    let home = d.user_dir("home");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bots = Vec::new();
    for b in ["stdio_wall_hugger.c", "tcp_survivor.py"] {
        let to = home.join(b);
        std::fs::copy(repo.join("bots/snake").join(b), &to).unwrap();
        std::os::unix::fs::chown(&to, Some(USER), Some(USER)).unwrap();
        bots.push(to.display().to_string());
    }
    let replay = home.join("snake.json").display().to_string();
    let args = ["match", "--game", "snake", "--seed", "5", "--max-turns", "150", "--replay", &replay, &bots[0], &bots[1]];
    let out = koth_as(&d, &koth, &home, &args);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "koth match as uid {USER}:\n{t}");
    assert!(t.contains("snake (seed 5)"), "{t}");
    for b in ["stdio_wall_hugger.c", "tcp_survivor.py"] {
        let row = t.lines().find(|l| l.contains(b) && l.trim_end().ends_with("ok")).unwrap_or_else(|| panic!("no ok row for {b}:\n{t}"));
        assert_eq!(row.split_whitespace().nth(6), Some("0"), "{b} timed out:\n{t}");
    }
    // Its files are the user's: the replay, the stderr logs in a folder of
    // the user's own, the boxes' runtime folder.
    use std::os::unix::fs::MetadataExt;
    let logs = PathBuf::from(format!("/tmp/koth-{USER}/match-snake-5"));
    for p in [PathBuf::from(&replay), logs.join("seat2-tcp_survivor.py.stderr"), d.dir.join("run/koth/sandbox")] {
        let m = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{}: {e}\n{t}", p.display()));
        assert_eq!(m.uid(), USER, "{} belongs to uid {}", p.display(), m.uid());
    }

    let out = koth_as(&d, &koth, &home, &["replay", "check", &replay]);
    assert_eq!(out.status.code(), Some(0), "koth replay check:\n{}", text(&out));
    let out = koth_as(&d, &koth, &home, &["replay", "rerun", &replay, "--seat", "2", "--bot", &bots[1]]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "koth replay rerun as uid {USER}:\n{t}");
    assert!(t.contains("reproduced: all"), "the same bot played its seat differently:\n{t}");
    eprintln!("koth replay rerun as uid {USER}:\n{t}");
    let _ = std::fs::remove_dir_all(format!("/tmp/koth-{USER}"));
}

/// Without a delegated cgroup, `koth match` refuses to run bots unconfined
/// and says how to get one.
#[test]
fn without_a_delegated_cgroup_koth_match_says_what_to_do() {
    if !root_or_skip() {
        return;
    }
    let d = Delegation::new(&[], "nocg"); // no cgroup: the user stays in root's
    let koth = d.copy_exe(Path::new(env!("CARGO_BIN_EXE_koth")));
    let home = d.user_dir("home");
    let bot = home.join("drifter.py");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/target/drifter.py"), &bot).unwrap();
    let out = koth_as(&d, &koth, &home, &["match", "--game", "target", "--max-turns", "10", bot.to_str().unwrap()]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(210), "{t}"); // EXIT_SETUP_FAILED
    assert!(t.contains("systemd-run --user --scope -p Delegate=yes"), "{t}");
    assert!(!t.contains("panicked") && t.matches("cannot run the sandbox").count() == 1, "{t}");
}

/// A file of the user's (mode 0600) or a unix socket of the user's (one
/// this test listens on, given to the user as a session's sockets are), for
/// as long as the value lives.
struct Planted {
    paths: Vec<PathBuf>,
    _sockets: Vec<std::os::unix::net::UnixListener>,
}

impl Planted {
    fn new(secrets: &[PathBuf], sockets: &[PathBuf]) -> Planted {
        use std::os::unix::fs::PermissionsExt;
        let mut paths = Vec::new();
        for p in secrets {
            std::fs::write(p, "the author's secret").unwrap();
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::chown(p, Some(USER), Some(USER)).unwrap();
            paths.push(p.clone());
        }
        let mut listeners = Vec::new();
        for p in sockets {
            let _ = std::fs::remove_file(p);
            listeners.push(std::os::unix::net::UnixListener::bind(p).unwrap());
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::chown(p, Some(USER), Some(USER)).unwrap();
            paths.push(p.clone());
        }
        Planted { paths, _sockets: listeners }
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// An author's `koth match`, run from their project folder, plays a bot
/// that first tries what a bot running as the author could reach in the
/// old view (the whole root, less the home): a mode-0600 file of the
/// project folder, the host's `/tmp`, `/run/user/UID` and `/dev/shm`, the
/// home, and the author's unix sockets in the project folder, `/tmp` and
/// `/run/user/UID`. Every attempt finds nothing (the box shows only its
/// allowlist, `koth_sandbox::view`), no socket got a connection, and the
/// bot then plays its match to the end.
#[test]
fn a_bot_in_koth_match_reaches_nothing_of_the_authors() {
    if !root_or_skip() {
        return;
    }
    let parents = <dyn Hierarchy>::detect().expect("a cgroup hierarchy").parents();
    let d = Delegation::new(&parents, "probe");
    let koth = d.copy_exe(Path::new(env!("CARGO_BIN_EXE_koth")));
    let home = d.user_dir("home");
    let project = d.user_dir("project");
    let logs = d.user_dir("logs");
    let run_user = PathBuf::from(format!("/run/user/{USER}"));
    let _ = std::fs::remove_dir_all(&run_user);
    std::fs::create_dir_all(&run_user).unwrap();
    std::os::unix::fs::chown(&run_user, Some(USER), Some(USER)).unwrap();
    std::fs::set_permissions(&run_user, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let me = std::process::id();
    let (tmp_secret, shm_secret) = (PathBuf::from(format!("/tmp/koth-probe-{me}")), PathBuf::from(format!("/dev/shm/koth-probe-{me}")));
    let (tmp_sock, project_sock, run_sock) =
        (PathBuf::from(format!("/tmp/koth-probe-{me}.sock")), project.join("agent.sock"), run_user.join("bus"));
    let planted = Planted::new(
        &[project.join("secret"), home.join("secret"), run_user.join("secret"), tmp_secret.clone(), shm_secret.clone()],
        &[tmp_sock.clone(), project_sock.clone(), run_sock.clone()],
    );
    let probes: Vec<(String, &str, PathBuf)> = vec![
        ("list project".into(), "list", project.clone()),
        ("read project".into(), "read", project.join("secret")),
        ("read home".into(), "read", home.join("secret")),
        ("list run user".into(), "list", run_user.clone()),
        ("read run user".into(), "read", run_user.join("secret")),
        ("read tmp".into(), "read", tmp_secret.clone()),
        ("read shm".into(), "read", shm_secret.clone()),
        ("connect project".into(), "connect", project_sock.clone()),
        ("connect tmp".into(), "connect", tmp_sock.clone()),
        ("connect run user".into(), "connect", run_sock.clone()),
    ];
    let list: Vec<String> = probes.iter().map(|(what, how, p)| format!("({what:?}, {how:?}, {:?})", p.display().to_string())).collect();
    let bot = format!(
        r#"import os, socket, sys
def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
do = {{"list": os.listdir, "read": lambda p: open(p).read(), "connect": connect}}
for what, how, path in [{}]:
    try:
        print(what, "ALLOWED", do[how](path), file=sys.stderr)
    except OSError as e:
        print(what, "refused", e.errno, file=sys.stderr)
print("tmp", sorted(os.listdir("/tmp")), "shm", sorted(os.listdir("/dev/shm")), file=sys.stderr, flush=True)
{}"#,
        list.join(", "),
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/target/drifter.py")).unwrap()
    );
    let bot_path = project.join("probe.py");
    std::fs::write(&bot_path, bot).unwrap();
    std::os::unix::fs::chown(&bot_path, Some(USER), Some(USER)).unwrap();
    let logs_arg = logs.display().to_string();
    let args = ["match", "--game", "target", "--seed", "3", "--max-turns", "20", "--logs", &logs_arg, "probe.py"];
    let out = koth_in(&d, &koth, &home, &project, &args);
    let t = text(&out);
    let _ = std::fs::remove_dir_all(&run_user);
    assert_eq!(out.status.code(), Some(0), "koth match as uid {USER} from {}:\n{t}", project.display());
    let log = std::fs::read_dir(&logs)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("seat1-"))
        .unwrap_or_else(|| panic!("no seat1 log in {}:\n{t}", logs.display()));
    let err = std::fs::read_to_string(log.path()).unwrap();
    eprintln!("the bot's stderr:\n{err}");
    for (what, _, _) in &probes {
        // ENOENT: none of it is in the bot's box.
        assert!(err.lines().any(|l| l == format!("{what} refused 2")), "{what}: not refused as missing:\n{err}\n{t}");
    }
    assert!(err.lines().any(|l| l == "tmp [] shm []"), "the host's /tmp or /dev/shm shows:\n{err}");
    for s in &planted._sockets {
        s.set_nonblocking(true).unwrap();
        assert_eq!(
            s.accept().map(|_| ()).unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "the bot connected to a socket of the author's"
        );
    }
    let row = t
        .lines()
        .find(|l| l.contains("probe.py") && l.trim_end().ends_with("ok"))
        .unwrap_or_else(|| panic!("the bot did not play to the end:\n{t}"));
    assert_eq!(row.split_whitespace().nth(6), Some("0"), "the bot timed out:\n{t}");
}

/// The uid of the administrator's-step test: not [`USER`], whom the other
/// tests run as at the same time without cgroups of their own.
const ALLOWED: u32 = USER + 1;

/// `args` run as uid [`ALLOWED`] (no supplementary groups) from `home`,
/// in root's cgroups: nobody moved it anywhere.
fn koth_as_allowed(koth: &Path, home: &Path, args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(koth);
    cmd.args(args).env_clear().env("HOME", home).env("PATH", "/usr/local/bin:/usr/bin:/bin").current_dir(home);
    // SAFETY: set*id and setgroups are async-signal-safe; no data is shared.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) < 0
                || libc::setresgid(ALLOWED, ALLOWED, ALLOWED) < 0
                || libc::setresuid(ALLOWED, ALLOWED, ALLOWED) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

/// The administrator's step, done by koth: on cgroup v1 a user without
/// cgroups of their own cannot play (and is told the command); root runs
/// `koth rootless allow UID` once; the user's `koth match` then plays with
/// no hand-made cgroup and no shell moved, its boxes made in the user's
/// cgroups; `koth rootless revoke` removes them. Not as root, for a user
/// that does not exist, or on cgroup v2 (where root cannot hand a user a
/// cgroup they could enter), it says why and makes nothing.
#[test]
fn an_administrator_allows_a_user_once_and_they_play_without_root() {
    if !root_or_skip() {
        return;
    }
    let koth_bin = Path::new(env!("CARGO_BIN_EXE_koth"));
    let root_koth = |args: &[&str]| {
        let o = Command::new(koth_bin).args(args).output().unwrap();
        (o.status.code(), text(&o))
    };
    let (code, t) = root_koth(&["rootless", "allow", "no-such-user-koth"]);
    assert!(code == Some(2) && t.contains("there is no user named \"no-such-user-koth\""), "{t}");
    let name = koth_sandbox::cgroup::user::user_cgroup_name(ALLOWED);
    if <dyn Hierarchy>::detect().expect("a cgroup hierarchy").version() == koth_sandbox::cgroup::Version::V2 {
        let (code, t) = root_koth(&["rootless", "allow", &ALLOWED.to_string()]);
        assert!(code == Some(210) && t.contains("systemd-run --user --scope -p Delegate=yes") && t.contains("nothing was made"), "{t}");
        return;
    }
    let dir = PathBuf::from(format!("/var/cache/koth-rootless-allow-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let koth = dir.join("koth");
    std::fs::copy(koth_bin, &koth).unwrap();
    let bot = home.join("drifter.py");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/target/drifter.py"), &bot).unwrap();
    for p in [&home, &bot] {
        std::os::unix::fs::chown(p, Some(ALLOWED), Some(ALLOWED)).unwrap();
    }
    let play = ["match", "--game", "target", "--max-turns", "20", bot.to_str().unwrap()];

    // Without: refused, and told the administrator's command.
    let out = koth_as_allowed(&koth, &home, &play);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(210), "{t}");
    assert!(t.contains("root runs `koth rootless allow YOUR_USER` once"), "{t}");
    // Only root may hand out cgroups.
    let out = koth_as_allowed(&koth, &home, &["rootless", "allow", &ALLOWED.to_string()]);
    assert!(out.status.code() == Some(2) && text(&out).contains("run it as root"), "{}", text(&out));

    let (code, t) = root_koth(&["rootless", "allow", &ALLOWED.to_string()]);
    assert_eq!(code, Some(0), "{t}");
    let made: Vec<PathBuf> = t.lines().filter_map(|l| l.strip_prefix("  ")).map(PathBuf::from).collect();
    for c in ["memory", "pids", "cpuacct", "freezer"] {
        assert!(made.iter().any(|d| d.ends_with(&name) && d.parent().unwrap().to_string_lossy().contains(c)), "{c} in {made:?}");
    }
    use std::os::unix::fs::MetadataExt;
    for d in &made {
        assert_eq!(std::fs::metadata(d).unwrap().uid(), ALLOWED, "{}", d.display());
        assert_eq!(std::fs::metadata(d.join("cgroup.procs")).unwrap().uid(), ALLOWED, "{}", d.display());
    }
    // Again: the same cgroups, handed over again.
    let (code, again) = root_koth(&["rootless", "allow", &ALLOWED.to_string()]);
    assert_eq!((code, again.lines().filter(|l| l.starts_with("  /")).count()), (Some(0), made.len()), "{again}");

    let out = koth_as_allowed(&koth, &home, &play);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "koth match as uid {ALLOWED} after `koth rootless allow`:\n{t}");
    assert!(t.contains("target (seed"), "{t}");
    // It ran in them: their CPU time and peak memory count the user's koth and its boxes.
    let read = |what: &str, file: &str| -> u64 {
        let d = made.iter().find(|d| d.parent().unwrap().ends_with(what)).unwrap_or_else(|| panic!("{what} in {made:?}"));
        std::fs::read_to_string(d.join(file)).unwrap().trim().parse().unwrap()
    };
    assert!(read("cpuacct", "cpuacct.usage") > 10_000_000, "over 10 ms of CPU in the user's cgroup");
    assert!(read("memory", "memory.max_usage_in_bytes") > 1 << 20, "over 1 MiB of memory in the user's cgroup");

    let (code, t) = root_koth(&["rootless", "revoke", &ALLOWED.to_string()]);
    assert_eq!(code, Some(0), "{t}");
    assert!(made.iter().all(|d| !d.exists()), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}
