//! What a bot author submits, checked and normalised: one source file, an
//! archive (tar, tar.gz / tgz, zip) or a folder on disk becomes a sorted list
//! of [`SourceFile`]s plus the language and the main file.
//!
//! This is the trust boundary for uploaded archives. Hostile input gets a
//! [`SubmissionError`] saying what is wrong and what to do about it; it never
//! crashes the host, never names a file outside the bot's folder and never
//! makes us allocate more than the limits allow.
//!
//! # Rules
//!
//! **Recognising an upload.** By its first bytes, never by its name: gzip
//! (`1f 8b`, holding a tar), zip (`PK\x03\x04`, or `PK\x05\x06` for an empty
//! zip) or tar (`ustar` at offset 257; whole blocks of zeros are an empty
//! tar). Anything else is a single source file
//! whose extension picks the language; a name ending in `.zip`, `.tar`,
//! `.tgz` or `.gz` whose bytes are none of these is an error. An upload is at
//! most [`SubmissionLimits::max_upload_bytes`] (= `max_total_bytes`) long.
//!
//! **Paths.** Every entry name must be UTF-8 without NUL, control characters
//! or backslashes, must not be absolute (`/x`, `C:/x`) and must not contain a
//! `..` component anywhere. It is normalised: `.` and empty components go
//! (`./a//b` becomes `a/b`). A normalised path is at most `max_path_len`
//! bytes, each component at most 255 bytes, and at most `max_depth`
//! components deep (`a/b/c.py` is 3 deep). The same path twice, or a path
//! that is both a file and a folder, is an error.
//!
//! **Entry kinds.** Regular files and folders. A symbolic link is accepted
//! only if its target, resolved relative to the link's folder, is a regular
//! file inside the archive; a hard link likewise, its target resolved from
//! the archive's root. Such a link becomes a plain copy of its target's bytes
//! (chains are followed up to [`MAX_LINK_HOPS`] links). A link that is
//! absolute or climbs out with `..` is an error, as is a link to a folder or
//! to nothing. Devices, FIFOs, sockets, sparse files and unknown kinds are
//! errors; encrypted zip entries too. pax global headers (`git archive`
//! writes one) and the `__MACOSX/` folder that macOS adds to zips are
//! skipped. On disk, every symbolic link below the submitted folder is an
//! error (the folder itself may be reached through one).
//!
//! **Limits**, enforced while reading, never trusting a declared size: each
//! file is read through `take(limit + 1)`, so at most `max_file_bytes` per
//! file and `max_total_bytes` for all files together (uncompressed, copies
//! made for links included); at most `max_files` files (links count); at
//! most `4 × max_files` (and at least 64) entries of any kind, folders
//! included, so a million empty entries stop early; the decompressed tar
//! stream, headers and skipped data included, is capped a little above
//! `max_total_bytes`. A zip entry whose data differs from its declared size,
//! and a tar truncated inside an entry, are damaged archives. Memory spent on
//! a zip's central directory is bounded by the upload's size (it is parsed by
//! the `zip` crate, which also rejects entry counts the directory cannot
//! hold).
//!
//! **Layout.** A folder wrapping everything in an archive (what
//! `tar czf bot.tgz mybot/` makes) is stripped. Then the manifest
//! [`MANIFEST`] at the top, `{"language": "python", "main": "src/bot.py"}`
//! (no other fields), names the language and the main file (a path, which
//! must be among the files); it is removed from the files. Without a
//! manifest, the main file is the one top-level file named `bot.<ext>` or
//! `main.<ext>` (the stem in any case: `Main.cpp`, `BOT.py`) whose extension
//! belongs to a language; none or several such files is an error. The main
//! file must not be empty (other files may be). A single uploaded file is its
//! own main file, whatever its name.
//!
//! The executable bit comes from the tar mode, the zip entry's unix mode or
//! the file's permissions on disk (any of the `0o111` bits).

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{self, Read};
use std::path::Path;
use std::rc::Rc;

use sha2::{Digest, Sha256};

use crate::artifact::Artifact;
use crate::language::{self, Language};

/// The manifest's name, at the top of a bot's folder or archive.
pub const MANIFEST: &str = "koth.json";

/// The longest chain of links followed to reach a file.
pub const MAX_LINK_HOPS: usize = 16;

/// The longest single path component, in bytes (Linux's `NAME_MAX`).
const NAME_MAX: usize = 255;

/// The longest link target read from a zip entry (Linux's `PATH_MAX`).
const MAX_LINK_TARGET: u64 = 4096;

/// File types in a unix mode (`st_mode & S_IFMT`).
const S_IFMT: u32 = 0o170_000;
const S_IFSOCK: u32 = 0o140_000;
const S_IFLNK: u32 = 0o120_000;
const S_IFREG: u32 = 0o100_000;
const S_IFBLK: u32 = 0o060_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFCHR: u32 = 0o020_000;
const S_IFIFO: u32 = 0o010_000;

/// One file of a bot's source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// Relative, `/`-separated, normalised (see the module's rules).
    pub path: String,
    pub bytes: Vec<u8>,
    pub executable: bool,
}

/// How much a submission may hold.
#[derive(Clone, Debug)]
pub struct SubmissionLimits {
    /// Bytes in one file.
    pub max_file_bytes: u64,
    /// Bytes in all files together, uncompressed; also the largest upload.
    pub max_total_bytes: u64,
    /// Files, links included (folders are not files, but see
    /// [`SubmissionLimits::max_entries`]).
    pub max_files: usize,
    /// Components in a path (`a/b/c.py` is 3).
    pub max_depth: usize,
    /// Bytes in a normalised path.
    pub max_path_len: usize,
}

impl Default for SubmissionLimits {
    /// 16 MiB per file, 32 MiB in all (and per upload), 256 files, 16 deep,
    /// paths of at most 255 bytes.
    fn default() -> Self {
        SubmissionLimits { max_file_bytes: 16 << 20, max_total_bytes: 32 << 20, max_files: 256, max_depth: 16, max_path_len: 255 }
    }
}

impl SubmissionLimits {
    /// The largest upload accepted (compressed bytes, or one source file).
    pub fn max_upload_bytes(&self) -> u64 {
        self.max_total_bytes
    }

    /// Entries of any kind (files, folders, links, skipped entries) in an
    /// archive or under a folder: `4 × max_files`, at least 64.
    pub fn max_entries(&self) -> usize {
        self.max_files.saturating_mul(4).max(64)
    }

    /// The most bytes a decompressed tar stream may hold: the files, plus
    /// room for headers, padding and name extensions of every entry.
    fn max_tar_stream(&self) -> u64 {
        let per_entry = 4096u64.saturating_mul(self.max_entries() as u64);
        self.max_total_bytes.saturating_add(per_entry).saturating_add(1 << 20)
    }
}

/// A checked submission: its language, main file and sources.
#[derive(Clone, Debug)]
pub struct Submission {
    pub language: &'static Language,
    /// The main file's path, one of `files`.
    pub main: String,
    /// Sorted by path; the manifest removed; the main file included.
    pub files: Vec<SourceFile>,
}

/// Why a submission was refused. Every message says what is wrong and what
/// to do about it.
#[derive(Debug, thiserror::Error)]
pub enum SubmissionError {
    #[error("{name:?} is empty (0 bytes); upload the bot's source file, or an archive (.tar, .tar.gz, .zip) of its folder")]
    EmptyUpload { name: String },

    #[error("{name:?} is larger than the {limit}-byte upload limit; leave out build outputs, data files and version-control folders")]
    UploadTooLarge { name: String, limit: u64 },

    #[error("cannot tell the language of {name:?} from its extension {ext:?}; name the file with one of the extensions {known}, or upload an archive with a koth.json manifest naming the language")]
    UnknownExtension { name: String, ext: String, known: String },

    #[error("{name:?} has no usable file name; name the file after its language, e.g. bot.py")]
    NoFileName { name: String },

