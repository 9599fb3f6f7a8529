//! The match loop (see the crate docs for the design).
//!
//! ```text
//! boxes for every seat ─▶ every protocol prepares (Snake: listen) ─▶ bots start one at a time,
//!   each paused once started (or once it has said its id line)
//! turn: notices ─▶ resume the bots on move ─▶ send every request (each clock starts at its write)
//!   ─▶ poll: each bot paused the moment its answer (or its death) is seen ─▶ deadline: paused
//!   ─▶ clock.judge ─▶ referee.apply ─▶ stderr filed under the turn
//! end: the rules, the turn limit, or the wall-clock cap ─▶ end notices read ─▶ bots stopped
//! ```
//!
//! The engine never blocks on a bot: writes go through outboxes, reads are
//! non-blocking, waits are `poll(2)` against the earliest deadline, and a
//! killed process is waited for a bounded time only. What the time policy
//! makes of the moments seen is [`clock`]'s business (pure, tested without
//! processes); how bytes travel is the [`protocol`](crate::protocol)'s.
//!
//! "Paused" is the box's freezer for a long-lived bot (nothing of it runs
//! between its answer and its next request, so a bot cannot think, or spin
//! threads, on another bot's clock), and the end of its process for a
//! process-per-turn bot. While it waits for answers the engine's thread
//! has the lowest real-time priority ([`koth_sandbox::PromptWakeups`]): it
//! preempts a bot the moment that bot's answer wakes it and pauses it
//! before the bot runs again, instead of waiting for the bot's spinning
//! threads to use up their slices.

pub mod clock;
pub mod live;
pub mod record;
pub mod status;

use std::time::{Duration, Instant};

use koth_games::replay::{Answer, EndedBy, MoveTime, Recorded, ReplaySeat, ReplayWriter, SeatStderr, Turn};
use koth_games::{BotProtocol, GameId, MatchResult, Request, Seat, TimePolicy, Verdict};
use koth_sandbox::{BoxPool, CpuWait, Exit, Network, PromptWakeups, Sandbox, SandboxConfig};
use serde::Serialize;

use crate::bot::BotSpec;
use crate::game::Game;
use crate::protocol::io::{PollSet, StderrLog};
use crate::protocol::{self, Bot, Gone, Heard, Protocol};
use crate::storage::{DataOutcome, SeatData, Snapshot};
use clock::{Allowance, Clock, Decision, LineUse, Seen, Wait};
use koth_sandbox::cpu_wait::Stopped;
pub use record::{RecordedReplay, ReplayTo, DEFAULT_REPLAY_LIMIT, MAX_REPLAY_LIMIT};
pub use status::BotStatus;

/// The engine's version, recorded in every replay.
pub const ENGINE_VERSION: &str = concat!("koth-runner ", env!("CARGO_PKG_VERSION"));

/// Input queued for a bot beyond this, not taken, means it does not read.
const MAX_UNSENT: usize = 1 << 20;

/// Deadlines at which a bot's input was still not taken, in a row, before
/// it is gone for not reading (the first is an ordinary timeout).
const NOT_READING_DEADLINES: u32 = 2;

/// While a move is timed, each thinking bot's run-queue wait is sampled at
/// least this often: what a thread that exits takes with it is at most
/// this much (see [`koth_sandbox::CpuWait`]), and the deadline moves by the
/// wait without a late look.
pub(crate) const WAIT_SAMPLE: Duration = Duration::from_millis(5);

/// Every bot's box weighs this much for the CPU: the same for each (so
/// threads buy nothing), and ten ordinary processes' worth, so that a bot
/// thinking on its clock gets the CPU before the host's background work
/// (a compile, the database, a busy neighbour) does. Only the bots on move
/// run at all: the others are paused.
pub const BOT_CPU_WEIGHT: u64 = 1000;

/// Uncharged waits below this are not written in the replay (a wake-up's
/// worth; the replay of a long match would grow for nothing).
const RECORDED_WAIT: Duration = Duration::from_micros(50);

/// At the end, how long a bot that was just sent an end notice gets to read
/// it before it is stopped.
const END_NOTICE_GRACE: Duration = Duration::from_millis(100);

/// Bytes of each bot's stderr a match keeps unless told otherwise
/// ([`MatchOptions::stderr_cap`]): what a ladder's matches keep.
pub const DEFAULT_STDERR_CAP: usize = 64 << 10;

/// The start-up allowance added to a program's first exchange by default
/// (process start-up, JIT warm-up): each bot's, and an external referee's
/// `start`.
pub const FIRST_MOVE_EXTRA: Duration = Duration::from_secs(1);

