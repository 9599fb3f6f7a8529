//! `koth sandbox bench`: the sandbox's costs, each beside its baseline,
//! measured in the same run.

use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use koth_sandbox::{BoxPool, Command, Limits, Phases, Sandbox, SandboxConfig};

#[derive(Args)]
pub struct BenchArgs {
    /// Samples per measurement.
    #[arg(long, default_value_t = 200)]
    samples: usize,
    /// CPU time the accounting check burns, in milliseconds.
    #[arg(long, default_value_t = 300)]
    spin_ms: u64,
    /// Memory (MiB) the bench allocates and touches first, as a runner that
    /// holds replays and buffers would: a sandbox that forks the supervisor
    /// pays for its size on every box and spawn.
    #[arg(long, default_value_t = 0)]
    supervisor_mib: usize,
    /// Run one section only (e.g. in the cgroup v2 VM, where emulation
    /// makes the whole bench take long: `sandbox/tests/vm/cgroup-v2.sh`
    /// with KOTH_VM_RUN).
    #[arg(long, value_enum)]
    only: Option<Section>,
    /// Processes spinning on the host (`while :; do :; done`, outside every
    /// box) for the whole run: a busy host, as a runner's often is.
    #[arg(long, default_value_t = 0)]
    spinners: u32,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Section {
    /// A program started right after another, and after a quiet spell,
    /// beside a process moved into a box's cgroups.
    QuietSpell,
}

struct Stats {
    p50: Duration,
    p99: Duration,
}

fn stats(mut v: Vec<Duration>) -> Stats {
    v.sort();
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    Stats { p50: at(0.5), p99: at(0.99) }
}

fn ms(d: Duration) -> String {
    format!("{:8.3} ms", d.as_secs_f64() * 1e3)
}

fn row(name: &str, s: &Stats, base: Option<&Stats>) {
    let ratio = base.map_or(String::new(), |b| {
        format!("  ({:.2}x p50, {:.2}x p99)", s.p50.as_secs_f64() / b.p50.as_secs_f64(), s.p99.as_secs_f64() / b.p99.as_secs_f64())
    });
    println!("{name:<46} p50 {}  p99 {}{ratio}", ms(s.p50), ms(s.p99));
}

/// How long the machine idles before each pooled box's take, and before
/// the bare fork+exec it is compared with.
const POOL_PAUSE: Duration = Duration::from_millis(5);

/// The last step of a spawn's table: from `Sandbox::spawn`'s return (the
/// program has exec'd) to its exit, reaped.
const PROGRAM_RUN: &str = "the program runs, exits and is reaped (Child::wait)";

/// The steps of many box builds or spawns (`Sandbox::phases`,
/// `Child::phases`), for a table of each step's median.
#[derive(Default)]
struct StepTable {
    /// Step names in the order first met, and each sample's time in them
    /// (a step met several times in one sample, such as binding each device,
    /// counts once with their sum).
    steps: Vec<(&'static str, Vec<Duration>)>,
    /// Steps that ran on another thread beside those (`Phases::beside`):
    /// printed apart, outside the sum.
    beside: Vec<(&'static str, Vec<Duration>)>,
    samples: usize,
}

impl StepTable {
    fn add(&mut self, phases: &Phases, more: &[(&'static str, Duration)]) {
        let mut this: Vec<(&'static str, Duration)> = Vec::new();
        for &(name, d) in phases.steps().iter().chain(more) {
            match this.iter_mut().find(|(n, _)| *n == name) {
                Some((_, sum)) => *sum += d,
                None => this.push((name, d)),
            }
        }
        for (name, d) in this {
            match self.steps.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(d),
                None => {
                    // A step the earlier samples did not have took 0 there.
                    let mut v = vec![Duration::ZERO; self.samples];
                    v.push(d);
                    self.steps.push((name, v));
                }
            }
        }
        for &(name, d) in phases.beside() {
            match self.beside.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(d),
                None => self.beside.push((name, vec![d])),
            }
        }
        self.samples += 1;
        for (_, v) in &mut self.steps {
            v.resize(self.samples, Duration::ZERO);
        }
    }

    /// Each step's median, its share of the medians' sum, beside bare
    /// fork+exec's median.
    fn print(&self, title: &str, bare: &Stats) {
        let p50 = |v: &Vec<Duration>| {
            let mut v = v.clone();
            v.sort();
            v[v.len() / 2]
        };
        // Means beside medians: the means of the steps add up to the mean
        // of the whole, where the medians' sum leaves out every step's
        // slow tail (a step that is slow one time in ten shows in its mean
        // only).
        let mean = |v: &Vec<Duration>| v.iter().sum::<Duration>() / (v.len().max(1) as u32);
        let rows: Vec<(&str, Duration, Duration)> = self.steps.iter().map(|(n, v)| (*n, p50(v), mean(v))).collect();
        let sum: Duration = rows.iter().map(|(_, d, _)| *d).sum();
        let sum_of_means: Duration = rows.iter().map(|(_, _, m)| *m).sum();
        println!("\n-- where the time goes: {title} ({} samples; p50 and mean of each step) --", self.samples);
        for (name, d, m) in &rows {
            let share = 100.0 * d.as_secs_f64() / sum.as_secs_f64().max(1e-12);
            println!("  {name:<68} {:8.1} us {share:5.1} %  mean {:8.1} us", d.as_secs_f64() * 1e6, m.as_secs_f64() * 1e6);
        }
        println!(
            "  {:<68} {:8.1} us  = {:.2}x bare fork+exec ({:.1} us)",
            "sum of the steps' medians",
            sum.as_secs_f64() * 1e6,
            sum.as_secs_f64() / bare.p50.as_secs_f64(),
            bare.p50.as_secs_f64() * 1e6
        );
        println!("  {:<68} {:8.1} us", "sum of the steps' means", sum_of_means.as_secs_f64() * 1e6);
        for (name, v) in &self.beside {
            println!("beside those steps, on the caller's thread: {name} {:.1} us", p50(v).as_secs_f64() * 1e6);
        }
    }
}

fn sample(n: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Stats> {
    for _ in 0..(n / 10).max(3) {
        f()?; // warm up
    }
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f()?;
        v.push(t.elapsed());
    }
    Ok(stats(v))
}

fn config() -> SandboxConfig {
    SandboxConfig { limits: Limits { memory: 256 << 20, pids: 64, ..Limits::default() }, ..Default::default() }
}

pub fn run(a: BenchArgs) -> anyhow::Result<i32> {
    let n = a.samples.max(10);
    let ballast = vec![1u8; a.supervisor_mib << 20];
    std::hint::black_box(&ballast);
    let _load = crate::cli::fairness_bench::Spinners::start(a.spinners)?;
    println!(
        "koth sandbox bench: {n} samples each, a supervisor of {} MiB more, spinners on the host: {}; ratios are against the baseline row above them\n",
        a.supervisor_mib, a.spinners
    );
    if a.only == Some(Section::QuietSpell) {
        after_a_quiet_spell(n)?;
        return Ok(0);
    }

    println!("== spawn to exit of /bin/true ==");
    let bare = sample(n, || {
        let st = std::process::Command::new("/bin/true").status()?;
        anyhow::ensure!(st.success(), "/bin/true failed");
        Ok(())
    })?;
    row("bare fork+exec (std::process::Command)", &bare, None);
    // A new box per program (compiles, `koth sandbox run`): creation and the
    // program's spawn-to-exit are timed apart from the teardown that follows.
    let (mut create, mut to_exit, mut teardown, mut whole) = (vec![], vec![], vec![], vec![]);
    let (mut create_steps, mut first_spawn_steps) = (StepTable::default(), StepTable::default());
    for i in 0..n + n / 10 {
        let t0 = Instant::now();
        let sb = Sandbox::create(config())?;
        let t1 = Instant::now();
        let mut child = sb.spawn(Command::new("/bin/true"))?;
        let spawned = Instant::now();
        let e = child.wait()?;
        let t2 = Instant::now();
        if i >= n / 10 {
            create_steps.add(sb.phases(), &[]);
            first_spawn_steps.add(&child.phases(), &[(PROGRAM_RUN, t2 - spawned)]);
        }
        drop(sb);
        let t3 = Instant::now();
        anyhow::ensure!(e == koth_sandbox::Exit::Code(0), "/bin/true in a box: {e:?}");
        if i >= n / 10 {
            create.push(t1 - t0);
            to_exit.push(t2 - t0);
            teardown.push(t3 - t2);
            whole.push(t3 - t0);
        }
    }
    let to_exit = stats(to_exit);
    row("new box: Sandbox::create", &stats(create), None);
    row("new box: create + spawn to exit", &to_exit, Some(&bare));
    row("new box: teardown after exit", &stats(teardown), None);
    row("new box: create + spawn + exit + teardown", &stats(whole), Some(&bare));
    // Boxes built ahead by a pool, as a runner's matches take them. A take
    // follows a pause (the pool's builder replaces the last box taken
    // meanwhile), and a program started after a pause takes longer than
    // one started right after another, sandboxed or not (here, bare
    // fork+exec after 5 ms idle took 1.3 ms at the median against 0.6-0.8
    // back to back). So the anchor of this row is bare fork+exec after the
    // same pause, alternated with the takes.
    let pool = BoxPool::new(1, 2, Duration::from_secs(60));
    pool.prepare(config());
    let (mut from_pool, mut bare_paced) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut pool_steps = StepTable::default();
    for i in 0..n + n / 10 {
        anyhow::ensure!(pool.wait_ready(1, Duration::from_secs(10)), "the box pool built nothing");
        std::thread::sleep(POOL_PAUSE);
        let t = Instant::now();
        let st = std::process::Command::new("/bin/true").status()?;
        let bare_took = t.elapsed();
        anyhow::ensure!(st.success(), "/bin/true failed");
        if i >= n / 10 {
            bare_paced.push(bare_took);
        }
        std::thread::sleep(POOL_PAUSE);
        let t = Instant::now();
        let sb = pool.take(config())?;
        let taken = t.elapsed();
        let mut child = sb.spawn(Command::new("/bin/true"))?;
        let spawned = Instant::now();
        let e = child.wait()?;
        let took = t.elapsed();
        if i >= n / 10 {
            let mut steps = vec![("taking the box from the pool (BoxPool::take)", taken)];
            steps.extend_from_slice(child.phases().steps());
            steps.push((PROGRAM_RUN, spawned.elapsed()));
            pool_steps.add(&Phases::default(), &steps);
        }
        anyhow::ensure!(e == koth_sandbox::Exit::Code(0), "/bin/true in a box: {e:?}");
        drop(sb);
        if i >= n / 10 {
            from_pool.push(took);
        }
    }
    let (from_pool, bare_paced) = (stats(from_pool), stats(bare_paced));
    row("box from the pool: take + spawn to exit", &from_pool, Some(&bare));
    row("bare fork+exec, after a pause as a take is", &bare_paced, None);
    row("box from the pool: take + spawn to exit", &from_pool, Some(&bare_paced));
    drop(pool);
    create_steps.print("a new box, Sandbox::create", &bare);
    first_spawn_steps.print("its first program, Sandbox::spawn to the exit of /bin/true", &bare);
    pool_steps.print("a box from the pool, taken, and its first program to the exit of /bin/true", &bare_paced);
    println!();
    // A spawn in a live box against what an unsandboxed controller does per
    // turn, popen("sh -c ..."): sampled alternately, so both see the same
    // machine.
    let sb = Sandbox::create(config())?;
    let (mut in_box, mut popen) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut live_steps = StepTable::default();
    for i in 0..n + n / 10 {
        let t = Instant::now();
        let mut child = sb.spawn(Command::new("/bin/true"))?;
        let spawned = Instant::now();
        let e = child.wait()?;
        let ours = t.elapsed();
        if i >= n / 10 {
            live_steps.add(&child.phases(), &[(PROGRAM_RUN, spawned.elapsed())]);
        }
        anyhow::ensure!(e == koth_sandbox::Exit::Code(0), "/bin/true in a box: {e:?}");
        let t = Instant::now();
        let st = std::process::Command::new("/bin/sh").args(["-c", "/bin/true"]).status()?;
        let theirs = t.elapsed();
        anyhow::ensure!(st.success(), "sh -c /bin/true failed");
        if i >= n / 10 {
            in_box.push(ours);
            popen.push(theirs);
        }
    }
    let (in_box, popen) = (stats(in_box), stats(popen));
    row("spawn + exit in a live box (per turn)", &in_box, Some(&bare));
    row("popen-style sh -c /bin/true, no sandbox", &popen, None);
    row("spawn + exit in a live box (per turn)", &in_box, Some(&popen));
    drop(sb);
    live_steps.print("a program in a live box (per turn), Sandbox::spawn to the exit of /bin/true", &bare);
    concurrent_spawns(n)?;
    after_a_quiet_spell(n)?;

    anchors(n)?;
    flock_channel()?;
    slime_against_popen()?;

    println!("\n== network namespace ==");
    let netns = sample(n.min(100), || {
        // unshare(CLONE_NEWNET) affects only the calling thread.
        let t = std::thread::spawn(|| -> std::io::Result<Duration> {
            let t = Instant::now();
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(t.elapsed())
        });
        t.join().map_err(|_| anyhow::anyhow!("thread panicked"))??;
        Ok(())
    })?;
    row("thread + unshare(CLONE_NEWNET) (paid per box)", &netns, None);

    println!("\n== freeze + thaw of a box running a busy loop ==");
    let sb = Sandbox::create(config())?;
    let _spinner = sb.spawn(Command::new("/bin/sh").args(["-c", "while :; do :; done"]))?;
    std::thread::sleep(Duration::from_millis(20));
    let dir = sb
        .cgroup_paths()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("freezer") || p.join("cgroup.freeze").exists())
        .context("the box has no freezer cgroup")?;
    let raw = match sb.cgroup_version() {
        koth_sandbox::cgroup::Version::V1 => {
            let state = dir.join("freezer.state");
            sample(n, || {
                std::fs::write(&state, "FROZEN")?;
                while std::fs::read_to_string(&state)?.trim() != "FROZEN" {}
                std::fs::write(&state, "THAWED")?;
                while std::fs::read_to_string(&state)?.trim() != "THAWED" {}
                Ok(())
            })?
        }
        koth_sandbox::cgroup::Version::V2 => {
            let (freeze, events) = (dir.join("cgroup.freeze"), dir.join("cgroup.events"));
            sample(n, || {
                std::fs::write(&freeze, "1")?;
                while !std::fs::read_to_string(&events)?.contains("frozen 1") {}
                std::fs::write(&freeze, "0")?;
                while !std::fs::read_to_string(&events)?.contains("frozen 0") {}
                Ok(())
            })?
        }
    };
    row(&format!("raw cgroup {:?} freezer by hand (open/write/read)", sb.cgroup_version()), &raw, None);
    let ours = sample(n, || {
        sb.freeze()?;
        sb.thaw()?;
        Ok(())
    })?;
    row("Sandbox::freeze + Sandbox::thaw", &ours, Some(&raw));
    drop(_spinner);
    drop(sb);

    println!("\n== CPU-time accounting ==");
    // A known busy loop reports its own CLOCK_PROCESS_CPUTIME_ID; the box's
    // cgroup also sees the process start and exit, so a 0 ms run measures that
    // overhead, which is subtracted.
    let exe = std::fs::read("/proc/self/exe").context("reading koth's own binary")?;
    // The box's scratch disk holds a copy of koth itself.
    let mut cfg = config();
    cfg.limits.disk = cfg.limits.disk.max(exe.len() as u64 + (16 << 20));
    let sb = Sandbox::create(cfg)?;
    sb.workdir().write_file("koth", &exe, 0o755)?;
    let spin = |ms: u64| -> anyhow::Result<(Duration, Duration)> {
        let before = sb.cpu_usage()?;
        let mut child =
            sb.spawn(Command::new("./koth").args(["sandbox", "spin", "--cpu-ms", &ms.to_string()]).stdout(koth_sandbox::Stdio::Pipe))?;
        let mut out = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().expect("piped"), &mut out)?;
        let exit = child.wait()?;
        anyhow::ensure!(exit == koth_sandbox::Exit::Code(0), "the spinner failed: {exit:?}");
        let own: u64 = out.trim().parse().context("the spinner printed no CPU time")?;
        Ok((Duration::from_nanos(own), sb.cpu_usage()? - before))
    };
    let mut startup = Vec::new();
    for _ in 0..10 {
        let (own, cg) = spin(0)?;
        startup.push(cg.saturating_sub(own));
    }
    let startup = stats(startup).p50;
    println!("start-up and exit outside the process's own clock: {:.3} ms (p50 of 10)", startup.as_secs_f64() * 1e3);
    let mut errs = Vec::new();
    for _ in 0..5 {
        let (own, cg) = spin(a.spin_ms)?;
        let err = cg.as_secs_f64() - startup.as_secs_f64() - own.as_secs_f64();
        errs.push(err.abs());
        println!(
            "busy loop: own clock {:9.3} ms, box cgroup {:9.3} ms, cgroup - start-up - own {:+8.3} ms",
            own.as_secs_f64() * 1e3,
            cg.as_secs_f64() * 1e3,
            err * 1e3
        );
    }
    let worst = errs.iter().cloned().fold(0.0, f64::max);
    println!("worst accounting error: {:.3} ms of {} ms ({:.3}%)", worst * 1e3, a.spin_ms, worst * 1e5 / a.spin_ms as f64);
    Ok(0)
}

/// Other sandboxes, where installed: a fresh sandbox running `/bin/true`,
/// sampled alternately with koth's new box (create, spawn, exit, teardown),
/// so both see the same machine.
fn anchors(n: usize) -> anyhow::Result<()> {
    let candidates: [(&str, &[&str]); 4] = [
        ("bwrap", &["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--die-with-parent", "--", "/bin/true"]),
        (
            "nsjail",
            &[
                "-Mo",
                "-q",
                "--chroot",
                "/",
                "--disable_proc",
                "--cgroup_mem_max",
                "268435456",
                "--cgroup_pids_max",
                "64",
                "--",
                "/bin/true",
            ],
        ),
        ("isolate", &["--run", "--", "/bin/true"]),
        // With a memory cgroup, as koth's boxes always have one.
        ("isolate", &["--cg", "--cg-mem=262144", "--processes=64", "--run", "--", "/bin/true"]),
    ];
    println!("\n== other sandboxes, where installed (alternating with koth's new box) ==");
    let mut any = false;
    for (tool, args) in candidates {
        let Some(path) = which(tool) else {
            println!("{tool:<46} not installed");
            continue;
        };
        any = true;
        if let Err(e) = anchor(tool, &path, args, n) {
            println!("{tool:<46} failed: {}", e.to_string().lines().next().unwrap_or_default());
        }
    }
    if !any {
        println!("(install bubblewrap, nsjail or isolate to see them beside koth)");
    }
    Ok(())
}

fn anchor(tool: &str, path: &std::path::Path, args: &[&str], n: usize) -> anyhow::Result<()> {
    let isolate = tool == "isolate";
    let cg: &[&str] = if args.contains(&"--cg") { &["--cg"] } else { &[] };
    if isolate {
        // isolate runs in a box it initialises once (its --init).
        let _ = std::process::Command::new(path).args(cg).arg("--cleanup").output();
        let init = std::process::Command::new(path).args(cg).arg("--init").output()?;
        anyhow::ensure!(init.status.success(), "isolate --init failed: {}", String::from_utf8_lossy(&init.stderr));
    }
    if tool == "nsjail" {
        // nsjail makes its cgroups under a parent of its own ("NSJAIL") on
        // cgroup v1; it does not create that parent.
        for controller in ["memory", "pids"] {
            let dir = std::path::Path::new("/sys/fs/cgroup").join(controller);
            if dir.join("cgroup.procs").exists() {
                std::fs::create_dir_all(dir.join("NSJAIL"))?;
            }
        }
    }
    // koth twice: a box built for the program (and torn down after it), and
    // a box the pool built ahead (torn down after the timing, as isolate's
    // --cleanup is not timed either).
    let pool = BoxPool::new(1, 2, Duration::from_secs(60));
    pool.prepare(config());
    let (mut theirs, mut ours, mut pooled) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = Instant::now();
        let out = std::process::Command::new(path).args(args).output()?;
        theirs.push(t.elapsed());
        anyhow::ensure!(out.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&out.stderr));
        let t = Instant::now();
        let sb = Sandbox::create(config())?;
        sb.spawn(Command::new("/bin/true"))?.wait()?;
        drop(sb);
        ours.push(t.elapsed());
        anyhow::ensure!(pool.wait_ready(1, Duration::from_secs(10)), "the box pool built nothing");
        let t = Instant::now();
        let sb = pool.take(config())?;
        sb.spawn(Command::new("/bin/true"))?.wait()?;
        pooled.push(t.elapsed());
        drop(sb);
    }
    if isolate {
        let _ = std::process::Command::new(path).args(cg).arg("--cleanup").output();
    }
    let (theirs, ours, pooled) = (stats(theirs), stats(ours), stats(pooled));
    let what = match (isolate, cg.is_empty()) {
        (true, true) => "isolate --run in an initialised box",
        (true, false) => "isolate --cg --run (memory cgroup), initialised",
        _ => tool,
    };
    row(what, &theirs, None);
    row("koth new box, create + spawn + exit + teardown", &ours, Some(&theirs));
    row("koth box from the pool, take + spawn + exit", &pooled, Some(&theirs));
    Ok(())
}

