//! The rules of the games koth hosts, with no I/O.
//!
//! Each game is a [`Referee`]: it says what to send to which bot
//! ([`Step`]), takes the bots' replies as text ([`Reply`]), applies the rules,
//! and reports the events of the turn and, at the end, the result of every
//! seat. The *text* of each game's protocol (lines, argv, files) is part of
//! its rules and lives here; how the text travels (pipes, a new process per
//! turn, files, TCP) is the runner's job.
//!
//! All randomness comes from a ChaCha8 generator seeded by the caller, so a
//! match is reproducible from its seed (ChaCha8's output is fixed by its
//! specification, unlike `StdRng`'s).
//!
//! Adding a built-in game is adding a module that implements [`Referee`]
//! and a line in [`GameKind`]. A game from outside koth is a folder with a
//! manifest and a referee program of its own ([`external`]): the runner
//! runs that program and speaks to it in the line-JSON protocol defined
//! there, behind the same [`Referee`] trait.

pub mod external;
pub mod flit;
pub mod linkage;
pub mod replay;
pub mod slime;
pub mod snake;
pub mod target;
pub mod view;
pub mod words;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::replay::{Answer, MoveTime};
use crate::words::{Names, SeatRole};

/// A player's place in a match, 0-based (bots are "1 to 4" in the seeds'
/// protocols; the protocol text uses the seeds' numbering).
pub type Seat = usize;

/// What a bot answered for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Its answer: the first line it printed (without the line ending), or
    /// the file it wrote, as the game's protocol says.
    Answer(String),
    /// No answer within the move's time limit.
    Timeout,
    /// The bot is gone (crashed, frozen, disqualified) and will not answer.
    Gone,
}

/// One request to one bot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub seat: Seat,
    /// What the bot gets: a line (several, joined by `\n`, when an external
    /// game's referee sends `lines`), an argv string or a file's contents.
    pub payload: String,
    /// A per-turn program's whole argument list, instead of the protocol's
    /// own (`per_turn_argv`: the payload as the one argument;
    /// `per_turn_files`: none). Only external games set it.
    pub argv: Option<Vec<String>>,
    /// Text on a per-turn program's stdin, closed once it is written
    /// (`None`: its stdin is empty). Only external games set it.
    pub stdin: Option<String>,
    /// How the bot's answer is read (one line unless an external game says
    /// otherwise).
    pub answer: AnswerShape,
    /// Further files a `per_turn_files` program finds in its folder, written
    /// before it starts (name, contents). Only external games set it.
    pub files: Vec<(String, String)>,
}

impl Request {
    /// A request of `payload` as the game's protocol delivers it, answered
    /// with one line.
    pub fn new(seat: Seat, payload: impl Into<String>) -> Request {
        Request { seat, payload: payload.into(), argv: None, stdin: None, answer: AnswerShape::default(), files: Vec::new() }
    }
}

/// How a `per_turn_files` program exchanges files with koth, in its
/// folder (its working directory): the file koth writes before each turn
/// (`request`), the file its answer is read from once it has exited
/// (`answer`), and whether it is first started once with an argument to
/// print its id line (`id_line`). Linkage's, and an external game's unless
/// its manifest's `files` says otherwise: `input.txt`, `order.txt`, an id
/// line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FileExchange {
    pub request: String,
    pub answer: String,
    pub id_line: bool,
}

impl Default for FileExchange {
    fn default() -> Self {
        FileExchange { request: "input.txt".into(), answer: "order.txt".into(), id_line: true }
    }
}

/// Longest name of a file exchanged with a `per_turn_files` program.
pub const MAX_FILE_NAME: usize = 64;

/// Whether `name` may name a file in a bot's folder: 1 to 64 ASCII
/// letters, digits, `.`, `_` and `-`, not `.` or `..` (no folder, no path).
pub fn check_file_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_FILE_NAME
        && name != "."
        && name != ".."
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "file name {:?}: 1 to {MAX_FILE_NAME} ASCII letters, digits, '.', '_' and '-', a file in the bot's own folder (not '.' or '..')",
            name.chars().take(80).collect::<String>()
        ))
    }
}

