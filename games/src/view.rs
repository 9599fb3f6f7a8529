//! Pictures of a game, for replay viewers.
//!
//! Every game koth hosts is played on a grid, so one kind of picture fits
//! them all: a grid of cells, each a one-character code, a few marked cells
//! (a head, the target, the last move) and a caption. The web page's replay
//! player draws any game from this alone; a new game needs a
//! [`Referee::view`](crate::Referee::view) and its [`Legend`], not new
//! drawing code.
//!
//! Codes: `.` is an empty cell in every game; [`SEAT_CODES`]`[s]` is
//! something of seat `s` (a piece, a slime, a trail, a position), drawn in
//! that seat's colour; every other code is the game's own and is described
//! by its legend (a wall, a neutral piece, a domino's colour).

use serde::Serialize;

use crate::Seat;

/// The code of each seat's things, by seat (games have at most 16 seats).
pub const SEAT_CODES: &[u8; 16] = b"0123456789abcdef";
/// An empty cell.
pub const EMPTY: u8 = b'.';

/// The code for seat `s`.
pub fn seat_code(s: Seat) -> u8 {
    SEAT_CODES[s]
}

/// The game at one moment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct View {
    pub width: usize,
    pub height: usize,
    /// Row-major, `width × height` codes.
    #[serde(serialize_with = "as_text")]
    pub cells: Vec<u8>,
    pub marks: Vec<Mark>,
    /// One line under the board: counts, scores, what just happened.
    pub caption: String,
}

/// A cell the viewer outlines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mark {
    /// Row-major index.
    pub cell: usize,
    /// Whose it is (drawn in that seat's colour), if anyone's.
    pub seat: Option<Seat>,
    /// What it is: "head", "target", "moved", "from", "last".
    pub label: &'static str,
}

/// A code the game adds to `.` and the seat codes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LegendEntry {
    pub code: char,
    pub name: &'static str,
    /// A CSS colour.
    pub colour: &'static str,
}

pub type Legend = Vec<LegendEntry>;

fn as_text<S: serde::Serializer>(cells: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(std::str::from_utf8(cells).unwrap_or(""))
}

impl View {
    /// An empty grid.
    pub fn grid(width: usize, height: usize) -> View {
        View { width, height, cells: vec![EMPTY; width * height], marks: Vec::new(), caption: String::new() }
    }
}
