//! Accounts and their API tokens. A token is stored only as its SHA-256
//! hash; revoking deletes the row. A deleted account keeps its row (its
//! name stays taken, its matches stay in history) with no tokens left and
//! its bots withdrawn.

use std::time::Duration;

use sqlx::{PgConnection, PgPool, Row};

use super::store::StoreError;
use crate::types::{Me, TokenInfo};
use koth_ladder::quota::{check_signup, OverLimit, SignupLimits, SignupUsage, SubmissionUsage};

type Result<T> = std::result::Result<T, StoreError>;

/// Store a new token's hash for `user`, named `name`, expiring after
/// `lifetime` (none: never); the one INSERT of a token.
async fn insert_token(
    conn: &mut PgConnection,
    user: i64,
    name: &str,
    token_hash: &[u8],
    lifetime: Option<Duration>,
) -> std::result::Result<TokenInfo, sqlx::Error> {
    let r = sqlx::query(&format!(
        "INSERT INTO api_tokens (hash, user_id, name, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4)) \
         RETURNING {TOKEN_COLUMNS}"
    ))
    .bind(token_hash)
    .bind(user)
    .bind(name)
    .bind(lifetime.map(|l| l.as_secs_f64()))
    .fetch_one(conn)
    .await?;
    Ok(token_info(&r, -1))
}

/// An account and its first token's hash, in one transaction.
pub async fn create_account(
    pool: &PgPool,
    name: &str,
    is_host: bool,
    token_hash: &[u8],
    lifetime: Option<Duration>,
) -> std::result::Result<i64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let id = super::store::create_user_on(&mut tx, name, is_host).await?;
    insert_token(&mut tx, id, "first", token_hash, lifetime).await?;
    tx.commit().await?;
    Ok(id)
}

/// The account a token's hash belongs to, and whether it is a host's,
/// expired or not (a host's secret token must not collide with another's).
pub async fn token_owner(pool: &PgPool, token_hash: &[u8]) -> std::result::Result<Option<(i64, bool)>, sqlx::Error> {
    let row: Option<(i64, bool)> = sqlx::query_as(
        "SELECT u.id, u.is_host FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = $1 AND u.deleted_at IS NULL",
    )
    .bind(token_hash)
    .fetch_optional(pool)
    .await?;
    Ok(row)
}

/// The id of the host account named `name`, if there is one.
pub async fn host_named(pool: &PgPool, name: &str) -> std::result::Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM users WHERE name = $1 AND is_host AND deleted_at IS NULL").bind(name).fetch_optional(pool).await
}

/// The account of a token's hash, with the token's id, if the token exists,
/// has not expired and its account is not deleted. Notes the token's use
/// (at most once a minute: a write per request would cost more than the
/// request).
pub async fn account_by_token(pool: &PgPool, token_hash: &[u8]) -> Result<Option<(Me, i64)>> {
    let row = sqlx::query(
        "SELECT u.id, u.name, u.is_host, t.id AS token_id, \
                (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute') AS stale \
         FROM api_tokens t JOIN users u ON u.id = t.user_id \
         WHERE t.hash = $1 AND u.deleted_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())",
    )
    .bind(token_hash)
    .fetch_optional(pool)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let token_id: i64 = r.get("token_id");
    if r.get::<bool, _>("stale") {
        sqlx::query("UPDATE api_tokens SET last_used_at = now() WHERE id = $1").bind(token_id).execute(pool).await?;
    }
    Ok(Some((Me { id: r.get("id"), name: r.get("name"), is_host: r.get("is_host") }, token_id)))
}

/// Whether a token's hash names an expired token (to say so, rather than
/// "unknown token").
pub async fn token_expired(pool: &PgPool, token_hash: &[u8]) -> Result<bool> {
    Ok(sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM api_tokens WHERE hash = $1 AND expires_at <= now())")
        .bind(token_hash)
        .fetch_one(pool)
        .await?)
}

const TOKEN_COLUMNS: &str = "id, name, created_at::text AS created_at, last_used_at::text AS last_used_at, expires_at::text AS expires_at";

fn token_info(r: &sqlx::postgres::PgRow, current: i64) -> TokenInfo {
    let id: i64 = r.get("id");
    TokenInfo {
        id,
        name: r.get("name"),
        created_at: r.get("created_at"),
        last_used_at: r.get("last_used_at"),
        expires_at: r.get("expires_at"),
        current: id == current,
    }
}

