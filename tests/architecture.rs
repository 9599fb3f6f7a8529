//! The layout's rules, checked on the source (docs/architecture.md):
//! crates depend only downward (sandbox and games on no koth crate, the
//! runner on those two, the service on the runner and below), and no two
//! modules of a crate use each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The koth crates a crate's manifest depends on (normal dependencies).
fn koth_dependencies(krate: &str) -> BTreeSet<String> {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join(krate).join("Cargo.toml")).unwrap();
    let normal = manifest.split("[dependencies]").nth(1).unwrap_or("").split("\n[").next().unwrap_or("");
    normal.lines().filter_map(|l| l.trim().strip_prefix("koth-")).map(|l| l.split(['.', ' ', '=']).next().unwrap().to_owned()).collect()
}

#[test]
fn crates_depend_only_downward() {
    let layers =
        [("sandbox", vec![]), ("games", vec![]), ("runner", vec!["sandbox", "games"]), ("scheduler", vec!["sandbox", "games", "runner"])];
    for (krate, allowed) in layers {
        let deps = koth_dependencies(krate);
        let above: Vec<&String> = deps.iter().filter(|d| !allowed.contains(&d.as_str())).collect();
        assert!(above.is_empty(), "koth-{krate} depends on {above:?}, which it may not (allowed: {allowed:?})");
    }
    assert!(koth_dependencies("runner").is_superset(&["sandbox".to_owned(), "games".to_owned()].into()), "the check reads the manifests");
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Module → the sibling modules its code (not its comments or tests) names
/// with `crate::`.
fn module_uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap().to_string_lossy().into_owned();
        let module = rel.trim_end_matches(".rs").split('/').next().unwrap().to_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        let entry = uses.entry(module.clone()).or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for part in line.split("crate::").skip(1) {
                let name: String = part.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != module {
                    entry.insert(name);
                }
            }
        }
    }
    uses
}

#[test]
fn no_two_modules_use_each_other() {
    for krate in ["sandbox", "games", "runner", "scheduler"] {
        let uses = module_uses(&Path::new(ROOT).join(krate).join("src"));
        assert!(uses.len() > 3, "{krate}: read {} modules", uses.len());
        for (a, used) in &uses {
            for b in used {
                let back = uses.get(b).is_some_and(|u| u.contains(a));
                assert!(!back, "koth-{krate}: {a} and {b} use each other");
            }
        }
    }
}