#[derive(Clone, Debug)]
pub struct MatchOptions {
    /// koth's own game, or an external game with its referee.
    pub game: Game,
    pub seed: u64,
    /// Box for each bot: limits (memory, pids, ...). The root filesystem is
    /// each bot's own ([`BotSpec::root`], its language's image).
    pub sandbox: SandboxConfig,
    /// Override the game's time per move.
    pub per_move: Option<Duration>,
    /// Scale the game's time bank and start-up allowances by this
    /// (`koth replay rerun --time-scale`; 1 otherwise).
    pub time_scale: f64,
    /// Added to each bot's first exchange (process start-up, JIT warm-up).
    pub first_move_extra: Duration,
    /// Pause bots that are not on move (no thinking on an opponent's time).
    pub freeze_off_turn: bool,
    /// Give the engine's thread the shortest slice while it plays and the
    /// lowest real-time priority while it waits for answers
    /// ([`PromptWakeups`]), so it preempts a bot as soon as its answer is
    /// written. On for every match; off only to measure what it buys
    /// (`koth bench match`).
    pub prompt_wakeups: bool,
    /// Bytes of each bot's stderr kept.
    pub stderr_cap: usize,
    /// Write each seat's stderr (with koth's notes, by turn) into the
    /// replay's seats, for whoever reads the replay: `koth match` does, for
    /// the author's own bots. A service's runner does not: there a seat's
    /// stderr is its owner's, stored apart and added to a replay only for
    /// its owner.
    pub stderr_in_replay: bool,
    /// Stop after this many turns and score the position as it stands
    /// (quick checks; ladders play games to their end).
    pub max_turns: Option<u32>,
    /// Stop when the match has run this long and score the position as it
    /// stands; `None`: [`default_wall_cap`].
    pub wall_cap: Option<Duration>,
    /// Each turn, once judged, for whoever shows a match while it runs
    /// (the service's live match page): a copy of the turn between turns.
    pub live: Option<std::sync::Arc<live::LiveTurns>>,
    /// Where the bots' boxes come from: built ahead by a pool (a runner
    /// playing match after match), or built at the match's start.
    pub boxes: Option<BoxPool>,
    /// The cores this match holds (a [`crate::cores::CoreLease`]): each
    /// bot on move runs on one no other bot on move uses. Empty: the
    /// kernel places the bots.
    pub cores: Vec<u32>,
    /// Where the replay is written as the match is played.
    pub replay_to: ReplayTo,
    /// Bytes of compact JSON the replay may hold: the turn that takes it
    /// past them is its last (`EndedBy::ReplayLimit`, scored as it stood),
    /// or, when an external referee's events are most of it, is not
    /// recorded and the referee has failed (`EndedBy::RefereeFailed`,
    /// saying so). What the match holds in memory is bounded by it too.
    pub replay_limit: u64,
    /// Each seat's data carried from match to match (by seat; a seat
    /// past the end, or `None`, has none): its folder starts as the
    /// snapshot and, when the match ends normally, is packed again into
    /// [`BotOutcome::data`] (see [`crate::storage`]).
    pub data: Vec<Option<SeatData>>,
    /// The initial state of the replay this match plays again (`koth
    /// replay rerun`): the referee takes up the rules it names
    /// ([`koth_games::Referee::replaying`]: a Slime replay from before
    /// koth read answers as the original controller did reads them as
    /// then); `None`, today's rules.
    pub rules_of: Option<serde_json::Value>,
}

impl MatchOptions {
    pub fn new(game: impl Into<Game>, seed: u64) -> MatchOptions {
        MatchOptions {
            game: game.into(),
            seed,
            sandbox: SandboxConfig::default(),
            per_move: None,
            time_scale: 1.0,
            first_move_extra: FIRST_MOVE_EXTRA,
            freeze_off_turn: true,
            prompt_wakeups: true,
            stderr_cap: DEFAULT_STDERR_CAP,
            stderr_in_replay: false,
            max_turns: None,
            wall_cap: None,
            live: None,
            boxes: None,
            cores: Vec::new(),
            replay_to: ReplayTo::Memory,
            replay_limit: DEFAULT_REPLAY_LIMIT,
            data: Vec::new(),
            rules_of: None,
        }
    }

    pub fn policy(&self) -> TimePolicy {
        let mut p = self.game.time_policy();
        if let Some(t) = self.per_move {
            p.per_move = t;
        }
        p.bank = p.bank.map(|b| b.mul_f64(self.time_scale));
        p.startup = p.startup.map(|s| s.mul_f64(self.time_scale));
        p
    }

    /// The start-up allowance per process of a bot in `language`, scaled.
    pub fn startup(&self, language: &str) -> Duration {
        self.game.startup(language).mul_f64(self.time_scale)
    }
}

/// The default cap on a match's wall time: twice the time its longest game
/// takes with every move at the limit (and a process's start-up allowance),
/// every first-move allowance, every bot's time bank, and a minute. A match
/// that hits it is ended and scored as it stands.
pub fn default_wall_cap(opts: &MatchOptions, seats: usize) -> Duration {
    let policy = opts.policy();
    (policy.per_move + opts.game.max_startup().mul_f64(opts.time_scale)) * opts.game.turn_bound() * 2
        + (opts.first_move_extra + policy.per_move + policy.bank.unwrap_or_default()) * seats as u32
        + Duration::from_secs(60)
}

#[derive(Clone, Debug, Serialize)]
pub struct BotOutcome {
    pub seat: Seat,
    pub name: String,
    /// What the bot said about itself (Snake's and Linkage's id lines).
    pub id_line: Option<String>,
    /// The game's score and rank: the position as it stood when the match
    /// has no result.
    pub score: f64,
    pub rank: usize,
    /// None when the match has no result ([`EndedBy::has_result`]: its
    /// referee failed, or the machine was overloaded).
    pub result: Option<MatchResult>,
    pub status: BotStatus,
    pub moves: u32,
    pub timeouts: u32,
    pub invalid_moves: u32,
    pub max_move_ms: f64,
    pub mean_move_ms: f64,
    pub cpu_time_ms: f64,
    pub peak_memory: Option<u64>,
    pub stderr: String,
    /// (turn, end of that turn's text in `stderr`), for the turns that
    /// wrote something: a turn's text starts where the previous one's ends.
    pub stderr_turns: Vec<(u32, usize)>,
    pub stderr_bytes: u64,
    /// What became of the seat's data, when it carries some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<DataOutcome>,
}

#[derive(Debug, Serialize)]
pub struct MatchReport {
    pub game: GameId,
    pub seed: u64,
    pub engine: &'static str,
    pub turns: u32,
    /// The match was stopped before the rules ended it (see `ended_by`).
    pub cut_short: bool,
    pub ended_by: EndedBy,
    pub outcomes: Vec<BotOutcome>,
    /// What an external game's referee wrote to stderr, for the game's
    /// host (capped; not in the replay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referee_stderr: Option<String>,
    /// Seed, initial state and every turn with its answers, per-move times
    /// and the referee's events: enough to redraw and re-check the game.
    /// Written as the match was played, where [`MatchOptions::replay_to`]
    /// said.
    #[serde(skip)]
    pub replay: RecordedReplay,
}

/// Why a match could not be played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The match cannot be played as asked (the game refuses this many
    /// seats, ...): the same on any runner, so it is not retried.
    #[error("{0}")]
    Invalid(String),
    /// This runner could not play it (a box could not be built or
    /// prepared): another runner, or a later try, may.
    #[error("{0}")]
    Host(String),
}

impl EngineError {
    /// Trying again cannot help.
    pub fn is_deterministic(&self) -> bool {
        matches!(self, EngineError::Invalid(_))
    }
}

