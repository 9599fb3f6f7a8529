//! The example ladders and bots that `koth up` and `koth web --examples`
//! start with (the bots are the repository's `bots/`, embedded by build.rs).

use koth_games::GameKind;
use koth_ladder::format::LadderConfig;
use koth_runner::submission::{Submission, SubmissionLimits};
use koth_scheduler::db::store;
use sqlx::PgPool;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/examples.rs"));
}

/// The `host` account, with its token in `<data-dir>/host-token` (mode
/// 0600): made on a first start, with or without the examples, and given a
/// new token if that file is gone (the old ones keep working).
///
/// Services started at once make one `host` ([`store::first_start_lock`]).
pub async fn ensure_host(pool: &PgPool, data_dir: &std::path::Path) -> anyhow::Result<i64> {
    let lock = store::first_start_lock(pool).await?;
    let host = ensure_host_locked(pool, data_dir).await?;
    lock.commit().await?;
    Ok(host)
}

/// [`ensure_host`], for a caller that holds the first-start lock.
async fn ensure_host_locked(pool: &PgPool, data_dir: &std::path::Path) -> anyhow::Result<i64> {
    let token_file = data_dir.join("host-token");
    let (host, token) = match koth_scheduler::db::accounts::host_named(pool, "host").await? {
        Some(id) if token_file.exists() => return Ok(id),
        Some(id) => (id, koth_web::http::new_token_for(pool, id, "host-token").await?),
        None => koth_web::http::create_account(pool, "host", true).await?,
    };
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&token_file)
        .map_err(|e| anyhow::anyhow!("writing the host's token to {}: {e}", token_file.display()))?;
    writeln!(f, "{token}")?;
    Ok(host)
}

/// First start: a ladder per game in its seed's format, and the example
/// bots (enough copies to fill the game's seats), owned by the `host`
/// account ([`ensure_host`]). Services started at once on an empty database
/// seed it once: the first to take [`store::first_start_lock`] fills it, the
/// others then find its ladders.
pub async fn seed(pool: &PgPool, data_dir: &std::path::Path) -> anyhow::Result<()> {
    let lock = store::first_start_lock(pool).await?;
    let host = ensure_host_locked(pool, data_dir).await?;
    seed_for(pool, host).await?;
    lock.commit().await?;
    Ok(())
}

/// [`seed`] owned by an existing host account (`koth web
/// --host-token-file`, whose token is a secret of the host's and is
/// written nowhere). The caller holds [`store::first_start_lock`].
pub async fn seed_for(pool: &PgPool, host: i64) -> anyhow::Result<()> {
    let ladders = store::ladder_count(pool).await?;
    if ladders > 0 {
        return Ok(());
    }
    for kind in GameKind::ALL {
        let config = LadderConfig::default_for(kind);
        let ladder = store::create_ladder(pool, kind.name(), &kind.into(), &config).await?;
        let files: Vec<&(&str, &str, &[u8])> = embedded::EXAMPLES.iter().filter(|(g, _, _)| *g == kind.name()).collect();
        let seats = config.seats(kind.seat_range()).max(2);
        let copies = seats.div_ceil(files.len().max(1));
        for (_, file, bytes) in &files {
            let sub = Submission::from_upload(file, bytes, &SubmissionLimits::default())
                .map_err(|e| anyhow::anyhow!("example bot {}/{file}: {e}", kind.name()))?;
            let stem = file.rsplit_once('.').map(|(s, _)| s).unwrap_or(file);
            for c in 1..=copies {
                let name = if copies == 1 { stem.to_owned() } else { format!("{stem}-{c}") };
                let bot = store::create_bot(pool, ladder, host, &name).await?;
                store::submit_version(pool, bot, &sub.language.name, &sub.main, &sub.source_tar(), &sub.source_hash()).await?;
            }
        }
    }
    eprintln!("koth: created a ladder per game and seeded the example bots");
    Ok(())
}

/// The example bot of `game` written in the language of extension `ext`
/// (its file name and source).
pub fn example(game: GameKind, ext: &str) -> Option<(&'static str, &'static [u8])> {
    embedded::EXAMPLES
        .iter()
        .find(|(g, file, _)| *g == game.name() && file.rsplit_once('.').is_some_and(|(_, e)| e == ext))
        .map(|(_, file, bytes)| (*file, *bytes))
}
