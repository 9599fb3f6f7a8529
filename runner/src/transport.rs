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
}

impl StderrLog {
    pub fn new(cap: usize) -> StderrLog {
        StderrLog { kept: Vec::new(), total: 0, cap }
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
