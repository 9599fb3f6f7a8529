//! The command-line client of a koth server's HTTP API: `koth submit`,
//! `koth bots`, `koth leaderboard`, `koth replay download`, `koth logs`,
//! `koth login`, `koth logout`, `koth tokens`.
//!
//! The server comes from `--server` (`KOTH_SERVER`), else from the login
//! file `koth login` wrote, else `http://127.0.0.1:8080`; the token from
//! `--token` (`KOTH_TOKEN`), else from the login file, but only for the
//! server it was saved for (a token is never sent to another server). The
//! login file is `$XDG_CONFIG_HOME/koth/login.json` (or
//! `~/.config/koth/login.json`), mode 0600 in a 0700 folder.
//! Ladders are named by id or name. Responses are read into the API's own
//! types (`koth_web::http::types`), so the client and the server
//! cannot disagree on a field.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use koth_web::http::types::{
    BotInfo, ErrorBody, JobState, LadderBot, LadderSummary, Leaderboard, MatchKind, MatchState, MatchSummary, Me, NewToken,
    NewTokenRequest, SeatStderr, Submitted, TokenInfo, VersionLog, VersionStatus,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

#[derive(Args, Clone)]
pub struct ServerArgs {
    /// The koth server (default: the one `koth login` saved, else http://127.0.0.1:8080).
    #[arg(long, env = "KOTH_SERVER", global = true)]
    server: Option<String>,
    /// Your API token (default: the one `koth login` saved for this server; `koth up` writes the host's to <data-dir>/host-token).
    #[arg(long, env = "KOTH_TOKEN", global = true, hide_env_values = true)]
    token: Option<String>,
}

const DEFAULT_SERVER: &str = "http://127.0.0.1:8080";

/// What `koth login` saves.
#[derive(serde::Serialize, serde::Deserialize)]
struct Login {
    server: String,
    token: String,
}

/// The login file's path.
fn login_path() -> anyhow::Result<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").context("neither XDG_CONFIG_HOME nor HOME is set: where should the login go?")?)
            .join(".config"),
    };
    Ok(base.join("koth").join("login.json"))
}

