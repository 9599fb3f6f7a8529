use clap::{Parser, Subcommand};

mod languages;
mod match_bench;
mod match_cmd;
mod sandbox;
mod queue_bench;
mod service;

/// Exit code when koth itself could not do what was asked (bad arguments,
/// a host that cannot run the sandbox, ...).
pub const EXIT_SETUP_FAILED: i32 = 210;

#[derive(Parser)]
#[command(name = "koth", version, about = "Host King-of-the-Hill programming contests")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The languages koth knows, their images, building and measuring them.
    Languages(languages::LanguagesArgs),
    /// Play one match on this machine, with the engine the ladder uses.
    Match(match_cmd::MatchArgs),
    /// Measure a move's cost against the raw pipe round trip.
    MatchBench(match_bench::BenchArgs),
    /// Measure the job queue's claim + complete throughput against raw SQL (pgbench).
    QueueBench(queue_bench::QueueBenchArgs),
    /// Run a worker: claim compile and match jobs from the database and run them.
    Runner(service::RunnerArgs),
    /// Keep every ladder busy: choose and queue the next matches.
    Scheduler(service::SchedulerArgs),
    /// Run programs under koth's sandbox, and measure it.
    #[command(subcommand)]
    Sandbox(sandbox::SandboxCommand),
}

pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Languages(args) => languages::run(args),
        Command::Match(args) => match_cmd::run(args),
        Command::MatchBench(args) => match_bench::run(args),
        Command::QueueBench(args) => queue_bench::run(args),
        Command::Runner(args) => service::runner(args),
        Command::Scheduler(args) => service::scheduler(args),
        Command::Sandbox(cmd) => sandbox::run(cmd),
    }
}
