//! A contest from open to exported final standings, through the HTTP API
//! (in-process) against a real PostgreSQL: authors submit, the host sets a
//! deadline, a submission after it is refused with the deadline in the
//! message, the host starts the finals, the scheduler's ticks play them
//! (a stand-in runner decides each match from the bots' known strengths, a
//! seeded model, so the test is about the contest and not about bots), and
//! the final standings are frozen and exported. The finals' top 3 must be
//! the 3 strongest bots.

use std::collections::HashMap;

use axum::http::StatusCode;
use koth_scheduler::db::queue::Queue;
use koth_scheduler::db::store;
use rand::SeedableRng;
use serde_json::{json, Value};
use sqlx::PgPool;

mod in_process;
use in_process::{koth, postgres, Api};

#[path = "../scheduler/tests/common/stand_in.rs"]
mod stand_in;

/// What a runner does with a compile job, without compiling: the version
/// is accepted (the ladder skips validation games).
async fn compiled(pool: &PgPool, made: &Value) {
    sqlx::query("UPDATE jobs SET state = 'completed' WHERE id = $1")
        .bind(made["compile_job"].as_i64().unwrap())
        .execute(pool)
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    store::accept_compiled(&mut conn, made["version"].as_i64().unwrap(), b"", "sha256:test").await.unwrap();
}

