//! The replay's JSON shape, pinned: a replay written by today's types must
//! equal the golden file byte for byte (a change to the shape is a change
//! to a stored and served contract: update the file on purpose with
//! `UPDATE_GOLDEN=1 cargo test -p koth-games --test replay_golden`), and
//! replays written by older engines must still read. The viewer's frames
//! of the same replay are pinned the same way (`golden/frames.json`).

use koth_games::replay::{self, Answer, EndedBy, MoveTime, Recorded, Replay, ReplaySeat, SeatData, SeatStderr, StderrTurn, Turn};
use koth_games::{GameKind, Reply};

/// Two turns of Target between two seats, through the real referee: an
/// answer, a timeout, an invalid answer and a bot that is gone.
fn two_turns() -> Replay {
    let game = GameKind::Target;
    let seed = 2313453884618432439; // does not fit a JavaScript number
    let mut referee = game.referee(2, seed).unwrap();
    let initial = referee.initial_state();
    let scripted: [[Recorded; 2]; 2] = [
        [Recorded::Answer { answer: "3".into() }, Recorded::Timeout { timeout: true }],
        [Recorded::Answer { answer: "x".into() }, Recorded::Gone { gone: true, why: Some("crashed on turn 2 (exit code 3)".into()) }],
    ];
    let mut turns = Vec::new();
    for (i, answers) in scripted.into_iter().enumerate() {
        let step = referee.step().unwrap();
        assert_eq!(step.requests.len(), 2);
        let replies: Vec<(usize, Reply)> = answers.iter().enumerate().map(|(s, a)| (s, a.reply())).collect();
        let (judgements, events) = referee.apply(replies);
        turns.push(Turn {
            turn: i as u32 + 1,
            engine_us: 250.0,
            answers: answers.into_iter().enumerate().map(|(seat, reply)| Answer { seat, reply }).collect(),
            times: vec![MoveTime {
                seat: 0,
                wall_ms: 1.25,
                cpu_ms: 0.5,
                over_limit: false,
                cpu_after_answer_us: Some(12.0),
                uncharged_ms: Some(3.5),
                bank_ms: None,
            }],
            judgements,
            events,
        });
    }
    Replay {
        game: game.into(),
        seed,
        engine: "koth-runner 0.1.0".into(),
        time_policy: Some(game.time_policy()),
        seats: vec![
            // A seat whose stderr the replay does not carry (a download by
            // someone else), and one whose stderr it does, with koth's notes.
            // It carries data between matches: the snapshot it started from
            // and the one its folder was packed into.
            ReplaySeat {
                name: "still.c".into(),
                id_line: None,
                argv: Vec::new(),
                status: None,
                stderr: None,
                data: Some(SeatData {
                    started_from: "sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef".into(),
                    written: Some("sha256:0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8".into()),
                    kept_because: None,
                }),
            },
            ReplaySeat {
                name: "crasher.py".into(),
                id_line: None,
                argv: Vec::new(),
                status: Some("crashed on turn 2 (exit code 3)".into()),
                stderr: Some(SeatStderr {
                    turns: vec![
                        StderrTurn { turn: Some(1), text: "thinking...\n\n[koth] turn 1: no answer within 50 ms\n".into() },
                        StderrTurn { turn: Some(2), text: "Traceback: boom\n\n[koth] turn 2: crashed on turn 2 (exit code 3)\n".into() },
                    ],
                    bytes: Some(28),
                    cut: false,
                }),
                data: None,
            },
        ],
        initial,
        turns,
        result: referee.standings(),
        cut_short: true,
        ended_by: EndedBy::TurnLimit { turns: 2 },
    }
}

