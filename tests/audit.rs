//! The audit trail against a real PostgreSQL: each kind of event (a
//! match's and a compile's outcome, a validation verdict, an automatic
//! disable, each host action) writes exactly one entry, with who did it and
//! why, in its own transaction (a refused or rolled-back action writes
//! none) and one log line; only hosts read it (`GET /api/audit`, `koth
//! audit`), newest first, filtered and paged.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use koth_games::replay::Replay;
use koth_games::MatchResult;
use koth_ladder::outcome::SeatOutcome;
use koth_runner::BotStatus;
use koth_scheduler::db::queue::Queue;
use koth_scheduler::db::results::{record_match, MatchOutcome};
use koth_scheduler::db::store;
use koth_scheduler::job::{CompileOutcome, Job};
use koth_scheduler::packed::PackedReplay;
use serde_json::{json, Value};

mod in_process;
use in_process::{koth, postgres, Api};

/// The log, as the service writes it (`koth::audit` lines, no colours).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A match's outcome: every seat played to the end, but seat 1's bot
/// fared as `first` says.
fn outcome(seats: usize, first: BotStatus) -> MatchOutcome {
    let replay: Replay = serde_json::from_value(json!({"game": "target", "seed": "1", "seats": [{}, {}], "turns": []})).unwrap();
    MatchOutcome {
        engine: "test".into(),
        turns: 4,
        replay: PackedReplay::pack(&replay),
        seats: (0..seats)
            .map(|i| SeatOutcome {
                seat: i as i32,
                score: (seats - i) as f64,
                rank: i as u32 + 1,
                result: if i == 0 { MatchResult::Win } else { MatchResult::Loss },
                status: if i == 0 { first.clone() } else { BotStatus::Ok },
                stderr: String::new(),
                stderr_turns: Vec::new(),
                moves: 4,
                timeouts: 0,
                invalid_moves: 0,
            })
            .collect(),
    }
}

fn crashed() -> BotStatus {
    BotStatus::Crashed { code: Some(1), signal: None, turn: 2 }
}

/// The entries written since `seen` (the newest id read so far), oldest
/// first, read as a host reads them; `seen` moves on.
async fn since(api: &Api, host: &str, seen: &mut i64) -> Vec<Value> {
    let (st, page) = api.call("GET", "/api/audit?limit=1000", Some(host), Vec::new()).await;
    assert_eq!(st, StatusCode::OK, "{page}");
    let mut new: Vec<Value> = page["entries"].as_array().unwrap().iter().filter(|e| e["id"].as_i64().unwrap() > *seen).cloned().collect();
    new.reverse();
    if let Some(last) = new.last() {
        *seen = last["id"].as_i64().unwrap();
    }
    new
}

fn actions(entries: &[Value]) -> Vec<&str> {
    entries.iter().map(|e| e["action"].as_str().unwrap()).collect()
}

/// The one entry of `action` among `entries`.
fn the<'a>(entries: &'a [Value], action: &str) -> &'a Value {
    let found: Vec<&Value> = entries.iter().filter(|e| e["action"] == action).collect();
    assert_eq!(found.len(), 1, "one {action} entry in {entries:#?}");
    found[0]
}

fn why(e: &Value) -> &str {
    e["why"].as_str().unwrap()
}

/// Claim the next job of `kind` as runner `holder`.
async fn claim(q: &Queue, holder: &str, kind: &str) -> koth_scheduler::db::queue::Claimed {
    q.claim(holder, &[kind], Duration::from_secs(60)).await.unwrap().unwrap_or_else(|| panic!("no {kind} job"))
}

/// Upload a version of alice's bot `drift`; its id.
async fn submit(api: &Api, token: &str, ladder: i64) -> i64 {
    let src = std::fs::read("bots/target/drifter.py").unwrap();
    let (st, made) = api.call("POST", &format!("/api/ladders/{ladder}/bots/drift?file=bot.py"), Some(token), src).await;
    assert!(st.is_success(), "{made}");
    made["version"].as_i64().unwrap()
}