    #[error("{name:?} is named like a {kind} archive but is not one (it does not start like a tar, gzip or zip file); re-create it with `tar czf bot.tar.gz <folder>` or `zip -r bot.zip <folder>`")]
    NotAnArchive { name: String, kind: &'static str },

    #[error("{name:?} is not a tar, tar.gz or zip archive; upload the whole folder as one: `tar czf game.tar.gz <folder>`")]
    FolderExpected { name: String },

    #[error("{name:?} is not a readable {kind} archive ({detail}); re-create it with `tar czf bot.tar.gz <folder>` or `zip -r bot.zip <folder>` (zip: stored or deflate only)")]
    CorruptArchive { name: String, kind: &'static str, detail: String },

    #[error("{name:?} unpacks to more than {limit} bytes of archive data; leave out build outputs and data files")]
    ArchiveTooLarge { name: String, limit: u64 },

    #[error("entry {entry:?} is an absolute path; put all files under one folder and archive that folder (relative paths only)")]
    AbsolutePath { entry: String },

    #[error("entry {entry:?} leaves the bot's folder (.. is not allowed); put all files under one folder")]
    ParentDir { entry: String },

    #[error("entry {entry:?} has an unusable name ({why}); rename it")]
    BadName { entry: String, why: &'static str },

    #[error("entry {entry:?} has a path of {len} bytes, over the {limit}-byte limit (255 bytes per name); use shorter names or fewer nested folders")]
    PathTooLong { entry: String, len: usize, limit: usize },

    #[error("entry {entry:?} is {depth} levels deep, over the limit of {limit}; flatten the folder structure")]
    TooDeep { entry: String, depth: usize, limit: usize },

    #[error("entry {entry:?} appears more than once; keep one copy of it")]
    Duplicate { entry: String },

    #[error("{entry:?} is both a file and a folder; rename one of them")]
    FileFolderClash { entry: String },

    #[error("entry {entry:?} is a link to {target:?}, which leaves the bot's folder (absolute or climbing out with ..); replace the link with a copy of the file")]
    LinkEscapes { entry: String, target: String },

    #[error("entry {entry:?} is a link to {target:?}, which is not a file in the archive (links may only point to regular files in it); replace the link with a copy of the file")]
    LinkTargetMissing { entry: String, target: String },

    #[error("entry {entry:?} starts a chain of more than 16 links, or a loop; replace the links with copies of the file")]
    LinkChain { entry: String },

    #[error("{path:?} is a symbolic link; links in a bot's folder are not followed; replace it with a copy of the file")]
    SymlinkOnDisk { path: String },

    #[error("entry {entry:?} is a {kind}; only regular files and folders (and, in archives, links to files in the archive) are allowed; remove it")]
    UnsupportedEntry { entry: String, kind: String },

    #[error("archive entry {entry:?} is encrypted; upload an archive without a password")]
    Encrypted { entry: String },

    #[error("{entry:?} is larger than the {limit}-byte limit for one file; leave out large data files")]
    FileTooLarge { entry: String, limit: u64 },

    #[error(
        "the files add up to more than the {limit}-byte limit (uncompressed, link copies included); leave out build outputs and data files"
    )]
    TotalTooLarge { limit: u64 },

    #[error("more than {limit} files; leave out build outputs, dependencies and version-control folders")]
    TooManyFiles { limit: usize },

    #[error("more than {limit} entries (files, folders and links); leave out build outputs, dependencies and version-control folders")]
    TooManyEntries { limit: usize },

    #[error("{name} holds no files; put the bot's source files in it (an archive should hold the bot's folder)")]
    NoFiles { name: String },

    #[error("no main file among the top-level files ({found}); name it bot.<ext> or main.<ext> with ext one of {known}, or add a koth.json such as {{\"language\": \"python\", \"main\": \"my_bot.py\"}}")]
    NoMain { found: String, known: String },

    #[error("more than one possible main file ({candidates}); keep one, or add a koth.json naming the main file, e.g. {{\"language\": \"python\", \"main\": \"bot.py\"}}")]
    AmbiguousMain { candidates: String },

    #[error("the main file {main:?} is empty; submit the bot's source code")]
    EmptyMain { main: String },

    #[error("koth.json is invalid ({detail}); it must be exactly {{\"language\": \"python\", \"main\": \"my_bot.py\"}}")]
    BadManifest { detail: String },

    #[error("koth.json names the unknown language {language:?}; use one of {known}")]
    UnknownLanguage { language: String, known: String },

    #[error("koth.json names the main file {main:?}, which is not among the submitted files; give its path relative to the bot's folder, e.g. \"src/bot.py\"")]
    MainMissing { main: String },

    #[error("cannot read {path:?}: {source}; check that it exists and is readable")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

use SubmissionError as E;

/// A bot folder's manifest.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    language: String,
    main: String,
}

impl Submission {
    /// One uploaded file: a single source file, or an archive (tar,
    /// tar.gz / tgz, zip) recognised by its magic bytes (gzip `1f 8b`, zip
    /// `PK\x03\x04` or empty-zip `PK\x05\x06`, tar `ustar` at offset 257).
    /// The name is used for single files (its extension picks the language)
    /// and in messages.
    pub fn from_upload(file_name: &str, bytes: &[u8], limits: &SubmissionLimits) -> Result<Submission, SubmissionError> {
        let name = shown(file_name.as_bytes());
        if bytes.is_empty() {
            return Err(E::EmptyUpload { name });
        }
        if bytes.len() as u64 > limits.max_upload_bytes() {
            return Err(E::UploadTooLarge { name, limit: limits.max_upload_bytes() });
        }
        if bytes.starts_with(&[0x1f, 0x8b]) {
            let stream = flate2::read::MultiGzDecoder::new(bytes);
            return finish_archive(&name, read_tar(&name, "tar.gz", stream, limits)?, limits);
        }
        if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            return finish_archive(&name, read_zip(&name, bytes, limits)?, limits);
        }
        if bytes.len() >= 262 && &bytes[257..262] == b"ustar" {
            return finish_archive(&name, read_tar(&name, "tar", bytes, limits)?, limits);
        }
        if bytes.len() & 511 == 0 && bytes.iter().all(|b| *b == 0) {
            // What `tar cf x.tar --files-from /dev/null` writes: only the end.
            return Err(E::NoFiles { name: format!("{name:?}") });
        }
        let lower = file_name.to_ascii_lowercase();
        for (suffix, kind) in [(".zip", "zip"), (".tar", "tar"), (".tgz", "tar.gz"), (".gz", "gzip")] {
            if lower.ends_with(suffix) {
                return Err(E::NotAnArchive { name, kind });
            }
        }
        // A browser may send "C:\fakepath\bot.py": keep the last component.
        let base = file_name.rsplit(['/', '\\']).next().unwrap_or("");
        let path = match normalise(base.as_bytes())? {
            Some(p) if !p.contains('/') => p,
            _ => return Err(E::NoFileName { name }),
        };
        let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        let lang = language::by_extension(ext).ok_or_else(|| E::UnknownExtension {
            name: name.clone(),
            ext: ext.to_owned(),
            known: language::extensions_list(),
        })?;
        let file = SourceFile { path, bytes: bytes.to_vec(), executable: false };
        finish(vec![file], limits, Some(lang))
    }

