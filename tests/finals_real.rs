//! Adaptive finals on the real service: `koth up` (a private PostgreSQL,
//! runners playing the example bots in the sandbox), then the host's
//! commands: close submissions, start adaptive finals with a budget, and
//! `koth contest show` until they are final, on the three example
//! ladders with two seats (top 2, budget [`BUDGET`]). Each must end settled
//! within the budget or at it; on Snake, where one example bot is clearly
//! stronger, they must end settled after the base round and four paired
//! games. (Linkage's and Target's example bots are close: their finals
//! mostly spend the whole budget, 40 matches in three runs of four with a
//! budget of 40, which is why it is 20.)

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::{postgres_binaries, start, stop};

fn koth_cli(args: &[&str], server: &str, token: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .env("KOTH_SERVER", format!("http://{server}"))
        .env("KOTH_TOKEN", token)
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// The finals' budget of matches on each ladder.
const BUDGET: u32 = 20;

#[test]
fn adaptive_finals_of_real_bots_end_settled_before_the_budget() {
    if !postgres_binaries() {
        return;
    }
    let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("finals-real-data");
    let _ = std::fs::remove_dir_all(&data);
    let port = koth_scheduler::pg::free_port().unwrap();
    let addr = format!("127.0.0.1:{port}");
    let (child, _) = start(&data, &addr, "finals-real", 69000);
    let token = std::fs::read_to_string(data.join("host-token")).unwrap().trim().to_owned();
    let ladders = ["linkage", "snake", "target"];
    // Both example bots ready (compiled and validated) before the finals.
    let deadline = Instant::now() + Duration::from_secs(300);
    for ladder in ladders {
        loop {
            let (ok, out) = koth_cli(&["bots", ladder], &addr, &token);
            if ok && out.lines().filter(|l| l.contains("ready")).count() >= 2 {
                break;
            }
            assert!(Instant::now() < deadline, "{ladder}: bots not ready: {out}");
            std::thread::sleep(Duration::from_millis(500));
        }
        let (ok, out) = koth_cli(&["contest", "deadline", ladder, "--now"], &addr, &token);
        assert!(ok && out.contains(": closed"), "{out}");
        let (ok, out) = koth_cli(&["contest", "finals", ladder, "--top", "2", "--budget", "1"], &addr, &token);
        assert!(!ok && out.contains("ask for at least 2"), "a budget below the base round is refused: {out}");
        let (ok, out) = koth_cli(&["contest", "finals", ladder, "--top", "2", "--budget", &BUDGET.to_string()], &addr, &token);
        assert!(ok && out.contains(&format!("adaptive: until every adjacent place is ordered (95%), at most {BUDGET} matches")), "{out}");
    }
    let mut shown = std::collections::BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(600);
    while shown.len() < ladders.len() {
        for ladder in ladders {
            let (ok, out) = koth_cli(&["contest", "show", ladder], &addr, &token);
            assert!(ok, "{out}");
            if out.lines().next() == Some(&format!("{ladder}: final")) {
                shown.insert(ladder, out);
            }
        }
        assert!(Instant::now() < deadline, "finals not over in 600 s: {shown:?}");
        std::thread::sleep(Duration::from_secs(1));
    }
    // "standings (final, N matches of a budget of 20, U of 2 places unsettled):"
    let figures = |out: &str| -> (u32, u32, Vec<String>) {
        let line = out.lines().find(|l| l.trim_start().starts_with("standings (final, ")).unwrap_or_else(|| panic!("{out}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        let order =
            out.lines().filter_map(|l| l.trim_start().split_once(". ")).map(|(_, rest)| rest.split_whitespace().next().unwrap().to_owned());
        (words[2].parse().unwrap(), words[9].parse().unwrap(), order.collect())
    };
    for (ladder, out) in &shown {
        println!("{out}");
        let (matches, unsettled, _) = figures(out);
        // Either every place settled within the budget, or the budget spent.
        assert!((unsettled == 0 && matches < BUDGET) || matches == BUDGET, "{ladder}: {out}");
    }
    // Snake: tcp_survivor outlives the wall hugger from either seat, so
    // the base round and four paired games settle it: 10 matches of 20.
    let (matches, unsettled, order) = figures(&shown["snake"]);
    assert_eq!((matches, unsettled), (10, 0), "{}", shown["snake"]);
    assert_eq!(order, ["tcp_survivor", "stdio_wall_hugger"]);
    let (ok, csv) = koth_cli(&["contest", "export", "snake"], &addr, &token);
    assert!(ok && csv.starts_with("rank,bot,name,points,games,low,high,settled,rank_low,rank_high,finals_matches\n"), "{csv}");
    assert!(csv.lines().nth(1).unwrap().ends_with(",true,1,1,10"), "{csv}");
    assert_eq!(stop(child), Some(0));
}
