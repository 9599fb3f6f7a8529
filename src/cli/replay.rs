//! `koth replay check FILE`: a replay played again through the rules, so a
//! bot author (or anyone) can check a match without trusting the server.

use std::path::Path;

use koth_games::replay::{self, EndedBy, Replay};

/// 0: the replay agrees with the rules; 1: it does not; 2: not a replay.
pub fn check(file: &Path) -> i32 {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("koth: cannot read {}: {e}", file.display());
            return 2;
        }
    };
    let r = match Replay::from_json(&bytes) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("koth: {}: {e}", file.display());
            return 2;
        }
    };
    if let Err(e) = replay::check(&r) {
        println!("{}: the replay disagrees with the rules: {e}", file.display());
        return 1;
    }
    let ended = match &r.ended_by {
        EndedBy::Rules => "ended by the rules".to_owned(),
        EndedBy::TurnLimit { turns } => format!("stopped after {turns} turns by a turn limit"),
        EndedBy::WallClockCap { seconds } => format!("stopped by its wall-clock cap of {seconds:.0} s"),
    };
    let result: Vec<String> = r
        .result
        .iter()
        .map(|s| {
            let name = r.seats.get(s.seat).map_or("?", |x| x.name.as_str());
            let result = format!("{:?}", s.result).to_lowercase();
            format!("seat {} {name}: {result} (score {}, rank {})", s.seat + 1, s.score, s.rank)
        })
        .collect();
    println!(
        "ok: {} seed {}, {} turns, {ended}; every judgement, event and the result agree with the rules",
        r.game.name(),
        r.seed,
        r.turns.len()
    );
    for line in result {
        println!("  {line}");
    }
    0
}
