//! Ladder formats: the one place that knows them.
//!
//! A ladder is a game, settings every format shares ([`CommonSettings`]:
//! seats, turn limit, wall-clock cap) and a [`Format`], an enum whose
//! variants carry their own settings. Everything a format decides is pure
//! and lives here, behind three calls:
//!
//! * [`Format::next_matches`]: from a snapshot of the ladder
//!   ([`LadderState`]: its bots, every match so far and how it ended), the
//!   matches to add now;
//! * [`Format::standings`]: the leaderboard, as a table whose columns the
//!   format names ([`Standings`]), so the API, the pages and the CLI draw
//!   any format without knowing it;
//! * [`Format::rating_system`]: whether finished matches update ratings.
//!
//! The scheduler loads the snapshot, calls these and writes what they
//! return; nothing outside this module matches on a format's name. Adding a
//! format is a variant, its settings and its arms here (the compiler lists
//! them), its pure schedule in [`crate::formats`], and its name in the
//! SQL `CHECK` (a test compares the two).
//!
//! Stored shape (`ladders.format`, `ladders.settings`): the format's name,
//! and one JSON object holding the common settings and the format's own.
//! Unknown fields are refused with the list of the ones that format takes.

use std::collections::{BTreeMap, HashMap};

use koth_games::GameKind;
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::formats::{self, PairRecord, RoundRobinRecord, RoundRobinScoring, SwissRecord};
use crate::rating::{leaderboard_score, Rating, RatingSystem};
use koth_runner::storage::DataQuota;

/// Settings every format has.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommonSettings {
    /// Seats per match (default: the game's smallest).
    pub seats: Option<usize>,
    /// Stop matches after this many turns (quick ladders, tests); None = to the end.
    pub max_turns: Option<u32>,
    /// Stop a match that has run this many seconds and score it as it
    /// stands; None = the engine's default cap for the game.
    pub max_match_seconds: Option<u32>,
    /// New versions play on the ladder as soon as they compile, with no
    /// validation game ([`crate::validation`]); off unless the host says so.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skip_validation: bool,
    /// Each bot version's folder is carried from match to match (a game
    /// that offers it only: Slime, or a game folder with `"bot_data":
    /// true`; see `koth_runner::storage`). Off unless the host says so.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bot_data: bool,
    /// Bytes a bot's data may hold (default 1 MiB, at most 64 MiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot_data_max_bytes: Option<u64>,
    /// Files a bot's data may hold (default 64, at most 10000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot_data_max_files: Option<usize>,
}

impl CommonSettings {
    /// The common fields of a stored settings object (the format's own are
    /// not looked at; a field of the wrong type counts as absent).
    pub fn from_stored(settings: &Value) -> CommonSettings {
        fn field<T: serde::de::DeserializeOwned>(settings: &Value, k: &str) -> Option<T> {
            settings.get(k).and_then(|v| serde_json::from_value(v.clone()).ok())
        }
        CommonSettings {
            seats: field(settings, "seats"),
            max_turns: field(settings, "max_turns"),
            max_match_seconds: field(settings, "max_match_seconds"),
            skip_validation: field(settings, "skip_validation").unwrap_or(false),
            bot_data: field(settings, "bot_data").unwrap_or(false),
            bot_data_max_bytes: field(settings, "bot_data_max_bytes"),
            bot_data_max_files: field(settings, "bot_data_max_files"),
        }
    }

    /// The quota of each bot's data, when the ladder carries it; the error
    /// says which setting is out of bounds.
    pub fn data_quota(&self) -> Result<Option<DataQuota>, String> {
        if !self.bot_data {
            if self.bot_data_max_bytes.is_some() || self.bot_data_max_files.is_some() {
                return Err("bot_data_max_bytes and bot_data_max_files need \"bot_data\": true".into());
            }
            return Ok(None);
        }
        let d = DataQuota::default();
        DataQuota::new(self.bot_data_max_bytes.unwrap_or(d.max_bytes), self.bot_data_max_files.unwrap_or(d.max_files)).map(Some)
    }
}

/// The continuous rated ladder: one match at a time around the bot that
/// has played least ([`formats::next_rated_match`]), rated after each.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RatedSettings {
    /// Matches queued or running at once.
    pub concurrency: u32,
    pub rating: RatingSystem,
    /// Games under which a bot counts as new (one match at a time, first in line).
    pub newcomer_games: u32,
}

impl Default for RatedSettings {
    fn default() -> Self {
        RatedSettings { concurrency: 4, rating: RatingSystem::WengLin, newcomer_games: 10 }
    }
}

/// Every pairing (or k-combination) on every side ([`formats::round_robin_schedule`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoundRobinSettings {
    /// Times each pairing is played on each side.
    pub rounds: u32,
    /// How a match scores (default: points 2 / 1 / 0).
    pub scoring: RoundRobinScoring,
}

impl Default for RoundRobinSettings {
    fn default() -> Self {
        RoundRobinSettings { rounds: 1, scoring: RoundRobinScoring::Points { win: 2.0, tie: 1.0, loss: 0.0 } }
    }
}

