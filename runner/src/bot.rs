//! Bots as the match engine runs them, and how `koth match` makes one from
//! a source file or folder with the host's toolchains.
//!
//! A bot is a file (`bot.py`) or a folder holding one main file named
//! `bot.<ext>` or `main.<ext>` plus any other files it needs (copied into
//! its folder, non-recursively). The language comes from the extension, or
//! from a manifest `koth.json` in the folder:
//! `{"language": "python", "main": "my_bot.py"}` (a language's name from
//! `languages/`).
//! Compiled languages are compiled *inside a sandbox box* (a compiler runs
//! untrusted input too) and the artifact is read back from the box's folder
//! without following links. How each language compiles and runs is data,
//! in `languages/<name>/language.json` ([`crate::language`]); until the
//! language images exist, the host's toolchains are used.

use std::path::Path;
use std::time::Duration;

use koth_sandbox::{run_in, Limits, Sandbox, SandboxConfig};

use crate::language::{self, Language, ARTIFACT};

/// What the match engine needs to run a bot.
#[derive(Clone, Debug)]
pub struct BotSpec {
    /// Shown in reports (the file or folder name).
    pub name: String,
    /// The language's name (see `languages/`).
    pub language: String,
    /// Program and arguments, inside the box (its folder is the cwd).
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Files put into the bot's folder before it starts: (name, bytes, mode).
    pub files: Vec<(String, Vec<u8>, u32)>,
}

pub const MANIFEST: &str = "koth.json";

/// A bot folder's manifest.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    language: String,
    main: String,
}

const MAX_FILE: u64 = 16 << 20;
const MAX_FILES: usize = 64;
const MAX_ARTIFACT: usize = 64 << 20;

/// Read a bot from a file or folder and compile it if needed.
pub fn prepare(path: &Path, sandbox: &SandboxConfig) -> Result<BotSpec, String> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string());
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut files: Vec<(String, Vec<u8>, u32)> = Vec::new();
    let main: String;
    if meta.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .flatten()
            .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
            .collect();
        entries.sort_by_key(|e| e.file_name());
        if entries.len() > MAX_FILES {
            return Err(format!("{}: more than {MAX_FILES} files", path.display()));
        }
        for e in &entries {
            files.push((e.file_name().to_string_lossy().into_owned(), read_capped(&e.path())?, 0o644));
        }
        if let Some((_, text, _)) = files.iter().find(|(n, _, _)| n == MANIFEST) {
            let m: Manifest = serde_json::from_slice(text).map_err(|e| {
                format!("{}/{MANIFEST}: {e}; expected {{\"language\": \"python\", \"main\": \"bot.py\"}}", path.display())
            })?;
            let language = language::by_name(&m.language).ok_or_else(|| {
                format!("{}/{MANIFEST}: unknown language {:?}; use one of {}", path.display(), m.language, language::names_list())
            })?;
            if !files.iter().any(|(n, _, _)| *n == m.main) {
                return Err(format!("{}/{MANIFEST}: main file {:?} is not in the folder", path.display(), m.main));
            }
            files.retain(|(n, _, _)| n != MANIFEST);
            return finish(name, language, m.main, files, sandbox);
        }
        main = files
            .iter()
            .map(|(n, _, _)| n.clone())
            .find(|n| {
                let stem = n.split('.').next().unwrap_or("");
                (stem == "bot" || stem == "main") && n.rsplit('.').next().and_then(language::by_extension).is_some()
            })
            .ok_or_else(|| {
                format!(
                    "{}: no main file; name it bot.<ext> or main.<ext> with ext one of {}, or add a {MANIFEST}",
                    path.display(),
                    language::extensions_list()
                )
            })?;
    } else {
        main = name.clone();
        files.push((name.clone(), read_capped(path)?, 0o644));
    }
    let ext = main.rsplit('.').next().unwrap_or("");
    let language = language::by_extension(ext).ok_or_else(|| {
        format!("{main}: cannot tell the language from the extension {ext:?}; use one of {}", language::extensions_list())
    })?;
    finish(name, language, main, files, sandbox)
}

/// Turn sources into a runnable bot: compile it if its language compiles.
fn finish(
    name: String,
    language: &Language,
    main: String,
    files: Vec<(String, Vec<u8>, u32)>,
    sandbox: &SandboxConfig,
) -> Result<BotSpec, String> {
    let env: Vec<(String, String)> = language.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let files = match &language.compile {
        Some(cmd) => {
            let artifact = compile(sandbox, &files, &Language::expand(cmd, &main), &env)?;
            vec![(ARTIFACT.to_owned(), artifact, 0o755)]
        }
        None => files,
    };
    let mut run = Language::expand(&language.run, &main);
    let program = run.remove(0);
    Ok(BotSpec { name, language: language.name.clone(), program, args: run, env, files })
}

fn read_capped(p: &Path) -> Result<Vec<u8>, String> {
    let len = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?.len();
    if len > MAX_FILE {
        return Err(format!("{}: {len} bytes is over the {MAX_FILE}-byte limit for a bot file", p.display()));
    }
    if len == 0 {
        return Err(format!("{}: the file is empty", p.display()));
    }
    std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// Compile in a fresh box: no network, bounded time, memory and output.
fn compile(
    base: &SandboxConfig,
    files: &[(String, Vec<u8>, u32)],
    command: &[String],
    env: &[(String, String)],
) -> Result<Vec<u8>, String> {
    let cfg = SandboxConfig {
        limits: Limits {
            memory: 1 << 30,
            pids: 64,
            cpu_time: Some(Duration::from_secs(60)),
            wall_time: Some(Duration::from_secs(120)),
            disk: 256 << 20,
            file_size: 128 << 20,
            output: 64 << 10,
            ..Limits::default()
        },
        ..base.clone()
    };
    let (compiler, args) = command.split_first().ok_or("the compile command is empty")?;
    let sb = Sandbox::create(cfg).map_err(|e| format!("compiling: {e}"))?;
    for (n, d, m) in files {
        sb.workdir().write_file(n, d, *m).map_err(|e| format!("compiling: {e}"))?;
    }
    let out = run_in(&sb, compiler, args, env, b"").map_err(|e| format!("compiling: {e}"))?;
    if out.usage.outcome != koth_sandbox::Outcome::Ok {
        let log = String::from_utf8_lossy(&out.stderr);
        return Err(format!("compile failed ({:?}):\n{log}", out.usage.outcome));
    }
    // Read back without following anything the compiler (or the source) planted.
    let (bytes, truncated) =
        sb.workdir().read_file(ARTIFACT, MAX_ARTIFACT).map_err(|e| format!("reading the compiled bot: {e}"))?;
    if truncated {
        return Err(format!("the compiled bot is larger than {MAX_ARTIFACT} bytes"));
    }
    Ok(bytes)
}
