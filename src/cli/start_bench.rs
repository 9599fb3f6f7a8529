//! `koth bench start`: what koth's own start costs a command, against the
//! smallest program there is (`/bin/true`), measured in the same run: each
//! command spawned from here and waited for, the commands alternated (a
//! round runs each once, in an order rotated from round to round), medians
//! and 90th percentiles of the wall time from spawn to exit, and the
//! child's CPU time.
//!
//! - `/bin/true`: the anchor (exec of a small program, the dynamic
//!   loader, exit);
//! - `koth --version`: koth's start alone (the loader, the allocator, the
//!   command line's parser), nothing run;
//! - `koth sandbox run -- /bin/true`: a whole box from the command line;
//! - `bwrap ... /bin/true` (bubblewrap: namespaces, no cgroups, no
//!   seccomp) when it is installed, the box's usual comparison;
//! - with `--against OTHER`, the same two koth commands of another koth
//!   binary (an earlier build), in the same rounds: a change's before and
//!   after, alternated in one run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

#[derive(Args)]
pub struct StartBenchArgs {
    /// Rounds: each command run once per round, alternated.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    rounds: u32,
    /// Leave out `koth sandbox run` (it needs a host that can build boxes).
    #[arg(long)]
    no_sandbox: bool,
    /// Another koth binary (an earlier build) whose commands are measured
    /// in the same rounds, alternated with this one's; may be repeated.
    #[arg(long, value_name = "KOTH")]
    against: Vec<std::path::PathBuf>,
}

/// One command measured.
struct Measured {
    name: String,
    argv: Vec<String>,
    wall: Vec<f64>,
    cpu: Vec<f64>,
}

/// The wall time from spawn to exit and the child's CPU time (user +
/// system), in ms; an error when it could not run or did not succeed.
fn run_once(argv: &[String]) -> anyhow::Result<(f64, f64)> {
    let started = Instant::now();
    let child = Command::new(&argv[0]).args(&argv[1..]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn()?;
    let pid = child.id() as libc::pid_t;
    // wait4, not Child::wait: it gives the child's own rusage.
    let mut status = 0;
    // SAFETY: the zeroed rusage is filled by wait4 for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = loop {
        // SAFETY: waits for the child spawned above, which nothing else waits for.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break r;
    };
    let wall = started.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(waited == pid, "waiting for {}: {}", argv[0], std::io::Error::last_os_error());
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        let mut err = String::new();
        if let Some(mut e) = child.stderr {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        anyhow::bail!("`{}` did not succeed (wait status {status}): {}", argv.join(" "), err.trim());
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Ok((wall, (tv(usage.ru_utime) + tv(usage.ru_stime)).as_secs_f64() * 1e3))
}

/// A program on `PATH`.
fn on_path(name: &str) -> Option<String> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file()).map(|p| p.display().to_string())
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

pub fn run(a: StartBenchArgs) -> anyhow::Result<i32> {
    let me = std::env::current_exe()?.display().to_string();
    let truth = if std::path::Path::new("/bin/true").is_file() { "/bin/true".to_owned() } else { on_path("true").unwrap_or("true".into()) };
    let mut commands = vec![("/bin/true".to_owned(), vec![truth.clone()])];
    let mut binaries = vec![("koth".to_owned(), me.clone())];
    for other in &a.against {
        anyhow::ensure!(other.is_file(), "--against {}: no such file (give the path of another koth binary)", other.display());
        binaries.push((other.display().to_string(), std::fs::canonicalize(other)?.display().to_string()));
    }
    for (name, path) in &binaries {
        commands.push((format!("{name} --version"), vec![path.clone(), "--version".into()]));
        if !a.no_sandbox {
            commands.push((
                format!("{name} sandbox run -- /bin/true"),
                vec![path.clone(), "sandbox".into(), "run".into(), "--".into(), truth.clone()],
            ));
        }
    }
    let mut absent = Vec::new();
    match on_path("bwrap") {
        // A box as bubblewrap makes one: every namespace it can unshare,
        // the host's root read-only, a fresh /proc and /dev.
        Some(bwrap) => commands.push((
            "bwrap --unshare-all ... /bin/true".into(),
            [bwrap.as_str(), "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", &truth]
                .map(String::from)
                .to_vec(),
        )),
        None => absent.push("bwrap"),
    }
    let mut measured: Vec<Measured> = Vec::new();
    for (name, argv) in commands {
        // Once first, outside the figures: a command that cannot run here
        // is named and left out (bubblewrap without user namespaces, a
        // host that cannot build boxes), and the page cache is warm.
        match run_once(&argv) {
            Ok(_) => measured.push(Measured { name, argv, wall: Vec::new(), cpu: Vec::new() }),
            Err(e) if name.starts_with("/bin/true") || name.ends_with(" --version") => return Err(e),
            Err(e) => eprintln!("left out: {e}"),
        }
    }
    for round in 0..a.rounds as usize {
        let n = measured.len();
        for i in 0..n {
            let m = &mut measured[(i + round) % n];
            let (wall, cpu) = run_once(&m.argv)?;
            m.wall.push(wall);
            m.cpu.push(cpu);
        }
    }
    let anchor = quantile(&measured[0].wall, 0.5);
    let anchor_cpu = quantile(&measured[0].cpu, 0.5);
    println!("koth bench start: {} rounds, each command once a round, alternated; ms from spawn to exit", a.rounds);
    let width = measured.iter().map(|m| m.name.len()).max().unwrap_or(0).max(34);
    println!("{:<width$} {:>8} {:>8} {:>7} {:>8} {:>7}", "command", "p50 ms", "p90 ms", "ratio", "cpu ms", "ratio");
    for m in &measured {
        let (p50, cpu) = (quantile(&m.wall, 0.5), quantile(&m.cpu, 0.5));
        println!(
            "{:<width$} {:>8.2} {:>8.2} {:>6.2}x {:>8.2} {:>6.2}x",
            m.name,
            p50,
            quantile(&m.wall, 0.9),
            p50 / anchor,
            cpu,
            if anchor_cpu > 0.0 { cpu / anchor_cpu } else { f64::NAN }
        );
    }
    println!("ratio: the command's median over /bin/true's, from the same run; cpu ms: the child's user + system time, median");
    println!("koth: {me}");
    if !absent.is_empty() {
        println!("not installed, not measured: {}", absent.join(", "));
    }
    Ok(0)
}
