//! The languages a server offers are the ones its runners can run, against
//! a real PostgreSQL: a runner's real report (its host's toolchains, its
//! image store) makes them available; a language no runner can run is
//! marked unavailable with the host's remedy, and an upload in it is
//! refused at once with that remedy (no bot, no version, no compile job);
//! a second runner that can run it opens it; that runner leaving closes it.
//! Starter kits are offered only in the languages the runners can run (the
//! game's page, `GET /api/games`, the download), koth's own games' and an
//! added game's (its example bots); the others are named with why not.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use koth_runner::bot::{Builder, ImagePolicy};
use koth_scheduler::db::runners::{self, Can};
use koth_scheduler::db::store;
use serde_json::Value;

mod in_process;
use in_process::{postgres, Api};

const GO_BOT: &str = "package main\nfunc main() {}\n";

fn lang<'a>(langs: &'a Value, name: &str) -> &'a Value {
    langs.as_array().unwrap().iter().find(|l| l["name"] == name).unwrap_or_else(|| panic!("{name} not in {langs}"))
}

async fn count(pool: &sqlx::PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_languages_a_runner_can_run_are_offered_and_accepted() {
    let Some(pg) = postgres("languages-offered") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let cfg = koth_ladder::format::LadderConfig::default_for(koth_games::GameKind::Target);
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &cfg).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (_, token) = koth_web::http::create_account(&pool, "gopher", false).await.unwrap();
    let upload = format!("/api/ladders/{ladder}/bots/gobot?file=bot.go");

    // No runner has reported: nothing known, nothing refused.
    let (_, langs) = api.call("GET", "/api/languages", None, Vec::new()).await;
    assert_eq!(langs.as_array().unwrap().iter().filter(|l| l["available"] == false).count(), 0, "{langs}");

    // A real runner's report: this host's toolchains, an empty image store.
    let store_dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("languages-offered-images");
    std::fs::create_dir_all(&store_dir).unwrap();
    let builder = Builder {
        policy: ImagePolicy::Auto,
        store: koth_runner::image::ImageStore::open(&store_dir),
        ..Builder::host(koth_sandbox::SandboxConfig::default())
    };
    koth_scheduler::worker::report_languages(&pool, "real-runner", &builder).await;
    let (_, langs) = api.call("GET", "/api/languages", None, Vec::new()).await;
    let python = lang(&langs, "python");
    assert_eq!(python["available"], true, "this host runs Python bots: {python}");
    assert!(python["runs_with"].as_str().unwrap().starts_with("host toolchain: Python 3"), "{python}");
    assert_eq!(python["unavailable"], Value::Null);
    runners::forget(&pool, "real-runner").await.unwrap();

    // A runner that cannot run Go, in its own words.
    let why = "no go image is built and this host has no Go 1.19 toolchain (/usr/bin/go: No such file or directory); \
               a host builds its image with `koth languages build go`";
    let no_go: BTreeMap<String, Can> =
        [("python".to_owned(), Can::Ok("image 1a2b".into())), ("go".to_owned(), Can::Err(why.into()))].into_iter().collect();
    runners::report(&pool, "r1", &no_go).await.unwrap();
    let (_, langs) = api.call("GET", "/api/languages", None, Vec::new()).await;
    let go = lang(&langs, "go");
    assert_eq!((go["available"].as_bool(), go["unavailable"].as_str()), (Some(false), Some(why)), "{go}");
    assert_eq!(lang(&langs, "python")["available"], true);
    // A language the runner did not mention (an older runner) is not offered either.
    assert!(lang(&langs, "rust")["unavailable"].as_str().unwrap().contains("no runner of this server reported"), "{langs}");

    // Starter kits only in what the runners can run: the game's page and
    // the API offer Python and name Go, with why; Go's download is refused.
    let (_, game) = api.call("GET", "/api/games/target", None, Vec::new()).await;
    let kits = game["starters"].as_array().unwrap();
    let kit = |l: &str| kits.iter().find(|k| k["language"] == l).unwrap_or_else(|| panic!("{l} in {kits:?}"));
    assert_eq!((kit("python")["available"].as_bool(), &kit("python")["unavailable"]), (Some(true), &Value::Null));
    assert_eq!((kit("go")["available"].as_bool(), kit("go")["unavailable"].as_str()), (Some(false), Some(why)));
    assert_eq!(kits.iter().filter(|k| k["available"] == true).count(), 1, "only Python is offered: {kits:?}");
    let (st, page) = api.call("GET", "/games/target", None, Vec::new()).await;
    let page = page.as_str().unwrap().to_owned();
    assert_eq!(st, StatusCode::OK);
    assert!(page.contains("download=\"bot.py\" data-language=\"python\""), "{page}");
    assert!(!page.contains("download=\"bot.go\"") && !page.contains("download=\"bot.rs\""), "no Go or Rust kit offered: {page}");
    let unavailable = &page[page.find("id=\"kits-unavailable\"").expect("the kits not offered, named")..];
    assert!(unavailable.contains("<li data-language=\"go\">") && unavailable.contains("no go image is built"), "{page}");
    let (st, err) = api.call("GET", "/api/games/target/starters/go", None, Vec::new()).await;
    let msg = err["error"].as_str().unwrap_or_default();
    assert_eq!(st, StatusCode::NOT_FOUND, "{err}");
    assert!(msg.starts_with("this server cannot run Go") && msg.ends_with("it offers: python"), "{msg}");
    let (st, source) = api.call("GET", "/api/games/target/starters/python", None, Vec::new()).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(source.as_str().unwrap(), koth_runner::starters::find("target", "python").unwrap().source);

    // Refused at once, with the remedy; nothing stored, nothing queued.
    let (st, err) = api.call("POST", &upload, Some(&token), GO_BOT).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    let msg = err["error"].as_str().unwrap();
    assert!(msg.starts_with("Go 1.19 bots cannot be run on this server: no go image is built"), "{msg}");
    // In words, not API routes: the languages it does run.
    assert!(msg.contains("koth languages build go") && msg.ends_with("Submit in a language it runs: python"), "{msg}");
    assert!(!msg.contains("/api/"), "{msg}");
    assert_eq!(count(&pool, "SELECT count(*) FROM bots").await, 0);
    assert_eq!(count(&pool, "SELECT count(*) FROM jobs").await, 0);

    // A second runner with Go opens it; when it leaves, Go is closed again.
    let go_too: BTreeMap<String, Can> = [("go".to_owned(), Can::Ok("host toolchain: go version go1.19.8".into()))].into_iter().collect();
    runners::report(&pool, "r2", &go_too).await.unwrap();
    let (_, langs) = api.call("GET", "/api/languages", None, Vec::new()).await;
    assert_eq!(lang(&langs, "go")["runs_with"], "host toolchain: go version go1.19.8");
    let (st, r) = api.call("POST", &upload, Some(&token), GO_BOT).await;
    assert_eq!((st, r["language"].as_str()), (StatusCode::CREATED, Some("go")), "{r}");
    runners::forget(&pool, "r2").await.unwrap();
    let (st, _) = api.call("POST", &upload, Some(&token), GO_BOT).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY);

    // A runner long gone (not seen for over an hour) does not count.
    runners::report(&pool, "r2", &go_too).await.unwrap();
    sqlx::query("UPDATE runners SET seen_at = now() - interval '2 hours' WHERE name = 'r2'").execute(&pool).await.unwrap();
    assert_eq!(api.call("POST", &upload, Some(&token), GO_BOT).await.0, StatusCode::UNPROCESSABLE_ENTITY);
    // A hand-edited row koth cannot read counts as no report, not a 500.
    sqlx::query("UPDATE runners SET languages = '[1, 2]', seen_at = now() WHERE name = 'r2'").execute(&pool).await.unwrap();
    assert_eq!(api.call("GET", "/api/languages", None, Vec::new()).await.0, StatusCode::OK);

    // An added game's kits are its example bots (rpsls has a Python and a
    // C one): offered as the runners (still r1: Python, not Go) can run them.
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("external-games/rpsls");
    let package = koth_runner::game::GamePackage::from_folder(&folder, &Default::default()).unwrap();
    let (host, _) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let manifest = serde_json::to_value(&package.manifest).unwrap();
    koth_scheduler::db::games::add(&pool, "rpsls", &manifest, &package.to_tar(), &package.source_hash(), host).await.unwrap();
    let (_, game) = api.call("GET", "/api/games/rpsls", None, Vec::new()).await;
    let kits: Vec<(String, String, bool)> = game["starters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["file"].as_str().unwrap().into(), k["language"].as_str().unwrap().into(), k["available"].as_bool().unwrap()))
        .collect();
    assert_eq!(kits, [("cycler.py".into(), "python".into(), true), ("counter.c".into(), "c".into(), false)], "{game}");
    let (st, source) = api.call("GET", "/api/games/rpsls/starters/python", None, Vec::new()).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(source.as_str().unwrap(), std::fs::read_to_string(folder.join("bots/cycler.py")).unwrap());
    let (st, err) = api.call("GET", "/api/games/rpsls/starters/c", None, Vec::new()).await;
    assert!(st == StatusCode::NOT_FOUND && err["error"].as_str().unwrap().contains("no runner of this server reported"), "{err}");
    let (_, all) = api.call("GET", "/api/games", None, Vec::new()).await;
    let listed = all.as_array().unwrap().iter().find(|g| g["name"] == "rpsls").unwrap();
    assert_eq!(listed["starters"], game["starters"]);
}
