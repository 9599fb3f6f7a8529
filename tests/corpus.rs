//! The corpus of real King-of-the-Hill challenges (`external-games/`, listed
//! in `docs/games/corpus.md`): each challenge's game folder plays to the end
//! through `koth match --game FOLDER`, and its results equal the original
//! controller's on the line-ups compared.
//!
//! `prisoners` (1P5: Iterated Prisoner's Dilemma): the original scorer's
//! results, recorded by running it (`external-games/prisoners/original/`),
//! are the expectation; the line-ups here are the ones whose bots are in the
//! repository, in both seat orders where the scorer's history bug makes the
//! order matter. `caveman` (Caveman Duels): the original C++ controller's
//! output, recorded the same way (`external-games/caveman/original/`), for
//! the line-ups of the repository's bots, one of which (`opener.py`) plays
//! otherwise if a duel's first turn is not started with no argument, as
//! the original started it. `grid-routing` (Grid-Routing Battle): 3 long-lived
//! stdio bots in one match, requests of two lines, each bot seeing the
//! others in a hidden order of its own; the original Python controller's
//! scores and every seat's answers there (through a tap), recorded with its
//! `random` seeded as the referee seeds its own
//! (`external-games/grid-routing/original/`), for the line-ups of the
//! repository's bots. `original/compare.sh` of each challenge
//! reproduces the whole comparison with the originals (not here: they are
//! not in the repository).
//!
//! `mafia` (Let's play Mafia!): per-turn programs exchanging files in
//! their folders, 6 or more players with hidden roles; the original
//! Python 2 controller's whole log, recorded with its `random` seeded as
//! the referee seeds its own (`external-games/mafia/original/`), for
//! line-ups of the repository's bots.
//!
//! `slime` (Slime: The Territory War) is koth's built-in game, so its
//! corpus entry is `corpus/slime/` (no game folder): the original C++
//! controller's output for the line-ups of koth's bots, for three games in
//! a row that keep one bot's folder (`koth match --data`), and for its
//! reading of answers (`Player::getMove`), each recorded by running it.
//!
//! `speed-clue` (Speed Clue): long-lived AIs started with arguments
//! (`IDENTIFIER PORT`, the referee's `launch`) that connect over TCP and
//! speak unterminated messages (`"framing": "unterminated"`); the original
//! Java contest server's games, recorded with its unseeded deals read back
//! through taps (`external-games/speed-clue/original/`), played again on
//! the same deals.

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
    let paths: Vec<String> = bots.iter().map(|b| format!("{folder}/bots/{b}")).collect();
    play_files(name, seed, &paths, &bots.join("-"))
}

