//! The HTTP service: the JSON API ([`http`], one module per resource), the
//! web pages and the layers every request goes through ([`pages`]),
//! drawing replays for the viewer off the bots' CPUs ([`drawing`]), and
//! serving it all on a socket with its connection limits ([`serve`]).
//!
//! It stands above the scheduler (`koth` → `koth-web` → `koth-scheduler`):
//! it reads and writes through the scheduler's typed database functions
//! (`koth_scheduler::db`) and answers with its request and response types
//! (`koth_scheduler::types`); what the ladders decide is `koth_ladder`.
//! What a request decides is a pure function in [`usecase`], which the
//! handler calls with the facts it read.

pub mod drawing;
pub mod http;
pub mod pages;
pub mod serve;
pub mod usecase;
