//! One account against everyone else, against a real PostgreSQL: its
//! challenges in flight are capped (429 with Retry-After, and the cap frees
//! up as they end); a bot cannot challenge itself; queued matches are
//! cancelled by whoever asked for them, by a host, and with a bot that is
//! disabled or withdrawn or whose owner leaves; a cancelled match is never
//! handed to a runner; its submissions are limited (compiles waiting,
//! versions per hour, bytes per day).

use std::time::Duration;

use axum::http::StatusCode;
use koth_scheduler::db::queue::Queue;
use koth_scheduler::db::store;
use koth_scheduler::job::Job;
use koth_web::http::ApiOptions;
use serde_json::{json, Value};

mod in_process;
use in_process::{postgres, postgres_with_target_ladder, Api};

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
    let Some((_pg, pool, ladder)) = postgres_with_target_ladder("cancel", 4).await else { return };
    let api = Api(koth_web::http::router_with(pool.clone(), ApiOptions { challenges_in_flight: 2, ..ApiOptions::default() }));
    let q = Queue::new(pool.clone());
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let mut tokens = Vec::new();
    let mut bots = Vec::new();
    let src = std::fs::read_to_string("bots/target/drifter.py").unwrap();
    for name in ["ann", "ben", "cid"] {
        let (_, token) = koth_web::http::create_account(&pool, name, false).await.unwrap();
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
    let Some((_pg, pool, ladder)) = postgres_with_target_ladder("quotas-submit", 4).await else { return };
    let src = std::fs::read_to_string("bots/target/drifter.py").unwrap();
    let options = ApiOptions { submissions_per_hour: 3, compiles_queued: 2, upload_bytes_per_day: 1 << 30, ..ApiOptions::default() };
    let api = Api(koth_web::http::router_with(pool.clone(), options));
    let (_, token) = koth_web::http::create_account(&pool, "dana", false).await.unwrap();
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
    let api = Api(koth_web::http::router_with(pool.clone(), options));
    let (_, other) = koth_web::http::create_account(&pool, "eli", false).await.unwrap();
    for name in ["c", "d"] {
        let (st, _, r) = api.call_full("POST", &submit(name), Some(&other), src.clone()).await;
        assert_eq!(st, StatusCode::CREATED, "{r}");
    }
    let (st, retry, err) = api.call_full("POST", &submit("e"), Some(&other), src.clone()).await;
    assert_eq!(st, StatusCode::TOO_MANY_REQUESTS, "{err}");
    assert!(err["error"].as_str().unwrap().contains("a day"), "{err}");
    assert!(retry.unwrap().parse::<u64>().unwrap() > 86_000);

    // A host is not limited.
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    for name in ["h1", "h2", "h3", "h4"] {
        let (st, _, r) = api.call_full("POST", &submit(name), Some(&host), src.clone()).await;
        assert_eq!(st, StatusCode::CREATED, "{r}");
    }
}

/// Status codes of requests made all at once, counted.
fn tally(statuses: &[StatusCode]) -> std::collections::BTreeMap<u16, usize> {
    let mut t = std::collections::BTreeMap::new();
    for s in statuses {
        *t.entry(s.as_u16()).or_insert(0) += 1;
    }
    t
}

