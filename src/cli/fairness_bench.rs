//! `koth bench fairness`: whether a bot that keeps within its limit is
//! charged timeouts when the machine is busy, from one run.
//!
//! Invisible target (simultaneous moves, 50 ms a move). The *victim* burns
//! 35 ms of its own CPU a move (70% of its limit, measured by its thread's
//! CPU clock, so the machine's business does not shorten it) and answers.
//! It plays a *still* bot (answers at once), a *threaded* one (16 threads
//! spinning 35 ms of wall time a move, as long as the victim thinks, then
//! it answers: its CPU a move beside the victim's is what its threads
//! bought it) and an *after* one (answers at once, then 8 threads spin for
//! 15 ms), while N processes outside every box spin on the host. The clock
//! (`runner/src/engine/clock.rs`) should leave the victim's wait for a CPU
//! uncharged, and call a move the machine's fault (`HostOverloaded`, no
//! result) when that wait passes its bound: never a charged timeout.

use std::process::{Child, Command as HostCommand, Stdio};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use koth_games::replay::{EndedBy, MoveTime};
use koth_games::GameKind;
use koth_runner::bot::BotSpec;
use koth_runner::engine::{play, MatchOptions};
use koth_sandbox::{BoxPool, Limits, SandboxConfig};

#[derive(Args)]
pub struct FairnessBenchArgs {
    /// The victim's moves measured per configuration (the first move of
    /// each match, the bots' start-up, is left out).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    moves: u32,
    /// How many spinning processes outside the boxes, one configuration
    /// each (default: 0, the cores, twice and four times the cores).
    #[arg(long, value_delimiter = ',')]
    spinners: Option<Vec<u32>>,
}

/// The victim's CPU a move, ms (its limit is 50 ms).
const VICTIM_CPU_MS: f64 = 35.0;
/// Matches played at most per configuration, to reach `--moves` when
/// matches end early (the machine's fault).
const MAX_MATCHES: u32 = 10;

/// Burns `VICTIM_CPU_MS` of its own thread's CPU for each request, then
/// answers "2" (stay).
fn victim_src() -> String {
    format!(
        r#"
#include <stdio.h>
#include <time.h>
static double cpu_ms(void) {{ struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }}
int main(void) {{
    char line[4096];
    volatile unsigned long n = 0;
    while (fgets(line, sizeof line, stdin)) {{
        double end = cpu_ms() + {VICTIM_CPU_MS:.1};
        while (cpu_ms() < end) for (int i = 0; i < 1000; i++) n++;
        fputs("2\n", stdout);
        fflush(stdout);
    }}
    return 0;
}}
"#
    )
}

/// Answers "2" at once.
const STILL_BOT: &str = r#"
#include <stdio.h>
int main(void) {
    char line[4096];
    while (fgets(line, sizeof line, stdin)) { fputs("2\n", stdout); fflush(stdout); }
    return 0;
}
"#;

/// `spinning before N MS`: for each request, N threads spin for MS ms of
/// wall time, then it answers "2" (it thinks on N threads, on its own
/// clock). `spinning after N MS`: it answers "2" at once, then N threads
/// spin for MS ms (CPU it would take on the victim's clock if it were not
/// paused the moment its answer is seen).
const SPINNING_BOT: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static volatile double end;
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static void *spin(void *arg) {
    volatile unsigned long n = 0;
    for (;;) {
        if (now_ms() < end) for (int i = 0; i < 1000; i++) n++;
        else usleep(200);
    }
    return arg;
}
int main(int argc, char **argv) {
    int before = argc > 1 && !strcmp(argv[1], "before");
    int threads = argc > 2 ? atoi(argv[2]) : 8;
    double ms = argc > 3 ? atof(argv[3]) : 15;
    char line[4096];
    pthread_t t;
    for (int i = 0; i < threads; i++) pthread_create(&t, NULL, spin, NULL);
    while (fgets(line, sizeof line, stdin)) {
        end = now_ms() + ms;
        if (before) while (now_ms() < end) usleep(500);
        fputs("2\n", stdout);
        fflush(stdout);
    }
    return 0;
}
"#;