/// Two programs in two boxes signalling each other with `flock(2)` on two
/// files of the shared read-only root (the channel docs/sandbox.md documents):
/// a ping-pong, each round trip two signals. Prints signals per second.
const FLOCK_PINGPONG: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
static int held(int fd) { if (flock(fd, LOCK_SH | LOCK_NB) == 0) { flock(fd, LOCK_UN); return 0; } return 1; }
int main(int argc, char **argv) {
    int first = strcmp(argv[1], "a") == 0, n = atoi(argv[2]);
    int mine = open(first ? argv[3] : argv[4], O_RDONLY), theirs = open(first ? argv[4] : argv[3], O_RDONLY);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < n; i++) {
        if (first) {
            flock(mine, LOCK_EX);           /* signal 1 */
            while (!held(theirs)) {}        /* wait for the answer */
            flock(mine, LOCK_UN);           /* signal 2 */
            while (held(theirs)) {}
        } else {
            while (!held(theirs)) {}
            flock(mine, LOCK_EX);
            while (held(theirs)) {}
            flock(mine, LOCK_UN);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.0f\n", 2.0 * n / ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9));
    return 0;
}
"#;

fn flock_channel() -> anyhow::Result<()> {
    println!("\n== flock(2) between two boxes on the shared read-only root (a documented channel) ==");
    let dir = std::path::PathBuf::from(format!("/var/lib/koth-flock-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let cleanup = |d: &std::path::Path| {
        let _ = std::fs::remove_dir_all(d);
    };
    let run = || -> anyhow::Result<String> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        for f in ["a", "b"] {
            std::fs::write(dir.join(f), "lock\n")?;
            std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o644))?;
        }
        std::fs::write(dir.join("pp.c"), FLOCK_PINGPONG)?;
        let st = std::process::Command::new("cc").args(["-O2", "-o"]).arg(dir.join("pp")).arg(dir.join("pp.c")).status()?;
        anyhow::ensure!(st.success(), "compiling the flock ping-pong failed");
        let exe = std::fs::read(dir.join("pp"))?;
        let (a, b) = (dir.join("a").display().to_string(), dir.join("b").display().to_string());
        let boxes = [Sandbox::create(config())?, Sandbox::create(config())?];
        let mut children = Vec::new();
        for (sb, who) in boxes.iter().zip(["a", "b"]) {
            sb.workdir().write_file("pp", &exe, 0o755)?;
            children.push(sb.spawn(Command::new("./pp").args([who, "20000", &a, &b]).stdout(koth_sandbox::Stdio::Pipe))?);
        }
        let mut rate = String::new();
        for c in children.iter_mut() {
            let mut out = String::new();
            std::io::Read::read_to_string(c.stdout.as_mut().expect("piped"), &mut out)?;
            let exit = c.wait_timeout(Some(Duration::from_secs(60)))?;
            anyhow::ensure!(exit == Some(koth_sandbox::Exit::Code(0)), "the flock ping-pong failed: {exit:?}");
            rate = out.trim().to_owned();
        }
        Ok(rate)
    };
    let r = run();
    cleanup(&dir);
    let rate: f64 = r?.parse().unwrap_or(0.0);
    println!("signals per second between two boxes running at once: {rate:.0} (a bit each, polled)");
    Ok(())
}

