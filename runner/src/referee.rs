//! An external game's referee at work: its program in a box of its own,
//! spoken to in the line-JSON protocol of [`koth_games::external`], behind
//! the same [`Referee`] trait as koth's own games.
//!
//! The referee is untrusted code like the bots, and held the same way:
//! - its own box: no network, its own memory and process limits, koth's
//!   state folders hidden;
//! - one line from koth, then one line back within `per_call_ms`, read
//!   without ever blocking (a referee that stops reading, floods, or writes
//!   megabytes without a newline costs a bounded buffer and its deadline);
//! - frozen between its answers, so it thinks on no bot's clock, and its
//!   CPU over the match bounded by `match_cpu_ms`;
//! - a crash, a hang, a line that is not its answer, a seat that does not
//!   exist: the referee has failed ([`Referee::failure`] says how, in
//!   words), its box is emptied at once, and the engine ends the match as
//!   `referee_failed`, rating nobody. Its stderr is kept for the game's
//!   host ([`Referee::stderr`]), not put in the replay the
//!   players read.

use std::time::{Duration, Instant};

use koth_games::external::{Conversation, GameManifest, RefereeLimits, MAX_REFEREE_LINE};
use koth_games::replay::{Answer, MoveTime, Recorded};
use koth_games::view::{Legend, View};
use koth_games::{Judgement, Referee, Reply, Seat, SeatResult, Step};
use koth_sandbox::{cpu_wait, CpuWait, Exit, Network, Sandbox, SandboxConfig};
use serde_json::Value;

use crate::bot::BotSpec;
use crate::engine::clock::{self, Allowance, Call, Wait};
use crate::engine::WAIT_SAMPLE;
use crate::protocol::io::{Outbox, PollSet, StderrLog};
use crate::protocol::stdio::Stdio;
use crate::protocol::{Bot, Gone, Heard, Process};

/// Bytes of the referee's stderr kept for the host.
const STDERR_CAP: usize = 64 << 10;
/// Processes and threads in the referee's box.
const PIDS: u64 = 64;

pub struct ExternalReferee {
    conv: Conversation,
    seats: usize,
    legend: Legend,
    limits: RefereeLimits,
    run: Option<Running>,
    failure: Option<String>,
    log: StderrLog,
    // What the referee said last.
    initial: Value,
    /// Each seat's arguments, from its answer to `start` (`launch`).
    launch: Vec<Vec<String>>,
    view: View,
    standings: Vec<SeatResult>,
    next: Option<Step>,
    costs: Vec<CallCost>,
    /// The box's CPU at the end of the last exchange.
    cpu_used: Duration,
    /// The machine failed a call (see [`Referee::overloaded`]).
    overloaded: Option<String>,
}

/// Why a call to the referee gave no answer.
enum AskError {
    /// The referee's doing: it crashed, hung, broke the protocol.
    Failed(String),
    /// The machine's: it waited for a CPU past what its clock forgives.
    Overloaded(String),
}

impl From<String> for AskError {
    fn from(why: String) -> AskError {
        AskError::Failed(why)
    }
}

/// What one exchange with the referee cost (`koth bench match`).
#[derive(Clone, Copy, Debug)]
pub struct CallCost {
    /// From the box's thaw being asked for and koth's line written to the
    /// answer read, checked and the box's freeze asked for.
    pub wall: Duration,
    /// CPU the referee's box used meanwhile: its program's own work.
    pub cpu: Duration,
}

/// The referee's program, running.
struct Running {
    sandbox: Sandbox,
    spec: BotSpec,
    process: Process,
    stdin: Outbox,
    /// Its output ended.
    ended: bool,
    paused: bool,
    /// Its threads' run-queue wait in a call, restarted at each, with
    /// their `schedstat` files kept open from call to call.
    wait: CpuWait,
}

