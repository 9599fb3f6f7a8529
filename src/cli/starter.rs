//! `koth starter GAME LANGUAGE`: a game's starter kit written to a folder,
//! with how to try it and submit it. The kits come from one of three
//! places:
//!
//! - a koth server (`--server`, `KOTH_SERVER`, or the one `koth login`
//!   saved, when it answers): the kits it offers, only those its runners
//!   can run (the others are named, with why not), added games' too;
//! - a game's folder (`koth starter ./mygame`): its `starters/`, else its
//!   example bots that are one file each;
//! - else koth's own games' kits ([`koth_runner::starters`]), embedded in
//!   the binary: no server needed, every language koth has a kit in.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use koth_runner::starters;
use koth_web::http::types::GameInfo;

#[derive(Args)]
pub struct StarterArgs {
    /// The game: koth's own (flit, slime, linkage, target, snake), a game's
    /// folder (./mygame), or any game the server plays.
    game: String,
    /// The language (python, c, cpp, java, javascript, rust, go, ...);
    /// without it, the kits this game has are listed.
    language: Option<String>,
    /// The folder to write it in.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// Replace a file of the same name.
    #[arg(long)]
    force: bool,
    /// Take the kits from this koth server: only those its runners can run
    /// are offered (default: the one `koth login` saved; none: koth's own
    /// kits, in every language).
    #[arg(long, env = "KOTH_SERVER")]
    server: Option<String>,
}

/// The server could not be reached at all (not: it answered an error).
#[derive(Debug)]
struct Unreachable(String);

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unreachable {}

/// A kit to write: its file name, its language's words, its source.
struct Kit {
    file: String,
    language: String,
    display: String,
    source: Vec<u8>,
}

pub fn run(a: StarterArgs) -> anyhow::Result<i32> {
    let folder = Path::new(&a.game);
    if folder.is_dir() {
        return from_folder(&a, folder);
    }
    match super::client::known_server(a.server.as_deref())? {
        Some((server, true)) => return from_server(&a, &server),
        // The saved login's server, when it answers; else koth's own kits.
        Some((server, false)) => match from_server(&a, &server) {
            Err(e) if e.downcast_ref::<Unreachable>().is_some() => {
                eprintln!("koth: {e}; koth's own kits instead (every language: the server may not run them all)");
            }
            done => return done,
        },
        None => {}
    }
    let kits = starters::of_game(&a.game);
    if kits.is_empty() {
        let games: Vec<&str> = koth_games::GameKind::ALL.iter().map(|g| g.name()).collect();
        bail!(
            "koth has no game {:?}; its own games are {} (a game a server added: --server URL; a game's folder: its path)",
            a.game,
            games.join(", ")
        );
    }
    let Some(language) = &a.language else {
        println!("starter kits for {}:", a.game);
        for k in &kits {
            println!("  {:<11} {:<10} {}", k.language.name, k.file, k.language.display);
        }
        println!("write one with `koth starter {} LANGUAGE`", a.game);
        println!("(a server may not run every language: `koth starter {} --server URL` lists the kits it offers)", a.game);
        return Ok(0);
    };
    let Some(kit) = kits.iter().find(|k| k.language.name == *language || k.language.extensions.contains(language)) else {
        let have: Vec<&str> = kits.iter().map(|k| k.language.name.as_str()).collect();
        bail!("{} has no starter kit in {language:?}; it has: {}", a.game, have.join(", "));
    };
    let kit = Kit {
        file: kit.file.into(),
        language: kit.language.name.clone(),
        display: kit.language.display.clone(),
        source: kit.source.as_bytes().to_vec(),
    };
    write(&a, &kit, &format!("koth match --game {}", a.game))
}