/// A Slime match of four copies of one bot (a process per turn, the state
/// in argv), played by koth's engine and by a minimal unsandboxed driver
/// that does what the original controller did, `popen("sh -c './bot STATE'")`
/// a turn, with the same referee. Alternating, three of each; medians.
fn slime_against_popen() -> anyhow::Result<()> {
    use koth_games::{GameKind, Reply};
    use koth_runner::engine::{play, MatchOptions};
    println!("\n== a Slime match (a new process per turn): koth against a plain popen loop, same bots and rules ==");
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let sandbox = SandboxConfig {
        limits: Limits { memory: 256 << 20, pids: 64, cpu_time: None, wall_time: None, ..Limits::default() },
        ..Default::default()
    };
    for (what, file) in [("four C bots", "bots/slime/spreader.c"), ("four Python bots", "bots/slime/greedy.py")] {
        let spec = koth_runner::bot::prepare(&repo.join(file), &sandbox).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        let dir = std::env::temp_dir().join(format!("koth-popen-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, bytes, mode) in &spec.files {
            use std::os::unix::fs::PermissionsExt;
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap_or(&dir))?;
            std::fs::write(&p, bytes)?;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode))?;
        }
        let (program, args, env) = spec.with_memory(sandbox.limits.memory);
        let line = std::iter::once(program).chain(args).collect::<Vec<_>>().join(" ");
        let popen_match = || -> anyhow::Result<(u32, Duration)> {
            let mut referee = GameKind::Slime.referee(4, 1).map_err(|e| anyhow::anyhow!(e))?;
            let (mut turns, t) = (0, Instant::now());
            while let Some(step) = referee.step() {
                let Some(req) = step.requests.first() else { continue };
                // The state is digits, dots and commas: quoting is safe.
                let out = std::process::Command::new("/bin/sh")
                    .arg("-c")
                    .arg(format!("{line} '{}'", req.payload))
                    .current_dir(&dir)
                    .envs(env.iter().cloned())
                    .output()?;
                let answer = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_owned();
                referee.apply(vec![(req.seat, Reply::Answer(answer))]);
                turns += 1;
            }
            Ok((turns, t.elapsed()))
        };
        let koth_match = || -> anyhow::Result<(u32, Duration)> {
            let t = Instant::now();
            let r = play(&MatchOptions { sandbox: sandbox.clone(), ..MatchOptions::new(GameKind::Slime, 1) }, vec![spec.clone(); 4])
                .map_err(|e| anyhow::anyhow!(e))?;
            Ok((r.turns, t.elapsed()))
        };
        let (mut popen, mut koth) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let (pt, pd) = popen_match()?;
            let (kt, kd) = koth_match()?;
            anyhow::ensure!(pt == kt, "{what}: the popen loop played {pt} turns, koth {kt}");
            popen.push(pd / pt.max(1));
            koth.push(kd / kt.max(1));
        }
        let _ = std::fs::remove_dir_all(&dir);
        let (popen, koth) = (stats(popen), stats(koth));
        println!(
            "{what:<18} per turn (median of 3 matches): popen loop {}, koth {}  ({:.2}x)",
            ms(popen.p50),
            ms(koth.p50),
            koth.p50.as_secs_f64() / popen.p50.as_secs_f64()
        );
    }
    Ok(())
}