/// How many lines make a bot's answer: `{"lines": k}` (k lines; one is
/// every game's default) or `{"until": "END"}` (the lines before a line
/// that is exactly `END`, which is not part of the answer). A per-turn
/// process that ends sooner answers what it wrote. The text the referee
/// gets is the lines joined by `\n`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerShape {
    Lines(u32),
    Until(String),
}

/// Read with an error that names the field and shows both shapes.
impl<'de> Deserialize<'de> for AnswerShape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let shape = match v.as_object().filter(|o| o.len() == 1).and_then(|o| o.iter().next()) {
            Some((k, n)) if k == "lines" => n.as_u64().and_then(|n| u32::try_from(n).ok()).map(AnswerShape::Lines),
            Some((k, t)) if k == "until" => t.as_str().map(|t| AnswerShape::Until(t.to_owned())),
            _ => None,
        };
        shape.ok_or_else(|| serde::de::Error::custom(format!("answer {v}: write {{\"lines\": k}} or {{\"until\": \"END\"}}")))
    }
}

impl Default for AnswerShape {
    fn default() -> Self {
        AnswerShape::Lines(1)
    }
}

/// What to deliver now: notices (no answer expected), then requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    pub notices: Vec<(Seat, String)>,
    pub requests: Vec<Request>,
}

/// How a bot's answer was judged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgement {
    pub seat: Seat,
    /// The move as the referee understood it, or why it was refused.
    #[serde(flatten)]
    pub verdict: Verdict,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// A legal move (including a deliberate pass).
    Accepted { r#move: String },
    /// Output that breaks the protocol or the rules, with what was wrong and
    /// what the game did about it (e.g. "treated as a pass").
    Invalid { answer: String, reason: String },
    /// No answer in time.
    TimedOut,
    /// The bot is out of the match (it crashed, was frozen, stopped reading
    /// its input...): it made no move. The replay's answer says why.
    Gone,
}

/// The result of one seat when the game is over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeatResult {
    pub seat: Seat,
    /// The game's own measure (pieces, squares, points).
    pub score: f64,
    /// 1 for the best; equal scores share a rank (1, 2, 2, 4).
    pub rank: usize,
    pub result: MatchResult,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchResult {
    Win,
    Tie,
    Loss,
}

impl MatchResult {
    /// As stored and served (`win`, `tie`, `loss`).
    pub fn name(self) -> &'static str {
        match self {
            MatchResult::Win => "win",
            MatchResult::Tie => "tie",
            MatchResult::Loss => "loss",
        }
    }
}

