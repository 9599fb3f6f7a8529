//! Runners on other machines: the database, the web service and the
//! scheduler on a first "host", and one runner on each of two more
//! (`docker/runner-hosts.yml`): each on a network of its own that holds
//! only it and the database, each with its own image store (built by its
//! own one-shot builder), artifact cache and box uids. The test checks that
//! they share no volume and no network with anything but the database,
//! that matches are spread over both, that killing one host's runner
//! mid-match loses nothing (its match is played again by the other), and
//! with `KOTH_BENCH_SECONDS=S` (40 is enough on two cores) measures
//! matches per minute over windows of S seconds with one and with two
//! runner hosts.
//!
//! Needs what tests/compose.rs needs (Docker, docker-compose, the base
//! images); `.ci/run` prepares it. The example bots (C and Python) are
//! compiled too, so both hosts build those two languages.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod compose_stack;
use compose_stack::{
    assert_nothing_failed, bench_window, create_ladder, finished_matches, get, kill_missed_the_try, post, wait_compiled, wait_played_again,
    Stack,
};

fn inspect(container: &str) -> Value {
    let out = Command::new("docker").args(["inspect", container]).output().unwrap();
    assert!(out.status.success(), "docker inspect {container}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()[0].clone()
}

/// A service's container id.
fn container(stack: &Stack, service: &str) -> String {
    let out = stack.run(&["ps", "-q", service]);
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(!id.is_empty(), "no {service} container:\n{}", stack.logs());
    id
}

/// The named volumes a container mounts.
fn volumes(c: &Value) -> BTreeSet<String> {
    c["Mounts"].as_array().unwrap().iter().filter(|m| m["Type"] == "volume").map(|m| m["Name"].as_str().unwrap().to_owned()).collect()
}

fn networks(c: &Value) -> BTreeSet<String> {
    c["NetworkSettings"]["Networks"].as_object().unwrap().keys().cloned().collect()
}

/// Finished matches whose job was last held by each runner host.
fn finished_by_host(stack: &Stack) -> (i64, i64) {
    let count = |host: &str| {
        stack.sql_count(&format!(
            "SELECT count(*) FROM matches m JOIN jobs j ON j.id = m.job_id WHERE m.state = 'finished' AND j.holder LIKE '{host}-%'"
        ))
    };
    (count("runner-a"), count("runner-b"))
}

/// Matches finished per minute over a window, the runners already busy.
fn per_minute(stack: &Stack, window: Duration) -> f64 {
    std::thread::sleep(Duration::from_secs(10));
    let (t0, n0) = (Instant::now(), finished_matches(stack));
    std::thread::sleep(window);
    (finished_matches(stack) - n0) as f64 * 60.0 / t0.elapsed().as_secs_f64()
}

#[test]
fn runners_on_two_hosts_share_only_the_database_and_lose_nothing() {
    let Some(stack) = Stack::new("koth-hosts", "c python") else { return };
    let stack = stack.with_file("docker/runner-hosts.yml");
    let host = stack.up_services(&["db", "web", "scheduler", "runner-a", "runner-b"]);
    assert!(stack.runners().is_empty(), "the first host runs no runner");

    // What each runner host shares: nothing but the database's network.
    let (db, web, a, b) = (
        inspect(&container(&stack, "db")),
        inspect(&container(&stack, "web")),
        inspect(&container(&stack, "runner-a")),
        inspect(&container(&stack, "runner-b")),
    );
    for (name, r, other) in [("runner-a", &a, &b), ("runner-b", &b, &a)] {
        let mine = volumes(r);
        assert_eq!(mine.len(), 3, "{name}: its image store, cache and slots: {mine:?}");
        for (what, c) in [("db", &db), ("web", &web), ("the other runner", other)] {
            assert!(mine.is_disjoint(&volumes(c)), "{name} shares a volume with {what}: {mine:?} / {:?}", volumes(c));
        }
        let nets = networks(r);
        assert_eq!(nets.len(), 1, "{name}: one network: {nets:?}");
        let net = nets.iter().next().unwrap().clone();
        assert!(!networks(&web).contains(&net) && !networks(other).contains(&net), "{name}'s network {net} reaches more than the database");
        assert!(networks(&db).contains(&net), "{name} cannot reach the database");
        let members = inspect(&net)["Containers"].as_object().map(|m| m.len()).unwrap_or(0);
        assert_eq!(members, 2, "{name}'s network {net} holds only it and the database");
        assert_eq!(inspect(&net)["Internal"], true, "{name}'s network has no route out");
    }

    // Only our ladder plays: slow bots (30 ms a move, 300 turns), so a
    // match lasts seconds and a kill lands in the middle of one.
    for l in get(&stack.url("/api/ladders")).as_array().unwrap() {
        post(&stack.url(&format!("/api/ladders/{}/pause", l["id"])), &host, b"");
    }
    let ladder = create_ladder(
        &stack,
        &host,
        json!({"name": "spread", "game": "target", "format": "rated",
               "settings": {"max_turns": 300, "newcomer_games": 0, "concurrency": 4, "skip_validation": true}}),
    );
    let sleepy = b"import sys, time\nfor line in sys.stdin:\n    time.sleep(0.03)\n    print(2, flush=True)\n";
    for i in 0..4 {
        let r = post(&stack.url(&format!("/api/ladders/{ladder}/bots/sleepy-{i}?file=sleepy.py")), &host, sleepy);
        wait_compiled(&stack, &host, r["bot"].as_i64().unwrap(), r["version"].as_i64().unwrap(), 600);
    }

    // Matches are spread over both hosts.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let (on_a, on_b) = finished_by_host(&stack);
        if on_a >= 2 && on_b >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "matches not spread over both hosts in 5 minutes (a {on_a}, b {on_b}):\n{}", stack.logs());
        std::thread::sleep(Duration::from_secs(1));
    }

    // Kill host A's runner (SIGKILL) while it plays a match. The try may
    // end between the look and the kill (the look and each `psql` go
    // through `docker-compose exec`, a second each on a loaded machine;
    // seen twice in CI: host A had written the result; or it was voided
    // as the machine's fault): then host A is started again and another
    // match is picked.
    let deadline = Instant::now() + Duration::from_secs(300);
    let killed_match = loop {
        assert!(Instant::now() < deadline, "no match of host A's was killed in 5 minutes:\n{}", stack.logs());
        let row = stack.sql(
            "SELECT j.holder, m.id, j.lease FROM jobs j JOIN matches m ON m.job_id = j.id \
             WHERE j.state = 'running' AND j.holder LIKE 'runner-a-%' AND j.lease_until > now() \
             AND j.started_at > now() - interval '3 seconds' ORDER BY j.id LIMIT 1",
        );
        let fields: Vec<&str> = row.split('|').collect();
        let [holder, id, lease] = fields[..] else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        // Well into its ~9 s, and seconds from its end.
        std::thread::sleep(Duration::from_secs(1));
        let out = Command::new("docker").args(["kill", &container(&stack, "runner-a")]).output().unwrap();
        assert!(out.status.success(), "docker kill: {}", String::from_utf8_lossy(&out.stderr));
        if let Some(now) = kill_missed_the_try(&|q| stack.sql(q), id, holder, lease) {
            eprintln!("match {id}'s try (lease {lease}) was no longer running under {holder} as host A was killed ({now}); starting it again and picking another");
            stack.run(&["start", "runner-a"]);
            continue;
        }
        break id.parse::<i64>().unwrap();
    };
    // Keep it down (its restart policy would bring it back): host B alone
    // must finish the killed match.
    stack.run(&["stop", "-t", "1", "runner-a"]);
    wait_played_again(&stack, killed_match, 300);
    let (holder, attempt) = stack
        .sql(&format!("SELECT j.holder || '|' || j.attempt FROM jobs j JOIN matches m ON m.job_id = j.id WHERE m.id = {killed_match}"))
        .split_once('|')
        .map(|(h, a)| (h.to_owned(), a.parse::<i64>().unwrap()))
        .unwrap();
    assert!(holder.starts_with("runner-b-") && attempt >= 2, "played again by host B: {holder}, attempt {attempt}");

    // Matches per minute, host B alone, then both (host A restarted): a
    // benchmark, measured only when asked for (`KOTH_BENCH_SECONDS`).
    if let Some(window) = bench_window() {
        let one = per_minute(&stack, window);
        stack.run(&["start", "runner-a"]);
        let two = per_minute(&stack, window);
        println!("runner hosts: target, 4 bots of 30 ms moves, 300 turns, one job per runner, {} s windows", window.as_secs());
        println!("  one runner host:  {one:.1} matches/minute");
        println!("  two runner hosts: {two:.1} matches/minute ({:.2}x)", two / one.max(f64::MIN_POSITIVE));
    }
    let (on_a, on_b) = finished_by_host(&stack);
    println!("  finished by host A: {on_a}, by host B: {on_b}");

    // Nothing lost.
    assert_nothing_failed(&|q| stack.sql_count(q), &|q| stack.sql(q));
    assert_eq!(
        stack.sql_count(
            "SELECT count(*) FROM matches m JOIN jobs j ON j.id = m.job_id WHERE m.state = 'finished' \
             AND j.holder NOT LIKE 'runner-a-%' AND j.holder NOT LIKE 'runner-b-%'"
        ),
        0,
        "a match played by something other than the two runner hosts"
    );
}
