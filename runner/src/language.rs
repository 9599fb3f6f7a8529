//! Language definitions, one folder per language under `languages/` at the
//! repository's root, embedded at build time (see `languages/README.md`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/languages.rs"));
}

/// How bots in one language are compiled and run.
#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Language {
    pub name: String,
    pub display: String,
    pub extensions: Vec<String>,
    #[serde(default)]
    pub compile: Option<Vec<String>>,
    pub run: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub version: Vec<String>,
    #[serde(default)]
    pub first_move_extra_ms: Option<u64>,
}

/// Name of the compiled program in the bot's folder.
pub const ARTIFACT: &str = "bot";

impl Language {
    /// A command with `{main}` and `{artifact}` filled in.
    pub fn expand(template: &[String], main: &str) -> Vec<String> {
        template.iter().map(|a| a.replace("{main}", main).replace("{artifact}", ARTIFACT)).collect()
    }

    fn check(&self, folder: &str) -> Result<(), String> {
        let bad = |why: &str| Err(format!("languages/{folder}/language.json: {why}"));
        if self.name != folder {
            return bad(&format!("name {:?} differs from the folder name", self.name));
        }
        if self.extensions.is_empty() || self.run.is_empty() || self.version.is_empty() {
            return bad("extensions, run and version must not be empty");
        }
        if self.compile.as_ref().is_some_and(|c| c.is_empty()) {
            return bad("compile, when present, must not be empty");
        }
        Ok(())
    }
}

/// Every language, parsed and checked once.
pub fn all() -> &'static [Language] {
    static ALL: OnceLock<Vec<Language>> = OnceLock::new();
    ALL.get_or_init(|| {
        embedded::DEFINITIONS
            .iter()
            .map(|(folder, text)| {
                let lang: Language = serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("languages/{folder}/language.json is invalid: {e}"));
                lang.check(folder).unwrap_or_else(|e| panic!("{e}"));
                lang
            })
            .collect()
    })
}

pub fn by_name(name: &str) -> Option<&'static Language> {
    all().iter().find(|l| l.name == name)
}

pub fn by_extension(ext: &str) -> Option<&'static Language> {
    all().iter().find(|l| l.extensions.iter().any(|e| e == ext))
}

/// "c, cpp/cc/cxx, py, ..." for error messages.
pub fn extensions_list() -> String {
    all().iter().map(|l| l.extensions.join("/")).collect::<Vec<_>>().join(", ")
}

pub fn names_list() -> String {
    all().iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_definition_parses_and_extensions_are_unique() {
        assert!(all().len() >= 4);
        let mut seen = std::collections::HashSet::new();
        for l in all() {
            for e in &l.extensions {
                assert!(seen.insert(e.clone()), "extension {e} claimed twice");
            }
        }
        assert_eq!(by_extension("py").unwrap().name, "python");
        assert_eq!(by_name("cpp").unwrap().extensions[0], "cpp");
        assert_eq!(Language::expand(&["./{artifact}".into(), "{main}".into()], "m.c"), vec!["./bot", "m.c"]);
    }
}
