//! Bots' data carried from match to match on a server: a real runner (an
//! in-process worker, real sandboxes, the host's Python) against a real
//! PostgreSQL, on a Slime ladder with `bot_data` on.
//!
//! * A bot that counts its matches in a file sees 1, 2, 3 over three
//!   matches; each match records the snapshot each seat started from.
//! * A bot writing past its quota gets a clear word on its seat and loses
//!   nothing it had: its next match starts from its last good snapshot.
//! * A bot that plants symbolic links (to /etc/passwd, to the box's root,
//!   to the folder above) finds none of them in its next match.
//! * A rerun of the second match (`koth replay rerun --data`) starts from
//!   the snapshot that match recorded and reproduces every turn.
//! * Two matches of one version recorded at once: the write-back is a
//!   compare-and-swap on the snapshot both started from; the first to
//!   commit wins, the other is discarded, saying so.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use koth_ladder::format::LadderConfig;
use koth_runner::bot::Builder;
use koth_runner::storage::Snapshot;
use koth_sandbox::SandboxConfig;
use koth_scheduler::db::bot_data::{self, SeatData, LOST_RACE};
use koth_scheduler::db::store;
use koth_scheduler::worker::{self, WorkerConfig};
use serde_json::{json, Value};

mod in_process;
use in_process::{postgres, Api};

/// The counting Slime bot (`tests/bots/slime_counter.py`) in a mode:
/// `"count"`, `"hoard"` or `"plant"` (what each does: the bot's header).
fn bot(mode: &str) -> String {
    let source = include_str!("bots/slime_counter.py");
    assert!(source.contains("MODE = \"count\"\n"));
    source.replace("MODE = \"count\"\n", &format!("MODE = {mode:?}\n"))
}

fn sandbox() -> SandboxConfig {
    koth_testkit::bot_sandbox("bot-data", 61000, 256 << 20, 100)
}

/// Submit `source` as a new version of `name`, which must become ready;
/// the bot's id.
async fn submit(api: &Api, token: &str, ladder: i64, name: &str, source: &str) -> i64 {
    let (made, log) = api.submit_and_settle(token, ladder, name, source).await;
    assert_eq!(log["status"], "ready", "{log}");
    made["bot"].as_i64().unwrap()
}

