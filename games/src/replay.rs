//! Replays: the typed record of a match that the runner's engine writes, and
//! reading it back by playing it again through a fresh referee.
//!
//! A [`Replay`] holds the game, the seed, the seats and, for every turn that
//! asked something, each bot's answer, with its timing, the referee's
//! judgements and events. The rules are deterministic given the seed, so a
//! fresh referee fed the recorded answers passes through the same states.
//! That gives viewers a picture of every turn ([`frames`]) without replays
//! carrying a board per turn, and lets anyone check a replay against the
//! rules ([`check`]). The JSON shapes are pinned by golden files
//! (`games/tests/golden/replay.json`, `frames.json`); what each game's
//! events mean is on its page in `docs/games/`, the envelope in
//! `docs/replay.md`. The frames carry the match in words too (the seats'
//! roles, each turn's events as sentences, [`crate::words`]): the viewer
//! has the replay's JSON, but only the rules know what it means.

use std::io::Write;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::view::{Legend, Mark, View};
use crate::words::{Names, SeatRole};
use crate::{GameId, Judgement, Referee, Reply, Seat, SeatResult, TimePolicy};

/// A whole match as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// koth's own game, or an external game's name.
    pub game: GameId,
    /// The seed every random draw of the match comes from, as a string:
    /// 64-bit seeds do not survive JavaScript's numbers. (Older replays
    /// wrote a number; both are read.)
    #[serde(with = "seed_text")]
    pub seed: u64,
    /// The engine that played it (`koth-runner x.y.z`).
    #[serde(default)]
    pub engine: String,
    pub time_policy: Option<TimePolicy>,
    pub seats: Vec<ReplaySeat>,
    /// The state the game starts from, as the referee describes it.
    #[serde(default)]
    pub initial: Value,
    pub turns: Vec<Turn>,
    /// Every seat's result; the standings at the stop for a match that was
    /// cut short.
    #[serde(default)]
    pub result: Vec<SeatResult>,
    /// The match was stopped before the rules ended it (see `ended_by`).
    #[serde(default)]
    pub cut_short: bool,
    /// What ended the match.
    #[serde(default)]
    pub ended_by: EndedBy,
}

/// Why a match ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EndedBy {
    /// The game's rules ended it.
    #[default]
    Rules,
    /// The turn limit the host asked for (quick checks).
    TurnLimit { turns: u32 },
    /// The match's wall-clock cap; the position was scored as it stood.
    WallClockCap { seconds: f64 },
    /// An external game's referee crashed, hung or broke its protocol: the
    /// match has no result and rates nobody. `reason` says what it did
    /// (and ends with its last stderr, for the game's host).
    RefereeFailed { reason: String },
    /// The machine, not a bot, failed a move on `turn`: a bot waited for a
    /// CPU past what the clock forgives, or the engine itself was stopped
    /// or starved. Nobody is charged; the match has no result, rates
    /// nobody, and the service plays it again. `reason` says what happened.
    HostOverloaded { turn: u32, reason: String },
    /// The replay reached the host's limit on its size (`limit_bytes` of
    /// compact JSON) with turn `turn`, its last: the position was scored
    /// as it stood, as at the wall-clock cap. (A referee whose events took
    /// it there ends [`EndedBy::RefereeFailed`] instead, saying so.)
    ReplayLimit { turn: u32, limit_bytes: u64 },
}

impl EndedBy {
    /// Whether the match has a result: its rules, or the position scored
    /// where a limit stopped it. A failed referee or an overloaded machine
    /// leaves none: the replay's `result` is empty and no seat won or lost.
    pub fn has_result(&self) -> bool {
        match self {
            EndedBy::Rules | EndedBy::TurnLimit { .. } | EndedBy::WallClockCap { .. } | EndedBy::ReplayLimit { .. } => true,
            EndedBy::RefereeFailed { .. } | EndedBy::HostOverloaded { .. } => false,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySeat {
    #[serde(default)]
    pub name: String,
    /// What the bot said about itself (Snake's and Linkage's id lines).
    #[serde(default)]
    pub id_line: Option<String>,
    /// The arguments its long-lived bot was started with, after its
    /// program's own (an external referee's `launch`); absent when none.
    /// [`check`] asks the referee for the same again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// How the bot's match went, in words (`"crashed on turn 5 (exit code
    /// 3)"`); absent when all was well.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// What the bot wrote on stderr, with koth's notes about it, by turn;
    /// absent where the replay does not carry it (older replays, a ladder's
    /// replay downloaded by someone who does not own the bot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<SeatStderr>,
    /// The seat's data carried from match to match, where its ladder (or
    /// `koth match --data`) carries it: the snapshot it started from, so
    /// that `koth replay rerun --data` starts the bot from the same files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<SeatData>,
}

/// A seat's data in a match (see `koth_runner::storage`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatData {
    /// The snapshot the bot's folder started from (`sha256:` and the hash
    /// of its deterministic archive).
    pub started_from: String,
    /// The snapshot its folder was packed into at the end, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
    /// Why none was (over its quota, the match ended abnormally, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_because: Option<String>,
}

/// A seat's stderr as a replay carries it: the text kept (the first
/// `stderr_cap` bytes the bot wrote, 64 KiB unless the host said, with
/// koth's notes such as `[koth] turn 3: no answer within 50 ms`) cut into
/// the turns it was written in, so a reader shows turn N's text beside
/// turn N's move.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatStderr {
    /// By turn, in order; only turns that wrote something.
    #[serde(default)]
    pub turns: Vec<StderrTurn>,
    /// Bytes the bot wrote on stderr in all (koth's notes not counted);
    /// absent where not known (a download from a server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The log reached its cap: what came after (the bot's and koth's
    /// notes) was not kept.
    #[serde(default)]
    pub cut: bool,
}

/// What a seat wrote on stderr in one turn. Output from before a turn's
/// request counts for that turn, so it shows beside the move it led to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StderrTurn {
    /// `None`: written after the last turn.
    #[serde(default)]
    pub turn: Option<u32>,
    pub text: String,
}