/// [`play`] of bots at any paths, its replay `{name}-{tag}.json` in [`dir`].
fn play_files(name: &str, seed: &str, paths: &[String], tag: &str) -> (Vec<f64>, u64) {
    let folder = game(name);
    let bots = paths;
    let replay = dir().join(format!("{name}-{tag}.json"));
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

/// The original Caveman Duels controller's winners of the three duels of
/// the pair (`out.txt`: `ID1<<8|ID2 W W W`, ids the lines of its
/// `playerlist.txt`, -1 for a duel nobody won), as each seat's duels won.
fn controller_result(seat0: &str, seat1: &str) -> (f64, f64) {
    let folder = format!("{}/original", game("caveman"));
    let players = std::fs::read_to_string(format!("{folder}/playerlist.txt")).unwrap();
    let id = |bot: &str| {
        players
            .lines()
            .position(|l| {
                // A compiled bot of bots/ ran as ./mine-<stem> (compare.sh).
                l.ends_with(&format!("/{bot}.py")) || l.ends_with(&format!("/mine-{bot}"))
            })
            .unwrap_or_else(|| panic!("{bot} is not in the original controller's playerlist.txt"))
    };
    let (a, b) = (id(seat0), id(seat1));
    assert!(a < b, "the original controller seats the one listed first first");
    let out = std::fs::read_to_string(format!("{folder}/out.txt")).unwrap();
    let line = out
        .lines()
        .map(|l| l.split_whitespace().map(|w| w.parse::<i64>().unwrap()).collect::<Vec<_>>())
        .find(|w| w[0] == ((a as i64) << 8 | b as i64))
        .unwrap_or_else(|| panic!("no duels of {seat0} against {seat1} in the original controller's out.txt"));
    let won = |id: usize| line[1..].iter().filter(|&&w| w == id as i64).count() as f64;
    (won(a), won(b))
}

#[test]
fn caveman_duels_agree_with_the_original_controller() {
    if !root_or_skip() {
        return;
    }
    // Worked out from the rules too: alternator sharpens on turn 1 (as does
    // sharpener: sharpness 1 and 1) and pokes on turn 2 while sharpener
    // sharpens, so it wins each duel on its second turn; blocker blocks
    // while sharpener's stick is 1 to 4 sharp and sharpens when it is a
    // sword, and sharpener's sixth move is a sword's poke, which no block
    // stops; blocker blocks every poke of alternator's and never pokes, so
    // no duel is won in 100 turns and both lose all three.
    for (a, b, turns) in [("sharpener.py", "alternator.c", 6), ("sharpener.py", "blocker.c", 18), ("alternator.c", "blocker.c", 300)] {
        let expected = controller_result(a.split('.').next().unwrap(), b.split('.').next().unwrap());
        assert_eq!(
            play("caveman", "1", &[a, b]),
            (vec![expected.0, expected.1], turns),
            "{a} against {b}: koth, then the original controller"
        );
    }
    assert_eq!(controller_result("sharpener", "alternator"), (0.0, 3.0));
    assert_eq!(controller_result("sharpener", "blocker"), (3.0, 0.0));
    assert_eq!(controller_result("alternator", "blocker"), (0.0, 0.0));
}

#[test]
fn caveman_duels_start_with_no_argument_as_the_original_did() {
    if !root_or_skip() {
        return;
    }
    // opener sharpens when it is started with no argument at all (how the
    // original controller begins a duel) and blocks when given one empty
    // argument; then it pokes after sharpening. Against sharpener it so
    // wins every duel on turn 2: 6 turns. Were a duel begun with "" it
    // would block, sharpen, poke and win on turn 3: 9 turns.
    let expected = controller_result("sharpener", "opener");
    assert_eq!(expected, (0.0, 3.0));
    assert_eq!(
        play("caveman", "1", &["sharpener.py", "opener.py"]),
        (vec![expected.0, expected.1], 6),
        "sharpener against opener: koth (scores, turns), then the original controller's scores"
    );
}

/// Grid-Routing Battle's bots as `original/out.txt` numbers them: the
/// answers compared (not in the repository), then koth's own.
const GRID_BOTS: [&str; 6] = ["Checkpoint", "Explorer", "Watermelon", "column.py", "roof.js", "breaker.c"];

/// The original controller's scores for a line-up (`out.txt`: `IDS :
/// SCORES`) and every seat's answers there (`answers.txt`: `IDS : ORIGINAL
/// : KOTH`, each a seat's `COUNT:DIGEST`), the line-up as files of bots/.
fn grid_original(bots: &[&str]) -> (Vec<f64>, Vec<String>) {
    let ids: Vec<String> = bots
        .iter()
        .map(|b| GRID_BOTS.iter().position(|g| g == b).unwrap_or_else(|| panic!("{b} is not a bot of out.txt")).to_string())
        .collect();
    let ids = ids.join(" ");
    let folder = format!("{}/original", game("grid-routing"));
    let field = |file: &str, n: usize| {
        let text = std::fs::read_to_string(format!("{folder}/{file}")).unwrap();
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split(" : ").map(str::trim).collect::<Vec<_>>())
            .find(|f| f[0] == ids)
            .unwrap_or_else(|| panic!("no line-up {ids} in the original controller's {file}"))[n]
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let scores = field("out.txt", 1).iter().map(|s| s.parse().unwrap()).collect();
    (scores, field("answers.txt", 1))
}

/// Every seat's answers in a replay, as `answers.txt` digests them: their
/// number and the first 16 hex digits of the SHA-256 of them joined by
/// newlines.
fn answer_digests(replay: &std::path::Path, seats: usize) -> Vec<String> {
    use sha2::{Digest, Sha256};
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(replay).unwrap()).unwrap();
    let mut answers = vec![Vec::new(); seats];
    for turn in v["turns"].as_array().unwrap() {
        for a in turn["answers"].as_array().into_iter().flatten() {
            answers[a["seat"].as_u64().unwrap() as usize].push(a["answer"].as_str().unwrap_or("").to_string());
        }
    }
    answers
        .iter()
        .map(|a| {
            let digest = Sha256::digest(a.join("\n").as_bytes());
            format!("{}:{}", a.len(), digest[..8].iter().map(|b| format!("{b:02x}")).collect::<String>())
        })
        .collect()
}