impl ExternalReferee {
    /// Start `referee`, the built referee of the game `m`, for a match
    /// between `names` (in seat order) and read its answer to `start`.
    /// Never fails: a referee that cannot start says so through
    /// [`Referee::failure`].
    ///
    /// `Err`: this machine could not make the referee's box (not the game's
    /// fault: the match is played again, here later or on another runner).
    /// A referee that starts and then fails is the game's: recorded, and
    /// the match ends with it ([`Referee::failure`]).
    pub fn start(
        m: &GameManifest,
        referee: &BotSpec,
        names: &[String],
        seed: u64,
        sandbox: &SandboxConfig,
    ) -> Result<ExternalReferee, String> {
        let mut r = ExternalReferee {
            conv: Conversation::new(m, names.len()),
            seats: names.len(),
            legend: m.legend.clone(),
            limits: m.referee.limits,
            run: None,
            failure: None,
            log: StderrLog::new(STDERR_CAP),
            initial: Value::Null,
            launch: Vec::new(),
            view: View::grid(1, 1),
            standings: Vec::new(),
            next: None,
            costs: Vec::new(),
            cpu_used: Duration::ZERO,
            overloaded: None,
        };
        match Running::start(referee, &m.referee.limits, sandbox, &mut r.log) {
            Ok(run) => r.run = Some(run),
            Err(StartFailure::Host(why)) => return Err(format!("the game's referee: {why}")),
            Err(StartFailure::Referee(why)) => {
                r.fail(why);
                return Ok(r);
            }
        }
        let start = r.conv.start(seed, names, &m.settings);
        r.exchange(&start, &[]);
        Ok(r)
    }

    /// Send one line and take the referee's answer to it; a failure stops
    /// the referee and is recorded.
    fn exchange(&mut self, line: &str, answered: &[Answer]) -> Option<(Vec<Judgement>, Vec<Value>)> {
        let when = if self.standings.is_empty() { "at the start".to_owned() } else { format!("judging turn {}", self.conv.turns()) };
        let run = self.run.as_mut()?;
        let began = std::time::Instant::now();
        // Frozen since its last answer: it used nothing in between.
        let cpu_before = self.cpu_used;
        let mut limit = Duration::from_millis(self.limits.per_call_ms);
        if self.costs.is_empty() {
            // Its first call starts its process too: the start-up
            // allowance a bot's first exchange gets.
            limit += run.spec.first_move_extra(crate::engine::FIRST_MOVE_EXTRA);
        }
        let heard = match run.ask(line, limit, cpu_before, &mut self.log) {
            Ok(text) => Ok(text),
            Err(AskError::Failed(why)) => Err(why),
            Err(AskError::Overloaded(why)) => {
                self.overloaded = Some(format!("the game's referee, {when}: {why}"));
                self.next = None;
                if let Some(mut run) = self.run.take() {
                    run.stop(&mut self.log);
                }
                return None;
            }
        };
        let used = run.sandbox.cpu_usage().unwrap_or_default();
        let said = heard.and_then(|text| {
            if used > Duration::from_millis(self.limits.match_cpu_ms) {
                return Err(format!("used {} ms of CPU, over its {} ms for the match", used.as_millis(), self.limits.match_cpu_ms));
            }
            self.conv.read(&text, answered)
        });
        self.costs.push(CallCost { wall: began.elapsed(), cpu: used.saturating_sub(cpu_before) });
        self.cpu_used = used;
        match said {
            Ok(s) => {
                if let Some(initial) = s.initial {
                    self.initial = initial;
                }
                if !s.launch.is_empty() {
                    self.launch = s.launch;
                }
                self.view = s.view;
                self.standings = s.standings;
                self.next = (!s.over || !s.step.notices.is_empty()).then_some(s.step);
                Some((s.judgements, s.events))
            }
            Err(why) => {
                self.fail(format!("{why} ({when})"));
                None
            }
        }
    }

    /// What each exchange so far cost, the start's first.
    pub fn costs(&self) -> &[CallCost] {
        &self.costs
    }

    fn fail(&mut self, why: String) {
        if self.failure.is_none() {
            self.failure = Some(why);
        }
        self.next = None;
        if let Some(mut run) = self.run.take() {
            run.stop(&mut self.log);
        }
    }
}

/// Why a referee did not start: the machine (its box), or the referee
/// (it would not run).
enum StartFailure {
    Host(String),
    Referee(String),
}

