//! `koth ab NEW OLD`: "is my new version better?", answered on this
//! machine. NEW and OLD play pairs of games on one seed with their seats
//! swapped, with the engine of `koth match`, until the sequential test of
//! `koth_ladder::sprt` says better or not better at the stated error
//! rates, or the games allowed are played (docs/ab.md). With `--bot` the
//! same question is asked of a server about two versions of a bot there
//! (`ab_server.rs`).

use std::path::PathBuf;

use clap::Args;
use koth_games::replay::EndedBy;
use koth_ladder::sprt::{self, GameScore, Hypothesis, Sprt, Status, Verdict};

use super::match_cmd::{prepare, EngineArgs};

#[derive(Args)]
pub struct AbArgs {
    /// The game: flit, slime, linkage, target or snake, or the folder of an
    /// external game (as `koth match` takes it). Not with --bot: the bot's
    /// ladder says.
    #[arg(long, required_unless_present = "bot", conflicts_with = "bot")]
    game: Option<String>,
    /// Ask the server (--server, or the one `koth login` saved) instead:
    /// BOT is the id of your bot there and NEW and OLD its version numbers
    /// (#N on its page). The server plays the pairs as unrated matches
    /// within your share of its runners and keeps the verdict with the
    /// versions. Without NEW and OLD: the bot's tests and where they stand.
    #[arg(long, value_name = "BOT")]
    bot: Option<i64>,
    /// With --bot: start the test and return at once (`koth ab --bot BOT`
    /// shows where it stands).
    #[arg(long, requires = "bot")]
    no_wait: bool,
    #[command(flatten)]
    server: super::client::ServerArgs,
    /// Seats of each game (default: the game's smallest, at least 2): NEW
    /// and OLD take turns in them, and swap in the pair's second game.
    /// Not with --bot: the bot's ladder says.
    #[arg(long, conflicts_with = "bot")]
    players: Option<usize>,
    /// Seed of the first pair; pair k plays on seed + k (default: from the
    /// clock). Each game can be played again with `koth match --seed`.
    /// Not with --bot: the server draws it, and each game's page shows it.
    #[arg(long, conflicts_with = "bot")]
    seed: Option<u64>,
    /// H0, in logistic Elo: NEW is this much better than OLD (0: no better).
    #[arg(long, default_value_t = sprt::DEFAULT_ELO0, allow_hyphen_values = true)]
    elo0: f64,
    /// H1, in logistic Elo: NEW is this much better, the effect worth
    /// finding. The nearer to elo0, the more games the test takes.
    #[arg(long, default_value_t = sprt::DEFAULT_ELO1, allow_hyphen_values = true)]
    elo1: f64,
    /// The chance of saying "better" when H0 holds.
    #[arg(long, default_value_t = sprt::DEFAULT_ALPHA)]
    alpha: f64,
    /// The chance of saying "not better" when H1 holds.
    #[arg(long, default_value_t = sprt::DEFAULT_BETA)]
    beta: f64,
    /// Games to play at most (two a pair); then the test ends undecided
    /// (default: 2000 on this machine; 400 on a server, at most 2000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..))]
    max_games: Option<u64>,
    /// Print the final result as JSON (the running lines go to stderr).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    engine: EngineArgs,
    /// The new version: a source file, archive or folder, as `koth match`
    /// takes a bot (with --bot: its version number).
    #[arg(required_unless_present = "bot")]
    new: Option<PathBuf>,
    /// The version to beat, the same way.
    #[arg(required_unless_present = "bot", requires = "new")]
    old: Option<PathBuf>,
}

/// Pairs in a row whose referee failed after which the test stops.
const MAX_REFEREE_FAILURES_IN_A_ROW: u32 = 3;
/// Tries of one pair on a machine too busy to time the bots fairly, each
/// after a longer pause, before the test stops.
const MAX_BUSY_TRIES: u32 = 8;

/// Why a pair has no result.
enum Unscored {
    /// The referee failed: its game has no result, and playing the seed
    /// again would fail the same way; the next pair is played.
    RefereeFailed(String),
    /// The machine was too busy to time the bots fairly: the same pair is
    /// played again after a pause.
    Busy(String),
}