fn slime_corpus(file: &str) -> String {
    let path = format!("{}/corpus/slime/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The original Slime controller's games from its `out.txt`: four lines a
/// game, `ID SCORE` in seat order (`ID` alone when the score is 0).
fn slime_controller_games(file: &str) -> Vec<(Vec<usize>, Vec<f64>)> {
    let lines: Vec<Vec<String>> = slime_corpus(file).lines().map(|l| l.split_whitespace().map(String::from).collect()).collect();
    assert_eq!(lines.len() % 4, 0, "{file}: four lines a game");
    lines
        .chunks(4)
        .map(|g| {
            let ids = g.iter().map(|w| w[0].parse().unwrap()).collect();
            let scores = g.iter().map(|w| w.get(1).map_or(0.0, |s| s.parse().unwrap())).collect();
            (ids, scores)
        })
        .collect()
}

#[test]
fn grid_routing_battle_agrees_with_the_original_controller() {
    if !root_or_skip() {
        return;
    }
    // Three bots: 9 turns of a destruction and an activation phase, each a
    // request of two lines to each long-lived bot (18 koth turns), in three
    // seat orders: the order draws each bot's hidden order of the others
    // (breaker.c breaks above the first rival it is shown) and settles two
    // breaks of one vertex. The answers' digests pin every answer of every
    // seat, so a report sent otherwise than the original's (a line, the
    // order of the others) shows even where the scores would not.
    for bots in [["column.py", "roof.js", "breaker.c"], ["breaker.c", "roof.js", "column.py"], ["roof.js", "breaker.c", "column.py"]] {
        let (scores, answers) = grid_original(&bots);
        assert_eq!(play("grid-routing", "1", &bots), (scores, 18), "{bots:?}: koth (scores, turns), then the original controller's scores");
        let replay = dir().join(format!("grid-routing-{}.json", bots.join("-")));
        assert_eq!(answer_digests(&replay, 3), answers, "{bots:?}: every seat's answers in koth, then in the original controller");
    }
}

/// One Slime match of bots (paths under the repository) with `extra`
/// options, its replay checked again by the rules: each seat's squares,
/// and its invalid answers (passes).
fn play_slime(bots: &[&str], extra: &[&str], tag: &str) -> (Vec<f64>, Vec<u64>) {
    let replay = dir().join(format!("slime-{tag}.json"));
    let paths: Vec<String> = bots.iter().map(|b| format!("{}/{b}", env!("CARGO_MANIFEST_DIR"))).collect();
    let mut args = vec!["match", "--game", "slime", "--seed", "1", "--json", "--replay", replay.to_str().unwrap()];
    args.extend(extra);
    args.extend(paths.iter().map(String::as_str));
    let out = koth(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{bots:?}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v["ended_by"]["kind"], "rules", "{bots:?} did not end by its rules: {stdout}");
    let mut outcomes = v["outcomes"].as_array().unwrap().clone();
    outcomes.sort_by_key(|o| o["seat"].as_u64());
    // Slime's time limit is soft (0.1 s): an answer over it still counts,
    // as in the original, which only reported it; a pass for a process
    // still running at 2 s would show in the squares.
    for o in &outcomes {
        assert_ne!(o["status"]["kind"], "gone", "{bots:?}: {o}");
    }
    let check = koth(&["replay", "check", replay.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&check.stderr));
    assert!(text.starts_with("ok: slime seed 1"), "{text}");
    (
        outcomes.iter().map(|o| o["score"].as_f64().unwrap()).collect(),
        outcomes.iter().map(|o| o["invalid_moves"].as_u64().unwrap()).collect(),
    )
}

/// The repository's file a line of the original's recorded `playerlist.txt`
/// played (`players/<name>/...`, as `corpus/slime/original/compare.sh`
/// copied it there).
fn slime_bot_file(name: &str) -> &'static str {
    match name {
        "greedy" => "bots/slime/greedy.py",
        "spreader" => "bots/slime/spreader.c",
        "starter-c" => "starters/slime/bot.c",
        "starter-cpp" => "starters/slime/bot.cpp",
        "starter-js" => "starters/slime/bot.js",
        "talker" => "corpus/slime/bots/talker.py",
        "edger" => "corpus/slime/bots/edger.js",
        "counter" => "corpus/slime/bots/counter.py",
        other => panic!("{other} is not a bot of corpus/slime/original/compare.sh"),
    }
}

fn slime_players(file: &str) -> Vec<&'static str> {
    slime_corpus(file).lines().map(|l| slime_bot_file(l.split('/').nth(1).expect("players/<name>/..."))).collect()
}

