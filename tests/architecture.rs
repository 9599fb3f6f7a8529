//! The layout's rules, checked on the source (docs/architecture.md):
//! crates depend only downward (sandbox and games on no koth crate, the
//! runner on those two, the ladder domain on the games and the runner's
//! outcome types, the scheduler on all of them, the HTTP service on the
//! scheduler and below, and serving HTTP is the web crate's alone); the
//! ladder domain is pure
//! by its manifest (nothing that does I/O in its dependency tree, as
//! Cargo.lock resolves it); the tests' kit (`koth-testkit`) is a
//! dev-dependency only; and no two modules of a crate use each other,
//! also through what the crate's root re-exports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The koth crates a crate's manifest depends on (normal dependencies).
fn koth_dependencies(krate: &str) -> BTreeSet<String> {
    koth_crates_in(krate, "[dependencies]")
}

/// The koth crates named in one section (`[dependencies]`,
/// `[dev-dependencies]`, …) of a crate's manifest (`""`: the root package's).
fn koth_crates_in(krate: &str, section: &str) -> BTreeSet<String> {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join(krate).join("Cargo.toml")).unwrap();
    let normal = manifest.split(section).nth(1).unwrap_or("").split("\n[").next().unwrap_or("");
    normal.lines().filter_map(|l| l.trim().strip_prefix("koth-")).map(|l| l.split(['.', ' ', '=']).next().unwrap().to_owned()).collect()
}

/// Every package of the workspace, by folder (`""`: the root, `koth`).
const PACKAGES: [&str; 8] = ["", "sandbox", "games", "runner", "ladder", "scheduler", "web", "testkit"];

#[test]
fn crates_depend_only_downward() {
    let layers = [
        ("sandbox", vec![]),
        ("games", vec![]),
        ("runner", vec!["sandbox", "games"]),
        ("ladder", vec!["games", "runner"]),
        ("scheduler", vec!["sandbox", "games", "runner", "ladder"]),
        // The HTTP API and the pages, above the scheduler whose rows and
        // queue they read and write.
        ("web", vec!["sandbox", "games", "runner", "ladder", "scheduler"]),
        // The tests' kit stands beside the tests, above what they test: its
        // PostgreSQL is the service's launcher (feature `postgres`), its
        // boxes the sandbox's (feature `sandbox`).
        ("testkit", vec!["scheduler", "sandbox"]),
    ];
    for (krate, allowed) in layers {
        let deps = koth_dependencies(krate);
        let above: Vec<&String> = deps.iter().filter(|d| !allowed.contains(&d.as_str())).collect();
        assert!(above.is_empty(), "koth-{krate} depends on {above:?}, which it may not (allowed: {allowed:?})");
    }
    assert!(koth_dependencies("runner").is_superset(&["sandbox".to_owned(), "games".to_owned()].into()), "the check reads the manifests");
    assert!(koth_dependencies("scheduler").contains("ladder"), "the check reads the manifests");
    assert!(koth_dependencies("web").contains("scheduler"), "the check reads the manifests");
}

/// The HTTP stack a crate names in its manifest.
const HTTP: [&str; 5] = ["axum", "hyper", "hyper-util", "tower-http", "utoipa-axum"];

/// Only `koth-web` (and the binary, which starts it) serves HTTP: the
/// crates below it name no HTTP server or router in their
/// `[dependencies]`.
#[test]
fn only_the_web_crate_serves_http() {
    let named = |krate: &str| -> Vec<&str> {
        let manifest = std::fs::read_to_string(Path::new(ROOT).join(krate).join("Cargo.toml")).unwrap();
        let deps = manifest.split("[dependencies]").nth(1).unwrap_or("").split("\n[").next().unwrap_or("").to_owned();
        HTTP.iter().copied().filter(|h| deps.lines().any(|l| l.trim().split([' ', '.', '=']).next() == Some(h))).collect()
    };
    for krate in ["sandbox", "games", "runner", "ladder", "scheduler"] {
        let http = named(krate);
        assert!(http.is_empty(), "koth-{krate} depends on {http:?}: the HTTP API and pages belong in koth-web (web/)");
    }
    // The check can fail: the web crate names them.
    assert!(named("web").contains(&"axum") && named("web").contains(&"hyper"), "the check reads web/Cargo.toml");
}