/// The saved login, if any; a file that cannot be read is said, not ignored.
fn saved_login() -> anyhow::Result<Option<Login>> {
    let path = login_path()?;
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .with_context(|| format!("{} is not a koth login file; remove it or run `koth login` again", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// The server a command that can work without one should ask: the one
/// given (`--server`, `KOTH_SERVER`; `true`), else the one `koth login`
/// saved (`false`); `None`: neither.
pub(super) fn known_server(given: Option<&str>) -> anyhow::Result<Option<(String, bool)>> {
    Ok(match given {
        Some(s) => Some((normalized(s), true)),
        None => saved_login()?.map(|l| (normalized(&l.server), false)),
    })
}

fn normalized(server: &str) -> String {
    server.trim().trim_end_matches('/').to_owned()
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
#[command(defer = true)]
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
        /// An external game's folder (its game.json and referee), for a
        /// replay of that game: its referee is run again over the answers.
        #[arg(long)]
        game: Option<PathBuf>,
        #[command(flatten)]
        store: super::BotStoreArgs,
    },
    /// Play a recorded match again on this machine with your bot in its
    /// seat and every other seat answering from the recording (no
    /// opponents' sources needed): says whether every move came out the
    /// same, or the first turn where your bot now answers differently
    /// (from there the rules play on, the others still answering from the
    /// recording).
    Rerun(RerunArgs),
    /// Watch a replay file in the viewer the site uses, served on this
    /// machine (its URL is printed; Ctrl-C stops it).
    View {
        /// A replay (from `koth match --replay FILE` or `koth replay download`).
        file: PathBuf,
        /// Address to serve on (port 0: any free port).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: String,
        /// Also open it in the desktop's browser (xdg-open).
        #[arg(long)]
        open: bool,
        /// Open it at this turn (the printed URL carries `?turn=N`).
        #[arg(long)]
        turn: Option<u32>,
        /// An external game's folder (its game.json and referee), for a
        /// replay of that game: its referee draws the frames.
        #[arg(long)]
        game: Option<PathBuf>,
        #[command(flatten)]
        store: super::BotStoreArgs,
    },
}

#[derive(Args)]
pub struct RerunArgs {
    /// A replay file, or the id of a match on the server (downloaded).
    pub source: String,
    /// Your bot: a source file, archive or folder.
    #[arg(long)]
    pub bot: PathBuf,
    /// Your bot's seat, from 1 as the pages number them (default: in a
    /// server match, the seat of your bot when you are signed in and have
    /// exactly one).
    #[arg(long)]
    pub seat: Option<usize>,
    /// Write the new run's replay to this file.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// Serve the new run in the viewer afterwards (`koth replay view`).
    #[arg(long)]
    pub open: bool,
    /// Give your bot this many times the match's time a move (and start-up
    /// allowance): 2 doubles it. For a machine slower or busier than the
    /// server's, where your bot would miss deadlines it met there. A turn
    /// your bot timed out in the recording may then be answered, and the
    /// run diverge there; the report says the scale it ran with.
    #[arg(long, default_value_t = 1.0, value_parser = parse_time_scale)]
    pub time_scale: f64,
    /// Where the snapshot your bot's folder started from in the match is:
    /// a `koth match --data` folder, or the snapshot's .tar itself. Needed
    /// when the match carried your bot's data (the replay names its hash);
    /// nothing is written back.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// An external game's folder (its game.json and referee), for a replay
    /// of that game.
    #[arg(long)]
    pub game: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub store: super::BotStoreArgs,
}

#[derive(Args)]
pub struct LogsArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The match id.
    r#match: i64,
    /// The seat, numbered from 1 as on the match page (default: your bot's
    /// seat, when you have exactly one in the match).
    #[arg(long)]
    seat: Option<usize>,
}

pub(super) struct Client {
    pub(super) base: String,
    pub(super) token: Option<String>,
    agent: ureq::Agent,
}

impl Client {
    pub(super) fn new(a: &ServerArgs) -> anyhow::Result<Client> {
        let login = saved_login()?;
        let base = normalized(a.server.as_deref().or(login.as_ref().map(|l| l.server.as_str())).unwrap_or(DEFAULT_SERVER));
        let token = a.token.clone().or_else(|| login.filter(|l| normalized(&l.server) == base).map(|l| l.token));
        Ok(Client { base, token, agent: ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build() })
    }

    /// A client of `server` without a token (public reads).
    pub(super) fn for_server(server: &str) -> Client {
        Client { base: normalized(server), token: None, agent: ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build() }
    }

    pub(super) fn request(&self, method: &str, path: &str) -> ureq::Request {
        let r = self.agent.request(method, &format!("{}{path}", self.base));
        match &self.token {
            Some(t) => r.set("Authorization", &format!("Bearer {}", t.trim())),
            None => r,
        }
    }

    /// The response body, or the server's error message.
    pub(super) fn finish(&self, r: Result<ureq::Response, ureq::Error>) -> anyhow::Result<ureq::Response> {
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

    pub(super) fn get<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        let resp = self.finish(self.request("GET", path).call())?;
        resp.into_json().with_context(|| format!("reading the server's answer to GET {path}"))
    }

    /// POST a JSON body (None: no body) and read the answer.
    pub(super) fn post<T: DeserializeOwned>(&self, path: &str, body: Option<&Value>) -> anyhow::Result<T> {
        let req = self.request("POST", path);
        let r = match body {
            Some(b) => req.set("Content-Type", "application/json").send_bytes(&serde_json::to_vec(b)?),
            None => req.call(),
        };
        self.finish(r)?.into_json().with_context(|| format!("reading the server's answer to POST {path}"))
    }

    /// A ladder's id from its id or name.
    pub(super) fn ladder_id(&self, ladder: &str) -> anyhow::Result<i64> {
        let list: Vec<LadderSummary> = self.get("/api/ladders")?;
        list.iter().find(|l| l.name == ladder || l.id.to_string() == ladder).map(|l| l.id).ok_or_else(|| {
            let names: Vec<&str> = list.iter().map(|l| l.name.as_str()).collect();
            anyhow::anyhow!("no ladder {ladder:?} on {}; there are: {}", self.base, names.join(", "))
        })
    }
}

pub fn submit(a: SubmitArgs) -> anyhow::Result<i32> {
    let c = Client::new(&a.server)?;
    if c.token.is_none() {
        bail!("submitting needs your token: `koth login`, --token or KOTH_TOKEN");
    }
    let ladder = c.ladder_id(&a.ladder)?;
    let bytes = std::fs::read(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let file_name = a.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let path = format!("/api/ladders/{ladder}/bots/{}?file={}", a.name, file_name);
    let resp = c.finish(c.request("POST", &path).set("Content-Type", "application/octet-stream").send_bytes(&bytes))?;
    let made: Submitted = resp.into_json()?;
    let (bot, version) = (made.bot, made.version);
    eprintln!("submitted {} ({}, main file {}) to {}/bots/{bot}", a.name, made.language, made.main, c.base);
    let deadline = Instant::now() + Duration::from_secs(a.timeout_secs);
    let started = Instant::now();
    let mut progress = Progress::new();
    // Each step said once, as it is first seen (a fast validation game may
    // be over before the first look).
    let (mut said_compiled, mut said_validating) = (false, false);
    let (status, validated) = loop {
        let b: BotInfo = c.get(&format!("/api/bots/{bot}"))?;
        let v = b.versions.iter().find(|v| v.id == version);
        let st = v.map(|v| v.status).unwrap_or(VersionStatus::Pending);
        if !said_compiled && !matches!(st, VersionStatus::Pending | VersionStatus::Failed) {
            let number = v.map(|v| format!("version {} ", v.number)).unwrap_or_default();
            progress.say(&format!("{number}compiled in {:.1} s", started.elapsed().as_secs_f64()));
            said_compiled = true;
        }
        // Queued or under way: what the version waits for, said as it is.
        let running = v.and_then(|v| v.job) == Some(JobState::Running);
        match st {
            VersionStatus::Pending if running => progress.show("compiling...", started),
            VersionStatus::Pending => progress.show("queued, waiting for a runner", started),
            VersionStatus::Validating => {
                if !said_validating {
                    let game = v.and_then(|v| v.validation_match).map(|m| format!(": {}/matches/{m}", c.base)).unwrap_or_default();
                    progress.say(&format!("playing its validation game against copies of itself{game}"));
                    said_validating = true;
                }
                progress.show(if running { "validation game under way" } else { "validation game queued" }, started);
            }
            _ => break (st, v.is_some_and(|v| v.validation_match.is_some())),
        }
        if Instant::now() > deadline {
            progress.end();
            bail!("the version is still {} after {} s", st.as_str(), a.timeout_secs);
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    progress.end();
    match status {
        VersionStatus::Failed => {
            let log: VersionLog = c.get(&format!("/api/versions/{version}/log"))?;
            eprintln!("compile failed:\n{}", log.log.unwrap_or_default());
            return Ok(1);
        }
        VersionStatus::Refused => {
            let log: VersionLog = c.get(&format!("/api/versions/{version}/log"))?;
            let game = log.validation_match.map(|m| format!(" ({}/matches/{m})", c.base)).unwrap_or_default();
            eprintln!("this version was {}{game}", log.validation.unwrap_or_else(|| "refused".into()));
            return Ok(1);
        }
        _ => {}
    }
    let how = if validated { "passed its validation game" } else { "ready (this ladder plays no validation games)" };
    eprintln!("{how} after {:.1} s; it now plays on the ladder", started.elapsed().as_secs_f64());
    if a.watch == 0 {
        return Ok(0);
    }
    let page = format!("{}/bots/{bot}", c.base);
    let mut shown = std::collections::HashSet::new();
    let mut progress = Progress::new();
    while shown.len() < a.watch {
        let ms: Vec<MatchSummary> = c.get(&format!("/api/bots/{bot}/matches"))?;
        for m in ms.iter().rev().filter(|m| m.state == MatchState::Finished) {
            if shown.len() < a.watch && shown.insert(m.match_id) {
                progress.end();
                println!("{}", match_line(m, bot, &c.base));
            }
        }
        if shown.len() >= a.watch {
            break;
        }
        // Nothing to wait for: say why and end, rather than wait in silence.
        if let Some(why) = no_matches_coming(&c, ladder, bot, &a.ladder, &ms)? {
            progress.end();
            eprintln!("{why}; {} of {} matches shown. Its page: {page}", shown.len(), a.watch);
            return Ok(0);
        }
        if Instant::now() > deadline {
            progress.end();
            let queued = ms.iter().filter(|m| m.state == MatchState::Queued && !m.running).count();
            let ahead = queued_on_ladder(&c, ladder)?;
            eprintln!(
                "{} of {} matches finished within {} s: {queued} of its matches are queued, behind {ahead} of the ladder's; \
                 they play as runners free up. Its page: {page}",
                shown.len(),
                a.watch,
                a.timeout_secs
            );
            break;
        }
        let running = ms.iter().filter(|m| m.state == MatchState::Queued && m.running).count();
        let queued = ms.iter().filter(|m| m.state == MatchState::Queued && !m.running).count();
        progress.show(&format!("waiting for matches: {}/{} ({running} playing, {queued} queued)", shown.len(), a.watch), started);
        std::thread::sleep(Duration::from_millis(500));
    }
    // Where those matches put it.
    let lb: Leaderboard = c.get(&format!("/api/ladders/{ladder}/leaderboard"))?;
    let rows = &lb.standings.rows;
    match rows.iter().find(|r| r.bot == bot) {
        Some(r) => {
            let first = lb.standings.columns.first().and_then(|col| r.values.get(&col.key).map(|v| (col.label.clone(), v.clone())));
            let value = first
                .map(|(label, v)| format!(", {label} {}", v.as_f64().map_or(v.to_string(), |x| format!("{x:.2}"))))
                .unwrap_or_default();
            println!("{} is {} of {} on {}{value}: {}/ladders/{ladder}", a.name, r.rank, rows.len(), a.ladder, c.base);
        }
        None => println!("{} is not on {}'s leaderboard yet: {}/ladders/{ladder}", a.name, a.ladder, c.base),
    }
    Ok(0)
}

/// Why no match of `bot` will come now, if none will: its ladder is paused,
/// or it has no opponent that can play (none of its queued or running
/// matches would then be waiting either).
fn no_matches_coming(c: &Client, ladder: i64, bot: i64, name: &str, ms: &[MatchSummary]) -> anyhow::Result<Option<String>> {
    if ms.iter().any(|m| m.state == MatchState::Queued) {
        return Ok(None);
    }
    let list: Vec<LadderSummary> = c.get("/api/ladders")?;
    if list.iter().any(|l| l.id == ladder && l.paused) {
        return Ok(Some(format!("the ladder {name} is paused by its host: no matches are played until it is resumed")));
    }
    let bots: Vec<LadderBot> = c.get(&format!("/api/ladders/{ladder}/bots"))?;
    let opponents = bots.iter().filter(|b| b.id != bot && b.current_version.is_some() && b.disabled_reason.is_none()).count();
    if opponents == 0 {
        return Ok(Some(format!("it is the only bot ready on {name}: its matches start when another bot is ready")));
    }
    Ok(None)
}

/// Matches of the ladder queued now.
fn queued_on_ladder(c: &Client, ladder: i64) -> anyhow::Result<usize> {
    let ms: Vec<MatchSummary> = c.get(&format!("/api/ladders/{ladder}/matches"))?;
    Ok(ms.iter().filter(|m| m.state == MatchState::Queued && !m.running).count())
}

/// What `koth submit` waits for, said as it goes: rewritten in place on a
/// terminal; on a pipe or a file, a line each time it changes (a `\r` there
/// runs every update together on one line).
struct Progress {
    terminal: bool,
    shown: Option<String>,
}

impl Progress {
    fn new() -> Progress {
        Progress { terminal: std::io::IsTerminal::is_terminal(&std::io::stderr()), shown: None }
    }

    /// `what`, with the seconds since `since` on a terminal.
    fn show(&mut self, what: &str, since: Instant) {
        if self.terminal {
            eprint!("\r{what:<44} {:>4.0} s", since.elapsed().as_secs_f64());
            self.shown = Some(what.to_owned());
        } else if self.shown.as_deref() != Some(what) {
            eprintln!("{what}");
            self.shown = Some(what.to_owned());
        }
    }

    /// A line of its own, after whatever was shown.
    fn say(&mut self, line: &str) {
        self.end();
        eprintln!("{line}");
    }

    /// Ends a line rewritten in place.
    fn end(&mut self) {
        if self.terminal && self.shown.take().is_some() {
            eprintln!();
        }
    }
}

/// One finished match as the author reads it: their result, rank and
/// score, the opponents, and where to watch it.
fn match_line(m: &MatchSummary, bot: i64, server: &str) -> String {
    let mine = m.seats.iter().find(|s| s.bot == bot);
    let opponents: Vec<&str> = m.seats.iter().filter(|s| s.bot != bot).map(|s| s.name.as_str()).collect();
    let (result, rank, score) = match mine {
        Some(s) => (
            s.result.map_or("?", |r| r.as_str()),
            s.rank.map(|r| r.to_string()).unwrap_or_else(|| "-".into()),
            s.score.map(|x| format!("{x}")).unwrap_or_else(|| "-".into()),
        ),
        None => ("?", "-".into(), "-".into()),
    };
    format!(
        "match {}: {result} against {} (rank {rank}, score {score}{}) {server}/matches/{}",
        m.match_id,
        opponents.join(", "),
        match m.kind {
            MatchKind::Rated => "",
            MatchKind::Standings => ", counts in the standings",
            MatchKind::Finals => ", finals",
            MatchKind::Challenge => ", a challenge: counts nowhere",
            MatchKind::Validation => ", a validation game: counts nowhere",
            MatchKind::Ab => ", a game of an A/B test: counts nowhere",
        },
        m.match_id
    )
}

pub fn bots(a: LadderArg) -> anyhow::Result<i32> {
    let c = Client::new(&a.server)?;
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
    let c = Client::new(&a.server)?;
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
        ReplayCommand::Check { file, game, store } => return Ok(super::replay::check(&file, game.as_deref(), &store)),
        ReplayCommand::View { file, listen, open, turn, game, store } => {
            return super::replay::view(&file, game.as_deref(), &store, &listen, open, turn)
        }
        ReplayCommand::Rerun(a) => return rerun(a),
    };
    let c = Client::new(&server)?;
    let replay: Value = c.get(&format!("/api/matches/{match}/replay"))?;
    let path = output.unwrap_or_else(|| PathBuf::from(format!("match-{match}.json")));
    std::fs::write(&path, serde_json::to_vec_pretty(&replay)?).with_context(|| format!("writing {}", path.display()))?;
    println!("{}", path.display());
    Ok(0)
}

/// The seats (0-based, as the API numbers them) of a match (its
/// `GET /api/matches/{id}`) whose bots are the caller's.
fn my_seats(c: &Client, info: &Value) -> anyhow::Result<Vec<usize>> {
    let me: Value = c.get("/api/me")?;
    Ok(info["seats"]
        .as_array()
        .map(|s| s.iter().filter(|x| x["owner"] == me["name"]).filter_map(|x| x["seat"].as_u64()).map(|x| x as usize).collect())
        .unwrap_or_default())
}

/// A time scale: a number from 0.1 to 100.
fn parse_time_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.1..=100.0).contains(&x) => Ok(x),
        _ => Err(format!("{s:?}: give a number from 0.1 to 100 (2 gives your bot twice the match's time a move)")),
    }
}