    /// The files of an uploaded archive (tar, tar.gz, zip), checked as a
    /// submission's are (names, sizes, counts, links, one enclosing folder
    /// stripped) but with no language or main file looked for: a game's
    /// folder, which holds programs in several languages. A single file is
    /// refused.
    pub fn archive_files(file_name: &str, bytes: &[u8], limits: &SubmissionLimits) -> Result<Vec<SourceFile>, SubmissionError> {
        let name = shown(file_name.as_bytes());
        if bytes.is_empty() {
            return Err(E::EmptyUpload { name });
        }
        if bytes.len() as u64 > limits.max_upload_bytes() {
            return Err(E::UploadTooLarge { name, limit: limits.max_upload_bytes() });
        }
        let tree = if bytes.starts_with(&[0x1f, 0x8b]) {
            archive_tree(&name, read_tar(&name, "tar.gz", flate2::read::MultiGzDecoder::new(bytes), limits)?, limits)?
        } else if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            archive_tree(&name, read_zip(&name, bytes, limits)?, limits)?
        } else if bytes.len() >= 262 && &bytes[257..262] == b"ustar" {
            archive_tree(&name, read_tar(&name, "tar", bytes, limits)?, limits)?
        } else {
            return Err(E::FolderExpected { name });
        };
        checked_files(tree, limits)
    }

    /// A folder's files, checked as [`Submission::archive_files`]'s are.
    pub fn folder_files(dir: &Path, limits: &SubmissionLimits) -> Result<Vec<SourceFile>, SubmissionError> {
        checked_files(read_folder(dir, limits)?, limits)
    }

    /// A path on disk (used by `koth match` and the CLI): a file (a source
    /// file or an archive, as [`Submission::from_upload`]) or a folder,
    /// walked recursively. Below the folder only regular files and folders
    /// are allowed (symbolic links are refused); the same limits apply.
    pub fn from_path(path: &Path, limits: &SubmissionLimits) -> Result<Submission, SubmissionError> {
        let io_err = |source| E::Io { path: path.display().to_string(), source };
        let meta = fs::metadata(path).map_err(io_err)?;
        if meta.is_dir() {
            let files = read_folder(path, limits)?;
            if files.is_empty() {
                return Err(E::NoFiles { name: format!("{:?}", path.display().to_string()) });
            }
            return finish(files, limits, None);
        }
        if !meta.is_file() {
            let kind = disk_kind(&meta.file_type());
            return Err(E::UnsupportedEntry { entry: path.display().to_string(), kind: kind.to_owned() });
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let cap = limits.max_upload_bytes();
        let mut bytes = Vec::new();
        fs::File::open(path).and_then(|f| f.take(cap.saturating_add(1)).read_to_end(&mut bytes)).map_err(io_err)?;
        if bytes.len() as u64 > cap {
            return Err(E::UploadTooLarge { name, limit: cap });
        }
        Submission::from_upload(&name, &bytes, limits)
    }

    /// A program in a folder whose main file is named rather than found
    /// (an external game's referee, `game.json`'s `referee.main`): the
    /// language is `language`, else the main file's extension's. The
    /// top-level entries named in `leave_out` (the game's manifest, its
    /// example bots) are not part of it; the same limits apply.
    pub fn from_folder_main(
        dir: &Path,
        main: &str,
        language: Option<&str>,
        leave_out: &[&str],
        limits: &SubmissionLimits,
    ) -> Result<Submission, SubmissionError> {
        let mut files = read_folder(dir, limits)?;
        files.retain(|f| !leave_out.iter().any(|l| f.path == *l || f.path.starts_with(&format!("{l}/"))) && f.path != MANIFEST);
        let language = match language {
            Some(l) => l.to_owned(),
            None => {
                let ext = main.rsplit_once('.').map_or("", |(_, e)| e);
                let lang = language::by_extension(ext).ok_or_else(|| E::UnknownExtension {
                    name: main.to_owned(),
                    ext: ext.to_owned(),
                    known: language::extensions_list(),
                })?;
                lang.name.clone()
            }
        };
        let manifest = serde_json::json!({ "language": language, "main": main }).to_string().into_bytes();
        files.push(SourceFile { path: MANIFEST.into(), bytes: manifest, executable: false });
        finish(files, limits, None)
    }

    /// The shared last step: check paths, sizes and counts, then find the
    /// language and main file from the manifest or the file names.
    pub fn from_files(files: Vec<SourceFile>, limits: &SubmissionLimits) -> Result<Submission, SubmissionError> {
        finish(files, limits, None)
    }

    /// The sources as stored ([`stored_tar`]).
    pub fn source_tar(&self) -> Vec<u8> {
        stored_tar(&self.files)
    }

    /// Stored sources ([`Submission::source_tar`]) as a submission again:
    /// they were checked when submitted; the language must still exist.
    pub fn from_stored(language: &str, main: &str, source_tar: &[u8]) -> Result<Submission, String> {
        let language = language::by_name(language).ok_or_else(|| format!("language {language:?} is no longer available"))?;
        let files = stored_files(source_tar).map_err(|e| format!("stored sources: {e}"))?;
        Ok(Submission { language, main: main.to_owned(), files })
    }

    /// sha256 (hex) over the language's name, the main file and every file
    /// (path, executable flag, length, bytes) in path order: equal
    /// submissions hash equal, any change changes it.
    pub fn source_hash(&self) -> String {
        fn field(h: &mut Sha256, bytes: &[u8]) {
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
        let mut h = Sha256::new();
        h.update(b"koth-submission-v1\0");
        field(&mut h, self.language.name.as_bytes());
        field(&mut h, self.main.as_bytes());
        let mut files: Vec<&SourceFile> = self.files.iter().collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        h.update((files.len() as u64).to_le_bytes());
        for f in files {
            field(&mut h, f.path.as_bytes());
            h.update([u8::from(f.executable)]);
            field(&mut h, &f.bytes);
        }
        hex::encode(h.finalize())
    }
}

/// Checked files as koth stores them (a bot version's sources, an added
/// game's folder): an uncompressed tar ([`Artifact::to_tar`]), equal files
/// giving equal bytes.
pub fn stored_tar(files: &[SourceFile]) -> Vec<u8> {
    let files = files
        .iter()
        .map(|f| koth_sandbox::TreeFile { path: f.path.clone(), bytes: f.bytes.clone(), mode: if f.executable { 0o755 } else { 0o644 } })
        .collect();
    Artifact { files }.to_tar()
}

/// Files stored by [`stored_tar`], read back (paths checked by
/// [`Artifact::from_tar`]).
pub fn stored_files(tar: &[u8]) -> Result<Vec<SourceFile>, String> {
    Ok(Artifact::from_tar(tar)?
        .files
        .into_iter()
        .map(|f| SourceFile { path: f.path, bytes: f.bytes, executable: f.mode & 0o111 != 0 })
        .collect())
}

/// A name for messages: lossy UTF-8, cut short if very long.
fn shown(raw: &[u8]) -> String {
    const MAX_CHARS: usize = 160;
    let s = String::from_utf8_lossy(raw);
    if s.chars().count() <= MAX_CHARS {
        return s.into_owned();
    }
    let mut cut: String = s.chars().take(MAX_CHARS).collect();
    cut.push('…');
    cut
}

/// Check one entry name and return its normal form (components joined by
/// `/`), or `None` for the root itself (`""`, `.`, `./`).
fn normalise(raw: &[u8]) -> Result<Option<String>, SubmissionError> {
    let bad = |why| E::BadName { entry: shown(raw), why };
    let s = std::str::from_utf8(raw).map_err(|_| bad("not UTF-8"))?;
    if s.contains('\0') {
        return Err(bad("it contains a NUL byte"));
    }
    if s.chars().any(char::is_control) {
        return Err(bad("it contains a control character"));
    }
    if s.contains('\\') {
        return Err(bad("it contains a backslash; use / between folders"));
    }
    if s.starts_with('/') {
        return Err(E::AbsolutePath { entry: shown(raw) });
    }
    let mut parts = Vec::new();
    for c in s.split('/') {
        match c {
            "" | "." => {}
            ".." => return Err(E::ParentDir { entry: shown(raw) }),
            _ => {
                if parts.is_empty() && is_drive(c) {
                    return Err(E::AbsolutePath { entry: shown(raw) });
                }
                if c.len() > NAME_MAX {
                    return Err(E::PathTooLong { entry: shown(raw), len: c.len(), limit: NAME_MAX });
                }
                parts.push(c);
            }
        }
    }
    Ok(if parts.is_empty() { None } else { Some(parts.join("/")) })
}

/// `C:`: the start of a Windows absolute path.
fn is_drive(component: &str) -> bool {
    let b = component.as_bytes();
    b.len() == 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Length and depth limits on a normalised path; `slack` extra components
/// (and a component's worth of bytes each) are allowed for a wrapping folder
/// not yet stripped.
fn check_shape(path: &str, limits: &SubmissionLimits, slack: usize) -> Result<(), SubmissionError> {
    let len_limit = limits.max_path_len.saturating_add(slack * (NAME_MAX + 1));
    if path.len() > len_limit {
        return Err(E::PathTooLong { entry: shown(path.as_bytes()), len: path.len(), limit: limits.max_path_len });
    }
    let depth = path.split('/').count();
    if depth > limits.max_depth.saturating_add(slack) {
        return Err(E::TooDeep { entry: shown(path.as_bytes()), depth, limit: limits.max_depth });
    }
    Ok(())
}

/// Every proper ancestor folder of a normalised path (`a/b/c` → `a`, `a/b`).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

/// The final step for every source: checks, manifest, main file.
fn finish(files: Vec<SourceFile>, limits: &SubmissionLimits, single: Option<&'static Language>) -> Result<Submission, SubmissionError> {
    let mut files = checked_files(files, limits)?;
    let (language, main) = match single {
        Some(lang) => (lang, files[0].path.clone()),
        None => match files.iter().position(|f| f.path == MANIFEST) {
            Some(i) => {
                let manifest = files.remove(i);
                read_manifest(&manifest.bytes, &files)?
            }
            None => find_main(&files)?,
        },
    };
    let main_file = files.iter().find(|f| f.path == main).ok_or_else(|| E::MainMissing { main: main.clone() })?;
    if main_file.bytes.is_empty() {
        return Err(E::EmptyMain { main });
    }
    Ok(Submission { language, main, files })
}

/// Paths, sizes, counts and clashes checked; sorted by path.
fn checked_files(mut files: Vec<SourceFile>, limits: &SubmissionLimits) -> Result<Vec<SourceFile>, SubmissionError> {
    if files.is_empty() {
        return Err(E::NoFiles { name: "the submission".into() });
    }
    if files.len() > limits.max_files {
        return Err(E::TooManyFiles { limit: limits.max_files });
    }
    let mut total: u64 = 0;
    for f in &mut files {
        f.path = normalise(f.path.as_bytes())?.ok_or_else(|| E::BadName { entry: shown(f.path.as_bytes()), why: "the path is empty" })?;
        check_shape(&f.path, limits, 0)?;
        let len = f.bytes.len() as u64;
        if len > limits.max_file_bytes {
            return Err(E::FileTooLarge { entry: f.path.clone(), limit: limits.max_file_bytes });
        }
        total = total.saturating_add(len);
        if total > limits.max_total_bytes {
            return Err(E::TotalTooLarge { limit: limits.max_total_bytes });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(w) = files.windows(2).find(|w| w[0].path == w[1].path) {
        return Err(E::Duplicate { entry: w[0].path.clone() });
    }
    let paths: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for f in &files {
        if let Some(a) = ancestors(&f.path).find(|a| paths.contains(a)) {
            return Err(E::FileFolderClash { entry: a.to_owned() });
        }
    }
    Ok(files)
}

fn read_manifest(text: &[u8], files: &[SourceFile]) -> Result<(&'static Language, String), SubmissionError> {
    let m: Manifest = serde_json::from_slice(text).map_err(|e| E::BadManifest { detail: e.to_string() })?;
    let language =
        language::by_name(&m.language).ok_or_else(|| E::UnknownLanguage { language: m.language.clone(), known: language::names_list() })?;
    let main = match normalise(m.main.as_bytes()) {
        Ok(Some(p)) => p,
        Ok(None) => return Err(E::MainMissing { main: m.main }),
        Err(e) => return Err(E::BadManifest { detail: format!("main: {e}") }),
    };
    if !files.iter().any(|f| f.path == main) {
        return Err(E::MainMissing { main: m.main });
    }
    Ok((language, main))
}

/// The one top-level `bot.<ext>` / `main.<ext>` with a known extension.
fn find_main(files: &[SourceFile]) -> Result<(&'static Language, String), SubmissionError> {
    let top: Vec<&str> = files.iter().map(|f| f.path.as_str()).filter(|p| !p.contains('/')).collect();
    let candidates: Vec<(&'static Language, &str)> = top
        .iter()
        .filter_map(|p| {
            let (stem, ext) = p.rsplit_once('.')?;
            let named = stem.eq_ignore_ascii_case("bot") || stem.eq_ignore_ascii_case("main");
            if named {
                language::by_extension(ext).map(|l| (l, *p))
            } else {
                None
            }
        })
        .collect();
    match candidates.as_slice() {
        [(lang, main)] => Ok((lang, (*main).to_owned())),
        [] => {
            let mut found: Vec<String> = top.iter().take(10).map(|p| format!("{p:?}")).collect();
            if top.len() > 10 {
                found.push("…".into());
            }
            let found = if found.is_empty() { "none".to_owned() } else { found.join(", ") };
            Err(E::NoMain { found, known: language::extensions_list() })
        }
        many => {
            let names: Vec<String> = many.iter().map(|(_, p)| format!("{p:?}")).collect();
            Err(E::AmbiguousMain { candidates: names.join(", ") })
        }
    }
}

// ---------------------------------------------------------------------------
// Archives

/// An archive entry as read, before links are resolved.
enum Node {
    File {
        bytes: Vec<u8>,
        executable: bool,
    },
    Dir,
    /// A link's raw target; a hard link's is relative to the archive's root,
    /// a symbolic link's to the link's folder.
    Link {
        target: Vec<u8>,
        hard: bool,
    },
}

/// Gathers an archive's entries, enforcing the limits as it goes.
struct Collector<'a> {
    limits: &'a SubmissionLimits,
    nodes: BTreeMap<String, Node>,
    entries: usize,
    files: usize,
    total: u64,
}

impl<'a> Collector<'a> {
    fn new(limits: &'a SubmissionLimits) -> Self {
        Collector { limits, nodes: BTreeMap::new(), entries: 0, files: 0, total: 0 }
    }

    /// Count one entry of any kind.
    fn entry(&mut self) -> Result<(), SubmissionError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries() {
            return Err(E::TooManyEntries { limit: self.limits.max_entries() });
        }
        Ok(())
    }

    /// The normalised path of an entry, `None` for the root itself and for
    /// entries skipped on purpose (`__MACOSX/`).
    fn path(&self, raw: &[u8]) -> Result<Option<String>, SubmissionError> {
        let Some(path) = normalise(raw)? else { return Ok(None) };
        check_shape(&path, self.limits, 1)?;
        if path == "__MACOSX" || path.starts_with("__MACOSX/") {
            return Ok(None);
        }
        Ok(Some(path))
    }

    /// Claim a path for a file or link (counting it) or a folder, before its
    /// data is read. Returns false for a folder seen before.
    fn claim(&mut self, path: &str, dir: bool) -> Result<bool, SubmissionError> {
        match (self.nodes.get(path), dir) {
            (None, _) => {}
            (Some(Node::Dir), true) => return Ok(false),
            (Some(Node::Dir), false) | (Some(_), true) => return Err(E::FileFolderClash { entry: path.to_owned() }),
            (Some(_), false) => return Err(E::Duplicate { entry: path.to_owned() }),
        }
        if !dir {
            self.files += 1;
            if self.files > self.limits.max_files {
                return Err(E::TooManyFiles { limit: self.limits.max_files });
            }
        }
        Ok(true)
    }

    /// Read one file's data through `take(limit + 1)`: at most the per-file
    /// limit and what is left of the total. `declared`, when given, must
    /// match what was read.
    fn read_data(
        &mut self,
        entry: &str,
        r: impl Read,
        declared: Option<u64>,
        fail: &dyn Fn(io::Error) -> SubmissionError,
    ) -> Result<Vec<u8>, SubmissionError> {
        let left = self.limits.max_total_bytes.saturating_sub(self.total);
        let cap = self.limits.max_file_bytes.min(left);
        let mut bytes = Vec::new();
        r.take(cap.saturating_add(1)).read_to_end(&mut bytes).map_err(fail)?;
        let len = bytes.len() as u64;
        if len > cap {
            return Err(if cap == self.limits.max_file_bytes {
                E::FileTooLarge { entry: entry.to_owned(), limit: self.limits.max_file_bytes }
            } else {
                E::TotalTooLarge { limit: self.limits.max_total_bytes }
            });
        }
        if let Some(d) = declared.filter(|d| *d != len) {
            let what = format!("it holds {len} bytes but its header says {d}");
            return Err(fail(io::Error::new(io::ErrorKind::InvalidData, what)));
        }
        self.total += len;
        Ok(bytes)
    }

    fn insert(&mut self, path: String, node: Node) {
        self.nodes.insert(path, node);
    }
}

/// A reader that fails once more than `left` bytes have come through.
struct Capped<R> {
    inner: R,
    left: u64,
    tripped: Rc<Cell<bool>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the cap: fine if the stream ends here, an error otherwise.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => {
                    self.tripped.set(true);
                    Err(io::Error::new(io::ErrorKind::InvalidData, "archive stream over its limit"))
                }
            };
        }
        let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

fn read_tar<'l>(name: &str, kind: &'static str, stream: impl Read, limits: &'l SubmissionLimits) -> Result<Collector<'l>, SubmissionError> {
    let tripped = Rc::new(Cell::new(false));
    let capped = Capped { inner: stream, left: limits.max_tar_stream(), tripped: tripped.clone() };
    let fail = |e: io::Error| {
        if tripped.get() {
            E::ArchiveTooLarge { name: name.to_owned(), limit: limits.max_tar_stream() }
        } else {
            E::CorruptArchive { name: name.to_owned(), kind, detail: e.to_string() }
        }
    };
    let mut c = Collector::new(limits);
    let mut archive = tar::Archive::new(capped);
    for entry in archive.entries().map_err(fail)? {
        let mut entry = entry.map_err(fail)?;
        c.entry()?;
        let ty = entry.header().entry_type();
        if ty == tar::EntryType::XGlobalHeader {
            continue;
        }
        let raw = entry.path_bytes().into_owned();
        let Some(path) = c.path(&raw)? else { continue };
        match ty {
            tar::EntryType::Regular | tar::EntryType::Continuous if raw.ends_with(b"/") => {
                // Old tars mark folders with a trailing slash only.
                if c.claim(&path, true)? {
                    c.insert(path, Node::Dir);
                }
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                c.claim(&path, false)?;
                let executable = entry.header().mode().map(|m| m & 0o111 != 0).unwrap_or(false);
                let declared = entry.size();
                let in_entry = |e: io::Error| match fail(e) {
                    E::CorruptArchive { name, kind, detail } => {
                        E::CorruptArchive { name, kind, detail: format!("entry {path:?}: {detail}") }
                    }
                    other => other,
                };
                let bytes = c.read_data(&path, &mut entry, Some(declared), &in_entry)?;
                c.insert(path, Node::File { bytes, executable });
            }
            tar::EntryType::Directory => {
                if c.claim(&path, true)? {
                    c.insert(path, Node::Dir);
                }
            }
            tar::EntryType::Symlink | tar::EntryType::Link => {
                c.claim(&path, false)?;
                let target = entry.link_name_bytes().map(|t| t.into_owned()).unwrap_or_default();
                c.insert(path, Node::Link { target, hard: ty == tar::EntryType::Link });
            }
            other => {
                let kind = match other {
                    tar::EntryType::Char => "character device".to_owned(),
                    tar::EntryType::Block => "block device".to_owned(),
                    tar::EntryType::Fifo => "FIFO (named pipe)".to_owned(),
                    tar::EntryType::GNUSparse => "sparse file (re-create the archive without --sparse)".to_owned(),
                    t => format!("tar entry of unknown type {:?}", char::from(t.as_byte())),
                };
                return Err(E::UnsupportedEntry { entry: path, kind });
            }
        }
    }
    Ok(c)
}

fn read_zip<'l>(name: &str, bytes: &[u8], limits: &'l SubmissionLimits) -> Result<Collector<'l>, SubmissionError> {
    let corrupt = |detail: String| E::CorruptArchive { name: name.to_owned(), kind: "zip", detail };
    let mut zip = zip::ZipArchive::new(io::Cursor::new(bytes)).map_err(|e| corrupt(e.to_string()))?;
    if zip.len() > limits.max_entries() {
        return Err(E::TooManyEntries { limit: limits.max_entries() });
    }
    // The zip crate keeps only the last of several same-named entries: look
    // at the directory's records ourselves.
    let (dup, records) = zip_directory_scan(bytes, zip.central_directory_start(), limits.max_entries());
    if let Some(dup) = dup {
        return Err(E::Duplicate { entry: dup });
    }
    if records != zip.len() {
        return Err(corrupt(format!("its central directory holds {records} entries, not {}", zip.len())));
    }
    let mut c = Collector::new(limits);
    for i in 0..zip.len() {
        c.entry()?;
        let (raw, encrypted, mode, declared) = {
            let f = zip.by_index_raw(i).map_err(|e| corrupt(e.to_string()))?;
            (f.name_raw().to_vec(), f.encrypted(), f.unix_mode(), f.size())
        };
        let Some(path) = c.path(&raw)? else { continue };
        if encrypted {
            return Err(E::Encrypted { entry: path });
        }
        let shown_path = path.clone();
        let fail = move |e: io::Error| corrupt(format!("entry {shown_path:?}: {e}"));
        let ftype = mode.map_or(0, |m| m & S_IFMT);
        let dir_name = raw.ends_with(b"/");
        match ftype {
            S_IFDIR => {
                if c.claim(&path, true)? {
                    c.insert(path, Node::Dir);
                }
            }
            0 | S_IFREG if dir_name => {
                if c.claim(&path, true)? {
                    c.insert(path, Node::Dir);
                }
            }
            0 | S_IFREG => {
                c.claim(&path, false)?;
                let executable = mode.is_some_and(|m| m & 0o111 != 0);
                let f = zip.by_index(i).map_err(|e| corrupt(format!("entry {path:?}: {e}")))?;
                let bytes = c.read_data(&path, f, Some(declared), &fail)?;
                c.insert(path, Node::File { bytes, executable });
            }
            S_IFLNK => {
                c.claim(&path, false)?;
                let f = zip.by_index(i).map_err(|e| corrupt(format!("entry {path:?}: {e}")))?;
                let mut target = Vec::new();
                f.take(MAX_LINK_TARGET + 1).read_to_end(&mut target).map_err(fail)?;
                if target.len() as u64 > MAX_LINK_TARGET {
                    return Err(E::LinkTargetMissing { entry: path, target: shown(&target) });
                }
                c.insert(path, Node::Link { target, hard: false });
            }
            other => {
                let kind = match other {
                    S_IFCHR => "character device".to_owned(),
                    S_IFBLK => "block device".to_owned(),
                    S_IFIFO => "FIFO (named pipe)".to_owned(),
                    S_IFSOCK => "socket".to_owned(),
                    t => format!("zip entry of unknown type {t:#o}"),
                };
                return Err(E::UnsupportedEntry { entry: path, kind });
            }
        }
    }
    Ok(c)
}

