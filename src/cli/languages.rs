//! `koth languages`: the languages koth knows, their images, and building them.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, Subcommand};
use koth_runner::image::{docker_engine, ImageStatus, ImageStore, Progress};
use koth_runner::language::{self, Language};
use koth_sandbox::SandboxConfig;

#[path = "languages_bench.rs"]
mod bench;

#[derive(Args)]
pub struct LanguagesArgs {
    #[command(subcommand)]
    command: Option<LanguagesCommand>,
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
    /// The image store (exported image filesystems).
    #[arg(long, env = "KOTH_IMAGES", default_value_os_t = ImageStore::default_dir(), global = true)]
    images: PathBuf,
}

#[derive(Subcommand)]
enum LanguagesCommand {
    /// Build languages' Docker images and export their filesystems into the
    /// image store (all languages when none is named).
    Build {
        /// Language names (see `koth languages`).
        languages: Vec<String>,
    },
    /// Time compiling (cold and cached, against `docker run`) and the first
    /// move, per language with a ready image.
    Bench(bench::BenchArgs),
}

/// The first line the host's toolchain prints about its version, or why not.
fn host_version(cmd: &[String]) -> Result<String, String> {
    let (prog, args) = cmd.split_first().ok_or("no version command")?;
    let out = std::process::Command::new(prog).args(args).output().map_err(|e| format!("{prog}: {e}"))?;
    let text = if out.stdout.is_empty() { out.stderr } else { out.stdout };
    let first = String::from_utf8_lossy(&text).lines().next().unwrap_or("").trim().to_owned();
    if out.status.success() {
        Ok(first)
    } else {
        Err(format!("{prog} failed: {first}"))
    }
}

pub fn run(a: LanguagesArgs) -> anyhow::Result<i32> {
    let store = ImageStore::open(&a.images);
    match a.command {
        None => list(&store, a.json),
        Some(LanguagesCommand::Build { languages }) => build(&store, &languages),
        Some(LanguagesCommand::Bench(b)) => bench::run(&store, b),
    }
}

/// Languages named on the command line (all when none), or a clear error.
pub fn select(names: &[String]) -> anyhow::Result<Vec<&'static Language>> {
    if names.is_empty() {
        return Ok(language::all().iter().collect());
    }
    names
        .iter()
        .map(|n| language::by_name(n).ok_or_else(|| anyhow::anyhow!("unknown language {n:?}; koth knows {}", language::names_list())))
        .collect()
}

fn list(store: &ImageStore, json: bool) -> anyhow::Result<i32> {
    let rows: Vec<serde_json::Value> = language::all()
        .iter()
        .map(|l| {
            let (image, ready, version, problem) = match store.status(l) {
                ImageStatus::Ready(r) => (r.short_id().to_owned(), true, r.version.clone(), None),
                other => {
                    // Without its image a language falls back to the host's toolchain.
                    let v = host_version(&l.version);
                    let why = match other {
                        ImageStatus::Broken(w) => Some(w),
                        _ => v.as_ref().err().cloned(),
                    };
                    ("host".to_owned(), v.is_ok(), v.ok(), why)
                }
            };
            serde_json::json!({
                "name": l.name,
                "display": l.display,
                "extensions": l.extensions,
                "compiled": l.compile.is_some(),
                "image": image,
                "ready": ready,
                "version": version,
                "problem": problem,
            })
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(0);
    }
    println!("image store: {}", store.dir().display());
    println!("{:<11} {:<26} {:<12} {:<13} {:<6} version", "language", "toolchain", "extensions", "image", "ready");
    for r in &rows {
        let exts: Vec<&str> = r["extensions"].as_array().unwrap().iter().filter_map(|e| e.as_str()).collect();
        println!(
            "{:<11} {:<26} {:<12} {:<13} {:<6} {}",
            r["name"].as_str().unwrap(),
            r["display"].as_str().unwrap(),
            exts.join(","),
            r["image"].as_str().unwrap(),
            if r["ready"].as_bool().unwrap() { "yes" } else { "no" },
            r["version"].as_str().or(r["problem"].as_str()).unwrap_or(""),
        );
    }
    if rows.iter().any(|r| r["image"] == "host") {
        println!("\n\"host\": no exported image; bots use this machine's / and toolchains (build images with `koth languages build`).");
    }
    Ok(0)
}

fn build(store: &ImageStore, names: &[String]) -> anyhow::Result<i32> {
    let langs = select(names)?;
    let engine = docker_engine().map_err(|e| anyhow::anyhow!(e))?;
    eprintln!("Docker engine {engine}; image store {}", store.dir().display());
    let sandbox = SandboxConfig::default();
    let mut failed = Vec::new();
    for (i, lang) in langs.iter().enumerate() {
        let started = Instant::now();
        let tag = format!("[{}/{}] {}", i + 1, langs.len(), lang.name);
        let mut steps = 0usize;
        let mut progress = |p: Progress<'_>| {
            match p {
                Progress::Build(line) => {
                    // The builder's step lines; the rest (apt's chatter) as a tick.
                    if line.starts_with("Step ") || line.starts_with("Successfully") {
                        eprintln!("{tag}: {line}");
                    } else {
                        steps += 1;
                        if steps.is_multiple_of(50) {
                            eprint!(".");
                            let _ = std::io::stderr().flush();
                        }
                    }
                }
                Progress::Export(bytes) => eprintln!("{tag}: exporting the filesystem: {} MiB", bytes >> 20),
                Progress::Reused => eprintln!("{tag}: image exported before; reusing it"),
                Progress::Checking => eprintln!("{tag}: checking the toolchain in a sandbox box"),
            }
        };
        match store.build(lang, &sandbox, &mut progress) {
            Ok(root) => eprintln!(
                "{tag}: ready: image {} ({}) in {:.1} s",
                root.short_id(),
                root.version.as_deref().unwrap_or(""),
                started.elapsed().as_secs_f64()
            ),
            Err(e) => {
                eprintln!("{tag}: FAILED: {e}");
                failed.push(lang.name.clone());
            }
        }
    }
    if failed.is_empty() {
        Ok(0)
    } else {
        eprintln!("failed: {}", failed.join(", "));
        Ok(1)
    }
}