pub type Result<T> = std::result::Result<T, EngineError>;

/// One seat during a match.
struct Player {
    spec: BotSpec,
    sandbox: Sandbox,
    proto: Box<dyn Protocol>,
    clock: Clock,
    log: StderrLog,
    id_line: Option<String>,
    status: BotStatus,
    /// Long-lived and frozen right now.
    paused: bool,
    freeze: bool,
    moves: u32,
    invalid: u32,
    move_times: Vec<Duration>,
    /// Sent a notice since its last request (it gets a moment to read an
    /// end notice).
    notified: bool,
    /// Consecutive deadlines at which its input was still not taken.
    undrained: u32,
    /// The core its box is confined to now, if one.
    core: Option<u32>,
    /// Its data carried from match to match, if any.
    data: Option<SeatData>,
    /// OOM kills in its box seen so far, and the turn of the first: a
    /// process per turn killed for memory leaves an empty answer and plays
    /// on, and its status at the end names that turn.
    oom_kills: u64,
    first_oom: Option<u32>,
}

/// Who plays a seat.
#[derive(Clone, Debug)]
pub enum SeatPlayer {
    /// A bot's program.
    Bot(BotSpec),
    /// Answers from a recorded match, in order (`koth replay rerun`; see
    /// [`crate::protocol::recorded`]): no program runs for it.
    Recorded { name: String, id_line: Option<String>, answers: Vec<Recorded> },
}

impl SeatPlayer {
    /// The name reports and the referee know the seat by.
    pub fn name(&self) -> String {
        match self {
            SeatPlayer::Bot(spec) => spec.name.clone(),
            SeatPlayer::Recorded { name, .. } => name.clone(),
        }
    }
}

impl Player {
    fn new(opts: &MatchOptions, kind: BotProtocol, seat: SeatPlayer, data: Option<SeatData>) -> Result<Player> {
        let framing = opts.game.framing();
        let files = opts.game.file_exchange();
        let (spec, proto): (BotSpec, Box<dyn Protocol>) = match seat {
            SeatPlayer::Bot(spec) => (spec, protocol::make(kind, framing, &files)),
            SeatPlayer::Recorded { name, id_line, answers } => {
                let like = protocol::make(kind, framing, &files);
                let proto = Box::new(crate::protocol::recorded::Recorded::new(like.as_ref(), id_line, answers));
                let spec = BotSpec {
                    name,
                    language: "recorded".into(),
                    program: "/nonexistent/recorded-seat".into(),
                    args: Vec::new(),
                    env: Vec::new(),
                    files: Vec::new(),
                    root: "/".into(),
                    image: crate::image::HOST.into(),
                    first_move_extra_ms: None,
                };
                (spec, proto)
            }
        };
        let mut cfg = opts.sandbox.clone();
        cfg.root = spec.root.clone();
        cfg.limits.cpu_weight = BOT_CPU_WEIGHT;
        crate::state::hide(&mut cfg, []);
        if let Some(port) = protocol::loopback_port(kind) {
            cfg.network = Network::Loopback { connect_ports: vec![port] };
        }
        let sandbox = match &opts.boxes {
            Some(pool) => pool.take(cfg),
            None => Sandbox::create(cfg),
        }
        .map_err(|e| EngineError::Host(format!("building the box for {}: {e}", spec.name)))?;
        // Until it is on move, the box may run on any of the match's cores.
        if !opts.cores.is_empty() {
            sandbox.set_cores(&opts.cores).map_err(|e| EngineError::Host(format!("confining {}'s box to its cores: {e}", spec.name)))?;
        }
        // The data first: the bot's own files are laid over it.
        if let Some(d) = &data {
            for f in d.from.files() {
                sandbox
                    .workdir()
                    .write_file(&f.path, &f.bytes, if f.executable { 0o755 } else { 0o644 })
                    .map_err(|e| EngineError::Host(format!("putting {}'s data {:?} in its folder: {e}", spec.name, f.path)))?;
            }
        }
        for (name, data, mode) in &spec.files {
            sandbox
                .workdir()
                .write_file(name, data, *mode)
                .map_err(|e| EngineError::Host(format!("putting {name} in {}'s folder: {e}", spec.name)))?;
        }
        let first_extra = spec.first_move_extra(opts.first_move_extra);
        Ok(Player {
            clock: Clock::new(opts.policy(), first_extra, proto.long_lived()).startup(opts.startup(&spec.language)),
            proto,
            sandbox,
            log: StderrLog::new(opts.stderr_cap),
            id_line: None,
            status: BotStatus::Ok,
            paused: false,
            freeze: opts.freeze_off_turn,
            moves: 0,
            invalid: 0,
            move_times: Vec::new(),
            notified: false,
            undrained: 0,
            core: None,
            data,
            spec,
            oom_kills: 0,
            first_oom: None,
        })
    }

    /// The protocol and what it needs of the bot, borrowed apart.
    fn parts(&mut self) -> (&mut dyn Protocol, Bot<'_>) {
        (self.proto.as_mut(), Bot { sandbox: &self.sandbox, spec: &self.spec, log: &mut self.log })
    }

    fn gone(&self) -> bool {
        self.status.is_gone()
    }

    /// Nothing of the bot runs until [`resume`](Player::resume).
    fn pause(&mut self) {
        let (proto, mut bot) = self.parts();
        if proto.long_lived() {
            if self.freeze && !self.paused {
                self.paused = self.sandbox.freeze().is_ok();
            }
        } else {
            proto.end_exchange(&mut bot);
        }
    }

    fn resume(&mut self) {
        if self.paused {
            let _ = self.sandbox.thaw();
            self.paused = false;
        }
    }

    /// The bot is out of the match: record why, stop everything of it.
    fn retire(&mut self, status: BotStatus, turn: u32) {
        if self.gone() {
            return;
        }
        self.log.note(&format!("\n[koth] turn {turn}: {}\n", status.describe()));
        self.status = status;
        let (proto, mut bot) = self.parts();
        proto.end_exchange(&mut bot);
        // Killing works on frozen and stopped programs alike.
        let _ = self.sandbox.kill_all();
        self.paused = false;
    }

