//! The match loop (see the crate docs for the design).

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use koth_games::{GameKind, MatchResult, OnTimeout, Reply, Seat, TimePolicy, Verdict};
use koth_sandbox::{Child, Command, Exit, Network, Sandbox, SandboxConfig, Stdio};
use serde::Serialize;
use serde_json::json;

use crate::bot::BotSpec;
use crate::transport::{set_nonblocking, LineChannel, StderrLog, Transport, INPUT_FILE, ORDER_FILE, SNAKE_PORT};

/// The engine's version, recorded in every replay.
pub const ENGINE_VERSION: &str = concat!("koth-runner ", env!("CARGO_PKG_VERSION"));

/// Longest answer line kept.
const MAX_LINE: usize = 4096;

#[derive(Clone, Debug)]
pub struct MatchOptions {
    pub game: GameKind,
    pub seed: u64,
    /// Box for each bot: limits (memory, pids, ...). The root filesystem is
    /// each bot's own ([`BotSpec::root`], its language's image).
    pub sandbox: SandboxConfig,
    /// Override the game's time per move.
    pub per_move: Option<Duration>,
    /// Added to the first move's allowance (process start-up, JIT warm-up).
    pub first_move_extra: Duration,
    /// Freeze bots that are not on move (no thinking on an opponent's time).
    pub freeze_off_turn: bool,
    /// Bytes of each bot's stderr kept.
    pub stderr_cap: usize,
    /// Stop after this many turns and score the position as it stands
    /// (quick checks; ladders play games to their end).
    pub max_turns: Option<u32>,
}

impl MatchOptions {
    pub fn new(game: GameKind, seed: u64) -> MatchOptions {
        MatchOptions {
            game,
            seed,
            sandbox: SandboxConfig::default(),
            per_move: None,
            first_move_extra: Duration::from_secs(1),
            freeze_off_turn: true,
            stderr_cap: 64 << 10,
            max_turns: None,
        }
    }

    fn policy(&self) -> TimePolicy {
        let mut p = self.game.time_policy();
        if let Some(t) = self.per_move {
            p.per_move = t;
        }
        p
    }
}

/// How a bot's match went, from the host's point of view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum BotStatus {
    Ok,
    /// Its process died (exit code or signal) while it was still needed.
    Crashed { code: Option<i32>, signal: Option<i32>, turn: u32 },
    /// It ran out of time where the game does not forgive that.
    TimedOut { turn: u32 },
    /// Frozen after too many consecutive timeouts; not asked again.
    Frozen { turn: u32 },
    /// Its last invalid answer (the game went on; see `invalid_moves`).
    InvalidOutput { turn: u32, answer: String, reason: String },
    /// The kernel killed it for memory.
    OutOfMemory { turn: u32 },
    /// It could not even start (e.g. Snake bot that never connected).
    Disqualified { reason: String },
}

#[derive(Clone, Debug, Serialize)]
pub struct BotOutcome {
    pub seat: Seat,
    pub name: String,
    /// What the bot said about itself (Snake's and Linkage's id lines).
    pub id_line: Option<String>,
    pub score: f64,
    pub rank: usize,
    pub result: MatchResult,
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
}

#[derive(Debug, Serialize)]
pub struct MatchReport {
    pub game: GameKind,
    pub seed: u64,
    pub engine: &'static str,
    pub turns: u32,
    /// The match was stopped by `max_turns`, not by the game's rules.
    pub cut_short: bool,
    pub outcomes: Vec<BotOutcome>,
    /// Seed, initial state and every turn with its answers, per-move times
    /// and the referee's events: enough to redraw and re-check the game.
    #[serde(skip)]
    pub replay: serde_json::Value,
}

/// One bot during a match.
struct Player {
    spec: BotSpec,
    /// The first move's extra allowance: the match's or the language's, whichever is larger.
    first_move_extra: Duration,
    sandbox: Sandbox,
    transport: Transport,
    /// The long-lived process (stdio and TCP games).
    process: Option<Child>,
    /// The current turn's process (per-turn games).
    turn_process: Option<Child>,
    chan: Option<LineChannel>,
    stderr_pipe: Option<File>,
    stderr: StderrLog,
    id_line: Option<String>,
    gone: bool,
    status: BotStatus,
    moves: u32,
    timeouts: u32,
    consecutive_timeouts: u32,
    invalid: u32,
    move_times: Vec<Duration>,
    answered_once: bool,
    /// Answers to timed-out requests not received yet (long-lived bots).
    /// Lines are matched to requests in order, so the next `owed` lines are
    /// late answers and are discarded whenever they arrive, even after the
    /// next request was sent (a bot frozen mid-answer writes it only then).
    owed: u32,
}

