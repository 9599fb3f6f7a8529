//! Answers of several lines: an [`Assembler`] turns the lines a bot
//! writes into answers, each of the shape its request asked for
//! ([`AnswerShape`]: `k` lines, or the lines up to a terminator line).
//! Pure: the protocols feed it the lines they read.
//!
//! A long-lived bot's lines answer its requests in order, late ones
//! included: each request's shape waits in a queue until its answer is
//! complete, so the late answer to a timed-out request of 3 lines is
//! read as one (late) answer of 3 lines, as the engine's clock counts it,
//! and never taken for the next request's. Lines that arrive with no
//! request waiting are one answer each (unrequested, as one-line games
//! have always had them).
//!
//! Every answer is bounded, whatever its shape: it ends at
//! [`MAX_ANSWER_LINES`] lines or once it holds [`MAX_ANSWER_BYTES`] (the
//! lines after that are read as the next answer's, or unrequested).

use std::collections::VecDeque;

use koth_games::external::{MAX_ANSWER_BYTES, MAX_ANSWER_LINES};
use koth_games::AnswerShape;

#[derive(Debug, Default)]
pub struct Assembler {
    /// The shapes of the requests not answered yet, oldest first.
    owed: VecDeque<AnswerShape>,
    /// The lines read so far of the oldest one's answer.
    got: Vec<String>,
    bytes: usize,
}

impl Assembler {
    /// A request was sent whose answer has this shape.
    pub fn expect(&mut self, shape: &AnswerShape) {
        self.owed.push_back(shape.clone());
    }

    /// A line the bot wrote: the answer it completes, if it does.
    pub fn line(&mut self, line: String) -> Option<String> {
        let Some(shape) = self.owed.front() else { return Some(line) };
        let complete = match shape {
            AnswerShape::Until(end) if *end == line => true,
            AnswerShape::Until(_) => {
                self.push(line);
                false
            }
            &AnswerShape::Lines(k) => {
                self.push(line);
                self.got.len() >= k as usize
            }
        };
        if complete || self.got.len() >= MAX_ANSWER_LINES || self.bytes >= MAX_ANSWER_BYTES {
            self.owed.pop_front();
            self.bytes = 0;
            return Some(std::mem::take(&mut self.got).join("\n"));
        }
        None
    }

    fn push(&mut self, line: String) {
        self.bytes += line.len() + 1;
        self.got.push(line);
    }

    /// The output ended: what was read of the answer in progress (a
    /// per-turn program's answer is what it wrote before it ended).
    pub fn rest(&mut self) -> Option<String> {
        if self.got.is_empty() {
            return None;
        }
        self.owed.pop_front();
        self.bytes = 0;
        Some(std::mem::take(&mut self.got).join("\n"))
    }

    /// Lines of an answer read so far, not yet complete.
    pub fn partial(&self) -> usize {
        self.got.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AnswerShape::{Lines, Until};

    /// What was asked, the lines written, the answers complete after each.
    type Case<'a> = (&'a str, &'a [AnswerShape], &'a [&'a str], &'a [Option<String>]);

    #[test]
    fn lines_become_answers_of_their_requests_shapes() {
        let s = |x: &str| Some(x.to_owned());
        let cases: &[Case] = &[
            ("one line, as ever", &[Lines(1)], &["R"], &[s("R")]),
            ("unrequested lines are one answer each", &[], &["a", "b"], &[s("a"), s("b")]),
            ("three lines", &[Lines(3)], &["1", "2", "3", "x"], &[None, None, s("1\n2\n3"), s("x")]),
            ("up to END, without it", &[Until("END".into())], &["a", "b", "END", "c"], &[None, None, s("a\nb"), s("c")]),
            ("END at once: an empty answer", &[Until("END".into())], &["END"], &[s("")]),
            ("up to a blank line", &[Until(String::new())], &["a", "", "b"], &[None, s("a"), s("b")]),
            // Request 1 (3 lines) timed out after one line; its late lines
            // complete it, and request 2's answer is its own.
            ("a late answer stays whole", &[Lines(3), Lines(1)], &["1", "2", "3", "R"], &[None, None, s("1\n2\n3"), s("R")]),
            ("shapes in order", &[Lines(2), Until(".".into())], &["a", "b", "c", "."], &[None, s("a\nb"), None, s("c")]),
        ];
        for (what, shapes, lines, want) in cases {
            let mut a = Assembler::default();
            shapes.iter().for_each(|sh| a.expect(sh));
            let got: Vec<Option<String>> = lines.iter().map(|l| a.line(l.to_string())).collect();
            assert_eq!(&got, want, "{what}");
        }
    }

    #[test]
    fn an_answer_is_bounded_in_lines_and_bytes_and_ends_with_the_output() {
        let mut a = Assembler::default();
        a.expect(&Until("END".into()));
        let mut answers = Vec::new();
        for i in 0..MAX_ANSWER_LINES + 1 {
            answers.extend(a.line(i.to_string()));
        }
        assert_eq!(answers.len(), 2);
        assert_eq!(answers[0].lines().count(), MAX_ANSWER_LINES);
        assert_eq!(answers[1], MAX_ANSWER_LINES.to_string(), "the next line is unrequested");
        let mut a = Assembler::default();
        a.expect(&Lines(1000));
        let long = "x".repeat(4096);
        let n = (0..100).position(|_| a.line(long.clone()).is_some()).unwrap() + 1;
        assert_eq!(n, MAX_ANSWER_BYTES.div_ceil(4097), "cut once it holds {MAX_ANSWER_BYTES} bytes");
        // A per-turn program that ends after 1 of 3 lines answers that line.
        let mut a = Assembler::default();
        a.expect(&Lines(3));
        assert_eq!(a.line("1".into()), None);
        assert_eq!(a.partial(), 1);
        assert_eq!(a.rest().as_deref(), Some("1"));
        assert_eq!(a.rest(), None);
        assert_eq!(a.line("again".into()).as_deref(), Some("again"), "nothing owed any more");
    }
}
