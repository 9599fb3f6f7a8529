use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{Error, Result};

/// Resource limits of one box. Memory, pids and CPU apply to the whole tree
/// of processes in the box (cgroup); the others are per process (rlimits) or
/// per box (scratch filesystem size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Memory of the whole box, page cache and tmpfs included; swap is off.
    pub memory: u64,
    /// Processes and threads in the box at once.
    pub pids: u64,
    /// CPU time of the whole tree, enforced by the supervisor from the cgroup
    /// (RLIMIT_CPU is set a little above it per process as a backstop).
    pub cpu_time: Option<Duration>,
    /// Wall time of one program run, enforced by the supervisor.
    pub wall_time: Option<Duration>,
    /// Size of the box's scratch tmpfs: work folder, /tmp and /dev/shm together.
    pub disk: u64,
    /// RLIMIT_FSIZE: largest file a process may write.
    pub file_size: u64,
    /// RLIMIT_NOFILE.
    pub open_files: u64,
    /// RLIMIT_STACK.
    pub stack: u64,
    /// Bytes of stdout and of stderr kept by [`run_once`](crate::run_once);
    /// a program that writes more is killed.
    pub output: u64,
    /// The box's CPU weight against its siblings and, through the
    /// supervisor's cgroup, the host's other work, in cgroup v2's units
    /// (1 to 10,000; an ordinary process weighs 100). One weight for the
    /// whole box, however many threads it runs (the `cpu` controller).
    pub cpu_weight: u64,
}

/// An ordinary process's CPU weight (cgroup v2's default).
pub const CPU_WEIGHT_DEFAULT: u64 = 100;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory: 256 << 20,
            pids: 64,
            cpu_time: Some(Duration::from_secs(10)),
            wall_time: Some(Duration::from_secs(20)),
            disk: 64 << 20,
            file_size: 64 << 20,
            open_files: 256,
            stack: 64 << 20,
            output: 1 << 20,
            cpu_weight: CPU_WEIGHT_DEFAULT,
        }
    }
}

/// What network a box gets. A box always has its own network namespace.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Network {
    /// An empty namespace: not even loopback is up.
    #[default]
    None,
    /// Loopback only. Programs may connect over TCP only to these ports
    /// (Landlock), where the supervisor listens with
    /// [`Sandbox::listen_tcp`](crate::Sandbox::listen_tcp); binding is denied.
    Loopback { connect_ports: Vec<u16> },
}

/// How to build a box.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxConfig {
    /// Root filesystem the program sees, read-only. `/` for the host.
    pub root: PathBuf,
    pub limits: Limits,
    pub network: Network,
    /// Where the supervisor keeps per-box mount points and slot locks
    /// (default: [`crate::default_runtime_dir`]).
    pub runtime_dir: PathBuf,
    /// First uid (and gid) of the slot range; slot `n` runs as `uid_base + n`.
    pub uid_base: u32,
    /// Number of slots, i.e. boxes that can exist at once on this host.
    pub slots: u32,
    /// Folders of the root filesystem that appear empty in the box (an empty
    /// read-only tmpfs over each that exists): where the host keeps state no
    /// program may see, such as other bots' compiled artifacts. Absolute.
    pub hidden: Vec<PathBuf>,
}

/// Where koth keeps its state unless told otherwise: hidden from every box.
pub const STATE_DIR: &str = "/var/lib/koth";

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            root: PathBuf::from("/"),
            limits: Limits::default(),
            network: Network::None,
            runtime_dir: crate::privilege::default_runtime_dir(),
            uid_base: 61000,
            slots: 1000,
            hidden: vec![PathBuf::from(STATE_DIR)],
        }
    }
}

impl SandboxConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        for h in &self.hidden {
            if !h.is_absolute() || h.components().any(|c| matches!(c, std::path::Component::ParentDir)) || h == Path::new("/") {
                return Err(Error::Config(format!("hidden folder {} must be an absolute path below / without ..", h.display())));
            }
        }
        let l = &self.limits;
        if l.memory < (4 << 20) {
            return Err(Error::Config(format!("memory limit {} bytes is below the 4 MiB minimum", l.memory)));
        }
        if l.pids < 1 {
            return Err(Error::Config("pids limit must be at least 1".into()));
        }
        if l.disk < (1 << 20) {
            return Err(Error::Config("disk limit must be at least 1 MiB".into()));
        }
        if !(1..=10_000).contains(&l.cpu_weight) {
            return Err(Error::Config(format!("CPU weight {} is outside 1 to 10000", l.cpu_weight)));
        }
        if l.open_files < 3 {
            return Err(Error::Config("open files limit must be at least 3".into()));
        }
        if self.uid_base == 0 || self.uid_base.checked_add(self.slots).is_none() {
            return Err(Error::Config(format!("uid range {}..+{} is not a valid unprivileged range", self.uid_base, self.slots)));
        }
        if !self.root.is_absolute() {
            return Err(Error::Config(format!("root {:?} must be an absolute path", self.root)));
        }
        Ok(())
    }
}

/// Parse a size such as `64M`, `1G`, `512k` or `1048576` (binary units).
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let bad = || Error::Config(format!("size {text:?} is not a number with an optional unit k, M, G (e.g. 64M)"));
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// Parse a duration such as `2s`, `50ms`, `1.5s`, `200us` or `3` (seconds).
pub fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || Error::Config(format!("duration {text:?} is not a number with an optional unit us, ms, s, m (e.g. 2s)"));
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1e3,
        "us" | "µs" => n / 1e6,
        "m" | "min" => n * 60.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("512k").unwrap(), 512 << 10);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert!(parse_size("12X").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("50ms").unwrap(), Duration::from_millis(50));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("200us").unwrap(), Duration::from_micros(200));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn validation_rejects_nonsense() {
        let mut c = SandboxConfig::default();
        assert!(c.validate().is_ok());
        c.limits.memory = 1000;
        assert!(c.validate().unwrap_err().to_string().contains("memory"));
        let c = SandboxConfig { root: "relative".into(), ..SandboxConfig::default() };
        assert!(c.validate().is_err());
    }
}
