//! The host's commands, over the same HTTP API as the pages: `koth ladder
//! ...` (create, pause, resume, list and cancel matches, disable and enable
//! bots), `koth contest ...` (show, deadline, finals, export) and `koth game
//! ...` (list, add a game from its folder) and `koth audit` (the audit
//! trail). They need a host's token (`koth up` writes it to
//! <data-dir>/host-token; `koth login --token` saves it).

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Subcommand;
use koth_web::http::types::{
    AuditAction, AuditPage, BotDisabled, Contest, FormatName, GameAdded, GameInfo, GameStatus, LadderBot, LadderCreated, LadderSummary,
    MatchCancelled, MatchSummary, Paused,
};
use serde_json::{json, Value};

use super::client::{Client, ServerArgs};

#[derive(Subcommand)]
#[command(defer = true)]
pub enum LadderCommand {
    /// Every ladder: id, name, game, format, bots, contest phase and deadline.
    List {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Create a ladder; format and settings default to the game's seed's.
    Create {
        #[command(flatten)]
        server: ServerArgs,
        name: String,
        /// flit, slime, linkage, target, snake, or a game a host added (`koth game list`).
        #[arg(long)]
        game: String,
        /// The format; default: the game's own.
        #[arg(long, value_parser = format_names(&FormatName::ALL))]
        format: Option<FormatName>,
        /// Settings over the defaults, as JSON (e.g. '{"seats": 2, "max_turns": 200}').
        #[arg(long)]
        settings: Option<String>,
    },
    /// Stop scheduling a ladder's matches.
    Pause {
        #[command(flatten)]
        server: ServerArgs,
        ladder: String,
    },
    /// Schedule a paused ladder again.
    Resume {
        #[command(flatten)]
        server: ServerArgs,
        ladder: String,
    },
    /// Take a bot off its ladder, with a reason its owner sees; its queued matches are cancelled.
    Disable {
        #[command(flatten)]
        server: ServerArgs,
        ladder: String,
        bot: String,
        #[arg(long)]
        reason: String,
    },
    /// A ladder's newest 50 matches: queued, running (on a runner now) or over.
    Matches {
        #[command(flatten)]
        server: ServerArgs,
        ladder: String,
    },
    /// Cancel a queued match no runner has started (its job is cancelled too).
    Cancel {
        #[command(flatten)]
        server: ServerArgs,
        /// The match id.
        r#match: i64,
    },
    /// Let a disabled bot play again.
    Enable {
        #[command(flatten)]
        server: ServerArgs,
        ladder: String,
        bot: String,
    },
}

#[derive(Subcommand)]
#[command(defer = true)]
pub enum ContestCommand {
    /// A ladder's contest: phase, deadline, finals and their standings.
    Show {
        #[command(flatten)]
        server: ServerArgs,
        ladder: String,
        /// Print the server's JSON.
        #[arg(long)]
        json: bool,
    },
    /// Set, move or remove the deadline; submissions are refused after it.
    Deadline {
        #[command(flatten)]
        server: ServerArgs,
        ladder: String,
        /// A time, RFC 3339 (2026-12-01T18:00:00Z).
        #[arg(long, conflicts_with_all = ["in_secs", "now", "none"])]
        at: Option<String>,
        /// This many seconds from now.
        #[arg(long, conflicts_with_all = ["now", "none"])]
        in_secs: Option<u32>,
        /// Close submissions now.
        #[arg(long, conflicts_with = "none")]
        now: bool,
        /// No deadline: submissions open again.
        #[arg(long)]
        none: bool,
    },
    /// Start the finals: the standings' top N play a format that ends.
    Finals {
        #[command(flatten)]
        server: ServerArgs,
        ladder: String,
        /// How many of the top play.
        #[arg(long)]
        top: u32,
        /// A format that ends (round_robin: every pairing on every side).
        #[arg(long, default_value = "round_robin", value_parser = format_names(&koth_ladder::contest::finals_formats()))]
        format: FormatName,
        /// The format's settings as JSON (e.g. '{"rounds": 3}').
        #[arg(long)]
        settings: Option<String>,
        /// Adaptive finals: at most this many matches (at least the base
        /// round's n(n−1)); they end early once every adjacent place is
        /// ordered with 95% confidence.
        #[arg(long)]
        budget: Option<u32>,
    },
    /// Save the final standings (once the finals are over) as CSV or JSON.
    Export {
        #[command(flatten)]
        server: ServerArgs,
        ladder: String,
        /// JSON instead of CSV.
        #[arg(long)]
        json: bool,
        /// Where to write them (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

/// `--format`'s parser: these formats' names (listed in `--help`), each
/// read back as its `FormatName`.
fn format_names(names: &[FormatName]) -> impl clap::builder::TypedValueParser<Value = FormatName> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(names.iter().map(|f| f.as_str())).map(|s| s.parse::<FormatName>().expect("a listed name"))
}

fn settings_json(text: Option<&str>) -> anyhow::Result<Option<Value>> {
    text.map(|t| serde_json::from_str(t).with_context(|| format!("--settings is not JSON: {t}"))).transpose()
}

fn bot_id(c: &Client, ladder: i64, bot: &str) -> anyhow::Result<i64> {
    let bots: Vec<LadderBot> = c.get(&format!("/api/ladders/{ladder}/bots"))?;
    bots.iter().find(|b| b.name == bot || b.id.to_string() == bot).map(|b| b.id).with_context(|| {
        let names: Vec<&str> = bots.iter().map(|b| b.name.as_str()).collect();
        format!("no bot {bot:?} on ladder {ladder}; it has: {}", names.join(", "))
    })
}

pub fn ladder(cmd: LadderCommand) -> anyhow::Result<i32> {
    match cmd {
        LadderCommand::List { server } => {
            let c = Client::new(&server)?;
            let list: Vec<LadderSummary> = c.get("/api/ladders")?;
            println!("{:>4}  {:<24} {:<8} {:<12} {:>5}  {:<7} {:<8} deadline", "id", "ladder", "game", "format", "bots", "paused", "phase");
            for l in list {
                println!(
                    "{:>4}  {:<24} {:<8} {:<12} {:>5}  {:<7} {:<8} {}",
                    l.id,
                    l.name,
                    l.game,
                    l.format,
                    l.bots,
                    if l.paused { "paused" } else { "" },
                    l.phase.as_str(),
                    l.deadline.unwrap_or_else(|| "-".into())
                );
            }
        }
        LadderCommand::Create { server, name, game, format, settings } => {
            let c = Client::new(&server)?;
            let body = json!({"name": name, "game": game, "format": format, "settings": settings_json(settings.as_deref())?});
            let made: LadderCreated = c.post("/api/ladders", Some(&body))?;
            println!("ladder {} {:?}: {} ({})", made.id, made.name, made.game, made.format);
        }
        LadderCommand::Matches { server, ladder } => {
            let c = Client::new(&server)?;
            let id = c.ladder_id(&ladder)?;
            let list: Vec<MatchSummary> = c.get(&format!("/api/ladders/{id}/matches"))?;
            println!("{:>7}  {:<9} {:<7} {:>6}  seats", "match", "state", "", "turns");
            for m in list {
                let state = if m.running { "running" } else { m.state.as_str() };
                let seats: Vec<String> = m.seats.iter().map(|s| s.name.clone()).collect();
                let kind = if m.finals {
                    "finals"
                } else if m.rated {
                    "rated"
                } else {
                    ""
                };
                let turns = m.turns.map(|t| t.to_string()).unwrap_or_else(|| "-".into());
                println!("{:>7}  {:<9} {:<7} {:>6}  {}", m.match_id, state, kind, turns, seats.join(" vs "));
            }
        }
        LadderCommand::Cancel { server, r#match } => {
            let c = Client::new(&server)?;
            let done: MatchCancelled = c.post(&format!("/api/matches/{match}/cancel"), None)?;
            println!("match {}: {}", done.id, done.reason);
        }
        LadderCommand::Pause { server, ladder } => pause(&server, &ladder, true)?,
        LadderCommand::Resume { server, ladder } => pause(&server, &ladder, false)?,
        LadderCommand::Disable { server, ladder, bot, reason } => {
            let c = Client::new(&server)?;
            let id = bot_id(&c, c.ladder_id(&ladder)?, &bot)?;
            let d: BotDisabled = c.post(&format!("/api/bots/{id}/disable"), Some(&json!({"reason": reason})))?;
            println!("bot {} disabled: {}", d.id, d.disabled_reason.unwrap_or_default());
        }
        LadderCommand::Enable { server, ladder, bot } => {
            let c = Client::new(&server)?;
            let id = bot_id(&c, c.ladder_id(&ladder)?, &bot)?;
            let d: BotDisabled = c.post(&format!("/api/bots/{id}/enable"), None)?;
            println!("bot {} enabled", d.id);
        }
    }
    Ok(0)
}

fn pause(server: &ServerArgs, ladder: &str, paused: bool) -> anyhow::Result<()> {
    let c = Client::new(server)?;
    let id = c.ladder_id(ladder)?;
    let p: Paused = c.post(&format!("/api/ladders/{id}/{}", if paused { "pause" } else { "resume" }), None)?;
    println!("ladder {} {}", p.id, if p.paused { "paused" } else { "scheduling" });
    Ok(())
}

fn print_contest(name: &str, k: &Contest) {
    println!("{name}: {}", k.phase.as_str());
    println!("  deadline: {}", k.deadline.as_deref().unwrap_or("none"));
    if let Some(f) = &k.finals {
        println!(
            "  finals: top {} ({} bots), {}, started {}",
            f.top,
            f.finalists.len(),
            f.format,
            k.finals_started_at.as_deref().unwrap_or("-")
        );
        if let Some(b) = f.budget {
            println!("  adaptive: until every adjacent place is ordered (95%), at most {b} matches");
        }
    }
    if let Some(s) = &k.standings {
        let state = if k.finished_at.is_some() { "final" } else { "so far" };
        let budget = s.budget.map(|b| format!(" of a budget of {b}")).unwrap_or_default();
        println!("  standings ({state}, {} matches{budget}, {} of {} places unsettled):", s.matches, s.unsettled, s.rows.len());
        for r in &s.rows {
            let values: Vec<String> = s
                .columns
                .iter()
                .map(|c| match r.values.get(&c.key) {
                    Some(Value::Number(n)) if n.is_f64() => format!("{} {:.2}", c.label, n.as_f64().unwrap_or(0.0)),
                    Some(v) => format!("{} {v}", c.label),
                    None => format!("{} -", c.label),
                })
                .collect();
            let ranks = match (r.rank_low, r.rank_high) {
                (Some(lo), Some(hi)) if lo == hi => format!(", rank {lo}"),
                (Some(lo), Some(hi)) => format!(", rank {lo}–{hi}"),
                _ => String::new(),
            };
            println!("  {:>3}. {:<24} {}{ranks}{}", r.rank, r.name, values.join(", "), if r.settled { "" } else { "  (unsettled)" });
        }
    }
}

pub fn contest(cmd: ContestCommand) -> anyhow::Result<i32> {
    match cmd {
        ContestCommand::Show { server, ladder, json } => {
            let c = Client::new(&server)?;
            let id = c.ladder_id(&ladder)?;
            let k: Contest = c.get(&format!("/api/ladders/{id}/contest"))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&k)?);
            } else {
                print_contest(&ladder, &k);
            }
        }
        ContestCommand::Deadline { server, ladder, at, in_secs, now, none } => {
            let body = match (at, in_secs, now, none) {
                (Some(at), _, _, _) => json!({"at": at}),
                (None, Some(s), _, _) => json!({"in_seconds": s}),
                (None, None, true, _) => json!({"in_seconds": 0}),
                (None, None, false, true) => json!({}),
                (None, None, false, false) => bail!("say when: --at TIME, --in-secs N, --now, or --none"),
            };
            let c = Client::new(&server)?;
            let id = c.ladder_id(&ladder)?;
            let k: Contest = c.post(&format!("/api/ladders/{id}/deadline"), Some(&body))?;
            print_contest(&ladder, &k);
        }
        ContestCommand::Finals { server, ladder, top, format, settings, budget } => {
            let c = Client::new(&server)?;
            let id = c.ladder_id(&ladder)?;
            let mut body = json!({"top": top, "format": format, "settings": settings_json(settings.as_deref())?});
            if let Some(budget) = budget {
                body["budget"] = json!(budget);
            }
            let k: Contest = c.post(&format!("/api/ladders/{id}/finals"), Some(&body))?;
            print_contest(&ladder, &k);
        }
        ContestCommand::Export { server, ladder, json, output } => {
            let c = Client::new(&server)?;
            let id = c.ladder_id(&ladder)?;
            let bytes = if json {
                let k: Contest = c.get(&format!("/api/ladders/{id}/contest"))?;
                match (k.finished_at.is_some(), k.standings) {
                    (true, Some(s)) => serde_json::to_vec_pretty(&s)?,
                    _ => bail!("no final standings yet: the contest is {}; they are final once its finals are over", k.phase.as_str()),
                }
            } else {
                let resp = c.finish(c.request("GET", &format!("/api/ladders/{id}/final-standings.csv")).call())?;
                resp.into_string().context("reading the CSV")?.into_bytes()
            };
            match output {
                Some(path) => {
                    std::fs::write(&path, &bytes).with_context(|| format!("writing {}", path.display()))?;
                    eprintln!("{}", path.display());
                }
                None => {
                    use std::io::Write;
                    std::io::stdout().write_all(&bytes)?;
                }
            }
        }
    }
    Ok(0)
}

