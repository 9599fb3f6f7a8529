//! `koth replay check FILE`: a replay played again through the rules, as a
//! bot author (or anyone) checks a match without trusting the server;
//! `koth replay view FILE`: the site's viewer on this machine; `koth replay
//! rerun`: a recorded match with the author's bot live and the other seats
//! from the recording.

use std::path::PathBuf;
use std::process::{Command, Output};

use koth_games::replay::{Answer, Recorded, Replay, ReplaySeat, Turn};
use koth_games::GameKind;

fn koth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/cli-replay")
        .env("KOTH_SANDBOX_UID_BASE", "64500")
        .env("KOTH_CACHE", PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-replay-cache"))
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
    let script = ["0 0 1 1", "what", "", "7 7 5 5", "1 1 2 2", "0 7 1 6", "7 0 6 1", "7 7 6 6", "2 2 3 3", "0 7 2 5", "x", "6 6 5 6"];
    scripted_slime(GameKind::Slime.referee(4, 0).unwrap(), &script, "hand-made")
}

/// A Slime replay of `referee` (4 seats, seed 0) answering `script` in
/// turn, `""` a timeout, cut short after the script.
fn scripted_slime(mut referee: Box<dyn koth_games::Referee>, script: &[&str], engine: &str) -> Replay {
    let initial = referee.initial_state();
    let mut turns = Vec::new();
    for (i, text) in script.iter().enumerate() {
        let seat = referee.step().unwrap().requests[0].seat;
        let reply = if text.is_empty() { Recorded::Timeout { timeout: true } } else { Recorded::Answer { answer: text.to_string() } };
        let (judgements, events) = referee.apply(vec![(seat, reply.reply())]);
        turns.push(Turn { turn: i as u32 + 1, answers: vec![Answer { seat, reply }], judgements, events, ..Turn::default() });
    }
    Replay {
        game: GameKind::Slime.into(),
        seed: 0,
        engine: engine.into(),
        time_policy: None,
        seats: (0..4).map(|i| ReplaySeat { name: format!("bot{i}"), ..ReplaySeat::default() }).collect(),
        initial,
        turns,
        result: referee.standings(),
        cut_short: true,
        ended_by: koth_games::replay::EndedBy::TurnLimit { turns: script.len() as u32 },
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
        // Not one of koth's games: an external game's, whose folder is needed.
        ("chess.json", br#"{"game": "chess", "seed": 1, "seats": [], "turns": []}"#, "chess, an external game: pass --game FOLDER"),
        ("path.json", br#"{"game": "../x", "seed": 1, "seats": [], "turns": []}"#, "lowercase letters"),
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
        assert!(
            std::env::var("CI").is_err(),
            "CI=true and not root: these tests run as root (a user also needs a delegated cgroup, see tests/rootless.rs)"
        );
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
    // Each seat's stderr is in the file, by turn: the mute bot's is koth's
    // note on each timeout, under the turn it timed out in.
    let mute = r.seats[1].stderr.as_ref().expect("koth match writes each seat's stderr into the replay");
    let first = r.turns.iter().find(|t| t.answers.iter().any(|a| a.seat == 1)).unwrap().turn;
    assert!(mute.of_turn(first).contains(&format!("[koth] turn {first}: no answer within")), "{mute:?}");
    assert!(r.seats[0].stderr.is_some());
}

/// The first line `koth replay view` prints: its URL.
fn url_of(child: &mut std::process::Child) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    line.trim().to_owned()
}

fn get(url: &str) -> (u16, String) {
    match ureq::get(url).call() {
        Ok(r) => (r.status(), r.into_string().unwrap()),
        Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap_or_default()),
        Err(e) => panic!("{url}: {e}"),
    }
}

#[test]
fn a_replay_file_is_served_with_the_sites_viewer_on_this_machine() {
    let file = dir().join("view.json");
    std::fs::write(&file, serde_json::to_vec(&slime_replay()).unwrap()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["replay", "view", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let page_url = url_of(&mut child);
    // The match page itself, so that `?turn=N` may be added to it.
    let url = page_url.strip_suffix("matches/0").unwrap_or_else(|| panic!("{page_url}")).to_owned();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with('/'), "{url}");
    // The page: the site's match page, marked local; "/" leads to it, with its query.
    let (st, page) = get(&page_url);
    assert_eq!(st, 200);
    assert!(page.contains("data-page=\"match\" data-id=\"0\" data-local=\"1\"") && page.contains("/static/app.js"), "{page}");
    assert_eq!(get(&format!("{url}static/app.js")).0, 200);
    // What the page reads, from the replay: the seed as a string, the
    // seats by name with their results, the command to play it again.
    let info: serde_json::Value = serde_json::from_str(&get(&format!("{url}api/matches/0")).1).unwrap();
    assert_eq!((info["game"].as_str(), info["seed"].as_str(), info["turns"].as_i64()), (Some("slime"), Some("0"), Some(12)));
    assert_eq!(info["seats"][2]["name"], "bot2");
    assert!(info["seats"][0]["rank"].is_number(), "{info}");
    assert_eq!(info["reproduce"], "koth match --game slime --seed 0 --players 4 --max-turns 12 bot0 bot1 bot2 bot3");
    let replay: serde_json::Value = serde_json::from_str(&get(&format!("{url}api/matches/0/replay")).1).unwrap();
    assert_eq!(replay, serde_json::to_value(slime_replay()).unwrap());
    let frames: serde_json::Value = serde_json::from_str(&get(&format!("{url}api/matches/0/frames")).1).unwrap();
    assert_eq!(frames["frames"].as_array().map(Vec::len), Some(13));
    let no_redirects = ureq::AgentBuilder::new().redirects(0).build();
    let to = no_redirects.get(&format!("{url}?turn=3")).call().unwrap();
    assert_eq!((to.status(), to.header("location")), (303, Some("/matches/0?turn=3")));
    // Nothing of a site: other API paths are JSON 404s; other pages lead
    // back to the replay, with none of the site's links.
    let (st, body) = get(&format!("{url}api/ladders"));
    assert_eq!(st, 404);
    assert!(body.contains("\"error\""), "{body}");
    let (st, page) = get(&format!("{url}games"));
    assert_eq!(st, 404);
    assert!(page.contains("data-local=\"1\"") && page.contains("<a href=\"/matches/0\" id=\"back-to-replay\">"), "{page}");
    // SIGTERM stops it cleanly.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().code(), Some(0));

    // Opened at a turn (`--turn`): the printed URL says it. Seats of one
    // file are told apart on the page and in the turns' words, and the
    // command to play it again names the file in each seat.
    let mut same = slime_replay();
    for s in &mut same.seats {
        s.name = "bot.py".into();
    }
    std::fs::write(&file, serde_json::to_vec(&same).unwrap()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(["replay", "view", file.to_str().unwrap(), "--turn", "5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let at = url_of(&mut child);
    assert!(at.ends_with("/matches/0?turn=5"), "{at}");
    let base = at.strip_suffix("matches/0?turn=5").unwrap();
    let info: serde_json::Value = serde_json::from_str(&get(&format!("{base}api/matches/0")).1).unwrap();
    let names: Vec<&str> = info["seats"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["bot.py (1)", "bot.py (2)", "bot.py (3)", "bot.py (4)"]);
    assert_eq!(info["reproduce"], "koth match --game slime --seed 0 --players 4 --max-turns 12 bot.py bot.py bot.py bot.py");
    let frames = get(&format!("{base}api/matches/0/frames")).1;
    assert!(frames.contains("bot.py (2)"), "the turns' words name the seats as the page does: {frames}");
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().code(), Some(0));

    // Not a replay, or one the rules cannot draw: said, and nothing served.
    let junk = dir().join("junk.json");
    std::fs::write(&junk, "{\"game\": \"slime\"}").unwrap();
    let out = koth(&["replay", "view", junk.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a koth replay"), "{}", String::from_utf8_lossy(&out.stderr));
    let mut r = slime_replay();
    r.seats.pop();
    std::fs::write(&junk, serde_json::to_vec(&r).unwrap()).unwrap();
    let out = koth(&["replay", "view", junk.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be drawn"), "{}", String::from_utf8_lossy(&out.stderr));
}

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// A Slime replay written before koth read answers as the original
/// controller did (its initial state names no reading: `0 0 1 1 extra` was
/// a pass then), with one seat's bot answering `pass` every turn, live.
#[test]
fn an_old_slime_replay_checks_and_reruns_under_the_rules_it_was_played_with() {
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var("CI").is_err(), "CI=true and not root: these tests run as root");
        eprintln!("SKIPPED (not root)");
        return;
    }
    let mut referee = GameKind::Slime.referee(4, 0).unwrap();
    referee.replaying(&serde_json::json!({"size": 8}));
    assert!(referee.initial_state().get("answers").is_none(), "{}", referee.initial_state());
    let script = ["0 0 1 1 spread", "pass", "7 0 6 1", "7 7 6 6", "1 1 2 2 again", "pass", "6 1 5 2", "6 6 5 5"];
    let old = scripted_slime(referee, &script, "koth-runner 0.2.0");
    assert_eq!(old.turns[0].events[0]["type"], "pass", "the reading of then");
    let file = dir().join("slime-old-reading.json");
    std::fs::write(&file, serde_json::to_vec(&old).unwrap()).unwrap();
    let out = koth(&["replay", "check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let passer = dir().join("passer.py");
    std::fs::write(&passer, "print('pass')\n").unwrap();
    let out = koth(&["replay", "rerun", file.to_str().unwrap(), "--bot", passer.to_str().unwrap(), "--seat", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("reproduced: all 8 turns"), "{text}");
}

/// `koth replay rerun`: a recorded match played again with one bot live and
/// the others answering from the recording. The same bot reproduces every
/// turn; a bot changed at its fifth move is caught at that turn, and the
/// rules play on; the recorded seat of a protocol that speaks first (Snake,
/// over TCP in the recording) says its recorded id line.
#[test]
fn a_recorded_match_reruns_with_the_authors_bot_and_says_where_it_diverges() {
    let rec = dir().join("rerun-target.json");
    let out = koth(&[
        "match",
        "--host",
        "--game",
        "target",
        "--seed",
        "11",
        "--replay",
        rec.to_str().unwrap(),
        &repo("bots/target/still.c"),
        &repo("bots/target/drifter.py"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let turns = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&rec).unwrap()).unwrap()["turns"].as_array().unwrap().len();

    // The same bot in its seat: every turn as recorded.
    let out = koth(&["replay", "rerun", rec.to_str().unwrap(), "--bot", &repo("bots/target/still.c"), "--seat", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with(&format!("reproduced: all {turns} turns, every answer, judgement and event as recorded")), "{text}");
    assert!(text.contains("seat 2 drifter.py (recorded): "), "{text}");

    // Its fifth move changed (the recording's is 1): caught at turn 5.
    let changed = dir().join("changed.py");
    std::fs::write(
        &changed,
        "import sys\npattern = [3, 3, 4, 4, 2, 1, 1, 0, 0, 0, 2]\nfor n, _ in enumerate(sys.stdin):\n    print(pattern[n % len(pattern)], flush=True)\n",
    )
    .unwrap();
    let new_replay = dir().join("rerun-changed.json");
    let out = koth(&[
        "replay",
        "rerun",
        rec.to_str().unwrap(),
        "--bot",
        changed.to_str().unwrap(),
        "--seat",
        "1",
        "--replay",
        new_replay.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("diverged at turn 5: your bot now answers \"2\"; the recording has \"1\""), "{text}");
    assert!(text.contains("the rules played on"), "{text}");
    // The new run is a replay of its own that agrees with the rules.
    let out = koth(&["replay", "check", new_replay.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // Its stderr: the new bot's own, by turn; the other seat's, the
    // recording's (it answered from there).
    let (was, now) =
        (Replay::from_json(&std::fs::read(&rec).unwrap()).unwrap(), Replay::from_json(&std::fs::read(&new_replay).unwrap()).unwrap());
    assert!(now.seats[0].stderr.is_some(), "the rerun bot's stderr is in the new replay");
    assert!(was.seats[1].stderr.is_some());
    assert_eq!(now.seats[1].stderr, was.seats[1].stderr);

    // A bot that never reads and never answers: caught at turn 1, and the
    // run still ends (it is frozen after its timeouts, the rules go on).
    // (A recording of 20 turns: Target waits out every one of them.)
    let short = dir().join("rerun-short.json");
    let out = koth(&[
        "match",
        "--host",
        "--game",
        "target",
        "--seed",
        "11",
        "--max-turns",
        "20",
        "--replay",
        short.to_str().unwrap(),
        &repo("bots/target/still.c"),
        &repo("bots/target/drifter.py"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let silent = dir().join("silent.py");
    std::fs::write(&silent, "import time\ntime.sleep(3600)\n").unwrap();
    let out = koth(&["replay", "rerun", short.to_str().unwrap(), "--bot", silent.to_str().unwrap(), "--seat", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("diverged at turn 1: your bot now answers no answer in time; the recording has \"3\""), "{text}");
    assert!(text.contains("seat 1 silent.py: "), "{text}");

    // A bot slower than the match's 50 ms a move (100 ms each, the same
    // moves as still.c): at the match's time it misses its second move (the
    // first has the start-up allowance) and is told about --time-scale;
    // given ten times the time it reproduces the match, and says so.
    let slow = dir().join("slow.py");
    std::fs::write(
        &slow,
        "import sys, time\npattern = [3, 3, 4, 4, 1, 1, 1, 0, 0, 0, 2]\nfor n, _ in enumerate(sys.stdin):\n    time.sleep(0.1)\n    print(pattern[n % len(pattern)], flush=True)\n",
    )
    .unwrap();
    let out = koth(&["replay", "rerun", short.to_str().unwrap(), "--bot", slow.to_str().unwrap(), "--seat", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("diverged at turn 2: your bot now answers no answer in time; the recording has \"3\"\n(if this machine is slower or busier than the server, try --time-scale 2)"), "{text}");
    let out = koth(&["replay", "rerun", short.to_str().unwrap(), "--bot", slow.to_str().unwrap(), "--seat", "1", "--time-scale", "10"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("with --time-scale 10: your bot had 500 ms a move, the match 50 ms\nreproduced: all 20 turns"), "{text}");
    // The silent bot's recording, rerun with the bot that answered: its
    // recorded timeouts are now answers, and the report says why.
    let silent_rec = dir().join("rerun-silent.json");
    let out = koth(&[
        "replay",
        "rerun",
        short.to_str().unwrap(),
        "--bot",
        silent.to_str().unwrap(),
        "--seat",
        "1",
        "--replay",
        silent_rec.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let out =
        koth(&["replay", "rerun", silent_rec.to_str().unwrap(), "--bot", &repo("bots/target/still.c"), "--seat", "1", "--time-scale", "3"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("diverged at turn 1: your bot now answers \"3\"; the recording has no answer in time\n(it timed out there in the match, and had 3 times the time now)"),
        "{text}"
    );
    // Scales out of reason are refused, saying what is accepted.
    for bad in ["0", "-1", "1000", "fast", "NaN"] {
        let arg = format!("--time-scale={bad}");
        let out = koth(&["replay", "rerun", short.to_str().unwrap(), "--bot", slow.to_str().unwrap(), "--seat", "1", &arg]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("give a number from 0.1 to 100"), "{bad}: {err}");
    }

    // A recording that lies (its opponent leaves at turn 3, with a reason
    // the engine would not give): not reproduced, said where, no crash.
    let mut lying: serde_json::Value = serde_json::from_slice(&std::fs::read(&rec).unwrap()).unwrap();
    let answers = lying["turns"][2]["answers"].as_array_mut().unwrap();
    let theirs = answers.iter_mut().find(|a| a["seat"] == 1).unwrap();
    *theirs = serde_json::json!({"seat": 1, "gone": true, "why": "made up"});
    let lie = dir().join("rerun-lying.json");
    std::fs::write(&lie, serde_json::to_vec(&lying).unwrap()).unwrap();
    let out = koth(&["replay", "rerun", lie.to_str().unwrap(), "--bot", &repo("bots/target/still.c"), "--seat", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.starts_with("diverged at turn 3: your answer is the recorded one, but the turn's answers, judgements or events differ"),
        "{text}"
    );

    // Seats are checked and named.
    let out = koth(&["replay", "rerun", rec.to_str().unwrap(), "--bot", &repo("bots/target/still.c"), "--seat", "3"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--seat 3: this match has seats 1 to 2 (1 still.c, 2 drifter.py)"));
    let out = koth(&["replay", "rerun", rec.to_str().unwrap(), "--bot", &repo("bots/target/still.c")]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("say which seat is your bot's with --seat N"));

    // Snake: the recorded seat spoke first over TCP; its id line is replayed.
    let rec = dir().join("rerun-snake.json");
    let out = koth(&[
        "match",
        "--host",
        "--game",
        "snake",
        "--seed",
        "5",
        "--replay",
        rec.to_str().unwrap(),
        &repo("bots/snake/stdio_wall_hugger.c"),
        &repo("bots/snake/tcp_survivor.py"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = koth(&["replay", "rerun", rec.to_str().unwrap(), "--bot", &repo("bots/snake/stdio_wall_hugger.c"), "--seat", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("reproduced: all "), "{text}");
}

/// An external game from the command line: `koth match --game FOLDER`
/// plays it, `koth replay check` wants the folder and then re-runs its
/// referee over the replay; a game whose referee breaks its protocol ends
/// with exit 1 and says so.
#[test]
fn an_external_game_plays_and_checks_from_the_command_line() {
    if unsafe { libc::geteuid() } != 0 {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true and not root: these tests run as root (a user also needs a delegated cgroup, see tests/rootless.rs)"
        );
        eprintln!("SKIPPED (not root)");
        return;
    }
    let repo = env!("CARGO_MANIFEST_DIR");
    let game = format!("{repo}/external-games/rpsls");
    let file = dir().join("rpsls.json");
    let bots = [format!("{game}/bots/cycler.py"), format!("{game}/bots/counter.c")];
    let out = koth(&["match", "--game", &game, "--seed", "2", "--players", "3", "--replay", file.to_str().unwrap(), &bots[0], &bots[1]]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("rpsls (seed 2), 100 turns\n"), "{stdout}");
    let out = koth(&["replay", "check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rpsls, an external game: pass --game FOLDER"));
    let out = koth(&["replay", "check", file.to_str().unwrap(), "--game", &game]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("ok: rpsls seed 2, 100 turns, ended by the rules"), "{stdout}");
    // The wrong folder for the replay is named as such.
    let out = koth(&["replay", "check", file.to_str().unwrap(), "--game", &format!("{repo}/external-games/target-py")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds the game target-py, the replay is of rpsls"));
    // A referee that crashes on turn 2: exit 1, the reason, its stderr kept.
    let broken = dir().join("broken-game");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("referee.py"), "import sys, json\nfor i, line in enumerate(sys.stdin):\n    if i == 2:\n        print('dying', file=sys.stderr); sys.exit(4)\n    print(json.dumps({'turn': i, 'view': {'width': 1, 'height': 1, 'cells': '.'}, 'scores': [0, 0], 'requests': [{'seat': 0, 'text': 'x'}, {'seat': 1, 'text': 'x'}]}), flush=True)\n").unwrap();
    let manifest = r#"{"name": "broken", "seats": {"min": 2, "max": 2}, "protocol": "stdio",
        "time_policy": {"per_move": 50, "on_timeout": {"kind": "loses"}}, "max_turns": 10, "referee": {"main": "referee.py"}}"#;
    std::fs::write(broken.join("game.json"), manifest).unwrap();
    let logs = dir().join("broken-logs");
    let out = koth(&["match", "--game", broken.to_str().unwrap(), "--logs", logs.to_str().unwrap(), &bots[0], &bots[0]]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("the referee failed, so the match has no result: exited with code 4 before the game was over (judging turn 2)"),
        "{stdout}"
    );
    assert_eq!(std::fs::read_to_string(logs.join("referee.stderr")).unwrap(), "dying\n");
}

/// Requests and answers of several lines from the command line:
/// `koth match --game external-games/board-lines` sends a board of three
/// lines and reads answers of three lines or up to END (a bot answering
/// one line of three times out); `koth replay check` runs the referee
/// again over the replay and `koth replay rerun` puts the author's bot in
/// its seat, the other answering from the recording, turn for turn; and
/// `argv-shapes` starts a per-turn program with no argument, several, or
/// its state on stdin.
#[test]
fn games_of_multi_line_answers_and_argument_lists_play_check_and_rerun_from_the_command_line() {
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var("CI").is_err(), "CI=true and not root: these tests run as root");
        eprintln!("SKIPPED (not root)");
        return;
    }
    let repo = env!("CARGO_MANIFEST_DIR");
    let game = format!("{repo}/external-games/board-lines");
    let file = dir().join("board-lines.json");
    let (mirror, half) = (format!("{game}/bots/mirror.py"), format!("{repo}/runner/tests/bots/half_board.py"));
    let out = koth(&["match", "--game", &game, "--seed", "3", "--replay", file.to_str().unwrap(), &mirror, &half]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("board-lines (seed 3), 6 turns\n"), "{stdout}");
    let replay: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(replay["turns"][0]["answers"][0]["answer"], "..#\n.#.\n#..");
    assert_eq!(replay["turns"][0]["answers"][1]["timeout"], true);
    let out = koth(&["replay", "check", file.to_str().unwrap(), "--game", &game]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("ok: board-lines seed 3, 6 turns, ended by the rules"), "{stdout}");
    let out = koth(&["replay", "rerun", file.to_str().unwrap(), "--game", &game, "--bot", &mirror, "--seat", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("reproduced: all 6 turns, every answer, judgement and event as recorded"), "{text}");
    // A recorded seat that timed out on turn 1 and answered every turn
    // after (the mirror's answers, in seat 2): its turn-2 answer is the one
    // the clock took then, not the late answer owed to turn 1, and the
    // rerun reproduces it.
    let mut late: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    for t in late["turns"].as_array_mut().unwrap().iter_mut().skip(1) {
        for part in ["answers", "judgements", "times"] {
            let list = t[part].as_array_mut().unwrap();
            let mut second = list[0].clone();
            second["seat"] = 1.into();
            list.truncate(1);
            list.push(second);
        }
    }
    late["result"] = serde_json::json!([
        {"seat": 0, "score": 6.0, "rank": 1, "result": "win"},
        {"seat": 1, "score": 5.0, "rank": 2, "result": "loss"},
    ]);
    let late_file = dir().join("board-lines-late.json");
    std::fs::write(&late_file, late.to_string()).unwrap();
    let out = koth(&["replay", "check", late_file.to_str().unwrap(), "--game", &game]);
    assert_eq!(out.status.code(), Some(0), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let out = koth(&["replay", "rerun", late_file.to_str().unwrap(), "--game", &game, "--bot", &mirror, "--seat", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("reproduced: all 6 turns, every answer, judgement and event as recorded"), "{text}");

    let game = format!("{repo}/external-games/argv-shapes");
    let file = dir().join("argv-shapes.json");
    let strict = format!("{game}/bots/strict.py");
    let out = koth(&["match", "--game", &game, "--seed", "1", "--replay", file.to_str().unwrap(), &strict, &strict]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let replay: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let answers: Vec<&str> = replay["turns"].as_array().unwrap().iter().map(|t| t["answers"][1]["answer"].as_str().unwrap()).collect();
    assert_eq!(answers, ["hello", "12", "6", "7", "left\nright", "a\nb\nc"]);
    let out = koth(&["replay", "check", file.to_str().unwrap(), "--game", &game]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A bot file that is not there is the command's fault: said at once, by
/// name, with exit code 2, before any box is built (not the sandbox's 210).
#[test]
fn koth_match_with_a_missing_bot_says_so_before_any_box() {
    let missing = dir().join("no-such-bot.py");
    let _ = std::fs::remove_file(&missing);
    let here = repo("bots/target/drifter.py");
    let started = std::time::Instant::now();
    let out = koth(&["match", "--game", "target", &here, missing.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("no such bot: {}", missing.display())) && err.contains("koth starter"), "{err}");
    assert!(!err.contains("sandbox") && !err.contains(&here), "only the missing bot is named, nothing was built: {err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
}

/// A Slime bot that counts its matches in count.txt (one a match with
/// `--max-turns 4` and four seats), says the count on stderr, and plays
/// what depends on the data it started from: `tests/bots/slime_counter.py`.
const COUNTER: &str = include_str!("bots/slime_counter.py");

/// `koth match --data DIR`: a bot's folder carried from match to match
/// (it counts 1, 2, 3), each match's replay naming the snapshot the seat
/// started from; `koth replay rerun --data DIR` of the second match starts
/// from that snapshot and reproduces it, and without it says what to pass.
#[test]
fn koth_match_keeps_a_bots_data_and_a_rerun_starts_from_the_recorded_snapshot() {
    let counter = dir().join("counter.py");
    std::fs::write(&counter, COUNTER).unwrap();
    let data = dir().join("bot-data");
    let _ = std::fs::remove_dir_all(&data);
    let greedy = repo("bots/slime/greedy.py");
    let play = |n: u32| {
        let rec = dir().join(format!("data-match-{n}.json"));
        let out = koth(&[
            "match",
            "--host",
            "--game",
            "slime",
            "--players",
            "4",
            "--max-turns",
            "4",
            "--seed",
            "1",
            "--json",
            "--data",
            data.to_str().unwrap(),
            "--replay",
            rec.to_str().unwrap(),
            counter.to_str().unwrap(),
            counter.to_str().unwrap(),
            &greedy,
            &greedy,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let seat = &v["outcomes"][0];
        assert!(seat["stderr"].as_str().unwrap().contains(&format!("match {n}\n")), "match {n}: {}", seat["stderr"]);
        // Two seats of one version start from the same snapshot: the first
        // one's write-back wins, the second's is discarded, saying so.
        assert!(v["outcomes"][1]["stderr"].as_str().unwrap().contains(&format!("match {n}\n")));
        assert!(seat["data"]["written"].is_string(), "{seat}");
        let why = v["outcomes"][1]["data"]["kept_because"].as_str().unwrap_or_default().to_owned();
        assert!(why.contains("another seat of the same version"), "{why}");
        let replay = Replay::from_json(&std::fs::read(&rec).unwrap()).unwrap();
        let recorded = replay.seats[0].data.clone().unwrap();
        assert_eq!(recorded.started_from, seat["data"]["started_from"].as_str().unwrap());
        assert_eq!(recorded.written.as_deref(), seat["data"]["written"].as_str());
        (rec, recorded)
    };
    let (_, first) = play(1);
    let (second_rec, second) = play(2);
    let (_, third) = play(3);
    assert_eq!(Some(&second.started_from), first.written.as_ref());
    assert_eq!(Some(&third.started_from), second.written.as_ref());
    let snapshot = data.join("snapshots").join(format!("{}.tar", &second.started_from["sha256:".len()..]));
    assert!(snapshot.is_file(), "{} kept", snapshot.display());

    let rerun = |extra: &[&str]| {
        let mut args = vec!["replay", "rerun", second_rec.to_str().unwrap(), "--bot", counter.to_str().unwrap(), "--seat", "1"];
        args.extend_from_slice(extra);
        koth(&args)
    };
    // From the data folder, or the snapshot's own file: every turn as recorded.
    for from in [data.to_str().unwrap(), snapshot.to_str().unwrap()] {
        let out = rerun(&["--data", from]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.starts_with("reproduced: all 4 turns"), "{text}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(&second.started_from), "it says which snapshot");
    }
    // `koth replay check` agrees with the rules and names the snapshot.
    let out = koth(&["replay", "check", second_rec.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains(&format!("seat 1 counter.py: its folder started from the snapshot {}", second.started_from)), "{text}");
    // The match's data is still the third match's: a rerun writes nothing back.
    let head = std::fs::read_dir(data.join("bots")).unwrap().count();
    assert_eq!(head, 2, "one head per version: the counter and greedy");
    // Without it: what to pass.
    let out = rerun(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains(&second.started_from) && err.contains("--data"), "{err}");
    // Another snapshot (the first match's start, empty): refused, naming both.
    let wrong = dir().join("wrong.tar");
    std::fs::write(&wrong, vec![0u8; 1024]).unwrap();
    let out = rerun(&["--data", wrong.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("but seat 1's folder started from"), "{err}");
    // A game that keeps no data refuses --data.
    let out = koth(&["match", "--host", "--game", "target", "--data", data.to_str().unwrap(), &greedy, &greedy]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("target does not keep bot data") && err.contains("\"bot_data\": true"), "{err}");
}
