//! The CPU controllers (issue 31), on cgroup v1 here and v2 in the VM
//! stage: every box has a CPU weight of its own, so its thread count buys
//! it nothing against another box; a box can be confined to cores; the
//! run-queue wait of a box's threads is measured.

#[macro_use]
mod common;

use std::time::Duration;

use common::{compile_c, config, hostile_limits, missing};
use koth_sandbox::cgroup::Version;
use koth_sandbox::{Command, CpuWait, Limits, Sandbox};

/// A box with `spin_threads` in its folder (`./spin N` spins N threads).
fn spinning(weight: u64) -> Sandbox {
    let limits = Limits { cpu_time: None, wall_time: None, pids: 64, cpu_weight: weight, ..hostile_limits() };
    let sb = Sandbox::create(config(limits)).unwrap();
    sb.workdir().write_file("spin", &compile_c("spin_threads"), 0o755).unwrap();
    sb
}

fn cpu_files(sb: &Sandbox) -> (Option<String>, Option<String>) {
    let read =
        |name: &str| sb.cgroup_paths().iter().map(|p| p.join(name)).find(|p| p.exists()).and_then(|p| std::fs::read_to_string(p).ok());
    match sb.cgroup_version() {
        Version::V1 => (read("cpu.shares"), read("cpuset.cpus")),
        Version::V2 => (read("cpu.weight"), read("cpuset.cpus")),
    }
}

#[test]
fn a_box_has_the_cpu_weight_it_was_given_and_can_be_confined_to_a_core() {
    require_sandbox!();
    let sb = spinning(700);
    if !sb.cpu_isolated() {
        missing(format!("the box has no cpu controller: {:?}", sb.cgroup_paths()));
        return;
    }
    let (weight, _) = cpu_files(&sb);
    let want = match sb.cgroup_version() {
        Version::V1 => koth_sandbox::cgroup::shares_v1(700),
        Version::V2 => 700,
    };
    assert_eq!(weight.as_deref().map(str::trim), Some(want.to_string().as_str()));
    // One core: the program sees only it.
    let confined = sb.set_cores(&[0]).unwrap();
    if !confined {
        missing("the box has no cpuset controller");
        return;
    }
    assert_eq!(cpu_files(&sb).1.as_deref().map(str::trim), Some("0"));
    let out = koth_sandbox::run_in(&sb, "/bin/grep", &["Cpus_allowed_list".into(), "/proc/self/status".into()], &[], b"").unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.trim().ends_with("\t0") || text.trim().ends_with(" 0"), "{text}");
}

/// Two boxes on one core, one spinning 16 threads, the other one: each
/// gets about half the core. Without a CPU controller the kernel shares a
/// core per thread, and the single thread would get 1/17 of it.
#[test]
fn threads_buy_a_box_no_more_cpu_than_another_box() {
    require_sandbox!();
    let many = spinning(100);
    let one = spinning(100);
    if !many.cpu_isolated() || !many.set_cores(&[0]).unwrap_or(false) || !one.set_cores(&[0]).unwrap_or(false) {
        missing("boxes have no cpu or cpuset controller");
        return;
    }
    let a = many.spawn(Command::new("./spin").arg("16")).unwrap();
    let b = one.spawn(Command::new("./spin").arg("1")).unwrap();
    let (cpu_many, cpu_one) = (many.cpu_usage().unwrap(), one.cpu_usage().unwrap());
    // A ratio of CPU times: two seconds tell it even under emulation.
    std::thread::sleep(Duration::from_secs(2));
    let got_many = many.cpu_usage().unwrap() - cpu_many;
    let got_one = one.cpu_usage().unwrap() - cpu_one;
    many.kill_all().unwrap();
    one.kill_all().unwrap();
    drop((a, b));
    let share = got_one.as_secs_f64() / (got_one + got_many).as_secs_f64();
    eprintln!("one thread: {got_one:?}, sixteen threads: {got_many:?}: the single thread's share {share:.2}");
    // Half is fair; 1/17 (0.06) is per-thread sharing. The bound sits far
    // from both, so the machine's noise cannot cross it.
    assert!(share > 0.3, "the single-threaded box got {share:.2} of the core");
}

/// The wait of a box's threads for a CPU is measured: a box spinning two
/// threads confined to one core waits about as long as it runs.
#[test]
fn a_box_waiting_for_a_cpu_is_seen_waiting() {
    require_sandbox!();
    let sb = spinning(100);
    if !sb.set_cores(&[0]).unwrap_or(false) {
        missing("boxes have no cpuset controller");
        return;
    }
    let child = sb.spawn(Command::new("./spin").arg("2")).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut wait = CpuWait::new();
    sb.sample_cpu_wait(&mut wait);
    let cpu0 = sb.cpu_usage().unwrap();
    std::thread::sleep(Duration::from_secs(1));
    sb.sample_cpu_wait(&mut wait);
    let ran = sb.cpu_usage().unwrap() - cpu0;
    sb.kill_all().unwrap();
    drop(child);
    eprintln!("two threads on one core: ran {ran:?}, waited {:?}", wait.waited());
    // Each thread waits while the other runs: the waits add up to about
    // the CPU time (and never to nothing).
    assert!(wait.waited() > ran / 3, "waited {:?} while running {ran:?}", wait.waited());
}