/// Linkage's ladder: games against the bots just above and below
/// ([`formats::neighbours_next`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NeighboursSettings {
    /// Matches queued or running at once.
    pub concurrency: u32,
    /// Games against each neighbour, half on each side.
    pub games_per_neighbour: u32,
}

impl Default for NeighboursSettings {
    fn default() -> Self {
        NeighboursSettings { concurrency: 4, games_per_neighbour: 10 }
    }
}

/// Swiss rounds ([`formats::swiss_next_round`]): each round pairs bots
/// with equal or near points who have not met; a round starts when the
/// last one has finished.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwissSettings {
    /// Rounds to play; None = ⌈log₂ n⌉ for the n bots playing when a
    /// round starts (enough for one bot to win every round).
    pub rounds: Option<u32>,
}

/// A ladder format and its own settings.
#[derive(Clone, Debug, PartialEq)]
pub enum Format {
    Rated(RatedSettings),
    RoundRobin(RoundRobinSettings),
    Neighbours(NeighboursSettings),
    Swiss(SwissSettings),
}

/// A ladder's whole configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderConfig {
    pub common: CommonSettings,
    pub format: Format,
}

/// A bot of the ladder (not disabled), as the formats see it.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderBot {
    pub id: i64,
    pub name: String,
    /// Has a ready current version: may be given matches.
    pub ready: bool,
    /// Its rating row (rated ladders), and rated games played.
    pub rating: Option<(Rating, u32)>,
    /// Its matches queued or running.
    pub in_flight: u32,
}

/// A match of the ladder that did not fail.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchRecord {
    /// Bots in seat order.
    pub seats: Vec<i64>,
    /// (rank, score) per seat once finished; None while queued.
    pub results: Option<Vec<(u32, f64)>>,
    /// The round of a round-based format (Swiss); None otherwise.
    pub round: Option<u32>,
}

/// What a format sees of its ladder.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LadderState {
    /// Every bot not disabled, by id.
    pub bots: Vec<LadderBot>,
    /// Every match that did not fail (only loaded when [`Format::needs_history`]).
    pub matches: Vec<MatchRecord>,
    /// Matches queued or running.
    pub queued: u32,
}

/// A match a format asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewMatch {
    /// Bots in seat order.
    pub seats: Vec<i64>,
    /// Updates ratings when it finishes.
    pub rated: bool,
    pub round: Option<u32>,
}

/// A column of a leaderboard: the key of its values in each row and how
/// to head it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Column {
    pub key: String,
    pub label: String,
}

/// One line of a leaderboard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StandingRow {
    pub rank: u32,
    pub bot: i64,
    pub name: String,
    /// A value per column of [`Standings::columns`], by its key.
    #[serde(flatten)]
    pub values: BTreeMap<String, Value>,
}

/// A ladder's leaderboard as served (`GET /api/ladders/{id}/leaderboard`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Standings {
    /// The ladder's format.
    pub format: FormatName,
    /// The columns after rank and name, in order.
    pub columns: Vec<Column>,
    pub rows: Vec<StandingRow>,
}

fn column(key: &str, label: &str) -> Column {
    Column { key: key.into(), label: label.into() }
}

/// A format's name: the one list of them. It is what the database stores
/// (and its `CHECK` lists: `scheduler/tests/ladder.rs` compares them), an
/// enum in the API's requests, responses and OpenAPI document, what the
/// CLI's `--format` takes, and what the pages offer (from `GET
/// /api/formats`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema)]
// Read through `FromStr`, so that a wrong name gets koth's words (the
// names to use), not serde's.
#[serde(rename_all = "snake_case", try_from = "String")]
pub enum FormatName {
    Rated,
    RoundRobin,
    Neighbours,
    Swiss,
}

impl FormatName {
    pub const ALL: [FormatName; 4] = [FormatName::Rated, FormatName::RoundRobin, FormatName::Neighbours, FormatName::Swiss];

    /// As stored and in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            FormatName::Rated => "rated",
            FormatName::RoundRobin => "round_robin",
            FormatName::Neighbours => "neighbours",
            FormatName::Swiss => "swiss",
        }
    }

    /// The list people read in a refusal: `rated, round_robin, ...`.
    pub fn listed() -> String {
        FormatName::ALL.map(FormatName::as_str).join(", ")
    }
}

impl std::fmt::Display for FormatName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // pad: a table's `{:<12}` lines it up.
        f.pad(self.as_str())
    }
}

impl TryFrom<String> for FormatName {
    type Error = String;
    fn try_from(s: String) -> Result<FormatName, String> {
        s.parse()
    }
}

impl std::str::FromStr for FormatName {
    type Err = String;
    fn from_str(s: &str) -> Result<FormatName, String> {
        FormatName::ALL.into_iter().find(|f| f.as_str() == s).ok_or_else(|| format!("unknown format {s:?}; use {}", FormatName::listed()))
    }
}

