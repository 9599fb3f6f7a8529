//! Replays and frames as stored and served (scheduler/src/packed.rs,
//! scheduler/src/db/replays.rs), against a real PostgreSQL and the real
//! router with its compression layer: a client gets the same JSON whatever
//! it accepts; zstd clients get the stored bytes; frames are drawn once and
//! kept; replays stored before packing are served, and packed when first
//! drawn; a damaged row is a JSON error, not a crash; a replay carries the
//! stderr of the seats its downloader owns and nobody else's.

use std::io::Read;

use axum::http::StatusCode;
use koth_ladder::outcome::SeatOutcome;
use koth_scheduler::db::results::{record_match, MatchOutcome};
use koth_scheduler::db::store;
use koth_scheduler::packed::PackedReplay;
use serde_json::{json, Value};

mod in_process;
use in_process::{postgres, Api};

/// 300 turns of Target with both bots staying put.
fn target_replay() -> Value {
    json!({"game": "target", "seed": "5", "seats": [{"name": "a"}, {"name": "b"}], "cut_short": true,
           "turns": (1..=300).map(|t| json!({"turn": t, "engine_us": 150.25,
               "answers": [{"seat": 0, "answer": "2"}, {"seat": 1, "answer": "2"}],
               "times": [{"seat": 0, "wall_ms": 0.5, "cpu_ms": 0.25, "over_limit": false}]})).collect::<Vec<_>>()})
}

fn outcome(replay: &Value) -> MatchOutcome {
    MatchOutcome {
        engine: "test".into(),
        turns: 300,
        replay: PackedReplay::pack(&serde_json::from_value(replay.clone()).unwrap()),
        seats: (0..2)
            .map(|i| SeatOutcome {
                seat: i,
                score: 1.0,
                rank: 1,
                result: koth_games::MatchResult::Tie,
                status: koth_runner::BotStatus::Ok,
                stderr: String::new(),
                stderr_turns: Vec::new(),
                moves: 1,
                timeouts: 0,
                invalid_moves: 0,
            })
            .collect(),
    }
}

fn unzstd(b: &[u8]) -> Vec<u8> {
    zstd::stream::decode_all(b).unwrap()
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(b).read_to_end(&mut out).unwrap();
    out
}

