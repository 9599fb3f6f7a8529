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

/// `koth replay view FILE`: the replay in the site's own viewer, served on
/// this machine until Ctrl-C.
pub fn view(file: &Path, listen: &str, open: bool) -> anyhow::Result<i32> {
    let bytes = std::fs::read(file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    let r = Replay::from_json(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    serve(&r, listen, open)
}

/// Serve `r` with the viewer on `listen` (127.0.0.1:0 picks a free port)
/// until SIGINT or SIGTERM; `open` also asks the desktop to open it.
pub fn serve(r: &Replay, listen: &str, open: bool) -> anyhow::Result<i32> {
    let app = koth_scheduler::web::local_viewer(r).map_err(|e| anyhow::anyhow!("this replay cannot be drawn: {e}"))?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| anyhow::anyhow!("listening on {listen}: {e}; pick another address with --listen"))?;
        let url = format!("http://{}/", listener.local_addr()?);
        // The URL alone on stdout, for scripts; the rest on stderr.
        println!("{url}");
        eprintln!("koth: the replay viewer is at {url} (Ctrl-C stops it)");
        if open {
            match std::process::Command::new("xdg-open")
                .arg(&url)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
            {
                Ok(_) => {}
                Err(e) => eprintln!("koth: could not open a browser (xdg-open: {e}); open {url} yourself"),
            }
        }
        let mut stop = super::service::shutdown_signal();
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop.wait_for(|s| *s).await;
            })
            .await?;
        anyhow::Ok(0)
    })
}
