//! What a finished match reports for each seat: the contract between the
//! runner that played it and the ladder that settles it.

use koth_games::MatchResult;
use koth_runner::BotStatus;

/// One seat's outcome.
#[derive(Clone, Debug)]
pub struct SeatOutcome {
    pub seat: i32,
    pub score: f64,
    /// 1 = best; equal ranks tie.
    pub rank: u32,
    pub result: MatchResult,
    /// How the bot's program fared (ok, crashed, timed out, ...).
    pub status: BotStatus,
    pub stderr: String,
    /// (turn, end offset in `stderr`) for the turns that wrote something.
    pub stderr_turns: Vec<(u32, usize)>,
    /// Answers counted as moves, timeouts and invalid answers (what a
    /// validation game is judged on; not stored).
    pub moves: u32,
    pub timeouts: u32,
    pub invalid_moves: u32,
}
