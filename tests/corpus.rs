//! The corpus of real King-of-the-Hill challenges (`external-games/`, listed
//! in `docs/games/corpus.md`): each challenge's game folder plays to the end
//! through `koth match --game FOLDER`, and its results equal the original
//! controller's on the line-ups compared.
//!
//! `prisoners` (1P5: Iterated Prisoner's Dilemma): the original scorer's
//! results, recorded by running it (`external-games/prisoners/original/`),
//! are the expectation; the line-ups here are the ones whose bots are in the
//! repository, in both seat orders where the scorer's history bug makes the
//! order matter. `caveman` (Caveman Duels): its original controller is not
//! public in a form found so far, so its expectations are the duels worked
//! out by hand from the challenge's rules, written beside each line-up.

use std::path::PathBuf;
use std::process::{Command, Output};

fn koth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/corpus")
        .env("KOTH_SANDBOX_UID_BASE", "64700")
        .env("KOTH_CACHE", PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corpus-cache"))
        .output()
        .expect("running koth")
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corpus");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn game(name: &str) -> String {
    format!("{}/external-games/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn root_or_skip() -> bool {
    if unsafe { libc::geteuid() } != 0 {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true and not root: these tests run as root (a user also needs a delegated cgroup, see tests/rootless.rs)"
        );
        eprintln!("SKIPPED (not root)");
        return false;
    }
    true
}

/// One match, its replay written and checked again through the referee:
/// every seat's score, in seat order, and the number of turns.
fn play(name: &str, seed: &str, bots: &[&str]) -> (Vec<f64>, u64) {
    let folder = game(name);
    let replay = dir().join(format!("{name}-{}.json", bots.join("-")));
    let paths: Vec<String> = bots.iter().map(|b| format!("{folder}/bots/{b}")).collect();
    let mut args = vec!["match", "--game", &folder, "--seed", seed, "--json", "--replay", replay.to_str().unwrap()];
    args.extend(paths.iter().map(String::as_str));
    let out = koth(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{name} {bots:?}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v["ended_by"]["kind"], "rules", "{name} {bots:?} did not end by its rules: {stdout}");
    let mut outcomes = v["outcomes"].as_array().unwrap().clone();
    outcomes.sort_by_key(|o| o["seat"].as_u64());
    for o in &outcomes {
        assert_eq!(o["status"]["kind"], "ok", "{name} {bots:?}: a bot did not play to the end: {o}");
        assert_eq!(o["invalid_moves"], 0, "{name} {bots:?}: {o}");
        assert_eq!(o["timeouts"], 0, "{name} {bots:?}: {o}");
    }
    let scores = outcomes.iter().map(|o| o["score"].as_f64().unwrap()).collect();
    // The referee judges the recorded answers again exactly as it played them.
    let check = koth(&["replay", "check", replay.to_str().unwrap(), "--game", &folder]);
    let text = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&check.stderr));
    assert!(text.starts_with(&format!("ok: {name} seed {seed}")), "{text}");
    (scores, v["turns"].as_u64().unwrap())
}

/// The original scorer's result for an ordered pair, from its recorded
/// output (lines `SEAT0 SEAT1 SCORE0 SCORE1`; the repository's own bots are
/// named `mine-<file stem>` there).
fn scorer_result(seat0: &str, seat1: &str) -> (f64, f64) {
    let recorded = std::fs::read_to_string(format!("{}/original/scorer-results.txt", game("prisoners"))).unwrap();
    let line = recorded
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() == 4 && w[0] == seat0 && w[1] == seat1)
        .unwrap_or_else(|| panic!("no recorded result of the original scorer for {seat0} against {seat1}"));
    (line[2].parse().unwrap(), line[3].parse().unwrap())
}

#[test]
fn prisoners_dilemma_agrees_with_the_original_scorer() {
    if !root_or_skip() {
        return;
    }
    // (seat 0, seat 1) as files in the game's bots/. The grudger reads its
    // whole history: as the second prisoner it gets the scorer's mixed-up
    // history (its newest outcome, then the first prisoner's), so the
    // defector takes 250 from it in one order and 103 in the other.
    let lineups = [
        ("defector.c", "grudger.py"),
        ("grudger.py", "defector.c"),
        ("mirror.js", "grudger.py"),
        ("grudger.py", "mirror.js"),
        ("cooperator.py", "defector.c"),
        ("mirror.js", "defector.c"),
    ];
    let stem = |f: &str| format!("mine-{}", f.split('.').next().unwrap());
    for (a, b) in lineups {
        let (scores, turns) = play("prisoners", "1", &[a, b]);
        let (s0, s1) = scorer_result(&stem(a), &stem(b));
        assert_eq!(turns, 100, "{a} {b}");
        assert_eq!(scores, vec![s0, s1], "{a} against {b}: koth's scores, then the original scorer's");
    }
    // The mechanism itself, not only the figures: the scorer's history bug
    // is what the defector's 250 comes from.
    assert_eq!(scorer_result("mine-defector", "mine-grudger"), (250.0, 0.0));
    assert_eq!(scorer_result("mine-grudger", "mine-defector"), (98.0, 103.0));
}

#[test]
fn caveman_duels_play_to_the_end_by_the_rules() {
    if !root_or_skip() {
        return;
    }
    // alternator sharpens on turn 1 (as does sharpener: sharpness 1 and 1)
    // and pokes on turn 2 while sharpener sharpens: alternator wins each of
    // the 3 duels on its second turn.
    assert_eq!(play("caveman", "1", &["alternator.c", "sharpener.py"]), (vec![3.0, 0.0], 6));
    // blocker blocks while sharpener's stick is 1 to 4 sharp and sharpens
    // when it is a sword; sharpener's sixth move is a sword's poke, which no
    // block stops: sharpener wins each duel on turn 6.
    assert_eq!(play("caveman", "1", &["blocker.c", "sharpener.py"]), (vec![0.0, 3.0], 18));
    // blocker blocks every poke of alternator's and never pokes: no duel is
    // won in 100 turns, and both lose all three.
    assert_eq!(play("caveman", "1", &["blocker.c", "alternator.c"]), (vec![0.0, 0.0], 300));
}