/// Exit codes: 0 better, 1 not better, 3 undecided when the games allowed
/// were played (2 is clap's, for arguments it refuses); an error (a bot
/// that does not build, a machine too busy to time the bots fairly) is
/// [`super::EXIT_SETUP_FAILED`], as for every command.
pub fn run(a: AbArgs) -> anyhow::Result<i32> {
    let hypothesis = Hypothesis::new(a.elo0, a.elo1, a.alpha, a.beta).map_err(|e| anyhow::anyhow!("--elo0/--elo1/--alpha/--beta: {e}"))?;
    if let Some(bot) = a.bot {
        let versions = a.new.as_ref().zip(a.old.as_ref()).map(|(n, o)| (n.display().to_string(), o.display().to_string()));
        return super::ab_server::run(super::ab_server::ServerAb {
            server: &a.server,
            bot,
            versions,
            elo0: a.elo0,
            elo1: a.elo1,
            alpha: a.alpha,
            beta: a.beta,
            max_games: a.max_games,
            wait: !a.no_wait,
            json: a.json,
        });
    }
    let (Some(game), Some(new_path), Some(old_path)) = (a.game.as_deref(), a.new.as_ref(), a.old.as_ref()) else {
        anyhow::bail!("give --game GAME NEW OLD to play here, or --bot BOT NEW OLD to ask a server");
    };
    let max_games = a.max_games.unwrap_or(sprt::DEFAULT_MAX_GAMES);
    let builder = a.engine.builder();
    let game = koth_runner::Game::find(game, &builder).map_err(|e| anyhow::anyhow!("--game: {e}"))?;
    let (lo, hi) = game.seat_range();
    let seats = a.players.unwrap_or(lo.max(2));
    if seats < lo || seats > hi || seats < 2 {
        anyhow::bail!(
            "--players {seats}: {} is played by {}{}",
            game.name(),
            if lo == hi { format!("exactly {lo} bots") } else { format!("{lo} to {hi} bots") },
            if seats < 2 { ", and NEW and OLD need two seats at least" } else { "" }
        );
    }
    let seed = a.seed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        t.as_nanos() as u64 ^ (std::process::id() as u64) << 32
    });
    let sandbox = a.engine.sandbox();
    let new = prepare(&builder, new_path)?;
    let old = prepare(&builder, old_path)?;
    // The first game seats NEW, OLD, NEW, ...; the second OLD, NEW, OLD, ...
    let is_new = |game_of_pair: usize, seat: usize| (seat + game_of_pair).is_multiple_of(2);
    let comparisons = (seats.div_ceil(2) * (seats / 2)) as u32;
    let mut test = Sprt::new(hypothesis, max_games, comparisons);

    let (s0, s1) = hypothesis.scores();
    let bounds = hypothesis.bounds();
    let say = |line: String| if a.json { eprintln!("{line}") } else { println!("{line}") };
    say(format!(
        "{} NEW {} against OLD {}, {seats} seats, pairs of games on one seed with the seats swapped, from seed {seed}",
        game.name(),
        new_path.display(),
        old_path.display()
    ));
    say(format!(
        "H0: NEW {:+} Elo (score {s0:.3}); H1: NEW {:+} Elo (score {s1:.3}); alpha {}, beta {}; \
         the test ends at LLR <= {:.2} (not better) or >= {:.2} (better), or after {} games",
        a.elo0, a.elo1, a.alpha, a.beta, bounds.lower, bounds.upper, max_games
    ));
    let (mut referee_failures, mut busy) = (0, 0);
    let mut pair = 0u64;
    let status = loop {
        let pair_seed = seed.wrapping_add(pair);
        let mut scores = Vec::with_capacity(2);
        let mut unscored = None;
        for g in 0..2 {
            let bots = (0..seats).map(|s| if is_new(g, s) { new.clone() } else { old.clone() }).collect();
            let report = koth_runner::play(&a.engine.options(&game, pair_seed, &sandbox), bots).map_err(|e| anyhow::anyhow!(e))?;
            match &report.ended_by {
                EndedBy::RefereeFailed { reason } => {
                    unscored = Some(Unscored::RefereeFailed(reason.clone()));
                    break;
                }
                EndedBy::HostOverloaded { reason, .. } => {
                    unscored = Some(Unscored::Busy(reason.clone()));
                    break;
                }
                _ => {}
            }
            let ranks = |new_side: bool| -> Vec<usize> {
                report.outcomes.iter().filter(|o| is_new(g, o.seat) == new_side).map(|o| o.rank).collect()
            };
            let score = GameScore::from_ranks(&ranks(true), &ranks(false))
                .ok_or_else(|| anyhow::anyhow!("the engine's report of seed {pair_seed} lacks NEW's or OLD's seats"))?;
            scores.push(score);
        }
        let counted = test.status();
        let stop = |why: String| {
            anyhow::anyhow!(
                "{why}; the test stops undecided after {} games counted (LLR {:.2} within [{:.2}, {:.2}])",
                counted.games,
                counted.llr,
                counted.bounds.lower,
                counted.bounds.upper
            )
        };
        match unscored {
            Some(Unscored::RefereeFailed(reason)) => {
                pair += 1;
                referee_failures += 1;
                say(format!("pair {pair:>4}  seed {pair_seed}: not counted: the referee failed, so the game has no result: {reason}"));
                if referee_failures >= MAX_REFEREE_FAILURES_IN_A_ROW {
                    return Err(stop(format!("the referee failed in {referee_failures} pairs in a row")));
                }
                continue;
            }
            Some(Unscored::Busy(reason)) => {
                busy += 1;
                if busy >= MAX_BUSY_TRIES {
                    return Err(stop(format!(
                        "this machine was too busy to time the bots fairly in {busy} tries of pair {} ({reason}); \
                         run the test when it is quieter",
                        pair + 1
                    )));
                }
                let pause = std::time::Duration::from_secs(1 << busy.min(5));
                say(format!(
                    "pair {:>4}  seed {pair_seed}: this machine was too busy to time the bots fairly ({reason}); \
                     playing the pair again in {} s",
                    pair + 1,
                    pause.as_secs()
                ));
                std::thread::sleep(pause);
                continue;
            }
            None => (referee_failures, busy) = (0, 0),
        }
        pair += 1;
        let verdict = test.record(scores[0], scores[1])?;
        let s = test.status();
        say(format!(
            "pair {pair:>4}  seed {pair_seed}  NEW {} then {}  score {} of {} ({:.1}%)  elo {}  LLR {:.2} [{:.2}, {:.2}]",
            game_words(scores[0], seats),
            game_words(scores[1], seats),
            points(s.points),
            s.games,
            100.0 * s.score,
            elo_words(&s),
            s.llr,
            s.bounds.lower,
            s.bounds.upper
        ));
        if verdict.is_final() {
            break s;
        }
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&AbResult { hypothesis, seed, status, counts: test.counts().to_vec() })?);
    }
    say(format!(
        "verdict: {} after {} games ({} pairs): NEW scored {} of {} against OLD ({:.1}%), elo {}, LLR {:.2} {}",
        status.verdict.words(),
        status.games,
        status.pairs,
        points(status.points),
        status.games,
        100.0 * status.score,
        elo_words(&status),
        status.llr,
        match status.verdict {
            Verdict::Better => format!(">= {:.2}", status.bounds.upper),
            Verdict::NotBetter => format!("<= {:.2}", status.bounds.lower),
            _ => format!("within [{:.2}, {:.2}]", status.bounds.lower, status.bounds.upper),
        }
    ));
    Ok(match status.verdict {
        Verdict::Better => 0,
        Verdict::NotBetter => 1,
        Verdict::BudgetSpent | Verdict::Continue => 3,
    })
}

/// What `--json` prints: the test, where it started and where it ended.
#[derive(serde::Serialize)]
struct AbResult {
    hypothesis: Hypothesis,
    seed: u64,
    #[serde(flatten)]
    status: Status,
    /// Pairs per pair score, from 0 (every comparison lost) up.
    counts: Vec<u64>,
}

/// A game's result for NEW: win, draw or loss with two seats, else its
/// points of the game's one.
fn game_words(score: GameScore, seats: usize) -> String {
    if seats == 2 {
        ["loss", "draw", "win"][score.half_points as usize].to_owned()
    } else {
        format!("{:.2}", score.score())
    }
}

fn points(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

fn elo_words(s: &Status) -> String {
    // Rounded first, so that -0.3 reads "+0", not "-0".
    let e = |x: f64| format!("{:+.0}", x.round() + 0.0);
    match (s.elo, s.elo_95) {
        (Some(x), Some((lo, hi))) => format!("{} [{}, {}]", e(x), e(lo), e(hi)),
        (Some(x), None) => e(x),
        (None, _) if s.score >= 1.0 => "+inf".to_owned(),
        (None, _) => "-inf".to_owned(),
    }
}
