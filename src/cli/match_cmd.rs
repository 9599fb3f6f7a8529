//! `koth match`: play one match on this machine with the same engine the
//! ladder uses. A bot that is not there is said first, with exit code 2,
//! before any box is built.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use koth_runner::bot::ImagePolicy;
use koth_runner::engine::{MatchOptions, ReplayTo};
use koth_sandbox::{parse_duration, parse_size, Limits, SandboxConfig};

#[derive(Args)]
pub struct MatchArgs {
    /// The game: flit, slime, linkage, target or snake, or the folder of an
    /// external game (its game.json and referee; see docs/games/authoring.md).
    #[arg(long)]
    game: String,
    /// Seed of the match's randomness (a match is reproducible from it).
    #[arg(long)]
    seed: Option<u64>,
    /// Number of seats (default: the game's smallest); bots are repeated in
    /// order to fill them.
    #[arg(long)]
    players: Option<usize>,
    /// Print the outcome as JSON.
    #[arg(long)]
    json: bool,
    /// Write the replay (compact JSON) to this file, as the match is played.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Bytes of JSON the replay may hold: the turn that takes it past them
    /// ends the match (scored as it stands; a referee whose events did it
    /// has failed). At most 56M.
    #[arg(long, default_value = "32M", value_parser = super::replay_limit)]
    replay_limit: u64,
    /// After the match, serve its replay in the site's viewer on this
    /// machine (`koth replay view`) and open it in the desktop's browser.
    #[arg(long)]
    open: bool,
    /// Folder for each bot's stderr log (default: match-GAME-SEED in /tmp/koth-UID, a folder of your own).
    #[arg(long)]
    logs: Option<PathBuf>,
    /// Keep each bot's data in this folder from match to match: each seat's
    /// folder starts as its version's latest snapshot, and is packed back
    /// when the match ends normally (for games that keep bot data, such as
    /// slime; see docs/replay.md, "Bot data").
    #[arg(long)]
    data: Option<PathBuf>,
    /// Bytes a bot's data may hold (with --data).
    #[arg(long, default_value = "1M", value_parser = size)]
    data_max_bytes: u64,
    /// Files a bot's data may hold (with --data).
    #[arg(long, default_value_t = koth_runner::storage::DEFAULT_MAX_FILES)]
    data_max_files: usize,
    #[command(flatten)]
    engine: EngineArgs,
    /// Bots: source files, archives (.tar, .tar.gz, .zip) or folders; the
    /// language comes from the main file's extension or a koth.json manifest.
    #[arg(required = true)]
    bots: Vec<PathBuf>,
}

/// How bots are built and boxed and how a match is played: `koth match`'s
/// and `koth ab`'s flags alike.
#[derive(Args)]
pub struct EngineArgs {
    /// Override the game's time per move (e.g. 50ms).
    #[arg(long, value_parser = duration)]
    time: Option<Duration>,
    /// Extra time for each bot's first move (start-up).
    #[arg(long, default_value = "1s", value_parser = duration)]
    first_move_extra: Duration,
    /// Stop after this many turns and score the position as it stands.
    #[arg(long)]
    max_turns: Option<u32>,
    /// Stop when the match has run this long and score the position as it
    /// stands (default: twice the game's longest match at the time limit).
    #[arg(long, value_parser = duration)]
    wall_cap: Option<Duration>,
    /// Let bots run while it is not their turn (default: frozen).
    #[arg(long)]
    no_freeze: bool,
    /// Memory of each bot's box.
    #[arg(long, default_value = "512M", value_parser = size)]
    memory: u64,
    /// Use the language images (`koth languages build`); fail if one is not
    /// built. Default: each language's image when it is built, else the host's
    /// toolchain (reported per bot).
    #[arg(long, conflicts_with = "host")]
    docker: bool,
    /// Use the host's `/` and toolchains even where an image is built.
    #[arg(long)]
    host: bool,
    #[command(flatten)]
    store: super::BotStoreArgs,
}

impl EngineArgs {
    pub fn builder(&self) -> koth_runner::bot::Builder {
        self.store.builder(if self.docker {
            ImagePolicy::Images
        } else if self.host {
            ImagePolicy::Host
        } else {
            ImagePolicy::Auto
        })
    }

    pub fn sandbox(&self) -> SandboxConfig {
        SandboxConfig {
            limits: Limits { memory: self.memory, cpu_time: None, wall_time: None, ..Limits::default() },
            ..self.store.sandbox()
        }
    }

    /// A match of `game` on `seed` with these flags, its replay kept in memory.
    pub fn options(&self, game: &koth_runner::Game, seed: u64, sandbox: &SandboxConfig) -> MatchOptions {
        MatchOptions {
            per_move: self.time,
            first_move_extra: self.first_move_extra,
            freeze_off_turn: !self.no_freeze,
            max_turns: self.max_turns,
            wall_cap: self.wall_cap,
            sandbox: sandbox.clone(),
            ..MatchOptions::new(game.clone(), seed)
        }
    }
}