/// Walk a zip's central directory from `start`, looking at no more than
/// `max + 1` records: the first raw name listed twice, and how many records
/// there are.
fn zip_directory_scan(bytes: &[u8], start: u64, max: usize) -> (Option<String>, usize) {
    let Ok(mut pos) = usize::try_from(start) else { return (None, 0) };
    let mut seen: BTreeSet<&[u8]> = BTreeSet::new();
    let u16_at = |p: usize| usize::from(u16::from_le_bytes([bytes[p], bytes[p + 1]]));
    while seen.len() <= max {
        let Some(record) = bytes.get(pos..pos.saturating_add(46)) else { break };
        if !record.starts_with(b"PK\x01\x02") {
            break;
        }
        let (n, m, k) = (u16_at(pos + 28), u16_at(pos + 30), u16_at(pos + 32));
        let Some(name) = bytes.get(pos + 46..pos + 46 + n) else { break };
        if !seen.insert(name) {
            return (Some(shown(name)), seen.len() + 1);
        }
        pos += 46 + n + m + k;
    }
    (None, seen.len())
}

/// Where a link leads: `target` taken from the folder `base` (`""` for the
/// root), `..` resolved lexically. `None` if it is absolute or climbs out.
fn join_link(base: &str, target: &str) -> Option<String> {
    if target.starts_with('/') || target.split('/').next().is_some_and(is_drive) {
        return None;
    }
    let mut parts: Vec<&str> = base.split('/').filter(|c| !c.is_empty()).collect();
    for c in target.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

/// The bytes and executable flag of the regular file a link leads to,
/// following chains of links.
fn resolve<'n>(nodes: &'n BTreeMap<String, Node>, link: &str) -> Result<(&'n [u8], bool), SubmissionError> {
    let mut cur = link.to_owned();
    let mut target_shown = String::new();
    // At most MAX_LINK_HOPS links, then a file.
    for _ in 0..=MAX_LINK_HOPS {
        match nodes.get_key_value(&cur) {
            Some((_, Node::File { bytes, executable })) => return Ok((bytes, *executable)),
            Some((path, Node::Link { target, hard })) => {
                target_shown = shown(target);
                // A target that is not UTF-8 cannot name an entry.
                let Ok(target) = std::str::from_utf8(target) else {
                    return Err(E::LinkTargetMissing { entry: link.to_owned(), target: target_shown });
                };
                let base = if *hard { "" } else { path.rsplit_once('/').map_or("", |(dir, _)| dir) };
                cur = join_link(base, target).ok_or_else(|| E::LinkEscapes { entry: link.to_owned(), target: target_shown.clone() })?;
            }
            _ => return Err(E::LinkTargetMissing { entry: link.to_owned(), target: target_shown }),
        }
    }
    Err(E::LinkChain { entry: link.to_owned() })
}

