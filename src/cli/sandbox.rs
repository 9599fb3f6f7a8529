use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use koth_sandbox::{parse_duration, parse_size, run_once, Limits, Network, SandboxConfig};

mod bench;

#[derive(Subcommand)]
#[command(defer = true)]
pub enum SandboxCommand {
    /// Run one program in a fresh box and print its usage report.
    ///
    /// The exit code says what happened: the program's own exit code when it
    /// exited by itself (0 for success), 128+N when it died of signal N,
    /// 201 when it exceeded its CPU or wall time, 202 when the kernel killed it
    /// for memory, 203 when it wrote more than --output bytes to stdout or
    /// stderr, and 210 when the box could not be built (the message says why).
    #[command(after_help = "Example:\n  koth sandbox run --memory 64M --pids 32 --time 2s -- python3 -c 'print(1)'")]
    Run(Box<RunArgs>),
    /// Measure the sandbox: spawn latency, freeze/thaw cost, CPU accounting.
    Bench(bench::BenchArgs),
    /// Burn CPU time and print this process's own CPU time in ns (used by
    /// `bench` as a known busy loop).
    #[command(hide = true)]
    Spin {
        #[arg(long, default_value_t = 100)]
        cpu_ms: u64,
    },
}

#[derive(Args)]
pub struct RunArgs {
    /// Memory of the whole box (e.g. 64M, 1G); swap is off.
    #[arg(long, default_value = "256M", value_parser = size)]
    memory: u64,
    /// Processes and threads at once.
    #[arg(long, default_value_t = 64)]
    pids: u64,
    /// CPU time of the whole process tree (e.g. 2s, 500ms).
    #[arg(long, value_parser = duration)]
    time: Option<std::time::Duration>,
    /// Wall time (default: twice --time plus one second, or 20s).
    #[arg(long, value_parser = duration)]
    wall_time: Option<std::time::Duration>,
    /// Size of the box's scratch filesystem (work folder, /tmp, /dev/shm).
    #[arg(long, default_value = "64M", value_parser = size)]
    disk: u64,
    /// Largest file a process may write.
    #[arg(long, default_value = "64M", value_parser = size)]
    file_size: u64,
    /// Open files per process.
    #[arg(long, default_value_t = 256)]
    open_files: u64,
    /// Bytes of stdout and of stderr kept; more kills the program.
    #[arg(long, default_value = "1M", value_parser = size)]
    output: u64,
    /// Root filesystem the program sees (read-only).
    #[arg(long, default_value = "/")]
    root: PathBuf,
    /// Give the box a loopback interface and allow TCP connects to these ports.
    #[arg(long, value_delimiter = ',')]
    loopback_ports: Option<Vec<u16>>,
    /// Copy this file into the work folder (NAME=PATH or PATH), repeatable.
    #[arg(long = "file")]
    files: Vec<String>,
    /// Set an environment variable (NAME=VALUE), repeatable.
    #[arg(long = "env")]
    env: Vec<String>,
    /// Pass this process's stdin to the program.
    #[arg(long)]
    stdin: bool,
    /// Print the report as JSON (with the program's output).
    #[arg(long)]
    json: bool,
    /// Where per-box state lives on the host (root: /run/koth/sandbox; a user: $XDG_RUNTIME_DIR/koth/sandbox or /tmp/koth-UID/sandbox).
    #[arg(long, env = "KOTH_SANDBOX_RUNTIME_DIR", default_value_os_t = koth_sandbox::default_runtime_dir())]
    runtime_dir: PathBuf,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}
fn duration(s: &str) -> Result<std::time::Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

pub fn run(cmd: SandboxCommand) -> anyhow::Result<i32> {
    match cmd {
        SandboxCommand::Run(args) => run_program(*args),
        SandboxCommand::Bench(args) => bench::run(args),
        SandboxCommand::Spin { cpu_ms } => Ok(bench::spin(cpu_ms)),
    }
}

fn run_program(a: RunArgs) -> anyhow::Result<i32> {
    let wall = a.wall_time.or_else(|| a.time.map(|t| t * 2 + std::time::Duration::from_secs(1)));
    let limits = Limits {
        memory: a.memory,
        pids: a.pids,
        cpu_time: a.time,
        wall_time: Some(wall.unwrap_or(std::time::Duration::from_secs(20))),
        disk: a.disk,
        file_size: a.file_size,
        open_files: a.open_files,
        output: a.output,
        ..Limits::default()
    };
    let network = match a.loopback_ports {
        Some(connect_ports) => Network::Loopback { connect_ports },
        None => Network::None,
    };
    let config = SandboxConfig { root: a.root, limits, network, runtime_dir: a.runtime_dir, ..Default::default() };
    let env = a
        .env
        .iter()
        .map(|kv| {
            kv.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())).with_context(|| format!("--env {kv:?}: expected NAME=VALUE"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut files = Vec::new();
    for f in &a.files {
        let (name, path) = match f.split_once('=') {
            Some((n, p)) => (n.to_owned(), PathBuf::from(p)),
            None => {
                let p = PathBuf::from(f);
                let n = p.file_name().with_context(|| format!("--file {f:?} has no file name"))?;
                (n.to_string_lossy().into_owned(), p)
            }
        };
        let data = std::fs::read(&path).with_context(|| format!("--file: reading {}", path.display()))?;
        let mode = std::fs::metadata(&path).map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o755)?;
        files.push((name, data, mode));
    }
    let mut input = Vec::new();
    if a.stdin {
        std::io::stdin().read_to_end(&mut input).context("reading stdin")?;
    }
    let (program, args) = a.command.split_first().expect("clap requires a command");
    // One box, one program at a time: one launcher thread, not two per CPU.
    koth_sandbox::set_launcher_threads(1);
    let report = run_once(config, program, args, &env, &input, |sandbox| {
        for (name, data, mode) in &files {
            sandbox.workdir().write_file(name, data, *mode)?;
        }
        Ok(())
    })?;
    if a.json {
        let mut v = serde_json::to_value(&report)?;
        v["stdout"] = String::from_utf8_lossy(&report.stdout).into();
        v["stderr"] = String::from_utf8_lossy(&report.stderr).into();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        std::io::stdout().write_all(&report.stdout)?;
        std::io::stderr().write_all(&report.stderr)?;
        let u = &report.usage;
        eprintln!(
            "koth sandbox: {:?} ({}) wall {:.3}s cpu {:.3}s peak memory {} oom kills {} stdout {} B stderr {} B [cgroup {:?}, landlock {:?}, root {}, uid {}]",
            u.outcome,
            match u.exit {
                koth_sandbox::Exit::Code(c) => format!("exit code {c}"),
                koth_sandbox::Exit::Signal(s) => format!("signal {s}"),
            },
            u.wall_time.as_secs_f64(),
            u.cpu_time.as_secs_f64(),
            u.peak_memory.map_or("unknown".into(), |b| format!("{:.1} MiB", b as f64 / 1048576.0)),
            u.oom_kills,
            u.stdout_bytes,
            u.stderr_bytes,
            report.cgroup,
            report.landlock,
            report.root,
            report.uid,
        );
    }
    Ok(report.usage.outcome.cli_exit_code(report.usage.exit))
}
