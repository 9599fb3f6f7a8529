//! A new process per turn that reads `input.txt` and writes `order.txt` in
//! its folder; its answer is `order.txt` once it has exited. Started once
//! with an argument first, it prints its id line. Linkage.
//!
//! An external game's manifest may name the two files otherwise and leave
//! out the id line ([`FileExchange`]: the Mafia controller's `from_server`
//! and `to_server`), and a request may write further files in the folder
//! before the turn starts (`write`: a list of players).
//!
//! What such a bot prints on stdout is kept in its log (it is drained, so a
//! chatty bot never blocks on a full pipe).
//!
//! An external game's request may also give the turn's process arguments
//! (none by default) and text on its stdin (else an empty one).

use std::time::Instant;

use koth_games::{FileExchange, Request};

use super::argv::Turn;
use super::io::PollSet;
use super::{Bot, Gone, Heard, Process, Protocol, MAX_LINE};
use koth_sandbox::Exit;

pub struct PerTurnFiles {
    files: FileExchange,
    turn: Option<Process>,
    /// The turn's stdin text on the way, if its request had one.
    stdin: Option<super::io::Outbox>,
    /// The current process is the start-up one, which prints the id line.
    starting: bool,
    /// How the last turn's process ended on its own, if it did.
    ended_as: Option<Exit>,
}

impl PerTurnFiles {
    pub fn new(files: FileExchange) -> PerTurnFiles {
        PerTurnFiles { files, turn: None, stdin: None, starting: false, ended_as: None }
    }
}

impl Protocol for PerTurnFiles {
    fn long_lived(&self) -> bool {
        false
    }

    fn speaks_first(&self) -> bool {
        self.files.id_line
    }

    fn start(&mut self, bot: &mut Bot, _argv: &[String]) -> Result<(), Gone> {
        if !self.files.id_line {
            return Ok(());
        }
        // Any argument: the bot prints its id line.
        let (p, _) = Process::spawn(bot, &["id".to_owned()], false)?;
        self.turn = Some(p);
        self.starting = true;
        Ok(())
    }

    fn request(&mut self, bot: &mut Bot, req: &Request) -> Result<Instant, Gone> {
        let not_started = |e: koth_sandbox::Error| Gone::NotStarted(e.to_string());
        let dir = bot.sandbox.workdir();
        dir.remove(&self.files.answer).map_err(not_started)?;
        for (name, text) in &req.files {
            dir.write_file(name, text.as_bytes(), 0o644).map_err(not_started)?;
        }
        dir.write_file(&self.files.request, req.payload.as_bytes(), 0o644).map_err(not_started)?;
        let t = Turn::spawn(bot, req.argv.as_deref().unwrap_or_default(), req)?;
        // The bot's clock starts when its process began to start, not
        // while the spawn waited for the sandbox's launcher.
        let sent = t.process.child.started();
        self.turn = Some(t.process);
        self.stdin = t.stdin;
        self.starting = false;
        Ok(sent)
    }

    fn hear(&mut self, bot: &mut Bot) -> Option<Heard> {
        let p = self.turn.as_mut()?;
        p.drain_stderr(bot.log);
        if self.starting {
            let exited = p.exited();
            let out = p.stdout.as_mut()?;
            out.pump();
            if let Some(line) = out.take_line() {
                return Some(Heard::Line(line));
            }
            if out.at_eof() || exited.is_some() {
                out.pump();
                return Some(match out.take_line().or_else(|| out.take_rest()) {
                    Some(line) => Heard::Line(line),
                    None => Heard::Gone(Gone::Exited(exited)),
                });
            }
            return None;
        }
        if let Some(s) = self.stdin.as_mut() {
            s.flush();
        }
        p.keep_stdout(bot.log);
        p.exited()?;
        let answer = bot
            .sandbox
            .workdir()
            .read_file(&self.files.answer, MAX_LINE)
            .map(|(b, _)| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        Some(Heard::Answer(answer))
    }

    fn wait_on(&self, set: &mut PollSet) {
        if let Some(p) = &self.turn {
            p.wait_on(set);
        }
        if let Some(fd) = self.stdin.as_ref().and_then(super::io::Outbox::poll_fd) {
            set.write(fd);
        }
    }

    fn unsent(&self) -> usize {
        self.stdin.as_ref().map_or(0, super::io::Outbox::unsent)
    }

    fn turn_exit(&mut self) -> Option<Exit> {
        self.ended_as.take()
    }

    fn end_exchange(&mut self, bot: &mut Bot) {
        self.stdin = None;
        if let Some(mut p) = self.turn.take() {
            if !self.starting {
                p.keep_stdout(bot.log);
            }
            self.ended_as = p.stop(bot);
        }
    }

    fn drain_logs(&mut self, bot: &mut Bot) {
        if let Some(p) = self.turn.as_mut() {
            p.drain_stderr(bot.log);
        }
    }
}