/// A request in flight.
struct Pending {
    seat: Seat,
    sent: Instant,
    cpu_at_send: Duration,
    soft: Instant,
    hard: Instant,
    reply: Option<(Reply, Duration, bool)>,
}

pub type Result<T> = std::result::Result<T, String>;

fn err<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// Play one match between `bots` (in seat order).
pub fn play(opts: &MatchOptions, bots: Vec<BotSpec>) -> Result<MatchReport> {
    let mut referee = opts.game.referee(bots.len(), opts.seed)?;
    let transport = Transport::of(opts.game);
    let policy = opts.policy();
    let mut players = Vec::with_capacity(bots.len());
    for spec in bots {
        players.push(start(opts, transport, spec)?);
    }
    let mut turns = Vec::new();
    let mut turn: u32 = 0;
    let initial = referee.initial_state();
    // Snake's bots start talking on their own (their id line) before any request.
    if transport == Transport::TcpOrStdio {
        for p in players.iter_mut() {
            connect_snake(opts, &policy, p);
        }
    }
    let mut cut_short = false;
    loop {
        if opts.max_turns.is_some_and(|m| turn >= m) && !referee.is_over() {
            cut_short = true;
            break;
        }
        let Some(step) = referee.step() else { break };
        for (seat, line) in &step.notices {
            let p = &mut players[*seat];
            if p.gone {
                continue;
            }
            if let Some(ch) = p.chan.as_mut() {
                if ch.send_line(line).is_err() {
                    mark_dead(p, turn);
                }
            }
        }
        if step.requests.is_empty() {
            continue;
        }
        turn += 1;
        let turn_start = Instant::now();
        // Thaw every bot on move first, then send the requests back to back,
        // so no bot's clock runs while the engine thaws another.
        if opts.freeze_off_turn {
            for req in &step.requests {
                let p = &players[req.seat];
                if !p.gone {
                    let _ = p.sandbox.thaw();
                }
            }
        }
        let mut pending: Vec<Pending> = Vec::new();
        for req in &step.requests {
            let p = &mut players[req.seat];
            let allowance = policy.per_move + if p.answered_once { Duration::ZERO } else { p.first_move_extra };
            let hard_extra = match policy.on_timeout {
                OnTimeout::Soft { hard } => hard.saturating_sub(policy.per_move),
                _ => Duration::ZERO,
            };
            let pend = |sent: Instant, cpu: Duration, reply: Option<(Reply, Duration, bool)>| Pending {
                seat: req.seat,
                sent,
                cpu_at_send: cpu,
                soft: sent + allowance,
                hard: sent + allowance + hard_extra,
                reply,
            };
            if p.gone {
                pending.push(pend(Instant::now(), Duration::ZERO, Some((Reply::Gone, Duration::ZERO, false))));
                continue;
            }
            let cpu = p.sandbox.cpu_usage().unwrap_or_default();
            match send_request(p, &req.payload) {
                Ok(sent) => pending.push(pend(sent, cpu, None)),
                Err(_) => {
                    mark_dead(p, turn);
                    pending.push(pend(Instant::now(), cpu, Some((Reply::Gone, Duration::ZERO, false))));
                }
            }
        }
        wait_for_replies(&mut players, &mut pending, &policy);
        // Freeze right away: the clock of each bot stopped at its reply.
        let mut replies = Vec::new();
        let mut timing = Vec::new();
        for pend in &mut pending {
            let p = &mut players[pend.seat];
            let (reply, took, over_soft) = pend.reply.take().unwrap_or((Reply::Timeout, Duration::ZERO, true));
            finish_turn_process(p);
            if opts.freeze_off_turn && !p.gone {
                let _ = p.sandbox.freeze();
            }
            let cpu = p.sandbox.cpu_usage().unwrap_or_default().saturating_sub(pend.cpu_at_send);
            let reply = account(p, &policy, reply, took, over_soft, turn);
            timing.push(json!({
                "seat": pend.seat,
                "wall_ms": took.as_secs_f64() * 1e3,
                "cpu_ms": cpu.as_secs_f64() * 1e3,
                "over_limit": over_soft,
            }));
            replies.push((pend.seat, reply));
        }
        // The engine's own time for the turn: thaw, send, wait, freeze.
        let engine_us = turn_start.elapsed().as_secs_f64() * 1e6;
        let answers: Vec<serde_json::Value> = replies
            .iter()
            .map(|(s, r)| match r {
                Reply::Answer(a) => json!({"seat": s, "answer": a}),
                Reply::Timeout => json!({"seat": s, "timeout": true}),
                Reply::Gone => json!({"seat": s, "gone": true}),
            })
            .collect();
        let (judgements, events) = referee.apply(replies);
        for j in &judgements {
            let p = &mut players[j.seat];
            if let Verdict::Invalid { answer, reason } = &j.verdict {
                p.invalid += 1;
                if !p.gone {
                    p.status = BotStatus::InvalidOutput { turn, answer: answer.clone(), reason: reason.clone() };
                }
                p.stderr.note(&format!("\n[koth] turn {turn}: invalid answer {answer:?}: {reason}\n"));
            }
        }
        for p in players.iter_mut() {
            drain_stderr(p);
            p.stderr.end_turn(turn);
        }
        turns.push(json!({
            "turn": turn, "engine_us": engine_us, "answers": answers, "times": timing,
            "judgements": judgements, "events": events,
        }));
    }
    let results = referee.standings();
    let mut outcomes = Vec::new();
    for (seat, p) in players.iter_mut().enumerate() {
        drain_stderr(p);
        p.stderr.end_turn(turn);
        let (stderr, stderr_turns) = p.stderr.text_by_turn();
        let r = &results[seat];
        let moves_ms: Vec<f64> = p.move_times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        let oom = p.sandbox.oom_kills().unwrap_or(0) > 0;
        if oom && !matches!(p.status, BotStatus::OutOfMemory { .. }) {
            p.status = BotStatus::OutOfMemory { turn };
        }
        outcomes.push(BotOutcome {
            seat,
            name: p.spec.name.clone(),
            id_line: p.id_line.clone(),
            score: r.score,
            rank: r.rank,
            result: r.result,
            status: p.status.clone(),
            moves: p.moves,
            timeouts: p.timeouts,
            invalid_moves: p.invalid,
            max_move_ms: moves_ms.iter().cloned().fold(0.0, f64::max),
            mean_move_ms: if moves_ms.is_empty() { 0.0 } else { moves_ms.iter().sum::<f64>() / moves_ms.len() as f64 },
            cpu_time_ms: p.sandbox.cpu_usage().unwrap_or_default().as_secs_f64() * 1e3,
            peak_memory: p.sandbox.memory_peak().ok().flatten(),
            stderr,
            stderr_turns,
            stderr_bytes: p.stderr.total,
        });
    }
    let replay = json!({
        "game": opts.game,
        "seed": opts.seed,
        "engine": ENGINE_VERSION,
        "time_policy": policy,
        "seats": outcomes.iter().map(|o| json!({"name": o.name, "id_line": o.id_line})).collect::<Vec<_>>(),
        "initial": initial,
        "turns": turns,
        "result": results,
        "cut_short": cut_short,
    });
    Ok(MatchReport { game: opts.game, seed: opts.seed, engine: ENGINE_VERSION, turns: turn, cut_short, outcomes, replay })
}

