//! A bot's files as plain data: an [`Artifact`] is a folder's regular
//! files, written and read as an uncompressed tar archive so that it can be
//! stored in the database, cached on disk and moved to any runner. Both the
//! stored sources of a submission and a compiled bot are artifacts.

use koth_sandbox::TreeFile;

/// Largest artifact, in bytes, and most files in one.
pub const MAX_ARTIFACT_BYTES: u64 = 128 << 20;
pub const MAX_ARTIFACT_FILES: usize = 4096;

/// The files a bot runs from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    pub files: Vec<TreeFile>,
}

impl Artifact {
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.bytes.len() as u64).sum()
    }

    /// The artifact as an uncompressed tar archive (paths sorted, times zero:
    /// equal artifacts give equal bytes).
    pub fn to_tar(&self) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for f in &self.files {
            let mut h = tar::Header::new_ustar();
            h.set_size(f.bytes.len() as u64);
            h.set_mode(f.mode);
            h.set_mtime(0);
            h.set_entry_type(tar::EntryType::Regular);
            b.append_data(&mut h, &f.path, f.bytes.as_slice()).expect("writing to memory");
        }
        b.into_inner().expect("writing to memory")
    }

    /// Read an artifact written by [`Artifact::to_tar`]. Only regular files
    /// with plain relative paths are accepted; limits as for compiling.
    pub fn from_tar(bytes: &[u8]) -> Result<Artifact, String> {
        use std::io::Read;
        let mut files = Vec::new();
        let mut total = 0u64;
        let mut archive = tar::Archive::new(bytes);
        for entry in archive.entries().map_err(|e| format!("reading the artifact: {e}"))? {
            let mut entry = entry.map_err(|e| format!("reading the artifact: {e}"))?;
            if entry.header().entry_type() != tar::EntryType::Regular {
                return Err("the artifact holds something other than regular files".into());
            }
            let path = entry.path().map_err(|e| format!("reading the artifact: {e}"))?.to_string_lossy().into_owned();
            if path.starts_with('/') || path.split('/').any(|c| c == ".." || c.is_empty()) {
                return Err(format!("the artifact holds an unsafe path {path:?}"));
            }
            let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
            let mut data = Vec::new();
            entry.by_ref().take(MAX_ARTIFACT_BYTES - total + 1).read_to_end(&mut data).map_err(|e| format!("reading the artifact: {e}"))?;
            total += data.len() as u64;
            if total > MAX_ARTIFACT_BYTES || files.len() >= MAX_ARTIFACT_FILES {
                return Err("the artifact is over the size or file-count limit".into());
            }
            files.push(TreeFile { path, bytes: data, mode });
        }
        Ok(Artifact { files })
    }
}