/// `n` copies of one request, sent at once (each on its own task), from
/// `peer(i)`; their statuses and bodies.
async fn at_once(
    router: &axum::Router,
    n: usize,
    request: impl Fn(usize) -> (Option<std::net::SocketAddr>, &'static str, String, Option<String>, Vec<u8>),
) -> Vec<(StatusCode, Option<String>, Value)> {
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(n));
    let mut tasks = Vec::new();
    for i in 0..n {
        let (peer, method, uri, token, body) = request(i);
        let (api, start) = (Api(router.clone()), start.clone());
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            api.call_from(peer, method, &uri, token.as_deref(), body).await
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// A Python bot whose source is `size` bytes that do not compress (a
/// comment of random hex), so each upload counts about `size` bytes.
fn big_bot(size: usize, seed: u64) -> Vec<u8> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut src = std::fs::read("bots/target/drifter.py").unwrap();
    src.extend_from_slice(b"\n# ");
    src.extend((0..size).map(|_| b"0123456789abcdef"[rng.gen_range(0..16)]));
    src.push(b'\n');
    src
}

/// The attacks of issue 33, each sent all at once: every limit admits
/// exactly its number, because it is counted after the account's lock in
/// the transaction that writes what it limits (read before the insert,
/// 24 of 24 submissions passed a limit of 8, and 7 of 24 challenges a
/// limit of 3).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn limits_admit_exactly_their_number_when_requests_come_at_once() {
    let Some((_pg, pool, ladder)) = postgres_with_target_ladder("quotas-race", 32).await else { return };
    let src = std::fs::read("bots/target/drifter.py").unwrap();
    let submit = move |name: &str| format!("/api/ladders/{ladder}/bots/{name}?file=bot.py");
    let ok = |r: &[(StatusCode, Option<String>, Value)]| r.iter().filter(|(s, _, _)| s.is_success()).count();
    let refused_429 = |r: &[(StatusCode, Option<String>, Value)], text: &str| {
        for (st, retry, body) in r.iter().filter(|(s, _, _)| !s.is_success()) {
            assert_eq!(*st, StatusCode::TOO_MANY_REQUESTS, "{body}");
            assert!(body["error"].as_str().unwrap().contains(text), "{body} lacks {text:?}");
            assert!(retry.as_deref().is_some_and(|r| r.parse::<u64>().is_ok_and(|s| s >= 1)), "Retry-After {retry:?}");
        }
    };
    let versions_of = |owner: i64| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM bot_versions v JOIN bots b ON b.id = v.bot_id WHERE b.owner_id = $1")
                .bind(owner)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };

    // Compiles waiting: 8 of 24, to new bots and to one bot alike.
    let options = ApiOptions { compiles_queued: 8, submissions_per_hour: 1000, upload_bytes_per_day: 1 << 30, ..ApiOptions::default() };
    let router = koth_web::http::router_with(pool.clone(), options);
    let (ann, token) = koth_web::http::create_account(&pool, "ann", false).await.unwrap();
    let r = at_once(&router, 24, |i| {
        let name = if i % 2 == 0 { format!("a{i}") } else { "same".into() };
        (None, "POST", submit(&name), Some(token.clone()), src.clone())
    })
    .await;
    println!("24 submissions at once, 8 compiles may wait: {:?}", tally(&r.iter().map(|x| x.0).collect::<Vec<_>>()));
    assert_eq!(ok(&r), 8, "{r:?}");
    refused_429(&r, "waiting for their compile");
    assert_eq!(versions_of(ann).await, 8, "the refused stored nothing");
    let same: Vec<i32> =
        sqlx::query_scalar("SELECT v.number FROM bot_versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = 'same' ORDER BY 1")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(same, (1..=same.len() as i32).collect::<Vec<_>>(), "one bot's versions are numbered 1, 2, … with none twice");

    // Versions per hour: 5 of 24.
    let options = ApiOptions { compiles_queued: 1000, submissions_per_hour: 5, upload_bytes_per_day: 1 << 30, ..ApiOptions::default() };
    let router = koth_web::http::router_with(pool.clone(), options);
    let (ben, token) = koth_web::http::create_account(&pool, "ben", false).await.unwrap();
    let r = at_once(&router, 24, |i| (None, "POST", submit(&format!("b{i}")), Some(token.clone()), src.clone())).await;
    assert_eq!(ok(&r), 5, "{r:?}");
    refused_429(&r, "5 versions in the last hour");
    assert_eq!(versions_of(ben).await, 5);

    // Bytes a day: uploads of 256 KiB that do not compress, 3 fit in the budget.
    let uploads: Vec<Vec<u8>> = (0..20).map(|i| big_bot(256 << 10, i)).collect();
    let stored: Vec<usize> = uploads
        .iter()
        .map(|u| koth_runner::submission::Submission::from_upload("bot.py", u, &Default::default()).unwrap().source_tar().len())
        .collect();
    let largest = *stored.iter().max().unwrap() as u64;
    let smallest = *stored.iter().min().unwrap() as u64;
    assert!(4 * smallest > 3 * largest + largest / 2, "the uploads are about one size: {stored:?}");
    let options = ApiOptions {
        compiles_queued: 1000,
        submissions_per_hour: 1000,
        upload_bytes_per_day: 3 * largest + largest / 2,
        ..ApiOptions::default()
    };
    let router = koth_web::http::router_with(pool.clone(), options);
    let (cid, token) = koth_web::http::create_account(&pool, "cid", false).await.unwrap();
    let r = at_once(&router, 20, |i| (None, "POST", submit(&format!("c{i}")), Some(token.clone()), uploads[i].clone())).await;
    assert_eq!(ok(&r), 3, "{r:?}");
    refused_429(&r, "a day");
    assert_eq!(versions_of(cid).await, 3);

    // Challenges in flight: 3 of 24.
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let router = koth_web::http::router_with(pool.clone(), ApiOptions { challenges_in_flight: 3, ..ApiOptions::default() });
    let api = Api(router.clone());
    let mut bots = Vec::new();
    for (name, tok) in [("dee", None), ("eve", None)] {
        let (_, t) = koth_web::http::create_account(&pool, name, false).await.unwrap();
        let t: String = tok.unwrap_or(t);
        let (st, _, r) = api.call_full("POST", &submit(&format!("{name}-bot")), Some(&t), src.clone()).await;
        assert_eq!(st, StatusCode::CREATED, "{r}");
        let mut conn = pool.acquire().await.unwrap();
        store::accept_compiled(&mut conn, r["version"].as_i64().unwrap(), b"", "sha256:x").await.unwrap();
        bots.push((r["bot"].as_i64().unwrap(), t));
    }
    let (dee_bot, dee) = bots[0].clone();
    let eve_bot = bots[1].0;
    let body = json!({"ladder": ladder, "bots": [dee_bot, eve_bot]}).to_string().into_bytes();
    let r = at_once(&router, 24, |_| (None, "POST", "/api/challenges".into(), Some(dee.clone()), body.clone())).await;
    assert_eq!(ok(&r), 3, "{r:?}");
    refused_429(&r, "3 challenges queued or playing");
    let queued: i64 = sqlx::query_scalar("SELECT count(*) FROM matches WHERE requested_by = (SELECT id FROM users WHERE name = 'dee')")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(queued, 3);
    // A host is not limited, at once either.
    let r = at_once(&router, 6, |_| (None, "POST", "/api/challenges".into(), Some(host.clone()), body.clone())).await;
    assert_eq!(ok(&r), 6, "{r:?}");
}

