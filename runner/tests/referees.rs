//! External games: a referee program in a box of its own, under the real
//! sandbox. The example game (Rock Paper Scissors Lizard Spock, its referee
//! in JavaScript) plays to its end and its replays check and redraw by
//! running the referee again; and referees that do the worst thing they can
//! at a turn (`runner/tests/bots/referee.py`: crash, hang, spin, flood,
//! ask a seat that does not exist, write half a line, answer twice, eat
//! memory, close their output, never answer the start) each end their
//! match as "referee failed" in bounded time, with words that say what the
//! referee did; one that answers and then spins steals no time from the
//! bots.

mod common;

use std::time::{Duration, Instant};

use common::{bot, play, repo, sandbox_config, sandbox_ok, test_bot};
use koth_games::replay::{Answer, EndedBy, Recorded, Replay, ReplaySeat, Turn};
use koth_games::{GameId, GameKind};
use koth_runner::engine::MatchOptions;
use koth_runner::{BotStatus, Game};

/// The test that loads the host with spinners runs alone; the others,
/// which time referees, run beside each other but never beside it.
static LOAD: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn builder() -> koth_runner::bot::Builder {
    koth_runner::bot::Builder::host(sandbox_config())
}

fn options(game: &Game, seed: u64) -> MatchOptions {
    MatchOptions { sandbox: sandbox_config(), ..MatchOptions::new(game.clone(), seed) }
}

/// A game folder for the test referee, doing `mode` at turn `at`.
fn test_game(mode: &str, at: u32) -> Game {
    test_game_with(mode, at, 40)
}

/// The same, `rounds` turns long.
fn test_game_with(mode: &str, at: u32, rounds: u32) -> Game {
    test_game_of(mode, at, rounds, "stdio")
}