impl Format {
    pub fn kind(&self) -> FormatName {
        match self {
            Format::Rated(_) => FormatName::Rated,
            Format::RoundRobin(_) => FormatName::RoundRobin,
            Format::Neighbours(_) => FormatName::Neighbours,
            Format::Swiss(_) => FormatName::Swiss,
        }
    }

    pub fn name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// Finished matches of this format update ratings, with this system.
    pub fn rating_system(&self) -> Option<RatingSystem> {
        match self {
            Format::Rated(r) => Some(r.rating),
            Format::RoundRobin(_) | Format::Neighbours(_) | Format::Swiss(_) => None,
        }
    }

    /// The format plays a set of matches and stops (a round robin, Swiss
    /// rounds); a rated or neighbours ladder plays for as long as it runs.
    pub fn ends(&self) -> bool {
        match self {
            Format::RoundRobin(_) | Format::Swiss(_) => true,
            Format::Rated(_) | Format::Neighbours(_) => false,
        }
    }

    /// The format reads the ladder's past matches (the rated ladder needs
    /// only ratings and what is in flight).
    pub fn needs_history(&self) -> bool {
        !matches!(self, Format::Rated(_))
    }

    /// A format's settings from their JSON (unknown fields refused).
    fn from_settings(name: FormatName, settings: Value) -> Result<Format, String> {
        fn parse<T: serde::de::DeserializeOwned>(name: FormatName, v: Value) -> Result<T, String> {
            serde_json::from_value(v).map_err(|e| format!("settings of a {name} ladder: {e}"))
        }
        Ok(match name {
            FormatName::Rated => Format::Rated(parse(name, settings)?),
            FormatName::RoundRobin => Format::RoundRobin(parse(name, settings)?),
            FormatName::Neighbours => Format::Neighbours(parse(name, settings)?),
            FormatName::Swiss => Format::Swiss(parse(name, settings)?),
        })
    }

    fn settings_json(&self) -> Value {
        match self {
            Format::Rated(s) => serde_json::to_value(s),
            Format::RoundRobin(s) => serde_json::to_value(s),
            Format::Neighbours(s) => serde_json::to_value(s),
            Format::Swiss(s) => serde_json::to_value(s),
        }
        .unwrap_or_default()
    }

    /// The matches to add now, given the ladder as it stands and `seats`
    /// per match.
    pub fn next_matches<R: Rng>(&self, state: &LadderState, seats: usize, rng: &mut R) -> Vec<NewMatch> {
        let ready: Vec<i64> = state.bots.iter().filter(|b| b.ready).map(|b| b.id).collect();
        let unrated = |seats: Vec<i64>| NewMatch { seats, rated: false, round: None };
        match self {
            Format::Rated(s) => {
                let initial = s.rating.initial();
                let mut entrants: Vec<formats::Entrant> = state
                    .bots
                    .iter()
                    .filter(|b| b.ready)
                    .map(|b| formats::Entrant {
                        bot: b.id,
                        rating: b.rating.map(|(r, _)| r).unwrap_or(initial),
                        games: b.rating.map(|(_, g)| g).unwrap_or(0),
                        in_flight: b.in_flight,
                    })
                    .collect();
                let settings = formats::LadderSettings { seats, newcomer_games: s.newcomer_games, ..formats::LadderSettings::default() };
                let mut out = Vec::new();
                while state.queued + (out.len() as u32) < s.concurrency {
                    let Some(pick) = formats::next_rated_match(&entrants, &settings, rng) else { break };
                    for e in entrants.iter_mut().filter(|e| pick.contains(&e.bot)) {
                        e.in_flight += 1;
                    }
                    out.push(NewMatch { seats: pick, rated: true, round: None });
                }
                out
            }
            Format::RoundRobin(s) => {
                // Pairings already played or queued are not added again, so
                // a bot that joins late gets its games too.
                let mut have: HashMap<&[i64], u32> = HashMap::new();
                for m in &state.matches {
                    *have.entry(&m.seats).or_default() += 1;
                }
                let mut out = Vec::new();
                for tuple in formats::round_robin_schedule(&ready, seats, s.rounds) {
                    match have.get_mut(tuple.as_slice()) {
                        Some(n) if *n > 0 => *n -= 1,
                        _ => out.push(unrated(tuple)),
                    }
                }
                out
            }
            Format::Neighbours(s) => {
                let all = pair_records(&state.matches, false);
                // The current order: by rating, unrated bots (newcomers) at the bottom.
                let mut order: Vec<i64> = formats::neighbours_ratings(&pair_records(&state.matches, true))
                    .iter()
                    .map(|r| r.bot)
                    .filter(|b| ready.contains(b))
                    .collect();
                let newcomers: Vec<i64> = ready.iter().copied().filter(|b| !order.contains(b)).collect();
                order.extend(newcomers);
                let room = s.concurrency.saturating_sub(state.queued) as usize;
                formats::neighbours_next(&order, &all, s.games_per_neighbour).into_iter().take(room).map(|p| unrated(p.to_vec())).collect()
            }
            Format::Swiss(s) => {
                let records = swiss_records(&state.matches);
                formats::swiss_next_round(&ready, &records, seats, s.rounds, rng)
                    .map(|(round, groups)| groups.into_iter().map(|seats| NewMatch { seats, rated: false, round: Some(round) }).collect())
                    .unwrap_or_default()
            }
        }
    }

