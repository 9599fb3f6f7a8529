//! The languages a server offers are the ones its runners can run, against
//! a real PostgreSQL: a runner's real report (its host's toolchains, its
//! image store) makes them available; a language no runner can run is
//! marked unavailable with the host's remedy, and an upload in it is
//! refused at once with that remedy (no bot, no version, no compile job);
//! a second runner that can run it opens it; that runner leaving closes it.

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
    let api = Api(koth_scheduler::api::router(pool.clone()));
    let (_, token) = koth_scheduler::api::create_account(&pool, "gopher", false).await.unwrap();
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

    // Refused at once, with the remedy; nothing stored, nothing queued.
    let (st, err) = api.call("POST", &upload, Some(&token), GO_BOT).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    let msg = err["error"].as_str().unwrap();
    assert!(msg.starts_with("Go 1.19 bots cannot be run on this server: no go image is built"), "{msg}");
    assert!(msg.contains("koth languages build go") && msg.contains("GET /api/languages"), "{msg}");
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
}
