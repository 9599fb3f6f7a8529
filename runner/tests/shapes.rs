//! Requests and answers of every shape an external game's referee can ask
//! for, played live in the real sandbox from the game folders in
//! `external-games/`:
//!
//! - `argv-shapes` (per-turn programs): no argument at all, several, the
//!   state on stdin, one argument as ever, answers of two lines and up to
//!   `END`, to a bot that crashes when given an argument it does not
//!   expect on its first turn (as original King-of-the-Hill bots did);
//! - `board-lines` (stdio): a board of three lines in, answers of three
//!   lines (the manifest's shape) or up to `END` (the request's); a bot
//!   that answers one line of three and hangs times out;
//! - `mafia` (per-turn programs exchanging files): the manifest's own file
//!   names (`from_server` in, `to_server` out), no id line, and further
//!   files a request writes in the bot's folder (`players`, `name`);
//! - hostile referees: 10,000 arguments, 600 KiB or 100 MB of stdin each
//!   end the match as "referee failed" with the reason.
//!
//! Each match's replay checks: the referee, run again over the recorded
//! answers, asks, judges and ends the same.

mod common;

use std::time::Duration;

use common::{bot, play, repo, sandbox_config, sandbox_ok};
use koth_games::replay::{EndedBy, Recorded};
use koth_runner::engine::MatchOptions;
use koth_runner::{BotStatus, Game};
use serde_json::json;

fn builder() -> koth_runner::bot::Builder {
    koth_runner::bot::Builder::host(sandbox_config())
}

