//! Shared harness of the sandbox's integration tests.
//!
//! These tests need root, a cgroup hierarchy, Landlock, `cc` and
//! `/usr/bin/python3`. Without them a test prints why and returns, unless
//! `CI` is set, where a missing prerequisite fails the test.

#![allow(dead_code, unused_imports)] // each suite uses its own part

pub mod delegate;

use std::path::{Path, PathBuf};
use std::process::Command as HostCommand;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use koth_sandbox::{run_once, Limits, RunOutput, Sandbox, SandboxConfig};

pub const PYTHON: &str = "/usr/bin/python3";

pub use koth_testkit::missing;

/// Whether the sandbox can run here. In CI, panics with the reason instead.
pub fn sandbox_available() -> bool {
    static OK: OnceLock<Result<(), String>> = OnceLock::new();
    let r = OK.get_or_init(|| {
        let mut missing = Vec::new();
        if let Err(e) = Sandbox::create(config(Limits::default())) {
            missing.push(format!("the sandbox cannot run: {e}"));
        }
        if HostCommand::new("cc").arg("--version").output().is_err() {
            missing.push("no C compiler (cc)".into());
        }
        if !Path::new(PYTHON).exists() {
            missing.push(format!("no {PYTHON}"));
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(missing.join("; "))
        }
    });
    match r {
        Ok(()) => true,
        Err(why) => missing(format!("a prerequisite is missing: {why}")),
    }
}

#[macro_export]
macro_rules! require_sandbox {
    () => {
        if !common::sandbox_available() {
            return;
        }
    };
}

/// How much slower than real hardware this machine runs, from
/// `KOTH_TEST_SLOWDOWN` (default 1). The cgroup v2 VM run (`tests/vm`) is
/// emulated and sets it; every time limit and time tolerance is scaled by it.
pub fn slowdown() -> u32 {
    std::env::var("KOTH_TEST_SLOWDOWN").ok().and_then(|v| v.parse().ok()).filter(|&n| n >= 1).unwrap_or(1)
}

/// `d` scaled by [`slowdown`].
pub fn scaled(d: Duration) -> Duration {
    d * slowdown()
}

/// The limits every hostile program runs under (and the positive controls too).
pub fn hostile_limits() -> Limits {
    Limits {
        memory: 256 << 20,
        pids: 64,
        cpu_time: Some(scaled(Duration::from_secs(2))),
        wall_time: Some(scaled(Duration::from_secs(6))),
        disk: 16 << 20,
        file_size: 8 << 20,
        open_files: 64,
        stack: 8 << 20,
        output: 64 << 10,
        cpu_weight: koth_sandbox::CPU_WEIGHT_DEFAULT,
    }
}

/// The limits a positive control (a real runtime that must run) is given:
/// the hostile suite's, with twice the CPU time under emulation. There the
/// VM's two vCPUs take turns on one host thread, and the guest charges a
/// running thread all the time that passes, its sibling vCPU's turns too:
/// a runtime busy on both is charged up to twice what it used. (Node's
/// worker threads, `programs/threads.js`, 0.4 s of CPU on the host, were
/// charged 27 s in 18 s in the VM alone, and the whole limit, 50 s, in
/// 66 s while the VM shared CI's machine with its builds.)
pub fn control_limits() -> Limits {
    let mut limits = hostile_limits();
    if slowdown() > 1 {
        limits.cpu_time = limits.cpu_time.map(|t| t * 2);
    }
    limits
}