    fn status_of(&self, gone: Gone, turn: u32) -> BotStatus {
        match gone {
            Gone::Exited(_) if self.sandbox.oom_kills().unwrap_or(0) > 0 => self.out_of_memory(turn),
            Gone::Exited(exit) => BotStatus::from_exit(exit, turn),
            Gone::ClosedOutput => BotStatus::ClosedOutput { turn },
            Gone::NotConnected(reason) => BotStatus::NotConnected { reason },
            Gone::NotStarted(why) => BotStatus::NotConnected { reason: format!("its program could not be started: {why}") },
        }
    }

    /// Killed by the kernel for memory on `turn`, with its box's limit.
    fn out_of_memory(&self, turn: u32) -> BotStatus {
        BotStatus::OutOfMemory { turn, limit: Some(self.sandbox.limits().memory) }
    }

    /// A process per turn's exchange of `turn` is over: if its process
    /// ended on its own other than with code 0, or the kernel killed
    /// something of its box for memory meanwhile, say so in its log beside
    /// that turn's answer, which such an end leaves empty or cut. (A
    /// long-lived bot's end is its status.)
    fn note_turn_exit(&mut self, turn: u32) {
        if self.proto.long_lived() {
            return;
        }
        let exit = self.proto.turn_exit();
        let kills = self.sandbox.oom_kills().unwrap_or(self.oom_kills);
        let killed_for_memory = kills > self.oom_kills;
        self.oom_kills = kills;
        let how = match exit {
            _ if killed_for_memory => {
                self.first_oom.get_or_insert(turn);
                self.out_of_memory(turn)
            }
            Some(Exit::Code(0)) | None => return,
            exit => BotStatus::from_exit(exit, turn),
        };
        self.log.note(&format!("\n[koth] turn {turn}: this turn's program {}\n", how.describe()));
    }

    /// Start the bot (a long-lived one with `argv` after its program's
    /// own); one that speaks first gets its start-up exchange now, alone
    /// (every other bot is paused or not started yet). Paused after.
    fn start(&mut self, argv: &[String]) {
        let speaks_first = self.proto.speaks_first();
        let allowance = speaks_first.then(|| self.clock.begin());
        let started = Instant::now();
        let (proto, mut bot) = self.parts();
        if let Err(g) = proto.start(&mut bot, argv) {
            let st = self.status_of(g, 0);
            self.retire(st, 0);
            return;
        }
        if let Some(allowance) = allowance {
            let deadline = started + allowance.limit;
            let mut set = PollSet::default();
            loop {
                let (proto, mut bot) = self.parts();
                match proto.hear(&mut bot) {
                    Some(Heard::Line(l) | Heard::Answer(l)) => {
                        self.id_line = Some(l);
                        break;
                    }
                    Some(Heard::Gone(g)) => {
                        if proto.long_lived() {
                            let st = self.status_of(g, 0);
                            self.retire(st, 0);
                        }
                        break;
                    }
                    None => {}
                }
                let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                    if proto.long_lived() {
                        let reason = proto.silence(allowance.limit);
                        self.retire(BotStatus::NotConnected { reason }, 0);
                    }
                    break;
                };
                set.clear();
                proto.wait_on(&mut set);
                set.wait(left);
            }
        }
        if !self.gone() {
            self.pause();
        }
    }

    fn notice(&mut self, text: &str) {
        if self.gone() {
            return;
        }
        let (proto, mut bot) = self.parts();
        proto.notice(&mut bot, text);
        self.notified = true;
    }

    /// Keep the bot's logs and file them under `turn`.
    fn end_turn(&mut self, turn: u32) {
        let (proto, mut bot) = self.parts();
        proto.drain_logs(&mut bot);
        self.log.end_turn(turn);
    }
}

/// A request in flight.
struct Pending {
    seat: Seat,
    allowance: Allowance,
    sent: Instant,
    cpu_at_send: Duration,
    /// The box's run-queue wait since just before the request.
    wait: CpuWait,
    /// The engine thread's own run-queue count at the request.
    engine_wait_at_send: Duration,
    /// When `wait` was last sampled.
    sampled: Instant,
    state: Waiting,
}

impl Pending {
    fn gone(seat: Seat) -> Pending {
        let none = Allowance { limit: Duration::ZERO, give_up: Duration::ZERO, max_uncharged: Duration::ZERO };
        let now = Instant::now();
        Pending {
            seat,
            allowance: none,
            sent: now,
            cpu_at_send: Duration::ZERO,
            wait: CpuWait::new(),
            engine_wait_at_send: Duration::ZERO,
            sampled: now,
            state: Waiting::Gone,
        }
    }

    /// The box's wait and CPU since the request, sampled now.
    fn measure(&mut self, sandbox: &Sandbox, stalled: Duration) -> Wait {
        sandbox.sample_cpu_wait(&mut self.wait);
        self.sampled = Instant::now();
        self.wait_so_far(sandbox.cpu_usage().unwrap_or_default(), koth_sandbox::cpu_wait::this_thread(), stalled)
    }

    /// `engine_now`: the engine thread's run-queue count at the moment
    /// the exchange's wall time was taken; `stalled`: the turn's stall so far.
    fn wait_so_far(&self, cpu_now: Duration, engine_now: Duration, stalled: Duration) -> Wait {
        let engine = engine_now.saturating_sub(self.engine_wait_at_send);
        Wait { run_queue: self.wait.waited() + engine, cpu: cpu_now.saturating_sub(self.cpu_at_send), stalled }
    }
}

enum Waiting {
    /// Nothing seen yet.
    Open,
    /// Answered after `took`; CPU at the answer and after the pause.
    Answered { answer: String, took: Duration, cpu_at_answer: Duration, cpu_after: Duration, wait: Wait },
    /// Nothing by the deadline.
    Nothing { took: Duration, cpu_after: Duration, wait: Wait },
    /// The bot was gone before or during the request.
    Gone,
}

/// A turn as judged.
struct Judged {
    answers: Vec<Answer>,
    times: Vec<MoveTime>,
    /// The machine failed the turn (see [`Decision::HostOverloaded`]).
    overload: Option<String>,
}

