//! A new process per turn, the request as its one argument; its answer is
//! the first line of its stdout (or all it wrote, if it ends without a
//! newline). Slime.
//!
//! The process is killed the moment its answer is read: nothing of a turn
//! runs on into the next bot's turn.

use std::time::Instant;

use super::io::PollSet;
use super::{Bot, Gone, Heard, Process, Protocol};

#[derive(Default)]
pub struct PerTurnArgv {
    turn: Option<Process>,
}

impl Protocol for PerTurnArgv {
    fn long_lived(&self) -> bool {
        false
    }

    fn start(&mut self, _bot: &mut Bot) -> Result<(), Gone> {
        Ok(())
    }

    fn request(&mut self, bot: &mut Bot, payload: &str) -> Result<Instant, Gone> {
        let (p, _) = Process::spawn(bot, &[payload.to_owned()], false)?;
        // The bot's clock starts when its process began to start, not
        // while the spawn waited for the sandbox's launcher.
        let sent = p.child.started();
        self.turn = Some(p);
        Ok(sent)
    }

    fn hear(&mut self, bot: &mut Bot) -> Option<Heard> {
        let p = self.turn.as_mut()?;
        p.drain_stderr(bot.log);
        let exited = p.exited().is_some();
        let out = p.stdout.as_mut()?;
        out.pump();
        if let Some(line) = out.take_line() {
            return Some(Heard::Answer(line));
        }
        if out.at_eof() || exited {
            // Ended (or closed stdout): what it wrote is its answer.
            out.pump();
            let answer = out.take_line().or_else(|| out.take_rest()).unwrap_or_default();
            return Some(Heard::Answer(answer));
        }
        None
    }

    fn wait_on(&self, set: &mut PollSet) {
        if let Some(p) = &self.turn {
            p.wait_on(set);
        }
    }

    fn end_exchange(&mut self, bot: &mut Bot) {
        if let Some(mut p) = self.turn.take() {
            p.stop(bot);
        }
    }

    fn drain_logs(&mut self, bot: &mut Bot) {
        if let Some(p) = self.turn.as_mut() {
            p.drain_stderr(bot.log);
        }
    }
}
