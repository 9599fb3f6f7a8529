//! A bot's data carried from match to match, in real boxes: the engine
//! starts each seat's folder from its snapshot and packs it again when the
//! match ends normally, within its quota, carrying nothing a hostile bot
//! planted (see `koth_runner::storage`).

mod common;

use common::*;
use koth_games::GameKind;
use koth_runner::engine::MatchOptions;
use koth_runner::storage::{DataOutcome, DataQuota, SeatData, Snapshot};

/// One Target match of `keeper.py` (with `args`) in seat 1, starting
/// from `from`, against a bot with no data.
fn keeper_match(from: &Snapshot, quota: DataQuota, args: &[&str]) -> (DataOutcome, String) {
    let opts =
        MatchOptions { max_turns: Some(3), data: vec![Some(SeatData { from: from.clone(), quota })], ..options(GameKind::Target, 7) };
    let r = play(&opts, vec![test_bot("keeper.py", args), test_bot("sleeper.py", &["0", "0"])]).unwrap();
    assert!(r.ended_by.has_result(), "{:?}", r.ended_by);
    assert!(r.outcomes[1].data.is_none(), "the seat without data has none");
    let replay = r.replay.read().unwrap();
    let seat = replay.seats[0].data.clone().expect("the replay records the seat's data");
    let d = r.outcomes[0].data.clone().expect("the seat carries data");
    assert_eq!(seat.started_from, from.hash);
    assert_eq!((seat.written.as_ref(), seat.kept_because.as_ref()), (d.written.as_ref(), d.kept_because.as_ref()));
    assert!(replay.seats[1].data.is_none());
    (d, r.outcomes[0].stderr.clone())
}

fn file(s: &Snapshot, path: &str) -> Option<String> {
    s.files().into_iter().find(|f| f.path == path).map(|f| String::from_utf8(f.bytes).unwrap())
}

#[test]
fn a_bot_counts_its_matches_and_keeps_its_data_within_its_quota() {
    if !sandbox_ok() {
        return;
    }
    let quota = DataQuota { max_bytes: 4096, max_files: 4 };
    let mut snap = Snapshot::empty();
    let mut hashes = vec![snap.hash.clone()];
    for n in 1..=3 {
        let (d, stderr) = keeper_match(&snap, quota, &[]);
        assert!(stderr.contains(&format!("match {n}\n")), "match {n}: {stderr}");
        assert_eq!(d.kept_because, None, "{stderr}");
        snap = d.snapshot.expect("written");
        assert_eq!(d.written.as_deref(), Some(snap.hash.as_str()));
        // Only its data: not the bot's own file (keeper.py).
        assert_eq!(snap.files().iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["count.txt"]);
        assert_eq!(file(&snap, "count.txt").as_deref(), Some(n.to_string().as_str()));
        hashes.push(snap.hash.clone());
    }
    // The same files give the same snapshot: match 2 starts where match 1 ended.
    assert_eq!(Snapshot::pack(snap.files()).unwrap().hash, hashes[3]);
    assert_eq!(hashes.iter().collect::<std::collections::HashSet<_>>().len(), 4);

    // Past its quota in bytes: a clear word, nothing written, and the next
    // match starts from what it had (its count 3, now 4).
    let (d, stderr) = keeper_match(&snap, quota, &["fill=5000"]);
    assert!(stderr.contains("match 4\n"), "{stderr}");
    assert_eq!(d.written, None);
    let why = d.kept_because.clone().unwrap();
    assert!(why.contains("over its quota") && why.contains("4096"), "{why}");
    assert!(d.describe().starts_with("data not saved, the previous snapshot (sha256:"), "{}", d.describe());
    let (d, stderr) = keeper_match(&snap, quota, &[]);
    assert!(stderr.contains("match 4\n"), "it lost nothing it had: {stderr}");
    assert_eq!(file(d.snapshot.as_ref().unwrap(), "count.txt").as_deref(), Some("4"));

    // Past its quota in files.
    let small = DataQuota { max_bytes: 4096, max_files: 1 };
    let (d, _) = keeper_match(&snap, small, &["fill=10"]);
    assert!(d.kept_because.unwrap().contains("files"), "over in files");
}

