//! From a checked [`Submission`] to an [`Artifact`]: the files a bot runs
//! from.
//!
//! One mechanism for every language. The submission's files go into the
//! folder of a fresh sandbox box whose root is the language's image
//! ([`crate::image`]); a compiled language's compile command runs there,
//! with no network and the language's [`CompileLimits`](crate::language::CompileLimits)
//! on memory, processes and CPU, a wall-clock limit, a disk (tmpfs) limit
//! and a cap on output. The artifact is then the whole folder, read back
//! without following links ([`koth_sandbox::workdir::WorkDir::read_tree`]);
//! for an interpreted language it is the sources as submitted. A bot runs
//! in a box on the same image root with the artifact in its folder.
//!
//! Artifacts are plain data (a tar archive via [`Artifact::to_tar`]), so they
//! can be stored and moved to any runner. [`ArtifactCache`] keeps them by
//! [`cache_key`]: the submission's source hash, the image id and the
//! language's compile definition. The host stand-in image has no id to key
//! on, so builds on it are never cached.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use koth_sandbox::{run_in, Limits, Outcome, Sandbox, SandboxConfig, TreeFile};
use sha2::{Digest, Sha256};

use crate::image::{write_atomically, ImageRoot};
use crate::language::{CompileLimits, Placeholders};
use crate::submission::Submission;

pub use crate::artifact::{Artifact, MAX_ARTIFACT_BYTES, MAX_ARTIFACT_FILES};
/// Compiler output kept for the author.
pub const LOG_CAP: usize = 64 << 10;
/// A compiler that prints more than this (stdout or stderr) is stopped:
/// verbose warnings are fine, a flood is not.
const OUTPUT_LIMIT: u64 = 4 << 20;
/// The compile's wall-clock limit is this many times its CPU limit (a
/// compiler waiting on nothing must still end).
const WALL_PER_CPU: u32 = 2;

/// The result of [`build`].
#[derive(Clone, Debug)]
pub struct Compiled {
    pub artifact: Artifact,
    /// What the compiler printed (stderr, then stdout), capped at [`LOG_CAP`].
    pub log: String,
    /// Served from the cache: nothing ran.
    pub cached: bool,
    pub elapsed: Duration,
    /// The cache key; `None` on the host image.
    pub key: Option<String>,
}

/// Why a build produced no artifact.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The author's to fix: the compiler refused the source, or ran out of
    /// time, memory or room. `log` is what it printed, capped.
    #[error("compile failed: {reason}\n{log}")]
    Compile { reason: String, log: String },
    /// Not the author's doing (the sandbox or the image store failed); worth
    /// retrying elsewhere.
    #[error("{0}")]
    Infrastructure(String),
}

/// The key artifacts are cached by: source, image and how the language
/// compiles, hashed.
pub fn cache_key(sub: &Submission, image: &ImageRoot) -> String {
    let mut h = Sha256::new();
    h.update(b"koth-artifact-v1\0");
    h.update(sub.source_hash().as_bytes());
    h.update(b"\0");
    h.update(image.id.as_bytes());
    h.update(b"\0");
    let lang = sub.language;
    h.update(serde_json::to_vec(&(&lang.compile, &lang.env, &lang.compile_limits)).unwrap());
    hex::encode(h.finalize())
}

/// Artifacts by [`cache_key`], one tar file each, on local disk.
#[derive(Clone, Debug)]
pub struct ArtifactCache {
    dir: PathBuf,
}

impl ArtifactCache {
    /// The cache in `dir`, made root's only if it exists (older installs
    /// made it 0755) or when it is first written.
    pub fn open(dir: impl Into<PathBuf>) -> ArtifactCache {
        let dir = dir.into();
        if dir.is_dir() {
            let _ = crate::state::private_dir(&dir);
        }
        ArtifactCache { dir }
    }

    /// `KOTH_CACHE`, or `/var/lib/koth/artifacts`.
    pub fn default_dir() -> PathBuf {
        crate::state::artifacts_dir()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.tar"))
    }