impl SeatStderr {
    /// `text` cut at `ends`, (turn, end of that turn's text in `text`), as
    /// the engine's log records them (`koth_runner`'s `StderrLog`) and the
    /// service stores them. Ends that do not fit the text (a hand-edited
    /// row) are skipped, never a panic; text after the last end has no
    /// turn.
    pub fn from_ends(text: &str, ends: &[(u32, usize)], bytes: Option<u64>, cut: bool) -> SeatStderr {
        let mut turns = Vec::new();
        let mut start = 0;
        for &(turn, end) in ends {
            if end < start || end > text.len() || !text.is_char_boundary(end) {
                continue;
            }
            if end > start {
                turns.push(StderrTurn { turn: Some(turn), text: text[start..end].to_owned() });
            }
            start = end;
        }
        if start < text.len() {
            turns.push(StderrTurn { turn: None, text: text[start..].to_owned() });
        }
        SeatStderr { turns, bytes, cut }
    }

    /// What was written in `turn` (empty when nothing was).
    pub fn of_turn(&self, turn: u32) -> String {
        self.turns.iter().filter(|t| t.turn == Some(turn)).map(|t| t.text.as_str()).collect()
    }

    /// The whole text, in order.
    pub fn text(&self) -> String {
        self.turns.iter().map(|t| t.text.as_str()).collect()
    }
}

/// One turn: the bots asked, what each answered, how long it took, how the
/// referee judged it and what happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    #[serde(default)]
    pub turn: u32,
    /// The engine's own time for the turn (thaw, send, wait, freeze), µs.
    #[serde(default, serialize_with = "resolution::whole_us")]
    pub engine_us: f64,
    pub answers: Vec<Answer>,
    #[serde(default)]
    pub times: Vec<MoveTime>,
    #[serde(default)]
    pub judgements: Vec<Judgement>,
    #[serde(default)]
    pub events: Vec<Value>,
}

/// What one bot answered in a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub seat: Seat,
    #[serde(flatten)]
    pub reply: Recorded,
}

/// A reply as recorded: `{"answer": "..."}`, `{"timeout": true}` or
/// `{"gone": true, "why": "..."}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Recorded {
    Answer {
        answer: String,
    },
    Timeout {
        timeout: bool,
    },
    Gone {
        gone: bool,
        /// Why the bot is gone, in words; absent in older replays.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
}

impl Recorded {
    pub fn reply(&self) -> Reply {
        match self {
            Recorded::Answer { answer } => Reply::Answer(answer.clone()),
            Recorded::Timeout { .. } => Reply::Timeout,
            Recorded::Gone { .. } => Reply::Gone,
        }
    }
}

/// How long one bot took over one request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MoveTime {
    pub seat: Seat,
    /// From the request's write to the answer (or the deadline), ms.
    #[serde(serialize_with = "resolution::ms_to_us")]
    pub wall_ms: f64,
    /// CPU time of the bot's box over the same span, up to its freeze, ms.
    #[serde(serialize_with = "resolution::ms_to_us")]
    pub cpu_ms: f64,
    /// The answer came after the move's limit (or never came).
    pub over_limit: bool,
    /// CPU the bot's box used between its answer being seen and the box
    /// being frozen, µs (how much a bot can steal after answering).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "resolution::whole_us_opt")]
    pub cpu_after_answer_us: Option<f64>,
    /// Time the bot's box waited for a CPU held by other programs during
    /// the move, not charged to it (its charged time is `wall_ms` minus
    /// this), ms; absent when under 0.05 ms.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "resolution::ms_to_us_opt")]
    pub uncharged_ms: Option<f64>,
    /// What is left of the bot's time bank after the move, ms (a game
    /// with a time bank only: `TimePolicy::bank`).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "resolution::ms_to_us_opt")]
    pub bank_ms: Option<f64>,
}

