//! One account against everyone else, against a real PostgreSQL: its
//! challenges in flight are capped (429 with Retry-After, and the cap frees
//! up as they end); a bot cannot challenge itself; queued matches are
//! cancelled by whoever asked for them, by a host, and with a bot that is
//! disabled or withdrawn or whose owner leaves; a cancelled match is never
//! handed to a runner; its submissions are limited (compiles waiting,
//! versions per hour, bytes per day).

use std::time::Duration;

use axum::http::StatusCode;
use koth_scheduler::api::ApiOptions;
use koth_scheduler::job::Job;
use koth_scheduler::queue::Queue;
use koth_scheduler::store;
use serde_json::{json, Value};

mod in_process;
use in_process::{postgres, Api};

/// The matches a runner would be handed now, in order (each released
/// again, so nothing changes).
async fn claimable(q: &Queue) -> Vec<i64> {
    let mut seen = Vec::new();
    let mut held = Vec::new();
    while let Some(job) = q.claim("look", &["match"], Duration::from_secs(60)).await.unwrap() {
        if let Ok(Job::Match { match_id }) = job.job() {
            seen.push(match_id);
        }
        held.push(job);
    }
    for job in &held {
        q.release(job).await.unwrap();
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn challenges_are_capped_per_account_and_cancelled_by_whoever_may() {
    let Some(pg) = postgres("cancel") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let target = koth_scheduler::format::LadderConfig::default_for(koth_games::GameKind::Target);
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &target).await.unwrap();
    let api = Api(koth_scheduler::api::router_with(pool.clone(), ApiOptions { challenges_in_flight: 2, ..ApiOptions::default() }));
    let q = Queue::new(pool.clone());
    let (_, host) = koth_scheduler::api::create_account(&pool, "host", true).await.unwrap();
    let mut tokens = Vec::new();
    let mut bots = Vec::new();
    let src = std::fs::read_to_string("bots/target/drifter.py").unwrap();
    for name in ["ann", "ben", "cid"] {
        let (_, token) = koth_scheduler::api::create_account(&pool, name, false).await.unwrap();
        let (st, _, r) =
            api.call_full("POST", &format!("/api/ladders/{ladder}/bots/{name}-bot?file=bot.py"), Some(&token), src.clone()).await;
        assert_eq!(st, StatusCode::CREATED, "{r}");
        // Compiled, as a runner would record it; its compile job done.
        let v = r["version"].as_i64().unwrap();
        let mut conn = pool.acquire().await.unwrap();
        store::accept_compiled(&mut conn, v, b"", "sha256:x").await.unwrap();
        tokens.push(token);
        bots.push(r["bot"].as_i64().unwrap());
    }
    while let Some(job) = q.claim("compiler", &["compile"], Duration::from_secs(60)).await.unwrap() {
        let mut tx = pool.begin().await.unwrap();
        Queue::complete(&mut tx, &job).await.unwrap();
        tx.commit().await.unwrap();
    }
    let ch = |bots: &[i64]| json!({"ladder": ladder, "bots": bots}).to_string();

    // A bot cannot play itself.
    let (st, _, err) = api.call_full("POST", "/api/challenges", Some(&tokens[0]), ch(&[bots[0], bots[0]])).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert!(err["error"].as_str().unwrap().contains("itself"), "{err}");

    // Two in flight at once; the third is refused, saying which limit and when to retry.
    let mut mine = Vec::new();
    for other in [bots[1], bots[2]] {
        let (st, _, m) = api.call_full("POST", "/api/challenges", Some(&tokens[0]), ch(&[bots[0], other])).await;
        assert_eq!(st, StatusCode::CREATED, "{m}");
        mine.push(m["match"].as_i64().unwrap());
    }
    let (st, retry, err) = api.call_full("POST", "/api/challenges", Some(&tokens[0]), ch(&[bots[0], bots[1]])).await;
    assert_eq!(st, StatusCode::TOO_MANY_REQUESTS, "{err}");
    assert_eq!(retry.as_deref(), Some("30"));
    assert!(err["error"].as_str().unwrap().contains("2 challenges queued or playing"), "{err}");
    // Another account is not affected, nor is a host.
    let (st, _, theirs) = api.call_full("POST", "/api/challenges", Some(&tokens[1]), ch(&[bots[1], bots[2]])).await;
    assert_eq!(st, StatusCode::CREATED, "{theirs}");
    let theirs = theirs["match"].as_i64().unwrap();
    for _ in 0..3 {
        let (st, _, m) = api.call_full("POST", "/api/challenges", Some(&host), ch(&[bots[2], bots[1]])).await;
        assert_eq!(st, StatusCode::CREATED, "{m}");
    }

    // Cancelling: who asked for it, or a host; not anyone else.
    let cancel = |m: i64| format!("/api/matches/{m}/cancel");
    let (st, _, _) = api.call_full("POST", &cancel(mine[0]), Some(&tokens[1]), String::new()).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, _, _) = api.call_full("POST", &cancel(mine[0]), None, String::new()).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let (st, _, _) = api.call_full("POST", &cancel(999_999), Some(&host), String::new()).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, _, done) = api.call_full("POST", &cancel(mine[0]), Some(&tokens[0]), String::new()).await;
    assert_eq!(st, StatusCode::OK, "{done}");
    let (_, _, m) = api.call_full("GET", &format!("/api/matches/{}", mine[0]), None, String::new()).await;
    assert_eq!(m["state"], "cancelled", "{m}");
    let (st, _, err) = api.call_full("POST", &cancel(mine[0]), Some(&tokens[0]), String::new()).await;
    assert_eq!(st, StatusCode::CONFLICT, "cancelled once: {err}");
    // The cap frees up as a challenge ends.
    let (st, _, m) = api.call_full("POST", "/api/challenges", Some(&tokens[0]), ch(&[bots[0], bots[1]])).await;
    assert_eq!(st, StatusCode::CREATED, "{m}");
    mine.push(m["match"].as_i64().unwrap());
    assert!(!claimable(&q).await.contains(&mine[0]), "a cancelled match is never handed to a runner");

    // A match a runner holds is played to its end: too late to cancel.
    let job = loop {
        let job = q.claim("runner", &["match"], Duration::from_secs(60)).await.unwrap().unwrap();
        if job.job() == Ok(Job::Match { match_id: mine[1] }) {
            break job;
        }
    };
    let (st, _, err) = api.call_full("POST", &cancel(mine[1]), Some(&host), String::new()).await;
    assert_eq!(st, StatusCode::CONFLICT, "{err}");
    assert!(err["error"].as_str().unwrap().contains("a runner is playing it"), "{err}");
    q.release(&job).await.unwrap();

    // Disabling a bot cancels its queued matches; the others stay.
    let (st, _, _) = api.call_full("POST", &format!("/api/bots/{}/disable", bots[2]), Some(&host), r#"{"reason": "cheats"}"#).await;
    assert_eq!(st, StatusCode::OK);
    let (_, _, m) = api.call_full("GET", &format!("/api/matches/{theirs}"), None, String::new()).await;
    assert_eq!(m["state"], "cancelled", "{m}");
    let left = claimable(&q).await;
    assert_eq!(left, vec![mine[2]], "only the match without the disabled bot is left");

    // Its owner leaving cancels the matches of their bots and their challenges.
    let (st, _, _) = api.call_full("DELETE", "/api/me", Some(&tokens[0]), String::new()).await;
    assert_eq!(st, StatusCode::OK);
    assert!(claimable(&q).await.is_empty());
    let (_, _, m) = api.call_full("GET", &format!("/api/matches/{}", mine[2]), None, String::new()).await;
    assert_eq!(m["state"], "cancelled", "{m}");
}

