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

use crate::artifact::Artifact;
use crate::bot::{BotSpec, Builder};
use crate::referee::ExternalReferee;
use crate::submission::{SourceFile, Submission, SubmissionLimits};

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

/// An external game's folder as a server keeps it: its files, checked as a
/// bot's sources are, and its manifest read from them. Stored as a tar
/// archive (the form of a bot version's sources) and written out to a
/// folder of its own on each runner that plays it ([`GamePackage::unpack`]).
#[derive(Clone, Debug)]
pub struct GamePackage {
    pub manifest: GameManifest,
    /// Sorted by path; `game.json` among them.
    pub files: Vec<SourceFile>,
}

impl GamePackage {
    /// An uploaded archive (tar, tar.gz, zip) of a game's folder.
    pub fn from_upload(file_name: &str, bytes: &[u8], limits: &SubmissionLimits) -> Result<GamePackage, String> {
        GamePackage::from_files(Submission::archive_files(file_name, bytes, limits).map_err(|e| e.to_string())?)
    }

    /// A game's folder on disk (`koth game add`).
    pub fn from_folder(dir: &Path, limits: &SubmissionLimits) -> Result<GamePackage, String> {
        GamePackage::from_files(Submission::folder_files(dir, limits).map_err(|e| format!("{}: {e}", dir.display()))?)
    }

    /// Checked files as a game: a `game.json` at the top that parses, the
    /// referee's main file, and at least one example bot in `bots/`. The
    /// errors say what to change.
    pub fn from_files(files: Vec<SourceFile>) -> Result<GamePackage, String> {
        let manifest = files.iter().find(|f| f.path == MANIFEST).ok_or_else(|| {
            format!("the folder has no {MANIFEST} at its top; a game is a folder with {MANIFEST}, its referee and example bots in {EXAMPLE_BOTS}/ (docs/games/authoring.md)")
        })?;
        let manifest = GameManifest::parse(&manifest.bytes)?;
        let main = &manifest.referee.main;
        if !files.iter().any(|f| f.path == *main) {
            return Err(format!("the referee's main file {main:?} ({MANIFEST}'s referee.main) is not in the folder"));
        }
        let package = GamePackage { manifest, files };
        if package.example_bots().is_empty() {
            return Err(format!(
                "the folder has no example bots: put at least one in {EXAMPLE_BOTS}/ (a file, or a folder per bot); they play the game's validation match"
            ));
        }
        Ok(package)
    }

    /// The example bots' names: each file or folder directly in `bots/`, sorted.
    pub fn example_bots(&self) -> Vec<String> {
        let prefix = format!("{EXAMPLE_BOTS}/");
        let mut names: Vec<String> = self
            .files
            .iter()
            .filter_map(|f| f.path.strip_prefix(&prefix))
            .filter_map(|rest| rest.split('/').next())
            .map(str::to_owned)
            .collect();
        names.dedup();
        names
    }

    /// As stored: an uncompressed tar, equal packages giving equal bytes.
    pub fn to_tar(&self) -> Vec<u8> {
        let files = self
            .files
            .iter()
            .map(|f| koth_sandbox::TreeFile {
                path: f.path.clone(),
                bytes: f.bytes.clone(),
                mode: if f.executable { 0o755 } else { 0o644 },
            })
            .collect();
        Artifact { files }.to_tar()
    }

    /// A stored package ([`GamePackage::to_tar`]) again, checked anew.
    pub fn from_tar(bytes: &[u8]) -> Result<GamePackage, String> {
        let files = Artifact::from_tar(bytes)
            .map_err(|e| format!("the stored game: {e}"))?
            .files
            .into_iter()
            .map(|f| SourceFile { path: f.path, bytes: f.bytes, executable: f.mode & 0o111 != 0 })
            .collect();
        GamePackage::from_files(files)
    }

    /// sha256 (hex) over every file's path, executable flag and bytes, in
    /// path order.
    pub fn source_hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"koth-game-v1\0");
        for f in &self.files {
            for field in [f.path.as_bytes(), &f.bytes] {
                h.update((field.len() as u64).to_le_bytes());
                h.update(field);
            }
            h.update([u8::from(f.executable)]);
        }
        hex::encode(h.finalize())
    }

    /// Write the package out as `games_dir/<hash>` (once: a folder already
    /// there is complete, since it is renamed into place whole) and load
    /// it, its referee built by `builder`.
    pub fn unpack(&self, games_dir: &Path, builder: &Builder) -> Result<ExternalGame, String> {
        let dir = games_dir.join(self.source_hash());
        if !dir.is_dir() {
            crate::state::private_dir(games_dir).map_err(|e| format!("creating {}: {e}", games_dir.display()))?;
            let tmp = games_dir.join(format!(".{}.{}", self.source_hash(), std::process::id()));
            let _ = std::fs::remove_dir_all(&tmp);
            let write = || -> std::io::Result<()> {
                use std::os::unix::fs::PermissionsExt;
                for f in &self.files {
                    let path = tmp.join(&f.path);
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::write(&path, &f.bytes)?;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(if f.executable { 0o755 } else { 0o644 }))?;
                }
                match std::fs::rename(&tmp, &dir) {
                    // Another worker of this host wrote it first: the same bytes.
                    Err(_) if dir.is_dir() => std::fs::remove_dir_all(&tmp),
                    r => r,
                }
            };
            write().map_err(|e| format!("writing {} out: {e}", self.manifest.name))?;
        }
        ExternalGame::load(&dir, builder)
    }
}

impl ExternalGame {
    /// The game's example bots (`bots/` in its folder), built by `builder`.
    pub fn example_bots(&self, builder: &Builder) -> Result<Vec<BotSpec>, String> {
        let dir = self.dir.join(EXAMPLE_BOTS);
        let mut paths: Vec<PathBuf> =
            std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        paths
            .iter()
            .map(|p| builder.prepare(p).map_err(|e| format!("example bot {}: {e}", p.file_name().unwrap_or_default().to_string_lossy())))
            .collect()
    }
}