/// `koth replay rerun`: the recording from a file or the server, your seat,
/// then [`super::replay::rerun`].
fn rerun(a: RerunArgs) -> anyhow::Result<i32> {
    let file = PathBuf::from(&a.source);
    let mut server = None;
    let (replay, mine) = if file.exists() {
        let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
        (koth_games::replay::Replay::from_json(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?, None)
    } else if let Ok(id) = a.source.parse::<i64>() {
        let c = Client::new(&a.server)?;
        let replay: Value = c.get(&format!("/api/matches/{id}/replay"))?;
        let replay = koth_games::replay::Replay::from_value(&replay).map_err(|e| anyhow::anyhow!("match {id}: {e}"))?;
        // Your seat: the one seat of the match whose bot is yours.
        let mine = match &c.token {
            Some(_) => {
                let seats = my_seats(&c, &c.get(&format!("/api/matches/{id}"))?)?;
                (seats.len() == 1).then(|| seats[0])
            }
            None => None,
        };
        server = Some((c, id));
        (replay, mine)
    } else {
        bail!("{}: no such file, and not a match id", a.source);
    };
    let names = replay.seats.iter().enumerate().map(|(i, s)| format!("{} {}", i + 1, s.name)).collect::<Vec<_>>().join(", ");
    let seat = match (a.seat, mine) {
        (Some(n), _) if n >= 1 && n <= replay.seats.len() => n - 1,
        (Some(n), _) => bail!("--seat {n}: this match has seats 1 to {} ({names})", replay.seats.len()),
        (None, Some(s)) => s,
        (None, None) => bail!("say which seat is your bot's with --seat N (this match's seats: {names})"),
    };
    // A server's match whose seat carried data: its snapshot, from the
    // server (the bot's owner may read it), unless --data names one.
    let carried = replay.seats.get(seat).is_some_and(|s| s.data.is_some());
    let fetched = match (&a.data, server) {
        (None, Some((c, id))) if carried => {
            let path = format!("/api/matches/{id}/data/{seat}");
            let resp = c.finish(c.request("GET", &path).call()).with_context(|| format!("fetching seat {}'s data", seat + 1))?;
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(resp.into_reader(), koth_runner::storage::MAX_MAX_BYTES * 2), &mut bytes)?;
            let file = std::env::temp_dir().join(format!("koth-rerun-{id}-seat{}-{}.tar", seat + 1, std::process::id()));
            std::fs::write(&file, bytes).with_context(|| format!("writing {}", file.display()))?;
            Some(file)
        }
        _ => None,
    };
    let data = super::replay::seat_data(&replay, seat, a.data.as_deref().or(fetched.as_deref()));
    if let Some(f) = &fetched {
        let _ = std::fs::remove_file(f);
    }
    let data = data?;
    super::replay::rerun(&replay, seat, &a.bot, a.time_scale, a.game.as_deref(), &a.store, a.replay.as_deref(), a.open, data)
}

