//! A game as the service knows it: one of koth's own, or one a host added
//! to the server (an external game: a folder with a manifest, a referee
//! program and example bots, stored as the `games` row's files; see
//! `sql/0015_added_games.sql`). Pure: the scheduler, the API and the pages
//! ask a game only for what is here (its name, its seats, the ladder it
//! gets by default); a runner plays it (`koth_runner::game`).

use koth_games::external::GameManifest;
use koth_games::{GameId, GameKind, TimePolicy};
use serde_json::Value;

use crate::format::{CommonSettings, Format, LadderConfig, RatedSettings};

/// The `games.kind` of a game a host added.
pub const ADDED_KIND: &str = "external";

#[derive(Clone, Debug, PartialEq)]
pub enum ServedGame {
    Builtin(GameKind),
    /// Added by a host: its manifest as stored.
    Added(Box<GameManifest>),
}

impl From<GameKind> for ServedGame {
    fn from(g: GameKind) -> ServedGame {
        ServedGame::Builtin(g)
    }
}

impl ServedGame {
    /// From a `games` row's kind and manifest; the error names what is wrong.
    pub fn from_row(kind: &str, manifest: Option<&Value>) -> Result<ServedGame, String> {
        if let Some(g) = GameKind::from_name(kind) {
            return Ok(ServedGame::Builtin(g));
        }
        match (kind, manifest) {
            (ADDED_KIND, Some(m)) => GameManifest::parse(m.to_string().as_bytes()).map(|m| ServedGame::Added(Box::new(m))),
            _ => Err(format!("koth plays no game of kind {kind:?}")),
        }
    }