/// Submissions: compiles waiting, versions per hour and bytes per day, each
/// refused with 429, the limit named and when it frees up; a host is not
/// limited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submissions_are_limited_per_account_with_the_reset_said() {
    let Some(pg) = postgres("quotas-submit") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 4).await.unwrap();
    let target = koth_scheduler::format::LadderConfig::default_for(koth_games::GameKind::Target);
    let ladder = store::create_ladder(&pool, "target", &koth_games::GameKind::Target.into(), &target).await.unwrap();
    let src = std::fs::read_to_string("bots/target/drifter.py").unwrap();
    let options = ApiOptions { submissions_per_hour: 3, compiles_queued: 2, upload_bytes_per_day: 1 << 30, ..ApiOptions::default() };
    let api = Api(koth_scheduler::api::router_with(pool.clone(), options));
    let (_, token) = koth_scheduler::api::create_account(&pool, "dana", false).await.unwrap();
    let submit = |name: &str| format!("/api/ladders/{ladder}/bots/{name}?file=bot.py");
    let compiled = |v: &Value| {
        let (pool, v) = (pool.clone(), v["version"].as_i64().unwrap());
        async move {
            let mut conn = pool.acquire().await.unwrap();
            store::accept_compiled(&mut conn, v, b"", "sha256:x").await.unwrap();
        }
    };

    // Two compiles waiting: the third upload waits for one of them.
    let (st, _, a) = api.call_full("POST", &submit("a"), Some(&token), src.clone()).await;
    assert_eq!(st, StatusCode::CREATED, "{a}");
    let (st, _, b) = api.call_full("POST", &submit("a"), Some(&token), src.clone()).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{b}");
    let (st, retry, err) = api.call_full("POST", &submit("a"), Some(&token), src.clone()).await;
    assert_eq!(st, StatusCode::TOO_MANY_REQUESTS, "{err}");
    assert!(err["error"].as_str().unwrap().contains("waiting for their compile"), "{err}");
    assert_eq!(retry.as_deref(), Some("10"));
    compiled(&a).await;
    compiled(&b).await;
    // Three an hour: the fourth is refused, with the wait until the first is an hour old.
    let (st, _, c) = api.call_full("POST", &submit("b"), Some(&token), src.clone()).await;
    assert_eq!(st, StatusCode::CREATED, "{c}");
    compiled(&c).await;
    let (st, retry, err) = api.call_full("POST", &submit("b"), Some(&token), src.clone()).await;
    assert_eq!(st, StatusCode::TOO_MANY_REQUESTS, "{err}");
    assert!(err["error"].as_str().unwrap().contains("3 versions in the last hour"), "{err}");
    let retry: u64 = retry.unwrap().parse().unwrap();
    assert!((3500..=3600).contains(&retry), "Retry-After {retry}");
    // Nothing of a refused upload was stored.
    let (_, _, info) = api.call_full("GET", &format!("/api/bots/{}", c["bot"]), None, String::new()).await;
    assert_eq!(info["versions"].as_array().map(Vec::len), Some(1), "{info}");

    // Bytes per day: two uploads fit, the third does not.
    // (Counted as stored: the checked tar of the sources.)
    let stored =
        koth_runner::submission::Submission::from_upload("bot.py", src.as_bytes(), &Default::default()).unwrap().source_tar().len();
    let options = ApiOptions { upload_bytes_per_day: 2 * stored as u64 + 10, ..ApiOptions::default() };
    let api = Api(koth_scheduler::api::router_with(pool.clone(), options));
    let (_, other) = koth_scheduler::api::create_account(&pool, "eli", false).await.unwrap();
    for name in ["c", "d"] {
        let (st, _, r) = api.call_full("POST", &submit(name), Some(&other), src.clone()).await;
        assert_eq!(st, StatusCode::CREATED, "{r}");
    }
    let (st, retry, err) = api.call_full("POST", &submit("e"), Some(&other), src.clone()).await;
    assert_eq!(st, StatusCode::TOO_MANY_REQUESTS, "{err}");
    assert!(err["error"].as_str().unwrap().contains("a day"), "{err}");
    assert!(retry.unwrap().parse::<u64>().unwrap() > 86_000);

    // A host is not limited.
    let (_, host) = koth_scheduler::api::create_account(&pool, "host", true).await.unwrap();
    for name in ["h1", "h2", "h3", "h4"] {
        let (st, _, r) = api.call_full("POST", &submit(name), Some(&host), src.clone()).await;
        assert_eq!(st, StatusCode::CREATED, "{r}");
    }
}