pub fn logs(a: LogsArgs) -> anyhow::Result<i32> {
    let c = Client::new(&a.server)?;
    if c.token.is_none() {
        bail!("a bot's stderr is its owner's: `koth login`, --token or KOTH_TOKEN");
    }
    let id = a.r#match;
    let info: Value = c.get(&format!("/api/matches/{id}"))?;
    let count = info["seats"].as_array().map_or(0, Vec::len);
    let seat = match a.seat {
        Some(n) if n >= 1 && n <= count => n - 1,
        Some(n) => bail!("--seat {n}: match {id} has seats 1 to {count} (numbered as on its page)"),
        None => match my_seats(&c, &info)?.as_slice() {
            [one] => *one,
            // A validation game: every seat is a copy of your version.
            many if !many.is_empty() && info["validates"].is_i64() => many[0],
            [] => bail!("none of match {id}'s seats is your bot's; say which with --seat N (1 to {count})"),
            many => bail!(
                "several seats of match {id} are your bots' ({}); say which with --seat N",
                many.iter().map(|s| (s + 1).to_string()).collect::<Vec<_>>().join(", ")
            ),
        },
    };
    let v: SeatStderr = c.get(&format!("/api/matches/{id}/stderr/{seat}"))?;
    print!("{}", v.stderr.unwrap_or_default());
    Ok(0)
}

