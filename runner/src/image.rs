//! Language images: the root filesystem a bot is compiled and run in.
//!
//! Each language has a Dockerfile (`languages/<name>/Dockerfile`). koth does
//! not run bots *in* Docker: it takes the image's filesystem and makes it the
//! read-only root of its own sandbox box, for the compile and for every run,
//! so a bot meets at run time exactly the libraries it was built against and
//! the same isolation applies to compilers and bots. Docker is only needed
//! where images are built; runners need the store.
//!
//! # The store
//!
//! ```text
//! <store>/rootfs/<image id>/     an image's filesystem, exported once, never modified
//! <store>/files/<xx>/<key>       one link to every file the roots share (see below)
//! <store>/languages/<name>.json  which image a language uses now, and its version
//! <store>/tmp/                   exports in progress
//! ```
//!
//! Fourteen languages on one Debian base repeat its files fourteen times
//! (3.6 of the 6.5 GB of all of koth's images). An export's regular files
//! are keyed by content and the metadata a hard link shares (mode, owner,
//! modification time); one already in `files/` replaces the new copy by a
//! hard link to it, and a new one gets a link there. The roots are never
//! written, so sharing an inode changes nothing a box sees. A file in
//! `files/` with a single link belongs to no root any more.
//!
//! The store is keyed by image id (the digest of the image's config), so
//! rebuilding an unchanged Dockerfile reuses the export, and an artifact
//! compiled in one image is never run in another (see [`crate::compile`]).
//! An export is unpacked under `tmp/` and renamed into `rootfs/` only when
//! complete; the language's pointer is written (by rename) only after the
//! new root passed a check run inside the sandbox. A build that fails or is
//! interrupted leaves the previous state in place.
//!
//! Without an exported image the host's `/` and toolchains stand in: the
//! "host" image, reported as such (`koth languages`).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use koth_sandbox::{run_once, Limits, SandboxConfig};
use serde::{Deserialize, Serialize};

use crate::language::{Language, Placeholders};

/// The id of the stand-in image: the host's own root.
pub const HOST: &str = "host";

/// A root filesystem bots of one language are compiled and run in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImageRoot {
    /// `sha256:...` for an exported Docker image, or [`HOST`].
    pub id: String,
    /// The folder that becomes the box's `/`.
    pub root: PathBuf,
    /// The toolchain's version line, when known.
    pub version: Option<String>,
}

impl ImageRoot {
    pub fn host() -> ImageRoot {
        ImageRoot { id: HOST.to_owned(), root: PathBuf::from("/"), version: None }
    }

    pub fn is_host(&self) -> bool {
        self.id == HOST
    }

    /// A short form of the id for people: `host` or the first 12 hex digits.
    pub fn short_id(&self) -> &str {
        let hex = self.id.strip_prefix("sha256:").unwrap_or(&self.id);
        &hex[..hex.len().min(12)]
    }
}

/// What the store knows of a language.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Pointer {
    language: String,
    image: String,
    tag: String,
    version: String,
    exported_unix: u64,
}

/// Where a language's image stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageStatus {
    Ready(ImageRoot),
    /// Never built into this store.
    Missing,
    /// The pointer exists but its root does not (or cannot be read).
    Broken(String),
}

/// A step of [`ImageStore::build`], for a progress display.
#[derive(Clone, Debug)]
pub enum Progress<'a> {
    /// A line of `docker build`'s output.
    Build(&'a str),
    /// Exporting the filesystem: bytes unpacked so far.
    Export(u64),
    /// The export's files already in the store, now shared with it.
    Shared(Shared),
    /// The image was exported before; reusing it.
    Reused,
    Checking,
}

/// Exported language images on this host.
#[derive(Clone, Debug)]
pub struct ImageStore {
    dir: PathBuf,
}

/// The Docker CLI to use (`KOTH_DOCKER`, default `docker` on `PATH`).
pub fn docker_cli() -> String {
    std::env::var("KOTH_DOCKER").unwrap_or_else(|_| "docker".to_owned())
}

