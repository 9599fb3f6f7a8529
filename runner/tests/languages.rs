//! Every language from its image: compiled in a sandbox box on the image's
//! root, played in a real match from the same root; the artifact cache; and
//! bad submissions, each refused with a clear error and nothing stored.
//!
//! Needs the images exported into the store (`koth languages build`, which
//! needs Docker; `.ci/run` does it). With CI=true a missing image or a
//! missing Docker engine fails the test instead of skipping it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use koth_games::GameKind;
use koth_runner::bot::{BotSpec, Builder, ImagePolicy, PrepareError};
use koth_runner::compile::{ArtifactCache, BuildError};
use koth_runner::engine::{play, MatchOptions};
use koth_runner::image::{ImageRoot, ImageStatus, ImageStore, Progress};
use koth_runner::language::{self, CompileLimits};
use koth_runner::submission::{Submission, SubmissionLimits};
use koth_runner::BotStatus;
use koth_sandbox::SandboxConfig;

use koth_testkit::{in_ci, missing};

fn sandbox_config() -> SandboxConfig {
    koth_testkit::bot_sandbox("languages", 64000, 512 << 20, 200)
}

fn store() -> ImageStore {
    ImageStore::open(ImageStore::default_dir())
}

/// The language's image, or None (skip) outside CI; in CI its absence fails.
fn image(name: &str) -> Option<ImageRoot> {
    let lang = language::by_name(name).unwrap();
    match store().status(lang) {
        ImageStatus::Ready(r) => Some(r),
        other => {
            missing(format!("the {name} image is not ready in {} ({other:?}); run `koth languages build`", store().dir().display()));
            None
        }
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn builder(cache: &Path) -> Builder {
    Builder { policy: ImagePolicy::Images, store: store(), cache: Some(ArtifactCache::open(cache)), ..Builder::host(sandbox_config()) }
}

fn hello(lang: &language::Language) -> Submission {
    let (file, text) = lang.hello.unwrap();
    Submission::from_upload(file, text.as_bytes(), &SubmissionLimits::default()).unwrap()
}

/// Files under a folder, recursively (to see that a failure stored nothing).
fn count_files(dir: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    rd.flatten().map(|e| if e.path().is_dir() { count_files(&e.path()) } else { 1 }).sum()
}

#[test]
fn every_language_compiles_and_plays_a_match_from_its_image() {
    let cache = scratch("every-language-cache");
    let b = builder(&cache);
    let mut played = Vec::new();
    for lang in language::all() {
        let Some(img) = image(&lang.name) else { continue };
        let sub = hello(lang);
        let (image, compiled) = b.build(&sub).unwrap_or_else(|e| panic!("{}: {e}", lang.name));
        assert_eq!(image, img);
        let spec = BotSpec::new(lang.name.clone(), &sub, &image, &compiled.artifact);
        assert_eq!(spec.root, img.root, "{}: the bot runs on its image's root", lang.name);
        // Four copies: each passes, so the game ends after one round.
        let opts = MatchOptions { sandbox: sandbox_config(), ..MatchOptions::new(GameKind::Flit, 7) };
        let report = play(&opts, vec![spec; 4]).unwrap_or_else(|e| panic!("{}: {e}", lang.name));
        assert_eq!(report.turns, 4, "{}: four passes end Flit", lang.name);
        for o in &report.outcomes {
            assert_eq!(o.status, BotStatus::Ok, "{}: {}", lang.name, o.stderr);
            assert_eq!(o.moves, 1, "{}", lang.name);
            assert!(o.stderr.contains(&format!("hello from {}", lang.name)), "{}: stderr {:?}", lang.name, o.stderr);
        }
        played.push(lang.name.clone());
    }
    eprintln!("played from their images: {}", played.join(", "));
    if in_ci() {
        assert_eq!(played.len(), language::all().len());
    }
}

/// The compile and the bot really see the image's filesystem, not the
/// host's: a file this test puts on the host (outside the folders every box
/// gets privately, like /tmp) exists for a box on the host's root, not for
/// one on the image's.
#[test]
fn compile_and_run_see_the_image_root() {
    let Some(img) = image("c") else { return };
    let dir = Path::new("/var/lib/koth-test");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let marker = dir.join(format!("marker-{}.h", std::process::id()));
    std::fs::write(&marker, "/* a header only the host has */\n").unwrap();
    let marker = marker.to_str().unwrap().to_owned();
    assert!(!img.root.join(&marker[1..]).exists());
    let src = format!(
        r#"
#include <stdio.h>
#include <unistd.h>
#if __has_include("{marker}")
#error compiled on the host's root, not the image's
#endif
int main(void) {{
    char line[64];
    fprintf(stderr, "host-file:%d\n", access("{marker}", F_OK) == 0);
    while (fgets(line, sizeof line, stdin))
        if (line[0] == 'M') {{ puts("0 0 0 0"); fflush(stdout); }}
    return 0;
}}
"#
    );
    let sub = Submission::from_upload("bot.c", src.as_bytes(), &SubmissionLimits::default()).unwrap();
    let cache = scratch("image-root-cache");
    let (image, compiled) = builder(&cache).build(&sub).unwrap();
    let spec = BotSpec::new("probe".into(), &sub, &image, &compiled.artifact);
    let opts = MatchOptions { sandbox: sandbox_config(), ..MatchOptions::new(GameKind::Flit, 1) };
    let report = play(&opts, vec![spec; 4]).unwrap();
    assert!(report.outcomes[0].stderr.contains("host-file:0"), "{}", report.outcomes[0].stderr);
    // The same source compiled on the host's root trips the #error: the
    // check above can fail.
    let err = match Builder::host(sandbox_config()).build(&sub) {
        Ok(_) => panic!("compiled on the host's root without tripping the #error"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("compiled on the host's root"), "{err}");
    let _ = std::fs::remove_file(&marker);
}

#[test]
fn artifacts_are_cached_by_source_and_image() {
    let Some(_) = image("cpp") else { return };
    let cache_dir = scratch("cache-hits");
    let b = builder(&cache_dir);
    let lang = language::by_name("cpp").unwrap();
    let sub = hello(lang);
    let (_, first) = b.build(&sub).unwrap();
    assert!(!first.cached);
    let (_, second) = b.build(&sub).unwrap();
    assert!(second.cached, "the same source in the same image is a cache hit");
    assert_eq!(first.artifact, second.artifact);
    assert_eq!(first.key, second.key);
    assert!(second.elapsed < first.elapsed, "a hit ({:?}) is faster than a compile ({:?})", second.elapsed, first.elapsed);
    // One byte more is another bot.
    let (file, text) = lang.hello.unwrap();
    let changed = Submission::from_upload(file, format!("{text}\n// v2\n").as_bytes(), &SubmissionLimits::default()).unwrap();
    let (_, third) = b.build(&changed).unwrap();
    assert!(!third.cached);
    assert_ne!(third.key, first.key);
    // The same source in another image (the host) is not served from the cache.
    assert_ne!(
        koth_runner::compile::cache_key(&sub, &ImageRoot { id: "sha256:other".into(), ..ImageRoot::host() }),
        first.key.clone().unwrap()
    );
}

fn expect_compile_error(r: Result<(ImageRoot, koth_runner::compile::Compiled), PrepareError>) -> (String, String) {
    match r {
        Err(PrepareError::Build(BuildError::Compile { reason, log })) => (reason, log),
        Ok((_, c)) => panic!("expected a compile error, got an artifact; log: {}", c.log),
        Err(e) => panic!("expected a compile error, got: {e}"),
    }
}

#[test]
fn bad_submissions_get_clear_errors_and_store_nothing() {
    let Some(_) = image("c") else { return };
    let cache_dir = scratch("bad-submissions-cache");
    let mut b = builder(&cache_dir);
    // Small limits keep the runaway compiles short.
    b.compile_limits = Some(CompileLimits { memory_mb: 256, pids: 64, cpu_seconds: 5 });
    let limits = SubmissionLimits::default();
    let upload = |name: &str, bytes: &[u8]| Submission::from_upload(name, bytes, &limits);
    // The refusal's message (a Submission's Debug would print every byte).
    let refused = |name: &str, bytes: &[u8]| match upload(name, bytes) {
        Ok(s) => panic!("{name} was accepted as {} with main {}", s.language.name, s.main),
        Err(e) => e.to_string(),
    };

    // A compile error: the compiler's message reaches the author.
    let sub = upload("bot.c", b"int main(void) { return undefined_thing; }\n").unwrap();
    let (reason, log) = expect_compile_error(b.build(&sub));
    assert!(reason.contains("exited"), "{reason}");
    assert!(log.contains("undefined_thing") && log.contains("error"), "{log}");

    // A compile that eats memory: gcc reading /dev/zero as a header.
    let sub = upload("bot.c", b"#include \"/dev/zero\"\nint main(void) { return 0; }\n").unwrap();
    let (reason, _) = expect_compile_error(b.build(&sub));
    assert!(reason.contains("more than 256 MiB of memory"), "{reason}");

    // A compile that runs (nearly) forever: 200 constant evaluations of
    // about 2 s of g++'s time each (each stops at g++'s operation limit).
    let mut forever = String::from(
        "constexpr long spin(long k) {\n    long s = k;\n    for (long i = 0; i < 2000; ++i)\n        for (long j = 0; j < 2000; ++j) s += i ^ j;\n    return s;\n}\n",
    );
    for i in 0..200 {
        forever.push_str(&format!("constexpr long v{i} = spin({i});\n"));
    }
    forever.push_str("int main() { return v0 == 1; }\n");
    let forever = forever.as_bytes();
    let sub = upload("bot.cpp", forever).unwrap();
    let started = std::time::Instant::now();
    let (reason, _) = expect_compile_error(b.build(&sub));
    assert!(reason.contains("CPU time") || reason.contains("longer than"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(60), "stopped by the limit, not by g++ giving up");

    // Refused before anything runs.
    let rejected = [
        refused("bot.cobol", b"DISPLAY 'HI'."),
        refused("bot.py", b""),
        refused("bot.py", &vec![b'#'; (limits.max_file_bytes + 1) as usize]),
        refused("bot.tar", &hostile_tar()),
    ];
    assert!(rejected[0].contains("cobol"), "{}", rejected[0]);
    assert!(rejected[1].contains("empty"), "{}", rejected[1]);
    assert!(rejected[2].contains("limit") || rejected[2].contains("large"), "{}", rejected[2]);
    assert!(rejected[3].contains(".."), "{}", rejected[3]);
    for msg in &rejected {
        eprintln!("refused: {msg}");
    }

    // An unknown language named in a manifest.
    let dir = scratch("bad-manifest");
    std::fs::write(dir.join("main.cob"), "x").unwrap();
    std::fs::write(dir.join("koth.json"), r#"{"language": "cobol", "main": "main.cob"}"#).unwrap();
    let Err(err) = b.prepare(&dir) else { panic!("a manifest naming cobol was accepted") };
    assert!(matches!(err, PrepareError::Rejected(_)) && err.to_string().contains("cobol"), "{err}");

    assert_eq!(count_files(&cache_dir), 0, "no failure left anything in the artifact cache");
}

/// A tar archive whose one entry climbs out of the bot's folder.
fn hostile_tar() -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    let name = b"../../etc/cron.d/evil";
    h.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name);
    h.set_size(4);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    let mut raw = h.as_bytes().to_vec();
    let mut data = b"evil".to_vec();
    data.resize(512, 0);
    raw.extend_from_slice(&data);
    raw.extend_from_slice(&[0; 1024]);
    raw
}

#[test]
fn a_missing_image_is_a_clear_error_under_the_images_policy() {
    let empty = scratch("empty-store");
    let b = Builder { store: ImageStore::open(&empty), ..builder(&scratch("unused-cache")) };
    let sub = hello(language::by_name("python").unwrap());
    let Err(err) = b.build(&sub) else { panic!("built without an image") };
    assert!(matches!(err, PrepareError::NoImage(_)), "{err}");
    assert!(err.to_string().contains("koth languages build python"), "{err}");
}

/// Building an image that is already exported reuses the export: same id,
/// nothing unpacked again. Needs Docker.
#[test]
fn rebuilding_an_unchanged_image_reuses_its_export() {
    let Some(before) = image("lua") else { return };
    if let Err(e) = koth_runner::image::docker_engine() {
        missing(format!("Docker is not available: {e}"));
        return;
    }
    let lang = language::by_name("lua").unwrap();
    let mut reused = false;
    let mut exported = false;
    let after = store()
        .build(lang, &sandbox_config(), &mut |p| match p {
            Progress::Reused => reused = true,
            Progress::Export(_) => exported = true,
            _ => {}
        })
        .unwrap();
    assert!(reused && !exported);
    assert_eq!(after.id, before.id);
    assert!(after.version.unwrap().to_lowercase().contains("lua"));
}