/// Play one match between `bots` (in seat order).
pub fn play(opts: &MatchOptions, bots: Vec<BotSpec>) -> Result<MatchReport> {
    play_seats(opts, bots.into_iter().map(SeatPlayer::Bot).collect())
}

/// Play one match with these seats (bots, or recordings).
pub fn play_seats(opts: &MatchOptions, bots: Vec<SeatPlayer>) -> Result<MatchReport> {
    let names: Vec<String> = bots.iter().map(SeatPlayer::name).collect();
    // Before any bot starts: an external referee's start-up is on no bot's clock.
    let mut referee = opts.game.referee(&names, opts.seed, &opts.sandbox).map_err(|e| match e {
        crate::game::GameError::Invalid(why) => EngineError::Invalid(why),
        crate::game::GameError::Host(why) => EngineError::Host(why),
    })?;
    if let Some(initial) = &opts.rules_of {
        referee.replaying(initial);
    }
    let kind = opts.game.protocol();
    let policy = opts.policy();
    // This thread runs the moment a bot answers and pauses it before the
    // bot runs again, however busy the bot keeps the cores (play_turn).
    let (prompt, errors) = if opts.prompt_wakeups { PromptWakeups::enter() } else { PromptWakeups::none() };
    note_promptness(prompt.how(), &errors);
    let began = Instant::now();
    let wall_cap = opts.wall_cap.unwrap_or_else(|| default_wall_cap(opts, bots.len()));
    // Every box, then every box's preparation, then the bots one at a time:
    // a bot may act the instant it starts, and none runs while another starts.
    let sink = record::Sink::open(&opts.replay_to).map_err(|e| EngineError::Host(format!("opening the replay: {e}")))?;
    let mut players = bots
        .into_iter()
        .enumerate()
        .map(|(seat, spec)| Player::new(opts, kind, spec, opts.data.get(seat).cloned().flatten()))
        .collect::<Result<Vec<_>>>()?;
    for p in players.iter_mut() {
        let (proto, mut bot) = p.parts();
        proto.prepare(&mut bot).map_err(|e| EngineError::Host(format!("preparing {}'s box: {e}", p.spec.name)))?;
    }
    // The arguments the referee launches each long-lived bot with (its
    // answer to `start`), recorded in the replay's seats.
    let launch: Vec<Vec<String>> = (0..players.len()).map(|seat| referee.launch_argv(seat)).collect();
    for (p, argv) in players.iter_mut().zip(&launch) {
        p.start(argv);
    }
    let initial = referee.initial_state();
    let replay_failed = |e: std::io::Error| EngineError::Host(format!("writing the replay: {e}"));
    let mut replay =
        ReplayWriter::begin(sink, &opts.game.id(), opts.seed, ENGINE_VERSION, Some(&policy), &initial).map_err(replay_failed)?;
    drop(initial);
    let mut turn: u32 = 0;
    let mut ended_by = EndedBy::Rules;
    loop {
        if let Some(m) = opts.max_turns.filter(|&m| turn >= m && !referee.is_over()) {
            ended_by = EndedBy::TurnLimit { turns: m };
            break;
        }
        if began.elapsed() >= wall_cap && !referee.is_over() {
            ended_by = EndedBy::WallClockCap { seconds: wall_cap.as_secs_f64() };
            break;
        }
        let Some(step) = referee.step() else { break };
        for (seat, line) in &step.notices {
            players[*seat].notice(line);
        }
        if step.requests.is_empty() {
            continue;
        }
        turn += 1;
        let turn_start = Instant::now();
        place_on_cores(&mut players, &step.requests, &opts.cores);
        let pending = play_turn(&mut players, &step.requests, turn, &prompt);
        let Judged { answers, times, overload } = judge_turn(&mut players, pending, turn);
        let engine_us = turn_start.elapsed().as_secs_f64() * 1e6;
        if let Some(reason) = overload {
            // Not the bots' doing: the turn is not applied, nobody is
            // charged, and the match has no result.
            for p in players.iter_mut() {
                p.log.note(&format!("\n[koth] turn {turn}: the match was stopped because the machine was overloaded: {reason}\n"));
                p.end_turn(turn);
            }
            ended_by = EndedBy::HostOverloaded { turn, reason };
            break;
        }
        let (judgements, events) = referee.apply_turn(&answers, &times);
        for j in &judgements {
            let p = &mut players[j.seat];
            if let Verdict::Invalid { answer, reason } = &j.verdict {
                p.invalid += 1;
                if matches!(p.status, BotStatus::Ok | BotStatus::InvalidOutput { .. }) {
                    p.status = BotStatus::InvalidOutput { turn, answer: answer.clone(), reason: reason.clone() };
                }
                p.log.note(&format!("\n[koth] turn {turn}: invalid answer {answer:?}: {reason}\n"));
            }
        }
        for p in players.iter_mut() {
            p.end_turn(turn);
        }
        let played = Turn { turn, engine_us, answers, times, judgements, events };
        let prepared = replay.prepare(&played).map_err(replay_failed)?;
        let size = replay.written() + prepared.bytes;
        if size > opts.replay_limit {
            let events = replay.event_bytes() + prepared.event_bytes;
            if matches!(opts.game, Game::External(_)) && events * 2 >= size {
                // The referee's doing: its turn is not kept, and the match
                // has no result.
                replay.discard();
                ended_by = EndedBy::RefereeFailed {
                    reason: format!(
                        "its events took the match's replay past koth's limit of {} ({} bytes): with turn {turn} it \
                         would hold {size} bytes, {events} of them the referee's events ({} in this turn alone)",
                        mib(opts.replay_limit),
                        opts.replay_limit,
                        prepared.event_bytes
                    ),
                };
                break;
            }
            // The bots' answers (or a host's small limit): the turn is
            // kept, so the replay agrees with the position scored.
            replay.commit(&prepared).map_err(replay_failed)?;
            if let Some(live) = &opts.live {
                live.push(&played);
            }
            ended_by = EndedBy::ReplayLimit { turn, limit_bytes: opts.replay_limit };
            break;
        }
        replay.commit(&prepared).map_err(replay_failed)?;
        if let Some(live) = &opts.live {
            live.push(&played);
        }
    }
    if let Some(reason) = referee.overloaded() {
        ended_by = EndedBy::HostOverloaded { turn, reason };
    } else if let Some(reason) = referee.failure() {
        ended_by = EndedBy::RefereeFailed { reason };
    }
    if ended_by == EndedBy::Rules {
        // The rules' last step may be notices only (Snake's WIN / LOSS).
        while let Some(step) = referee.step() {
            for (seat, line) in &step.notices {
                players[*seat].notice(line);
            }
        }
    }
    let results = referee.standings();
    let mut outcomes = Vec::new();
    for (seat, p) in players.iter_mut().enumerate() {
        // A bot just told how the game ended gets a moment to read it.
        let grace = if p.notified && !p.gone() { END_NOTICE_GRACE.min(policy.per_move) } else { Duration::ZERO };
        if !grace.is_zero() {
            p.resume();
        }
        let (proto, mut bot) = p.parts();
        proto.finish(&mut bot, grace);
        p.end_turn(turn);
        if p.sandbox.oom_kills().unwrap_or(0) > 0 && !matches!(p.status, BotStatus::OutOfMemory { .. }) {
            p.status = p.out_of_memory(p.first_oom.unwrap_or(turn));
        }
        let data = p.data.as_ref().map(|d| {
            // Nothing of the bot runs while its folder is read.
            let _ = p.sandbox.kill_all();
            pack_data(p, d, &ended_by)
        });
        let (stderr, stderr_turns) = p.log.text_by_turn();
        let r = &results[seat];
        let moves_ms: Vec<f64> = p.move_times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        outcomes.push(BotOutcome {
            seat,
            name: p.spec.name.clone(),
            id_line: p.id_line.clone(),
            score: r.score,
            rank: r.rank,
            result: ended_by.has_result().then_some(r.result),
            status: p.status.clone(),
            moves: p.moves,
            timeouts: p.clock.timeouts,
            invalid_moves: p.invalid,
            max_move_ms: moves_ms.iter().cloned().fold(0.0, f64::max),
            mean_move_ms: if moves_ms.is_empty() { 0.0 } else { moves_ms.iter().sum::<f64>() / moves_ms.len() as f64 },
            cpu_time_ms: p.sandbox.cpu_usage().unwrap_or_default().as_secs_f64() * 1e3,
            peak_memory: p.sandbox.memory_peak().ok().flatten(),
            stderr,
            stderr_turns,
            stderr_bytes: p.log.total,
            data,
        });
    }
    let cut_short = ended_by != EndedBy::Rules;
    let seats: Vec<ReplaySeat> = outcomes
        .iter()
        .map(|o| ReplaySeat {
            name: o.name.clone(),
            id_line: o.id_line.clone(),
            argv: launch[o.seat].clone(),
            status: (o.status != BotStatus::Ok).then(|| o.status.describe()),
            stderr: opts.stderr_in_replay.then(|| {
                let cut = players[o.seat].log.kept.len() >= opts.stderr_cap;
                SeatStderr::from_ends(&o.stderr, &o.stderr_turns, Some(o.stderr_bytes), cut)
            }),
            data: o.data.as_ref().map(|d| koth_games::replay::SeatData {
                started_from: d.started_from.clone(),
                written: d.written.clone(),
                kept_because: d.kept_because.clone(),
            }),
        })
        .collect();
    // A match with no result records none.
    let recorded: &[koth_games::SeatResult] = if ended_by.has_result() { &results } else { &[] };
    let (sink, json_len) = replay.finish(&seats, recorded, cut_short, &ended_by).map_err(replay_failed)?;
    let replay = sink.close(json_len).map_err(replay_failed)?;
    Ok(MatchReport {
        game: opts.game.id(),
        seed: opts.seed,
        engine: ENGINE_VERSION,
        turns: turn,
        cut_short,
        ended_by,
        outcomes,
        referee_stderr: referee.stderr(),
        replay,
    })
}

