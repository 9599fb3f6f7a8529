//! Replays and frames as they are stored and served: compressed once, on
//! the runner, before the result's transaction opens; never expanded on
//! the way to a client that takes them compressed.
//!
//! A replay is JSON of ~330 bytes a turn, and a Flit match may have 32,768
//! turns: 11 MB as text, 10 MB as `jsonb`, whose write took 1.5–3 s inside
//! the transaction that records the result. Packed with zstd it is ~1 MB
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

/// zstd's level for replays: ~0.25 s for the longest Flit match (on the
/// runner, after the match), against 0.03 s at level 3 for a third more
/// bytes, and 5 s at level 19 for a fifth fewer.
pub const REPLAY_LEVEL: i32 = 12;

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
        // A Replay is plain data (strings, numbers, JSON values): it always
        // serializes.
        let json = serde_json::to_vec(replay).expect("a replay serializes");
        let zstd = zstd::bulk::compress(&json, REPLAY_LEVEL).expect("zstd compresses a buffer in memory");
        PackedReplay { zstd, json_len: json.len() }
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
