//! Where a match's replay goes while it is played, and what is left of it
//! after: the engine writes each turn once judged ([`ReplayWriter`]) and
//! keeps none, so a match's memory does not grow with its turns.
//!
//! A runner compresses as it plays (what it stores is zstd); `koth match
//! --replay` writes the file; benchmarks and checks that read the replay at
//! once keep its compact JSON in memory. Whichever, the replay is bounded:
//! [`MatchOptions::replay_limit`](super::MatchOptions::replay_limit) bytes
//! of compact JSON, and one turn more at most.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;

use koth_games::replay::Replay;

/// The default limit on a match's replay, compact JSON: three times the
/// longest replay koth's own games write (Flit's 32,769 turns, ~11 MiB).
pub const DEFAULT_REPLAY_LIMIT: u64 = 32 << 20;

/// The most a host may allow: a stored replay must expand within the
/// service's 64 MiB bound on what it reads back
/// (`koth_scheduler::packed::MAX_EXPANDED`), and a replay may pass its
/// limit by its last turn (a referee's line is at most 1 MiB).
pub const MAX_REPLAY_LIMIT: u64 = 56 << 20;

/// Where the engine writes a match's replay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ReplayTo {
    /// Compact JSON in memory, for a caller that reads the replay at once.
    #[default]
    Memory,
    /// A file, written as the match is played.
    File(PathBuf),
    /// zstd at this level, compressed as the match is played (what a
    /// runner stores).
    Zstd { level: i32 },
}

/// A match's replay as written.
pub struct RecordedReplay {
    /// Bytes of its JSON.
    pub json_len: u64,
    pub data: ReplayData,
}

pub enum ReplayData {
    Json(Vec<u8>),
    File(PathBuf),
    Zstd(Vec<u8>),
}

impl std::fmt::Debug for RecordedReplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, bytes) = match &self.data {
            ReplayData::Json(b) => ("json", b.len() as u64),
            ReplayData::File(p) => (p.to_str().unwrap_or("a file"), self.json_len),
            ReplayData::Zstd(z) => ("zstd", z.len() as u64),
        };
        write!(f, "RecordedReplay {{ json_len: {}, {kind}: {bytes} bytes }}", self.json_len)
    }
}

impl RecordedReplay {
    /// The replay's JSON.
    pub fn json(&self) -> Result<Vec<u8>, String> {
        match &self.data {
            ReplayData::Json(b) => Ok(b.clone()),
            ReplayData::File(p) => std::fs::read(p).map_err(|e| format!("reading the replay {}: {e}", p.display())),
            ReplayData::Zstd(z) => {
                let mut out = Vec::with_capacity(self.json_len as usize);
                let decoder = zstd::stream::read::Decoder::new(z.as_slice()).map_err(|e| format!("the replay cannot be read: {e}"))?;
                // It expands to what the engine wrote, never more.
                decoder.take(self.json_len).read_to_end(&mut out).map_err(|e| format!("the replay cannot be read: {e}"))?;
                Ok(out)
            }
        }
    }

    /// The replay, typed.
    pub fn read(&self) -> Result<Replay, String> {
        match &self.data {
            ReplayData::Json(b) => Replay::from_json(b),
            _ => Replay::from_json(&self.json()?),
        }
    }
}

/// What the engine writes to.
pub(crate) enum Sink {
    Memory(Vec<u8>),
    File(BufWriter<File>, PathBuf),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
}

impl Sink {
    pub(crate) fn open(to: &ReplayTo) -> std::io::Result<Sink> {
        Ok(match to {
            ReplayTo::Memory => Sink::Memory(Vec::new()),
            ReplayTo::File(p) => Sink::File(BufWriter::new(File::create(p)?), p.clone()),
            ReplayTo::Zstd { level } => Sink::Zstd(zstd::stream::write::Encoder::new(Vec::new(), *level)?),
        })
    }

    pub(crate) fn close(self, json_len: u64) -> std::io::Result<RecordedReplay> {
        let data = match self {
            Sink::Memory(b) => ReplayData::Json(b),
            Sink::File(w, p) => {
                w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
                ReplayData::File(p)
            }
            Sink::Zstd(e) => ReplayData::Zstd(e.finish()?),
        };
        Ok(RecordedReplay { json_len, data })
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Memory(v) => v.write(buf),
            Sink::File(w, _) => w.write(buf),
            Sink::Zstd(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Memory(_) => Ok(()),
            Sink::File(w, _) => w.flush(),
            Sink::Zstd(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use koth_games::replay::{EndedBy, ReplayWriter, Turn};

    fn write_to(to: &ReplayTo) -> RecordedReplay {
        let game = koth_games::GameKind::Target.into();
        let mut w = ReplayWriter::begin(Sink::open(to).unwrap(), &game, 9, "e", None, &serde_json::json!({})).unwrap();
        for n in 1..=300 {
            let p = w.prepare(&Turn { turn: n, ..Turn::default() }).unwrap();
            w.commit(&p).unwrap();
        }
        let (sink, len) = w.finish(&[], &[], false, &EndedBy::Rules).unwrap();
        sink.close(len).unwrap()
    }

    /// Each sink gives back the same replay, in as many bytes as written.
    #[test]
    fn every_sink_reads_back_the_replay_written() {
        let file = std::env::temp_dir().join(format!("koth-record-test-{}.json", std::process::id()));
        let mut seen = Vec::new();
        for to in [ReplayTo::Memory, ReplayTo::File(file.clone()), ReplayTo::Zstd { level: 3 }] {
            let r = write_to(&to);
            let json = r.json().unwrap();
            assert_eq!(json.len() as u64, r.json_len, "{to:?}");
            let replay = r.read().unwrap();
            assert_eq!(replay.turns.len(), 300);
            seen.push(json);
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]));
        if let ReplayData::Zstd(z) = write_to(&ReplayTo::Zstd { level: 3 }).data {
            assert!(z.len() * 5 < seen[0].len(), "{} of {}", z.len(), seen[0].len());
        }
        let _ = std::fs::remove_file(file);
    }
}