#[derive(Args)]
pub struct LoginArgs {
    /// The koth server.
    #[arg(long, env = "KOTH_SERVER", default_value = DEFAULT_SERVER)]
    server: String,
    /// Your API token; without it, it is read from standard input (so it
    /// stays out of your shell's history).
    #[arg(long, env = "KOTH_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

/// `koth login`: check the token with the server, then save both.
pub fn login(a: LoginArgs) -> anyhow::Result<i32> {
    let token = match a.token {
        Some(t) => t,
        None => {
            eprint!("token for {}: ", normalized(&a.server));
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).context("reading the token from standard input")?;
            line
        }
    };
    let token = token.trim().to_owned();
    if token.is_empty() {
        bail!("no token given: --token, KOTH_TOKEN or a line on standard input");
    }
    let c = Client::new(&ServerArgs { server: Some(a.server.clone()), token: Some(token.clone()) })?;
    let me: Me = c.get("/api/me")?;
    let path = login_path()?;
    write_private(&path, &serde_json::to_vec_pretty(&Login { server: c.base.clone(), token })?)?;
    println!("signed in to {} as {}{}; saved in {}", c.base, me.name, if me.is_host { " (host)" } else { "" }, path.display());
    Ok(0)
}

#[derive(Args)]
pub struct SignupArgs {
    /// The name of your account: 1 to 40 letters, digits, `_`, `.` or `-`.
    name: String,
    /// The koth server.
    #[arg(long, env = "KOTH_SERVER", default_value = DEFAULT_SERVER)]
    server: String,
}