    /// The cached artifact; an unreadable entry counts as a miss.
    pub fn get(&self, key: &str) -> Option<Artifact> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        Artifact::from_tar(&bytes).ok()
    }

    /// Store an artifact; written whole by rename, never half.
    pub fn put(&self, key: &str, artifact: &Artifact) -> std::io::Result<()> {
        crate::state::private_dir(&self.dir)?;
        write_atomically(&self.path(key), &artifact.to_tar())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Produce the artifact of `sub` in `image`: from `cache` when present,
/// else by compiling in a sandbox box (and storing the result in `cache`).
/// `limits` overrides the language's compile limits (tests, hosts).
pub fn build(
    sub: &Submission,
    image: &ImageRoot,
    base: &SandboxConfig,
    cache: Option<&ArtifactCache>,
    limits: Option<&CompileLimits>,
) -> Result<Compiled, BuildError> {
    let started = Instant::now();
    let lang = sub.language;
    let sources: Vec<TreeFile> = sub
        .files
        .iter()
        .map(|f| TreeFile { path: f.path.clone(), bytes: f.bytes.clone(), mode: if f.executable { 0o755 } else { 0o644 } })
        .collect();
    let Some(compile) = &lang.compile else {
        return Ok(Compiled {
            artifact: Artifact { files: sources },
            log: String::new(),
            cached: false,
            elapsed: started.elapsed(),
            key: None,
        });
    };
    let key = (!image.is_host()).then(|| cache_key(sub, image));
    if let (Some(cache), Some(key)) = (cache, &key) {
        if let Some(artifact) = cache.get(key) {
            return Ok(Compiled { artifact, log: String::new(), cached: true, elapsed: started.elapsed(), key: Some(key.clone()) });
        }
    }
    let limits = limits.unwrap_or(&lang.compile_limits);
    let cpu = limits.cpu_time();
    let mut cfg = SandboxConfig {
        root: image.root.clone(),
        limits: Limits {
            memory: limits.memory_mb << 20,
            pids: limits.pids,
            cpu_time: Some(cpu),
            wall_time: Some(cpu * WALL_PER_CPU),
            disk: 512 << 20,
            file_size: MAX_ARTIFACT_BYTES,
            output: OUTPUT_LIMIT,
            ..Limits::default()
        },
        network: koth_sandbox::Network::None,
        ..base.clone()
    };
    crate::state::hide(&mut cfg, cache.map(ArtifactCache::dir));
    let p = Placeholders { main: &sub.main, memory_mb: Some(limits.memory_mb) };
    let command = p.expand_all(compile);
    let env = p.expand_env(&lang.env);
    fn infra(what: &str) -> impl Fn(koth_sandbox::Error) -> BuildError + '_ {
        move |e| BuildError::Infrastructure(format!("{what}: {e}"))
    }
    let sb = Sandbox::create(cfg).map_err(infra("creating the compile box"))?;
    for f in &sources {
        sb.workdir()
            .write_file(&f.path, &f.bytes, f.mode)
            .map_err(|e| BuildError::Infrastructure(format!("putting {} into the compile folder: {e}", f.path)))?;
    }
    let out = run_in(&sb, &command[0], &command[1..], &env, b"").map_err(infra("running the compiler"))?;
    let log = compile_log(&out.stderr, &out.stdout);
    let memory = || format!("the compile used more than {} MiB of memory and was stopped", limits.memory_mb);
    let reason = match out.usage.outcome {
        Outcome::Ok => None,
        // A driver (gcc, go) reports its killed child as its own failure.
        Outcome::Failed | Outcome::Crashed if out.usage.oom_kills > 0 => Some(memory()),
        Outcome::Failed => Some(format!("the compiler exited with {}", out.usage.exit)),
        Outcome::Crashed => Some(format!("the compiler crashed ({})", out.usage.exit)),
        Outcome::CpuTimeLimit => Some(format!("the compile used more than its {} s of CPU time and was stopped", cpu.as_secs())),
        Outcome::WallTimeLimit => Some(format!("the compile ran longer than {} s and was stopped", (cpu * WALL_PER_CPU).as_secs())),
        Outcome::MemoryLimit => Some(memory()),
        Outcome::OutputLimit => Some(format!("the compiler printed more than {} MiB and was stopped", OUTPUT_LIMIT >> 20)),
    };
    if let Some(reason) = reason {
        return Err(BuildError::Compile { reason, log });
    }
    let files = sb
        .workdir()
        .read_tree(MAX_ARTIFACT_FILES, MAX_ARTIFACT_BYTES)
        .map_err(|e| BuildError::Compile { reason: format!("reading the compiled bot back: {e}"), log: log.clone() })?;
    drop(sb);
    let artifact = Artifact { files };
    if let (Some(cache), Some(key)) = (cache, &key) {
        // A cache that cannot be written costs a recompile later, nothing more.
        if let Err(e) = cache.put(key, &artifact) {
            tracing::warn!("could not store the artifact in {}: {e}", cache.dir().display());
        }
    }
    Ok(Compiled { artifact, log, cached: false, elapsed: started.elapsed(), key })
}

