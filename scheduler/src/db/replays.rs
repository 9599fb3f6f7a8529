//! Where replays and the viewer's frames are kept (`match_replays`, see
//! `sql/0007_packed_replays.sql` and [`crate::packed`]).
//!
//! A replay is written once, packed, in the transaction that records its
//! match ([`crate::db::results::record_match`]). Replays recorded before
//! packing are `jsonb` in `matches.replay`; the first time such a match's
//! frames are drawn its replay is packed and moved here with them
//! ([`keep_frames`]), so old rows shrink as they are viewed.

use serde_json::Value;
use sqlx::{PgConnection, PgPool, Row};

use super::store::StoreError;
use crate::packed::PackedReplay;

type Result<T> = std::result::Result<T, StoreError>;

/// A replay as it is stored.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredReplay {
    /// zstd-compressed JSON ([`PackedReplay::zstd`]).
    Packed(Vec<u8>),
    /// A replay recorded before packing.
    Json(Value),
}

/// Write a finished match's replay (in its result's transaction).
pub async fn record(conn: &mut PgConnection, match_id: i64, replay: &PackedReplay) -> std::result::Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO match_replays (match_id, replay_zst, json_bytes) VALUES ($1, $2, $3)")
        .bind(match_id)
        .bind(&replay.zstd)
        .bind(i32::try_from(replay.json_len).unwrap_or(i32::MAX))
        .execute(conn)
        .await
        .map(|_| ())
}

/// Keep frames drawn by the runner that played the match (an added game's:
/// only its referee can draw them), in its result's transaction.
pub async fn record_frames(conn: &mut PgConnection, match_id: i64, frames_gz: &[u8]) -> std::result::Result<(), sqlx::Error> {
    sqlx::query("UPDATE match_replays SET frames_gz = $2 WHERE match_id = $1")
        .bind(match_id)
        .bind(frames_gz)
        .execute(conn)
        .await
        .map(|_| ())
}

/// A match's replay: `None` no such match, `Some(None)` no replay (not
/// finished, or failed).
pub async fn stored(pool: &PgPool, match_id: i64) -> Result<Option<Option<StoredReplay>>> {
    let row = sqlx::query(
        "SELECT r.replay_zst, CASE WHEN r.match_id IS NULL THEN m.replay END AS replay \
         FROM matches m LEFT JOIN match_replays r ON r.match_id = m.id WHERE m.id = $1",
    )
    .bind(match_id)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| match (r.get::<Option<Vec<u8>>, _>("replay_zst"), r.get::<Option<Value>, _>("replay")) {
        (Some(z), _) => Some(StoredReplay::Packed(z)),
        (None, Some(v)) => Some(StoredReplay::Json(v)),
        (None, None) => None,
    }))
}

/// A match's frames (gzip JSON) if they were drawn and kept; reads
/// nothing else of the row (the replay itself is not sent along).
pub async fn kept_frames(pool: &PgPool, match_id: i64) -> Result<Option<Vec<u8>>> {
    Ok(sqlx::query_scalar("SELECT frames_gz FROM match_replays WHERE match_id = $1 AND frames_gz IS NOT NULL")
        .bind(match_id)
        .fetch_optional(pool)
        .await?)
}

/// Keep a match's frames once drawn. `repacked`: the match's replay was
/// an old `jsonb` one; it moves here, packed, in the same transaction.
pub async fn keep_frames(pool: &PgPool, match_id: i64, frames_gz: &[u8], repacked: Option<&PackedReplay>) -> Result<()> {
    let mut tx = pool.begin().await?;
    match repacked {
        None => {
            sqlx::query("UPDATE match_replays SET frames_gz = $2 WHERE match_id = $1")
                .bind(match_id)
                .bind(frames_gz)
                .execute(&mut *tx)
                .await?;
        }
        Some(p) => {
            let moved = sqlx::query(
                "INSERT INTO match_replays (match_id, replay_zst, json_bytes, frames_gz) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (match_id) DO NOTHING",
            )
            .bind(match_id)
            .bind(&p.zstd)
            .bind(i32::try_from(p.json_len).unwrap_or(i32::MAX))
            .bind(frames_gz)
            .execute(&mut *tx)
            .await?;
            if moved.rows_affected() == 1 {
                sqlx::query("UPDATE matches SET replay = NULL WHERE id = $1").bind(match_id).execute(&mut *tx).await?;
            }
        }
    }
    tx.commit().await?;
    Ok(())
}

/// A stored replay's JSON, whichever way it is stored.
pub fn to_json(stored: &StoredReplay) -> std::result::Result<Vec<u8>, String> {
    match stored {
        StoredReplay::Packed(z) => crate::packed::unzstd(z),
        StoredReplay::Json(v) => serde_json::to_vec(v).map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn either_stored_form_reads_as_the_same_json() {
        let v = serde_json::json!({"game": "target", "seed": "5", "turns": []});
        let packed = StoredReplay::Packed(zstd::bulk::compress(&serde_json::to_vec(&v).unwrap(), 3).unwrap());
        let old = StoredReplay::Json(v.clone());
        for s in [packed, old] {
            assert_eq!(serde_json::from_slice::<Value>(&to_json(&s).unwrap()).unwrap(), v);
        }
        assert!(to_json(&StoredReplay::Packed(b"junk".to_vec())).is_err());
    }
}