/// `koth signup NAME`: make an account on the server and save its token,
/// as `koth login` would (the token is shown once, by the server, and kept
/// only in the login file).
pub fn signup(a: SignupArgs) -> anyhow::Result<i32> {
    let c = Client::new(&ServerArgs { server: Some(a.server.clone()), token: None })?;
    let body = serde_json::to_vec(&koth_scheduler::types::NewUser { name: a.name.clone() })?;
    let resp = c.finish(c.request("POST", "/api/users").set("Content-Type", "application/json").send_bytes(&body))?;
    let made: koth_scheduler::types::NewAccount = resp.into_json().context("reading the server's answer to the sign-up")?;
    let path = login_path()?;
    write_private(&path, &serde_json::to_vec_pretty(&Login { server: c.base.clone(), token: made.token })?)?;
    println!(
        "signed up on {} as {}; your token is saved in {} (readable by you only)\nnext: `koth starter GAME LANGUAGE` for a bot to start from, then `koth submit`",
        c.base,
        made.name,
        path.display()
    );
    Ok(0)
}

/// Write `bytes` to `path` readable by its owner only: into a new file of
/// mode 0600 in a folder of mode 0700, then renamed over the old one.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    let dir = path.parent().context("the login file has no folder")?;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).with_context(|| format!("restricting {}", dir.display()))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("creating {}", tmp.display()))?;
    f.write_all(bytes).and_then(|_| f.sync_all()).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