#[test]
fn slime_agrees_with_the_original_controller() {
    if !root_or_skip() {
        return;
    }
    let players = slime_players("original/playerlist.txt");
    let games = slime_controller_games("original/out.txt");
    assert_eq!(games.len(), 35, "every 4-combination of 7 bots");
    let talker = players.iter().position(|&p| p.ends_with("talker.py")).unwrap();
    // Three of its 35 games (all of them: compare.sh). talker.py answers
    // "r0 c0 r1 c1 spread, gains N": the original read the first four
    // numbers and played it; so does koth, else it would pass every turn.
    for ids in [[0, 1, 5, 6], [2, 3, 4, 5], [0, 3, 4, 6]] {
        let (_, expected) = games.iter().find(|(g, _)| g[..] == ids).unwrap_or_else(|| panic!("no game {ids:?} in out.txt"));
        let bots: Vec<&str> = ids.iter().map(|&i| players[i]).collect();
        let tag = ids.map(|i| i.to_string()).join("");
        let (scores, invalid) = play_slime(&bots, &[], &tag);
        assert_eq!(&scores, expected, "{bots:?}: koth's squares per seat, then the original controller's");
        if let Some(seat) = ids.iter().position(|&i| i == talker) {
            assert_eq!(invalid[seat], 0, "talker.py's answers with words after the move are moves, as in the original");
        }
    }
}

#[test]
fn slime_keeps_a_bots_folder_from_game_to_game_as_the_original_did() {
    if !root_or_skip() {
        return;
    }
    // The original controller never cleared a bot's folder: counter.py
    // counts its turns over all its games in calls.txt and plays by the
    // count, so its second and third games differ from its first. koth
    // keeps its folder with --data, and plays the same three games.
    let bots = slime_players("original/persist-playerlist.txt");
    let games = slime_controller_games("original/persist-out.txt");
    assert_eq!(games.len(), 3);
    assert_ne!(games[0].1, games[1].1, "the kept folder changes the second game");
    let data = dir().join("slime-data");
    let _ = std::fs::remove_dir_all(&data);
    for (n, (_, expected)) in games.iter().enumerate() {
        let (scores, _) = play_slime(&bots, &["--data", data.to_str().unwrap()], &format!("kept-{n}"));
        assert_eq!(&scores, expected, "game {} in a row: koth's squares per seat, then the original controller's", n + 1);
    }
}