/// Builds (or takes from the cache) the bot at `path`, saying which
/// language and toolchain it runs with.
pub fn prepare(builder: &koth_runner::bot::Builder, path: &std::path::Path) -> anyhow::Result<koth_runner::bot::BotSpec> {
    let spec = builder.prepare(path).map_err(|e| anyhow::anyhow!("preparing bot {}: {e}", path.display()))?;
    eprintln!(
        "{}: {}, {}",
        path.display(),
        spec.language,
        if spec.image == koth_runner::image::HOST {
            "host toolchain (no image built)".to_owned()
        } else {
            format!("image {}", &spec.image.trim_start_matches("sha256:")[..12])
        }
    );
    Ok(spec)
}

fn duration(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}
fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// Exit code of `koth match` given a bot that is not there: the
/// command's fault, said before any box is built (as clap's own for a bad
/// argument), not the sandbox's 210.
pub const EXIT_NO_BOT: i32 = 2;

pub fn run(a: MatchArgs) -> anyhow::Result<i32> {
    let missing: Vec<String> = a.bots.iter().filter(|p| !p.exists()).map(|p| p.display().to_string()).collect();
    if !missing.is_empty() {
        eprintln!(
            "koth: error: no such bot: {} (give each bot as a source file, an archive or a folder; `koth starter GAME LANGUAGE` writes one to start from)",
            missing.join(", ")
        );
        return Ok(EXIT_NO_BOT);
    }
    let builder = a.engine.builder();
    let game = koth_runner::Game::find(&a.game, &builder).map_err(|e| anyhow::anyhow!("--game: {e}"))?;
    let (lo, hi) = game.seat_range();
    let seats = a.players.unwrap_or(lo.max(a.bots.len().min(hi)));
    if seats < lo || seats > hi {
        anyhow::bail!(
            "--players {seats}: {} is played by {}",
            game.name(),
            if lo == hi { format!("exactly {lo} bots") } else { format!("{lo} to {hi} bots") }
        );
    }
    if a.bots.len() > seats {
        anyhow::bail!("{} bots given for {seats} seats; pass --players or fewer bots", a.bots.len());
    }
    let seed = a.seed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        t.as_nanos() as u64 ^ (std::process::id() as u64) << 32
    });
    let sandbox = a.engine.sandbox();
    let prepared = a.bots.iter().map(|path| prepare(&builder, path)).collect::<anyhow::Result<Vec<_>>>()?;
    let bots: Vec<_> = (0..seats).map(|i| prepared[i % prepared.len()].clone()).collect();
    let store = match &a.data {
        Some(dir) => {
            if !game.keeps_bot_data() {
                anyhow::bail!(
                    "--data: {} does not keep bot data (koth's slime does; a game folder offers it with \"bot_data\": true in its game.json)",
                    game.name()
                );
            }
            let quota = koth_runner::storage::DataQuota::new(a.data_max_bytes, a.data_max_files)
                .map_err(|e| anyhow::anyhow!("--data-max-bytes / --data-max-files: {e}"))?;
            Some((super::bot_data::LocalData::open(dir)?, quota))
        }
        None => None,
    };
    let keys: Vec<String> = bots.iter().map(super::bot_data::LocalData::key).collect();
    let data = match &store {
        Some((s, quota)) => keys
            .iter()
            .map(|k| Ok(Some(koth_runner::storage::SeatData { from: s.latest(k)?, quota: *quota })))
            .collect::<anyhow::Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    let opts = MatchOptions {
        data,
        // Written to its file as it is played: the match holds none of
        // its turns. Without a file it is kept, compactly, to be shown.
        replay_to: a.replay.clone().map_or(ReplayTo::Memory, ReplayTo::File),
        replay_limit: a.replay_limit,
        // Each bot's stderr, by turn, in the replay: beside its moves in
        // the viewer, and in the file.
        stderr_in_replay: true,
        ..a.engine.options(&game, seed, &sandbox)
    };
    let mut report = koth_runner::play(&opts, bots).map_err(|e| anyhow::anyhow!(e))?;
    if let Some((s, _)) = &store {
        save_data(s, &keys, &mut report)?;
    }
    let logs = match a.logs.clone() {
        Some(dir) => dir,
        None => private_temp_dir()?.join(format!("match-{}-{seed}", game.name())),
    };
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let mut log_paths = Vec::new();
    for o in &report.outcomes {
        let p = logs.join(format!("seat{}-{}.stderr", o.seat + 1, o.name));
        std::fs::write(&p, &o.stderr).with_context(|| format!("writing {}", p.display()))?;
        log_paths.push(p);
    }
    if let Some(text) = &report.referee_stderr {
        let p = logs.join("referee.stderr");
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    // A referee that failed, or a machine too busy to time the bots
    // fairly, leaves no result to show, and nothing to draw.
    let failed =
        matches!(report.ended_by, koth_games::replay::EndedBy::RefereeFailed { .. } | koth_games::replay::EndedBy::HostOverloaded { .. });
    let open = |report: &koth_runner::MatchReport| -> anyhow::Result<i32> {
        let replay = report.replay.read().map_err(|e| anyhow::anyhow!(e))?;
        super::replay::serve(&replay, &game, &sandbox, "127.0.0.1:0", true, None)
    };
    if a.json {
        let mut v = serde_json::to_value(&report)?;
        for (o, p) in v["outcomes"].as_array_mut().into_iter().flatten().zip(&log_paths) {
            o["stderr_log"] = p.display().to_string().into();
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        if failed {
            return Ok(1);
        }
        return if a.open { open(&report) } else { Ok(0) };
    }
    println!(
        "{} (seed {seed}), {} turns{}",
        game.name(),
        report.turns,
        match &report.ended_by {
            koth_games::replay::EndedBy::Rules => String::new(),
            koth_games::replay::EndedBy::TurnLimit { .. } => " (cut short by --max-turns; scored as it stands)".to_owned(),
            koth_games::replay::EndedBy::WallClockCap { seconds } =>
                format!(" (stopped by the wall-clock cap of {seconds:.0} s; scored as it stands)"),
            koth_games::replay::EndedBy::ReplayLimit { limit_bytes, .. } =>
                format!(" (stopped when its replay reached --replay-limit, {limit_bytes} bytes; scored as it stands)"),
            koth_games::replay::EndedBy::RefereeFailed { reason } => format!(": the referee failed, so the match has no result: {reason}"),
            koth_games::replay::EndedBy::HostOverloaded { reason, .. } => format!(
                ": this machine was too busy to time the bots fairly, so the match has no result and no bot is blamed \
                 ({reason}); play it again when the machine is quieter"
            ),
        }
    );
    println!(
        "{:<4} {:<24} {:>7} {:<5} {:>6} {:>8} {:>8} {:>9} {:>9}  status",
        "rank", "bot", "score", "", "moves", "timeouts", "invalid", "max ms", "mean ms"
    );
    let mut order: Vec<_> = report.outcomes.iter().collect();
    order.sort_by_key(|o| (o.rank, o.seat));
    for o in order {
        let status = o.status.describe();
        // No result (a failed referee, a busy machine): no rank, score or
        // result to show, only what each bot did.
        let (rank, score) = match o.result {
            Some(_) => (o.rank.to_string(), o.score.to_string()),
            None => ("-".to_owned(), "-".to_owned()),
        };
        println!(
            "{:<4} {:<24} {:>7} {:<5} {:>6} {:>8} {:>8} {:>9.2} {:>9.2}  {status}",
            rank,
            format!("{}. {}", o.seat + 1, o.name),
            score,
            o.result.map_or("-", koth_games::MatchResult::name),
            o.moves,
            o.timeouts,
            o.invalid_moves,
            o.max_move_ms,
            o.mean_move_ms,
        );
    }
    for o in &report.outcomes {
        if let Some(d) = &o.data {
            println!("data of {}. {}: started from {}; {}", o.seat + 1, o.name, koth_runner::storage::short(&d.started_from), d.describe());
        }
    }
    println!("stderr logs (with koth's notes on invalid answers and timeouts): {}", logs.display());
    if let Some(p) = &a.replay {
        println!("replay: {}", p.display());
    }
    if failed {
        return Ok(1);
    }
    if a.open {
        return open(&report);
    }
    Ok(0)
}

/// Each seat's new snapshot, kept as its version's latest when that is
/// still the one it started from; a later seat of the same version is
/// discarded, and its outcome says so.
fn save_data(store: &super::bot_data::LocalData, keys: &[String], report: &mut koth_runner::MatchReport) -> anyhow::Result<()> {
    for (o, key) in report.outcomes.iter_mut().zip(keys) {
        let Some(d) = o.data.as_mut() else { continue };
        let Some(new) = &d.snapshot else { continue };
        if !store.advance(key, &d.started_from, new)? {
            d.written = None;
            d.snapshot = None;
            d.kept_because = Some("another seat of the same version wrote its data first (its snapshot is kept)".into());
        }
    }
    Ok(())
}

/// `<tmp>/koth-<uid>`, a folder of this user's that no other user planted.
fn private_temp_dir() -> anyhow::Result<PathBuf> {
    // SAFETY: geteuid has no preconditions.
    let dir = std::env::temp_dir().join(format!("koth-{}", unsafe { libc::geteuid() }));
    koth_sandbox::private_dir(&dir).map_err(|e| anyhow::anyhow!("the logs' folder: {e}, or choose a folder with --logs"))?;
    Ok(dir)
}