/// A game's rules engine.
pub trait Referee: Send {
    /// Number of seats.
    fn seats(&self) -> usize;
    /// What to send now; `None` once the game is over.
    fn step(&mut self) -> Option<Step>;
    /// Apply the answers to the requests of the last [`step`](Referee::step),
    /// one per request, in any order. Returns how each was judged and the
    /// events of the turn (JSON objects with a `"type"` field) for the replay.
    fn apply(&mut self, replies: Vec<(Seat, Reply)>) -> (Vec<Judgement>, Vec<serde_json::Value>);
    /// [`apply`](Referee::apply), given the turn as the replay records it:
    /// each answer (a gone bot's with why) and each move's time. The engine
    /// and [`replay::check`] call this; koth's own games need only the
    /// replies, an external referee is told all of it.
    fn apply_turn(&mut self, answers: &[Answer], _times: &[MoveTime]) -> (Vec<Judgement>, Vec<serde_json::Value>) {
        self.apply(answers.iter().map(|a| (a.seat, a.reply.reply())).collect())
    }
    /// Why the referee itself failed (an external referee that crashed,
    /// hung or broke its protocol); the match then ends, rating nobody.
    /// koth's own referees never fail.
    fn failure(&self) -> Option<String> {
        None
    }
    /// Why the machine, not the referee, failed it (an external referee
    /// that waited for a CPU past what its clock forgives, or an engine
    /// that stalled while it judged); the match then ends with no result,
    /// blaming nobody. koth's own referees run in the engine: never.
    fn overloaded(&self) -> Option<String> {
        None
    }
    /// What the referee wrote for the game's host (an external referee's
    /// stderr); kept out of the replay the players read.
    fn stderr(&self) -> Option<String> {
        None
    }
    /// Whether the game is over.
    fn is_over(&self) -> bool;
    /// Every seat's result as if the game ended now: the final result once it
    /// is over, or the standings of a match a host cut short.
    fn standings(&self) -> Vec<SeatResult>;
    /// The seats' results, once the game is over.
    fn result(&self) -> Option<Vec<SeatResult>> {
        self.is_over().then(|| self.standings())
    }
    /// The state a replay starts from (board, positions, ...).
    fn initial_state(&self) -> serde_json::Value;
    /// The arguments seat `seat`'s long-lived bot is started with, after
    /// its program's own (an external referee's `launch`, given with its
    /// answer to `start`); none for koth's own games.
    fn launch_argv(&self, _seat: Seat) -> Vec<String> {
        Vec::new()
    }
    /// Told, before a replay is played through this fresh referee, the
    /// state the replay recorded at its start (`null` in a replay written
    /// before engines recorded one). A game whose rules have changed since
    /// a replay was played takes up the rules it was played under, which
    /// its initial state names, so that the replay still checks and draws
    /// as it was played (Slime: how an answer is read).
    fn replaying(&mut self, _initial: &serde_json::Value) {}
    /// A picture of the game now, for replay viewers (see [`view`]).
    fn view(&self) -> view::View;
    /// The game's own cell codes in its [`view`](Referee::view), beyond
    /// empty cells and the seats' codes.
    fn legend(&self) -> view::Legend {
        Vec::new()
    }
}

/// What a game's seed says about time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimePolicy {
    /// Time allowed per move.
    #[serde(with = "millis")]
    pub per_move: Duration,
    pub on_timeout: OnTimeout,
    /// A time bank over the match (ms in JSON): a move may run past its
    /// limit by what is left of it, and what it ran past is drawn from it;
    /// a move over its limit and the bank empties it.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "millis_opt")]
    pub bank: Option<Duration>,
    /// Start-up allowance per process (ms in JSON): added to every move of
    /// a program started per turn, and to the first move of a long-lived
    /// one (a JVM starting on every turn of a per-turn game).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "millis_opt")]
    pub startup: Option<Duration>,
}

