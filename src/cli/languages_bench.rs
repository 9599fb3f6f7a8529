//! `koth languages bench`: per language with a ready image, the time to
//! compile its hello bot cold (in a sandbox box on the image's root), the
//! same compile by `docker run` on the same image as a baseline measured in
//! the same run, a cached compile (artifact cache hit), and the first move
//! as the engine clocks it in a Flit match of four copies (bots are started
//! before the first request, so it holds the start-up work still pending
//! then), against C's first move as the baseline.

use std::process::{Command as HostCommand, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use koth_games::GameKind;
use koth_runner::bot::BotSpec;
use koth_runner::compile::{self, ArtifactCache};
use koth_runner::engine::{play, MatchOptions};
use koth_runner::image::{docker_cli, ImageRoot, ImageStore};
use koth_runner::language::{Language, Placeholders};
use koth_runner::submission::{Submission, SubmissionLimits};
use koth_sandbox::{Limits, SandboxConfig};

#[derive(Args)]
pub struct BenchArgs {
    /// Languages to measure (default: every language with a ready image).
    languages: Vec<String>,
    /// Repetitions of each measurement (the median is printed).
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct Row {
    name: String,
    cold: Option<f64>,
    docker: Option<f64>,
    cached: Option<f64>,
    first_move: f64,
}

pub fn run(store: &ImageStore, a: BenchArgs) -> anyhow::Result<i32> {
    let mut langs: Vec<(&'static Language, ImageRoot)> = Vec::new();
    for l in super::select(&a.languages)? {
        match store.ready(l) {
            Some(img) => langs.push((l, img)),
            None if a.languages.is_empty() => eprintln!("{}: no image in {}; skipped", l.name, store.dir().display()),
            None => anyhow::bail!("{}: no image; run `koth languages build {}` first", l.name, l.name),
        }
    }
    anyhow::ensure!(!langs.is_empty(), "no language has a ready image; run `koth languages build` first");
    let runs = a.runs.max(1);
    let sandbox = SandboxConfig {
        limits: Limits { memory: 512 << 20, cpu_time: None, wall_time: None, ..Limits::default() },
        ..SandboxConfig::default()
    };
    let scratch = std::env::temp_dir().join(format!("koth-languages-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    println!("koth languages bench: {runs} runs each, medians in ms");
    println!("compile: the hello bot in a sandbox box on the image's root (cold), the same command by `docker run --network none` on the same image (baseline), and an artifact-cache hit");
    println!("first move: as the engine clocks it (request written -> answer read) in a Flit match of four copies, against C's; bots are started before the first request, so this is the start-up work still pending then plus the answer");
    let mut rows = Vec::new();
    for (lang, image) in &langs {
        let (file, text) = lang.hello.ok_or_else(|| anyhow::anyhow!("{} has no hello bot", lang.name))?;
        let sub = Submission::from_upload(file, text.as_bytes(), &SubmissionLimits::default())?;
        let (mut cold, mut docker, mut cached) = (Vec::new(), Vec::new(), Vec::new());
        let mut compiled = None;
        if lang.compile.is_some() {
            for _ in 0..runs {
                let c = compile::build(&sub, image, &sandbox, None, None)?;
                cold.push(ms(c.elapsed));
                compiled = Some(c);
            }
            for _ in 0..runs {
                docker.push(docker_compile(lang, image, &sub, &scratch)?);
            }
            let cache = ArtifactCache::open(scratch.join(format!("cache-{}", lang.name)));
            compile::build(&sub, image, &sandbox, Some(&cache), None)?;
            for _ in 0..runs {
                let c = compile::build(&sub, image, &sandbox, Some(&cache), None)?;
                anyhow::ensure!(c.cached, "{}: the second build was not a cache hit", lang.name);
                cached.push(ms(c.elapsed));
            }
        }
        let compiled = match compiled {
            Some(c) => c,
            None => compile::build(&sub, image, &sandbox, None, None)?,
        };
        let spec = BotSpec::new(lang.name.clone(), &sub, image, &compiled.artifact);
        let mut first = Vec::new();
        for r in 0..runs {
            let opts = MatchOptions { sandbox: sandbox.clone(), ..MatchOptions::new(GameKind::Flit, r as u64 + 1) };
            let report = play(&opts, vec![spec.clone(); 4]).map_err(|e| anyhow::anyhow!(e))?;
            for o in &report.outcomes {
                anyhow::ensure!(o.moves >= 1, "{}: a bot made no move ({:?}): {}", lang.name, o.status, o.stderr);
                first.push(o.max_move_ms);
            }
        }
        let row = Row {
            name: lang.name.clone(),
            cold: (!cold.is_empty()).then(|| median(&mut cold)),
            docker: (!docker.is_empty()).then(|| median(&mut docker)),
            cached: (!cached.is_empty()).then(|| median(&mut cached)),
            first_move: median(&mut first),
        };
        eprintln!("{}: done", lang.name);
        rows.push(row);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let c_first = rows.iter().find(|r| r.name == "c").map(|r| r.first_move);
    println!();
    println!(
        "{:<11} {:>12} {:>12} {:>8} {:>10} {:>12} {:>8}",
        "language", "compile", "docker run", "ratio", "cached", "first move", "vs C"
    );
    let f = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
    for r in &rows {
        let ratio = match (r.cold, r.docker) {
            (Some(c), Some(d)) => format!("{:.2}x", c / d),
            _ => "-".into(),
        };
        let vs_c = c_first.map(|c| format!("{:.1}x", r.first_move / c)).unwrap_or_else(|| "-".into());
        println!(
            "{:<11} {:>12} {:>12} {:>8} {:>10} {:>12.1} {:>8}",
            r.name,
            f(r.cold),
            f(r.docker),
            ratio,
            f(r.cached),
            r.first_move,
            vs_c
        );
    }
    println!("(ratio: koth's sandboxed compile / docker run's; interpreted languages have no compile step)");
    Ok(0)
}

/// The language's compile command by `docker run` on the same image, in a
/// fresh folder: the baseline a Docker-based judge pays per compile.
fn docker_compile(lang: &Language, image: &ImageRoot, sub: &Submission, scratch: &std::path::Path) -> anyhow::Result<f64> {
    let dir = scratch.join(format!("docker-{}", lang.name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    for f in &sub.files {
        let p = dir.join(&f.path);
        std::fs::create_dir_all(p.parent().unwrap())?;
        std::fs::write(&p, &f.bytes)?;
    }
    let limits = &lang.compile_limits;
    let p = Placeholders { main: &sub.main, memory_mb: Some(limits.memory_mb) };
    let mut cmd = HostCommand::new(docker_cli());
    cmd.args(["run", "--rm", "--network", "none", "--memory", &format!("{}m", limits.memory_mb)])
        .arg("-v")
        .arg(format!("{}:/home/bot", dir.display()))
        .args(["-w", "/home/bot", "-e", "HOME=/home/bot"]);
    for (k, v) in p.expand_env(&lang.env) {
        cmd.arg("-e").arg(format!("{k}={v}"));
    }
    cmd.arg(&image.id).args(p.expand_all(lang.compile.as_ref().expect("compiled language")));
    let t = Instant::now();
    let out = cmd.stdin(Stdio::null()).output()?;
    let elapsed = ms(t.elapsed());
    anyhow::ensure!(out.status.success(), "{}: docker run compile failed: {}", lang.name, String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(elapsed)
}
