//! The HTTP API (axum), served by `koth up` (and, later, `koth web`).
//!
//! JSON in and out; every error is `{"error": "..."}` with a status that
//! says whose fault it is. Authentication: `Authorization: Bearer <token>`;
//! tokens are shown once at account creation and stored as SHA-256 hashes.
//! Only a bot's owner (and hosts) may submit new versions of it, read its
//! compile logs and its stderr in matches; everything else is public.
//!
//! | method | path | who | what |
//! |---|---|---|---|
//! | GET | `/health` | all | database reachable? |
//! | GET | `/metrics` | all | Prometheus text: jobs, matches, bots |
//! | POST | `/api/users` | all | `{"name"}` → account and its token |
//! | GET | `/api/ladders` | all | ladders and their games |
//! | GET | `/api/ladders/{id}/leaderboard` | all | by the ladder's format |
//! | POST | `/api/ladders/{id}/bots/{name}?file=bot.py` | user | body: the file or archive; new bot or new version |
//! | GET | `/api/bots/{id}` | all | bot, versions, status |
//! | GET | `/api/versions/{id}/log` | owner, host | compile log |
//! | GET | `/api/matches/{id}` | all | seats and outcomes |
//! | GET | `/api/matches/{id}/replay` | all | the replay |
//! | GET | `/api/matches/{id}/stderr/{seat}` | owner, host | that bot's stderr |
//!
//! Uploads are checked by a function the caller provides ([`CheckUpload`]):
//! the submission rules live with the languages (koth-runner), which depends
//! on this crate, not the other way round.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use sqlx::{PgPool, Row};

/// A checked upload: what to store as a bot version.
#[derive(Clone, Debug)]
pub struct CheckedUpload {
    pub language: String,
    pub main: String,
    /// The checked sources as a tar archive.
    pub source: Vec<u8>,
    pub source_hash: String,
}

/// Checks an upload (file name, bytes); the error says what is wrong and what to do.
pub type CheckUpload = Arc<dyn Fn(&str, &[u8]) -> Result<CheckedUpload, String> + Send + Sync>;

/// Largest request body (an upload).
pub const MAX_BODY: usize = 40 << 20;

#[derive(Clone)]
struct AppState {
    pool: PgPool,
    check: CheckUpload,
}

/// An API error: a status and a message for the client.
#[derive(Debug)]
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        tracing::error!("database error: {e}");
        ApiError(StatusCode::SERVICE_UNAVAILABLE, "the database is not available; try again shortly".into())
    }
}

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, msg.into())
}
fn not_found(what: &str) -> ApiError {
    ApiError(StatusCode::NOT_FOUND, format!("{what} does not exist"))
}
fn forbidden(msg: &str) -> ApiError {
    ApiError(StatusCode::FORBIDDEN, msg.into())
}

type ApiResult<T> = Result<T, ApiError>;

/// The API's routes.
pub fn router(pool: PgPool, check: CheckUpload) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route("/api/users", post(create_user))
        .route("/api/ladders", get(ladders))
        .route("/api/ladders/{id}/leaderboard", get(leaderboard))
        .route("/api/ladders/{id}/bots/{name}", post(submit))
        .route("/api/bots/{id}", get(bot))
        .route("/api/versions/{id}/log", get(version_log))
        .route("/api/matches/{id}", get(match_info))
        .route("/api/matches/{id}/replay", get(replay))
        .route("/api/matches/{id}/stderr/{seat}", get(stderr))
        .fallback(|| async { ApiError(StatusCode::NOT_FOUND, "no such endpoint; see the table in the API's documentation".into()) })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(AppState { pool, check })
}

/// A new API token: 32 random bytes, hex.
fn new_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut b);
    hex::encode(b)
}

fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// Create an account and its first token (returned once).
pub async fn create_account(pool: &PgPool, name: &str, is_host: bool) -> Result<(i64, String), sqlx::Error> {
    let mut tx = pool.begin().await?;
    let id = crate::store::create_user_on(&mut tx, name, is_host).await?;
    let token = new_token();
    sqlx::query("INSERT INTO api_tokens (hash, user_id) VALUES ($1, $2)").bind(token_hash(&token)).bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok((id, token))
}

#[derive(Clone, Copy, Debug)]
struct Caller {
    id: i64,
    is_host: bool,
}