impl TimePolicy {
    /// `per_move`, and what a timeout means; no bank, no start-up allowance.
    pub const fn new(per_move: Duration, on_timeout: OnTimeout) -> TimePolicy {
        TimePolicy { per_move, on_timeout, bank: None, startup: None }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum OnTimeout {
    /// The bot does not move; after `freeze_after` consecutive timeouts (if
    /// set) it is frozen for the rest of the game. Late replies are discarded.
    NoMove { freeze_after: Option<u32> },
    /// The bot loses (the referee sees [`Reply::Timeout`]).
    Loses,
    /// The limit is soft: over-limit moves are recorded but count; the bot
    /// is killed only after `hard` so a hung bot cannot block the match.
    Soft {
        #[serde(with = "millis")]
        hard: Duration,
    },
    /// Over the limit forfeits the game.
    Forfeits,
}

mod millis_opt {
    use serde::Deserialize;
    pub fn serialize<S: serde::Serializer>(d: &Option<std::time::Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_u64(d.as_millis() as u64),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<std::time::Duration>, D::Error> {
        Option::<u64>::deserialize(d).map(|o| o.map(std::time::Duration::from_millis))
    }
}

mod millis {
    use serde::Deserialize;
    pub fn serialize<S: serde::Serializer>(d: &std::time::Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<std::time::Duration, D::Error> {
        u64::deserialize(d).map(std::time::Duration::from_millis)
    }
}

/// How bytes travel between the engine and a game's bots (the runner has
/// one type per protocol).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BotProtocol {
    /// One process, lines on stdin/stdout.
    Stdio,
    /// TCP to 127.0.0.1:4040 in the bot's own network namespace, or
    /// stdin/stdout, whichever it uses first; the bot speaks first (its id).
    TcpOrStdio,
    /// A new process per turn, the request as its argument.
    PerTurnArgv,
    /// A new process per turn, `input.txt` in, `order.txt` out; the first
    /// exchange is the bot's id.
    PerTurnFiles,
}

impl BotProtocol {
    pub const ALL: [BotProtocol; 4] = [BotProtocol::Stdio, BotProtocol::TcpOrStdio, BotProtocol::PerTurnArgv, BotProtocol::PerTurnFiles];

    /// As written in a game's manifest.
    pub fn name(self) -> &'static str {
        match self {
            BotProtocol::Stdio => "stdio",
            BotProtocol::TcpOrStdio => "tcp_or_stdio",
            BotProtocol::PerTurnArgv => "per_turn_argv",
            BotProtocol::PerTurnFiles => "per_turn_files",
        }
    }

    /// Requests and notices are lines of a stream: they may not hold a
    /// newline.
    pub fn is_line_stream(self) -> bool {
        matches!(self, BotProtocol::Stdio | BotProtocol::TcpOrStdio)
    }
}

/// How messages to and from a long-lived bot are delimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framing {
    /// Lines: a message ends with `\n` (every game of koth's own).
    #[default]
    Lines,
    /// No delimiter, as Speed Clue's server and AIs wrote to each other: a
    /// request is written as it is, with no line ending, and an answer
    /// (the id line too) is whatever the bot wrote by the time koth reads
    /// it, as one `read` takes it (up to 4096 bytes).
    Unterminated,
}

impl Framing {
    pub fn is_lines(&self) -> bool {
        *self == Framing::Lines
    }
}

/// A game as replays, reports and ladders name it: one of koth's own, or
/// an external game by its manifest's name. Written as the name alone.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GameId {
    Builtin(GameKind),
    External(String),
}

impl GameId {
    pub fn name(&self) -> &str {
        match self {
            GameId::Builtin(g) => g.name(),
            GameId::External(n) => n,
        }
    }

    /// koth's own game, if it is one.
    pub fn kind(&self) -> Option<GameKind> {
        match self {
            GameId::Builtin(g) => Some(*g),
            GameId::External(_) => None,
        }
    }

    /// A name: one of koth's games, or an external game's (see
    /// [`external::check_name`]).
    pub fn parse(name: &str) -> Result<GameId, String> {
        match GameKind::from_name(name) {
            Some(g) => Ok(GameId::Builtin(g)),
            None => external::check_name(name).map(|()| GameId::External(name.to_owned())),
        }
    }

    /// What each seat is, in words ([`GameKind::seat_roles`]); an external
    /// game's seats are all alike.
    pub fn seat_roles(&self, seats: usize) -> Vec<Option<SeatRole>> {
        match self {
            GameId::Builtin(g) => g.seat_roles(seats),
            GameId::External(_) => vec![None; seats],
        }
    }

    /// An event in words ([`GameKind::event_sentence`]); an external game's
    /// event says itself in its `"text"` field, if it has one.
    pub fn event_sentence(&self, event: &serde_json::Value, names: Names) -> String {
        match self {
            GameId::Builtin(g) => g.event_sentence(event, names),
            GameId::External(_) => match event.get("text").and_then(serde_json::Value::as_str) {
                Some(text) => text.to_owned(),
                None => words::not_understood(event),
            },
        }
    }
}

impl From<GameKind> for GameId {
    fn from(g: GameKind) -> GameId {
        GameId::Builtin(g)
    }
}

