//! Submitting a bot or a new version of it: which requests are refused,
//! and why, before the version is stored.
//!
//! Two decisions, on either side of reading the upload (seconds for a
//! large archive): [`admit`] before it (the name, the ladder, its
//! deadline, the file's name, the account's limits as they stand), and
//! [`language_runs`] after it (whether this server's runners run the
//! language the upload is in). The submission rules of the upload itself
//! are koth-runner's (`Submission::from_upload`); the limits are checked
//! again by the transaction that stores the version (`db::store::submit`),
//! which can refuse for the same reasons ([`Refusal`] words them all).

use std::collections::BTreeMap;

use koth_ladder::quota::{self, OverLimit, SubmissionLimits, SubmissionUsage};
use koth_runner::language::Language;
use koth_scheduler::db::runners::Can;

use super::{valid_name, NAME_RULE};

/// What the request asks.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub ladder: i64,
    /// The bot's name.
    pub name: &'a str,
    /// The uploaded file's name (`?file=`), whose extension picks the language.
    pub file: Option<&'a str>,
}

/// What the handler read before deciding.
#[derive(Clone, Debug)]
pub struct Facts<'a> {
    pub ladder_exists: bool,
    /// The ladder's deadline, if it has passed (UTC, as shown).
    pub closed_since: Option<&'a str>,
    /// The caller's limits and use of them; `None`: a host, not limited.
    pub quota: Option<(SubmissionLimits, &'a SubmissionUsage)>,
}

/// Why a submission is refused, in words for its author.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// The bot's name breaks [`NAME_RULE`].
    #[error("{NAME_RULE}")]
    BadName,
    #[error("ladder {0} does not exist")]
    NoLadder(i64),
    /// The ladder's deadline has passed.
    #[error(
        "submissions to this ladder closed at its deadline, {deadline}; the versions ready then play on (the ladder's page \
         shows its contest: /ladders/{ladder})"
    )]
    Closed { ladder: i64, deadline: String },
    #[error("say the file's name: ?file=bot.py (its extension picks the language; archives: .tar, .tar.gz, .zip)")]
    NoFileName,
    /// Over one of the account's limits.
    #[error("{}", .0.message)]
    OverLimit(OverLimit),
    /// A bot of this name on this ladder is someone else's.
    #[error("this bot belongs to someone else; choose another name")]
    NotYours,
    /// No runner of this server runs the upload's language.
    #[error("{language} bots cannot be run on this server: {why}. Submit in a language it runs: {runs}")]
    LanguageNotRun { language: String, why: String, runs: String },
}

/// Whether the request may go on to its upload being read, in the order a
/// client is told (the first refusal wins); the file's name if so.
pub fn admit<'a>(req: &Request<'a>, facts: &Facts) -> Result<&'a str, Refusal> {
    if !valid_name(req.name) {
        return Err(Refusal::BadName);
    }
    if !facts.ladder_exists {
        return Err(Refusal::NoLadder(req.ladder));
    }
    if let Some(deadline) = facts.closed_since {
        return Err(Refusal::Closed { ladder: req.ladder, deadline: deadline.to_owned() });
    }
    let file = req.file.ok_or(Refusal::NoFileName)?;
    // A quick look before the upload is read: it refuses at once what is
    // over a limit already (the upload's size is not known yet).
    if let Some((limits, usage)) = &facts.quota {
        quota::check_submission(limits, usage, None).map_err(Refusal::OverLimit)?;
    }
    Ok(file)
}

/// Whether `language` can be run here, by what the runners reported
/// (`None`: no runner reported yet, so nothing is refused); the refusal
/// lists the languages of `all` that can.
pub fn language_runs(language: &Language, known: Option<&BTreeMap<String, Can>>, all: &[Language]) -> Result<(), Refusal> {
    let Some(Can::Err(why)) = language_can(known, language) else { return Ok(()) };
    let runs: Vec<&str> = all.iter().filter(|l| matches!(language_can(known, l), Some(Can::Ok(_)))).map(|l| l.name.as_str()).collect();
    let runs = if runs.is_empty() { "none yet".to_owned() } else { runs.join(", ") };
    Err(Refusal::LanguageNotRun { language: language.display.clone(), why, runs })
}

