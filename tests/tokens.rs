//! Accounts and their tokens against a real PostgreSQL: tokens listed,
//! made, revoked (refused at once), rotated, expired; accounts deleted; and
//! `koth login` / `koth logout` against a served API.

use std::path::PathBuf;

use std::time::Duration;

use axum::http::StatusCode;
use koth_scheduler::db::runners::{self, Can};
use koth_scheduler::db::store;
use koth_web::http::ApiOptions;
use serde_json::Value;

mod in_process;
use in_process::{koth, postgres, Api};

/// An account made through the API; its token.
async fn sign_up(api: &Api, name: &str) -> String {
    let (st, v) = api.call("POST", "/api/users", None, format!(r#"{{"name": "{name}"}}"#)).await;
    assert_eq!(st, StatusCode::CREATED, "{v}");
    v["token"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_listed_made_revoked_at_once_and_rotated() {
    let Some(pg) = postgres("tokens") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let first = sign_up(&api, "carol").await;
    let other = sign_up(&api, "dave").await;

    // The sign-up token is listed, marked as the one in use, never expiring.
    let (st, list) = api.call("GET", "/api/me/tokens", Some(&first), "").await;
    assert_eq!(st, StatusCode::OK, "{list}");
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0]["name"].as_str(), list[0]["current"].as_bool(), &list[0]["expires_at"]), (Some("first"), Some(true), &Value::Null));
    assert!(list[0]["last_used_at"].is_string(), "its use is noted: {list:?}");
    let first_id = list[0]["id"].as_i64().unwrap();

    // A named second token; it works, and each sees itself as current.
    let (st, made) = api.call("POST", "/api/me/tokens", Some(&first), r#"{"name": "laptop"}"#).await;
    assert_eq!(st, StatusCode::CREATED, "{made}");
    let laptop = made["token"].as_str().unwrap().to_owned();
    let laptop_id = made["id"].as_i64().unwrap();
    assert_ne!(laptop, first);
    let (st, me) = api.call("GET", "/api/me", Some(&laptop), "").await;
    assert_eq!((st, me["name"].as_str()), (StatusCode::OK, Some("carol")));
    let (_, list) = api.call("GET", "/api/me/tokens", Some(&laptop), "").await;
    let current: Vec<i64> = list.as_array().unwrap().iter().filter(|t| t["current"] == true).map(|t| t["id"].as_i64().unwrap()).collect();
    assert_eq!(current, vec![laptop_id]);
    // Bad names and bodies are refused with the rule.
    for body in [r#"{"name": ".."}"#, r#"{"name": "has space"}"#, r#"{"nom": "x"}"#, "{"] {
        let (st, err) = api.call("POST", "/api/me/tokens", Some(&first), body).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{body}: {err}");
        assert!(err["error"].is_string());
    }
    // Nobody revokes or rotates another account's token.
    let (st, _) = api.call("DELETE", &format!("/api/me/tokens/{laptop_id}"), Some(&other), "").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, _) = api.call("POST", &format!("/api/me/tokens/{laptop_id}/rotate"), Some(&other), "").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, _) = api.call("GET", "/api/me", Some(&laptop), "").await;
    assert_eq!(st, StatusCode::OK, "the laptop token still works");

    // Revoked: refused on the very next request.
    let (st, _) = api.call("DELETE", &format!("/api/me/tokens/{laptop_id}"), Some(&first), "").await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    let (st, err) = api.call("GET", "/api/me", Some(&laptop), "").await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    assert!(err["error"].as_str().unwrap().contains("revoked"), "{err}");
    let (st, _) = api.call("DELETE", &format!("/api/me/tokens/{laptop_id}"), Some(&first), "").await;
    assert_eq!(st, StatusCode::NOT_FOUND, "revoked once");

    // Rotated: same name, new secret; the old one stops as the new one starts.
    let (st, rotated) = api.call("POST", &format!("/api/me/tokens/{first_id}/rotate"), Some(&first), "").await;
    assert_eq!(st, StatusCode::CREATED, "{rotated}");
    assert_eq!(rotated["name"], "first");
    let second = rotated["token"].as_str().unwrap().to_owned();
    let (st, _) = api.call("GET", "/api/me", Some(&first), "").await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let (st, list) = api.call("GET", "/api/me/tokens", Some(&second), "").await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(list.as_array().unwrap().len(), 1);
    // Revoking the token in use signs out at once.
    let id = list[0]["id"].as_i64().unwrap();
    let (st, _) = api.call("DELETE", &format!("/api/me/tokens/{id}"), Some(&second), "").await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    let (st, _) = api.call("GET", "/api/me/tokens", Some(&second), "").await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
}