impl std::fmt::Display for GameId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for GameId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for GameId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<GameId, D::Error> {
        let name = String::deserialize(d)?;
        GameId::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// The games koth knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameKind {
    Flit,
    Slime,
    Linkage,
    Target,
    Snake,
}

impl GameKind {
    pub const ALL: [GameKind; 5] = [GameKind::Flit, GameKind::Slime, GameKind::Linkage, GameKind::Target, GameKind::Snake];

    pub fn name(self) -> &'static str {
        match self {
            GameKind::Flit => "flit",
            GameKind::Slime => "slime",
            GameKind::Linkage => "linkage",
            GameKind::Target => "target",
            GameKind::Snake => "snake",
        }
    }

    pub fn from_name(name: &str) -> Option<GameKind> {
        GameKind::ALL.into_iter().find(|g| g.name() == name)
    }

    /// Whether its bots may keep files in their folder from match to
    /// match (where a ladder turns it on): Slime's seed says "You may read
    /// and write files within your own folder in order to persist data".
    pub fn keeps_bot_data(self) -> bool {
        matches!(self, GameKind::Slime)
    }

    /// How the game's bots talk to the engine.
    pub fn protocol(self) -> BotProtocol {
        match self {
            GameKind::Flit | GameKind::Target => BotProtocol::Stdio,
            GameKind::Snake => BotProtocol::TcpOrStdio,
            GameKind::Slime => BotProtocol::PerTurnArgv,
            GameKind::Linkage => BotProtocol::PerTurnFiles,
        }
    }

    /// The most turns the rules can take (Target: its safety cap).
    pub fn turn_bound(self) -> u32 {
        match self {
            // One bot per turn; the game ends when the turn count exceeds 32,768.
            GameKind::Flit => 32_769,
            GameKind::Slime => 2000,
            // 49 squares, a domino covers 2: at most 24 placements, and skips.
            GameKind::Linkage => 60,
            GameKind::Target => 50_000,
            // Both heads fill a cell of 32 × 32 every turn.
            GameKind::Snake => 512,
        }
    }

    /// Seats a match may have: (min, max).
    pub fn seat_range(self) -> (usize, usize) {
        match self {
            GameKind::Flit | GameKind::Slime => (4, 4),
            GameKind::Linkage | GameKind::Snake => (2, 2),
            GameKind::Target => (2, 16),
        }
    }

    /// The time policy of the game's seed.
    pub fn time_policy(self) -> TimePolicy {
        let ms = Duration::from_millis;
        match self {
            GameKind::Flit => TimePolicy::new(ms(50), OnTimeout::NoMove { freeze_after: Some(5) }),
            GameKind::Target => TimePolicy::new(ms(50), OnTimeout::NoMove { freeze_after: None }),
            GameKind::Snake => TimePolicy::new(ms(200), OnTimeout::Loses),
            GameKind::Slime => TimePolicy::new(ms(100), OnTimeout::Soft { hard: ms(2000) }),
            GameKind::Linkage => TimePolicy::new(ms(5000), OnTimeout::Forfeits),
        }
    }

    /// What each of a match's `seats` seats is, in words, where the game
    /// gives seats different roles (Linkage's More and Fewer, Snake's
    /// rotated second seat); `None` for a seat like any other.
    pub fn seat_roles(self, seats: usize) -> Vec<Option<SeatRole>> {
        (0..seats)
            .map(|s| match self {
                GameKind::Flit => flit::seat_role(s),
                GameKind::Slime => slime::seat_role(s),
                GameKind::Linkage => linkage::seat_role(s),
                GameKind::Target => target::seat_role(s),
                GameKind::Snake => snake::seat_role(s),
            })
            .collect()
    }

    /// One of the game's replay events as a short sentence that names the
    /// bots (see [`words`]); an event the game does not know, or one
    /// missing its fields, is shown as written.
    pub fn event_sentence(self, event: &serde_json::Value, names: Names) -> String {
        let sentence = match self {
            GameKind::Flit => flit::event_sentence(event, names),
            GameKind::Slime => slime::event_sentence(event, names),
            GameKind::Linkage => linkage::event_sentence(event, names),
            GameKind::Target => target::event_sentence(event, names),
            GameKind::Snake => snake::event_sentence(event, names),
        };
        sentence.unwrap_or_else(|| words::not_understood(event))
    }

    /// A referee for a new match with `seats` players, reproducible from `seed`.
    pub fn referee(self, seats: usize, seed: u64) -> Result<Box<dyn Referee>, String> {
        let (lo, hi) = self.seat_range();
        if seats < lo || seats > hi {
            return Err(if lo == hi {
                format!("{} is played by exactly {lo} bots, not {seats}", self.name())
            } else {
                format!("{} is played by {lo} to {hi} bots, not {seats}", self.name())
            });
        }
        Ok(match self {
            GameKind::Flit => Box::new(flit::Flit::new(seed)),
            GameKind::Slime => Box::new(slime::Slime::new(slime::SIZE)),
            GameKind::Linkage => Box::new(linkage::Linkage::new()),
            GameKind::Target => Box::new(target::Target::new(seats, seed)),
            GameKind::Snake => Box::new(snake::Snake::new()),
        })
    }
}