/// A compile that built an (empty) artifact.
fn built() -> CompileOutcome {
    CompileOutcome::Compiled { artifact: Vec::new(), image: "sha256:image".into() }
}

/// Compile `version` on runner `holder` as a runner records it.
async fn compile(pool: &sqlx::PgPool, q: &Queue, holder: &str, version: i64, outcome: CompileOutcome, log: &str) {
    let job = claim(q, holder, "compile").await;
    assert_eq!(job.job(), Ok(Job::Compile { version }));
    let mut tx = pool.begin().await.unwrap();
    Queue::complete(&mut tx, &job).await.unwrap();
    store::record_compile(&mut tx, version, &outcome, log).await.unwrap();
    tx.commit().await.unwrap();
}

/// Play the next queued match on runner `holder`, seat 1 faring as `first`; its id.
async fn play(pool: &sqlx::PgPool, q: &Queue, holder: &str, first: BotStatus) -> i64 {
    let job = claim(q, holder, "match").await;
    let Ok(Job::Match { match_id }) = job.job() else { panic!("{job:?}") };
    let seats: i64 =
        sqlx::query_scalar("SELECT count(*) FROM match_seats WHERE match_id = $1").bind(match_id).fetch_one(pool).await.unwrap();
    let mut tx = pool.begin().await.unwrap();
    Queue::complete(&mut tx, &job).await.unwrap();
    record_match(&mut tx, match_id, &outcome(seats as usize, first)).await.unwrap();
    tx.commit().await.unwrap();
    match_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_outcome_and_host_action_is_one_entry_that_only_hosts_read() {
    let log = Captured::default();
    let writer = log.clone();
    tracing::subscriber::set_global_default(
        tracing_subscriber::fmt().with_env_filter("koth::audit=info").with_ansi(false).with_writer(move || writer.clone()).finish(),
    )
    .unwrap();
    let Some(pg) = postgres("audit") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let q = Queue::new(pool.clone());
    let (host_id, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let (alice_id, alice) = koth_web::http::create_account(&pool, "alice", false).await.unwrap();
    let mut seen = 0;

    // Only hosts read it.
    assert_eq!(api.call("GET", "/api/audit", None, Vec::new()).await.0, StatusCode::UNAUTHORIZED);
    let (st, err) = api.call("GET", "/api/audit", Some(&alice), Vec::new()).await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{err}");
    assert!(since(&api, &host, &mut seen).await.is_empty());

    // A host makes a ladder; an author refused it makes nothing.
    let (st, _) = api.call("POST", "/api/ladders", Some(&alice), r#"{"name": "theirs", "game": "target"}"#).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, made) = api.call("POST", "/api/ladders", Some(&host), r#"{"name": "cup", "game": "target"}"#).await;
    assert_eq!(st, StatusCode::CREATED, "{made}");
    let ladder = made["id"].as_i64().unwrap();
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["ladder_created"]);
    assert_eq!((e[0]["actor"].as_i64(), e[0]["actor_name"].as_str(), e[0]["ladder"].as_i64()), (Some(host_id), Some("host"), Some(ladder)));
    assert!(why(&e[0]).contains("\"cup\": target, rated"), "{}", e[0]);
    assert_eq!(e[0]["what"], format!("ladder {ladder} created"));

    // A version compiles on a runner and passes its validation game.
    let v1 = submit(&api, &alice, ladder).await;
    assert!(since(&api, &host, &mut seen).await.is_empty(), "an upload is not audited: its compile is");
    compile(&pool, &q, "runner-a", v1, built(), "").await;
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["compile_succeeded"]);
    let bot = e[0]["bot"].as_i64().unwrap();
    assert_eq!((e[0]["actor"].as_i64(), e[0]["actor_name"].as_str()), (None, Some("runner runner-a")));
    assert_eq!((e[0]["version"].as_i64(), e[0]["ladder"].as_i64()), (Some(v1), Some(ladder)));
    let game1 = play(&pool, &q, "runner-b", BotStatus::Ok).await;
    assert!(why(&e[0]).contains(&format!("its validation game is match {game1}")), "{}", e[0]);
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["match_finished", "version_accepted"]);
    let finished = the(&e, "match_finished");
    assert_eq!((finished["actor_name"].as_str(), finished["match"].as_i64()), (Some("runner runner-b"), Some(game1)));
    assert!(why(finished).starts_with(&format!("the validation game of version {v1}, 4 turns: seat 1 drift rank 1")), "{finished}");
    assert_eq!(
        (the(&e, "version_accepted")["actor_name"].as_str(), the(&e, "version_accepted")["version"].as_i64()),
        (Some("koth"), Some(v1))
    );

    // A version that does not compile: its log's start is the why.
    let v2 = submit(&api, &alice, ladder).await;
    compile(&pool, &q, "runner-a", v2, CompileOutcome::Failed, "bot.py:1: SyntaxError: invalid syntax\n  x = = 1\n").await;
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["compile_failed"]);
    assert_eq!((e[0]["version"].as_i64(), e[0]["actor_name"].as_str()), (Some(v2), Some("runner runner-a")));
    assert!(why(&e[0]).starts_with("bot.py:1: SyntaxError"), "{}", e[0]);

    // A version its validation game refuses.
    let v3 = submit(&api, &alice, ladder).await;
    compile(&pool, &q, "runner-a", v3, built(), "").await;
    assert_eq!(actions(&since(&api, &host, &mut seen).await), ["compile_succeeded"]);
    play(&pool, &q, "runner-b", crashed()).await;
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["match_finished", "version_refused"]);
    let refused = the(&e, "version_refused");
    assert_eq!((refused["version"].as_i64(), refused["bot"].as_i64()), (Some(v3), Some(bot)));
    assert!(why(refused).contains("crashed on turn 2"), "{refused}");
    assert!(why(the(&e, "match_finished")).contains("crashed on turn 2"), "{e:?}");

    // Jobs failed for good, as the runner's loop records them: a compile, a match.
    let v4 = submit(&api, &alice, ladder).await;
    let job = claim(&q, "runner-a", "compile").await;
    let mut tx = pool.begin().await.unwrap();
    Queue::fail_in(&mut tx, &job, "no image for python", false).await.unwrap();
    store::fail_version(&mut tx, v4, "koth could not compile this version: no image for python").await.unwrap();
    tx.commit().await.unwrap();
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["compile_failed"]);
    assert_eq!((e[0]["actor_name"].as_str(), e[0]["version"].as_i64()), (Some("koth"), Some(v4)));
    assert!(why(&e[0]).contains("no image for python"));
    let other = store::create_bot(&pool, ladder, host_id, "wall").await.unwrap();
    let (ov, _) = store::submit_version(&pool, other, "python", "bot.py", b"", "h").await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    store::accept_compiled(&mut conn, ov, b"", "sha256:image").await.unwrap();
    let m = store::create_match(&mut conn, ladder, &[bot, other], 1, false, 0).await.unwrap();
    store::fail_match(&mut conn, m, "the game's referee failed: it crashed").await.unwrap();
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["match_failed"]);
    assert_eq!(
        (e[0]["match"].as_i64(), e[0]["ladder"].as_i64(), why(&e[0])),
        (Some(m), Some(ladder), "the game's referee failed: it crashed")
    );

    // A result whose transaction is rolled back leaves no entry.
    let unplayed = store::create_match(&mut conn, ladder, &[bot, other], 2, false, 0).await.unwrap();
    let mut tx = pool.begin().await.unwrap();
    record_match(&mut tx, unplayed, &outcome(2, BotStatus::Ok)).await.unwrap();
    tx.rollback().await.unwrap();
    assert!(since(&api, &host, &mut seen).await.is_empty());

    // The bot fails in most of its matches: disabled, once, by koth.
    for i in 0..10 {
        let m = store::create_match(&mut conn, ladder, &[bot, other], 10 + i, false, 0).await.unwrap();
        record_match(&mut conn, m, &outcome(2, if i < 7 { crashed() } else { BotStatus::Ok })).await.unwrap();
    }
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e).iter().filter(|a| **a == "match_finished").count(), 10, "{e:#?}");
    let disabled = the(&e, "bot_auto_disabled");
    assert_eq!((disabled["actor"].as_i64(), disabled["actor_name"].as_str(), disabled["bot"].as_i64()), (None, Some("koth"), Some(bot)));
    assert!(why(disabled).contains("crashed, ran out of memory") && why(disabled).contains("queued match(es) cancelled"), "{disabled}");

    // A host's actions through the API, each one entry with the host as actor.
    let host_action = |e: &[Value], action: &str| {
        assert_eq!(actions(e), [action]);
        assert_eq!((e[0]["actor"].as_i64(), e[0]["actor_name"].as_str()), (Some(host_id), Some("host")), "{}", e[0]);
    };
    assert_eq!(api.call("POST", &format!("/api/ladders/{ladder}/pause"), Some(&alice), "").await.0, StatusCode::FORBIDDEN);
    assert!(since(&api, &host, &mut seen).await.is_empty(), "a refused action writes nothing");
    assert_eq!(api.call("POST", &format!("/api/ladders/{ladder}/pause"), Some(&host), "").await.0, StatusCode::OK);
    host_action(&since(&api, &host, &mut seen).await, "ladder_paused");
    assert_eq!(api.call("POST", &format!("/api/ladders/{ladder}/resume"), Some(&host), "").await.0, StatusCode::OK);
    let e = since(&api, &host, &mut seen).await;
    host_action(&e, "ladder_resumed");
    assert_eq!(e[0]["ladder"].as_i64(), Some(ladder));
    assert_eq!(api.call("POST", &format!("/api/bots/{bot}/enable"), Some(&host), "").await.0, StatusCode::OK);
    let e = since(&api, &host, &mut seen).await;
    host_action(&e, "bot_enabled");
    assert!(why(&e[0]).starts_with("it was disabled: its current version crashed"), "{}", e[0]);
    let (st, _) = api.call("POST", &format!("/api/bots/{bot}/disable"), Some(&host), r#"{"reason": "reads the other bot's files"}"#).await;
    assert_eq!(st, StatusCode::OK);
    let e = since(&api, &host, &mut seen).await;
    host_action(&e, "bot_disabled");
    assert_eq!((e[0]["bot"].as_i64(), e[0]["ladder"].as_i64()), (Some(bot), Some(ladder)));
    assert!(why(&e[0]).starts_with("disabled by a host: reads the other bot's files; "), "{}", e[0]);
    assert_eq!(api.call("POST", &format!("/api/bots/{bot}/enable"), Some(&host), "").await.0, StatusCode::OK);
    host_action(&since(&api, &host, &mut seen).await, "bot_enabled");
    let queued = store::create_match(&mut conn, ladder, &[bot, other], 99, false, 0).await.unwrap();
    let (st, done) = api.call("POST", &format!("/api/matches/{queued}/cancel"), Some(&host), "").await;
    assert_eq!(st, StatusCode::OK, "{done}");
    let e = since(&api, &host, &mut seen).await;
    host_action(&e, "match_cancelled");
    assert_eq!((e[0]["match"].as_i64(), why(&e[0])), (Some(queued), "cancelled by host, a host"));
    assert_eq!(api.call("POST", &format!("/api/matches/{queued}/cancel"), Some(&host), "").await.0, StatusCode::CONFLICT);
    assert!(since(&api, &host, &mut seen).await.is_empty(), "cancelled once: the second writes nothing");
    let deadline = format!("/api/ladders/{ladder}/deadline");
    assert_eq!(api.call("POST", &deadline, Some(&host), r#"{"at": "soon"}"#).await.0, StatusCode::BAD_REQUEST);
    assert!(since(&api, &host, &mut seen).await.is_empty(), "a deadline that is not a time is rolled back");
    assert_eq!(api.call("POST", &deadline, Some(&host), r#"{"in_seconds": 0}"#).await.0, StatusCode::OK);
    let e = since(&api, &host, &mut seen).await;
    host_action(&e, "deadline_set");
    assert!(why(&e[0]).ends_with("Z (was none)"), "{}", e[0]);
    let finals = format!("/api/ladders/{ladder}/finals");
    let (st, c) = api.call("POST", &finals, Some(&host), r#"{"top": 2}"#).await;
    assert_eq!(st, StatusCode::OK, "{c}");
    let e = since(&api, &host, &mut seen).await;
    host_action(&e, "finals_started");
    assert!(why(&e[0]).starts_with("top 2 in round_robin"), "{}", e[0]);
    assert!(why(&e[0]).contains(&format!("bot {bot}")) && why(&e[0]).contains(&format!("bot {other}")), "{}", e[0]);
    assert_eq!(api.call("POST", &finals, Some(&host), r#"{"top": 2}"#).await.0, StatusCode::CONFLICT);
    assert!(since(&api, &host, &mut seen).await.is_empty());

    // An owner's own actions are theirs: deleting a bot, then the account.
    assert_eq!(api.call("POST", &format!("/api/bots/{bot}/delete"), Some(&alice), "").await.0, StatusCode::OK);
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["bot_deleted"]);
    assert_eq!(
        (e[0]["actor"].as_i64(), e[0]["actor_name"].as_str(), why(&e[0])),
        (Some(alice_id), Some("alice"), "deleted by its owner; 0 queued match(es) cancelled")
    );
    assert_eq!(api.call("DELETE", "/api/me", Some(&alice), "").await.0, StatusCode::OK);
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["account_deleted"]);
    assert_eq!((e[0]["actor"].as_i64(), e[0]["actor_name"].as_str()), (Some(alice_id), Some("alice")));
    assert!(why(&e[0]).starts_with("by its owner; 0 bot(s) withdrawn"), "{}", e[0]);

    // A game a host adds, and its validation's verdict.
    let package = koth_runner::game::GamePackage::from_folder(std::path::Path::new("external-games/rpsls"), &Default::default()).unwrap();
    let (st, added) = api.call("POST", "/api/games?file=rpsls.tar", Some(&host), package.to_tar()).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{added}");
    let e = since(&api, &host, &mut seen).await;
    host_action(&e, "game_added");
    let game = e[0]["game"].as_i64().unwrap();
    assert!(why(&e[0]).starts_with("\"rpsls\"; its validation is job "), "{}", e[0]);
    koth_scheduler::db::games::record_validation(&mut conn, game, false, "refused: its referee failed").await.unwrap();
    let e = since(&api, &host, &mut seen).await;
    assert_eq!(actions(&e), ["game_refused"]);
    assert_eq!((e[0]["game"].as_i64(), e[0]["actor_name"].as_str(), why(&e[0])), (Some(game), Some("koth"), "refused: its referee failed"));

    // Reading: pages back with `before`, filters, and bad requests.
    let (_, all) = api.call("GET", "/api/audit?limit=1000", Some(&host), Vec::new()).await;
    let all: Vec<i64> = all["entries"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert_eq!(all[0], seen, "newest first");
    assert!(all.windows(2).all(|w| w[0] > w[1]));
    let mut paged = Vec::new();
    let mut uri = "/api/audit?limit=7".to_owned();
    loop {
        let (st, page) = api.call("GET", &uri, Some(&host), Vec::new()).await;
        assert_eq!(st, StatusCode::OK, "{page}");
        let entries = page["entries"].as_array().unwrap();
        assert!(entries.len() <= 7);
        paged.extend(entries.iter().map(|e| e["id"].as_i64().unwrap()));
        match page["next_before"].as_i64() {
            Some(next) => uri = format!("/api/audit?limit=7&before={next}"),
            None => break,
        }
    }
    assert_eq!(paged, all);
    for (query, want) in [
        (format!("action=bot_enabled&ladder={ladder}"), "bot_enabled"),
        (format!("bot={bot}&action=match_finished"), "match_finished"),
        ("action=game_refused".to_owned(), "game_refused"),
    ] {
        let (st, page) = api.call("GET", &format!("/api/audit?{query}"), Some(&host), Vec::new()).await;
        assert_eq!(st, StatusCode::OK, "{page}");
        let entries = page["entries"].as_array().unwrap();
        assert!(!entries.is_empty() && entries.iter().all(|e| e["action"] == want), "{query}: {page}");
    }
    let (_, by_bot) = api.call("GET", &format!("/api/audit?bot={other}&limit=1000"), Some(&host), Vec::new()).await;
    let by_bot = by_bot["entries"].as_array().unwrap();
    assert_eq!(
        by_bot.iter().filter(|e| e["action"] == "match_finished").count(),
        10,
        "the host's bot has no entries of its own, but the matches it played are its: {by_bot:#?}"
    );
    let (_, by_ladder) = api.call("GET", &format!("/api/audit?ladder={ladder}&limit=1000"), Some(&host), Vec::new()).await;
    let by_ladder = by_ladder["entries"].as_array().unwrap();
    assert!(by_ladder.iter().all(|e| e["ladder"] == ladder), "{by_ladder:#?}");
    assert_eq!(by_ladder.len(), all.len() - 3, "all but the account's and the game's");
    for bad in ["limit=0", "limit=1001", "action=match_played", "before=0", "bot=x"] {
        let (st, err) = api.call("GET", &format!("/api/audit?{bad}"), Some(&host), Vec::new()).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{bad}: {err}");
        assert!(err["error"].is_string(), "{bad}: {err}");
    }

    // The OpenAPI document names the same kinds (the page's filter reads them there).
    let (_, doc) = api.call("GET", "/api/openapi.json", None, Vec::new()).await;
    let kinds: Vec<&str> = koth_scheduler::audit::AuditAction::ALL.iter().map(|a| a.as_str()).collect();
    assert_eq!(doc["components"]["schemas"]["AuditAction"]["enum"], json!(kinds));
    let params = doc["paths"]["/api/audit"]["get"]["parameters"].as_array().unwrap();
    let action = params.iter().find(|p| p["name"] == "action").unwrap();
    assert_eq!(action["schema"]["$ref"], "#/components/schemas/AuditAction", "{action}");

    // Each entry was one log line with its fields.
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let (_, page) = api.call("GET", "/api/audit?limit=1000", Some(&host), Vec::new()).await;
    for e in page["entries"].as_array().unwrap() {
        let (id, action) = (e["id"].as_i64().unwrap(), e["action"].as_str().unwrap());
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(&format!(" audit={id} action={action} "))).collect();
        assert_eq!(lines.len(), 1, "entry {id}: {lines:?}");
        assert!(lines[0].contains(e["what"].as_str().unwrap()) && lines[0].contains("koth::audit"), "{}", lines[0]);
    }
    assert!(!text.contains('\u{1b}'), "no colour codes");

    // `koth audit` prints it as lines, for hosts only.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    let router = koth_web::http::router(pool.clone());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let config = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("audit-cli");
    let (host_token, third) = (host.clone(), all[2]);
    let (ok, out) = tokio::task::spawn_blocking({
        let (config, server) = (config.clone(), server.clone());
        move || koth(&config, &["audit", "--server", &server, "--token", &host_token, "--limit", "3"], "")
    })
    .await
    .unwrap();
    assert!(ok, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with(&format!("#{} ", all[0])) && lines[0].contains(" koth: game "), "{out}");
    assert!(lines[0].ends_with("refused: refused: its referee failed"), "{out}");
    assert!(lines[3].starts_with(&format!("older entries: koth audit --before {third}")), "{out}");
    let (ok, out) = tokio::task::spawn_blocking({
        let (config, server) = (config.clone(), server.clone());
        move || koth(&config, &["audit", "--server", &server, "--token", &host, "--action", "bot_disabled"], "")
    })
    .await
    .unwrap();
    assert!(ok && out.lines().count() == 1 && out.contains("disabled by a host: reads the other bot's files"), "{out}");
    let (_, other_token) = koth_web::http::create_account(&pool, "bob", false).await.unwrap();
    let (ok, out) =
        tokio::task::spawn_blocking(move || koth(&config, &["audit", "--server", &server, "--token", &other_token], "")).await.unwrap();
    assert!(!ok && out.contains("only hosts"), "{out}");
}
