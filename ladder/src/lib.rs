//! The ladder domain, pure: what to play, what a result means, who leads.
//!
//! No I/O here, by the crate's manifest (no database, async runtime or
//! HTTP server; `tests/architecture.rs` checks it): the service
//! (`koth-scheduler`) reads the facts from PostgreSQL, calls these
//! functions and writes what they decide, so every rule is tested with
//! tables and no server.
//!
//! * [`format`]: a ladder's format (rated, round robin, neighbours, Swiss)
//!   and settings; which matches to play next and the standings, with the
//!   schedules in [`formats`] and the rating systems in [`rating`].
//! * [`contest`]: a contest's phases, its finalists, and how settled its
//!   final standings are.
//! * [`finals`]: adaptive finals, played until adjacent places are
//!   ordered or a budget is spent, and their simulation.
//! * [`settle`]: what a finished match means (validation verdict, bots
//!   disabled for failing, whether it is rated), from its [`outcome`].
//! * [`validation`]: judging a new version's (or an added game's)
//!   validation game, and its limits.
//! * [`quota`]: the per-account limits on submissions, challenges and
//!   sign-ups.
//! * [`served`]: which games a server offers and each one's default
//!   ladder.
//! * [`sprt`]: the sequential test of `koth ab` (is a new version better
//!   than an old one?).

pub mod contest;
pub mod finals;
pub mod format;
pub mod formats;
pub mod outcome;
pub mod quota;
pub mod rating;
pub mod served;
pub mod settle;
pub mod sprt;
pub mod validation;
