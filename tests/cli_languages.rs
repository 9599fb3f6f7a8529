//! `koth languages` and `koth match` with language images and archives, as
//! an author uses them before submitting.
//!
//! Needs the images built (`koth languages build`; `.ci/run` does it): with
//! CI=true their absence fails the tests, otherwise they skip.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn koth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_koth"))
        .args(args)
        .env("KOTH_SANDBOX_RUNTIME_DIR", "/run/koth-test/cli-match")
        .env("KOTH_SANDBOX_UID_BASE", "65000")
        .output()
        .expect("running koth")
}

fn languages() -> Vec<serde_json::Value> {
    let out = koth(&["languages", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap().as_array().unwrap().clone()
}

/// Whether every language's image is built; in CI it must be.
fn images_ready() -> bool {
    let not_ready: Vec<String> =
        languages().iter().filter(|l| l["image"] == "host").map(|l| l["name"].as_str().unwrap().to_owned()).collect();
    if not_ready.is_empty() {
        return true;
    }
    koth_testkit::missing(format!("these languages have no image: {not_ready:?}; run `koth languages build`"))
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn hello(lang: &str, ext: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("languages/{lang}/hello.{ext}"))).unwrap()
}

#[test]
fn languages_lists_every_language_with_its_image_and_version() {
    let list = languages();
    let names: Vec<&str> = list.iter().map(|l| l["name"].as_str().unwrap()).collect();
    for required in ["c", "cpp", "rust", "go", "java", "python", "javascript", "ruby", "csharp"] {
        assert!(names.contains(&required), "{required} missing from {names:?}");
    }
    if !images_ready() {
        return;
    }
    for l in &list {
        assert_eq!(l["ready"], true, "{l}");
        assert_eq!(l["image"].as_str().unwrap().len(), 12, "{l}");
        assert!(!l["version"].as_str().unwrap_or("").is_empty(), "{l}");
    }
}

/// Bots as archives with a manifest and a wrapping folder (tar.gz), as a zip
/// with the main file in a subfolder, and as a plain file, in four
/// languages, played from their images.
#[test]
fn match_plays_archived_bots_from_their_images() {
    if !images_ready() {
        return;
    }
    let dir = scratch("cli-archives");
    // rust: tar.gz of a folder "rusty/" holding a manifest.
    let tgz = dir.join("rusty.tar.gz");
    {
        let gz = flate2::write::GzEncoder::new(std::fs::File::create(&tgz).unwrap(), flate2::Compression::default());
        let mut b = tar::Builder::new(gz);
        let mut add = |path: &str, data: &[u8]| {
            let mut h = tar::Header::new_ustar();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, path, data).unwrap();
        };
        add("rusty/koth.json", br#"{"language": "rust", "main": "src/passer.rs"}"#);
        add("rusty/src/passer.rs", &hello("rust", "rs"));
        b.into_inner().unwrap().finish().unwrap();
    }
    // go: zip with main.go at the top and a data file in a subfolder.
    let zip_path = dir.join("gopher.zip");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        z.start_file("main.go", opts).unwrap();
        z.write_all(&hello("go", "go")).unwrap();
        z.start_file("data/notes.txt", opts).unwrap();
        z.write_all(b"not code\n").unwrap();
        z.finish().unwrap();
    }
    let java = dir.join("Bot.java");
    std::fs::write(&java, String::from_utf8(hello("java", "java")).unwrap().replace("class hello", "class Bot")).unwrap();
    let ruby = dir.join("bot.rb");
    std::fs::write(&ruby, hello("ruby", "rb")).unwrap();

    let paths: Vec<String> = [&tgz, &zip_path, &java, &ruby].iter().map(|p| p.display().to_string()).collect();
    let cache = dir.join("cache");
    let mut args = vec!["match", "--docker", "--json", "--game", "flit", "--seed", "5", "--cache", cache.to_str().unwrap()];
    args.extend(paths.iter().map(String::as_str));
    let out = koth(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let outcomes = report["outcomes"].as_array().unwrap();
    for (o, lang) in outcomes.iter().zip(["rust", "go", "java", "ruby"]) {
        assert_eq!(o["status"]["kind"], "ok", "{o}");
        assert!(o["stderr"].as_str().unwrap().contains(&format!("hello from {lang}")), "{o}");
    }
    // Each bot's line says which image it used.
    for lang in ["rust", "go", "java", "ruby"] {
        assert!(stderr.lines().any(|l| l.contains(&format!(": {lang}, image "))), "{stderr}");
    }
}

#[test]
fn bad_input_gets_a_clear_error() {
    let dir = scratch("cli-bad-input");
    let evil = dir.join("evil.zip");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&evil).unwrap());
        z.start_file("../../bot.py", zip::write::SimpleFileOptions::default()).unwrap();
        z.write_all(b"print(1)\n").unwrap();
        z.finish().unwrap();
    }
    let out = koth(&["match", "--game", "target", evil.to_str().unwrap(), evil.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(210), "{err}");
    assert!(err.contains("leaves the bot's folder"), "{err}");

    let out = koth(&["languages", "build", "cobol"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(210), "{err}");
    assert!(err.contains("unknown language \"cobol\"") && err.contains("python"), "{err}");

    // --docker with an empty store: the missing image is named, with the fix.
    let empty = dir.join("no-images");
    let out = koth(&[
        "match",
        "--docker",
        "--images",
        empty.to_str().unwrap(),
        "--game",
        "target",
        "bots/target/drifter.py",
        "bots/target/still.c",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(210), "{err}");
    assert!(err.contains("koth languages build python"), "{err}");
}

/// A reader that goes away (`koth languages | head -0`) ends the command
/// quietly with SIGPIPE's status (141), with no panic: it printed "failed
/// printing to stdout: Broken pipe" and exited 101 before.
#[test]
fn a_closed_stdout_ends_a_command_quietly() {
    let (read, write) = std::io::pipe().unwrap();
    drop(read);
    let out = Command::new(env!("CARGO_BIN_EXE_koth")).args(["languages"]).stdout(write).output().expect("running koth");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
