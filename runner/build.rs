//! Embed every `languages/<name>/language.json` of the repository, so that
//! adding a language is adding a folder.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../languages");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("reading languages/")
        .flatten()
        .map(|e| e.path().join("language.json"))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    let mut out = String::from("/// (folder, language.json) of every language, embedded at build time.\npub static DEFINITIONS: &[(&str, &str)] = &[\n");
    for p in &entries {
        println!("cargo:rerun-if-changed={}", p.display());
        let folder = p.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        let abs = p.canonicalize().unwrap();
        writeln!(out, "    ({folder:?}, include_str!({:?})),", abs.display().to_string()).unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("languages.rs");
    std::fs::write(dest, out).unwrap();
}