async fn contest(api: &Api, ladder: i64) -> Value {
    let (st, c) = api.call("GET", &format!("/api/ladders/{ladder}/contest"), None, Vec::new()).await;
    assert_eq!(st, StatusCode::OK, "{c}");
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contest_from_open_to_exported_final_standings() {
    let Some(pg) = postgres("contest") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();

    // The host opens a rated Target ladder.
    let body = json!({"name": "cup", "game": "target", "settings": {"concurrency": 8, "newcomer_games": 3, "skip_validation": true}});
    let (st, made) = api.call("POST", "/api/ladders", Some(&host), body.to_string()).await;
    assert_eq!(st, StatusCode::CREATED, "{made}");
    let ladder = made["id"].as_i64().unwrap();
    let opened = contest(&api, ladder).await;
    assert_eq!((&opened["phase"], &opened["played_out"]), (&json!("open"), &json!(false)), "{opened}");

    // Eight authors submit; bot i has strength 3 i (so b7 is the strongest).
    let src = std::fs::read("bots/target/drifter.py").unwrap();
    let mut strength_of: HashMap<i64, f64> = HashMap::new();
    let mut tokens = Vec::new();
    for i in 0..8 {
        let (st, user) = api.call("POST", "/api/users", None, json!({"name": format!("author{i}")}).to_string()).await;
        assert_eq!(st, StatusCode::CREATED, "{user}");
        let token = user["token"].as_str().unwrap().to_owned();
        let (st, made) = api.call("POST", &format!("/api/ladders/{ladder}/bots/b{i}?file=bot.py"), Some(&token), src.clone()).await;
        assert_eq!(st, StatusCode::CREATED, "{made}");
        compiled(&pool, &made).await;
        strength_of.insert(made["bot"].as_i64().unwrap(), 3.0 * i as f64);
        tokens.push(token);
    }
    let strength = |bot: i64| strength_of[&bot];

    // A deadline an hour away: submissions stay open, the finals wait.
    let (st, c) = api.call("POST", &format!("/api/ladders/{ladder}/deadline"), Some(&host), r#"{"in_seconds": 3600}"#).await;
    assert_eq!(st, StatusCode::OK, "{c}");
    assert_eq!(c["phase"], "open");
    let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&host), r#"{"top": 5}"#).await;
    assert_eq!(st, StatusCode::CONFLICT, "{err}");
    assert!(err["error"].as_str().unwrap().contains(c["deadline"].as_str().unwrap()), "{err}");
    // What to do in words (the page, the command), not an API route.
    let msg = err["error"].as_str().unwrap();
    assert!(msg.contains(&format!("koth contest deadline {ladder} --now")) && !msg.contains("/api/"), "{msg}");
    // Only hosts set deadlines; a deadline must be a time.
    let (st, _) = api.call("POST", &format!("/api/ladders/{ladder}/deadline"), Some(&tokens[0]), r#"{"in_seconds": 0}"#).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/deadline"), Some(&host), r#"{"at": "next tuesday-ish"}"#).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["error"].as_str().unwrap().contains("RFC 3339"), "{err}");
    let (st, err) = api
        .call("POST", &format!("/api/ladders/{ladder}/deadline"), Some(&host), r#"{"at": "2030-01-01T00:00:00Z", "in_seconds": 5}"#)
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
    for bad in [r#"{"in_seconds": -5}"#, "[null, null]", r#"{"when": "soon"}"#] {
        let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/deadline"), Some(&host), bad).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{bad}: {err}");
    }
    assert_eq!(contest(&api, ladder).await["deadline"], c["deadline"], "refused requests change nothing");

    // The ladder plays.
    let q = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
    let mut ladder_matches = 0;
    for _ in 0..60 {
        koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
        ladder_matches += stand_in::play_queued(&pool, &strength, &mut rng).await;
    }
    assert!(ladder_matches >= 200, "{ladder_matches} ladder matches");

    // b0's author sends a new version just before the deadline; its
    // compile is slow.
    let (st, late) = api.call("POST", &format!("/api/ladders/{ladder}/bots/b0?file=bot.py"), Some(&tokens[0]), src.clone()).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{late}");

    // The deadline passes: submissions are refused, with the deadline.
    let (st, c) = api.call("POST", &format!("/api/ladders/{ladder}/deadline"), Some(&host), r#"{"in_seconds": 0}"#).await;
    assert_eq!(st, StatusCode::OK, "{c}");
    assert_eq!(c["phase"], "closed");
    let deadline = c["deadline"].as_str().unwrap().to_owned();
    for token in [&tokens[1], &host] {
        let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/bots/b1?file=bot.py"), Some(token), src.clone()).await;
        assert_eq!(st, StatusCode::FORBIDDEN, "{err}");
        let e = err["error"].as_str().unwrap();
        assert!(e.contains("closed") && e.contains(&deadline), "{e}");
    }
    let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/bots/newcomer?file=bot.py"), Some(&tokens[2]), src.clone()).await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{err}");
    let (_, ladders) = api.call("GET", "/api/ladders", None, Vec::new()).await;
    assert_eq!(ladders[0]["phase"], "closed");
    assert_eq!(ladders[0]["deadline"], deadline.as_str());

    // The finals wait for the version compiling, refuse formats that never
    // end, and need a match's worth of bots.
    let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&host), r#"{"top": 5}"#).await;
    assert_eq!(st, StatusCode::CONFLICT, "{err}");
    assert!(err["error"].as_str().unwrap().contains("still compiling"), "{err}");
    compiled(&pool, &late).await;
    let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&host), r#"{"top": 5, "format": "rated"}"#).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["error"].as_str().unwrap().contains("does not end"), "{err}");
    let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&host), r#"{"top": 1}"#).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
    let (st, _) = api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&tokens[0]), r#"{"top": 5}"#).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, err) = api.call("GET", &format!("/api/ladders/{ladder}/final-standings.csv"), None, Vec::new()).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "{err}");
    assert!(err["error"].as_str().unwrap().contains("closed"), "{err}");

    // The finals: the top 5, a round robin of 4 rounds on every side.
    let body = r#"{"top": 5, "format": "round_robin", "settings": {"rounds": 4}}"#;
    let (st, c) = api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&host), body).await;
    assert_eq!(st, StatusCode::OK, "{c}");
    assert_eq!(c["phase"], "finals");
    let finalists: Vec<i64> = c["finals"]["finalists"].as_array().unwrap().iter().map(|b| b.as_i64().unwrap()).collect();
    assert_eq!(finalists.len(), 5);
    let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/deadline"), Some(&host), r#"{}"#).await;
    assert_eq!(st, StatusCode::CONFLICT, "the finals' deadline is fixed: {err}");
    let (st, _) = api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&host), body).await;
    assert_eq!(st, StatusCode::CONFLICT);
    let queued_ladder: i64 = sqlx::query_scalar("SELECT count(*) FROM matches WHERE ladder_id = $1 AND state = 'queued' AND NOT finals")
        .bind(ladder)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(queued_ladder, 0, "the ladder's own queued matches make way for the finals");

    let mut finals_matches = 0;
    for _ in 0..50 {
        koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
        finals_matches += stand_in::play_queued(&pool, &strength, &mut rng).await;
        if contest(&api, ladder).await["phase"] == "final" {
            break;
        }
    }
    let c = contest(&api, ladder).await;
    assert_eq!(c["phase"], "final", "{c}");
    assert_eq!(c["played_out"], true, "the finals' round robin has played every pairing");
    // 5 finalists: 20 ordered pairings, 4 rounds each.
    assert_eq!(finals_matches, 80);
    // Their pages say they are the finals', and a rated ladder's own rated.
    let (_, ms) = api.call("GET", &format!("/api/ladders/{ladder}/matches"), None, vec![]).await;
    let kinds: std::collections::BTreeSet<&str> = ms.as_array().unwrap().iter().map(|m| m["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains("finals") && kinds.iter().all(|k| ["finals", "rated"].contains(k)), "{kinds:?}");
    let seated: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT s.bot_id FROM match_seats s JOIN matches m ON m.id = s.match_id WHERE m.ladder_id = $1 AND m.finals ORDER BY 1",
    )
    .bind(ladder)
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut sorted = finalists.clone();
    sorted.sort_unstable();
    assert_eq!(seated, sorted, "only the finalists play the finals");

    let standings = c["standings"].clone();
    let order: Vec<i64> = standings["rows"].as_array().unwrap().iter().map(|r| r["bot"].as_i64().unwrap()).collect();
    let mut by_strength: Vec<i64> = strength_of.keys().copied().collect();
    by_strength.sort_by(|a, b| strength(*b).total_cmp(&strength(*a)));
    assert_eq!(order[..3], by_strength[..3], "the finals' top 3 are the 3 strongest: {standings}");
    assert_eq!(standings["matches"], 80);
    let unsettled = standings["rows"].as_array().unwrap().iter().filter(|r| r["settled"] == false).count();
    assert_eq!(standings["unsettled"], unsettled as u64);
    println!("finals: {} of 5 places unsettled; order {order:?}", unsettled);

    // Frozen: more ticks add no match and change nothing.
    for _ in 0..3 {
        koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
        assert_eq!(stand_in::play_queued(&pool, &strength, &mut rng).await, 0);
    }
    assert_eq!(contest(&api, ladder).await["standings"], standings);

    // Exported: CSV with one line per place, in the same order.
    let (st, headers, csv) = api.get_raw(&format!("/api/ladders/{ladder}/final-standings.csv"), &[]).await;
    assert_eq!(st, StatusCode::OK);
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/csv"));
    let csv = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "rank,bot,name,points,games,low,high,settled");
    assert_eq!(lines.len(), 6, "{csv}");
    for (line, bot) in lines[1..].iter().zip(&order) {
        assert_eq!(line.split(',').nth(1), Some(bot.to_string().as_str()), "{csv}");
    }

    // The operators' view counts every match the stand-in played.
    let finished: i64 = sqlx::query_scalar("SELECT count(*) FROM matches WHERE ladder_id = $1 AND state = 'finished'")
        .bind(ladder)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(finished as usize, ladder_matches + finals_matches);
    let (_, metrics) = api.call("GET", "/metrics", None, Vec::new()).await;
    let metrics = metrics.as_str().unwrap().to_owned();
    let value = |line: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(line).and_then(|rest| rest.strip_prefix(' ')))
            .unwrap_or_else(|| panic!("no {line} in:\n{metrics}"))
            .parse()
            .unwrap()
    };
    assert_eq!(value(r#"koth_match_seconds_count{game="target",ladder="cup"}"#), finished as f64);
    assert_eq!(value(r#"koth_match_seconds_bucket{game="target",ladder="cup",le="+Inf"}"#), finished as f64);
    assert_eq!(value(r#"koth_queue_wait_seconds_count{kind="match",game="target",ladder="cup"}"#), finished as f64);
    assert_eq!(value(r#"koth_matches_finished_per_minute{game="target",ladder="cup"}"#), finished as f64 / 10.0);
    assert_eq!(value(r#"koth_runners{state="busy"}"#), 0.0);
    assert!(value(r#"koth_db_pool_connections{state="max"}"#) >= 1.0);
}

/// The host's commands against a served API: `koth ladder` creates, lists,
/// pauses, resumes, disables and enables; `koth contest` sets the
/// deadline, starts the finals, shows them and exports the final
/// standings. An author's token is refused with the server's reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_runs_a_contest_from_the_command_line() {
    let Some(pg) = postgres("contest-cli") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let (_, author) = koth_web::http::create_account(&pool, "author", false).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    let app = koth_web::http::router(pool.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let config = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("koth-contest-cli");
    let _ = std::fs::remove_dir_all(&config);
    std::fs::create_dir_all(&config).unwrap();
    let run = |args: &[&str], token: &str| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--server", &server, "--token", token]);
        tokio::task::block_in_place(|| koth(&config, &all, ""))
    };

    let (ok, out) =
        run(&["ladder", "create", "cup", "--game", "target", "--settings", r#"{"skip_validation": true, "concurrency": 6}"#], &host);
    assert!(ok, "{out}");
    assert!(out.contains("ladder 1 \"cup\": target (rated)"), "{out}");
    let (ok, out) = run(&["ladder", "create", "cup2", "--game", "target"], &author);
    assert!(!ok && out.contains("403") && out.contains("only hosts"), "{out}");
    let (ok, out) = run(&["ladder", "create", "bad", "--game", "target", "--settings", "{rounds: 2"], &host);
    assert!(!ok && out.contains("--settings is not JSON"), "{out}");

    // Six bots of known strength (ids in creation order).
    let owner = store::create_user(&pool, "owners", false).await.unwrap();
    let mut strength_of: HashMap<i64, f64> = HashMap::new();
    for i in 0..6 {
        let bot = store::create_bot(&pool, 1, owner, &format!("b{i}")).await.unwrap();
        let (version, job) = store::submit_version(&pool, bot, "python", "bot.py", b"", "hash").await.unwrap();
        compiled(&pool, &json!({"version": version, "compile_job": job})).await;
        strength_of.insert(bot, 4.0 * i as f64);
    }
    let strength = |bot: i64| strength_of[&bot];

    let (ok, out) = run(&["ladder", "pause", "cup"], &host);
    assert!(ok && out.contains("ladder 1 paused"), "{out}");
    let (ok, out) = run(&["ladder", "list"], &host);
    assert!(ok && out.contains("cup") && out.contains("paused") && out.contains("open"), "{out}");
    let (ok, out) = run(&["ladder", "resume", "1"], &host);
    assert!(ok && out.contains("scheduling"), "{out}");
    let (ok, out) = run(&["ladder", "disable", "cup", "b0", "--reason", "reads the other bot's files"], &host);
    assert!(ok && out.contains("disabled") && out.contains("reads the other bot's files"), "{out}");
    let (ok, out) = run(&["ladder", "disable", "cup", "nobody", "--reason", "x"], &host);
    assert!(!ok && out.contains("no bot \"nobody\"") && out.contains("b1"), "{out}");

    let q = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    // Queued matches are listed; the host cancels one; a finished or
    // unknown match cannot be.
    koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
    let (ok, out) = run(&["ladder", "matches", "cup"], &host);
    assert!(ok && out.contains("queued") && out.contains("rated") && out.contains(" vs "), "{out}");
    let queued: i64 = sqlx::query_scalar("SELECT min(id) FROM matches WHERE state = 'queued'").fetch_one(&pool).await.unwrap();
    let (ok, out) = run(&["ladder", "cancel", &queued.to_string()], &author);
    assert!(!ok && out.contains("403"), "{out}");
    let (ok, out) = run(&["ladder", "cancel", &queued.to_string()], &host);
    assert!(ok && out.contains(&format!("match {queued}: cancelled by host, a host")), "{out}");
    let (ok, out) = run(&["ladder", "cancel", &queued.to_string()], &host);
    assert!(!ok && out.contains("409") && out.contains("it is over"), "{out}");
    let (ok, out) = run(&["ladder", "matches", "cup"], &host);
    assert!(ok && out.lines().any(|l| l.trim_start().starts_with(&format!("{queued}  cancelled"))), "{out}");
    for _ in 0..30 {
        koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
        stand_in::play_queued(&pool, &strength, &mut rng).await;
    }
    let b0_games: i64 = sqlx::query_scalar("SELECT count(*) FROM match_seats s JOIN bots b ON b.id = s.bot_id WHERE b.name = 'b0'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(b0_games, 0, "a disabled bot plays nothing");
    let (ok, out) = run(&["ladder", "enable", "cup", "b0"], &host);
    assert!(ok && out.contains("enabled"), "{out}");

    let (ok, out) = run(&["contest", "deadline", "cup", "--in-secs", "3600"], &host);
    assert!(ok && out.contains("cup: open") && out.contains("deadline: 20"), "{out}");
    let (ok, out) = run(&["contest", "deadline", "cup"], &host);
    assert!(!ok && out.contains("say when"), "{out}");
    let (ok, out) = run(&["contest", "deadline", "cup", "--now"], &author);
    assert!(!ok && out.contains("only hosts"), "{out}");
    let (ok, out) = run(&["contest", "deadline", "cup", "--now"], &host);
    assert!(ok && out.contains("cup: closed"), "{out}");
    let (ok, out) = run(&["contest", "export", "cup"], &host);
    assert!(!ok && out.contains("no final standings yet"), "{out}");
    let (ok, out) = run(&["contest", "finals", "cup", "--top", "4", "--format", "swiss", "--settings", r#"{"rounds": 3}"#], &host);
    assert!(ok && out.contains("cup: finals") && out.contains("top 4 (4 bots), swiss"), "{out}");

    for _ in 0..20 {
        koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
        stand_in::play_queued(&pool, &strength, &mut rng).await;
    }
    let (ok, out) = run(&["contest", "show", "cup"], &host);
    assert!(ok && out.contains("cup: final") && out.contains("standings (final, 6 matches"), "3 Swiss rounds of 2 matches: {out}");
    let csv_path = config.join("final.csv");
    let (ok, out) = run(&["contest", "export", "cup", "-o", csv_path.to_str().unwrap()], &host);
    assert!(ok, "{out}");
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    assert!(csv.starts_with("rank,bot,name,points,buchholz,games,low,high,settled\n"), "{csv}");
    assert_eq!(csv.lines().count(), 5, "{csv}");
    let (ok, out) = run(&["contest", "export", "cup", "--json"], &host);
    assert!(ok, "{out}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["format"], "swiss");
    assert_eq!(json["rows"].as_array().unwrap().len(), 4);
}

/// A round-robin ladder says when every pairing has been played (the
/// seeds' round robins stopped silently), and that a new bot reopens it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_robin_ladder_says_when_it_is_played_out() {
    let Some(pg) = postgres("contest-played-out") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let config = koth_ladder::format::LadderConfig::parse("round_robin", &json!({"seats": 2, "rounds": 2})).unwrap();
    let ladder = store::create_ladder(&pool, "rr", &koth_games::GameKind::Snake.into(), &config).await.unwrap();
    let owner = store::create_user(&pool, "owner", false).await.unwrap();
    let add_bot = |name: &'static str| {
        let pool = pool.clone();
        async move {
            let bot = store::create_bot(&pool, ladder, owner, name).await.unwrap();
            let (version, job) = store::submit_version(&pool, bot, "python", "bot.py", b"", "hash").await.unwrap();
            compiled(&pool, &json!({"version": version, "compile_job": job})).await;
        }
    };
    add_bot("a").await;
    add_bot("b").await;
    assert_eq!(contest(&api, ladder).await["played_out"], false, "nothing played yet");
    let q = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
    assert_eq!(contest(&api, ladder).await["played_out"], false, "matches queued");
    let played = stand_in::play_queued(&pool, &|_| 0.0, &mut rng).await;
    assert_eq!(played, 4, "2 rounds on each side");
    assert_eq!(contest(&api, ladder).await["played_out"], true);
    add_bot("c").await;
    assert_eq!(contest(&api, ladder).await["played_out"], false, "the new bot's games are owed");
}

/// Adaptive finals through the API and the scheduler's ticks: a budget
/// below the base round is refused with what to ask for; with four bots
/// of clearly different strengths the finals play the base round, then
/// paired games (both seat orders, one seed) for the adjacent places not
/// yet ordered, and end with every place settled well before the budget.
/// The standings, JSON and CSV, give each place its rank interval and say
/// how many matches the finals took.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_finals_with_clearly_stronger_bots_end_settled_before_the_budget() {
    let Some(pg) = postgres("contest-adaptive") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let config = koth_ladder::format::LadderConfig::parse("rated", &json!({"seats": 2, "skip_validation": true})).unwrap();
    let ladder = store::create_ladder(&pool, "cup", &koth_games::GameKind::Snake.into(), &config).await.unwrap();
    let owner = store::create_user(&pool, "owner", false).await.unwrap();
    // Bot i has strength 10 i: each is ahead of the one below in 99.7% of games.
    let mut strength_of: HashMap<i64, f64> = HashMap::new();
    for i in 0..4 {
        let bot = store::create_bot(&pool, ladder, owner, &format!("b{i}")).await.unwrap();
        let (version, job) = store::submit_version(&pool, bot, "python", "bot.py", b"", "hash").await.unwrap();
        compiled(&pool, &json!({"version": version, "compile_job": job})).await;
        strength_of.insert(bot, 10.0 * i as f64);
    }
    let strength = |bot: i64| strength_of[&bot];
    let (st, c) = api.call("POST", &format!("/api/ladders/{ladder}/deadline"), Some(&host), r#"{"in_seconds": 0}"#).await;
    assert_eq!(st, StatusCode::OK, "{c}");

    // The base round of 4 finalists is 12 matches: a budget of 11 is refused.
    let (st, err) = api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&host), r#"{"top": 4, "budget": 11}"#).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["error"].as_str().unwrap().contains("ask for at least 12"), "{err}");
    let (st, err) =
        api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&host), r#"{"top": 4, "format": "swiss", "budget": 100}"#).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["error"].as_str().unwrap().contains("round_robin"), "{err}");

    let (st, c) = api.call("POST", &format!("/api/ladders/{ladder}/finals"), Some(&host), r#"{"top": 4, "budget": 100}"#).await;
    assert_eq!(st, StatusCode::OK, "{c}");
    assert_eq!((&c["phase"], &c["finals"]["budget"]), (&json!("finals"), &json!(100)), "{c}");

    let q = Queue::new(pool.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(36);
    let mut finals_matches = 0;
    let mut ticks = 0;
    while contest(&api, ladder).await["phase"] != "final" && ticks < 60 {
        koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
        finals_matches += stand_in::play_queued(&pool, &strength, &mut rng).await;
        ticks += 1;
    }
    let c = contest(&api, ladder).await;
    assert_eq!((&c["phase"], &c["played_out"]), (&json!("final"), &json!(true)), "{c}");
    let s = &c["standings"];
    println!("adaptive finals: {finals_matches} matches of a budget of 100 in {ticks} ticks; standings {s}");
    assert!(finals_matches < 100, "{finals_matches} matches: settled before the budget");
    assert_eq!(s["matches"], finals_matches as u64);
    assert_eq!((&s["unsettled"], &s["budget"]), (&json!(0), &json!(100)), "{s}");
    let order: Vec<i64> = s["rows"].as_array().unwrap().iter().map(|r| r["bot"].as_i64().unwrap()).collect();
    let mut by_strength: Vec<i64> = strength_of.keys().copied().collect();
    by_strength.sort_by(|a, b| strength(*b).total_cmp(&strength(*a)));
    assert_eq!(order, by_strength, "{s}");
    for r in s["rows"].as_array().unwrap() {
        assert_eq!(r["settled"], true, "{s}");
        assert!(r["rank_low"].as_u64().unwrap() <= r["rank"].as_u64().unwrap(), "{s}");
        assert!(r["rank"].as_u64().unwrap() <= r["rank_high"].as_u64().unwrap(), "{s}");
    }

    // Every paired game: two finals matches, seats swapped, one seed.
    let pairs: Vec<(i32, i64, Vec<i64>, Vec<i64>)> = sqlx::query_as(
        "SELECT m.round, count(DISTINCT m.seed), array_agg(s.bot_id ORDER BY m.id, s.seat) FILTER (WHERE s.seat = 0), \
                array_agg(s.bot_id ORDER BY m.id, s.seat) FILTER (WHERE s.seat = 1) \
         FROM matches m JOIN match_seats s ON s.match_id = m.id WHERE m.ladder_id = $1 AND m.finals GROUP BY m.round ORDER BY m.round",
    )
    .bind(ladder)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(pairs.len() * 2, finals_matches);
    for (round, seeds, first, second) in &pairs {
        assert_eq!(*seeds, 1, "paired game {round}: one seed");
        assert_eq!((first.len(), first[0], first[1]), (2, second[1], second[0]), "paired game {round}: seats swapped");
    }

    // Frozen, and exported with the rank intervals and the matches taken.
    koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
    assert_eq!(stand_in::play_queued(&pool, &strength, &mut rng).await, 0);
    let (st, _, csv) = api.get_raw(&format!("/api/ladders/{ladder}/final-standings.csv"), &[]).await;
    assert_eq!(st, StatusCode::OK);
    let csv = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "rank,bot,name,points,games,low,high,settled,rank_low,rank_high,finals_matches", "{csv}");
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(lines[1..].iter().all(|l| l.contains(",true,") && l.ends_with(&format!(",{finals_matches}"))), "{csv}");
}