/// The seat's folder packed, when the match ended normally and the
/// folder is within the quota; else why the snapshot it started from is
/// kept. The bot's own files (its artifact) are put back every match and
/// are not its data.
fn pack_data(p: &Player, d: &SeatData, ended_by: &EndedBy) -> DataOutcome {
    let kept = |why: String| DataOutcome { started_from: d.from.hash.clone(), written: None, kept_because: Some(why), snapshot: None };
    if !ended_by.has_result() {
        return kept("the match did not end normally (it has no result)".into());
    }
    let own: std::collections::HashSet<&str> = p.spec.files.iter().map(|(n, _, _)| n.trim_start_matches("./")).collect();
    let own_bytes: u64 = p.spec.files.iter().map(|(_, b, _)| b.len() as u64).sum();
    // Read with room for the bot's own files, then held to the quota
    // without them; one file or byte more says "over".
    let tree = match p.sandbox.workdir().read_tree(d.quota.max_files + own.len() + 1, d.quota.max_bytes + own_bytes + 1) {
        Ok(t) => t,
        // Past what was read: the files' or the bytes' limit, said as the quota.
        Err(koth_sandbox::Error::Config(why)) if why.ends_with(" files") => {
            return kept(format!("its folder held more than {} files, over its quota of {} files", d.quota.max_files, d.quota.max_files))
        }
        Err(koth_sandbox::Error::Config(_)) => {
            return kept(format!("its folder held more than {} bytes, over its quota of {} bytes", d.quota.max_bytes, d.quota.max_bytes))
        }
        Err(e) => return kept(format!("its folder could not be read: {e}")),
    };
    let files: Vec<crate::storage::DataFile> = tree
        .into_iter()
        .filter(|f| !own.contains(f.path.as_str()))
        .map(|f| crate::storage::DataFile { path: f.path, bytes: f.bytes, executable: f.mode & 0o100 != 0 })
        .collect();
    let bytes: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    if let Some(why) = crate::storage::over_quota(files.len(), bytes, d.quota) {
        return kept(why);
    }
    match Snapshot::pack(files) {
        Ok(s) => DataOutcome { started_from: d.from.hash.clone(), written: Some(s.hash.clone()), kept_because: None, snapshot: Some(s) },
        Err(why) => kept(why),
    }
}