impl Replay {
    /// Read a replay from JSON, saying what is wrong with one that is not.
    pub fn from_json(bytes: &[u8]) -> Result<Replay, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("not a koth replay: {e}"))
    }

    pub fn from_value(v: &Value) -> Result<Replay, String> {
        Replay::deserialize(v).map_err(|e| format!("not a koth replay: {e}"))
    }
}

/// `json`, a replay as stored, with `stderr` added to its seats (seat,
/// that seat's stderr) and any stderr it held dropped from every other
/// seat: what a ladder's replay is for a reader who owns some of its bots
/// (hosts: all), and nobody else's. Only the seats are read and rewritten;
/// the turns, most of a replay, are copied as they are (a 32,769-turn
/// Flit replay is 11 MiB of JSON). Keys come out in name order, which
/// changes nothing: every reader reads a replay by name.
pub fn with_stderr(json: &[u8], stderr: &[(Seat, SeatStderr)]) -> Result<Vec<u8>, String> {
    use serde_json::value::RawValue;
    use std::collections::BTreeMap;
    let mut doc: BTreeMap<String, &RawValue> = serde_json::from_slice(json).map_err(|e| format!("not a koth replay: {e}"))?;
    let seats = doc.get("seats").ok_or("not a koth replay: it has no seats")?;
    let mut seats: Vec<serde_json::Map<String, Value>> =
        serde_json::from_str(seats.get()).map_err(|e| format!("not a koth replay: its seats: {e}"))?;
    for s in seats.iter_mut() {
        s.remove("stderr");
    }
    for (seat, text) in stderr {
        let n = seats.len();
        let s = seats.get_mut(*seat).ok_or_else(|| format!("the replay has no seat {seat} (it has {n})"))?;
        s.insert("stderr".into(), serde_json::to_value(text).map_err(|e| e.to_string())?);
    }
    let seats = serde_json::value::to_raw_value(&seats).map_err(|e| e.to_string())?;
    doc.insert("seats".into(), &seats);
    serde_json::to_vec(&doc).map_err(|e| e.to_string())
}

/// Writes a replay as compact JSON while its match is played: the head
/// (game, seed, engine, time policy, initial state) at the start, each turn
/// as it is judged, and the seats, result and end once the match is over.
/// The engine holds none of the turns it has written, so a match's memory
/// does not grow with its length; what it writes to (a file, a compressor,
/// a buffer) is the caller's choice.
///
/// The document is the one `serde_json::to_vec(&Replay)` writes, with the
/// seats after the turns (their statuses are known only at the end): JSON
/// objects are unordered, and every reader of a replay reads it by name.
pub struct ReplayWriter<W: Write> {
    out: W,
    written: u64,
    turns: u32,
    events: u64,
    scratch: Vec<u8>,
}

/// A turn serialized and not yet written ([`ReplayWriter::prepare`]).
pub struct PreparedTurn {
    /// Bytes the turn adds to the replay.
    pub bytes: u64,
    /// Of them, the referee's events.
    pub event_bytes: u64,
}

#[derive(Serialize)]
struct Head<'a> {
    game: &'a GameId,
    #[serde(with = "seed_text")]
    seed: u64,
    engine: &'a str,
    time_policy: Option<&'a TimePolicy>,
    initial: &'a Value,
}

#[derive(Serialize)]
struct Tail<'a> {
    seats: &'a [ReplaySeat],
    result: &'a [SeatResult],
    cut_short: bool,
    ended_by: &'a EndedBy,
}

