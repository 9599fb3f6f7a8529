//! koth on a Docker Swarm, end to end: `docker/stack.yml` deployed with
//! `docker stack deploy` on a one-node swarm, as a host would.
//!
//! The swarm is made if the engine has none (and left again at the end; an
//! existing swarm is used, and what the test added to it removed). The two
//! secrets (the database password, the host's token) are made with random
//! values and reach koth only as files. The database is pinned to the node
//! labelled `koth.db=true`; runners start as one replica under Docker's
//! default seccomp profile. On a ladder of slow bots (30 ms a move, 150
//! turns: a match lasts seconds) the test measures matches per
//! minute with one runner, scales the runners to 3 with `docker service
//! scale`, kills (SIGKILL) a runner task's container one second into a
//! match, and measures again with three. Then: the killed match was claimed
//! again and finished once, no match or job failed, every finished match
//! has every seat's result and at most one rating change per seat, every
//! match was played by one of the stack's runners, and no job is left held
//! by a dead runner. The stack, its volumes and secrets are removed.
//!
//! Needs Docker and the images the compose stage of `.ci/run` builds
//! (`koth:latest`, `koth-images:latest`, `postgres:15-bookworm`,
//! `koth-lang-python`); `KOTH_IMAGE` and `KOTH_IMAGES_IMAGE` name others.
//! With `KOTH_BENCH_SECONDS=S` it prints matches per minute over windows
//! of S seconds with one runner and with three; without it, it measures
//! one runner's 30 s window only (at least three matches must finish).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod compose_stack;
use compose_stack::{assert_nothing_lost_or_twice, bench_window, get, kill_missed_the_try, post, repo};

fn docker(args: &[&str]) -> Output {
    Command::new("docker").args(args).stdin(Stdio::null()).output().unwrap()
}

