//! `koth ab NEW OLD`: "is my new version better?" on this machine, with
//! koth's example bots: pairs of games on one seed with the seats swapped
//! until the sequential test (`koth_ladder::sprt`) decides, or the
//! games allowed are played.

use std::path::PathBuf;
use std::process::{Command, Output};

fn koth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/cli-ab")
        .env("KOTH_SANDBOX_UID_BASE", "67500")
        .env("KOTH_CACHE", PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-ab-cache"))
        .output()
        .expect("running koth")
}

fn text(out: &Output) -> String {
    format!("{}\n--- stderr ---\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The verdict line's games, checked against the pair lines before it.
fn games_of_verdict(stdout: &str, verdict: &str) -> u64 {
    let last = stdout.lines().last().unwrap_or_default();
    let rest = last.strip_prefix(&format!("verdict: {verdict} after ")).unwrap_or_else(|| panic!("{stdout}"));
    let games: u64 = rest.split(' ').next().unwrap().parse().unwrap();
    let pairs = stdout.lines().filter(|l| l.starts_with("pair ") && l.contains("  score ")).count() as u64;
    assert_eq!(games, 2 * pairs, "{stdout}");
    assert!(rest.contains(&format!("({pairs} pairs)")), "{stdout}");
    games
}

/// Snake's survivor beats the wall hugger: as NEW it is better, as OLD
/// the wall hugger is not better than it; each run says after how many
/// games.
#[test]
fn a_stronger_bot_is_better_and_a_weaker_one_is_not() {
    let (strong, weak) = ("bots/snake/tcp_survivor.py", "bots/snake/stdio_wall_hugger.c");
    let out = koth(&["ab", "--game", "snake", "--seed", "1", strong, weak]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(stdout.starts_with(&format!("snake NEW {strong} against OLD {weak}, 2 seats")), "{stdout}");
    assert!(stdout.contains("alpha 0.05, beta 0.05; the test ends at LLR <= -2.94 (not better) or >= 2.94 (better), or after 2000 games"));
    assert!(stdout.contains("pair    1  seed 1  NEW "), "{stdout}");
    assert!(stdout.contains("pair    2  seed 2  NEW "), "{stdout}");
    let games = games_of_verdict(&stdout, "better");
    assert!(stdout.lines().last().unwrap().contains(">= 2.94"), "{stdout}");
    eprintln!("better after {games} games");

    let out = koth(&["ab", "--game", "snake", "--seed", "1", weak, strong]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let games = games_of_verdict(&stdout, "not better");
    assert!(stdout.lines().last().unwrap().contains("<= -2.94"), "{stdout}");
    eprintln!("not better after {games} games");
}

/// Four seats, NEW and OLD two each, swapped in the second game; a budget
/// of four games ends the test undecided, and `--json` gives the result.
#[test]
fn a_four_player_test_ends_undecided_when_its_games_are_played() {
    let out = koth(&[
        "ab",
        "--game",
        "slime",
        "--seed",
        "7",
        "--max-games",
        "4",
        "--elo0",
        "-5",
        "--elo1",
        "5",
        "--json",
        "bots/slime/greedy.py",
        "bots/slime/spreader.c",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("slime NEW bots/slime/greedy.py against OLD bots/slime/spreader.c, 4 seats"), "{stderr}");
    assert!(stderr.contains("verdict: undecided: the games allowed were played first after 4 games (2 pairs)"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(v["verdict"], "budget_spent", "{v}");
    assert_eq!((v["games"].as_u64(), v["pairs"].as_u64(), v["seed"].as_u64()), (Some(4), Some(2), Some(7)), "{v}");
    assert_eq!(v["hypothesis"]["elo0"], -5.0, "{v}");
    // Pair scores in sixteenths: four comparisons a game, two games.
    let counts = v["counts"].as_array().unwrap();
    assert_eq!(counts.len(), 17, "{v}");
    assert_eq!(counts.iter().map(|c| c.as_u64().unwrap()).sum::<u64>(), 2, "{v}");
    let (llr, lower, upper) = (v["llr"].as_f64().unwrap(), v["bounds"]["lower"].as_f64().unwrap(), v["bounds"]["upper"].as_f64().unwrap());
    assert!(lower < llr && llr < upper, "{v}");
}

/// A hypothesis or a seat count the test cannot use is refused before
/// anything is played, saying what to give.
#[test]
fn bad_settings_are_refused_with_what_to_give() {
    for (args, words) in [
        (&["--elo0", "10", "--elo1", "10"][..], "--elo0/--elo1/--alpha/--beta: elo0 10 and elo1 10: give elo0 below elo1"),
        (&["--alpha", "0.7"][..], "alpha 0.7: give an error rate between 0 and 0.5"),
        (&["--players", "3"][..], "--players 3: snake is played by exactly 2 bots"),
        (&["--max-games", "1"][..], "1 is not in 2.."),
    ] {
        let mut all = vec!["ab", "--game", "snake"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["bots/snake/tcp_survivor.py", "bots/snake/stdio_wall_hugger.c"]);
        let out = koth(&all);
        assert_ne!(out.status.code(), Some(0), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains(words), "{args:?}: {}", text(&out));
        assert!(out.stdout.is_empty(), "{}", text(&out));
    }
}
