//! Snake: the bot connects to 127.0.0.1:[`PORT`] in its own network
//! namespace, or talks on stdin/stdout; whichever it does first. Its first
//! line is its id.
//!
//! The listener is bound in [`prepare`](Protocol::prepare), before any bot
//! of the match is started, so a bot may connect the instant it starts. A
//! bot that talks over TCP keeps its stdout: what it prints there (debug
//! lines) is drained and kept in its log beside its stderr, so it never
//! fills its pipe nor gets EPIPE. Only one connection is accepted; the
//! listener is closed once the bot has chosen, so a second connect is
//! refused at once.

use std::net::TcpListener;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use koth_games::{Framing, Request};

use super::io::{LineReader, Outbox, PollSet};
use super::stdio::{discard_answers, finish_process, Stdio};
use super::{Bot, Gone, Heard, Protocol, MAX_LINE};

pub const PORT: u16 = 4040;

#[derive(Default)]
pub struct TcpOrStdio {
    listener: Option<TcpListener>,
    /// The process, talked to on stdio until it connects.
    stdio: Stdio,
    socket: Option<(Outbox, LineReader)>,
    connected_at: Option<Instant>,
    ended: bool,
}

impl TcpOrStdio {
    pub fn framed(framing: Framing) -> TcpOrStdio {
        TcpOrStdio { stdio: Stdio::framed(framing), ..TcpOrStdio::default() }
    }

    fn over_tcp(&self) -> bool {
        self.socket.is_some()
    }

    /// A TCP bot's stdout is a log.
    fn keep_stdout(&mut self, bot: &mut Bot) {
        if let Some(p) = self.stdio.process.as_mut() {
            p.keep_stdout(bot.log);
        }
    }

    fn accept(&mut self) -> std::io::Result<bool> {
        let Some(l) = &self.listener else { return Ok(false) };
        match l.accept() {
            Ok((sock, _)) => {
                sock.set_nodelay(true)?;
                let read: OwnedFd = sock.try_clone()?.into();
                self.socket = Some((Outbox::new(sock.into()), LineReader::new(read, MAX_LINE)));
                self.connected_at = Some(Instant::now());
                self.listener = None;
                // Its stdin is not used any more.
                if let Some(s) = self.stdio.stdin.as_mut() {
                    s.close();
                }
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl Protocol for TcpOrStdio {
    fn long_lived(&self) -> bool {
        true
    }

    fn speaks_first(&self) -> bool {
        true
    }

    fn prepare(&mut self, bot: &mut Bot) -> Result<(), String> {
        let l = bot.sandbox.listen_tcp(PORT).map_err(|e| format!("listening on 127.0.0.1:{PORT} in the bot's box: {e}"))?;
        l.set_nonblocking(true).map_err(|e| format!("listening on 127.0.0.1:{PORT}: {e}"))?;
        self.listener = Some(l);
        Ok(())
    }

    fn start(&mut self, bot: &mut Bot, argv: &[String]) -> Result<(), Gone> {
        self.stdio.start(bot, argv)
    }

    fn notice(&mut self, bot: &mut Bot, text: &str) {
        match self.socket.as_mut() {
            Some((out, _)) => Stdio::push(out, self.stdio.framing, text),
            None => self.stdio.notice(bot, text),
        }
    }

    fn discard_waiting(&mut self) -> u32 {
        match self.socket.as_mut() {
            // One assembler of its answers, whichever way they come.
            Some((_, r)) if self.stdio.framing == Framing::Unterminated => {
                r.pump();
                r.take_chunk().is_some() as u32
            }
            Some((_, r)) => discard_answers(r, &mut self.stdio.answers),
            None => self.stdio.discard_waiting(),
        }
    }

    fn request(&mut self, bot: &mut Bot, req: &Request) -> Result<Instant, Gone> {
        match self.socket.as_mut() {
            Some((out, _)) => {
                let sent = Instant::now();
                Stdio::push(out, self.stdio.framing, &req.payload);
                self.stdio.answers.expect(&req.answer);
                Ok(sent)
            }
            None => self.stdio.request(bot, req),
        }
    }

    fn hear(&mut self, bot: &mut Bot) -> Option<Heard> {
        if self.listener.is_some() {
            match self.accept() {
                Ok(_) => {}
                Err(e) => {
                    self.listener = None;
                    return Some(Heard::Gone(Gone::NotConnected(format!("accepting its connection failed: {e}"))));
                }
            }
        }
        if !self.over_tcp() {
            let heard = self.stdio.hear(bot);
            if heard.is_some() {
                // It chose stdio: nobody will accept a connection any more.
                self.listener = None;
            }
            return heard;
        }
        self.keep_stdout(bot);
        let process = self.stdio.process.as_mut()?;
        process.drain_stderr(bot.log);
        let (out, reader) = self.socket.as_mut()?;
        out.flush();
        if self.stdio.framing == Framing::Unterminated {
            return Stdio::hear_chunk(reader, process, &mut self.ended);
        }
        reader.pump();
        // Ends within an answer's bound of lines (the assembler's).
        while let Some(line) = reader.take_line() {
            if let Some(answer) = self.stdio.answers.line(line) {
                return Some(Heard::Line(answer));
            }
        }
        if reader.at_eof() && !self.ended {
            if let Some(answer) = reader.take_rest().and_then(|rest| self.stdio.answers.line(rest)) {
                return Some(Heard::Line(answer));
            }
            self.ended = true;
            return Some(Heard::Gone(match process.exit_within(Duration::from_millis(50)) {
                Some(exit) => Gone::Exited(Some(exit)),
                None => Gone::ClosedOutput,
            }));
        }
        if let Some(exit) = process.exited() {
            self.ended = true;
            return Some(Heard::Gone(Gone::Exited(Some(exit))));
        }
        None
    }

    fn wait_on(&self, set: &mut PollSet) {
        if let Some(l) = &self.listener {
            set.read(l.as_raw_fd());
        }
        self.stdio.wait_on(set);
        if let Some((out, reader)) = &self.socket {
            set.read(reader.fd());
            if let Some(fd) = out.poll_fd() {
                set.write(fd);
            }
        }
    }

    fn unsent(&self) -> usize {
        match &self.socket {
            Some((out, _)) => out.unsent(),
            None => self.stdio.unsent(),
        }
    }

    fn drain_logs(&mut self, bot: &mut Bot) {
        if self.over_tcp() {
            self.keep_stdout(bot);
        }
        self.stdio.drain_logs(bot);
    }

    fn silence(&self, allowance: Duration) -> String {
        let ms = allowance.as_millis();
        match self.connected_at {
            Some(_) => format!("connected to 127.0.0.1:{PORT} but sent no id line within {ms} ms"),
            None => format!("neither connected to 127.0.0.1:{PORT} nor wrote its id line on stdout within {ms} ms"),
        }
    }

    fn finish(&mut self, bot: &mut Bot, grace: Duration) {
        if self.over_tcp() {
            self.keep_stdout(bot);
        }
        let socket_out = self.socket.as_mut().map(|(o, _)| o);
        match socket_out {
            Some(out) => finish_process(self.stdio.process.as_mut(), Some(out), bot, grace),
            None => self.stdio.finish(bot, grace),
        }
        if self.over_tcp() {
            self.keep_stdout(bot);
        }
    }
}