/// Resolve links, strip a wrapping folder, then the common last step.
fn finish_archive(name: &str, c: Collector<'_>, limits: &SubmissionLimits) -> Result<Submission, SubmissionError> {
    finish(archive_tree(name, c, limits)?, limits, None)
}

/// An archive's files as a tree: links made copies, one enclosing folder
/// stripped (not yet checked as a whole: see [`checked_files`]).
fn archive_tree(name: &str, mut c: Collector<'_>, limits: &SubmissionLimits) -> Result<Vec<SourceFile>, SubmissionError> {
    // A path below a file ("a" is a file, "a/b" anything) is ambiguous.
    for path in c.nodes.keys() {
        if let Some(a) = ancestors(path).find(|a| matches!(c.nodes.get(*a), Some(Node::File { .. } | Node::Link { .. }))) {
            return Err(E::FileFolderClash { entry: a.to_owned() });
        }
    }
    // Materialise links as copies, counting the copies toward the total.
    let mut copies = Vec::new();
    for (path, node) in &c.nodes {
        if let Node::Link { .. } = node {
            let (bytes, executable) = resolve(&c.nodes, path)?;
            c.total = c.total.saturating_add(bytes.len() as u64);
            if c.total > limits.max_total_bytes {
                return Err(E::TotalTooLarge { limit: limits.max_total_bytes });
            }
            copies.push(SourceFile { path: path.clone(), bytes: bytes.to_vec(), executable });
        }
    }
    let mut dirs = Vec::new();
    let mut files = copies;
    for (path, node) in std::mem::take(&mut c.nodes) {
        match node {
            Node::File { bytes, executable } => files.push(SourceFile { path, bytes, executable }),
            Node::Dir => dirs.push(path),
            Node::Link { .. } => {}
        }
    }
    if files.is_empty() {
        return Err(E::NoFiles { name: format!("{name:?}") });
    }
    // One folder holding everything (`tar czf bot.tgz mybot/`) is stripped.
    let top = files[0].path.split('/').next().unwrap_or("").to_owned();
    let prefix = format!("{top}/");
    if files.iter().all(|f| f.path.starts_with(&prefix)) && dirs.iter().all(|d| *d == top || d.starts_with(&prefix)) {
        for f in &mut files {
            f.path.drain(..prefix.len());
        }
    }
    Ok(files)
}

// ---------------------------------------------------------------------------
// Folders on disk

