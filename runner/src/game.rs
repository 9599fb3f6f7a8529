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

use crate::bot::{BotSpec, Builder, PrepareError};
use crate::compile::BuildError;
use crate::referee::ExternalReferee;
use crate::submission::{SourceFile, Submission, SubmissionLimits};

/// The folder of a game's example bots, left out of its referee.
pub const EXAMPLE_BOTS: &str = "bots";

/// The folder of a game's own starter kits (optional): without it, its
/// example bots that are one file each are its kits.
pub const STARTERS: &str = "starters";

/// A starter kit of a game folder: one file, in a language koth knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FolderKit {
    /// Its name in the folder: the name to save it under.
    pub file: String,
    pub language: &'static crate::language::Language,
    pub source: Vec<u8>,
}

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
            return ExternalGame::load(dir, builder).map(|g| Game::External(Arc::new(g))).map_err(|e| e.to_string());
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

    /// Whether its bots may keep data from match to match (see
    /// [`crate::storage`]).
    pub fn keeps_bot_data(&self) -> bool {
        match self {
            Game::Builtin(g) => g.keeps_bot_data(),
            Game::External(e) => e.manifest.bot_data,
        }
    }

    pub fn time_policy(&self) -> TimePolicy {
        match self {
            Game::Builtin(g) => g.time_policy(),
            Game::External(e) => e.manifest.time_policy,
        }
    }

    /// The start-up allowance per process of a bot in `language`: the
    /// manifest's for that language, else its time policy's.
    pub fn startup(&self, language: &str) -> std::time::Duration {
        match self {
            Game::Builtin(g) => g.time_policy().startup.unwrap_or_default(),
            Game::External(e) => e.manifest.startup(language).unwrap_or_default(),
        }
    }

    /// The largest start-up allowance a bot of this game may get.
    pub fn max_startup(&self) -> std::time::Duration {
        match self {
            Game::Builtin(g) => g.time_policy().startup.unwrap_or_default(),
            Game::External(e) => e.manifest.max_startup(),
        }
    }

    /// How its `per_turn_files` bots exchange files: Linkage's, or the
    /// manifest's `files`.
    pub fn file_exchange(&self) -> koth_games::FileExchange {
        match self {
            Game::Builtin(_) => koth_games::FileExchange::default(),
            Game::External(e) => e.manifest.file_exchange(),
        }
    }

    pub fn protocol(&self) -> BotProtocol {
        match self {
            Game::Builtin(g) => g.protocol(),
            Game::External(e) => e.manifest.protocol,
        }
    }

    /// How a long-lived bot's messages are delimited (lines for koth's own
    /// games; an external game's manifest may say unterminated).
    pub fn framing(&self) -> koth_games::Framing {
        match self {
            Game::Builtin(_) => koth_games::Framing::Lines,
            Game::External(e) => e.manifest.framing,
        }
    }

    /// How many bots of a match of `seats` think at the same time: one
    /// where moves alternate, every seat where they are simultaneous (the
    /// cores a match needs, see [`crate::cores`]).
    pub fn thinking_at_once(&self, seats: usize) -> usize {
        match self {
            Game::Builtin(GameKind::Target | GameKind::Snake) => seats,
            Game::Builtin(GameKind::Flit | GameKind::Slime | GameKind::Linkage) => 1.min(seats),
            // A referee may ask any of its seats in one turn.
            Game::External(_) => seats,
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
    pub fn referee(&self, names: &[String], seed: u64, sandbox: &SandboxConfig) -> Result<Box<dyn Referee>, GameError> {
        let (lo, hi) = self.seat_range();
        if names.len() < lo || names.len() > hi {
            let n = names.len();
            return Err(GameError::Invalid(if lo == hi {
                format!("{} is played by exactly {lo} bots, not {n}", self.name())
            } else {
                format!("{} is played by {lo} to {hi} bots, not {n}", self.name())
            }));
        }
        match self {
            Game::Builtin(g) => g.referee(names.len(), seed).map_err(GameError::Invalid),
            Game::External(e) => {
                Ok(Box::new(ExternalReferee::start(&e.manifest, &e.referee, names, seed, sandbox).map_err(GameError::Host)?))
            }
        }
    }

    /// The viewer's frames of a replay of this game.
    pub fn frames(&self, r: &Replay, sandbox: &SandboxConfig) -> Result<Frames, String> {
        replay::frames_with(r, self.referee_for(r, sandbox)?)
    }

    /// [`Game::frames`], drawn only if the referee makes every judgement,
    /// event and result of the replay again
    /// ([`koth_games::replay::checked_frames_with`]).
    pub fn checked_frames(&self, r: &Replay, sandbox: &SandboxConfig) -> Result<Frames, String> {
        replay::checked_frames_with(r, self.referee_for(r, sandbox)?)
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
        self.referee(&names, r.seed, sandbox).map_err(|e| e.to_string())
    }
}

impl ExternalGame {
    /// Read `dir/game.json` and build the referee it names. Errors say
    /// what is wrong with the folder and what to do.
    pub fn load(dir: &Path, builder: &Builder) -> Result<ExternalGame, GameError> {
        let path = dir.join(MANIFEST);
        let bytes = std::fs::read(&path).map_err(|e| GameError::io(format!("{}", path.display()), &e))?;
        let manifest = GameManifest::parse(&bytes).map_err(|e| GameError::Invalid(format!("{}: {e}", dir.display())))?;
        let r = &manifest.referee;
        let sub = Submission::from_folder_main(dir, &r.main, r.language.as_deref(), &[EXAMPLE_BOTS], &builder.limits)
            .map_err(|e| GameError::Invalid(format!("{}'s referee: {e}", manifest.name)))?;
        let (image, compiled) = builder.build(&sub).map_err(|e| GameError::prepare(format!("{}'s referee", manifest.name), e))?;
        let referee = BotSpec::new(format!("{} referee", manifest.name), &sub, &image, &compiled.artifact);
        Ok(ExternalGame { manifest, referee, dir: dir.to_path_buf() })
    }
}

/// Why a game folder could not be loaded: its author's to fix, or this
/// machine's failing. A server refuses an added game for the first and
/// retries (here later, or on another runner) for the second: a referee
/// whose box or image could not be made says nothing about the game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The folder, its manifest, its referee's or an example bot's sources
    /// are wrong, or they do not compile.
    #[error("{0}")]
    Invalid(String),
    /// The disk, a box, the image store or a language's image failed here.
    #[error("{0}")]
    Host(String),
}

