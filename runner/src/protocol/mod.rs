//! How bytes travel between the engine and a bot: one type per protocol,
//! behind one trait.
//!
//! | protocol | games | file |
//! |---|---|---|
//! | one process, lines on stdin/stdout | Flit, Target | [`stdio`] |
//! | TCP to 127.0.0.1:4040 in the bot's own network namespace, or stdin/stdout, whichever it uses first | Snake | [`tcp`] |
//! | a new process per turn, the state as its argument (or any argument list, and/or text on its stdin) | Slime | [`argv`] |
//! | a new process per turn, `input.txt` / `order.txt` in its folder, or files of the game's own names (and any argument list, text on stdin, further files) | Linkage, Mafia | [`files`] |
//! | no program: answers from a recording (`koth replay rerun`) | any | [`recorded`] |
//!
//! Every protocol has the same lifecycle, the methods of [`Protocol`]:
//! prepare the box before *any* bot of the match starts (Snake binds its
//! listener then, so a bot that connects the instant it starts finds it),
//! start (a long-lived bot with the argument list its referee gave, if
//! any), deliver notices, send a [`Request`] (its payload, and for an
//! external game any argument list, stdin text and answer shape), report
//! what was heard (answers, of one line or several as the request's shape
//! says: [`answer`]; death), end an exchange, finish. Adding a protocol is adding a
//! file here and a line in [`ProtocolKind`]; the compiler finds the rest.
//!
//! A long-lived bot's messages are lines, or, where an external game's
//! manifest says `"framing": "unterminated"` (Speed Clue), written with no
//! line ending and read as one read takes them ([`koth_games::Framing`]).
//!
//! Nothing here blocks: requests and notices go through an [`io::Outbox`]
//! (a bot that stops reading fills its pipe, and the rest waits in the
//! outbox, polled for `POLLOUT`); output comes through non-blocking
//! [`io::LineReader`]s and is bounded however much a bot writes; a process
//! that must be stopped is killed, and waited for only for a bounded time.

pub mod answer;
pub mod argv;
pub mod files;
pub mod io;
pub mod recorded;
pub mod stdio;
pub mod tcp;

use std::fs::File;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use koth_games::{BotProtocol, FileExchange, Framing, Request};
use koth_sandbox::{Child, Command, Exit, Sandbox, Stdio};

use crate::bot::BotSpec;
use io::{LineReader, PollSet, StderrLog};

/// Longest answer line kept.
pub const MAX_LINE: usize = 4096;

/// How long the engine waits for a killed process to be reaped before it
/// goes on without it (the box's teardown reaps it later).
pub const REAP_WAIT: Duration = Duration::from_millis(200);

/// A fresh instance of protocol `kind` for one bot: a long-lived bot's
/// messages delimited as `framing` says, a `per_turn_files` bot's files
/// named as `files` says. (Which protocol a game speaks is the game's:
/// [`koth_games::GameKind::protocol`], or an external game's manifest,
/// which may also say `"framing": "unterminated"` and name the files.)
pub fn make(kind: BotProtocol, framing: Framing, files: &FileExchange) -> Box<dyn Protocol> {
    match kind {
        BotProtocol::Stdio => Box::new(stdio::Stdio::framed(framing)),
        BotProtocol::TcpOrStdio => Box::new(tcp::TcpOrStdio::framed(framing)),
        BotProtocol::PerTurnArgv => Box::new(argv::PerTurnArgv::default()),
        BotProtocol::PerTurnFiles => Box::new(files::PerTurnFiles::new(files.clone())),
    }
}

/// The bot's box needs loopback networking (and which port).
pub fn loopback_port(kind: BotProtocol) -> Option<u16> {
    match kind {
        BotProtocol::TcpOrStdio => Some(tcp::PORT),
        BotProtocol::Stdio | BotProtocol::PerTurnArgv | BotProtocol::PerTurnFiles => None,
    }
}

/// What a protocol needs of its bot.
pub struct Bot<'a> {
    pub sandbox: &'a Sandbox,
    pub spec: &'a BotSpec,
    /// The bot's log (stderr, and a TCP bot's stdout), filed by turn.
    pub log: &'a mut StderrLog,
}