/// The game folder `name` of external-games/, with `mode` in its settings.
fn game(name: &str, mode: Option<&str>) -> Game {
    let src = repo().join("external-games").join(name);
    let Some(mode) = mode else { return Game::find(&src.display().to_string(), &builder()).unwrap() };
    let dir = std::env::temp_dir().join(format!("koth-shapes-{name}-{mode}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("bots")).unwrap();
    std::fs::copy(src.join("referee.py"), dir.join("referee.py")).unwrap();
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(src.join("game.json")).unwrap()).unwrap();
    manifest["settings"]["mode"] = mode.into();
    std::fs::write(dir.join("game.json"), manifest.to_string()).unwrap();
    let game = Game::find(&dir.display().to_string(), &builder()).unwrap_or_else(|e| panic!("{mode}: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    game
}

fn game_bot(game: &str, file: &str) -> koth_runner::BotSpec {
    bot(&format!("external-games/{game}/bots/{file}"))
}

fn options(game: &Game) -> MatchOptions {
    MatchOptions { sandbox: sandbox_config(), ..MatchOptions::new(game.clone(), 1) }
}

#[test]
fn a_per_turn_program_gets_no_argument_several_or_stdin_and_answers_in_lines() {
    if !sandbox_ok() {
        return;
    }
    let g = game("argv-shapes", None);
    let strict = game_bot("argv-shapes", "strict.py");
    let r = play(&options(&g), vec![strict.clone(), strict.clone()]).unwrap();
    assert_eq!(r.ended_by, EndedBy::Rules, "{:?}", r.referee_stderr);
    assert_eq!(r.turns, 6);
    for o in &r.outcomes {
        assert_eq!((o.moves, o.timeouts, o.invalid_moves, &o.status, o.score), (6, 0, 0, &BotStatus::Ok, 6.0), "{}: {}", o.name, o.stderr);
    }
    let replay = r.replay.read().unwrap();
    let answers: Vec<&str> = replay
        .turns
        .iter()
        .map(|t| match &t.answers[0].reply {
            Recorded::Answer { answer } => answer.as_str(),
            other => panic!("turn {}: {other:?}", t.turn),
        })
        .collect();
    assert_eq!(answers, ["hello", "12", "6", "7", "left\nright", "a\nb\nc"]);
    g.check(&replay, &sandbox_config()).unwrap();

    // Asked as koth asked before argv lists (one argument, empty), the same
    // bot crashes on its first turn: what the original controllers' bots did.
    let old = game("argv-shapes", Some("one_empty_argument"));
    let r = play(&options(&old), vec![strict.clone()]).unwrap();
    let o = &r.outcomes[0];
    assert!(o.stderr.contains("ValueError"), "{}", o.stderr);
    let first = &r.replay.read().unwrap().turns[0];
    assert_eq!(first.answers[0].reply, Recorded::Answer { answer: String::new() });
    assert_eq!((o.score, o.invalid_moves), (5.0, 1));
}

#[test]
fn a_board_of_lines_in_and_answers_of_k_lines_or_up_to_end_out() {
    if !sandbox_ok() {
        return;
    }
    let g = game("board-lines", None);
    let r = play(&options(&g), vec![game_bot("board-lines", "mirror.py"), common::test_bot("half_board.py", &[])]).unwrap();
    assert_eq!(r.ended_by, EndedBy::Rules, "{:?}", r.referee_stderr);
    let (mirror, half) = (&r.outcomes[0], &r.outcomes[1]);
    assert_eq!((mirror.moves, mirror.timeouts, mirror.invalid_moves, mirror.score), (6, 0, 0, 6.0), "{}", mirror.stderr);
    // One line of three, then nothing: it timed out, twice, and was frozen.
    assert_eq!(half.score, 0.0);
    assert_eq!(half.timeouts, 2, "{:?}", half.status);
    assert!(matches!(half.status, BotStatus::Frozen { timeouts: 2, .. }), "{:?}", half.status);
    let replay = r.replay.read().unwrap();
    assert_eq!(replay.turns[0].answers[0].reply, Recorded::Answer { answer: "..#\n.#.\n#..".into() });
    assert_eq!(replay.turns[1].answers[0].reply, Recorded::Answer { answer: ".##\n...\n##.".into() });
    assert_eq!(replay.turns[0].answers[1].reply, Recorded::Timeout { timeout: true });
    g.check(&replay, &sandbox_config()).unwrap();
}

/// `mafia` (per_turn_files with the Mafia controller's own file names):
/// each bot is started with no id line asked, reads `from_server` and the
/// `players` and `name` files its first request wrote, and answers in
/// `to_server`. Its bots know the players' names only from `players` and
/// their own only from `name`: a vote for a player in the referee's log is
/// a bot that read both.
#[test]
fn a_per_turn_files_bot_reads_and_writes_the_files_its_game_names() {
    if !sandbox_ok() {
        return;
    }
    let g = game("mafia", None);
    let (sheriff, follower) = (game_bot("mafia", "sheriff.py"), game_bot("mafia", "follower.c"));
    let bots = vec![sheriff.clone(), follower.clone(), sheriff.clone(), follower.clone(), sheriff, follower];
    let r = play(&options(&g), bots).unwrap();
    assert_eq!(r.ended_by, EndedBy::Rules, "{:?}", r.referee_stderr);
    for o in &r.outcomes {
        assert_eq!((&o.status, o.timeouts, o.invalid_moves), (&BotStatus::Ok, 0, 0), "{}: {}", o.name, o.stderr);
        assert!(o.id_line.is_none(), "{}: asked for an id line", o.name);
        assert!(o.stderr.is_empty(), "{}: {}", o.name, o.stderr);
    }
    let replay = r.replay.read().unwrap();
    let answers: Vec<&str> = replay
        .turns
        .iter()
        .flat_map(|t| t.answers.iter())
        .filter_map(|a| match &a.reply {
            Recorded::Answer { answer } => Some(answer.as_str()),
            _ => None,
        })
        .collect();
    assert!(answers.contains(&"say 4\n"), "the follower's to_server, whole: {:?}", &answers[..12]);
    let log: Vec<String> =
        replay.turns.iter().flat_map(|t| t.events.iter()).filter_map(|e| e["text"].as_str().map(str::to_owned)).collect();
    let names = ["sheriff", "follower", "sheriff2", "follower3", "sheriff4", "follower5"];
    let voted = log.iter().filter(|l| names.iter().any(|n| l.ends_with(&format!(" has voted to lynch {n}.")))).count();
    assert!(voted > 0, "no bot voted for a player by name: {log:?}");
    assert!(log.iter().any(|l| l == "MAFIA VICTORY" || l == "VILLAGE VICTORY"), "{log:?}");
    g.check(&replay, &sandbox_config()).unwrap();
}

#[test]
fn a_referee_asking_for_too_many_arguments_or_too_much_stdin_fails_with_the_reason() {
    if !sandbox_ok() {
        return;
    }
    let strict = game_bot("argv-shapes", "strict.py");
    for (mode, want) in [
        ("argv10k", "asked seat 0 with 10000 arguments of 48890 bytes (the most is 1024 arguments"),
        ("stdin600k", "asked seat 0 with a stdin of 614400 bytes (the most is 524288)"),
        ("stdin100m", "wrote a line of 1048576 bytes or more"),
    ] {
        let g = game("argv-shapes", Some(mode));
        let opts = MatchOptions { per_move: Some(Duration::from_secs(2)), ..options(&g) };
        let r = play(&opts, vec![strict.clone()]).unwrap();
        let EndedBy::RefereeFailed { reason } = &r.ended_by else { panic!("{mode}: ended by {:?}", r.ended_by) };
        assert!(reason.contains(want), "{mode}: {reason}");
        assert_eq!(r.outcomes[0].result, None, "{mode}: no result");
    }
}

/// A per-turn game in a temporary folder whose referee asks every seat to
/// sleep `settings.sleep_ms` each turn for `settings.rounds` turns, with
/// `time` merged into its manifest (a bank, start-up allowances).
fn sleeper_game(name: &str, time: serde_json::Value) -> Game {
    let dir = std::env::temp_dir().join(format!("koth-shapes-sleeper-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("referee.py"),
        r#"import json, sys
start = json.loads(sys.stdin.readline())
n, s = len(start["seats"]), start["settings"]
ask = [{"seat": i, "argv": [str(s["sleep_ms"])]} for i in range(n)]
scores = [0] * n
print(json.dumps({"turn": 0, "requests": ask, "scores": scores}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    events = []
    for a in msg["answers"]:
        scores[a["seat"]] += a["status"] == "answer"
        if "bank_ms" in a:
            events.append({"type": "bank", "seat": a["seat"], "empty": a["bank_ms"] == 0})
    over = msg["turn"] == s["rounds"]
    print(json.dumps({"turn": msg["turn"], "scores": scores, "over": over, "events": events, "requests": [] if over else ask}), flush=True)
"#,
    )
    .unwrap();
    let mut manifest = serde_json::json!({
        "name": "sleeper", "seats": {"min": 1, "max": 1}, "protocol": "per_turn_argv",
        "time_policy": {"per_move": 50, "on_timeout": {"kind": "no_move", "freeze_after": null}},
        "max_turns": 10, "referee": {"main": "referee.py"}, "settings": {},
    });
    for (k, v) in time.as_object().unwrap() {
        match k.as_str() {
            "bank" | "startup" => manifest["time_policy"][k] = v.clone(),
            "sleep_ms" | "rounds" => manifest["settings"][k] = v.clone(),
            _ => manifest[k] = v.clone(),
        }
    }
    std::fs::write(dir.join("game.json"), manifest.to_string()).unwrap();
    let game = Game::find(&dir.display().to_string(), &builder()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    game
}

/// The time rules of real challenges: a start-up allowance for every
/// process of a per-turn program (here the host's for Python), and a time
/// bank over the match. The margins are seconds against a 50 ms move: a
/// program that sleeps 500 ms is on time only with its allowance, and one
/// that sleeps 2.5 s twice is on time once with a 4 s bank, never twice.
#[test]
fn a_per_turn_program_gets_its_languages_start_up_and_its_bank() {
    if !sandbox_ok() {
        return;
    }
    let sleeper = common::test_bot("sleep_argv.py", &[]);
    // (what, the game's time, the match's time scale, moves, timeouts)
    let cases = [
        ("python's start-up", json!({"startup_by_language": {"python": 3000}, "sleep_ms": 500, "rounds": 3}), 1.0, (3, 0)),
        ("another language's", json!({"startup_by_language": {"java": 3000}, "sleep_ms": 500, "rounds": 3}), 1.0, (0, 3)),
        ("every process's", json!({"startup": 3000, "sleep_ms": 500, "rounds": 3}), 1.0, (3, 0)),
        // koth replay rerun --time-scale scales it: 3000 ms × 0.05 is 150.
        ("every process's, scaled", json!({"startup": 3000, "sleep_ms": 500, "rounds": 3}), 0.05, (0, 3)),
        ("a bank for one long move", json!({"bank": 4000, "sleep_ms": 2500, "rounds": 2}), 1.0, (1, 1)),
    ];
    for (what, time, time_scale, (moves, timeouts)) in cases {
        let g = sleeper_game(&what.replace(['\'', ' ', ','], "-"), time);
        // No first-move allowance: only the rules under test give time.
        let opts = MatchOptions { first_move_extra: Duration::ZERO, time_scale, ..options(&g) };
        let r = play(&opts, vec![sleeper.clone()]).unwrap();
        assert_eq!(r.ended_by, EndedBy::Rules, "{what}: {:?}", r.referee_stderr);
        let o = &r.outcomes[0];
        assert_eq!((o.moves, o.timeouts), (moves, timeouts), "{what}: {}", o.stderr);
        // The bank left is recorded after every move and told the referee:
        // some of it after the long move on time, none after the timeout.
        let replay = r.replay.read().unwrap();
        let banks: Vec<Option<f64>> = replay.turns.iter().map(|t| t.times[0].bank_ms).collect();
        let told: Vec<&serde_json::Value> = replay.turns.iter().flat_map(|t| &t.events).map(|e| &e["empty"]).collect();
        if what.contains("bank") {
            assert!(matches!(banks[..], [Some(b), Some(0.0)] if b > 0.0 && b < 4000.0), "{what}: {banks:?}");
            assert_eq!(told, [&json!(false), &json!(true)], "{what}");
        } else {
            assert!(banks.iter().all(Option::is_none) && told.is_empty(), "{what}: no bank, none told: {banks:?}");
        }
        g.check(&replay, &sandbox_config()).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}
