//! `koth ab --bot BOT NEW OLD`: "is version #NEW of my bot better than
//! #OLD?", asked of a server (docs/ab.md). The server plays the pairs as
//! unrated matches within the owner's share of its runners and keeps the
//! test's tally, statistic and verdict with the versions; this follows it
//! and prints each pair as it is counted.

use std::time::Duration;

use anyhow::Context;
use koth_scheduler::types::{AbState, AbTest};
use serde_json::json;

use super::client::{Client, ServerArgs};

/// What the server is asked.
pub struct ServerAb<'a> {
    pub server: &'a ServerArgs,
    pub bot: i64,
    /// (new, old) version numbers; none: list the bot's tests.
    pub versions: Option<(String, String)>,
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub max_games: Option<u64>,
    pub wait: bool,
    pub json: bool,
}

/// A version number as the bot page shows it: `3` or `#3`.
fn number(arg: &str, which: &str) -> anyhow::Result<i32> {
    arg.trim_start_matches('#')
        .parse::<i32>()
        .ok()
        .filter(|n| *n >= 1)
        .with_context(|| format!("{which} {arg:?}: with --bot, give the version's number on the bot's page (e.g. 3 or #3), not a file"))
}

/// How often the test's state is read while it runs.
const POLL: Duration = Duration::from_secs(1);

pub fn run(a: ServerAb) -> anyhow::Result<i32> {
    let c = Client::new(a.server)?;
    let Some((new, old)) = &a.versions else {
        let tests: Vec<AbTest> = c.get(&format!("/api/bots/{}/ab", a.bot))?;
        if a.json {
            println!("{}", serde_json::to_string_pretty(&tests)?);
        } else if tests.is_empty() {
            println!("bot {} has no A/B tests on {}", a.bot, c.base);
        }
        if !a.json {
            for t in &tests {
                println!("{}", summary(t));
            }
        }
        return Ok(0);
    };
    let (new, old) = (number(new, "NEW")?, number(old, "OLD")?);
    let mut body = json!({"new": new, "old": old, "elo0": a.elo0, "elo1": a.elo1, "alpha": a.alpha, "beta": a.beta});
    if let Some(games) = a.max_games {
        body["max_pairs"] = json!(games.div_ceil(2));
    }
    let mut t: AbTest = c.post(&format!("/api/bots/{}/ab", a.bot), Some(&body))?;
    let say = |line: String| if a.json { eprintln!("{line}") } else { println!("{line}") };
    say(format!(
        "A/B test {} on {}: bot {} version #{} against #{}, {} seats, pairs of unrated games on one seed with the seats swapped",
        t.id, c.base, t.bot, t.new_number, t.old_number, t.seats
    ));
    say(format!(
        "H0: NEW {:+} Elo; H1: NEW {:+} Elo; alpha {}, beta {}; the test ends at LLR <= {:.2} (not better) or >= {:.2} (better), \
         or after {} pairs; its page: {}/bots/{}",
        t.elo0, t.elo1, t.alpha, t.beta, t.lower, t.upper, t.max_pairs, c.base, t.bot
    ));
    if !a.wait {
        say(format!("started; `koth ab --bot {}` shows where it stands", t.bot));
        if a.json {
            println!("{}", serde_json::to_string_pretty(&t)?);
        }
        return Ok(0);
    }
    let mut shown = 0;
    loop {
        if t.pairs > shown {
            shown = t.pairs;
            say(format!(
                "pairs {:>4}  score {:.1}%  elo {}  LLR {:.2} [{:.2}, {:.2}]",
                t.pairs,
                100.0 * t.score,
                t.elo.map(|e| format!("{:+.0}", e.round() + 0.0)).unwrap_or_else(|| if t.score >= 1.0 { "+inf" } else { "-inf" }.into()),
                t.llr,
                t.lower,
                t.upper
            ));
        }
        if t.state != AbState::Running {
            break;
        }
        std::thread::sleep(POLL);
        t = c.get(&format!("/api/ab/{}", t.id))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&t)?);
    }
    say(summary(&t));
    Ok(match t.state {
        AbState::Better => 0,
        AbState::NotBetter => 1,
        AbState::Undecided => 3,
        AbState::Running => unreachable!("followed until it ended"),
        AbState::Stopped => {
            anyhow::bail!("A/B test {} stopped without a verdict: {}", t.id, t.error.as_deref().unwrap_or("no reason given"))
        }
    })
}

/// One line: the versions, the verdict (or the state) and the tally.
fn summary(t: &AbTest) -> String {
    let verdict = match t.state {
        AbState::Running => "running".to_owned(),
        AbState::Better => "verdict: better".to_owned(),
        AbState::NotBetter => "verdict: not better".to_owned(),
        AbState::Undecided => "verdict: undecided: the pairs allowed were played first".to_owned(),
        AbState::Stopped => format!("stopped: {}", t.error.as_deref().unwrap_or("no reason given")),
    };
    format!(
        "test {}: #{} against #{}: {verdict} after {} games ({} pairs): NEW scored {:.1}%, LLR {:.2} [{:.2}, {:.2}]",
        t.id,
        t.new_number,
        t.old_number,
        2 * t.pairs,
        t.pairs,
        100.0 * t.score,
        t.llr,
        t.lower,
        t.upper
    )
}