/// koth's Slime reads an answer's line as the original controller's
/// `Player::getMove` read it: its four numbers, or a pass. The original's
/// verdicts on the answers of `answers-in.txt` (the bytes a bot wrote) are
/// in `answers.txt` (`-1 -1 -1 -1` for a pass), recorded by running its
/// code (`corpus/slime/original/compare.sh`).
#[test]
fn slime_reads_answers_as_the_original_controller_did() {
    let inputs: Vec<String> =
        slime_corpus("original/answers-in.txt").lines().filter(|l| !l.is_empty() && !l.starts_with('#')).map(python_literal).collect();
    let verdicts: Vec<Option<[i64; 4]>> = slime_corpus("original/answers.txt")
        .lines()
        .map(|l| {
            let v: Vec<i64> = l.split_whitespace().map(|w| w.parse().unwrap()).collect();
            let v: [i64; 4] = v.try_into().unwrap();
            (v != [-1; 4]).then_some(v)
        })
        .collect();
    assert_eq!(inputs.len(), verdicts.len(), "one recorded verdict per answer");
    let mut differ = Vec::new();
    for (written, original) in inputs.iter().zip(&verdicts) {
        // What koth's runner hands the rules: the first line without its
        // "\n" or "\r\n", or at the end of the output all that is left.
        let line = written.split('\n').next().unwrap();
        let line = line.strip_suffix('\r').unwrap_or(line);
        let koth = koth_games::slime::read_move(line).ok();
        if koth != *original {
            differ.push((written.as_str(), koth));
        }
    }
    // The one difference: the original also passed a fourth number at the
    // very end of the output, with no newline after it (iss.eof()); koth's
    // runner hands over a line without its ending, and cannot tell.
    assert_eq!(differ, vec![("0 0 1 1", Some([0, 0, 1, 1]))]);
    assert!(inputs.iter().zip(&verdicts).any(|(w, v)| w == "0 0 1 1 extra\n" && *v == Some([0, 0, 1, 1])));
}

/// A Python string literal of answers-in.txt ('...' with \n, \t, \r,
/// \x.. and \\ escapes, as Python's repr writes them).
fn python_literal(lit: &str) -> String {
    let inner = lit.strip_prefix('\'').and_then(|l| l.strip_suffix('\'')).unwrap_or_else(|| panic!("not a '...' literal: {lit}"));
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
            }
            other => panic!("escape \\{other:?} in {lit}"),
        }
    }
    out
}

/// Speed Clue's original contest server's games (`games.txt`: `PLAYERS :
/// SOLUTION : HANDS : WINNER ROUNDS : ANSWERS : ...`), recorded by running
/// it unmodified with koth's two AIs behind taps (the server deals
/// unseeded: each game's deal is read back from its `reset` messages).
fn clue_games() -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(format!("{}/original/games.txt", game("speed-clue"))).unwrap();
    text.lines().filter(|l| !l.starts_with('#')).map(|l| l.split(" : ").map(String::from).collect()).collect()
}

