//! A game from outside koth's seeds, added to a running `koth up` by its
//! host (issue 19, proof 2): Rock Paper Scissors Lizard Spock, its referee in
//! JavaScript, its example bots in C and Python
//! (`external-games/rpsls`). The host adds its folder with `koth game add`;
//! a runner builds the referee and plays the example bots against each
//! other before the game is offered; a ladder of it plays, rates and draws
//! its matches like koth's own games'.
//!
//! And the worst a host's upload can be, before any of that: not an
//! archive, a folder with no examples, a manifest named like one of koth's
//! games or with a ladder its game cannot have, a referee that crashes or
//! hangs in its validation match, an example bot that crashes, a name that
//! is taken, an author who is not a host. None is offered; each says why.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod common;
use common::{http_get, postgres_binaries, start, stop};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `method path` with `body` and a token: status and JSON body.
fn call(addr: &str, method: &str, path: &str, token: Option<&str>, body: &[u8]) -> (u16, Value) {
    let mut req = ureq::request(method, &format!("http://{addr}{path}")).timeout(Duration::from_secs(60));
    if let Some(t) = token {
        req = req.set("Authorization", &format!("Bearer {t}"));
    }
    let r = if body.is_empty() { req.call() } else { req.set("Content-Type", "application/octet-stream").send_bytes(body) };
    let resp = match r {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{method} {path}: {e}"),
    };
    let status = resp.status();
    let text = resp.into_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn get_json(addr: &str, path: &str) -> Value {
    let (status, body) = http_get(addr, path);
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// A folder as a tar archive, as `koth game add` sends it.
fn tar_of(dir: &Path) -> Vec<u8> {
    koth_runner::game::GamePackage::from_folder(dir, &Default::default()).unwrap().to_tar()
}

fn koth(args: &[&str], addr: &str, token: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .env("KOTH_SERVER", format!("http://{addr}"))
        .env("KOTH_TOKEN", token)
        .env("XDG_CONFIG_HOME", std::env::temp_dir().join("koth-added-games-config"))
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// An added game's status once its validation is over.
fn validated(addr: &str, name: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let g = get_json(addr, &format!("/api/games/{name}"));
        if g["status"] != "validating" {
            return g;
        }
        assert!(Instant::now() < deadline, "{name} is still validating after 240 s");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// A game folder: the test referee (`runner/tests/bots/referee.py`) doing
/// `mode`, and the example bots given.
fn hostile_game(base: &Path, name: &str, mode: &str, bots: &[(&str, &str)]) -> PathBuf {
    let dir = base.join(name);
    std::fs::create_dir_all(dir.join("bots")).unwrap();
    std::fs::copy(repo().join("runner/tests/bots/referee.py"), dir.join("referee.py")).unwrap();
    let manifest = json!({
        "name": name, "seats": {"min": 2, "max": 2}, "protocol": "stdio",
        "time_policy": {"per_move": 200, "on_timeout": {"kind": "no_move", "freeze_after": 5}},
        "max_turns": 1000,
        "referee": {"main": "referee.py", "limits": {"per_call_ms": 1000, "match_cpu_ms": 20000, "memory_mb": 64}},
        "settings": {"mode": mode, "at": 3, "rounds": 20},
    });
    std::fs::write(dir.join("game.json"), manifest.to_string()).unwrap();
    for (file, source) in bots {
        std::fs::write(dir.join("bots").join(file), source).unwrap();
    }
    dir
}

const ECHO: &str = "import sys\nfor line in sys.stdin:\n    print(1, flush=True)\n";
const CRASHES: &str = "import sys\nsys.stderr.write('no luck\\n')\nsys.exit(1)\n";

#[test]
fn a_host_adds_a_game_to_a_running_server_and_a_ladder_plays_rates_and_draws_it() {
    if !postgres_binaries() {
        return;
    }
    let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("added-games");
    let _ = std::fs::remove_dir_all(&data);
    let port = koth_scheduler::pg::free_port().unwrap();
    let addr = format!("127.0.0.1:{port}");
    let (up, _) = start(&data, &addr, "added-games", 62500);
    let host = std::fs::read_to_string(data.join("host-token")).unwrap().trim().to_owned();
    let (st, alice) = call(&addr, "POST", "/api/users", None, br#"{"name": "alice"}"#);
    assert_eq!(st, 201, "{alice}");
    let alice = alice["token"].as_str().unwrap().to_owned();
    let (st, bob) = call(&addr, "POST", "/api/users", None, br#"{"name": "bob"}"#);
    assert_eq!(st, 201, "{bob}");
    let bob = bob["token"].as_str().unwrap().to_owned();
    let rpsls = repo().join("external-games/rpsls");

    // Refused at once, each with its reason, as JSON.
    let (st, e) = call(&addr, "POST", "/api/games?file=rpsls.tar", Some(&alice), &tar_of(&rpsls));
    assert_eq!(st, 403, "only hosts add games: {e}");
    let (st, e) = call(&addr, "POST", "/api/games?file=referee.js", Some(&host), b"console.log(1)");
    assert_eq!((st, e["error"].as_str().unwrap().contains("tar czf game.tar.gz")), (422, true), "{e}");
    let scratch = data.join("folders");
    let no_bots = hostile_game(&scratch, "lonely", "play", &[]);
    let (st, e) = call(&addr, "POST", "/api/games?file=lonely.tar", Some(&host), &tar_of_unchecked(&no_bots));
    assert_eq!((st, e["error"].as_str().unwrap().contains("no example bots")), (422, true), "{e}");

    // A manifest the server cannot take: one of koth's own games' names, a
    // default ladder the game cannot be played by.
    let edit = |dir: &Path, key: &str, value: Value| {
        let mut m: Value = serde_json::from_slice(&std::fs::read(dir.join("game.json")).unwrap()).unwrap();
        m[key] = value;
        std::fs::write(dir.join("game.json"), m.to_string()).unwrap();
    };
    let named_snake = hostile_game(&scratch, "named-snake", "play", &[("echo.py", ECHO)]);
    edit(&named_snake, "name", json!("snake"));
    let (st, e) = call(&addr, "POST", "/api/games?file=snake.tar", Some(&host), &tar_of_unchecked(&named_snake));
    assert_eq!((st, e["error"].as_str().unwrap().contains("one of koth's own games")), (422, true), "{e}");
    let wide = hostile_game(&scratch, "wide", "play", &[("echo.py", ECHO)]);
    edit(&wide, "ladder", json!({"format": "rated", "settings": {"seats": 5}}));
    let (st, e) = call(&addr, "POST", "/api/games?file=wide.tar", Some(&host), &tar_of(&wide));
    assert_eq!((st, e["error"].as_str().unwrap().contains("played by 2 to 2 bots, not 5")), (422, true), "{e}");

    // Stored, then refused by their validation match: a referee that
    // crashes on turn 3, one that hangs on turn 3 (its 1 s a call bounds
    // it), and an example bot that crashes at once.
    let crashing = hostile_game(&scratch, "crashing", "crash", &[("echo.py", ECHO)]);
    let (st, added) = call(&addr, "POST", "/api/games?file=crashing.tar", Some(&host), &tar_of(&crashing));
    assert_eq!(st, 202, "{added}");
    assert_eq!(added["example_bots"], json!(["echo.py"]));
    let hanging = hostile_game(&scratch, "hanging", "hang", &[("echo.py", ECHO)]);
    let (st, added) = call(&addr, "POST", "/api/games?file=hanging.tar", Some(&host), &tar_of(&hanging));
    assert_eq!(st, 202, "{added}");
    let bad_example = hostile_game(&scratch, "badexample", "play", &[("echo.py", ECHO), ("quits.py", CRASHES)]);
    let (st, added) = call(&addr, "POST", "/api/games?file=badexample.tar", Some(&host), &tar_of(&bad_example));
    assert_eq!(st, 202, "{added}");
    let g = validated(&addr, "crashing");
    let log = g["log"].as_str().unwrap();
    assert_eq!(g["status"], "refused", "{g}");
    assert!(
        log.contains("the referee failed on turn 3")
            && log.contains("exited with code 3")
            && log.contains("The referee wrote nothing on stderr"),
        "{log}"
    );
    let g = validated(&addr, "hanging");
    let log = g["log"].as_str().unwrap();
    assert_eq!(g["status"], "refused", "{g}");
    assert!(log.contains("the referee failed on turn 3") && log.contains("gave no answer within 1000 ms"), "{log}");
    let g = validated(&addr, "badexample");
    let log = g["log"].as_str().unwrap();
    assert_eq!(g["status"], "refused", "{g}");
    assert!(log.contains("quits.py (seat 2)") && log.contains("no luck"), "{log}");
    // A refused game is offered to nobody.
    let (st, e) = call(&addr, "POST", "/api/ladders", Some(&host), br#"{"name": "nope", "game": "crashing"}"#);
    assert_eq!((st, e["error"].as_str().unwrap().contains("refused by its validation")), (409, true), "{e}");

    // The real game, by the host's command: validated, then ready.
    let (ok, out) = koth(&["game", "add", rpsls.to_str().unwrap(), "--timeout-secs", "240"], &addr, &host);
    assert!(ok, "{out}");
    assert!(out.contains("rpsls is ready: passed its validation match: counter.c, cycler.py played"), "{out}");
    let (st, e) = call(&addr, "POST", "/api/games?file=rpsls.tar", Some(&host), &tar_of(&rpsls));
    assert_eq!((st, e["error"].as_str().unwrap().contains("exists (ready)")), (409, true), "{e}");
    let (ok, out) = koth(&["game", "list"], &addr, &host);
    assert!(ok && out.contains("rpsls") && out.contains("added by host") && out.contains("refused"), "{out}");
    // Games that ask per-turn programs with no argument, several or on
    // stdin, send boards of lines and read answers of several lines: a
    // server validates them as `koth match` plays them.
    for (name, example) in [("argv-shapes", "strict.py"), ("board-lines", "mirror.py")] {
        let folder = repo().join("external-games").join(name);
        let (ok, out) = koth(&["game", "add", folder.to_str().unwrap(), "--timeout-secs", "240"], &addr, &host);
        assert!(ok, "{name}: {out}");
        assert!(out.contains(&format!("{name} is ready: passed its validation match: {example} played")), "{out}");
    }

    // A ladder of it, with the manifest's format; two authors' bots.
    let (ok, out) = koth(&["ladder", "create", "rps", "--game", "rpsls"], &addr, &host);
    assert!(ok, "{out}");
    let ladders = get_json(&addr, "/api/ladders");
    let ladder = ladders.as_array().unwrap().iter().find(|l| l["name"] == "rps").unwrap().clone();
    assert_eq!((ladder["game"].as_str(), ladder["format"].as_str()), (Some("rpsls"), Some("rated")), "{ladder}");
    let id = ladder["id"].as_i64().unwrap();
    for (token, name, file) in [(&alice, "counter", "counter.c"), (&bob, "cycler", "cycler.py")] {
        let source = std::fs::read(rpsls.join("bots").join(file)).unwrap();
        let (st, made) = call(&addr, "POST", &format!("/api/ladders/{id}/bots/{name}?file={file}"), Some(token), &source);
        assert_eq!(st, 201, "{made}");
    }
    // Its matches are played, rated and drawn.
    let deadline = Instant::now() + Duration::from_secs(300);
    let finished = loop {
        let ms = get_json(&addr, &format!("/api/ladders/{id}/matches"));
        let done: Vec<Value> = ms.as_array().unwrap().iter().filter(|m| m["state"] == "finished").cloned().collect();
        if done.len() >= 3 {
            break done;
        }
        if Instant::now() >= deadline {
            let bots = get_json(&addr, &format!("/api/ladders/{id}/bots"));
            panic!("only {} rpsls matches finished in 300 s: {ms}; its bots: {bots}", done.len());
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let board = get_json(&addr, &format!("/api/ladders/{id}/leaderboard"));
    let rated: Vec<(&str, i64)> =
        board["rows"].as_array().unwrap().iter().map(|r| (r["name"].as_str().unwrap(), r["games"].as_i64().unwrap())).collect();
    assert_eq!(rated.len(), 2, "{board}");
    assert!(rated.iter().all(|(_, games)| *games >= 1), "both rated: {board}");
    let m = finished[0]["match"].as_i64().unwrap();
    let frames = get_json(&addr, &format!("/api/matches/{m}/frames"));
    assert_eq!(frames["game"], "rpsls");
    assert!(frames["legend"].to_string().contains("Spock"), "{}", frames["legend"]);
    let info = get_json(&addr, &format!("/api/matches/{m}"));
    assert_eq!(frames["frames"].as_array().unwrap().len() as i64, info["turns"].as_i64().unwrap() + 1, "a frame a turn and the first");
    assert!(info["reproduce"].as_str().unwrap().starts_with("koth match --game ./rpsls "), "{}", info["reproduce"]);
    let (st, replay) = http_get(&addr, &format!("/api/matches/{m}/replay"));
    assert_eq!(st, 200);
    assert!(replay.contains("\"rpsls\""), "{}", &replay[..200.min(replay.len())]);
    // Its folder, for authors to play it at home, and its page.
    let (st, folder) = call(&addr, "GET", "/api/games/rpsls/folder", None, b"");
    assert_eq!(st, 200, "{folder}");
    let (st, page) = http_get(&addr, "/games/rpsls");
    assert!(st == 200 && page.contains("data-page=\"game\""), "{st} {page}");
    assert_eq!(stop(up), Some(0));
}

/// A folder's tar without the package's checks (a folder `koth game add`
/// would refuse), for the server's own checks.
fn tar_of_unchecked(dir: &Path) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    b.append_dir_all(".", dir).unwrap();
    b.into_inner().unwrap()
}
