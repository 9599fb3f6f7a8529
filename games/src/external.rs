//! Games from outside koth: a folder with a manifest and a referee program
//! in any language, and the protocol koth speaks with that program.
//!
//! ```text
//! mygame/
//!   game.json      the manifest (GameManifest): name, seats, the bots'
//!                  protocol, time policy, turn bound, the referee's main
//!                  file and limits, default settings, the view's legend
//!   referee.py     the referee, compiled and run like a bot of its language
//!   bots/          example bots (optional)
//! ```
//!
//! # The referee protocol
//!
//! Line-oriented JSON on the referee's stdin and stdout, one line from koth
//! and then exactly one line back, in turn; the referee's stderr is kept for
//! the game's host. koth writes:
//!
//! - once, `{"type":"start","seed":"…","seats":[{"seat":0,"name":"…"},…],"settings":{…}}`
//!   (the seed as a string: 64-bit seeds do not survive JSON numbers);
//! - after every turn, `{"type":"answers","turn":N,"answers":[…]}` with,
//!   for each bot asked, `{"seat":s,"status":"answer","text":"…","wall_ms":…,"cpu_ms":…,"over_limit":false}`,
//!   `{"seat":s,"status":"timeout",…}` or `{"seat":s,"status":"gone","why":"crashed on turn 5 (exit code 3)"}`
//!   (and `"bank_ms"`, what is left of the bot's time bank, in a game with one).
//!
//! A request may say more than its `text` ([`SaidRequest`]): `lines` to a
//! line-stream bot, a per-turn program's `argv` list and `stdin` text, and
//! the `answer`'s shape (`{"lines": k}` or `{"until": "END"}`, else the
//! manifest's `answer`, else one line); each bounded ([`MAX_ARGV`],
//! [`MAX_STDIN`], [`MAX_BOT_LINES`], [`MAX_ANSWER_LINES`]).
//!
//! The referee answers each with a [`RefereeSays`]:
//! `{"turn":N,"requests":[{"seat":s,"text":"…"}],"notices":[…],"judgements":[…],"events":[…],"view":{…},"scores":[…],"over":false}`,
//! `turn` the turn it answers (0 for `start`).
//! `requests` go to the bots who must answer this turn (the engine times
//! each on its own clock, freezes it once it answered); `notices` are lines
//! a bot gets without answering; `judgements` say how an answer was
//! understood (`{"seat":s,"move":"…"}`) or why it was refused
//! (`{"seat":s,"invalid":"…"}`), unlisted answers being accepted as
//! written; `events` are JSON objects with a `"type"` (and a `"text"` the
//! viewer shows); `view` is the board now ([`View`]; absent, the last one
//! stands); `scores` are every seat's standing now, higher is better
//! (`ranks` may say the places instead, 1 for the best; absent, the last
//! ones stand); `over: true` ends the game, its `scores` (or `ranks`) the
//! result. The answer to `start` may carry `initial`, the
//! state the replay starts from. Anything else (a line that is not such an
//! object, a seat that does not exist, a game that asks nobody and does not
//! end, a view whose cells do not fill its grid) is the referee's failure:
//! the match ends as "referee failed", rating nobody.
//!
//! This module is pure: the manifest, the wire types, and [`Conversation`],
//! which writes koth's lines and checks the referee's. The runner runs the
//! program in a box of its own and moves the lines
//! (`koth_runner::referee`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::replay::{Answer, MoveTime, Recorded};
use crate::view::{colour_difference, LegendEntry, View, EMPTY, MIN_COLOUR_DIFFERENCE, SEAT_CODES, SEAT_COLOURS};
use crate::{
    check_file_name, AnswerShape, BotProtocol, FileExchange, Framing, GameKind, Judgement, Request, Seat, SeatResult, Step, TimePolicy,
    Verdict,
};

/// The manifest's file name in a game's folder.
pub const MANIFEST: &str = "game.json";

/// Longest line a referee may write (a view of 256 × 256 cells is 64 KiB).
pub const MAX_REFEREE_LINE: usize = 1 << 20;
/// Longest request or notice text for one bot (a `text`, or its `lines`
/// with their line breaks).
pub const MAX_BOT_TEXT: usize = 64 << 10;
/// Most lines in one request's or notice's `lines`.
pub const MAX_BOT_LINES: usize = 4096;
/// Most arguments in a request's `argv`, and most bytes they take (each
/// with its terminating NUL, as the kernel counts them).
pub const MAX_ARGV: usize = 1024;
pub const MAX_ARGV_BYTES: usize = 64 << 10;
/// Longest `stdin` text for a per-turn program.
pub const MAX_STDIN: usize = 512 << 10;
/// Most further files one request writes in a `per_turn_files` bot's
/// folder (`write`), and most bytes they hold together.
pub const MAX_WRITE_FILES: usize = 16;
pub const MAX_WRITE_BYTES: usize = 512 << 10;
/// Most lines in an answer of `{"lines": k}`, and longest terminator of
/// `{"until": "…"}`. (An answer is read up to `MAX_ANSWER_LINES` lines or
/// `MAX_ANSWER_BYTES`, whichever comes first, whatever its shape.)
pub const MAX_ANSWER_LINES: usize = 1000;
pub const MAX_ANSWER_BYTES: usize = 64 << 10;
pub const MAX_TERMINATOR: usize = 64;
/// Most events in one turn.
pub const MAX_EVENTS: usize = 256;
/// Largest grid side.
pub const MAX_GRID_SIDE: usize = 256;

/// A game's `game.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameManifest {
    /// The game's name: lowercase letters, digits, `-` and `_`; not one of
    /// koth's own games.
    pub name: String,
    /// A title for people.
    #[serde(default)]
    pub title: String,
    pub seats: SeatRange,
    /// How the bots talk to koth: `stdio`, `tcp_or_stdio`, `per_turn_argv`
    /// or `per_turn_files`.
    pub protocol: BotProtocol,
    /// Time per move and what a timeout means, as koth's own games have it:
    /// `{"per_move": 50, "on_timeout": {"kind": "no_move", "freeze_after": 5}}`,
    /// and optionally a time bank over the match (`"bank": 2000`, ms) and a
    /// start-up allowance per process (`"startup": 100`, ms).
    pub time_policy: TimePolicy,
    /// Start-up allowances per language (ms), instead of
    /// `time_policy.startup` for bots of that language: `{"java": 150}`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub startup_by_language: std::collections::BTreeMap<String, u64>,
    /// The most turns the rules can take: bounds the match's wall-clock cap.
    pub max_turns: u32,
    /// How a bot's answer is read unless a request says otherwise:
    /// `{"lines": k}` or `{"until": "END"}` (one line when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerShape>,
    /// How a long-lived bot's messages are delimited: `"lines"` (the
    /// default) or `"unterminated"` (no delimiter: a request written as it
    /// is, an answer what one read of the bot's output takes; Speed Clue).
    #[serde(default, skip_serializing_if = "Framing::is_lines")]
    pub framing: Framing,
    /// `per_turn_files` only: the files a bot reads and writes, and whether
    /// it prints an id line first (`input.txt`, `order.txt`, yes when
    /// absent): `{"request": "from_server", "answer": "to_server",
    /// "id_line": false}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<FileExchange>,
    pub referee: RefereeProgram,
    /// Settings the referee gets in `start` unless a match says otherwise.
    #[serde(default = "empty_object")]
    pub settings: Value,
    /// The game's own cell codes in its views, beyond `.` and the seats'.
    #[serde(default)]
    pub legend: Vec<LegendEntry>,
    /// The ladder a host gets on a server unless they say otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder: Option<LadderDefault>,
    /// Bots may keep files in their folder from match to match, where a
    /// ladder turns it on (or `koth match --data`): "Bot data" in
    /// docs/games/authoring.md.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bot_data: bool,
}

/// A ladder format by name (`rated`, `round_robin`, `neighbours`, `swiss`)
/// and its settings, as a server's `POST /api/ladders` takes them (the
/// server checks them; see docs/scheduler.md). Absent from a manifest: a
/// rated ladder with the fewest seats the game allows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LadderDefault {
    pub format: String,
    #[serde(default = "empty_object")]
    pub settings: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeatRange {
    pub min: usize,
    pub max: usize,
}

/// How the referee is built and run: its main file, in the language its
/// extension (or `language`) names, compiled on that language's image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefereeProgram {
    /// The main file, in the game's folder.
    pub main: String,
    /// The language (see `languages/`), when the extension does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default)]
    pub limits: RefereeLimits,
}

/// The referee's own limits, separate from the bots'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RefereeLimits {
    /// Wall time for one answer (to `start`, or to a turn's answers).
    pub per_call_ms: u64,
    /// CPU time over the whole match.
    pub match_cpu_ms: u64,
    pub memory_mb: u64,
}

impl Default for RefereeLimits {
    fn default() -> Self {
        RefereeLimits { per_call_ms: 2000, match_cpu_ms: 120_000, memory_mb: 512 }
    }
}

/// Whether `name` may name an external game.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && name.as_bytes()[0].is_ascii_lowercase();
    if !ok {
        return Err(format!("game name {name:?}: use 1 to 40 lowercase letters, digits, '-' and '_', starting with a letter"));
    }
    if GameKind::from_name(name).is_some() {
        return Err(format!("game name {name:?} is one of koth's own games; pick another"));
    }
    Ok(())
}

