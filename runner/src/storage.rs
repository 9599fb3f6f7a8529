//! A bot's data carried from match to match: its folder, packed as a
//! deterministic archive (a *snapshot*) named by its content hash.
//!
//! ```text
//! snapshot (tar, sha256) ──unpack──▶ the bot's folder (before its own files)
//!   match ends by the rules ──read_tree (no symlink followed, no hard link,
//!   within the quota)──▶ pack ──▶ the new snapshot
//! ```
//!
//! The archive is a ustar file with only regular files, sorted by path,
//! each with mtime 0, uid/gid 0, no user or group names, and mode 0644 or
//! 0755: the same files give the same bytes, hence the same hash, on any
//! machine. Unpacking refuses anything else (a symbolic link, a hard link,
//! a device, an absolute path, `..`), so an archive cannot name anything
//! outside the folder; packing reads the folder through
//! [`koth_sandbox::WorkDir::read_tree`], which never follows a symbolic
//! link and refuses a file with several hard links, so what a hostile bot
//! planted (a link to `/etc/passwd`, or to another bot's folder) is not
//! carried. Empty folders are not kept.
//!
//! Which snapshot a match starts from and whether its end writes one back
//! is the caller's business (the scheduler's worker, `koth match --data`);
//! the engine unpacks, packs and reports ([`DataOutcome`]).

use std::io::Read;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Bytes a bot's data may hold unless a ladder says otherwise.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 20;
/// Files a bot's data may hold unless a ladder says otherwise.
pub const DEFAULT_MAX_FILES: usize = 64;
/// The most a ladder may allow.
pub const MAX_MAX_BYTES: u64 = 64 << 20;
pub const MAX_MAX_FILES: usize = 10_000;

/// How much a bot's data may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataQuota {
    pub max_bytes: u64,
    pub max_files: usize,
}

impl Default for DataQuota {
    fn default() -> DataQuota {
        DataQuota { max_bytes: DEFAULT_MAX_BYTES, max_files: DEFAULT_MAX_FILES }
    }
}

impl DataQuota {
    /// A quota a host asked for, refused with what is allowed.
    pub fn new(max_bytes: u64, max_files: usize) -> Result<DataQuota, String> {
        if max_bytes == 0 || max_bytes > MAX_MAX_BYTES {
            return Err(format!("the data quota's bytes must be 1 to {MAX_MAX_BYTES} (64 MiB), not {max_bytes}"));
        }
        if max_files == 0 || max_files > MAX_MAX_FILES {
            return Err(format!("the data quota's files must be 1 to {MAX_MAX_FILES}, not {max_files}"));
        }
        Ok(DataQuota { max_bytes, max_files })
    }
}

/// One file of a bot's data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataFile {
    /// `/`-separated, relative, plain names only.
    pub path: String,
    pub bytes: Vec<u8>,
    /// Executable by its owner.
    pub executable: bool,
}

/// A packed folder and its hash.
#[derive(Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// `sha256:` and the archive's hash in hex.
    pub hash: String,
    pub archive: Vec<u8>,
    pub files: usize,
    pub bytes: u64,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Snapshot({}, {} files, {} bytes)", self.hash, self.files, self.bytes)
    }
}

/// The hash a snapshot is named by.
pub fn hash_of(archive: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(archive)))
}

