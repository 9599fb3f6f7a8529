//! Embed the example bots (`bots/<game>/<file>`), which `koth up` seeds
//! into every game's ladder.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let dir = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR for build scripts")).join("bots");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    for game in std::fs::read_dir(&dir).expect("reading bots/").flatten() {
        if !game.path().is_dir() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", game.path().display());
        for f in std::fs::read_dir(game.path()).unwrap().flatten() {
            if f.path().is_file() {
                files.push((game.file_name().to_string_lossy().into_owned(), f.path()));
            }
        }
    }
    files.sort();
    let mut out = String::from("/// (game, file name, source) of every example bot.\npub static EXAMPLES: &[(&str, &str, &[u8])] = &[\n");
    for (game, path) in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        writeln!(out, "    ({game:?}, {name:?}, include_bytes!({:?})),", path.canonicalize().unwrap().display().to_string()).unwrap();
    }
    out.push_str("];\n");
    std::fs::write(Path::new(&std::env::var("OUT_DIR").unwrap()).join("examples.rs"), out).unwrap();
}
