//! `koth bench soak`: `koth up`'s resident memory over a long run.
//!
//! It starts `koth up` as a host would (this binary, a private PostgreSQL
//! in a fresh data folder, the example ladders playing on `--runners`
//! runners) and a visitor who opens the newest finished match's page, and
//! the longest one's, every few seconds (replay and frames: the service's
//! largest buffers; the example Flit ladder plays 32,769-turn matches).
//! Every `--every` seconds it reads the service process's `VmRSS` and the
//! matches finished so far. It prints each sample, then the figures: the
//! resident memory once warm (the baseline of the same run: the lowest
//! sample of the minute after the service has done its largest work once,
//! see [`figures`]), at the end (the lowest of the last minute's samples:
//! what the service holds between its bursts of work), the peak, and end /
//! warm; and the service's peak over the whole run (`VmHWM`) with the most
//! turns of a match viewed. `--max-growth R` makes the command fail when
//! end / warm is over R (the soak test's check).
//!
//! Only the service's own process is measured: bots run in sandboxes of
//! their own, with their own memory limits.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

#[derive(Args)]
pub struct SoakArgs {
    /// Minutes to run (at least 3: a minute's warm-up, the baseline, then the end).
    #[arg(long, default_value_t = 10.0)]
    minutes: f64,
    /// Seconds between samples.
    #[arg(long, default_value_t = 10)]
    every: u64,
    /// Runner loops of the `koth up` under test.
    #[arg(long, default_value_t = 2)]
    runners: u32,
    /// Base of the box uids of its runners (keep it apart from other koth
    /// services on this machine).
    #[arg(long, default_value_t = 69000)]
    uid_base: u32,
    /// Fail (exit 1) when the resident memory at the end is over this many
    /// times the warm baseline.
    #[arg(long)]
    max_growth: Option<f64>,
    /// Print the figures as one JSON object on the last line.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Figures {
    samples: Vec<Sample>,
    warm_mib: f64,
    end_mib: f64,
    peak_mib: f64,
    growth: f64,
    /// Where the baseline minute starts: at the second minute, or later if
    /// the longest match the visitor viewed was first viewed later.
    warm_from_seconds: u64,
    matches_finished: u64,
    /// The service's peak resident memory over the whole run (`VmHWM`, read
    /// at the end), not only at the samples.
    hwm_mib: f64,
    /// The most turns of a match the visitor viewed (its replay and
    /// frames): a 32,769-turn Flit match's are the service's largest.
    longest_viewed_turns: u64,
    /// When the visitor first viewed a match of that many turns.
    longest_first_viewed_seconds: u64,
}

/// A match the visitor viewed whole (page, replay and frames): when, and
/// its turns.
#[derive(Clone, Copy)]
struct View {
    seconds: u64,
    turns: u64,
}

#[derive(Clone, Copy, Serialize)]
struct Sample {
    seconds: u64,
    rss_mib: f64,
    finished: u64,
}

/// `koth up` as a child, stopped (SIGTERM, then SIGKILL) when dropped.
struct Up(Child);

