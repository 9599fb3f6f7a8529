//! Every starter kit plays whole matches legally: compiled in its
//! language's image and played in the sandbox with the game's own time
//! policy, against the kits of the other languages (kit i with kits i+1,
//! i+2, ... in the other seats, so each kit plays in every seat), and for
//! Target all seven in one match, two matches at a time (as a runner with
//! two cores plays them). Every match ends by the rules, and no
//! seat of any match crashed, timed out or made an invalid move. (Slime's
//! limit is soft: a late answer counts, and a JVM or Node.js started anew
//! every turn takes about 100 ms before the kit's first line runs, so late
//! answers there are reported, not refused.)
//!
//! Needs the language images (`koth languages build`; `.ci/run` builds
//! them). With CI=true a missing image fails the test.

use std::path::PathBuf;

use koth_games::replay::{EndedBy, Recorded};
use koth_games::GameKind;
use koth_runner::bot::{BotSpec, Builder, ImagePolicy};
use koth_runner::compile::ArtifactCache;
use koth_runner::engine::{play, MatchOptions};
use koth_runner::image::{ImageStatus, ImageStore};
use koth_runner::starters::{self, Starter};
use koth_runner::submission::{Submission, SubmissionLimits};
use koth_runner::BotStatus;
use koth_sandbox::SandboxConfig;

use koth_testkit::{in_ci, missing};

fn sandbox_config() -> SandboxConfig {
    koth_testkit::bot_sandbox("starters", 69000, 512 << 20, 200)
}

/// The kit compiled in its language's image; None (skipped) outside CI
/// when the image is not built.
fn compiled(b: &Builder, kit: &Starter) -> Option<BotSpec> {
    match b.store.status(kit.language) {
        ImageStatus::Ready(_) => {}
        other => {
            missing(format!("the {} image is not ready ({other:?}); run `koth languages build`", kit.language.name));
            return None;
        }
    }
    let sub = Submission::from_upload(kit.file, kit.source.as_bytes(), &SubmissionLimits::default())
        .unwrap_or_else(|e| panic!("{}/{}: {e}", kit.game, kit.file));
    let (image, c) = b.build(&sub).unwrap_or_else(|e| panic!("{}/{} does not compile: {e}", kit.game, kit.file));
    Some(BotSpec::new(format!("{}-{}", kit.game, kit.language.name), &sub, &image, &c.artifact))
}

/// Play one match; what went wrong in it, if anything.
fn faults(game: GameKind, seed: u64, bots: Vec<BotSpec>) -> Vec<String> {
    let names: Vec<String> = bots.iter().map(|b| b.name.clone()).collect();
    let opts = MatchOptions { sandbox: sandbox_config(), ..MatchOptions::new(game, seed) };
    // A match the machine failed is played again, as the service does.
    let played = koth_testkit::again_while_overloaded(
        || play(&opts, bots.clone()),
        |r| match r {
            Ok(r) => match &r.ended_by {
                EndedBy::HostOverloaded { reason, .. } => Some(reason.clone()),
                _ => None,
            },
            Err(_) => None,
        },
    );
    let report = match played {
        Ok(r) => r,
        Err(e) => return vec![format!("{} {names:?}: {e}", game.name())],
    };
    let soft = matches!(game.time_policy().on_timeout, koth_games::OnTimeout::Soft { .. });
    let mut out = Vec::new();
    if report.ended_by != EndedBy::Rules {
        out.push(format!("{} {names:?} seed {seed}: ended by {:?} after {} turns", game.name(), report.ended_by, report.turns));
    }
    for o in &report.outcomes {
        if o.status != BotStatus::Ok || (o.timeouts > 0 && !soft) || o.invalid_moves > 0 {
            out.push(format!(
                "{} seed {seed}: {} in seat {}: {} ({} timeouts, {} invalid moves); its stderr ends {:?}",
                game.name(),
                o.name,
                o.seat,
                o.status.describe(),
                o.timeouts,
                o.invalid_moves,
                &o.stderr[o.stderr.len().saturating_sub(600)..]
            ));
        }
    }
    // Soft or not, no answer may be lost (a soft limit's hard cut-off).
    let lost =
        report.replay.read().unwrap().turns.iter().flat_map(|t| &t.answers).filter(|a| !matches!(a.reply, Recorded::Answer { .. })).count();
    if lost > 0 {
        out.push(format!("{} {names:?} seed {seed}: {lost} requests got no answer", game.name()));
    }
    let slowest = report.outcomes.iter().map(|o| (o.max_move_ms, o.name.as_str())).fold((0.0, ""), |a, b| if b.0 > a.0 { b } else { a });
    let late: u32 = report.outcomes.iter().map(|o| o.timeouts).sum();
    eprintln!("{} {names:?}: {} turns, slowest move {:.1} ms ({}), {late} late", game.name(), report.turns, slowest.0, slowest.1);
    out
}

#[test]
fn every_starter_kit_plays_whole_legal_matches() {
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("starters-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let b = Builder {
        policy: ImagePolicy::Images,
        store: ImageStore::open(ImageStore::default_dir()),
        cache: Some(ArtifactCache::open(&cache)),
        ..Builder::host(sandbox_config())
    };
    // Compiled, then played, two at a time, as a runner with two cores
    // plays its matches (unpinned here): the kits are held to their games'
    // limits beside another match, whose waits for a CPU the clock forgives.
    let every: Vec<Starter> = GameKind::ALL.iter().flat_map(|g| starters::of_game(g.name())).collect();
    let built = koth_testkit::two_at_a_time(every.iter().collect(), |k| compiled(&b, k));
    let mut matches: Vec<(GameKind, u64, Vec<BotSpec>)> = Vec::new();
    for game in GameKind::ALL {
        let kits: Vec<BotSpec> =
            every.iter().zip(&built).filter(|(k, _)| k.game == game.name()).filter_map(|(_, compiled)| compiled.clone()).collect();
        if kits.len() < starters::LANGUAGES.len() {
            continue;
        }
        let seats = game.seat_range().0;
        for i in 0..kits.len() {
            let bots = (0..seats).map(|j| kits[(i + j) % kits.len()].clone()).collect();
            matches.push((game, 100 + i as u64, bots));
        }
        if game.seat_range().1 >= kits.len() {
            matches.push((game, 99, kits.clone()));
        }
    }
    let played = matches.len();
    let problems: Vec<String> =
        koth_testkit::two_at_a_time(matches, |(game, seed, bots)| faults(game, seed, bots)).into_iter().flatten().collect();
    assert!(problems.is_empty(), "{} problems in {played} matches:\n{}", problems.len(), problems.join("\n"));
    eprintln!("{played} matches of starter kits, all legal");
    if in_ci() {
        assert_eq!(played, 5 * starters::LANGUAGES.len() + 1);
    }
}
