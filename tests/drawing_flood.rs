//! A flood of replay drawing while a match's bot thinks 40 % of its limit
//! (issue 33). Anyone may send a replay to `POST /api/replays/frames` and
//! have it drawn; six such callers, sending the longest replay there is (a
//! 32,769-turn Flit match, about 11 MiB), once kept both drawing slots and
//! both cores busy, the cores the runners' bots are timed on.
//!
//! Here six callers keep sending it while a bot that burns 20 ms of its own
//! CPU a move (its limit is 50 ms) plays 150 moves of Invisible target on
//! this machine. Drawing runs one sent replay at a time, on a thread at nice
//! 19, and refuses the others at once (429) before reading them. Asserted:
//! the bot is charged no timeout; the flood was really there (callers were
//! refused while the match played) and really drew (a drawing completes).
//! A match the machine could not time (`host_overloaded`, no bot charged)
//! is played again, as the service would, at most three times.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use koth_games::replay::EndedBy;
use koth_games::GameKind;
use koth_runner::engine::{play, MatchOptions};
use koth_sandbox::SandboxConfig;
use tower::ServiceExt;

fn sandbox() -> SandboxConfig {
    koth_testkit::bot_sandbox("drawing-flood", 58000, 512 << 20, 100)
}

fn bot(path: &str, args: &[&str]) -> koth_runner::BotSpec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let mut b = koth_runner::bot::prepare(&path, &sandbox()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    b.args.extend(args.iter().map(|a| a.to_string()));
    b
}

#[test]
fn a_drawing_flood_costs_a_thinking_bot_no_move() {
    if !koth_testkit::sandbox_works(&sandbox()) {
        return;
    }
    // The longest replay: Flit to its turn limit, four wanderers.
    let wanderer = bot("bots/flit/wanderer.c", &[]);
    let long = play(&MatchOptions { sandbox: sandbox(), ..MatchOptions::new(GameKind::Flit, 11) }, vec![wanderer; 4]).unwrap();
    let replay = Arc::new(long.replay.json().unwrap());
    println!("the replay sent: {} turns, {} bytes", long.turns, replay.len());
    assert!(long.turns > 1_000, "a long replay ({} turns)", long.turns);

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // Drawing a sent replay reads no database.
    let pool = rt.block_on(async { sqlx::PgPool::connect_lazy("postgres://nobody@127.0.0.1:1/none") }).unwrap();
    let app = koth_web::http::router_with(pool, koth_web::http::ApiOptions::default());
    let (stop, drawn, refused) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let callers: Vec<_> = (0..6)
        .map(|_| {
            let (app, replay, stop, drawn, refused) = (app.clone(), replay.clone(), stop.clone(), drawn.clone(), refused.clone());
            rt.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let req = Request::post("/api/replays/frames")
                        .header("content-type", "application/json")
                        .body(Body::from(replay.as_ref().clone()))
                        .unwrap();
                    let resp = app.clone().oneshot(req).await.unwrap();
                    match resp.status() {
                        StatusCode::OK => drop(drawn.fetch_add(1, Ordering::Relaxed)),
                        StatusCode::TOO_MANY_REQUESTS => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        other => panic!("a sent replay was answered {other}"),
                    }
                }
            })
        })
        .collect();

    let target = MatchOptions { sandbox: sandbox(), max_turns: Some(150), ..MatchOptions::new(GameKind::Target, 3) };
    let (victim, still) = (bot("runner/tests/bots/adversary.c", &["victim", "target", "20"]), bot("bots/target/still.c", &[]));
    let report = koth_testkit::again_while_overloaded(
        || play(&target, vec![victim.clone(), still.clone()]).unwrap(),
        |r| match &r.ended_by {
            EndedBy::HostOverloaded { reason, .. } => Some(reason.clone()),
            _ => None,
        },
    );
    let refused_meanwhile = refused.load(Ordering::Relaxed);
    // A drawing completes (the slot's work is real), then the flood stops.
    let deadline = Instant::now() + Duration::from_secs(300);
    while drawn.load(Ordering::Relaxed) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    rt.block_on(async {
        for c in callers {
            c.await.unwrap();
        }
    });
    let victim = &report.outcomes[0];
    println!(
        "while {refused_meanwhile} sent replays were refused and {} drawn: the victim played {} moves, {} timeouts; ended by {:?}",
        drawn.load(Ordering::Relaxed),
        victim.moves,
        victim.timeouts,
        report.ended_by
    );
    assert!(refused_meanwhile > 0, "the flood was there while the match played");
    assert!(drawn.load(Ordering::Relaxed) > 0, "and it drew");
    assert_eq!(report.ended_by, EndedBy::TurnLimit { turns: 150 }, "the match was played to its end");
    assert_eq!(victim.timeouts, 0, "a bot within its limit was charged no timeout beside the drawing");
}