pub fn config(limits: Limits) -> SandboxConfig {
    SandboxConfig { limits, runtime_dir: PathBuf::from("/run/koth-test/sandbox"), uid_base: 62000, slots: 200, ..SandboxConfig::default() }
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// Compile `tests/programs/<name>.c` once per test process.
pub fn compile_c(name: &str) -> Vec<u8> {
    // The lock is held across the compile: tests of one binary run in
    // parallel and ask for the same program, and two `cc` writing one path
    // let a test read the other's half-written file (CI saw "Exec format
    // error" in the VM stage, where nothing was compiled before). Each
    // test binary writes its own file and renames it into place, so
    // binaries sharing the folder never see a partial one either.
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, b)) = cache.iter().find(|(n, _)| n == name) {
        return b.clone();
    }
    let exe = compiled_c_path(name);
    let out_dir = exe.parent().expect("a folder of its own");
    std::fs::create_dir_all(out_dir).unwrap();
    let partial = out_dir.join(format!("{name}.{}.partial", std::process::id()));
    let src = programs_dir().join(format!("{name}.c"));
    let st = HostCommand::new("cc").args(["-O1", "-o"]).arg(&partial).arg(&src).arg("-lpthread").status().expect("running cc");
    assert!(st.success(), "compiling {}", src.display());
    std::fs::rename(&partial, &exe).unwrap();
    let bytes = std::fs::read(&exe).unwrap();
    cache.push((name.to_owned(), bytes.clone()));
    bytes
}

static CACHE: Mutex<Vec<(String, Vec<u8>)>> = Mutex::new(Vec::new());

/// Where [`compile_c`] leaves `programs/<name>.c` compiled.
fn compiled_c_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile-bin").join(name)
}

/// `programs/<name>.c` compiled, copied to `to` by `cp`, a process of its
/// own, so that this process never holds the copy open for writing. A file
/// this process wrote itself can be busy when it is run: another test's
/// fork made while the file was open holds the descriptor until that child
/// execs, and `execve` then fails with `ETXTBSY` (the v2 VM stage, where a
/// fork and its exec take long, 2026-11-29).
pub fn copy_compiled_c(name: &str, to: &Path) {
    compile_c(name);
    let built = compiled_c_path(name);
    let st = HostCommand::new("cp").arg(&built).arg(to).status().expect("running cp");
    assert!(st.success(), "copying {} to {}", built.display(), to.display());
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    C,
    Python,
}

pub const LANGS: [Lang; 2] = [Lang::C, Lang::Python];

/// What a finished run left to check.
pub struct Ran {
    pub out: RunOutput,
    pub stdout: String,
    pub uid: u32,
}

/// Host files that no program may change.
fn host_snapshot() -> Vec<(String, Vec<u8>)> {
    ["/etc/passwd", "/etc/shadow", "/etc/hostname", "/proc/sys/kernel/hostname"]
        .iter()
        .map(|p| (p.to_string(), std::fs::read(p).unwrap_or_default()))
        .collect()
}

/// Run hostile program `name` in `lang` in a fresh box, then check that
/// nothing of it is left and the host is unchanged.
pub fn run_hostile(lang: Lang, name: &str, args: &[String], limits: Limits) -> Ran {
    run_hostile_watched(lang, name, args, limits, |_| {})
}

/// The real uid in a `/proc/<pid>/status` text.
fn real_uid(status: &str) -> Option<u32> {
    status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|v| v.split_whitespace().next()).and_then(|v| v.parse().ok())
}

/// Tasks (threads) of processes of `uid` now in state `state` (e.g. 'D').
pub fn tasks_in_state(uid: u32, state: char) -> u32 {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else { continue };
        let real = real_uid(&status);
        if real != Some(uid) {
            continue;
        }
        for task in std::fs::read_dir(entry.path().join("task")).into_iter().flatten().flatten() {
            let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else { continue };
            if stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next()) == Some(state) {
                n += 1;
            }
        }
    }
    n
}

