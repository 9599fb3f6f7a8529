//! A seat played from a recording, not by a program: `koth replay rerun`
//! puts the author's own bot in its seat and answers for every other seat
//! from the replay, so the author can debug their bot on the exact game it
//! played without the opponents' sources.
//!
//! The seat's k-th request gets the k-th answer the replay recorded for it
//! (while the author's bot answers as before, these are the same requests
//! as in the recorded match, turn by turn): a recorded answer is heard at
//! once, a recorded timeout is silence until the deadline, a recorded
//! departure is the seat leaving. Past the end of the recording the seat
//! is silent. It speaks first (Snake, Linkage) with its recorded id line.
//! Nothing runs in its box.
//!
//! A long-lived bot's timed-out answer is owed to the engine's clock, which
//! skips it when it comes; a recording's next answer was the one the clock
//! took, so the owed answers count as having arrived before the next
//! request ([`Protocol::discard_waiting`]), never as that answer.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use koth_games::replay::Recorded as RecordedReply;

use super::io::PollSet;
use super::{Bot, Gone, Heard, Protocol};

pub struct Recorded {
    long_lived: bool,
    speaks_first: bool,
    id_line: Option<String>,
    answers: VecDeque<RecordedReply>,
    /// What to say when the engine next listens.
    ready: Option<Heard>,
    /// Timeouts replayed since the last request (long-lived seats).
    late: u32,
}

impl Recorded {
    /// A seat that answers `answers` in order, speaking like `like` (the
    /// game's own protocol: long-lived or not, speaking first or not).
    pub fn new(like: &dyn Protocol, id_line: Option<String>, answers: Vec<RecordedReply>) -> Recorded {
        Recorded {
            long_lived: like.long_lived(),
            speaks_first: like.speaks_first(),
            id_line,
            answers: answers.into(),
            ready: None,
            late: 0,
        }
    }
}

impl Protocol for Recorded {
    fn long_lived(&self) -> bool {
        self.long_lived
    }

    fn speaks_first(&self) -> bool {
        self.speaks_first
    }

    fn start(&mut self, _bot: &mut Bot, _argv: &[String]) -> Result<(), Gone> {
        // A recorded seat that never said its id line stays silent, as it did.
        self.ready = self.id_line.clone().map(Heard::Line);
        Ok(())
    }

    fn discard_waiting(&mut self) -> u32 {
        std::mem::take(&mut self.late)
    }

    fn request(&mut self, _bot: &mut Bot, _req: &koth_games::Request) -> Result<Instant, Gone> {
        let sent = Instant::now();
        if self.long_lived && matches!(self.answers.front(), Some(RecordedReply::Timeout { .. })) {
            self.late += 1;
        }
        self.ready = match self.answers.pop_front() {
            Some(RecordedReply::Answer { answer }) => Some(if self.long_lived { Heard::Line(answer) } else { Heard::Answer(answer) }),
            Some(RecordedReply::Gone { why, .. }) => {
                Some(Heard::Gone(Gone::NotStarted(format!("the recording ends here ({})", why.as_deref().unwrap_or("it left")))))
            }
            Some(RecordedReply::Timeout { .. }) | None => None,
        };
        Ok(sent)
    }

    fn hear(&mut self, _bot: &mut Bot) -> Option<Heard> {
        self.ready.take()
    }

    fn wait_on(&self, _set: &mut PollSet) {}

    fn silence(&self, allowance: Duration) -> String {
        format!("the recording has no id line (none within {} ms)", allowance.as_millis())
    }

    fn drain_logs(&mut self, _bot: &mut Bot) {}
}