#[derive(Subcommand)]
#[command(defer = true)]
pub enum GameCommand {
    /// Every game of a server: koth's own and those hosts added, with their status.
    List {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Hosts: add a game to a server from its folder (game.json, its referee, example bots in bots/)
    /// and wait for its validation match.
    Add {
        #[command(flatten)]
        server: ServerArgs,
        /// The game's folder (try it first: `koth match --game FOLDER FOLDER/bots/...`).
        folder: PathBuf,
        /// Seconds to wait for its validation match.
        #[arg(long, default_value_t = 600)]
        timeout_secs: u64,
    },
}

pub fn game(cmd: GameCommand) -> anyhow::Result<i32> {
    match cmd {
        GameCommand::List { server } => {
            let c = Client::new(&server)?;
            let games: Vec<GameInfo> = c.get("/api/games")?;
            for g in games {
                let whose = if g.added { format!("added by {}", g.added_by.as_deref().unwrap_or("a host")) } else { "koth's own".into() };
                println!("{:<12} {}-{} players  {:<10} {whose}  {}", g.name, g.seats[0], g.seats[1], g.status.as_str(), g.title);
            }
            Ok(0)
        }
        GameCommand::Add { server, folder, timeout_secs } => {
            let c = Client::new(&server)?;
            let package = koth_runner::game::GamePackage::from_folder(&folder, &Default::default()).map_err(anyhow::Error::msg)?;
            let name = package.manifest.name.clone();
            let resp = c.finish(
                c.request("POST", &format!("/api/games?file={name}.tar"))
                    .set("Content-Type", "application/octet-stream")
                    .send_bytes(&package.to_tar()),
            )?;
            let added: GameAdded = resp.into_json()?;
            eprintln!("added {name}; its example bots ({}) are playing its validation match", added.example_bots.join(", "));
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(timeout_secs);
            loop {
                let g: GameInfo = c.get(&format!("/api/games/{name}"))?;
                match g.status {
                    GameStatus::Validating if std::time::Instant::now() < deadline => {
                        std::thread::sleep(std::time::Duration::from_millis(500))
                    }
                    GameStatus::Validating => bail!("{name} is still being validated after {timeout_secs} s; `koth game list` follows it"),
                    GameStatus::Ready => {
                        println!("{name} is ready: {}", g.log.unwrap_or_default());
                        println!("make a ladder for it: koth ladder create NAME --game {name}");
                        return Ok(0);
                    }
                    GameStatus::Refused => {
                        println!("{}", g.log.unwrap_or_else(|| format!("{name} was refused")));
                        return Ok(1);
                    }
                }
            }
        }
    }
}

/// `koth audit`: the audit trail, newest first, one line an entry.
#[derive(clap::Args)]
pub struct AuditArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Only this ladder's entries (name or id).
    #[arg(long)]
    ladder: Option<String>,
    /// Only this bot's entries and its matches' (an id, or a name with --ladder).
    #[arg(long)]
    bot: Option<String>,
    /// Only entries of this kind (match_finished, compile_failed, bot_disabled, ...).
    #[arg(long)]
    action: Option<String>,
    /// Entries older than this id (the line printed after a full page says it).
    #[arg(long)]
    before: Option<i64>,
    /// How many entries (1 to 1000).
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Print the server's JSON.
    #[arg(long)]
    json: bool,
}