/// The seeded generator every game uses.
pub fn rng(seed: u64) -> rand_chacha::ChaCha8Rng {
    rand::SeedableRng::seed_from_u64(seed)
}

/// Results by score, higher is better: a unique best score wins, a shared
/// best score ties, everyone else loses.
pub fn results_by_score(scores: &[f64]) -> Vec<SeatResult> {
    results_by_rank(scores, &competition_ranks(scores))
}

/// Results from each seat's place (1 the best; places may be shared): a
/// seat alone in first place wins, seats sharing it tie, the rest lose.
pub fn results_by_rank(scores: &[f64], ranks: &[usize]) -> Vec<SeatResult> {
    let firsts = ranks.iter().filter(|&&r| r == 1).count();
    (0..scores.len())
        .map(|s| SeatResult {
            seat: s,
            score: scores[s],
            rank: ranks[s],
            result: match (ranks[s], firsts) {
                (1, 1) => MatchResult::Win,
                (1, _) => MatchResult::Tie,
                _ => MatchResult::Loss,
            },
        })
        .collect()
}

/// Parse exactly `N` whitespace-separated integers below `bound`.
pub fn parse_coordinates<const N: usize>(text: &str, bound: usize, usage: &str) -> Result<[usize; N], String> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != N {
        return Err(format!("expected {usage}, got {} fields", fields.len()));
    }
    let mut v = [0usize; N];
    for (slot, f) in v.iter_mut().zip(&fields) {
        *slot = f.parse().map_err(|_| format!("{f:?} is not a coordinate"))?;
        if *slot >= bound {
            return Err(format!("{f} is off the board (0-{})", bound - 1));
        }
    }
    Ok(v)
}

/// Ranks from scores, higher is better; equal scores share a rank (1, 2, 2, 4).
pub fn competition_ranks(scores: &[f64]) -> Vec<usize> {
    scores.iter().map(|s| 1 + scores.iter().filter(|o| *o > s).count()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_share_places() {
        assert_eq!(competition_ranks(&[3.0, 5.0, 5.0, 1.0]), vec![3, 1, 1, 4]);
    }

    #[test]
    fn result_names_are_the_serde_names() {
        for r in [MatchResult::Win, MatchResult::Tie, MatchResult::Loss] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.name());
        }
    }

    #[test]
    fn seat_counts_are_checked() {
        assert!(GameKind::Snake.referee(3, 1).err().unwrap().contains("exactly 2"));
        assert!(GameKind::Target.referee(1, 1).err().unwrap().contains("2 to 16"));
        for g in GameKind::ALL {
            let (lo, _) = g.seat_range();
            assert!(g.referee(lo, 7).is_ok(), "{g:?}");
            assert_eq!(GameKind::from_name(g.name()), Some(g));
        }
    }
}
