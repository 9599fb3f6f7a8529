//! The HTTP API against a real PostgreSQL, with the real upload checks:
//! accounts and tokens, submissions, who may read what, bad input.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use koth_scheduler::db::store;
use koth_scheduler::packed::PackedReplay;
use serde_json::{json, Value};
use tower::ServiceExt;

mod in_process;
use in_process::{postgres, Api};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_submissions_and_who_may_read_what() {
    let Some(pg) = postgres("api") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let target = koth_ladder::format::LadderConfig::default_for(koth_games::GameKind::Target);
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &target).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (_, host_token) = koth_web::http::create_account(&pool, "host", true).await.unwrap();

    // Accounts.
    let (st, alice) = api.call("POST", "/api/users", None, br#"{"name": "alice"}"#.to_vec()).await;
    assert_eq!(st, StatusCode::CREATED, "{alice}");
    let alice = alice["token"].as_str().unwrap().to_owned();
    let (_, bob) = api.call("POST", "/api/users", None, br#"{"name": "bob"}"#.to_vec()).await;
    let bob = bob["token"].as_str().unwrap().to_owned();
    let (st, err) = api.call("POST", "/api/users", None, br#"{"name": "alice"}"#.to_vec()).await;
    assert_eq!(st, StatusCode::CONFLICT);
    assert!(err["error"].as_str().unwrap().contains("taken"));
    for bad in [&br#"{"name": "no spaces allowed"}"#[..], b"not json", br#"{"nom": "x"}"#] {
        let (st, err) = api.call("POST", "/api/users", None, bad.to_vec()).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
        assert!(err["error"].is_string());
    }

    // Submitting: needs a token; the upload is checked.
    let src = std::fs::read("bots/target/drifter.py").unwrap();
    let uri = format!("/api/ladders/{ladder}/bots/drift?file=bot.py");
    let (st, _) = api.call("POST", &uri, None, src.clone()).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let (st, _) = api.call("POST", &uri, Some("not-a-token"), src.clone()).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let (st, made) = api.call("POST", &uri, Some(&alice), src.clone()).await;
    assert_eq!(st, StatusCode::CREATED, "{made}");
    let bot = made["bot"].as_i64().unwrap();
    let version = made["version"].as_i64().unwrap();
    assert_eq!(made["language"], "python");
    // Bob cannot replace Alice's bot; a host can.
    let (st, err) = api.call("POST", &uri, Some(&bob), src.clone()).await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{err}");
    let (st, _) = api.call("POST", &uri, Some(&host_token), src.clone()).await;
    assert_eq!(st, StatusCode::ACCEPTED);
    // Bad uploads: unknown language, empty, hostile archive, unknown ladder, no file name.
    let cases: Vec<(String, Vec<u8>, StatusCode, &str)> = vec![
        (format!("/api/ladders/{ladder}/bots/x?file=bot.cobol"), b"DISPLAY 1.".to_vec(), StatusCode::UNPROCESSABLE_ENTITY, "extension"),
        (format!("/api/ladders/{ladder}/bots/x?file=bot.py"), Vec::new(), StatusCode::UNPROCESSABLE_ENTITY, "empty"),
        (format!("/api/ladders/{ladder}/bots/x?file=bot.zip"), b"PK\x03\x04garbage".to_vec(), StatusCode::UNPROCESSABLE_ENTITY, "zip"),
        ("/api/ladders/999/bots/x?file=bot.py".into(), src.clone(), StatusCode::NOT_FOUND, "ladder 999"),
        (format!("/api/ladders/{ladder}/bots/x"), src.clone(), StatusCode::BAD_REQUEST, "?file="),
        (format!("/api/ladders/{ladder}/bots/bad%20name?file=bot.py"), src.clone(), StatusCode::BAD_REQUEST, "name"),
    ];
    for (uri, body, want, says) in cases {
        let (st, err) = api.call("POST", &uri, Some(&bob), body).await;
        assert_eq!(st, want, "{uri}: {err}");
        assert!(err["error"].as_str().unwrap().contains(says), "{uri}: {err}");
    }
    // Oversized: over the request limit.
    let (st, _) = api.call("POST", &format!("/api/ladders/{ladder}/bots/big?file=bot.py"), Some(&bob), vec![b'#'; 41 << 20]).await;
    assert_eq!(st, StatusCode::PAYLOAD_TOO_LARGE);
    let bots: i64 = sqlx::query_scalar("SELECT count(*) FROM bots").fetch_one(&pool).await.unwrap();
    assert_eq!(bots, 1, "no refused upload left a bot behind");

    // Reading: the bot is public, its compile log is its owner's.
    let (st, b) = api.call("GET", &format!("/api/bots/{bot}"), None, Vec::new()).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!((b["name"].as_str(), b["owner"].as_str(), b["versions"].as_array().unwrap().len()), (Some("drift"), Some("alice"), 2));
    let log = format!("/api/versions/{version}/log");
    assert_eq!(api.call("GET", &log, None, Vec::new()).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(api.call("GET", &log, Some(&bob), Vec::new()).await.0, StatusCode::FORBIDDEN);
    assert_eq!(api.call("GET", &log, Some(&alice), Vec::new()).await.0, StatusCode::OK);
    assert_eq!(api.call("GET", &log, Some(&host_token), Vec::new()).await.0, StatusCode::OK);

    // A finished match: public outcome and replay, private stderr.
    let mut conn = pool.acquire().await.unwrap();
    store::accept_compiled(&mut conn, version, b"", "sha256:x").await.unwrap();
    let other = store::create_bot(&pool, ladder, 1, "other").await.unwrap();
    let (v2, _) = store::submit_version(&pool, other, "python", "bot.py", b"", "h").await.unwrap();
    store::accept_compiled(&mut conn, v2, b"", "sha256:x").await.unwrap();
    sqlx::query("UPDATE bots SET current_version = $1 WHERE id = $2").bind(version).bind(bot).execute(&pool).await.unwrap();
    let m = store::create_match(&mut conn, ladder, &[bot, other], 1, true, 0).await.unwrap();
    let outcome = koth_scheduler::db::results::MatchOutcome {
        engine: "test".into(),
        turns: 3,
        // Three turns of Target with both bots staying: a replay the viewer can draw.
        replay: PackedReplay::pack(
            &serde_json::from_value(json!({"game": "target", "seed": 5, "seats": [{}, {}], "cut_short": true,
                           "turns": vec![json!({"answers": [{"seat": 0, "answer": "2"}, {"seat": 1, "answer": "2"}]}); 3]}))
            .unwrap(),
        ),
        seats: (0..2)
            .map(|i| koth_ladder::outcome::SeatOutcome {
                seat: i,
                score: 1.0,
                rank: 1,
                result: koth_games::MatchResult::Tie,
                status: koth_runner::BotStatus::Ok,
                stderr: format!("secret of seat {i}"),
                stderr_turns: vec![(1, 7)],
                moves: 3,
                timeouts: 0,
                invalid_moves: 0,
            })
            .collect(),
    };
    koth_scheduler::db::results::record_match(&mut conn, m, &outcome).await.unwrap();
    let (st, info) = api.call("GET", &format!("/api/matches/{m}"), None, Vec::new()).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(info["seats"][0]["name"], "drift");
    assert!(!info.to_string().contains("secret"), "match info carries no stderr");
    assert_eq!(
        api.call("GET", &format!("/api/matches/{m}/replay"), None, Vec::new()).await.1["seed"],
        "5",
        "replays carry the seed as a string"
    );
    assert_eq!(info["seats"][1]["owner"], "host");
    assert_eq!((info["game"].as_str(), info["ladder_name"].as_str()), (Some("target"), Some("target")));
    // Frames: the replay played again through the rules, for anyone.
    let (st, f) = api.call("GET", &format!("/api/matches/{m}/frames"), None, Vec::new()).await;
    assert_eq!(st, StatusCode::OK, "{f}");
    assert_eq!((f["width"].as_u64(), f["frames"].as_array().map(Vec::len)), (Some(32), Some(4)), "{f}");
    assert_eq!(f["frames"][0]["cells"].as_str().map(str::len), Some(1024));
    assert!(f["legend"].as_array().unwrap().iter().any(|e| e["name"] == "wall"));
    let seat0 = format!("/api/matches/{m}/stderr/0");
    assert_eq!(api.call("GET", &seat0, Some(&bob), Vec::new()).await.0, StatusCode::FORBIDDEN);
    let (st, e) = api.call("GET", &seat0, Some(&alice), Vec::new()).await;
    assert_eq!((st, e["stderr"].as_str()), (StatusCode::OK, Some("secret of seat 0")));
    // And by turn, for the viewer: turn 1 wrote "secret ", the rest came after.
    assert_eq!(e["turns"], json!([{"turn": 1, "text": "secret "}, {"turn": null, "text": "of seat 0"}]));
    assert_eq!(api.call("GET", &format!("/api/matches/{m}/stderr/1"), Some(&alice), Vec::new()).await.0, StatusCode::FORBIDDEN);
    assert_eq!(api.call("GET", "/api/matches/424242", None, Vec::new()).await.0, StatusCode::NOT_FOUND);
    assert_eq!(api.call("GET", "/api/matches/424242/frames", None, Vec::new()).await.0, StatusCode::NOT_FOUND);

    // Head to head: the two bots tied once; the ladder's matches list both seats.
    let (_, h2h) = api.call("GET", &format!("/api/bots/{bot}/head-to-head"), None, Vec::new()).await;
    assert_eq!(h2h, json!([{"bot": other, "name": "other", "played": 1, "won": 0, "lost": 0, "tied": 1}]));
    let (_, lm) = api.call("GET", &format!("/api/ladders/{ladder}/matches"), None, Vec::new()).await;
    assert_eq!((lm[0]["match"].as_i64(), lm[0]["seats"][1]["name"].as_str()), (Some(m), Some("other")), "{lm}");
    assert_eq!(api.call("GET", "/api/ladders/999/matches", None, Vec::new()).await.0, StatusCode::NOT_FOUND);
    assert_eq!(api.call("GET", "/api/bots/999/head-to-head", None, Vec::new()).await.0, StatusCode::NOT_FOUND);

    // Drawn once, kept for the next viewers: the same frames again.
    assert_eq!(api.call("GET", &format!("/api/matches/{m}/frames"), None, Vec::new()).await.1, f);

    // An unfinished match has no frames yet.
    let queued = store::create_match(&mut conn, ladder, &[bot, other], 2, true, 0).await.unwrap();
    assert_eq!(api.call("GET", &format!("/api/matches/{queued}/frames"), None, Vec::new()).await.0, StatusCode::CONFLICT);

    // My bots, on every ladder: alice's one, bob none, nobody without a token.
    let (st, mine) = api.call("GET", "/api/me/bots", Some(&alice), Vec::new()).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(mine.as_array().map(Vec::len), Some(1), "{mine}");
    assert_eq!(
        (mine[0]["name"].as_str(), mine[0]["ladder_name"].as_str(), mine[0]["game"].as_str()),
        (Some("drift"), Some("target"), Some("target"))
    );
    // Version 1 plays; her second upload waits for its compile.
    let v = |k: &str| mine[0][k].clone();
    assert_eq!((v("current_version"), v("latest_version"), v("latest_status")), (json!(1), json!(2), json!("pending")), "{mine}");
    assert_eq!(api.call("GET", "/api/me/bots", Some(&bob), Vec::new()).await.1, json!([]));
    assert_eq!(api.call("GET", "/api/me/bots", None, Vec::new()).await.0, StatusCode::UNAUTHORIZED);

    // Who am I; what can be played, in what.
    assert_eq!(api.call("GET", "/api/me", None, Vec::new()).await.0, StatusCode::UNAUTHORIZED);
    let (_, me) = api.call("GET", "/api/me", Some(&alice), Vec::new()).await;
    assert_eq!((me["name"].as_str(), me["is_host"].as_bool()), (Some("alice"), Some(false)));
    assert_eq!(api.call("GET", "/api/me", Some("not-a-token"), Vec::new()).await.0, StatusCode::UNAUTHORIZED);
    let (_, games) = api.call("GET", "/api/games", None, Vec::new()).await;
    assert_eq!(games.as_array().map(Vec::len), Some(5));
    assert_eq!(games[4]["name"], "snake");
    assert_eq!(games[4]["time"]["per_move"], 200);
    let (_, langs) = api.call("GET", "/api/languages", None, Vec::new()).await;
    assert!(langs.as_array().unwrap().iter().any(|l| l["name"] == "python" && l["extensions"][0] == "py"), "{langs}");

    // Leaderboard, ladders, health, metrics, unknown paths.
    let (st, lb) = api.call("GET", &format!("/api/ladders/{ladder}/leaderboard"), None, Vec::new()).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(lb["rows"].as_array().unwrap().len(), 2, "{lb}");
    assert_eq!((lb["format"].as_str(), lb["columns"][0]["key"].as_str()), (Some("rated"), Some("score")), "{lb}");
    assert!(lb["rows"][0]["score"].is_number() && lb["rows"][0]["name"].is_string(), "{lb}");
    let (_, ls) = api.call("GET", "/api/ladders", None, Vec::new()).await;
    assert_eq!(ls[0]["game"], "target");
    assert_eq!(api.call("GET", "/health", None, Vec::new()).await.1["status"], "ok");
    let (st, text) = api.call("GET", "/metrics", None, Vec::new()).await;
    assert_eq!(st, StatusCode::OK);
    assert!(text.as_str().unwrap().contains("koth_matches{state=\"finished\"} 1"), "{text}");
    // The service's own resident memory: this test process, a few MiB at least.
    let rss: u64 =
        text.as_str().unwrap().lines().find_map(|l| l.strip_prefix("koth_resident_bytes ")).expect("koth_resident_bytes").parse().unwrap();
    assert!(rss > 1 << 20, "{rss}");
    let (st, err) = api.call("GET", "/api/nothing", None, Vec::new()).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(err["error"].is_string());
    // A finished match whose replay does not fit the rules: its frames are
    // refused with the reason (after the metrics above, which count matches).
    let broken = store::create_match(&mut conn, ladder, &[bot, other], 3, true, 0).await.unwrap();
    let bad_replay = koth_scheduler::db::results::MatchOutcome {
        replay: PackedReplay::pack(&serde_json::from_value(json!({"game": "snake", "seed": 1, "seats": [{}], "turns": []})).unwrap()),
        ..outcome.clone()
    };
    koth_scheduler::db::results::record_match(&mut conn, broken, &bad_replay).await.unwrap();
    let (st, err) = api.call("GET", &format!("/api/matches/{broken}/frames"), None, Vec::new()).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(err["error"].as_str().unwrap().contains("exactly 2 bots"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_endpoints_challenges_history_sources_and_the_openapi_document() {
    let Some(pg) = postgres("api-host") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let (_, alice) = koth_web::http::create_account(&pool, "alice", false).await.unwrap();
    let (_, bob) = koth_web::http::create_account(&pool, "bob", false).await.unwrap();

    // Ladders: hosts only; defaults from the game's seed; bad input explained.
    let body = br#"{"name": "snake", "game": "snake"}"#.to_vec();
    assert_eq!(api.call("POST", "/api/ladders", Some(&alice), body.clone()).await.0, StatusCode::FORBIDDEN);
    assert_eq!(api.call("POST", "/api/ladders", None, body.clone()).await.0, StatusCode::UNAUTHORIZED);
    let (st, made) = api.call("POST", "/api/ladders", Some(&host), body.clone()).await;
    assert_eq!((st, made["format"].as_str()), (StatusCode::CREATED, Some("round_robin")), "{made}");
    let ladder = made["id"].as_i64().unwrap();
    assert_eq!(api.call("POST", "/api/ladders", Some(&host), body).await.0, StatusCode::CONFLICT);
    // Any format on any game its seats allow, with the format's own settings.
    let body = br#"{"name": "snake-swiss", "game": "snake", "format": "swiss", "settings": {"rounds": 3, "max_turns": 100}}"#;
    let (st, made) = api.call("POST", "/api/ladders", Some(&host), body.to_vec()).await;
    assert_eq!((st, made["format"].as_str()), (StatusCode::CREATED, Some("swiss")), "{made}");
    let (_, lb) = api.call("GET", &format!("/api/ladders/{}/leaderboard", made["id"]), None, Vec::new()).await;
    assert_eq!(
        (lb["format"].as_str(), lb["columns"][1]["label"].as_str(), lb["rows"].as_array().map(Vec::len)),
        (Some("swiss"), Some("Buchholz"), Some(0)),
        "{lb}"
    );
    for (bad, says) in [
        (&br#"{"name": "x", "game": "chess"}"#[..], "unknown game"),
        (br#"{"name": "x", "game": "snake", "format": "knockout"}"#, "unknown format"),
        (br#"{"name": "x", "game": "snake", "format": "rated", "settings": {"rounds": 2}}"#, "it takes"),
        (br#"{"name": "x", "game": "flit", "format": "neighbours"}"#, "two bots"),
        (br#"{"name": "x", "game": "snake", "settings": {"seats": 3}}"#, "2 to 2 bots"),
        (br#"{"name": "x", "game": "snake", "settings": {"nonsense": 1}}"#, "settings"),
        (br#"{"game": "snake"}"#, "expected"),
    ] {
        let (st, err) = api.call("POST", "/api/ladders", Some(&host), bad.to_vec()).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
        assert!(err["error"].as_str().unwrap().contains(says), "{err}");
    }
    assert_eq!(api.call("POST", &format!("/api/ladders/{ladder}/pause"), Some(&alice), vec![]).await.0, StatusCode::FORBIDDEN);
    assert_eq!(api.call("POST", &format!("/api/ladders/{ladder}/pause"), Some(&host), vec![]).await.1["paused"], true);
    assert_eq!(api.call("POST", &format!("/api/ladders/{ladder}/resume"), Some(&host), vec![]).await.1["paused"], false);
    assert_eq!(api.call("POST", "/api/ladders/999/pause", Some(&host), vec![]).await.0, StatusCode::NOT_FOUND);

    // Two bots, compiled (as a runner would record it).
    let src = std::fs::read("bots/snake/tcp_survivor.py").unwrap();
    let mut bots = Vec::new();
    let mut versions = Vec::new();
    for (token, name) in [(&alice, "a"), (&bob, "b")] {
        let (_, r) = api.call("POST", &format!("/api/ladders/{ladder}/bots/{name}?file=bot.py"), Some(token), src.clone()).await;
        let v = r["version"].as_i64().unwrap();
        let mut conn = pool.acquire().await.unwrap();
        store::accept_compiled(&mut conn, v, b"", "sha256:x").await.unwrap();
        bots.push(r["bot"].as_i64().unwrap());
        versions.push(v);
    }
    // Sources: the owner's only, as the checked tar.
    let (st, _) = api.call("GET", &format!("/api/versions/{}/source", versions[0]), Some(&bob), vec![]).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, tar) = api.call("GET", &format!("/api/versions/{}/source", versions[0]), Some(&alice), vec![]).await;
    assert_eq!(st, StatusCode::OK);
    assert!(tar.as_str().unwrap().contains("bot.py"), "a tar holding bot.py");

    // Challenges: one of your bots; seat count checked; unrated; ahead of ladder matches.
    let ch = |bots: Vec<i64>| json!({"ladder": ladder, "bots": bots}).to_string().into_bytes();
    let (_, c) = koth_web::http::create_account(&pool, "carol", false).await.unwrap();
    assert_eq!(api.call("POST", "/api/challenges", Some(&c), ch(bots.clone())).await.0, StatusCode::FORBIDDEN);
    assert_eq!(api.call("POST", "/api/challenges", Some(&alice), ch(vec![bots[0]])).await.0, StatusCode::BAD_REQUEST);
    let (st, m) = api.call("POST", "/api/challenges", Some(&alice), ch(bots.clone())).await;
    assert_eq!(st, StatusCode::CREATED, "{m}");
    assert_eq!(m["rated"], false);
    let (_, bm) = api.call("GET", &format!("/api/bots/{}/matches", bots[1]), None, vec![]).await;
    assert_eq!(bm[0]["match"], m["match"]);
    assert_eq!(bm[0]["kind"], "challenge", "{bm}");

    // Disable and enable (hosts, with a reason the owner sees); delete (owner).
    let dis = format!("/api/bots/{}/disable", bots[1]);
    assert_eq!(api.call("POST", &dis, Some(&bob), br#"{"reason": "x"}"#.to_vec()).await.0, StatusCode::FORBIDDEN);
    assert_eq!(api.call("POST", &dis, Some(&host), br#"{"reason": " "}"#.to_vec()).await.0, StatusCode::BAD_REQUEST);
    let (_, d) = api.call("POST", &dis, Some(&host), br#"{"reason": "reads other bots' files"}"#.to_vec()).await;
    assert_eq!(d["disabled_reason"], "disabled by a host: reads other bots' files");
    assert_eq!(api.call("GET", &format!("/api/bots/{}", bots[1]), None, vec![]).await.1["disabled_reason"], d["disabled_reason"]);
    assert_eq!(api.call("POST", &format!("/api/bots/{}/enable", bots[1]), Some(&host), vec![]).await.1["disabled_reason"], Value::Null);
    assert_eq!(api.call("POST", &format!("/api/bots/{}/delete", bots[0]), Some(&bob), vec![]).await.0, StatusCode::FORBIDDEN);
    assert_eq!(
        api.call("POST", &format!("/api/bots/{}/delete", bots[0]), Some(&alice), vec![]).await.1["disabled_reason"],
        "deleted by its owner"
    );

    // Rating history: one entry per rated match.
    let (st, h) = api.call("GET", &format!("/api/bots/{}/ratings", bots[0]), None, vec![]).await;
    assert_eq!((st, h.as_array().map(Vec::len)), (StatusCode::OK, Some(0)));

    // The OpenAPI document is built from the routes themselves: every route
    // it lists is served, with its request and response schemas.
    let (st, doc) = api.call("GET", "/api/openapi.json", None, vec![]).await;
    assert_eq!(st, StatusCode::OK);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."), "{}", doc["openapi"]);
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() >= 25, "{} paths", paths.len());
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            assert!(op["responses"]["4XX"]["content"]["application/json"].is_object(), "{method} {path}: errors undocumented");
            let concrete = path.replace("{id}", "1").replace("{name}", "x").replace("{seat}", "0");
            let (_, body) = api.call(&method.to_uppercase(), &concrete, None, vec![]).await;
            assert!(!body.to_string().contains("no such endpoint"), "{method} {path} is in the document but not served");
        }
    }
    assert!(doc["paths"]["/api/ladders"]["post"]["requestBody"].is_object(), "request bodies are described");
    assert!(doc["components"]["schemas"]["Leaderboard"].is_object() && doc["components"]["schemas"]["NewLadder"].is_object());
    // The framework's own rejections are JSON too.
    let (st, err) = api.call("DELETE", "/api/ladders", Some(&host), vec![]).await;
    assert_eq!(st, StatusCode::METHOD_NOT_ALLOWED);
    assert!(err["error"].is_string(), "{err}");
    let (st, err) = api.call("GET", "/api/bots/99999999999999999999", None, vec![]).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(err["error"].as_str().unwrap().contains("whole numbers"), "{err}");
    // A NUL in a text is the request's fault (400), not a database outage.
    let dis = format!("/api/bots/{}/disable", bots[0]);
    let (st, err) = api.call("POST", &dis, Some(&host), br#"{"reason": "a\u0000b"}"#.to_vec()).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["error"].as_str().unwrap().contains("NUL"), "{err}");
    for dots in [".", ".."] {
        let (st, err) = api.call("POST", "/api/users", None, format!(r#"{{"name": "{dots}"}}"#).into_bytes()).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{dots}: {err}");
    }
}

/// The pages are shells filled by app.js from the API; they carry a strict
/// Content-Security-Policy; unknown paths get a page, unknown API paths JSON.
/// A GET's status and JSON body.
async fn api_json(app: &axum::Router, uri: &str) -> (StatusCode, Value) {
    let resp = app.clone().oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap()).await.unwrap();
    let st = resp.status();
    (st, serde_json::from_slice(&axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_assets_and_security_headers() {
    let Some(pg) = postgres("api-pages") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let app = koth_web::http::router(pool.clone());
    let get = |uri: &str| {
        let app = app.clone();
        let uri = uri.to_owned();
        async move {
            let resp = app.oneshot(Request::builder().uri(&uri).body(Body::empty()).unwrap()).await.unwrap();
            let (parts, body) = resp.into_parts();
            let body = String::from_utf8(axum::body::to_bytes(body, usize::MAX).await.unwrap().to_vec()).unwrap();
            (parts.status, parts.headers, body)
        }
    };
    for (uri, kind) in [("/", "home"), ("/ladders/1", "ladder"), ("/bots/3", "bot"), ("/matches/9", "match"), ("/submit", "submit")] {
        let (st, headers, body) = get(uri).await;
        assert_eq!(st, StatusCode::OK, "{uri}");
        assert!(body.contains(&format!("data-page=\"{kind}\"")), "{uri}: {body}");
        assert!(body.contains("/static/app.js"), "{uri}");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(headers["x-content-type-options"], "nosniff");
    }
    let (st, _, body) = get("/games/snake").await;
    assert_eq!(st, StatusCode::OK);
    assert!(body.contains("127.0.0.1:4040") && body.contains("<table") || body.contains("<p>"), "the protocol, as HTML");
    // Starter kits: listed first on the game's page and in the API, each
    // downloaded as the repository's file, under its name.
    let kits = body.find("id=\"starter-kits\"").expect("the snake page offers starter kits");
    assert!(kits < body.find("4040").unwrap(), "the kits come before the protocol's details");
    let (_, games) = api_json(&app, "/api/games").await;
    for g in games.as_array().unwrap() {
        let game = g["name"].as_str().unwrap();
        let langs: Vec<&str> = g["starters"].as_array().unwrap().iter().map(|k| k["language"].as_str().unwrap()).collect();
        assert_eq!(langs, koth_runner::starters::LANGUAGES, "{game}");
        for k in g["starters"].as_array().unwrap() {
            let (st, headers, body) = get(k["url"].as_str().unwrap()).await;
            assert_eq!(st, StatusCode::OK, "{k}");
            let file = k["file"].as_str().unwrap();
            let repo = std::fs::read_to_string(format!("{}/starters/{game}/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            assert_eq!(body, repo, "{game}/{file}");
            assert_eq!(headers["content-disposition"], format!("attachment; filename=\"{file}\"").as_str());
            let (_, _, page) = get(&format!("/games/{game}")).await;
            assert!(page.contains(&format!("href=\"{}\" download=\"{file}\"", k["url"].as_str().unwrap())), "{game} page lists {k}");
        }
    }
    let (st, _, body) = get("/api/games/snake/starters/cobol").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(body.contains("snake has no starter kit in \\\"cobol\\\"; this server offers it in: python, c, cpp"), "{body}");
    let (st, _, body) = get("/api/games/chess/starters/python").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(body.contains("game \\\"chess\\\" does not exist"), "{body}");
    let (st, _, body) = get("/games").await;
    assert_eq!(st, StatusCode::OK);
    assert!(body.contains("href=\"/games/linkage\""), "{body}");
    // For game authors: the referee protocol, linked from the index.
    assert!(body.contains("href=\"/games/authoring\""), "{body}");
    let (st, _, body) = get("/games/authoring").await;
    assert_eq!(st, StatusCode::OK);
    assert!(body.contains("<h1>Writing a game for koth</h1>") && body.contains("referee_failed"), "{body}");
    let (st, _, body) = get("/games/chess").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(body.contains("no game called \"chess\""), "{body}");
    let (st, _, body) = get("/no/such/page").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(body.contains("<h1>Not found</h1>"));
    let (st, headers, body) = get("/api/no/such").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert_eq!(headers["content-type"], "application/json");
    assert!(body.contains("openapi.json"));
    let (st, headers, body) = get("/static/app.js").await;
    assert_eq!((st, headers["content-type"].to_str().unwrap()), (StatusCode::OK, "text/javascript; charset=utf-8"));
    assert!(body.contains("textContent"), "app.js");
    // Compressed for clients that accept it (the script, the API's JSON).
    let resp = app
        .clone()
        .oneshot(Request::builder().uri("/static/app.js").header("accept-encoding", "gzip").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-encoding"], "gzip");
    let zipped = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    let mut plain = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&zipped[..]), &mut plain).unwrap();
    assert!(plain.contains("textContent") && zipped.len() * 2 < plain.len(), "{} bytes gzipped from {}", zipped.len(), plain.len());
    // An id that is not a number is the client's fault, not a crash.
    assert_eq!(get("/bots/abc").await.0, StatusCode::BAD_REQUEST);
    // Requests are counted by route pattern, not by path.
    let (_, _, metrics) = get("/metrics").await;
    assert!(metrics.contains("koth_http_requests_total{method=\"GET\",route=\"/bots/{id}\",status=\"200\"} 1"), "{metrics}");
    assert!(metrics.contains("koth_http_request_seconds_bucket"), "{metrics}");
}
