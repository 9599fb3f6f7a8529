//! The benchmark commands run and print what their documentation says, on
//! a small load: figures from a bench that has rotted are worth nothing.
//! (What they measure is read from their output by people, on quiet
//! machines; no figure is asserted here beyond its being a measurement.)

use std::process::Command;

mod common;
use common::postgres_binaries;

/// `koth bench queue` on 200 jobs, one round, 1 and 2 workers: every
/// configuration's row, with a rate for pgbench and each of koth's three
/// ways, their ratios, the runner's and the queue alone's claim-to-start
/// latency, and the client's and the server's CPU per job.
#[test]
fn queue_bench_prints_a_row_for_every_configuration() {
    if !postgres_binaries() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["bench", "queue", "--jobs", "200", "--rounds", "1", "--workers", "1,2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<Vec<&str>> =
        text.lines().filter(|l| l.starts_with("synced ") || l.starts_with("cheap ")).map(|l| l.split_whitespace().collect()).collect();
    let configurations: Vec<(&str, &str)> = rows.iter().map(|r| (r[0], r[1])).collect();
    assert_eq!(configurations, [("synced", "1"), ("synced", "2"), ("cheap", "1"), ("cheap", "2")], "{text}");
    for r in &rows {
        // commits, workers, pgbench, then three (rate, ratio) pairs.
        let rate = |i: usize| r[i].parse::<f64>().unwrap_or(f64::NAN);
        let ratio = |i: usize| r[i].trim_end_matches('x').parse::<f64>().unwrap_or(f64::NAN);
        for (rate_at, ratio_at) in [(3, 4), (5, 6), (7, 8)] {
            assert!(rate(rate_at) > 0.0 && ratio(ratio_at) > 0.0 && ratio(ratio_at).is_finite(), "{text}");
        }
        assert!(rate(2) > 0.0, "{text}");
        // Claim-to-start latency, p50/p99, of the runner and the queue alone.
        for f in &r[9..11] {
            let (p50, p99) = f.split_once('/').map(|(a, b)| (a.parse::<f64>(), b.parse::<f64>())).expect(&text);
            let (p50, p99) = (p50.unwrap_or(f64::NAN), p99.unwrap_or(f64::NAN));
            assert!(p50 > 0.0 && p50 <= p99 && p99.is_finite(), "{f}: {text}");
        }
        // "client + server" for pgbench and two of koth's ways: the
        // server's CPU is measured on the run's own server.
        let cpu = r[11..].join(" ");
        assert_eq!(cpu.matches(" + ").count(), 3, "{text}");
    }
}

/// `koth bench start` on 5 rounds: a row for `/bin/true` (ratio 1) and for
/// `koth --version`, and for `koth sandbox run` as root (the box needs it),
/// each with finite times and ratios to `/bin/true`; and the same rows of
/// another koth binary given with `--against` (here a link to this one).
#[test]
fn start_bench_prints_a_row_for_every_command() {
    let root = unsafe { libc::geteuid() } == 0;
    let other = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("koth-before-{}", std::process::id()));
    let _ = std::fs::remove_file(&other);
    std::fs::hard_link(env!("CARGO_BIN_EXE_koth"), &other).unwrap();
    let other_name = other.display().to_string();
    let mut args = vec!["bench", "start", "--rounds", "5", "--against", &other_name];
    if !root {
        args.push("--no-sandbox");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_koth")).args(&args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<(&str, Vec<f64>)> = text
        .lines()
        .filter_map(|l| {
            let name = ["/bin/true", "koth --version", "koth sandbox run -- /bin/true", "bwrap "].into_iter().find(|n| l.starts_with(n))?;
            let figures = l.split_whitespace().rev().take(5).map(|f| f.trim_end_matches('x').parse().unwrap_or(f64::NAN)).collect();
            Some((name, figures))
        })
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r.0).filter(|n| *n != "bwrap ").collect();
    let want: &[&str] =
        if root { &["/bin/true", "koth --version", "koth sandbox run -- /bin/true"] } else { &["/bin/true", "koth --version"] };
    assert_eq!(names, want, "{text}");
    for (name, figures) in &rows {
        // cpu ratio, cpu, ratio, p90, p50 (read from the end of the row);
        // the CPU ratio is not a number if /bin/true's CPU time read 0.
        assert!(figures[1..].iter().all(|x| x.is_finite() && *x >= 0.0), "{name}: {text}");
        assert!(figures[4] > 0.0 && figures[4] <= figures[3], "{name}: p50 within p90: {text}");
    }
    assert_eq!(rows[0].1[2], 1.0, "/bin/true is the anchor: {text}");
    let against: Vec<&str> = text.lines().filter(|l| l.starts_with(&other_name)).collect();
    assert_eq!(against.len(), if root { 2 } else { 1 }, "{text}");
    assert!(against[0].starts_with(&format!("{other_name} --version ")), "{text}");
    let _ = std::fs::remove_file(&other);
    let out =
        Command::new(env!("CARGO_BIN_EXE_koth")).args(["bench", "start", "--rounds", "1", "--against", "/no/such/koth"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--against /no/such/koth: no such file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `koth bench match --referee-only` on 100 moves with 2 spinners: the
/// external referee's rows, the pipe round trips it is set against, and
/// koth's part over them, every figure a finite number, p50 within p99.
#[test]
fn match_bench_sets_the_referees_call_beside_its_pipe_round_trip() {
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var("CI").is_err(), "CI=true and not root: these tests run as root");
        eprintln!("SKIPPED (not root)");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["bench", "match", "--referee-only", "--moves", "100", "--spinners", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("2 processes spinning on the host"), "{text}");
    for name in [
        "turn, built-in referee",
        "turn, external referee (the whole call)",
        "  the rest: what koth adds",
        "a raw pipe round trip, two C processes (scheduler's choice)",
        "a raw pipe round trip, two C processes on two CPUs",
    ] {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no row {name:?}: {text}"));
        // "NAME  p50 X us  p99 Y us  (ratios)": the ratios do not read as numbers.
        let figures: Vec<f64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
        assert_eq!(figures.len(), 2, "{name}: {line}");
        assert!(figures[0].is_finite() && figures[0] > 0.0 && figures[0] <= figures[1], "{name}: {line}");
    }
    let over = text.lines().find(|l| l.starts_with("koth's part of a call over its pipe round trip")).expect("koth's part");
    let figures: Vec<f64> = over.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert!(figures.len() >= 2 && figures[..2].iter().all(|x| x.is_finite()), "{over}");
}

/// `koth bench match --start-only`: a match's start with the boxes built
/// on the spot and from pools of one and two a config, each row with its
/// figures and how many of the two seats came from the pool (none, one,
/// both: the pools are refilled between rounds), beside two spinners.
#[test]
fn match_start_bench_prints_a_row_per_way_with_the_seats_from_the_pool() {
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var("CI").is_err(), "CI=true and not root: these tests run as root");
        eprintln!("SKIPPED (not root)");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["bench", "match", "--start-only", "--moves", "100", "--spinners", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("20 rounds alternated; 2 processes spinning on the host"), "{text}");
    for (name, seats) in [
        ("boxes built on the spot (no pool)", None),
        ("pool of one ready box per config (", Some("1.0 of 2 seats")),
        ("pool of two ready boxes per config (", Some("2.0 of 2 seats")),
    ] {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no row {name:?}: {text}"));
        if let Some(seats) = seats {
            assert!(line.contains(seats), "{line}");
        }
        let rest = &line[line.find(" p50 ").unwrap_or_else(|| panic!("{line}"))..];
        let figures: Vec<f64> = rest.split_whitespace().filter_map(|w| w.parse().ok()).collect();
        assert_eq!(figures.len(), 2, "{name}: {line}");
        assert!(figures[0].is_finite() && figures[0] > 0.0 && figures[0] <= figures[1], "{name}: {line}");
    }
}

/// `koth sandbox bench` on 10 samples: the spawn rows beside bare
/// fork+exec, each step's median for a new box, its first program, a box
/// from the pool and a program in a live box (the marks of every process
/// of a build and a spawn), four boxes spawning at once, and a program
/// started after a quiet spell with its cgroup migration (as root), on a
/// host with one spinner.
#[test]
fn sandbox_bench_prints_each_step_and_every_row() {
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var("CI").is_err(), "CI=true and not root: these tests run as root");
        eprintln!("SKIPPED (not root)");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["sandbox", "bench", "--samples", "10", "--spin-ms", "50", "--spinners", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.lines().next().is_some_and(|l| l.contains("spinners on the host: 1;")), "{text}");
    let figures = |line: &str| -> Vec<f64> { line.split_whitespace().filter_map(|w| w.parse().ok()).collect() };
    for name in [
        "bare fork+exec (std::process::Command)",
        "new box: create + spawn to exit",
        "box from the pool: take + spawn to exit",
        "spawn + exit in a live box (per turn)",
        "spawn + exit, right after another",
        "spawn + exit, after 100 ms without one",
    ] {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no row {name:?}: {text}"));
        // "NAME  p50 X ms  p99 Y ms  (ratios)": the ratios do not read as numbers.
        let f = figures(&line[name.len()..]);
        assert_eq!(f.len(), 2, "{name}: {line}");
        assert!(f[0].is_finite() && f[0] > 0.0 && f[0] <= f[1], "{name}: {line}");
    }
    assert_eq!(text.lines().filter(|l| l.starts_with("  of which moving into the box's cgroups")).count(), 2, "{text}");
    // Four step tables, each listing its steps and their sum.
    for title in [
        "a new box, Sandbox::create",
        "its first program, Sandbox::spawn to the exit of /bin/true",
        "a box from the pool, taken,",
        "a program in a live box (per turn)",
    ] {
        let start = text.find(&format!("-- where the time goes: {title}")).unwrap_or_else(|| panic!("no table {title:?}: {text}"));
        let table: Vec<&str> = text[start..].lines().skip(1).take_while(|l| l.starts_with("  ")).collect();
        // Closed by the medians' sum, then the means' sum.
        assert!(table.len() >= 2, "{title}: {table:?}");
        let (medians, means) = (table[table.len() - 2], table[table.len() - 1]);
        assert!(medians.trim_start().starts_with("sum of the steps' medians"), "{title}: {table:?}");
        assert!(means.trim_start().starts_with("sum of the steps' means"), "{title}: {table:?}");
        assert!(figures(means).first().is_some_and(|us| *us > 0.0), "{title}: {means}");
        if title == "a new box, Sandbox::create" {
            // The cgroups, made on the caller's thread while the launcher
            // builds the rest, are timed apart and printed after the sum.
            let after = text[start..].lines().nth(table.len() + 1).unwrap_or_default();
            let prefix = "beside those steps, on the caller's thread: creating the box's cgroups and their limits ";
            let us = after.strip_prefix(prefix).and_then(|r| r.strip_suffix(" us")).and_then(|f| f.parse::<f64>().ok());
            assert!(us.is_some_and(|us| us > 0.0), "{title}: {after:?}");
        }
        assert!(table.len() >= 6, "{title}: a step per line: {table:?}");
        for step in &table[..table.len() - 2] {
            // "  NAME  X us  S %  mean M us": the median, its share of the
            // medians' sum, the mean.
            let f = figures(step);
            let n = f.len();
            assert!(step.contains(" mean "), "{title}: {step}");
            assert!(n >= 3 && f[n - 3] >= 0.0 && (0.0..=100.0).contains(&f[n - 2]) && f[n - 1] >= 0.0, "{title}: {step}");
        }
    }
    let at_once = text.lines().find(|l| l.contains("live boxes spawning at once")).unwrap_or_else(|| panic!("no concurrent row: {text}"));
    assert!(at_once.contains("programs to exit/s") && at_once.contains("bare fork+exec"), "{at_once}");
}