impl Bot<'_> {
    /// The bot's program with `extra` arguments.
    pub fn command(&self, extra: &[String]) -> Command {
        let (program, args, env) = self.spec.with_memory(self.sandbox.limits().memory);
        let mut c = Command::new(program).args(args).args(extra.iter().cloned());
        c.env = env;
        c
    }
}

/// What the engine heard from a bot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// An answer from a long-lived bot (a line, or the lines its request's
    /// shape asked for, joined): the pending answer or a late one (the
    /// bot's [`Clock`](crate::engine::clock::Clock) tells which).
    Line(String),
    /// The answer of a process started for this request.
    Answer(String),
    Gone(Gone),
}

/// Why a bot will not answer any more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gone {
    /// Its process ended (`None`: it could not be reaped in time).
    Exited(Option<Exit>),
    /// It closed its output and lives on.
    ClosedOutput,
    /// Snake: it neither connected nor wrote its id line (how, in words).
    NotConnected(String),
    /// Its process could not be started.
    NotStarted(String),
}

/// One protocol's behaviour for one bot (see the module docs).
pub trait Protocol: Send {
    /// One process for the whole match, paused between its moves, whose
    /// lines answer requests in order; otherwise a process per request.
    fn long_lived(&self) -> bool;
    /// The bot speaks first: a start-up exchange whose first line is its id.
    fn speaks_first(&self) -> bool {
        false
    }
    /// Set up the bot's box before any bot of the match starts.
    fn prepare(&mut self, _bot: &mut Bot) -> Result<(), String> {
        Ok(())
    }
    /// Start the bot (long-lived protocols), or its start-up exchange.
    /// `argv`: the arguments a long-lived bot is started with, after its
    /// program's own (an external referee's `launch`; empty for koth's own
    /// games). The referee's conversation gives none to per-turn programs,
    /// which get theirs in each request.
    fn start(&mut self, bot: &mut Bot, argv: &[String]) -> Result<(), Gone>;
    /// A line the bot gets without answering it.
    fn notice(&mut self, _bot: &mut Bot, _text: &str) {}
    /// Discard complete lines waiting from before a request; how many.
    fn discard_waiting(&mut self) -> u32 {
        0
    }
    /// Send a request; returns when its clock started (just before the
    /// write or the spawn, so a preempted engine never hides bot time).
    /// Its answer is read in the shape it says ([`answer::Assembler`]).
    fn request(&mut self, bot: &mut Bot, req: &Request) -> Result<Instant, Gone>;
    /// The next thing heard, without blocking (it also moves waiting input
    /// and keeps the bot's logs).
    fn hear(&mut self, bot: &mut Bot) -> Option<Heard>;
    /// Descriptors to wait on until [`hear`](Protocol::hear) has news.
    fn wait_on(&self, set: &mut PollSet);
    /// Bytes of input the bot has not taken.
    fn unsent(&self) -> usize {
        0
    }
    /// The exchange is over: a per-turn process is stopped at once.
    fn end_exchange(&mut self, _bot: &mut Bot) {}
    /// A process per request, once its exchange has ended: how the
    /// process ended on its own ([`Process::stop`]), taken (the engine
    /// tells the bot's author of a crash, which leaves an empty or cut
    /// answer and nothing else to see). `None` when koth's kill ended it,
    /// and for a long-lived bot, whose end is [`Heard::Gone`].
    fn turn_exit(&mut self) -> Option<Exit> {
        None
    }
    /// Why a bot that speaks first said nothing within `allowance`.
    fn silence(&self, allowance: Duration) -> String {
        format!("wrote no id line within {} ms", allowance.as_millis())
    }
    /// Keep what the bot wrote to its logs so far.
    fn drain_logs(&mut self, bot: &mut Bot);
    /// The match is over: deliver what is queued, wait up to `grace` for
    /// the bot to read it and exit, then stop it. (A process per turn has
    /// nothing queued: its exchange ends.)
    fn finish(&mut self, bot: &mut Bot, _grace: Duration) {
        self.end_exchange(bot);
    }
}

/// A process started in the bot's box, with its pipes.
pub struct Process {
    pub child: Child,
    pub stdout: Option<LineReader>,
    pub stderr: Option<File>,
}

