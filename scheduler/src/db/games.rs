//! Games hosts add to the server (`sql/0015_added_games.sql`): stored with
//! their files, validated by a runner (a `validate_game` job: the referee
//! built, a match between the example bots judged by
//! [`koth_ladder::validation::judge_game`]), then offered for ladders.

use serde_json::Value;
use sqlx::{PgConnection, PgPool, Row};

use super::audit::{self, Actor};
use super::store::{enqueue_job, StoreError, PRIORITY_COMPILE};
use crate::audit::{AuditAction, Subjects};
use crate::job::{GameStatus, Job};
use koth_ladder::served::{ServedGame, ADDED_KIND};

type Result<T> = std::result::Result<T, StoreError>;

/// An added game as listed: everything but its files.
#[derive(Clone, Debug)]
pub struct AddedGame {
    pub id: i64,
    pub game: ServedGame,
    pub status: GameStatus,
    /// Why it was refused, or what its validation match showed.
    pub log: Option<String>,
    pub added_by: Option<String>,
}

/// What [`add`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Added {
    /// Stored, its validation queued (a refused game of the name replaced).
    Queued(i64),
    /// The name is taken by a game that is validating or ready.
    Taken(GameStatus),
}

/// Store an added game and queue its validation, in one transaction. A
/// game of that name that was refused is replaced (its host fixed it); one
/// that is validating or ready is not (ladders and replays depend on it).
pub async fn add(pool: &PgPool, name: &str, manifest: &Value, source: &[u8], source_hash: &str, by: i64) -> Result<Added> {
    let mut tx = pool.begin().await?;
    let added = sqlx::query(
        "INSERT INTO games (name, kind, manifest, source, source_hash, status, added_by) \
         VALUES ($1, $2, $3, $4, $5, 'validating', $6) \
         ON CONFLICT (name) DO UPDATE SET manifest = EXCLUDED.manifest, source = EXCLUDED.source, \
             source_hash = EXCLUDED.source_hash, status = 'validating', validation_log = NULL, added_by = EXCLUDED.added_by, \
             created_at = now() \
         WHERE games.kind = $2 AND games.status = 'refused' \
         RETURNING id, xmax <> 0 AS replaced",
    )
    .bind(name)
    .bind(ADDED_KIND)
    .bind(manifest)
    .bind(source)
    .bind(source_hash)
    .bind(by)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(added) = added else {
        let status: String = sqlx::query_scalar("SELECT status FROM games WHERE name = $1").bind(name).fetch_one(&mut *tx).await?;
        return Ok(Added::Taken(GameStatus::from_stored(&status).map_err(StoreError::Invalid)?));
    };
    let id: i64 = added.get("id");
    let job = enqueue_job(&mut tx, Job::ValidateGame { game: id }, PRIORITY_COMPILE).await?;
    // An upsert that updated (a refused game's row) leaves the row's xmax set.
    let replacing = if added.get("replaced") { ", replacing the refused game of that name" } else { "" };
    let why = format!("{name:?}{replacing}; its validation is job {job}");
    audit::record(&mut tx, Actor::Account(by), AuditAction::GameAdded, Subjects { game: Some(id), ..Subjects::default() }, &why).await?;
    tx.commit().await?;
    Ok(Added::Queued(id))
}

const LISTED: &str = "SELECT g.id, g.kind, g.manifest, g.status, g.validation_log, u.name AS added_by \
                      FROM games g LEFT JOIN users u ON u.id = g.added_by";

fn listed(r: &sqlx::postgres::PgRow) -> Result<AddedGame> {
    let id: i64 = r.get("id");
    let game = ServedGame::from_row(&r.get::<String, _>("kind"), r.get::<Option<Value>, _>("manifest").as_ref())
        .map_err(|e| StoreError::Invalid(format!("game {id}: {e}")))?;
    Ok(AddedGame {
        id,
        game,
        status: GameStatus::from_stored(&r.get::<String, _>("status")).map_err(StoreError::Invalid)?,
        log: r.get("validation_log"),
        added_by: r.get("added_by"),
    })
}

/// Every added game, oldest first.
pub async fn all(pool: &PgPool) -> Result<Vec<AddedGame>> {
    let rows = sqlx::query(&format!("{LISTED} WHERE g.kind = $1 ORDER BY g.id")).bind(ADDED_KIND).fetch_all(pool).await?;
    rows.iter().map(listed).collect()
}

/// An added game by name.
pub async fn by_name(pool: &PgPool, name: &str) -> Result<Option<AddedGame>> {
    let row = sqlx::query(&format!("{LISTED} WHERE g.kind = $1 AND g.name = $2")).bind(ADDED_KIND).bind(name).fetch_optional(pool).await?;
    row.as_ref().map(listed).transpose()
}

/// An added game's files as stored (a tar archive), by id or by name.
pub async fn source(pool: &PgPool, id: i64) -> Result<Option<Vec<u8>>> {
    Ok(sqlx::query_scalar("SELECT source FROM games WHERE id = $1 AND kind = $2").bind(id).bind(ADDED_KIND).fetch_optional(pool).await?)
}

pub async fn source_by_name(pool: &PgPool, name: &str) -> Result<Option<Vec<u8>>> {
    Ok(sqlx::query_scalar("SELECT source FROM games WHERE name = $1 AND kind = $2")
        .bind(name)
        .bind(ADDED_KIND)
        .fetch_optional(pool)
        .await?)
}

/// What a game's validation showed: ready (offered) or refused, with the
/// log. Only a game still validating changes (a job run twice writes once).
pub async fn record_validation(conn: &mut PgConnection, id: i64, passed: bool, log: &str) -> std::result::Result<(), sqlx::Error> {
    let n = sqlx::query("UPDATE games SET status = $2, validation_log = $3 WHERE id = $1 AND status = 'validating'")
        .bind(id)
        .bind(if passed { GameStatus::Ready.as_str() } else { GameStatus::Refused.as_str() })
        .bind(log)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    if n > 0 {
        // The game's newest validation job: the runner that completed it
        // (a completed job keeps its holder), or koth when it failed for
        // good (a failed job has none).
        let job: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM jobs WHERE kind = 'validate_game' AND payload = jsonb_build_object('game', $1::int8) \
             ORDER BY id DESC LIMIT 1",
        )
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
        let action = if passed { AuditAction::GameReady } else { AuditAction::GameRefused };
        let actor = job.map_or(Actor::Koth, Actor::HolderOf);
        audit::record(conn, actor, action, Subjects { game: Some(id), ..Subjects::default() }, log).await?;
    }
    Ok(())
}
