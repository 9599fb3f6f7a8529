//! `koth bench match`: what a move costs, beside the physical limit, from
//! one run.

use std::process::Command as HostCommand;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use koth_games::GameKind;
use koth_runner::engine::{play, MatchOptions, MatchReport};
use koth_sandbox::{Limits, SandboxConfig};

#[derive(Args)]
pub struct BenchArgs {
    /// Moves measured per configuration.
    #[arg(long, default_value_t = 2000)]
    moves: u32,
    /// Only the last measure: an external referee against the built-in one.
    #[arg(long)]
    referee_only: bool,
    /// Only a match's start: short matches whose boxes are built on the
    /// spot, or taken from a pool keeping one or two ready per config.
    #[arg(long, conflicts_with = "referee_only")]
    start_only: bool,
    /// Processes spinning on the host while the external referee and a
    /// match's start are measured (the issue's load: twice the cores); 0
    /// for a quiet machine.
    #[arg(long, default_value_t = 0)]
    spinners: u32,
}

/// Raw pipe round trip: the parent writes a line, the child echoes it.
/// argv[2] = "cross" pins the two processes to different CPUs.
const PINGPONG: &str = r#"
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int n = atoi(argv[1]), a[2], b[2];
    int cross = argc > 2 && strcmp(argv[2], "cross") == 0;
    cpu_set_t set;
    pipe(a); pipe(b);
    if (fork() == 0) {
        char c[64];
        if (cross) { CPU_ZERO(&set); CPU_SET(1, &set); sched_setaffinity(0, sizeof set, &set); }
        close(a[1]); close(b[0]);
        for (;;) { ssize_t k = read(a[0], c, sizeof c); if (k <= 0) _exit(0); write(b[1], c, k); }
    }
    if (cross) { CPU_ZERO(&set); CPU_SET(0, &set); sched_setaffinity(0, sizeof set, &set); }
    close(a[0]); close(b[1]);
    char c[64];
    for (int i = 0; i < n; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        write(a[1], "2\n", 2);
        read(b[0], c, sizeof c);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("%.3f\n", (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
    }
    close(a[1]);
    return 0;
}
"#;

/// A trivial Target bot: answers "2" at once, and reports on stderr how long
/// it held each request by its own clock (for the timing-error check).
const ECHO_BOT: &str = r#"
#include <stdio.h>
#include <time.h>
int main(void) {
    char line[4096];
    setvbuf(stderr, NULL, _IOLBF, 0);
    for (;;) {
        if (!fgets(line, sizeof line, stdin)) return 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        fputs("2\n", stdout);
        fflush(stdout);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        fprintf(stderr, "%.3f\n", (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
    }
}
"#;

/// A Target bot with eight threads that spin for 10 ms after each of its
/// answers (the window opens just before the answer goes out), measuring
/// with its own process clock the CPU it got in that window, reported on
/// stderr when it next runs: what a bot can burn after answering, exactly
/// (the cgroup's counters lag a running task by up to a scheduler tick).
const SPINNER_BOT: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile double window_end, mark;
static volatile int report;
static double ms(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static void maybe_report(void) {
    if (report && ms(CLOCK_MONOTONIC) >= window_end && __sync_bool_compare_and_swap(&report, 1, 0))
        fprintf(stderr, "%.1f\n", (ms(CLOCK_PROCESS_CPUTIME_ID) - mark) * 1e3);
}
static void *spin(void *arg) {
    volatile unsigned long n = 0;
    for (;;) { if (ms(CLOCK_MONOTONIC) < window_end) { for (int i = 0; i < 10000; i++) n++; } else { maybe_report(); usleep(200); } }
    return arg;
}
int main(void) {
    char line[4096];
    pthread_t t;
    setvbuf(stderr, NULL, _IONBF, 0);
    for (int i = 0; i < 8; i++) pthread_create(&t, NULL, spin, NULL);
    for (;;) {
        if (!fgets(line, sizeof line, stdin)) return 0;
        maybe_report();
        /* The window first, the flag last: a reporter never sees the flag
         * with an old window. */
        mark = ms(CLOCK_PROCESS_CPUTIME_ID);
        window_end = ms(CLOCK_MONOTONIC) + 10;
        report = 1;
        fputs("2\n", stdout);
        fflush(stdout);
    }
}
"#;

/// A Target bot that takes 15 ms (asleep) to answer each move.
const SLOW_BOT: &str = r#"
#include <stdio.h>
#include <unistd.h>
int main(void) {
    char line[4096];
    while (fgets(line, sizeof line, stdin)) { usleep(15000); puts("2"); fflush(stdout); }
    return 0;
}
"#;

fn percentile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

fn row(name: &str, v: &[f64], base: Option<(f64, f64)>) -> (f64, f64) {
    let (p50, p99) = (percentile(v.to_vec(), 0.5), percentile(v.to_vec(), 0.99));
    let ratio = base.map_or(String::new(), |(b50, b99)| format!("  ({:.2}x p50, {:.2}x p99)", p50 / b50, p99 / b99));
    println!("{name:<52} p50 {p50:9.1} us  p99 {p99:9.1} us{ratio}");
    (p50, p99)
}

fn sandbox() -> SandboxConfig {
    SandboxConfig { limits: Limits { memory: 256 << 20, cpu_time: None, wall_time: None, ..Limits::default() }, ..SandboxConfig::default() }
}

fn write_src(dir: &std::path::Path, name: &str, src: &str) -> anyhow::Result<std::path::PathBuf> {
    let p = dir.join(name);
    std::fs::write(&p, src).with_context(|| format!("writing {}", p.display()))?;
    Ok(p)
}

/// A bench match's replay, kept in memory as JSON by the engine (the
/// default [`koth_runner::engine::ReplayTo`]), typed.
fn kept(report: &MatchReport) -> koth_games::replay::Replay {
    report.replay.read().expect("the engine's JSON of a replay kept in memory reads back")
}

/// Per-move wall times (µs), the first move (the bot's start-up) left out.
fn move_us(report: &MatchReport) -> Vec<f64> {
    kept(report).turns.iter().skip(1).flat_map(|t| t.times.iter().map(|m| m.wall_ms * 1e3)).collect()
}

/// The engine's own time per turn (µs), the first turn left out.
fn turn_us(report: &MatchReport) -> Vec<f64> {
    kept(report).turns.iter().skip(1).map(|t| t.engine_us).collect()
}

/// The figures (µs) a bot printed on stderr, one a line; the first left out
/// (its start-up).
fn own_reports(stderr: &str) -> Vec<f64> {
    stderr.lines().filter_map(|l| l.trim().parse().ok()).skip(1).collect()
}

/// CPU (µs) one seat's box used between its answer and its freeze.
fn after_answer_us(report: &MatchReport, seat: usize) -> Vec<f64> {
    kept(report)
        .turns
        .iter()
        .skip(1)
        .flat_map(|t| t.times.iter().filter(|m| m.seat == seat).filter_map(|m| m.cpu_after_answer_us))
        .collect()
}

pub fn run(a: BenchArgs) -> anyhow::Result<i32> {
    let dir = std::env::temp_dir().join(format!("koth-match-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let n = a.moves.max(100);
    println!("koth bench match: {n} moves per configuration; the first move (start-up) is left out\n");
    let pp = write_src(&dir, "pingpong.c", PINGPONG)?;
    let exe = dir.join("pingpong");
    let st = HostCommand::new("cc").args(["-O2", "-o"]).arg(&exe).arg(&pp).status().context("running cc")?;
    anyhow::ensure!(st.success(), "compiling the ping-pong baseline failed");
    if a.referee_only {
        external_referee(n, &exe, a.spinners)?;
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(0);
    }
    if a.start_only {
        match_start(&dir, n / 20, a.spinners)?;
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(0);
    }
    let raw = |mode: &str| -> anyhow::Result<Vec<f64>> { pipe_round_trips(&exe, n, mode) };
    row("raw pipe round trip, two C processes (scheduler's choice)", &raw("any")?, None);
    let base = row("raw pipe round trip, two C processes on two CPUs", &raw("cross")?, None);
    println!("(ratios below are against the two-CPU round trip: the engine and a bot run side by side)");

    let bot_src = write_src(&dir, "echo.c", ECHO_BOT)?;
    let bot = koth_runner::bot::prepare(&bot_src, &sandbox()).map_err(|e| anyhow::anyhow!(e))?;
    let mut reports = Vec::new();
    for freeze in [false, true] {
        let opts =
            MatchOptions { max_turns: Some(n + 1), freeze_off_turn: freeze, sandbox: sandbox(), ..MatchOptions::new(GameKind::Target, 1) };
        // One seat plus a second one that is never slow: Target needs two.
        let report = play(&opts, vec![bot.clone(), bot.clone()]).map_err(|e| anyhow::anyhow!(e))?;
        reports.push(report);
    }
    println!();
    row("koth move (request sent -> answer read), no freezing", &move_us(&reports[0]), Some(base));
    row("koth move (request sent -> answer read), freezing", &move_us(&reports[1]), Some(base));
    let turn_nofreeze = turn_us(&reports[0]);
    let turn_freeze = turn_us(&reports[1]);
    let tn = row("koth turn of 2 bots (engine time), no freezing", &turn_nofreeze, None);
    let tf = row("koth turn of 2 bots (engine time), thaw + freeze each", &turn_freeze, None);
    // A difference of medians; tails of two separate runs do not subtract.
    println!(
        "freezing adds per bot per move (difference of the medians): {:.1} us (compare: koth sandbox bench, raw freezer by hand)",
        (tf.0 - tn.0) / 2.0
    );

    // Timing error: koth's measured time minus the bot's own view of how long
    // it held the request (reading to answering) is the transport's share.
    let own: Vec<f64> = reports[1].outcomes[0].stderr.lines().filter_map(|l| l.trim().parse().ok()).skip(1).collect();
    let measured: Vec<f64> =
        kept(&reports[1]).turns.iter().skip(1).filter_map(|t| t.times.iter().find(|m| m.seat == 0)).map(|m| m.wall_ms * 1e3).collect();
    let errs: Vec<f64> = measured.iter().zip(&own).map(|(m, o)| m - o).collect();
    if !errs.is_empty() {
        println!();
        row("timing error: koth's move time - the bot's own", &errs, None);
    }

    // A simultaneous game of 4 bots: the turn's cost grows with the bots.
    println!();
    let opts = MatchOptions { max_turns: Some(n / 2 + 1), sandbox: sandbox(), ..MatchOptions::new(GameKind::Target, 2) };
    let four = play(&opts, vec![bot.clone(); 4]).map_err(|e| anyhow::anyhow!(e))?;
    row("koth turn of 4 bots at once (Target, engine time)", &turn_us(&four), Some(tf));
    println!("(ratio against the turn of 2 bots with freezing)");

    // A bot that answers and keeps spinning threads: what it can still burn
    // between its answer being seen and its box being frozen.
    println!();
    let spin_src = write_src(&dir, "spinner.c", SPINNER_BOT)?;
    let mut spinner = koth_runner::bot::prepare(&spin_src, &sandbox()).map_err(|e| anyhow::anyhow!(e))?;
    spinner.name = "spinner".into();
    // Its opponent takes 15 ms a move, so each 10 ms window closes while
    // the spinner is frozen (or, were it not, while it steals).
    let slow_src = write_src(&dir, "slow.c", SLOW_BOT)?;
    let slow = koth_runner::bot::prepare(&slow_src, &sandbox()).map_err(|e| anyhow::anyhow!(e))?;
    // As koth plays (the engine's thread prompt: PromptWakeups) and
    // without, alternated over rounds on the same machine; the second is
    // the baseline, what a bot keeps after answering when the engine must
    // wait for spinning threads to use up their slices.
    let rounds = 4;
    let turns = (n / 4 / rounds).max(25);
    let (probe, _) = koth_sandbox::PromptWakeups::enter();
    let how = probe.how();
    drop(probe);
    println!(
        "a bot spinning 8 threads after each answer, against one that takes 15 ms a move; {rounds} rounds of {turns} turns each way, alternated (engine thread: {how:?}):"
    );
    let mut own = [Vec::new(), Vec::new()];
    let mut cgroup = [Vec::new(), Vec::new()];
    let mut sleeping = Vec::new();
    for round in 0..rounds {
        for (i, prompt) in [true, false].into_iter().enumerate() {
            let opts = MatchOptions {
                max_turns: Some(turns + 1),
                prompt_wakeups: prompt,
                sandbox: sandbox(),
                ..MatchOptions::new(GameKind::Target, 3 + round as u64)
            };
            let spun = play(&opts, vec![spinner.clone(), slow.clone()]).map_err(|e| anyhow::anyhow!(e))?;
            own[i].extend(own_reports(&spun.outcomes[0].stderr));
            cgroup[i].extend(after_answer_us(&spun, 0));
            if prompt {
                sleeping.extend(after_answer_us(&spun, 1));
            }
        }
    }
    let base = row("CPU it burns after answering (own clock), engine not prompt", &own[1], None);
    row("the same, engine prompt (as koth plays)", &own[0], Some(base));
    let base = row("the same by its box's cgroup, engine not prompt", &cgroup[1], None);
    row("the same by its box's cgroup, engine prompt (as koth plays)", &cgroup[0], Some(base));
    row("CPU a sleeping bot's box uses after answering (cgroup)", &sleeping, None);

    println!();
    let spreader = koth_runner::bot::prepare(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bots/slime/spreader.c"), &sandbox())
        .map_err(|e| anyhow::anyhow!(e))?;
    let t = Instant::now();
    let report = play(&MatchOptions { sandbox: sandbox(), ..MatchOptions::new(GameKind::Slime, 1) }, vec![spreader; 4])
        .map_err(|e| anyhow::anyhow!(e))?;
    let wall = t.elapsed();
    println!(
        "Slime match, four C bots (a process per turn): {} turns in {:.3} s ({:.2} ms per turn)",
        report.turns,
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1e3 / report.turns.max(1) as f64
    );
    println!();
    match_start(&dir, n / 20, a.spinners)?;
    println!();
    external_referee(n, &exe, a.spinners)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(0)
}

/// A match's start, as a runner plays one: two bots of one language (one
/// box config), a match of two turns, timed from `play` to its report,
/// with the boxes built on the spot (the anchor), or taken from a pool
/// keeping one ready box per config, or two; alternated, a match of each
/// a round, the pools given time to refill between rounds as between a
/// runner's matches.
fn match_start(dir: &std::path::Path, rounds: u32, spinners: u32) -> anyhow::Result<()> {
    use koth_sandbox::BoxPool;
    use std::time::Duration;
    let rounds = rounds.max(20);
    let bot_src = write_src(dir, "echo.c", ECHO_BOT)?;
    let bot = koth_runner::bot::prepare(&bot_src, &sandbox()).map_err(|e| anyhow::anyhow!(e))?;
    let pools = [None, Some((1, BoxPool::new(1, 8, Duration::from_secs(300)))), Some((2, BoxPool::new(2, 8, Duration::from_secs(300))))];
    let mut took: [Vec<f64>; 3] = Default::default();
    let mut handed_out = [0u64; 3];
    let load = super::fairness_bench::Spinners::start(spinners)?;
    for round in 0..=rounds {
        for (i, pool) in pools.iter().enumerate() {
            let boxes = pool.as_ref().map(|(_, p)| p.clone());
            let opts =
                MatchOptions { max_turns: Some(2), boxes, sandbox: sandbox(), ..MatchOptions::new(GameKind::Target, 1 + round as u64) };
            if let Some((per_config, p)) = pool {
                // As between a runner's matches: the replacements built
                // (a pool keeps at most `per_config` of the config). A
                // pool follows its takers, a box more a take, and it can
                // hold fewer than a match takes: when a match's second
                // take is served by the box built for its first (the
                // first built on the spot slowly, on a busy host). Its
                // next match grows it again: play unmeasured ones until
                // it holds what the row says.
                if round > 0 {
                    let mut extra = 0;
                    while !p.wait_ready(*per_config, Duration::from_secs(3)) {
                        anyhow::ensure!(extra < 5, "the pool did not refill: {:?}", p.stats());
                        play(&opts, vec![bot.clone(), bot.clone()]).map_err(|e| anyhow::anyhow!(e))?;
                        extra += 1;
                    }
                }
            }
            let before = pool.as_ref().map_or(0, |(_, p)| p.stats().handed_out);
            let t = Instant::now();
            let report = play(&opts, vec![bot.clone(), bot.clone()]).map_err(|e| anyhow::anyhow!(e))?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            anyhow::ensure!(report.turns >= 1, "a start-up match played no turn");
            // Round 0 fills the pools (their first takes build on the spot).
            if round > 0 {
                took[i].push(ms);
                handed_out[i] += pool.as_ref().map_or(0, |(_, p)| p.stats().handed_out) - before;
            }
        }
    }
    drop(load);
    println!(
        "a match's start: two C bots of one config, 2 turns, play() to its report; {rounds} rounds alternated; {spinners} processes spinning on the host"
    );
    let line = |name: &str, v: &[f64], base: Option<f64>| -> f64 {
        let (p50, p90) = (percentile(v.to_vec(), 0.5), percentile(v.to_vec(), 0.9));
        let ratio = base.map_or(String::new(), |b| format!("  ({:.2}x p50)", p50 / b));
        println!("{name:<62} p50 {p50:6.2} ms  p90 {p90:6.2} ms{ratio}");
        p50
    };
    let base = line("boxes built on the spot (no pool)", &took[0], None);
    for (i, name) in [(1, "pool of one ready box per config"), (2, "pool of two ready boxes per config")] {
        line(&format!("{name} ({:.1} of 2 seats from it)", handed_out[i] as f64 / rounds as f64), &took[i], Some(base));
    }
    Ok(())
}

/// Invisible target judged by its built-in rules and by the same rules as
/// an external referee in Python (`external-games/target-py`), fed the same
/// answers, alternated over rounds: what a turn costs each way, the
/// referee program's own CPU, and what koth adds around it (the external
/// call less the program's CPU: thaw, the line out, the line back, its
/// checks, the freeze).
/// `n` pipe round trips between two C processes (`mode` "cross": pinned to
/// two CPUs), each in microseconds.
fn pipe_round_trips(pingpong: &std::path::Path, n: u32, mode: &str) -> anyhow::Result<Vec<f64>> {
    let out = HostCommand::new(pingpong).arg(n.to_string()).arg(mode).output()?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.parse().ok()).collect())
}

/// The external referee's call against the built-in rules and against its
/// own pipe round trip, alternated over rounds, with `spinners` processes
/// loading the host.
fn external_referee(n: u32, pingpong: &std::path::Path, spinners: u32) -> anyhow::Result<()> {
    use koth_games::replay::{Answer, Recorded};
    use koth_games::Referee;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("external-games/target-py");
    let builder = koth_runner::bot::Builder::host(sandbox());
    let koth_runner::Game::External(game) =
        koth_runner::Game::find(&dir.display().to_string(), &builder).map_err(|e| anyhow::anyhow!(e))?
    else {
        anyhow::bail!("{} is not an external game", dir.display());
    };
    let rounds = 5u64;
    let turns = (n as usize / rounds as usize).max(50);
    let names = vec!["a".to_owned(), "b".to_owned()];
    // Both bots answer a function of the turn: the same answers both ways.
    let answers = |turn: usize| -> Vec<Answer> {
        (0..2).map(|seat| Answer { seat, reply: Recorded::Answer { answer: ((turn * 3 + seat) % 5).to_string() } }).collect()
    };
    let mut per_turn: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let (mut program_cpu, mut added) = (Vec::new(), Vec::new());
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    // Each turn's apply and the next step, timed, to the end or `turns`.
    let play = |r: &mut dyn Referee, out: &mut Vec<f64>| {
        for turn in 1..=turns {
            let a = answers(turn);
            let t = Instant::now();
            r.apply_turn(&a, &[]);
            let over = r.step().is_none();
            out.push(us(t.elapsed()));
            if over {
                break;
            }
        }
    };
    // The engine calls its referee from its own thread, made prompt for
    // the match (PromptWakeups): both ways are measured so too.
    let (prompt, _) = koth_sandbox::PromptWakeups::enter();
    let how = prompt.how();
    let load = super::fairness_bench::Spinners::start(spinners)?;
    // The anchor: a line out and one back between two processes, what a
    // call is made of before koth's part.
    let (mut pipe, mut pipe_cross) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        pipe.extend(pipe_round_trips(pingpong, turns as u32, "any")?);
        pipe_cross.extend(pipe_round_trips(pingpong, turns as u32, "cross")?);
        let seed = 100 + round;
        let mut built_in = koth_games::GameKind::Target.referee(2, seed).map_err(|e| anyhow::anyhow!(e))?;
        built_in.step();
        play(built_in.as_mut(), &mut per_turn[0]);
        // The same rules as a program in its box.
        let mut r = koth_runner::referee::ExternalReferee::start(&game.manifest, &game.referee, &names, seed, &sandbox())
            .map_err(|e| anyhow::anyhow!(e))?;
        r.step();
        play(&mut r, &mut per_turn[1]);
        if let Some(why) = r.failure() {
            anyhow::bail!("the external referee failed: {why}");
        }
        for c in r.costs().iter().skip(1) {
            program_cpu.push(us(c.cpu));
            added.push(us(c.wall.saturating_sub(c.cpu)));
        }
    }
    drop(load);
    drop(prompt);
    println!(
        "Invisible target judged built in and by its Python referee (external-games/target-py), the same answers, and a raw pipe round trip, {rounds} rounds of {turns} turns alternated (engine thread: {how:?}, as in a match; {spinners} processes spinning on the host):"
    );
    let base = row("turn, built-in referee (apply + step)", &per_turn[0], None);
    row("turn, external referee (the whole call)", &per_turn[1], Some(base));
    row("  of which the referee program's CPU (its rules, its JSON)", &program_cpu, None);
    let (a50, _) = row("  the rest: what koth adds (pipes, checks, thaw, freeze)", &added, None);
    let (p50, _) = row("a raw pipe round trip, two C processes (scheduler's choice)", &pipe, None);
    let (c50, _) = row("a raw pipe round trip, two C processes on two CPUs", &pipe_cross, None);
    // A difference of medians; tails of separate samples do not subtract.
    // The engine's thread and the referee's box are not pinned together,
    // so a call usually wakes a process on another CPU each way: the
    // two-CPU round trip is its own; on one CPU a wake-up is a switch.
    println!(
        "koth's part of a call over its pipe round trip (difference of the medians): {:.1} us over the two-CPU one, {:.1} us over the scheduler's choice (target: at most 50 us quiet, 100 us at twice the cores in load)",
        a50 - c50,
        a50 - p50
    );
    Ok(())
}