impl GameError {
    /// Whether this machine, not the game, failed.
    pub fn is_host(&self) -> bool {
        matches!(self, GameError::Host(_))
    }

    /// A file of the folder that could not be read: missing is the
    /// folder's fault, any other error the disk's.
    fn io(what: String, e: &std::io::Error) -> GameError {
        if e.kind() == std::io::ErrorKind::NotFound {
            GameError::Invalid(format!("{what}: {e}"))
        } else {
            GameError::Host(format!("{what}: {e}"))
        }
    }

    /// A referee or example bot that could not be built, by the kind of
    /// [`PrepareError`]: its sources or its compile are the game's; no
    /// image, or a compile box that failed, the machine's.
    fn prepare(what: String, e: PrepareError) -> GameError {
        match e {
            PrepareError::Rejected(_) | PrepareError::Build(BuildError::Compile { .. }) => GameError::Invalid(format!("{what}: {e}")),
            PrepareError::NoImage(_) | PrepareError::Build(BuildError::Infrastructure(_)) => GameError::Host(format!("{what}: {e}")),
        }
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

    /// The game's starter kits: the files directly in its `starters/`,
    /// else its example bots that are one file each (a bot that is a
    /// folder is no kit), one per language (the first by name), in
    /// [`crate::starters::LANGUAGES`] order; files of no language koth
    /// knows are left out.
    pub fn starter_kits(&self) -> Vec<FolderKit> {
        for dir in [STARTERS, EXAMPLE_BOTS] {
            let prefix = format!("{dir}/");
            let mut kits: Vec<FolderKit> = Vec::new();
            for f in &self.files {
                let Some(name) = f.path.strip_prefix(&prefix).filter(|n| !n.contains('/')) else { continue };
                let Some(language) = name.rsplit_once('.').and_then(|(_, ext)| crate::language::by_extension(ext)) else { continue };
                if !kits.iter().any(|k| k.language.name == language.name) {
                    kits.push(FolderKit { file: name.to_owned(), language, source: f.bytes.clone() });
                }
            }
            if !kits.is_empty() {
                kits.sort_by_key(|k| crate::starters::language_order(&k.language.name));
                return kits;
            }
        }
        Vec::new()
    }

    /// As stored ([`crate::submission::stored_tar`]).
    pub fn to_tar(&self) -> Vec<u8> {
        crate::submission::stored_tar(&self.files)
    }

    /// A stored package ([`GamePackage::to_tar`]) again, checked anew.
    pub fn from_tar(bytes: &[u8]) -> Result<GamePackage, String> {
        GamePackage::from_files(crate::submission::stored_files(bytes).map_err(|e| format!("the stored game: {e}"))?)
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
    pub fn unpack(&self, games_dir: &Path, builder: &Builder) -> Result<ExternalGame, GameError> {
        let dir = self.write_out(games_dir).map_err(|e| GameError::Host(format!("writing {} out: {e}", self.manifest.name)))?;
        ExternalGame::load(&dir, builder)
    }

    /// The package as the folder `games_dir/<hash>`, written unless it is
    /// there. Each writer fills a temporary folder of its own (runner loops
    /// of one process load a new game at once when its first matches
    /// start) and renames it into place; the first rename wins, and the
    /// others' copies, the same bytes, are removed.
    fn write_out(&self, games_dir: &Path) -> std::io::Result<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        static WRITER: AtomicU64 = AtomicU64::new(0);
        let hash = self.source_hash();
        let dir = games_dir.join(&hash);
        if dir.is_dir() {
            return Ok(dir);
        }
        crate::state::private_dir(games_dir)?;
        let tmp = games_dir.join(format!(".{hash}.{}.{}", std::process::id(), WRITER.fetch_add(1, Ordering::Relaxed)));
        let written = self.files.iter().try_for_each(|f| {
            let path = tmp.join(&f.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, &f.bytes)?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(if f.executable { 0o755 } else { 0o644 }))
        });
        let placed = written.and_then(|()| std::fs::rename(&tmp, &dir));
        if placed.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        match placed {
            // Another writer placed it first.
            Err(_) if dir.is_dir() => Ok(dir),
            r => r.map(|()| dir),
        }
    }
}