/// With a token lifetime set by the host, tokens made through the API stop
/// working when it runs out, and the refusal says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_expire_when_the_host_sets_a_lifetime() {
    let Some(pg) = postgres("tokens-expire") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let api = Api(koth_web::http::router_with(
        pool.clone(),
        ApiOptions { token_lifetime: Some(Duration::from_secs(2)), ..ApiOptions::default() },
    ));
    let token = sign_up(&api, "erin").await;
    let (st, list) = api.call("GET", "/api/me/tokens", Some(&token), "").await;
    assert_eq!(st, StatusCode::OK);
    assert!(list[0]["expires_at"].is_string(), "{list}");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let (st, err) = api.call("GET", "/api/me", Some(&token), "").await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    assert!(err["error"].as_str().unwrap().contains("expired"), "{err}");
    // The host's own token (koth up's) never expires.
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let (st, _) = api.call("GET", "/api/me", Some(&host), "").await;
    assert_eq!(st, StatusCode::OK);
}

/// Deleting an account revokes every token and withdraws every bot; the
/// name stays taken and the bot stays in history with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_account_keeps_its_history_and_loses_its_tokens_and_bots() {
    let Some(pg) = postgres("tokens-delete") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let target = koth_ladder::format::LadderConfig::default_for(koth_games::GameKind::Target);
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &target).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let token = sign_up(&api, "frank").await;
    let src = std::fs::read_to_string("bots/target/drifter.py").unwrap();
    let (st, made) = api.call("POST", &format!("/api/ladders/{ladder}/bots/drift?file=bot.py"), Some(&token), src.as_str()).await;
    assert_eq!(st, StatusCode::CREATED, "{made}");
    let bot = made["bot"].as_i64().unwrap();
    let (st, extra) = api.call("POST", "/api/me/tokens", Some(&token), r#"{"name": "ci"}"#).await;
    assert_eq!(st, StatusCode::CREATED);
    let extra = extra["token"].as_str().unwrap().to_owned();

    let (st, gone) = api.call("DELETE", "/api/me", Some(&token), "").await;
    assert_eq!(st, StatusCode::OK, "{gone}");
    assert_eq!(gone["bots_withdrawn"], 1);
    for t in [&token, &extra] {
        let (st, _) = api.call("GET", "/api/me", Some(t), "").await;
        assert_eq!(st, StatusCode::UNAUTHORIZED);
    }
    let (st, info) = api.call("GET", &format!("/api/bots/{bot}"), None, "").await;
    assert_eq!(st, StatusCode::OK, "{info}");
    assert!(info.to_string().contains("its owner deleted their account"), "{info}");
    let (st, _) = api.call("POST", "/api/users", None, r#"{"name": "frank"}"#).await;
    assert_eq!(st, StatusCode::CONFLICT, "the name stays taken");
}

/// `koth login` checks the token and saves it readable by its owner only;
/// later commands use it (for that server only); `koth tokens` makes, lists,
/// rotates and revokes; `koth logout --revoke` revokes the saved token on
/// the server and forgets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn koth_login_saves_the_token_privately_and_logout_revokes_it() {
    use std::os::unix::fs::PermissionsExt;
    let Some(pg) = postgres("tokens-cli") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let target = koth_ladder::format::LadderConfig::default_for(koth_games::GameKind::Target);
    store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &target).await.unwrap();
    let (_, token) = koth_web::http::create_account(&pool, "gina", false).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    let app = koth_web::http::router(pool.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let config = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("koth-login-config");
    let _ = std::fs::remove_dir_all(&config);
    let file = config.join("koth/login.json");

    // A login file that is not one (hand-edited, truncated) is said, not ignored.
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{\"server\": ").unwrap();
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["leaderboard", "target", "--server", &server], ""));
    assert!(!ok && out.contains("is not a koth login file"), "{out}");
    std::fs::remove_file(&file).unwrap();
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["login", "--server", &server], "not-a-token\n"));
    assert!(!ok && out.contains("401") && out.contains("unknown token"), "{out}");
    // What to do, in words: the page or the command, not an API route.
    assert!(out.contains("`koth signup NAME`") && !out.contains("/api/"), "{out}");
    assert!(!file.exists(), "a refused token is not saved");
    // The token from standard input, as a user would paste it.
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["login", "--server", &server], &format!("{token}\n")));
    assert!(ok && out.contains("as gina"), "{out}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(file.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    assert!(!std::fs::read_to_string(&file).unwrap().is_empty());
    // Later commands find the server and the token.
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["leaderboard", "target"], ""));
    assert!(ok, "{out}");
    let (ok, out) = tokio::task::block_in_place(|| {
        koth(&config, &["submit", "--ladder", "target", "--name", "x", "--watch", "0", "/nonexistent.py"], "")
    });
    assert!(!ok && !out.contains("needs your token"), "the saved token is used: {out}");
    // Not for another server.
    let (ok, out) = tokio::task::block_in_place(|| {
        koth(&config, &["submit", "--server", "http://127.0.0.1:9", "--ladder", "t", "--name", "x", "/x.py"], "")
    });
    assert!(!ok && out.contains("needs your token"), "{out}");

    // `koth tokens`: a new one (printed alone on stdout, for scripts), the
    // list with the one in use marked, a rotation, a revocation.
    let status = |token: &str| match ureq::get(&format!("{server}/api/me")).set("Authorization", &format!("Bearer {token}")).call() {
        Err(ureq::Error::Status(code, _)) => code,
        Ok(r) => r.status(),
        Err(e) => panic!("{e}"),
    };
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["tokens", "new", "ci"], ""));
    assert!(ok, "{out}");
    let ci = out.lines().next().unwrap().trim().to_owned();
    assert_eq!((ci.len(), ci.chars().all(|c| c.is_ascii_hexdigit())), (64, true), "{out}");
    assert_eq!(status(&ci), 200);
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["tokens", "list"], ""));
    assert!(ok, "{out}");
    let rows: Vec<&str> = out.lines().skip(1).filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(rows[0].starts_with('*') && rows[0].contains("first") && !rows[1].starts_with('*') && rows[1].contains(" ci "), "{out}");
    let ci_id = rows[1].split_whitespace().next().unwrap().to_owned();
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["tokens", "rotate", &ci_id], ""));
    assert!(ok, "{out}");
    let rotated = out.lines().next().unwrap().trim().to_owned();
    assert_eq!((status(&ci), status(&rotated)), (401, 200), "the rotated token replaces the old one");
    let (_, out) = tokio::task::block_in_place(|| koth(&config, &["tokens", "list"], ""));
    let rotated_id = out.lines().skip(1).find(|l| l.contains(" ci ")).unwrap().split_whitespace().next().unwrap().to_owned();
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["tokens", "revoke", &rotated_id], ""));
    assert!(ok && out.contains("revoked"), "{out}");
    assert_eq!(status(&rotated), 401);
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["tokens", "revoke", &rotated_id], ""));
    assert!(!ok && out.contains("404"), "{out}");

    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["logout", "--revoke"], ""));
    assert!(ok && out.contains("revoked") && out.contains("signed out"), "{out}");
    assert!(!file.exists());
    assert_eq!(status(&token), 401, "the revoked token is refused");
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["logout"], ""));
    assert!(ok && out.contains("not signed in"), "{out}");
}