/// The compiler's stderr (where the errors are), then its stdout, within
/// [`LOG_CAP`] bytes, cut on a character boundary and marked when cut.
fn compile_log(stderr: &[u8], stdout: &[u8]) -> String {
    let mut log = String::from_utf8_lossy(stderr).into_owned();
    if !stdout.is_empty() {
        if !log.is_empty() && !log.ends_with('\n') {
            log.push('\n');
        }
        log.push_str(&String::from_utf8_lossy(stdout));
    }
    if log.len() > LOG_CAP {
        let mut cut = LOG_CAP;
        while !log.is_char_boundary(cut) {
            cut -= 1;
        }
        log.truncate(cut);
        log.push_str("\n[compiler output cut at 64 KiB]");
    }
    log
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_log_puts_errors_first_and_is_capped() {
        assert_eq!(super::compile_log(b"error: x", b"note"), "error: x\nnote");
        let big = "é".repeat(super::LOG_CAP);
        let log = super::compile_log(big.as_bytes(), b"");
        assert!(log.len() <= super::LOG_CAP + 40 && log.ends_with("cut at 64 KiB]"));
    }

    use super::*;

    #[test]
    fn artifacts_round_trip_through_tar_and_refuse_unsafe_paths() {
        let a = Artifact {
            files: vec![
                TreeFile { path: "bot".into(), bytes: b"\x7fELF...".to_vec(), mode: 0o755 },
                TreeFile { path: "data/table.txt".into(), bytes: b"1 2 3\n".to_vec(), mode: 0o644 },
            ],
        };
        let tar = a.to_tar();
        assert_eq!(Artifact::from_tar(&tar).unwrap(), a);
        assert_eq!(a.to_tar(), tar, "equal artifacts give equal bytes");

        let mut h = tar::Header::new_gnu();
        h.as_gnu_mut().unwrap().name[..9].copy_from_slice(b"../escape");
        h.set_size(1);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        let mut raw = h.as_bytes().to_vec();
        raw.extend_from_slice(&[b'x'; 512]);
        raw.extend_from_slice(&[0; 1024]);
        assert!(Artifact::from_tar(&raw).unwrap_err().contains("unsafe path"));
    }

    #[test]
    fn the_cache_returns_what_was_put_and_treats_garbage_as_a_miss() {
        let dir = std::env::temp_dir().join(format!("koth-cache-test-{}", std::process::id()));
        let cache = ArtifactCache::open(&dir);
        let key = "ab".repeat(32);
        assert!(cache.get(&key).is_none());
        let a = Artifact { files: vec![TreeFile { path: "bot".into(), bytes: vec![1, 2, 3], mode: 0o755 }] };
        cache.put(&key, &a).unwrap();
        assert_eq!(cache.get(&key), Some(a));
        std::fs::write(cache.path(&key), b"garbage").unwrap();
        assert!(cache.get(&key).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