/// Counts what serde would write, writing nothing.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<W: Write> ReplayWriter<W> {
    /// Start the document: everything known before the first turn.
    pub fn begin(
        mut out: W,
        game: &GameId,
        seed: u64,
        engine: &str,
        time_policy: Option<&TimePolicy>,
        initial: &Value,
    ) -> std::io::Result<ReplayWriter<W>> {
        let mut head = serde_json::to_vec(&Head { game, seed, engine, time_policy, initial })?;
        // `{...}` becomes `{...,"turns":[`: the turns follow.
        head.pop();
        head.extend_from_slice(br#","turns":["#);
        out.write_all(&head)?;
        Ok(ReplayWriter { out, written: head.len() as u64, turns: 0, events: 0, scratch: Vec::new() })
    }

    /// Serialize `turn`, to learn what it would add before it is written.
    pub fn prepare(&mut self, turn: &Turn) -> std::io::Result<PreparedTurn> {
        self.scratch.clear();
        if self.turns > 0 {
            self.scratch.push(b',');
        }
        serde_json::to_writer(&mut self.scratch, turn)?;
        let mut events = Counter(0);
        serde_json::to_writer(&mut events, &turn.events)?;
        Ok(PreparedTurn { bytes: self.scratch.len() as u64, event_bytes: events.0 })
    }

    /// Write the turn last [`prepare`](ReplayWriter::prepare)d.
    pub fn commit(&mut self, prepared: &PreparedTurn) -> std::io::Result<()> {
        self.out.write_all(&self.scratch)?;
        self.written += prepared.bytes;
        self.events += prepared.event_bytes;
        self.turns += 1;
        self.release_scratch();
        Ok(())
    }

    /// Forget the turn last prepared (it will not be written).
    pub fn discard(&mut self) {
        self.scratch.clear();
        self.release_scratch();
    }

    /// One huge turn does not keep its buffer for the rest of the match.
    fn release_scratch(&mut self) {
        if self.scratch.capacity() > SCRATCH_KEPT {
            self.scratch = Vec::new();
        }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Of them, the referee's events.
    pub fn event_bytes(&self) -> u64 {
        self.events
    }

    /// End the document; returns the writer and the document's size.
    pub fn finish(mut self, seats: &[ReplaySeat], result: &[SeatResult], cut_short: bool, ended_by: &EndedBy) -> std::io::Result<(W, u64)> {
        let tail = serde_json::to_vec(&Tail { seats, result, cut_short, ended_by })?;
        // `{...}` becomes `],...}`: the turns end.
        self.out.write_all(b"],")?;
        self.out.write_all(&tail[1..])?;
        self.out.flush()?;
        Ok((self.out, self.written + 1 + tail.len() as u64))
    }
}

/// A turn's serialization buffer larger than this is not kept for the next
/// turn (an ordinary turn is well under a kilobyte).
const SCRATCH_KEPT: usize = 64 << 10;

/// Times are written to the microsecond (what a clock read is worth), not
/// with f64's 17 digits: `0.029184` ms is written `0.029`,
/// `3.2049999999999996` µs `3.0`. The digits below are noise, and noise is
/// what a compressed replay's size is made of (`koth bench replay` prints
/// what a 32,768-turn Flit replay packs to).
mod resolution {
    use serde::Serializer;

    fn round(x: f64, per_unit: f64) -> f64 {
        if x.is_finite() {
            (x * per_unit).round() / per_unit
        } else {
            x
        }
    }

    pub fn ms_to_us<S: Serializer>(ms: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(round(*ms, 1e3))
    }

    pub fn whole_us<S: Serializer>(us: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(round(*us, 1.0))
    }

    pub fn ms_to_us_opt<S: Serializer>(ms: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match ms {
            Some(ms) => ms_to_us(ms, s),
            None => s.serialize_none(),
        }
    }

    pub fn whole_us_opt<S: Serializer>(us: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match us {
            Some(us) => whole_us(us, s),
            None => s.serialize_none(),
        }
    }
}

mod seed_text {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&seed.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Number(u64),
            Text(String),
        }
        match Either::deserialize(d)? {
            Either::Number(n) => Ok(n),
            Either::Text(t) => t.parse().map_err(|_| D::Error::custom(format!("seed {t:?} is not a 64-bit unsigned number"))),
        }
    }
}