/// [`run_hostile`], telling `watch` the box's uid before the program starts.
pub fn run_hostile_watched(lang: Lang, name: &str, args: &[String], limits: Limits, watch: impl FnOnce(u32)) -> Ran {
    let (program, mut argv, file, bytes) = match lang {
        Lang::C => ("./prog".to_owned(), vec![], "prog", compile_c(name)),
        Lang::Python => {
            (PYTHON.to_owned(), vec!["prog.py".to_owned()], "prog.py", std::fs::read(programs_dir().join(format!("{name}.py"))).unwrap())
        }
    };
    argv.extend(args.iter().cloned());
    let before = host_snapshot();
    let seen: Mutex<Option<(u32, Vec<PathBuf>, i32)>> = Mutex::new(None);
    let out = run_once(config(limits), &program, &argv, &[], b"", |sb| {
        sb.workdir().write_file(file, &bytes, 0o755)?;
        *seen.lock().unwrap() = Some((sb.uid(), sb.cgroup_paths(), sb.holder_pid()));
        watch(sb.uid());
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{name} ({lang:?}): the sandbox failed: {e}"));
    let (uid, cgroups, holder) = seen.into_inner().unwrap().expect("prepare ran");
    assert_clean(&format!("{name} ({lang:?})"), uid, &cgroups, holder);
    assert_eq!(host_snapshot(), before, "{name} ({lang:?}) changed host files");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Ran { out, stdout, uid }
}

/// The pids of the host's processes now.
pub fn host_pids() -> Vec<String> {
    let names = std::fs::read_dir("/proc").unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned());
    names.filter(|n| n.bytes().all(|b| b.is_ascii_digit())).collect()
}

/// Processes on the host whose real uid is `uid`.
pub fn processes_of(uid: u32) -> Vec<String> {
    let mut found = Vec::new();
    for name in host_pids() {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{name}/status")) else { continue };
        let real = real_uid(&status);
        if real == Some(uid) {
            let comm = status.lines().next().unwrap_or("").to_owned();
            found.push(format!("pid {name} {comm}"));
        }
    }
    found
}

/// After a box is gone: no process of its uid, no cgroup, no holder. A
/// task stuck in the kernel when it was killed dies when its call returns,
/// and its box's teardown finishes then: allow that a few seconds.
pub fn assert_clean(what: &str, uid: u32, cgroups: &[PathBuf], holder: i32) {
    let until = std::time::Instant::now() + scaled(Duration::from_secs(10));
    while std::time::Instant::now() < until
        && (!processes_of(uid).is_empty() || cgroups.iter().any(|p| p.exists()) || unsafe { libc::kill(holder, 0) } == 0)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = processes_of(uid);
    assert!(left.is_empty(), "{what}: processes left behind: {left:?}");
    for p in cgroups {
        assert!(!p.exists(), "{what}: cgroup {} still exists", p.display());
    }
    let alive = unsafe { libc::kill(holder, 0) } == 0;
    assert!(!alive, "{what}: the box's holder (pid {holder}) is still alive");
}

/// The `key=value` integer from a program's report line.
pub fn field(stdout: &str, key: &str) -> i64 {
    let pat = format!("{key}=");
    stdout
        .split(|c: char| c.is_whitespace())
        .find_map(|w| w.strip_prefix(&pat))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in output {stdout:?}"))
}

/// Whether `tool` is on PATH. In CI, its absence fails the test.
pub fn require_ci_tool(tool: &str) -> bool {
    let ok = HostCommand::new("sh").arg("-c").arg(format!("command -v {tool}")).output().is_ok_and(|o| o.status.success());
    ok || missing(format!("{tool} is not installed (.ci/run installs it)"))
}

/// Host processes spinning for as long as this lives (killed when it is
/// dropped, a failed assertion included, and when this process dies: a
/// supervisor killed by the OOM killer, which is what the test looks for,
/// runs no destructor).
pub struct Spinners(Vec<std::process::Child>);

impl Spinners {
    pub fn start(n: usize) -> Spinners {
        use std::os::unix::process::CommandExt;
        let spinner = || {
            let mut c = std::process::Command::new("/bin/sh");
            c.args(["-c", "while :; do :; done"]);
            // SAFETY: prctl with integer arguments only, async-signal-safe.
            unsafe {
                c.pre_exec(|| {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                })
            };
            c.spawn().unwrap()
        };
        Spinners((0..n).map(|_| spinner()).collect())
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        for s in &mut self.0 {
            let _ = s.kill();
            let _ = s.wait();
        }
    }
}