impl GameManifest {
    /// Read and check a `game.json`; the error says what to change.
    pub fn parse(bytes: &[u8]) -> Result<GameManifest, String> {
        let m: GameManifest = serde_json::from_slice(bytes).map_err(|e| format!("{MANIFEST}: {e}"))?;
        m.check().map_err(|e| format!("{MANIFEST}: {e}"))?;
        Ok(m)
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        let SeatRange { min, max } = self.seats;
        if min < 1 || min > max || max > SEAT_CODES.len() {
            return Err(format!("seats {min} to {max}: a game has 1 to {} seats, min ≤ max", SEAT_CODES.len()));
        }
        if !(1..=1_000_000).contains(&self.max_turns) {
            return Err(format!("max_turns {}: give 1 to 1000000", self.max_turns));
        }
        let per_move = self.time_policy.per_move.as_millis();
        if !(1..=60_000).contains(&per_move) {
            return Err(format!("time_policy.per_move {per_move} ms: give 1 to 60000"));
        }
        if let Some(shape) = &self.answer {
            check_shape(shape, self.protocol).map_err(|e| format!("answer: {e}"))?;
        }
        if self.framing == Framing::Unterminated {
            if !self.protocol.is_line_stream() {
                return Err(format!(
                    "framing \"unterminated\" is for long-lived bots (stdio, tcp_or_stdio); a {} program's answer ends with its process",
                    self.protocol.name()
                ));
            }
            if self.answer.is_some() {
                return Err("answer with framing \"unterminated\": an unterminated answer is what one read of the bot's output takes; leave out \"answer\"".into());
            }
        }
        if let Some(f) = &self.files {
            if self.protocol != BotProtocol::PerTurnFiles {
                return Err(format!(
                    "files: only per_turn_files bots exchange files; a {} bot does not (leave out \"files\")",
                    self.protocol.name()
                ));
            }
            check_file_name(&f.request).map_err(|e| format!("files.request: {e}"))?;
            check_file_name(&f.answer).map_err(|e| format!("files.answer: {e}"))?;
            if f.request == f.answer {
                return Err(format!("files: the request and the answer are both {:?}; give two names", f.request));
            }
        }
        if let Some(bank) = self.time_policy.bank {
            if bank.as_millis() > 600_000 {
                return Err(format!("time_policy.bank {} ms: give 0 to 600000", bank.as_millis()));
            }
        }
        if let Some(startup) = self.time_policy.startup {
            if startup.as_millis() > 10_000 {
                return Err(format!("time_policy.startup {} ms: give 0 to 10000", startup.as_millis()));
            }
        }
        for (language, &ms) in &self.startup_by_language {
            let named = !language.is_empty()
                && language.len() <= 40
                && language.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
            if !named {
                return Err(format!("startup_by_language {language:?}: a language as koth names it (`koth languages`: java, python, ...)"));
            }
            if ms > 10_000 {
                return Err(format!("startup_by_language.{language} {ms} ms: give 0 to 10000"));
            }
        }
        let l = &self.referee.limits;
        if !(10..=60_000).contains(&l.per_call_ms) {
            return Err(format!("referee.limits.per_call_ms {}: give 10 to 60000", l.per_call_ms));
        }
        if !(100..=3_600_000).contains(&l.match_cpu_ms) {
            return Err(format!("referee.limits.match_cpu_ms {}: give 100 to 3600000", l.match_cpu_ms));
        }
        if !(16..=4096).contains(&l.memory_mb) {
            return Err(format!("referee.limits.memory_mb {}: give 16 to 4096", l.memory_mb));
        }
        let main = &self.referee.main;
        if main.is_empty() || main.starts_with('/') || main.split('/').any(|c| c == ".." || c.is_empty()) {
            return Err(format!("referee.main {main:?}: a path inside the game's folder"));
        }
        if !self.settings.is_object() {
            return Err("settings: a JSON object".into());
        }
        if let Some(l) = &self.ladder {
            if !l.settings.is_object() {
                return Err("ladder.settings: a JSON object".into());
            }
        }
        for e in &self.legend {
            let c = e.code;
            if !c.is_ascii_graphic() || c as u8 == EMPTY || SEAT_CODES.contains(&(c as u8)) {
                return Err(format!("legend code {c:?}: a printable ASCII character other than '.' and the seats' codes 0-9 a-f"));
            }
            if !is_colour(&e.colour) {
                return Err(format!("legend colour {:?} of {c:?}: write it #rrggbb", e.colour));
            }
            // The viewer draws each seat's cells in its colour: a legend
            // colour a reader could take for a seat's would mislead.
            for (seat, seat_colour) in SEAT_COLOURS.iter().enumerate().take(max) {
                let d = colour_difference(&e.colour, seat_colour).unwrap_or(0.0);
                if d < MIN_COLOUR_DIFFERENCE {
                    return Err(format!(
                        "legend colour {} of {c:?} looks like seat {}'s colour {seat_colour} in the viewer (ΔE {d:.0}, under {MIN_COLOUR_DIFFERENCE}); pick one further from it",
                        e.colour,
                        seat + 1
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn seat_range(&self) -> (usize, usize) {
        (self.seats.min, self.seats.max)
    }

    /// The start-up allowance per process of a bot in `language`.
    pub fn startup(&self, language: &str) -> Option<std::time::Duration> {
        match self.startup_by_language.get(language) {
            Some(&ms) => Some(std::time::Duration::from_millis(ms)),
            None => self.time_policy.startup,
        }
    }

    /// How its `per_turn_files` bots exchange files (the default for any
    /// other protocol, which never uses it).
    pub fn file_exchange(&self) -> FileExchange {
        self.files.clone().unwrap_or_default()
    }

    /// The largest start-up allowance any bot may get.
    pub fn max_startup(&self) -> std::time::Duration {
        let by_language =
            self.startup_by_language.values().max().map_or(std::time::Duration::ZERO, |&ms| std::time::Duration::from_millis(ms));
        by_language.max(self.time_policy.startup.unwrap_or_default())
    }
}

/// Whether `argv` is an argument list a program can be given, and within
/// koth's bounds; the error reads after "asked seat 3 with ".
fn check_argv(argv: &[String]) -> Result<(), String> {
    let bytes: usize = argv.iter().map(|a| a.len() + 1).sum();
    if argv.len() > MAX_ARGV || bytes > MAX_ARGV_BYTES {
        return Err(format!("{} arguments of {bytes} bytes (the most is {MAX_ARGV} arguments, {MAX_ARGV_BYTES} bytes)", argv.len()));
    }
    if argv.iter().any(|a| a.contains('\0')) {
        return Err("a NUL byte in an argument, which no program can be given".into());
    }
    Ok(())
}

/// Whether an answer's shape is one koth reads for bots of `protocol`.
fn check_shape(shape: &AnswerShape, protocol: BotProtocol) -> Result<(), String> {
    if protocol == BotProtocol::PerTurnFiles {
        return Err("a per_turn_files bot's answer is its order.txt, whole; leave out \"answer\"".into());
    }
    match shape {
        AnswerShape::Lines(k) if !(1..=MAX_ANSWER_LINES).contains(&(*k as usize)) => {
            Err(format!("{{\"lines\": {k}}}: give 1 to {MAX_ANSWER_LINES} lines"))
        }
        AnswerShape::Until(t) if t.len() > MAX_TERMINATOR || t.contains(['\n', '\r']) => {
            Err(format!("{{\"until\": {}}}: a terminator line of at most {MAX_TERMINATOR} bytes, without line breaks", clip(t)))
        }
        _ => Ok(()),
    }
}

fn is_colour(c: &str) -> bool {
    c.len() == 7 && c.starts_with('#') && c[1..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// What koth writes to the referee.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToReferee<'a> {
    Start { seed: String, seats: Vec<SeatName<'a>>, settings: &'a Value },
    Answers { turn: u32, answers: Vec<AnswerSent<'a>> },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeatName<'a> {
    pub seat: Seat,
    pub name: &'a str,
}

/// One bot's answer as the referee gets it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AnswerSent<'a> {
    pub seat: Seat,
    #[serde(flatten)]
    pub status: AnswerStatus<'a>,
    /// From the request's write to the answer (or the deadline), ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<f64>,
    /// The bot's CPU time over the same span, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<f64>,
    /// The answer came after the move's limit (a soft limit counts it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_limit: Option<bool>,
    /// What is left of the bot's time bank, ms (a game with a bank).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bank_ms: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AnswerStatus<'a> {
    Answer { text: &'a str },
    Timeout,
    Gone { why: &'a str },
}

/// What the referee writes, once per line koth wrote.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefereeSays {
    /// The turn whose answers this answers (0 for `start`): a referee that
    /// wrote a line too many or too few is caught at once, not read a turn
    /// out of step.
    pub turn: u32,
    /// The state the replay starts from (the answer to `start` only).
    #[serde(default)]
    pub initial: Option<Value>,
    /// The argument list each long-lived bot is started with (the answer
    /// to `start` only; `stdio` and `tcp_or_stdio`): a seat not listed is
    /// started with none.
    #[serde(default)]
    pub launch: Vec<SaidLaunch>,
    #[serde(default)]
    pub requests: Vec<SaidRequest>,
    #[serde(default)]
    pub notices: Vec<SaidRequest>,
    #[serde(default)]
    pub judgements: Vec<SaidJudgement>,
    #[serde(default)]
    pub events: Vec<Value>,
    /// The board now; absent, the last one drawn (a 1×1 empty grid before
    /// any).
    #[serde(default)]
    pub view: Option<View>,
    /// Every seat's standing now, higher is better; absent, the last ones
    /// given (all 0 before any). The answer that ends the game needs them
    /// unless an earlier answer gave them.
    #[serde(default)]
    pub scores: Option<Vec<f64>>,
    /// Every seat's place now (1 the best, shared places allowed); from
    /// `scores` when absent (the last ones when `scores` is absent too).
    #[serde(default)]
    pub ranks: Option<Vec<usize>>,
    #[serde(default)]
    pub over: bool,
}

/// A request (or a notice: `seat` and `text` or `lines` only) as the
/// referee writes it:
///
/// - `text`: what the game's protocol delivers: a line (`stdio`,
///   `tcp_or_stdio`), the one argument (`per_turn_argv`), `input.txt`
///   (`per_turn_files`);
/// - `lines`: several lines to a `stdio` or `tcp_or_stdio` bot (a board),
///   instead of `text`;
/// - `argv`: a per-turn program's whole argument list (0 or more), instead
///   of `text` as its one argument (`per_turn_argv`) or none
///   (`per_turn_files`);
/// - `stdin`: text on a per-turn program's stdin, which is closed after it;
/// - `answer`: how the answer is read ([`AnswerShape`]), instead of the
///   manifest's `answer`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaidRequest {
    pub seat: Seat,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub lines: Option<Vec<String>>,
    #[serde(default)]
    pub argv: Option<Vec<String>>,
    #[serde(default)]
    pub stdin: Option<String>,
    #[serde(default)]
    pub answer: Option<AnswerShape>,
    /// `per_turn_files` only: further files written in the bot's folder
    /// before it starts, by name.
    #[serde(default)]
    pub write: Option<std::collections::BTreeMap<String, String>>,
}

/// How one seat's long-lived bot is started: `{"seat": s, "argv": [...]}`,
/// its arguments after its program's own (Speed Clue's `IDENTIFIER PORT`,
/// Totally Blind Chess's `w SEED`), bounded as a request's `argv` is.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaidLaunch {
    pub seat: Seat,
    pub argv: Vec<String>,
}

/// How the referee understood one answer: `move` (accepted, as it read
/// it) or `invalid` (refused, and why).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaidJudgement {
    pub seat: Seat,
    #[serde(default, rename = "move")]
    pub accepted: Option<String>,
    #[serde(default)]
    pub invalid: Option<String>,
}

/// A checked answer of the referee, in koth's terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Said {
    pub initial: Option<Value>,
    /// The argument list each seat's long-lived bot is started with, one
    /// per seat (empty: none); only the answer to `start` gives them, so
    /// every later answer has none.
    pub launch: Vec<Vec<String>>,
    /// What to deliver next: notices, and requests unless the game is over.
    pub step: Step,
    pub judgements: Vec<Judgement>,
    pub events: Vec<Value>,
    pub view: View,
    pub standings: Vec<SeatResult>,
    pub over: bool,
}

/// koth's side of one match's conversation with its referee: the lines it
/// writes, and the checks on every line the referee writes back.
#[derive(Clone, Debug)]
pub struct Conversation {
    seats: usize,
    protocol: BotProtocol,
    /// The manifest's answer shape.
    answer: AnswerShape,
    framing: Framing,
    /// The manifest's file names (`per_turn_files`).
    files: FileExchange,
    legend: Vec<u8>,
    /// The seats asked in the last step, in order.
    asked: Vec<Seat>,
    /// The referee answered `start`.
    started: bool,
    turn: u32,
    over: bool,
    /// The last view drawn and standing given, for an answer without them.
    view: View,
    scores: Option<Vec<f64>>,
    ranks: Option<Vec<usize>>,
}

impl Conversation {
    pub fn new(manifest: &GameManifest, seats: usize) -> Conversation {
        Conversation {
            seats,
            protocol: manifest.protocol,
            answer: manifest.answer.clone().unwrap_or_default(),
            framing: manifest.framing,
            files: manifest.file_exchange(),
            legend: manifest.legend.iter().map(|e| e.code as u8).collect(),
            asked: Vec::new(),
            started: false,
            turn: 0,
            over: false,
            view: View::grid(1, 1),
            scores: None,
            ranks: None,
        }
    }

    pub fn is_over(&self) -> bool {
        self.over
    }

    /// Turns whose answers the referee has been sent.
    pub fn turns(&self) -> u32 {
        self.turn
    }

    /// The first line: the seed, the seats' names, the settings.
    pub fn start(&self, seed: u64, names: &[String], settings: &Value) -> String {
        let seats = names.iter().enumerate().map(|(seat, name)| SeatName { seat, name }).collect();
        line(&ToReferee::Start { seed: seed.to_string(), seats, settings })
    }

    /// A turn's answers, as the replay records them. They must answer the
    /// seats the last step asked (the engine's and a replay's do).
    pub fn answers(&mut self, answers: &[Answer], times: &[MoveTime]) -> String {
        self.turn += 1;
        let sent = answers
            .iter()
            .map(|a| {
                let time = times.iter().find(|t| t.seat == a.seat);
                let status = match &a.reply {
                    Recorded::Answer { answer } => AnswerStatus::Answer { text: answer },
                    Recorded::Timeout { .. } => AnswerStatus::Timeout,
                    Recorded::Gone { why, .. } => AnswerStatus::Gone { why: why.as_deref().unwrap_or("out of the match") },
                };
                AnswerSent {
                    seat: a.seat,
                    status,
                    wall_ms: time.map(|t| t.wall_ms),
                    cpu_ms: time.map(|t| t.cpu_ms),
                    over_limit: time.map(|t| t.over_limit),
                    bank_ms: time.and_then(|t| t.bank_ms),
                }
            })
            .collect();
        line(&ToReferee::Answers { turn: self.turn, answers: sent })
    }

    /// Check the referee's line. `answered`: the answers it replies to
    /// (none for `start`). An error says what the referee did wrong.
    pub fn read(&mut self, text: &str, answered: &[Answer]) -> Result<Said, String> {
        if text.len() >= MAX_REFEREE_LINE {
            return Err(format!("wrote a line of {} bytes or more (the most is {MAX_REFEREE_LINE})", MAX_REFEREE_LINE));
        }
        // An object, not an array serde would read field by field.
        if !text.trim_start().starts_with('{') {
            return Err(format!("wrote a line that is not its answer: not a JSON object: {}", clip(text)));
        }
        let says: RefereeSays =
            serde_json::from_str(text).map_err(|e| format!("wrote a line that is not its answer: {e}: {}", clip(text)))?;
        let (said, scores, ranks) = self.check(says, answered)?;
        self.view = said.view.clone();
        (self.scores, self.ranks) = (scores, ranks);
        self.asked = said.step.requests.iter().map(|r| r.seat).collect();
        self.over = said.over;
        self.started = true;
        Ok(said)
    }

    fn seat(&self, seat: Seat, what: &str) -> Result<Seat, String> {
        if seat < self.seats {
            Ok(seat)
        } else {
            Err(format!("{what} seat {seat}, but the match has {} seats (0 to {})", self.seats, self.seats - 1))
        }
    }

    /// A notice: `text` or `lines`, for a long-lived bot.
    fn notice(&self, l: SaidRequest) -> Result<(Seat, String), String> {
        let what = "sent a notice to";
        let seat = self.seat(l.seat, what)?;
        if l.argv.is_some() || l.stdin.is_some() || l.answer.is_some() || l.write.is_some() {
            return Err(format!(
                "{what} seat {seat} with \"argv\", \"stdin\", \"answer\" or \"write\": a notice is only a \"text\" or \"lines\""
            ));
        }
        if self.framing == Framing::Unterminated {
            return Err(format!(
                "{what} seat {seat}, but its game's messages are unterminated: a bot reads each with one read, so a notice would run into the next request; send it as a request"
            ));
        }
        Ok((seat, self.lines_or_text(seat, l.text, l.lines, what)?))
    }

    /// What a request or notice delivers as lines or a payload: its `text`,
    /// or its `lines` joined (line streams only), bounded.
    fn lines_or_text(&self, seat: Seat, text: Option<String>, lines: Option<Vec<String>>, what: &str) -> Result<String, String> {
        let payload = match (text, lines) {
            (Some(_), Some(_)) => return Err(format!("{what} seat {seat} with both \"text\" and \"lines\": give one")),
            (None, None) => return Err(format!("{what} seat {seat} with neither \"text\" nor \"lines\"")),
            (Some(t), None) => {
                if self.protocol.is_line_stream() && self.framing.is_lines() && t.contains(['\n', '\r']) {
                    return Err(format!(
                        "{what} seat {seat} a text with a line break: bots of a {} game read lines (send several as \"lines\")",
                        self.protocol.name()
                    ));
                }
                t
            }
            (None, Some(ls)) => {
                if !self.protocol.is_line_stream() {
                    return Err(format!(
                        "{what} seat {seat} \"lines\", which only stdio and tcp_or_stdio bots read; a {} bot gets \"text\" (and \"stdin\")",
                        self.protocol.name()
                    ));
                }
                if ls.is_empty() || ls.len() > MAX_BOT_LINES {
                    return Err(format!("{what} seat {seat} {} lines (give 1 to {MAX_BOT_LINES})", ls.len()));
                }
                if let Some(l) = ls.iter().find(|l| l.contains(['\n', '\r'])) {
                    return Err(format!("{what} seat {seat} a line with a line break in it: {}", clip(l)));
                }
                ls.join("\n")
            }
        };
        if payload.len() > MAX_BOT_TEXT {
            return Err(format!("{what} seat {seat} a text of {} bytes (the most is {MAX_BOT_TEXT})", payload.len()));
        }
        Ok(payload)
    }

    /// The answer to `start`'s `launch`, one argument list per seat (empty
    /// where it names none), checked: at the start only, for long-lived
    /// bots only, each seat once, each list bounded as a request's `argv`.
    fn launch(&self, said: Vec<SaidLaunch>) -> Result<Vec<Vec<String>>, String> {
        if said.is_empty() {
            return Ok(Vec::new());
        }
        if self.started {
            return Err("sent \"launch\" after the start: each bot is started once, before turn 1, so only the answer to \"start\" (turn 0) may give it".into());
        }
        if !self.protocol.is_line_stream() {
            return Err(format!(
                "sent \"launch\", which only long-lived bots (stdio, tcp_or_stdio) get; a {} program is started every turn, with each request's \"argv\"",
                self.protocol.name()
            ));
        }
        let mut launch = vec![Vec::new(); self.seats];
        let mut given = vec![false; self.seats];
        for l in said {
            let seat = self.seat(l.seat, "launched")?;
            if std::mem::replace(&mut given[seat], true) {
                return Err(format!("launched seat {seat} twice: give each seat's argument list once"));
            }
            check_argv(&l.argv).map_err(|e| format!("launched seat {seat} with {e}"))?;
            launch[seat] = l.argv;
        }
        Ok(launch)
    }

    /// A request in koth's terms, every part checked against the game's
    /// protocol and bounded.
    fn request(&self, r: SaidRequest) -> Result<Request, String> {
        let what = "asked";
        let seat = self.seat(r.seat, what)?;
        let per_turn = !self.protocol.is_line_stream();
        if !per_turn && (r.argv.is_some() || r.stdin.is_some()) {
            return Err(format!(
                "asked seat {seat} with \"argv\" or \"stdin\", which only per-turn programs get; a {} bot gets \"text\" or \"lines\"",
                self.protocol.name()
            ));
        }
        let argv_program = self.protocol == BotProtocol::PerTurnArgv;
        // A per_turn_argv program's arguments: `argv`, or `text` as the
        // one argument (today's meaning, an empty text included), or none.
        let argv = match (r.argv, &r.text) {
            (Some(_), Some(_)) if argv_program => {
                return Err(format!("asked seat {seat} with both \"text\" and \"argv\": \"argv\" is the whole argument list"))
            }
            (Some(argv), _) => Some(argv),
            (None, None) if argv_program && r.lines.is_none() => Some(Vec::new()),
            (None, _) => None,
        };
        if self.framing == Framing::Unterminated {
            if r.lines.is_some() || r.answer.is_some() {
                return Err(format!(
                    "asked seat {seat} with \"lines\" or \"answer\", but its game's messages are unterminated: a request is one \"text\", its answer what one read takes"
                ));
            }
            if r.text.as_deref().is_some_and(str::is_empty) {
                return Err(format!("asked seat {seat} with an empty text: an unterminated message of no bytes never reaches the bot"));
            }
        }
        let payload = match (r.text, r.lines) {
            (None, None) if argv_program => String::new(),
            (text, lines) => self.lines_or_text(seat, text, lines, what)?,
        };
        if self.protocol == BotProtocol::PerTurnArgv && argv.is_none() && payload.contains('\0') {
            return Err(format!("asked seat {seat} with a NUL byte in its argument, which no program can be given"));
        }
        if let Some(argv) = &argv {
            check_argv(argv).map_err(|e| format!("asked seat {seat} with {e}"))?;
        }
        if let Some(stdin) = &r.stdin {
            if stdin.len() > MAX_STDIN {
                return Err(format!("asked seat {seat} with a stdin of {} bytes (the most is {MAX_STDIN})", stdin.len()));
            }
        }
        let answer = match r.answer {
            Some(shape) => {
                check_shape(&shape, self.protocol).map_err(|e| format!("asked seat {seat} for an answer of {e}"))?;
                shape
            }
            None => self.answer.clone(),
        };
        let files = match r.write {
            None => Vec::new(),
            Some(_) if self.protocol != BotProtocol::PerTurnFiles => {
                return Err(format!(
                    "asked seat {seat} with \"write\", which only per_turn_files bots get; a {} bot gets no files",
                    self.protocol.name()
                ))
            }
            Some(write) => self.further_files(seat, write)?,
        };
        Ok(Request { seat, payload, argv, stdin: r.stdin, answer, files })
    }

    /// A request's `write`: plain file names in the bot's folder, not the
    /// two the protocol writes and reads, bounded.
    fn further_files(&self, seat: Seat, write: std::collections::BTreeMap<String, String>) -> Result<Vec<(String, String)>, String> {
        if write.len() > MAX_WRITE_FILES {
            return Err(format!("asked seat {seat} to write {} files (the most is {MAX_WRITE_FILES})", write.len()));
        }
        let bytes: usize = write.values().map(String::len).sum();
        if bytes > MAX_WRITE_BYTES {
            return Err(format!("asked seat {seat} to write files of {bytes} bytes in all (the most is {MAX_WRITE_BYTES})"));
        }
        for name in write.keys() {
            check_file_name(name).map_err(|e| format!("asked seat {seat} to write a file: {e}"))?;
            if *name == self.files.request || *name == self.files.answer {
                return Err(format!(
                    "asked seat {seat} to write {name:?}, the file koth writes (the request, \"text\") or reads (the answer) itself"
                ));
            }
        }
        Ok(write.into_iter().collect())
    }

    /// The answer in koth's terms, and the scores and ranks now standing.
    #[allow(clippy::type_complexity)]
    fn check(&self, says: RefereeSays, answered: &[Answer]) -> Result<(Said, Option<Vec<f64>>, Option<Vec<usize>>), String> {
        if self.over {
            return Err("spoke after it had ended the game".into());
        }
        if says.turn != self.turn {
            return Err(format!(
                "answered turn {} when koth had sent turn {} (0 is the start): it wrote a line too many or too few",
                says.turn, self.turn
            ));
        }
        if says.initial.is_some() && self.started {
            return Err("sent `initial` after the start".into());
        }
        let launch = self.launch(says.launch)?;
        let mut requests: Vec<Request> = Vec::new();
        for r in says.requests {
            let r = self.request(r)?;
            if requests.iter().any(|q| q.seat == r.seat) {
                return Err(format!("asked seat {} twice in one turn", r.seat));
            }
            requests.push(r);
        }
        let notices = says.notices.into_iter().map(|l| self.notice(l)).collect::<Result<Vec<_>, _>>()?;
        if says.over && !requests.is_empty() {
            return Err("ended the game and asked for moves in the same answer".into());
        }
        if !says.over && requests.is_empty() {
            return Err("asked nobody for a move and did not end the game".into());
        }
        let judgements = self.judgements(says.judgements, answered)?;
        if says.events.len() > MAX_EVENTS {
            return Err(format!("wrote {} events in one turn (the most is {MAX_EVENTS})", says.events.len()));
        }
        for e in &says.events {
            if !e.get("type").is_some_and(Value::is_string) {
                return Err(format!("wrote an event without a \"type\": {}", clip(&e.to_string())));
            }
        }
        let view = says.view.unwrap_or_else(|| self.view.clone());
        self.view(&view)?;
        // Absent scores and ranks stand as they were last given.
        let (scores, ranks) = match (says.scores, says.ranks) {
            (Some(s), r) => (Some(s), r),
            (None, Some(r)) => (self.scores.clone(), Some(r)),
            (None, None) => (self.scores.clone(), self.ranks.clone()),
        };
        if says.over && scores.is_none() && ranks.is_none() {
            return Err("ended the game without ever giving its scores: give \"scores\" (one number a seat) with \"over\"".into());
        }
        let zeros = vec![0.0; self.seats];
        let standings = self.standings(scores.as_deref().unwrap_or(&zeros), ranks.as_deref())?;
        let said = Said {
            initial: says.initial,
            launch,
            step: Step { notices, requests },
            judgements,
            events: says.events,
            view,
            standings,
            over: says.over,
        };
        Ok((said, scores, ranks))
    }

    /// One judgement per answer, in the answers' order: the referee's where
    /// it gave one, else an answer accepted as written.
    fn judgements(&self, said: Vec<SaidJudgement>, answered: &[Answer]) -> Result<Vec<Judgement>, String> {
        for j in &said {
            self.seat(j.seat, "judged")?;
            if !answered.iter().any(|a| a.seat == j.seat) {
                return Err(format!("judged seat {}, which answered nothing this turn", j.seat));
            }
            if said.iter().filter(|k| k.seat == j.seat).count() > 1 {
                return Err(format!("judged seat {} twice", j.seat));
            }
            if j.accepted.is_some() == j.invalid.is_some() {
                return Err(format!("judged seat {} with neither or both of \"move\" and \"invalid\"", j.seat));
            }
        }
        let mut out = Vec::with_capacity(answered.len());
        for a in answered {
            let given = said.iter().find(|j| j.seat == a.seat);
            let verdict = match (&a.reply, given) {
                (Recorded::Answer { answer }, Some(SaidJudgement { invalid: Some(reason), .. })) => {
                    Verdict::Invalid { answer: answer.clone(), reason: reason.clone() }
                }
                (Recorded::Answer { .. }, Some(SaidJudgement { accepted: Some(m), .. })) => Verdict::Accepted { r#move: m.clone() },
                (Recorded::Answer { answer }, _) => Verdict::Accepted { r#move: answer.clone() },
                (_, Some(_)) => return Err(format!("judged seat {}, which gave no answer this turn", a.seat)),
                (Recorded::Timeout { .. }, None) => Verdict::TimedOut,
                (Recorded::Gone { .. }, None) => Verdict::Gone,
            };
            out.push(Judgement { seat: a.seat, verdict });
        }
        Ok(out)
    }

    fn view(&self, v: &View) -> Result<(), String> {
        if !(1..=MAX_GRID_SIDE).contains(&v.width) || !(1..=MAX_GRID_SIDE).contains(&v.height) {
            return Err(format!("drew a {}×{} grid (each side 1 to {MAX_GRID_SIDE})", v.width, v.height));
        }
        if v.cells.len() != v.width * v.height {
            return Err(format!("drew {} cells on a {}×{} grid", v.cells.len(), v.width, v.height));
        }
        let seat_codes = &SEAT_CODES[..self.seats];
        if let Some(&c) = v.cells.iter().find(|&&c| c != EMPTY && !seat_codes.contains(&c) && !self.legend.contains(&c)) {
            return Err(format!(
                "drew a cell {:?}, which is not '.', a seat's code (0 to {}) or in the manifest's legend",
                c as char,
                SEAT_CODES[self.seats - 1] as char
            ));
        }
        for m in &v.marks {
            if m.cell >= v.cells.len() {
                return Err(format!("marked cell {}, off the grid", m.cell));
            }
            if let Some(s) = m.seat {
                self.seat(s, "marked a cell of")?;
            }
            if m.label.len() > 40 {
                return Err("marked a cell with a label over 40 bytes".into());
            }
        }
        if v.marks.len() > v.cells.len() {
            return Err("marked more cells than the grid has".into());
        }
        if v.caption.len() > 500 {
            return Err("wrote a caption over 500 bytes".into());
        }
        Ok(())
    }

    fn standings(&self, scores: &[f64], ranks: Option<&[usize]>) -> Result<Vec<SeatResult>, String> {
        if scores.len() != self.seats {
            return Err(format!("gave {} scores for {} seats", scores.len(), self.seats));
        }
        if scores.iter().any(|s| !s.is_finite()) {
            return Err("gave a score that is not a finite number".into());
        }
        let Some(ranks) = ranks else { return Ok(crate::results_by_score(scores)) };
        if ranks.len() != self.seats || ranks.iter().any(|&r| r < 1 || r > self.seats) {
            return Err(format!("gave ranks {ranks:?}: one per seat, each 1 to {}", self.seats));
        }
        if !ranks.contains(&1) {
            return Err(format!("gave ranks {ranks:?} with nobody first"));
        }
        Ok(crate::results_by_rank(scores, ranks))
    }
}

fn line<T: Serialize>(msg: &T) -> String {
    serde_json::to_string(msg).expect("koth's messages are always JSON")
}

/// The start of an over-long text, for an error message.
fn clip(text: &str) -> Cow<'_, str> {
    if text.len() <= 200 {
        return Cow::Borrowed(text);
    }
    let mut end = 200;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… ({} bytes)", &text[..end], text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MatchResult;
    use serde_json::json;

    fn manifest() -> GameManifest {
        GameManifest::parse(
            json!({
                "name": "duel", "seats": {"min": 2, "max": 4}, "protocol": "stdio",
                "time_policy": {"per_move": 50, "on_timeout": {"kind": "no_move", "freeze_after": 5}},
                "max_turns": 100, "referee": {"main": "referee.py"},
                "legend": [{"code": "#", "name": "wall", "colour": "#444444"}],
            })
            .to_string()
            .as_bytes(),
        )
        .unwrap()
    }

    #[test]
    fn bot_data_is_off_unless_the_manifest_says_so() {
        assert!(!manifest().bot_data);
        let on = |v: Value| {
            let mut m = serde_json::to_value(manifest()).unwrap();
            m["bot_data"] = v;
            GameManifest::parse(m.to_string().as_bytes())
        };
        assert!(on(json!(true)).unwrap().bot_data);
        assert!(!on(json!(false)).unwrap().bot_data);
        assert!(on(json!("yes")).is_err(), "a boolean, not a word");
        // Unchanged for manifests without it: not written when off.
        assert!(serde_json::to_value(manifest()).unwrap().get("bot_data").is_none());
        assert!(crate::GameKind::Slime.keeps_bot_data() && !crate::GameKind::Snake.keeps_bot_data());
    }

    /// A referee's answer to turn `turn`.
    fn said(turn: u32, extra: Value) -> String {
        let mut base = json!({"turn": turn, "view": {"width": 2, "height": 1, "cells": ".#"}, "scores": [0, 0]});
        base.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        base.to_string()
    }

    fn answer(seat: Seat, text: &str) -> Answer {
        Answer { seat, reply: Recorded::Answer { answer: text.into() } }
    }

    /// A conversation that has started and asked both seats.
    fn asked_both() -> Conversation {
        let mut c = Conversation::new(&manifest(), 2);
        c.read(&said(0, json!({"requests": [{"seat": 0, "text": "go"}, {"seat": 1, "text": "go"}]})), &[]).unwrap();
        c
    }

    #[test]
    fn manifests_are_checked_with_words_that_say_what_to_change() {
        let good = serde_json::to_value(manifest()).unwrap();
        let cases: &[(&str, Value, &str)] = &[
            ("a builtin name", json!({"name": "snake"}), "one of koth's own games"),
            ("a path as name", json!({"name": "../x"}), "lowercase letters"),
            ("no seats", json!({"seats": {"min": 0, "max": 2}}), "1 to 16 seats"),
            ("seats backwards", json!({"seats": {"min": 3, "max": 2}}), "min ≤ max"),
            ("17 seats", json!({"seats": {"min": 2, "max": 17}}), "1 to 16 seats"),
            ("no turns", json!({"max_turns": 0}), "max_turns 0"),
            ("a referee outside", json!({"referee": {"main": "../../etc/passwd"}}), "inside the game's folder"),
            ("an absolute referee", json!({"referee": {"main": "/bin/sh"}}), "inside the game's folder"),
            ("a slow referee", json!({"referee": {"main": "r.py", "limits": {"per_call_ms": 600000}}}), "per_call_ms"),
            ("a seat's code", json!({"legend": [{"code": "3", "name": "x", "colour": "#000000"}]}), "seats' codes"),
            ("the empty code", json!({"legend": [{"code": ".", "name": "x", "colour": "#000000"}]}), "other than '.'"),
            ("a named colour", json!({"legend": [{"code": "#", "name": "x", "colour": "red"}]}), "#rrggbb"),
            ("a seat's colour", json!({"legend": [{"code": "#", "name": "x", "colour": "#d9412b"}]}), "looks like seat 3's colour #e6194b"),
            ("settings not an object", json!({"settings": [1]}), "a JSON object"),
            ("an unknown field", json!({"rules": "none"}), "unknown field `rules`"),
            ("an unknown protocol", json!({"protocol": "carrier_pigeon"}), "unknown variant"),
            (
                "a bank of an hour",
                json!({"time_policy": {"per_move": 50, "on_timeout": {"kind": "loses"}, "bank": 3600000}}),
                "time_policy.bank 3600000 ms: give 0 to 600000",
            ),
            (
                "a start-up of a minute",
                json!({"time_policy": {"per_move": 50, "on_timeout": {"kind": "loses"}, "startup": 60000}}),
                "time_policy.startup 60000 ms",
            ),
            ("a bank in words", json!({"time_policy": {"per_move": 50, "on_timeout": {"kind": "loses"}, "bank": "1s"}}), "invalid type"),
            ("a language in capitals", json!({"startup_by_language": {"Java": 100}}), "startup_by_language \"Java\""),
            ("a language's minute", json!({"startup_by_language": {"java": 60000}}), "startup_by_language.java 60000 ms"),
        ];
        for (what, change, want) in cases {
            let mut m = good.clone();
            m.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
            let err = GameManifest::parse(m.to_string().as_bytes()).expect_err(what);
            assert!(err.contains(want), "{what}: {err}");
            assert!(err.starts_with("game.json: "), "{what}: {err}");
        }
        assert_eq!(GameManifest::parse(good.to_string().as_bytes()).unwrap(), manifest());
        assert!(GameManifest::parse(b"{").unwrap_err().starts_with("game.json: "));
        // A bank, a start-up allowance, and one per language.
        let mut m = good.clone();
        m["time_policy"] = json!({"per_move": 50, "on_timeout": {"kind": "loses"}, "bank": 2000, "startup": 100});
        m["startup_by_language"] = json!({"java": 150});
        let m = GameManifest::parse(m.to_string().as_bytes()).unwrap();
        let ms = std::time::Duration::from_millis;
        assert_eq!(
            (m.time_policy.bank, m.startup("java"), m.startup("python"), m.max_startup()),
            (Some(ms(2000)), Some(ms(150)), Some(ms(100)), ms(150))
        );
        assert_eq!((manifest().startup("java"), manifest().max_startup()), (None, ms(0)));
    }

    #[test]
    fn koth_writes_the_start_and_each_turns_answers_as_one_line() {
        let mut c = asked_both();
        let start = c.start(u64::MAX, &["alice".into(), "bob".into()], &json!({"rounds": 3}));
        assert_eq!(
            serde_json::from_str::<Value>(&start).unwrap(),
            json!({"type": "start", "seed": "18446744073709551615", "seats": [{"seat": 0, "name": "alice"}, {"seat": 1, "name": "bob"}], "settings": {"rounds": 3}})
        );
        let answers =
            [answer(0, "R"), Answer { seat: 1, reply: Recorded::Gone { gone: true, why: Some("crashed on turn 1 (exit code 3)".into()) } }];
        let times = [MoveTime {
            seat: 0,
            wall_ms: 1.5,
            cpu_ms: 0.25,
            over_limit: false,
            cpu_after_answer_us: None,
            uncharged_ms: None,
            bank_ms: Some(1250.0),
        }];
        let line = c.answers(&answers, &times);
        assert!(!line.contains('\n'));
        assert_eq!(
            serde_json::from_str::<Value>(&line).unwrap(),
            json!({"type": "answers", "turn": 1, "answers": [
                {"seat": 0, "status": "answer", "text": "R", "wall_ms": 1.5, "cpu_ms": 0.25, "over_limit": false, "bank_ms": 1250.0},
                {"seat": 1, "status": "gone", "why": "crashed on turn 1 (exit code 3)"},
            ]})
        );
    }

    #[test]
    fn a_turn_is_read_into_koths_terms() {
        let mut c = asked_both();
        let answered = [answer(0, "rock"), answer(1, "banana"), Answer { seat: 2, reply: Recorded::Timeout { timeout: true } }];
        let mut c3 = Conversation::new(&manifest(), 3);
        c3.read(
            &said(
                0,
                json!({"scores": [0, 0, 0], "requests": [{"seat": 0, "text": "a"}, {"seat": 1, "text": "a"}, {"seat": 2, "text": "a"}]}),
            ),
            &[],
        )
        .unwrap();
        c3.answers(&answered, &[]);
        let s = c3
            .read(
                &said(
                    1,
                    json!({
                        "scores": [1, 0, 0],
                        "judgements": [{"seat": 0, "move": "R"}, {"seat": 1, "invalid": "not a hand"}],
                        "events": [{"type": "round", "text": "alice won"}],
                        "notices": [{"seat": 1, "text": "you lost"}],
                        "over": true,
                    }),
                ),
                &answered,
            )
            .unwrap();
        assert!(s.over && s.step.requests.is_empty());
        assert_eq!(s.step.notices, vec![(1, "you lost".to_owned())]);
        assert_eq!(
            s.judgements,
            vec![
                Judgement { seat: 0, verdict: Verdict::Accepted { r#move: "R".into() } },
                Judgement { seat: 1, verdict: Verdict::Invalid { answer: "banana".into(), reason: "not a hand".into() } },
                Judgement { seat: 2, verdict: Verdict::TimedOut },
            ]
        );
        assert_eq!(
            s.standings.iter().map(|r| (r.rank, r.result)).collect::<Vec<_>>(),
            vec![(1, MatchResult::Win), (2, MatchResult::Loss), (2, MatchResult::Loss)]
        );
        assert!(c3.is_over());
        // Unjudged answers are accepted as written; ranks may be given.
        c.answers(&answered[..2], &[]);
        let s = c.read(&said(1, json!({"scores": [5, 5], "ranks": [2, 1], "over": true})), &answered[..2]).unwrap();
        assert_eq!(s.judgements[1].verdict, Verdict::Accepted { r#move: "banana".into() });
        assert_eq!(s.standings.iter().map(|r| (r.rank, r.result)).collect::<Vec<_>>(), vec![(2, MatchResult::Loss), (1, MatchResult::Win)]);
    }

    /// Every way a referee can break the protocol is its failure, in words.
    #[test]
    fn a_referee_that_breaks_the_protocol_is_told_what_it_did() {
        let answered = [answer(0, "x"), answer(1, "y")];
        let long = "x".repeat(MAX_BOT_TEXT + 1);
        let cases: Vec<(&str, String, &str)> = vec![
            ("not JSON", "hello".into(), "not its answer"),
            ("a JSON array", "[1, 2]".into(), "not its answer"),
            (
                "no turn",
                json!({"view": {"width": 1, "height": 1, "cells": "."}, "scores": [0, 0], "over": true}).to_string(),
                "missing field `turn`",
            ),
            ("a turn out of step", said(0, json!({"over": true})), "answered turn 0 when koth had sent turn 1"),
            ("an unknown field", said(1, json!({"over": true, "winner": 0})), "unknown field `winner`"),
            ("a seat that does not exist", said(1, json!({"requests": [{"seat": 7, "text": "go"}]})), "seat 7, but the match has 2 seats"),
            (
                "a notice to nobody",
                said(1, json!({"notices": [{"seat": 2, "text": "hi"}], "over": true})),
                "seat 2, but the match has 2 seats",
            ),
            ("a seat asked twice", said(1, json!({"requests": [{"seat": 0, "text": "a"}, {"seat": 0, "text": "b"}]})), "twice"),
            ("nobody asked, not over", said(1, json!({})), "asked nobody"),
            ("over with requests", said(1, json!({"over": true, "requests": [{"seat": 0, "text": "a"}]})), "same answer"),
            ("a newline to a line bot", said(1, json!({"requests": [{"seat": 0, "text": "a\nb"}]})), "line break"),
            ("a huge request", said(1, json!({"requests": [{"seat": 0, "text": long}]})), "bytes"),
            (
                "both move and invalid",
                said(1, json!({"over": true, "judgements": [{"seat": 0, "move": "x", "invalid": "y"}]})),
                "neither or both",
            ),
            ("neither move nor invalid", said(1, json!({"over": true, "judgements": [{"seat": 0}]})), "neither or both"),
            (
                "a seat judged twice",
                said(1, json!({"over": true, "judgements": [{"seat": 0, "move": "x"}, {"seat": 0, "move": "x"}]})),
                "twice",
            ),
            ("too few scores", said(1, json!({"over": true, "scores": [1]})), "1 scores for 2 seats"),
            ("ranks with nobody first", said(1, json!({"over": true, "ranks": [2, 2]})), "nobody first"),
            ("a rank past the seats", said(1, json!({"over": true, "ranks": [1, 3]})), "one per seat"),
            (
                "cells that do not fill the grid",
                said(1, json!({"over": true, "view": {"width": 3, "height": 3, "cells": "..."}})),
                "3 cells on a 3×3 grid",
            ),
            ("a cell not in the legend", said(1, json!({"over": true, "view": {"width": 2, "height": 1, "cells": ".Z"}})), "not '.'"),
            ("a cell of a seat not playing", said(1, json!({"over": true, "view": {"width": 2, "height": 1, "cells": ".5"}})), "not '.'"),
            (
                "a mark off the grid",
                said(1, json!({"over": true, "view": {"width": 2, "height": 1, "cells": "..", "marks": [{"cell": 9, "label": "x"}]}})),
                "off the grid",
            ),
            ("a huge grid", said(1, json!({"over": true, "view": {"width": 1000, "height": 1, "cells": ""}})), "1000×1 grid"),
            ("an event without a type", said(1, json!({"over": true, "events": [{"text": "hi"}]})), "without a \"type\""),
            ("initial after the start", said(1, json!({"over": true, "initial": {}})), "after the start"),
        ];
        for (what, line, want) in cases {
            let mut c = asked_both();
            c.answers(&answered, &[]);
            let err = c.read(&line, &answered).expect_err(what);
            assert!(err.contains(want), "{what}: {err}");
        }
        // A judgement of a seat that was not asked this turn.
        let mut c = asked_both();
        c.answers(&answered[..1], &[]);
        let err = c.read(&said(1, json!({"over": true, "judgements": [{"seat": 1, "move": "x"}]})), &answered[..1]).unwrap_err();
        assert!(err.contains("answered nothing this turn"), "{err}");
        // Nothing after the end.
        let mut c = asked_both();
        c.answers(&answered, &[]);
        c.read(&said(1, json!({"over": true})), &answered).unwrap();
        assert!(c.read(&said(1, json!({"over": true})), &[]).unwrap_err().contains("after it had ended"));
        // A line at the limit is refused before it is parsed.
        let mut c = asked_both();
        assert!(c.read(&" ".repeat(MAX_REFEREE_LINE), &answered).unwrap_err().contains("bytes or more"));
    }

    /// `view` and `scores` may be left out: the last ones stand (a 1×1
    /// empty grid and zeros before any), and the game's end needs scores
    /// given at some point.
    #[test]
    fn an_answer_without_view_or_scores_keeps_the_last_ones() {
        let mut c = Conversation::new(&manifest(), 2);
        let go = json!([{"seat": 0, "text": "go"}, {"seat": 1, "text": "go"}]);
        let s = c.read(&json!({"turn": 0, "requests": go}).to_string(), &[]).unwrap();
        assert_eq!(s.view, View::grid(1, 1));
        assert_eq!(s.standings.iter().map(|r| (r.rank, r.score)).collect::<Vec<_>>(), vec![(1, 0.0), (1, 0.0)]);
        let answered = [answer(0, "x"), answer(1, "y")];
        // Ending the game without ever a score is refused.
        let mut never = c.clone();
        never.answers(&answered, &[]);
        let err = never.read(&json!({"turn": 1, "over": true}).to_string(), &answered).unwrap_err();
        assert!(err.contains("without ever giving its scores"), "{err}");
        c.answers(&answered, &[]);
        let s = c.read(&said(1, json!({"scores": [3, 1], "requests": go})), &answered).unwrap();
        assert_eq!((s.view.width, s.standings[0].rank), (2, 1));
        c.answers(&answered, &[]);
        let s = c.read(&json!({"turn": 2, "over": true}).to_string(), &answered).unwrap();
        assert_eq!((s.view.width, s.view.height), (2, 1), "the last view stands");
        assert_eq!(s.standings.iter().map(|r| (r.rank, r.score)).collect::<Vec<_>>(), vec![(1, 3.0), (2, 1.0)]);
        // Ranks alone are a result too.
        let mut c = asked_both();
        c.answers(&answered, &[]);
        let s = c.read(&json!({"turn": 1, "over": true, "ranks": [2, 1]}).to_string(), &answered).unwrap();
        assert_eq!(s.standings.iter().map(|r| r.rank).collect::<Vec<_>>(), vec![2, 1]);
    }

    /// A request's parts as the engine gets them, per protocol: today's
    /// `text` means what it always meant; `lines`, `argv`, `stdin` and
    /// `answer` say more.
    /// `"framing": "unterminated"` (Speed Clue's messages, with no line
    /// ending): for long-lived bots only and without an answer shape; its
    /// requests are one non-empty text, which may hold line breaks, and it
    /// has no notices (a bot reading each message with one read would get a
    /// notice and the next request as one).
    #[test]
    fn unterminated_framing_is_for_long_lived_bots_and_one_text_per_request() {
        let with = |change: Value| {
            let mut m = serde_json::to_value(manifest()).unwrap();
            m.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
            GameManifest::parse(m.to_string().as_bytes())
        };
        assert_eq!(manifest().framing, Framing::Lines);
        assert!(serde_json::to_value(manifest()).unwrap().get("framing").is_none(), "lines: not written");
        for (change, want) in [
            (json!({"framing": "unterminated"}), Ok(Framing::Unterminated)),
            (json!({"framing": "lines"}), Ok(Framing::Lines)),
            (json!({"framing": "unterminated", "protocol": "tcp_or_stdio"}), Ok(Framing::Unterminated)),
            (json!({"framing": "unterminated", "protocol": "per_turn_argv"}), Err("framing \"unterminated\" is for long-lived bots")),
            (json!({"framing": "unterminated", "answer": {"lines": 2}}), Err("leave out \"answer\"")),
            (json!({"framing": "bytes"}), Err("unknown variant `bytes`")),
        ] {
            match (with(change.clone()), want) {
                (Ok(m), Ok(f)) => assert_eq!(m.framing, f, "{change}"),
                (Err(e), Err(w)) => assert!(e.contains(w), "{change}: {e}"),
                (got, want) => panic!("{change}: {got:?}, wanted {want:?}"),
            }
        }
        let m = with(json!({"framing": "unterminated"})).unwrap();
        let read = |extra: Value| Conversation::new(&m, 2).read(&said(0, extra), &[]);
        let s = read(json!({"requests": [{"seat": 0, "text": "reset 3 0 Gr Ca Ba"}, {"seat": 1, "text": "two\nlines"}]})).unwrap();
        assert_eq!(s.step.requests[1].payload, "two\nlines");
        for (extra, want) in [
            (json!({"requests": [{"seat": 0, "text": "a"}], "notices": [{"seat": 1, "text": "n"}]}), "send it as a request"),
            (json!({"requests": [{"seat": 0, "lines": ["a", "b"]}]}), "a request is one \"text\""),
            (json!({"requests": [{"seat": 0, "text": "a", "answer": {"until": "END"}}]}), "its answer what one read takes"),
            (json!({"requests": [{"seat": 0, "text": ""}]}), "an empty text"),
        ] {
            let err = read(extra.clone()).unwrap_err();
            assert!(err.contains(want), "{extra}: {err}");
        }
    }

    /// The answer to `start` may say each long-lived bot's arguments
    /// (`launch`), bounded as a request's `argv`; every other use of it is
    /// the referee's failure, with the reason.
    #[test]
    fn the_start_launches_long_lived_bots_with_argument_lists() {
        let start = |protocol: BotProtocol, launch: Value| {
            let mut m = manifest();
            m.protocol = protocol;
            let mut c = Conversation::new(&m, 3);
            let asked = json!([{"seat": 0, "text": "go"}]);
            let mut first = json!({"turn": 0, "scores": [0, 0, 0], "launch": launch});
            first["requests"] = if protocol.is_line_stream() { asked } else { json!([{"seat": 0}]) };
            c.read(&first.to_string(), &[]).map(|s| s.launch)
        };
        let strings = |v: &[&[&str]]| v.iter().map(|a| a.iter().map(|x| x.to_string()).collect()).collect::<Vec<Vec<String>>>();
        use BotProtocol::{PerTurnArgv as Argv, PerTurnFiles as Files, Stdio, TcpOrStdio as Tcp};
        let at_limit: Vec<String> = (0..MAX_ARGV).map(|_| "x".repeat(MAX_ARGV_BYTES / MAX_ARGV - 1)).collect();
        let cases: Vec<(&str, BotProtocol, Value, Vec<Vec<String>>)> = vec![
            ("none: every bot started with none", Stdio, json!([]), vec![]),
            (
                "Speed Clue: an identifier and a port",
                Tcp,
                json!([{"seat": 0, "argv": ["p0", "4040"]}, {"seat": 2, "argv": ["p2", "4040"]}]),
                strings(&[&["p0", "4040"], &[], &["p2", "4040"]]),
            ),
            (
                "Totally Blind Chess: a colour and a seed, any order",
                Stdio,
                json!([{"seat": 1, "argv": ["b", "77"]}, {"seat": 0, "argv": ["w", "77"]}]),
                strings(&[&["w", "77"], &["b", "77"], &[]]),
            ),
            ("an empty argument and one with spaces", Stdio, json!([{"seat": 0, "argv": ["", "a b"]}]), strings(&[&["", "a b"], &[], &[]])),
            ("an empty list", Stdio, json!([{"seat": 0, "argv": []}]), vec![vec![]; 3]),
            ("1024 arguments of 64 KiB", Stdio, json!([{"seat": 0, "argv": at_limit}]), vec![at_limit.clone(), vec![], vec![]]),
        ];
        for (what, protocol, launch, want) in cases {
            assert_eq!(start(protocol, launch).unwrap_or_else(|e| panic!("{what}: {e}")), want, "{what}");
        }
        let many: Vec<String> = (0..1025).map(|i| i.to_string()).collect();
        let refusals: Vec<(&str, BotProtocol, Value, &str)> = vec![
            (
                "a per-turn program",
                Argv,
                json!([{"seat": 0, "argv": ["x"]}]),
                "only long-lived bots (stdio, tcp_or_stdio) get; a per_turn_argv program",
            ),
            ("a program of files", Files, json!([{"seat": 0, "argv": []}]), "only long-lived bots"),
            (
                "a seat that does not exist",
                Stdio,
                json!([{"seat": 3, "argv": ["x"]}]),
                "launched seat 3, but the match has 3 seats (0 to 2)",
            ),
            ("a seat twice", Stdio, json!([{"seat": 1, "argv": ["x"]}, {"seat": 1, "argv": ["y"]}]), "launched seat 1 twice"),
            (
                "1025 arguments",
                Tcp,
                json!([{"seat": 0, "argv": many}]),
                "launched seat 0 with 1025 arguments of 4015 bytes (the most is 1024",
            ),
            (
                "too many bytes",
                Stdio,
                json!([{"seat": 2, "argv": ["x".repeat(MAX_ARGV_BYTES)]}]),
                "launched seat 2 with 1 arguments of 65537 bytes",
            ),
            ("a NUL byte", Stdio, json!([{"seat": 0, "argv": ["a\0b"]}]), "launched seat 0 with a NUL byte in an argument"),
            ("not a list of strings", Stdio, json!([{"seat": 0, "argv": [4040]}]), "not its answer"),
            ("a field koth does not know", Stdio, json!([{"seat": 0, "args": ["x"]}]), "unknown field `args`"),
            ("one list for everyone", Stdio, json!(["x"]), "not its answer"),
        ];
        for (what, protocol, launch, want) in refusals {
            let err = start(protocol, launch).expect_err(what);
            assert!(err.contains(want), "{what}: {err}");
        }
        // Only the answer to `start`: bots are started once, before turn 1.
        let answered = [answer(0, "a"), answer(1, "b")];
        let mut c = asked_both();
        c.answers(&answered, &[]);
        let late = json!({"requests": [{"seat": 0, "text": "go"}], "launch": [{"seat": 0, "argv": ["x"]}]});
        let err = c.read(&said(1, late), &answered).unwrap_err();
        assert!(err.contains("sent \"launch\" after the start"), "{err}");
        let mut c = asked_both();
        c.answers(&answered, &[]);
        let later = c.read(&said(1, json!({"requests": [{"seat": 0, "text": "go"}]})), &answered).unwrap();
        assert!(later.launch.is_empty());
    }

    #[test]
    fn requests_say_lines_argv_stdin_and_how_the_answer_is_read() {
        use crate::AnswerShape::{Lines, Until};
        let ask = |protocol: BotProtocol, answer: Option<AnswerShape>, req: Value| {
            let mut m = manifest();
            m.protocol = protocol;
            m.answer = answer;
            let mut r = req;
            r["seat"] = json!(0);
            let mut c = Conversation::new(&m, 2);
            c.read(&said(0, json!({"requests": [r]})), &[]).map(|s| s.step.requests.into_iter().next().unwrap())
        };
        let req = |payload: &str, argv: Option<&[&str]>, stdin: Option<&str>, answer: AnswerShape| Request {
            seat: 0,
            payload: payload.into(),
            argv: argv.map(|a| a.iter().map(|x| x.to_string()).collect()),
            stdin: stdin.map(Into::into),
            answer,
            files: Vec::new(),
        };
        use BotProtocol::{PerTurnArgv as Argv, PerTurnFiles as Files, Stdio, TcpOrStdio as Tcp};
        let cases: Vec<(&str, BotProtocol, Option<AnswerShape>, Value, Request)> = vec![
            ("a line, as ever", Stdio, None, json!({"text": "go"}), req("go", None, None, Lines(1))),
            ("a board of 3 lines", Stdio, None, json!({"lines": ["#.#", "...", "#.#"]}), req("#.#\n...\n#.#", None, None, Lines(1))),
            ("the manifest's answer", Tcp, Some(Lines(3)), json!({"text": "go"}), req("go", None, None, Lines(3))),
            (
                "the request's answer over the manifest's",
                Stdio,
                Some(Lines(3)),
                json!({"text": "go", "answer": {"until": "END"}}),
                req("go", None, None, Until("END".into())),
            ),
            (
                "a blank line ends it",
                Stdio,
                None,
                json!({"text": "go", "answer": {"until": ""}}),
                req("go", None, None, Until(String::new())),
            ),
            ("one argument, as ever", Argv, None, json!({"text": "1,2"}), req("1,2", None, None, Lines(1))),
            ("an empty argument, as ever", Argv, None, json!({"text": ""}), req("", None, None, Lines(1))),
            ("no argument at all", Argv, None, json!({}), req("", Some(&[]), None, Lines(1))),
            ("several arguments", Argv, None, json!({"argv": ["a", "b c", ""]}), req("", Some(&["a", "b c", ""]), None, Lines(1))),
            ("the state on stdin", Argv, None, json!({"stdin": "3\n1 2 3\n"}), req("", Some(&[]), Some("3\n1 2 3\n"), Lines(1))),
            (
                "argv, stdin and k lines",
                Argv,
                None,
                json!({"argv": ["x"], "stdin": "s", "answer": {"lines": 2}}),
                req("", Some(&["x"]), Some("s"), Lines(2)),
            ),
            ("a file, as ever", Files, None, json!({"text": "7\n..."}), req("7\n...", None, None, Lines(1))),
            (
                "a file, arguments and stdin",
                Files,
                None,
                json!({"text": "f", "argv": ["-v"], "stdin": "i"}),
                req("f", Some(&["-v"]), Some("i"), Lines(1)),
            ),
        ];
        for (what, protocol, answer, r, want) in cases {
            assert_eq!(ask(protocol, answer, r).unwrap_or_else(|e| panic!("{what}: {e}")), want, "{what}");
        }
        let many: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
        let refusals: Vec<(&str, BotProtocol, Value, &str)> = vec![
            ("argv to a stdio bot", Stdio, json!({"text": "a", "argv": ["x"]}), "only per-turn programs get"),
            ("stdin to a tcp bot", Tcp, json!({"text": "a", "stdin": "x"}), "only per-turn programs get"),
            ("text and lines", Stdio, json!({"text": "a", "lines": ["b"]}), "both \"text\" and \"lines\""),
            ("nothing to send", Stdio, json!({}), "neither \"text\" nor \"lines\""),
            ("no lines", Stdio, json!({"lines": []}), "0 lines"),
            ("a line with a break", Stdio, json!({"lines": ["a\nb"]}), "a line with a line break"),
            ("lines to a per-turn program", Argv, json!({"lines": ["a"]}), "only stdio and tcp_or_stdio"),
            ("text and argv", Argv, json!({"text": "a", "argv": ["b"]}), "both \"text\" and \"argv\""),
            ("10,000 arguments", Argv, json!({"argv": many}), "10000 arguments"),
            ("arguments too long", Argv, json!({"argv": ["x".repeat(MAX_ARGV_BYTES)]}), "65537 bytes"),
            ("a NUL in an argument", Argv, json!({"argv": ["a\0b"]}), "NUL"),
            ("a NUL in the argument", Argv, json!({"text": "a\0b"}), "NUL"),
            ("a huge stdin", Argv, json!({"stdin": "x".repeat(MAX_STDIN + 1)}), "a stdin of 524289 bytes"),
            ("a file without text", Files, json!({"argv": []}), "neither \"text\" nor \"lines\""),
            ("an answer of no lines", Stdio, json!({"text": "a", "answer": {"lines": 0}}), "give 1 to 1000 lines"),
            ("a terminator of two lines", Stdio, json!({"text": "a", "answer": {"until": "a\nb"}}), "without line breaks"),
            (
                "a shape koth does not know",
                Stdio,
                json!({"text": "a", "answer": {"bytes": 3}}),
                "answer {\"bytes\":3}: write {\"lines\": k} or {\"until\": \"END\"}",
            ),
            ("an answer shape for order.txt", Files, json!({"text": "a", "answer": {"lines": 2}}), "order.txt"),
        ];
        for (what, protocol, r, want) in refusals {
            let err = ask(protocol, None, r).expect_err(what);
            assert!(err.contains(want), "{what}: {err}");
        }
        // A notice is a text or lines, nothing else.
        let mut c = Conversation::new(&manifest(), 2);
        let err = c
            .read(&said(0, json!({"requests": [{"seat": 0, "text": "a"}], "notices": [{"seat": 1, "text": "n", "argv": []}]})), &[])
            .unwrap_err();
        assert!(err.contains("a notice is only"), "{err}");
        let s =
            c.read(&said(0, json!({"requests": [{"seat": 0, "text": "a"}], "notices": [{"seat": 1, "lines": ["n", "m"]}]})), &[]).unwrap();
        assert_eq!(s.step.notices, vec![(1, "n\nm".to_owned())]);
        // The manifest's shape is checked as a request's is.
        let good = serde_json::to_value(manifest()).unwrap();
        for (change, want) in [
            (json!({"answer": {"lines": 3}}), None),
            (json!({"answer": {"until": "END"}}), None),
            (json!({"answer": {"lines": 1001}}), Some("answer: {\"lines\": 1001}: give 1 to 1000 lines")),
            (json!({"answer": {"until": "x".repeat(65)}}), Some("at most 64 bytes")),
            (json!({"answer": {"lines": 2}, "protocol": "per_turn_files"}), Some("order.txt")),
            (json!({"answer": "lines"}), Some("answer \"lines\": write {\"lines\": k} or")),
        ] {
            let mut m = good.clone();
            m.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
            match (GameManifest::parse(m.to_string().as_bytes()), want) {
                (Ok(_), None) => {}
                (Err(e), Some(w)) => assert!(e.contains(w), "{change}: {e}"),
                (got, _) => panic!("{change}: {got:?}"),
            }
        }
    }

    /// A `per_turn_files` game names its two files and whether an id line
    /// comes first (the Mafia controller's `from_server` / `to_server`,
    /// none); a request may write further files in the bot's folder. Every
    /// name is a plain file of that folder.
    #[test]
    fn per_turn_files_name_their_files_and_requests_write_more() {
        let with = |change: Value| {
            let mut m = serde_json::to_value(manifest()).unwrap();
            m["protocol"] = json!("per_turn_files");
            m.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
            GameManifest::parse(m.to_string().as_bytes())
        };
        let linkage = crate::FileExchange { request: "input.txt".into(), answer: "order.txt".into(), id_line: true };
        assert_eq!(with(json!({})).unwrap().file_exchange(), linkage, "without \"files\", Linkage's");
        let mafia = with(json!({"files": {"request": "from_server", "answer": "to_server", "id_line": false}})).unwrap();
        assert_eq!(
            mafia.file_exchange(),
            crate::FileExchange { request: "from_server".into(), answer: "to_server".into(), id_line: false }
        );
        assert_eq!(with(json!({"files": {"answer": "out"}})).unwrap().file_exchange().request, "input.txt", "each field defaults");
        for (files, want) in [
            (json!({"request": "../escape"}), "files.request: file name \"../escape\""),
            (json!({"answer": "a/b"}), "files.answer: file name \"a/b\""),
            (json!({"answer": ".."}), "not '.' or '..'"),
            (json!({"request": ""}), "1 to 64"),
            (json!({"request": "x".repeat(65)}), "1 to 64"),
            (json!({"request": "a\0b"}), "ASCII letters"),
            (json!({"request": "été"}), "ASCII letters"),
            (json!({"request": "same", "answer": "same"}), "both \"same\""),
            (json!({"request": "a", "stdin": "b"}), "unknown field `stdin`"),
            (json!({"id_line": "no"}), "invalid type"),
        ] {
            let err = with(json!({ "files": files })).unwrap_err();
            assert!(err.contains(want), "{files}: {err}");
        }
        let mut m = serde_json::to_value(manifest()).unwrap();
        m["files"] = json!({"request": "a"});
        let err = GameManifest::parse(m.to_string().as_bytes()).unwrap_err();
        assert!(err.contains("only per_turn_files bots exchange files; a stdio bot"), "{err}");

        let ask = |m: &GameManifest, r: Value| {
            let mut r = r;
            r["seat"] = json!(0);
            Conversation::new(m, 2).read(&said(0, json!({"requests": [r]})), &[]).map(|s| s.step.requests.into_iter().next().unwrap())
        };
        let r = ask(&mafia, json!({"text": "Rise and shine!", "write": {"players": "a\nb", "name": "a\n"}})).unwrap();
        assert_eq!(
            (r.payload.as_str(), r.files.clone()),
            ("Rise and shine!", vec![("name".into(), "a\n".into()), ("players".into(), "a\nb".into())])
        );
        assert!(ask(&mafia, json!({"text": ""})).unwrap().files.is_empty());
        let many: serde_json::Map<String, Value> = (0..17).map(|i| (format!("f{i}"), json!(""))).collect();
        for (write, want) in [
            (json!({"../players": "x"}), "file name \"../players\""),
            (json!({"/etc/passwd": "x"}), "file name \"/etc/passwd\""),
            (json!({".": "x"}), "not '.' or '..'"),
            (json!({"": "x"}), "1 to 64"),
            (json!({"from_server": "x"}), "the file koth writes"),
            (json!({"to_server": "x"}), "the file koth writes"),
            (Value::Object(many), "17 files (the most is 16)"),
            (json!({"big": "x".repeat(MAX_WRITE_BYTES + 1)}), "524289 bytes in all"),
            (json!({"n": 3}), "invalid type"),
        ] {
            let err = ask(&mafia, json!({"text": "", "write": write})).unwrap_err();
            assert!(err.contains(want), "{write}: {err}");
        }
        // Only per_turn_files bots have files written; a notice never does.
        let err = ask(&manifest(), json!({"text": "a", "write": {"f": "x"}})).unwrap_err();
        assert!(err.contains("only per_turn_files bots get"), "{err}");
        let err = Conversation::new(&mafia, 2)
            .read(
                &said(0, json!({"requests": [{"seat": 0, "text": "a"}], "notices": [{"seat": 1, "text": "n", "write": {"f": "x"}}]})),
                &[],
            )
            .unwrap_err();
        assert!(err.contains("a notice is only"), "{err}");
    }

    #[test]
    fn per_turn_protocols_may_send_several_lines() {
        let mut m = manifest();
        m.protocol = BotProtocol::PerTurnFiles;
        let mut c = Conversation::new(&m, 2);
        let s = c.read(&said(0, json!({"requests": [{"seat": 0, "text": "7\n......."}]})), &[]).unwrap();
        assert_eq!(s.step.requests[0].payload, "7\n.......");
    }

    #[test]
    fn game_ids_are_written_as_their_names() {
        use crate::GameId;
        for (name, id) in [("snake", GameId::Builtin(GameKind::Snake)), ("rpsls", GameId::External("rpsls".into()))] {
            assert_eq!(serde_json::to_value(&id).unwrap(), json!(name));
            assert_eq!(serde_json::from_value::<GameId>(json!(name)).unwrap(), id);
        }
        assert!(serde_json::from_value::<GameId>(json!("../etc")).is_err());
    }
}

/// The referee's answer fields `docs/games/authoring.md` marks required
/// and optional are exactly those the parser refuses to miss and takes
/// without.
#[cfg(test)]
mod documented_fields {
    use super::RefereeSays;

    #[test]
    fn the_docs_say_which_answer_fields_are_required() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/games/authoring.md")).unwrap();
        let full = serde_json::json!({
            "turn": 1, "requests": [], "notices": [], "judgements": [], "events": [],
            "view": {"width": 1, "height": 1, "cells": "."}, "scores": [0, 0], "ranks": [1, 1], "over": true
        });
        assert!(serde_json::from_value::<RefereeSays>(full.clone()).is_ok());
        // (field, required)
        let fields = [
            ("turn", true),
            ("view", false),
            ("scores", false),
            ("notices", false),
            ("judgements", false),
            ("events", false),
            ("ranks", false),
            ("over", false),
        ];
        for (field, required) in fields {
            let mut without = full.clone();
            without.as_object_mut().unwrap().remove(field);
            let parsed = serde_json::from_value::<RefereeSays>(without);
            assert_eq!(parsed.is_err(), required, "{field}: {parsed:?}");
            if let Err(e) = parsed {
                assert!(e.to_string().contains(field), "{field}: {e}");
            }
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| `{field}` |")))
                .unwrap_or_else(|| panic!("the docs have no row for {field}"));
            let says = if required { "equired" } else { "optional" };
            assert!(row.contains(says), "the docs' row for {field} does not say {says}: {row}");
        }
    }
}