/// Speed Clue's AIs are started as `COMMAND IDENTIFIER PORT` (koth's
/// `launch`), connect and say `IDENTIFIER alive`, and every message either
/// way has no line ending (`"framing": "unterminated"`). koth plays the
/// original server's games on the same deals (`settings.deal`, the deal in
/// a copy of the game folder): the same winner after the same rounds, and
/// every seat's answers equal the server's (their number and digest; the
/// `done` koth sends at each game's end, which the server sends once at
/// the tournament's, left out). Four of its 48 games: 3 and 4 AIs, won by
/// the first seat and by another, the longest of the 4-AI games.
#[test]
fn speed_clue_agrees_with_the_original_contest_server() {
    if !root_or_skip() {
        return;
    }
    // A deal of koth's own, drawn from the seed: played to the end, checked.
    let (scores, _) = play("speed-clue", "7", &["deducer.py", "plodder.py", "deducer.py", "plodder.py"]);
    assert_eq!(scores, [1.0, 0.0, 0.0, 0.0], "seed 7: the first deducer wins");
    let games = clue_games();
    assert_eq!(games.len(), 48, "every seat order of every 3 and 4 of the 4 entries, one game each");
    let longest = games.iter().enumerate().max_by_key(|(_, g)| g[3].split(' ').nth(1).unwrap().parse::<u32>().unwrap()).unwrap().0;
    let winner_not_first = games.iter().position(|g| !g[3].starts_with("0 ")).unwrap();
    for k in [0, 24, winner_not_first, longest] {
        let g = &games[k];
        let players: Vec<&str> = g[0].split(' ').collect();
        // The game folder, its deal the server's.
        let folder = dir().join(format!("speed-clue-{k}"));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(folder.join("bots")).unwrap();
        let src = game("speed-clue");
        for f in ["referee.py", "bots/deducer.py", "bots/plodder.py"] {
            std::fs::copy(format!("{src}/{f}"), folder.join(f)).unwrap();
        }
        let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(format!("{src}/game.json")).unwrap()).unwrap();
        let hands: Vec<&str> = g[2].split(" / ").collect();
        manifest["settings"]["deal"] = serde_json::json!({"solution": g[1], "hands": hands});
        std::fs::write(folder.join("game.json"), manifest.to_string()).unwrap();
        let replay = dir().join(format!("speed-clue-{k}.json"));
        let bots: Vec<String> = players
            .iter()
            .map(|p| folder.join("bots").join(format!("{}.py", p.split('-').next().unwrap())).display().to_string())
            .collect();
        let (f, r) = (folder.display().to_string(), replay.display().to_string());
        let mut args = vec!["match", "--game", &f, "--seed", "1", "--json", "--replay", &r];
        args.extend(bots.iter().map(String::as_str));
        let out = koth(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "game {k}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v["ended_by"]["kind"], "rules", "game {k}: {stdout}");
        let check = koth(&["replay", "check", &r, "--game", &f]);
        assert_eq!(check.status.code(), Some(0), "game {k}: {}", String::from_utf8_lossy(&check.stdout));
        // The winner and the rounds, then every seat's answers but the last turn's.
        let rv: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&replay).unwrap()).unwrap();
        let turns = rv["turns"].as_array().unwrap();
        let won = turns.iter().flat_map(|t| t["events"].as_array().unwrap()).find(|e| e["type"] == "winner").expect("a winner");
        assert_eq!(format!("{} {}", won["seat"], won["rounds"]), g[3], "game {k} {players:?}: koth's winner and rounds, then the server's");
        assert_eq!(rv["seats"][0]["argv"], serde_json::json!(["p0", "4040"]), "game {k}: launched as the server launched its AIs");
        assert_eq!(rv["seats"][0]["id_line"], "p0 alive");
        use sha2::{Digest, Sha256};
        let mut answers = vec![Vec::new(); players.len()];
        for t in &turns[..turns.len() - 1] {
            for a in t["answers"].as_array().unwrap() {
                answers[a["seat"].as_u64().unwrap() as usize].push(a["answer"].as_str().unwrap_or("").to_string());
            }
        }
        let digests: Vec<String> = answers
            .iter()
            .map(|a| {
                let d = Sha256::digest(a.join("\n").as_bytes());
                format!("{}:{}", a.len(), d[..8].iter().map(|b| format!("{b:02x}")).collect::<String>())
            })
            .collect();
        assert_eq!(digests.join(" "), g[4], "game {k} {players:?}: every seat's answers in koth, then in the original server");
    }
}

/// Where the original server threw and disqualified an AI for the
/// tournament (here DuplicateSuggestion: the same suggestion twice), the
/// speed-clue referee ends the game at once: the offender scores -1 with
/// the server's exception as its judgement, the others 0, no winner.
#[test]
fn speed_clue_ends_a_game_where_the_original_server_disqualified_an_ai() {
    if !root_or_skip() {
        return;
    }
    let folder = game("speed-clue");
    let repeater = format!("{}/tests/bots/clue_repeater.py", env!("CARGO_MANIFEST_DIR"));
    let plodder = format!("{folder}/bots/plodder.py");
    let out = koth(&["match", "--game", &folder, "--seed", "7", "--json", &plodder, &repeater, &plodder]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["ended_by"]["kind"], "rules", "{stdout}");
    let mut outcomes = v["outcomes"].as_array().unwrap().clone();
    outcomes.sort_by_key(|o| o["seat"].as_u64());
    let scores: Vec<f64> = outcomes.iter().map(|o| o["score"].as_f64().unwrap()).collect();
    assert_eq!(scores, [0.0, -1.0, 0.0], "{stdout}");
    let status = &outcomes[1]["status"];
    assert_eq!((&status["kind"], &status["answer"]), (&serde_json::json!("invalid_output"), &serde_json::json!("suggest Gr Ca Ba")));
    assert_eq!(status["reason"], "DuplicateSuggestion: Gr Ca Ba made before", "{status}");
}