/// Every turn of a match as pictures, compactly: the first frame has all
/// the cells, each later one only the cells that changed.
#[derive(Clone, Debug, Serialize)]
pub struct Frames {
    pub game: String,
    pub width: usize,
    pub height: usize,
    pub legend: Legend,
    /// What each seat is, by seat, where the game gives seats different
    /// roles (Linkage's More and Fewer); `null` for a seat like any other.
    /// Frames kept by servers before it have none.
    pub roles: Vec<Option<SeatRole>>,
    pub frames: Vec<Frame>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Frame {
    /// 0 before the first move; else the replay's turn number.
    pub turn: usize,
    /// Every cell (first frame only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells: Option<String>,
    /// (cell index, new code) since the previous frame.
    pub changes: Vec<(usize, char)>,
    pub marks: Vec<Mark>,
    pub caption: String,
    /// The turn's events in words, one sentence each, naming the bots
    /// ([`GameKind::event_sentence`]); absent for a frame without events
    /// (and in frames kept by servers before it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sentences: Vec<String>,
}

/// The frames of a replay of one of koth's own games: the initial picture
/// and one after each turn.
pub fn frames(replay: &Replay) -> Result<Frames, String> {
    frames_with(replay, builtin_referee(replay)?)
}

/// A fresh referee of koth's own game for the replay's match; an external
/// game's referee is a program the runner starts (`koth_runner::game`).
fn builtin_referee(replay: &Replay) -> Result<Box<dyn Referee>, String> {
    match &replay.game {
        GameId::Builtin(g) => g.referee(replay.seats.len(), replay.seed),
        GameId::External(name) => {
            Err(format!("{name} is an external game: its referee program draws and checks its replays (koth replay --game FOLDER)"))
        }
    }
}

/// The frames of a replay, drawn by `referee`, a fresh referee of the
/// replay's game and seats.
pub fn frames_with(replay: &Replay, referee: Box<dyn Referee>) -> Result<Frames, String> {
    let mut drawing = Drawing::new(replay);
    replay_through(replay, referee, |referee, turn, _, events| {
        drawing.push(referee, turn, events);
        Ok(())
    })?;
    drawing.finish()
}

/// [`frames_with`] and [`check_with`] in one run of `referee`: the frames
/// of a replay whose every judgement, event and result the referee makes
/// again. For a referee that is a program (an added game's, drawn where it
/// runs): one that says other things the second time draws nothing.
pub fn checked_frames_with(replay: &Replay, referee: Box<dyn Referee>) -> Result<Frames, String> {
    has_result(replay)?;
    let mut drawing = Drawing::new(replay);
    let referee = replay_through(replay, referee, |referee, turn, judgements, events| {
        agrees(replay, referee, turn, judgements, events)?;
        drawing.push(referee, turn, events);
        Ok(())
    })?;
    result_agrees(replay, referee.as_ref())?;
    drawing.finish()
}

/// Frames as a replay is played through its referee.
struct Drawing<'a> {
    replay: &'a Replay,
    names: Vec<String>,
    out: Option<Frames>,
    previous: Option<View>,
}

