//! `koth replay check FILE`: a replay played again through the rules, so a
//! bot author (or anyone) can check a match without trusting the server.

use std::path::Path;

use koth_games::replay::{EndedBy, Replay};

/// The game of `r`: koth's own, or the external game in `game_dir`, whose
/// referee draws and checks its replays.
pub fn game_of(r: &Replay, game_dir: Option<&Path>, store: &super::BotStoreArgs) -> Result<koth_runner::Game, String> {
    match (r.game.kind(), game_dir) {
        (Some(g), _) => Ok(g.into()),
        (None, None) => {
            Err(format!("this is a replay of {}, an external game: pass --game FOLDER, the folder of its game.json and referee", r.game))
        }
        (None, Some(dir)) => {
            let game = koth_runner::Game::find(&dir.display().to_string(), &store.builder(koth_runner::bot::ImagePolicy::Auto))?;
            if game.id() != r.game {
                return Err(format!("{} holds the game {}, the replay is of {}", dir.display(), game.name(), r.game));
            }
            Ok(game)
        }
    }
}

/// 0: the replay agrees with the rules; 1: it does not; 2: not a replay
/// (or its external game's folder is missing or unusable).
pub fn check(file: &Path, game_dir: Option<&Path>, store: &super::BotStoreArgs) -> i32 {
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
    let game = match game_of(&r, game_dir, store) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("koth: {}: {e}", file.display());
            return 2;
        }
    };
    if let Err(e) = game.check(&r, &store.sandbox()) {
        println!("{}: the replay disagrees with the rules: {e}", file.display());
        return 1;
    }
    let ended = match &r.ended_by {
        EndedBy::Rules => "ended by the rules".to_owned(),
        EndedBy::TurnLimit { turns } => format!("stopped after {turns} turns by a turn limit"),
        EndedBy::WallClockCap { seconds } => format!("stopped by its wall-clock cap of {seconds:.0} s"),
        // check() refuses a match whose referee failed.
        EndedBy::RefereeFailed { reason } => format!("its referee failed ({reason})"),
        EndedBy::ReplayLimit { turn, limit_bytes } => format!("stopped at turn {turn}, its replay at the limit of {limit_bytes} bytes"),
        EndedBy::HostOverloaded { reason, .. } => format!("stopped because the machine was overloaded, not a bot ({reason})"),
    };
    let result: Vec<String> = r
        .result
        .iter()
        .map(|s| {
            let name = r.seats.get(s.seat).map_or("?", |x| x.name.as_str());
            let result = s.result.name();
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
    // A bot's data enters no rule: said, so that a rerun can start from it.
    for (i, s) in r.seats.iter().enumerate() {
        if let Some(d) = &s.data {
            let end = match (&d.written, &d.kept_because) {
                (Some(w), _) => format!("saved {w}"),
                (None, Some(why)) => format!("saved nothing: {why}"),
                (None, None) => "saved nothing".to_owned(),
            };
            println!(
                "  seat {} {}: its folder started from the snapshot {}; {end} (`koth replay rerun --data` starts from it)",
                i + 1,
                s.name,
                d.started_from
            );
        }
    }
    0
}

/// `koth replay view FILE`: the replay in the site's own viewer, served on
/// this machine until Ctrl-C.
pub fn view(
    file: &Path,
    game_dir: Option<&Path>,
    store: &super::BotStoreArgs,
    listen: &str,
    open: bool,
    turn: Option<u32>,
) -> anyhow::Result<i32> {
    let bytes = std::fs::read(file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    let r = Replay::from_json(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let game = game_of(&r, game_dir, store).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    serve(&r, &game, &store.sandbox(), listen, open, turn)
}

/// Serve `r` with the viewer on `listen` (127.0.0.1:0 picks a free port)
/// until SIGINT or SIGTERM, drawn by `game`'s referee; `open` also asks
/// the desktop to open it, `turn` at that turn. Seats of one file (`koth
/// match bot.py bot.py`) are shown as `bot.py (1)` and `bot.py (2)`, on
/// the page and in the turns' words alike.
pub fn serve(
    r: &Replay,
    game: &koth_runner::Game,
    sandbox: &koth_sandbox::SandboxConfig,
    listen: &str,
    open: bool,
    turn: Option<u32>,
) -> anyhow::Result<i32> {
    let names: Vec<String> = r.seats.iter().map(|s| s.name.clone()).collect();
    let mut shown = r.clone();
    for (seat, name) in shown.seats.iter_mut().zip(koth_scheduler::types::distinct_seat_names(&names)) {
        seat.name = name;
    }
    let frames = game.frames(&shown, sandbox).map_err(|e| anyhow::anyhow!("this replay cannot be drawn: {e}"))?;
    let app = koth_web::pages::local_viewer(&shown, &frames).map_err(|e| anyhow::anyhow!("this replay cannot be drawn: {e}"))?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| anyhow::anyhow!("listening on {listen}: {e}; pick another address with --listen"))?;
        // The match page itself, so that `?turn=N` may be added to it.
        let at = turn.map(|t| format!("?turn={t}")).unwrap_or_default();
        let url = format!("http://{}/matches/0{at}", listener.local_addr()?);
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

/// How a recorded reply reads in a report.
fn said(r: Option<&koth_games::replay::Recorded>) -> String {
    use koth_games::replay::Recorded;
    match r {
        Some(Recorded::Answer { answer }) => format!("{answer:?}"),
        Some(Recorded::Timeout { .. }) => "no answer in time".to_owned(),
        Some(Recorded::Gone { why, .. }) => format!("gone ({})", why.as_deref().unwrap_or("left")),
        None => "not asked".to_owned(),
    }
}

/// The snapshot seat `seat`'s folder started from in `r`, from `data` (a
/// `koth match --data` folder or the snapshot's .tar), checked against the
/// hash the replay recorded; `None` when the seat carried no data.
pub fn seat_data(r: &Replay, seat: usize, data: Option<&Path>) -> anyhow::Result<Option<koth_runner::storage::Snapshot>> {
    let Some(recorded) = r.seats.get(seat).and_then(|s| s.data.as_ref()) else {
        if let Some(d) = data {
            eprintln!("koth: --data {}: seat {} carried no data in this match; its folder starts empty", d.display(), seat + 1);
        }
        return Ok(None);
    };
    let hash = &recorded.started_from;
    if *hash == koth_runner::storage::Snapshot::empty().hash {
        return Ok(Some(koth_runner::storage::Snapshot::empty()));
    }
    let Some(path) = data else {
        anyhow::bail!(
            "seat {}'s folder started from the snapshot {hash} in this match: pass --data with the `koth match --data` folder \
             that holds it, or the snapshot's .tar (a server's match: `GET /api/matches/ID/data/SEAT`, see docs/replay.md)",
            seat + 1
        );
    };
    let snap = if path.is_dir() {
        super::bot_data::LocalData::open(path)?.find(hash)?
    } else {
        let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        let any = koth_runner::storage::DataQuota {
            max_bytes: koth_runner::storage::MAX_MAX_BYTES,
            max_files: koth_runner::storage::MAX_MAX_FILES,
        };
        koth_runner::storage::Snapshot::from_archive(bytes, any).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
    };
    if snap.hash != *hash {
        anyhow::bail!("{} is the snapshot {}, but seat {}'s folder started from {hash}", path.display(), snap.hash, seat + 1);
    }
    Ok(Some(snap))
}

/// `koth replay rerun`: `r` played again with the bot at `bot` in `seat`
/// and every other seat answering from `r`, the match's time a move (and
/// the first move's allowance and the wall-clock cap) times `time_scale`.
/// 0: every turn as recorded; 1: the run diverged (where is printed).
#[allow(clippy::too_many_arguments)]
pub fn rerun(
    r: &Replay,
    seat: usize,
    bot: &Path,
    time_scale: f64,
    game_dir: Option<&Path>,
    store: &super::BotStoreArgs,
    out: Option<&Path>,
    open: bool,
    data: Option<koth_runner::storage::Snapshot>,
) -> anyhow::Result<i32> {
    use koth_runner::engine::{play_seats, MatchOptions, SeatPlayer};
    let game = game_of(r, game_dir, store).map_err(|e| anyhow::anyhow!(e))?;
    let builder = store.builder(koth_runner::bot::ImagePolicy::Auto);
    let spec = builder.prepare(bot).map_err(|e| anyhow::anyhow!("preparing {}: {e}", bot.display()))?;
    let n = r.seats.len();
    let mut recorded = vec![Vec::new(); n];
    for t in &r.turns {
        for a in t.answers.iter().filter(|a| a.seat < n) {
            recorded[a.seat].push(a.reply.clone());
        }
    }
    let seats = r
        .seats
        .iter()
        .enumerate()
        .map(|(s, rs)| {
            if s == seat {
                SeatPlayer::Bot(spec.clone())
            } else {
                SeatPlayer::Recorded { name: format!("{} (recorded)", rs.name), id_line: rs.id_line.clone(), answers: recorded[s].clone() }
            }
        })
        .collect();
    let (max_turns, wall_cap) = match &r.ended_by {
        EndedBy::Rules | EndedBy::RefereeFailed { .. } => (None, None),
        // Replayed as far as it was recorded.
        EndedBy::HostOverloaded { .. } => (Some(r.turns.len() as u32), None),
        EndedBy::TurnLimit { turns } => (Some(*turns), None),
        // Stopped at its last recorded turn.
        EndedBy::ReplayLimit { turn, .. } => (Some(*turn), None),
        EndedBy::WallClockCap { seconds } => (None, Some(std::time::Duration::from_secs_f64(*seconds * time_scale))),
    };
    let limits = koth_sandbox::Limits { memory: 512 << 20, cpu_time: None, wall_time: None, ..koth_sandbox::Limits::default() };
    let defaults = MatchOptions::new(game.clone(), r.seed);
    let per_move = r.time_policy.map_or_else(|| game.time_policy().per_move, |p| p.per_move);
    if let Some(d) = &data {
        eprintln!("koth: your bot's folder starts from the snapshot {} ({} files, {} bytes), as in the match", d.hash, d.files, d.bytes);
    }
    // Your bot's folder as it was at the match's start; nothing is kept after.
    let mut seat_data = vec![None; n];
    seat_data[seat] = data.map(|from| koth_runner::storage::SeatData { from, quota: koth_runner::storage::DataQuota::default() });
    let opts = MatchOptions {
        data: seat_data,
        per_move: Some(per_move.mul_f64(time_scale)),
        first_move_extra: defaults.first_move_extra.mul_f64(time_scale),
        time_scale,
        max_turns,
        wall_cap,
        sandbox: koth_sandbox::SandboxConfig { limits, ..store.sandbox() },
        // Your bot's stderr beside its moves in the new replay.
        stderr_in_replay: true,
        // The rules the match was played under (Slime's reading of answers).
        rules_of: Some(r.initial.clone()),
        ..defaults
    };
    eprintln!("koth: {} seed {}: {} in seat {}, the other seats from the recording", r.game.name(), r.seed, spec.name, seat + 1);
    // Said on stdout with the verdict: a reproduction at another scale
    // is not one at the match's own time.
    if time_scale != 1.0 {
        println!(
            "with --time-scale {time_scale}: your bot had {} ms a move, the match {} ms",
            opts.policy().per_move.as_millis(),
            per_move.as_millis()
        );
    }
    let report = play_seats(&opts, seats).map_err(|e| anyhow::anyhow!(e))?;
    let mut new = report.replay.read().map_err(|e| anyhow::anyhow!(e))?;
    // The other seats answered from the recording: their stderr is the
    // recording's (if it carried any), not the stand-ins' silence.
    for (i, s) in new.seats.iter_mut().enumerate() {
        if i != seat {
            s.stderr = r.seats.get(i).and_then(|x| x.stderr.clone());
        }
    }
    let new = &new;
    fn mine(t: &koth_games::replay::Turn, seat: usize) -> Option<&koth_games::replay::Recorded> {
        t.answers.iter().find(|a| a.seat == seat).map(|a| &a.reply)
    }
    // The first turn where the runs part: the author's answer, else
    // anything else the turn holds (answers, judgements, events).
    let mut diverged = None;
    for (old, now) in r.turns.iter().zip(&new.turns) {
        if mine(old, seat) != mine(now, seat) {
            println!(
                "diverged at turn {}: your bot now answers {}; the recording has {}",
                old.turn,
                said(mine(now, seat)),
                said(mine(old, seat))
            );
            let timed_out = |r: Option<&koth_games::replay::Recorded>| matches!(r, Some(koth_games::replay::Recorded::Timeout { .. }));
            if time_scale > 1.0 && timed_out(mine(old, seat)) {
                println!("(it timed out there in the match, and had {time_scale} times the time now)");
            } else if time_scale < 1.0 && timed_out(mine(now, seat)) {
                println!("(it had {time_scale} times the match's time now)");
            } else if time_scale == 1.0 && timed_out(mine(now, seat)) {
                println!("(if this machine is slower or busier than the server, try --time-scale 2)");
            }
            diverged = Some(old.turn);
            break;
        }
        if old.answers != now.answers || old.judgements != now.judgements || old.events != now.events {
            println!("diverged at turn {}: your answer is the recorded one, but the turn's answers, judgements or events differ", old.turn);
            diverged = Some(old.turn);
            break;
        }
    }
    if diverged.is_none() && r.turns.len() != new.turns.len() {
        println!(
            "diverged after turn {}: the recording has {} turns, this run {}",
            r.turns.len().min(new.turns.len()),
            r.turns.len(),
            new.turns.len()
        );
        diverged = Some(r.turns.len().min(new.turns.len()) as u32 + 1);
    }
    match diverged {
        None => println!("reproduced: all {} turns, every answer, judgement and event as recorded", new.turns.len()),
        Some(_) => println!("(from there the rules played on; the other seats kept answering from the recording, not to the new position)"),
    }
    for o in &report.outcomes {
        let was = r.result.iter().find(|x| x.seat == o.seat);
        println!(
            "  seat {} {}: {} (score {}, rank {}){}",
            o.seat + 1,
            o.name,
            o.result.map_or("no result", koth_games::MatchResult::name),
            o.score,
            o.rank,
            was.map(|w| format!("; recorded: {} (score {}, rank {})", w.result.name(), w.score, w.rank)).unwrap_or_default()
        );
    }
    if !report.outcomes[seat].stderr.is_empty() {
        println!("your bot's stderr (with koth's notes), last lines:");
        let lines: Vec<&str> = report.outcomes[seat].stderr.lines().collect();
        for l in &lines[lines.len().saturating_sub(10)..] {
            println!("  {l}");
        }
    }
    if let Some(path) = out {
        std::fs::write(path, serde_json::to_vec(new)?).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        println!("replay: {}", path.display());
    }
    if open {
        // At the turn where the runs part.
        serve(new, &game, &store.sandbox(), "127.0.0.1:0", true, diverged)?;
    }
    Ok(if diverged.is_some() { 1 } else { 0 })
}