/// What the runners reported of `lang` (`None`: none reported anything);
/// a language none of them reported cannot be run.
pub fn language_can(known: Option<&BTreeMap<String, Can>>, lang: &Language) -> Option<Can> {
    let known = known?;
    Some(
        known
            .get(&lang.name)
            .cloned()
            .unwrap_or_else(|| Can::Err(format!("no runner of this server reported {} (runners older than the server?)", lang.display))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: SubmissionLimits = SubmissionLimits { compiles_queued: 8, submissions_per_hour: 30, upload_bytes_per_day: 100 << 20 };

    fn facts(usage: &SubmissionUsage) -> Facts<'_> {
        Facts { ladder_exists: true, closed_since: None, quota: Some((LIMITS, usage)) }
    }

    #[test]
    fn admit_refuses_in_order_and_names_why() {
        let fresh = SubmissionUsage::default();
        let busy = SubmissionUsage { pending: 8, ..Default::default() };
        let hourly = SubmissionUsage { last_hour: 30, hour_frees_in: 125.2, ..Default::default() };
        let ok = Request { ladder: 3, name: "bot", file: Some("bot.py") };
        let closed = Facts { closed_since: Some("2026-11-27 06:00:00"), ..facts(&fresh) };
        let absent = Facts { ladder_exists: false, ..facts(&fresh) };
        let host = Facts { quota: None, ..facts(&busy) };
        let table: [(&str, Request, Facts, Result<&str, &str>); 10] = [
            ("accepted", ok, facts(&fresh), Ok("bot.py")),
            ("a host is not limited", ok, host, Ok("bot.py")),
            ("bad name", Request { name: "..", ..ok }, facts(&fresh), Err("a name is 1 to 40")),
            // The name first: a bad name on a missing ladder is the name's fault.
            ("bad name and no ladder", Request { name: "a b", ..ok }, absent.clone(), Err("a name is 1 to 40")),
            ("no ladder", ok, absent, Err("ladder 3 does not exist")),
            ("deadline passed", ok, closed.clone(), Err("closed at its deadline, 2026-11-27 06:00:00; the versions ready then play on")),
            ("closed before the file's name", Request { file: None, ..ok }, closed, Err("closed at its deadline")),
            ("no file name", Request { file: None, ..ok }, facts(&fresh), Err("say the file's name: ?file=bot.py")),
            ("compiles queued", ok, facts(&busy), Err("8 of your versions are waiting for their compile")),
            ("versions this hour", ok, facts(&hourly), Err("you submitted 30 versions in the last hour")),
        ];
        for (what, req, facts, want) in table {
            let got = admit(&req, &facts).map_err(|e| e.to_string());
            match (got, want) {
                (Ok(file), Ok(want)) => assert_eq!(file, want, "{what}"),
                (Err(why), Err(want)) => assert!(why.contains(want), "{what}: {why:?} should say {want:?}"),
                (got, want) => panic!("{what}: {got:?}, expected {want:?}"),
            }
        }
        // Over a limit keeps its wait for the 429's Retry-After.
        let over = admit(&ok, &facts(&hourly)).unwrap_err();
        assert!(matches!(over, Refusal::OverLimit(OverLimit { retry_after_secs, .. }) if retry_after_secs == 125.2), "{over:?}");
    }

    /// What is asked, of which language, with what the runners reported, and the answer.
    type Case<'a> = (&'a str, &'a Language, Option<&'a BTreeMap<String, Can>>, Result<(), &'a str>);

    #[test]
    fn a_language_no_runner_runs_is_refused_with_those_that_run() {
        let lang = |n| koth_runner::language::by_name(n).unwrap();
        let all = [lang("python").clone(), lang("go").clone(), lang("c").clone()];
        let ok = |how: &str| Can::Ok(how.into());
        let reported: BTreeMap<String, Can> = [
            ("python".into(), ok("image 1a2b")),
            ("c".into(), ok("image 3c4d")),
            ("go".into(), Can::Err("no go image: run koth languages build".into())),
        ]
        .into();
        let none_runs: BTreeMap<String, Can> = [("go".into(), Can::Err("no image".into()))].into();
        let table: [Case; 5] = [
            ("a language a runner runs", &all[0], Some(&reported), Ok(())),
            ("no runner reported yet: nothing refused", &all[1], None, Ok(())),
            (
                "one a runner cannot run",
                &all[1],
                Some(&reported),
                Err("Go 1.19 bots cannot be run on this server: no go image: run koth languages build. Submit in a language it runs: \
                     python, c"),
            ),
            (
                "one no runner reported",
                &all[0],
                Some(&none_runs),
                Err("Python 3.11 bots cannot be run on this server: no runner of this server reported Python 3.11 (runners older than \
                     the server?). Submit in a language it runs: none yet"),
            ),
            (
                "none runs",
                &all[1],
                Some(&none_runs),
                Err("Go 1.19 bots cannot be run on this server: no image. Submit in a language it runs: none yet"),
            ),
        ];
        for (what, language, known, want) in table {
            let got = language_runs(language, known, &all).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "{what}");
        }
    }
}
