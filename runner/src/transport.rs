//! Line channels to bots, and the per-game choice of transport.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use koth_games::GameKind;

/// How a game's bots are talked to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// One long-lived process; lines on stdin and stdout.
    Stdio,
    /// Snake: the bot connects to 127.0.0.1:[`SNAKE_PORT`] in its own
    /// network namespace, or talks on stdin/stdout; whichever it does first.
    TcpOrStdio,
    /// A new process per turn; the request is its one argument, the answer
    /// the first line of its stdout.
    PerTurnArgv,
    /// A new process per turn; the request is `input.txt`, the answer
    /// `order.txt`, both in its folder. Started once with an argument first,
    /// it prints its id line.
    PerTurnFiles,
}

pub const SNAKE_PORT: u16 = 4040;
pub const INPUT_FILE: &str = "input.txt";
pub const ORDER_FILE: &str = "order.txt";

impl Transport {
    pub fn of(game: GameKind) -> Transport {
        match game {
            GameKind::Flit | GameKind::Target => Transport::Stdio,
            GameKind::Snake => Transport::TcpOrStdio,
            GameKind::Slime => Transport::PerTurnArgv,
            GameKind::Linkage => Transport::PerTurnFiles,
        }
    }
}

/// A bidirectional line channel over a pipe pair or a socket.
#[derive(Debug)]
pub struct LineChannel {
    write: Option<File>,
    read: File,
    buf: Vec<u8>,
    eof: bool,
    /// Longest line accepted; a longer one is cut and the rest discarded.
    max_line: usize,
}

impl LineChannel {
    pub fn new(write: Option<OwnedFd>, read: OwnedFd, max_line: usize) -> LineChannel {
        let read = File::from(read);
        set_nonblocking(read.as_raw_fd());
        LineChannel { write: write.map(File::from), read, buf: Vec::new(), eof: false, max_line }
    }

    pub fn read_fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    pub fn at_eof(&self) -> bool {
        self.eof
    }