fn start(opts: &MatchOptions, transport: Transport, spec: BotSpec) -> Result<Player> {
    let mut cfg = opts.sandbox.clone();
    cfg.root = spec.root.clone();
    if transport == Transport::TcpOrStdio {
        cfg.network = Network::Loopback { connect_ports: vec![SNAKE_PORT] };
    }
    let sandbox = Sandbox::create(cfg).map_err(err(&format!("building the box for {}", spec.name)))?;
    for (name, data, mode) in &spec.files {
        sandbox.workdir().write_file(name, data, *mode).map_err(err(&format!("putting {name} in {}'s folder", spec.name)))?;
    }
    let first_move_extra = opts.first_move_extra.max(Duration::from_millis(spec.first_move_extra_ms.unwrap_or(0)));
    let mut p = Player {
        first_move_extra,
        sandbox,
        transport,
        process: None,
        turn_process: None,
        chan: None,
        stderr_pipe: None,
        stderr: StderrLog::new(opts.stderr_cap),
        id_line: None,
        gone: false,
        status: BotStatus::Ok,
        moves: 0,
        timeouts: 0,
        consecutive_timeouts: 0,
        invalid: 0,
        move_times: Vec::new(),
        answered_once: false,
        owed: 0,
        spec,
    };
    match transport {
        Transport::Stdio | Transport::TcpOrStdio => {
            let mut child = p.sandbox.spawn(bot_command(&p, &[]).stdin(Stdio::Pipe).stdout(Stdio::Pipe).stderr(Stdio::Pipe))
                .map_err(err(&format!("starting {}", p.spec.name)))?;
            let stdin: OwnedFd = child.stdin.take().expect("piped").into();
            let stdout: OwnedFd = child.stdout.take().expect("piped").into();
            p.stderr_pipe = child.stderr.take().inspect(|f| set_nonblocking(f.as_raw_fd()));
            p.chan = Some(LineChannel::new(Some(stdin), stdout, MAX_LINE));
            p.process = Some(child);
            if opts.freeze_off_turn && transport == Transport::Stdio {
                // Start-up happens on the first move's (larger) allowance.
                let _ = p.sandbox.freeze();
            }
        }
        Transport::PerTurnFiles => {
            // Any argument: the bot prints its id line.
            let mut child = p.sandbox.spawn(bot_command(&p, &["id".into()]).stdout(Stdio::Pipe).stderr(Stdio::Pipe))
                .map_err(err(&format!("starting {}", p.spec.name)))?;
            let mut out = LineChannel::new(None, child.stdout.take().expect("piped").into(), MAX_LINE);
            let deadline = Instant::now() + opts.policy().per_move + p.first_move_extra;
            p.id_line = read_line_until(&mut out, deadline);
            let _ = p.sandbox.kill_all();
            let _ = child.wait();
            if let Some(mut e) = child.stderr.take() {
                set_nonblocking(e.as_raw_fd());
                p.stderr.drain(&mut e);
            }
        }
        Transport::PerTurnArgv => {}
    }
    Ok(p)
}

