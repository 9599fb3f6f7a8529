//! A box's programs never run at the priority of the thread that made the
//! box. The match engine's thread is real-time while it plays
//! (`PromptWakeups`) and may be the first to use the sandbox, which creates
//! the launcher thread every box's programs descend from; a thread inherits
//! its creator's policy. This binary holds one test so that the launcher is
//! created here, by a real-time thread.

mod common;

use koth_sandbox::{run_once, Limits, PromptWakeups, Promptness};

#[test]
fn a_box_made_by_a_real_time_thread_runs_at_the_ordinary_priority() {
    // First, before anything starts the launcher.
    let (prompt, errors) = PromptWakeups::enter();
    let _urgent = prompt.urgent();
    eprintln!("this thread: {:?} {errors:?}", prompt.how());
    if !common::sandbox_available() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    // (The cgroup v2 VM of .ci/run may give its tests no real-time budget;
    // there the check below still covers the short slice.)
    if unsafe { libc::geteuid() } == 0 && std::env::var_os("KOTH_CGROUP").is_none() {
        assert_eq!(prompt.how(), Promptness::RealTime, "root on the host may take a real-time priority: {errors:?}");
    }
    let script = "import os; print(os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)";
    let out = run_once(common::config(Limits::default()), common::PYTHON, &["-c".into(), script.into()], &[], b"", |_| Ok(())).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        "0 0",
        "policy and real-time priority of a program in the box ({:?}); stderr: {}",
        prompt.how(),
        String::from_utf8_lossy(&out.stderr)
    );
}
