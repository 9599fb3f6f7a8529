use clap::{Parser, Subcommand};

mod ab_cmd;
mod ab_server;
mod api_bench;
mod bot_data;
mod client;
mod examples;
mod fairness_bench;
mod finals_bench;
mod host;
mod languages;
mod match_bench;
mod match_cmd;
mod queue_bench;
mod replay;
mod replay_bench;
mod rootless;
mod sandbox;
mod secrets;
mod service;
mod soak;
mod start_bench;
mod starter;
mod up;

/// What a host sets about the API (`koth up`, `koth web`).
#[derive(clap::Args, Clone, Debug)]
pub struct ApiArgs {
    /// Tokens made through the API (sign-up, new, rotated) stop working
    /// this many days after they are made (default: never). The host's
    /// token in the data folder never expires.
    #[arg(long, env = "KOTH_TOKEN_DAYS", value_parser = clap::value_parser!(u32).range(1..=36500))]
    pub token_days: Option<u32>,
    /// Challenges one account may have queued or playing at once (hosts are
    /// not limited); more are refused with 429 until one is over.
    #[arg(long, env = "KOTH_CHALLENGES_IN_FLIGHT", default_value_t = koth_web::http::DEFAULT_CHALLENGES_IN_FLIGHT,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub challenges_in_flight: u32,
    /// Versions one account may submit in an hour (hosts are not limited).
    #[arg(long, env = "KOTH_SUBMISSIONS_PER_HOUR", default_value_t = koth_web::http::DEFAULT_SUBMISSIONS_PER_HOUR,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub submissions_per_hour: u32,
    /// MiB of sources one account may upload in a day.
    #[arg(long, env = "KOTH_UPLOAD_MIB_PER_DAY", default_value_t = koth_web::http::DEFAULT_UPLOAD_BYTES_PER_DAY >> 20,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub upload_mib_per_day: u64,
    /// Versions of one account waiting for their compile at once.
    #[arg(long, env = "KOTH_COMPILES_QUEUED", default_value_t = koth_web::http::DEFAULT_COMPILES_QUEUED,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub compiles_queued: u32,
    /// Accounts that may be made from one address in an hour.
    #[arg(long, env = "KOTH_SIGNUPS_PER_ADDRESS_HOUR", default_value_t = koth_web::http::DEFAULT_SIGNUPS.per_address_per_hour,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub signups_per_address_hour: u32,
    /// Accounts that may be made in all in an hour.
    #[arg(long, env = "KOTH_SIGNUPS_PER_HOUR", default_value_t = koth_web::http::DEFAULT_SIGNUPS.per_hour,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub signups_per_hour: u32,
}

impl ApiArgs {
    pub fn options(&self) -> koth_web::http::ApiOptions {
        koth_web::http::ApiOptions {
            token_lifetime: self.token_days.map(|d| std::time::Duration::from_secs(u64::from(d) * 86_400)),
            challenges_in_flight: self.challenges_in_flight,
            submissions_per_hour: self.submissions_per_hour,
            upload_bytes_per_day: self.upload_mib_per_day << 20,
            compiles_queued: self.compiles_queued,
            signups: koth_ladder::quota::SignupLimits {
                per_address_per_hour: self.signups_per_address_hour,
                per_hour: self.signups_per_hour,
            },
        }
    }
}

/// What one HTTP client may hold and send (`koth up`, `koth web`); see
/// "HTTP limits" in docs/operations.md.
#[derive(clap::Args, Clone, Debug)]
pub struct HttpArgs {
    /// Seconds a client has to send a request's line and headers (and that a
    /// kept-alive connection may sit idle); then its connection is closed.
    #[arg(long, env = "KOTH_HEADER_TIMEOUT_SECS", default_value_t = koth_web::serve::DEFAULT_HEADER_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout_secs: u64,
    /// Connections held at once (default: the descriptor limit, raised to
    /// its hard limit, less 1024); more are closed at once.
    #[arg(long, env = "KOTH_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Connections held at once from one IPv4 address or IPv6 /64; more are
    /// closed at once.
    #[arg(long, env = "KOTH_MAX_CONNECTIONS_PER_ADDRESS", default_value_t = koth_web::serve::DEFAULT_CONNECTIONS_PER_ADDRESS)]
    pub max_connections_per_address: usize,
    /// Longest URI (path and query) in bytes; longer gets 414 (at most 65534).
    #[arg(long, env = "KOTH_MAX_URI_BYTES", default_value_t = koth_web::serve::DEFAULT_MAX_URI_BYTES,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(256..=65534))]
    pub max_uri_bytes: usize,
    /// Longest request line and headers together, in bytes; longer gets 431.
    #[arg(long, env = "KOTH_MAX_HEAD_BYTES", default_value_t = koth_web::serve::DEFAULT_MAX_HEAD_BYTES,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1024..=1 << 20))]
    pub max_head_bytes: usize,
}