pub fn audit(a: AuditArgs) -> anyhow::Result<i32> {
    let c = Client::new(&a.server)?;
    let mut query = vec![format!("limit={}", a.limit)];
    let ladder = a.ladder.as_deref().map(|l| c.ladder_id(l)).transpose()?;
    if let Some(l) = ladder {
        query.push(format!("ladder={l}"));
    }
    if let Some(bot) = &a.bot {
        let id = match (bot.parse::<i64>(), ladder) {
            (Ok(id), _) => id,
            (Err(_), Some(l)) => bot_id(&c, l, bot)?,
            (Err(_), None) => bail!("--bot {bot:?}: give the bot's id, or its name with --ladder"),
        };
        query.push(format!("bot={id}"));
    }
    if let Some(action) = &a.action {
        if AuditAction::from_stored(action).is_err() {
            let names: Vec<&str> = AuditAction::ALL.iter().map(|a| a.as_str()).collect();
            bail!("--action {action:?} is not a kind of entry; the kinds: {}", names.join(", "));
        }
        query.push(format!("action={action}"));
    }
    if let Some(before) = a.before {
        query.push(format!("before={before}"));
    }
    let page: AuditPage = c.get(&format!("/api/audit?{}", query.join("&")))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&page)?);
        return Ok(0);
    }
    for e in &page.entries {
        println!("{e}");
    }
    if let Some(next) = page.next_before {
        eprintln!("older entries: koth audit --before {next} (with the same filters)");
    }
    Ok(0)
}
