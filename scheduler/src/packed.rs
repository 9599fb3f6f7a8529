//! Replays and frames as they are stored and served: compressed once, on
//! the runner, before the result's transaction opens; never expanded on
//! the way to a client that takes them compressed.
//!
//! A replay is JSON of ~330 bytes a turn, and a Flit match may have 32,768
//! turns: 11 MB as text, 10 MB as `jsonb`, whose write took 1.5–3 s inside
//! the transaction that records the result. Packed with zstd it is ~1.1 MB
//! (`koth bench replay` prints the figures for each game's longest match),
//! and the row write is a plain `bytea`.
//!
//! - **Replays** are zstd ([`REPLAY_LEVEL`]), compressed by the engine as
//!   the match is played (`ReplayTo::Zstd`: the runner never holds the
//!   match's turns, only what they pack to): the best ratio for their cost. A client
//!   that accepts `zstd` gets the stored bytes as they are
//!   (`Content-Encoding: zstd`); others get them expanded, and the web
//!   layer's gzip on top.
//! - **Frames** (the viewer's pictures, computed from the replay on first
//!   view) are gzip, which every browser takes, and kept in the match's row
//!   so they are computed once per match, not once per cache miss.
//!
//! Both are JSON underneath, so nothing else changes: the API's documents
//! are the same with or without these encodings. Expanding is bounded
//! ([`MAX_EXPANDED`]): a corrupt or hostile row is an error, not a
//! process that runs out of memory.

use std::io::{Read, Write};

use koth_games::replay::Replay;
use koth_runner::engine::record::{RecordedReplay, ReplayData};

/// zstd's level for replays. The longest Flit match (32,769 turns,
/// 10.7 MiB of JSON) packs, serializing included, in 44 ms of CPU (101 ms
/// of wall time on a 2-core machine at load 16) to 1.14 MiB; level 12,
/// used before, took 680 ms in the same run for 0.94 MiB, a fifth fewer
/// bytes (`koth bench replay`, which packs at both levels, alternated).
/// `zstd -b3 -e12` on that replay: level 3 at 660-730 MB/s, level 6 at
/// 110-140 MB/s (ratio 10.6 against 9.4), level 12 at 22-26 MB/s (11.4).
/// A replay is packed on the runner, as it is played, before its result
/// is written: past level 3 each step costs the runner several times the
/// CPU for a few percent of the bytes. Any level is read the same way:
/// replays packed at level 12 expand as they always did.
pub const REPLAY_LEVEL: i32 = 3;

/// The level replays were packed at before [`REPLAY_LEVEL`]:
/// `koth bench replay`'s anchor.
pub const FORMER_REPLAY_LEVEL: i32 = 12;

/// Largest JSON a stored replay or frames may expand to. The longest
/// match any game allows (Flit's 32,768 turns) is ~11 MB of replay.
pub const MAX_EXPANDED: u64 = 64 << 20;

/// A replay ready to store: its JSON, zstd-compressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedReplay {
    pub zstd: Vec<u8>,
    /// Bytes of the JSON it holds.
    pub json_len: usize,
}

impl PackedReplay {
    pub fn pack(replay: &Replay) -> PackedReplay {
        PackedReplay::pack_at(replay, REPLAY_LEVEL)
    }

    /// [`PackedReplay::pack`] at another zstd level (`koth bench replay`
    /// compares levels). The JSON is compressed as it is written, through
    /// a buffer, and never held whole: the longest replay's 11 MB buffer
    /// and its growth by doubling (copies and page faults) cost more than
    /// the compression at level 3.
    pub fn pack_at(replay: &Replay, level: i32) -> PackedReplay {
        let encoder = zstd::stream::write::Encoder::new(Vec::new(), level).expect("zstd accepts the level");
        let mut out = std::io::BufWriter::with_capacity(128 << 10, Counted { inner: encoder, bytes: 0 });
        // A Replay is plain data (strings, numbers, JSON values): it always
        // serializes, and writing to memory cannot fail.
        serde_json::to_writer(&mut out, replay).expect("a replay serializes");
        let counted = out.into_inner().map_err(|e| e.into_error()).expect("zstd compresses into memory");
        let zstd = counted.inner.finish().expect("zstd compresses into memory");
        PackedReplay { zstd, json_len: counted.bytes }
    }