impl Drop for Up {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid; it is not yet reaped
        // (wait below), so the pid cannot name another process.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn run(a: SoakArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(a.minutes >= 3.0, "--minutes must be at least 3: a minute's warm-up, the baseline, then the end");
    anyhow::ensure!(a.every >= 1, "--every must be at least 1 second");
    let data = std::env::temp_dir().join(format!("koth-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let port = koth_scheduler::pg::free_port().map_err(|e| anyhow::anyhow!(e))?;
    let addr = format!("127.0.0.1:{port}");
    let mut up = start(&data, &addr, &a)?;
    let pid = up.0.id();
    let visitor_stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let started = Instant::now();
    let views = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let visitor = {
        let (addr, stop, views) = (addr.clone(), visitor_stop.clone(), views.clone());
        std::thread::spawn(move || visit(&addr, &stop, started, &views))
    };
    let end = Duration::from_secs_f64(a.minutes * 60.0);
    let mut samples = Vec::new();
    eprintln!("koth bench soak: koth up (pid {pid}) at http://{addr}/ for {} minutes", a.minutes);
    println!("{:>8} {:>10} {:>9}", "seconds", "rss MiB", "finished");
    loop {
        // Past the time asked, the run goes on while its last minute would
        // not come after the baseline (a long match first viewed late, on a
        // slow machine), for up to as long again.
        let elapsed = started.elapsed();
        if elapsed >= end {
            let longest = longest_first_viewed(&views.lock().unwrap_or_else(|e| e.into_inner()));
            if end_comes_after_baseline(elapsed.as_secs(), longest) || elapsed >= end * 2 {
                break;
            }
        }
        std::thread::sleep(Duration::from_secs(a.every));
        if let Ok(Some(status)) = up.0.try_wait() {
            anyhow::bail!("koth up exited during the soak: {status}");
        }
        let Some(rss) = resident_mib(pid) else { continue };
        let s = Sample { seconds: started.elapsed().as_secs(), rss_mib: rss, finished: finished(&addr).unwrap_or(0) };
        println!("{:>8} {:>10.1} {:>9}", s.seconds, s.rss_mib, s.finished);
        samples.push(s);
    }
    visitor_stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = visitor.join();
    let views = std::mem::take(&mut *views.lock().unwrap_or_else(|e| e.into_inner()));
    let hwm = peak_mib(pid);
    drop(up);
    let _ = std::fs::remove_dir_all(&data);
    let longest = longest_first_viewed(&views);
    let mut f = figures(samples, longest).ok_or_else(|| {
        anyhow::anyhow!(
            "too few samples for a baseline and an end after it: the baseline is the minute from the second on, or from when the \
             longest match was first viewed ({} turns, at {} s), and the end is the last minute, after it; run longer",
            longest.turns,
            longest.seconds
        )
    })?;
    f.hwm_mib = hwm.unwrap_or(f.peak_mib);
    println!(
        "resident memory: warm {:.1} MiB (lowest of the minute from {} s), end {:.1} MiB (lowest of the last minute), peak {:.1} MiB; end / warm = {:.2}x; {} matches finished",
        f.warm_mib, f.warm_from_seconds, f.end_mib, f.peak_mib, f.growth, f.matches_finished
    );
    println!(
        "peak resident memory of koth up over the run (VmHWM): {:.1} MiB; the longest match viewed had {} turns, first viewed at {} s",
        f.hwm_mib, f.longest_viewed_turns, f.longest_first_viewed_seconds
    );
    if a.json {
        println!("{}", serde_json::to_string(&f)?);
    }
    if let Some(max) = a.max_growth {
        if f.growth > max {
            eprintln!("koth bench soak: resident memory grew {:.2}x, over the bound {max}x", f.growth);
            return Ok(1);
        }
    }
    Ok(0)
}

/// The first view of a match with the most turns viewed in the run (none:
/// turns 0 at 0 s).
fn longest_first_viewed(views: &[View]) -> View {
    let most = views.iter().map(|v| v.turns).max().unwrap_or(0);
    views.iter().find(|v| v.turns == most).copied().unwrap_or(View { seconds: 0, turns: 0 })
}

/// Where the baseline minute starts: the second minute, or the first view of
/// the longest match if that came later ([`figures`] says why).
fn baseline_from(longest: View) -> u64 {
    longest.seconds.max(60)
}

/// Whether a run whose last sample is at `last` seconds has its last
/// minute after the baseline minute.
fn end_comes_after_baseline(last: u64, longest: View) -> bool {
    last >= baseline_from(longest) + 120
}

/// The figures of a run's samples, given when the longest match viewed was
/// first viewed. `None` without a sample in the baseline minute, or if the
/// last minute does not start after it ends.
///
/// The baseline is the minute from the second on, or from that first view
/// if it came later: the service's largest work (playing, drawing and
/// serving a 32,769-turn match) raises its floor once, by what the
/// allocator keeps around what outlives it (its resident memory without the
/// binary's pages rose from about 21 to 37 MiB over the first long match
/// here, then stayed), and a baseline taken before it counted that step as
/// growth (those runs read 1.19-1.59x from the second minute; CI failed one
/// at 1.41x, 46.7 -> 65.9 MiB, a step of that size). A leak,
/// or an allocator keeping what was freed, goes on raising the floor after.
fn figures(samples: Vec<Sample>, longest: View) -> Option<Figures> {
    // The lowest sample of a minute: what the service holds between its
    // bursts of work. Drawing a long replay's frames swings the resident
    // memory between two levels (75 and 160 MiB in one CI run) and a
    // minute's median lands on either; a leak, or an allocator keeping
    // what was freed, raises the floor itself.
    let floor = |v: Vec<f64>| -> Option<f64> { v.into_iter().min_by(f64::total_cmp) };
    let warm_from = baseline_from(longest);
    let warm = floor(samples.iter().filter(|s| (warm_from..warm_from + 60).contains(&s.seconds)).map(|s| s.rss_mib).collect())?;
    let last = samples.last()?.seconds;
    if !end_comes_after_baseline(last, longest) {
        return None;
    }
    let end = floor(samples.iter().filter(|s| s.seconds + 60 > last).map(|s| s.rss_mib).collect())?;
    let peak = samples.iter().map(|s| s.rss_mib).fold(0.0, f64::max);
    let matches_finished = samples.last().map_or(0, |s| s.finished);
    Some(Figures {
        warm_mib: warm,
        end_mib: end,
        peak_mib: peak,
        growth: end / warm,
        warm_from_seconds: warm_from,
        matches_finished,
        samples,
        hwm_mib: peak,
        longest_viewed_turns: longest.turns,
        longest_first_viewed_seconds: longest.seconds,
    })
}

fn start(data: &std::path::Path, addr: &str, a: &SoakArgs) -> anyhow::Result<Up> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["up", "--data-dir"])
        .arg(data)
        .args(["--listen", addr, "--runners", &a.runners.to_string()])
        .env("KOTH_SANDBOX_RUNTIME_DIR", format!("/run/koth-soak-{}", std::process::id()))
        .env("KOTH_SANDBOX_UID_BASE", a.uid_base.to_string())
        .env("KOTH_CACHE", data.join("cache"))
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let up = Up(child);
    let mut seen = Vec::new();
    loop {
        let Some(Ok(line)) = lines.next() else { anyhow::bail!("koth up stopped before it was up: {}", seen.join("\n")) };
        if line.starts_with("koth is up at ") {
            break;
        }
        seen.push(line);
    }
    // Keep draining its log so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Ok(up)
}