/// `n` bytes as a host writes a limit: `32 MiB`, `1.5 MiB`.
fn mib(n: u64) -> String {
    let m = n as f64 / (1 << 20) as f64;
    if m.fract() == 0.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.1} MiB")
    }
}

/// Say once per process how the engine's thread was made prompt, if it
/// could not be made real-time.
fn note_promptness(how: koth_sandbox::Promptness, errors: &[std::io::Error]) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if how == koth_sandbox::Promptness::RealTime || errors.is_empty() {
        return;
    }
    ONCE.call_once(|| {
        let why = errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ");
        if koth_sandbox::Privilege::current().is_root() {
            tracing::warn!(
                "the engine's thread could not take a real-time priority ({why}); it uses {how}, so a bot that \
                 spins after answering may keep the CPU for a few milliseconds now and then (give the runner \
                 CAP_SYS_NICE)"
            );
        } else {
            // A user's local match: expected, and no operator to tell.
            tracing::info!("without root the engine's thread uses {how}, not a real-time priority ({why})");
        }
    });
}

/// Give each bot on move a core of the match's that no other bot on move
/// has (while they are paused: the write costs the clock nothing). A bot
/// keeps its core from turn to turn unless another needs it.
fn place_on_cores(players: &mut [Player], requests: &[Request], cores: &[u32]) {
    if cores.is_empty() {
        return;
    }
    for (i, req) in requests.iter().enumerate() {
        let core = cores[i % cores.len()];
        let p = &mut players[req.seat];
        if p.core != Some(core) && !p.gone() {
            match p.sandbox.set_cores(&[core]) {
                Ok(true) => p.core = Some(core),
                // No cpuset controller here: the kernel places the bots.
                Ok(false) => {}
                Err(e) => tracing::warn!("confining {} to core {core}: {e}", p.spec.name),
            }
        }
    }
}

/// Resume the bots on move, send every request, and wait: each bot is
/// paused the moment its answer, its death or its deadline is seen.
fn play_turn(players: &mut [Player], requests: &[Request], turn: u32, prompt: &PromptWakeups) -> Vec<Pending> {
    // The whole turn at the lowest real-time priority (where allowed): the
    // engine resumes the bots and sends every request without being
    // preempted between two of them, wakes the moment an answer or a
    // deadline comes, and pauses the bot before it runs again, however busy
    // the host. (At ordinary priority, with the host at load 10, it was
    // preempted for 8 to 40 ms a turn, and read answers that late.) Its
    // cost to bots of other matches on the host, a few µs at each wake-up,
    // is run-queue wait, which their clocks do not charge.
    let _urgent = prompt.urgent();
    // Resume every bot on move first, then send the requests back to back,
    // so no bot's clock runs while the engine resumes another.
    for req in requests {
        if !players[req.seat].gone() {
            players[req.seat].resume();
        }
    }
    let mut pending = Vec::with_capacity(requests.len());
    // Time the engine's thread was stopped from here on (a paused VM, a
    // stopped process, CPUs a hypervisor took: nothing of the match ran) is
    // the machine's; the clock forgives it as it does waits (`Wait::stalled`).
    let mut stopped = Stopped::start();
    for req in requests {
        let p = &mut players[req.seat];
        p.notified = false;
        if !p.gone() && p.proto.unsent() > MAX_UNSENT {
            let unread = p.proto.unsent() as u64;
            p.retire(BotStatus::NotReading { turn, unread }, turn);
        }
        if p.gone() {
            pending.push(Pending::gone(req.seat));
            continue;
        }
        let waiting = p.proto.discard_waiting();
        if waiting > 0 {
            let late = p.clock.before_request(waiting);
            p.log.note(&format!(
                "\n[koth] turn {turn}: before the request, discarded {late} late answer(s) and {} unrequested line(s)\n",
                waiting - late
            ));
        }
        let allowance = p.clock.begin();
        let mut wait = CpuWait::new();
        p.sandbox.sample_cpu_wait(&mut wait);
        let cpu_at_send = p.sandbox.cpu_usage().unwrap_or_default();
        let (proto, mut bot) = p.parts();
        match proto.request(&mut bot, req) {
            Ok(sent) => pending.push(Pending {
                seat: req.seat,
                allowance,
                sent,
                cpu_at_send,
                wait,
                engine_wait_at_send: koth_sandbox::cpu_wait::this_thread(),
                sampled: sent,
                state: Waiting::Open,
            }),
            Err(g) => {
                let st = p.status_of(g, turn);
                p.retire(st, turn);
                pending.push(Pending::gone(req.seat));
            }
        }
    }
    let mut set = PollSet::default();
    loop {
        let mut next: Option<Instant> = None;
        set.clear();
        for pend in pending.iter_mut().filter(|x| matches!(x.state, Waiting::Open)) {
            let p = &mut players[pend.seat];
            if let Some(state) = listen(p, pend, turn, stopped.so_far()) {
                pend.state = state;
                continue;
            }
            let now = Instant::now();
            let took = now - pend.sent;
            // The deadline moves by the wait for a CPU so far (the clock
            // bounds it): sampled at every look, at least every WAIT_SAMPLE.
            let due = now >= pend.sent + pend.allowance.give_up || now >= pend.sampled + WAIT_SAMPLE;
            let stalled = stopped.so_far();
            let wait = if due {
                pend.measure(&p.sandbox, stalled)
            } else {
                pend.wait_so_far(p.sandbox.cpu_usage().unwrap_or_default(), koth_sandbox::cpu_wait::this_thread(), stalled)
            };
            let deadline = pend.sent + pend.allowance.deadline(took, wait);
            if now >= deadline {
                p.pause();
                p.note_turn_exit(turn);
                let cpu_after = p.sandbox.cpu_usage().unwrap_or_default();
                pend.state = Waiting::Nothing { took, cpu_after, wait };
                // Its input still not taken: an ordinary timeout, unless it
                // has not taken it for NOT_READING_DEADLINES in a row.
                let unread = p.proto.unsent();
                p.undrained = if unread > 0 { p.undrained + 1 } else { 0 };
                if p.undrained >= NOT_READING_DEADLINES {
                    p.retire(BotStatus::NotReading { turn, unread: unread as u64 }, turn);
                }
                continue;
            }
            let wake = deadline.min(pend.sampled + WAIT_SAMPLE);
            next = Some(next.map_or(wake, |d: Instant| d.min(wake)));
            p.proto.wait_on(&mut set);
        }
        let Some(wake) = next else { break };
        let asked = wake.saturating_duration_since(Instant::now());
        stopped.asleep(asked, || set.wait(asked));
    }
    pending
}