#[test]
fn links_a_hostile_bot_plants_carry_nothing_to_its_next_match() {
    if !sandbox_ok() {
        return;
    }
    let quota = DataQuota::default();
    // Symbolic links to /etc/passwd, to the box's whole root, to the
    // folder above: skipped when packing, never followed.
    let (d, stderr) = keeper_match(&Snapshot::empty(), quota, &["plant"]);
    assert!(stderr.contains("no passwd") && stderr.contains("ready"), "{stderr}");
    let snap = d.snapshot.expect("the links are skipped, the count kept");
    assert_eq!(snap.files().iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["count.txt"]);
    assert!(!String::from_utf8_lossy(&snap.archive).contains("root:"), "nothing of /etc/passwd in the archive");
    let (_, stderr) = keeper_match(&snap, quota, &[]);
    for name in ["passwd", "root", "up"] {
        assert!(stderr.contains(&format!("no {name}\n")), "{name} came back: {stderr}");
    }
    assert!(stderr.contains("match 2\n"), "{stderr}");

    // A hard link: the folder is refused as a whole, saying why, and the
    // bot keeps the snapshot it started from.
    let (d, _) = keeper_match(&snap, quota, &["hardlink"]);
    assert_eq!(d.written, None);
    let why = d.kept_because.unwrap();
    assert!(why.contains("hard link"), "{why}");
}

/// A match that does not end normally writes nothing back: its referee
/// crashed on turn 3 (the match has no result), and the bot keeps the
/// snapshot it started from, saying why.
#[test]
fn a_match_whose_referee_failed_writes_no_data_back() {
    if !sandbox_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("koth-storage-referee-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(repo().join("runner/tests/bots/referee.py"), dir.join("referee.py")).unwrap();
    let manifest = serde_json::json!({
        "name": "crashing", "seats": {"min": 2, "max": 2}, "protocol": "stdio",
        "time_policy": {"per_move": 50, "on_timeout": {"kind": "no_move", "freeze_after": 5}},
        "max_turns": 1000, "bot_data": true,
        "referee": {"main": "referee.py", "limits": {"per_call_ms": 500, "match_cpu_ms": 20000, "memory_mb": 64}},
        "settings": {"mode": "crash", "at": 3, "rounds": 40},
    });
    std::fs::write(dir.join("game.json"), manifest.to_string()).unwrap();
    let game = koth_runner::Game::find(&dir.display().to_string(), &koth_runner::bot::Builder::host(sandbox_config())).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(game.keeps_bot_data(), "its game.json offers bot data");
    let from =
        Snapshot::pack(vec![koth_runner::storage::DataFile { path: "count.txt".into(), bytes: b"7".to_vec(), executable: false }]).unwrap();
    let opts = MatchOptions {
        sandbox: sandbox_config(),
        data: vec![Some(SeatData { from: from.clone(), quota: DataQuota::default() })],
        ..MatchOptions::new(game, 1)
    };
    let r = play(&opts, vec![test_bot("keeper.py", &[]), test_bot("sleeper.py", &["0", "0"])]).unwrap();
    assert!(matches!(r.ended_by, koth_games::replay::EndedBy::RefereeFailed { .. }), "{:?}", r.ended_by);
    assert!(r.outcomes[0].stderr.contains("match 8\n"), "it started from its snapshot: {}", r.outcomes[0].stderr);
    let d = r.outcomes[0].data.clone().unwrap();
    assert_eq!((d.started_from.as_str(), d.written.as_ref(), d.snapshot.is_none()), (from.hash.as_str(), None, true));
    assert_eq!(d.kept_because.as_deref(), Some("the match did not end normally (it has no result)"));
}