/// An account's tokens, oldest first; `current` marks the caller's.
pub async fn tokens(pool: &PgPool, user: i64, current: i64) -> Result<Vec<TokenInfo>> {
    let rows =
        sqlx::query(&format!("SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE user_id = $1 ORDER BY id")).bind(user).fetch_all(pool).await?;
    Ok(rows.iter().map(|r| token_info(r, current)).collect())
}

/// A new token for an account.
pub async fn create_token(pool: &PgPool, user: i64, name: &str, token_hash: &[u8], lifetime: Option<Duration>) -> Result<TokenInfo> {
    let mut conn = pool.acquire().await?;
    Ok(insert_token(&mut conn, user, name, token_hash, lifetime).await?)
}

/// Revoke one of an account's tokens; false if it has no such token.
pub async fn revoke_token(pool: &PgPool, user: i64, token: i64) -> Result<bool> {
    let n =
        sqlx::query("DELETE FROM api_tokens WHERE id = $1 AND user_id = $2").bind(token).bind(user).execute(pool).await?.rows_affected();
    Ok(n > 0)
}

/// Replace one of an account's tokens by a new one of the same name, in one
/// transaction: the old one stops working as the new one starts. `None` if
/// the account has no such token.
pub async fn rotate_token(pool: &PgPool, user: i64, token: i64, new_hash: &[u8], lifetime: Option<Duration>) -> Result<Option<TokenInfo>> {
    let mut tx = pool.begin().await?;
    let Some(name) = sqlx::query_scalar::<_, String>("DELETE FROM api_tokens WHERE id = $1 AND user_id = $2 RETURNING name")
        .bind(token)
        .bind(user)
        .fetch_optional(&mut *tx)
        .await?
    else {
        return Ok(None);
    };
    let info = insert_token(&mut tx, user, &name, new_hash, lifetime).await?;
    tx.commit().await?;
    Ok(Some(info))
}

/// Delete an account, in one transaction: every token revoked, every bot
/// withdrawn (with the reason shown on its page), their queued matches and
/// the account's challenges cancelled, the row kept. Returns the bots
/// withdrawn.
pub async fn delete_account(pool: &PgPool, user: i64) -> Result<u64> {
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM api_tokens WHERE user_id = $1").bind(user).execute(&mut *tx).await?;
    sqlx::query("UPDATE users SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL").bind(user).execute(&mut *tx).await?;
    let bots: Vec<i64> = sqlx::query_scalar(
        "UPDATE bots SET disabled_reason = 'its owner deleted their account' WHERE owner_id = $1 AND disabled_reason IS NULL RETURNING id",
    )
    .bind(user)
    .fetch_all(&mut *tx)
    .await?;
    let mut cancelled = super::store::cancel_matches_of(&mut tx, &bots, "cancelled: a bot's owner deleted their account").await?.len();
    // Their challenges of other people's bots too.
    let asked: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM matches WHERE requested_by = $1 AND state = 'queued'").bind(user).fetch_all(&mut *tx).await?;
    cancelled += super::store::cancel_queued_matches(&mut tx, &asked, "cancelled: who asked for it deleted their account").await?.len();
    let withdrawn: Vec<String> = bots.iter().map(|b| format!("bot {b}")).collect();
    let why = format!(
        "by its owner; {} bot(s) withdrawn{}{}; {cancelled} queued match(es) cancelled",
        bots.len(),
        if bots.is_empty() { "" } else { ": " },
        withdrawn.join(", ")
    );
    super::audit::record(&mut tx, super::audit::Actor::Account(user), crate::audit::AuditAction::AccountDeleted, Default::default(), &why)
        .await?;
    tx.commit().await?;
    Ok(bots.len() as u64)
}