/// The Docker engine's version, or why it cannot be reached.
pub fn docker_engine() -> Result<String, String> {
    let out = Command::new(docker_cli())
        .args(["version", "--format", "{{.Server.Version}}"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}; install Docker (Debian: apt-get install docker.io)", docker_cli()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "no Docker engine answers ({}); start it (e.g. `dockerd &` or `systemctl start docker`)",
            err.lines().last().unwrap_or("").trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn now_unix() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

impl ImageStore {
    pub fn open(dir: impl Into<PathBuf>) -> ImageStore {
        ImageStore { dir: dir.into() }
    }

    /// `KOTH_IMAGES`, or `/var/lib/koth/images`.
    pub fn default_dir() -> PathBuf {
        crate::state::images_dir()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn pointer_path(&self, language: &str) -> PathBuf {
        self.dir.join("languages").join(format!("{language}.json"))
    }

    fn rootfs(&self, id: &str) -> PathBuf {
        self.dir.join("rootfs").join(id.strip_prefix("sha256:").unwrap_or(id))
    }

    pub fn status(&self, lang: &Language) -> ImageStatus {
        let path = self.pointer_path(&lang.name);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return ImageStatus::Missing,
            Err(e) => return ImageStatus::Broken(format!("{}: {e}", path.display())),
        };
        let p: Pointer = match serde_json::from_slice(&text) {
            Ok(p) => p,
            Err(e) => return ImageStatus::Broken(format!("{}: {e}", path.display())),
        };
        let root = self.rootfs(&p.image);
        if !root.join("home").is_dir() {
            return ImageStatus::Broken(format!(
                "{} is missing or incomplete; rebuild with `koth languages build {}`",
                root.display(),
                lang.name
            ));
        }
        ImageStatus::Ready(ImageRoot { id: p.image, root, version: Some(p.version) })
    }

    /// The language's exported image, if ready.
    pub fn ready(&self, lang: &Language) -> Option<ImageRoot> {
        match self.status(lang) {
            ImageStatus::Ready(r) => Some(r),
            _ => None,
        }
    }

    /// Build the language's image with Docker, export its filesystem into the
    /// store (unless this image id was exported before), check that its
    /// toolchain runs inside a sandbox box, and make it the language's image.
    pub fn build(&self, lang: &Language, sandbox: &SandboxConfig, progress: &mut dyn FnMut(Progress<'_>)) -> Result<ImageRoot, String> {
        let dockerfile =
            lang.dockerfile.ok_or_else(|| format!("language {} has no Dockerfile (languages/{}/Dockerfile)", lang.name, lang.name))?;
        let tag = lang.image_tag();
        docker_build(&tag, dockerfile, progress)?;
        let id = image_id(&tag)?;
        let root = self.rootfs(&id);
        if root.join("home").is_dir() {
            progress(Progress::Reused);
        } else {
            self.export(&tag, &id, progress)?;
        }
        progress(Progress::Checking);
        let version = check_root(lang, &root, sandbox)?;
        let pointer = Pointer { language: lang.name.clone(), image: id.clone(), tag, version: version.clone(), exported_unix: now_unix() };
        write_atomically(&self.pointer_path(&lang.name), &serde_json::to_vec_pretty(&pointer).unwrap())
            .map_err(|e| format!("recording the image of {}: {e}", lang.name))?;
        Ok(ImageRoot { id, root, version: Some(version) })
    }

    /// `docker create` + `docker export`, unpacked under `tmp/`, renamed into place.
    fn export(&self, tag: &str, id: &str, progress: &mut dyn FnMut(Progress<'_>)) -> Result<(), String> {
        crate::state::private_dir(&self.dir).map_err(|e| format!("creating {}: {e}", self.dir.display()))?;
        let tmp_dir = self.dir.join("tmp");
        std::fs::create_dir_all(&tmp_dir).map_err(|e| format!("creating {}: {e}", tmp_dir.display()))?;
        std::fs::create_dir_all(self.dir.join("rootfs")).map_err(|e| format!("creating the store: {e}"))?;
        let hex = id.strip_prefix("sha256:").unwrap_or(id);
        let staging = tmp_dir.join(format!("{hex}.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir(&staging).map_err(|e| format!("creating {}: {e}", staging.display()))?;

        let container = docker_output(&["create", tag, "/bin/true"])?;
        let result = (|| {
            let mut child = Command::new(docker_cli())
                .args(["export", &container])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("running docker export: {e}"))?;
            let stdout = child.stdout.take().expect("piped");
            let counted = CountingReader { inner: stdout, count: 0, next_report: 0, progress };
            let mut archive = tar::Archive::new(counted);
            archive.set_preserve_permissions(true);
            archive.set_preserve_ownerships(true);
            archive.set_unpack_xattrs(false);
            archive.set_overwrite(false);
            let unpacked = archive.unpack(&staging);
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            let status = child.wait().map_err(|e| format!("waiting for docker export: {e}"))?;
            if !status.success() {
                return Err(format!("docker export failed: {}", err.trim()));
            }
            unpacked.map_err(|e| format!("unpacking the image's filesystem: {e}"))
        })();
        let _ = docker_output(&["rm", "-f", &container]);
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
        match share_identical_files(&staging, &self.dir.join("files")) {
            Ok(shared) => progress(Progress::Shared(shared)),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(format!("sharing the export's files with the store's: {e}"));
            }
        }
        let root = self.rootfs(id);
        match std::fs::rename(&staging, &root) {
            Ok(()) => Ok(()),
            // Another build exported the same image meanwhile: theirs is as good.
            Err(_) if root.join("home").is_dir() => {
                let _ = std::fs::remove_dir_all(&staging);
                Ok(())
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                Err(format!("moving the export into {}: {e}", root.display()))
            }
        }
    }
}

/// What [`share_identical_files`] found already in the store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shared {
    /// Files of the tree replaced by links to the store's.
    pub files: u64,
    /// Their bytes: the disk the tree no longer takes.
    pub bytes: u64,
}

/// Give `tree`'s regular files and the identical ones in `files` one inode
/// (module docs): a file whose key is there becomes a hard link to it, and
/// one whose key is not gets a link there. Symbolic links, empty files and
/// files already linked elsewhere are left alone. `tree` and `files` must be
/// on one filesystem; nothing else may write `tree` meanwhile.
pub fn share_identical_files(tree: &Path, files: &Path) -> std::io::Result<Shared> {
    use std::os::unix::fs::MetadataExt;
    let mut shared = Shared::default();
    let mut dirs = vec![tree.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let meta = std::fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                dirs.push(path);
                continue;
            }
            if !meta.is_file() || meta.len() == 0 || meta.nlink() != 1 {
                continue;
            }
            let key = file_key(&path, &meta)?;
            let stored = files.join(&key[..2]).join(&key);
            std::fs::create_dir_all(stored.parent().expect("has a parent"))?;
            match std::fs::hard_link(&path, &stored) {
                Ok(()) => {} // the first of its kind: the store keeps it now
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    // A new link in the store, renamed over the file: the
                    // tree never lacks the file, even if this stops
                    // half-way, and no name of the image's is touched.
                    let beside = files.join(format!(".link-{}", std::process::id()));
                    let _ = std::fs::remove_file(&beside);
                    match std::fs::hard_link(&stored, &beside) {
                        Ok(()) => {}
                        // The inode has as many links as the filesystem allows: keep the copy.
                        Err(e) if e.raw_os_error() == Some(libc::EMLINK) => continue,
                        Err(e) => return Err(e),
                    }
                    std::fs::rename(&beside, &path)?;
                    shared.files += 1;
                    shared.bytes += meta.len();
                }
                Err(e) => return Err(e),
            }
        }
    }
    Ok(shared)
}