impl HttpArgs {
    pub fn limits(&self) -> koth_web::serve::HttpLimits {
        koth_web::serve::HttpLimits {
            header_timeout: std::time::Duration::from_secs(self.header_timeout_secs),
            max_connections: self.max_connections.unwrap_or_else(koth_web::serve::default_max_connections),
            max_connections_per_address: self.max_connections_per_address.max(1),
            max_uri_bytes: self.max_uri_bytes,
            max_head_bytes: self.max_head_bytes,
        }
    }
}

/// How runners choose between waiting jobs: shared by `koth runner` and
/// `koth up`.
#[derive(clap::Args, Clone, Debug)]
pub struct QueueArgs {
    /// The share of match starts challenges may take while ladder matches
    /// wait (0 to 1; over it they wait behind ladder matches, and run when
    /// nothing else waits). 1 puts every challenge first.
    #[arg(long, env = "KOTH_CHALLENGE_SHARE", default_value_t = 0.1, value_parser = share)]
    pub challenge_share: f64,
    /// The share of the runners' time (over the last five minutes) that
    /// authors' compiles and validation games may take while matches wait
    /// (0 to 1; a host's are not counted; 1 puts every compile first).
    #[arg(long, env = "KOTH_COMPILE_SHARE", default_value_t = koth_scheduler::db::queue::DEFAULT_COMPILE_SHARE, value_parser = share)]
    pub compile_share: f64,
    /// Compiles and validation games of one account that may run at once.
    #[arg(long, env = "KOTH_COMPILES_PER_ACCOUNT", default_value_t = koth_scheduler::db::queue::DEFAULT_COMPILES_PER_ACCOUNT,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub compiles_per_account: u32,
}

/// A match's replay limit, as `koth match`, `koth runner` and `koth up`
/// take it (`32M`, `1MiB`): at least 64 KiB (the head of an external
/// game's replay may be its referee's first line), at most
/// [`koth_runner::engine::MAX_REPLAY_LIMIT`].
pub fn replay_limit(s: &str) -> Result<u64, String> {
    let n = koth_sandbox::parse_size(s).map_err(|e| e.to_string())?;
    let most = koth_runner::engine::MAX_REPLAY_LIMIT;
    if !(64 << 10..=most).contains(&n) {
        return Err(format!("{s:?}: a replay limit is from 64K to {}M", most >> 20));
    }
    Ok(n)
}

fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("{s:?}: give a fraction from 0 to 1, e.g. 0.1")),
    }
}

impl QueueArgs {
    pub fn fair_share(&self) -> koth_scheduler::db::queue::FairShare {
        koth_scheduler::db::queue::FairShare {
            share: self.challenge_share,
            compile_share: self.compile_share,
            compiles_per_account: self.compiles_per_account,
            ..Default::default()
        }
    }
}

/// Where bots' toolchains and compiled artifacts live, and where boxes
/// keep their state: shared by the commands that build and run bots.
#[derive(clap::Args, Clone, Debug)]
pub struct BotStoreArgs {
    /// The image store (exported image filesystems).
    #[arg(long, env = "KOTH_IMAGES", default_value_os_t = koth_runner::image::ImageStore::default_dir())]
    pub images: std::path::PathBuf,
    /// Where compiled bots are cached (by source and image).
    #[arg(long, env = "KOTH_CACHE", default_value_os_t = koth_runner::compile::ArtifactCache::default_dir())]
    pub cache: std::path::PathBuf,
    /// Where boxes keep their mount points and slot locks.
    #[arg(long, env = "KOTH_SANDBOX_RUNTIME_DIR", default_value_os_t = koth_sandbox::default_runtime_dir(), hide = true)]
    pub runtime_dir: std::path::PathBuf,
    /// First uid of the boxes' slot range.
    #[arg(long, env = "KOTH_SANDBOX_UID_BASE", default_value_t = 61000, hide = true)]
    pub uid_base: u32,
}

impl BotStoreArgs {
    /// Boxes that see nothing of koth's state: the default folders, and
    /// these images and cache wherever they are.
    pub fn sandbox(&self) -> koth_sandbox::SandboxConfig {
        let mut c = koth_sandbox::SandboxConfig {
            runtime_dir: self.runtime_dir.clone(),
            uid_base: self.uid_base,
            ..koth_sandbox::SandboxConfig::default()
        };
        let (images, cache) = (std::path::absolute(&self.images).ok(), std::path::absolute(&self.cache).ok());
        koth_runner::state::hide(&mut c, images.iter().chain(&cache).map(|p| p.as_path()));
        c
    }