fn bot_command(p: &Player, extra: &[String]) -> Command {
    let (program, args, env) = p.spec.with_memory(p.sandbox.limits().memory);
    let mut c = Command::new(program).args(args).args(extra.iter().cloned());
    c.env = env;
    c
}

/// Wait for one line until `deadline`.
fn read_line_until(ch: &mut LineChannel, deadline: Instant) -> Option<String> {
    loop {
        ch.pump();
        if let Some(l) = ch.take_line() {
            return Some(l);
        }
        if ch.at_eof() {
            return ch.take_rest();
        }
        let left = deadline.checked_duration_since(Instant::now())?;
        poll_fds(&[ch.read_fd()], left);
    }
}

fn poll_fds(fds: &[i32], timeout: Duration) {
    let mut p: Vec<libc::pollfd> = fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    // Round up so a wait never ends just before its deadline.
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, ms) };
}

/// Snake: learn whether the bot uses TCP or stdio from its first act, and
/// read its id line.
fn connect_snake(opts: &MatchOptions, policy: &TimePolicy, p: &mut Player) {
    let deadline = Instant::now() + policy.per_move + p.first_move_extra;
    let listener = match p.sandbox.listen_tcp(SNAKE_PORT) {
        Ok(l) => l,
        Err(e) => {
            p.gone = true;
            p.status = BotStatus::Disqualified { reason: format!("could not listen on {SNAKE_PORT} in its box: {e}") };
            return;
        }
    };
    let _ = listener.set_nonblocking(true);
    loop {
        if let Ok((sock, _)) = listener.accept() {
            let _ = sock.set_nonblocking(false);
            let read: OwnedFd = match sock.try_clone() {
                Ok(s) => s.into(),
                Err(_) => break,
            };
            p.chan = Some(LineChannel::new(Some(sock.into()), read, MAX_LINE));
            let ch = p.chan.as_mut().expect("set");
            p.id_line = read_line_until(ch, deadline);
            break;
        }
        if let Some(ch) = p.chan.as_mut() {
            ch.pump();
            if let Some(line) = ch.take_line() {
                p.id_line = Some(line); // stdio mode: the first line is the id
                break;
            }
            if ch.at_eof() {
                break;
            }
        }
        drain_stderr(p);
        let Some(left) = deadline.checked_duration_since(Instant::now()) else { break };
        let fd = p.chan.as_ref().map(|c| c.read_fd()).unwrap_or(-1);
        poll_fds(&[listener.as_raw_fd(), fd], left.min(Duration::from_millis(5)));
    }
    if p.id_line.is_none() {
        p.gone = true;
        p.status = BotStatus::Disqualified {
            reason: format!("sent no id line (over TCP to 127.0.0.1:{SNAKE_PORT} or on stdout) within its start-up allowance"),
        };
    }
    p.answered_once = true;
    if opts.freeze_off_turn {
        let _ = p.sandbox.freeze();
    }
}

