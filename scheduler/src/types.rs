//! The API's requests and responses: the contract between the service, the
//! CLI client (`src/cli/client.rs` deserialises these same types) and the
//! pages. The OpenAPI document is generated from them (`koth_web::http`);
//! golden files pin seven of them (`tests/golden/api/`).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

pub use crate::job::{AbState, GameStatus, JobState, MatchKind, MatchState, SeatResult, VersionStatus};

pub use crate::audit::{AuditAction, AuditEntry, AuditPage};
pub use koth_ladder::contest::{FinalRow, FinalStandings, FinalsPlan, Phase};
pub use koth_ladder::format::{Column, FormatName, StandingRow, Standings};

/// Every error: what went wrong and what to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub error: String,
}

crate::job::stored_states! {
    /// The service's health (not stored): the database answers, or not.
    HealthStatus { Ok = "ok", Degraded = "degraded" }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Health {
    pub status: HealthStatus,
    /// `ok`, or why the database cannot be reached.
    pub database: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    /// 1 to 40 letters, digits, `_`, `.` or `-`, not only dots.
    #[schema(pattern = r"^(?!\.+$)[A-Za-z0-9_.-]{1,40}$")]
    pub name: String,
}

/// A new account; the token is shown this once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct NewAccount {
    pub id: i64,
    pub name: String,
    pub token: String,
}

/// One of an account's API tokens (the token itself is shown only when
/// made). Times are PostgreSQL's `timestamptz` text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TokenInfo {
    pub id: i64,
    pub name: String,
    pub created_at: String,
    /// When it was last used, to the minute.
    pub last_used_at: Option<String>,
    /// When it stops working, if the host set a token lifetime.
    pub expires_at: Option<String>,
    /// The token this request was made with.
    pub current: bool,
}

/// A new token's name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTokenRequest {
    /// 1 to 40 letters, digits, `_`, `.` or `-`, not only dots (say where it is used: "laptop", "ci").
    #[schema(pattern = r"^(?!\.+$)[A-Za-z0-9_.-]{1,40}$")]
    pub name: String,
}

/// A token just made (or rotated); `token` is shown this once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct NewToken {
    pub token: String,
    #[serde(flatten)]
    pub info: TokenInfo,
}

/// A match cancelled before it was played.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MatchCancelled {
    pub id: i64,
    pub reason: String,
}

/// What deleting an account did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AccountDeleted {
    pub id: i64,
    /// Bots withdrawn (their matches stay in history).
    pub bots_withdrawn: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Me {
    pub id: i64,
    pub name: String,
    pub is_host: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LadderSummary {
    pub id: i64,
    pub name: String,
    pub game: String,
    pub format: FormatName,
    pub paused: bool,
    /// Bots that can play: a ready version, not disabled.
    pub bots: i64,
    /// Where its contest is: `open` until a deadline passes.
    pub phase: Phase,
    /// Submissions close then (RFC 3339, UTC); None: no deadline.
    pub deadline: Option<String>,
}

/// A ladder's contest: its phase, deadline, finals and their standings
/// (`GET /api/ladders/{id}/contest`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Contest {
    pub ladder: i64,
    pub phase: Phase,
    /// RFC 3339, UTC; None: no deadline.
    pub deadline: Option<String>,
    /// Who plays the finals and how; None before they start.
    pub finals: Option<FinalsPlan>,
    pub finals_started_at: Option<String>,
    /// The finals' standings: as they stand while the finals are played,
    /// frozen once they are over.
    pub standings: Option<FinalStandings>,
    pub finished_at: Option<String>,
    /// What the ladder plays now (its format, or its finals') has played
    /// all it will: a round robin whose every pairing is played, Swiss
    /// rounds all played. Never for a rated or neighbours ladder.
    pub played_out: bool,
}

/// Set, move or remove a ladder's deadline (hosts): `{"at": "2026-12-01T18:00:00Z"}`,
/// `{"in_seconds": 3600}` (0: now), or `{}` for no deadline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeadlineRequest {
    /// A time, RFC 3339 (`2026-12-01T18:00:00Z`, `2026-12-01 19:00+01`).
    pub at: Option<String>,
    /// This many seconds from now (0: now).
    #[schema(minimum = 0)]
    pub in_seconds: Option<i32>,
}