    /// Send one line (a newline is added). Errors mean the bot is gone.
    pub fn send_line(&mut self, line: &str) -> std::io::Result<()> {
        let w = self.write.as_mut().ok_or_else(|| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        let mut msg = Vec::with_capacity(line.len() + 1);
        msg.extend_from_slice(line.as_bytes());
        msg.push(b'\n');
        w.write_all(&msg)
    }

    /// Read what is available without blocking.
    pub fn pump(&mut self) {
        let mut chunk = [0u8; 8192];
        loop {
            match self.read.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return;
                }
                Ok(n) => {
                    // Keep at most one over-long line's worth pending.
                    let room = (self.max_line * 4).saturating_sub(self.buf.len());
                    self.buf.extend_from_slice(&chunk[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.eof = true;
                    return;
                }
            }
        }
    }

    /// Take one complete line, if there is one (without its `\n` or `\r\n`).
    pub fn take_line(&mut self) -> Option<String> {
        let pos = self.buf.iter().position(|&b| b == b'\n')?;
        let mut line: Vec<u8> = self.buf.drain(..=pos).collect();
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        line.truncate(self.max_line);
        Some(String::from_utf8_lossy(&line).into_owned())
    }

    /// At EOF, what is left without a final newline counts as a line.
    pub fn take_rest(&mut self) -> Option<String> {
        if self.buf.is_empty() {
            return None;
        }
        let mut rest = std::mem::take(&mut self.buf);
        rest.truncate(self.max_line);
        Some(String::from_utf8_lossy(&rest).trim_end_matches('\r').to_owned())
    }

    /// Discard everything waiting (late replies), returning how many lines.
    pub fn discard_pending(&mut self) -> usize {
        self.pump();
        let lines = self.buf.iter().filter(|&&b| b == b'\n').count();
        self.buf.clear();
        lines
    }
}

pub fn set_nonblocking(fd: RawFd) {
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// A capped log of what a bot wrote to stderr.
#[derive(Debug, Default)]
pub struct StderrLog {
    pub kept: Vec<u8>,
    pub total: u64,
    pub cap: usize,
    /// (turn, end of that turn's bytes in `kept`) for every turn that added
    /// some: a turn's text starts where the previous entry's ends.
    pub turn_ends: Vec<(u32, usize)>,
}

impl StderrLog {
    pub fn new(cap: usize) -> StderrLog {
        StderrLog { kept: Vec::new(), total: 0, cap, turn_ends: Vec::new() }
    }

    /// Everything kept since the last call belongs to `turn` (output from
    /// before a turn's request counts for that turn, so viewers show it
    /// beside the move it led to).
    pub fn end_turn(&mut self, turn: u32) {
        let end = self.kept.len();
        match self.turn_ends.last_mut() {
            Some((_, e)) if *e == end => {}
            Some((t, e)) if *t == turn => *e = end,
            _ => self.turn_ends.push((turn, end)),
        }
    }

    /// The kept text, and (turn, end) in that text's bytes. Each turn's bytes
    /// are made valid UTF-8 on their own, so every end is a char boundary.
    pub fn text_by_turn(&self) -> (String, Vec<(u32, usize)>) {
        let mut text = String::with_capacity(self.kept.len());
        let mut ends = Vec::with_capacity(self.turn_ends.len());
        let mut start = 0;
        for &(turn, end) in &self.turn_ends {
            text.push_str(&String::from_utf8_lossy(&self.kept[start..end]));
            ends.push((turn, text.len()));
            start = end;
        }
        text.push_str(&String::from_utf8_lossy(&self.kept[start..]));
        (text, ends)
    }

    /// Drain a non-blocking descriptor into the log.
    pub fn drain(&mut self, f: &mut File) -> bool {
        let mut chunk = [0u8; 8192];
        loop {
            match f.read(&mut chunk) {
                Ok(0) => return false,
                Ok(n) => {
                    self.total += n as u64;
                    let room = self.cap.saturating_sub(self.kept.len());
                    self.kept.extend_from_slice(&chunk[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
    }

    pub fn note(&mut self, text: &str) {
        let room = self.cap.saturating_sub(self.kept.len());
        let b = text.as_bytes();
        self.kept.extend_from_slice(&b[..b.len().min(room)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_is_split_by_turn_at_char_boundaries() {
        let mut log = StderrLog::new(1 << 10);
        log.note("start\n");
        log.end_turn(1);
        log.end_turn(2); // nothing written in turn 2
        log.kept.extend_from_slice(b"bad \xff byte\n");
        log.end_turn(3);
        log.note("more");
        log.end_turn(3); // the same turn again extends it
        log.note("tail");
        let (text, ends) = log.text_by_turn();
        assert_eq!(text, "start\nbad \u{fffd} byte\nmoretail");
        assert_eq!(ends, vec![(1, 6), (3, 23)]);
        assert_eq!(&text[6..23], "bad \u{fffd} byte\nmore");
    }

    #[test]
    fn lines_are_split_and_capped() {
        let (r, mut w) = std::io::pipe().unwrap();
        let mut ch = LineChannel::new(None, r.into(), 8);
        w.write_all(b"one\r\ntwo\nabcdefghijkl\npartial").unwrap();
        ch.pump();
        assert_eq!(ch.take_line().as_deref(), Some("one"));
        assert_eq!(ch.take_line().as_deref(), Some("two"));
        assert_eq!(ch.take_line().as_deref(), Some("abcdefgh"));
        assert_eq!(ch.take_line(), None);
        drop(w);
        ch.pump();
        assert!(ch.at_eof());
        assert_eq!(ch.take_rest().as_deref(), Some("partial"));
    }

    #[test]
    fn late_lines_are_discarded() {
        let (r, mut w) = std::io::pipe().unwrap();
        let mut ch = LineChannel::new(None, r.into(), 100);
        w.write_all(b"late 1\nlate 2\n").unwrap();
        assert_eq!(ch.discard_pending(), 2);
        assert_eq!(ch.take_line(), None);
    }
}