    pub fn builder(&self, policy: koth_runner::bot::ImagePolicy) -> koth_runner::bot::Builder {
        koth_runner::bot::Builder {
            policy,
            store: koth_runner::image::ImageStore::open(&self.images),
            cache: Some(koth_runner::compile::ArtifactCache::open(&self.cache)),
            ..koth_runner::bot::Builder::host(self.sandbox())
        }
    }
}

/// Exit code when koth itself could not do what was asked (bad arguments,
/// a host that cannot run the sandbox, ...).
pub const EXIT_SETUP_FAILED: i32 = 210;

#[derive(Parser)]
#[command(name = "koth", version, about = "Host King-of-the-Hill programming contests")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `koth bench ...`: koth's benchmarks, apart from an author's commands.
#[derive(Subcommand)]
#[command(defer = true)]
enum BenchCommand {
    /// A move's cost against the raw pipe round trip.
    Match(match_bench::BenchArgs),
    /// Charged timeouts of a bot within its limit while other processes load the machine.
    Fairness(fairness_bench::FairnessBenchArgs),
    /// The job queue's claim + complete throughput against raw SQL (pgbench).
    Queue(queue_bench::QueueBenchArgs),
    /// Storing and showing replays: the longest match of each game, packed against jsonb.
    Replay(replay_bench::ReplayBenchArgs),
    /// `koth up`'s resident memory over a long run (the example ladders playing, a visitor reading replays).
    Soak(soak::SoakArgs),
    /// A load test on loopback: readers and submitters against the whole service, latencies printed.
    Api(api_bench::ApiBenchArgs),
    /// koth's own start and a box from the command line, against `/bin/true` (and bubblewrap when installed).
    Start(start_bench::StartBenchArgs),
    /// Adaptive finals against a round robin of the same budget, simulated: top 3 found and matches taken.
    Finals(finals_bench::FinalsBenchArgs),
}

#[derive(Subcommand)]
#[command(defer = true)]
enum Command {
    /// Submit a bot to a server and follow its compile and first matches.
    Submit(client::SubmitArgs),
    /// A ladder's bots on a server.
    Bots(client::LadderArg),
    /// A ladder's leaderboard on a server.
    Leaderboard(client::LadderArg),
    /// Hosts: list, create, pause and resume ladders; disable and enable bots.
    #[command(subcommand)]
    Ladder(host::LadderCommand),
    /// Hosts: a ladder's contest: show it, set its deadline, start its finals, export its final standings.
    #[command(subcommand)]
    Contest(host::ContestCommand),
    /// A server's games; hosts: add one from its folder (a referee program in any language).
    #[command(subcommand)]
    Game(host::GameCommand),
    /// Hosts: the audit trail, newest first: match and compile outcomes, validation verdicts, disables, hosts' actions.
    Audit(host::AuditArgs),
    /// Replays: download a server's, view one in the browser, check it against the rules, rerun your bot's seat.
    #[command(subcommand)]
    Replay(client::ReplayCommand),
    /// Your bot's stderr in a match on a server.
    Logs(client::LogsArgs),
    /// Make an account on a server and save its token (as `koth login` does).
    Signup(client::SignupArgs),
    /// Save a server and your token for the commands above (checked with the server first).
    Login(client::LoginArgs),
    /// Write a game's starter kit in a language to the current folder: a bot that plays legally, to improve.
    Starter(starter::StarterArgs),
    /// Forget the saved login (--revoke: also revoke the token on the server).
    Logout(client::LogoutArgs),
    /// Your API tokens on a server: list, new, revoke, rotate.
    #[command(subcommand)]
    Tokens(client::TokensCommand),
    /// The languages koth knows, their images, building and measuring them.
    Languages(languages::LanguagesArgs),
    /// Play one match on this machine, with the engine the ladder uses.
    Match(match_cmd::MatchArgs),
    /// Is NEW better than OLD? Pairs of games with the seats swapped on this machine (or, with --bot, on a server), until a sequential test decides.
    Ab(ab_cmd::AbArgs),
    /// Benchmarks for koth's developers and hosts: each prints figures beside its anchor, measured in the same run.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run a worker: claim compile and match jobs from the database and run them.
    Runner(service::RunnerArgs),
    /// Keep every ladder busy: choose and queue the next matches.
    Scheduler(service::SchedulerArgs),
    /// The whole service on this machine: database, scheduler, runners, web pages and API.
    Up(up::UpArgs),
    /// Serve the web pages and the HTTP API of a contest's database.
    Web(service::WebArgs),
    /// Run programs under koth's sandbox, and measure it.
    #[command(subcommand)]
    Sandbox(sandbox::SandboxCommand),
    /// Administrators: let a user play `koth match` without root on cgroup v1 (their cgroups, made once).
    #[command(subcommand)]
    Rootless(rootless::RootlessCommand),
}

