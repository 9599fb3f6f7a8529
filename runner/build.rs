//! Embed every `languages/<name>/language.json` (and `Dockerfile`) of the repository, so that
//! adding a language is adding a folder; and every starter kit, `starters/<game>/bot.<ext>`.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let dir =
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR for build scripts")).join("../languages");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("reading languages/")
        .flatten()
        .map(|e| e.path().join("language.json"))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    let mut out = String::from(
        "/// (folder, language.json, Dockerfile, (hello file name, text)) of every language, embedded at build time.\n#[allow(clippy::type_complexity)]\npub static DEFINITIONS: &[(&str, &str, Option<&str>, Option<(&str, &str)>)] = &[\n",
    );
    for p in &entries {
        println!("cargo:rerun-if-changed={}", p.display());
        let folder = p.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        let abs = p.canonicalize().unwrap();
        let dockerfile = p.with_file_name("Dockerfile");
        println!("cargo:rerun-if-changed={}", dockerfile.display());
        let dockerfile = if dockerfile.is_file() {
            format!("Some(include_str!({:?}))", dockerfile.canonicalize().unwrap().display().to_string())
        } else {
            "None".to_owned()
        };
        let hello = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|f| f.file_stem().is_some_and(|s| s == "hello"));
        let hello = match hello {
            Some(h) => {
                println!("cargo:rerun-if-changed={}", h.display());
                let name = h.file_name().unwrap().to_string_lossy().into_owned();
                format!("Some(({name:?}, include_str!({:?})))", h.canonicalize().unwrap().display().to_string())
            }
            None => "None".to_owned(),
        };
        writeln!(out, "    ({folder:?}, include_str!({:?}), {dockerfile}, {hello}),", abs.display().to_string()).unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("languages.rs");
    std::fs::write(dest, out).unwrap();
    starters();
}

fn starters() {
    let dir =
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR for build scripts")).join("../starters");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    for game in std::fs::read_dir(&dir).expect("reading starters/").flatten().filter(|g| g.path().is_dir()) {
        println!("cargo:rerun-if-changed={}", game.path().display());
        for f in std::fs::read_dir(game.path()).unwrap().flatten().map(|f| f.path()) {
            if f.is_file() && f.file_stem().is_some_and(|s| s == "bot") {
                files.push((game.file_name().to_string_lossy().into_owned(), f));
            }
        }
    }
    files.sort();
    let mut out = String::from(
        "/// (game, file name, source) of every starter kit, embedded at build time.\npub static KITS: &[(&str, &str, &str)] = &[\n",
    );
    for (game, path) in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        writeln!(out, "    ({game:?}, {name:?}, include_str!({:?})),", path.canonicalize().unwrap().display().to_string()).unwrap();
    }
    out.push_str("];\n");
    std::fs::write(Path::new(&std::env::var("OUT_DIR").unwrap()).join("starters.rs"), out).unwrap();
}