/// The tests' kit is for tests only: no package's normal or build
/// dependencies name it, so production code and the binary carry none of it.
#[test]
fn the_testkit_is_a_dev_dependency_only() {
    for krate in PACKAGES {
        for section in ["[dependencies]", "[build-dependencies]"] {
            let deps = koth_crates_in(krate, section);
            assert!(!deps.contains("testkit"), "koth-testkit is in {section} of {krate:?}/Cargo.toml; it is a dev-dependency only");
        }
    }
    // The check can fail: the tests do name it.
    for krate in ["", "sandbox", "games", "runner", "scheduler"] {
        assert!(koth_crates_in(krate, "[dev-dependencies]").contains("testkit"), "the check reads {krate:?}/Cargo.toml");
    }
}

/// Every package `package` depends on, directly or not, as Cargo.lock
/// resolves them (all kinds: the lock file does not tell build and dev
/// dependencies apart, so this errs on the side of refusing). One edge is
/// known to be a dev-dependency and is not followed: to `koth-testkit`,
/// which `the_testkit_is_a_dev_dependency_only` keeps out of every
/// `[dependencies]` (the lower crates' tests use it, and its PostgreSQL
/// part depends on the service).
fn dependency_tree(lock: &str, package: &str) -> BTreeSet<String> {
    let mut deps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for block in lock.split("[[package]]").skip(1) {
        let name = block.lines().find_map(|l| l.strip_prefix("name = ")).unwrap_or("").trim_matches('"').to_owned();
        let list = block.split("dependencies = [").nth(1).and_then(|d| d.split(']').next()).unwrap_or("");
        // An entry is "name" or "name version" when two versions are locked.
        let names = list
            .split(',')
            .map(|e| e.trim().trim_matches('"').split(' ').next().unwrap_or("").to_owned())
            .filter(|n| !n.is_empty() && n != "koth-testkit");
        deps.entry(name).or_default().extend(names);
    }
    let mut seen = BTreeSet::new();
    let mut todo = vec![package.to_owned()];
    while let Some(p) = todo.pop() {
        for d in deps.get(&p).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

/// What does I/O of the kinds the ladder domain must not: a database, an
/// async runtime, an HTTP stack.
const IMPURE: [&str; 7] = ["sqlx", "tokio", "axum", "hyper", "tower", "tower-http", "ureq"];

#[test]
fn the_ladder_domain_is_pure_by_its_manifest() {
    let lock = std::fs::read_to_string(Path::new(ROOT).join("Cargo.lock")).unwrap();
    let tree = dependency_tree(&lock, "koth-ladder");
    assert!(tree.contains("skillratings") && tree.contains("koth-games"), "the check reads the lock file: {tree:?}");
    let impure: Vec<&&str> = IMPURE.iter().filter(|p| tree.contains(**p)).collect();
    assert!(impure.is_empty(), "koth-ladder depends on {impure:?} (directly or not); its rules must be free of I/O");
    // The check can fail: the HTTP service's tree has them all.
    let service = dependency_tree(&lock, "koth-web");
    assert!(IMPURE[..3].iter().all(|p| service.contains(*p)), "{service:?}");
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

/// The crate's sources: (path relative to `src/`, text).
fn sources(krate: &str) -> Vec<(String, String)> {
    let src = Path::new(ROOT).join(krate).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.iter().map(|f| (f.strip_prefix(&src).unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(f).unwrap())).collect()
}

/// What the crate root re-exports from its modules: exported name → the
/// module it comes from (`pub use engine::{play, BotStatus}` maps both to
/// `engine`; `pub use db::queue` maps `queue` to `db`).
fn re_exports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut statement = String::new();
    for line in lib.lines().map(str::trim) {
        if statement.is_empty() && !line.starts_with("pub use ") {
            continue;
        }
        statement.push_str(line);
        if !line.ends_with(';') {
            continue;
        }
        let path = std::mem::take(&mut statement);
        let path = path.trim_start_matches("pub use ").trim_end_matches(';').trim_start_matches("self::").trim_start_matches("crate::");
        let Some((module, rest)) = path.split_once("::") else { continue };
        for name in rest.trim_matches(['{', '}']).split(',') {
            let name = name.split(" as ").last().unwrap().trim();
            let name = name.rsplit("::").next().unwrap();
            if !name.is_empty() && name != "*" {
                out.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    out
}

/// Module → the sibling modules its code (not its comments or tests) names
/// with `crate::`, a re-exported name counting as its module.
fn module_uses(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let lib = files.iter().find(|(p, _)| p == "lib.rs").map_or("", |(_, t)| t.as_str());
    let aliases = re_exports(lib);
    let modules: BTreeSet<String> = files.iter().map(|(p, _)| p.trim_end_matches(".rs").split('/').next().unwrap().to_owned()).collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, text) in files {
        let module = rel.trim_end_matches(".rs").split('/').next().unwrap().to_owned();
        let code = text.split("#[cfg(test)]").next().unwrap();
        let entry = uses.entry(module.clone()).or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for part in line.split("crate::").skip(1) {
                let name: String = part.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                let name = aliases.get(&name).cloned().unwrap_or(name);
                if modules.contains(&name) && name != module && name != "lib" {
                    entry.insert(name);
                }
            }
        }
    }
    uses
}

/// The first pair of modules that use each other, if any.
fn a_cycle(uses: &BTreeMap<String, BTreeSet<String>>) -> Option<(String, String)> {
    for (a, used) in uses {
        for b in used {
            if uses.get(b).is_some_and(|u| u.contains(a)) {
                return Some((a.clone(), b.clone()));
            }
        }
    }
    None
}

#[test]
fn no_two_modules_use_each_other() {
    for krate in ["sandbox", "games", "runner", "ladder", "scheduler", "web"] {
        let uses = module_uses(&sources(krate));
        assert!(uses.len() > 3, "{krate}: read {} modules", uses.len());
        if let Some((a, b)) = a_cycle(&uses) {
            panic!("koth-{krate}: {a} and {b} use each other");
        }
    }
}

#[test]
fn a_cycle_through_a_re_export_is_seen() {
    let file = |p: &str, t: &str| (p.to_owned(), t.to_owned());
    let lib = "pub mod db;\npub mod validation;\npub use db::{queue,\n    results};\npub use validation::Verdict as Judged;\n";
    // results (in db) calls validation, which names db's results through the alias.
    let files = vec![
        file("lib.rs", lib),
        file("db/mod.rs", "pub mod results;"),
        file("db/results.rs", "fn f() { crate::validation::judge(); }"),
        file("validation.rs", "use crate::results::SeatOutcome;\n#[cfg(test)]\nuse crate::db::queue;"),
    ];
    assert_eq!(a_cycle(&module_uses(&files)), Some(("db".to_owned(), "validation".to_owned())));
    // Through a renamed item too.
    let files = vec![file("lib.rs", lib), file("db/results.rs", "use crate::Judged;"), file("validation.rs", "use crate::db::X;")];
    assert_eq!(a_cycle(&module_uses(&files)), Some(("db".to_owned(), "validation".to_owned())));
    // Tests and comments do not count.
    let files = vec![file("lib.rs", lib), file("db/results.rs", "// crate::validation\n"), file("validation.rs", "use crate::db::X;")];
    assert_eq!(a_cycle(&module_uses(&files)), None);
}

/// What a use case's code may not name: a database, HTTP, an async
/// runtime, files or sockets, or the handlers that call it.
const IO_WORDS: [&str; 10] = ["sqlx", "axum", "hyper", "tokio", "PgPool", ".await", "async ", "std::fs", "std::net", "crate::http"];

/// The code of a source (not its comments or tests) naming any of `words`.
fn io_in(text: &str, words: &[&str]) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap();
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(|l| words.iter().filter(|w| l.contains(**w)).map(move |w| format!("{w} in `{}`", l.trim())))
        .collect()
}

/// The API's use cases (`web/src/usecase/`) are pure: the handlers gather
/// the facts and store, the use cases decide, tested with tables.
#[test]
fn the_use_cases_do_no_io() {
    let cases: Vec<(String, String)> = sources("web").into_iter().filter(|(p, _)| p.starts_with("usecase/")).collect();
    assert!(cases.iter().any(|(p, _)| p == "usecase/submit.rs"), "read {:?}", cases.iter().map(|c| &c.0).collect::<Vec<_>>());
    for (path, text) in &cases {
        let io = io_in(text, &IO_WORDS);
        assert!(io.is_empty(), "web/src/{path} does I/O or names the handlers: {io:?}; gather the facts in the handler and pass them in");
    }
    // The check can fail: a handler names them.
    let handler = sources("web").into_iter().find(|(p, _)| p == "http/bots.rs").unwrap().1;
    assert!(!io_in(&handler, &IO_WORDS).is_empty());
}