/// The content's SHA-256 and what a hard link shares besides: two files with
/// one key can be one inode and nobody can tell.
fn file_key(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::MetadataExt;
    let mut hasher = Sha256::new();
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 256 << 10];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let digest: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{digest}-{:o}-{}-{}-{}.{}", meta.mode(), meta.uid(), meta.gid(), meta.mtime(), meta.mtime_nsec()))
}

struct CountingReader<'a, 'b, R> {
    inner: R,
    count: u64,
    next_report: u64,
    progress: &'a mut dyn FnMut(Progress<'b>),
}

impl<R: Read> Read for CountingReader<'_, '_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        if self.count >= self.next_report {
            (self.progress)(Progress::Export(self.count));
            self.next_report = self.count + (256 << 20);
        }
        Ok(n)
    }
}

/// Run the language's version command in a box on `root`: proves the root
/// works as a box's root and the toolchain runs as an unprivileged user.
pub fn check_root(lang: &Language, root: &Path, sandbox: &SandboxConfig) -> Result<String, String> {
    let cfg =
        SandboxConfig { root: root.to_path_buf(), limits: Limits { memory: 512 << 20, pids: 64, ..Limits::default() }, ..sandbox.clone() };
    let p = Placeholders { main: "main", memory_mb: Some(512) };
    let cmd = p.expand_all(&lang.version);
    let env = p.expand_env(&lang.env);
    let out = run_once(cfg, &cmd[0], &cmd[1..], &env, b"", |_| Ok(()))
        .map_err(|e| format!("checking {} in a sandbox box on {}: {e}", lang.name, root.display()))?;
    let text = if out.stdout.iter().any(|b| !b.is_ascii_whitespace()) { &out.stdout } else { &out.stderr };
    let first = String::from_utf8_lossy(text).lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
    if out.usage.outcome != koth_sandbox::Outcome::Ok {
        return Err(format!("{}: `{}` did not run in the image ({:?}): {first}", lang.name, cmd.join(" "), out.usage.outcome));
    }
    Ok(first)
}