impl Cli {
    /// Long-running services log what they do (requests, jobs) by default;
    /// commands a person runs log only warnings.
    pub fn is_service(&self) -> bool {
        matches!(self.command, Command::Up(_) | Command::Web(_) | Command::Runner(_) | Command::Scheduler(_))
    }
}

pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Languages(args) => languages::run(args),
        Command::Submit(args) => client::submit(args),
        Command::Bots(args) => client::bots(args),
        Command::Leaderboard(args) => client::leaderboard(args),
        Command::Ladder(cmd) => host::ladder(cmd),
        Command::Contest(cmd) => host::contest(cmd),
        Command::Game(cmd) => host::game(cmd),
        Command::Audit(args) => host::audit(args),
        Command::Replay(cmd) => client::replay(cmd),
        Command::Logs(args) => client::logs(args),
        Command::Signup(args) => client::signup(args),
        Command::Login(args) => client::login(args),
        Command::Starter(args) => starter::run(args),
        Command::Logout(args) => client::logout(args),
        Command::Tokens(cmd) => client::tokens(cmd),
        Command::Match(args) => match_cmd::run(args),
        Command::Ab(args) => ab_cmd::run(args),
        Command::Bench(BenchCommand::Match(args)) => match_bench::run(args),
        Command::Bench(BenchCommand::Fairness(args)) => fairness_bench::run(args),
        Command::Bench(BenchCommand::Queue(args)) => queue_bench::run(args),
        Command::Bench(BenchCommand::Soak(args)) => soak::run(args),
        Command::Bench(BenchCommand::Replay(args)) => replay_bench::run(args),
        Command::Bench(BenchCommand::Api(args)) => api_bench::run(args),
        Command::Bench(BenchCommand::Finals(args)) => finals_bench::run(args),
        Command::Bench(BenchCommand::Start(args)) => start_bench::run(args),
        Command::Runner(args) => service::runner(args),
        Command::Scheduler(args) => service::scheduler(args),
        Command::Up(args) => up::run(args),
        Command::Web(args) => service::web(args),
        Command::Sandbox(cmd) => sandbox::run(cmd),
        Command::Rootless(cmd) => rootless::run(cmd),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every subcommand is built only when it is the one being parsed
    /// (`#[command(defer = true)]`), so clap's checks of a subcommand's
    /// arguments run only then: this builds the whole tree and checks it.
    #[test]
    fn every_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// `koth sandbox run` starts without building the other commands'
    /// arguments (`koth bench start` measures what it saves): a group of
    /// commands (`koth sandbox`) holds its commands' names and help lines,
    /// a command its arguments only once it is the one parsed.
    #[test]
    fn arguments_are_built_only_for_the_command_parsed() {
        let root = Cli::command();
        for path in [&["submit"][..], &["sandbox", "run"], &["ladder", "create"], &["bench", "start"]] {
            let mut command = &root;
            for name in path {
                command = command.find_subcommand(name).unwrap_or_else(|| panic!("koth {path:?}"));
            }
            assert_eq!(command.get_arguments().count(), 0, "`koth {}` had its arguments built before being parsed", path.join(" "));
        }
    }

    /// A deferred subcommand parses as it did built up front, nested ones
    /// too, and its errors still name what was wrong.
    #[test]
    fn deferred_subcommands_parse_and_refuse_as_before() {
        let cli = Cli::try_parse_from(["koth", "sandbox", "run", "--", "/bin/true"]).expect("sandbox run parses");
        assert!(matches!(cli.command, Command::Sandbox(_)));
        let cli = Cli::try_parse_from(["koth", "ladder", "list", "--server", "http://127.0.0.1:1"]).expect("ladder list parses");
        assert!(matches!(cli.command, Command::Ladder(_)));
        let cli = Cli::try_parse_from(["koth", "bench", "start", "--rounds", "3"]).expect("bench start parses");
        assert!(matches!(cli.command, Command::Bench(BenchCommand::Start(_))));
        let err = Cli::try_parse_from(["koth", "bench", "start", "--no-such-option"]).err().expect("an unknown option is refused");
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
        assert!(err.to_string().contains("--no-such-option"), "{err}");
        let err = Cli::try_parse_from(["koth", "ladder", "no-such-subcommand"]).err().expect("an unknown subcommand is refused");
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidSubcommand);
    }
}