#[derive(Args)]
pub struct LogoutArgs {
    /// Also revoke the saved token on its server (it stops working
    /// everywhere, not only here).
    #[arg(long)]
    revoke: bool,
}

/// `koth logout`: forget the saved login (and with `--revoke`, revoke it).
pub fn logout(a: LogoutArgs) -> anyhow::Result<i32> {
    let path = login_path()?;
    let Some(login) = saved_login()? else {
        println!("not signed in ({} does not exist)", path.display());
        return Ok(0);
    };
    if a.revoke {
        let c = Client::new(&ServerArgs { server: Some(login.server.clone()), token: Some(login.token.clone()) })?;
        let tokens: Vec<TokenInfo> = c.get("/api/me/tokens")?;
        let current = tokens.iter().find(|t| t.current).context("the server did not mark the token in use")?;
        c.finish(c.request("DELETE", &format!("/api/me/tokens/{}", current.id)).call())?;
        println!("revoked the token {:?} on {}", current.name, c.base);
    }
    std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
    println!("signed out of {}", normalized(&login.server));
    Ok(0)
}

#[derive(Subcommand)]
#[command(defer = true)]
pub enum TokensCommand {
    /// Your tokens: id, name, created, last used, expiry; `*` marks the one in use.
    List {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Make a named token (shown this once).
    New {
        #[command(flatten)]
        server: ServerArgs,
        /// Where it will be used ("laptop", "ci").
        name: String,
    },
    /// Revoke a token by its id (from `koth tokens list`); it stops working at once.
    Revoke {
        #[command(flatten)]
        server: ServerArgs,
        id: i64,
    },
    /// Replace a token by a new one of the same name (shown this once); the old one stops working.
    Rotate {
        #[command(flatten)]
        server: ServerArgs,
        id: i64,
    },
}

/// `koth tokens ...`: the account's tokens, through `/api/me/tokens`.
pub fn tokens(cmd: TokensCommand) -> anyhow::Result<i32> {
    let server = match &cmd {
        TokensCommand::List { server } | TokensCommand::New { server, .. } => server,
        TokensCommand::Revoke { server, .. } | TokensCommand::Rotate { server, .. } => server,
    };
    let c = Client::new(server)?;
    if c.token.is_none() {
        bail!("tokens are managed with one of your tokens: `koth login`, --token or KOTH_TOKEN");
    }
    let show_new = |t: NewToken| {
        println!("{}", t.token);
        eprintln!(
            "token {} ({:?}): shown this once; keep it safe{}",
            t.info.id,
            t.info.name,
            t.info.expires_at.map(|e| format!(", expires {e}")).unwrap_or_default()
        );
    };
    match cmd {
        TokensCommand::List { .. } => {
            let list: Vec<TokenInfo> = c.get("/api/me/tokens")?;
            println!("{:>6}  {:<20} {:<32} {:<32} expires", "id", "name", "created", "last used");
            for t in list {
                println!(
                    "{}{:>5}  {:<20} {:<32} {:<32} {}",
                    if t.current { "*" } else { " " },
                    t.id,
                    t.name,
                    t.created_at,
                    t.last_used_at.unwrap_or_else(|| "-".into()),
                    t.expires_at.unwrap_or_else(|| "never".into())
                );
            }
        }
        TokensCommand::New { name, .. } => {
            let body = serde_json::to_vec(&NewTokenRequest { name })?;
            let resp = c.finish(c.request("POST", "/api/me/tokens").set("Content-Type", "application/json").send_bytes(&body))?;
            show_new(resp.into_json().context("reading the new token")?);
        }
        TokensCommand::Revoke { id, .. } => {
            c.finish(c.request("DELETE", &format!("/api/me/tokens/{id}")).call())?;
            println!("revoked token {id}");
        }
        TokensCommand::Rotate { id, .. } => {
            let resp = c.finish(c.request("POST", &format!("/api/me/tokens/{id}/rotate")).call())?;
            show_new(resp.into_json().context("reading the new token")?);
        }
    }
    Ok(0)
}
