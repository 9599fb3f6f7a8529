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
use koth_runner::engine::SeatPlayer;
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

/// `external-games/launch-args` in a temporary folder, its manifest's
/// `protocol` and `settings` changed as `protocol` and `settings` say.
fn launch_game(tag: &str, protocol: &str, settings: serde_json::Value) -> Game {
    launch_game_with(tag, protocol, settings, json!({}))
}

/// The same, with `fields` set in its manifest.
fn launch_game_with(tag: &str, protocol: &str, settings: serde_json::Value, fields: serde_json::Value) -> Game {
    let src = repo().join("external-games/launch-args");
    let dir = std::env::temp_dir().join(format!("koth-launch-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(src.join("referee.py"), dir.join("referee.py")).unwrap();
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(src.join("game.json")).unwrap()).unwrap();
    manifest["protocol"] = protocol.into();
    for (k, v) in settings.as_object().unwrap() {
        manifest["settings"][k] = v.clone();
    }
    for (k, v) in fields.as_object().unwrap() {
        manifest[k] = v.clone();
    }
    std::fs::write(dir.join("game.json"), manifest.to_string()).unwrap();
    let game = Game::find(&dir.display().to_string(), &builder()).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    game
}

/// What each seat's bot was launched with, as `launch-args`' referee
/// draws it from seed 4812 (4812 % 997 = 824).
fn launched(seat: usize, port: &str) -> Vec<String> {
    let drawn = (824 + seat) % 997;
    ["seat{seat}", port, "two words", "", "été", "{drawn}"]
        .iter()
        .map(|a| a.replace("{seat}", &seat.to_string()).replace("{drawn}", &drawn.to_string()))
        .collect()
}

/// A long-lived bot is started with the argument list its referee gives
/// it in the answer to `start` (`launch`): over stdio, and over TCP as
/// Speed Clue's AIs were (`caller.py IDENTIFIER PORT`, connecting to the
/// port it is given and saying `IDENTIFIER alive` first). The bot answers
/// its arguments every turn, and the referee scores the lists it launched:
/// a bot started with other arguments, or none, would score 0. The replay
/// records each seat's list, `check` asks the referee for the same again
/// (a forged list is caught), and a rerun as `koth replay rerun` plays it
/// (one seat live, the other from the recording) starts the live bot with
/// the same list.
#[test]
fn a_long_lived_bot_is_started_with_the_arguments_its_referee_launches_it_with() {
    if !sandbox_ok() {
        return;
    }
    let caller = game_bot("launch-args", "caller.py");
    let at = |g: &Game| MatchOptions { sandbox: sandbox_config(), ..MatchOptions::new(g.clone(), 4812) };
    // Over stdio, three seats.
    let g = launch_game("stdio", "stdio", json!({}));
    let r = play(&at(&g), vec![caller.clone(), caller.clone(), caller.clone()]).unwrap();
    assert_eq!(r.ended_by, EndedBy::Rules, "{:?}", r.referee_stderr);
    for o in &r.outcomes {
        assert_eq!((o.moves, o.invalid_moves, &o.status, o.score), (3, 0, &BotStatus::Ok, 3.0), "{}: {}", o.name, o.stderr);
    }
    let replay = r.replay.read().unwrap();
    for (seat, s) in replay.seats.iter().enumerate() {
        assert_eq!(s.argv, launched(seat, "-"), "seat {seat}");
    }
    let Recorded::Answer { answer } = &replay.turns[0].answers[2].reply else { panic!("{:?}", replay.turns[0].answers[2]) };
    assert_eq!(serde_json::from_str::<Vec<String>>(answer).unwrap(), launched(2, "-"));
    g.check(&replay, &sandbox_config()).unwrap();
    let mut forged = replay.clone();
    forged.seats[1].argv[1] = "4041".into();
    let err = g.check(&forged, &sandbox_config()).unwrap_err();
    assert!(err.contains("seat 1's bot was started with other arguments"), "{err}");

    // A rerun: seat 0 live, seat 1 and 2 from the recording.
    let seats: Vec<SeatPlayer> = (0..3)
        .map(|s| match s {
            0 => SeatPlayer::Bot(caller.clone()),
            _ => SeatPlayer::Recorded {
                name: format!("seat {s} (recorded)"),
                id_line: None,
                answers: replay.turns.iter().map(|t| t.answers[s].reply.clone()).collect(),
            },
        })
        .collect();
    let again = koth_runner::engine::play_seats(&at(&g), seats).unwrap();
    assert_eq!(again.ended_by, EndedBy::Rules, "{:?}", again.referee_stderr);
    assert_eq!(again.outcomes.iter().map(|o| o.score).collect::<Vec<_>>(), [3.0, 3.0, 3.0], "{}", again.outcomes[0].stderr);
    assert_eq!(again.replay.read().unwrap().seats[0].argv, launched(0, "-"));

    // Over TCP: connected to the port it was given, its id line first.
    let g = launch_game("tcp", "tcp_or_stdio", json!({"connect": true}));
    let r = play(&at(&g), vec![caller.clone(), caller.clone()]).unwrap();
    assert_eq!(r.ended_by, EndedBy::Rules, "{:?}", r.referee_stderr);
    for (seat, o) in r.outcomes.iter().enumerate() {
        assert_eq!((o.score, &o.status), (3.0, &BotStatus::Ok), "{}: {}", o.name, o.stderr);
        assert_eq!(o.id_line.as_deref(), Some(format!("seat{seat} alive").as_str()));
        assert_eq!(r.replay.read().unwrap().seats[seat].argv, launched(seat, "4040"));
    }
    g.check(&r.replay.read().unwrap(), &sandbox_config()).unwrap();

    // No "launch": started with no argument, as ever, and none recorded.
    let g = launch_game("none", "stdio", json!({"mode": "none"}));
    let r = play(&at(&g), vec![caller.clone()]).unwrap();
    assert_eq!((r.outcomes[0].score, &r.ended_by), (3.0, &EndedBy::Rules), "{}", r.outcomes[0].stderr);
    assert!(r.replay.read().unwrap().seats[0].argv.is_empty());
}

/// A referee that launches bots wrongly (after the start, too many
/// arguments or bytes, a NUL byte, a seat that does not exist or twice, a
/// program started every turn) ends its match as "referee failed", with
/// the reason, before any bot is asked anything (or, late, at the turn it
/// did it), and no result.
#[test]
fn a_referee_launching_bots_wrongly_ends_its_match_with_the_reason() {
    if !sandbox_ok() {
        return;
    }
    let caller = game_bot("launch-args", "caller.py");
    for (mode, protocol, turns, want) in [
        ("late", "stdio", 1, "may give it (judging turn 1)"),
        ("many", "stdio", 0, "launched seat 0 with 1025 arguments of 4015 bytes (the most is 1024 arguments, 65536 bytes) (at the start)"),
        ("bytes", "stdio", 0, "launched seat 0 with 1 arguments of 70001 bytes"),
        ("nul", "tcp_or_stdio", 0, "launched seat 0 with a NUL byte in an argument, which no program can be given"),
        ("seat9", "stdio", 0, "launched seat 9, but the match has 2 seats (0 to 1)"),
        ("twice", "stdio", 0, "launched seat 0 twice"),
        ("launch", "per_turn_argv", 0, "sent \"launch\", which only long-lived bots (stdio, tcp_or_stdio) get"),
    ] {
        let g = launch_game(mode, protocol, json!({"mode": mode}));
        let r = play(&MatchOptions { sandbox: sandbox_config(), ..MatchOptions::new(g.clone(), 1) }, vec![caller.clone(), caller.clone()])
            .unwrap();
        let EndedBy::RefereeFailed { reason } = &r.ended_by else { panic!("{mode}: ended by {:?}", r.ended_by) };
        assert!(reason.contains(want), "{mode}: {reason}");
        assert_eq!(r.turns, turns, "{mode}");
        assert!(r.outcomes.iter().all(|o| o.result.is_none()), "{mode}: no result");
    }
}

/// A game of unterminated messages (`"framing": "unterminated"`), as Speed
/// Clue's server and AIs wrote to each other: a request is written with no
/// line ending, and an answer, the id line too, is what one read takes.
/// `unterminated.py` reads each message with one read, answers with no
/// newline, and says "newline!" if a message had one: over TCP (connected
/// to the port it was launched with, "seat0 alive" its id line) and over
/// stdio, it scores every turn. The same bot in a game of lines times out
/// (koth waits for a line that never ends), which is why Speed Clue needs
/// the framing; and `caller.py`, a line bot, answers "newline"-free JSON in
/// lines either way. Its replay checks.
#[test]
fn unterminated_messages_are_written_as_they_are_and_read_as_one_read_takes_them() {
    if !sandbox_ok() {
        return;
    }
    let raw = common::test_bot("unterminated.py", &[]);
    let at = |g: &Game| MatchOptions { sandbox: sandbox_config(), ..MatchOptions::new(g.clone(), 4812) };
    let unterminated = json!({"framing": "unterminated"});
    let g = launch_game_with("raw-tcp", "tcp_or_stdio", json!({"connect": true}), unterminated.clone());
    let r = play(&at(&g), vec![raw.clone(), raw.clone(), raw.clone()]).unwrap();
    assert_eq!(r.ended_by, EndedBy::Rules, "{:?}", r.referee_stderr);
    for (seat, o) in r.outcomes.iter().enumerate() {
        assert_eq!((o.moves, o.invalid_moves, &o.status, o.score), (3, 0, &BotStatus::Ok, 3.0), "{}: {}", o.name, o.stderr);
        assert_eq!(o.id_line.as_deref(), Some(format!("seat{seat} alive").as_str()));
    }
    g.check(&r.replay.read().unwrap(), &sandbox_config()).unwrap();

    // The worst bots of this framing: one that floods (256 KiB with no
    // newline before each answer) and one that answers in two writes 50 ms
    // apart. Each answer is what one read takes (at most 4096 bytes), so
    // their first is wrong; what follows is read as late messages, and
    // the well-behaved bot beside them scores every turn. The bot in
    // pieces never sends a whole answer in one write: an invalid move a
    // turn. The flooder's real answer is one write of its own, which a
    // later turn's read may take whole (TCP's segments decide): it
    // answers every turn either way.
    for mode in ["flood", "pieces"] {
        let hostile = common::test_bot("unterminated.py", &[mode]);
        let r = play(&at(&g), vec![raw.clone(), hostile]).unwrap();
        assert_eq!(r.ended_by, EndedBy::Rules, "{mode}: {:?}", r.referee_stderr);
        let (good, bad) = (&r.outcomes[0], &r.outcomes[1]);
        assert_eq!((good.score, good.invalid_moves, &good.status), (3.0, 0, &BotStatus::Ok), "{mode}: {}", good.stderr);
        match mode {
            "pieces" => assert_eq!((bad.score, bad.invalid_moves), (0.0, 3), "{mode}"),
            _ => assert!(
                bad.invalid_moves >= 1 && bad.score + bad.invalid_moves as f64 == 3.0,
                "{mode}: {} {}",
                bad.score,
                bad.invalid_moves
            ),
        }
        g.check(&r.replay.read().unwrap(), &sandbox_config()).unwrap();
    }

    let g = launch_game_with("raw-stdio", "stdio", json!({}), unterminated);
    let r = play(&at(&g), vec![raw.clone()]).unwrap();
    assert_eq!((r.outcomes[0].score, r.outcomes[0].invalid_moves, &r.ended_by), (3.0, 0, &EndedBy::Rules), "{}", r.outcomes[0].stderr);

    // In a game of lines the same bot never ends a line: no id line in time.
    let g = launch_game("raw-lines", "tcp_or_stdio", json!({"connect": true}));
    // 4 s to start and connect (1 s first-move allowance and 3 s): it connects, and then says nothing koth can read as a line.
    let opts = MatchOptions { per_move: Some(Duration::from_secs(3)), ..at(&g) };
    let r = play(&opts, vec![raw.clone()]).unwrap();
    let o = &r.outcomes[0];
    assert_eq!(o.score, 0.0);
    assert!(
        matches!(&o.status, BotStatus::NotConnected { reason } if reason.contains("connected to 127.0.0.1:4040 but sent no id line")),
        "{:?}",
        o.status
    );
}
