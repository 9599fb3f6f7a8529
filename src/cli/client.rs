//! The command-line client of a koth server's HTTP API: `koth submit`,
//! `koth bots`, `koth leaderboard`, `koth replay download`, `koth logs`.
//!
//! The server comes from `--server` (`KOTH_SERVER`, default
//! `http://127.0.0.1:8080`), the token from `--token` (`KOTH_TOKEN`).
//! Ladders are named by id or name. Responses are read into the API's own
//! types (`koth_scheduler::api::types`), so the client and the server
//! cannot disagree on a field.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use koth_scheduler::api::types::{
    BotInfo, ErrorBody, LadderBot, LadderSummary, Leaderboard, MatchState, MatchSummary, SeatStderr, Submitted, VersionLog, VersionStatus,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

#[derive(Args, Clone)]
pub struct ServerArgs {
    /// The koth server.
    #[arg(long, env = "KOTH_SERVER", default_value = "http://127.0.0.1:8080", global = true)]
    server: String,
    /// Your API token (from account creation; `koth up` writes the host's to <data-dir>/host-token).
    #[arg(long, env = "KOTH_TOKEN", global = true, hide_env_values = true)]
    token: Option<String>,
}

#[derive(Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The ladder (id or name).
    #[arg(long)]
    ladder: String,
    /// The bot's name on the ladder (a new bot, or a new version of yours).
    #[arg(long)]
    name: String,
    /// Matches to follow after the compile (0: return once compiled).
    #[arg(long, default_value_t = 3)]
    watch: usize,
    /// How long to follow at most.
    #[arg(long, default_value = "300")]
    timeout_secs: u64,
    /// The bot: a source file or an archive (.tar, .tar.gz, .zip).
    file: PathBuf,
}

#[derive(Args)]
pub struct LadderArg {
    #[command(flatten)]
    server: ServerArgs,
    /// The ladder (id or name).
    ladder: String,
    /// Print the server's JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
pub enum ReplayCommand {
    /// Save a finished match's replay (JSON).
    Download {
        #[command(flatten)]
        server: ServerArgs,
        /// The match id.
        r#match: i64,
        /// Where to write it (default: match-<id>.json).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Play a replay file through the rules: every judgement, event and the
    /// result must be what the rules make of its answers. Exit 0 if they
    /// are, 1 if not (the first disagreement is printed), 2 if the file is
    /// not a readable replay.
    Check {
        /// A replay (from `koth match --replay FILE` or `koth replay download`).
        file: PathBuf,
    },
}

#[derive(Args)]
pub struct LogsArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The match id.
    r#match: i64,
    /// The seat (0-based) of your bot.
    seat: i64,
}

struct Client {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Client {
    fn new(a: &ServerArgs) -> Client {
        Client {
            base: a.server.trim_end_matches('/').to_owned(),
            token: a.token.clone(),
            agent: ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build(),
        }
    }

    fn request(&self, method: &str, path: &str) -> ureq::Request {
        let r = self.agent.request(method, &format!("{}{path}", self.base));
        match &self.token {
            Some(t) => r.set("Authorization", &format!("Bearer {}", t.trim())),
            None => r,
        }
    }

    /// The response body, or the server's error message.
    fn finish(&self, r: Result<ureq::Response, ureq::Error>) -> anyhow::Result<ureq::Response> {
        match r {
            Ok(resp) => Ok(resp),
            Err(ureq::Error::Status(code, resp)) => {
                let text = resp.into_string().unwrap_or_default();
                let msg = serde_json::from_str::<ErrorBody>(&text).map(|e| e.error).unwrap_or(text);
                bail!("the server answered {code}: {msg}")
            }
            Err(e) => bail!("cannot reach {}: {e}", self.base),
        }
    }

    fn get<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        let resp = self.finish(self.request("GET", path).call())?;
        resp.into_json().with_context(|| format!("reading the server's answer to GET {path}"))
    }