/// The original Mafia controller's recorded line-ups
/// (`external-games/mafia/original/`): for each, its seed, its players'
/// names in the controller's order, its winner, and its log's line count
/// and SHA-256 prefix (`logs.txt`), in the order of `lineups.txt`.
fn mafia_original() -> Vec<(String, Vec<String>, String, String)> {
    let folder = format!("{}/original", game("mafia"));
    let read = |f: &str| std::fs::read_to_string(format!("{folder}/{f}")).unwrap_or_else(|e| panic!("{f}: {e}"));
    let (results, logs) = (read("koth-results.txt"), read("logs.txt"));
    let logs: Vec<&str> = logs.lines().filter(|l| !l.starts_with('#')).collect();
    let results: Vec<&str> = results.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(results.len(), logs.len(), "one log a line-up");
    results
        .iter()
        .zip(logs)
        .map(|(r, l)| {
            let f: Vec<&str> = r.split(" | ").collect();
            let mut seats = f[0].split_whitespace().map(String::from);
            let seed = seats.next().unwrap();
            let log = l.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
            (seed, seats.collect(), f[1].trim().to_owned(), log)
        })
        .collect()
}

/// The log lines of a Mafia replay (its `log` events), as `logs.txt`
/// digests the controller's `tmp/log`: their number and the first 16 hex
/// digits of the SHA-256 of them, each ended by a newline.
fn mafia_log(replay: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(replay).unwrap()).unwrap();
    let mut log = String::new();
    for turn in v["turns"].as_array().unwrap() {
        for e in turn["events"].as_array().into_iter().flatten().filter(|e| e["type"] == "log") {
            log.push_str(e["text"].as_str().unwrap());
            log.push('\n');
        }
    }
    let digest = Sha256::digest(log.as_bytes());
    format!("{} {}", log.lines().count(), digest[..8].iter().map(|b| format!("{b:02x}")).collect::<String>())
}

#[test]
fn mafia_agrees_with_the_original_controller() {
    if !root_or_skip() {
        return;
    }
    // Per-turn programs exchanging files (from_server, to_server, players,
    // name) with 6 players and more, hidden roles, simultaneous moves. The
    // controller's whole log pins every random draw (the deal, each day's
    // order, both tallies), every message and vote read from to_server,
    // and every night's actions; koth's bots under the names the
    // controller gave them, in its order.
    let recorded = mafia_original();
    for i in [0, 10, 11] {
        let (seed, seats, winner, log) = &recorded[i];
        let bots = dir().join(format!("mafia-{i}"));
        std::fs::create_dir_all(&bots).unwrap();
        let paths: Vec<String> = seats
            .iter()
            .map(|n| {
                let (bot, ext) = if n.starts_with("sheriff") { ("sheriff", "py") } else { ("follower", "c") };
                let path = bots.join(format!("{n}.{ext}"));
                std::fs::copy(format!("{}/bots/{bot}.{ext}", game("mafia")), &path).unwrap();
                path.display().to_string()
            })
            .collect();
        let (scores, _) = play_files("mafia", seed, &paths, &format!("{i}"));
        let replay = dir().join(format!("mafia-{i}.json"));
        assert_eq!(&mafia_log(&replay), log, "line-up {i} (seed {seed}, {seats:?}): koth's log, then the original controller's");
        let mafia_won = winner == "MAFIA VICTORY";
        assert!(mafia_won || winner == "VILLAGE VICTORY", "{winner}");
        // The winning side scores 1 a player: as many as the mafia (a
        // third of the players) when they win, the rest when not.
        let won = scores.iter().filter(|&&s| s == 1.0).count();
        assert_eq!(won == seats.len() / 3, mafia_won, "line-up {i}: {scores:?}, the controller's {winner}");
        assert_eq!(won + scores.iter().filter(|&&s| s == 0.0).count(), seats.len(), "{scores:?}");
    }
}