/// Everything the bot said since the last look: its answer (it is paused
/// at once), or its death; `None` while it is still thinking.
fn listen(p: &mut Player, pend: &mut Pending, turn: u32, stalled: Duration) -> Option<Waiting> {
    loop {
        let (proto, mut bot) = p.parts();
        let heard = proto.hear(&mut bot)?;
        let answer = match heard {
            Heard::Line(line) => match p.clock.line() {
                LineUse::Late => {
                    p.log.note(&format!("\n[koth] turn {turn}: discarded a late answer: {line:?}\n"));
                    continue;
                }
                LineUse::Answer => line,
            },
            Heard::Answer(a) => a,
            Heard::Gone(g) => {
                let st = p.status_of(g, turn);
                p.retire(st, turn);
                return Some(Waiting::Gone);
            }
        };
        let took = pend.sent.elapsed();
        let engine_wait = koth_sandbox::cpu_wait::this_thread();
        // Real-time (the caller's, for its whole wait) from the answer to
        // the pause of a long-lived bot: none of its threads runs in
        // between, however many it spins.
        let cpu_at_answer = p.sandbox.cpu_usage().unwrap_or_default();
        p.pause();
        // How a process per turn ended, its exchange over (a long-lived
        // bot has no such end).
        p.note_turn_exit(turn);
        let cpu_after = p.sandbox.cpu_usage().unwrap_or_default();
        // The box is paused: its threads' counts stand still, and the
        // sample costs the bot nothing. CPU as at the answer.
        pend.wait.sample(&p.sandbox.threads().unwrap_or_default());
        let wait = pend.wait_so_far(cpu_at_answer, engine_wait, stalled);
        p.undrained = 0;
        return Some(Waiting::Answered { answer, took, cpu_at_answer, cpu_after, wait });
    }
}

/// The clock's decisions, as the replay records them and the referee gets
/// them.
fn judge_turn(players: &mut [Player], pending: Vec<Pending>, turn: u32) -> Judged {
    let mut answers = Vec::with_capacity(pending.len());
    let mut times = Vec::with_capacity(pending.len());
    let mut overload = None;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for pend in pending {
        let p = &mut players[pend.seat];
        let (seen, took, cpu_after, after_answer, text, wait) = match pend.state {
            Waiting::Answered { answer, took, cpu_at_answer, cpu_after, wait } => {
                (Seen::Answer(took), took, cpu_after, Some(cpu_after.saturating_sub(cpu_at_answer)), Some(answer), wait)
            }
            Waiting::Nothing { took, cpu_after, wait } => (Seen::Nothing(took), took, cpu_after, None, None, wait),
            Waiting::Gone | Waiting::Open => (Seen::Gone, Duration::ZERO, Duration::ZERO, None, None, Wait::default()),
        };
        let decision = p.clock.judge(seen, pend.allowance, wait);
        let limit_ms = pend.allowance.limit.as_millis();
        match decision {
            Decision::OnTime => {}
            Decision::LateCounted { by } => p.log.note(&format!(
                "\n[koth] turn {turn}: answered {:.1} ms over the {limit_ms} ms limit (counted: the limit is soft)\n",
                ms(by)
            )),
            Decision::TimedOut { .. } | Decision::TimedOutFrozen { .. } | Decision::TimedOutLoses { .. } => {
                let late = text.as_ref().map_or(String::new(), |a| {
                    format!(" (its answer {a:?} came {:.1} ms late and was discarded)", ms(took) - limit_ms as f64)
                });
                p.log.note(&format!("\n[koth] turn {turn}: no answer within {limit_ms} ms{late}\n"));
            }
            Decision::HostOverloaded { why } => {
                overload.get_or_insert_with(|| format!("on turn {turn}, {}: {why}", p.spec.name));
            }
            Decision::Gone => {}
        }
        match decision {
            Decision::TimedOutFrozen { consecutive, .. } => p.retire(BotStatus::Frozen { turn, timeouts: consecutive }, turn),
            Decision::TimedOutLoses { by } if !p.gone() => p.status = BotStatus::TimedOut { turn, by_ms: by.as_millis() as u64 },
            _ => {}
        }
        if !matches!(decision, Decision::Gone) {
            p.move_times.push(took);
        }
        let recorded = match (decision.answer_counts(), text) {
            (true, Some(a)) => {
                p.moves += 1;
                Recorded::Answer { answer: a }
            }
            _ if decision == Decision::Gone => Recorded::Gone { gone: true, why: Some(p.status.describe()) },
            _ => Recorded::Timeout { timeout: true },
        };
        if decision != Decision::Gone {
            let uncharged = pend.allowance.uncharged(took, wait);
            times.push(MoveTime {
                seat: pend.seat,
                wall_ms: ms(took),
                cpu_ms: ms(cpu_after.saturating_sub(pend.cpu_at_send)),
                over_limit: decision.over_limit(),
                cpu_after_answer_us: after_answer.map(|d| d.as_secs_f64() * 1e6),
                uncharged_ms: (uncharged >= RECORDED_WAIT).then(|| ms(uncharged)),
                bank_ms: p.clock.bank().map(ms),
            });
        }
        answers.push(Answer { seat: pend.seat, reply: recorded });
    }
    Judged { answers, times, overload }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A match the game cannot be played with fails the same on any runner:
    /// the error says so, and the service does not retry it.
    #[test]
    fn a_match_the_rules_refuse_is_a_deterministic_error() {
        let e = play(&MatchOptions::new(koth_games::GameKind::Snake, 1), Vec::new()).unwrap_err();
        assert!(matches!(&e, EngineError::Invalid(why) if why.contains("exactly 2")), "{e:?}");
        assert!(e.is_deterministic());
        assert!(!EngineError::Host("building the box".into()).is_deterministic());
    }
}
