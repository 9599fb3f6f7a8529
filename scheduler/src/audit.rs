//! The audit trail, pure: what koth records for the operator (a match's or
//! a compile's outcome, a validation refusal, an automatic disable, a
//! host's action), as one typed kind, and how an entry reads, as one line
//! for the log, the `koth audit` command and the host's `/audit` page.
//!
//! The rows are written by [`crate::db`] in the transaction of the thing
//! they record (`sql/0020_audit.sql`); the action names here are the
//! table's SQL `CHECK` (`scheduler/tests/ladder.rs` compares them), the
//! API's enum and the JSON's values.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

crate::job::stored_states! {
    /// What an audit entry records (`audit.action`).
    AuditAction {
        MatchFinished = "match_finished",
        MatchFailed = "match_failed",
        MatchCancelled = "match_cancelled",
        CompileSucceeded = "compile_succeeded",
        CompileFailed = "compile_failed",
        VersionAccepted = "version_accepted",
        VersionRefused = "version_refused",
        BotAutoDisabled = "bot_auto_disabled",
        BotDisabled = "bot_disabled",
        BotEnabled = "bot_enabled",
        BotDeleted = "bot_deleted",
        LadderCreated = "ladder_created",
        LadderPaused = "ladder_paused",
        LadderResumed = "ladder_resumed",
        DeadlineSet = "deadline_set",
        FinalsStarted = "finals_started",
        GameAdded = "game_added",
        GameReady = "game_ready",
        GameRefused = "game_refused",
        AccountDeleted = "account_deleted",
    }
}

impl std::fmt::Display for AuditAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an entry is about: the ids it names (each, where it applies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subjects {
    pub ladder: Option<i64>,
    pub bot: Option<i64>,
    pub version: Option<i64>,
    pub match_id: Option<i64>,
    pub game: Option<i64>,
}

/// One entry of the audit trail, as the API serves it (`GET /api/audit`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    pub id: i64,
    /// When, RFC 3339 in UTC: the time of the transaction that did it.
    pub at: String,
    /// The account that did it; none when koth did (a runner, the scheduler).
    pub actor: Option<i64>,
    /// The account's name as it was (kept when the account is deleted),
    /// `runner <name>` for a runner, or `koth`.
    pub actor_name: String,
    pub action: AuditAction,
    /// What it is about: the ladder, bot, version, match and game, where
    /// each applies (a match's entry names its ladder too).
    pub ladder: Option<i64>,
    pub bot: Option<i64>,
    pub version: Option<i64>,
    #[serde(rename = "match")]
    pub match_id: Option<i64>,
    pub game: Option<i64>,
    /// Why, or what it changed: a reason, a compile log's first lines, a
    /// match's seats and results.
    pub why: String,
    /// The action and its subjects in words ([`describe`]).
    pub what: String,
}

impl AuditEntry {
    /// An entry read back: `what` made from the rest by [`describe`].
    pub fn new(id: i64, at: String, actor: Option<i64>, actor_name: String, action: AuditAction, s: Subjects, why: String) -> AuditEntry {
        AuditEntry {
            id,
            at,
            actor,
            actor_name,
            action,
            ladder: s.ladder,
            bot: s.bot,
            version: s.version,
            match_id: s.match_id,
            game: s.game,
            why,
            what: describe(action, &s),
        }
    }
}

/// A page of the trail, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    /// `before` for the next (older) page; none when this is the last.
    pub next_before: Option<i64>,
}

/// The action and its subjects in words: "match 40 of ladder 3 finished".
pub fn describe(action: AuditAction, s: &Subjects) -> String {
    use AuditAction::*;
    let id = |what: &str, id: Option<i64>| id.map_or_else(|| format!("a {what}"), |id| format!("{what} {id}"));
    let of_ladder = s.ladder.map(|l| format!(" of ladder {l}")).unwrap_or_default();
    let version = || match (s.version, s.bot) {
        (Some(v), Some(b)) => format!("version {v} of bot {b}"),
        (v, _) => id("version", v),
    };
    let m = || format!("{}{of_ladder}", id("match", s.match_id));
    let bot = || format!("{}{of_ladder}", id("bot", s.bot));
    let ladder = || id("ladder", s.ladder);
    let game = || id("game", s.game);
    match action {
        MatchFinished => format!("{} finished", m()),
        MatchFailed => format!("{} failed", m()),
        MatchCancelled => format!("{} cancelled", m()),
        CompileSucceeded => format!("{} compiled", version()),
        CompileFailed => format!("{} did not compile", version()),
        VersionAccepted => format!("{} passed its validation game", version()),
        VersionRefused => format!("{} refused", version()),
        BotAutoDisabled => format!("{} disabled for failing in its matches", bot()),
        BotDisabled => format!("{} disabled", bot()),
        BotEnabled => format!("{} enabled", bot()),
        BotDeleted => format!("{} deleted", bot()),
        LadderCreated => format!("{} created", ladder()),
        LadderPaused => format!("{} paused", ladder()),
        LadderResumed => format!("{} resumed", ladder()),
        DeadlineSet => format!("{}'s deadline set", ladder()),
        FinalsStarted => format!("{}'s finals started", ladder()),
        GameAdded => format!("{} added", game()),
        GameReady => format!("{} passed its validation", game()),
        GameRefused => format!("{} refused", game()),
        AccountDeleted => "account deleted".to_owned(),
    }
}