#[test]
fn the_replay_shape_is_the_golden_file() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/replay.json");
    let written = serde_json::to_string_pretty(&two_turns()).unwrap() + "\n";
    let golden = koth_testkit::assert_golden(&path, &written, "the replay's JSON changed (if on purpose, say so in docs/replay.md)");
    // It reads back to the same replay, and it agrees with the rules.
    let back = Replay::from_json(golden.as_bytes()).unwrap();
    assert_eq!(back, two_turns());
    replay::check(&back).unwrap();
    // The seed is a string: JavaScript's numbers would round it.
    let v: serde_json::Value = serde_json::from_str(&golden).unwrap();
    assert_eq!(v["seed"], "2313453884618432439");
    // A seat's stderr sits in its seat, by turn: turn 2's text is found by
    // its turn number, beside turn 2's move. A seat without is without.
    assert_eq!(v["seats"][1]["stderr"]["turns"][1]["turn"], 2);
    assert_eq!(back.seats[1].stderr.as_ref().unwrap().of_turn(2), "Traceback: boom\n\n[koth] turn 2: crashed on turn 2 (exit code 3)\n");
    assert!(v["seats"][0].get("stderr").is_none());
}

/// A seat's log cut into turns, as the engine records it and the service
/// stores it: turn ends in the text's bytes, text after the last end
/// belonging to no turn, and ends that do not fit skipped.
#[test]
fn a_seat_stderr_is_cut_at_its_turn_ends() {
    let t = |turn: Option<u32>, text: &str| StderrTurn { turn, text: text.into() };
    let cases = vec![
        ("", vec![], vec![]),
        ("", vec![(1, 0)], vec![]),
        ("ab", vec![(1, 1), (3, 2)], vec![t(Some(1), "a"), t(Some(3), "b")]),
        // Turn 1 wrote nothing (its end is the start): no entry.
        ("abc", vec![(1, 0), (2, 2)], vec![t(Some(2), "ab"), t(None, "c")]),
        // An end past the text, one going back, one inside a character.
        ("aé", vec![(1, 9), (2, 1), (3, 0), (4, 2), (5, 3)], vec![t(Some(2), "a"), t(Some(5), "é")]),
        ("tail only", vec![], vec![t(None, "tail only")]),
    ];
    for (text, ends, want) in cases {
        let s = SeatStderr::from_ends(text, &ends, None, false);
        assert_eq!(s.turns, want, "{text:?} cut at {ends:?}");
        assert_eq!(s.text(), text, "nothing lost or doubled");
    }
}

/// The frames the viewer draws are a served and stored contract too: kept
/// beside the replay (gzip) once drawn, so a page must read frames of any
/// age, and new fields are additions a page may find missing.
#[test]
fn the_frames_shape_is_the_golden_file() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/frames.json");
    let written = serde_json::to_string_pretty(&replay::frames(&two_turns()).unwrap()).unwrap() + "\n";
    let golden = koth_testkit::assert_golden(&path, &written, "the frames' JSON changed (if on purpose, say so in docs/replay.md)");
    // The turns in words name the bots.
    let v: serde_json::Value = serde_json::from_str(&golden).unwrap();
    assert_eq!(v["frames"][1]["sentences"][0], "still.c headed right (now at 246) and crasher.py stayed at 195");
}