fn disk_kind(t: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_symlink() {
        "symbolic link"
    } else if t.is_fifo() {
        "FIFO (named pipe)"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else {
        "file of an unknown kind"
    }
}

/// Every file below `root`, with the same limits as an archive.
fn read_folder(root: &Path, limits: &SubmissionLimits) -> Result<Vec<SourceFile>, SubmissionError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

    fn io_err(p: &Path) -> impl Fn(io::Error) -> SubmissionError + '_ {
        move |source| E::Io { path: p.display().to_string(), source }
    }
    let mut files = Vec::new();
    let mut entries = 0usize;
    let mut total = 0u64;
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let mut names = Vec::new();
        for e in fs::read_dir(&dir).map_err(io_err(&dir))? {
            let e = e.map_err(io_err(&dir))?;
            entries += 1;
            if entries > limits.max_entries() {
                return Err(E::TooManyEntries { limit: limits.max_entries() });
            }
            names.push(e.file_name());
        }
        names.sort();
        for n in names {
            let full = dir.join(&n);
            let name = n.to_str().ok_or_else(|| E::BadName { entry: full.display().to_string(), why: "not UTF-8" })?;
            let raw = if rel.is_empty() { name.to_owned() } else { format!("{rel}/{name}") };
            let path = normalise(raw.as_bytes())?.unwrap_or_default();
            check_shape(&path, limits, 0)?;
            let meta = fs::symlink_metadata(&full).map_err(io_err(&full))?;
            let ft = meta.file_type();
            if ft.is_symlink() {
                return Err(E::SymlinkOnDisk { path: full.display().to_string() });
            } else if ft.is_dir() {
                stack.push((full, path));
            } else if ft.is_file() {
                if files.len() >= limits.max_files {
                    return Err(E::TooManyFiles { limit: limits.max_files });
                }
                // No following a link or blocking on a FIFO swapped in since.
                let f = fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(&full)
                    .map_err(io_err(&full))?;
                let meta = f.metadata().map_err(io_err(&full))?;
                if !meta.is_file() {
                    let kind = disk_kind(&meta.file_type());
                    return Err(E::UnsupportedEntry { entry: full.display().to_string(), kind: kind.to_owned() });
                }
                let cap = limits.max_file_bytes.min(limits.max_total_bytes.saturating_sub(total));
                let mut bytes = Vec::new();
                f.take(cap.saturating_add(1)).read_to_end(&mut bytes).map_err(io_err(&full))?;
                if bytes.len() as u64 > cap {
                    return Err(if cap == limits.max_file_bytes {
                        E::FileTooLarge { entry: path, limit: limits.max_file_bytes }
                    } else {
                        E::TotalTooLarge { limit: limits.max_total_bytes }
                    });
                }
                total += bytes.len() as u64;
                let executable = meta.permissions().mode() & 0o111 != 0;
                files.push(SourceFile { path, bytes, executable });
            } else {
                let kind = disk_kind(&ft);
                return Err(E::UnsupportedEntry { entry: full.display().to_string(), kind: kind.to_owned() });
            }
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Write};

    fn lim() -> SubmissionLimits {
        SubmissionLimits::default()
    }

    /// Append one tar entry, its name and link written straight into the
    /// header (so `..` and absolute names get through).
    fn tar_entry(out: &mut Vec<u8>, name: &[u8], kind: u8, link: &[u8], data: &[u8], mode: u32) {
        tar_header(out, name, kind, link, data.len() as u64, mode);
        out.extend_from_slice(data);
        pad(out);
    }

    fn tar_header(out: &mut Vec<u8>, name: &[u8], kind: u8, link: &[u8], size: u64, mode: u32) {
        let mut h = tar::Header::new_ustar();
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        h.as_old_mut().linkname[..link.len()].copy_from_slice(link);
        h.set_mode(mode);
        h.set_size(size);
        h.set_mtime(0);
        h.set_entry_type(tar::EntryType::new(kind));
        h.set_cksum();
        out.extend_from_slice(h.as_bytes());
    }

    fn pad(out: &mut Vec<u8>) {
        out.resize(out.len().div_ceil(512) * 512, 0);
    }

    fn tar_end(mut out: Vec<u8>) -> Vec<u8> {
        out.extend_from_slice(&[0; 1024]);
        out
    }

    /// A tar of regular files (mode 0o644).
    fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, d) in files {
            tar_entry(&mut out, n.as_bytes(), b'0', b"", d, 0o644);
        }
        tar_end(out)
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zip_opts(mode: u32) -> zip::write::SimpleFileOptions {
        zip::write::SimpleFileOptions::default().unix_permissions(mode)
    }

    /// A zip of regular files with the given permission bits.
    fn zip_of(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (n, d, m) in files {
            z.start_file(*n, zip_opts(*m)).unwrap();
            z.write_all(d).unwrap();
        }
        z.finish().unwrap().into_inner()
    }

    /// Offsets of every occurrence of a 4-byte signature.
    fn find_sig(bytes: &[u8], sig: &[u8; 4]) -> Vec<usize> {
        bytes.windows(4).enumerate().filter(|(_, w)| w == sig).map(|(i, _)| i).collect()
    }

    fn upload(name: &str, bytes: &[u8]) -> Result<Submission, SubmissionError> {
        Submission::from_upload(name, bytes, &lim())
    }

    fn paths(s: &Submission) -> Vec<&str> {
        s.files.iter().map(|f| f.path.as_str()).collect()
    }

    // ----- good cases

    #[test]
    fn single_source_file() {
        let s = upload("bot.py", b"print(1)\n").unwrap();
        assert_eq!((s.language.name.as_str(), s.main.as_str()), ("python", "bot.py"));
        assert_eq!(s.files, vec![SourceFile { path: "bot.py".into(), bytes: b"print(1)\n".to_vec(), executable: false }]);
        // A single file is its own main file, whatever its name; browser
        // paths are reduced to the last component.
        let s = upload("C:\\fakepath\\solver.c", b"int main(){}").unwrap();
        assert_eq!((s.language.name.as_str(), s.main.as_str()), ("c", "solver.c"));
    }

    #[test]
    fn tgz_with_wrapping_folder_and_manifest() {
        let mut t = Vec::new();
        tar_entry(&mut t, b"./mybot/", b'5', b"", b"", 0o755);
        tar_entry(&mut t, b"./mybot/koth.json", b'0', b"", br#"{"language": "python", "main": "src/my_bot.py"}"#, 0o644);
        tar_entry(&mut t, b"./mybot/src/", b'5', b"", b"", 0o755);
        tar_entry(&mut t, b"./mybot/src/my_bot.py", b'0', b"", b"import util\n", 0o755);
        tar_entry(&mut t, b"./mybot/src/util.py", b'0', b"", b"X = 1\n", 0o644);
        tar_entry(&mut t, b"./mybot/src/__init__.py", b'0', b"", b"", 0o644);
        let s = upload("bot.tgz", &gz(&tar_end(t))).unwrap();
        assert_eq!(s.language.name, "python");
        assert_eq!(s.main, "src/my_bot.py");
        assert_eq!(paths(&s), ["src/__init__.py", "src/my_bot.py", "src/util.py"]);
        assert!(s.files[1].executable && !s.files[2].executable);
    }

    #[test]
    fn plain_tar_and_pax_global_header() {
        let mut t = Vec::new();
        tar_entry(&mut t, b"pax_global_header", b'g', b"", b"52 comment=0123456789012345678901234567890123456789\n", 0o666);
        tar_entry(&mut t, b"bot.js", b'0', b"", b"console.log(1)", 0o644);
        let s = upload("x.tar", &tar_end(t)).unwrap();
        assert_eq!((s.language.name.as_str(), paths(&s)), ("javascript", vec!["bot.js"]));
    }

    #[test]
    fn zip_with_subfolder_and_case_insensitive_main() {
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        z.add_directory("lib/", zip_opts(0o755)).unwrap();
        z.start_file("lib/util.h", zip_opts(0o644)).unwrap();
        z.write_all(b"int f();").unwrap();
        z.start_file("Main.cpp", zip_opts(0o755)).unwrap();
        z.write_all(b"int main(){}").unwrap();
        let s = upload("bot.zip", &z.finish().unwrap().into_inner()).unwrap();
        assert_eq!((s.language.name.as_str(), s.main.as_str()), ("cpp", "Main.cpp"));
        assert_eq!(paths(&s), ["Main.cpp", "lib/util.h"]);
        assert!(s.files[0].executable && !s.files[1].executable);
    }

    #[test]
    fn zip_macos_junk_skipped_and_wrapper_stripped() {
        let z = zip_of(&[("mybot/bot.py", b"1", 0o644), ("__MACOSX/mybot/._bot.py", b"junk", 0o644)]);
        let s = upload("mybot.zip", &z).unwrap();
        assert_eq!(paths(&s), ["bot.py"]);
    }

    #[test]
    fn internal_links_materialised() {
        let mut t = Vec::new();
        tar_entry(&mut t, b"w/bot.py", b'0', b"", b"print(1)", 0o755);
        tar_entry(&mut t, b"w/lib/alias.py", b'2', b"../bot.py", b"", 0o777);
        tar_entry(&mut t, b"w/lib/chain.py", b'2', b"./alias.py", b"", 0o777);
        tar_entry(&mut t, b"w/copy.py", b'1', b"w/bot.py", b"", 0o644);
        let s = upload("t.tar", &tar_end(t)).unwrap();
        assert_eq!(paths(&s), ["bot.py", "copy.py", "lib/alias.py", "lib/chain.py"]);
        for f in &s.files {
            assert_eq!((f.bytes.as_slice(), f.executable), (&b"print(1)"[..], true), "{}", f.path);
        }
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        z.start_file("bot.py", zip_opts(0o644)).unwrap();
        z.write_all(b"print(2)").unwrap();
        z.add_symlink("sub/link.py", "../bot.py", zip_opts(0o777)).unwrap();
        let s = upload("l.zip", &z.finish().unwrap().into_inner()).unwrap();
        assert_eq!(s.files[1], SourceFile { path: "sub/link.py".into(), bytes: b"print(2)".to_vec(), executable: false });
    }

    #[test]
    fn source_hash_stable_across_formats() {
        let files: &[(&str, &[u8], u32)] = &[("bot.py", b"import lib.x\n", 0o755), ("lib/x.py", b"Y = 2\n", 0o644)];
        let mut t = Vec::new();
        for (n, d, m) in files {
            tar_entry(&mut t, format!("wrap/{n}").as_bytes(), b'0', b"", d, *m);
        }
        let tar = tar_end(t);
        let from_tar = upload("a.tar", &tar).unwrap().source_hash();
        let from_tgz = upload("a.tgz", &gz(&tar)).unwrap().source_hash();
        let from_zip = upload("a.zip", &zip_of(files)).unwrap().source_hash();
        let from_files = Submission::from_files(
            files.iter().map(|(n, d, m)| SourceFile { path: format!("./{n}"), bytes: d.to_vec(), executable: *m & 0o111 != 0 }).collect(),
            &lim(),
        )
        .unwrap()
        .source_hash();
        let dir = TempDir::new("hash");
        for (n, d, m) in files {
            dir.write(n, d, *m);
        }
        let from_disk = Submission::from_path(&dir.0, &lim()).unwrap().source_hash();
        assert_eq!(from_tar.len(), 64);
        for h in [&from_tgz, &from_zip, &from_files, &from_disk] {
            assert_eq!(h, &from_tar);
        }
        // Any change changes it: content, executable flag, path.
        let changed: [&[(&str, &[u8], u32)]; 3] = [
            &[("bot.py", b"import lib.x\n", 0o755), ("lib/x.py", b"Y = 3\n", 0o644)],
            &[("bot.py", b"import lib.x\n", 0o644), ("lib/x.py", b"Y = 2\n", 0o644)],
            &[("bot.py", b"import lib.x\n", 0o755), ("lib/y.py", b"Y = 2\n", 0o644)],
        ];
        for c in changed {
            assert_ne!(upload("b.zip", &zip_of(c)).unwrap().source_hash(), from_tar);
        }
    }

    // ----- uploads that are not what they claim

    #[test]
    fn empty_upload_and_unknown_extension() {
        assert!(matches!(upload("bot.py", b""), Err(SubmissionError::EmptyUpload { .. })));
        let e = upload("bot.xyz", b"puts 1").unwrap_err();
        assert!(matches!(e, SubmissionError::UnknownExtension { .. }));
        let msg = e.to_string();
        assert!(msg.contains("\"xyz\"") && msg.contains(&language::extensions_list()), "{msg}");
        assert!(matches!(upload("", b"x"), Err(SubmissionError::NoFileName { .. })));
        assert!(matches!(upload("Makefile", b"x"), Err(SubmissionError::UnknownExtension { .. })));
    }

    #[test]
    fn garbage_named_like_an_archive() {
        for name in ["bot.zip", "bot.tar", "bot.tgz", "bot.tar.gz", "BOT.ZIP"] {
            let e = upload(name, b"this is not an archive").unwrap_err();
            assert!(matches!(e, SubmissionError::NotAnArchive { .. }), "{name}: {e}");
        }
        // Right magic, wrong inside.
        let mut junk = b"PK\x03\x04".to_vec();
        junk.extend_from_slice(&[7; 300]);
        assert!(matches!(upload("x.zip", &junk), Err(SubmissionError::CorruptArchive { .. })));
        let e = upload("x.tgz", &[0x1f, 0x8b, 8, 0, 1, 2, 3]).unwrap_err();
        assert!(matches!(e, SubmissionError::CorruptArchive { .. }), "{e}");
        let e = upload("x.tgz", &gz(b"print('a gzipped file, not a tar')")).unwrap_err();
        assert!(matches!(e, SubmissionError::CorruptArchive { .. }), "{e}");
    }

    #[test]
    fn upload_over_the_cap() {
        let limits = SubmissionLimits { max_total_bytes: 100, ..lim() };
        let e = Submission::from_upload("bot.py", &[b'#'; 101], &limits).unwrap_err();
        assert!(matches!(e, SubmissionError::UploadTooLarge { limit: 100, .. }), "{e}");
    }

    #[test]
    fn empty_archives() {
        let e = upload("e.tar", &tar_end(Vec::new())).unwrap_err();
        assert!(matches!(e, SubmissionError::NoFiles { .. }), "{e}");
        let e = upload("e.tgz", &gz(&tar_end(Vec::new()))).unwrap_err();
        assert!(matches!(e, SubmissionError::NoFiles { .. }), "{e}");
        let mut t = Vec::new();
        tar_entry(&mut t, b"a/", b'5', b"", b"", 0o755);
        tar_entry(&mut t, b"a/b/", b'5', b"", b"", 0o755);
        assert!(matches!(upload("d.tar", &tar_end(t)), Err(SubmissionError::NoFiles { .. })));
        let empty_zip = zip_of(&[]);
        assert!(empty_zip.starts_with(b"PK\x05\x06"));
        assert!(matches!(upload("e.zip", &empty_zip), Err(SubmissionError::NoFiles { .. })));
    }

    #[test]
    fn truncated_tar_rejected() {
        let mut t = Vec::new();
        tar_header(&mut t, b"bot.py", b'0', b"", 1000, 0o644);
        t.extend_from_slice(b"print(1)");
        let e = upload("t.tgz", &gz(&t)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"t.tgz\" is not a readable tar.gz archive (entry \"bot.py\": it holds 8 bytes but its header says 1000); \
             re-create it with `tar czf bot.tar.gz <folder>` or `zip -r bot.zip <folder>` (zip: stored or deflate only)"
        );
    }

    // ----- hostile paths

    #[test]
    fn parent_components_rejected() {
        for name in ["../evil.py", "a/../../evil.py", "a/../b.py", "./../x.py", "a/b/.."] {
            let mut t = Vec::new();
            tar_entry(&mut t, b"bot.py", b'0', b"", b"1", 0o644);
            tar_entry(&mut t, name.as_bytes(), b'0', b"", b"1", 0o644);
            let e = upload("t.tar", &tar_end(t)).unwrap_err();
            assert!(matches!(e, SubmissionError::ParentDir { .. }), "{name}: {e}");
        }
        let e = upload("z.zip", &zip_of(&[("bot.py", b"1", 0o644), ("../evil.py", b"1", 0o644)])).unwrap_err();
        assert!(matches!(e, SubmissionError::ParentDir { .. }), "{e}");
        assert_eq!(e.to_string(), "entry \"../evil.py\" leaves the bot's folder (.. is not allowed); put all files under one folder");
    }

    #[test]
    fn absolute_paths_rejected() {
        for name in ["/etc/passwd", "//x.py", "C:/x.py"] {
            let e = upload("t.tar", &tar_of(&[(name, b"1")])).unwrap_err();
            assert!(matches!(e, SubmissionError::AbsolutePath { .. }), "{name}: {e}");
        }
        let e = upload("z.zip", &zip_of(&[("/etc/passwd", b"1", 0o644)])).unwrap_err();
        assert!(matches!(e, SubmissionError::AbsolutePath { .. }), "{e}");
    }

    #[test]
    fn bad_names_rejected() {
        let names: [&[u8]; 4] = [b"a\\b.py", b"a\nb.py", b"\xff.py", b"ok/\x7f.py"];
        for name in names {
            let mut t = Vec::new();
            tar_entry(&mut t, name, b'0', b"", b"1", 0o644);
            let e = upload("t.tar", &tar_end(t)).unwrap_err();
            assert!(matches!(e, SubmissionError::BadName { .. }), "{name:?}: {e}");
        }
        let e = upload("z.zip", &zip_of(&[("a\0b.py", b"1", 0o644)])).unwrap_err();
        assert!(matches!(e, SubmissionError::BadName { .. }), "{e}");
    }

    #[test]
    fn normalisation() {
        assert_eq!(normalise(b"./a//b/./c.py").unwrap().as_deref(), Some("a/b/c.py"));
        assert_eq!(normalise(b"a/").unwrap().as_deref(), Some("a"));
        assert_eq!(normalise(b"./").unwrap(), None);
        assert_eq!(normalise(b"").unwrap(), None);
        assert_eq!(normalise("é/ü.py".as_bytes()).unwrap().as_deref(), Some("é/ü.py"));
        assert!(normalise(b"a..b/..c").is_ok(), "dots inside a name are fine");
    }

    #[test]
    fn too_deep_and_too_long() {
        let deep = format!("{}bot.py", "d/".repeat(17));
        let e = upload("t.tar", &tar_of(&[(&deep, b"1")])).unwrap_err();
        assert!(matches!(e, SubmissionError::TooDeep { limit: 16, .. }), "{e}");
        // 16 deep including a wrapping folder that gets stripped is fine.
        let ok = format!("wrap/{}x.py", "d/".repeat(14));
        assert!(upload("t.tar", &tar_of(&[(&ok, b"1"), ("wrap/bot.py", b"1")])).is_ok());
        let long = format!("{}/{}/{}.py", "a".repeat(100), "b".repeat(100), "c".repeat(60));
        let limits = lim();
        let files = vec![SourceFile { path: long.clone(), bytes: b"1".to_vec(), executable: false }];
        let e = Submission::from_files(files, &limits).unwrap_err();
        assert!(matches!(e, SubmissionError::PathTooLong { limit: 255, .. }), "{e}");
        let e = normalise("x".repeat(256).as_bytes()).unwrap_err();
        assert!(matches!(e, SubmissionError::PathTooLong { .. }), "{e}");
    }

    #[test]
    fn duplicates_and_clashes_rejected() {
        let e = upload("t.tar", &tar_of(&[("bot.py", b"1"), ("bot.py", b"2")])).unwrap_err();
        assert!(matches!(e, SubmissionError::Duplicate { .. }), "{e}");
        let e = upload("t.tar", &tar_of(&[("bot.py", b"1"), ("./bot.py", b"2")])).unwrap_err();
        assert!(matches!(e, SubmissionError::Duplicate { .. }), "{e}");
        let e = upload("t.tar", &tar_of(&[("bot.py", b"1"), ("bot.py/x.py", b"2")])).unwrap_err();
        assert!(matches!(e, SubmissionError::FileFolderClash { .. }), "{e}");
        let mut t = Vec::new();
        tar_entry(&mut t, b"bot.py", b'0', b"", b"1", 0o644);
        tar_entry(&mut t, b"bot.py/", b'5', b"", b"", 0o755);
        assert!(matches!(upload("t.tar", &tar_end(t)), Err(SubmissionError::FileFolderClash { .. })));
        // The zip crate silently keeps one of two same-named entries.
        let mut z = zip_of(&[("bot.py", b"print(1)", 0o644), ("bax.py", b"print(2)", 0o644)]);
        for i in find_sig(&z, b"bax.") {
            z[i + 1] = b'o';
            z[i + 2] = b't';
        }
        let e = upload("d.zip", &z).unwrap_err();
        assert!(matches!(&e, SubmissionError::Duplicate { entry } if entry == "bot.py"), "{e}");
        // An end record counting fewer entries than the directory holds.
        let mut z = zip_of(&[("bot.py", b"print(1)", 0o644), ("bax.py", b"print(2)", 0o644)]);
        let end = find_sig(&z, b"PK\x05\x06")[0];
        z[end + 8] = 1;
        z[end + 10] = 1;
        let e = upload("d.zip", &z).unwrap_err();
        assert!(matches!(&e, SubmissionError::CorruptArchive { detail, .. } if detail.contains("central directory holds 2")), "{e}");
        let files = vec![
            SourceFile { path: "bot.py".into(), bytes: b"1".to_vec(), executable: false },
            SourceFile { path: "./bot.py".into(), bytes: b"1".to_vec(), executable: false },
        ];
        assert!(matches!(Submission::from_files(files, &lim()), Err(SubmissionError::Duplicate { .. })));
    }

    // ----- hostile entry kinds

    #[test]
    fn links_leaving_the_folder_rejected() {
        let cases: [(&[u8], u8, &[u8]); 6] = [
            (b"x.py", b'2', b"/etc/shadow"),
            (b"x.py", b'2', b"../../y.py"),
            (b"d/x.py", b'2', b"../../y.py"),
            (b"x.py", b'1', b"../outside.py"),
            (b"x.py", b'1', b"/etc/passwd"),
            (b"x.py", b'1', b"a/../../bot.py"),
        ];
        for (name, kind, target) in cases {
            let mut t = Vec::new();
            tar_entry(&mut t, b"bot.py", b'0', b"", b"1", 0o644);
            tar_entry(&mut t, name, kind, target, b"", 0o777);
            let e = upload("t.tar", &tar_end(t)).unwrap_err();
            assert!(matches!(e, SubmissionError::LinkEscapes { .. }), "{target:?}: {e}");
        }
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        z.start_file("bot.py", zip_opts(0o644)).unwrap();
        z.write_all(b"1").unwrap();
        z.add_symlink("evil.py", "/etc/shadow", zip_opts(0o777)).unwrap();
        let e = upload("l.zip", &z.finish().unwrap().into_inner()).unwrap_err();
        assert!(matches!(e, SubmissionError::LinkEscapes { .. }), "{e}");
        assert!(e.to_string().contains("\"/etc/shadow\""));
    }

    #[test]
    fn links_to_folders_missing_files_and_loops_rejected() {
        let mut t = Vec::new();
        tar_entry(&mut t, b"bot.py", b'0', b"", b"1", 0o644);
        tar_entry(&mut t, b"lib/", b'5', b"", b"", 0o755);
        tar_entry(&mut t, b"l", b'2', b"lib", b"", 0o777);
        let e = upload("t.tar", &tar_end(t)).unwrap_err();
        assert!(matches!(e, SubmissionError::LinkTargetMissing { .. }), "{e}");
        let mut t = Vec::new();
        tar_entry(&mut t, b"bot.py", b'0', b"", b"1", 0o644);
        tar_entry(&mut t, b"l.py", b'2', b"nothere.py", b"", 0o777);
        assert!(matches!(upload("t.tar", &tar_end(t)), Err(SubmissionError::LinkTargetMissing { .. })));
        let mut t = Vec::new();
        tar_entry(&mut t, b"bot.py", b'0', b"", b"1", 0o644);
        tar_entry(&mut t, b"a.py", b'2', b"b.py", b"", 0o777);
        tar_entry(&mut t, b"b.py", b'2', b"a.py", b"", 0o777);
        assert!(matches!(upload("t.tar", &tar_end(t)), Err(SubmissionError::LinkChain { .. })));
        let mut t = Vec::new();
        tar_entry(&mut t, b"bot.py", b'0', b"", b"1", 0o644);
        tar_entry(&mut t, b"self.py", b'1', b"self.py", b"", 0o644);
        assert!(matches!(upload("t.tar", &tar_end(t)), Err(SubmissionError::LinkChain { .. })));
    }

    #[test]
    fn devices_and_fifos_rejected() {
        for (kind, what) in [(b'3', "character device"), (b'4', "block device"), (b'6', "FIFO (named pipe)")] {
            let mut t = Vec::new();
            tar_entry(&mut t, b"bot.py", b'0', b"", b"1", 0o644);
            tar_entry(&mut t, b"dev/x", kind, b"", b"", 0o644);
            let e = upload("t.tar", &tar_end(t)).unwrap_err();
            assert!(matches!(&e, SubmissionError::UnsupportedEntry { kind, .. } if kind == what), "{e}");
        }
        let mut h = tar::Header::new_gnu();
        h.set_path("bot.py").unwrap();
        h.set_size(0);
        h.set_entry_type(tar::EntryType::GNUSparse);
        h.as_gnu_mut().unwrap().set_real_size(0);
        h.set_cksum();
        let e = upload("t.tar", &tar_end(h.as_bytes().to_vec())).unwrap_err();
        assert!(matches!(e, SubmissionError::UnsupportedEntry { .. }), "{e}");
        // A zip entry whose unix mode says character device.
        let mut z = zip_of(&[("bot.py", b"1", 0o644), ("null", b"", 0o644)]);
        let cd = *find_sig(&z, b"PK\x01\x02").last().unwrap();
        z[cd + 38..cd + 42].copy_from_slice(&((S_IFCHR | 0o644) << 16).to_le_bytes());
        let e = upload("d.zip", &z).unwrap_err();
        assert!(matches!(&e, SubmissionError::UnsupportedEntry { kind, .. } if kind == "character device"), "{e}");
    }

    #[test]
    fn encrypted_zip_entry_rejected() {
        let mut z = zip_of(&[("bot.py", b"print(1)", 0o644)]);
        for (sig, flag_at) in [(b"PK\x03\x04", 6), (b"PK\x01\x02", 8)] {
            for i in find_sig(&z, sig) {
                z[i + flag_at] |= 1;
            }
        }
        let e = upload("e.zip", &z).unwrap_err();
        assert!(matches!(e, SubmissionError::Encrypted { .. }), "{e}");
    }

    // ----- bombs and limits

    /// A tar.gz holding one file of `size` zero bytes, built without holding
    /// it in memory.
    fn zero_file_tgz(name: &[u8], kind: u8, size: u64) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut h = Vec::new();
        tar_header(&mut h, name, kind, b"", size, 0o644);
        e.write_all(&h).unwrap();
        let chunk = vec![0u8; 1 << 20];
        let mut left = size;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            e.write_all(&chunk[..n]).unwrap();
            left -= n as u64;
        }
        e.write_all(&[0; 1536]).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_bombs_stop_at_the_limit() {
        // 100 MiB of zeros in one file: stops at the 16 MiB file limit.
        let bomb = zero_file_tgz(b"bot.py", b'0', 100 << 20);
        assert!(bomb.len() < 1 << 20);
        let e = upload("bomb.tgz", &bomb).unwrap_err();
        assert!(matches!(e, SubmissionError::FileTooLarge { limit, .. } if limit == 16 << 20), "{e}");
        // A 100 MiB GNU long name: stops at the stream cap.
        let e = upload("bomb.tgz", &zero_file_tgz(b"././@LongLink", b'L', 100 << 20)).unwrap_err();
        assert!(matches!(e, SubmissionError::ArchiveTooLarge { .. }), "{e}");
        // 100 MiB of zeros, no tar header at all: the first (zero) block
        // ends the archive.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for _ in 0..100 {
            e.write_all(&[0; 1 << 20]).unwrap();
        }
        let e = upload("zeros.tgz", &e.finish().unwrap()).unwrap_err();
        assert!(matches!(e, SubmissionError::NoFiles { .. }), "{e}");
        // Seven 10 MiB files: stops at the 32 MiB total.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for i in 0..7 {
            let mut h = Vec::new();
            tar_header(&mut h, format!("f{i}.py").as_bytes(), b'0', b"", 10 << 20, 0o644);
            e.write_all(&h).unwrap();
            for _ in 0..10 {
                e.write_all(&[0; 1 << 20]).unwrap();
            }
        }
        let e = upload("many.tgz", &e.finish().unwrap()).unwrap_err();
        assert!(matches!(e, SubmissionError::TotalTooLarge { limit } if limit == 32 << 20), "{e}");
    }

    #[test]
    fn total_and_count_limits() {
        let limits = SubmissionLimits { max_file_bytes: 100, max_total_bytes: 250, ..lim() };
        let d = [b'1'; 100];
        let t = tar_of(&[("bot.py", &d), ("a.py", &d), ("b.py", &d)]);
        let e = Submission::from_upload("t.tar", &t, &SubmissionLimits { max_total_bytes: 5000, ..limits.clone() });
        assert!(e.is_ok());
        let e = Submission::from_upload("t.tgz", &gz(&t), &limits).unwrap_err();
        assert!(matches!(e, SubmissionError::TotalTooLarge { limit: 250 }), "{e}");
        // Link copies count toward the total.
        let mut t = Vec::new();
        tar_entry(&mut t, b"bot.py", b'0', b"", &d, 0o644);
        tar_entry(&mut t, b"a.py", b'2', b"bot.py", b"", 0o777);
        tar_entry(&mut t, b"b.py", b'2', b"bot.py", b"", 0o777);
        let e = Submission::from_upload("t.tgz", &gz(&tar_end(t)), &limits).unwrap_err();
        assert!(matches!(e, SubmissionError::TotalTooLarge { limit: 250 }), "{e}");

        let names: Vec<String> = (0..300).map(|i| format!("f{i}.py")).collect();
        let many: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"1"[..])).collect();
        let e = upload("m.tar", &tar_of(&many)).unwrap_err();
        assert!(matches!(e, SubmissionError::TooManyFiles { limit: 256 }), "{e}");
        let mut t = Vec::new();
        for i in 0..5000 {
            tar_entry(&mut t, format!("d{i}/").as_bytes(), b'5', b"", b"", 0o755);
        }
        let e = upload("m.tgz", &gz(&tar_end(t))).unwrap_err();
        assert!(matches!(e, SubmissionError::TooManyEntries { limit: 1024 }), "{e}");
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for i in 0..1100 {
            z.add_directory(format!("d{i}/"), zip_opts(0o755)).unwrap();
        }
        let e = upload("m.zip", &z.finish().unwrap().into_inner()).unwrap_err();
        assert!(matches!(e, SubmissionError::TooManyEntries { limit: 1024 }), "{e}");
    }

    #[test]
    fn zip_bombs_and_lying_sizes() {
        // Huge data: stops at the file limit.
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        z.start_file("bot.py", zip::write::SimpleFileOptions::default()).unwrap();
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..100 {
            z.write_all(&chunk).unwrap();
        }
        let bomb = z.finish().unwrap().into_inner();
        assert!(bomb.len() < 1 << 20);
        let e = upload("bomb.zip", &bomb).unwrap_err();
        assert!(matches!(e, SubmissionError::FileTooLarge { .. }), "{e}");

        // The same, declaring 10 bytes: still stops at the limit.
        let mut lying = bomb.clone();
        for (sig, at) in [(b"PK\x03\x04", 22), (b"PK\x01\x02", 24)] {
            for i in find_sig(&lying, sig) {
                lying[i + at..i + at + 4].copy_from_slice(&10u32.to_le_bytes());
            }
        }
        let e = upload("lying.zip", &lying).unwrap_err();
        assert!(matches!(e, SubmissionError::FileTooLarge { .. }), "{e}");

        // Small data, more than declared: a damaged archive.
        let mut z = zip_of(&[("bot.py", b"print('hello')", 0o644)]);
        for (sig, at) in [(b"PK\x03\x04", 22), (b"PK\x01\x02", 24)] {
            for i in find_sig(&z, sig) {
                z[i + at..i + at + 4].copy_from_slice(&5u32.to_le_bytes());
            }
        }
        let e = upload("lying.zip", &z).unwrap_err();
        assert!(matches!(e, SubmissionError::CorruptArchive { .. }), "{e}");
    }

    // ----- manifest and main file

    #[test]
    fn main_file_detection() {
        let e = upload("t.tar", &tar_of(&[("bot.py", b"1"), ("main.py", b"2")])).unwrap_err();
        assert!(matches!(e, SubmissionError::AmbiguousMain { .. }), "{e}");
        assert!(e.to_string().contains("koth.json"));
        let e = upload("t.tar", &tar_of(&[("solver.py", b"1"), ("lib/bot.py", b"2"), ("x/y.py", b"3")])).unwrap_err();
        assert!(matches!(&e, SubmissionError::NoMain { found, .. } if found == "\"solver.py\""), "{e}");
        let s = upload("t.tar", &tar_of(&[("BOT.c", b"int main(){}"), ("bot.txt", b"notes")])).unwrap();
        assert_eq!((s.language.name.as_str(), s.main.as_str()), ("c", "BOT.c"));
    }

    #[test]
    fn empty_main_rejected_other_empty_files_kept() {
        let e = upload("t.tar", &tar_of(&[("bot.py", b""), ("x.py", b"1")])).unwrap_err();
        assert!(matches!(e, SubmissionError::EmptyMain { .. }), "{e}");
        let s = upload("t.tar", &tar_of(&[("bot.py", b"1"), ("__init__.py", b"")])).unwrap();
        assert_eq!(s.files.len(), 2);
    }

    #[test]
    fn bad_manifests_rejected() {
        let with = |m: &str| upload("t.tar", &tar_of(&[("koth.json", m.as_bytes()), ("my.py", b"1")]));
        assert!(matches!(with("{not json"), Err(SubmissionError::BadManifest { .. })));
        let e = with(r#"{"language": "python", "main": "my.py", "extra": 1}"#).unwrap_err();
        assert!(matches!(e, SubmissionError::BadManifest { .. }) && e.to_string().contains("extra"), "{e}");
        let e = with(r#"{"language": "cobol", "main": "my.py"}"#).unwrap_err();
        assert!(matches!(e, SubmissionError::UnknownLanguage { .. }), "{e}");
        assert!(e.to_string().contains(&language::names_list()));
        let e = with(r#"{"language": "python", "main": "other.py"}"#).unwrap_err();
        assert!(matches!(e, SubmissionError::MainMissing { .. }), "{e}");
        let e = with(r#"{"language": "python", "main": "koth.json"}"#).unwrap_err();
        assert!(matches!(e, SubmissionError::MainMissing { .. }), "{e}");
        let e = with(r#"{"language": "python", "main": "../my.py"}"#).unwrap_err();
        assert!(matches!(e, SubmissionError::BadManifest { .. }), "{e}");
        let s = with(r#"{"language": "python", "main": "./my.py"}"#).unwrap();
        assert_eq!((s.main.as_str(), paths(&s)), ("my.py", vec!["my.py"]));
    }

    // ----- folders on disk

    struct TempDir(std::path::PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let p = std::env::temp_dir().join(format!("koth-submission-{}-{tag}", std::process::id()));
            let _ = fs::remove_dir_all(&p);
            fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }

        fn write(&self, rel: &str, data: &[u8], mode: u32) {
            use std::os::unix::fs::PermissionsExt;
            let p = self.0.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, data).unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn folder_on_disk() {
        let d = TempDir::new("folder");
        d.write("main.py", b"import pkg.m", 0o755);
        d.write("pkg/m.py", b"", 0o644);
        d.write("pkg/deep/data.txt", b"x", 0o644);
        let s = Submission::from_path(&d.0, &lim()).unwrap();
        assert_eq!((s.language.name.as_str(), s.main.as_str()), ("python", "main.py"));
        assert_eq!(paths(&s), ["main.py", "pkg/deep/data.txt", "pkg/m.py"]);
        assert!(s.files[0].executable && !s.files[2].executable);
        // A single file and an archive on disk work as uploads do.
        let s = Submission::from_path(&d.0.join("main.py"), &lim()).unwrap();
        assert_eq!(s.main, "main.py");
        fs::write(d.0.join("b.tgz"), gz(&tar_of(&[("w/bot.js", b"1")]))).unwrap();
        assert_eq!(Submission::from_path(&d.0.join("b.tgz"), &lim()).unwrap().main, "bot.js");
        fs::remove_file(d.0.join("b.tgz")).unwrap();

        std::os::unix::fs::symlink("/etc/passwd", d.0.join("pkg/evil.py")).unwrap();
        let e = Submission::from_path(&d.0, &lim()).unwrap_err();
        assert!(matches!(e, SubmissionError::SymlinkOnDisk { .. }), "{e}");
        fs::remove_file(d.0.join("pkg/evil.py")).unwrap();

        let fifo = std::ffi::CString::new(d.0.join("pipe").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let e = Submission::from_path(&d.0, &lim()).unwrap_err();
        assert!(matches!(&e, SubmissionError::UnsupportedEntry { kind, .. } if kind == "FIFO (named pipe)"), "{e}");
        fs::remove_file(d.0.join("pipe")).unwrap();

        let limits = SubmissionLimits { max_file_bytes: 4, ..lim() };
        d.write("pkg/big.txt", b"12345", 0o644);
        let e = Submission::from_path(&d.0, &limits).unwrap_err();
        assert!(matches!(e, SubmissionError::FileTooLarge { limit: 4, .. }), "{e}");

        let e = Submission::from_path(&d.0.join("nothere"), &lim()).unwrap_err();
        assert!(matches!(e, SubmissionError::Io { .. }), "{e}");
        let empty = TempDir::new("empty");
        assert!(matches!(Submission::from_path(&empty.0, &lim()), Err(SubmissionError::NoFiles { .. })));
    }
}