/// Deliver a request; returns when the bot's clock started (just before
/// the request was written, or the turn's process was spawned).
fn send_request(p: &mut Player, payload: &str) -> std::io::Result<Instant> {
    match p.transport {
        Transport::Stdio | Transport::TcpOrStdio => {
            let ch = p.chan.as_mut().ok_or_else(|| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
            let waiting = ch.discard_pending() as u32;
            if waiting > 0 {
                let late = waiting.min(p.owed);
                p.owed -= late;
                p.stderr.note(&format!(
                    "\n[koth] before a request: discarded {late} late answer(s) and {} unrequested line(s)\n",
                    waiting - late
                ));
            }
            // The clock starts before the write: if this thread is preempted
            // around the write, the bot must not get time its clock missed.
            let sent = Instant::now();
            ch.send_line(payload)?;
            Ok(sent)
        }
        Transport::PerTurnArgv => spawn_turn(p, &[payload.to_owned()]),
        Transport::PerTurnFiles => {
            let map = |e: koth_sandbox::Error| std::io::Error::other(e.to_string());
            p.sandbox.workdir().remove(ORDER_FILE).map_err(map)?;
            p.sandbox.workdir().write_file(INPUT_FILE, payload.as_bytes(), 0o644).map_err(map)?;
            spawn_turn(p, &[])
        }
    }
}

fn spawn_turn(p: &mut Player, args: &[String]) -> std::io::Result<Instant> {
    let sent = Instant::now();
    let mut child = p
        .sandbox
        .spawn(bot_command(p, args).stdout(Stdio::Pipe).stderr(Stdio::Pipe))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    p.chan = Some(LineChannel::new(None, child.stdout.take().expect("piped").into(), MAX_LINE));
    p.stderr_pipe = child.stderr.take().inspect(|f| set_nonblocking(f.as_raw_fd()));
    p.turn_process = Some(child);
    Ok(sent)
}

fn wait_for_replies(players: &mut [Player], pending: &mut [Pending], policy: &TimePolicy) {
    loop {
        let now = Instant::now();
        let mut fds = Vec::new();
        let mut next_deadline: Option<Instant> = None;
        for pend in pending.iter_mut().filter(|x| x.reply.is_none()) {
            let p = &mut players[pend.seat];
            drain_stderr(p);
            if let Some(reply) = check_reply(p) {
                let took = Instant::now() - pend.sent;
                let over = Instant::now() > pend.soft;
                pend.reply = Some((reply, took, over));
                continue;
            }
            let limit = match policy.on_timeout {
                OnTimeout::Soft { .. } => pend.hard,
                _ => pend.soft,
            };
            if now >= limit {
                pend.reply = Some((Reply::Timeout, now - pend.sent, true));
                if p.transport != Transport::Stdio && p.transport != Transport::TcpOrStdio {
                    let _ = p.sandbox.kill_all();
                }
                continue;
            }
            next_deadline = Some(next_deadline.map_or(limit, |d: Instant| d.min(limit)));
            if let Some(ch) = &p.chan {
                fds.push(ch.read_fd());
            }
            if let Some(child) = p.turn_process.as_ref().or(p.process.as_ref()) {
                fds.push(child.pidfd());
            }
            if let Some(e) = &p.stderr_pipe {
                fds.push(e.as_raw_fd());
            }
        }
        let Some(deadline) = next_deadline else { return };
        poll_fds(&fds, deadline.saturating_duration_since(Instant::now()));
    }
}

/// The bot's answer if it has one now; `Some(Reply::Gone)` if it died.
fn check_reply(p: &mut Player) -> Option<Reply> {
    match p.transport {
        Transport::Stdio | Transport::TcpOrStdio | Transport::PerTurnArgv => {
            let ch = p.chan.as_mut()?;
            ch.pump();
            while let Some(line) = ch.take_line() {
                if p.owed > 0 {
                    p.owed -= 1;
                    p.stderr.note(&format!("\n[koth] discarded a late answer: {line:?}\n"));
                    continue;
                }
                return Some(Reply::Answer(line));
            }
            if ch.at_eof() {
                if p.transport == Transport::PerTurnArgv {
                    // The process closed stdout: what it wrote is its answer.
                    return Some(Reply::Answer(ch.take_rest().unwrap_or_default()));
                }
                return Some(Reply::Gone);
            }
            if let Some(c) = p.process.as_mut() {
                if let Ok(Some(_)) = c.try_wait() {
                    ch.pump();
                    return Some(ch.take_line().map(Reply::Answer).unwrap_or(Reply::Gone));
                }
            }
            None
        }
        Transport::PerTurnFiles => {
            let child = p.turn_process.as_mut()?;
            match child.try_wait() {
                Ok(Some(_)) => {
                    let answer = p
                        .sandbox
                        .workdir()
                        .read_file(ORDER_FILE, MAX_LINE)
                        .map(|(b, _)| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default();
                    Some(Reply::Answer(answer))
                }
                _ => None,
            }
        }
    }
}

/// After a per-turn process answered: nothing of it may keep running.
fn finish_turn_process(p: &mut Player) {
    if let Some(mut c) = p.turn_process.take() {
        let _ = p.sandbox.kill_all();
        let _ = c.wait();
        drain_stderr(p);
        p.stderr_pipe = None;
    }
}

fn drain_stderr(p: &mut Player) {
    if let Some(e) = p.stderr_pipe.as_mut() {
        if !p.stderr.drain(e) {
            p.stderr_pipe = None;
        }
    }
}

/// A long-lived process is gone: record how it ended.
fn mark_dead(p: &mut Player, turn: u32) {
    if p.gone {
        return;
    }
    p.gone = true;
    let exit = p.process.as_mut().and_then(|c| c.wait_timeout(Some(Duration::from_millis(100))).ok().flatten());
    let oom = p.sandbox.oom_kills().unwrap_or(0) > 0;
    p.status = if oom {
        BotStatus::OutOfMemory { turn }
    } else {
        match exit {
            Some(Exit::Code(c)) => BotStatus::Crashed { code: Some(c), signal: None, turn },
            Some(Exit::Signal(s)) => BotStatus::Crashed { code: None, signal: Some(s), turn },
            None => BotStatus::Crashed { code: None, signal: None, turn },
        }
    };
    let _ = p.sandbox.kill_all();
}

/// Book-keeping of one answer under the game's time policy; returns the
/// reply the referee gets.
fn account(p: &mut Player, policy: &TimePolicy, reply: Reply, took: Duration, over_soft: bool, turn: u32) -> Reply {
    match reply {
        Reply::Gone => {
            if !p.gone {
                mark_dead(p, turn);
            }
            Reply::Gone
        }
        Reply::Timeout => {
            if matches!(p.transport, Transport::Stdio | Transport::TcpOrStdio) {
                p.owed += 1;
            }
            p.timeouts += 1;
            p.consecutive_timeouts += 1;
            p.move_times.push(took);
            p.stderr.note(&format!("\n[koth] turn {turn}: no answer within {} ms\n", policy.per_move.as_millis()));
            match policy.on_timeout {
                OnTimeout::NoMove { freeze_after: Some(n) } if p.consecutive_timeouts >= n => {
                    p.gone = true;
                    p.status = BotStatus::Frozen { turn };
                    let _ = p.sandbox.kill_all();
                    Reply::Gone
                }
                OnTimeout::Loses | OnTimeout::Forfeits => {
                    p.status = BotStatus::TimedOut { turn };
                    Reply::Timeout
                }
                _ => Reply::Timeout,
            }
        }
        Reply::Answer(a) => {
            p.answered_once = true;
            p.moves += 1;
            p.move_times.push(took);
            if over_soft {
                // Soft limit: the answer counts, the overrun is recorded.
                p.timeouts += 1;
                p.stderr.note(&format!(
                    "\n[koth] turn {turn}: answered in {:.1} ms, over the {} ms limit\n",
                    took.as_secs_f64() * 1e3,
                    policy.per_move.as_millis()
                ));
            } else {
                p.consecutive_timeouts = 0;
            }
            Reply::Answer(a)
        }
    }
}