#[test]
fn replays_of_older_engines_still_read() {
    // A numeric seed, no ended_by, no times, a gone bot without a reason.
    let old = serde_json::json!({
        "game": "target", "seed": 5, "engine": "koth-runner 0.1.0",
        "time_policy": {"per_move": 50, "on_timeout": {"kind": "no_move", "freeze_after": null}},
        "seats": [{"name": "a", "id_line": null}, {"name": "b", "id_line": null}],
        "initial": {},
        "turns": [{"turn": 1, "engine_us": 10.0, "answers": [{"seat": 0, "answer": "2"}, {"seat": 1, "gone": true}],
                   "times": [{"seat": 0, "wall_ms": 1.0, "cpu_ms": 0.2, "over_limit": false}], "judgements": [], "events": []}],
        "result": [], "cut_short": true,
    });
    let r = Replay::from_value(&old).unwrap();
    // Without stderr: the seats carry none, and write none back.
    assert!(r.seats.iter().all(|s| s.stderr.is_none()));
    assert!(serde_json::to_value(&r).unwrap()["seats"][0].get("stderr").is_none());
    // A seat's stderr with only its turns (no bytes, no cut) reads too.
    let mut partial = old.clone();
    partial["seats"][1]["stderr"] = serde_json::json!({"turns": [{"turn": 1, "text": "hi\n"}, {"text": "bye\n"}]});
    let p = Replay::from_value(&partial).unwrap();
    assert_eq!(
        p.seats[1].stderr,
        Some(SeatStderr {
            turns: vec![StderrTurn { turn: Some(1), text: "hi\n".into() }, StderrTurn { turn: None, text: "bye\n".into() }],
            bytes: None,
            cut: false
        })
    );
    assert_eq!(Replay::from_value(&serde_json::to_value(&p).unwrap()).unwrap(), p, "round trip");
    assert_eq!(
        (r.seed, r.ended_by.clone(), r.turns[0].answers[1].reply.clone()),
        (5, EndedBy::Rules, Recorded::Gone { gone: true, why: None })
    );
    // A seed that is not a number is refused with what is wrong.
    let mut bad = old.clone();
    bad["seed"] = "twelve".into();
    assert!(Replay::from_value(&bad).unwrap_err().contains("seed \"twelve\" is not a 64-bit unsigned number"));
}

/// The engine writes replays as it plays (`ReplayWriter`): the document it
/// streams is the typed one, field for field, in as many bytes as
/// `serde_json::to_vec` writes, and it says what each turn and the
/// referee's events add.
#[test]
fn a_replay_streamed_turn_by_turn_is_the_typed_replay() {
    let r = two_turns();
    let mut w = replay::ReplayWriter::begin(Vec::new(), &r.game, r.seed, &r.engine, r.time_policy.as_ref(), &r.initial).unwrap();
    let head = w.written();
    let mut events = 0;
    for t in &r.turns {
        let p = w.prepare(t).unwrap();
        events += serde_json::to_vec(&t.events).unwrap().len() as u64;
        assert_eq!(p.event_bytes, serde_json::to_vec(&t.events).unwrap().len() as u64);
        w.commit(&p).unwrap();
    }
    // A turn prepared and discarded leaves nothing behind.
    let extra = Turn { turn: 3, ..r.turns[1].clone() };
    let p = w.prepare(&extra).unwrap();
    assert!(p.bytes > 0);
    w.discard();
    assert!(w.written() > head);
    assert_eq!(w.event_bytes(), events);
    let (bytes, len) = w.finish(&r.seats, &r.result, r.cut_short, &r.ended_by).unwrap();
    assert_eq!(len, bytes.len() as u64);
    assert_eq!(bytes.len(), serde_json::to_vec(&r).unwrap().len());
    assert_eq!(Replay::from_json(&bytes).unwrap(), r);
    // With no turn at all too.
    let w = replay::ReplayWriter::begin(Vec::new(), &r.game, r.seed, &r.engine, None, &r.initial).unwrap();
    let (bytes, _) = w.finish(&[], &[], false, &EndedBy::Rules).unwrap();
    assert!(Replay::from_json(&bytes).unwrap().turns.is_empty());
}