impl ExternalGame {
    /// The game's example bots (`bots/` in its folder), built by `builder`.
    pub fn example_bots(&self, builder: &Builder) -> Result<Vec<BotSpec>, GameError> {
        let dir = self.dir.join(EXAMPLE_BOTS);
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| GameError::io(format!("{}", dir.display()), &e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|p| {
                builder
                    .prepare(p)
                    .map_err(|e| GameError::prepare(format!("example bot {}", p.file_name().unwrap_or_default().to_string_lossy()), e))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game that cannot be loaded is refused only for what is the
    /// game's: its sources or their compile; no image, or a compile box
    /// that failed, is this machine's (retried).
    #[test]
    fn a_game_error_is_the_games_or_the_machines_by_what_failed() {
        let compile = PrepareError::Build(BuildError::Compile { reason: "exit 1".into(), log: "error: ...".into() });
        let cases = [
            (compile, false),
            (PrepareError::Build(BuildError::Infrastructure("the box could not be made".into())), true),
            (PrepareError::NoImage("no image for C#".into()), true),
        ];
        for (e, host) in cases {
            let shown = e.to_string();
            let got = GameError::prepare("its referee".into(), e);
            assert_eq!(got.is_host(), host, "{got:?}");
            assert_eq!(got.to_string(), format!("its referee: {shown}"));
        }
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(!GameError::io("game.json".into(), &missing).is_host());
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(GameError::io("game.json".into(), &denied).is_host());
    }

    /// No step of a built-in game asks more bots at once than
    /// `thinking_at_once` says (the cores a match leases), over whole
    /// games of timeouts, at every seat count.
    #[test]
    fn no_turn_asks_more_bots_than_think_at_once() {
        for g in GameKind::ALL {
            let (lo, hi) = g.seat_range();
            for seats in lo..=hi.min(6) {
                let mut r = g.referee(seats, 3).unwrap();
                let mut most = 0;
                for _ in 0..400 {
                    let Some(step) = r.step() else { break };
                    most = most.max(step.requests.len());
                    let answers = step.requests.iter().map(|q| (q.seat, koth_games::Reply::Timeout)).collect();
                    r.apply(answers);
                }
                assert!(most <= Game::Builtin(g).thinking_at_once(seats), "{g:?} with {seats} seats asked {most} at once");
            }
        }
    }

    fn file(path: &str, text: &str) -> SourceFile {
        SourceFile { path: path.into(), bytes: text.as_bytes().to_vec(), executable: false }
    }

    fn package() -> GamePackage {
        let manifest = serde_json::json!({
            "name": "duel", "seats": {"min": 2, "max": 2}, "protocol": "stdio",
            "time_policy": {"per_move": 50, "on_timeout": {"kind": "no_move", "freeze_after": 5}},
            "max_turns": 10, "referee": {"main": "referee.py"},
        });
        GamePackage::from_files(vec![
            file("bots/a.py", "print(1)\n"),
            file("bots/b/main.py", "print(2)\n"),
            file("bots/b/util.py", "x = 1\n"),
            file(MANIFEST, &manifest.to_string()),
            file("referee.py", "pass\n"),
        ])
        .unwrap()
    }

    /// Runner loops of one process write a new game out at once: every
    /// one gets the whole folder, and no temporary copy is left.
    #[test]
    fn writers_at_once_all_get_the_whole_folder() {
        let base = std::env::temp_dir().join(format!("koth-games-{}", std::process::id()));
        let p = package();
        let dirs: Vec<PathBuf> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8).map(|_| s.spawn(|| p.write_out(&base).unwrap())).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let want = base.join(p.source_hash());
        assert!(dirs.iter().all(|d| *d == want), "{dirs:?}");
        for f in &p.files {
            assert_eq!(std::fs::read(want.join(&f.path)).unwrap(), f.bytes, "{}", f.path);
        }
        let entries: Vec<String> =
            std::fs::read_dir(&base).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(entries, [p.source_hash()], "temporary copies left");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_package_reads_back_from_its_stored_form_and_names_its_examples() {
        let p = package();
        assert_eq!(p.example_bots(), ["a.py", "b"]);
        let back = GamePackage::from_tar(&p.to_tar()).unwrap();
        assert_eq!((back.source_hash(), back.manifest), (p.source_hash(), p.manifest));
        let mut no_bots = package().files;
        no_bots.retain(|f| !f.path.starts_with("bots/"));
        assert!(GamePackage::from_files(no_bots).unwrap_err().contains("no example bots"));
        let mut no_referee = package().files;
        no_referee.retain(|f| f.path != "referee.py");
        assert!(GamePackage::from_files(no_referee).unwrap_err().contains("\"referee.py\""));
    }

    /// A folder's kits: its `starters/` when it has one, else its example
    /// bots that are one file; one per language, in the kits' order.
    #[test]
    fn a_package_s_starter_kits() {
        let kits = |p: &GamePackage| p.starter_kits().into_iter().map(|k| (k.file, k.language.name.clone())).collect::<Vec<_>>();
        let s = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        // bots/b is a folder: no kit.
        assert_eq!(kits(&package()), [s("a.py", "python")]);
        // (files added to the folder, the kits: (file, language)).
        type Case = (&'static [&'static str], &'static [(&'static str, &'static str)]);
        let cases: &[Case] = &[
            // Its own starters/ win over its example bots, in the kits' language order.
            (&["starters/bot.c", "starters/bot.py"], &[("bot.py", "python"), ("bot.c", "c")]),
            // One per language: the first by path.
            (&["starters/a.py", "starters/b.py"], &[("a.py", "python")]),
            // Files of no known language, and deeper files, are no kits: the example bots then are.
            (&["starters/README.md", "starters/x/bot.go"], &[("a.py", "python")]),
            (&["bots/c.js", "bots/notes.txt"], &[("a.py", "python"), ("c.js", "javascript")]),
        ];
        for (extra, want) in cases {
            let mut files = package().files;
            files.extend(extra.iter().map(|p| file(p, "x\n")));
            files.sort_by(|a, b| a.path.cmp(&b.path));
            let p = GamePackage::from_files(files).unwrap();
            let want: Vec<(String, String)> = want.iter().map(|(a, b)| s(a, b)).collect();
            assert_eq!(kits(&p), want, "{extra:?}");
        }
        assert_eq!(package().starter_kits()[0].source, b"print(1)\n");
    }
}
