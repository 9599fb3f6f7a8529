//! Asking for a challenge (an unrated match between chosen bots): which
//! requests are refused, and why, before the match is queued.
//!
//! [`admit`] decides on the facts the handler read (the ladder's game and
//! its seats, how many of the bots are the caller's); the transaction that
//! queues the match checks the bots can play and the caller's challenges
//! in flight (`db::store::create_challenge`), and its refusals are worded
//! by [`Refusal`] too.

use koth_ladder::quota::OverLimit;

/// What the request asks: these bots, in seat order, on this ladder.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub ladder: i64,
    pub bots: &'a [i64],
}

/// What the handler read before deciding.
#[derive(Clone, Copy, Debug)]
pub struct Facts<'a> {
    /// The ladder's game, and the fewest and most seats it plays; `None`:
    /// no such ladder.
    pub game: Option<(&'a str, usize, usize)>,
    /// How many of the bots are the caller's; `None`: a host, who may
    /// challenge with anyone's.
    pub callers_bots: Option<i64>,
}

/// Why a challenge is refused, in words for its author.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("ladder {0} does not exist")]
    NoLadder(i64),
    /// More or fewer bots than the game seats.
    #[error("{game} is played by {lo} to {hi} bots; {given} given")]
    Seats { game: String, lo: usize, hi: usize, given: usize },
    #[error("a challenge must include one of your own bots")]
    NoneYours,
    /// A bot cannot play now (no ready version, disabled, another ladder,
    /// twice): the store's words.
    #[error("{0}")]
    CannotPlay(String),
    /// Too many of the caller's challenges are queued or playing.
    #[error("{}", .0.message)]
    OverLimit(OverLimit),
}

/// Whether the challenge may be queued, in the order a client is told
/// (the first refusal wins).
pub fn admit(req: &Request, facts: &Facts) -> Result<(), Refusal> {
    let Some((game, lo, hi)) = facts.game else { return Err(Refusal::NoLadder(req.ladder)) };
    let given = req.bots.len();
    if given < lo || given > hi {
        return Err(Refusal::Seats { game: game.to_owned(), lo, hi, given });
    }
    if facts.callers_bots == Some(0) {
        return Err(Refusal::NoneYours);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admit_refuses_in_order_and_names_why() {
        let snake = Some(("snake", 2, 4));
        let two = [1, 2];
        let ok = Request { ladder: 5, bots: &two };
        let mine = Facts { game: snake, callers_bots: Some(1) };
        let table: [(&str, Request, Facts, Result<(), &str>); 7] = [
            ("one of mine against another", ok, mine, Ok(())),
            ("a host, with nobody's own", ok, Facts { callers_bots: None, ..mine }, Ok(())),
            ("the most seats", Request { bots: &[1, 2, 3, 4], ..ok }, mine, Ok(())),
            ("no ladder", ok, Facts { game: None, ..mine }, Err("ladder 5 does not exist")),
            ("too few", Request { bots: &[1], ..ok }, mine, Err("snake is played by 2 to 4 bots; 1 given")),
            // The seats first: too many bots, none of them mine, is the count's fault.
            (
                "too many, none mine",
                Request { bots: &[1, 2, 3, 4, 5], ..ok },
                Facts { callers_bots: Some(0), ..mine },
                Err("snake is played by 2 to 4 bots; 5 given"),
            ),
            ("none mine", ok, Facts { callers_bots: Some(0), ..mine }, Err("a challenge must include one of your own bots")),
        ];
        for (what, req, facts, want) in table {
            assert_eq!(admit(&req, &facts).map_err(|e| e.to_string()), want.map_err(str::to_owned), "{what}");
        }
    }
}