impl Running {
    fn start(spec: &BotSpec, limits: &RefereeLimits, base: &SandboxConfig, log: &mut StderrLog) -> Result<Running, StartFailure> {
        let mut cfg = base.clone();
        cfg.root = spec.root.clone();
        cfg.network = Network::None;
        cfg.limits.memory = limits.memory_mb << 20;
        cfg.limits.pids = PIDS;
        // The match's CPU is counted from the cgroup after every answer;
        // RLIMIT_CPU a little above it is the backstop.
        cfg.limits.cpu_time = Some(Duration::from_millis(limits.match_cpu_ms) + Duration::from_secs(1));
        cfg.limits.wall_time = None;
        // On the clock as the bots are, and weighed as they are.
        cfg.limits.cpu_weight = crate::engine::BOT_CPU_WEIGHT;
        crate::state::hide(&mut cfg, []);
        let sandbox = Sandbox::create(cfg).map_err(|e| StartFailure::Host(format!("its box could not be built: {e}")))?;
        for (name, data, mode) in &spec.files {
            sandbox
                .workdir()
                .write_file(name, data, *mode)
                .map_err(|e| StartFailure::Host(format!("putting {name} in its folder: {e}")))?;
        }
        let bot = Bot { sandbox: &sandbox, spec, log };
        let (process, stdin) =
            Process::spawn_lines(&bot, &[], true, MAX_REFEREE_LINE).map_err(|g| StartFailure::Referee(gone_words(&g, &sandbox)))?;
        let stdin = Outbox::new(stdin.ok_or_else(|| StartFailure::Referee("it has no standard input".into()))?);
        Ok(Running { sandbox, spec: spec.clone(), process, stdin, ended: false, paused: false, wait: CpuWait::keeping_files() })
    }

    /// Write `line`, wait up to `limit` of the referee's own time for one
    /// line back; frozen after. Its own time is judged as a bot's move is
    /// (the engine's `clock`): the time its box, or the engine, waited for
    /// a CPU is not counted, up to the limit again; past that, the machine
    /// failed the call, not the referee. `cpu_before`: the box's CPU when
    /// it was last paused (it has used none since).
    fn ask(&mut self, line: &str, limit: Duration, cpu_before: Duration, log: &mut StderrLog) -> Result<String, AskError> {
        // A line from before this question answered nothing.
        if let Some(out) = self.process.stdout.as_mut() {
            out.pump();
            if let Some(extra) = out.take_line() {
                return Err(format!("wrote a line nobody asked for: {:?}", clip(&extra)).into());
            }
        }
        let allowance = Allowance { limit, give_up: limit, max_uncharged: limit };
        let wait = &mut self.wait;
        wait.restart();
        let cpu_at_start = if self.paused { cpu_before } else { self.sandbox.cpu_usage().unwrap_or_default() };
        if !self.paused {
            self.sandbox.sample_cpu_wait(wait);
        }
        // Time the engine's thread was stopped, as in a bot's turn: the
        // machine's, forgiven within the same bound; its run-queue wait.
        let mut stopped = cpu_wait::Stopped::start();
        let engine_at_start = stopped.queued_at_start();
        let began = Instant::now();
        let mut sampled = began;
        self.stdin.push_line(line);
        // Continued once its line is there, so that it wakes once, to read
        // it; not waited for (`Sandbox::request_thaw_sampled`: the first
        // sample of its wait comes from the same read of its threads).
        if self.paused {
            self.sandbox.request_thaw_sampled(wait).map_err(|e| format!("its box could not be resumed: {e}"))?;
            self.paused = false;
        }
        let mut set = PollSet::default();
        let heard = loop {
            let mut bot = Bot { sandbox: &self.sandbox, spec: &self.spec, log };
            match Stdio::hear_process(&mut self.process, Some(&mut self.stdin), &mut self.ended, &mut bot) {
                Some(Heard::Line(l) | Heard::Answer(l)) => break Ok(l),
                Some(Heard::Gone(g)) => break Err(AskError::Failed(gone_words(&g, &self.sandbox))),
                None => {}
            }
            let now = Instant::now();
            if now >= sampled + WAIT_SAMPLE || now >= began + limit {
                self.sandbox.sample_cpu_wait(wait);
                sampled = now;
            }
            let took = now - began;
            // Before the limit no wait changes the verdict, nor puts the
            // deadline before the limit: the wait is measured (the box's
            // CPU, the engine's run-queue wait, its stops) only past it.
            let deadline = if allowance.in_time_whatever_the_wait(took) {
                began + allowance.give_up
            } else {
                let measured = Wait {
                    run_queue: wait.waited() + cpu_wait::this_thread().saturating_sub(engine_at_start),
                    cpu: self.sandbox.cpu_usage().unwrap_or_default().saturating_sub(cpu_at_start),
                    stalled: stopped.so_far(),
                };
                match clock::judge_call(took, measured, allowance) {
                    Call::Within => {}
                    Call::HostOverloaded(why) => break Err(AskError::Overloaded(why.to_string())),
                    Call::Over => {
                        let unread = self.stdin.unsent();
                        break Err(AskError::Failed(if unread > 0 {
                            format!("did not read its input ({unread} bytes unread after {} ms)", limit.as_millis())
                        } else {
                            format!("gave no answer within {} ms of its own time{}", limit.as_millis(), measured_words(took, measured))
                        }));
                    }
                }
                began + allowance.deadline(took, measured)
            };
            set.clear();
            self.process.wait_on(&mut set);
            if let Some(fd) = self.stdin.poll_fd() {
                set.write(fd);
            }
            let asked = deadline.min(sampled + WAIT_SAMPLE).saturating_duration_since(Instant::now());
            stopped.asleep(asked, || set.wait(asked));
        };
        if heard.is_ok() {
            // Nothing of it runs while the bots think. Its threads are
            // stopped by this thread at once (v1) or by the kernel (v2);
            // the rest of the freeze is not waited for: a referee that has
            // answered is blocked reading, and waiting for the box's holder
            // to be scheduled was most of a call's cost on a loaded machine.
            self.paused = self.sandbox.request_freeze().is_ok();
        }
        heard
    }