/// Start a contest's finals (hosts), once its deadline has passed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FinalsRequest {
    /// How many of the standings' top play the finals (at least the seats of a match).
    #[schema(minimum = 2, maximum = 1000)]
    pub top: u32,
    /// A format that ends: `round_robin` (default: every pairing on every
    /// side) or `swiss`; the others are refused, since their standings
    /// would never be final.
    pub format: Option<FormatName>,
    /// The format's own settings over its defaults (e.g. `{"rounds": 3}`);
    /// seats and limits are the ladder's unless given.
    #[schema(value_type = Option<Object>)]
    pub settings: Option<Value>,
    /// Adaptive finals: at most this many matches (at least the base
    /// round's n(n−1)); after the base round, paired games go to the
    /// adjacent places least settled until every adjacent pair is ordered
    /// with 95% confidence or the budget is spent. Round robin, two seats.
    #[schema(minimum = 2)]
    pub budget: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLadder {
    #[schema(pattern = r"^(?!\.+$)[A-Za-z0-9_.-]{1,40}$")]
    pub name: String,
    /// A game the server offers (`GET /api/games`): koth's own (`flit`,
    /// `slime`, `linkage`, `target`, `snake`) or one a host added.
    pub game: String,
    /// Default: the game's own (its seed's, or its manifest's).
    pub format: Option<FormatName>,
    /// Fields over the format's defaults: `seats`, `max_turns`,
    /// `max_match_seconds` and the format's own (see the README's table).
    #[schema(value_type = Option<Object>)]
    pub settings: Option<Value>,
}

/// A ladder format (`GET /api/formats`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FormatInfo {
    pub name: FormatName,
    /// It plays a set of matches and stops (a round robin, Swiss rounds):
    /// the formats a contest's finals may be played in.
    pub ends: bool,
    /// Its own settings and their defaults (besides the common `seats`,
    /// `max_turns`, `max_match_seconds` and `skip_validation`).
    #[schema(value_type = Object)]
    pub settings: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LadderCreated {
    pub id: i64,
    pub name: String,
    pub game: String,
    pub format: FormatName,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Paused {
    pub id: i64,
    pub paused: bool,
}

/// A ladder's leaderboard, drawn by its format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Leaderboard {
    pub ladder: i64,
    #[serde(flatten)]
    pub standings: Standings,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LadderBot {
    pub id: i64,
    pub name: String,
    pub owner: String,
    /// The number of the version that plays.
    pub current_version: Option<i32>,
    pub language: Option<String>,
    /// The newest version's status.
    pub latest_status: Option<VersionStatus>,
    pub disabled_reason: Option<String>,
}

/// One of the caller's bots, on whichever ladder (`GET /api/me/bots`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MyBot {
    pub id: i64,
    pub name: String,
    pub ladder: i64,
    pub ladder_name: String,
    pub game: String,
    /// The number of the version that plays.
    pub current_version: Option<i32>,
    pub language: Option<String>,
    /// The newest version's number and status.
    pub latest_version: Option<i32>,
    pub latest_status: Option<VersionStatus>,
    pub disabled_reason: Option<String>,
}

