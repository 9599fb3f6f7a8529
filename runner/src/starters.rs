//! Starter kits: for every game, a bot in each of the languages most
//! authors start with, that plays a whole match legally and shows how input
//! arrives, how to answer and where the strategy goes. They are the
//! repository's `starters/<game>/bot.<ext>`, embedded at build time; the
//! game pages offer them for download (`GET /api/games/{game}/starters/{language}`)
//! and `tests/starters.rs` plays each one through a full match in its
//! language's image, with no timeout and no invalid move.

use crate::language::{self, Language};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/starters.rs"));
}

/// The languages every game has a kit in.
pub const LANGUAGES: [&str; 7] = ["python", "c", "cpp", "java", "javascript", "rust", "go"];

/// One starter kit.
#[derive(Clone, Copy, Debug)]
pub struct Starter {
    pub game: &'static str,
    /// `bot.<ext>`: the name to submit it under (Java's class is `bot`).
    pub file: &'static str,
    pub language: &'static Language,
    pub source: &'static str,
}

/// Every kit, by game, then in [`LANGUAGES`] order (others after).
pub fn all() -> Vec<Starter> {
    let mut kits: Vec<Starter> = embedded::KITS
        .iter()
        .filter_map(|(game, file, source)| {
            let ext = file.rsplit_once('.')?.1;
            Some(Starter { game, file, language: language::by_extension(ext)?, source })
        })
        .collect();
    kits.sort_by_key(|s| (s.game, language_order(&s.language.name)));
    kits
}

/// Where kits in `language` go in a list: [`LANGUAGES`]' order, then the
/// others by name.
pub fn language_order(language: &str) -> (usize, String) {
    (LANGUAGES.iter().position(|l| *l == language).unwrap_or(LANGUAGES.len()), language.to_owned())
}

/// A game's kits.
pub fn of_game(game: &str) -> Vec<Starter> {
    all().into_iter().filter(|s| s.game == game).collect()
}

/// A game's kit in one language.
pub fn find(game: &str, language: &str) -> Option<Starter> {
    all().into_iter().find(|s| s.game == game && s.language.name == language)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_game_has_a_kit_in_every_starter_language() {
        // Every embedded file is a kit of a known language.
        assert_eq!(all().len(), embedded::KITS.len(), "a starters/ file of no known language");
        for game in koth_games::GameKind::ALL {
            let langs: Vec<String> = of_game(game.name()).iter().map(|s| s.language.name.clone()).collect();
            assert_eq!(langs, LANGUAGES, "{}", game.name());
            for s in of_game(game.name()) {
                assert_eq!(s.file.rsplit_once('.').unwrap().0, "bot", "{}/{}", s.game, s.file);
                assert!(s.source.contains("koth match --game"), "{}/{} says how to try it", s.game, s.file);
                assert!(find(game.name(), &s.language.name).is_some());
            }
        }
        assert!(find("flit", "cobol").is_none());
    }
}