    fn stop(&mut self, log: &mut StderrLog) {
        let mut bot = Bot { sandbox: &self.sandbox, spec: &self.spec, log };
        self.process.stop(&mut bot);
        let _ = self.sandbox.kill_all();
    }
}

/// How the referee's program is gone, in words.
fn gone_words(g: &Gone, sandbox: &Sandbox) -> String {
    if sandbox.oom_kills().unwrap_or(0) > 0 {
        return "ran out of memory".into();
    }
    match g {
        Gone::Exited(Some(Exit::Code(c))) => format!("exited with code {c} before the game was over"),
        Gone::Exited(Some(Exit::Signal(s))) => format!("was killed by signal {s}"),
        Gone::Exited(None) => "ended its output and could not be reaped".into(),
        Gone::ClosedOutput => "closed its output".into(),
        Gone::NotConnected(why) | Gone::NotStarted(why) => format!("could not be started: {why}"),
    }
}

/// What was measured of a call that went over its limit, for the host
/// who reads why the referee failed: how long it had been, and how much of
/// that was the referee's CPU and the machine's (forgiven) waits.
fn measured_words(took: Duration, wait: Wait) -> String {
    format!(
        ": {} ms had passed, {} ms of them on its CPU, {} ms waiting for a CPU, {} ms with koth's thread stopped",
        took.as_millis(),
        wait.cpu.as_millis(),
        wait.run_queue.as_millis(),
        wait.stalled.as_millis()
    )
}

fn clip(text: &str) -> String {
    if text.len() <= 200 {
        return text.to_owned();
    }
    let mut end = 200;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

impl Referee for ExternalReferee {
    fn seats(&self) -> usize {
        self.seats
    }

    fn step(&mut self) -> Option<Step> {
        self.next.take()
    }

    fn apply(&mut self, replies: Vec<(Seat, Reply)>) -> (Vec<Judgement>, Vec<Value>) {
        let answers: Vec<Answer> = replies
            .into_iter()
            .map(|(seat, reply)| Answer {
                seat,
                reply: match reply {
                    Reply::Answer(answer) => Recorded::Answer { answer },
                    Reply::Timeout => Recorded::Timeout { timeout: true },
                    Reply::Gone => Recorded::Gone { gone: true, why: None },
                },
            })
            .collect();
        self.apply_turn(&answers, &[])
    }

    fn apply_turn(&mut self, answers: &[Answer], times: &[MoveTime]) -> (Vec<Judgement>, Vec<Value>) {
        if self.failure.is_some() {
            return (Vec::new(), Vec::new());
        }
        let line = self.conv.answers(answers, times);
        self.exchange(&line, answers).unwrap_or_default()
    }

    fn is_over(&self) -> bool {
        self.conv.is_over()
    }

    fn standings(&self) -> Vec<SeatResult> {
        if self.standings.len() == self.seats {
            self.standings.clone()
        } else {
            koth_games::results_by_score(&vec![0.0; self.seats])
        }
    }

    fn initial_state(&self) -> Value {
        self.initial.clone()
    }

    fn launch_argv(&self, seat: Seat) -> Vec<String> {
        self.launch.get(seat).cloned().unwrap_or_default()
    }

    fn view(&self) -> View {
        self.view.clone()
    }

    fn legend(&self) -> Legend {
        self.legend.clone()
    }

    fn overloaded(&self) -> Option<String> {
        self.overloaded.clone()
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    /// Its stderr, capped.
    fn stderr(&self) -> Option<String> {
        Some(String::from_utf8_lossy(&self.log.kept).into_owned())
    }
}

impl Drop for ExternalReferee {
    fn drop(&mut self) {
        if let Some(mut run) = self.run.take() {
            run.stop(&mut self.log);
        }
    }
}