/// Peak resident memory of `pid` in MiB (`VmHWM`).
fn peak_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: f64 = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib / 1024.0)
}

/// Resident memory of `pid` in MiB.
fn resident_mib(pid: u32) -> Option<f64> {
    Some(koth_web::http::resident_bytes(&pid.to_string())? as f64 / (1024.0 * 1024.0))
}

fn finished(addr: &str) -> Option<u64> {
    let text = ureq::get(&format!("http://{addr}/metrics")).call().ok()?.into_string().ok()?;
    text.lines().find_map(|l| l.strip_prefix("koth_matches{state=\"finished\"} "))?.trim().parse().ok()
}

/// A visitor: every 5 s, the newest finished match's page and the longest
/// one's as the viewer loads them (replay and frames, gzip as a browser
/// asks); records each match it viewed whole in `views`, and when (seconds
/// since `started`, once its frames were read).
fn visit(addr: &str, stop: &std::sync::atomic::AtomicBool, started: Instant, views: &std::sync::Mutex<Vec<View>>) {
    let base = format!("http://{addr}");
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        // The newest finished match, and the longest: its replay and
        // frames are the service's largest buffers.
        let chosen = (|| -> Option<Vec<(i64, u64)>> {
            let ladders: serde_json::Value = ureq::get(&format!("{base}/api/ladders")).call().ok()?.into_json().ok()?;
            let (mut newest, mut longest) = (None, None::<(i64, u64)>);
            for l in ladders.as_array()? {
                let matches: serde_json::Value =
                    ureq::get(&format!("{base}/api/ladders/{}/matches", l["id"])).call().ok()?.into_json().ok()?;
                for m in matches.as_array()?.iter().filter(|m| m["state"] == "finished") {
                    let Some(id) = m["match"].as_i64() else { continue };
                    let turns = m["turns"].as_u64().unwrap_or(0);
                    newest = newest.max(Some((id, turns)));
                    if longest.is_none_or(|(_, t)| turns > t) {
                        longest = Some((id, turns));
                    }
                }
            }
            let mut both: Vec<(i64, u64)> = newest.into_iter().chain(longest).collect();
            both.dedup();
            Some(both)
        })();
        for (id, turns) in chosen.into_iter().flatten() {
            let mut viewed = true;
            for what in ["", "/replay", "/frames"] {
                match ureq::get(&format!("{base}/api/matches/{id}{what}")).set("Accept-Encoding", "gzip").call() {
                    Ok(r) => viewed &= std::io::copy(&mut r.into_reader(), &mut std::io::sink()).is_ok(),
                    Err(_) => viewed = false,
                }
            }
            if viewed {
                views.lock().unwrap_or_else(|e| e.into_inner()).push(View { seconds: started.elapsed().as_secs(), turns });
            }
        }
        for _ in 0..50 {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(seconds: u64, rss_mib: f64) -> Sample {
        Sample { seconds, rss_mib, finished: seconds }
    }

    /// No long match viewed before the second minute.
    const EARLY: View = View { seconds: 0, turns: 0 };

    #[test]
    fn figures_take_the_second_minute_as_baseline_and_the_last_minute_as_the_end() {
        let f = figures(
            vec![s(30, 500.0), s(60, 100.0), s(90, 110.0), s(119, 90.0), s(150, 120.0), s(180, 300.0), s(210, 150.0), s(240, 140.0)],
            EARLY,
        )
        .unwrap();
        assert_eq!((f.warm_mib, f.end_mib, f.peak_mib, f.matches_finished, f.warm_from_seconds), (90.0, 140.0, 500.0, 240, 60));
        assert!((f.growth - 140.0 / 90.0).abs() < 1e-9);
    }

    /// Memory swinging between two levels is not growth, however the
    /// samples fall (this CI run's: medians 87.5 then 152.8 MiB, 1.75×);
    /// a floor that rises is.
    #[test]
    fn a_swing_between_two_levels_is_not_growth_and_a_rising_floor_is() {
        let swinging = |lows_late: f64| {
            let mut v = Vec::new();
            for i in 0..60u64 {
                let high = if i < 24 { i % 5 >= 3 } else { i % 5 >= 1 };
                let low = if i < 24 { 78.0 } else { lows_late };
                v.push(s(i * 5, if high { 155.0 } else { low }));
            }
            figures(v, EARLY).unwrap()
        };
        let f = swinging(80.0);
        assert!((f.growth - 80.0 / 78.0).abs() < 1e-9, "{}", f.growth);
        let f = swinging(120.0);
        assert!(f.growth > 1.5, "{}", f.growth);
    }

    /// The floor steps up once over the first long match and stays (the
    /// shape of the runs here: about 45 MiB, then 55-60): from the minute
    /// after its first view that is no growth; a floor that rises after it
    /// still is.
    #[test]
    fn the_step_of_the_first_long_match_is_not_growth_and_a_rise_after_it_is() {
        let run = |late_rise_per_sample: f64| {
            let mut v = Vec::new();
            for i in 0..72u64 {
                let t = i * 5;
                let rss = match t {
                    0..110 => 45.0,
                    110..170 => 130.0,
                    _ if i % 12 < 7 => 130.0,
                    _ => 56.0 + late_rise_per_sample * (t - 170) as f64,
                };
                v.push(s(t, rss));
            }
            v
        };
        let longest = View { seconds: 175, turns: 32769 };
        // Measured from the second minute, the step reads as growth...
        let from_second_minute = figures(run(0.0), EARLY).unwrap();
        assert!(from_second_minute.growth > 1.2, "{}", from_second_minute.growth);
        // ...from the minute after the long match's first view it does not.
        let f = figures(run(0.0), longest).unwrap();
        assert_eq!((f.warm_from_seconds, f.longest_viewed_turns, f.longest_first_viewed_seconds), (175, 32769, 175));
        assert!((f.growth - 1.0).abs() < 1e-9, "{}", f.growth);
        let f = figures(run(0.2), longest).unwrap();
        assert!(f.growth > 1.3, "{}", f.growth);
    }

    #[test]
    fn figures_need_the_baseline_minute_and_a_last_one_after_it() {
        assert!(figures(vec![s(10, 1.0), s(20, 1.0), s(30, 1.0)], EARLY).is_none());
        assert!(figures(vec![s(60, 1.0), s(70, 1.0)], EARLY).is_none());
        assert!(figures(vec![s(60, 1.0), s(70, 1.0), s(170, 1.0)], EARLY).is_none());
        assert!(figures(vec![s(60, 1.0), s(70, 1.0), s(180, 1.0)], EARLY).is_some());
        // A long match first viewed at 200 s: the baseline is 200-260 s,
        // and the end must start after it.
        let late = View { seconds: 200, turns: 32769 };
        assert!(figures(vec![s(60, 1.0), s(210, 1.0), s(300, 1.0)], late).is_none());
        assert!(figures(vec![s(60, 1.0), s(210, 1.0), s(320, 1.0)], late).is_some());
        assert!(figures(vec![s(60, 1.0), s(270, 1.0), s(330, 1.0)], late).is_none());
    }

    #[test]
    fn the_longest_match_is_its_first_view() {
        let views = [View { seconds: 20, turns: 30 }, View { seconds: 90, turns: 32769 }, View { seconds: 95, turns: 32769 }];
        let v = longest_first_viewed(&views);
        assert_eq!((v.seconds, v.turns), (90, 32769));
        let v = longest_first_viewed(&[]);
        assert_eq!((v.seconds, v.turns), (0, 0));
    }
}
