//! The service's state and work: the job queue and the rows in
//! PostgreSQL, the ladders' tick, the runner workers. The HTTP API and the
//! pages are `koth-web`, above this crate.
//!
//! What the ladders decide (formats, ratings, contests, validation games,
//! limits, what a finished match means) is `koth_ladder`, pure; this crate
//! reads the facts, calls it and writes what it decides. Every SQL
//! statement is in [`db`] (connecting and migrating, the queue, the stored
//! rows, recording results, the API's reads); the rest calls its typed
//! functions. Pure parts of the service, free of I/O: [`job`] (jobs and
//! stored states), [`types`] (the API's requests and responses),
//! [`metrics`] (the operators' figures in Prometheus' format), [`audit`]
//! (the audit trail's kinds of entry and how an entry reads), [`packed`]
//! (how a replay is stored).

pub mod audit;
pub mod db;
pub mod job;
pub mod ladder;
pub mod metrics;
pub mod packed;
pub mod pg;
pub mod types;
pub mod worker;
