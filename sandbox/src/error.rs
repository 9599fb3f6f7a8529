use std::io;

/// Everything that can go wrong while setting up or running a box.
///
/// Messages say what failed and, where the host is at fault, what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A system call needed to build or control the box failed.
    #[error("{what}: {source}")]
    Os {
        what: String,
        #[source]
        source: io::Error,
    },
    /// The host cannot confine programs (no usable cgroup hierarchy, missing
    /// kernel feature, not root). Never fall back to an unconfined program.
    #[error("this host cannot run the sandbox: {0}")]
    Unsupported(String),
    /// The caller asked for something that makes no sense.
    #[error("invalid sandbox configuration: {0}")]
    Config(String),
    /// Starting the program failed inside the child, before or at `execve`.
    #[error("could not start the program: {stage} failed: {source}")]
    Spawn {
        stage: &'static str,
        #[source]
        source: io::Error,
    },
    /// A path in the work folder is not what the supervisor may touch
    /// (a symlink, a FIFO, a hard link, a directory where a file was expected,
    /// or a name that leaves the folder).
    #[error("refused to use {path:?} in the work folder: {reason}")]
    UnsafePath { path: String, reason: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn os(what: impl Into<String>, source: io::Error) -> Self {
        Error::Os { what: what.into(), source }
    }
    pub(crate) fn last_os(what: impl Into<String>) -> Self {
        Error::os(what, io::Error::last_os_error())
    }
}
