//! `koth starter GAME LANGUAGE`: a game's starter kit
//! ([`koth_runner::starters`]) written to a folder, with how to try it and
//! submit it. The kits are embedded in the binary: no server needed.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use koth_runner::starters;

#[derive(Args)]
pub struct StarterArgs {
    /// The game: flit, slime, linkage, target or snake.
    game: String,
    /// The language (python, c, cpp, java, javascript, rust, go); without
    /// it, the kits this game has are listed.
    language: Option<String>,
    /// The folder to write it in.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// Replace a file of the same name.
    #[arg(long)]
    force: bool,
}

pub fn run(a: StarterArgs) -> anyhow::Result<i32> {
    let kits = starters::of_game(&a.game);
    if kits.is_empty() {
        let games: Vec<&str> = koth_games::GameKind::ALL.iter().map(|g| g.name()).collect();
        bail!("koth has no game {:?}; the games are {}", a.game, games.join(", "));
    }
    let Some(language) = a.language else {
        println!("starter kits for {}:", a.game);
        for k in &kits {
            println!("  {:<11} {:<10} {}", k.language.name, k.file, k.language.display);
        }
        println!("write one with `koth starter {} LANGUAGE`", a.game);
        return Ok(0);
    };
    let Some(kit) = kits.iter().find(|k| k.language.name == language || k.language.extensions.contains(&language)) else {
        let have: Vec<&str> = kits.iter().map(|k| k.language.name.as_str()).collect();
        bail!("{} has no starter kit in {language:?}; it has: {}", a.game, have.join(", "));
    };
    let path = a.dir.join(kit.file);
    if path.exists() && !a.force {
        bail!("{} exists; move it away or pass --force to replace it", path.display());
    }
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    std::fs::write(&path, kit.source).with_context(|| format!("writing {}", path.display()))?;
    let shown = path.display();
    println!("wrote {shown}: a {} bot for {} that plays legally", kit.language.display, a.game);
    println!("try it:    koth match --game {} {shown} --open", a.game);
    println!("submit it: koth submit --ladder LADDER --name NAME {shown}");
    Ok(0)
}
