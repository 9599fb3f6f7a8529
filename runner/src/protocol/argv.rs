//! A new process per turn, the request as its one argument; its answer is
//! the first line of its stdout (or all it wrote, if it ends without a
//! newline). Slime.
//!
//! An external game's request may say more ([`koth_games::Request`]):
//! the whole argument list (none, or several), text on the process's stdin
//! (written as the bot reads it, then closed), and an answer of several
//! lines (`{"lines": k}` or `{"until": "END"}`; a process that ends sooner
//! answers what it wrote).
//!
//! The process is killed the moment its answer is read: nothing of a turn
//! runs on into the next bot's turn.

use std::time::Instant;

use koth_games::Request;
use koth_sandbox::Exit;

use super::answer::Assembler;
use super::io::{Outbox, PollSet};
use super::{Bot, Gone, Heard, Process, Protocol};

#[derive(Default)]
pub struct PerTurnArgv {
    turn: Option<Turn>,
    /// How the last turn's process ended on its own, if it did.
    ended_as: Option<Exit>,
}

/// One turn's process, its stdin text on the way, and its answer read.
pub(super) struct Turn {
    pub process: Process,
    pub stdin: Option<Outbox>,
    answers: Assembler,
}

impl Turn {
    /// Start the bot's program with `args` after its own, `stdin` on its
    /// standard input (else an empty one), its answer read in `req`'s shape.
    pub fn spawn(bot: &Bot, args: &[String], req: &Request) -> Result<Turn, Gone> {
        let (process, fd) = Process::spawn(bot, args, req.stdin.is_some())?;
        let stdin = match (fd, &req.stdin) {
            (Some(fd), Some(text)) => {
                let mut out = Outbox::new(fd);
                out.push(text.as_bytes());
                out.close_when_sent();
                Some(out)
            }
            _ => None,
        };
        let mut answers = Assembler::default();
        answers.expect(&req.answer);
        Ok(Turn { process, stdin, answers })
    }

    /// Write what its stdin takes now.
    pub fn feed(&mut self) {
        if let Some(s) = self.stdin.as_mut() {
            s.flush();
        }
    }

    pub fn wait_on(&self, set: &mut PollSet) {
        self.process.wait_on(set);
        if let Some(fd) = self.stdin.as_ref().and_then(Outbox::poll_fd) {
            set.write(fd);
        }
    }

    pub fn unsent(&self) -> usize {
        self.stdin.as_ref().map_or(0, Outbox::unsent)
    }
}

impl Protocol for PerTurnArgv {
    fn long_lived(&self) -> bool {
        false
    }

    fn start(&mut self, _bot: &mut Bot, _argv: &[String]) -> Result<(), Gone> {
        Ok(())
    }

    fn request(&mut self, bot: &mut Bot, req: &Request) -> Result<Instant, Gone> {
        // The request as its one argument, unless it says the whole list.
        let args = req.argv.clone().unwrap_or_else(|| vec![req.payload.clone()]);
        let t = Turn::spawn(bot, &args, req)?;
        // The bot's clock starts when its process began to start, not
        // while the spawn waited for the sandbox's launcher.
        let sent = t.process.child.started();
        self.turn = Some(t);
        Ok(sent)
    }

    fn hear(&mut self, bot: &mut Bot) -> Option<Heard> {
        let t = self.turn.as_mut()?;
        t.feed();
        let p = &mut t.process;
        p.drain_stderr(bot.log);
        let exited = p.exited().is_some();
        let out = p.stdout.as_mut()?;
        out.pump();
        while let Some(line) = out.take_line() {
            if let Some(answer) = t.answers.line(line) {
                return Some(Heard::Answer(answer));
            }
        }
        if out.at_eof() || exited {
            // Ended (or closed stdout): what it wrote is its answer.
            out.pump();
            while let Some(line) = out.take_line() {
                if let Some(answer) = t.answers.line(line) {
                    return Some(Heard::Answer(answer));
                }
            }
            if let Some(answer) = out.take_rest().and_then(|rest| t.answers.line(rest)) {
                return Some(Heard::Answer(answer));
            }
            return Some(Heard::Answer(t.answers.rest().unwrap_or_default()));
        }
        None
    }

    fn wait_on(&self, set: &mut PollSet) {
        if let Some(t) = &self.turn {
            t.wait_on(set);
        }
    }

    fn unsent(&self) -> usize {
        self.turn.as_ref().map_or(0, Turn::unsent)
    }

    fn turn_exit(&mut self) -> Option<Exit> {
        self.ended_as.take()
    }

    fn end_exchange(&mut self, bot: &mut Bot) {
        if let Some(mut t) = self.turn.take() {
            self.ended_as = t.process.stop(bot);
        }
    }

    fn drain_logs(&mut self, bot: &mut Bot) {
        if let Some(t) = self.turn.as_mut() {
            t.process.drain_stderr(bot.log);
        }
    }
}