fn json(b: &[u8]) -> Value {
    serde_json::from_slice(b).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&b[..b.len().min(200)])))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replays_are_served_the_same_whatever_the_client_accepts_and_frames_are_drawn_once() {
    let Some(pg) = postgres("replays") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let cfg = koth_ladder::format::LadderConfig::default_for(koth_games::GameKind::Target);
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &cfg).await.unwrap();
    let (host, _) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let mut bots = Vec::new();
    let mut conn = pool.acquire().await.unwrap();
    for name in ["a", "b"] {
        let bot = store::create_bot(&pool, ladder, host, name).await.unwrap();
        let (v, _) = store::submit_version(&pool, bot, "python", "bot.py", b"", name).await.unwrap();
        store::accept_compiled(&mut conn, v, b"", "sha256:x").await.unwrap();
        bots.push(bot);
    }
    let api = Api(koth_web::http::router(pool.clone()));
    let want = target_replay();
    let played = store::create_match(&mut conn, ladder, &bots, 5, false, 0).await.unwrap();
    record_match(&mut conn, played, &outcome(&want)).await.unwrap();
    let replay = format!("/api/matches/{played}/replay");

    // As it is stored: packed, a small fraction of its JSON.
    let (json_bytes, stored): (i32, i32) =
        sqlx::query_as("SELECT json_bytes, octet_length(replay_zst) FROM match_replays WHERE match_id = $1")
            .bind(played)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert!(stored * 20 < json_bytes, "{stored} bytes stored for {json_bytes} of JSON");

    // No Accept-Encoding: plain JSON. zstd: the stored bytes themselves.
    // gzip: the web layer's gzip. A refused coding (q=0) is not used.
    let (st, h, plain) = api.get_raw(&replay, &[]).await;
    assert_eq!((st, h.get("content-encoding")), (StatusCode::OK, None));
    let got = json(&plain);
    assert_eq!(got["turns"].as_array().map(Vec::len), Some(300));
    assert_eq!((got["seed"].as_str(), got["turns"][7]["times"][0]["wall_ms"].as_f64()), (Some("5"), Some(0.5)));
    let (_, h, z) = api.get_raw(&replay, &[("accept-encoding", "gzip, deflate, br, zstd")]).await;
    assert_eq!(h["content-encoding"], "zstd");
    assert_eq!(h["vary"], "accept-encoding, authorization");
    assert_eq!(z.len() as i32, stored, "the stored bytes, as they are");
    assert_eq!(json(&unzstd(&z)), got);
    let (_, h, g) = api.get_raw(&replay, &[("accept-encoding", "gzip")]).await;
    assert_eq!(h["content-encoding"], "gzip");
    assert_eq!(json(&gunzip(&g)), got);
    let (_, h, p) = api.get_raw(&replay, &[("accept-encoding", "zstd;q=0")]).await;
    assert_eq!((h.get("content-encoding"), json(&p)), (None, got.clone()));

    // Frames: drawn on the first view, kept with the replay, the same after.
    let frames = format!("/api/matches/{played}/frames");
    let kept = || async {
        sqlx::query_scalar::<_, Option<i32>>("SELECT octet_length(frames_gz) FROM match_replays WHERE match_id = $1")
            .bind(played)
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    assert_eq!(kept().await, None);
    let (st, h, first) = api.get_raw(&frames, &[("accept-encoding", "gzip")]).await;
    assert_eq!((st, &h["content-encoding"]), (StatusCode::OK, &"gzip".parse().unwrap()));
    let first = json(&gunzip(&first));
    assert_eq!(first["frames"].as_array().map(Vec::len), Some(301));
    assert!(kept().await.is_some(), "frames kept");
    let (_, h, again) = api.get_raw(&frames, &[]).await;
    assert_eq!((h.get("content-encoding"), json(&again)), (None, first.clone()));

    // A replay stored before packing (jsonb in matches.replay) is served as
    // it was; its first drawing packs it and moves it beside its frames.
    let old = store::create_match(&mut conn, ladder, &bots, 6, false, 0).await.unwrap();
    sqlx::query("UPDATE matches SET state = 'finished', replay = $2, finished_at = now() WHERE id = $1")
        .bind(old)
        .bind(&want)
        .execute(&pool)
        .await
        .unwrap();
    let old_replay = format!("/api/matches/{old}/replay");
    let (st, h, o) = api.get_raw(&old_replay, &[("accept-encoding", "zstd")]).await;
    assert_eq!((st, h.get("content-encoding")), (StatusCode::OK, None), "an old replay is not zstd");
    assert_eq!(json(&o)["turns"].as_array().map(Vec::len), Some(300));
    let (st, _, f) = api.get_raw(&format!("/api/matches/{old}/frames"), &[]).await;
    assert_eq!((st, json(&f)), (StatusCode::OK, first.clone()), "the same replay draws the same frames");
    let (jsonb, packed): (Option<Value>, i64) = sqlx::query_as(
        "SELECT m.replay, (SELECT count(*) FROM match_replays r WHERE r.match_id = m.id AND r.frames_gz IS NOT NULL) FROM matches m WHERE id = $1",
    )
    .bind(old)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((jsonb, packed), (None, 1), "moved and packed");
    let (_, h, z) = api.get_raw(&old_replay, &[("accept-encoding", "zstd")]).await;
    assert_eq!(h["content-encoding"], "zstd");
    // The same replay, now written by koth's own type (defaults filled in,
    // times at their resolution).
    let retyped = serde_json::to_value(koth_games::replay::Replay::from_json(&o).unwrap()).unwrap();
    assert!(json(&unzstd(&z)) == retyped, "the same replay, now packed");

    // A damaged row: a JSON error that says so, for the replay and frames.
    sqlx::query("UPDATE match_replays SET replay_zst = 'not zstd', frames_gz = NULL WHERE match_id = $1")
        .bind(played)
        .execute(&pool)
        .await
        .unwrap();
    for uri in [&replay, &frames] {
        let (st, _, e) = api.get_raw(uri, &[]).await;
        assert_eq!(st, StatusCode::INTERNAL_SERVER_ERROR, "{uri}");
        assert!(json(&e)["error"].as_str().unwrap().contains("stored replay is damaged"), "{uri}: {}", json(&e));
    }
    // Gzip frames that are not gzip, to a client that does not take gzip.
    sqlx::query("UPDATE match_replays SET frames_gz = 'junk' WHERE match_id = $1").bind(played).execute(&pool).await.unwrap();
    let (st, _, e) = api.get_raw(&frames, &[]).await;
    assert_eq!(st, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(json(&e)["error"].as_str().unwrap().contains("damaged"));

    // Unfinished and unknown matches.
    let queued = store::create_match(&mut conn, ladder, &bots, 7, false, 0).await.unwrap();
    assert_eq!(api.get_raw(&format!("/api/matches/{queued}/replay"), &[]).await.0, StatusCode::CONFLICT);
    assert_eq!(api.get_raw("/api/matches/987654/frames", &[]).await.0, StatusCode::NOT_FOUND);
}

/// A replay downloaded from the server carries, in its seats, the stderr
/// of the seats whose bots the caller owns, by turn (a host: every seat's),
/// and nobody else's: alice's download holds none of bob's, bob's none of
/// alice's, an anonymous one (or one with a token that no longer works)
/// none at all, served as stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downloaded_replay_carries_the_stderr_of_the_downloaders_seats_only() {
    let Some(pg) = postgres("replays_stderr") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let cfg = koth_ladder::format::LadderConfig::default_for(koth_games::GameKind::Target);
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &cfg).await.unwrap();
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let mut bots = Vec::new();
    let mut tokens = Vec::new();
    for name in ["alice", "bob"] {
        let (who, token) = koth_web::http::create_account(&pool, name, false).await.unwrap();
        let bot = store::create_bot(&pool, ladder, who, name).await.unwrap();
        let (v, _) = store::submit_version(&pool, bot, "python", "bot.py", b"", name).await.unwrap();
        store::accept_compiled(&mut conn, v, b"", "sha256:x").await.unwrap();
        bots.push(bot);
        tokens.push(token);
    }
    let api = Api(koth_web::http::router(pool.clone()));
    let mut played = outcome(&target_replay());
    // What each seat wrote, filed by turn as the engine files it.
    for (s, name) in played.seats.iter_mut().zip(["alice", "bob"]) {
        s.stderr = format!("{name} 1\n{name} 2\n\n[koth] turn 2: no answer within 50 ms\n");
        s.stderr_turns = vec![(1, name.len() + 3), (2, s.stderr.len())];
    }
    let m = store::create_match(&mut conn, ladder, &bots, 5, false, 0).await.unwrap();
    record_match(&mut conn, m, &played).await.unwrap();
    let uri = format!("/api/matches/{m}/replay");
    let download = |token: Option<String>, accept: &'static str| {
        let api = &api;
        let uri = uri.clone();
        async move {
            let auth = token.map(|t| format!("Bearer {t}"));
            let mut headers = vec![("accept-encoding", accept)];
            if let Some(a) = &auth {
                headers.push(("authorization", a.as_str()));
            }
            let (st, h, body) = api.get_raw(&uri, &headers).await;
            assert_eq!(st, StatusCode::OK);
            assert_eq!(h["vary"], "accept-encoding, authorization", "what it holds depends on who asks");
            let body = if h.get("content-encoding").is_some_and(|c| c == "zstd") { unzstd(&body) } else { body };
            koth_games::replay::Replay::from_json(&body).unwrap()
        }
    };
    let carried = |r: &koth_games::replay::Replay| r.seats.iter().map(|s| s.stderr.as_ref().map(|e| e.text())).collect::<Vec<_>>();
    let (a, b) = (played.seats[0].stderr.clone(), played.seats[1].stderr.clone());
    let cases = [
        ("anonymous", None, vec![None, None]),
        ("a token that does not work", Some("no-such-token".into()), vec![None, None]),
        ("alice", Some(tokens[0].clone()), vec![Some(a.clone()), None]),
        ("bob", Some(tokens[1].clone()), vec![None, Some(b.clone())]),
        ("the host", Some(host.clone()), vec![Some(a.clone()), Some(b.clone())]),
    ];
    for (who, token, want) in cases {
        for accept in ["", "zstd"] {
            let r = download(token.clone(), accept).await;
            assert_eq!(carried(&r), want, "{who}, accepting {accept:?}");
            assert_eq!(r.turns.len(), 300, "{who}: the turns as stored");
        }
    }
    // By turn, beside the moves: alice's turn 2 holds her line and koth's note.
    let r = download(Some(tokens[0].clone()), "").await;
    let hers = r.seats[0].stderr.as_ref().unwrap();
    assert_eq!((hers.of_turn(1).as_str(), hers.of_turn(2).as_str()), ("alice 1\n", "alice 2\n\n[koth] turn 2: no answer within 50 ms\n"));
    assert_eq!((hers.bytes, hers.cut), (None, false));
    // Anonymous zstd clients still get the stored bytes as they are.
    let (_, h, _) = api.get_raw(&uri, &[("accept-encoding", "zstd")]).await;
    assert_eq!(h["content-encoding"], "zstd");
}