fn sandbox() -> SandboxConfig {
    SandboxConfig { limits: Limits { memory: 256 << 20, cpu_time: None, wall_time: None, ..Limits::default() }, ..SandboxConfig::default() }
}

fn bot(dir: &std::path::Path, name: &str, src: &str, args: &[&str]) -> anyhow::Result<BotSpec> {
    let p = dir.join(format!("{name}.c"));
    std::fs::write(&p, src).with_context(|| format!("writing {}", p.display()))?;
    let mut b = koth_runner::bot::prepare(&p, &sandbox()).map_err(|e| anyhow::anyhow!("compiling {name}: {e}"))?;
    b.name = name.into();
    b.args.extend(args.iter().map(|a| a.to_string()));
    Ok(b)
}

/// Processes spinning on the host, outside every box, until dropped (or
/// this process dies).
pub(super) struct Spinners(Vec<Child>);

impl Spinners {
    pub(super) fn start(n: u32) -> anyhow::Result<Spinners> {
        let mut s = Spinners(Vec::new());
        for _ in 0..n {
            let mut command = HostCommand::new("sh");
            command.args(["-c", "while :; do :; done"]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
            // Gone with this process, however it ends (killed, it runs no
            // destructor).
            // SAFETY: prctl with integer arguments only, async-signal-safe.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                })
            };
            let child = command.spawn().context("starting a spinner (sh)")?;
            s.0.push(child);
        }
        // Let them get going before the first match.
        std::thread::sleep(Duration::from_millis(200));
        Ok(s)
    }

    /// The cpu cgroup the first spinner runs in, as /proc says.
    fn cgroup(&self) -> Option<String> {
        let c = self.0.first()?;
        let text = std::fs::read_to_string(format!("/proc/{}/cgroup", c.id())).ok()?;
        let line = text.lines().find(|l| l.split(':').nth(1).is_some_and(|k| k.split(',').any(|k| k == "cpu")));
        let line = line.or_else(|| text.lines().find(|l| l.starts_with("0::")))?;
        line.rsplit(':').next().map(str::to_owned)
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
        }
        for c in &mut self.0 {
            let _ = c.wait();
        }
    }
}

fn percentile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

/// What one configuration's matches gave.
#[derive(Default)]
struct Tally {
    /// The victim's moves (seat 0), and its opponent's, first turns left out.
    victim: Vec<MoveTime>,
    opponent: Vec<MoveTime>,
    matches: u32,
    overloaded: u32,
    /// Whose move the machine failed and how, per overloaded match.
    overloaded_by: Vec<String>,
    wall_capped: u32,
    /// The victim's first moves (its start-up, the boxes' replacements
    /// being built beside it), and of those charged.
    first_moves: u32,
    first_charged: u32,
}

fn configuration(victim: &BotSpec, opponent: &BotSpec, moves: u32, seed: u64, boxes: &BoxPool) -> anyhow::Result<Tally> {
    let mut t = Tally::default();
    while (t.victim.len() as u32) < moves && t.matches < MAX_MATCHES {
        let left = moves - t.victim.len() as u32;
        let opts = MatchOptions {
            // One more turn: the first (start-up) is left out.
            max_turns: Some(left + 1),
            // Bounded whatever the machine does: 200 ms a turn and the start-up.
            wall_cap: Some(Duration::from_millis(200) * (left + 1) + Duration::from_secs(10)),
            sandbox: sandbox(),
            boxes: Some(boxes.clone()),
            ..MatchOptions::new(GameKind::Target, seed + u64::from(t.matches))
        };
        let report = play(&opts, vec![victim.clone(), opponent.clone()]).map_err(|e| anyhow::anyhow!(e))?;
        t.matches += 1;
        let replay = report.replay.read().map_err(|e| anyhow::anyhow!(e))?;
        for m in replay.turns.iter().filter(|t| t.turn == 1).flat_map(|t| &t.times).filter(|m| m.seat == 0) {
            t.first_moves += 1;
            t.first_charged += u32::from(m.over_limit);
        }
        for turn in replay.turns.iter().filter(|t| t.turn > 1) {
            for m in &turn.times {
                match m.seat {
                    0 => t.victim.push(m.clone()),
                    _ => t.opponent.push(m.clone()),
                }
            }
        }
        match &report.ended_by {
            EndedBy::HostOverloaded { reason, .. } => {
                t.overloaded += 1;
                // "on turn T, NAME: WHY" (engine::judge_turn, clock::Overload).
                let who = reason.split_once(", ").and_then(|(_, r)| r.split_once(':')).map_or("?", |(n, _)| n);
                let how = if reason.contains("stopped or starved") { "engine stalled" } else { "waited for a CPU" };
                t.overloaded_by.push(format!("{who} ({how})"));
            }
            EndedBy::WallClockCap { .. } => t.wall_capped += 1,
            _ => {}
        }
    }
    Ok(t)
}

