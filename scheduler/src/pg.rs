//! A private PostgreSQL server started from the machine's own binaries, in
//! a data folder of its own: what `koth up` runs when no database URL is
//! given (and what the tests start, through `koth-testkit`).
//!
//! The binaries are found in `KOTH_PG_BIN`, else the newest
//! `/usr/lib/postgresql/<major>/bin`, else next to `pg_ctl` on `PATH`.
//! PostgreSQL refuses to run as root; when koth is root the server runs as
//! the `postgres` user (Debian's packages create it) and the data folder
//! belongs to that user. So that this user can reach the data folder, every
//! parent folder lacking it gets the search bit for others (`o+x`: enter,
//! not list nor read); keep data folders out of places where that matters. It listens on 127.0.0.1 only, with `trust`
//! authentication for the `koth` role: the data folder and the loopback port
//! are the boundary, so do not point it at a shared machine's public port.

use std::ffi::CString;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A running private server; stopped (fast) when dropped.
#[derive(Debug)]
pub struct PrivatePostgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    run_as: Option<(u32, u32)>,
    /// This value started the server (and so stops it when dropped).
    owned: bool,
}

/// Where PostgreSQL's programs are.
pub fn find_binaries() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("KOTH_PG_BIN") {
        let dir = PathBuf::from(dir);
        return if dir.join("pg_ctl").is_file() { Ok(dir) } else { Err(format!("KOTH_PG_BIN={} holds no pg_ctl", dir.display())) };
    }
    let mut majors: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, p): &(u32, PathBuf)| p.join("pg_ctl").is_file())
        .collect();
    majors.sort();
    if let Some((_, dir)) = majors.pop() {
        return Ok(dir);
    }
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        let p = dir.join("pg_ctl");
        if p.is_file() {
            let real = std::fs::canonicalize(&p).unwrap_or(p);
            return Ok(real.parent().unwrap().to_path_buf());
        }
    }
    Err("no PostgreSQL server binaries found (pg_ctl, initdb, postgres); install them \
         (Debian: apt-get install postgresql) or set KOTH_PG_BIN to their folder"
        .into())
}

fn postgres_user() -> Result<(u32, u32), String> {
    let name = CString::new("postgres").unwrap();
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err("running as root, and there is no `postgres` user to run the server as \
                    (PostgreSQL refuses root); create one or run koth as another user"
            .into());
    }
    Ok(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it next).
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl PrivatePostgres {
    /// Start a server on `data` (initialised on first use), on `port` or a
    /// free one, and make sure the `koth` database exists.
    pub fn start(data: &Path, port: Option<u16>) -> Result<PrivatePostgres, String> {
        let bin = find_binaries()?;
        let run_as = if unsafe { libc::geteuid() } == 0 { Some(postgres_user()?) } else { None };
        std::fs::create_dir_all(data).map_err(|e| format!("creating {}: {e}", data.display()))?;
        let data = std::fs::canonicalize(data).map_err(|e| format!("{}: {e}", data.display()))?;
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(&data, Some(uid), Some(gid)).map_err(|e| format!("chown {}: {e}", data.display()))?;
            // The server must reach its data folder through every parent.
            let mut p = data.parent();
            while let Some(dir) = p {
                if let Ok(meta) = std::fs::metadata(dir) {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = meta.permissions().mode();
                    if mode & 0o001 == 0 {
                        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o001));
                    }
                }
                p = dir.parent();
            }
        }
        let port = match port {
            Some(p) => p,
            None => free_port().map_err(|e| format!("finding a free port: {e}"))?,
        };
        if let Some(pid) = running_server(&data) {
            return Err(format!(
                "a PostgreSQL server (pid {pid}) is already running on {}; another koth is using this data folder",
                data.display()
            ));
        }
        let mut pg = PrivatePostgres { bin, data, port, run_as, owned: false };
        if !pg.data.join("PG_VERSION").exists() {
            pg.run("initdb", &["-D", pg.data.to_str().unwrap(), "-U", "koth", "--auth=trust", "-E", "UTF8", "--no-instructions"])?;
        }
        pg.start_server()?;
        // From here on the server is ours to stop (and only from here: a
        // failed start must never stop a server someone else started).
        pg.owned = true;
        // `createdb` fails harmlessly when the database exists.
        let exists = pg
            .command("psql")
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "koth", "-d", "postgres", "-tAc"])
            .arg("SELECT 1 FROM pg_database WHERE datname = 'koth'")
            .output()
            .map_err(|e| format!("running psql: {e}"))?;
        if String::from_utf8_lossy(&exists.stdout).trim() != "1" {
            pg.run("createdb", &["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "koth", "koth"])?;
        }
        Ok(pg)
    }

    fn command(&self, program: &str) -> Command {
        let path = if self.bin.join(program).is_file() { self.bin.join(program) } else { PathBuf::from(program) };
        let mut c = Command::new(path);
        c.stdin(Stdio::null()).current_dir("/");
        if let Some((uid, gid)) = self.run_as {
            // std drops supplementary groups when it changes the uid as root.
            c.uid(uid).gid(gid);
        }
        c
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let out = self.command(program).args(args).output().map_err(|e| format!("running {program}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{program} {} failed: {}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim(),
                String::from_utf8_lossy(&out.stdout).trim()
            ));
        }
        Ok(())
    }

    fn start_server(&self) -> Result<(), String> {
        let log = self.data.join("server.log");
        // TCP on loopback only; no Unix socket (its path length is limited and
        // nothing here needs it).
        let opts = format!("-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200", self.port);
        self.run("pg_ctl", &["-D", self.data.to_str().unwrap(), "-l", log.to_str().unwrap(), "-o", &opts, "-w", "-t", "60", "start"])
            .map_err(|e| {
                let tail = std::fs::read_to_string(&log).unwrap_or_default();
                let tail: Vec<&str> = tail.lines().rev().take(10).collect();
                format!("{e}\nserver log ({}):\n{}", log.display(), tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
            })
    }

    /// `postgres://koth@127.0.0.1:<port>/koth`
    pub fn url(&self) -> String {
        format!("postgres://koth@127.0.0.1:{}/koth", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// Stop the server (fast shutdown: clients are disconnected).
    pub fn stop(&self) -> Result<(), String> {
        self.run("pg_ctl", &["-D", self.data.to_str().unwrap(), "-m", "fast", "-w", "stop"])
    }

    /// Stop and start again on the same port and data.
    pub fn restart(&self) -> Result<(), String> {
        self.stop()?;
        self.start_server()
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        if self.owned {
            let _ = self.stop();
        }
    }
}

/// The pid of a live server on `data` (its `postmaster.pid` names a running
/// process), if any.
fn running_server(data: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    let pid: i32 = text.lines().next()?.trim().parse().ok()?;
    // SAFETY: kill with signal 0 only checks that the process exists.
    let alive = pid > 0 && (unsafe { libc::kill(pid, 0) } == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM));
    alive.then_some(pid)
}