/// The first hour from the CLI: `koth signup` makes the account and saves
/// its token privately (later commands use it); a taken name is refused
/// with the server's reason and saves nothing; `koth starter` lists a
/// game's kits and writes one, which is the repository's file and is
/// accepted by the server as it is; once a runner says what it can run,
/// `koth starter` offers only those kits and names the others with why; a
/// game's folder's example bots are its kits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn koth_signup_then_a_starter_kit_submitted_as_it_is() {
    use std::os::unix::fs::PermissionsExt;
    let Some(pg) = postgres("signup-cli") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let cfg = koth_ladder::format::LadderConfig::default_for(koth_games::GameKind::Snake);
    store::create_ladder(&pool, "snake", &koth_games::GameKind::Snake.into(), &cfg).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    let app = koth_web::http::router(pool.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let config = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("koth-signup-config");
    let _ = std::fs::remove_dir_all(&config);
    let file = config.join("koth/login.json");

    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["signup", "hana", "--server", &server], ""));
    assert!(ok && out.contains("signed up on") && out.contains("as hana"), "{out}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let token = sqlx::query_scalar::<_, i64>("SELECT count(*) FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE u.name = 'hana'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(token, 1);
    // The name is taken now: refused, and the saved login is left alone.
    let saved = std::fs::read(&file).unwrap();
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["signup", "hana", "--server", &server], ""));
    assert!(!ok && out.contains("409"), "{out}");
    assert_eq!(std::fs::read(&file).unwrap(), saved);

    // Starter kits, from the binary: listed, written, not written over.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("koth-starter");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", "snake"], ""));
    assert!(ok && out.contains("python") && out.contains("bot.java"), "{out}");
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", "snake", "go", "--dir", d], ""));
    assert!(ok && out.contains("koth match --game snake"), "{out}");
    let repo = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/starters/snake/bot.go")).unwrap();
    assert_eq!(std::fs::read(dir.join("bot.go")).unwrap(), repo);
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", "snake", "go", "--dir", d], ""));
    assert!(!ok && out.contains("exists") && out.contains("--force"), "{out}");
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", "snake", "cobol"], ""));
    assert!(!ok && out.contains("no starter kit in \"cobol\"; it has: python, c"), "{out}");
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", "chess"], ""));
    assert!(!ok && out.contains("no game \"chess\""), "{out}");
    // The saved login submits it; the server accepts it as it is.
    let bot = dir.join("bot.go");
    let (ok, out) = tokio::task::block_in_place(|| {
        koth(&config, &["submit", "--ladder", "snake", "--name", "first", "--watch", "0", "--timeout-secs", "1", bot.to_str().unwrap()], "")
    });
    // No runner serves this test: the version stays pending, and says so.
    assert!(!ok && out.contains("submitted first (go, main file bot.go)") && out.contains("is still pending after 1 s"), "{out}");
    assert!(out.contains("queued, waiting for a runner"), "a version no runner took says so, not \"compiling\": {out}");

    // With a server (the saved login's), `koth starter` offers only the
    // kits its runners can run, and names the others with why not.
    let why = "no go image is built; a host builds it with `koth languages build go`";
    let report: std::collections::BTreeMap<String, Can> =
        [("python".to_owned(), Can::Ok("image 1a2b".into())), ("go".to_owned(), Can::Err(why.into()))].into_iter().collect();
    runners::report(&pool, "r1", &report).await.unwrap();
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", "snake"], ""));
    let (offered, missing) = out.split_once("not offered").unwrap_or_else(|| panic!("{out}"));
    assert!(ok && offered.contains("bot.py") && !offered.contains("bot.go") && !offered.contains("bot.java"), "{out}");
    assert!(missing.contains(why) && missing.contains("java"), "{out}");
    std::fs::remove_file(dir.join("bot.go")).unwrap();
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", "snake", "go", "--dir", d], ""));
    assert!(!ok && out.contains("cannot run Go") && out.contains(why) && out.contains("it has: python"), "{out}");
    assert!(!dir.join("bot.go").exists());
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", "snake", "python", "--dir", d], ""));
    assert!(ok && out.contains("koth match --game snake"), "{out}");
    let repo = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/starters/snake/bot.py")).unwrap();
    assert_eq!(std::fs::read(dir.join("bot.py")).unwrap(), repo);
    // A game's folder: its example bots are its kits.
    let rpsls = concat!(env!("CARGO_MANIFEST_DIR"), "/external-games/rpsls");
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", rpsls], ""));
    assert!(ok && out.contains("starter kits for rpsls") && out.contains("cycler.py") && out.contains("counter.c"), "{out}");
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", rpsls, "c", "--dir", d], ""));
    assert!(ok && out.contains(&format!("koth match --game {rpsls}")), "{out}");
    let repo = std::fs::read(format!("{rpsls}/bots/counter.c")).unwrap();
    assert_eq!(std::fs::read(dir.join("counter.c")).unwrap(), repo);
    let (ok, out) = tokio::task::block_in_place(|| koth(&config, &["starter", rpsls, "rust"], ""));
    assert!(!ok && out.contains("no starter kit in \"rust\"; it has: python, c"), "{out}");
}