/// Play a challenge between `bots` and wait for it to finish.
async fn play(api: &Api, pool: &sqlx::PgPool, ladder: i64, bots: &[i64], author: i64) -> (i64, Value) {
    let m = store::create_challenge(pool, ladder, bots, 3, author, None).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, info) = api.call("GET", &format!("/api/matches/{m}"), None, Vec::new()).await;
        if info["state"] == "finished" {
            return (m, info);
        }
        assert_eq!(info["state"], "queued", "{info}");
        assert!(Instant::now() < deadline, "match {m} still queued after 120 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn koth(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/bot-data-cli")
        .env("KOTH_SANDBOX_UID_BASE", "61500")
        .env("KOTH_CACHE", PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bot-data-cache"))
        .output()
        .expect("running koth")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ladders_bots_keep_their_data_from_match_to_match() {
    let Some(pg) = postgres("bot-data") else { return };
    if koth_sandbox::Sandbox::create(sandbox()).is_err() {
        assert!(std::env::var("CI").is_err(), "CI=true and the sandbox cannot run");
        return;
    }
    let pool = koth_scheduler::db::connect_and_migrate(&pg.url(), 6).await.unwrap();
    let settings = LadderConfig::parse(
        "rated",
        &json!({"seats": 4, "max_turns": 4, "skip_validation": true, "bot_data": true, "bot_data_max_bytes": 4096, "bot_data_max_files": 8}),
    )
    .unwrap();
    let ladder = store::create_ladder(&pool, "slime", &koth_games::GameKind::Slime.into(), &settings).await.unwrap();
    let api = Api(koth_web::http::router(pool.clone()));
    let (author, token) = koth_web::http::create_account(&pool, "author", false).await.unwrap();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let cfg = WorkerConfig::new("bot-data-runner".into(), Builder::host(sandbox()), &sandbox(), 256 << 20);
    let runner = tokio::spawn(worker::run(pool.clone(), cfg, stopped));
    let mut bots = Vec::new();
    for (name, mode) in [("counter", "count"), ("hoarder", "hoard"), ("planter", "plant"), ("plain", "count")] {
        bots.push(submit(&api, &token, ladder, name, &bot(mode)).await);
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bot-data");
    std::fs::create_dir_all(&dir).unwrap();
    let mut matches = Vec::new();
    for n in 1..=3 {
        let (m, info) = play(&api, &pool, ladder, &bots, author).await;
        let seats = info["seats"].as_array().unwrap();
        let (_, replay) = api.call("GET", &format!("/api/matches/{m}/replay"), None, Vec::new()).await;
        // What each seat started from is recorded, on the match and in its replay.
        let mut records = Vec::new();
        for s in 0..4 {
            let r = bot_data::seat_record(&pool, m, s).await.unwrap().unwrap();
            assert_eq!(replay["seats"][s as usize]["data"]["started_from"].as_str(), r.from.as_deref(), "{}", replay["seats"][s as usize]);
            records.push(r);
        }
        let logs: Vec<String> = {
            let mut v = Vec::new();
            for s in 1..=4 {
                let (_, log) = api.call("GET", &format!("/api/matches/{m}/stderr/{}", s - 1), Some(&token), Vec::new()).await;
                v.push(log["stderr"].as_str().unwrap_or_else(|| panic!("{log}")).to_owned());
            }
            v
        };
        let seat_of = |bot: i64| seats.iter().position(|s| s["bot"].as_i64() == Some(bot)).unwrap_or_else(|| panic!("{info}"));
        let (counter, hoarder, planter) = (seat_of(bots[0]), seat_of(bots[1]), seat_of(bots[2]));
        // The counter: 1, 2, 3.
        assert!(logs[counter].contains(&format!("match {n}\n")), "match {n}: {}", logs[counter]);
        assert!(records[counter].written.is_some() && records[counter].note.is_none(), "{:?}", records[counter]);
        // The hoarder: 1 kept; from its second match on over its quota, so
        // it starts every later match from its first match's snapshot.
        let hoard = &records[hoarder];
        if n == 1 {
            assert!(hoard.written.is_some(), "{hoard:?}");
        } else {
            assert!(logs[hoarder].contains("match 2\n"), "it lost nothing it had: {}", logs[hoarder]);
            assert_eq!(hoard.written, None);
            let note = hoard.note.clone().unwrap();
            assert!(note.contains("over its quota of 4096 bytes"), "{note}");
            assert_eq!(replay["seats"][hoarder]["data"]["kept_because"].as_str(), Some(note.as_str()));
        }
        // The planter: its links are never carried.
        for name in ["passwd", "root", "up"] {
            assert!(logs[planter].contains(&format!("no {name}\n")), "{name}: {}", logs[planter]);
        }
        assert!(logs[planter].contains(&format!("match {n}\n")), "its count is kept: {}", logs[planter]);
        std::fs::write(dir.join(format!("match-{n}.json")), serde_json::to_vec(&replay).unwrap()).unwrap();
        matches.push((m, counter, records));
    }
    // Each match starts from the snapshot the one before wrote.
    for w in matches.windows(2) {
        let (_, c0, r0) = &w[0];
        let (_, c1, r1) = &w[1];
        assert_eq!(r1[*c1].from, r0[*c0].written);
    }

    // A rerun of the second match: the counter's seat from the snapshot it
    // started from (the first match's), every turn as recorded.
    let (m2, c2, r2) = &matches[1];
    // Its owner downloads it; nobody else may.
    let bearer = format!("Bearer {token}");
    let (st, headers, archive) = api.get_raw(&format!("/api/matches/{m2}/data/{c2}"), &[("authorization", &bearer)]).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/x-tar");
    let snap = Snapshot::from_archive(archive, koth_runner::storage::DataQuota::default()).unwrap();
    let (_, other) = koth_web::http::create_account(&pool, "other", false).await.unwrap();
    let (st, body) = api.call("GET", &format!("/api/matches/{m2}/data/{c2}"), Some(&other), Vec::new()).await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"].as_str().unwrap().contains("only the bot's owner"), "{body}");
    let (st, _) = api.call("GET", &format!("/api/matches/{m2}/data/{c2}"), None, Vec::new()).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let (st, body) = api.call("GET", &format!("/api/matches/{m2}/data/9"), Some(&token), Vec::new()).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "{body}");
    // The match's page says what became of each seat's data.
    let (_, info) = api.call("GET", &format!("/api/matches/{m2}"), None, Vec::new()).await;
    assert_eq!(info["seats"][*c2]["data"]["started_from"].as_str(), r2[*c2].from.as_deref(), "{info}");
    let hoarder = info["seats"].as_array().unwrap().iter().find(|s| s["bot"].as_i64() == Some(bots[1])).unwrap();
    assert!(hoarder["data"]["note"].as_str().unwrap().contains("over its quota of 4096 bytes"), "{hoarder}");
    // And its bot's page, beside that match.
    let (_, listed) = api.call("GET", &format!("/api/bots/{}/matches", bots[1]), None, Vec::new()).await;
    let listed = listed.as_array().unwrap().iter().find(|x| x["match"].as_i64() == Some(*m2)).unwrap().clone();
    let mine = listed["seats"].as_array().unwrap().iter().find(|x| x["bot"].as_i64() == Some(bots[1])).unwrap();
    assert!(mine["data_note"].as_str().unwrap().contains("over its quota of 4096 bytes"), "{listed}");
    assert_eq!(Some(&snap.hash), r2[*c2].from.as_ref());
    assert_eq!(snap.files().iter().map(|f| (f.path.as_str(), f.bytes.as_slice())).collect::<Vec<_>>(), [("count.txt", &b"1"[..])]);
    let tar = dir.join("match-2-counter.tar");
    std::fs::write(&tar, &snap.archive).unwrap();
    let counter_py = dir.join("counter.py");
    std::fs::write(&counter_py, bot("count")).unwrap();
    let seat = (c2 + 1).to_string();
    let rec = dir.join("match-2.json");
    // The recorded match again, the counter's seat from `data`.
    let rerun_from = |data: &std::path::Path| {
        koth(&[
            "replay",
            "rerun",
            rec.to_str().unwrap(),
            "--bot",
            counter_py.to_str().unwrap(),
            "--seat",
            &seat,
            "--data",
            data.to_str().unwrap(),
        ])
    };
    let out = rerun_from(&tar);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("reproduced: all 4 turns"), "{text}");
    // From the server by the match's id: the owner's rerun fetches the
    // seat's snapshot itself.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    let router = koth_web::http::router(pool.clone());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let out = tokio::task::spawn_blocking({
        let (m2, token, counter_py, seat) = (m2.to_string(), token.clone(), counter_py.clone(), seat.clone());
        move || {
            koth(&["replay", "rerun", &m2, "--server", &server, "--token", &token, "--bot", counter_py.to_str().unwrap(), "--seat", &seat])
        }
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("reproduced: all 4 turns"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&snap.hash), "it says which snapshot it started from");
    // A snapshot other than the one the match recorded is refused.
    let empty = dir.join("empty.tar");
    std::fs::write(&empty, Snapshot::empty().archive).unwrap();
    let out = rerun_from(&empty);
    assert!(String::from_utf8_lossy(&out.stderr).contains("but seat"), "a snapshot other than the recorded one is refused");

    // Two matches of the counter's version recorded at once, both started
    // from its latest snapshot: the first to commit wins.
    stop.send(true).unwrap();
    runner.await.unwrap();
    let (m3, c3, r3) = &matches[2];
    let version: i64 = info_version(&api, *m3, *c3).await;
    let from = r3[*c3].written.clone().unwrap();
    let a =
        Snapshot::pack(vec![koth_runner::storage::DataFile { path: "count.txt".into(), bytes: b"a".to_vec(), executable: false }]).unwrap();
    let b =
        Snapshot::pack(vec![koth_runner::storage::DataFile { path: "count.txt".into(), bytes: b"b".to_vec(), executable: false }]).unwrap();
    let seat_data =
        |s: &Snapshot| SeatData { seat: *c3 as i32, version_id: version, started_from: from.clone(), packed: Some(s.clone()), note: None };
    let mut first = pool.begin().await.unwrap();
    bot_data::record(&mut first, *m3, &[seat_data(&a)]).await.unwrap();
    // The second waits on the first's row lock, then finds the snapshot changed.
    let (pool2, second_data, m3c) = (pool.clone(), seat_data(&b), *m3);
    let second = tokio::spawn(async move {
        let mut tx = pool2.begin().await.unwrap();
        bot_data::record(&mut tx, m3c, &[second_data]).await.unwrap();
        tx.commit().await.unwrap();
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    first.commit().await.unwrap();
    second.await.unwrap();
    let now = bot_data::latest(&pool, &[version]).await.unwrap();
    assert_eq!(now[&version].hash, a.hash, "the first to commit is the version's data");
    let rec = bot_data::seat_record(&pool, *m3, *c3 as i32).await.unwrap().unwrap();
    assert_eq!((rec.written, rec.note.as_deref()), (None, Some(LOST_RACE)), "the second was discarded, saying so");
}

/// The version that played seat `seat` of match `m`.
async fn info_version(api: &Api, m: i64, seat: usize) -> i64 {
    let (_, info) = api.call("GET", &format!("/api/matches/{m}"), None, Vec::new()).await;
    info["seats"][seat]["version"].as_i64().unwrap_or_else(|| panic!("{info}"))
}
