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
/// second go back to the system (by default they wait 10 s, and only for
/// the next allocation in the same arena: `koth up` held some 60 MiB of
/// such pages), purged by jemalloc's own thread, which the services start
/// ([`purge_in_background`]). `koth bench soak` measures the result.
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8] = b"dirty_decay_ms:1000,muzzy_decay_ms:0\0";

/// Start jemalloc's purging thread: for the services only, which run long
/// and free large buffers. Set in `malloc_conf`, every command started it
/// before `main`, the largest part of jemalloc's start (`koth bench
/// start`), for commands that exit in milliseconds.
fn purge_in_background() {
    let on = true;
    // SAFETY: "background_thread" is a bool jemalloc reads from `newp`;
    // nothing is read back.
    let r = unsafe {
        tikv_jemalloc_sys::mallctl(
            c"background_thread".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &on as *const bool as *mut libc::c_void,
            std::mem::size_of::<bool>(),
        )
    };
    if r != 0 {
        tracing::warn!("jemalloc's purging thread did not start (error {r}): freed memory goes back to the system more slowly");
    }
}

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

/// A command whose reader has gone (`koth replay check ... | head -1`,
/// `koth languages | head`) has nothing left to say. Rust ignores SIGPIPE,
/// so the write fails and `println!` panics ("failed printing to stdout:
/// Broken pipe"); such a command exits quietly instead, with the status of
/// a program SIGPIPE killed (128 + 13), as Unix tools end in a pipeline.
/// SIGPIPE itself stays ignored: a bot or referee that closes its stdin
/// must never kill the engine writing to it.
fn quiet_when_stdout_is_closed() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied()).unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        report(info)
    }));
}

fn main() {
    quiet_when_stdout_is_closed();
    let args = cli::Cli::parse();
    init_logs(args.is_service());
    if args.is_service() {
        purge_in_background();
    }
    let code = match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("koth: error: {e:#}");
            cli::EXIT_SETUP_FAILED
        }
    };
    std::process::exit(code);
}
