//! What koth keeps on a host's disk (compiled artifacts, image exports,
//! `koth up`'s data), and keeping it from the bots: every such folder is
//! created readable by root only (folders 0700, files 0600; the supervisor
//! reads as root), and hidden from every box ([`hide`]), so a bot whose
//! language runs on the host's `/` sees those folders empty.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use koth_sandbox::{SandboxConfig, STATE_DIR};

/// koth's state folders on this host: `/var/lib/koth` and wherever
/// `KOTH_CACHE`, `KOTH_IMAGES`, `KOTH_GAMES` and `KOTH_DATA` put the cache,
/// the image store, added games and `koth up`'s data.
pub fn dirs() -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from(STATE_DIR), artifacts_dir(), images_dir(), games_dir()];
    if let Some(d) = std::env::var_os("KOTH_DATA") {
        v.push(PathBuf::from(d));
    }
    v.sort();
    v.dedup();
    v
}

/// The artifact cache's folder: `KOTH_CACHE`, else `/var/lib/koth/artifacts`
/// for root, `$XDG_CACHE_HOME/koth/artifacts` (`~/.cache/koth/artifacts`)
/// for a user (rootless local play, see `koth_sandbox::Privilege`).
pub fn artifacts_dir() -> PathBuf {
    std::env::var_os("KOTH_CACHE").map(PathBuf::from).unwrap_or_else(|| default_dir("XDG_CACHE_HOME", ".cache", "artifacts"))
}

/// The image store's folder: `KOTH_IMAGES`, else `/var/lib/koth/images` for
/// root, `$XDG_DATA_HOME/koth/images` (`~/.local/share/koth/images`) for a
/// user.
pub fn images_dir() -> PathBuf {
    std::env::var_os("KOTH_IMAGES").map(PathBuf::from).unwrap_or_else(|| default_dir("XDG_DATA_HOME", ".local/share", "images"))
}

/// Where a runner writes out the games hosts added to its server
/// ([`crate::game::GamePackage::unpack`]): `KOTH_GAMES`, else
/// `/var/lib/koth/games` for root, `~/.cache/koth/games` for a user.
pub fn games_dir() -> PathBuf {
    std::env::var_os("KOTH_GAMES").map(PathBuf::from).unwrap_or_else(|| default_dir("XDG_CACHE_HOME", ".cache", "games"))
}

/// `/var/lib/koth/<leaf>` for root; for a user, `<$xdg or ~/home_rel>/koth/<leaf>`
/// (`/tmp/koth-<uid>/<leaf>` if the user has no home).
fn default_dir(xdg: &str, home_rel: &str, leaf: &str) -> PathBuf {
    match koth_sandbox::Privilege::current() {
        koth_sandbox::Privilege::Root => PathBuf::from(STATE_DIR).join(leaf),
        koth_sandbox::Privilege::Rootless { uid, .. } => {
            let abs = |v: Option<std::ffi::OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
            abs(std::env::var_os(xdg))
                .or_else(|| abs(std::env::var_os("HOME")).map(|h| h.join(home_rel)))
                .map(|base| base.join("koth").join(leaf))
                .unwrap_or_else(|| PathBuf::from(format!("/tmp/koth-{uid}/{leaf}")))
        }
    }
}

/// Hide koth's state folders, and `extra` ones, from the boxes of `cfg`.
pub fn hide<'a>(cfg: &mut SandboxConfig, extra: impl IntoIterator<Item = &'a Path>) {
    for d in dirs().into_iter().chain(extra.into_iter().map(Path::to_path_buf)) {
        if d.is_absolute() && !cfg.hidden.contains(&d) {
            cfg.hidden.push(d);
        }
    }
}

/// Create `dir` (and its parents) if need be, and make it root's only:
/// also an existing folder made by an older koth with mode 0755.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_folders_are_root_only_even_when_they_existed() {
        let base = std::env::temp_dir().join(format!("koth-state-{}", std::process::id()));
        let dir = base.join("a/b");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        let fresh = base.join("c/d");
        private_dir(&fresh).unwrap();
        assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn every_state_folder_is_hidden_once() {
        let mut cfg = SandboxConfig::default();
        hide(&mut cfg, [Path::new("/srv/koth-cache"), Path::new("relative/ignored")]);
        for d in dirs() {
            assert_eq!(cfg.hidden.iter().filter(|h| **h == d).count(), 1, "{}", d.display());
        }
        assert!(cfg.hidden.contains(&PathBuf::from("/srv/koth-cache")));
        assert!(!cfg.hidden.iter().any(|h| h.is_relative()));
    }
}