async fn caller(pool: &PgPool, headers: &HeaderMap) -> ApiResult<Option<Caller>> {
    let Some(h) = headers.get(axum::http::header::AUTHORIZATION) else { return Ok(None) };
    let token = h
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| ApiError(StatusCode::UNAUTHORIZED, "the Authorization header must be `Bearer <token>`".into()))?;
    let row = sqlx::query("SELECT u.id, u.is_host FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = $1")
        .bind(token_hash(token.trim()))
        .fetch_optional(pool)
        .await?;
    match row {
        Some(r) => Ok(Some(Caller { id: r.get("id"), is_host: r.get("is_host") })),
        None => Err(ApiError(StatusCode::UNAUTHORIZED, "unknown token; create an account with POST /api/users".into())),
    }
}

async fn require_caller(pool: &PgPool, headers: &HeaderMap) -> ApiResult<Caller> {
    caller(pool, headers)
        .await?
        .ok_or_else(|| ApiError(StatusCode::UNAUTHORIZED, "this needs an account: send `Authorization: Bearer <token>`".into()))
}

async fn health(State(s): State<AppState>) -> Response {
    match sqlx::query("SELECT 1").execute(&s.pool).await {
        Ok(_) => Json(json!({"status": "ok", "database": "ok"})).into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"status": "degraded", "database": e.to_string()}))).into_response(),
    }
}

async fn metrics(State(s): State<AppState>) -> ApiResult<Response> {
    let mut out = String::new();
    out.push_str("# HELP koth_jobs Jobs in the queue by kind and state.\n# TYPE koth_jobs gauge\n");
    for r in sqlx::query("SELECT kind, state, count(*) AS n FROM jobs GROUP BY kind, state ORDER BY kind, state").fetch_all(&s.pool).await? {
        out.push_str(&format!(
            "koth_jobs{{kind=\"{}\",state=\"{}\"}} {}\n",
            r.get::<String, _>("kind"),
            r.get::<String, _>("state"),
            r.get::<i64, _>("n")
        ));
    }
    out.push_str("# HELP koth_matches Matches by state.\n# TYPE koth_matches gauge\n");
    for r in sqlx::query("SELECT state, count(*) AS n FROM matches GROUP BY state ORDER BY state").fetch_all(&s.pool).await? {
        out.push_str(&format!("koth_matches{{state=\"{}\"}} {}\n", r.get::<String, _>("state"), r.get::<i64, _>("n")));
    }
    let bots: i64 = sqlx::query_scalar("SELECT count(*) FROM bots WHERE disabled_reason IS NULL").fetch_one(&s.pool).await?;
    out.push_str(&format!("# HELP koth_bots Enabled bots.\n# TYPE koth_bots gauge\nkoth_bots {bots}\n"));
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewUser {
    name: String,
}

async fn create_user(State(s): State<AppState>, body: axum::body::Bytes) -> ApiResult<Response> {
    // JSON whatever the Content-Type says: clients forget it.
    let u: NewUser = serde_json::from_slice(&body).map_err(|e| bad(format!("expected {{\"name\": \"...\"}}: {e}")))?;
    if !valid_name(&u.name) {
        return Err(bad("a name is 1 to 40 letters, digits, '_', '.' or '-'"));
    }
    match create_account(&s.pool, &u.name, false).await {
        Ok((id, token)) => Ok((StatusCode::CREATED, Json(json!({"id": id, "name": u.name, "token": token}))).into_response()),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(ApiError(StatusCode::CONFLICT, format!("the name {:?} is taken", u.name))),
        Err(e) => Err(e.into()),
    }
}

fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.len() <= 40 && n.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

async fn ladders(State(s): State<AppState>) -> ApiResult<Json<Value>> {
    let rows = sqlx::query(
        "SELECT l.id, l.name, l.format, l.paused, g.kind, (SELECT count(*) FROM bots b WHERE b.ladder_id = l.id) AS bots \
         FROM ladders l JOIN games g ON g.id = l.game_id ORDER BY l.id",
    )
    .fetch_all(&s.pool)
    .await?;
    Ok(Json(Value::Array(
        rows.iter()
            .map(|r| {
                json!({"id": r.get::<i64, _>("id"), "name": r.get::<String, _>("name"), "game": r.get::<String, _>("kind"),
                       "format": r.get::<String, _>("format"), "paused": r.get::<bool, _>("paused"), "bots": r.get::<i64, _>("bots")})
            })
            .collect(),
    )))
}

async fn bot_names(pool: &PgPool, ladder: i64) -> ApiResult<std::collections::HashMap<i64, String>> {
    Ok(sqlx::query("SELECT id, name FROM bots WHERE ladder_id = $1").bind(ladder).fetch_all(pool).await?.iter().map(|r| (r.get("id"), r.get("name"))).collect())
}

async fn leaderboard(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let format: Option<String> = sqlx::query_scalar("SELECT format FROM ladders WHERE id = $1").bind(id).fetch_optional(&s.pool).await?;
    let format = format.ok_or_else(|| not_found(&format!("ladder {id}")))?;
    let names = bot_names(&s.pool, id).await?;
    let rows: Vec<Value> = match format.as_str() {
        "rated" => crate::results::leaderboard(&s.pool, id)
            .await?
            .into_iter()
            .enumerate()
            .map(|(i, (bot, name, r, games))| {
                json!({"rank": i + 1, "bot": bot, "name": name, "mu": r.mu, "sigma": r.sigma,
                       "score": crate::rating::leaderboard_score(r), "games": games})
            })
            .collect(),
        "round_robin" => crate::results::round_robin_standings(&s.pool, id)
            .await?
            .into_iter()
            .map(|st| json!({"rank": st.rank, "bot": st.bot, "name": names.get(&st.bot), "points": st.points, "games": st.played}))
            .collect(),
        _ => crate::results::neighbours_standings(&s.pool, id)
            .await?
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                json!({"rank": i + 1, "bot": r.bot, "name": names.get(&r.bot), "rating": r.overall,
                       "as_first": r.as_first, "as_second": r.as_second, "games": r.played})
            })
            .collect(),
    };
    Ok(Json(json!({"ladder": id, "format": format, "rows": rows})))
}

