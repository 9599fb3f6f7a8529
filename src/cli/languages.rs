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
#[command(defer = true)]
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
                    let v = l.host_version();
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
    // The images start from a base image (their Dockerfiles' FROM) that
    // Docker pulls from a registry when it is not here; a machine with no
    // registry fails there with a DNS error that does not say so.
    let mut bases: Vec<&str> = langs.iter().filter_map(|l| base_image(l)).collect();
    bases.sort_unstable();
    bases.dedup();
    let missing: Vec<&str> = bases.into_iter().filter(|b| !image_present(b)).collect();
    if !missing.is_empty() {
        eprintln!(
            "base image {} is not on this machine: Docker will pull it from a registry. Without one, \
             build it from Debian's packages first: languages/local-base-image.sh",
            missing.join(", ")
        );
    }
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
                Progress::Shared(shared) => {
                    eprintln!("{tag}: {} files ({} MiB) shared with images already in the store", shared.files, shared.bytes >> 20)
                }
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
        if missing.iter().any(|b| !image_present(b)) {
            eprintln!(
                "the base image {} is still missing: if this machine reaches no image registry, \
                 run languages/local-base-image.sh (debootstrap from Debian's packages) and build again",
                missing.join(", ")
            );
        }
        Ok(1)
    }
}

/// The image a language's Dockerfile starts from.
fn base_image(lang: &Language) -> Option<&'static str> {
    lang.dockerfile?.lines().find_map(|l| l.trim().strip_prefix("FROM ")).map(|rest| rest.split_whitespace().next().unwrap_or(rest))
}

fn image_present(tag: &str) -> bool {
    std::process::Command::new(koth_runner::image::docker_cli())
        .args(["image", "inspect", "--format", "{{.Id}}", tag])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    /// `koth languages build` points to languages/local-base-image.sh when
    /// the base image is missing: that script makes the one base image
    /// every Dockerfile starts from.
    #[test]
    fn every_language_starts_from_the_base_image_the_local_script_makes() {
        let script = include_str!("../../languages/local-base-image.sh");
        let tag = script.lines().find_map(|l| l.strip_prefix("TAG=")).expect("TAG= in local-base-image.sh");
        for lang in koth_runner::language::all() {
            assert_eq!(super::base_image(lang), Some(tag), "{}", lang.name);
        }
    }
}