    /// What each seat of a finished match adds to its bot's line, in the
    /// unit the format ranks by (points, score, share of opponents beaten,
    /// won or not); None while the match is queued. The rated ladder, which
    /// ranks by rating, counts the share of opponents beaten.
    pub fn match_points(&self, m: &MatchRecord) -> Option<Vec<f64>> {
        let results = m.results.as_ref()?;
        let ranks: Vec<u32> = results.iter().map(|(k, _)| *k).collect();
        Some(match self {
            Format::RoundRobin(s) => {
                let seats: Vec<(i64, u32, f64)> = m.seats.iter().zip(results).map(|(b, (k, sc))| (*b, (*k).max(1), *sc)).collect();
                (0..seats.len()).map(|i| formats::round_robin_points(&seats, i, &s.scoring)).collect()
            }
            Format::Neighbours(_) => {
                let best = ranks.iter().min().copied().unwrap_or(1);
                let alone = ranks.iter().filter(|k| **k == best).count() == 1;
                ranks.iter().map(|k| if *k == best && alone { 1.0 } else { 0.0 }).collect()
            }
            Format::Rated(_) | Format::Swiss(_) => (0..ranks.len()).map(|i| formats::swiss_points(&ranks, i)).collect(),
        })
    }

    /// The leaderboard: the bots that can play (a ready version; not
    /// disabled, as `state` holds them). A bot whose versions never
    /// compiled or were refused is not ranked, nor counted.
    pub fn standings(&self, state: &LadderState) -> Standings {
        let name_of = |bot: i64| state.bots.iter().find(|b| b.id == bot && b.ready).map(|b| b.name.clone());
        let listed: Vec<i64> = state.bots.iter().filter(|b| b.ready).map(|b| b.id).collect();
        let row = |rank: u32, bot: i64, values: Vec<(&'static str, Value)>| {
            name_of(bot).map(|name| StandingRow { rank, bot, name, values: values.into_iter().map(|(k, v)| (k.to_owned(), v)).collect() })
        };
        let (columns, rows): (Vec<Column>, Vec<StandingRow>) = match self {
            Format::Rated(_) => {
                let mut rated: Vec<(&LadderBot, Rating, u32)> =
                    state.bots.iter().filter(|b| b.ready).filter_map(|b| b.rating.map(|(r, g)| (b, r, g))).collect();
                rated.sort_by(|a, b| leaderboard_score(b.1).total_cmp(&leaderboard_score(a.1)).then(a.0.id.cmp(&b.0.id)));
                let rows = rated
                    .iter()
                    .enumerate()
                    .filter_map(|(i, (b, r, g))| {
                        row(
                            i as u32 + 1,
                            b.id,
                            vec![
                                ("score", json!(leaderboard_score(*r))),
                                ("mu", json!(r.mu)),
                                ("sigma", json!(r.sigma)),
                                ("games", json!(g)),
                            ],
                        )
                    })
                    .collect();
                (vec![column("score", "μ − 3σ"), column("mu", "μ"), column("sigma", "σ"), column("games", "games")], rows)
            }
            Format::RoundRobin(s) => {
                let records: Vec<RoundRobinRecord> = state
                    .matches
                    .iter()
                    .filter_map(|m| {
                        let res = m.results.as_ref()?;
                        Some(RoundRobinRecord { seats: m.seats.iter().zip(res).map(|(b, (k, sc))| (*b, (*k).max(1), *sc)).collect() })
                    })
                    .collect();
                let label = match s.scoring {
                    RoundRobinScoring::AverageScore => "average score",
                    RoundRobinScoring::Points { .. } => "points",
                };
                let rows = formats::round_robin_standings(&listed, &records, &s.scoring)
                    .into_iter()
                    .filter_map(|st| row(st.rank, st.bot, vec![("points", json!(st.points)), ("games", json!(st.played))]))
                    .collect();
                (vec![column("points", label), column("games", "games")], rows)
            }
            Format::Neighbours(_) => {
                let rows = formats::neighbours_ratings(&pair_records(&state.matches, true))
                    .into_iter()
                    .filter(|r| listed.contains(&r.bot))
                    .enumerate()
                    .filter_map(|(i, r)| {
                        row(
                            i as u32 + 1,
                            r.bot,
                            vec![
                                ("rating", json!(r.overall)),
                                ("as_first", json!(r.as_first)),
                                ("as_second", json!(r.as_second)),
                                ("games", json!(r.played)),
                            ],
                        )
                    })
                    .collect();
                let columns = vec![
                    column("rating", "100 × won / played"),
                    column("as_first", "moving first"),
                    column("as_second", "moving second"),
                    column("games", "games"),
                ];
                (columns, rows)
            }
            Format::Swiss(_) => {
                let rows = formats::swiss_standings(&listed, &swiss_records(&state.matches))
                    .into_iter()
                    .filter_map(|st| {
                        row(
                            st.rank,
                            st.bot,
                            vec![("points", json!(st.points)), ("buchholz", json!(st.buchholz)), ("games", json!(st.played))],
                        )
                    })
                    .collect();
                (vec![column("points", "points"), column("buchholz", "Buchholz"), column("games", "games")], rows)
            }
        };
        Standings { format: self.kind(), columns, rows }
    }
}