/// A docker command that must work; its stdout, trimmed.
fn docker_ok(args: &[&str]) -> String {
    let out = docker(args);
    assert!(
        out.status.success(),
        "docker {}: {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b)).unwrap();
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The stack, its secrets and what the test changed in the swarm; all of
/// it undone on drop.
struct SwarmStack {
    name: String,
    secrets: String,
    port: u16,
    host_token: String,
    /// The test made the swarm (it leaves it at the end).
    made_swarm: bool,
    /// The node had no `koth.db` label (the test removes the one it added).
    added_label: Option<String>,
}

impl SwarmStack {
    fn new() -> Option<SwarmStack> {
        if !docker(&["info"]).status.success() {
            koth_testkit::missing("Docker is missing (docker info failed); a Docker engine is needed");
            return None;
        }
        for image in [
            image("KOTH_IMAGE", "koth:latest"),
            image("KOTH_IMAGES_IMAGE", "koth-images:latest"),
            "postgres:15-bookworm".into(),
            "koth-lang-python:latest".into(),
        ] {
            if !docker(&["image", "inspect", &image]).status.success() {
                koth_testkit::missing(format!(
                    "the image {image} is missing: .ci/run builds it (docker/local-base-images.sh, koth languages build, docker-compose build)"
                ));
                return None;
            }
        }
        let state = docker_ok(&["info", "--format", "{{.Swarm.LocalNodeState}}"]);
        let made_swarm = match state.as_str() {
            "inactive" => {
                if !docker(&["swarm", "init"]).status.success() {
                    // More than one address to choose from: the loopback one serves a one-node swarm.
                    docker_ok(&["swarm", "init", "--advertise-addr", "127.0.0.1"]);
                }
                true
            }
            "active" => false,
            other => panic!("the engine's swarm is {other:?}: neither inactive nor active"),
        };
        let node = docker_ok(&["info", "--format", "{{.Swarm.NodeID}}"]);
        let labels = docker_ok(&["node", "inspect", "--format", "{{json .Spec.Labels}}", &node]);
        let added_label = if labels.contains("\"koth.db\":\"true\"") {
            None
        } else {
            docker_ok(&["node", "update", "--label-add", "koth.db=true", &node]);
            Some(node)
        };
        let name = format!("kothswarm{}", std::process::id());
        let stack = SwarmStack {
            secrets: name.clone(),
            name,
            port: koth_scheduler::pg::free_port().unwrap(),
            host_token: random_hex(32),
            made_swarm,
            added_label,
        };
        for (secret, value) in [("db_password", random_hex(16)), ("host_token", stack.host_token.clone())] {
            let mut child = Command::new("docker")
                .args(["secret", "create", &format!("{}_{secret}", stack.secrets), "-"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .unwrap();
            std::io::Write::write_all(child.stdin.as_mut().unwrap(), format!("{value}\n").as_bytes()).unwrap();
            drop(child.stdin.take());
            assert!(child.wait().unwrap().success(), "docker secret create {secret}");
        }
        Some(stack)
    }

    fn deploy(&self) {
        let out = Command::new("docker")
            .args(["stack", "deploy", "-c"])
            .arg(repo().join("docker/stack.yml"))
            .args(["--resolve-image", "never", &self.name])
            .env("KOTH_SECRETS", &self.secrets)
            .env("KOTH_PORT", self.port.to_string())
            .env("KOTH_LANGUAGES", "python")
            // A killed runner's job is rescued after this long.
            .env("KOTH_RUNNER_LEASE", "10s")
            .env("KOTH_RUNNER_REPLICAS", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "docker stack deploy: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Running containers of one of the stack's services.
    fn containers(&self, service: &str) -> Vec<String> {
        let filter = format!("label=com.docker.swarm.service.name={}_{service}", self.name);
        docker_ok(&["ps", "-q", "--filter", &filter]).lines().map(String::from).collect()
    }

    /// SQL through the database's container.
    fn sql(&self, query: &str) -> String {
        let db = self.containers("db").into_iter().next().unwrap_or_else(|| panic!("no database container:\n{}", self.logs()));
        docker_ok(&["exec", &db, "psql", "-U", "koth", "-d", "koth", "-tAc", query])
    }

    fn sql_count(&self, query: &str) -> i64 {
        let text = self.sql(query);
        text.parse().unwrap_or_else(|_| panic!("{query}: {text}"))
    }

    fn logs(&self) -> String {
        let mut text = docker_ok(&["stack", "ps", "--no-trunc", &self.name]);
        for service in ["web", "runner", "images"] {
            let out = docker(&["service", "logs", "--tail", "20", &format!("{}_{service}", self.name)]);
            text.push_str(&format!("\n--- {service}\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
        }
        text
    }

    /// Matches finished per minute over a window, the runners already busy:
    /// the matches finished in the window less one, over the time between
    /// the first and the last of them (by the database's clock), so that a
    /// window of a few matches is not rounded to whole matches.
    fn per_minute(&self, window: Duration) -> f64 {
        std::thread::sleep(Duration::from_secs(5));
        let t0 = self.sql("SELECT now()");
        std::thread::sleep(window);
        let ends = self.sql(&format!(
            "SELECT extract(epoch FROM j.finished_at) FROM jobs j JOIN matches m ON m.job_id = j.id \
             WHERE m.state = 'finished' AND j.finished_at > '{t0}' ORDER BY j.finished_at"
        ));
        let ends: Vec<f64> = ends.lines().map(|l| l.parse().unwrap()).collect();
        assert!(ends.len() >= 3, "only {} matches finished in {} s:\n{}", ends.len(), window.as_secs(), self.logs());
        (ends.len() - 1) as f64 * 60.0 / (ends[ends.len() - 1] - ends[0])
    }

    /// The median time a finished match took on its runner, in seconds.
    fn median_match_seconds(&self) -> f64 {
        self.sql(
            "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM j.finished_at - j.started_at)) \
             FROM jobs j JOIN matches m ON m.job_id = j.id WHERE m.state = 'finished'",
        )
        .parse()
        .unwrap()
    }

    fn scale(&self, runners: usize) {
        docker_ok(&["service", "scale", "--detach", &format!("{}_runner={runners}", self.name)]);
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.containers("runner").len() != runners {
            assert!(Instant::now() < deadline, "{runners} runners did not start:\n{}", self.logs());
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

fn image(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.into())
}

impl Drop for SwarmStack {
    fn drop(&mut self) {
        if std::env::var_os("KOTH_E2E_KEEP").is_some() {
            return;
        }
        let _ = docker(&["stack", "rm", &self.name]);
        // Volumes and secrets can go once the stack's containers have.
        let filter = format!("label=com.docker.stack.namespace={}", self.name);
        let deadline = Instant::now() + Duration::from_secs(90);
        while Instant::now() < deadline && docker(&["ps", "-q", "--filter", &filter]).stdout.iter().any(|b| !b.is_ascii_whitespace()) {
            std::thread::sleep(Duration::from_millis(500));
        }
        // Exited tasks (a finished job, a killed runner) keep their containers a while.
        let left = String::from_utf8_lossy(&docker(&["ps", "-aq", "--filter", &filter]).stdout).into_owned();
        for c in left.lines().filter(|l| !l.is_empty()) {
            let _ = docker(&["rm", "-f", c]);
        }
        for volume in ["db", "images", "artifacts", "slots"] {
            let _ = docker(&["volume", "rm", &format!("{}_{volume}", self.name)]);
        }
        for secret in ["db_password", "host_token"] {
            let _ = docker(&["secret", "rm", &format!("{}_{secret}", self.secrets)]);
        }
        if let Some(node) = &self.added_label {
            let _ = docker(&["node", "update", "--label-rm", "koth.db", node]);
        }
        if self.made_swarm {
            let _ = docker(&["swarm", "leave", "--force"]);
        }
    }
}

#[test]
fn the_stack_deploys_on_a_swarm_scales_and_loses_nothing_when_a_runner_dies() {
    let Some(stack) = SwarmStack::new() else { return };
    let started = Instant::now();
    let phase = |what: &str| eprintln!("swarm test: {what} after {:.0} s", started.elapsed().as_secs_f64());
    stack.deploy();

    // The web service answers, and the host's token is the secret's.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Ok(r) = ureq::get(&stack.url("/health")).timeout(Duration::from_secs(5)).call() {
            if r.into_json::<Value>().is_ok_and(|v| v["status"] == "ok") {
                break;
            }
        }
        assert!(Instant::now() < deadline, "the web service did not answer in 5 minutes:\n{}", stack.logs());
        std::thread::sleep(Duration::from_secs(1));
    }
    let host = &stack.host_token;
    let me = ureq::get(&stack.url("/api/me")).set("Authorization", &format!("Bearer {host}")).call().unwrap().into_json::<Value>().unwrap();
    assert_eq!(me["is_host"], true, "the secret's token is the host's: {me}");
    phase("the web service answered");

    // A runner reports Python once its machine's image store is built.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let langs = get(&stack.url("/api/languages"));
        if langs.as_array().unwrap().iter().any(|l| l["name"] == "python" && !l["runs_with"].is_null()) {
            break;
        }
        assert!(Instant::now() < deadline, "no runner offers Python after 5 minutes:\n{}", stack.logs());
        std::thread::sleep(Duration::from_secs(1));
    }

    phase("a runner offers Python");

    // Slow bots: a match lasts seconds, so a kill lands mid-match.
    let ladder = post(
        &stack.url("/api/ladders"),
        host,
        json!({"name": "swarm", "game": "target", "format": "rated",
               "settings": {"max_turns": 150, "newcomer_games": 0, "concurrency": 4, "skip_validation": true}})
        .to_string()
        .as_bytes(),
    )["id"]
        .as_i64()
        .unwrap();
    let sleepy = b"import sys, time\nfor line in sys.stdin:\n    time.sleep(0.03)\n    print(2, flush=True)\n";
    for i in 0..4 {
        let r = post(&stack.url(&format!("/api/ladders/{ladder}/bots/sleepy-{i}?file=sleepy.py")), host, sleepy);
        let (bot, version) = (r["bot"].as_i64().unwrap(), r["version"].as_i64().unwrap());
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let b = get(&stack.url(&format!("/api/bots/{bot}")));
            let v = b["versions"].as_array().unwrap().iter().find(|v| v["id"] == version).cloned().unwrap();
            match v["status"].as_str() {
                Some("ready") => break,
                Some("failed") => panic!("sleepy-{i} did not compile:\n{}", stack.logs()),
                _ => {}
            }
            assert!(Instant::now() < deadline, "sleepy-{i} not compiled after 5 minutes:\n{}", stack.logs());
            std::thread::sleep(Duration::from_secs(1));
        }
    }

    phase("the bots compiled");
    // One runner plays matches (at least three in the window, which the
    // measure asserts); with `KOTH_BENCH_SECONDS` the window is that long
    // and three runners are measured after the kill too, to print both.
    let bench = bench_window();
    let one = stack.per_minute(bench.unwrap_or(Duration::from_secs(30)));
    phase("measured with 1 runner");

    // Three runners, then one of them killed in the middle of a match.
    stack.scale(3);
    // The try may end between the look and the kill (voided as the
    // machine's fault, or finished): the kill counts only if, after it, the
    // same try (its lease) still runs under the killed runner's name, which
    // a dead runner cannot change. Else the swarm replaces the task and
    // another match is picked.
    let deadline = Instant::now() + Duration::from_secs(300);
    let (victim, killed_match) = loop {
        assert!(Instant::now() < deadline, "no match was killed while it played in 5 minutes:\n{}", stack.logs());
        let row = stack.sql(&format!(
            "SELECT j.holder, m.id, j.lease FROM jobs j JOIN matches m ON m.job_id = j.id \
             WHERE j.state = 'running' AND m.ladder_id = {ladder} AND j.lease_until > now() \
             AND j.started_at > now() - interval '3 seconds' AND j.attempt = 1 ORDER BY j.id LIMIT 1"
        ));
        let fields: Vec<&str> = row.split('|').collect();
        let [holder, id, lease] = fields[..] else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        // A runner's holder name is `<container hostname>-<pid>`.
        let hostname = holder.rsplit_once('-').map_or(holder, |(h, _)| h);
        let container = stack
            .containers("runner")
            .into_iter()
            .find(|c| docker(&["inspect", "--format", "{{.Config.Hostname}}", c]).stdout.trim_ascii() == hostname.as_bytes());
        let Some(c) = container else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        // Well into it (it started under 3 s ago), and seconds from its end.
        std::thread::sleep(Duration::from_secs(1));
        docker_ok(&["kill", &c]);
        if let Some(now) = kill_missed_the_try(&|q| stack.sql(q), id, holder, lease) {
            eprintln!(
                "match {id}'s try (lease {lease}) was no longer running under {holder} as its runner was killed ({now}); picking another"
            );
            continue;
        }
        break (c, id.parse::<i64>().unwrap());
    };
    eprintln!("killed runner container {victim} while it played match {killed_match}");

    // The swarm replaces the task; the match is rescued after its lease and played again.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let state = stack.sql(&format!("SELECT state FROM matches WHERE id = {killed_match}"));
        if state == "finished" {
            break;
        }
        assert_ne!(
            state,
            "failed",
            "the killed runner's match failed instead of being played again: {}\n{}",
            stack.sql(&format!(
                "SELECT j.attempt, j.max_attempts, j.last_error FROM jobs j JOIN matches m ON m.job_id = j.id WHERE m.id = {killed_match}"
            )),
            stack.logs()
        );
        assert!(Instant::now() < deadline, "match {killed_match} not finished after 5 minutes:\n{}", stack.logs());
        std::thread::sleep(Duration::from_secs(1));
    }
    let attempt = stack.sql_count(&format!("SELECT j.attempt FROM jobs j JOIN matches m ON m.job_id = j.id WHERE m.id = {killed_match}"));
    assert!(attempt >= 2, "the killed match was claimed again (attempt {attempt})");
    let deadline = Instant::now() + Duration::from_secs(120);
    while stack.containers("runner").len() != 3 {
        assert!(Instant::now() < deadline, "the swarm did not replace the killed runner:\n{}", stack.logs());
        std::thread::sleep(Duration::from_millis(500));
    }
    phase("the killed match was played again");
    if let Some(window) = bench {
        let three = stack.per_minute(window);
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
        println!(
            "koth swarm: target, 4 bots of 30 ms moves, 150 turns (median match {:.1} s), one job per runner, {} s windows, {cores} CPU cores, one node",
            stack.median_match_seconds(),
            window.as_secs()
        );
        println!("  1 runner replica:   {one:.1} matches/minute");
        println!("  3 runner replicas:  {three:.1} matches/minute ({:.2}x)", three / one.max(f64::MIN_POSITIVE));
    }

    // Nothing lost, nothing played twice.
    assert_nothing_lost_or_twice(&|q| stack.sql_count(q), &|q| stack.sql(q));
    assert_eq!(
        stack.sql_count(&format!("SELECT count(*) FROM rating_history WHERE match_id = {killed_match}")),
        stack.sql_count(&format!("SELECT count(*) FROM match_seats WHERE match_id = {killed_match}")),
        "the killed match's ratings changed once per seat"
    );
    let node = docker_ok(&["info", "--format", "{{.Name}}"]);
    assert_eq!(
        stack.sql_count(&format!(
            "SELECT count(*) FROM matches m JOIN jobs j ON j.id = m.job_id WHERE m.state = 'finished' AND j.holder NOT LIKE '{node}-r%'"
        )),
        0,
        "a match played by something other than the stack's runners (named <node>-r<slot>-<pid>)"
    );
    eprintln!("the swarm test took {:.0} s", started.elapsed().as_secs_f64());
}

/// A secret file that is not there stops each service at once, naming the
/// file, the option and where a swarm puts secrets (no Docker needed).
#[test]
fn a_missing_secret_file_stops_the_services_with_its_name() {
    let missing = "/nonexistent/koth-secret";
    for args in [
        vec!["scheduler", "--database-url", "postgres://koth@127.0.0.1:1/koth", "--database-password-file", missing],
        vec!["runner", "--database-url", "postgres://koth@127.0.0.1:1/koth", "--database-password-file", missing],
        vec!["web", "--database-url", "postgres://koth@127.0.0.1:1/koth", "--database-password-file", missing],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_koth")).args(&args).stdin(Stdio::null()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "koth {}: {err}", args[0]);
        assert!(
            err.contains(missing) && err.contains("--database-password-file") && err.contains("/run/secrets"),
            "koth {}: {err}",
            args[0]
        );
    }
}