/// An accepted upload: the version and its compile job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Submitted {
    pub bot: i64,
    /// The version's id (`/api/versions/{id}/...`).
    pub version: i64,
    /// Its number among its bot's versions (1, 2, ...), as pages show it.
    pub number: i32,
    pub compile_job: i64,
    pub language: String,
    pub main: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RatingNow {
    pub mu: f64,
    pub sigma: f64,
    pub games: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VersionInfo {
    pub id: i64,
    pub number: i32,
    pub language: String,
    pub main: String,
    pub status: VersionStatus,
    /// The image it was compiled in.
    pub image: Option<String>,
    pub submitted: String,
    /// Its validation game (a match against copies of itself), once queued.
    pub validation_match: Option<i64>,
    /// While it waits: the state of the job it waits for (its compile while
    /// `pending`, its validation game while `validating`): `available`
    /// means queued for a runner, `running` under way.
    #[serde(default)]
    pub job: Option<JobState>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BotInfo {
    pub id: i64,
    pub name: String,
    pub owner: String,
    pub ladder: i64,
    pub ladder_name: String,
    pub format: FormatName,
    pub game: String,
    /// The id of the version that plays.
    pub current_version: Option<i64>,
    pub disabled_reason: Option<String>,
    pub rating: Option<RatingNow>,
    pub versions: Vec<VersionInfo>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RatingPoint {
    #[serde(rename = "match")]
    pub match_id: i64,
    pub mu: f64,
    pub sigma: f64,
    /// μ − 3σ, the leaderboard's order.
    pub score: f64,
    pub at: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    /// Shown to the bot's owner: some text other than spaces, and no NUL.
    #[schema(pattern = r"^[^\x00]*[^\x00\s][^\x00]*$")]
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BotDisabled {
    pub id: i64,
    /// None: enabled.
    pub disabled_reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VersionLog {
    pub version: i64,
    pub status: VersionStatus,
    /// The compiler's output.
    pub log: Option<String>,
    /// What its validation game showed: why it was refused, with the
    /// failing copy's stderr, or that it passed; none before it is played.
    pub validation: Option<String>,
    /// The validation game, once queued.
    pub validation_match: Option<i64>,
}

/// A seat in a list of matches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeatSummary {
    pub seat: i32,
    pub bot: i64,
    pub name: String,
    pub rank: Option<i32>,
    /// Once finished.
    pub result: Option<SeatResult>,
    pub score: Option<f64>,
    /// Where its ladder carries bots' data: why this match saved none for
    /// the seat (over its quota, ...; docs/scheduler.md, "Bot data").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MatchSummary {
    #[serde(rename = "match")]
    pub match_id: i64,
    pub state: MatchState,
    pub rated: bool,
    /// What it counts for.
    pub kind: MatchKind,
    pub turns: Option<i32>,
    pub finished: Option<String>,
    /// Queued and a runner is playing it now.
    pub running: bool,
    /// A match of its ladder's finals.
    pub finals: bool,
    pub seats: Vec<SeatSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MatchSeat {
    pub seat: i32,
    pub bot: i64,
    pub name: String,
    pub owner: String,
    pub version: i64,
    pub score: Option<f64>,
    pub rank: Option<i32>,
    pub result: Option<SeatResult>,
    /// How the bot's program fared: `{"kind": "ok"}`, `{"kind":
    /// "crashed", "code", "signal", "turn"}`, ... (docs/replay.md).
    #[schema(value_type = Option<Object>)]
    pub status: Option<Value>,
    /// The seat's data, where its ladder carries bots' data between
    /// matches (docs/scheduler.md, "Bot data").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<SeatDataInfo>,
}

/// What a seat's data was in a match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SeatDataInfo {
    /// The snapshot its folder started from (`sha256:` and 64 hex digits);
    /// its owner downloads it with `GET /api/matches/{id}/data/{seat}`.
    pub started_from: String,
    /// The snapshot that became its version's data.
    pub written: Option<String>,
    /// Why none did: over its quota, the match ended abnormally, or
    /// another match of its version saved first.
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MatchInfo {
    pub id: i64,
    pub ladder: Option<i64>,
    pub ladder_name: Option<String>,
    pub game: Option<String>,
    pub state: MatchState,
    /// The match's seed, as a string (64-bit seeds do not survive
    /// JavaScript's numbers): `koth match --seed S` plays it again.
    pub seed: String,
    pub rated: bool,
    /// What it counts for.
    pub kind: MatchKind,
    pub engine: Option<String>,
    pub turns: Option<i32>,
    pub error: Option<String>,
    pub created: String,
    pub finished: Option<String>,
    pub seats: Vec<MatchSeat>,
    /// The command that plays this match again on the reader's machine
    /// (`koth match` with its game, seed, seats and limits); each seat's
    /// argument is named after that seat's bot: put its source there.
    #[serde(default)]
    pub reproduce: Option<String>,
    /// The version this match is the validation game of (every seat is a
    /// copy of it; unrated, not its ladder's).
    #[serde(default)]
    pub validates: Option<i64>,
    /// The A/B test this match is a game of (`GET /api/ab/{id}`; unrated,
    /// not its ladder's), and its pair.
    #[serde(default)]
    pub ab_test: Option<i64>,
    #[serde(default)]
    pub ab_pair: Option<i32>,
    /// A queued match a runner is playing now.
    #[serde(default)]
    pub running: bool,
    /// While it runs: the turns played so far (the runner writes them
    /// about once a second).
    #[serde(default)]
    pub progress: Option<i32>,
}

impl MatchInfo {
    /// A replay on the reader's machine as the match page shows a match
    /// (numbered 0; seats are the replay's names, with no bot pages).
    pub fn of_local_replay(r: &koth_games::replay::Replay) -> MatchInfo {
        let result = |seat: usize| r.result.iter().find(|x| x.seat == seat);
        let names: Vec<(String, String)> = r
            .seats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let name = if s.name.is_empty() { format!("seat{}", i + 1) } else { s.name.clone() };
                let ext = file_of_shown_name(&name).rsplit_once('.').map(|(_, e)| e.to_owned()).unwrap_or_default();
                (name, ext)
            })
            .collect();
        let (max_turns, wall) = match &r.ended_by {
            koth_games::replay::EndedBy::TurnLimit { turns } => (Some(*turns), None),
            koth_games::replay::EndedBy::WallClockCap { seconds } => (None, Some(seconds.ceil() as u32)),
            koth_games::replay::EndedBy::Rules
            | koth_games::replay::EndedBy::RefereeFailed { .. }
            | koth_games::replay::EndedBy::HostOverloaded { .. }
            | koth_games::replay::EndedBy::ReplayLimit { .. } => (None, None),
        };
        MatchInfo {
            id: 0,
            ladder: None,
            ladder_name: None,
            game: Some(r.game.name().to_owned()),
            state: MatchState::Finished,
            seed: r.seed.to_string(),
            rated: false,
            // A match played on the author's machine counts nowhere.
            kind: MatchKind::Challenge,
            engine: Some(r.engine.clone()),
            turns: Some(r.turns.len() as i32),
            error: None,
            created: String::new(),
            finished: None,
            seats: names
                .iter()
                .enumerate()
                .map(|(i, (name, _))| MatchSeat {
                    seat: i as i32,
                    bot: 0,
                    name: name.clone(),
                    owner: String::new(),
                    version: 0,
                    score: result(i).map(|x| x.score),
                    rank: result(i).map(|x| x.rank as i32),
                    result: result(i).map(|x| x.result.into()),
                    status: None,
                    data: None,
                })
                .collect(),
            // An external game is played from its folder (named after it here).
            // The files played, not the names shown (`bot.py (2)` is bot.py).
            reproduce: Some(reproduce_command(
                &r.game.kind().map_or_else(|| format!("./{}", r.game.name()), |g| g.name().to_owned()),
                &r.seed.to_string(),
                &names.iter().map(|(n, e)| (file_of_shown_name(n).to_owned(), e.clone())).collect::<Vec<_>>(),
                max_turns,
                wall,
            )),
            validates: None,
            ab_test: None,
            ab_pair: None,
            running: false,
            progress: None,
        }
    }
}

/// The names seats are shown under on the author's machine (the local
/// viewer): a name two or more seats share (one file played twice, `koth
/// match bot.py bot.py`) gets its place among them, `bot.py (1)`,
/// `bot.py (2)`; the others stay as they are.
pub fn distinct_seat_names(names: &[String]) -> Vec<String> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if names.iter().filter(|m| *m == n).count() < 2 {
                return n.clone();
            }
            format!("{n} ({})", names[..=i].iter().filter(|m| *m == n).count())
        })
        .collect()
}

