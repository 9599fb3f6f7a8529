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

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::Seat;

/// The code of each seat's things, by seat (games have at most 16 seats).
pub const SEAT_CODES: &[u8; 16] = b"0123456789abcdef";
/// An empty cell.
pub const EMPTY: u8 = b'.';

/// The colour of each seat's things, by seat: its cells, and its swatch
/// beside the bot's name wherever the pages name it. The pages' script
/// draws with the same list (`SEAT_COLOURS` in `web/static/app.js`, held
/// equal by a test there). A game's legend must not use a colour a reader
/// could take for one of its seats' (tested below): Linkage's dominoes
/// are red, blue, green and yellow and belong to no one, so the first two
/// seats are purple and cyan.
pub const SEAT_COLOURS: [&str; 16] = [
    "#911eb4", "#42d4f4", "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#f032e6", "#bfef45", "#fabed4", "#469990", "#dcbeff", "#9a6324",
    "#800000", "#aaffc3", "#808000", "#000075",
];

/// The code for seat `s`.
pub fn seat_code(s: Seat) -> u8 {
    SEAT_CODES[s]
}

/// The game at one moment. (Read back from JSON too: an external game's
/// referee sends its pictures in this shape, see [`crate::external`].)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct View {
    pub width: usize,
    pub height: usize,
    /// Row-major, `width × height` codes.
    #[serde(serialize_with = "as_text", deserialize_with = "from_text")]
    pub cells: Vec<u8>,
    #[serde(default)]
    pub marks: Vec<Mark>,
    /// One line under the board: counts, scores, what just happened.
    #[serde(default)]
    pub caption: String,
}

/// A cell the viewer outlines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mark {
    /// Row-major index.
    pub cell: usize,
    /// Whose it is (drawn in that seat's colour), if anyone's.
    #[serde(default)]
    pub seat: Option<Seat>,
    /// What it is: "head", "target", "moved", "from", "last".
    pub label: Cow<'static, str>,
}

/// A code the game adds to `.` and the seat codes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LegendEntry {
    pub code: char,
    pub name: Cow<'static, str>,
    /// A CSS colour (`#rrggbb`).
    pub colour: Cow<'static, str>,
}

pub type Legend = Vec<LegendEntry>;

fn as_text<S: serde::Serializer>(cells: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(std::str::from_utf8(cells).unwrap_or(""))
}

fn from_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    String::deserialize(d).map(String::into_bytes)
}

impl View {
    /// An empty grid.
    pub fn grid(width: usize, height: usize) -> View {
        View { width, height, cells: vec![EMPTY; width * height], marks: Vec::new(), caption: String::new() }
    }
}

/// Below this CIE76 distance a legend colour could be taken for a seat's
/// (the seats' old red and green against Linkage's red and green dominoes
/// were 24 and 10): koth's own games are held to it by a test, an external
/// game's manifest when it is read.
pub const MIN_COLOUR_DIFFERENCE: f64 = 30.0;

/// `#rrggbb` in CIE L*a*b* (D65), where distance is how different two
/// colours look; `None` for anything else.
fn lab(css: &str) -> Option<[f64; 3]> {
    if css.len() != 7 || !css.starts_with('#') {
        return None;
    }
    let channel = |i: usize| -> Option<f64> {
        let c = u8::from_str_radix(css.get(i..i + 2)?, 16).ok()? as f64 / 255.0;
        Some(if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) })
    };
    let (r, g, b) = (channel(1)?, channel(3)?, channel(5)?);
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| if t > 216.0 / 24389.0 { t.cbrt() } else { (24389.0 / 27.0 * t + 16.0) / 116.0 };
    Some([116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))])
}

/// How different two `#rrggbb` colours look (CIE76 ΔE); `None` if either
/// is not such a colour.
pub fn colour_difference(a: &str, b: &str) -> Option<f64> {
    let (a, b) = (lab(a)?, lab(b)?);
    Some(((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GameKind;

    fn difference(a: &str, b: &str) -> f64 {
        colour_difference(a, b).unwrap_or_else(|| panic!("{a} or {b}: not #rrggbb"))
    }

    /// No piece, wall or target is drawn in a seat's colour, nor in one
    /// close enough to be taken for it (CIE76 ΔE under 30: the seats'
    /// old red and green against Linkage's red and green dominoes were 24
    /// and 10).
    #[test]
    fn no_legend_colour_looks_like_a_seat_colour() {
        assert!(difference("#e6194b", "#d9412b") < 30.0 && difference("#3cb44b", "#2e9e44") < 30.0);
        for game in GameKind::ALL {
            let (lo, hi) = game.seat_range();
            let legend = game.referee(lo, 1).unwrap().legend();
            for (seat, colour) in SEAT_COLOURS.iter().enumerate().take(hi) {
                for entry in &legend {
                    assert_ne!(entry.colour.to_ascii_lowercase(), *colour, "{game:?}: {} is seat {seat}'s colour", entry.name);
                    let d = difference(&entry.colour, colour);
                    assert!(
                        d >= MIN_COLOUR_DIFFERENCE,
                        "{game:?}: {} ({}) looks like seat {seat}'s {colour} (ΔE {d:.1})",
                        entry.name,
                        entry.colour
                    );
                }
            }
        }
    }

    #[test]
    fn seat_colours_are_one_per_seat_code() {
        assert_eq!(SEAT_COLOURS.len(), SEAT_CODES.len());
        for (i, c) in SEAT_COLOURS.iter().enumerate() {
            lab(c);
            assert!(!SEAT_COLOURS[..i].contains(c), "{c} twice");
        }
    }
}