#[derive(Deserialize)]
struct SubmitQuery {
    file: Option<String>,
}

async fn submit(
    State(s): State<AppState>,
    Path((ladder, name)): Path<(i64, String)>,
    Query(q): Query<SubmitQuery>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    if !valid_name(&name) {
        return Err(bad("a bot's name is 1 to 40 letters, digits, '_', '.' or '-'"));
    }
    let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM ladders WHERE id = $1").bind(ladder).fetch_optional(&s.pool).await?;
    exists.ok_or_else(|| not_found(&format!("ladder {ladder}")))?;
    let file = q.file.ok_or_else(|| bad("say the file's name: ?file=bot.py (its extension picks the language; archives: .tar, .tar.gz, .zip)"))?;
    let check = s.check.clone();
    let bytes = body.to_vec();
    let checked = tokio::task::spawn_blocking(move || check(&file, &bytes))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("checking the upload failed: {e}")))?
        .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, e))?;
    let existing = sqlx::query("SELECT id, owner_id FROM bots WHERE ladder_id = $1 AND name = $2")
        .bind(ladder)
        .bind(&name)
        .fetch_optional(&s.pool)
        .await?;
    let (bot, created) = match existing {
        Some(r) => {
            let owner: i64 = r.get("owner_id");
            if owner != who.id && !who.is_host {
                return Err(forbidden("this bot belongs to someone else; choose another name"));
            }
            (r.get::<i64, _>("id"), false)
        }
        None => match crate::store::create_bot(&s.pool, ladder, who.id, &name).await {
            Ok(id) => (id, true),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Err(ApiError(StatusCode::CONFLICT, "a bot of this name was just created; try again".into()))
            }
            Err(e) => return Err(e.into()),
        },
    };
    let (version, job) =
        crate::store::submit_version(&s.pool, bot, &checked.language, &checked.main, &checked.source, &checked.source_hash).await?;
    Ok((
        if created { StatusCode::CREATED } else { StatusCode::ACCEPTED },
        Json(json!({"bot": bot, "version": version, "compile_job": job, "language": checked.language, "main": checked.main})),
    )
        .into_response())
}

async fn bot(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let b = sqlx::query(
        "SELECT b.id, b.name, b.ladder_id, b.current_version, b.disabled_reason, u.name AS owner \
         FROM bots b JOIN users u ON u.id = b.owner_id WHERE b.id = $1",
    )
    .bind(id)
    .fetch_optional(&s.pool)
    .await?
    .ok_or_else(|| not_found(&format!("bot {id}")))?;
    let versions = sqlx::query("SELECT id, number, language, main, status, image_id, created_at::text AS at FROM bot_versions WHERE bot_id = $1 ORDER BY number")
        .bind(id)
        .fetch_all(&s.pool)
        .await?;
    let rating = sqlx::query("SELECT mu, sigma, games FROM ratings WHERE bot_id = $1").bind(id).fetch_optional(&s.pool).await?;
    Ok(Json(json!({
        "id": b.get::<i64, _>("id"), "name": b.get::<String, _>("name"), "owner": b.get::<String, _>("owner"),
        "ladder": b.get::<i64, _>("ladder_id"), "current_version": b.get::<Option<i64>, _>("current_version"),
        "disabled_reason": b.get::<Option<String>, _>("disabled_reason"),
        "rating": rating.map(|r| json!({"mu": r.get::<f64, _>("mu"), "sigma": r.get::<f64, _>("sigma"), "games": r.get::<i32, _>("games")})),
        "versions": versions.iter().map(|v| json!({"id": v.get::<i64, _>("id"), "number": v.get::<i32, _>("number"),
            "language": v.get::<String, _>("language"), "main": v.get::<String, _>("main"), "status": v.get::<String, _>("status"),
            "image": v.get::<Option<String>, _>("image_id"), "submitted": v.get::<String, _>("at")})).collect::<Vec<_>>(),
    })))
}