    /// A ladder's id from its id or name.
    fn ladder_id(&self, ladder: &str) -> anyhow::Result<i64> {
        let list: Vec<LadderSummary> = self.get("/api/ladders")?;
        list.iter().find(|l| l.name == ladder || l.id.to_string() == ladder).map(|l| l.id).ok_or_else(|| {
            let names: Vec<&str> = list.iter().map(|l| l.name.as_str()).collect();
            anyhow::anyhow!("no ladder {ladder:?} on {}; there are: {}", self.base, names.join(", "))
        })
    }
}

pub fn submit(a: SubmitArgs) -> anyhow::Result<i32> {
    let c = Client::new(&a.server);
    if c.token.is_none() {
        bail!("submitting needs your token: --token or KOTH_TOKEN");
    }
    let ladder = c.ladder_id(&a.ladder)?;
    let bytes = std::fs::read(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let file_name = a.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let path = format!("/api/ladders/{ladder}/bots/{}?file={}", a.name, file_name);
    let resp = c.finish(c.request("POST", &path).set("Content-Type", "application/octet-stream").send_bytes(&bytes))?;
    let made: Submitted = resp.into_json()?;
    let (bot, version) = (made.bot, made.version);
    eprintln!("submitted {} ({}, main file {}): bot {bot}, version {version}; compiling...", a.name, made.language, made.main);
    let deadline = Instant::now() + Duration::from_secs(a.timeout_secs);
    let started = Instant::now();
    let status = loop {
        let b: BotInfo = c.get(&format!("/api/bots/{bot}"))?;
        let st = b.versions.iter().find(|v| v.id == version).map(|v| v.status).unwrap_or(VersionStatus::Pending);
        if st != VersionStatus::Pending {
            break st;
        }
        if Instant::now() > deadline {
            bail!("version {version} is still waiting for a runner after {} s", a.timeout_secs);
        }
        eprint!("\rcompiling... {:>4.0} s", started.elapsed().as_secs_f64());
        std::thread::sleep(Duration::from_millis(500));
    };
    eprintln!();
    if status == VersionStatus::Failed {
        let log: VersionLog = c.get(&format!("/api/versions/{version}/log"))?;
        eprintln!("compile failed:\n{}", log.log.unwrap_or_default());
        return Ok(1);
    }
    eprintln!("compiled in {:.1} s; it now plays on the ladder", started.elapsed().as_secs_f64());
    if a.watch == 0 {
        return Ok(0);
    }
    let mut shown = std::collections::HashSet::new();
    while shown.len() < a.watch {
        let ms: Vec<MatchSummary> = c.get(&format!("/api/bots/{bot}/matches"))?;
        for m in ms.iter().rev().filter(|m| m.state == MatchState::Finished) {
            if shown.len() < a.watch && shown.insert(m.match_id) {
                println!("{}", match_line(m, bot, &c.base));
            }
        }
        if shown.len() >= a.watch {
            break;
        }
        if Instant::now() > deadline {
            eprintln!("{} of {} matches finished within {} s", shown.len(), a.watch, a.timeout_secs);
            break;
        }
        eprint!("\rwaiting for matches: {}/{}", shown.len(), a.watch);
        std::thread::sleep(Duration::from_millis(500));
    }
    Ok(0)
}

/// One finished match as the author reads it: their result, rank and
/// score, the opponents, and where to watch it.
fn match_line(m: &MatchSummary, bot: i64, server: &str) -> String {
    let mine = m.seats.iter().find(|s| s.bot == bot);
    let opponents: Vec<&str> = m.seats.iter().filter(|s| s.bot != bot).map(|s| s.name.as_str()).collect();
    let (result, rank, score) = match mine {
        Some(s) => (
            s.result.clone().unwrap_or_else(|| "?".into()),
            s.rank.map(|r| r.to_string()).unwrap_or_else(|| "-".into()),
            s.score.map(|x| format!("{x}")).unwrap_or_else(|| "-".into()),
        ),
        None => ("?".into(), "-".into(), "-".into()),
    };
    format!(
        "match {}: {result} against {} (rank {rank}, score {score}{}) {server}/matches/{}",
        m.match_id,
        opponents.join(", "),
        if m.rated { "" } else { ", unrated" },
        m.match_id
    )
}

pub fn bots(a: LadderArg) -> anyhow::Result<i32> {
    let c = Client::new(&a.server);
    let id = c.ladder_id(&a.ladder)?;
    let list: Vec<LadderBot> = c.get(&format!("/api/ladders/{id}/bots"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(0);
    }
    println!("{:>5} {:<24} {:<14} {:<11} {:>8} {:<8} note", "id", "bot", "owner", "language", "version", "latest");
    for b in &list {
        println!(
            "{:>5} {:<24} {:<14} {:<11} {:>8} {:<8} {}",
            b.id,
            b.name,
            b.owner,
            b.language.as_deref().unwrap_or("-"),
            b.current_version.map(|v| v.to_string()).unwrap_or("-".into()),
            b.latest_status.map(|s| s.as_str()).unwrap_or("-"),
            b.disabled_reason.as_deref().unwrap_or("")
        );
    }
    Ok(0)
}

pub fn leaderboard(a: LadderArg) -> anyhow::Result<i32> {
    let c = Client::new(&a.server);
    let id = c.ladder_id(&a.ladder)?;
    let lb: Leaderboard = c.get(&format!("/api/ladders/{id}/leaderboard"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&lb)?);
        return Ok(0);
    }
    let table = &lb.standings;
    println!("{} ({})", a.ladder, table.format);
    // The columns are the format's own.
    let cell = |v: Option<&Value>| match v {
        Some(Value::Number(n)) if n.is_f64() => format!("{:.2}", n.as_f64().unwrap_or(0.0)),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
    };
    let widths: Vec<usize> = table.columns.iter().map(|c| c.label.chars().count().max(8)).collect();
    let head: Vec<String> = table.columns.iter().zip(&widths).map(|(c, w)| format!("{:>w$}", c.label)).collect();
    println!("{:>3}  {:<24} {}", "#", "bot", head.join("  "));
    for r in &table.rows {
        let values: Vec<String> = table.columns.iter().zip(&widths).map(|(c, w)| format!("{:>w$}", cell(r.values.get(&c.key)))).collect();
        println!("{:>3}. {:<24} {}", r.rank, r.name, values.join("  "));
    }
    Ok(0)
}

pub fn replay(cmd: ReplayCommand) -> anyhow::Result<i32> {
    let (server, r#match, output) = match cmd {
        ReplayCommand::Download { server, r#match, output } => (server, r#match, output),
        ReplayCommand::Check { file } => return Ok(super::replay::check(&file)),
    };
    let c = Client::new(&server);
    let replay: Value = c.get(&format!("/api/matches/{match}/replay"))?;
    let path = output.unwrap_or_else(|| PathBuf::from(format!("match-{match}.json")));
    std::fs::write(&path, serde_json::to_vec_pretty(&replay)?).with_context(|| format!("writing {}", path.display()))?;
    println!("{}", path.display());
    Ok(0)
}

pub fn logs(a: LogsArgs) -> anyhow::Result<i32> {
    let c = Client::new(&a.server);
    if c.token.is_none() {
        bail!("a bot's stderr is its owner's: --token or KOTH_TOKEN");
    }
    let v: SeatStderr = c.get(&format!("/api/matches/{}/stderr/{}", a.r#match, a.seat))?;
    print!("{}", v.stderr.unwrap_or_default());
    Ok(0)
}
