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
//! How bytes travel is the [`protocol`]'s business, one type per protocol
//! (see that module for the table of games and protocols); what the game's
//! time policy makes of the moments the engine saw is [`engine::clock`]'s,
//! pure code tested without processes.
//!
//! Timing: per move, the wall time from the request's write to the end of
//! the reply (measured with the monotonic clock around `poll`), and
//! the CPU time of the bot's cgroup over the same span. The game's
//! [`TimePolicy`](koth_games::TimePolicy) decides what a late answer means.

pub mod artifact;
pub mod bot;
pub mod compile;
pub mod cores;
pub mod engine;
pub mod game;
pub mod image;
pub mod language;
pub mod machine;
pub mod protocol;
pub mod referee;
pub mod starters;
pub mod state;
pub mod storage;
pub mod submission;

pub use bot::BotSpec;
pub use engine::{play, BotOutcome, BotStatus, EngineError, MatchOptions, MatchReport};
pub use game::Game;
pub use language::Language;
