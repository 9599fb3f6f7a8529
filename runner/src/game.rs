//! The game a match plays: one of koth's own ([`GameKind`], its rules
//! compiled in), or an external game, a folder with a manifest and a
//! referee program ([`koth_games::external`]) that the engine runs in a box
//! of its own ([`crate::referee`]).
//!
//! Everything the engine asks of a game goes through [`Game`]: its seats,
//! its bots' protocol, its time policy, its turn bound, and a fresh
//! referee. Replays are drawn and checked by the same referees, so an
//! external game's replay is checked by running its referee again over
//! the recorded answers, as koth's own are by their rules.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use koth_games::external::{GameManifest, MANIFEST};
use koth_games::replay::{self, Frames, Replay};
use koth_games::{BotProtocol, GameId, GameKind, Referee, TimePolicy};
use koth_sandbox::SandboxConfig;

use crate::bot::{BotSpec, Builder};
use crate::referee::ExternalReferee;
use crate::submission::Submission;

/// The folder of a game's example bots, left out of its referee.
pub const EXAMPLE_BOTS: &str = "bots";

#[derive(Clone, Debug)]
pub enum Game {
    Builtin(GameKind),
    External(Arc<ExternalGame>),
}

/// An external game, loaded and its referee built.
#[derive(Debug)]
pub struct ExternalGame {
    pub manifest: GameManifest,
    /// The referee, built like a bot of its language: program, files, root.
    pub referee: BotSpec,
    /// The folder it was loaded from.
    pub dir: PathBuf,
}

impl From<GameKind> for Game {
    fn from(g: GameKind) -> Game {
        Game::Builtin(g)
    }
}

impl Game {
    /// A game by name, or from a folder with a `game.json` (its referee
    /// built by `builder`, on its language's image or the host's
    /// toolchain, as a bot would be).
    pub fn find(name_or_dir: &str, builder: &Builder) -> Result<Game, String> {
        if let Some(g) = GameKind::from_name(name_or_dir) {
            return Ok(Game::Builtin(g));
        }
        let dir = Path::new(name_or_dir);
        if dir.join(MANIFEST).is_file() {
            return ExternalGame::load(dir, builder).map(|g| Game::External(Arc::new(g)));
        }
        let names: Vec<&str> = GameKind::ALL.iter().map(|g| g.name()).collect();
        Err(format!("no game {name_or_dir:?}: name one of {}, or a folder with a {MANIFEST}", names.join(", ")))
    }

    pub fn id(&self) -> GameId {
        match self {
            Game::Builtin(g) => GameId::Builtin(*g),
            Game::External(e) => GameId::External(e.manifest.name.clone()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Game::Builtin(g) => g.name(),
            Game::External(e) => &e.manifest.name,
        }
    }

    /// Seats a match may have: (min, max).
    pub fn seat_range(&self) -> (usize, usize) {
        match self {
            Game::Builtin(g) => g.seat_range(),
            Game::External(e) => e.manifest.seat_range(),
        }
    }

    pub fn time_policy(&self) -> TimePolicy {
        match self {
            Game::Builtin(g) => g.time_policy(),
            Game::External(e) => e.manifest.time_policy,
        }
    }

    pub fn protocol(&self) -> BotProtocol {
        match self {
            Game::Builtin(g) => g.protocol(),
            Game::External(e) => e.manifest.protocol,
        }
    }

    /// The most turns the rules can take.
    pub fn turn_bound(&self) -> u32 {
        match self {
            Game::Builtin(g) => g.turn_bound(),
            Game::External(e) => e.manifest.max_turns,
        }
    }

    /// A fresh referee for a match between `names` (in seat order) from
    /// `seed`. An external referee is started in a box built from `sandbox`
    /// (its root, limits and network its own); one that fails to start
    /// says so through [`Referee::failure`].
    pub fn referee(&self, names: &[String], seed: u64, sandbox: &SandboxConfig) -> Result<Box<dyn Referee>, String> {
        let (lo, hi) = self.seat_range();
        if names.len() < lo || names.len() > hi {
            let n = names.len();
            return Err(if lo == hi {
                format!("{} is played by exactly {lo} bots, not {n}", self.name())
            } else {
                format!("{} is played by {lo} to {hi} bots, not {n}", self.name())
            });
        }
        match self {
            Game::Builtin(g) => g.referee(names.len(), seed),
            Game::External(e) => Ok(Box::new(ExternalReferee::start(&e.manifest, &e.referee, names, seed, sandbox))),
        }
    }

    /// The viewer's frames of a replay of this game.
    pub fn frames(&self, r: &Replay, sandbox: &SandboxConfig) -> Result<Frames, String> {
        replay::frames_with(r, self.referee_for(r, sandbox)?)
    }

    /// Check a replay of this game against its referee (see
    /// [`koth_games::replay::check`]).
    pub fn check(&self, r: &Replay, sandbox: &SandboxConfig) -> Result<(), String> {
        replay::check_with(r, self.referee_for(r, sandbox)?)
    }

    fn referee_for(&self, r: &Replay, sandbox: &SandboxConfig) -> Result<Box<dyn Referee>, String> {
        if r.game != self.id() {
            return Err(format!("the replay is of {}, not {}", r.game, self.name()));
        }
        let names: Vec<String> = r.seats.iter().map(|s| s.name.clone()).collect();
        self.referee(&names, r.seed, sandbox)
    }
}

impl ExternalGame {
    /// Read `dir/game.json` and build the referee it names. Errors say
    /// what is wrong with the folder and what to do.
    pub fn load(dir: &Path, builder: &Builder) -> Result<ExternalGame, String> {
        let path = dir.join(MANIFEST);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let manifest = GameManifest::parse(&bytes).map_err(|e| format!("{}: {e}", dir.display()))?;
        let r = &manifest.referee;
        let sub = Submission::from_folder_main(dir, &r.main, r.language.as_deref(), &[EXAMPLE_BOTS], &builder.limits)
            .map_err(|e| format!("{}'s referee: {e}", manifest.name))?;
        let (image, compiled) = builder.build(&sub).map_err(|e| format!("{}'s referee: {e}", manifest.name))?;
        let referee = BotSpec::new(format!("{} referee", manifest.name), &sub, &image, &compiled.artifact);
        Ok(ExternalGame { manifest, referee, dir: dir.to_path_buf() })
    }
}