/// Whether `path` is a plain relative name (no `/` at either end, no `.`,
/// `..` or empty component, no NUL).
fn plain(path: &str) -> bool {
    !path.is_empty() && !path.contains('\0') && path.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

impl Snapshot {
    /// The empty folder: what a bot version's first match starts from.
    pub fn empty() -> Snapshot {
        Snapshot::pack(Vec::new()).expect("no files")
    }

    /// Pack `files` (in any order). Refuses a name that is not plain.
    pub fn pack(mut files: Vec<DataFile>) -> Result<Snapshot, String> {
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let mut out = tar::Builder::new(Vec::new());
        let mut bytes = 0u64;
        for (i, f) in files.iter().enumerate() {
            if !plain(&f.path) {
                return Err(format!("{:?} is not a plain relative path", f.path));
            }
            if i > 0 && files[i - 1].path == f.path {
                return Err(format!("{:?} is named twice", f.path));
            }
            let mut h = tar::Header::new_ustar();
            h.set_entry_type(tar::EntryType::Regular);
            h.set_size(f.bytes.len() as u64);
            h.set_mode(if f.executable { 0o755 } else { 0o644 });
            h.set_mtime(0);
            h.set_uid(0);
            h.set_gid(0);
            out.append_data(&mut h, &f.path, f.bytes.as_slice()).map_err(|e| format!("packing {:?}: {e}", f.path))?;
            bytes += f.bytes.len() as u64;
        }
        let archive = out.into_inner().map_err(|e| format!("packing: {e}"))?;
        Ok(Snapshot { hash: hash_of(&archive), archive, files: files.len(), bytes })
    }

    /// A stored archive, checked: only regular files with plain names,
    /// within `quota`, and packed as [`Snapshot::pack`] packs (so its hash
    /// is the one the same files always get).
    pub fn from_archive(archive: Vec<u8>, quota: DataQuota) -> Result<Snapshot, String> {
        let files = unpack(&archive, quota)?;
        let again = Snapshot::pack(files)?;
        if again.archive != archive {
            return Err("the archive is not in koth's deterministic form (sorted entries, mtime 0, owner 0)".into());
        }
        Ok(again)
    }

    /// The files it holds.
    pub fn files(&self) -> Vec<DataFile> {
        unpack(&self.archive, DataQuota { max_bytes: u64::MAX, max_files: usize::MAX }).expect("packed by Snapshot::pack")
    }
}

/// The files of `archive`, refusing anything but regular files with plain
/// names, and more than `quota`.
pub fn unpack(archive: &[u8], quota: DataQuota) -> Result<Vec<DataFile>, String> {
    let mut a = tar::Archive::new(archive);
    let mut out: Vec<DataFile> = Vec::new();
    let mut total = 0u64;
    for entry in a.entries().map_err(|e| format!("reading the archive: {e}"))? {
        let mut e = entry.map_err(|e| format!("reading the archive: {e}"))?;
        let path = String::from_utf8(e.path_bytes().into_owned()).map_err(|_| "a name in the archive is not UTF-8".to_string())?;
        let kind = e.header().entry_type();
        if kind != tar::EntryType::Regular {
            return Err(format!("{path:?} is a {kind:?} entry; a bot's data holds regular files only"));
        }
        if !plain(&path) {
            return Err(format!("{path:?} is not a plain relative path"));
        }
        if out.len() >= quota.max_files {
            return Err(format!("it holds more than {} files", quota.max_files));
        }
        let size = e.header().size().map_err(|e| format!("reading {path:?}: {e}"))?;
        if total.saturating_add(size) > quota.max_bytes {
            return Err(format!("it holds more than {} bytes", quota.max_bytes));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        e.read_to_end(&mut bytes).map_err(|e| format!("reading {path:?}: {e}"))?;
        total += bytes.len() as u64;
        let executable = e.header().mode().map_err(|e| format!("reading {path:?}: {e}"))? & 0o100 != 0;
        out.push(DataFile { path, bytes, executable });
    }
    Ok(out)
}

/// Why a match's end wrote no new snapshot for a seat.
pub fn over_quota(files: usize, bytes: u64, quota: DataQuota) -> Option<String> {
    if files > quota.max_files {
        return Some(format!("its folder held {files} files, over its quota of {}", quota.max_files));
    }
    if bytes > quota.max_bytes {
        return Some(format!("its folder held {bytes} bytes, over its quota of {} bytes", quota.max_bytes));
    }
    None
}

/// A seat's data for one match: the snapshot it starts from, its quota.
#[derive(Clone, Debug)]
pub struct SeatData {
    pub from: Snapshot,
    pub quota: DataQuota,
}

/// What became of a seat's data in a match.
#[derive(Clone, Debug, Serialize)]
pub struct DataOutcome {
    /// The snapshot the seat started from.
    pub started_from: String,
    /// The snapshot its folder was packed into at the end, when the match
    /// ended normally and the folder was within the quota.
    pub written: Option<String>,
    /// Why nothing was written (the previous snapshot stays the bot's).
    pub kept_because: Option<String>,
    /// The new snapshot's archive (when `written`).
    #[serde(skip)]
    pub snapshot: Option<Snapshot>,
}

impl DataOutcome {
    /// The words a report, a replay and a bot's page show.
    pub fn describe(&self) -> String {
        match (&self.written, &self.kept_because) {
            (Some(h), _) => match &self.snapshot {
                Some(s) => format!("data saved: {} files, {} bytes ({})", s.files, s.bytes, short(h)),
                None => format!("data saved ({})", short(h)),
            },
            (None, Some(why)) => format!("data not saved, the previous snapshot ({}) is kept: {why}", short(&self.started_from)),
            (None, None) => format!("data not saved, the previous snapshot ({}) is kept", short(&self.started_from)),
        }
    }
}

/// `sha256:` and the first 12 hex digits.
pub fn short(hash: &str) -> &str {
    &hash[..hash.len().min(19)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, bytes: &[u8]) -> DataFile {
        DataFile { path: path.into(), bytes: bytes.to_vec(), executable: false }
    }

    #[test]
    fn the_same_files_in_any_order_give_the_same_bytes_and_hash() {
        let a = Snapshot::pack(vec![f("b/c.txt", b"2"), f("a.txt", b"1")]).unwrap();
        let b = Snapshot::pack(vec![f("a.txt", b"1"), f("b/c.txt", b"2")]).unwrap();
        assert_eq!(a, b);
        assert_eq!((a.files, a.bytes), (2, 2));
        assert!(a.hash.starts_with("sha256:") && a.hash.len() == 71, "{}", a.hash);
        assert_eq!(a.files(), vec![f("a.txt", b"1"), f("b/c.txt", b"2")]);
        assert_eq!(Snapshot::from_archive(a.archive.clone(), DataQuota::default()).unwrap(), a);
        assert_ne!(a.hash, Snapshot::pack(vec![f("a.txt", b"1")]).unwrap().hash);
        // The empty folder has one fixed hash (two zero blocks of 512 bytes).
        assert_eq!(Snapshot::empty().archive, vec![0u8; 1024]);
        assert_eq!(Snapshot::empty().hash, hash_of(&[0u8; 1024]));
    }

    #[test]
    fn names_that_leave_the_folder_are_refused_by_pack_and_unpack() {
        for bad in ["/etc/passwd", "../x", "a/../../x", "a//b", "./a", "", "a/"] {
            assert!(Snapshot::pack(vec![f(bad, b"x")]).is_err(), "{bad:?} packed");
        }
        // Hand-made hostile archives: a symlink, a hard link, a device, `..`.
        let hostile = |kind: tar::EntryType, name: &str, link: Option<&str>| {
            let mut b = tar::Builder::new(Vec::new());
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(kind);
            h.set_size(0);
            h.set_mode(0o644);
            if let Some(l) = link {
                h.set_link_name(l).unwrap();
            }
            // Written raw: `append_data` itself refuses `..`.
            let name_field = &mut h.as_old_mut().name;
            name_field[..name.len()].copy_from_slice(name.as_bytes());
            h.set_cksum();
            b.append(&h, std::io::empty()).unwrap();
            b.into_inner().unwrap()
        };
        let cases = [
            (hostile(tar::EntryType::Symlink, "p", Some("/etc/passwd")), "Symlink"),
            (hostile(tar::EntryType::Link, "p", Some("/etc/passwd")), "Link"),
            (hostile(tar::EntryType::Char, "tty", None), "Char"),
            (hostile(tar::EntryType::Regular, "../up", None), "not a plain relative path"),
            (hostile(tar::EntryType::Regular, "/abs", None), "not a plain relative path"),
        ];
        for (archive, why) in cases {
            let e = unpack(&archive, DataQuota::default()).unwrap_err();
            assert!(e.contains(why), "{e}");
            assert!(Snapshot::from_archive(archive, DataQuota::default()).is_err());
        }
    }

    #[test]
    fn quotas_are_held_on_unpack_and_named_when_exceeded() {
        let s = Snapshot::pack(vec![f("a", b"12345"), f("b", b"678")]).unwrap();
        assert!(unpack(&s.archive, DataQuota { max_bytes: 8, max_files: 2 }).is_ok());
        assert_eq!(unpack(&s.archive, DataQuota { max_bytes: 7, max_files: 2 }).unwrap_err(), "it holds more than 7 bytes");
        assert_eq!(unpack(&s.archive, DataQuota { max_bytes: 8, max_files: 1 }).unwrap_err(), "it holds more than 1 files");
        let q = DataQuota { max_bytes: 10, max_files: 2 };
        assert_eq!(over_quota(2, 10, q), None);
        assert_eq!(over_quota(3, 1, q).unwrap(), "its folder held 3 files, over its quota of 2");
        assert_eq!(over_quota(1, 11, q).unwrap(), "its folder held 11 bytes, over its quota of 10 bytes");
        assert!(DataQuota::new(0, 1).is_err() && DataQuota::new(1, 0).is_err() && DataQuota::new(MAX_MAX_BYTES + 1, 1).is_err());
        assert_eq!(DataQuota::new(5, 6).unwrap(), DataQuota { max_bytes: 5, max_files: 6 });
    }

    #[test]
    fn a_non_canonical_archive_is_refused() {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_ustar();
        h.set_size(1);
        h.set_mode(0o644);
        h.set_mtime(12345);
        b.append_data(&mut h, "a", &b"x"[..]).unwrap();
        let e = Snapshot::from_archive(b.into_inner().unwrap(), DataQuota::default()).unwrap_err();
        assert!(e.contains("deterministic form"), "{e}");
    }
}
