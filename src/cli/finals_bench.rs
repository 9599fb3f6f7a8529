//! `koth bench finals`: adaptive finals ([`koth_ladder::finals`]) against
//! a full round robin of the same match budget, simulated on a seeded
//! strength model: how often each finds the true top 3 (in order) and how
//! many matches it takes. Pure simulation: no server, no bots.

use clap::Args;
use koth_ladder::finals::{simulate, Field};

#[derive(Args)]
pub struct FinalsBenchArgs {
    /// Finalists.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(3..=64))]
    bots: u32,
    /// Elo between neighbours in strength, one table line each.
    #[arg(long, value_delimiter = ',', default_values_t = [200.0, 100.0, 50.0])]
    gaps: Vec<f64>,
    /// The round robin plays every pairing on both sides this many times;
    /// its matches, n(n−1) × rounds, are the adaptive finals' budget.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1000))]
    rounds: u32,
    /// Chance a game is a tie.
    #[arg(long, default_value_t = 0.1)]
    tie: f64,
    /// Elo the first seat is worth.
    #[arg(long, default_value_t = 30.0)]
    seat_advantage: f64,
    /// Simulated finals per line and method.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    runs: u32,
    /// The generator's seed (the same seed prints the same table).
    #[arg(long, default_value_t = 36)]
    seed: u64,
}

pub fn run(a: FinalsBenchArgs) -> anyhow::Result<i32> {
    if !(0.0..1.0).contains(&a.tie) {
        anyhow::bail!("--tie is a chance: from 0 up to (not including) 1, not {}", a.tie);
    }
    let n = a.bots as usize;
    let budget = (n * (n - 1)) as u32 * a.rounds;
    println!(
        "{} finalists, Elo gap between neighbours as listed, ties {:.0}%, first seat +{} Elo; budget {budget} matches \
         (the round robin: every pairing on both sides {} times); {} simulated finals a line, seed {}",
        a.bots,
        a.tie * 100.0,
        a.seat_advantage,
        a.rounds,
        a.runs,
        a.seed
    );
    println!();
    println!(
        "| Elo gap | round robin: top 3 right | matches | adaptive: top 3 right | matches (mean) | of the round robin's | all settled |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for gap in &a.gaps {
        let field = Field { bots: n, gap: *gap, tie: a.tie, seat_advantage: a.seat_advantage };
        let (adaptive, full) = simulate(&field, budget, a.runs, a.seed).map_err(anyhow::Error::msg)?;
        println!(
            "| {gap} | {:.1}% | {:.0} | {:.1}% | {:.1} | {:.0}% | {:.1}% |",
            100.0 * full.accuracy(),
            full.mean_matches(),
            100.0 * adaptive.accuracy(),
            adaptive.mean_matches(),
            100.0 * adaptive.mean_matches() / full.mean_matches(),
            100.0 * f64::from(adaptive.settled) / f64::from(adaptive.runs)
        );
    }
    Ok(0)
}