/// Every way a match ends, as the replay writes it: a new kind is a change
/// to a stored and served contract (readers, the match page, the CLI).
#[test]
fn every_end_is_written_as_the_docs_say() {
    // (the end, as written, whether the match has a result)
    let cases = [
        (EndedBy::Rules, r#"{"kind":"rules"}"#, true),
        (EndedBy::TurnLimit { turns: 5 }, r#"{"kind":"turn_limit","turns":5}"#, true),
        (EndedBy::WallClockCap { seconds: 2.5 }, r#"{"kind":"wall_clock_cap","seconds":2.5}"#, true),
        (EndedBy::RefereeFailed { reason: "it crashed".into() }, r#"{"kind":"referee_failed","reason":"it crashed"}"#, false),
        (EndedBy::HostOverloaded { turn: 3, reason: "stopped".into() }, r#"{"kind":"host_overloaded","turn":3,"reason":"stopped"}"#, false),
        (EndedBy::ReplayLimit { turn: 7, limit_bytes: 1024 }, r#"{"kind":"replay_limit","turn":7,"limit_bytes":1024}"#, true),
    ];
    for (ended, json, has_result) in cases {
        assert_eq!(serde_json::to_string(&ended).unwrap(), json);
        assert_eq!(serde_json::from_str::<EndedBy>(json).unwrap(), ended);
        assert_eq!(ended.has_result(), has_result, "{json}");
    }
}

/// A ladder's replay is stored without stderr and served with the stderr
/// of the seats its reader owns: [`replay::with_stderr`] adds those and
/// drops any other, and leaves everything else as it was.
#[test]
fn stderr_is_added_to_the_owned_seats_only() {
    let r = two_turns();
    let json = serde_json::to_vec(&r).unwrap();
    let mine = SeatStderr { turns: vec![StderrTurn { turn: Some(1), text: "mine\n".into() }], bytes: None, cut: false };
    let seats = |out: &[u8]| Replay::from_json(out).unwrap().seats.into_iter().map(|s| s.stderr).collect::<Vec<_>>();
    // Seat 0's added; seat 1's (which the golden replay carries) dropped.
    let out = replay::with_stderr(&json, &[(0, mine.clone())]).unwrap();
    assert_eq!(seats(&out), vec![Some(mine.clone()), None]);
    // Nobody's: none at all. Both: both.
    assert_eq!(seats(&replay::with_stderr(&json, &[]).unwrap()), vec![None, None]);
    let theirs = r.seats[1].stderr.clone().unwrap();
    assert_eq!(
        seats(&replay::with_stderr(&json, &[(0, mine.clone()), (1, theirs.clone())]).unwrap()),
        vec![Some(mine.clone()), Some(theirs)]
    );
    // The rest is the replay as it was.
    let back = Replay::from_json(&out).unwrap();
    assert_eq!((&back.turns, &back.result, back.seed, &back.initial), (&r.turns, &r.result, r.seed, &r.initial));
    replay::check(&back).unwrap();
    // What is wrong is said.
    type Case<'a> = (&'a [u8], &'a [(usize, SeatStderr)], &'a str);
    let cases: [Case; 3] = [
        (b"[1, 2]", &[], "not a koth replay"),
        (br#"{"game": "target"}"#, &[], "it has no seats"),
        (&json, &[(2, SeatStderr::default())], "the replay has no seat 2 (it has 2)"),
    ];
    for (input, add, says) in cases {
        let e = replay::with_stderr(input, add).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
}

/// The arguments a seat's long-lived bot was started with (an external
/// referee's `launch`) are recorded in its seat, absent when none (the
/// golden file has none), and `check` asks the referee for the same again:
/// Target's rules launch nobody with arguments, so a replay saying one was
/// is refused, naming the seat and both lists.
#[test]
fn a_seats_launch_arguments_are_recorded_and_checked() {
    let mut r = two_turns();
    r.seats[1].argv = vec!["p1".into(), "4040".into(), String::new()];
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["seats"][1]["argv"], serde_json::json!(["p1", "4040", ""]));
    assert!(v["seats"][0].get("argv").is_none(), "none: absent, as in replays from before");
    assert_eq!(Replay::from_value(&v).unwrap(), r, "round trip");
    let err = replay::check(&r).unwrap_err();
    assert_eq!(err, "seat 1's bot was started with other arguments: rules say [], replay says [\"p1\", \"4040\", \"\"]");
    r.seats[1].argv.clear();
    replay::check(&r).unwrap();
}
