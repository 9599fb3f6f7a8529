//! Plays matches: a [`Referee`](koth_games::Referee) and sandboxed bots
//! talking in the game's protocol, every move timed.
//!
//! # Design
//!
//! A match runs on one thread as a synchronous loop around `poll(2)`: ask the
//! referee for a step, deliver its notices, thaw the bots on move, send each
//! request (that bot's clock starts just before the write), poll
//! every bot's reply descriptor (and stderr) against its own deadline, freeze
//! each bot as soon as it answered, hand the answers to the referee. No
//! async runtime sits between the kernel and the clock.
//!
//! A bot's clock starts immediately *before* its request is written (or its
//! turn's process spawned): a preemption of the engine around the write can
//! then only add microseconds to the move, never hide time the bot used.
//!
//! Each bot lives in its own [`Sandbox`](koth_sandbox::Sandbox) for the whole
//! match, so its folder persists and per-turn games pay only a spawn per turn.
//! How bytes travel is the [`transport`]'s business, chosen by the game:
//!
//! | protocol | games | transport |
//! |---|---|---|
//! | one process, lines on stdin/stdout | Flit, Target | [`transport::Transport::Stdio`] |
//! | TCP to 127.0.0.1:4040 in the bot's own network namespace, or stdin/stdout | Snake | detected from the bot's first act |
//! | a new process per turn, the state as its argument | Slime | [`transport::Transport::PerTurnArgv`] |
//! | a new process per turn, `input.txt` / `order.txt` in its folder | Linkage | [`transport::Transport::PerTurnFiles`] |
//!
//! Timing: per move, the wall time from the request's write to the end of
//! the reply (measured with the monotonic clock around `poll`), and
//! the CPU time of the bot's cgroup over the same span. The game's
//! [`TimePolicy`](koth_games::TimePolicy) decides what a late answer means.

pub mod bot;
pub mod compile;
pub mod engine;
pub mod image;
pub mod language;
pub mod submission;
pub mod transport;
pub mod worker;

pub use bot::BotSpec;
pub use language::Language;
pub use engine::{play, BotOutcome, BotStatus, MatchOptions, MatchReport};