/// `koth bench fairness` on 20 moves, with 0 and 2 spinners: a row for
/// each opponent at each N, every figure a finite number, and the goal
/// line with a verdict per row (as root: the bots run in the sandbox).
#[test]
fn fairness_bench_prints_a_row_for_every_configuration() {
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var("CI").is_err(), "CI=true and not root: these tests run as root");
        eprintln!("SKIPPED (not root)");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_koth")).args(["bench", "fairness", "--moves", "20", "--spinners", "0,2"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| ["still ", "threaded ", "after "].iter().any(|o| l.starts_with(o)))
        .map(|l| l.split_whitespace().collect())
        .collect();
    let configurations: Vec<(&str, &str)> = rows.iter().map(|r| (r[0], r[1])).collect();
    let want = [("still", "0"), ("threaded", "0"), ("after", "0"), ("still", "2"), ("threaded", "2"), ("after", "2")];
    assert_eq!(configurations, want, "{text}");
    for r in &rows {
        // opponent, N, moves, timeouts/1k, overloaded, 7 figures, share %,
        // the opponent's CPU after answering, goal.
        assert_eq!(r.len(), 15, "{text}");
        let moves: u32 = r[2].parse().unwrap_or(0);
        assert!(moves > 0, "{text}");
        assert!(r[4].parse::<u32>().is_ok(), "{text}");
        for f in &r[3..14] {
            let x: f64 = f.trim_end_matches('%').parse().unwrap_or(f64::NAN);
            assert!(x.is_finite() && x >= 0.0, "{f} in {r:?}: {text}");
        }
        assert!(["PASS", "FAIL"].contains(&r[14]), "{text}");
    }
    let goal = text.lines().position(|l| l.starts_with("goal: 0 charged timeouts")).expect(&text);
    let verdicts = text.lines().skip(goal + 1).filter(|l| l.contains(" PASS ") || l.contains(" FAIL ")).count();
    assert_eq!(verdicts, 6, "{text}");
    // The boxes came from a pool as a runner's: "first moves (...; the
    // boxes from a pool as a runner's, K of T taken ready, ...): C of the
    // victim's M charged", one first move a match.
    let first = text.lines().find(|l| l.starts_with("first moves (start-up")).expect(&text);
    let numbers = |part: &str| -> Vec<u32> { part.split_whitespace().filter_map(|w| w.parse().ok()).collect() };
    let (pool, victim) = first.split_once("): ").expect(first);
    let pool = numbers(pool.rsplit_once(", ").and_then(|(head, _)| head.rsplit_once(", ")).map(|(_, k_of_t)| k_of_t).expect(first));
    let victim = numbers(victim);
    assert!(pool.len() == 2 && victim.len() == 2, "{first}");
    let ([ready, takes], [charged, moves]) = ([pool[0], pool[1]], [victim[0], victim[1]]);
    assert!(ready >= 1 && ready < takes, "the first match builds its boxes, later ones take them ready: {first}");
    assert!(moves >= 1 && moves * 2 <= takes && charged <= moves, "at most a first move of the victim per match: {first}");
}

/// `koth bench finals` on a small field: the table has a line per gap,
/// with both methods' share of top 3 found and their matches; the round
/// robin plays exactly the budget, the adaptive finals at most it.
#[test]
fn finals_bench_prints_a_line_per_gap() {
    let out = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["bench", "finals", "--bots", "5", "--rounds", "4", "--gaps", "300,0", "--runs", "40", "--seed", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("budget 80 matches"), "{text}");
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Elo"))
        .map(|l| l.split('|').map(str::trim).filter(|c| !c.is_empty()).map(|c| c.trim_end_matches('%').parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for r in &rows {
        assert_eq!(r[2], 80.0, "the round robin plays the budget: {text}");
        assert!(r[4] >= 20.0 && r[4] <= 80.0, "the adaptive finals play the base round and at most the budget: {text}");
    }
    // Equal bots (gap 0): nothing settles, the budget is spent.
    assert_eq!((rows[1][4], rows[1][6]), (80.0, 0.0), "{text}");
    let bad = Command::new(env!("CARGO_BIN_EXE_koth")).args(["bench", "finals", "--tie", "1.5"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("--tie is a chance"));
}
