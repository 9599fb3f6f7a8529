//! A private PostgreSQL server per test: the service's own launcher
//! (`koth_scheduler::pg`, what `koth up` runs) in a scratch folder.

use std::ops::Deref;
use std::path::{Path, PathBuf};

use koth_scheduler::pg::PrivatePostgres;

/// A running server in a test's scratch folder. Dropped, it stops (fast)
/// and its folder is removed, unless a panic is unwinding: then the folder
/// is kept, with its server log, to be read. (A CI run starts dozens of
/// these, at 45 MB each.) Derefs to the server, for its URL and port.
#[derive(Debug)]
pub struct TestPostgres {
    pg: std::mem::ManuallyDrop<PrivatePostgres>,
    dir: PathBuf,
}

impl Deref for TestPostgres {
    type Target = PrivatePostgres;
    fn deref(&self) -> &PrivatePostgres {
        &self.pg
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        // Stopped here rather than by the server's own drop, so that the
        // folder goes only once the server is down.
        let stopped = self.pg.stop().is_ok();
        if stopped && !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A fresh server in `dir` (emptied first), or `None` when PostgreSQL
/// cannot start here: the test then skips, saying why, except in CI where
/// it fails ([`crate::missing`]). Name `dir` after the test, under
/// [`crate::target_tmpdir!`].
#[track_caller]
pub fn postgres(dir: &Path) -> Option<TestPostgres> {
    let _ = std::fs::remove_dir_all(dir);
    match PrivatePostgres::start(dir, None) {
        Ok(pg) => {
            let dir = pg.data_dir().to_path_buf();
            Some(TestPostgres { pg: std::mem::ManuallyDrop::new(pg), dir })
        }
        Err(e) => {
            crate::missing(format!("PostgreSQL cannot start: {e}"));
            None
        }
    }
}

/// Whether PostgreSQL's binaries are here, for a test that has `koth`
/// start its own server ([`crate::missing`] if not).
#[track_caller]
pub fn postgres_binaries() -> bool {
    crate::available(koth_scheduler::pg::find_binaries().map_err(|e| format!("PostgreSQL's binaries are missing: {e}")))
}
