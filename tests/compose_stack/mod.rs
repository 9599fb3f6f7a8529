//! A docker-compose stack of its own for a test (tests/compose.rs,
//! tests/runner_hosts.rs): its project, volumes and port, the compose
//! command, and the API and SQL calls those tests make.
#![allow(dead_code)] // each suite uses its own part

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The compose command: `KOTH_COMPOSE`, else docker-compose (v1), else `docker compose` (v2).
pub fn compose_program() -> Option<Vec<String>> {
    if let Ok(c) = std::env::var("KOTH_COMPOSE") {
        return Some(c.split_whitespace().map(String::from).collect());
    }
    let works = |p: &[&str]| Command::new(p[0]).args(&p[1..]).arg("version").output().is_ok_and(|o| o.status.success());
    if works(&["docker-compose"]) {
        Some(vec!["docker-compose".into()])
    } else if works(&["docker", "compose"]) {
        Some(vec!["docker".into(), "compose".into()])
    } else {
        None
    }
}

/// A compose project of its own: its containers, volumes and port.
pub struct Stack {
    program: Vec<String>,
    pub project: String,
    port: u16,
    languages: String,
    /// Compose files over docker-compose.yml.
    files: Vec<PathBuf>,
}

impl Stack {
    pub fn new(project: &str, languages: &str) -> Option<Stack> {
        let docker_ok = Command::new("docker").arg("info").output().is_ok_and(|o| o.status.success());
        let program = compose_program();
        if !docker_ok || program.is_none() {
            koth_testkit::missing(format!(
                "Docker or docker-compose is missing (docker info: {docker_ok}); a Docker engine and docker-compose are needed"
            ));
            return None;
        }
        let port = koth_scheduler::pg::free_port().unwrap();
        Some(Stack { program: program.unwrap(), project: project.into(), port, languages: languages.into(), files: Vec::new() })
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.program[0]);
        c.args(&self.program[1..]).args(["-p", &self.project, "-f"]).arg(repo().join("docker-compose.yml"));
        for f in &self.files {
            c.arg("-f").arg(f);
        }
        c.args(args)
            .current_dir(repo())
            .env("KOTH_PORT", self.port.to_string())
            .env("KOTH_LANGUAGES", &self.languages)
            // A killed runner's job is rescued after this long.
            .env("KOTH_RUNNER_LEASE", "10s")
            .stdin(Stdio::null());
        c
    }

    /// The same stack with `file` (relative to the repository) over docker-compose.yml.
    pub fn with_file(mut self, file: &str) -> Stack {
        self.files.push(repo().join(file));
        self
    }

    /// Run a compose command; its output is returned, a failure panics with it.
    pub fn run(&self, args: &[&str]) -> Output {
        let out = self.command(args).output().unwrap();
        assert!(
            out.status.success(),
            "{} {}: {}\n{}",
            self.program.join(" "),
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// SQL through the database container (the test needs no route to it).
    pub fn sql(&self, query: &str) -> String {
        let out = self.run(&["exec", "-T", "db", "psql", "-U", "koth", "-d", "koth", "-tAc", query]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    pub fn sql_count(&self, query: &str) -> i64 {
        let text = self.sql(query);
        text.parse().unwrap_or_else(|_| panic!("{query}: {text}"))
    }

    /// Runner containers' ids.
    pub fn runners(&self) -> Vec<String> {
        let out = self.run(&["ps", "-q", "runner"]);
        String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.is_empty()).map(String::from).collect()
    }

    pub fn scale(&self, runners: usize) {
        self.run(&["up", "-d", "--no-recreate", "--scale", &format!("runner={runners}")]);
    }

    pub fn logs(&self) -> String {
        let out = self.command(&["logs", "--no-color", "--tail", "60"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn down(&self) {
        let _ = self.command(&["down", "-v", "--remove-orphans", "-t", "5"]).output();
    }

    /// Build, start, wait for the API; returns the host's token.
    pub fn up(&self) -> String {
        self.up_services(&[])
    }

    /// [`Stack::up`] with only these services (and what they depend on);
    /// all of them if none are named.
    pub fn up_services(&self, services: &[&str]) -> String {
        self.down();
        self.run(&["build"]);
        let mut args = vec!["up", "-d"];
        args.extend(services);
        self.run(&args);
        let deadline = Instant::now() + Duration::from_secs(600);
        loop {
            if let Ok(r) = ureq::get(&self.url("/health")).timeout(Duration::from_secs(5)).call() {
                if r.into_json::<Value>().is_ok_and(|v| v["status"] == "ok") {
                    break;
                }
            }
            assert!(Instant::now() < deadline, "the web service did not answer in 10 minutes:\n{}", self.logs());
            std::thread::sleep(Duration::from_secs(1));
        }
        let out = self.run(&["exec", "-T", "web", "cat", "/var/lib/koth/web/host-token"]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if std::env::var_os("KOTH_E2E_KEEP").is_none() {
            self.down();
        }
    }
}

pub fn get(url: &str) -> Value {
    ureq::get(url).timeout(Duration::from_secs(30)).call().unwrap_or_else(|e| panic!("GET {url}: {e}")).into_json().unwrap()
}

/// POST with the token, if any.
pub fn post(url: &str, token: &str, body: &[u8]) -> Value {
    let mut req = ureq::post(url).timeout(Duration::from_secs(60));
    if !token.is_empty() {
        req = req.set("Authorization", &format!("Bearer {token}"));
    }
    match req.send_bytes(body) {
        Ok(r) => r.into_json().unwrap(),
        Err(ureq::Error::Status(code, r)) => panic!("POST {url}: {code} {}", r.into_string().unwrap_or_default()),
        Err(e) => panic!("POST {url}: {e}"),
    }
}

/// A ladder made by the host; returns its id.
pub fn create_ladder(stack: &Stack, host: &str, spec: Value) -> i64 {
    post(&stack.url("/api/ladders"), host, spec.to_string().as_bytes())["id"].as_i64().unwrap()
}

pub fn ladder_id(stack: &Stack, game: &str) -> i64 {
    get(&stack.url("/api/ladders")).as_array().unwrap().iter().find(|l| l["game"] == game).unwrap()["id"].as_i64().unwrap()
}

/// Wait for a bot's version to compile; panics with the log if it fails.
pub fn wait_compiled(stack: &Stack, token: &str, bot: i64, version: i64, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let b = get(&stack.url(&format!("/api/bots/{bot}")));
        let v = b["versions"].as_array().unwrap().iter().find(|v| v["id"] == version).cloned().unwrap();
        match v["status"].as_str() {
            Some("ready") => return,
            Some("failed") => {
                let log = ureq::get(&stack.url(&format!("/api/versions/{version}/log")))
                    .set("Authorization", &format!("Bearer {token}"))
                    .call()
                    .map(|r| r.into_string().unwrap_or_default())
                    .unwrap_or_default();
                panic!("bot {} did not compile: {log}", b["name"]);
            }
            Some("refused") => panic!("bot {} was refused: {}\n{}", b["name"], v, jobs_of(stack, version)),
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "bot {} not compiled after {secs} s: {v}\n{}\n{}",
            b["name"],
            jobs_of(stack, version),
            stack.logs()
        );
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The jobs of a version (its compile and its validation game), for a
/// failure's message: their state, attempts and last error.
fn jobs_of(stack: &Stack, version: i64) -> String {
    stack.sql(&format!(
        "SELECT j.id, j.kind, j.state, j.attempt, j.run_after - now(), j.last_error FROM jobs j \
         WHERE j.payload->>'version' = '{version}' \
            OR j.id = (SELECT m.job_id FROM matches m JOIN bot_versions v ON v.validation_match = m.id WHERE v.id = {version}) \
         ORDER BY j.id"
    ))
}

/// The measuring window of a benchmark that an end-to-end test can run
/// on its stack (matches per minute), if `KOTH_BENCH_SECONDS` asks for
/// one: figures are measured when wanted, not on every test run (they
/// cost CI minutes and assert nothing).
pub fn bench_window() -> Option<Duration> {
    let text = std::env::var("KOTH_BENCH_SECONDS").ok()?;
    let secs: u64 = text.trim().parse().unwrap_or_else(|_| panic!("KOTH_BENCH_SECONDS={text:?}: a whole number of seconds, e.g. 30"));
    Some(Duration::from_secs(secs))
}

pub fn finished_matches(stack: &Stack) -> i64 {
    stack.sql_count("SELECT count(*) FROM matches WHERE state = 'finished'")
}

/// Wait until a match whose runner was killed is played again to its end
/// (its lease runs out and another runner claims it); panics if it fails
/// instead, or is not finished after `secs`.
pub fn wait_played_again(stack: &Stack, killed_match: i64, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let state = stack.sql(&format!("SELECT state FROM matches WHERE id = {killed_match}"));
        if state == "finished" {
            return;
        }
        assert_ne!(state, "failed", "the killed runner's match failed instead of being played again");
        assert!(Instant::now() < deadline, "match {killed_match} not finished after {secs} s:\n{}", stack.logs());
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// A runner was just killed (SIGKILL) while it held match `id`'s try
/// (`holder`, `lease`, as the database named them before the kill): `None`
/// if that same try still runs under that holder, which a dead runner
/// cannot change, so the kill landed mid-try; else what the job says now
/// (the try ended between the look and the kill: voided as the machine's
/// fault, which gives its attempt back, or finished).
pub fn kill_missed_the_try(sql: Rows, id: &str, holder: &str, lease: &str) -> Option<String> {
    let now = sql(&format!(
        "SELECT j.state || '|' || j.holder || '|' || j.lease FROM jobs j JOIN matches m ON m.job_id = j.id WHERE m.id = {id}"
    ));
    (now != format!("running|{holder}|{lease}")).then_some(now)
}

/// A stack's database query: a count, or the rows as text.
pub type Count<'a> = &'a dyn Fn(&str) -> i64;
pub type Rows<'a> = &'a dyn Fn(&str) -> String;

/// No match and no job failed: a runner that died had its work played
/// again, never scored or dropped (checked in the stack's database).
pub fn assert_nothing_failed(sql_count: Count, sql: Rows) {
    assert_eq!(sql_count("SELECT count(*) FROM matches WHERE state = 'failed'"), 0, "failed matches");
    assert_eq!(
        sql_count("SELECT count(*) FROM jobs WHERE state = 'failed'"),
        0,
        "failed jobs: {}",
        sql("SELECT id, kind, last_error FROM jobs WHERE state = 'failed'")
    );
}

/// [`assert_nothing_failed`], and nothing half done or done twice: every
/// finished match has every seat's result, no rating changed twice for one
/// match, and no job is still held by a runner whose lease ran out a
/// minute ago.
pub fn assert_nothing_lost_or_twice(sql_count: Count, sql: Rows) {
    assert_nothing_failed(sql_count, sql);
    assert_eq!(
        sql_count("SELECT count(*) FROM match_seats s JOIN matches m ON m.id = s.match_id WHERE m.state = 'finished' AND s.result IS NULL"),
        0,
        "a finished match without a seat's result"
    );
    assert_eq!(
        sql_count("SELECT count(*) FROM (SELECT match_id, bot_id FROM rating_history GROUP BY match_id, bot_id HAVING count(*) > 1) twice"),
        0,
        "a rating changed twice for one match"
    );
    assert_eq!(
        sql_count("SELECT count(*) FROM jobs WHERE state = 'running' AND lease_until < now() - interval '1 minute'"),
        0,
        "a job held by a dead runner was not rescued"
    );
}
