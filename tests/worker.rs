//! A real runner (an in-process worker, real sandboxes, the host's Python)
//! against a real PostgreSQL.
//!
//! * A new version's validation game: a bot that plays passes and becomes
//!   current; versions that crash on turn 5, never answer, or answer only
//!   nonsense are refused with the reason and their stderr, and the
//!   previous version keeps playing; a version whose validation game is
//!   cancelled with its bot is refused and says so.
//! * A running match shows its progress: its page's JSON says it is being
//!   played and how many turns are done, growing while it runs; its live
//!   frames and turns, read as a page follows them, are exactly the first
//!   frames and turns of its replay once it ends.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use koth_ladder::format::LadderConfig;
use koth_runner::bot::Builder;
use koth_sandbox::SandboxConfig;
use koth_scheduler::db::store;
use koth_scheduler::job::CompileOutcome;
use koth_scheduler::worker::{self, WorkerConfig};
use serde_json::{json, Value};

mod in_process;
use in_process::{postgres, Api};

const PLAYS: &str = "import sys\nfor line in sys.stdin:\n    print(2, flush=True)\n";
const CRASHES_ON_TURN_5: &str = concat!(
    "import sys\n",
    "for turn, line in enumerate(sys.stdin, 1):\n",
    "    if turn == 5:\n",
    "        print('about to divide by zero on turn', turn, file=sys.stderr, flush=True)\n",
    "        1 / 0\n",
    "    print(2, flush=True)\n",
);
const NEVER_ANSWERS: &str = "import sys\nfor line in sys.stdin:\n    pass\n";
const SLOW: &str = "import sys, time\nfor line in sys.stdin:\n    time.sleep(0.01)\n    print(2, flush=True)\n";
const ANSWERS_NONSENSE: &str = "import sys\nfor line in sys.stdin:\n    print('north', flush=True)\n";

fn sandbox() -> SandboxConfig {
    koth_testkit::bot_sandbox("validation", 60000, 256 << 20, 100)
}

/// Submit `source` as a new version of `name` and wait until it is no
/// longer pending or validating; its version log.
async fn submit(api: &Api, token: &str, ladder: i64, name: &str, source: &str) -> Value {
    api.submit_and_settle(token, ladder, name, source).await.1
}

