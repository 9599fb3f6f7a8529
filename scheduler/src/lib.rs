//! The service: ladders, formats and ratings over a job queue in
//! PostgreSQL, the runner workers, the HTTP API and the pages.
//!
//! Every SQL statement is in [`db`] (connecting and migrating, the queue,
//! the stored rows, recording results, the API's reads); the rest calls its
//! typed functions. Pure parts, free of I/O: [`format`] and [`formats`]
//! (which matches to play, standings), [`rating`] (rating systems), [`job`]
//! (jobs and stored states), [`contest`] (a contest's phases, finalists and
//! how settled its final standings are), [`types`] (the API's requests and responses),
//! [`validation`] (judging a new version's validation game), [`metrics`]
//! (the operators' figures in Prometheus' format), [`audit`] (the audit
//! trail's kinds of entry and how an entry reads), [`sprt`] (the sequential
//! test of `koth ab`: is a new version better than an old one?).

pub mod api;
pub mod audit;
pub mod contest;
pub mod db;
pub mod drawing;
pub mod format;
pub mod formats;
pub mod job;
pub mod ladder;
pub mod metrics;
pub mod packed;
pub mod pg;
pub mod quota;
pub mod rating;
pub mod serve;
pub mod served;
pub mod sprt;
pub mod types;
pub mod validation;
pub mod web;
pub mod worker;

pub use db::{queue, results, store};
