//! Bots as the match engine runs them, and how one is made from what an
//! author submitted.
//!
//! ```text
//! file / archive / folder ──Submission──▶ checked sources, language, main file
//!        ──image──▶ the language's root filesystem (exported image, or the host's /)
//!        ──compile::build──▶ artifact (cached by source hash + image id)
//!        ──▶ BotSpec: run command, environment, files, root
//! ```
//!
//! [`Builder`] holds the choices: the sandbox settings, where images and
//! artifacts live, and the [`ImagePolicy`].

use std::path::{Path, PathBuf};

use koth_sandbox::SandboxConfig;

use crate::compile::{self, ArtifactCache, BuildError, Compiled};
use crate::image::{ImageRoot, ImageStatus, ImageStore};
use crate::language::{CompileLimits, Language, Placeholders};
use crate::submission::{Submission, SubmissionError, SubmissionLimits};

/// What the match engine needs to run a bot.
#[derive(Clone, Debug)]
pub struct BotSpec {
    /// Shown in reports (the file or folder name).
    pub name: String,
    /// The language's name (see `languages/`).
    pub language: String,
    /// Program and arguments, inside the box (its folder is the cwd).
    /// `{memory_mb}` is filled in by the engine with the box's memory limit.
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Files put into the bot's folder before it starts: (path, bytes, mode).
    pub files: Vec<(String, Vec<u8>, u32)>,
    /// The box's root filesystem: the language's image.
    pub root: PathBuf,
    /// The image's id, or `host`.
    pub image: String,
    /// Extra start-up allowance for the first move the language asks for.
    pub first_move_extra_ms: Option<u64>,
}

impl BotSpec {
    /// The allowance for its first exchange: `base`, or what its language
    /// asks for if that is more.
    pub fn first_move_extra(&self, base: std::time::Duration) -> std::time::Duration {
        base.max(std::time::Duration::from_millis(self.first_move_extra_ms.unwrap_or(0)))
    }

    /// The bot that runs `artifact`, built from `sub`, in `image`.
    pub fn new(name: String, sub: &Submission, image: &ImageRoot, artifact: &compile::Artifact) -> BotSpec {
        let lang = sub.language;
        // {memory_mb} stays for the engine, which knows the box's limit.
        let p = Placeholders { main: &sub.main, memory_mb: None };
        let mut run = p.expand_all(&lang.run);
        let program = run.remove(0);
        BotSpec {
            name,
            language: lang.name.clone(),
            program,
            args: run,
            env: p.expand_env(&lang.env),
            files: artifact.files.iter().map(|f| (f.path.clone(), f.bytes.clone(), f.mode)).collect(),
            root: image.root.clone(),
            image: image.id.clone(),
            first_move_extra_ms: lang.first_move_extra_ms,
        }
    }

    /// Fill in `{memory_mb}` for a box of `memory` bytes.
    pub fn with_memory(&self, memory: u64) -> (String, Vec<String>, Vec<(String, String)>) {
        let mb = (memory >> 20).to_string();
        let f = |s: &String| s.replace("{memory_mb}", &mb);
        (f(&self.program), self.args.iter().map(f).collect(), self.env.iter().map(|(k, v)| (k.clone(), f(v))).collect())
    }
}

/// Which root filesystem bots get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImagePolicy {
    /// The language's exported image; an error when it is not ready.
    Images,
    /// The exported image when ready, else the host's `/` and toolchains.
    Auto,
    /// Always the host's `/`.
    Host,
}

