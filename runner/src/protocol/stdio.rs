//! One long-lived process; requests and notices are lines on its stdin,
//! answers lines on its stdout (Flit, Target, and Snake bots that do not
//! connect). It is started with the arguments an external game's referee
//! gave it (`launch`), or none.

use std::time::{Duration, Instant};

use koth_games::{Framing, Request};

use super::answer::Assembler;
use super::io::{Outbox, PollSet};
use super::{Bot, Gone, Heard, Process, Protocol};

#[derive(Default)]
pub struct Stdio {
    pub(super) process: Option<Process>,
    pub(super) stdin: Option<Outbox>,
    /// Its output ended; the next [`hear`](Protocol::hear) reports how.
    ended: bool,
    /// Its lines, made answers of their requests' shapes.
    pub(super) answers: Assembler,
    /// Lines, or unterminated messages (a request written as it is, an
    /// answer what one read takes).
    pub(super) framing: Framing,
}

impl Stdio {
    pub fn framed(framing: Framing) -> Stdio {
        Stdio { framing, ..Stdio::default() }
    }

    /// Write a request or notice as the framing delimits it.
    pub(super) fn push(out: &mut Outbox, framing: Framing, text: &str) {
        match framing {
            Framing::Lines => out.push_line(text),
            Framing::Unterminated => out.push(text.as_bytes()),
        }
    }

    /// An unterminated message from `out`, or how the bot is gone.
    pub(super) fn hear_chunk(out: &mut super::io::LineReader, process: &mut Process, ended: &mut bool) -> Option<Heard> {
        out.pump();
        if let Some(chunk) = out.take_chunk() {
            return Some(Heard::Line(chunk));
        }
        if *ended {
            return None;
        }
        Stdio::gone(out.at_eof(), process, ended)
    }

    /// How a long-lived process is gone, once: its output closed (with its
    /// exit, if it comes soon), or it exited while something it started
    /// holds its output open.
    fn gone(at_eof: bool, process: &mut Process, ended: &mut bool) -> Option<Heard> {
        if at_eof && !*ended {
            *ended = true;
            return Some(Heard::Gone(match process.exit_within(Duration::from_millis(50)) {
                Some(exit) => Gone::Exited(Some(exit)),
                None => Gone::ClosedOutput,
            }));
        }
        if let Some(exit) = process.exited() {
            *ended = true;
            return Some(Heard::Gone(Gone::Exited(Some(exit))));
        }
        None
    }

    /// What a long-lived process's output says: a line, or how it is gone.
    pub(crate) fn hear_process(process: &mut Process, stdin: Option<&mut Outbox>, ended: &mut bool, bot: &mut Bot) -> Option<Heard> {
        if let Some(s) = stdin {
            s.flush();
        }
        process.drain_stderr(bot.log);
        let out = process.stdout.as_mut()?;
        out.pump();
        if let Some(line) = out.take_line() {
            return Some(Heard::Line(line));
        }
        if out.at_eof() && !*ended {
            // What it wrote last without a newline still counts as a line.
            if let Some(rest) = out.take_rest() {
                return Some(Heard::Line(rest));
            }
        }
        let at_eof = out.at_eof();
        Stdio::gone(at_eof, process, ended)
    }
}

impl Protocol for Stdio {
    fn long_lived(&self) -> bool {
        true
    }

    fn start(&mut self, bot: &mut Bot, argv: &[String]) -> Result<(), Gone> {
        let (process, stdin) = Process::spawn(bot, argv, true)?;
        self.stdin = stdin.map(Outbox::new);
        self.process = Some(process);
        Ok(())
    }

    fn notice(&mut self, _bot: &mut Bot, text: &str) {
        if let Some(s) = self.stdin.as_mut() {
            Stdio::push(s, self.framing, text);
        }
    }

    fn discard_waiting(&mut self) -> u32 {
        let Some(out) = self.process.as_mut().and_then(|p| p.stdout.as_mut()) else { return 0 };
        match self.framing {
            Framing::Lines => discard_answers(out, &mut self.answers),
            Framing::Unterminated => {
                out.pump();
                out.take_chunk().is_some() as u32
            }
        }
    }

    fn request(&mut self, _bot: &mut Bot, req: &Request) -> Result<Instant, Gone> {
        let stdin = self.stdin.as_mut().ok_or(Gone::ClosedOutput)?;
        let sent = Instant::now();
        // A request of several lines holds them joined by `\n`.
        Stdio::push(stdin, self.framing, &req.payload);
        self.answers.expect(&req.answer);
        Ok(sent)
    }

    fn hear(&mut self, bot: &mut Bot) -> Option<Heard> {
        let process = self.process.as_mut()?;
        if self.framing == Framing::Unterminated {
            if let Some(s) = self.stdin.as_mut() {
                s.flush();
            }
            process.drain_stderr(bot.log);
            let mut out = process.stdout.take()?;
            let heard = Stdio::hear_chunk(&mut out, process, &mut self.ended);
            process.stdout = Some(out);
            return heard;
        }
        // Ends within an answer's bound of lines (the assembler's), or
        // when nothing more is there.
        loop {
            match Stdio::hear_process(process, self.stdin.as_mut(), &mut self.ended, bot)? {
                Heard::Line(line) => {
                    if let Some(answer) = self.answers.line(line) {
                        return Some(Heard::Line(answer));
                    }
                }
                other => return Some(other),
            }
        }
    }

    fn wait_on(&self, set: &mut PollSet) {
        if let Some(p) = &self.process {
            p.wait_on(set);
        }
        if let Some(fd) = self.stdin.as_ref().and_then(Outbox::poll_fd) {
            set.write(fd);
        }
    }

    fn unsent(&self) -> usize {
        self.stdin.as_ref().map_or(0, Outbox::unsent)
    }

    fn drain_logs(&mut self, bot: &mut Bot) {
        if let Some(p) = self.process.as_mut() {
            p.drain_stderr(bot.log);
        }
    }

    fn finish(&mut self, bot: &mut Bot, grace: Duration) {
        finish_process(self.process.as_mut(), self.stdin.as_mut(), bot, grace);
    }
}

/// Complete answers waiting before a request, discarded (lines of an
/// answer still incomplete stay, to be completed); how many.
pub(super) fn discard_answers(out: &mut super::io::LineReader, answers: &mut Assembler) -> u32 {
    out.pump();
    let mut n = 0;
    while let Some(line) = out.take_line() {
        if answers.line(line).is_some() {
            n += 1;
        }
    }
    n
}

/// Let a long-lived process read what is queued for it (an end notice) for
/// up to `grace`, then stop it.
pub(super) fn finish_process(process: Option<&mut Process>, mut stdin: Option<&mut Outbox>, bot: &mut Bot, grace: Duration) {
    let Some(process) = process else { return };
    let until = Instant::now() + grace;
    let mut set = PollSet::default();
    while !grace.is_zero() && process.exited().is_none() {
        if let Some(s) = stdin.as_deref_mut() {
            s.flush();
        }
        process.drain_stderr(bot.log);
        // What it prints now (its stdout, or a TCP bot's debug lines) is kept.
        if let Some(out) = process.stdout.as_mut() {
            out.pump();
            bot.log.keep(&out.take_all());
        }
        let Some(left) = until.checked_duration_since(Instant::now()) else { break };
        set.clear();
        process.wait_on(&mut set);
        if let Some(fd) = stdin.as_deref().and_then(Outbox::poll_fd) {
            set.write(fd);
        }
        set.wait(left);
    }
    process.stop(bot);
}