    pub fn id(&self) -> GameId {
        match self {
            ServedGame::Builtin(g) => GameId::Builtin(*g),
            ServedGame::Added(m) => GameId::External(m.name.clone()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            ServedGame::Builtin(g) => g.name(),
            ServedGame::Added(m) => &m.name,
        }
    }

    /// A title for people: an added game's manifest's; koth's own have none.
    pub fn title(&self) -> &str {
        match self {
            ServedGame::Builtin(_) => "",
            ServedGame::Added(m) => &m.title,
        }
    }

    pub fn time_policy(&self) -> TimePolicy {
        match self {
            ServedGame::Builtin(g) => g.time_policy(),
            ServedGame::Added(m) => m.time_policy,
        }
    }

    /// Seats a match may have: (fewest, most).
    pub fn seat_range(&self) -> (usize, usize) {
        match self {
            ServedGame::Builtin(g) => g.seat_range(),
            ServedGame::Added(m) => m.seat_range(),
        }
    }

    /// Seats per match of a ladder of this game configured as `config`.
    pub fn seats(&self, config: &LadderConfig) -> usize {
        config.seats(self.seat_range())
    }

    /// Whether this game can be played as `config` says; the error says why not.
    pub fn check(&self, config: &LadderConfig) -> Result<(), String> {
        config.check(self.name(), self.seat_range())?;
        config.common.data_quota()?;
        if config.common.bot_data && !self.keeps_bot_data() {
            return Err(format!(
                "{} does not keep bot data between matches (\"bot_data\": true is for games that offer it: slime, or a game \
                 folder whose game.json says \"bot_data\": true)",
                self.name()
            ));
        }
        Ok(())
    }

    /// Whether its bots may keep data between matches, where a ladder
    /// turns it on.
    pub fn keeps_bot_data(&self) -> bool {
        match self {
            ServedGame::Builtin(g) => g.keeps_bot_data(),
            ServedGame::Added(m) => m.bot_data,
        }
    }

    /// The ladder a host gets unless they say otherwise: koth's own games'
    /// from their seeds ([`LadderConfig::default_for`]); an added game's
    /// from its manifest's `ladder`, else rated with its fewest seats.
    pub fn default_ladder(&self) -> Result<LadderConfig, String> {
        match self {
            ServedGame::Builtin(g) => Ok(LadderConfig::default_for(*g)),
            ServedGame::Added(m) => {
                let fewest = LadderConfig {
                    common: CommonSettings { seats: Some(m.seat_range().0.max(2)), ..CommonSettings::default() },
                    format: Format::Rated(RatedSettings::default()),
                };
                let config = match &m.ladder {
                    None => fewest,
                    Some(l) => l
                        .format
                        .parse()
                        .and_then(|f| LadderConfig::with_request(&fewest, Some(f), Some(&l.settings)))
                        .map_err(|e| format!("{}'s manifest, ladder: {e}", m.name))?,
                };
                self.check(&config).map_err(|e| format!("{}'s manifest, ladder: {e}", m.name))?;
                Ok(config)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn added(ladder: Option<Value>) -> ServedGame {
        let mut m = json!({
            "name": "duel", "seats": {"min": 2, "max": 4}, "protocol": "stdio",
            "time_policy": {"per_move": 50, "on_timeout": {"kind": "no_move", "freeze_after": 5}},
            "max_turns": 100, "referee": {"main": "referee.py"},
        });
        if let Some(l) = ladder {
            m["ladder"] = l;
        }
        ServedGame::from_row(ADDED_KIND, Some(&m)).unwrap()
    }

    /// A ladder carries bot data only for a game that offers it, within
    /// the quota's bounds.
    #[test]
    fn bot_data_is_for_games_that_offer_it() {
        let with = |settings: Value| LadderConfig::parse("rated", &settings).unwrap();
        let on = with(json!({"seats": 2, "bot_data": true}));
        let e = ServedGame::Builtin(GameKind::Target).check(&on).unwrap_err();
        assert!(e.starts_with("target does not keep bot data"), "{e}");
        let e = added(None).check(&on).unwrap_err();
        assert!(e.starts_with("duel does not keep bot data"), "{e}");
        let mut offered = added(None);
        if let ServedGame::Added(m) = &mut offered {
            m.bot_data = true;
        }
        assert_eq!(offered.check(&on), Ok(()));
        let slime = with(json!({"seats": 4, "bot_data": true, "bot_data_max_bytes": 100 << 20}));
        assert!(ServedGame::Builtin(GameKind::Slime).check(&slime).unwrap_err().contains("64 MiB"));
        assert_eq!(ServedGame::Builtin(GameKind::Slime).check(&LadderConfig::default_for(GameKind::Slime)), Ok(()));
    }

    #[test]
    fn an_added_games_ladder_comes_from_its_manifest_and_is_checked() {
        // (manifest's ladder, the format and seats it gives, or the error's words)
        type Case = (Option<Value>, Result<(&'static str, usize), &'static str>);
        let cases: Vec<Case> = vec![
            (None, Ok(("rated", 2))),
            (Some(json!({"format": "round_robin", "settings": {"seats": 3, "rounds": 2}})), Ok(("round_robin", 3))),
            (Some(json!({"format": "swiss"})), Ok(("swiss", 2))),
            (Some(json!({"format": "rated", "settings": {"seats": 5}})), Err("played by 2 to 4 bots, not 5")),
            (Some(json!({"format": "knockout"})), Err("knockout")),
            (Some(json!({"format": "rated", "settings": {"colour": 1}})), Err("colour")),
        ];
        for (ladder, want) in cases {
            let got = added(ladder.clone()).default_ladder();
            match (got, want) {
                (Ok(c), Ok((format, seats))) => {
                    assert_eq!((c.format.name(), added(None).seats(&c)), (format, seats), "{ladder:?}");
                }
                (Err(e), Err(words)) => assert!(e.contains(words) && e.starts_with("duel's manifest, ladder:"), "{ladder:?}: {e}"),
                (got, want) => panic!("{ladder:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn rows_koth_cannot_play_say_so() {
        assert_eq!(ServedGame::from_row("snake", None).unwrap(), ServedGame::Builtin(GameKind::Snake));
        assert!(ServedGame::from_row("chess", None).unwrap_err().contains("\"chess\""));
        assert!(ServedGame::from_row(ADDED_KIND, None).is_err());
        assert!(ServedGame::from_row(ADDED_KIND, Some(&json!({"name": "x"}))).unwrap_err().contains("game.json"));
        assert_eq!(added(None).id(), GameId::External("duel".into()));
    }
}
