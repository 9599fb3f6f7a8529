//! The jobs koth queues, as one type: what the scheduler and the API
//! enqueue and what a worker claims. The queue ([`crate::db::queue`]) stays
//! generic (a kind and a JSON payload per row, as River keeps its job
//! args); this module is the only place that writes or reads those two
//! columns for koth's own jobs. The stored shape is pinned by a golden file
//! (`scheduler/tests/golden/jobs.json`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A unit of work for a runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "payload")]
pub enum Job {
    /// Compile a bot version in its language's image.
    Compile {
        /// `bot_versions.id`
        version: i64,
    },
    /// Play a match between the artifacts of its seats' versions.
    Match {
        /// `matches.id`
        #[serde(rename = "match")]
        match_id: i64,
    },
    /// Build an added game's referee and play a match between its example
    /// bots before the game is offered.
    ValidateGame {
        /// `games.id`
        game: i64,
    },
}

impl Job {
    /// Every kind a runner claims.
    pub const KINDS: [&'static str; 3] = ["compile", "match", "validate_game"];

    /// As stored in `jobs.kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Job::Compile { .. } => "compile",
            Job::Match { .. } => "match",
            Job::ValidateGame { .. } => "validate_game",
        }
    }

    /// As stored in `jobs.payload`.
    pub fn payload(&self) -> Value {
        serde_json::to_value(self).map(|mut v| v["payload"].take()).unwrap_or_default()
    }

    /// From a row's kind and payload; the error says what is wrong with it.
    pub fn from_row(kind: &str, payload: &Value) -> Result<Job, String> {
        serde_json::from_value(serde_json::json!({"kind": kind, "payload": payload}))
            .map_err(|e| format!("a {kind:?} job with payload {payload} is not one koth runs: {e}"))
    }
}

/// The states stored as text in the database, typed. Each list is the
/// column's SQL `CHECK` (`scheduler/tests/ladder.rs` compares them).
macro_rules! stored_states {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// As stored.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// From a stored value; the error names the value.
            pub fn from_stored(text: &str) -> Result<$name, String> {
                match text {
                    $($text => Ok($name::$variant),)+
                    other => Err(format!("{other:?} is not a {}", stringify!($name))),
                }
            }
        }
    };
}
/// For the other stored kinds ([`crate::audit::AuditAction`]).
pub(crate) use stored_states;

/// What a compile job leaves, as the worker reports it and
/// `db::store::record_compile` writes it: the artifact and the image it
/// was built in, or a failure (its reasons are in the compile's log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileOutcome {
    Compiled { artifact: Vec<u8>, image: String },
    Failed,
}

stored_states! {
    /// Where a job is in the queue (`jobs.state`).
    JobState { Available = "available", Running = "running", Completed = "completed", Failed = "failed", Cancelled = "cancelled" }
}

stored_states! {
    /// Where a match is (`matches.state`).
    MatchState { Queued = "queued", Finished = "finished", Failed = "failed", Cancelled = "cancelled" }
}

stored_states! {
    /// What a match counts for, as its pages and the CLI say it: `rated`
    /// (it moves ratings), `standings` (a round robin's, Swiss' or
    /// neighbours' match: it counts in its ladder's standings), `finals`,
    /// `challenge` (asked for by an author: counts nowhere), `validation`
    /// (a new version's validation game: counts nowhere), `ab` (a game of
    /// an A/B test between two versions of a bot: counts nowhere). Read
    /// from the match's columns (`db::reads`), not stored.
    MatchKind { Rated = "rated", Standings = "standings", Finals = "finals", Challenge = "challenge", Validation = "validation", Ab = "ab" }
}

stored_states! {
    /// Where an A/B test is (`ab_tests.state`): pairs still being played;
    /// the new version found better, or not better, at the test's error
    /// rates; undecided when the pairs allowed were played first; stopped
    /// without a verdict (its bot was disabled or withdrawn; the reason is
    /// kept).
    AbState { Running = "running", Better = "better", NotBetter = "not_better", Undecided = "undecided", Stopped = "stopped" }
}

stored_states! {
    /// Where a bot version is (`bot_versions.status`): queued or compiling;
    /// compiled and playing its validation game; playing on its ladder; did
    /// not compile; refused by its validation game (the bot's previous
    /// version plays on).
    VersionStatus { Pending = "pending", Validating = "validating", Ready = "ready", Failed = "failed", Refused = "refused" }
}

stored_states! {
    /// A seat's result in a finished match (`match_seats.result`), as the
    /// runner reported it (`koth_games::MatchResult`).
    SeatResult { Win = "win", Tie = "tie", Loss = "loss" }
}

impl From<koth_games::MatchResult> for SeatResult {
    fn from(r: koth_games::MatchResult) -> Self {
        match r {
            koth_games::MatchResult::Win => SeatResult::Win,
            koth_games::MatchResult::Tie => SeatResult::Tie,
            koth_games::MatchResult::Loss => SeatResult::Loss,
        }
    }
}

stored_states! {
    /// Where a game is (`games.status`): an added game's example bots are
    /// playing its validation match; offered (koth's own games always are);
    /// refused by that match.
    GameStatus { Validating = "validating", Ready = "ready", Refused = "refused" }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seat's result is served as the runner names it.
    #[test]
    fn seat_results_are_the_runners_names() {
        use koth_games::MatchResult;
        for r in [MatchResult::Win, MatchResult::Tie, MatchResult::Loss] {
            assert_eq!(SeatResult::from(r).as_str(), r.name());
            assert_eq!(serde_json::to_value(SeatResult::from(r)).unwrap(), r.name());
        }
        assert_eq!(SeatResult::ALL.len(), 3);
    }

    fn every_job() -> Vec<Job> {
        vec![Job::Compile { version: 7 }, Job::Match { match_id: 42 }, Job::ValidateGame { game: 3 }]
    }

    /// Kind and payload as stored: `UPDATE_GOLDEN=1 cargo test -p koth-scheduler job` rewrites the file.
    #[test]
    fn jobs_are_stored_as_the_golden_file_says() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/jobs.json");
        let rows: Vec<Value> = every_job().iter().map(|j| serde_json::json!({"kind": j.kind(), "payload": j.payload()})).collect();
        let written = serde_json::to_string_pretty(&rows).unwrap() + "\n";
        let golden =
            koth_testkit::assert_golden(&path, &written, "a job's stored shape changed: queued jobs of older versions must still read");
        for (job, row) in every_job().iter().zip(serde_json::from_str::<Vec<Value>>(&golden).unwrap()) {
            assert_eq!(Job::from_row(row["kind"].as_str().unwrap(), &row["payload"]).unwrap(), *job);
        }
        assert_eq!(every_job().iter().map(Job::kind).collect::<Vec<_>>(), Job::KINDS);
    }

    #[test]
    fn rows_koth_does_not_run_say_why() {
        let e = Job::from_row("compile", &serde_json::json!({})).unwrap_err();
        assert!(e.contains("missing field `version`"), "{e}");
        let e = Job::from_row("noop", &serde_json::json!({})).unwrap_err();
        assert!(e.contains("\"noop\""), "{e}");
    }

    #[test]
    fn stored_states_are_their_serde_names() {
        for s in MatchState::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
            assert_eq!(MatchState::from_stored(s.as_str()), Ok(*s));
        }
        for s in VersionStatus::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for s in JobState::ALL {
            assert_eq!(JobState::from_stored(s.as_str()), Ok(*s));
        }
        assert!(MatchState::from_stored("running").unwrap_err().contains("MatchState"));
    }
}
