//! `koth bench replay`: what a replay costs to store and to show, for the
//! longest match of each game, beside the way replays were stored before
//! (a `jsonb` column written in the result's transaction), in the same run
//! on the same PostgreSQL server.
//!
//! The replays are real: each game played to its end under the engine and
//! the sandbox by its example C bot in every seat (Flit's wanderers play to
//! the 32,768-turn limit), or replay files given on the command line. For
//! each: its JSON size and packed size, the packing time (on the runner,
//! before the transaction), the write and commit of the old `jsonb` and of
//! the packed row, alternated, medians of `--rounds`; the frames' first
//! drawing, and what a viewer downloads (packed replay + gzip frames).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use koth_games::replay::Replay;
use koth_games::GameKind;
use koth_runner::engine::{play, MatchOptions};
use koth_sandbox::{Limits, SandboxConfig};
use koth_scheduler::db::replays;
use koth_scheduler::db::store;
use koth_scheduler::packed::{self, PackedReplay};
use koth_scheduler::pg::PrivatePostgres;
use sqlx::PgPool;

#[derive(Args)]
pub struct ReplayBenchArgs {
    /// PostgreSQL URL (default: a private server started for the run).
    #[arg(long)]
    database_url: Option<String>,
    /// Writes measured per way of storing, alternated.
    #[arg(long, default_value_t = 7)]
    rounds: u32,
    /// Seed of the matches played.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Replay files to measure instead of playing a match of each game.
    replays: Vec<PathBuf>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// This thread's CPU time in ms: what packing costs whatever else the
/// machine runs (its wall time also counts the waits for a CPU).
fn thread_cpu_ms() -> f64 {
    // SAFETY: clock_gettime fills the zeroed timespec it is given.
    let t = unsafe {
        let mut t: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
        t
    };
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

/// The longest match of each game this run can play: the example C bot in
/// every seat the game allows.
fn play_each_game(seed: u64) -> anyhow::Result<Vec<Replay>> {
    let dir = std::env::temp_dir().join(format!("koth-replay-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let sandbox = SandboxConfig {
        limits: Limits { memory: 256 << 20, cpu_time: None, wall_time: None, ..Limits::default() },
        ..SandboxConfig::default()
    };
    let mut out = Vec::new();
    for game in GameKind::ALL {
        let (file, source) = super::examples::example(game, "c").with_context(|| format!("no example C bot for {}", game.name()))?;
        let path = dir.join(file);
        std::fs::write(&path, source)?;
        let bot = koth_runner::bot::prepare(&path, &sandbox).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let (_, most) = game.seat_range();
        let started = Instant::now();
        let report = play(&MatchOptions { sandbox: sandbox.clone(), ..MatchOptions::new(game, seed) }, vec![bot; most])
            .map_err(|e| anyhow::anyhow!("{}: {e}", game.name()))?;
        eprintln!(
            "played {} ({} seats, seed {seed}): {} turns in {:.1} s",
            game.name(),
            most,
            report.turns,
            started.elapsed().as_secs_f64()
        );
        out.push(report.replay.read().map_err(|e| anyhow::anyhow!("{}: {e}", game.name()))?);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(out)
}

/// A finished match to write replays to, as the result transaction would.
async fn scratch_match(pool: &PgPool, ladder: i64, bots: &[i64], seed: i64) -> anyhow::Result<i64> {
    let mut conn = pool.acquire().await?;
    Ok(store::create_match(&mut conn, ladder, bots, seed, false, 0).await?)
}

pub fn run(a: ReplayBenchArgs) -> anyhow::Result<i32> {
    let replays_in: Vec<Replay> = if a.replays.is_empty() {
        play_each_game(a.seed)?
    } else {
        a.replays
            .iter()
            .map(|p| {
                let bytes = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
                Replay::from_json(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))
            })
            .collect::<anyhow::Result<_>>()?
    };
    let mut private = None;
    let url = match &a.database_url {
        Some(u) => u.clone(),
        None => {
            let dir = std::env::temp_dir().join(format!("koth-replay-bench-pg-{}", std::process::id()));
            let pg = PrivatePostgres::start(&dir, None).map_err(|e| anyhow::anyhow!(e))?;
            let url = pg.url();
            private = Some(pg);
            url
        }
    };
    let rounds = a.rounds.max(1);
    let rt = tokio::runtime::Runtime::new()?;
    let result = rt.block_on(async {
        let pool = koth_scheduler::db::connect_and_migrate(&url, 4).await.map_err(|e| anyhow::anyhow!(e))?;
        let (host, _) = koth_web::http::create_account(&pool, &format!("bench-{}", std::process::id()), true).await?;
        println!("koth bench replay: the longest match of each game; write = the statement and its commit, median of {rounds}, alternated");
        println!(
            "{:<8} {:>6} {:>10} {:>9} {:>6} {:>8} {:>7} {:>14} {:>7} {:>7} {:>11} {:>11} {:>6} {:>9} {:>9}",
            "game",
            "turns",
            "json",
            "stored",
            "ratio",
            "pack ms",
            "cpu ms",
            format!("former {}", packed::FORMER_REPLAY_LEVEL),
            "speedup",
            "json ms",
            "jsonb wr ms",
            "packed wr ms",
            "ratio",
            "frames ms",
            "viewer"
        );
        for replay in &replays_in {
            let game = replay.game.kind().expect("replay-bench plays koth's own games");
            let cfg = koth_ladder::format::LadderConfig::default_for(game);
            let ladder = store::create_ladder(&pool, &format!("bench-{}-{}", game.name(), std::process::id()), &game.into(), &cfg).await?;
            let mut bots = Vec::new();
            let mut conn = pool.acquire().await?;
            for i in 0..2 {
                let bot = store::create_bot(&pool, ladder, host, &format!("b{i}")).await?;
                let (v, _) = store::submit_version(&pool, bot, "c", "bot.c", b"", &format!("h{i}")).await?;
                store::accept_compiled(&mut conn, v, b"", "sha256:x").await?;
                bots.push(bot);
            }
            drop(conn);
            let json = serde_json::to_vec(replay)?;
            let value: serde_json::Value = serde_json::from_slice(&json)?;
            // Packing at the level used now and at the former one (the
            // anchor), alternated; and the JSON's serializing alone, which
            // either pays.
            let (mut pack_ms, mut former_ms, mut json_ms, mut pack_cpu) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let (mut packed, mut former) = (None, None);
            for round in 0..rounds {
                for way in if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] } {
                    let (t, cpu) = (Instant::now(), thread_cpu_ms());
                    match way {
                        0 => {
                            packed = Some(PackedReplay::pack(replay));
                            pack_ms.push(ms(t));
                            pack_cpu.push(thread_cpu_ms() - cpu);
                        }
                        1 => {
                            former = Some(PackedReplay::pack_at(replay, packed::FORMER_REPLAY_LEVEL));
                            former_ms.push(ms(t));
                        }
                        _ => {
                            std::hint::black_box(serde_json::to_vec(replay)?);
                            json_ms.push(ms(t));
                        }
                    }
                }
            }
            let former = former.expect("rounds >= 1");
            let packed = packed.expect("rounds >= 1");
            let (mut old_ms, mut new_ms) = (Vec::new(), Vec::new());
            for round in 0..rounds {
                // A then B, then B then A: neither always goes first.
                for way in if round % 2 == 0 { [0, 1] } else { [1, 0] } {
                    let m = scratch_match(&pool, ladder, &bots, round as i64).await?;
                    let t = Instant::now();
                    let mut tx = pool.begin().await?;
                    if way == 0 {
                        sqlx::query("UPDATE matches SET replay = $2 WHERE id = $1").bind(m).bind(&value).execute(&mut *tx).await?;
                    } else {
                        replays::record(&mut tx, m, &packed).await?;
                    }
                    tx.commit().await?;
                    if way == 0 { &mut old_ms } else { &mut new_ms }.push(ms(t));
                }
            }
            // The frames' first drawing (the viewer's first visit), as the
            // API does it: unpack, play again, serialize, gzip.
            let t = Instant::now();
            let unpacked = packed.unpack().map_err(|e| anyhow::anyhow!(e))?;
            let frames = koth_games::replay::frames(&unpacked).map_err(|e| anyhow::anyhow!("{}: {e}", game.name()))?;
            let frames_gz = packed::gzip(&serde_json::to_vec(&frames)?);
            let frames_ms = ms(t);
            let (old, new) = (median(old_ms), median(new_ms));
            println!(
                "{:<8} {:>6} {:>10} {:>9} {:>5.1}x {:>8.1} {:>7.1} {:>14} {:>6.1}x {:>7.1} {:>11.1} {:>12.1} {:>5.1}x {:>9.0} {:>9}",
                game.name(),
                replay.turns.len(),
                kib(json.len()),
                kib(packed.zstd.len()),
                json.len() as f64 / packed.zstd.len() as f64,
                median(pack_ms.clone()),
                median(pack_cpu),
                format!("{:.1} {}", median(former_ms.clone()), kib(former.zstd.len())),
                median(former_ms) / median(pack_ms),
                median(json_ms),
                old,
                new,
                old / new,
                frames_ms,
                kib(packed.zstd.len() + frames_gz.len()),
            );
        }
        println!("json: the replay's JSON (what the jsonb column held); stored: packed with zstd level {}", packed::REPLAY_LEVEL);
        println!(
            "pack ms: serializing and compressing at level {} (cpu ms: this thread's CPU time for it, waits for a CPU left out); former {}: the same at level {} (the level used before), ms and bytes; speedup: its time over pack ms; json ms: serializing alone; medians of {rounds}, the three alternated",
            packed::REPLAY_LEVEL,
            packed::FORMER_REPLAY_LEVEL,
            packed::FORMER_REPLAY_LEVEL
        );
        println!("ratio after the writes: jsonb write time over packed write time (higher: packing is faster)");
        println!("frames ms: the first drawing of the viewer's frames, once per match; viewer: bytes a viewer downloads (replay as stored + frames gzip)");
        anyhow::Ok(0)
    });
    if a.database_url.is_none() {
        // Stopped first: with its folder gone it could not be, and ran on.
        drop(private);
        let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("koth-replay-bench-pg-{}", std::process::id())));
    }
    result
}

fn kib(bytes: usize) -> String {
    if bytes >= 10 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    } else {
        format!("{:.0} KiB", bytes as f64 / 1024.0)
    }
}
