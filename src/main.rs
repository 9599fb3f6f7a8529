//! `koth`: host King-of-the-Hill programming contests.
//!
//! One binary with subcommands; each lives in its own module under `cli/`.

mod cli;

use clap::Parser;

/// jemalloc, not glibc's malloc: the service's large short-lived buffers
/// (a long match's replay, its packing, its frames) are freed on whichever
/// of tokio's threads ran them, and glibc kept them in per-thread arenas
/// of 64 MiB each for good (`koth up` grew from 55 MiB to over 250 MiB in
/// 8 minutes, and `malloc_trim` gave 150 MiB of it back at once).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's settings, read at its start: pages freed and unused for a
/// second go back to the system, purged by jemalloc's own thread (by
/// default they wait 10 s, and only for the next allocation in the same
/// arena: `koth up` held some 60 MiB of such pages). `koth bench soak` measures
/// the result.
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8] = b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

/// Logs go to stderr: `KOTH_LOG` filters them (tracing's EnvFilter syntax,
/// e.g. `debug` or `warn,koth_runner=debug`; services default to `info`,
/// other commands to `warn`), `KOTH_LOG_FORMAT=json` writes one JSON object
/// per line for log collectors. Colours only on a terminal: a log
/// redirected to a file or a collector gets plain text.
fn init_logs(service: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("KOTH_LOG").unwrap_or_else(|_| {
        if service {
            "info,sqlx=warn".into()
        } else {
            "warn".into()
        }
    });
    use std::io::IsTerminal;
    let logs = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(std::io::stderr().is_terminal());
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
