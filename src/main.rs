//! `koth`: host King-of-the-Hill programming contests.
//!
//! One binary with subcommands; each lives in its own module under `cli/`.

mod cli;

use clap::Parser;

/// Logs go to stderr: `KOTH_LOG` filters them (tracing's EnvFilter syntax,
/// e.g. `debug` or `warn,koth_runner=debug`; services default to `info`,
/// other commands to `warn`), `KOTH_LOG_FORMAT=json` writes one JSON object
/// per line for log collectors.
fn init_logs(service: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("KOTH_LOG").unwrap_or_else(|_| {
        if service {
            "info,sqlx=warn".into()
        } else {
            "warn".into()
        }
    });
    let logs = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if std::env::var("KOTH_LOG_FORMAT").is_ok_and(|f| f == "json") {
        logs.json().init();
    } else {
        logs.init();
    }
}

fn main() {
    let args = cli::Cli::parse();
    init_logs(args.is_service());
    let code = match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("koth: error: {e:#}");
            cli::EXIT_SETUP_FAILED
        }
    };
    std::process::exit(code);
}
