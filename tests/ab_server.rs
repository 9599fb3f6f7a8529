//! "Is version #N of my bot better than #M?" asked of the server: an A/B
//! test's pairs of unrated matches, played by a real runner (an in-process
//! worker, real sandboxes, the host's Python) against a real PostgreSQL,
//! until the sequential test decides; the ratings and the leaderboard are
//! untouched by them. And its limits: one running test per bot however
//! many ask at once, the owner's own compiled versions only.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use koth_ladder::format::LadderConfig;
use koth_runner::bot::Builder;
use koth_sandbox::SandboxConfig;
use koth_scheduler::db::queue::Queue;
use koth_scheduler::db::store;
use koth_scheduler::worker::{self, WorkerConfig};
use serde_json::{json, Value};

mod in_process;
use in_process::{postgres, postgres_with_target_ladder, Api};

/// A version that crashes on its first move: any version that plays is
/// clearly better.
const CRASHES: &str = "import sys\nsys.stderr.write('this version is broken\\n')\nsys.exit(3)\n";

/// `koth` with its login under `config`: the exit code and its output.
fn koth(config: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .env_remove("KOTH_SERVER")
        .env_remove("KOTH_TOKEN")
        .output()
        .unwrap();
    (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

async fn wait_ready(api: &Api, bot: i64, number: usize, deadline: Instant) {
    loop {
        let (_, b) = api.call("GET", &format!("/api/bots/{bot}"), None, "").await;
        let status = b["versions"].as_array().and_then(|v| v.get(number - 1)).map(|v| v["status"].clone());
        match status.as_ref().and_then(Value::as_str) {
            Some("ready") => return,
            Some("failed" | "refused") => panic!("version #{number} did not compile: {b}"),
            _ => {}
        }
        assert!(Instant::now() < deadline, "version #{number} not ready in time: {b}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The service in-process (API and pages, a runner with real sandboxes,
/// the scheduler's tick) on a Snake ladder, and ann's bot `mine` with two
/// compiled versions: #1 crashes, #2 plays (koth's example bot for Snake).
struct Service {
    _pg: koth_testkit::TestPostgres,
    pool: sqlx::PgPool,
    api: Api,
    ladder: i64,
    token: String,
    other: String,
    bot: i64,
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Service {
    async fn start(name: &str, uid_base: u32) -> Option<Service> {
        let pg = postgres(name)?;
        let sandbox: SandboxConfig = koth_testkit::bot_sandbox(name, uid_base, 256 << 20, 100);
        if koth_sandbox::Sandbox::create(sandbox.clone()).is_err() {
            assert!(std::env::var("CI").is_err(), "CI=true and the sandbox cannot run");
            return None;
        }
        let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 8).await.unwrap();
        let settings =
            LadderConfig::parse("rated", &json!({"seats": 2, "newcomer_games": 0, "max_turns": 200, "skip_validation": true})).unwrap();
        let ladder = store::create_ladder(&pool, "snake", &koth_games::GameKind::Snake.into(), &settings).await.unwrap();
        let api = Api(koth_web::http::router(pool.clone()));
        let (_, token) = koth_web::http::create_account(&pool, "ann", false).await.unwrap();
        let (_, other) = koth_web::http::create_account(&pool, "ben", false).await.unwrap();
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let cfg = WorkerConfig::new(format!("{name}-runner"), Builder::host(sandbox.clone()), &sandbox, 256 << 20);
        let runner = {
            let pool = pool.clone();
            tokio::spawn(async move {
                worker::run(pool, cfg, stopped).await;
            })
        };
        let tick = {
            let (pool, mut stopped) = (pool.clone(), stop.subscribe());
            tokio::spawn(async move {
                let q = Queue::new(pool.clone());
                let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(3);
                while !*stopped.borrow() {
                    koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
                    let _ = tokio::time::timeout(Duration::from_millis(100), stopped.changed()).await;
                }
            })
        };
        let deadline = Instant::now() + Duration::from_secs(180);
        let submit = format!("/api/ladders/{ladder}/bots/mine?file=bot.py");
        let (st, made) = api.call("POST", &submit, Some(&token), CRASHES).await;
        assert!(matches!(st, StatusCode::CREATED | StatusCode::ACCEPTED), "{st}: {made}");
        let bot = made["bot"].as_i64().unwrap();
        wait_ready(&api, bot, 1, deadline).await;
        let survivor = std::fs::read_to_string("bots/snake/tcp_survivor.py").unwrap();
        let (st, made) = api.call("POST", &submit, Some(&token), survivor).await;
        assert!(matches!(st, StatusCode::CREATED | StatusCode::ACCEPTED), "{st}: {made}");
        wait_ready(&api, bot, 2, deadline).await;
        Some(Service { _pg: pg, pool, api, ladder, token, other, bot, stop, tasks: vec![runner, tick] })
    }

    /// The API and pages on a socket: its URL.
    async fn serve(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = format!("http://{}", listener.local_addr().unwrap());
        let router = koth_web::http::router(self.pool.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        server
    }

    async fn stop(self) {
        self.stop.send(true).unwrap();
        for t in self.tasks {
            t.await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clearly_better_version_is_found_better_and_no_rating_moves() {
    let Some(service) = Service::start("ab-server", 53000).await else { return };
    let (api, pool, ladder, bot) = (&service.api, service.pool.clone(), service.ladder, service.bot);
    let (token, other) = (service.token.clone(), service.other.clone());

    let (_, board_before) = api.call("GET", &format!("/api/ladders/{ladder}/leaderboard"), None, "").await;
    let ab = format!("/api/bots/{bot}/ab");
    // Only the owner.
    let (st, e) = api.call("POST", &ab, Some(&other), r#"{"new": 2, "old": 1}"#).await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{e}");
    assert!(e["error"].as_str().unwrap().contains("only the owner of mine"), "{e}");

    // From the command line, followed to its verdict.
    let server = service.serve().await;
    let config = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ab-server-cli");
    let began = Instant::now();
    let (code, out) = tokio::task::spawn_blocking({
        let (config, server, token) = (config.clone(), server.clone(), token.clone());
        move || koth(&config, &["ab", "--server", &server, "--token", &token, "--bot", &bot.to_string(), "--elo1", "150", "#2", "1"])
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "better is exit code 0: {out}");
    assert!(out.contains(&format!("bot {bot} version #2 against #1, 2 seats")), "{out}");
    let last = out.lines().last().unwrap();
    assert!(last.contains("#2 against #1: verdict: better after "), "{out}");

    // Kept with the versions: the test's tally, statistic and games. A
    // game a runner was claiming as the verdict came is not cancelled (the
    // cancel skips what a runner holds): it plays, uncounted; wait for it.
    let settled = Instant::now() + Duration::from_secs(120);
    let tests = loop {
        let (_, tests) = api.call("GET", &ab, None, "").await;
        let games = tests[0]["matches"].as_array().unwrap();
        if games.iter().all(|m| m["state"] == "finished" || m["state"] == "cancelled") {
            break tests;
        }
        assert!(Instant::now() < settled, "a game still queued or running 120 s after the verdict: {tests}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let t = &tests[0];
    assert_eq!(t["state"], "better", "{t}");
    let pairs = t["pairs"].as_i64().unwrap();
    let counts: Vec<i64> = t["counts"].as_array().unwrap().iter().map(|c| c.as_i64().unwrap()).collect();
    assert_eq!(counts.len(), 5, "two seats: the pentanomial counts {t}");
    assert_eq!(counts[4], pairs, "a crashing version loses every game: {t}");
    assert!(t["llr"].as_f64().unwrap() >= t["upper"].as_f64().unwrap(), "{t}");
    eprintln!("better after {pairs} pairs ({} games), LLR {:.2}, in {:.1?}", 2 * pairs, t["llr"].as_f64().unwrap(), began.elapsed());
    let games = t["matches"].as_array().unwrap();
    let finished: Vec<&Value> = games.iter().filter(|m| m["state"] == "finished").collect();
    // Every counted pair's two games; a pair in flight when the verdict
    // came may have had one played, its other is cancelled.
    let whole = (1..=pairs).filter(|p| finished.iter().filter(|m| m["pair"] == *p).count() == 2).count() as i64;
    assert_eq!(whole, pairs, "{t}");
    assert!(finished.len() as i64 <= 2 * pairs + 1, "{t}");
    for m in &finished {
        let id = m["match"].as_i64().unwrap();
        let (_, info) = api.call("GET", &format!("/api/matches/{id}"), None, "").await;
        assert_eq!((info["kind"].as_str(), info["rated"].as_bool()), (Some("ab"), Some(false)), "{info}");
        assert_eq!((&info["ab_test"], &info["ab_pair"]), (&t["id"], &m["pair"]), "{info}");
        let (st, _) = api.call("GET", &format!("/api/matches/{id}/replay"), None, "").await;
        assert_eq!(st, StatusCode::OK, "an A/B game has its replay");
        assert_eq!(m["new_score"].as_f64(), Some(1.0), "{m}");
    }
    // The pair's seeds are one, its seats swapped.
    let (_, first) = api.call("GET", &format!("/api/matches/{}", finished[0]["match"]), None, "").await;
    let (_, second) = api.call("GET", &format!("/api/matches/{}", finished[1]["match"]), None, "").await;
    assert_eq!(first["seed"], second["seed"]);
    let versions = |m: &Value| m["seats"].as_array().unwrap().iter().map(|s| s["version"].clone()).collect::<Vec<_>>();
    let (a, mut b) = (versions(&first), versions(&second));
    b.reverse();
    assert_eq!(a, b, "{first}\n{second}");

    // No rating moved: the leaderboard is as it was, no rating history.
    let (_, board_after) = api.call("GET", &format!("/api/ladders/{ladder}/leaderboard"), None, "").await;
    assert_eq!(board_after, board_before);
    let (_, history) = api.call("GET", &format!("/api/bots/{bot}/ratings"), None, "").await;
    assert_eq!(history, json!([]));
    let rated: i64 = sqlx::query_scalar("SELECT count(*) FROM ratings").fetch_one(&pool).await.unwrap();
    assert_eq!(rated, 0);

    // The other way round: #1 is not better than #2, exit code 1.
    let (code, out) = tokio::task::spawn_blocking({
        let (config, server, token) = (config.clone(), server.clone(), token.clone());
        move || koth(&config, &["ab", "--server", &server, "--token", &token, "--bot", &bot.to_string(), "--elo1", "150", "1", "2"])
    })
    .await
    .unwrap();
    assert_eq!(code, Some(1), "not better is exit code 1: {out}");
    assert!(out.lines().last().unwrap().contains("#1 against #2: verdict: not better after "), "{out}");
    // Without versions: the bot's tests.
    let (code, out) =
        tokio::task::spawn_blocking(move || koth(&config, &["ab", "--server", &server, "--bot", &bot.to_string()])).await.unwrap();
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.lines().nth(1).unwrap().contains("#2 against #1: verdict: better"), "{out}");

    service.stop().await;
}

/// Many requests at once start exactly one test; what cannot be tested is
/// refused, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_test_at_a_time_per_bot_and_only_compiled_versions_of_ones_own() {
    let Some((_pg, pool, ladder)) = postgres_with_target_ladder("ab-limits", 16).await else { return };
    let api = std::sync::Arc::new(Api(koth_web::http::router(pool.clone())));
    let (ann, token) = koth_web::http::create_account(&pool, "ann", false).await.unwrap();
    let src = std::fs::read_to_string("bots/target/drifter.py").unwrap();
    let submit = format!("/api/ladders/{ladder}/bots/mine?file=bot.py");
    let mut versions = Vec::new();
    for _ in 0..3 {
        let (st, r) = api.call("POST", &submit, Some(&token), src.clone()).await;
        assert!(matches!(st, StatusCode::CREATED | StatusCode::ACCEPTED), "{st}: {r}");
        versions.push(r["version"].as_i64().unwrap());
    }
    let bot: i64 = sqlx::query_scalar("SELECT bot_id FROM bot_versions WHERE id = $1").bind(versions[0]).fetch_one(&pool).await.unwrap();
    // #1 and #2 compiled, as a runner would record them; #3 still pending.
    for v in &versions[..2] {
        let mut conn = pool.acquire().await.unwrap();
        store::accept_compiled(&mut conn, *v, b"", "sha256:x").await.unwrap();
    }
    let ab = format!("/api/bots/{bot}/ab");
    let refused = [
        (None, r#"{"new": 2, "old": 1}"#, StatusCode::UNAUTHORIZED, ""),
        (Some(token.as_str()), r#"{"new": 2, "old": 2}"#, StatusCode::UNPROCESSABLE_ENTITY, "both version #2"),
        (Some(token.as_str()), r#"{"new": 3, "old": 1}"#, StatusCode::UNPROCESSABLE_ENTITY, "version #3 of mine is pending"),
        (Some(token.as_str()), r#"{"new": 9, "old": 1}"#, StatusCode::NOT_FOUND, "mine has no version #9: its versions are #1 to #3"),
        (Some(token.as_str()), r#"{"new": 2, "old": 1, "elo0": 10, "elo1": 5}"#, StatusCode::BAD_REQUEST, "give elo0 below elo1"),
        (Some(token.as_str()), r#"{"new": 2, "old": 1, "max_pairs": 0}"#, StatusCode::UNPROCESSABLE_ENTITY, "give 1 to 1000 pairs"),
        (Some(token.as_str()), r#"{"new": 2}"#, StatusCode::BAD_REQUEST, ""),
    ];
    for (who, body, status, words) in refused {
        let (st, e) = api.call("POST", &ab, who, body).await;
        assert_eq!(st, status, "{body}: {e}");
        assert!(e["error"].as_str().unwrap_or_default().contains(words), "{body}: {e}");
    }
    let (st, e) = api.call("POST", "/api/bots/999999/ab", Some(&token), r#"{"new": 2, "old": 1}"#).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "{e}");

    // Twenty at once: one starts, the others are told it runs.
    let mut asks = Vec::new();
    for _ in 0..20 {
        let (api, ab, token) = (api.clone(), ab.clone(), token.clone());
        asks.push(tokio::spawn(async move { api.call("POST", &ab, Some(&token), r#"{"new": 2, "old": 1}"#).await }));
    }
    let mut started = Vec::new();
    for a in asks {
        let (st, r) = a.await.unwrap();
        match st {
            StatusCode::CREATED => started.push(r["id"].as_i64().unwrap()),
            StatusCode::CONFLICT => assert!(r["error"].as_str().unwrap().contains("has an A/B test running already"), "{r}"),
            other => panic!("{other}: {r}"),
        }
    }
    assert_eq!(started.len(), 1, "exactly one test started");
    let running: i64 = sqlx::query_scalar("SELECT count(*) FROM ab_tests WHERE bot_id = $1").bind(bot).fetch_one(&pool).await.unwrap();
    assert_eq!(running, 1);

    // Its first pairs are queued: unrated, asked for by the owner, at the
    // challenges' priority, charged to the owner's share of the runners.
    let (_, t) = api.call("GET", &format!("/api/ab/{}", started[0]), None, "").await;
    assert_eq!((t["state"].as_str(), t["new_number"].as_i64(), t["old_number"].as_i64()), (Some("running"), Some(2), Some(1)), "{t}");
    let queued: Vec<(bool, i32, Option<i64>, i64)> = sqlx::query_as(
        "SELECT m.rated, j.priority, j.account_id, m.requested_by FROM matches m JOIN jobs j ON j.id = m.job_id WHERE m.ab_test = $1",
    )
    .bind(started[0])
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(queued.len() as i64, 2 * koth_scheduler::db::ab::PAIRS_IN_FLIGHT, "{queued:?}");
    assert!(queued.iter().all(|q| *q == (false, store::PRIORITY_CHALLENGE, Some(ann), ann)), "{queued:?}");
    // The ladder's own format does not see them (one bot, nothing to play),
    // and the owner's challenges are not held back by them.
    let q = Queue::new(pool.clone());
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
    let tick = koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
    assert_eq!(tick.created, 0, "the test's pairs are all queued already: {tick:?}");

    // Withdrawn, the bot's test stops, saying why.
    let (st, _) = api.call("POST", &format!("/api/bots/{bot}/delete"), Some(&token), "").await;
    assert_eq!(st, StatusCode::OK);
    koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
    let (_, t) = api.call("GET", &format!("/api/ab/{}", started[0]), None, "").await;
    assert_eq!(t["state"], "stopped", "{t}");
    assert!(t["error"].as_str().unwrap().contains("its bot was disabled (deleted by its owner)"), "{t}");
    assert!(t["matches"].as_array().unwrap().iter().all(|m| m["state"] == "cancelled"), "{t}");
}

use koth_testkit::browser::{browser, until};

/// The bot page in a real browser: its owner asks "is version #2 better
/// than #1?" with the form, the page follows the test to its verdict and
/// shows it beside both versions, with the games linked; a visitor sees
/// the result and no form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_page_starts_a_test_and_shows_its_verdict_beside_both_versions() {
    if !koth_testkit::browser::available() {
        return;
    }
    let Some(service) = Service::start("ab-browser", 54000).await else { return };
    let url = service.serve().await;
    let tmp = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let shots = tmp.join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let (c, _driver) = browser(tmp.join("ab-browser-profile")).await;
    let bot = service.bot;

    // Signed in as the owner (the token where the page's sign-in puts it).
    c.goto(&format!("{url}/")).await.unwrap();
    c.execute("localStorage.setItem('koth.token', arguments[0])", vec![json!(service.token)]).await.unwrap();
    c.goto(&format!("{url}/bots/{bot}")).await.unwrap();
    until(&c, "the A/B form", "document.querySelector('#ab-form')", 20).await;
    assert_eq!(until(&c, "no tests yet", "document.querySelector('#ab-tests').innerText", 5).await, "No A/B tests yet.");
    let chosen =
        c.execute("return [document.querySelector('#ab-new').value, document.querySelector('#ab-old').value]", vec![]).await.unwrap();
    assert_eq!(chosen, json!(["2", "1"]), "the newest version against the one before");
    c.find(fantoccini::Locator::Css("#ab-start")).await.unwrap().click().await.unwrap();
    until(&c, "the test under way", "document.querySelector('#ab-table .ab-verdict')", 20).await;
    // Followed to its verdict (the default hypothesis: +0 against +30 Elo).
    let verdict = until(
        &c,
        "the verdict",
        "(v => v && v.textContent !== 'running' && v.textContent)(document.querySelector('#ab-table .ab-verdict'))",
        240,
    )
    .await;
    assert_eq!(verdict, "better");
    let row = until(&c, "the test's row", "document.querySelector('#ab-table tbody tr').innerText", 5).await;
    let row = row.as_str().unwrap();
    assert!(row.contains("#2 against #1") && row.contains("100.0%") && row.contains("+inf"), "{row}");
    // Beside the versions too, without reloading the page.
    let versions = until(&c, "the versions", "document.querySelector('#versions').innerText", 5).await;
    assert!(versions.as_str().unwrap().contains("better than #1"), "{versions}");
    let games = c.execute("return [...document.querySelectorAll('#ab-table a')].map(a => a.getAttribute('href'))", vec![]).await.unwrap();
    let games = games.as_array().unwrap();
    assert!(games.len() >= 2 && games.iter().all(|g| g.as_str().unwrap().starts_with("/matches/")), "{games:?}");
    std::fs::write(shots.join("ab-test.png"), c.screenshot().await.unwrap()).unwrap();
    // A game's page leads back to its test.
    c.goto(&format!("{url}{}", games[0].as_str().unwrap())).await.unwrap();
    let of = until(&c, "the game's test", "document.querySelector('#ab-of-match') && document.querySelector('#ab-of-match').innerText", 20)
        .await;
    assert_eq!(of, "Game of pair 1 of A/B test 1 between two versions of mine: unrated.");
    let link = c.execute("return document.querySelector('#ab-of-match a').getAttribute('href')", vec![]).await.unwrap();
    assert_eq!(link, json!(format!("/bots/{bot}")));
    c.back().await.unwrap();
    until(&c, "the bot page again", "document.querySelector('#ab-start')", 20).await;

    // The same button starts the next test; pressed again while that one
    // runs, the page says why nothing started.
    c.find(fantoccini::Locator::Css("#ab-start")).await.unwrap().click().await.unwrap();
    until(&c, "the second test", "document.querySelectorAll('#ab-table tbody tr').length === 2", 20).await;
    c.find(fantoccini::Locator::Css("#ab-start")).await.unwrap().click().await.unwrap();
    let refused = until(&c, "the refusal", "document.querySelector('#ab-form .error').textContent", 20).await;
    assert!(refused.as_str().unwrap().contains("has an A/B test running already"), "{refused}");

    // A visitor: the verdict beside both versions, no form.
    c.execute("localStorage.removeItem('koth.token')", vec![]).await.unwrap();
    c.goto(&format!("{url}/bots/{bot}")).await.unwrap();
    until(&c, "the tests", "document.querySelector('#ab-table')", 20).await;
    assert_eq!(c.execute("return document.querySelector('#ab-form')", vec![]).await.unwrap(), Value::Null);
    let versions = until(&c, "the versions", "document.querySelector('#versions').innerText", 5).await;
    let versions = versions.as_str().unwrap();
    assert!(versions.contains("better than #1") && versions.contains("#2 better than it"), "{versions}");
    drop(c);
    service.stop().await;
}

/// Match starts since `since` (seconds since the epoch) made while a match
/// of the other kind (the ladder's, or the A/B test's) was waiting, as
/// `tests/fair_share.rs` counts them: (starts that went to the A/B test,
/// all such starts).
async fn contested_starts(pool: &sqlx::PgPool, since: f64) -> (i64, i64) {
    sqlx::query_as(
        "SELECT count(*) FILTER (WHERE m.priority = $2 AND waited), count(*) FILTER (WHERE waited) \
         FROM (SELECT m.priority, EXISTS (SELECT 1 FROM jobs o \
                   WHERE o.kind = 'match' AND o.priority IN ($2, $3) AND o.priority <> m.priority \
                     AND o.created_at < m.started_at \
                     AND (o.started_at > m.started_at OR (o.started_at IS NULL AND (o.finished_at IS NULL OR o.finished_at > m.started_at)))) AS waited \
               FROM jobs m WHERE m.kind = 'match' AND m.priority IN ($2, $3) AND m.started_at >= to_timestamp($1)) m",
    )
    .bind(since)
    .bind(store::PRIORITY_CHALLENGE)
    .bind(store::PRIORITY_LADDER)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// An A/B test beside a busy ladder, two runners: while ladder matches
/// wait, the test's games take at most the challenges' share of the match
/// starts, and are not starved below it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ab_test_takes_only_its_fair_share_beside_a_busy_ladder() {
    const PLAYS: &str = "import sys\nfor line in sys.stdin:\n    print(2, flush=True)\n";
    const STARTS: i64 = 120;
    const TOLERANCE: f64 = 0.05;
    let Some(pg) = postgres("ab-share") else { return };
    let sandbox = koth_testkit::bot_sandbox("ab-share", 55000, 256 << 20, 100);
    if koth_sandbox::Sandbox::create(sandbox.clone()).is_err() {
        assert!(std::env::var("CI").is_err(), "CI=true and the sandbox cannot run");
        return;
    }
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 8).await.unwrap();
    let settings =
        LadderConfig::parse("rated", &json!({"seats": 2, "concurrency": 8, "newcomer_games": 0, "max_turns": 40, "skip_validation": true}))
            .unwrap();
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &settings).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (_, token) = koth_web::http::create_account(&pool, "ann", false).await.unwrap();
    let (_, ben) = koth_web::http::create_account(&pool, "ben", false).await.unwrap();
    let mut bot = 0;
    for (who, name) in [(&token, "mine"), (&token, "mine"), (&ben, "a"), (&ben, "b"), (&ben, "c"), (&ben, "d"), (&ben, "e"), (&ben, "f")] {
        let (st, made) = api.call("POST", &format!("/api/ladders/{ladder}/bots/{name}?file=bot.py"), Some(who), PLAYS).await;
        assert!(matches!(st, StatusCode::CREATED | StatusCode::ACCEPTED), "{st}: {made}");
        if name == "mine" {
            bot = made["bot"].as_i64().unwrap();
        }
    }
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut tasks = Vec::new();
    for n in 0..2 {
        let cfg = WorkerConfig::new(format!("ab-share-{n}"), Builder::host(sandbox.clone()), &sandbox, 256 << 20);
        let (pool, stopped) = (pool.clone(), stopped.clone());
        tasks.push(tokio::spawn(async move {
            worker::run(pool, cfg, stopped).await;
        }));
    }
    {
        let (pool, mut stopped) = (pool.clone(), stop.subscribe());
        tasks.push(tokio::spawn(async move {
            let q = Queue::new(pool.clone());
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(5);
            while !*stopped.borrow() {
                koth_scheduler::ladder::tick(&pool, &q, &mut rng).await.unwrap();
                let _ = tokio::time::timeout(Duration::from_millis(50), stopped.changed()).await;
            }
        }));
    }
    wait_ready(&api, bot, 2, Instant::now() + Duration::from_secs(180)).await;
    let since: f64 = sqlx::query_scalar("SELECT extract(epoch FROM now())::float8").fetch_one(&pool).await.unwrap();
    // Two versions alike: a narrow test that runs long.
    let (st, t) = api
        .call("POST", &format!("/api/bots/{bot}/ab"), Some(&token), r#"{"new": 2, "old": 1, "elo0": -3, "elo1": 3, "max_pairs": 1000}"#)
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let began = Instant::now();
    let counted = loop {
        let counted = contested_starts(&pool, since).await;
        if counted.1 >= STARTS {
            break counted;
        }
        // A guard against a hang, not a pace: a loaded machine plays slowly
        // (87 of 120 starts came in 300 s at load 9 to 23).
        assert!(began.elapsed() < Duration::from_secs(1200), "only {counted:?} contested starts after 1200 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    stop.send(true).unwrap();
    for t in tasks {
        t.await.unwrap();
    }
    let share = koth_scheduler::db::queue::FairShare::default().share;
    let fraction = counted.0 as f64 / counted.1 as f64;
    let (_, t) = api.call("GET", &format!("/api/ab/{}", t["id"]), None, "").await;
    eprintln!(
        "while ladder matches waited, the A/B test's games took {}/{} of the match starts ({fraction:.3}; share {share}), in {:.0?}; \
         the test counted {} pairs ({})",
        counted.0,
        counted.1,
        began.elapsed(),
        t["pairs"],
        t["state"]
    );
    assert!(fraction <= share + TOLERANCE, "over its share: {counted:?}");
    assert!(fraction >= share - TOLERANCE, "starved below its share: {counted:?}");
}
