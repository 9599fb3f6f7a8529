//! Language definitions, one folder per language under `languages/` at the
//! repository's root, embedded at build time (see `languages/README.md`):
//! `language.json` says how to compile and run a bot, `Dockerfile` builds
//! the image whose filesystem the bot is compiled and run in.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/languages.rs"));
}

/// How bots in one language are compiled and run.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Language {
    pub name: String,
    pub display: String,
    pub extensions: Vec<String>,
    #[serde(default)]
    pub compile: Option<Vec<String>>,
    pub run: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub version: Vec<String>,
    #[serde(default)]
    pub first_move_extra_ms: Option<u64>,
    #[serde(default)]
    pub compile_limits: CompileLimits,
    /// The image's Dockerfile (`languages/<name>/Dockerfile`), if any.
    #[serde(skip)]
    pub dockerfile: Option<&'static str>,
    /// `languages/<name>/hello.<ext>`: (file name, source), a minimal Flit
    /// bot that says `hello from <name>` on stderr and passes every move.
    #[serde(skip)]
    pub hello: Option<(&'static str, &'static str)>,
}

/// Limits of the compile box; a compiler runs untrusted input too
/// (templates, macros, build scripts), so it is boxed like a bot.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct CompileLimits {
    pub memory_mb: u64,
    pub pids: u64,
    pub cpu_seconds: u64,
}

impl Default for CompileLimits {
    fn default() -> Self {
        CompileLimits { memory_mb: 1024, pids: 128, cpu_seconds: 60 }
    }
}

impl CompileLimits {
    pub fn cpu_time(&self) -> Duration {
        Duration::from_secs(self.cpu_seconds)
    }
}

/// Name of the compiled program in the bot's folder, by convention.
pub const ARTIFACT: &str = "bot";

/// What the placeholders of a command stand for.
#[derive(Clone, Copy, Debug)]
pub struct Placeholders<'a> {
    /// `{main}`: the main source file; `{stem}` is it without its extension.
    pub main: &'a str,
    /// `{memory_mb}`: the memory limit of the box the command runs in;
    /// `None` leaves the placeholder for later (the engine fills it in).
    pub memory_mb: Option<u64>,
}

impl Placeholders<'_> {
    pub fn expand(&self, text: &str) -> String {
        let stem = match self.main.rsplit_once('.') {
            Some((stem, _)) if !stem.is_empty() => stem,
            _ => self.main,
        };
        let text = text.replace("{main}", self.main).replace("{stem}", stem).replace("{artifact}", ARTIFACT);
        match self.memory_mb {
            Some(mb) => text.replace("{memory_mb}", &mb.to_string()),
            None => text,
        }
    }

    pub fn expand_all(&self, template: &[String]) -> Vec<String> {
        template.iter().map(|a| self.expand(a)).collect()
    }

    pub fn expand_env(&self, env: &BTreeMap<String, String>) -> Vec<(String, String)> {
        env.iter().map(|(k, v)| (k.clone(), self.expand(v))).collect()
    }
}

impl Language {
    /// The first line this host's own toolchain prints about its version
    /// (its `version` command, run on the host), or why it cannot.
    pub fn host_version(&self) -> Result<String, String> {
        let (prog, args) = self.version.split_first().ok_or("no version command")?;
        let out =
            std::process::Command::new(prog).args(args).stdin(std::process::Stdio::null()).output().map_err(|e| format!("{prog}: {e}"))?;
        let text = if out.stdout.is_empty() { out.stderr } else { out.stdout };
        let first = String::from_utf8_lossy(&text).lines().next().unwrap_or("").trim().to_owned();
        if out.status.success() {
            Ok(first)
        } else {
            Err(format!("{prog} failed: {first}"))
        }
    }

    /// The Docker image tag of this language.
    pub fn image_tag(&self) -> String {
        format!("koth-lang-{}", self.name)
    }

    fn check(&self, folder: &str) -> Result<(), String> {
        let bad = |why: &str| Err(format!("languages/{folder}/language.json: {why}"));
        if self.name != folder {
            return bad(&format!("name {:?} differs from the folder name", self.name));
        }
        if self.extensions.is_empty() || self.run.is_empty() || self.version.is_empty() {
            return bad("extensions, run and version must not be empty");
        }
        if self.compile.as_ref().is_some_and(|c| c.is_empty()) {
            return bad("compile, when present, must not be empty");
        }
        let l = &self.compile_limits;
        if l.memory_mb < 16 || l.pids < 1 || l.cpu_seconds < 1 {
            return bad("compile_limits must allow at least 16 MiB, 1 process and 1 s");
        }
        Ok(())
    }
}

/// Every language, parsed and checked once.
pub fn all() -> &'static [Language] {
    static ALL: OnceLock<Vec<Language>> = OnceLock::new();
    ALL.get_or_init(|| {
        embedded::DEFINITIONS
            .iter()
            .map(|(folder, text, dockerfile, hello)| {
                let mut lang: Language =
                    serde_json::from_str(text).unwrap_or_else(|e| panic!("languages/{folder}/language.json is invalid: {e}"));
                lang.check(folder).unwrap_or_else(|e| panic!("{e}"));
                lang.dockerfile = *dockerfile;
                lang.hello = *hello;
                lang
            })
            .collect()
    })
}

pub fn by_name(name: &str) -> Option<&'static Language> {
    all().iter().find(|l| l.name == name)
}

pub fn by_extension(ext: &str) -> Option<&'static Language> {
    let ext = ext.to_ascii_lowercase();
    all().iter().find(|l| l.extensions.contains(&ext))
}

/// "c, cpp/cc/cxx, py, ..." for error messages.
pub fn extensions_list() -> String {
    all().iter().map(|l| l.extensions.join("/")).collect::<Vec<_>>().join(", ")
}

pub fn names_list() -> String {
    all().iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_definition_parses_and_extensions_are_unique() {
        assert!(all().len() >= 4);
        let mut seen = std::collections::HashSet::new();
        for l in all() {
            for e in &l.extensions {
                assert!(seen.insert(e.clone()), "extension {e} claimed twice");
            }
        }
        assert_eq!(by_extension("py").unwrap().name, "python");
        assert_eq!(by_extension("PY").unwrap().name, "python");
        assert_eq!(by_name("cpp").unwrap().extensions[0], "cpp");
    }

    #[test]
    fn placeholders_expand() {
        let p = Placeholders { main: "Main.java", memory_mb: Some(256) };
        let cmd = ["java".to_owned(), "-XX:MaxRAM={memory_mb}m".into(), "{stem}".into(), "./{artifact}".into(), "{main}".into()];
        assert_eq!(p.expand_all(&cmd), ["java", "-XX:MaxRAM=256m", "Main", "./bot", "Main.java"]);
        assert_eq!(Placeholders { main: "noext", memory_mb: None }.expand("{stem}"), "noext");
        assert_eq!(Placeholders { main: "a.tar.py", memory_mb: None }.expand("{stem} {memory_mb}"), "a.tar {memory_mb}");
    }

    #[test]
    fn every_language_has_a_dockerfile_naming_its_base_and_a_hello_bot() {
        for l in all() {
            let (file, _) = l.hello.unwrap_or_else(|| panic!("languages/{}/hello.<ext> is missing", l.name));
            assert!(l.extensions.iter().any(|e| file.ends_with(&format!(".{e}"))), "{}: {file}", l.name);
            let d = l.dockerfile.unwrap_or_else(|| panic!("languages/{}/Dockerfile is missing", l.name));
            assert!(d.lines().any(|line| line.starts_with("FROM ")), "{}: no FROM line", l.name);
        }
    }
}
