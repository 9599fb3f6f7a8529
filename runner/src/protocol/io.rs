//! The byte plumbing every protocol shares, none of it blocking: a
//! [`LineReader`] (lines from a non-blocking descriptor, bounded however
//! long a line is), an [`Outbox`] (bytes to a non-blocking descriptor,
//! queued while the bot does not read), the [`StderrLog`] filed by turn, and
//! `poll(2)`.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Lines from a non-blocking descriptor.
///
/// A line longer than `max_line` is cut there and the rest of it, up to its
/// newline, is dropped: a bot writing megabytes without a newline costs
/// memory of one line, and its next newline still ends a line.
#[derive(Debug)]
pub struct LineReader {
    read: File,
    buf: Vec<u8>,
    /// Inside an over-long line: drop bytes until its newline.
    skipping: bool,
    eof: bool,
    max_line: usize,
}

impl LineReader {
    pub fn new(read: OwnedFd, max_line: usize) -> LineReader {
        let read = File::from(read);
        set_nonblocking(read.as_raw_fd());
        LineReader { read, buf: Vec::new(), skipping: false, eof: false, max_line }
    }

    pub fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    pub fn at_eof(&self) -> bool {
        self.eof
    }

    /// Read what is available without blocking (at most 1 MiB a call, so a
    /// flooding bot cannot keep the engine here).
    pub fn pump(&mut self) {
        let mut chunk = [0u8; 8192];
        for _ in 0..128 {
            match self.read.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return;
                }
                Ok(n) => self.take_in(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.eof = true;
                    return;
                }
            }
        }
    }

    fn take_in(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.skipping {
                match bytes.iter().position(|&b| b == b'\n') {
                    Some(i) => {
                        self.skipping = false;
                        self.buf.push(b'\n');
                        bytes = &bytes[i + 1..];
                    }
                    None => return,
                }
                continue;
            }
            // Room for the line being read: what follows the last newline.
            let line_start = self.buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let room = self.max_line.saturating_sub(self.buf.len() - line_start);
            match bytes.iter().take(room + 1).position(|&b| b == b'\n') {
                Some(i) => {
                    self.buf.extend_from_slice(&bytes[..=i]);
                    bytes = &bytes[i + 1..];
                }
                None if bytes.len() <= room => {
                    self.buf.extend_from_slice(bytes);
                    return;
                }
                None => {
                    self.buf.extend_from_slice(&bytes[..room]);
                    bytes = &bytes[room..];
                    self.skipping = true;
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
        Some(String::from_utf8_lossy(&line).into_owned())
    }

    /// At EOF, what is left without a final newline counts as a line.
    pub fn take_rest(&mut self) -> Option<String> {
        if self.buf.is_empty() {
            return None;
        }
        let rest = std::mem::take(&mut self.buf);
        Some(String::from_utf8_lossy(&rest).trim_end_matches('\r').to_owned())
    }

    /// Complete lines waiting, discarded; returns how many.
    pub fn discard_lines(&mut self) -> u32 {
        self.pump();
        let mut n = 0;
        while self.take_line().is_some() {
            n += 1;
        }
        n
    }

    /// Everything read so far, lines or not (stdout kept as a log).
    pub fn take_all(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// An unterminated message: everything read so far, as one read takes
    /// it (the first `max_line` bytes; the rest of an over-long one is
    /// dropped, and what comes after it is the next message), or `None`
    /// when nothing is there.
    pub fn take_chunk(&mut self) -> Option<String> {
        self.skipping = false;
        let bytes = std::mem::take(&mut self.buf);
        (!bytes.is_empty()).then(|| String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Bytes for a bot, written without ever blocking: what the descriptor does
/// not take now waits here and goes when the bot reads (the engine polls for
/// `POLLOUT` while anything waits).
#[derive(Debug)]
pub struct Outbox {
    write: Option<File>,
    queue: Vec<u8>,
    /// Written so far of `queue`.
    sent: usize,
    broken: bool,
    /// Close the descriptor once the queue is written (a per-turn
    /// program's stdin: it reads to its end).
    closing: bool,
}

impl Outbox {
    pub fn new(write: OwnedFd) -> Outbox {
        let write = File::from(write);
        set_nonblocking(write.as_raw_fd());
        Outbox { write: Some(write), queue: Vec::new(), sent: 0, broken: false, closing: false }
    }

    /// Queue a line (a newline is added) and write what the bot takes now.
    pub fn push_line(&mut self, line: &str) {
        self.queue.extend_from_slice(line.as_bytes());
        self.queue.push(b'\n');
        self.flush();
    }

    /// Queue bytes as they are and write what the bot takes now.
    pub fn push(&mut self, bytes: &[u8]) {
        self.queue.extend_from_slice(bytes);
        self.flush();
    }

    /// Close the descriptor once everything queued is written: the bot
    /// reads what was queued, then the end of its input.
    pub fn close_when_sent(&mut self) {
        self.closing = true;
        self.flush();
    }

    /// Write what the descriptor takes without blocking.
    pub fn flush(&mut self) {
        let Some(w) = self.write.as_mut() else { return };
        while self.sent < self.queue.len() {
            match w.write(&self.queue[self.sent..]) {
                Ok(0) => break,
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    // EPIPE or a reset: the bot closed its input. What it
                    // does next (answer, or die) tells the engine more.
                    self.broken = true;
                    self.write = None;
                    break;
                }
            }
        }
        if self.sent == self.queue.len() {
            self.queue.clear();
            self.sent = 0;
            if self.closing {
                self.write = None;
            }
        }
    }

    /// Bytes queued that the bot has not taken yet.
    pub fn unsent(&self) -> usize {
        if self.broken {
            0
        } else {
            self.queue.len() - self.sent
        }
    }

    /// The descriptor to poll for `POLLOUT`, while anything waits.
    pub fn poll_fd(&self) -> Option<RawFd> {
        (self.unsent() > 0).then(|| self.write.as_ref().map(|w| w.as_raw_fd())).flatten()
    }

    pub fn fd(&self) -> Option<RawFd> {
        self.write.as_ref().map(|w| w.as_raw_fd())
    }

    /// Close the bot's input (it reads EOF once the queue is taken).
    pub fn close(&mut self) {
        self.write = None;
        self.queue.clear();
        self.sent = 0;
    }
}

/// Descriptors to wait on, each for reading or writing.
#[derive(Default)]
pub struct PollSet {
    fds: Vec<libc::pollfd>,
}

impl PollSet {
    pub fn read(&mut self, fd: RawFd) {
        self.fds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
    }
    pub fn write(&mut self, fd: RawFd) {
        self.fds.push(libc::pollfd { fd, events: libc::POLLOUT, revents: 0 });
    }
    pub fn clear(&mut self) {
        self.fds.clear();
    }
    /// Wait until one is ready or `timeout` has passed (rounded up to the
    /// next millisecond, so a wait never ends just before its deadline).
    /// Wait up to `timeout`, to the nanosecond (`ppoll`): the engine's
    /// deadlines, and its measure of its own lateness, are finer than
    /// `poll`'s milliseconds.
    pub fn wait(&mut self, timeout: Duration) {
        let timeout = timeout.min(Duration::from_secs(i32::MAX as u64));
        let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as libc::c_long };
        // SAFETY: `fds` is a valid, exclusively borrowed array of `len`
        // pollfds; `ts` lives across the call; no signal mask is changed.
        unsafe { libc::ppoll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    }
}

pub fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor the caller owns; F_GETFL/F_SETFL touch
    // only its status flags.
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
    /// At most 1 MiB a call, so a bot flooding stderr cannot keep the
    /// engine here; the rest is read on the next call.
    pub fn drain(&mut self, f: &mut File) -> bool {
        let mut chunk = [0u8; 8192];
        for _ in 0..128 {
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
        true
    }

    /// Keep bytes the bot wrote elsewhere (a TCP bot's stdout).
    pub fn keep(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
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
        let mut ch = LineReader::new(r.into(), 8);
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

    /// A bot that writes megabytes without a newline, then a line: the
    /// reader keeps one cut line and still sees the next one.
    #[test]
    fn megabytes_without_a_newline_cost_one_line() {
        let (r, w) = std::io::pipe().unwrap();
        let mut ch = LineReader::new(r.into(), 100);
        let writer = std::thread::spawn(move || {
            let mut w = w;
            let junk = vec![b'x'; 1 << 16];
            for _ in 0..64 {
                w.write_all(&junk).unwrap();
            }
            w.write_all(b"\n2\n").unwrap();
        });
        let mut lines = Vec::new();
        while lines.len() < 2 {
            ch.pump();
            // One cut line and the short one after it, never the megabytes.
            assert!(ch.buf.len() <= 2 * 101, "buffered {}", ch.buf.len());
            while let Some(l) = ch.take_line() {
                lines.push(l);
            }
        }
        writer.join().unwrap();
        assert_eq!(lines, vec!["x".repeat(100), "2".to_owned()]);
    }

    #[test]
    fn late_lines_are_discarded() {
        let (r, mut w) = std::io::pipe().unwrap();
        let mut ch = LineReader::new(r.into(), 100);
        w.write_all(b"late 1\nlate 2\npart").unwrap();
        assert_eq!(ch.discard_lines(), 2);
        assert_eq!(ch.take_line(), None);
        assert_eq!(ch.take_all(), b"part");
    }

    /// A per-turn program's stdin: everything queued, then its end, however
    /// slowly it reads.
    #[test]
    fn an_outbox_closed_when_sent_delivers_all_then_the_end() {
        let (r, w) = std::io::pipe().unwrap();
        let mut out = Outbox::new(w.into());
        let text = vec![b'z'; 300 << 10];
        out.push(&text);
        out.close_when_sent();
        assert!(out.unsent() > 0 && out.fd().is_some(), "a pipe takes 64 KiB at once");
        let mut r = File::from(OwnedFd::from(r));
        let mut got = Vec::new();
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            let n = r.read(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&chunk[..n]);
            out.flush();
        }
        assert_eq!(got, text);
        assert_eq!((out.unsent(), out.fd()), (0, None));
    }

    /// A reader that never reads: the outbox keeps what the pipe does not
    /// take, never blocks, and delivers it all once the reader reads.
    #[test]
    fn an_outbox_never_blocks_on_a_full_pipe() {
        let (r, w) = std::io::pipe().unwrap();
        let mut out = Outbox::new(w.into());
        let line = "y".repeat(1000);
        for _ in 0..200 {
            out.push_line(&line);
        }
        assert!(out.unsent() > 0 && out.poll_fd().is_some());
        let mut r = File::from(OwnedFd::from(r));
        let mut got = 0usize;
        let mut chunk = vec![0u8; 1 << 16];
        while got < 200 * 1001 {
            got += r.read(&mut chunk).unwrap();
            out.flush();
        }
        assert_eq!(out.unsent(), 0);
        assert_eq!(out.poll_fd(), None);
        // A closed reader: EPIPE is not an error for the engine to raise
        // (SIGPIPE is ignored by the engine's callers), only a broken box.
        drop(r);
        out.push_line("more");
        assert_eq!(out.unsent(), 0);
    }
}