/// The file a name of [`distinct_seat_names`] stands for: `bot.py (2)` is
/// `bot.py`.
fn file_of_shown_name(name: &str) -> &str {
    match name.rsplit_once(" (") {
        Some((file, n)) if n.strip_suffix(')').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) => file,
        _ => name,
    }
}

/// `koth match` for a match: `seats` are each seat's (bot name, its
/// language's file extension), in seat order; `max_turns` and
/// `max_match_seconds` are its ladder's limits. Bot names are
/// `[A-Za-z0-9_.-]` (the API's rule), so the command needs no quoting.
pub fn reproduce_command(
    game: &str,
    seed: &str,
    seats: &[(String, String)],
    max_turns: Option<u32>,
    max_match_seconds: Option<u32>,
) -> String {
    let mut cmd = format!("koth match --game {game} --seed {seed} --players {}", seats.len());
    if let Some(t) = max_turns {
        cmd += &format!(" --max-turns {t}");
    }
    if let Some(s) = max_match_seconds {
        cmd += &format!(" --wall-cap {s}s");
    }
    for (name, ext) in seats {
        // A name that already ends in its extension is not doubled.
        if ext.is_empty() || name.ends_with(&format!(".{ext}")) {
            cmd += &format!(" {name}");
        } else {
            cmd += &format!(" {name}.{ext}");
        }
    }
    cmd
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StderrTurn {
    /// None: written after the last turn.
    pub turn: Option<u32>,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SeatStderr {
    #[serde(rename = "match")]
    pub match_id: i64,
    pub seat: i32,
    pub stderr: Option<String>,
    pub turns: Vec<StderrTurn>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HeadToHead {
    pub bot: i64,
    pub name: String,
    pub played: i64,
    pub won: i64,
    pub lost: i64,
    pub tied: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GameInfo {
    pub name: String,
    /// Fewest and most seats.
    pub seats: [usize; 2],
    /// The time per move and what a late answer means.
    #[schema(value_type = Object)]
    pub time: Value,
    /// The page that describes its protocol.
    pub protocol: String,
    /// Bots to start from, one per language, each playing legally.
    pub starters: Vec<StarterInfo>,
    /// A title for people (an added game's manifest's).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// Added by a host (its referee a program of its own), not koth's own.
    #[serde(default)]
    pub added: bool,
    /// Offered for ladders once ready; an added game is validating until a
    /// runner has played its example bots, or refused (see `log`).
    pub status: GameStatus,
    /// An added game's validation: why it was refused, or what it showed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// The host who added it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_by: Option<String>,
}

/// An added game, stored and its validation queued.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GameAdded {
    pub name: String,
    pub status: GameStatus,
    /// The example bots its validation match plays.
    pub example_bots: Vec<String>,
    /// Where to follow it (`GET`).
    pub url: String,
}

/// A replay the reader has on their machine, drawn for the viewer
/// (`POST /api/replays/frames`): the match page's view of it and its frames.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DrawnReplay {
    pub info: MatchInfo,
    /// As `GET /api/matches/{id}/frames` serves them.
    #[schema(value_type = Object)]
    pub frames: Value,
}

/// A match being played, as far as its runner has written it (about once a
/// second), for the viewer to draw while it runs
/// (`GET /api/matches/{id}/live?from=K`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LiveMatch {
    pub id: i64,
    /// A runner is playing it now. `false`: not yet taken, or it has ended
    /// (read the match again: a finished one has its replay).
    pub running: bool,
    /// Turns written so far: frames `0..=turns_played` exist.
    pub turns_played: u32,
    /// The frames from `from` on, as `GET /api/matches/{id}/frames` serves
    /// a finished match's (from 0: the first with every cell; later ones
    /// with the cells each turn changed, so they follow those the reader
    /// has). `null` while not running.
    #[schema(value_type = Option<Object>)]
    pub frames: Option<Value>,
    /// The turns those frames follow (answers, times, judgements and
    /// events as the replay will have them): from turn `max(from, 1)` on.
    #[schema(value_type = Vec<Object>)]
    pub turns: Vec<Value>,
}

/// A game's starter kit in one language.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StarterInfo {
    pub language: String,
    pub display: String,
    /// The name to save and submit it under.
    pub file: String,
    /// Where to download it.
    pub url: String,
    /// Whether this server's runners can run its language: a kit they
    /// cannot run is listed, not offered (its download is refused).
    #[serde(default = "available_by_default")]
    pub available: bool,
    /// Why not, when not (the runners' words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

fn available_by_default() -> bool {
    true
}

impl StarterInfo {
    /// The kit `file` of `game` in `language`; `unavailable`: why this
    /// server cannot run it, if it cannot.
    pub fn new(game: &str, language: &koth_runner::language::Language, file: &str, unavailable: Option<String>) -> StarterInfo {
        StarterInfo {
            language: language.name.clone(),
            display: language.display.clone(),
            file: file.into(),
            url: format!("/api/games/{game}/starters/{}", language.name),
            available: unavailable.is_none(),
            unavailable,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LanguageInfo {
    pub name: String,
    pub display: String,
    pub extensions: Vec<String>,
    pub compiled: bool,
    /// This server's runners can compile and run it (true too before any
    /// runner has reported). Uploads in other languages are refused.
    pub available: bool,
    /// With what: `image 1a2b3c4d5e6f` or `host toolchain: <its version>`.
    pub runs_with: Option<String>,
    /// Why not, and what the host can do about it.
    pub unavailable: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewChallenge {
    pub ladder: i64,
    /// Bots in seat order; one must be the caller's.
    pub bots: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChallengeCreated {
    #[serde(rename = "match")]
    pub match_id: i64,
    pub rated: bool,
}

/// "Is version #new better than #old?": an A/B test of two compiled
/// versions of one of the caller's bots (docs/ab.md). Unset fields take
/// `koth ab`'s defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAbTest {
    /// The new version's number on its bot (`#N` on the bot page).
    #[schema(minimum = 1)]
    pub new: i32,
    /// The number of the version to beat.
    #[schema(minimum = 1)]
    pub old: i32,
    /// H0, in logistic Elo: new is this much better (default 0: no better).
    #[serde(default)]
    #[schema(minimum = -1000, maximum = 1000)]
    pub elo0: Option<f64>,
    /// H1, in logistic Elo: the gain worth finding (default 30); above elo0.
    #[serde(default)]
    #[schema(minimum = -1000, maximum = 1000)]
    pub elo1: Option<f64>,
    /// The chance of saying "better" when H0 holds (default 0.05).
    #[serde(default)]
    #[schema(exclusive_minimum = 0, exclusive_maximum = 0.5)]
    pub alpha: Option<f64>,
    /// The chance of saying "not better" when H1 holds (default 0.05).
    #[serde(default)]
    #[schema(exclusive_minimum = 0, exclusive_maximum = 0.5)]
    pub beta: Option<f64>,
    /// Pairs of games at most (default 200); then the test ends undecided.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1000)]
    pub max_pairs: Option<i32>,
}

/// An A/B test between two versions of a bot and where it stands: its
/// pairs of unrated games (one seed, seats swapped), the sequential
/// test's statistic and, once there is one, its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AbTest {
    pub id: i64,
    pub bot: i64,
    /// The new version: its id and its number on the bot.
    pub new_version: i64,
    pub new_number: i32,
    /// The version to beat.
    pub old_version: i64,
    pub old_number: i32,
    /// Seats of each game: new and old take turns in them.
    pub seats: i32,
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub max_pairs: i32,
    pub state: AbState,
    /// Pairs counted (both games played).
    pub pairs: i64,
    /// Pairs per pair score, from 0 (new lost every comparison of both
    /// games) up: for two seats the pentanomial counts LL, LD, DD+WL, WD, WW.
    pub counts: Vec<i64>,
    /// New's mean score against old over the games counted (0.5 before any).
    pub score: f64,
    /// The logistic Elo of that score; none while infinite.
    pub elo: Option<f64>,
    /// The test's statistic, and the bounds at which it decides.
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    /// Why a stopped test stopped.
    pub error: Option<String>,
    /// Its games, oldest first (unrated, with replays).
    pub matches: Vec<AbMatch>,
    pub started: String,
    pub finished: Option<String>,
}

/// One game of an A/B test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AbMatch {
    #[serde(rename = "match")]
    pub match_id: i64,
    /// The pair it belongs to, from 1; its two games share a seed.
    pub pair: i32,
    pub state: MatchState,
    /// The new version's score against old in it (1 win, 0.5 draw, 0
    /// loss for two seats), once played.
    pub new_score: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn leaderboard() -> Leaderboard {
        let row = |rank, bot, name: &str, score: f64| StandingRow {
            rank,
            bot,
            name: name.into(),
            values: [("score", json!(score)), ("mu", json!(25.0)), ("sigma", json!(1.5)), ("games", json!(40))]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        };
        Leaderboard {
            ladder: 3,
            standings: Standings {
                format: FormatName::Rated,
                columns: [("score", "μ − 3σ"), ("mu", "μ"), ("sigma", "σ"), ("games", "games")]
                    .map(|(key, label)| Column { key: key.into(), label: label.into() })
                    .to_vec(),
                rows: vec![row(1, 7, "wall_hugger", 20.5), row(2, 9, "drift", 19.0)],
            },
        }
    }

    fn match_info() -> MatchInfo {
        MatchInfo {
            id: 41,
            ladder: Some(3),
            ladder_name: Some("snake".into()),
            game: Some("snake".into()),
            state: MatchState::Finished,
            seed: "2313453884618432439".into(),
            rated: false,
            kind: MatchKind::Standings,
            engine: Some("koth-runner 0.2.0".into()),
            turns: Some(212),
            error: None,
            created: "2026-11-24 10:00:00+00".into(),
            finished: Some("2026-11-24 10:00:03+00".into()),
            seats: vec![
                MatchSeat {
                    seat: 0,
                    bot: 7,
                    name: "wall_hugger".into(),
                    owner: "alice".into(),
                    version: 12,
                    score: Some(2.0),
                    rank: Some(1),
                    result: Some(SeatResult::Win),
                    status: Some(json!({"kind": "ok"})),
                    data: None,
                },
                MatchSeat {
                    seat: 1,
                    bot: 9,
                    name: "drift".into(),
                    owner: "bob".into(),
                    version: 15,
                    score: Some(0.0),
                    rank: Some(2),
                    result: Some(SeatResult::Loss),
                    status: Some(json!({"kind": "crashed", "code": 1, "signal": null, "turn": 211})),
                    data: None,
                },
            ],
            reproduce: Some(reproduce_command(
                "snake",
                "2313453884618432439",
                &[("wall_hugger".into(), "c".into()), ("drift".into(), "py".into())],
                None,
                None,
            )),
            validates: None,
            ab_test: None,
            ab_pair: None,
            running: false,
            progress: None,
        }
    }

    #[test]
    fn the_reproduce_command_names_every_seat_and_limit() {
        let seats = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
        let cases = [
            (("target", "5", seats(&[("a", "py"), ("b", "c")]), None, None), "koth match --game target --seed 5 --players 2 a.py b.c"),
            (
                ("flit", "18446744073709551615", seats(&[("x", "rs"), ("x", "rs"), ("y.rs", "rs"), ("z.py", "c")]), Some(50), Some(600)),
                "koth match --game flit --seed 18446744073709551615 --players 4 --max-turns 50 --wall-cap 600s x.rs x.rs y.rs z.py.c",
            ),
        ];
        for ((game, seed, s, turns, secs), want) in cases {
            assert_eq!(reproduce_command(game, seed, &s, turns, secs), want);
        }
    }

    fn bot_info() -> BotInfo {
        BotInfo {
            id: 7,
            name: "wall_hugger".into(),
            owner: "alice".into(),
            ladder: 3,
            ladder_name: "snake".into(),
            format: FormatName::RoundRobin,
            game: "snake".into(),
            current_version: Some(12),
            disabled_reason: None,
            rating: None,
            versions: vec![VersionInfo {
                id: 12,
                number: 1,
                language: "c".into(),
                main: "bot.c".into(),
                status: VersionStatus::Ready,
                image: Some("sha256:0123".into()),
                submitted: "2026-11-24 09:59:00+00".into(),
                validation_match: Some(40),
                job: None,
            }],
        }
    }

    fn contest() -> Contest {
        let mut values = std::collections::BTreeMap::new();
        values.insert("points".to_owned(), serde_json::json!(14.0));
        values.insert("games".to_owned(), serde_json::json!(8));
        Contest {
            ladder: 3,
            phase: Phase::Final,
            deadline: Some("2026-12-01T18:00:00Z".into()),
            finals: Some(FinalsPlan {
                top: 2,
                format: FormatName::RoundRobin,
                settings: serde_json::json!({"seats": 2, "rounds": 4, "scoring": {"points": {"win": 2.0, "tie": 1.0, "loss": 0.0}}}),
                finalists: vec![7, 9],
                budget: Some(40),
            }),
            finals_started_at: Some("2026-12-02T09:00:00Z".into()),
            standings: Some(FinalStandings {
                format: FormatName::RoundRobin,
                columns: vec![
                    Column { key: "points".into(), label: "points".into() },
                    Column { key: "games".into(), label: "games".into() },
                ],
                rows: vec![FinalRow {
                    rank: 1,
                    bot: 7,
                    name: "wall_hugger".into(),
                    values,
                    low: Some(1.35),
                    high: Some(2.15),
                    settled: false,
                    rank_low: Some(1),
                    rank_high: Some(2),
                }],
                unsettled: 1,
                matches: 8,
                budget: Some(40),
            }),
            finished_at: Some("2026-12-02T09:40:00Z".into()),
            played_out: true,
        }
    }

    /// A live match as the viewer reads it: frames from 3 on (changes only)
    /// and the turns they follow.
    fn live_match() -> LiveMatch {
        LiveMatch {
            id: 41,
            running: true,
            turns_played: 4,
            frames: Some(json!({
                "game": "target", "width": 2, "height": 1, "legend": [], "roles": [null, null],
                "frames": [{"turn": 3, "changes": [[0, "0"]], "marks": [], "caption": "turn 3"},
                           {"turn": 4, "changes": [], "marks": [], "caption": "turn 4"}],
            })),
            turns: vec![
                json!({"turn": 3, "engine_us": 120, "answers": [{"seat": 0, "answer": "2"}], "times": [], "judgements": [], "events": []}),
                json!({"turn": 4, "engine_us": 95, "answers": [{"seat": 0, "timeout": true}], "times": [], "judgements": [], "events": []}),
            ],
        }
    }

    /// An added game, refused by its validation (`GET /api/games/{game}`).
    fn added_game() -> GameInfo {
        GameInfo {
            name: "rpsls".into(),
            seats: [2, 8],
            time: json!({"per_move": 50, "on_timeout": {"kind": "no_move", "freeze_after": 5}}),
            protocol: "/games/rpsls".into(),
            // Its example bots are its kits: one this server runs, one it cannot.
            starters: vec![
                StarterInfo::new("rpsls", koth_runner::language::by_name("python").unwrap(), "cycler.py", None),
                StarterInfo::new(
                    "rpsls",
                    koth_runner::language::by_name("c").unwrap(),
                    "counter.c",
                    Some("no c image is built and this host has no C toolchain".into()),
                ),
            ],
            title: "Rock Paper Scissors Lizard Spock".into(),
            added: true,
            status: GameStatus::Refused,
            log: Some("refused: in the validation match between its example bots, the referee failed on turn 3: ...".into()),
            added_by: Some("host".into()),
        }
    }

    /// A page of the audit trail (`GET /api/audit`): a runner's entry and a host's.
    fn audit_page() -> AuditPage {
        use crate::audit::Subjects;
        AuditPage {
            entries: vec![
                crate::audit::AuditEntry::new(
                    41,
                    "2026-03-01T12:00:05Z".into(),
                    Some(1),
                    "host".into(),
                    AuditAction::BotDisabled,
                    Subjects { ladder: Some(3), bot: Some(7), ..Subjects::default() },
                    "disabled by a host: reads the other bot's files; 2 queued match(es) cancelled".into(),
                ),
                crate::audit::AuditEntry::new(
                    40,
                    "2026-03-01T12:00:01Z".into(),
                    None,
                    "runner box:12:0".into(),
                    AuditAction::MatchFinished,
                    Subjects { ladder: Some(3), match_id: Some(90), ..Subjects::default() },
                    "a ladder match, 31 turns: seat 1 drift rank 1 (score 3); seat 2 wall rank 2 (score 0)".into(),
                ),
            ],
            next_before: Some(40),
        }
    }

    /// One file played in two seats is told apart by its place; the
    /// command to play it again names the file twice.
    #[test]
    fn seats_of_one_file_are_told_apart() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let cases: &[(&[&str], &[&str])] = &[
            (&["bot.py", "bot.py"], &["bot.py (1)", "bot.py (2)"]),
            (&["a.py", "b.c"], &["a.py", "b.c"]),
            (&["x", "y", "x", "x"], &["x (1)", "y", "x (2)", "x (3)"]),
            (&["bot.py (1)", "bot.py"], &["bot.py (1)", "bot.py"]),
            (&[], &[]),
        ];
        for (names, shown) in cases {
            assert_eq!(distinct_seat_names(&s(names)), s(shown), "{names:?}");
        }
        for (shown, file) in
            [("bot.py (2)", "bot.py"), ("bot.py", "bot.py"), ("my (bot).py", "my (bot).py"), ("x ()", "x ()"), ("x (1a)", "x (1a)")]
        {
            assert_eq!(file_of_shown_name(shown), file, "{shown}");
        }
        let r = koth_games::replay::Replay {
            game: koth_games::GameKind::Target.into(),
            seed: 3,
            engine: String::new(),
            time_policy: None,
            seats: ["bot.py (1)", "bot.py (2)"]
                .iter()
                .map(|n| koth_games::replay::ReplaySeat { name: n.to_string(), ..Default::default() })
                .collect(),
            initial: Value::Null,
            turns: Vec::new(),
            result: Vec::new(),
            cut_short: false,
            ended_by: koth_games::replay::EndedBy::Rules,
        };
        let info = MatchInfo::of_local_replay(&r);
        assert_eq!(info.seats.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["bot.py (1)", "bot.py (2)"]);
        assert_eq!(info.reproduce.as_deref(), Some("koth match --game target --seed 3 --players 2 bot.py bot.py"));
    }

    /// Served shapes, pinned: `UPDATE_GOLDEN=1 cargo test -p koth-scheduler golden` rewrites them.
    #[test]
    fn served_responses_are_their_golden_files() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/api");
        let cases = [
            ("leaderboard.json", serde_json::to_value(leaderboard()).unwrap()),
            ("match.json", serde_json::to_value(match_info()).unwrap()),
            ("bot.json", serde_json::to_value(bot_info()).unwrap()),
            ("contest.json", serde_json::to_value(contest()).unwrap()),
            ("live.json", serde_json::to_value(live_match()).unwrap()),
            ("game.json", serde_json::to_value(added_game()).unwrap()),
            ("audit.json", serde_json::to_value(audit_page()).unwrap()),
        ];
        for (file, value) in cases {
            let written = serde_json::to_string_pretty(&value).unwrap() + "\n";
            koth_testkit::assert_golden(&dir.join(file), &written, "the served shape changed; the pages and the CLI read it");
        }
        // And they read back into the same types (what the CLI client does).
        let back: Leaderboard = serde_json::from_str(&std::fs::read_to_string(dir.join("leaderboard.json")).unwrap()).unwrap();
        assert_eq!(back, leaderboard());
        let back: MatchInfo = serde_json::from_str(&std::fs::read_to_string(dir.join("match.json")).unwrap()).unwrap();
        assert_eq!(back, match_info());
        let back: Contest = serde_json::from_str(&std::fs::read_to_string(dir.join("contest.json")).unwrap()).unwrap();
        assert_eq!(back, contest());
        let back: GameInfo = serde_json::from_str(&std::fs::read_to_string(dir.join("game.json")).unwrap()).unwrap();
        assert_eq!(back, added_game());
        let back: LiveMatch = serde_json::from_str(&std::fs::read_to_string(dir.join("live.json")).unwrap()).unwrap();
        assert_eq!(back, live_match());
        let back: AuditPage = serde_json::from_str(&std::fs::read_to_string(dir.join("audit.json")).unwrap()).unwrap();
        assert_eq!(back, audit_page());
    }
}