/// Whether `who` owns the bot (or is a host).
async fn may_see(pool: &PgPool, who: Caller, bot: i64) -> ApiResult<bool> {
    if who.is_host {
        return Ok(true);
    }
    let owner: Option<i64> = sqlx::query_scalar("SELECT owner_id FROM bots WHERE id = $1").bind(bot).fetch_optional(pool).await?;
    Ok(owner == Some(who.id))
}

async fn version_log(State(s): State<AppState>, Path(id): Path<i64>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let who = require_caller(&s.pool, &headers).await?;
    let v = sqlx::query("SELECT bot_id, status, compile_log FROM bot_versions WHERE id = $1")
        .bind(id)
        .fetch_optional(&s.pool)
        .await?
        .ok_or_else(|| not_found(&format!("version {id}")))?;
    if !may_see(&s.pool, who, v.get("bot_id")).await? {
        return Err(forbidden("only the bot's owner can read its compile log"));
    }
    Ok(Json(json!({"version": id, "status": v.get::<String, _>("status"), "log": v.get::<Option<String>, _>("compile_log")})))
}

async fn match_info(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let m = sqlx::query("SELECT id, ladder_id, state, seed, rated, engine, turns, error, created_at::text AS created, finished_at::text AS finished FROM matches WHERE id = $1")
        .bind(id)
        .fetch_optional(&s.pool)
        .await?
        .ok_or_else(|| not_found(&format!("match {id}")))?;
    let seats = sqlx::query(
        "SELECT s.seat, s.bot_id, b.name, s.version_id, s.score, s.rank, s.result, s.status FROM match_seats s JOIN bots b ON b.id = s.bot_id \
         WHERE s.match_id = $1 ORDER BY s.seat",
    )
    .bind(id)
    .fetch_all(&s.pool)
    .await?;
    Ok(Json(json!({
        "id": m.get::<i64, _>("id"), "ladder": m.get::<Option<i64>, _>("ladder_id"), "state": m.get::<String, _>("state"),
        "seed": m.get::<i64, _>("seed"), "rated": m.get::<bool, _>("rated"), "engine": m.get::<Option<String>, _>("engine"),
        "turns": m.get::<Option<i32>, _>("turns"), "error": m.get::<Option<String>, _>("error"),
        "created": m.get::<String, _>("created"), "finished": m.get::<Option<String>, _>("finished"),
        "seats": seats.iter().map(|r| json!({"seat": r.get::<i32, _>("seat"), "bot": r.get::<i64, _>("bot_id"),
            "name": r.get::<String, _>("name"), "version": r.get::<i64, _>("version_id"), "score": r.get::<Option<f64>, _>("score"),
            "rank": r.get::<Option<i32>, _>("rank"), "result": r.get::<Option<String>, _>("result"),
            "status": r.get::<Option<Value>, _>("status")})).collect::<Vec<_>>(),
    })))
}

async fn replay(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let r: Option<Option<Value>> = sqlx::query_scalar("SELECT replay FROM matches WHERE id = $1").bind(id).fetch_optional(&s.pool).await?;
    match r {
        None => Err(not_found(&format!("match {id}"))),
        Some(None) => Err(ApiError(StatusCode::CONFLICT, format!("match {id} has not finished; its replay comes when it does"))),
        Some(Some(v)) => Ok(Json(v)),
    }
}

async fn stderr(State(s): State<AppState>, Path((id, seat)): Path<(i64, i32)>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let who = require_caller(&s.pool, &headers).await?;
    let r = sqlx::query("SELECT bot_id, stderr FROM match_seats WHERE match_id = $1 AND seat = $2")
        .bind(id)
        .bind(seat)
        .fetch_optional(&s.pool)
        .await?
        .ok_or_else(|| not_found(&format!("seat {seat} of match {id}")))?;
    if !may_see(&s.pool, who, r.get("bot_id")).await? {
        return Err(forbidden("only the bot's owner can read its stderr"));
    }
    Ok(Json(json!({"match": id, "seat": seat, "stderr": r.get::<Option<String>, _>("stderr")})))
}