impl std::fmt::Display for AuditEntry {
    /// One line: `#12 2026-01-02T03:04:05Z host: ladder 3 paused: why`
    /// (no `: why` when there is none; line breaks in it are spaces).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{} {} {}: {}", self.id, self.at, self.actor_name, self.what)?;
        if !self.why.is_empty() {
            write!(f, ": {}", one_line(&self.why))?;
        }
        Ok(())
    }
}

/// Line breaks and tabs as spaces, so an entry stays one line of a log.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\r', '\t']).filter(|p| !p.trim().is_empty()).map(str::trim_end).collect::<Vec<_>>().join(" / ")
}

/// The longest `why` stored, in characters: a compile log or a validation
/// log is kept whole on its version; the trail keeps its start.
pub const WHY_CHARS: usize = 600;

/// `text`'s first [`WHY_CHARS`] characters, with `…` when cut.
pub fn brief(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(WHY_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// One seat of a finished match, for its entry's `why`.
#[derive(Clone, Debug, PartialEq)]
pub struct SeatLine {
    /// From 0, as stored; shown from 1, as people read seats.
    pub seat: i32,
    pub bot: String,
    pub rank: u32,
    pub score: f64,
    /// The bot's status in words; `None` when it played to the end.
    pub trouble: Option<String>,
}

/// A finished match's `why`: what kind of match, its length, and each
/// seat's bot, rank, score and (when not ok) status.
pub fn match_summary(kind: &str, turns: u32, seats: &[SeatLine]) -> String {
    let seats: Vec<String> = seats
        .iter()
        .map(|s| {
            let trouble = s.trouble.as_deref().map(|t| format!(", {t}")).unwrap_or_default();
            format!("seat {} {} rank {} (score {}{trouble})", s.seat + 1, s.bot, s.rank, s.score)
        })
        .collect();
    format!("{kind}, {turns} turns: {}", seats.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_names_are_their_serde_names_and_read_back() {
        for a in AuditAction::ALL {
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
            assert_eq!(AuditAction::from_stored(a.as_str()), Ok(*a));
            assert_eq!(a.to_string(), a.as_str());
            // Every action reads as words, whatever subjects it has.
            assert!(!describe(*a, &Subjects::default()).is_empty());
        }
        assert!(AuditAction::from_stored("match_played").unwrap_err().contains("AuditAction"));
    }

    #[test]
    fn entries_read_as_one_line() {
        let s = Subjects { ladder: Some(3), bot: Some(7), version: Some(12), match_id: None, game: None };
        assert_eq!(describe(AuditAction::CompileFailed, &s), "version 12 of bot 7 did not compile");
        assert_eq!(describe(AuditAction::BotDisabled, &s), "bot 7 of ladder 3 disabled");
        assert_eq!(describe(AuditAction::DeadlineSet, &s), "ladder 3's deadline set");
        let m = Subjects { ladder: Some(3), match_id: Some(40), ..Subjects::default() };
        assert_eq!(describe(AuditAction::MatchFinished, &m), "match 40 of ladder 3 finished");
        assert_eq!(describe(AuditAction::MatchCancelled, &Subjects::default()), "a match cancelled");
        let e = AuditEntry::new(
            9,
            "2026-01-02T03:04:05Z".into(),
            None,
            "runner box:12:0".into(),
            AuditAction::CompileFailed,
            s,
            "error: expected ';'\n  int x = 1\n\n".into(),
        );
        assert_eq!(
            e.to_string(),
            "#9 2026-01-02T03:04:05Z runner box:12:0: version 12 of bot 7 did not compile: error: expected ';' /   int x = 1"
        );
        let quiet = AuditEntry { why: String::new(), action: AuditAction::LadderPaused, what: "ladder 3 paused".into(), ..e };
        assert_eq!(quiet.to_string(), "#9 2026-01-02T03:04:05Z runner box:12:0: ladder 3 paused");
    }

    #[test]
    fn a_long_why_is_cut_on_a_character() {
        assert_eq!(brief("  short \n"), "short");
        let long = "é".repeat(WHY_CHARS + 5);
        let cut = brief(&long);
        assert_eq!(cut.chars().count(), WHY_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn a_match_summary_names_each_seat_from_one() {
        let seats = [
            SeatLine { seat: 0, bot: "ann".into(), rank: 1, score: 3.0, trouble: None },
            SeatLine { seat: 1, bot: "ben".into(), rank: 2, score: 0.5, trouble: Some("crashed on turn 5 (exit code 1)".into()) },
        ];
        assert_eq!(
            match_summary("ladder match", 12, &seats),
            "ladder match, 12 turns: seat 1 ann rank 1 (score 3); seat 2 ben rank 2 (score 0.5, crashed on turn 5 (exit code 1))"
        );
    }
}