/// The deadline is checked when the version is committed: uploads sent
/// before the host closes submissions, and still being checked when they
/// close, are refused, and no version is stored later than the deadline
/// (checked before the upload was read, a version was stored 1.9 s after it).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_version_is_stored_after_the_deadline() {
    let Some((_pg, pool, ladder)) = postgres_with_target_ladder("quotas-deadline", 32).await else { return };
    let router = koth_web::http::router_with(
        pool.clone(),
        ApiOptions { compiles_queued: 1000, submissions_per_hour: 1000, upload_bytes_per_day: 1 << 40, ..ApiOptions::default() },
    );
    let (_, host) = koth_web::http::create_account(&pool, "host", true).await.unwrap();
    let (_, token) = koth_web::http::create_account(&pool, "late", false).await.unwrap();
    // Uploads that take a while to check (a few MiB each), sent in waves
    // before, while and after the host closes submissions.
    let uploads: Vec<Vec<u8>> = (0..4).map(|i| big_bot(4 << 20, i)).collect();
    let mut tasks = Vec::new();
    for i in 0..24 {
        let (api, token, body) = (Api(router.clone()), token.clone(), uploads[i % uploads.len()].clone());
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(25 * i as u64)).await;
            api.call_full("POST", &format!("/api/ladders/{ladder}/bots/late{i}?file=bot.py"), Some(&token), body).await
        }));
    }
    tokio::time::sleep(Duration::from_millis(250)).await;
    let (st, closed) =
        Api(router.clone()).call("POST", &format!("/api/ladders/{ladder}/deadline"), Some(&host), r#"{"in_seconds": 0}"#).await;
    assert_eq!(st, StatusCode::OK, "{closed}");
    let mut statuses = Vec::new();
    for t in tasks {
        let (st, _, body) = t.await.unwrap();
        if !st.is_success() {
            assert_eq!(st, StatusCode::FORBIDDEN, "{body}");
            assert!(body["error"].as_str().unwrap().contains("closed at its deadline"), "{body}");
        }
        statuses.push(st);
    }
    println!("24 uploads around the deadline: {:?}", tally(&statuses));
    let late: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM bot_versions v JOIN bots b ON b.id = v.bot_id JOIN ladders l ON l.id = b.ladder_id \
         WHERE l.id = $1 AND v.created_at >= l.deadline",
    )
    .bind(ladder)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(late, 0, "versions stored at or after the deadline");
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM bot_versions v JOIN bots b ON b.id = v.bot_id WHERE b.ladder_id = $1")
        .bind(ladder)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(stored as usize, statuses.iter().filter(|s| s.is_success()).count(), "every accepted version is stored, nothing else");
    assert!(statuses.contains(&StatusCode::FORBIDDEN), "the last uploads come after the deadline: {statuses:?}");
}