/// The test referee's game, its bots speaking `protocol`.
fn test_game_of(mode: &str, at: u32, rounds: u32, protocol: &str) -> Game {
    let dir = std::env::temp_dir().join(format!("koth-referee-test-{mode}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(repo().join("runner/tests/bots/referee.py"), dir.join("referee.py")).unwrap();
    let manifest = serde_json::json!({
        "name": "hostile", "seats": {"min": 2, "max": 2}, "protocol": protocol,
        // A program per turn (Python's start) needs more than 50 ms.
        "time_policy": {"per_move": if protocol == "stdio" { 50 } else { 2000 }, "on_timeout": {"kind": "no_move", "freeze_after": 5}},
        "max_turns": rounds.max(1000),
        "referee": {"main": "referee.py", "limits": {"per_call_ms": 500, "match_cpu_ms": 20000, "memory_mb": 64}},
        "settings": {"mode": mode, "at": at, "rounds": rounds},
    });
    std::fs::write(dir.join("game.json"), manifest.to_string()).unwrap();
    let game = Game::find(&dir.display().to_string(), &builder()).unwrap_or_else(|e| panic!("{mode}: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    game
}

fn rpsls() -> Game {
    Game::find(&repo().join("external-games/rpsls").display().to_string(), &builder()).unwrap()
}

fn two_bots() -> Vec<koth_runner::BotSpec> {
    vec![bot("bots/target/still.c"), bot("bots/target/still.c")]
}

#[test]
fn rpsls_plays_to_its_end_and_its_replay_checks_and_draws_through_its_referee() {
    if !sandbox_ok() {
        return;
    }
    let _quiet = LOAD.read().unwrap_or_else(|p| p.into_inner());
    let game = rpsls();
    let dir = repo().join("external-games/rpsls/bots");
    let (py, c) = (bot(&dir.join("cycler.py").display().to_string()), bot(&dir.join("counter.c").display().to_string()));
    let run = || play(&options(&game, 7), vec![py.clone(), c.clone(), py.clone(), c.clone()]).unwrap();
    let r = run();
    assert_eq!(r.ended_by, EndedBy::Rules, "{:?}", r.referee_stderr);
    assert_eq!(r.turns, 100);
    for o in &r.outcomes {
        assert_eq!((o.moves, o.timeouts, o.invalid_moves, &o.status), (100, 0, 0, &BotStatus::Ok), "{}: {}", o.name, o.stderr);
    }
    // The scores are the referee's: every round's points add up to them.
    let points: Vec<f64> =
        (0..4).map(|s| r.replay.read().unwrap().turns.iter().map(|t| t.events[0]["points"][s].as_f64().unwrap()).sum()).collect();
    assert_eq!(points, r.outcomes.iter().map(|o| o.score).collect::<Vec<_>>());
    assert_eq!(r.replay.read().unwrap().game.name(), "rpsls");
    assert_eq!(r.replay.read().unwrap().initial, serde_json::json!({"rounds": 100, "seats": 4}));
    // Checked and drawn by running the referee again over the answers.
    game.check(&r.replay.read().unwrap(), &sandbox_config()).unwrap();
    let frames = game.frames(&r.replay.read().unwrap(), &sandbox_config()).unwrap();
    assert_eq!(frames.frames.len(), 101);
    assert_eq!((frames.width, frames.height), (21, 4));
    assert!(frames.legend.iter().any(|l| l.code == 'K' && l.name == "Spock"));
    assert!(frames.frames[1].sentences[0].starts_with("round 1: "), "{:?}", frames.frames[1].sentences);
    // The same seed and bots play the same match.
    let again = run();
    for (a, b) in r.replay.read().unwrap().turns.iter().zip(&again.replay.read().unwrap().turns) {
        assert_eq!((&a.answers, &a.judgements, &a.events), (&b.answers, &b.judgements, &b.events), "turn {}", a.turn);
    }
    assert_eq!(r.replay.read().unwrap().result, again.replay.read().unwrap().result);
    // A replay whose answers were changed is caught by the referee.
    let mut forged = r.replay.read().unwrap().clone();
    forged.result[0].score += 1.0;
    assert!(game.check(&forged, &sandbox_config()).unwrap_err().contains("results differ"));
}

fn target_py() -> Game {
    Game::find(&repo().join("external-games/target-py").display().to_string(), &builder()).unwrap()
}

/// A Target match played by the built-in rules with scripted answers (no
/// processes): mostly digits, some written oddly (" 3", "+1", "04"), some
/// invalid, some timeouts, and a seat gone from turn 150; labelled as
/// the external game's, so its referee can be asked to agree.
fn scripted_target(seed: u64, seats: usize, max_turns: usize) -> Replay {
    let mut referee = GameKind::Target.referee(seats, seed).unwrap();
    let initial = referee.initial_state();
    let mut turns: Vec<Turn> = Vec::new();
    let mut cut_short = false;
    let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    while let Some(step) = referee.step() {
        if turns.len() == max_turns {
            cut_short = true;
            break;
        }
        let turn = turns.len() as u32 + 1;
        let answers: Vec<Answer> = step
            .requests
            .iter()
            .map(|r| {
                let reply = if r.seat == 1 && seats > 2 && turn >= 150 {
                    Recorded::Gone { gone: true, why: Some("crashed on turn 150 (exit code 1)".into()) }
                } else {
                    match next() % 40 {
                        0 => Recorded::Timeout { timeout: true },
                        1 => Recorded::Answer { answer: "x".into() },
                        2 => Recorded::Answer { answer: " 3".into() },
                        3 => Recorded::Answer { answer: "+1".into() },
                        4 => Recorded::Answer { answer: "04".into() },
                        5 => Recorded::Answer { answer: "7".into() },
                        k => Recorded::Answer { answer: ((k + turn as u64) % 5).to_string() },
                    }
                };
                Answer { seat: r.seat, reply }
            })
            .collect();
        let (judgements, events) = referee.apply_turn(&answers, &[]);
        turns.push(Turn { turn, engine_us: 0.0, answers, times: Vec::new(), judgements, events });
    }
    Replay {
        game: GameId::External("target-py".into()),
        seed,
        engine: "scripted".into(),
        time_policy: Some(GameKind::Target.time_policy()),
        seats: (0..seats).map(|s| ReplaySeat { name: format!("bot{s}"), ..ReplaySeat::default() }).collect(),
        initial,
        turns,
        result: referee.standings(),
        cut_short,
        ended_by: if cut_short { EndedBy::TurnLimit { turns: max_turns as u32 } } else { EndedBy::Rules },
    }
}

/// The first proof that a game written outside koth plays exactly like one
/// inside it: Invisible target re-written as a Python referee
/// (`external-games/target-py`, its own ChaCha8 and rand's sampling) agrees
/// with the built-in rules on every judgement, event, initial state and
/// result, on 50 seeds (400 turns each, 2 to 6 seats, odd and invalid
/// answers, timeouts, a seat gone) and on three whole games to their end.
#[test]
fn the_python_target_referee_judges_50_seeds_exactly_as_the_built_in_rules() {
    if !sandbox_ok() {
        return;
    }
    let _quiet = LOAD.read().unwrap_or_else(|p| p.into_inner());
    let game = target_py();
    let cases =
        (0..50u64).map(|i| (i * 7919 + 1, 2 + (i as usize % 5), 400)).chain([(3, 2, usize::MAX), (6, 3, usize::MAX), (11, 16, usize::MAX)]);
    // Two at a time: each check is a sandboxed Python referee judging its
    // replay turn by turn, on one core.
    koth_testkit::two_at_a_time(cases.collect(), |(seed, seats, turns)| {
        let r = scripted_target(seed, seats, turns);
        game.check(&r, &sandbox_config()).unwrap_or_else(|e| panic!("seed {seed}, {seats} seats: {e}"));
        if turns == usize::MAX {
            assert_eq!(r.ended_by, EndedBy::Rules);
            assert!(r.turns.len() > 1000, "seed {seed}: {} turns", r.turns.len());
        }
    });
    // It is no rubber stamp: one answer changed, and it disagrees.
    let mut r = scripted_target(5, 2, 400);
    let t = r.turns.iter_mut().find(|t| matches!(&t.answers[0].reply, Recorded::Answer { answer } if answer == "2")).unwrap();
    t.answers[0].reply = Recorded::Answer { answer: "4".into() };
    let e = game.check(&r, &sandbox_config()).unwrap_err();
    assert!(e.contains("differ"), "{e}");
}

/// ... and played live, with the same deterministic bots, the Python
/// referee's match is the built-in one's, turn for turn.
#[test]
fn the_python_target_referee_plays_the_same_match_as_the_built_in_one() {
    if !sandbox_ok() {
        return;
    }
    let _quiet = LOAD.read().unwrap_or_else(|p| p.into_inner());
    let py = target_py();
    let bots = || vec![bot("bots/target/still.c"), test_bot("target_walker.py", &[]), bot("bots/target/still.c")];
    for seed in [4, 9] {
        // A second per move: these bots answer in microseconds, and no
        // timeout of a busy machine should make the runs differ.
        let opts = |g: Game| MatchOptions { per_move: Some(Duration::from_secs(1)), max_turns: Some(800), ..options(&g, seed) };
        let built_in = play(&opts(GameKind::Target.into()), bots()).unwrap();
        let external = play(&opts(py.clone()), bots()).unwrap();
        assert_eq!(external.ended_by, built_in.ended_by, "seed {seed}: {:?}", external.referee_stderr);
        assert_eq!(external.replay.read().unwrap().initial, built_in.replay.read().unwrap().initial, "seed {seed}");
        assert_eq!(external.replay.read().unwrap().turns.len(), built_in.replay.read().unwrap().turns.len(), "seed {seed}");
        for (a, b) in external.replay.read().unwrap().turns.iter().zip(&built_in.replay.read().unwrap().turns) {
            assert_eq!((&a.answers, &a.judgements, &a.events), (&b.answers, &b.judgements, &b.events), "seed {seed}, turn {}", a.turn);
        }
        assert_eq!(external.replay.read().unwrap().result, built_in.replay.read().unwrap().result, "seed {seed}");
    }
}

/// Each hostile referee ends its match as "referee failed", with its words,
/// within a bound far below a hung runner's; nobody is ranked by it.
#[test]
fn a_hostile_referee_ends_its_match_as_referee_failed_in_bounded_time() {
    if !sandbox_ok() {
        return;
    }
    let _quiet = LOAD.read().unwrap_or_else(|p| p.into_inner());
    let cases: &[(&str, u32, &str)] = &[
        ("crash", 3, "exited with code 3"),
        ("hang", 3, "gave no answer within 500 ms"),
        ("spin", 3, "gave no answer within 500 ms"),
        ("flood", 3, "gave no answer within 500 ms"),
        ("flood_lines", 3, "not its answer"),
        ("ghost_seat", 3, "seat 9, but the match has 2 seats"),
        ("malformed", 3, "not its answer"),
        // Caught by whichever comes first: its second line waiting before
        // koth writes, or read as the answer to the next turn.
        ("two_lines", 3, "wrote a line nobody asked for|answered turn 3 when koth had sent turn 4"),
        ("memory", 3, "ran out of memory"),
        ("close_stdout", 3, "closed its output"),
        // 500 ms and the start-up allowance of its first call, 1 s.
        ("silent_start", 0, "gave no answer within 1500 ms of its own time: "),
    ];
    for &(mode, at, want) in cases {
        let game = test_game(mode, at);
        let began = Instant::now();
        let r = play(&options(&game, 1), two_bots()).unwrap_or_else(|e| panic!("{mode}: {e}"));
        let took = began.elapsed();
        let EndedBy::RefereeFailed { reason } = &r.ended_by else { panic!("{mode}: ended by {:?}", r.ended_by) };
        assert!(want.split('|').any(|w| reason.contains(w)), "{mode}: {reason}");
        assert_eq!(reason.ends_with("(at the start)"), at == 0, "{mode}: {reason}");
        assert!(r.cut_short, "{mode}");
        // It failed judging its turn (two_lines: the next): that turn and
        // those before it were played, nothing after.
        let failed_at = if mode == "two_lines" { at + 1 } else { at };
        assert_eq!(r.turns, failed_at, "{mode}: {reason}");
        // Bounded: its 500 ms per answer, plus the start of two boxes and
        // Python; far from the hour it tried to take.
        assert!(took < Duration::from_secs(20), "{mode}: the match took {took:?}");
        // A match whose referee failed has no result anyone can check,
        // and reports none: no seat won or lost.
        let replay = r.replay.read().unwrap();
        assert!(game.check(&replay, &sandbox_config()).unwrap_err().contains("its referee failed"), "{mode}");
        assert!(replay.result.is_empty(), "{mode}: the replay records a result: {:?}", replay.result);
        assert!(r.outcomes.iter().all(|o| o.result.is_none()), "{mode}: {:?}", r.outcomes.iter().map(|o| o.result).collect::<Vec<_>>());
        // The bots were asked nothing after the failure and were stopped.
        for o in &r.outcomes {
            assert_eq!(o.moves, r.turns, "{mode} {}", o.name);
        }
    }
}

/// A referee of a `per_turn_files` game puts files in a bot's folder with
/// a request's `write`: the bot of each seat reads the note it was given
/// at turns 1 and 2 (its answer is the note), and at turn 3 the referee
/// asks for what no bot's folder may get: a file outside it, too many
/// files, too many bytes, or the answer file itself. Each ends the match as
/// "referee failed" at that turn, with words that say what it asked: the
/// answer is refused whole, before any file of it is written.
#[test]
fn a_referee_writing_what_no_bots_folder_may_get_ends_its_match() {
    if !sandbox_ok() {
        return;
    }
    let _quiet = LOAD.read().unwrap_or_else(|p| p.into_inner());
    let reader = test_bot("note_reader.py", &[]);
    for (mode, want) in [
        ("write_escape", "asked seat 0 to write a file: file name \"../escape.txt\": 1 to"),
        ("write_many", "asked seat 0 to write 17 files (the most is 16)"),
        ("write_big", "asked seat 0 to write files of 600000 bytes in all (the most is 524288)"),
        ("write_answer", "asked seat 0 to write \"order.txt\", the file koth writes"),
    ] {
        let game = test_game_of(mode, 3, 10, "per_turn_files");
        let r = play(&options(&game, 1), vec![reader.clone(), reader.clone()]).unwrap_or_else(|e| panic!("{mode}: {e}"));
        let EndedBy::RefereeFailed { reason } = &r.ended_by else { panic!("{mode}: ended by {:?}", r.ended_by) };
        assert!(reason.contains(want), "{mode}: {reason}");
        assert_eq!(r.turns, 2, "{mode}: {reason}");
        assert!(r.outcomes.iter().all(|o| o.result.is_none()), "{mode}: no result");
        let replay = r.replay.read().unwrap();
        for (t, turn) in replay.turns.iter().take(2).enumerate() {
            for a in &turn.answers {
                assert_eq!(a.reply, Recorded::Answer { answer: format!("note {}", t + 1) }, "{mode}: turn {} seat {}", t + 1, a.seat);
            }
        }
    }
}

/// The worst referee within the protocol: ~1 MiB of events (a thousand
/// values) every turn, each line under the protocol's 1 MiB. Its match
/// ends `referee_failed` when its events would take the replay past the
/// match's limit, the reason naming the limit and the figure, and the
/// engine's memory stays bounded: the match is played in a process of its
/// own (this test's binary again, running only this test), whose peak
/// resident memory (`VmHWM`) it reports. Before the limit and the streamed
/// replay, such a referee took a match process to 579 MB in 200 turns and
/// nothing stopped it.
#[test]
fn a_referee_flooding_events_ends_at_the_replay_limit_in_bounded_memory() {
    const CHILD: &str = "KOTH_EVENTS_FLOOD_CHILD";
    if !sandbox_ok() {
        return;
    }
    if std::env::var_os(CHILD).is_some() {
        return events_flood_child();
    }
    let _quiet = LOAD.read().unwrap_or_else(|p| p.into_inner());
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["a_referee_flooding_events_ends_at_the_replay_limit_in_bounded_memory", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let line = stdout.lines().find_map(|l| l.split_once("EVENTS-FLOOD ").map(|(_, f)| f)).unwrap_or_else(|| panic!("no figures: {stdout}"));
    let f: serde_json::Value = serde_json::from_str(line).unwrap();
    eprintln!("events flood: {f}");
    let reason = f["reason"].as_str().unwrap();
    let limit = koth_runner::engine::DEFAULT_REPLAY_LIMIT;
    assert!(reason.contains("past koth's limit of 32 MiB") && reason.contains(&format!("({limit} bytes)")), "{reason}");
    assert!(reason.contains("of them the referee's events"), "{reason}");
    // About a turn per MiB of the limit: 1 MiB of events a turn.
    let turns = f["turns"].as_u64().unwrap();
    assert!((25..=40).contains(&turns), "{turns} turns: {reason}");
    // The replay reads back and is within the limit: the turn that would
    // have passed it was dropped.
    assert!(f["replay_bytes"].as_u64().unwrap() <= limit, "{f}");
    assert_eq!(f["replay_turns"].as_u64().unwrap() + 1, turns, "{f}");
    // Bounded, with a wide margin: the limit's 32 MiB of JSON went through
    // the engine, compressed as the runner does; it held a turn at a time.
    let peak = f["vm_hwm_mib"].as_f64().unwrap();
    assert!(peak < 128.0, "the match's process peaked at {peak:.0} MiB");
}

/// The flooding referee's match, in this process alone: prints the figures.
fn events_flood_child() {
    let game = test_game_with("events_flood", 0, 100_000);
    let opts = MatchOptions {
        // As a runner plays it: compressed as it is played.
        replay_to: koth_runner::engine::ReplayTo::Zstd { level: 12 },
        ..options(&game, 1)
    };
    let r = play(&opts, two_bots()).unwrap();
    let EndedBy::RefereeFailed { reason } = &r.ended_by else { panic!("ended by {:?}", r.ended_by) };
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm_kib: f64 = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap().trim().trim_end_matches("kB").trim().parse().unwrap();
    let figures = serde_json::json!({
        "reason": reason, "turns": r.turns, "replay_bytes": r.replay.json_len, "vm_hwm_mib": hwm_kib / 1024.0,
        "replay_turns": r.replay.read().unwrap().turns.len(),
    });
    println!("EVENTS-FLOOD {figures}");
}

/// A referee that floods its stderr every turn is only capped: the match
/// plays on, and the host gets the first 64 KiB of it.
#[test]
fn a_referee_flooding_its_stderr_is_capped_and_the_match_plays_on() {
    if !sandbox_ok() {
        return;
    }
    let _quiet = LOAD.read().unwrap_or_else(|p| p.into_inner());
    let r = play(&options(&test_game("stderr_flood", 0), 1), two_bots()).unwrap();
    assert_eq!((r.ended_by.clone(), r.turns), (EndedBy::Rules, 40));
    let err = r.referee_stderr.unwrap();
    assert!(err.len() <= 64 << 10 && err.len() > 60_000, "{}", err.len());
    assert_eq!(r.replay.read().unwrap().result[0].rank, 1);
}

/// A referee that answers and then spins four threads for 20 ms is frozen
/// the moment its answer is read: a bot that needs 40% of its 50 ms in
/// CPU every move never times out.
#[test]
fn a_referee_that_spins_after_answering_steals_no_time_from_the_bots() {
    if !sandbox_ok() {
        return;
    }
    let _quiet = LOAD.read().unwrap_or_else(|p| p.into_inner());
    let victim = || {
        let mut b = test_bot("adversary.c", &["victim", "target", "20"]);
        b.name = "victim".into();
        b
    };
    let r = play(&options(&test_game("spin_after", 0), 1), vec![victim(), victim()]).unwrap();
    assert_eq!(r.ended_by, EndedBy::Rules, "{:?}", r.referee_stderr);
    for o in &r.outcomes {
        assert_eq!((o.moves, o.timeouts), (40, 0), "{}", o.stderr);
    }
}

/// A game folder that is not one says what to change.
/// A referee whose box this machine cannot make (here: its runtime folder
/// is under a file) is the machine's failure, not the game's: the match is
/// not played and the error says so as a host error, which a runner
/// retries, here later or on another runner. (It was recorded as the
/// referee failing, and the match failed for good.)
#[test]
fn a_referee_whose_box_cannot_be_made_is_the_machines_fault_not_the_games() {
    if !sandbox_ok() {
        return;
    }
    let _quiet = LOAD.read().unwrap_or_else(|p| p.into_inner());
    let game = rpsls();
    let file = std::env::temp_dir().join(format!("koth-not-a-folder-{}", std::process::id()));
    std::fs::write(&file, "").unwrap();
    let mut sandbox = sandbox_config();
    sandbox.runtime_dir = file.join("boxes");
    let e = koth_runner::engine::play(&MatchOptions { sandbox, ..options(&game, 3) }, two_bots()).unwrap_err();
    let _ = std::fs::remove_file(&file);
    assert!(matches!(e, koth_runner::engine::EngineError::Host(_)), "{e:?}");
    assert!(!e.is_deterministic());
    assert!(e.to_string().contains("the game's referee: its box could not be built"), "{e}");
}

#[test]
fn a_game_folder_is_checked_before_anything_runs() {
    let dir = std::env::temp_dir().join(format!("koth-bad-game-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let find = |m: &serde_json::Value| {
        std::fs::write(dir.join("game.json"), m.to_string()).unwrap();
        Game::find(&dir.display().to_string(), &builder()).map(|_| ()).unwrap_err()
    };
    let base = serde_json::json!({
        "name": "bad", "seats": {"min": 2, "max": 2}, "protocol": "stdio",
        "time_policy": {"per_move": 50, "on_timeout": {"kind": "loses"}},
        "max_turns": 10, "referee": {"main": "referee.py"},
    });
    assert!(find(&base).contains("referee.py"), "{}", find(&base));
    let mut m = base.clone();
    m["referee"]["main"] = "referee.xyz".into();
    std::fs::write(dir.join("referee.xyz"), "").unwrap();
    assert!(find(&m).contains("extension"), "{}", find(&m));
    let mut m = base.clone();
    m["name"] = "snake".into();
    assert!(find(&m).contains("one of koth's own games"));
    let e = Game::find("/nonexistent/game", &builder()).unwrap_err();
    assert!(e.contains("flit, slime, linkage, target, snake") && e.contains("game.json"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A referee's limit is its own time, as a bot's is (issue 31): one that
/// needs 250 ms of CPU for each of its 500 ms answers plays its game to
/// the end while twice as many processes as the host has cores spin
/// outside every box. (Its limit used to be wall time: at load 11 such a
/// referee was failed as "gave no answer in 2000 ms".)
#[test]
fn a_referee_is_timed_on_its_own_cpu_not_the_hosts_load() {
    if !sandbox_ok() {
        return;
    }
    let _load = LOAD.write().unwrap_or_else(|p| p.into_inner());
    let game = test_game("burn", 250);
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let spinners: Vec<std::process::Child> =
        (0..2 * cores).map(|_| std::process::Command::new("sh").arg("-c").arg("while :; do :; done").spawn().unwrap()).collect();
    let r = play(&MatchOptions { max_turns: Some(12), ..options(&game, 5) }, two_bots());
    for mut s in spinners {
        let _ = s.kill();
        let _ = s.wait();
    }
    let r = r.unwrap();
    // The machine's fault, said as such, is allowed; the referee's is not.
    assert!(
        matches!(r.ended_by, EndedBy::Rules | EndedBy::TurnLimit { .. } | EndedBy::HostOverloaded { .. }),
        "{:?}\n{:?}",
        r.ended_by,
        r.referee_stderr
    );
    eprintln!("ended by {:?} after {} turns", r.ended_by, r.turns);
}