/// Why no bot could be made.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The submission itself is unusable (see [`SubmissionError`]).
    #[error(transparent)]
    Rejected(#[from] SubmissionError),
    /// The language has no usable image, or toolchain, here.
    #[error("{0}")]
    NoImage(String),
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// Makes bots: submission checks, image choice, compile, cache.
#[derive(Clone, Debug)]
pub struct Builder {
    pub sandbox: SandboxConfig,
    pub policy: ImagePolicy,
    pub store: ImageStore,
    pub cache: Option<ArtifactCache>,
    pub limits: SubmissionLimits,
    /// Overrides every language's compile limits when set.
    pub compile_limits: Option<CompileLimits>,
}

impl Builder {
    /// Host toolchains only, no cache: what tests of the engine use.
    pub fn host(sandbox: SandboxConfig) -> Builder {
        Builder {
            sandbox,
            policy: ImagePolicy::Host,
            store: ImageStore::open(ImageStore::default_dir()),
            cache: None,
            limits: SubmissionLimits::default(),
            compile_limits: None,
        }
    }

    /// The image a language's bots get under this builder's policy.
    pub fn image(&self, lang: &Language) -> Result<ImageRoot, PrepareError> {
        match self.policy {
            ImagePolicy::Host => Ok(ImageRoot::host()),
            ImagePolicy::Auto => Ok(self.store.ready(lang).unwrap_or_else(ImageRoot::host)),
            ImagePolicy::Images => match self.store.status(lang) {
                ImageStatus::Ready(r) => Ok(r),
                ImageStatus::Missing => Err(PrepareError::NoImage(format!(
                    "the {} image is not built in {}; run `koth languages build {}` (needs Docker)",
                    lang.name,
                    self.store.dir().display(),
                    lang.name
                ))),
                ImageStatus::Broken(why) => Err(PrepareError::NoImage(why)),
            },
        }
    }

    /// Whether this builder can compile and run `lang`'s bots: `Ok` says
    /// with what (image, or the host's toolchain and its version); `Err`
    /// says why not and what a host does about it. What runners report
    /// so that the service offers only the languages it can run.
    pub fn availability(&self, lang: &Language) -> Result<String, String> {
        let build_it = |why: &str| {
            format!(
                "{why}; a host builds its image with `koth languages build {}` (needs Docker; without a registry, \
                 build the local base image first: languages/local-base-image.sh)",
                lang.name
            )
        };
        let host = || {
            lang.host_version()
                .map(|v| format!("host toolchain: {v}"))
                .map_err(|e| format!("this host has no {} toolchain ({e})", lang.display))
        };
        match self.policy {
            ImagePolicy::Host => host().map_err(|e| format!("{e}; a host installs it on the runners' machines")),
            ImagePolicy::Auto => match self.store.status(lang) {
                ImageStatus::Ready(r) => Ok(format!("image {}", r.short_id())),
                ImageStatus::Missing => host().map_err(|e| build_it(&format!("no {} image is built and {e}", lang.name))),
                ImageStatus::Broken(why) => host().map_err(|e| build_it(&format!("the {} image is broken ({why}) and {e}", lang.name))),
            },
            ImagePolicy::Images => self
                .image(lang)
                .map(|r| format!("image {}", r.short_id()))
                .map_err(|e| format!("{e} (without a registry, build the local base image first: languages/local-base-image.sh)")),
        }
    }

    /// Compile (or fetch from the cache) a checked submission.
    pub fn build(&self, sub: &Submission) -> Result<(ImageRoot, Compiled), PrepareError> {
        let image = self.image(sub.language)?;
        has_toolchain(sub.language, &image)?;
        let compiled = compile::build(sub, &image, &self.sandbox, self.cache.as_ref(), self.compile_limits.as_ref())?;
        Ok((image, compiled))
    }

    /// A bot from a file, archive or folder on disk.
    pub fn prepare(&self, path: &Path) -> Result<BotSpec, PrepareError> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string());
        let sub = Submission::from_path(path, &self.limits)?;
        let (image, compiled) = self.build(&sub)?;
        Ok(BotSpec::new(name, &sub, &image, &compiled.artifact))
    }
}

/// Whether `image`'s root has the programs `lang` compiles and runs with
/// (those named by absolute paths): said before a compile, so a missing
/// toolchain is named with its remedy instead of failing inside the box as
/// "execve failed: No such file or directory".
pub fn has_toolchain(lang: &Language, image: &ImageRoot) -> Result<(), PrepareError> {
    let programs = lang.compile.iter().filter_map(|c| c.first()).chain(lang.run.first());
    let Some(missing) = programs.filter(|p| p.starts_with('/')).find(|p| !exists_in(&image.root, Path::new(p))) else {
        return Ok(());
    };
    Err(PrepareError::NoImage(if image.id == crate::image::HOST {
        format!(
            "this host has no {} toolchain ({missing} does not exist): install it, or build the {} image with `koth languages build {}` (needs Docker)",
            lang.display, lang.name, lang.name
        )
    } else {
        format!("the {} image has no {missing}: rebuild it with `koth languages build {}`", lang.name, lang.name)
    }))
}

/// Whether `path` names something inside `root`, following symbolic links
/// as the box will see them: an absolute target is inside `root` too
/// (Debian's `/usr/bin/fpc -> /etc/alternatives/fpc`), not on the host.
fn exists_in(root: &Path, path: &Path) -> bool {
    let mut path = path.to_path_buf();
    // A chain longer than the kernel follows (40) is no program.
    for _ in 0..40 {
        let full = root.join(path.strip_prefix("/").unwrap_or(&path));
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&full) {
                Ok(target) if target.is_absolute() => path = target,
                Ok(target) => path = path.parent().unwrap_or(Path::new("/")).join(target),
                Err(_) => return false,
            },
            Ok(_) => return true,
            Err(_) => return false,
        }
    }
    false
}