/// Two-seat matches as Linkage's records; `finished_only` leaves out the
/// queued ones (which count as owed games, not as results).
fn pair_records(matches: &[MatchRecord], finished_only: bool) -> Vec<PairRecord> {
    matches
        .iter()
        .filter(|m| m.seats.len() == 2 && (!finished_only || m.results.is_some()))
        .map(|m| {
            let winner = match m.results.as_deref() {
                Some([(a, _), (b, _)]) if a < b => Some(m.seats[0]),
                Some([(a, _), (b, _)]) if b < a => Some(m.seats[1]),
                _ => None,
            };
            PairRecord { first: m.seats[0], second: m.seats[1], winner }
        })
        .collect()
}

fn swiss_records(matches: &[MatchRecord]) -> Vec<SwissRecord> {
    matches
        .iter()
        .filter_map(|m| {
            let round = m.round?;
            let ranks = m.results.as_ref().map(|r| r.iter().map(|(k, _)| *k).collect());
            Some(SwissRecord { round, seats: m.seats.clone(), ranks })
        })
        .collect()
}

impl LadderConfig {
    /// From the stored (or requested) format name and settings object.
    pub fn parse(format: &str, settings: &Value) -> Result<LadderConfig, String> {
        LadderConfig::of(format.parse()?, settings)
    }

    /// From a format and its settings object (common and the format's own).
    pub fn of(format: FormatName, settings: &Value) -> Result<LadderConfig, String> {
        let Value::Object(all) = settings else { return Err("settings must be a JSON object".into()) };
        let common_keys = common_keys();
        let (mut common, mut own) = (Map::new(), Map::new());
        for (k, v) in all {
            if common_keys.contains(&k.as_str()) { &mut common } else { &mut own }.insert(k.clone(), v.clone());
        }
        let common: CommonSettings = serde_json::from_value(Value::Object(common)).map_err(|e| format!("settings: {e}"))?;
        let format = Format::from_settings(format, Value::Object(own)).map_err(|e| {
            let own = Format::default_of(format).settings_json();
            let keys: Vec<&String> = own.as_object().map(|o| o.keys().collect()).unwrap_or_default();
            format!("{e} (it takes {} and {})", common_keys.join(", "), keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", "))
        })?;
        Ok(LadderConfig { common, format })
    }

    /// The stored form: the format's name and one settings object.
    pub fn to_stored(&self) -> (&'static str, Value) {
        let mut all = match serde_json::to_value(&self.common) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if let Value::Object(own) = self.format.settings_json() {
            all.extend(own);
        }
        (self.format.name(), Value::Object(all))
    }

    /// Requested settings over a base: given fields replace the base's,
    /// and a format other than the base's starts from its own defaults.
    pub fn with_request(base: &LadderConfig, format: Option<FormatName>, settings: Option<&Value>) -> Result<LadderConfig, String> {
        let mut stored = base.to_stored().1;
        let name = format.unwrap_or(base.format.kind());
        if name != base.format.kind() {
            stored = LadderConfig { common: base.common.clone(), format: Format::default_of(name) }.to_stored().1;
        }
        match settings {
            None => {}
            Some(Value::Object(given)) => {
                if let Value::Object(s) = &mut stored {
                    s.extend(given.clone());
                }
            }
            Some(_) => return Err("settings must be a JSON object".into()),
        }
        LadderConfig::of(name, &stored)
    }

    /// The format and settings a game's seed describes:
    ///
    /// | game | format | from the seed |
    /// |---|---|---|
    /// | Flit | rated, 4 seats | winner only (most pieces): rated by finishing order |
    /// | Slime | round robin, 4 seats, average score | every 4-bot combination plays; average score |
    /// | Linkage | neighbours, 10 games per neighbour | the weekly ladder, 100 × won / played |
    /// | Target | rated, 2 seats | games until a clear winner; joint winners each score |
    /// | Snake | round robin, 2 seats, win 2 / tie 1 / loss 0 | each pair M times on each side |
    pub fn default_for(kind: GameKind) -> LadderConfig {
        let seats = |n| CommonSettings { seats: Some(n), ..CommonSettings::default() };
        match kind {
            GameKind::Flit => LadderConfig { common: seats(4), format: Format::Rated(RatedSettings::default()) },
            // Its seed: "You may read and write files within your own
            // folder in order to persist data".
            GameKind::Slime => LadderConfig {
                common: CommonSettings { bot_data: true, ..seats(4) },
                format: Format::RoundRobin(RoundRobinSettings {
                    scoring: RoundRobinScoring::AverageScore,
                    ..RoundRobinSettings::default()
                }),
            },
            GameKind::Linkage => LadderConfig {
                common: seats(2),
                format: Format::Neighbours(NeighboursSettings { games_per_neighbour: 10, ..Default::default() }),
            },
            GameKind::Target => LadderConfig { common: seats(2), format: Format::Rated(RatedSettings::default()) },
            GameKind::Snake => LadderConfig {
                common: seats(2),
                format: Format::RoundRobin(RoundRobinSettings {
                    scoring: RoundRobinScoring::Points { win: 2.0, tie: 1.0, loss: 0.0 },
                    ..RoundRobinSettings::default()
                }),
            },
        }
    }

    /// Seats per match, for a game of `seat_range` seats (fewest, most).
    pub fn seats(&self, seat_range: (usize, usize)) -> usize {
        self.common.seats.unwrap_or(seat_range.0)
    }

    /// Whether `game`, of `seat_range` seats, can be played this way; the
    /// error says why not.
    pub fn check(&self, game: &str, seat_range: (usize, usize)) -> Result<(), String> {
        let (lo, hi) = seat_range;
        let seats = self.seats(seat_range);
        if seats < lo || seats > hi {
            return Err(format!("{game} is played by {lo} to {hi} bots, not {seats}"));
        }
        if matches!(self.format, Format::Neighbours(_)) && seats != 2 {
            return Err(format!("a neighbours ladder plays two bots a match, not {seats}"));
        }
        self.format.check_bounds()
    }
}