/// Sign-ups: per address and in all, each admitting exactly its number when
/// the requests come at once (76 accounts a second were made with none).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn signups_are_limited_per_address_and_in_all() {
    let Some(pg) = postgres("quotas-signup") else { return };
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 32).await.unwrap();
    let signups = koth_ladder::quota::SignupLimits { per_address_per_hour: 5, per_hour: 12 };
    let router = koth_web::http::router_with(pool.clone(), ApiOptions { signups, ..ApiOptions::default() });
    let peer = |a: [u8; 4]| Some(std::net::SocketAddr::from((a, 40000)));
    let r = at_once(&router, 20, |i| {
        (peer([10, 0, 0, 1]), "POST", "/api/users".into(), None, json!({"name": format!("a{i}")}).to_string().into_bytes())
    })
    .await;
    println!("20 sign-ups from one address: {:?}", tally(&r.iter().map(|x| x.0).collect::<Vec<_>>()));
    assert_eq!(r.iter().filter(|x| x.0 == StatusCode::CREATED).count(), 5, "{r:?}");
    for (st, retry, body) in r.iter().filter(|x| x.0 != StatusCode::CREATED) {
        assert_eq!(*st, StatusCode::TOO_MANY_REQUESTS, "{body}");
        assert!(body["error"].as_str().unwrap().contains("from your address"), "{body}");
        let retry: u64 = retry.as_deref().unwrap().parse().unwrap();
        assert!((3500..=3600).contains(&retry), "Retry-After {retry}");
    }
    // A new account's token works.
    let (st, me) =
        Api(router.clone()).call("GET", "/api/me", r.iter().find(|x| x.0 == StatusCode::CREATED).unwrap().2["token"].as_str(), "").await;
    assert_eq!(st, StatusCode::OK, "{me}");
    // From 20 other addresses: 7 more, then the server's hourly limit.
    let r = at_once(&router, 20, |i| {
        (peer([10, 0, 1, i as u8]), "POST", "/api/users".into(), None, json!({"name": format!("b{i}")}).to_string().into_bytes())
    })
    .await;
    assert_eq!(r.iter().filter(|x| x.0 == StatusCode::CREATED).count(), 7, "{r:?}");
    for (st, _, body) in r.iter().filter(|x| x.0 != StatusCode::CREATED) {
        assert_eq!(*st, StatusCode::TOO_MANY_REQUESTS, "{body}");
        assert!(body["error"].as_str().unwrap().contains("12 accounts in the last hour"), "{body}");
    }
    let made: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&pool).await.unwrap();
    assert_eq!(made, 12);
}