/// Four matches of a runner starting a program per turn at once: four
/// live boxes, a thread each, spawning /bin/true and waiting for it, beside
/// four threads running it bare. Every spawn of a process goes through its
/// one launcher thread, so how long each holds it bounds them all.
fn concurrent_spawns(n: usize) -> anyhow::Result<()> {
    const BOXES: usize = 4;
    let per_thread = (n / 2).max(20);
    let run = |sandboxed: bool| -> anyhow::Result<f64> {
        let boxes: Vec<Option<Sandbox>> =
            (0..BOXES).map(|_| if sandboxed { Sandbox::create(config()).map(Some) } else { Ok(None) }).collect::<Result<_, _>>()?;
        let t = Instant::now();
        std::thread::scope(|scope| -> anyhow::Result<()> {
            let threads: Vec<_> = boxes
                .iter()
                .map(|sb| {
                    scope.spawn(move || -> anyhow::Result<()> {
                        for _ in 0..per_thread {
                            match sb {
                                Some(sb) => {
                                    let e = sb.spawn(Command::new("/bin/true"))?.wait()?;
                                    anyhow::ensure!(e == koth_sandbox::Exit::Code(0), "/bin/true in a box: {e:?}");
                                }
                                None => anyhow::ensure!(std::process::Command::new("/bin/true").status()?.success(), "/bin/true failed"),
                            }
                        }
                        Ok(())
                    })
                })
                .collect();
            for t in threads {
                t.join().map_err(|_| anyhow::anyhow!("a spawning thread panicked"))??;
            }
            Ok(())
        })?;
        Ok((BOXES * per_thread) as f64 / t.elapsed().as_secs_f64())
    };
    let (mut ours, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        ours.push(run(true)?);
        bare.push(run(false)?);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (ours, bare) = (median(&mut ours), median(&mut bare));
    println!(
        "\n{BOXES} live boxes spawning at once, a thread each (median of 3 rounds, alternated): {ours:.0} programs to exit/s, bare fork+exec {bare:.0}/s ({:.2}x)",
        ours / bare
    );
    Ok(())
}

/// The steps of a spawn where its joiner moves into the box's cgroups but
/// memory's, and the program into the memory one (v1; on v2 the program
/// is forked into the box's cgroup, no step).
const JOINING_CGROUPS: [&str; 2] =
    ["joining the box's cgroups (tasks on v1, but memory's; cgroup.procs on v2)", "joining the box's memory cgroup (tasks, v1)"];

/// A program started right after another, and one started after 100 ms in
/// which nothing was started (a per-turn bot after its opponents' think
/// time, `koth sandbox run` on a quiet host), alternated in one live box;
/// beside them, the anchor: a parked process moved into a box's cgroups
/// through `cgroup.procs` after 100 ms without a move, and right after one.
/// Such a move takes the kernel's threadgroup lock for writing, which
/// first waits for an RCU grace period unless another move ended within
/// the last one (the `favordynmods` mount option, chosen when a hierarchy
/// is first mounted, takes the wait away). A spawn pays neither: on v1 its
/// joiner moves as the single thread it is (`tasks`), without that lock;
/// on v2 the program is forked into the cgroup (`clone3`,
/// `CLONE_INTO_CGROUP`), which takes it for reading. The other rows of
/// this bench spawn back to back.
fn after_a_quiet_spell(n: usize) -> anyhow::Result<()> {
    println!("\n== a program started right after another, and after 100 ms without one (alternated, a live box) ==");
    let sb = Sandbox::create(config())?;
    let other = Sandbox::create(config())?;
    println!("cgroup {:?}", sb.cgroup_version());
    let run = |sb: &Sandbox| -> anyhow::Result<(Duration, Duration)> {
        let t = Instant::now();
        let mut child = sb.spawn(Command::new("/bin/true"))?;
        let e = child.wait()?;
        let took = t.elapsed();
        anyhow::ensure!(e == koth_sandbox::Exit::Code(0), "/bin/true in a box: {e:?}");
        let join = child.phases().steps().iter().filter(|(name, _)| JOINING_CGROUPS.contains(name)).map(|(_, d)| *d).sum();
        Ok((took, join))
    };
    // The anchor's process: asleep, moved between the two boxes' cgroups.
    let mut parked = std::process::Command::new("sleep").arg("1000").spawn().context("starting sleep")?;
    let pid = parked.id().to_string();
    let move_into = |sb: &Sandbox| -> anyhow::Result<Duration> {
        let t = Instant::now();
        for dir in sb.cgroup_paths() {
            std::fs::write(dir.join("cgroup.procs"), &pid).with_context(|| format!("moving a process into {}", dir.display()))?;
        }
        Ok(t.elapsed())
    };
    let result = (|| -> anyhow::Result<()> {
        let (mut quick, mut quick_join, mut quiet, mut quiet_join) = (vec![], vec![], vec![], vec![]);
        let (mut moved_quick, mut moved_quiet) = (vec![], vec![]);
        for _ in 0..n.clamp(10, 40) {
            run(&sb)?;
            let (took, join) = run(&sb)?;
            quick.push(took);
            quick_join.push(join);
            std::thread::sleep(Duration::from_millis(100));
            let (took, join) = run(&sb)?;
            quiet.push(took);
            quiet_join.push(join);
            std::thread::sleep(Duration::from_millis(100));
            moved_quiet.push(move_into(&other)?);
            moved_quick.push(move_into(&sb)?);
        }
        let (quick, quiet) = (stats(quick), stats(quiet));
        // On v2 a program is forked into its cgroup and never moved.
        let moved = sb.cgroup_version() == koth_sandbox::cgroup::Version::V1;
        row("spawn + exit, right after another", &quick, None);
        if moved {
            row("  of which moving into the box's cgroups", &stats(quick_join), None);
        }
        row("spawn + exit, after 100 ms without one", &quiet, Some(&quick));
        if moved {
            row("  of which moving into the box's cgroups", &stats(quiet_join), None);
        } else {
            println!("  (cgroup v2: the program is forked into the box's cgroup, clone3 with CLONE_INTO_CGROUP; nothing is moved)");
        }
        let moved_quick = stats(moved_quick);
        println!("anchor: a sleeping process moved into a box's cgroups (cgroup.procs)");
        row("  right after another move", &moved_quick, None);
        row("  after 100 ms without a move or spawn", &stats(moved_quiet), Some(&moved_quick));
        Ok(())
    })();
    let _ = parked.kill();
    let _ = parked.wait();
    result
}

fn which(tool: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| std::path::Path::new(d).join(tool)).find(|p| p.is_file())
}

/// Burn `cpu_ms` of CPU time, then print the CPU time this process used (ns).
pub fn spin(cpu_ms: u64) -> i32 {
    let now = || {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    let target = cpu_ms * 1_000_000;
    let mut x = 0u64;
    while now() < target {
        for i in 0..1000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
    }
    println!("{}", now());
    0
}