/// The most of each count a host may ask for. Each bounds what the
/// scheduler builds in one step (a round robin's whole schedule, the
/// matches queued to fill a concurrency), so a typo such as
/// `"rounds": 4000000000` is refused instead of exhausting the server's
/// memory; each is far above what a ladder needs.
pub const MAX_ROUNDS: u32 = 100;
pub const MAX_SWISS_ROUNDS: u32 = 64;
pub const MAX_CONCURRENCY: u32 = 1000;
pub const MAX_GAMES_PER_NEIGHBOUR: u32 = 1000;
pub const MAX_NEWCOMER_GAMES: u32 = 10_000;

impl Format {
    fn check_bounds(&self) -> Result<(), String> {
        fn within(name: &str, v: u32, lo: u32, hi: u32) -> Result<(), String> {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} must be {lo} to {hi}, not {v}"))
            }
        }
        match self {
            Format::Rated(s) => {
                within("concurrency", s.concurrency, 1, MAX_CONCURRENCY)?;
                within("newcomer_games", s.newcomer_games, 0, MAX_NEWCOMER_GAMES)
            }
            Format::RoundRobin(s) => within("rounds", s.rounds, 1, MAX_ROUNDS),
            Format::Neighbours(s) => {
                within("concurrency", s.concurrency, 1, MAX_CONCURRENCY)?;
                within("games_per_neighbour", s.games_per_neighbour, 1, MAX_GAMES_PER_NEIGHBOUR)
            }
            Format::Swiss(s) => s.rounds.map_or(Ok(()), |r| within("rounds", r, 1, MAX_SWISS_ROUNDS)),
        }
    }
}

impl Format {
    /// A format with its default settings, by name.
    pub fn default_of(name: FormatName) -> Format {
        match name {
            FormatName::Rated => Format::Rated(RatedSettings::default()),
            FormatName::RoundRobin => Format::RoundRobin(RoundRobinSettings::default()),
            FormatName::Neighbours => Format::Neighbours(NeighboursSettings::default()),
            FormatName::Swiss => Format::Swiss(SwissSettings::default()),
        }
    }

    /// Its default settings, as the API shows them.
    pub fn default_settings(name: FormatName) -> Value {
        Format::default_of(name).settings_json()
    }
}