/// [`SubmissionUsage`] of an account's bots, in one statement; called
/// inside the transaction that adds the version, after the account's lock
/// ([`super::store::submit`]).
pub async fn submission_usage(conn: &mut PgConnection, user: i64) -> std::result::Result<SubmissionUsage, sqlx::Error> {
    let r = sqlx::query(
        "SELECT count(*) FILTER (WHERE v.created_at > now() - interval '1 hour') AS last_hour, \
                extract(epoch FROM min(v.created_at) FILTER (WHERE v.created_at > now() - interval '1 hour') \
                                   + interval '1 hour' - now())::float8 AS hour_frees_in, \
                coalesce(sum(octet_length(v.source)) FILTER (WHERE v.created_at > now() - interval '1 day'), 0)::int8 AS bytes_last_day, \
                extract(epoch FROM min(v.created_at) FILTER (WHERE v.created_at > now() - interval '1 day') \
                                   + interval '1 day' - now())::float8 AS day_frees_in, \
                count(*) FILTER (WHERE v.status = 'pending') AS pending \
         FROM bot_versions v JOIN bots b ON b.id = v.bot_id \
         WHERE b.owner_id = $1 AND (v.created_at > now() - interval '1 day' OR v.status = 'pending')",
    )
    .bind(user)
    .fetch_one(conn)
    .await?;
    Ok(SubmissionUsage {
        last_hour: r.get("last_hour"),
        hour_frees_in: r.get::<Option<f64>, _>("hour_frees_in").unwrap_or(0.0),
        bytes_last_day: r.get("bytes_last_day"),
        day_frees_in: r.get::<Option<f64>, _>("day_frees_in").unwrap_or(0.0),
        pending: r.get("pending"),
    })
}

/// Take the account's lock for the rest of the transaction: every write a
/// per-account limit counts (a version, a challenge) takes it first, so a
/// limit is read and its insert made with no other of the account's writes
/// in between.
pub async fn lock_account(conn: &mut PgConnection, user: i64) -> std::result::Result<(), sqlx::Error> {
    sqlx::query("SELECT id FROM users WHERE id = $1 FOR UPDATE").bind(user).execute(conn).await?;
    Ok(())
}

/// A sign-up refused, or the database failing.
#[derive(Debug, thiserror::Error)]
pub enum SignupError {
    #[error("{}", .0.message)]
    OverLimit(OverLimit),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Sign-ups are serialised by this advisory lock (one key for the whole
/// server: they are rare, and the overall limit counts them all).
const SIGNUP_LOCK: i64 = 0x6b6f_7468_5f73_6967; // "koth_sig"

/// An ordinary account made through the API from `address`, and its first
/// token's hash, if [`SignupLimits`] allow it now: counted and inserted
/// under one lock, in one transaction. Addresses older than the hour the
/// limits look back over are cleared on the way.
pub async fn sign_up(
    pool: &PgPool,
    name: &str,
    address: Option<std::net::IpAddr>,
    limits: &SignupLimits,
    token_hash: &[u8],
    lifetime: Option<Duration>,
) -> std::result::Result<i64, SignupError> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(SIGNUP_LOCK).execute(&mut *tx).await?;
    sqlx::query("UPDATE users SET signup_address = NULL WHERE signup_address IS NOT NULL AND created_at < now() - interval '1 hour'")
        .execute(&mut *tx)
        .await?;
    let address = address.map(|a| a.to_string());
    let r = sqlx::query(
        "SELECT count(*) AS last_hour, \
                extract(epoch FROM min(created_at) + interval '1 hour' - clock_timestamp())::float8 AS hour_frees_in, \
                count(*) FILTER (WHERE signup_address = $1::inet) AS from_address, \
                extract(epoch FROM min(created_at) FILTER (WHERE signup_address = $1::inet) + interval '1 hour' \
                                   - clock_timestamp())::float8 AS address_frees_in \
         FROM users WHERE NOT is_host AND created_at > clock_timestamp() - interval '1 hour'",
    )
    .bind(&address)
    .fetch_one(&mut *tx)
    .await?;
    let usage = SignupUsage {
        last_hour: r.get("last_hour"),
        hour_frees_in: r.get::<Option<f64>, _>("hour_frees_in").unwrap_or(0.0),
        from_address: r.get("from_address"),
        address_frees_in: r.get::<Option<f64>, _>("address_frees_in").unwrap_or(0.0),
    };
    check_signup(limits, &usage).map_err(SignupError::OverLimit)?;
    // clock_timestamp(), not the transaction's start: the next sign-up,
    // waiting on the lock, counts this one by when it was made.
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO users (name, is_host, signup_address, created_at) VALUES ($1, false, $2::inet, clock_timestamp()) RETURNING id",
    )
    .bind(name)
    .bind(&address)
    .fetch_one(&mut *tx)
    .await?;
    insert_token(&mut tx, id, "first", token_hash, lifetime).await?;
    tx.commit().await?;
    Ok(id)
}