pub fn run(a: FairnessBenchArgs) -> anyhow::Result<i32> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let spinners = a.spinners.clone().unwrap_or_else(|| vec![0, cores, 2 * cores, 4 * cores]);
    let dir = std::env::temp_dir().join(format!("koth-fairness-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let victim = bot(&dir, "victim", &victim_src(), &[])?;
    let opponents = [
        bot(&dir, "still", STILL_BOT, &[])?,
        bot(&dir, "threaded", SPINNING_BOT, &["before", "16", "35"])?,
        bot(&dir, "after", SPINNING_BOT, &["after", "8", "15"])?,
    ];
    let _ = std::fs::remove_dir_all(&dir);

    println!(
        "koth bench fairness: Invisible target, 50 ms a move; the victim burns {VICTIM_CPU_MS:.0} ms of its own CPU a move ({:.0}% of its limit)",
        VICTIM_CPU_MS / 50.0 * 100.0
    );
    println!(
        "against a still bot, one spinning 16 threads for 35 ms a move, and one spinning 8 threads for 15 ms after each answer,\n\
         with N processes spinning outside the boxes ({cores} cores);"
    );
    let (probe, _) = koth_sandbox::PromptWakeups::enter();
    let how = probe.how();
    drop(probe);
    println!(
        "{} victim moves per configuration (up to {MAX_MATCHES} matches; each match's first move, the start-up, left out); engine thread: {how:?}; times in ms",
        a.moves
    );
    // Whatever else runs on the machine is part of every row.
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("host load average at the start (1, 5, 15 min): {}\n", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    }
    let h = [
        "opponent",
        "N",
        "moves",
        "to/1k",
        "ovl",
        "unch p50",
        "unch p99",
        "wall p50",
        "wall p90",
        "cpu p50",
        "v cpu/t",
        "o cpu/t",
        "v share",
        "o after p99",
        "goal",
    ];
    println!(
        "{:<9} {:>3} {:>6} {:>7} {:>5}  {:>8} {:>8}  {:>8} {:>8} {:>7}  {:>8} {:>8} {:>6}  {:>11}  {}",
        h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11], h[12], h[13], h[14]
    );
    let mut verdicts = Vec::new();
    let mut notes = Vec::new();
    // The bots' boxes come from a pool as a runner's do: each match's
    // replacements are built during its first moves.
    let boxes = BoxPool::new(koth_scheduler::worker::POOLED_PER_CONFIG, 8, Duration::from_secs(300));
    let (mut first_moves, mut first_charged, mut matches) = (0, 0, 0u64);
    for (i, &n) in spinners.iter().enumerate() {
        let load = Spinners::start(n)?;
        if let Some(cg) = load.cgroup() {
            notes.push(format!("N={n}: the spinners ran in cpu cgroup {cg}"));
        }
        for (j, opponent) in opponents.iter().enumerate() {
            let t = configuration(&victim, opponent, a.moves, 1000 * (i as u64 + 1) + 100 * j as u64, &boxes)?;
            first_moves += t.first_moves;
            first_charged += t.first_charged;
            matches += u64::from(t.matches);
            let moves = t.victim.len();
            let charged = t.victim.iter().filter(|m| m.over_limit).count();
            let per_k = if moves == 0 { f64::NAN } else { charged as f64 * 1000.0 / moves as f64 };
            let unch: Vec<f64> = t.victim.iter().map(|m| m.uncharged_ms.unwrap_or(0.0)).collect();
            let wall: Vec<f64> = t.victim.iter().map(|m| m.wall_ms).collect();
            let cpu: Vec<f64> = t.victim.iter().map(|m| m.cpu_ms).collect();
            let (v_sum, o_sum): (f64, f64) = (cpu.iter().sum(), t.opponent.iter().map(|m| m.cpu_ms).sum());
            let per_turn = |s: f64, k: usize| if k == 0 { f64::NAN } else { s / k as f64 };
            let share = if v_sum + o_sum > 0.0 { v_sum / (v_sum + o_sum) * 100.0 } else { f64::NAN };
            // The CPU the opponent's box used between its answer being
            // seen and the box being paused, ms.
            let after: Vec<f64> = t.opponent.iter().filter_map(|m| m.cpu_after_answer_us).map(|us| us / 1e3).collect();
            let pass = moves > 0 && charged == 0;
            let goal = if moves == 0 {
                "n/a"
            } else if pass {
                "PASS"
            } else {
                "FAIL"
            };
            println!(
                "{:<9} {:>3} {:>6} {:>7.1} {:>5}  {:>8.1} {:>8.1}  {:>8.1} {:>8.1} {:>7.1}  {:>8.1} {:>8.1} {:>5.1}%  {:>11.3}  {goal}",
                opponent.name,
                n,
                moves,
                per_k,
                t.overloaded,
                percentile(&unch, 0.5),
                percentile(&unch, 0.99),
                percentile(&wall, 0.5),
                percentile(&wall, 0.9),
                percentile(&cpu, 0.5),
                per_turn(v_sum, moves),
                per_turn(o_sum, t.opponent.len()),
                share,
                percentile(&after, 0.99),
            );
            if t.overloaded > 0 {
                notes.push(format!(
                    "{} N={n}: {} of {} matches ended HostOverloaded (the machine failed a move of: {})",
                    opponent.name,
                    t.overloaded,
                    t.matches,
                    t.overloaded_by.join(", ")
                ));
            }
            if charged > 0 {
                let over: Vec<&MoveTime> = t.victim.iter().filter(|m| m.over_limit).collect();
                let range = |f: &dyn Fn(&MoveTime) -> f64| {
                    let v: Vec<f64> = over.iter().map(|m| f(m)).collect();
                    format!("{:.1}-{:.1}", percentile(&v, 0.0), percentile(&v, 1.0))
                };
                notes.push(format!(
                    "{} N={n}: the victim's {charged} charged timeouts: wall {} ms, CPU {} ms, uncharged {} ms",
                    opponent.name,
                    range(&|m| m.wall_ms),
                    range(&|m| m.cpu_ms),
                    range(&|m| m.uncharged_ms.unwrap_or(0.0))
                ));
            }
            if t.wall_capped > 0 {
                notes.push(format!("{} N={n}: {} matches stopped at their wall-clock cap", opponent.name, t.wall_capped));
            }
            verdicts.push((opponent.name.clone(), n, goal, charged, moves));
        }
        drop(load);
    }
    println!();
    println!("columns: moves = the victim's moves measured; to/1k = its charged timeouts (over_limit) per 1,000 moves;");
    println!("ovl = matches ended HostOverloaded; unch = its uncharged wait for a CPU (0 when absent); wall, cpu = its move's;");
    println!("v/o cpu/t = victim's and opponent's CPU per move; v share = victim's CPU / both bots' CPU over the turns;");
    println!("o after p99 = the CPU the opponent got between its answer being seen and its box being paused (goal < 1 ms)");
    for n in &notes {
        println!("note: {n}");
    }
    let pool = boxes.stats();
    println!(
        "first moves (start-up, left out above; the boxes from a pool as a runner's, {} of {} taken ready, replacements built meanwhile): {first_charged} of the victim's {first_moves} charged",
        pool.handed_out,
        2 * matches
    );
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("host load average at the end (1, 5, 15 min): {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    }
    println!();
    println!("goal: 0 charged timeouts for a bot using <= 80% of its limit in CPU, at every N");
    for (name, n, goal, charged, moves) in &verdicts {
        println!("  {name:<9} N={n:<3} {goal}  ({charged} charged timeouts in {moves} moves)");
    }
    Ok(0)
}
