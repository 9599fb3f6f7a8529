//! Bots' data on this machine (`koth match --data DIR`, `koth replay
//! rerun --data DIR`): the snapshots `koth_runner::storage` packs, kept in
//! a folder.
//!
//! ```text
//! DIR/snapshots/<hex>.tar   every snapshot, named by its sha256
//! DIR/bots/<name>-<version> the hash of the version's latest snapshot
//! ```
//!
//! A bot's version is its name and the hash of what it runs (language,
//! command, compiled files): an edited bot is a new version and starts
//! empty, as on a server. Seats of one version in one match each start
//! from its latest snapshot; their write-backs are compare-and-swap on
//! that snapshot, so the first seat's wins and the others' are discarded,
//! saying so (the server's rule: docs/scheduler.md, "Bot data").

use std::path::{Path, PathBuf};

use anyhow::Context;
use koth_runner::storage::{DataQuota, Snapshot, MAX_MAX_BYTES, MAX_MAX_FILES};
use koth_runner::BotSpec;

pub struct LocalData {
    dir: PathBuf,
}

/// Every snapshot koth wrote is read back whatever the quota is now.
const ANY: DataQuota = DataQuota { max_bytes: MAX_MAX_BYTES, max_files: MAX_MAX_FILES };

impl LocalData {
    pub fn open(dir: &Path) -> anyhow::Result<LocalData> {
        for sub in ["snapshots", "bots"] {
            std::fs::create_dir_all(dir.join(sub)).with_context(|| format!("creating {}", dir.join(sub).display()))?;
        }
        Ok(LocalData { dir: dir.to_path_buf() })
    }

    /// The name a bot version's data is kept under.
    pub fn key(spec: &BotSpec) -> String {
        let mut h = Vec::new();
        for part in [spec.language.as_str(), spec.program.as_str()].into_iter().chain(spec.args.iter().map(String::as_str)) {
            h.extend_from_slice(part.as_bytes());
            h.push(0);
        }
        let mut files: Vec<_> = spec.files.iter().collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        for (path, bytes, mode) in files {
            h.extend_from_slice(path.as_bytes());
            h.push(0);
            h.extend_from_slice(&mode.to_le_bytes());
            h.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            h.extend_from_slice(bytes);
        }
        let name: String =
            spec.name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' }).collect();
        let hash = koth_runner::storage::hash_of(&h);
        format!("{name}-{}", &hash["sha256:".len()..][..12])
    }

    fn snapshot_path(&self, hash: &str) -> anyhow::Result<PathBuf> {
        let hex = hash.strip_prefix("sha256:").filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
        let hex = hex.ok_or_else(|| anyhow::anyhow!("{hash:?} is not a snapshot's hash (sha256: and 64 hex digits)"))?;
        Ok(self.dir.join("snapshots").join(format!("{hex}.tar")))
    }

    /// The snapshot named `hash`, checked against its name.
    pub fn find(&self, hash: &str) -> anyhow::Result<Snapshot> {
        if hash == Snapshot::empty().hash {
            return Ok(Snapshot::empty());
        }
        let path = self.snapshot_path(hash)?;
        let bytes = std::fs::read(&path).with_context(|| format!("reading the snapshot {hash} ({})", path.display()))?;
        let s = Snapshot::from_archive(bytes, ANY).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        if s.hash != hash {
            anyhow::bail!("{} holds the snapshot {}, not {hash}", path.display(), s.hash);
        }
        Ok(s)
    }

    /// The latest snapshot of the version `key` (empty for a new one).
    pub fn latest(&self, key: &str) -> anyhow::Result<Snapshot> {
        let head = self.dir.join("bots").join(key);
        match std::fs::read_to_string(&head) {
            Ok(hash) => self.find(hash.trim()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Snapshot::empty()),
            Err(e) => Err(e).with_context(|| format!("reading {}", head.display())),
        }
    }

    /// Make `new` the version's latest if its latest is still `from`
    /// (compare-and-swap); false when another seat wrote first.
    pub fn advance(&self, key: &str, from: &str, new: &Snapshot) -> anyhow::Result<bool> {
        if self.latest(key)?.hash != from {
            return Ok(false);
        }
        let path = self.snapshot_path(&new.hash)?;
        write_atomic(&path, &new.archive)?;
        write_atomic(&self.dir.join("bots").join(key), new.hash.as_bytes())?;
        Ok(true)
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}
