//! `koth replay check FILE`: a replay played again through the rules, as a
//! bot author (or anyone) checks a match without trusting the server.

use std::path::PathBuf;
use std::process::{Command, Output};

use koth_games::replay::{Answer, Recorded, Replay, ReplaySeat, Turn};
use koth_games::GameKind;

fn koth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/cli-replay")
        .env("KOTH_SANDBOX_UID_BASE", "64500")
        .output()
        .expect("running koth")
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-replay");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A Slime game of 12 turns through the real referee, with scripted
/// answers: moves, nonsense and timeouts.
fn slime_replay() -> Replay {
    let mut referee = GameKind::Slime.referee(4, 0).unwrap();
    let initial = referee.initial_state();
    let script = ["0 0 1 1", "what", "", "7 7 5 5", "1 1 2 2", "0 7 1 6", "7 0 6 1", "7 7 6 6", "2 2 3 3", "0 7 2 5", "x", "6 6 5 6"];
    let mut turns = Vec::new();
    for (i, text) in script.iter().enumerate() {
        let seat = referee.step().unwrap().requests[0].seat;
        let reply = if text.is_empty() { Recorded::Timeout { timeout: true } } else { Recorded::Answer { answer: text.to_string() } };
        let (judgements, events) = referee.apply(vec![(seat, reply.reply())]);
        turns.push(Turn { turn: i as u32 + 1, answers: vec![Answer { seat, reply }], judgements, events, ..Turn::default() });
    }
    Replay {
        game: GameKind::Slime,
        seed: 0,
        engine: "hand-made".into(),
        time_policy: None,
        seats: (0..4).map(|i| ReplaySeat { name: format!("bot{i}"), ..ReplaySeat::default() }).collect(),
        initial,
        turns,
        result: referee.standings(),
        cut_short: true,
        ended_by: koth_games::replay::EndedBy::TurnLimit { turns: 12 },
    }
}

#[test]
fn a_replay_that_agrees_with_the_rules_is_ok_and_a_tampered_one_is_not() {
    let good = dir().join("good.json");
    std::fs::write(&good, serde_json::to_vec_pretty(&slime_replay()).unwrap()).unwrap();
    let out = koth(&["replay", "check", good.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("ok: slime seed 0, 12 turns, stopped after 12 turns by a turn limit"), "{text}");
    assert!(text.contains("seat 1 bot0: "), "{text}");

    // A move the bot never made: the rules' events for turn 5 differ.
    let mut r = slime_replay();
    r.turns[4].answers[0].reply = Recorded::Answer { answer: "1 1 2 1".into() };
    let bad = dir().join("tampered.json");
    std::fs::write(&bad, serde_json::to_vec(&r).unwrap()).unwrap();
    let out = koth(&["replay", "check", bad.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("the replay disagrees with the rules: turn 5: "), "{text}");

    // A result that is not the rules'.
    let mut r = slime_replay();
    r.result.swap(0, 1);
    std::fs::write(&bad, serde_json::to_vec(&r).unwrap()).unwrap();
    let out = koth(&["replay", "check", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("results differ"));
}

#[test]
fn what_is_not_a_replay_gets_a_clear_error() {
    let cases: &[(&str, &[u8], &str)] = &[
        ("text.json", b"hello", "not a koth replay: expected value"),
        ("chess.json", br#"{"game": "chess", "seed": 1, "seats": [], "turns": []}"#, "unknown variant `chess`"),
        ("no-turns.json", br#"{"game": "slime", "seed": "1", "seats": []}"#, "missing field `turns`"),
    ];
    for (name, body, want) in cases {
        let p = dir().join(name);
        std::fs::write(&p, body).unwrap();
        let out = koth(&["replay", "check", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
    }
    let out = koth(&["replay", "check", "/nonexistent/replay.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/replay.json"));
}

/// A match played by `koth match --replay` checks out (as root: every bot
/// runs in the sandbox).
#[test]
fn a_played_match_checks_out() {
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var("CI").is_err(), "CI=true and not root: the sandbox needs root");
        eprintln!("SKIPPED (not root)");
        return;
    }
    let repo = env!("CARGO_MANIFEST_DIR");
    let file = dir().join("played.json");
    let out = koth(&[
        "match",
        "--game",
        "flit",
        "--seed",
        "3",
        "--max-turns",
        "200",
        "--replay",
        file.to_str().unwrap(),
        &format!("{repo}/bots/flit/wanderer.c"),
        &format!("{repo}/runner/tests/bots/mute.py"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = koth(&["replay", "check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    // The silent bots were frozen after five timeouts; their turns are in
    // the replay, with why.
    let r = Replay::from_json(&std::fs::read(&file).unwrap()).unwrap();
    assert!(r
        .turns
        .iter()
        .flat_map(|t| &t.answers)
        .any(|a| matches!(&a.reply, Recorded::Gone { why: Some(w), .. } if w.contains("after 5 consecutive timeouts"))));
}