/// A bot from a file, archive or folder, with the host's toolchains.
pub fn prepare(path: &Path, sandbox: &SandboxConfig) -> Result<BotSpec, PrepareError> {
    Builder::host(sandbox.clone()).prepare(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A builder over an empty image store with `policy`.
    fn builder(policy: ImagePolicy, store: &Path) -> Builder {
        Builder { policy, store: ImageStore::open(store), ..Builder::host(SandboxConfig::default()) }
    }

    #[test]
    fn a_missing_toolchain_is_named_with_its_remedy() {
        let mut go = crate::language::by_name("go").unwrap().clone();
        go.compile = Some(vec!["/nonexistent/koth-test/go".into(), "build".into()]);
        let e = has_toolchain(&go, &ImageRoot::host()).unwrap_err().to_string();
        assert!(e.starts_with("this host has no Go 1.19 toolchain (/nonexistent/koth-test/go does not exist)"), "{e}");
        assert!(e.contains("koth languages build go"), "{e}");
        let image = ImageRoot { id: "sha256:1".into(), root: std::env::temp_dir(), version: None };
        let e = has_toolchain(&go, &image).unwrap_err().to_string();
        assert_eq!(e, "the go image has no /nonexistent/koth-test/go: rebuild it with `koth languages build go`");
        // A program behind an absolute link is looked for in the image, not on the host.
        let root = std::env::temp_dir().join(format!("koth-toolchain-{}", std::process::id()));
        std::fs::create_dir_all(root.join("usr/bin")).unwrap();
        std::fs::create_dir_all(root.join("etc/alternatives")).unwrap();
        let _ = std::fs::remove_file(root.join("usr/bin/go"));
        let _ = std::fs::remove_file(root.join("etc/alternatives/go"));
        std::os::unix::fs::symlink("/etc/alternatives/go", root.join("usr/bin/go")).unwrap();
        let mut linked = go.clone();
        linked.compile = Some(vec!["/usr/bin/go".into()]);
        linked.run = vec!["./bot".into()];
        let image = ImageRoot { id: "sha256:2".into(), root: root.clone(), version: None };
        assert!(has_toolchain(&linked, &image).is_err(), "a dangling link is no program");
        std::fs::write(root.join("etc/alternatives/go"), "").unwrap();
        assert!(has_toolchain(&linked, &image).is_ok(), "found through the image's own link");
        std::fs::remove_dir_all(&root).unwrap();
        // Programs found, or named relative to the bot's folder (`./bot`): fine.
        let mut sh = go.clone();
        sh.compile = Some(vec!["/bin/sh".into()]);
        sh.run = vec!["./bot".into()];
        assert!(has_toolchain(&sh, &ImageRoot::host()).is_ok());
    }

    #[test]
    fn availability_says_with_what_or_why_not_and_the_remedy() {
        let store = std::env::temp_dir().join(format!("koth-availability-{}", std::process::id()));
        std::fs::create_dir_all(&store).unwrap();
        // A language whose toolchain this host does not have, whatever the host.
        let mut absent = crate::language::by_name("go").unwrap().clone();
        absent.version = vec!["/nonexistent/koth-test/go".into(), "version".into()];
        // One it has: the shell every host has, standing in for a toolchain.
        let mut present = absent.clone();
        present.version = vec!["/bin/sh".into(), "-c".into(), "echo sh 1.0".into()];

        let auto = builder(ImagePolicy::Auto, &store);
        assert_eq!(auto.availability(&present).unwrap(), "host toolchain: sh 1.0");
        let why = auto.availability(&absent).unwrap_err();
        for part in
            ["no go image is built", "no Go 1.19 toolchain", "/nonexistent/koth-test/go", "koth languages build go", "local-base-image.sh"]
        {
            assert!(why.contains(part), "{part:?} not in {why:?}");
        }
        let host = builder(ImagePolicy::Host, &store);
        assert_eq!(host.availability(&present).unwrap(), "host toolchain: sh 1.0");
        assert!(host.availability(&absent).unwrap_err().contains("installs it on the runners' machines"));
        // Images only: the host's toolchain does not count.
        let images = builder(ImagePolicy::Images, &store);
        let why = images.availability(&present).unwrap_err();
        assert!(why.contains("koth languages build go") && why.contains("local-base-image.sh"), "{why}");
        let _ = std::fs::remove_dir_all(&store);
    }
}