async fn current_version(api: &Api, bot: i64) -> Option<i64> {
    api.call("GET", &format!("/api/bots/{bot}"), None, Vec::new()).await.1["current_version"].as_i64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_match_shows_its_progress() {
    let Some(pg) = postgres("progress") else { return };
    if koth_sandbox::Sandbox::create(sandbox()).is_err() {
        assert!(std::env::var("CI").is_err(), "CI=true and the sandbox cannot run");
        return;
    }
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 6).await.unwrap();
    // No validation games here: the bots go to the ladder as they compile.
    let settings = LadderConfig::parse("rated", &json!({"seats": 2, "max_turns": 300, "skip_validation": true})).unwrap();
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &settings).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (author, token) = koth_web::http::create_account(&pool, "author", false).await.unwrap();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let cfg = WorkerConfig::new("progress-runner".into(), Builder::host(sandbox()), &sandbox(), 256 << 20);
    let runner = tokio::spawn(worker::run(pool.clone(), cfg, stopped));
    let mut bots = Vec::new();
    for name in ["a", "b"] {
        let v = submit(&api, &token, ladder, name, SLOW).await;
        assert_eq!((v["status"].as_str(), &v["validation_match"]), (Some("ready"), &Value::Null), "{v}");
        let (_, mine) = api.call("GET", "/api/me/bots", Some(&token), Vec::new()).await;
        bots.push(mine.as_array().unwrap().iter().find(|b| b["name"] == name).unwrap()["id"].as_i64().unwrap());
    }
    let m = store::create_challenge(&pool, ladder, &bots, 5, author, None).await.unwrap();
    // 300 turns of 10 ms a move: seconds of play, watched as a page does:
    // its progress, and its frames and turns as they are written.
    let mut seen: Vec<i64> = Vec::new();
    let (mut live_frames, mut live_turns): (Vec<Value>, Vec<Value>) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(60);
    let last = loop {
        let (_, info) = api.call("GET", &format!("/api/matches/{m}"), None, Vec::new()).await;
        let (status, live) = api.call("GET", &format!("/api/matches/{m}/live?from={}", live_frames.len()), None, Vec::new()).await;
        assert_eq!(status, StatusCode::OK, "{live}");
        if info["state"] != "queued" {
            break info;
        }
        if let Some(t) = info["progress"].as_i64() {
            assert_eq!(info["running"], true, "{info}");
            if seen.last() != Some(&t) {
                seen.push(t);
            }
        }
        if live["running"] == true {
            let frames = live["frames"]["frames"].as_array().unwrap();
            assert!(!frames.is_empty() || live["turns_played"].as_u64().unwrap() + 1 == live_frames.len() as u64, "{live}");
            if live_frames.is_empty() {
                assert!(frames[0]["cells"].is_string(), "the first frame has every cell: {live}");
            }
            live_frames.extend(frames.iter().cloned());
            live_turns.extend(live["turns"].as_array().unwrap().iter().cloned());
            assert_eq!(live_turns.len() + 1, live_frames.len(), "a frame before the first turn, then one per turn");
            // A reader asking past the end gets nothing, not an error.
            let (status, ahead) = api.call("GET", &format!("/api/matches/{m}/live?from=99999999"), None, Vec::new()).await;
            assert_eq!(status, StatusCode::OK, "{ahead}");
            if ahead["running"] == true {
                assert_eq!(
                    (ahead["frames"]["frames"].as_array().map(Vec::len), ahead["turns"].as_array().map(Vec::len)),
                    (Some(0), Some(0)),
                    "{ahead}"
                );
            }
        }
        assert!(Instant::now() < deadline, "match {m} still queued after 60 s: {info}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_eq!((last["state"].as_str(), last["turns"].as_i64(), &last["progress"]), (Some("finished"), Some(300), &Value::Null), "{last}");
    for seat in last["seats"].as_array().unwrap() {
        assert_eq!(seat["status"]["kind"], "ok", "both bots played the whole match: {last}");
    }
    assert!(seen.len() >= 2, "the progress grew while it was watched: {seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]) && seen.iter().all(|&t| (1..=300).contains(&t)), "{seen:?}");
    // What was seen live is what the replay shows.
    assert!(live_turns.len() >= 2, "turns were drawn while the match ran: {}", live_turns.len());
    let (_, frames) = api.call("GET", &format!("/api/matches/{m}/frames"), None, Vec::new()).await;
    let (_, replay) = api.call("GET", &format!("/api/matches/{m}/replay"), None, Vec::new()).await;
    assert_eq!(&frames["frames"].as_array().unwrap()[..live_frames.len()], live_frames.as_slice());
    assert_eq!(&replay["turns"].as_array().unwrap()[..live_turns.len()], live_turns.as_slice());
    // Ended: nothing live, and the page reads the replay.
    let (_, ended) = api.call("GET", &format!("/api/matches/{m}/live"), None, Vec::new()).await;
    assert_eq!((&ended["running"], &ended["frames"]), (&json!(false), &Value::Null), "{ended}");
    let (status, bad) = api.call("GET", &format!("/api/matches/{m}/live?from=-1"), None, Vec::new()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    assert!(bad["error"].is_string(), "{bad}");
    stop.send(true).unwrap();
    runner.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_plays_its_validation_game_before_its_ladder() {
    let Some(pg) = postgres("validation") else { return };
    if let Err(e) = koth_sandbox::Sandbox::create(sandbox()) {
        assert!(std::env::var("CI").is_err(), "CI=true and the sandbox cannot run: {e}");
        eprintln!("SKIPPED (not in CI): {e}");
        return;
    }
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 6).await.unwrap();
    // Target (50 ms a move, no freezing) with a short turn limit: the
    // validation game is 40 turns, so a silent bot costs 2 s.
    let settings = LadderConfig::parse("rated", &json!({"seats": 2, "max_turns": 40})).unwrap();
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &settings).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (_, token) = koth_web::http::create_account(&pool, "author", false).await.unwrap();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let cfg = WorkerConfig::new("validation-runner".into(), Builder::host(sandbox()), &sandbox(), 256 << 20);
    let runner = tokio::spawn(worker::run(pool.clone(), cfg, stopped));

    // A bot that plays: validated, then current.
    let v1 = submit(&api, &token, ladder, "mine", PLAYS).await;
    assert_eq!(v1["status"], "ready", "{v1}");
    let validation = v1["validation"].as_str().unwrap();
    assert!(validation.starts_with("passed its validation game: 2 copies played 40 turns, 80 answers"), "{validation}");
    let game = v1["validation_match"].as_i64().unwrap();
    let (_, m) = api.call("GET", &format!("/api/matches/{game}"), None, Vec::new()).await;
    assert_eq!(
        (m["validates"].as_i64(), m["rated"].as_bool(), m["state"].as_str()),
        (v1["version"].as_i64(), Some(false), Some("finished"))
    );
    assert_eq!(m["seats"][0]["bot"], m["seats"][1]["bot"], "every seat is a copy of the version: {m}");
    assert!(m["reproduce"].as_str().unwrap().contains("--max-turns 40"), "{m}");
    let bot = m["seats"][0]["bot"].as_i64().unwrap();
    assert_eq!(current_version(&api, bot).await, v1["version"].as_i64());
    // Not the ladder's: its pages and the bot's match list do not show it.
    let (_, listed) = api.call("GET", &format!("/api/ladders/{ladder}/matches"), None, Vec::new()).await;
    assert!(listed.as_array().unwrap().iter().all(|x| x["match"] != game), "{listed}");
    let (_, mine) = api.call("GET", &format!("/api/bots/{bot}/matches"), None, Vec::new()).await;
    assert!(mine.as_array().unwrap().iter().all(|x| x["match"] != game), "{mine}");

    // Versions that fail are refused, say why with their stderr, and v1 plays on.
    let cases = [
        (CRASHES_ON_TURN_5, &["crashed on turn 5", "ZeroDivisionError", "about to divide by zero on turn 5"][..]),
        (NEVER_ANSWERS, &["never answered within the time per move (40 timeouts"][..]),
        (ANSWERS_NONSENSE, &["answered 40 times and every answer was invalid", "\"north\""][..]),
    ];
    for (source, words) in cases {
        let v = submit(&api, &token, ladder, "mine", source).await;
        assert_eq!(v["status"], "refused", "{v}");
        let log = v["validation"].as_str().unwrap();
        assert!(log.contains("refused by its validation game") && log.contains("previous version"), "{log}");
        for w in words {
            assert!(log.contains(w), "{log:?} lacks {w:?}");
        }
        assert_eq!(current_version(&api, bot).await, v1["version"].as_i64(), "the previous version keeps playing");
        // Only its owner reads the log: it holds the bot's stderr.
        let (st, _) = api.call("GET", &format!("/api/versions/{}/log", v["version"]), None, Vec::new()).await;
        assert_eq!(st, StatusCode::UNAUTHORIZED);
    }
    stop.send(true).unwrap();
    runner.await.unwrap();

    // A version whose validation game is cancelled (its bot is withdrawn
    // before a runner took it) is refused, and says so.
    let (st, made) = api.call("POST", &format!("/api/ladders/{ladder}/bots/other?file=bot.py"), Some(&token), PLAYS).await;
    assert_eq!(st, StatusCode::CREATED, "{made}");
    let version = made["version"].as_i64().unwrap();
    let mut tx = pool.begin().await.unwrap();
    sqlx::query("UPDATE jobs SET state = 'completed' WHERE kind = 'compile' AND state = 'available'").execute(&mut *tx).await.unwrap();
    store::record_compile(&mut tx, version, &CompileOutcome::Compiled { artifact: Vec::new(), image: "host".into() }, "").await.unwrap();
    tx.commit().await.unwrap();
    let (_, log) = api.call("GET", &format!("/api/versions/{version}/log"), Some(&token), Vec::new()).await;
    assert_eq!(log["status"], "validating", "{log}");
    let (st, _) = api.call("POST", &format!("/api/bots/{}/delete", made["bot"]), Some(&token), Vec::new()).await;
    assert_eq!(st, StatusCode::OK);
    let (_, log) = api.call("GET", &format!("/api/versions/{version}/log"), Some(&token), Vec::new()).await;
    assert_eq!(log["status"], "refused", "{log}");
    assert!(log["validation"].as_str().unwrap().contains("its validation game was not played (cancelled: a bot was withdrawn"), "{log}");
}