/// A game's folder: its `starters/`, else its one-file example bots.
fn from_folder(a: &StarterArgs, folder: &Path) -> anyhow::Result<i32> {
    let package = koth_runner::game::GamePackage::from_folder(folder, &koth_runner::submission::SubmissionLimits::default())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let kits: Vec<Kit> = package
        .starter_kits()
        .into_iter()
        .map(|k| Kit { file: k.file, language: k.language.name.clone(), display: k.language.display.clone(), source: k.source })
        .collect();
    let shown = folder.display();
    if kits.is_empty() {
        bail!(
            "{shown} has no starter kits: a game's kits are the files in its {}/ folder, else its example bots in {}/ that are one file of a language koth knows",
            koth_runner::game::STARTERS,
            koth_runner::game::EXAMPLE_BOTS
        );
    }
    let Some(language) = &a.language else {
        println!("starter kits for {} ({shown}):", package.manifest.name);
        for k in &kits {
            println!("  {:<11} {:<14} {}", k.language, k.file, k.display);
        }
        println!("write one with `koth starter {shown} LANGUAGE`");
        return Ok(0);
    };
    let Some(kit) = kits.iter().find(|k| k.language == *language || k.file.rsplit_once('.').is_some_and(|(_, e)| e == language)) else {
        let have: Vec<&str> = kits.iter().map(|k| k.language.as_str()).collect();
        bail!("{shown} has no starter kit in {language:?}; it has: {}", have.join(", "));
    };
    write(a, kit, &format!("koth match --game {shown}"))
}

/// The kits a server offers: those its runners can run.
fn from_server(a: &StarterArgs, server: &str) -> anyhow::Result<i32> {
    let c = super::client::Client::for_server(server);
    let games: Vec<GameInfo> = match c.request("GET", "/api/games").call() {
        Err(ureq::Error::Transport(e)) => return Err(Unreachable(format!("cannot reach {server}: {e}")).into()),
        r => c.finish(r)?.into_json().with_context(|| format!("reading {server}'s games"))?,
    };
    let Some(game) = games.iter().find(|g| g.name == a.game) else {
        let names: Vec<&str> = games.iter().map(|g| g.name.as_str()).collect();
        bail!("{server} has no game {:?}; it plays {} (a game's folder: its path)", a.game, names.join(", "));
    };
    let offered: Vec<_> = game.starters.iter().filter(|k| k.available).collect();
    let missing: Vec<_> = game.starters.iter().filter(|k| !k.available).collect();
    let Some(language) = &a.language else {
        if game.starters.is_empty() {
            println!("{} on {server} has no starter kits", game.name);
            return Ok(0);
        }
        println!("starter kits for {} on {server}:", game.name);
        for k in &offered {
            println!("  {:<11} {:<14} {}", k.language, k.file, k.display);
        }
        if !missing.is_empty() {
            println!("not offered (this server's runners cannot run them):");
            for k in &missing {
                println!("  {:<11} {}", k.language, k.unavailable.as_deref().unwrap_or(""));
            }
        }
        println!("write one with `koth starter {} LANGUAGE`", game.name);
        return Ok(0);
    };
    let is =
        |k: &&&koth_web::http::types::StarterInfo| k.language == *language || k.file.rsplit_once('.').is_some_and(|(_, e)| e == language);
    let have: Vec<&str> = offered.iter().map(|k| k.language.as_str()).collect();
    let have = if have.is_empty() { "none".to_owned() } else { have.join(", ") };
    if let Some(k) = missing.iter().find(&is) {
        bail!(
            "{server} cannot run {} bots ({}), so it offers no {} kit in it; it has: {have}",
            k.display,
            k.unavailable.as_deref().unwrap_or("no reason given"),
            game.name
        );
    }
    let Some(k) = offered.iter().find(&is) else {
        bail!("{} on {server} has no starter kit in {language:?}; it has: {have}", game.name);
    };
    let resp = c.finish(c.request("GET", &k.url).call())?;
    let mut source = Vec::new();
    std::io::Read::read_to_end(&mut resp.into_reader(), &mut source).with_context(|| format!("downloading {}{}", server, k.url))?;
    let kit = Kit { file: k.file.clone(), language: k.language.clone(), display: k.display.clone(), source };
    let try_it = if game.added { format!("koth match --game ./{}", game.name) } else { format!("koth match --game {}", game.name) };
    write(a, &kit, &try_it)
}

fn write(a: &StarterArgs, kit: &Kit, try_it: &str) -> anyhow::Result<i32> {
    let path = a.dir.join(&kit.file);
    if path.exists() && !a.force {
        bail!("{} exists; move it away or pass --force to replace it", path.display());
    }
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    std::fs::write(&path, &kit.source).with_context(|| format!("writing {}", path.display()))?;
    let shown = path.display();
    println!("wrote {shown}: a {} bot ({}) for {} to start from", kit.display, kit.language, a.game);
    println!("try it:    {try_it} {shown} --open");
    println!("submit it: koth submit --ladder LADDER --name NAME {shown}");
    Ok(0)
}