fn common_keys() -> Vec<&'static str> {
    vec!["seats", "max_turns", "max_match_seconds", "skip_validation", "bot_data", "bot_data_max_bytes", "bot_data_max_files"]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_name_parses_and_round_trips() {
        for name in FormatName::ALL {
            let f = Format::default_of(name);
            assert_eq!(f.kind(), name);
            assert_eq!(f.name().parse::<FormatName>(), Ok(name));
            assert_eq!(serde_json::to_value(name).unwrap(), json!(f.name()), "serde names it as it is stored");
            assert_eq!(serde_json::from_value::<FormatName>(json!(f.name())).unwrap(), name);
            let cfg =
                LadderConfig { common: CommonSettings { seats: Some(2), max_turns: Some(9), ..CommonSettings::default() }, format: f };
            let (n, stored) = cfg.to_stored();
            assert_eq!(LadderConfig::parse(n, &stored).unwrap(), cfg);
        }
    }

    /// The common keys are exactly the fields of [`CommonSettings`].
    #[test]
    fn common_keys_are_the_common_fields() {
        let v = serde_json::to_value(CommonSettings {
            skip_validation: true,
            bot_data: true,
            bot_data_max_bytes: Some(1),
            bot_data_max_files: Some(1),
            ..CommonSettings::default()
        })
        .unwrap();
        let mut fields: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut keys = common_keys();
        fields.sort_unstable();
        keys.sort_unstable();
        assert_eq!(fields, keys);
    }

    #[test]
    fn bot_data_is_off_unless_asked_and_its_quota_bounded() {
        let quota = |v: Value| LadderConfig::parse("rated", &v).and_then(|c| c.common.data_quota());
        assert_eq!(quota(json!({})), Ok(None));
        assert_eq!(quota(json!({"bot_data": true})), Ok(Some(DataQuota::default())));
        assert_eq!(
            quota(json!({"bot_data": true, "bot_data_max_bytes": 4096, "bot_data_max_files": 3})),
            Ok(Some(DataQuota { max_bytes: 4096, max_files: 3 }))
        );
        assert!(quota(json!({"bot_data": true, "bot_data_max_bytes": 0})).unwrap_err().contains("1 to 67108864"));
        assert!(quota(json!({"bot_data": true, "bot_data_max_files": 10001})).unwrap_err().contains("files must be 1 to 10000"));
        assert!(quota(json!({"bot_data_max_files": 3})).unwrap_err().contains("need \"bot_data\": true"));
        // Round trip through the stored form; absent when off.
        let on = LadderConfig::parse("rated", &json!({"bot_data": true, "bot_data_max_files": 3})).unwrap();
        assert_eq!(LadderConfig::parse("rated", &on.to_stored().1).unwrap(), on);
        assert!(LadderConfig::parse("rated", &json!({})).unwrap().to_stored().1.get("bot_data").is_none());
        assert!(LadderConfig::default_for(GameKind::Slime).common.bot_data, "Slime's seed offers it");
        assert!(!LadderConfig::default_for(GameKind::Snake).common.bot_data);
    }

    #[test]
    fn bad_settings_say_what_the_format_takes() {
        let e = LadderConfig::parse("rated", &json!({"rounds": 2})).unwrap_err();
        assert!(e.contains("unknown field `rounds`") && e.contains("newcomer_games") && e.contains("seats"), "{e}");
        let e = LadderConfig::parse("knockout", &json!({})).unwrap_err();
        assert!(e.contains("unknown format") && e.contains("swiss"), "{e}");
        let e = serde_json::from_value::<FormatName>(json!("knockout")).unwrap_err().to_string();
        assert!(e.contains("unknown format \"knockout\"; use rated, round_robin"), "{e}");
        assert!(LadderConfig::parse("rated", &json!([])).is_err());
        let e = LadderConfig::with_request(&LadderConfig::default_for(GameKind::Flit), Some(FormatName::Neighbours), None)
            .unwrap()
            .check("flit", GameKind::Flit.seat_range());
        assert!(e.unwrap_err().contains("two bots"));
    }

    /// Counts past what the scheduler can build in one step are refused
    /// by name; the defaults and the edges pass.
    #[test]
    fn counts_are_bounded() {
        let snake = LadderConfig::default_for(GameKind::Snake);
        let cases: &[(FormatName, Value, Option<&str>)] = &[
            (FormatName::RoundRobin, json!({}), None),
            (FormatName::RoundRobin, json!({"rounds": 100}), None),
            (FormatName::RoundRobin, json!({"rounds": 4000000000u32}), Some("rounds must be 1 to 100, not 4000000000")),
            (FormatName::RoundRobin, json!({"rounds": 0}), Some("rounds must be 1 to 100, not 0")),
            (FormatName::Rated, json!({"concurrency": 1000, "newcomer_games": 0}), None),
            (FormatName::Rated, json!({"concurrency": 1001}), Some("concurrency must be 1 to 1000, not 1001")),
            (FormatName::Rated, json!({"concurrency": 0}), Some("concurrency must be 1 to 1000, not 0")),
            (FormatName::Rated, json!({"newcomer_games": 10001}), Some("newcomer_games must be 0 to 10000")),
            (FormatName::Neighbours, json!({"games_per_neighbour": 1001}), Some("games_per_neighbour must be 1 to 1000")),
            (FormatName::Neighbours, json!({"concurrency": 4294967295u32}), Some("concurrency must be 1 to 1000")),
            (FormatName::Swiss, json!({}), None),
            (FormatName::Swiss, json!({"rounds": 64}), None),
            (FormatName::Swiss, json!({"rounds": 65}), Some("rounds must be 1 to 64, not 65")),
        ];
        for (name, settings, want) in cases {
            let got = LadderConfig::with_request(&snake, Some(*name), Some(settings)).unwrap().check("snake", (2, 2));
            match want {
                None => assert_eq!(got, Ok(()), "{name} {settings}"),
                Some(w) => assert!(got.as_ref().is_err_and(|e| e.contains(w)), "{name} {settings}: {got:?}"),
            }
        }
    }

    #[test]
    fn a_request_changes_the_format_or_the_given_fields_only() {
        let snake = LadderConfig::default_for(GameKind::Snake);
        let same = LadderConfig::with_request(&snake, None, Some(&json!({"rounds": 3}))).unwrap();
        assert_eq!(same.common, snake.common);
        assert!(matches!(same.format, Format::RoundRobin(RoundRobinSettings { rounds: 3, .. })));
        let swiss = LadderConfig::with_request(&snake, Some(FormatName::Swiss), Some(&json!({"rounds": 4, "max_turns": 50}))).unwrap();
        assert_eq!(swiss.format, Format::Swiss(SwissSettings { rounds: Some(4) }));
        assert_eq!((swiss.common.seats, swiss.common.max_turns), (Some(2), Some(50)));
    }

    fn bot(id: i64, ready: bool) -> LadderBot {
        LadderBot { id, name: format!("b{id}"), ready, rating: None, in_flight: 0 }
    }

    fn finished(seats: &[i64], ranks: &[u32], round: Option<u32>) -> MatchRecord {
        MatchRecord { seats: seats.to_vec(), results: Some(ranks.iter().map(|k| (*k, 0.0)).collect()), round }
    }

    #[test]
    fn rated_fills_to_its_concurrency_spreading_bots() {
        let f = Format::Rated(RatedSettings { concurrency: 3, newcomer_games: 0, ..RatedSettings::default() });
        let state = LadderState { bots: (1..=6).map(|i| bot(i, true)).collect(), matches: vec![], queued: 1 };
        let ms = f.next_matches(&state, 2, &mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
        assert_eq!(ms.len(), 2);
        assert!(ms.iter().all(|m| m.rated && m.seats.len() == 2));
        let mut all: Vec<i64> = ms.iter().flat_map(|m| m.seats.clone()).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 4, "the second match goes to the bots that have none in flight: {ms:?}");
    }

    #[test]
    fn round_robin_adds_only_what_is_missing_and_skips_bots_not_ready() {
        let f = Format::RoundRobin(RoundRobinSettings::default());
        let mut state = LadderState { bots: vec![bot(1, true), bot(2, true), bot(3, true), bot(4, false)], ..Default::default() };
        state.matches.push(finished(&[1, 2], &[1, 2], None));
        let ms = f.next_matches(&state, 2, &mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
        assert_eq!(ms.len(), 5, "3 bots on both sides is 6, one played: {ms:?}");
        assert!(ms.iter().all(|m| !m.seats.contains(&4) && m.seats != vec![1, 2]));
        let table = f.standings(&state);
        assert_eq!(table.rows[0].bot, 1);
        assert_eq!(table.rows[0].values["points"], 2.0);
        assert_eq!(table.rows.len(), 3, "a bot without a ready version is not ranked (it was listed, with no games)");
    }

    #[test]
    fn neighbours_respects_concurrency_and_ranks_by_won_share() {
        let f = Format::Neighbours(NeighboursSettings { concurrency: 2, games_per_neighbour: 2 });
        let mut state = LadderState { bots: (1..=3).map(|i| bot(i, true)).collect(), queued: 1, ..Default::default() };
        state.matches.push(finished(&[2, 1], &[1, 2], None));
        assert_eq!(f.next_matches(&state, 2, &mut rand_chacha::ChaCha8Rng::seed_from_u64(1)).len(), 1);
        let table = f.standings(&state);
        assert_eq!((table.rows[0].bot, table.rows[0].values["rating"].as_f64()), (2, Some(100.0)));
        assert_eq!(table.columns.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["rating", "as_first", "as_second", "games"]);
    }

    #[test]
    fn rated_standings_list_bots_with_a_rating_best_first() {
        let mut a = bot(1, true);
        a.rating = Some((Rating { mu: 30.0, sigma: 1.0 }, 12));
        let mut b = bot(2, true);
        b.rating = Some((Rating { mu: 40.0, sigma: 2.0 }, 12));
        let table =
            Format::Rated(RatedSettings::default()).standings(&LadderState { bots: vec![a, b, bot(3, true)], ..Default::default() });
        assert_eq!(table.rows.iter().map(|r| (r.rank, r.bot)).collect::<Vec<_>>(), [(1, 2), (2, 1)]);
        assert_eq!(table.rows[0].values["score"], 34.0);
    }

    /// A bot with no ready version (never compiled, or refused) is in no
    /// format's standings: not ranked, not counted.
    #[test]
    fn no_format_ranks_a_bot_that_cannot_play() {
        let mut rated = bot(3, false);
        rated.rating = Some((Rating { mu: 50.0, sigma: 1.0 }, 3));
        let mut a = bot(1, true);
        a.rating = Some((Rating { mu: 30.0, sigma: 1.0 }, 12));
        let mut b = bot(2, true);
        b.rating = Some((Rating { mu: 20.0, sigma: 1.0 }, 12));
        let state = LadderState {
            bots: vec![a, b, rated, bot(4, false)],
            matches: vec![finished(&[1, 2], &[1, 2], Some(1)), finished(&[2, 1], &[2, 1], Some(1))],
            ..Default::default()
        };
        for name in FormatName::ALL {
            let table = Format::default_of(name).standings(&state);
            let mut ranked: Vec<i64> = table.rows.iter().map(|r| r.bot).collect();
            ranked.sort_unstable();
            assert_eq!(ranked, [1, 2], "{name}: {table:?}");
        }
    }
}