impl<'a> Drawing<'a> {
    fn new(replay: &'a Replay) -> Drawing<'a> {
        Drawing { replay, names: replay.seats.iter().map(|s| s.name.clone()).collect(), out: None, previous: None }
    }

    /// The picture after `turn` (0: before the first).
    fn push(&mut self, referee: &dyn Referee, turn: usize, events: &[Value]) {
        let replay = self.replay;
        let v = referee.view();
        let frames = self.out.get_or_insert_with(|| Frames {
            game: replay.game.name().to_owned(),
            width: v.width,
            height: v.height,
            legend: referee.legend(),
            roles: replay.game.seat_roles(replay.seats.len()),
            frames: Vec::new(),
        });
        let changes = match &self.previous {
            Some(p) if p.cells.len() == v.cells.len() => {
                p.cells.iter().zip(&v.cells).enumerate().filter(|(_, (a, b))| a != b).map(|(i, (_, &b))| (i, b as char)).collect()
            }
            _ => Vec::new(),
        };
        frames.frames.push(Frame {
            turn,
            cells: self.previous.is_none().then(|| String::from_utf8_lossy(&v.cells).into_owned()),
            changes,
            marks: v.marks.clone(),
            caption: v.caption.clone(),
            sentences: events.iter().map(|e| replay.game.event_sentence(e, Names(&self.names))).collect(),
        });
        self.previous = Some(v);
    }

    fn finish(self) -> Result<Frames, String> {
        self.out.ok_or_else(|| "the replay has no picture".to_owned())
    }
}

/// Check a replay of one of koth's own games against the rules: every
/// judgement, every event and the result must be what a fresh referee
/// makes of the recorded answers.
pub fn check(replay: &Replay) -> Result<(), String> {
    check_with(replay, builtin_referee(replay)?)
}

/// [`check`] with `referee`, a fresh referee of the replay's game and seats.
pub fn check_with(replay: &Replay, referee: Box<dyn Referee>) -> Result<(), String> {
    has_result(replay)?;
    let referee = replay_through(replay, referee, |referee, turn, judgements, events| agrees(replay, referee, turn, judgements, events))?;
    result_agrees(replay, referee.as_ref())
}

fn has_result(replay: &Replay) -> Result<(), String> {
    match &replay.ended_by {
        EndedBy::RefereeFailed { reason } => Err(format!("the match has no result: its referee failed ({reason})")),
        EndedBy::HostOverloaded { reason, .. } => {
            Err(format!("the match has no result: the machine playing it was overloaded, no bot was at fault ({reason})"))
        }
        _ => Ok(()),
    }
}

/// What the referee made of turn `turn` (0: the start) is what the replay
/// recorded.
fn agrees(replay: &Replay, referee: &dyn Referee, turn: usize, judgements: &[Judgement], events: &[Value]) -> Result<(), String> {
    if turn == 0 {
        // The state the game starts from (a replay written before
        // engines recorded it has none).
        let initial = referee.initial_state();
        if !replay.initial.is_null() && initial != replay.initial {
            return Err(format!("the initial state differs: rules say {initial}, replay says {}", replay.initial));
        }
        for (seat, s) in replay.seats.iter().enumerate() {
            let argv = referee.launch_argv(seat);
            if argv != s.argv {
                return Err(format!("seat {seat}'s bot was started with other arguments: rules say {argv:?}, replay says {:?}", s.argv));
            }
        }
        return Ok(());
    }
    let t = &replay.turns[turn - 1];
    if judgements != t.judgements.as_slice() {
        let rules = serde_json::to_string(judgements).unwrap_or_default();
        let recorded = serde_json::to_string(&t.judgements).unwrap_or_default();
        return Err(format!("turn {turn}: judgements differ: rules say {rules}, replay says {recorded}"));
    }
    if events != t.events.as_slice() {
        return Err(format!(
            "turn {turn}: events differ: rules say {}, replay says {}",
            Value::from(events.to_vec()),
            Value::from(t.events.clone())
        ));
    }
    Ok(())
}

/// The referee's result at the end is the replay's.
fn result_agrees(replay: &Replay, referee: &dyn Referee) -> Result<(), String> {
    let result = if replay.cut_short { referee.standings() } else { referee.result().ok_or("the rules say the game is not over")? };
    if result != replay.result {
        let rules = serde_json::to_string(&result).unwrap_or_default();
        let recorded = serde_json::to_string(&replay.result).unwrap_or_default();
        return Err(format!("results differ: rules say {rules}, replay says {recorded}"));
    }
    Ok(())
}

/// Play the replay's answers through a fresh referee, calling `each` with
/// the referee before the first turn (turn 0, no judgements) and after every
/// turn. Returns the referee at the end.
fn replay_through(
    replay: &Replay,
    mut referee: Box<dyn Referee>,
    mut each: impl FnMut(&dyn Referee, usize, &[Judgement], &[Value]) -> Result<(), String>,
) -> Result<Box<dyn Referee>, String> {
    referee.replaying(&replay.initial);
    let failed = |r: &dyn Referee| match (r.overloaded(), r.failure()) {
        (Some(why), _) => Err(format!("this machine was too busy to run the referee fairly, try again: {why}")),
        (None, Some(why)) => Err(format!("the referee failed: {why}")),
        (None, None) => Ok(()),
    };
    failed(referee.as_ref())?;
    each(referee.as_ref(), 0, &[], &[])?;
    let mut played = 0;
    while played < replay.turns.len() {
        let Some(step) = referee.step() else {
            failed(referee.as_ref())?;
            return Err(format!("the rules end the game after {played} turns, the replay has {}", replay.turns.len()));
        };
        if step.requests.is_empty() {
            continue;
        }
        let turn = &replay.turns[played];
        answers_for(&step, turn).map_err(|e| format!("turn {}: {e}", played + 1))?;
        let (judgements, events) = referee.apply_turn(&turn.answers, &turn.times);
        failed(referee.as_ref())?;
        played += 1;
        each(referee.as_ref(), played, &judgements, &events)?;
    }
    Ok(referee)
}

/// The recorded answers of a turn must answer exactly the seats the rules
/// ask in that turn.
fn answers_for(step: &crate::Step, turn: &Turn) -> Result<(), String> {
    let mut asked: Vec<Seat> = step.requests.iter().map(|r| r.seat).collect();
    let mut answered: Vec<Seat> = turn.answers.iter().map(|a| a.seat).collect();
    asked.sort_unstable();
    answered.sort_unstable();
    if asked != answered {
        return Err(format!("the rules ask seats {asked:?}, the replay answers for {answered:?}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A Slime replay written by hand: seat 0 spreads, seat 1 answers
    /// nonsense, seat 2 times out, seat 3 jumps.
    fn slime_replay() -> Replay {
        Replay::from_value(&slime_json()).unwrap()
    }

    fn slime_json() -> Value {
        json!({
            "game": "slime", "seed": 0, "seats": [{}, {}, {}, {}],
            "turns": [
                {"answers": [{"seat": 0, "answer": "0 0 1 1"}]},
                {"answers": [{"seat": 1, "answer": "what"}]},
                {"answers": [{"seat": 2, "timeout": true}]},
                {"answers": [{"seat": 3, "answer": "7 7 5 5"}]},
            ],
            "cut_short": true,
        })
    }

    #[test]
    fn frames_start_full_and_then_carry_changes() {
        let f = frames(&slime_replay()).unwrap();
        assert_eq!((f.game.as_str(), f.width, f.height, f.frames.len()), ("slime", 8, 8, 5));
        let first = f.frames[0].cells.as_deref().unwrap();
        assert_eq!(&first[..8], "0......1");
        assert_eq!(&first[56..], "2......3");
        // Turn 1: seat 0 spreads to (1, 1): one new cell, marked.
        assert_eq!(f.frames[1].changes, vec![(9, '0')]);
        assert!(f.frames[1].cells.is_none());
        assert_eq!(f.frames[1].marks.iter().map(|m| (m.cell, m.label.as_ref())).collect::<Vec<_>>(), vec![(0, "from"), (9, "moved")]);
        // Turns 2 and 3 are passes: nothing changes, nothing marked.
        assert!(f.frames[2].changes.is_empty() && f.frames[2].marks.is_empty());
        assert!(f.frames[3].changes.is_empty());
        // Turn 4: seat 3 jumps from (7, 7) to (5, 5).
        assert_eq!(f.frames[4].changes, vec![(45, '3'), (63, '.')]);
        assert_eq!(f.frames[4].caption, "turn 4: squares 2 1 1 1");
        // Each turn in words; these seats have no names. No words before
        // the first move, and none written.
        let said: Vec<Vec<String>> = f.frames.iter().map(|fr| fr.sentences.clone()).collect();
        let want = [
            &[][..],
            &["seat 1 spread 0 0 → 1 1, now holding 2 squares"],
            &["seat 2 passed"],
            &["seat 3 passed"],
            &["seat 4 jumped 7 7 → 5 5, now holding 1 square"],
        ];
        assert_eq!(said, want.map(|w| w.iter().map(|x| x.to_string()).collect::<Vec<_>>()));
        assert!(serde_json::to_value(&f.frames[0]).unwrap().get("sentences").is_none());
        assert_eq!(f.roles, vec![None; 4]);
    }

    /// Linkage's frames say which bot is More and which Fewer, and name
    /// them in each turn's words.
    #[test]
    fn frames_carry_the_seats_roles_and_the_turns_in_words() {
        let r = Replay::from_value(&json!({
            "game": "linkage", "seed": 0, "seats": [{"name": "alice"}, {"name": "bob"}],
            "turns": [
                {"answers": [{"seat": 0, "answer": "RB3B4"}]},
                {"answers": [{"seat": 1, "answer": "ya1a2"}]},
                {"answers": [{"seat": 0, "timeout": true}]},
            ],
        }))
        .unwrap();
        let f = frames(&r).unwrap();
        let roles: Vec<&str> = f.roles.iter().map(|r| r.as_ref().unwrap().name.as_str()).collect();
        assert_eq!(roles, ["More", "Fewer"]);
        let said: Vec<Vec<String>> = f.frames.iter().map(|fr| fr.sentences.clone()).collect();
        assert_eq!(
            said,
            [
                vec![],
                vec!["alice placed a red domino on B3 and B4".to_owned()],
                vec!["bob placed a yellow domino on A1 and A2".to_owned()],
                vec!["alice forfeited: no order in time".to_owned()],
            ]
        );
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["roles"][1], json!({"name": "Fewer", "note": "wins with fewer than 12 groups"}));
    }

    #[test]
    fn a_replay_that_disagrees_with_the_rules_is_refused() {
        let mut r = slime_json();
        // Turns of Slime answers for a game of Snake: Snake asks both seats
        // at once, the replay answers for one.
        r["game"] = json!("snake");
        r["seats"] = json!([{}, {}]);
        let e = frames(&Replay::from_value(&r).unwrap()).unwrap_err();
        assert!(e.contains("turn 1: the rules ask seats [0, 1], the replay answers for [0]"), "{e}");
        let mut r = slime_json();
        r["turns"][0]["answers"] = json!([{"seat": 0}]);
        assert!(Replay::from_value(&r).unwrap_err().contains("not a koth replay"));
        let mut r = slime_json();
        r["game"] = json!("chess");
        // Not one of koth's games: an external game's, whose referee is a
        // program this crate does not run.
        let e = check(&Replay::from_value(&r).unwrap()).unwrap_err();
        assert!(e.contains("chess is an external game"), "{e}");
        r["game"] = json!("../chess");
        assert!(Replay::from_value(&r).unwrap_err().contains("lowercase letters"));
        // A seat asked in a turn of the rules that the replay skips.
        let mut r = slime_json();
        r["turns"][1]["answers"] = json!([{"seat": 2, "answer": "x"}]);
        let e = frames(&Replay::from_value(&r).unwrap()).unwrap_err();
        assert!(e.contains("turn 2: the rules ask seats [1]"), "{e}");
        // check() compares judgements: these were never recorded.
        assert!(check(&slime_replay()).unwrap_err().contains("turn 1: judgements differ"));
        // So do frames drawn with the check (a runner drawing a referee
        // program's match): a referee that says other things than the
        // replay draws nothing, where the frames alone are drawn.
        let r = slime_replay();
        assert!(frames(&r).is_ok());
        let e = checked_frames_with(&r, builtin_referee(&r).unwrap()).unwrap_err();
        assert!(e.contains("turn 1: judgements differ"), "{e}");
        // ... and the state the game starts from, where the replay has one.
        let mut r = slime_json();
        r["initial"] = json!({"size": 9});
        assert!(check(&Replay::from_value(&r).unwrap()).unwrap_err().contains("the initial state differs"));
    }

    /// A Slime replay as `initial` says it was played: each answer judged
    /// by a referee that takes up the rules `initial` names.
    fn slime_played(initial: Value, answers: &[&str]) -> Replay {
        let mut g = crate::slime::Slime::new(8);
        g.replaying(&initial);
        let recorded = if initial.is_null() { Value::Null } else { g.initial_state() };
        let mut turns = Vec::new();
        for a in answers {
            let seat = g.step().unwrap().requests[0].seat;
            let (judgements, events) = g.apply(vec![(seat, crate::Reply::Answer(a.to_string()))]);
            turns.push(json!({"answers": [{"seat": seat, "answer": a}], "judgements": judgements, "events": events}));
        }
        let r = json!({"game": "slime", "seed": 0, "seats": [{}, {}, {}, {}], "initial": recorded,
                       "turns": turns, "result": g.standings(), "cut_short": true});
        Replay::from_value(&r).unwrap()
    }

    /// Slime reads answers as the original controller did since
    /// 2026-11-27 (`0 0 1 1 extra` is a move, it was a pass); a replay
    /// written before (its initial state names no reading, or it has
    /// none) still checks and draws as it was played.
    #[test]
    fn slime_replays_check_with_the_reading_they_were_played_with() {
        let answers = ["0 0 1 1 spread", "0 7 1 6", "7 0 6 1", "7 7 6 6"];
        let new = slime_played(json!({"answers": "original"}), &answers);
        assert_eq!(new.initial["answers"], "original");
        assert_eq!(new.turns[0].events[0]["type"], "spread");
        for old_initial in [
            json!({"size": 8, "board": ["1......2", "........", "........", "........", "........", "........", "........", "3......4"]}),
            Value::Null,
        ] {
            let old = slime_played(old_initial.clone(), &answers);
            assert_eq!(old.turns[0].events[0]["type"], "pass", "{old_initial}");
            assert_eq!(check(&old), Ok(()), "{old_initial}");
            assert_eq!(frames(&old).unwrap().frames[1].sentences, ["seat 1 passed"]);
            // The same answers judged as today: the first one is a move.
            let mut today = old.clone();
            today.initial = new.initial.clone();
            assert!(check(&today).unwrap_err().contains("turn 1: judgements differ"));
        }
        assert_eq!(check(&new), Ok(()));
        assert_eq!(frames(&new).unwrap().frames[1].sentences, ["seat 1 spread 0 0 → 1 1, now holding 2 squares"]);
    }

    #[test]
    fn times_are_written_to_the_microsecond() {
        // (wall_ms, cpu_ms, cpu_after_answer_us, engine_us) as measured → as written.
        let cases = [
            ((0.029184, 0.025238, Some(3.2049999999999996), 159.09799999999998), json!([0.029, 0.025, 3.0, 159.0])),
            ((50.0, 49.9995, None, 250.5), json!([50.0, 50.0, null, 251.0])),
            ((1200.0004, 0.0, Some(0.04), 0.0), json!([1200.0, 0.0, 0.0, 0.0])),
            ((f64::NAN, 1e-9, Some(-0.4), 1e9 + 0.4), json!([null, 0.0, -0.0, 1e9])),
        ];
        for ((wall_ms, cpu_ms, after, engine_us), written) in cases {
            let t = Turn {
                engine_us,
                times: vec![MoveTime {
                    seat: 0,
                    wall_ms,
                    cpu_ms,
                    over_limit: false,
                    cpu_after_answer_us: after,
                    uncharged_ms: None,
                    bank_ms: None,
                }],
                ..Turn::default()
            };
            let v = serde_json::to_value(&t).unwrap();
            let m = &v["times"][0];
            let got = json!([m["wall_ms"], m["cpu_ms"], m.get("cpu_after_answer_us").cloned().unwrap_or(Value::Null), v["engine_us"]]);
            assert_eq!(got, written, "{wall_ms} {cpu_ms} {after:?} {engine_us}");
        }
    }

    /// Every game's view has one code per cell, and its codes are empty,
    /// a seat's, or in its legend.
    #[test]
    fn every_view_uses_only_known_codes() {
        for kind in crate::GameKind::ALL {
            let (lo, _) = kind.seat_range();
            let r = kind.referee(lo, 3).unwrap();
            let v = r.view();
            assert_eq!(v.cells.len(), v.width * v.height, "{kind:?}");
            let legend: Vec<u8> = r.legend().iter().map(|e| e.code as u8).collect();
            for &c in &v.cells {
                let known = c == crate::view::EMPTY || crate::view::SEAT_CODES[..lo].contains(&c) || legend.contains(&c);
                assert!(known, "{kind:?}: code {:?} is in no legend", c as char);
            }
        }
    }
}
