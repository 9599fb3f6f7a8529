//! `koth`: host King-of-the-Hill programming contests.
//!
//! One binary with subcommands; each lives in its own module under `cli/`.

mod cli;

use clap::Parser;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KOTH_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = cli::Cli::parse();
    let code = match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("koth: error: {e:#}");
            cli::EXIT_SETUP_FAILED
        }
    };
    std::process::exit(code);
}
