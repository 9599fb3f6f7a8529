//! `koth sandbox run` as a host uses it: reports, exit codes, bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Whether the sandbox works here; in CI its absence fails the test.
fn sandbox_works() -> bool {
    let out = koth(&["sandbox", "run", "--", "/bin/true"], &[]);
    if out.status.code() == Some(0) {
        return true;
    }
    let why = String::from_utf8_lossy(&out.stderr).into_owned();
    koth_testkit::missing(format!("the sandbox cannot run: {why}"))
}

fn koth(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .envs(env.iter().copied())
        .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/cli")
        .output()
        .expect("running koth")
}

fn run_json(args: &[&str]) -> (i32, serde_json::Value) {
    let mut full = vec!["sandbox", "run", "--json"];
    full.extend_from_slice(args);
    let out = koth(&full, &[]);
    let report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("no JSON report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().expect("exited"), report)
}

#[test]
fn exit_codes_say_what_happened() {
    if !sandbox_works() {
        return;
    }
    let (code, r) = run_json(&["--", "/bin/sh", "-c", "echo out; echo err >&2; exit 3"]);
    assert_eq!(code, 3);
    assert_eq!(r["outcome"], "failed");
    assert_eq!(r["exit"]["code"], 3);
    assert_eq!(r["stdout"], "out\n");
    assert_eq!(r["stderr"], "err\n");
    assert_eq!(r["stdout_bytes"], 4);
    for key in ["wall_time", "cpu_time", "peak_memory", "oom_kills", "cgroup", "landlock", "root", "uid"] {
        assert!(r.get(key).is_some(), "the report lacks {key}: {r}");
    }

    let (code, r) = run_json(&["--time", "300ms", "--", "/bin/sh", "-c", "while :; do :; done"]);
    assert_eq!((code, r["outcome"].as_str().unwrap()), (201, "cpu_time_limit"));

    let (code, r) = run_json(&["--wall-time", "300ms", "--", "/bin/sleep", "10"]);
    assert_eq!((code, r["outcome"].as_str().unwrap()), (201, "wall_time_limit"));

    let (code, r) = run_json(&["--memory", "32M", "--", "/usr/bin/python3", "-c", "a = [bytearray(1 << 20) for _ in range(200)]"]);
    assert_eq!((code, r["outcome"].as_str().unwrap()), (202, "memory_limit"));

    let (code, r) = run_json(&["--output", "1k", "--", "/usr/bin/yes"]);
    assert_eq!((code, r["outcome"].as_str().unwrap()), (203, "output_limit"));
    assert_eq!(r["stdout"].as_str().unwrap().len(), 1024);

    let (code, r) = run_json(&["--", "/bin/sh", "-c", "kill -SEGV $$"]);
    assert_eq!((code, r["outcome"].as_str().unwrap()), (128 + 11, "crashed"));
}

#[test]
fn files_and_stdin_reach_the_program() {
    if !sandbox_works() {
        return;
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let script = dir.join("cli-script.sh");
    std::fs::write(&script, "read line; echo \"got $line and $(cat data.txt)\"\n").unwrap();
    let data = dir.join("cli-data.txt");
    std::fs::write(&data, "the file").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["sandbox", "run", "--stdin", "--file"])
        .arg(&script)
        .arg("--file")
        .arg(format!("data.txt={}", data.display()))
        .args(["--", "/bin/sh", "cli-script.sh"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"a line\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "got a line and the file\n");
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(summary.contains("koth sandbox: Ok"), "{summary}");
}

#[test]
fn bad_input_gets_a_clear_error() {
    let cases: &[(&[&str], i32, &str)] = &[
        (&["sandbox", "run", "--memory", "12X", "--", "/bin/true"], 2, "is not a number with an optional unit"),
        (&["sandbox", "run", "--time", "fast", "--", "/bin/true"], 2, "is not a number with an optional unit"),
        (&["sandbox", "run", "--memory", "1k", "--", "/bin/true"], 210, "below the 4 MiB minimum"),
        (&["sandbox", "run", "--root", "relative/dir", "--", "/bin/true"], 210, "must be an absolute path"),
        (&["sandbox", "run", "--env", "NOEQUALS", "--", "/bin/true"], 210, "expected NAME=VALUE"),
        (&["sandbox", "run", "--file", "/no/such/file", "--", "/bin/true"], 210, "/no/such/file"),
        (&["sandbox", "run"], 2, "required"),
    ];
    for (args, code, needle) in cases {
        let out = koth(args, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_missing_program_or_cgroup_backend_is_reported_not_run_unconfined() {
    if !sandbox_works() {
        return;
    }
    let out = koth(&["sandbox", "run", "--", "/no/such/program"], &[]);
    assert_eq!(out.status.code(), Some(210));
    assert!(String::from_utf8_lossy(&out.stderr).contains("execve failed: No such file"));

    let out = koth(&["sandbox", "run", "--", "/bin/true"], &[("KOTH_CGROUP", "v3")]);
    assert_eq!(out.status.code(), Some(210));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected v1 or v2"));

    // Forcing each backend either works or fails with a clear message.
    let mut failures = 0;
    for v in ["v1", "v2"] {
        let out = koth(&["sandbox", "run", "--json", "--", "/bin/true"], &[("KOTH_CGROUP", v)]);
        match out.status.code() {
            Some(0) => {
                let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(r["cgroup"], v);
            }
            Some(210) => {
                failures += 1;
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(err.contains("this host cannot run the sandbox"), "{v}: {err}");
            }
            other => panic!("{v}: unexpected exit {other:?}"),
        }
    }
    assert!(failures < 2, "neither cgroup backend worked although the sandbox does");
}

/// Groups left by a supervisor that was killed (SIGKILL skips teardown) are
/// removed by the next koth process that builds a box.
#[test]
fn groups_left_by_a_killed_supervisor_are_swept() {
    if !sandbox_works() {
        return;
    }
    let cfg = koth_sandbox::SandboxConfig {
        runtime_dir: "/run/koth-test/cli-sweep".into(),
        uid_base: 65500,
        slots: 10,
        ..koth_sandbox::SandboxConfig::default()
    };
    let parents: Vec<std::path::PathBuf> = {
        let sb = koth_sandbox::Sandbox::create(cfg).unwrap();
        sb.cgroup_paths().iter().map(|p| p.parent().unwrap().to_path_buf()).collect()
    };
    // A pid that is certainly dead: a child we waited for.
    let mut child = Command::new("/bin/true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    use std::os::unix::fs::MetadataExt;
    let ns = std::fs::metadata("/proc/self/ns/pid").unwrap().ino();
    let stale: Vec<std::path::PathBuf> = parents.iter().map(|p| p.join(format!("koth-{ns}-{dead}-0-0"))).collect();
    // A group of another PID namespace (another container's runner) is not ours to judge.
    let foreign: Vec<std::path::PathBuf> = parents.iter().map(|p| p.join(format!("koth-{}-{dead}-0-0", ns + 1))).collect();
    for d in stale.iter().chain(&foreign) {
        std::fs::create_dir(d).unwrap();
    }
    let out = koth(&["sandbox", "run", "--", "/bin/true"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for d in &stale {
        assert!(!d.exists(), "{} was left behind", d.display());
    }
    for d in &foreign {
        assert!(d.exists(), "{} belongs to another PID namespace and was removed", d.display());
    }
    // A container's runner owns its cgroup: another namespace's groups there
    // are its own earlier life's (the container restarted) and go too.
    let out = koth(&["sandbox", "run", "--", "/bin/true"], &[("KOTH_SANDBOX_OWNS_CGROUP", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for d in &foreign {
        assert!(!d.exists(), "{} was left behind by a process that owns its cgroup", d.display());
    }
}

/// A box that cannot be entered (here: no CAP_SYS_CHROOT, which setns into
/// a mount namespace needs, as in a container missing it: the box's
/// unsharer entering the template, or a program joining its box) is an
/// error that says so, never a hang.
#[test]
fn a_spawn_that_cannot_join_its_box_fails_instead_of_hanging() {
    if !sandbox_works() {
        return;
    }
    let mut child = Command::new("setpriv")
        .args(["--bounding-set", "-sys_chroot", env!("CARGO_BIN_EXE_koth"), "sandbox", "run", "--", "/bin/true"])
        .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/cli-nochroot")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("setpriv (util-linux)");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("koth sandbox run hung when the program could not join its box");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(210), "{err}");
    assert!(err.contains("CAP_SYS_CHROOT"), "{err}");
}