    /// A replay as the engine wrote it: taken as it is when compressed as
    /// it was played (the runner's way), else compressed now.
    pub fn from_recorded(recorded: RecordedReplay) -> Result<PackedReplay, String> {
        let json_len = recorded.json_len as usize;
        match recorded.data {
            ReplayData::Zstd(zstd) => Ok(PackedReplay { zstd, json_len }),
            _ => {
                let json = recorded.json()?;
                let zstd = zstd::bulk::compress(&json, REPLAY_LEVEL).map_err(|e| format!("compressing the replay: {e}"))?;
                Ok(PackedReplay { zstd, json_len })
            }
        }
    }

    /// The replay back, typed.
    pub fn unpack(&self) -> Result<Replay, String> {
        Replay::from_json(&unzstd(&self.zstd)?)
    }
}

impl From<&Replay> for PackedReplay {
    fn from(r: &Replay) -> Self {
        PackedReplay::pack(r)
    }
}

/// A writer that counts the bytes written through it.
struct Counted<W> {
    inner: W,
    bytes: usize,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Expand zstd bytes, up to [`MAX_EXPANDED`].
pub fn unzstd(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let decoder = zstd::stream::read::Decoder::new(bytes).map_err(|e| format!("the stored replay cannot be read: {e}"))?;
    bounded(decoder, "replay")
}

/// Compress frames' JSON for storing and serving.
pub fn gzip(json: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::with_capacity(json.len() / 8), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    e.write_all(json).expect("gzip into memory");
    e.finish().expect("gzip into memory")
}

/// Expand gzip bytes, up to [`MAX_EXPANDED`].
pub fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, String> {
    bounded(flate2::read::GzDecoder::new(bytes), "frames")
}

fn bounded(reader: impl Read, what: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    reader.take(MAX_EXPANDED + 1).read_to_end(&mut out).map_err(|e| format!("the stored {what} cannot be read: {e}"))?;
    if out.len() as u64 > MAX_EXPANDED {
        return Err(format!("the stored {what} expands past {} MiB", MAX_EXPANDED >> 20));
    }
    Ok(out)
}

/// Whether a request's `Accept-Encoding` takes `coding` (RFC 9110 §12.5.3:
/// a coding listed with `q=0` is refused; `*` stands for any not listed).
pub fn accepts(accept_encoding: Option<&str>, coding: &str) -> bool {
    let Some(header) = accept_encoding else { return false };
    let mut star = None;
    for item in header.split(',') {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or("").trim();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        if name.eq_ignore_ascii_case(coding) {
            return q > 0.0;
        }
        if name == "*" {
            star = Some(q > 0.0);
        }
    }
    star.unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay() -> Replay {
        let turns: Vec<_> = (1..=500)
            .map(|t| serde_json::json!({"turn": t, "answers": [{"seat": t % 2, "answer": format!("{} {}", t % 7, t % 5)}]}))
            .collect();
        Replay::from_value(&serde_json::json!({"game": "target", "seed": "7", "seats": [{}, {}], "turns": turns})).unwrap()
    }

    #[test]
    fn a_packed_replay_unpacks_to_itself_and_is_smaller() {
        let r = replay();
        let p = PackedReplay::pack(&r);
        assert_eq!(p.unpack().unwrap(), r);
        assert_eq!(p.json_len, serde_json::to_vec(&r).unwrap().len());
        assert!(p.zstd.len() * 10 < p.json_len, "{} of {}", p.zstd.len(), p.json_len);
    }

    /// A replay compressed as it was played is stored as it is; one kept
    /// as JSON is packed now; both unpack to the replay.
    #[test]
    fn a_recorded_replay_packs_whichever_way_it_was_written() {
        let r = replay();
        let json = serde_json::to_vec(&r).unwrap();
        let streamed = zstd::stream::encode_all(json.as_slice(), 3).unwrap();
        let as_played = RecordedReplay { json_len: json.len() as u64, data: ReplayData::Zstd(streamed.clone()) };
        let p = PackedReplay::from_recorded(as_played).unwrap();
        assert_eq!((p.zstd.as_slice(), p.json_len), (streamed.as_slice(), json.len()));
        assert_eq!(p.unpack().unwrap(), r);
        let kept = RecordedReplay { json_len: json.len() as u64, data: ReplayData::Json(json.clone()) };
        let p = PackedReplay::from_recorded(kept).unwrap();
        assert_eq!((p.unpack().unwrap(), p.json_len), (r, json.len()));
    }

    /// Whatever the level it was packed at (replays stored before were
    /// packed at level 12), a stored replay unpacks the same way, to the
    /// same replay, and the levels' bytes differ.
    #[test]
    fn replays_packed_at_any_level_unpack_to_the_replay() {
        let r = replay();
        let json = serde_json::to_vec(&r).unwrap();
        let (now, former) = (PackedReplay::pack(&r), PackedReplay::pack_at(&r, FORMER_REPLAY_LEVEL));
        assert_ne!(now.zstd, former.zstd);
        for (level, p) in [(REPLAY_LEVEL, &now), (FORMER_REPLAY_LEVEL, &former), (19, &PackedReplay::pack_at(&r, 19))] {
            assert_eq!(p.json_len, json.len(), "level {level}");
            assert_eq!(unzstd(&p.zstd).unwrap(), json, "level {level}");
            assert_eq!(p.unpack().unwrap(), r, "level {level}");
        }
        // What the bulk API of the format's other writers makes reads too.
        let bulk = PackedReplay { zstd: zstd::bulk::compress(&json, FORMER_REPLAY_LEVEL).unwrap(), json_len: json.len() };
        assert_eq!(bulk.unpack().unwrap(), r);
    }

    #[test]
    fn corrupt_or_oversized_stored_bytes_are_errors() {
        let mut p = PackedReplay::pack(&replay());
        p.zstd.truncate(p.zstd.len() / 2);
        assert!(p.unpack().unwrap_err().contains("cannot be read"));
        assert!(unzstd(b"not zstd at all").unwrap_err().contains("cannot be read"));
        assert!(gunzip(b"not gzip").unwrap_err().contains("frames cannot be read"));
        // A bomb: 100 MiB of zeros packs to a few KiB and must not expand.
        let zeros = std::io::repeat(0).take(100 << 20);
        let bomb = zstd::stream::encode_all(zeros, 3).unwrap();
        assert!(bomb.len() < 1 << 20);
        assert!(unzstd(&bomb).unwrap_err().contains("expands past 64 MiB"));
    }

    #[test]
    fn frames_gzip_round_trip() {
        let json = br#"{"frames":[{"turn":0,"changes":[]}]}"#.repeat(100);
        assert_eq!(gunzip(&gzip(&json)).unwrap(), json);
    }

    #[test]
    fn accept_encoding_is_read_as_rfc_9110_says() {
        let cases = [
            (None, "zstd", false),
            (Some(""), "zstd", false),
            (Some("gzip, deflate, br, zstd"), "zstd", true),
            (Some("gzip, deflate, br, zstd"), "gzip", true),
            (Some("gzip;q=0.5, zstd;q=0"), "zstd", false),
            (Some("gzip;q=0.5, zstd;q=0"), "gzip", true),
            (Some("GZIP"), "gzip", true),
            (Some("*"), "zstd", true),
            (Some("zstd;q=0, *"), "zstd", false),
            (Some("identity"), "gzip", false),
            (Some("xzstd, zstdx"), "zstd", false),
        ];
        for (header, coding, want) in cases {
            assert_eq!(accepts(header, coding), want, "{header:?} {coding}");
        }
    }
}