fn docker_output(args: &[&str]) -> Result<String, String> {
    let out =
        Command::new(docker_cli()).args(args).stdin(Stdio::null()).output().map_err(|e| format!("running docker {}: {e}", args[0]))?;
    if !out.status.success() {
        return Err(format!("docker {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The image id (`sha256:...`) of a tag.
pub fn image_id(tag: &str) -> Result<String, String> {
    docker_output(&["image", "inspect", "--format", "{{.Id}}", tag])
}

/// `docker build -t <tag> -` with the Dockerfile on stdin (the Dockerfiles
/// need no build context), its output streamed to `progress`.
fn docker_build(tag: &str, dockerfile: &str, progress: &mut dyn FnMut(Progress<'_>)) -> Result<(), String> {
    let started = Instant::now();
    let mut child = Command::new(docker_cli())
        .args(["build", "--tag", tag, "-"])
        // The classic builder's plain output streams line by line.
        // (`.ci/run` builds the same Dockerfiles the same way before koth
        // is built, to fill this builder's cache: change both together.)
        .env("DOCKER_BUILDKIT", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}; install Docker (Debian: apt-get install docker.io)", docker_cli()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let text = dockerfile.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut s);
        s
    });
    let mut tail: Vec<String> = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        progress(Progress::Build(&line));
        tail.push(line);
        if tail.len() > 20 {
            tail.remove(0);
        }
    }
    let _ = writer.join();
    let err = err_reader.join().unwrap_or_default();
    let status = child.wait().map_err(|e| format!("waiting for docker build: {e}"))?;
    if !status.success() {
        return Err(format!("docker build of {tag} failed after {:.0?}:\n{}\n{}", started.elapsed(), tail.join("\n"), err.trim()));
    }
    Ok(())
}

/// Write a file by writing a temporary sibling and renaming it over.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("a file in a folder");
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    // Unique per writer: two threads may store the same key at once.
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{}.tmp.{}.{}",
        path.file_name().unwrap().to_string_lossy(),
        std::process::id(),
        SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    {
        // Root's only: artifacts hold bots' sources (see `crate::state`).
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_of_an_empty_store_is_missing_and_a_dangling_pointer_is_broken() {
        let dir = std::env::temp_dir().join(format!("koth-image-test-{}", std::process::id()));
        let store = ImageStore::open(&dir);
        let lang = crate::language::by_name("c").unwrap();
        assert_eq!(store.status(lang), ImageStatus::Missing);
        let p = Pointer {
            language: "c".into(),
            image: "sha256:abc".into(),
            tag: "koth-lang-c".into(),
            version: "gcc 12".into(),
            exported_unix: 0,
        };
        write_atomically(&store.pointer_path("c"), &serde_json::to_vec(&p).unwrap()).unwrap();
        assert!(matches!(store.status(lang), ImageStatus::Broken(m) if m.contains("koth languages build c")));
        std::fs::create_dir_all(store.rootfs("sha256:abc").join("home")).unwrap();
        match store.status(lang) {
            ImageStatus::Ready(r) => {
                assert_eq!(r.short_id(), "abc");
                assert_eq!(r.version.as_deref(), Some("gcc 12"));
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(store.pointer_path("c"), b"{not json").unwrap();
        assert!(matches!(store.status(lang), ImageStatus::Broken(_)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn identical_files_of_two_roots_become_one_inode_and_nothing_else_does() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = std::env::temp_dir().join(format!("koth-share-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = dir.join("files");
        let mtime = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        // Two roots, as two exports of images on one base would unpack them.
        let write = |root: &str, rel: &str, bytes: &[u8], mode: u32| {
            let p = dir.join(root).join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            std::fs::File::options().write(true).open(&p).unwrap().set_modified(mtime).unwrap();
        };
        for root in ["a", "b"] {
            write(root, "usr/lib/libc.so", b"the same library", 0o755);
            write(root, "etc/empty", b"", 0o644);
            write(root, "etc/os-release", b"the same text", 0o644);
        }
        write("a", "etc/hostname", b"alpha", 0o644);
        write("b", "etc/hostname", b"bravo", 0o644);
        write("a", "bin/tool", b"same bytes, other mode", 0o755);
        write("b", "bin/tool", b"same bytes, other mode", 0o700);
        write("b", "usr/lib/copy-of-libc.so", b"the same library", 0o755);
        // An image's own file with the name a temporary link might take.
        write("b", "usr/lib/.koth-shared-link", b"the image's own", 0o644);
        std::os::unix::fs::symlink("libc.so", dir.join("b/usr/lib/link.so")).unwrap();

        let first = share_identical_files(&dir.join("a"), &files).unwrap();
        assert_eq!(first, Shared::default(), "nothing in the store yet");
        let second = share_identical_files(&dir.join("b"), &files).unwrap();
        let same = b"the same library".len() as u64;
        assert_eq!(second, Shared { files: 3, bytes: 2 * same + b"the same text".len() as u64 });

        let ino = |p: &str| std::fs::symlink_metadata(dir.join(p)).unwrap().ino();
        assert_eq!(ino("a/usr/lib/libc.so"), ino("b/usr/lib/libc.so"));
        assert_eq!(ino("a/usr/lib/libc.so"), ino("b/usr/lib/copy-of-libc.so"), "a copy under another name too");
        assert_eq!(ino("a/etc/os-release"), ino("b/etc/os-release"));
        assert_ne!(ino("a/etc/hostname"), ino("b/etc/hostname"), "other content");
        assert_ne!(ino("a/bin/tool"), ino("b/bin/tool"), "other mode");
        assert_ne!(ino("a/etc/empty"), ino("b/etc/empty"), "empty files are left alone");
        assert!(std::fs::symlink_metadata(dir.join("b/usr/lib/link.so")).unwrap().file_type().is_symlink());
        // Every file reads and looks as it did.
        assert_eq!(std::fs::read(dir.join("b/etc/hostname")).unwrap(), b"bravo");
        assert_eq!(std::fs::read(dir.join("b/usr/lib/copy-of-libc.so")).unwrap(), b"the same library");
        let tool = std::fs::metadata(dir.join("b/bin/tool")).unwrap();
        assert_eq!((tool.mode() & 0o777, tool.modified().unwrap()), (0o700, mtime));
        assert_eq!(std::fs::read(dir.join("b/usr/lib/.koth-shared-link")).unwrap(), b"the image's own");
        let left: Vec<_> =
            std::fs::read_dir(&files).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().starts_with('.')).collect();
        assert!(left.is_empty(), "no temporary link left: {left:?}");
        // Sharing a root again changes nothing.
        assert_eq!(share_identical_files(&dir.join("b"), &files).unwrap(), Shared::default());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
