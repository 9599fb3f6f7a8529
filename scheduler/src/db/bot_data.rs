//! A bot version's data carried from match to match (see
//! `koth_runner::storage`): read before a match, written back in the
//! transaction that records it.
//!
//! **Matches of one version at once** each start from the version's latest
//! snapshot; the write-back is a compare-and-swap on the snapshot the match
//! started from (`INSERT … ON CONFLICT DO UPDATE … WHERE snapshot = from`,
//! which locks the row and checks it as committed), so the first match to
//! be recorded wins and a later one that started from the same snapshot is
//! discarded, its seat saying so. Last-writer-wins would silently drop the
//! first match's learning; a merge cannot be defined for files koth does
//! not understand. Nothing is ever written over a snapshot the match did
//! not start from.

use std::collections::HashMap;

use koth_runner::storage::{DataQuota, Snapshot, MAX_MAX_BYTES, MAX_MAX_FILES};
use sqlx::{PgConnection, PgPool, Row};

/// What a seat's match did with its data, for [`record`].
#[derive(Clone, Debug)]
pub struct SeatData {
    pub seat: i32,
    pub version_id: i64,
    /// The snapshot the seat started from.
    pub started_from: String,
    /// The snapshot its folder was packed into (the match ended normally,
    /// within the quota).
    pub packed: Option<Snapshot>,
    /// Why nothing was packed.
    pub note: Option<String>,
}

/// The words a seat gets when another match of its version wrote first.
pub const LOST_RACE: &str = "another match of this version, started from the same snapshot, saved its data first: \
                             this match's is discarded and the other's kept";

/// The latest snapshot of each of `versions` (empty for one that has none).
pub async fn latest(pool: &PgPool, versions: &[i64]) -> Result<HashMap<i64, Snapshot>, String> {
    let rows = sqlx::query(
        "SELECT d.version_id, s.archive FROM bot_data d JOIN bot_data_snapshots s ON s.hash = d.snapshot \
         WHERE d.version_id = ANY($1)",
    )
    .bind(versions)
    .fetch_all(pool)
    .await
    .map_err(|e| format!("reading the bots' data: {e}"))?;
    let any = DataQuota { max_bytes: MAX_MAX_BYTES, max_files: MAX_MAX_FILES };
    let mut out: HashMap<i64, Snapshot> = versions.iter().map(|v| (*v, Snapshot::empty())).collect();
    for r in rows {
        let version: i64 = r.get("version_id");
        let s = Snapshot::from_archive(r.get("archive"), any).map_err(|e| format!("version {version}'s stored data: {e}"))?;
        out.insert(version, s);
    }
    Ok(out)
}

async fn store_snapshot(conn: &mut PgConnection, s: &Snapshot) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO bot_data_snapshots (hash, archive, files, bytes) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING")
        .bind(&s.hash)
        .bind(&s.archive)
        .bind(s.files as i32)
        .bind(s.bytes as i64)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Write back each seat's packed snapshot as its version's latest if that
/// is still the one the match started from, and record on the match's
/// seats what became of their data. In the match's result transaction.
pub async fn record(conn: &mut PgConnection, match_id: i64, seats: &[SeatData]) -> Result<(), sqlx::Error> {
    // Rows locked in version order: two matches sharing versions never wait
    // on each other in a cycle.
    let mut order: Vec<&SeatData> = seats.iter().collect();
    order.sort_by_key(|s| (s.version_id, s.seat));
    for s in order {
        if s.started_from == Snapshot::empty().hash {
            store_snapshot(conn, &Snapshot::empty()).await?;
        }
        let (written, note) = match &s.packed {
            None => (None, s.note.clone()),
            Some(new) => {
                store_snapshot(conn, new).await?;
                let swapped = sqlx::query(
                    "INSERT INTO bot_data (version_id, snapshot) VALUES ($1, $2) \
                     ON CONFLICT (version_id) DO UPDATE SET snapshot = EXCLUDED.snapshot, writes = bot_data.writes + 1, \
                         updated_at = now() \
                     WHERE bot_data.snapshot = $3",
                )
                .bind(s.version_id)
                .bind(&new.hash)
                .bind(&s.started_from)
                .execute(&mut *conn)
                .await?
                .rows_affected()
                    == 1;
                // (No row yet: the version has no data, and a match of it
                // started from the empty snapshot; the insert is that swap.)
                if swapped {
                    (Some(new.hash.clone()), None)
                } else {
                    (None, Some(LOST_RACE.to_owned()))
                }
            }
        };
        sqlx::query("UPDATE match_seats SET data_from = $3, data_written = $4, data_note = $5 WHERE match_id = $1 AND seat = $2")
            .bind(match_id)
            .bind(s.seat)
            .bind(&s.started_from)
            .bind(&written)
            .bind(&note)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// The snapshot seat `seat` of `match_id` started from, with the account
/// owning its bot (only they may read it).
pub async fn seat_snapshot(pool: &PgPool, match_id: i64, seat: i32) -> Result<Option<(i64, Option<Vec<u8>>)>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT b.owner_id, d.archive FROM match_seats s JOIN bots b ON b.id = s.bot_id \
         LEFT JOIN bot_data_snapshots d ON d.hash = s.data_from WHERE s.match_id = $1 AND s.seat = $2",
    )
    .bind(match_id)
    .bind(seat)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| (r.get("owner_id"), r.get("archive"))))
}

/// What became of a seat's data in a match, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatRecord {
    /// The snapshot it started from (none: the ladder carried no data).
    pub from: Option<String>,
    /// The snapshot that became its version's latest.
    pub written: Option<String>,
    /// Why none did.
    pub note: Option<String>,
}

pub async fn seat_record(pool: &PgPool, match_id: i64, seat: i32) -> Result<Option<SeatRecord>, sqlx::Error> {
    let row = sqlx::query("SELECT data_from, data_written, data_note FROM match_seats WHERE match_id = $1 AND seat = $2")
        .bind(match_id)
        .bind(seat)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| SeatRecord { from: r.get("data_from"), written: r.get("data_written"), note: r.get("data_note") }))
}
