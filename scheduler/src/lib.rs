//! The scheduler: ladders, tournaments and ratings over a job queue in
//! PostgreSQL.
//!
//! Pure parts, free of I/O: [`rating`] (rating systems, leaderboard order)
//! and [`formats`] (which matches to play next).

pub mod api;
pub mod db;
pub mod format;
pub mod formats;
pub mod job;
pub mod ladder;
pub mod pg;
pub mod queue;
pub mod rating;
pub mod results;
pub mod store;
pub mod web;
pub mod worker;