impl Process {
    /// Spawn with stdout and stderr piped (and stdin when `stdin`).
    pub fn spawn(bot: &Bot, extra: &[String], stdin: bool) -> Result<(Process, Option<std::os::fd::OwnedFd>), Gone> {
        Process::spawn_lines(bot, extra, stdin, MAX_LINE)
    }

    /// [`spawn`](Process::spawn), with stdout's lines kept up to `max_line` bytes.
    pub fn spawn_lines(bot: &Bot, extra: &[String], stdin: bool, max_line: usize) -> Result<(Process, Option<std::os::fd::OwnedFd>), Gone> {
        let cmd = bot.command(extra).stdin(if stdin { Stdio::Pipe } else { Stdio::Null }).stdout(Stdio::Pipe).stderr(Stdio::Pipe);
        let mut child = bot.sandbox.spawn(cmd).map_err(|e| Gone::NotStarted(e.to_string()))?;
        let stdin = child.stdin.take().map(std::os::fd::OwnedFd::from);
        let stdout = child.stdout.take().map(|f| LineReader::new(f.into(), max_line));
        let stderr = child.stderr.take().inspect(|f| io::set_nonblocking(f.as_raw_fd()));
        Ok((Process { child, stdout, stderr }, stdin))
    }

    /// Keep what it wrote on stdout in its log (where stdout is no channel:
    /// a TCP bot's debug lines, a file-exchanging bot's prints).
    pub fn keep_stdout(&mut self, log: &mut StderrLog) {
        if let Some(out) = self.stdout.as_mut() {
            out.pump();
            let bytes = out.take_all();
            if !bytes.is_empty() {
                log.keep(&bytes);
            }
        }
    }

    pub fn drain_stderr(&mut self, log: &mut StderrLog) {
        if let Some(e) = self.stderr.as_mut() {
            if !log.drain(e) {
                self.stderr = None;
            }
        }
    }

    /// Whether it has exited (reaping it).
    pub fn exited(&mut self) -> Option<Exit> {
        self.child.try_wait().ok().flatten()
    }

    /// Its exit, waiting up to `wait` for it (a process whose output just
    /// closed is usually exiting).
    pub fn exit_within(&mut self, wait: Duration) -> Option<Exit> {
        self.child.wait_timeout(Some(wait)).ok().flatten()
    }

    pub fn wait_on(&self, set: &mut PollSet) {
        set.read(self.child.pidfd());
        if let Some(r) = &self.stdout {
            set.read(r.fd());
        }
        if let Some(e) = &self.stderr {
            set.read(e.as_raw_fd());
        }
    }

    /// Kill it and whatever it started in the box; wait a bounded time.
    /// The program first: once it is reaped, the box is usually empty and
    /// killing the rest costs one look at the cgroup.
    ///
    /// Returns how the program ended on its own, if it did: `None` when
    /// this kill ended it (or it could not be reaped in time). A program
    /// already exiting (its output closed as it exits) keeps its own exit
    /// status: the kernel ignores a signal to a process on its way out.
    pub fn stop(&mut self, bot: &mut Bot) -> Option<Exit> {
        let own = self.child.try_wait().ok().flatten();
        let killed = own.is_none() && self.child.kill().is_ok();
        let reaped = self.child.wait_timeout(Some(REAP_WAIT)).ok().flatten();
        let _ = bot.sandbox.kill_all();
        self.drain_stderr(bot.log);
        match reaped {
            Some(Exit::Signal(libc::SIGKILL)) if killed => None,
            reaped => reaped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_game_has_a_protocol_and_only_snake_a_port() {
        use koth_games::GameKind;
        for g in GameKind::ALL {
            let kind = g.protocol();
            let p = make(kind, Framing::Lines, &FileExchange::default());
            assert_eq!(loopback_port(kind).is_some(), g == GameKind::Snake, "{g:?}");
            assert_eq!(p.long_lived(), matches!(g, GameKind::Flit | GameKind::Target | GameKind::Snake), "{g:?}");
            assert_eq!(p.speaks_first(), matches!(g, GameKind::Snake | GameKind::Linkage), "{g:?}");
        }
    }
}
