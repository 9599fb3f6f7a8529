//! The HTTP API (axum), served by `koth up` and `koth web` with the web
//! pages ([`crate::web`]).
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
//! | GET | `/api/ladders/{id}/leaderboard` | all | by the ladder's format: `{"format", "columns": [{"key", "label"}], "rows": [{"rank", "bot", "name", <key>...}]}` |
//! | POST | `/api/ladders/{id}/bots/{name}?file=bot.py` | user | body: the file or archive; new bot or new version |
//! | GET | `/api/bots/{id}` | all | bot, versions, status |
//! | GET | `/api/versions/{id}/log` | owner, host | compile log |
//! | GET | `/api/matches/{id}` | all | seats and outcomes |
//! | GET | `/api/matches/{id}/replay` | all | the replay |
//! | GET | `/api/matches/{id}/stderr/{seat}` | owner, host | that bot's stderr, whole and by turn |
//! | POST | `/api/ladders` | host | `{"name", "game", "format"?, "settings"?}`: a ladder; format and settings default to the game's seed, given settings replace those fields (see [`crate::format`]) |
//! | POST | `/api/ladders/{id}/pause`, `/resume` | host | stop or restart scheduling |
//! | POST | `/api/bots/{id}/disable`, `/enable` | host | `{"reason"}`; a disabled bot is not scheduled |
//! | POST | `/api/bots/{id}/delete` | owner, host | withdraw the bot (its matches stay in history) |
//! | GET | `/api/bots/{id}/ratings` | all | rating history |
//! | GET | `/api/bots/{id}/matches` | all | its last 50 matches, every seat |
//! | GET | `/api/versions/{id}/source` | owner, host | the sources, as a tar archive |
//! | POST | `/api/challenges` | user | `{"ladder", "bots": [...]}`: an unrated match, seats in that order; the caller must own one of the bots |
//! | GET | `/api/openapi.json` | all | this table as an OpenAPI 3 document |
//! | GET | `/api/ladders/{id}/bots` | all | the ladder's bots and their status |
//! | GET | `/api/ladders/{id}/matches` | all | its last 50 matches, every seat |
//! | GET | `/api/me` | user | the token's account |
//! | GET | `/api/games`, `/api/languages` | all | what can be played, in what |
//! | GET | `/api/matches/{id}/frames` | all | a picture of every turn, for the replay viewer |
//! | GET | `/api/bots/{id}/head-to-head` | all | its record against each bot it met |
//!
//! Uploads are checked by the submission rules of koth-runner
//! ([`Submission::from_upload`]), the crate that owns the languages.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use koth_runner::submission::{Submission, SubmissionLimits};
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use sqlx::{PgPool, Row};

/// Largest request body (an upload).
pub const MAX_BODY: usize = 40 << 20;

#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) pool: PgPool,
    frames: Arc<FramesCache>,
}

/// The viewer's frames of recently viewed matches. A replay never changes
/// once written, and playing a long one again through the rules costs real
/// CPU (a Target match may have 50 000 turns), so the viewers of a match
/// share one computation, and at most two computations run at once: the
/// public endpoint cannot be made to spend every core.
struct FramesCache {
    recent: std::sync::Mutex<std::collections::VecDeque<(i64, axum::body::Bytes)>>,
    computing: tokio::sync::Semaphore,
}

/// Matches whose frames are kept.
const FRAMES_KEPT: usize = 16;

impl FramesCache {
    fn get(&self, id: i64) -> Option<axum::body::Bytes> {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.iter().find(|(m, _)| *m == id).map(|(_, b)| b.clone())
    }

    fn put(&self, id: i64, frames: axum::body::Bytes) {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if !recent.iter().any(|(m, _)| *m == id) {
            if recent.len() == FRAMES_KEPT {
                recent.pop_front();
            }
            recent.push_back((id, frames));
        }
    }
}

/// An API error: a status and a message for the client.
#[derive(Debug)]
pub struct ApiError(pub(crate) StatusCode, pub(crate) String);

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

/// The whole HTTP service: the API, the web pages, metrics and request
/// logs (see [`crate::web`] for the pages and the layers).
pub fn router(pool: PgPool) -> Router {
    let frames = Arc::new(FramesCache { recent: Default::default(), computing: tokio::sync::Semaphore::new(2) });
    crate::web::service(api_routes(), AppState { pool, frames })
}

/// The API's routes.
fn api_routes() -> Router<AppState> {
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
        .route("/api/ladders", post(create_ladder))
        .route("/api/ladders/{id}/pause", post(pause_ladder))
        .route("/api/ladders/{id}/resume", post(resume_ladder))
        .route("/api/bots/{id}/disable", post(disable_bot))
        .route("/api/bots/{id}/enable", post(enable_bot))
        .route("/api/bots/{id}/delete", post(delete_bot))
        .route("/api/bots/{id}/ratings", get(rating_history))
        .route("/api/bots/{id}/matches", get(bot_matches))
        .route("/api/versions/{id}/source", get(version_source))
        .route("/api/challenges", post(challenge))
        .route("/api/openapi.json", get(openapi))
        .route("/api/ladders/{id}/bots", get(ladder_bots))
        .route("/api/ladders/{id}/matches", get(ladder_matches))
        .route("/api/me", get(me))
        .route("/api/games", get(games))
        .route("/api/languages", get(languages))
        .route("/api/matches/{id}/frames", get(frames))
        .route("/api/bots/{id}/head-to-head", get(head_to_head))
        .layer(DefaultBodyLimit::max(MAX_BODY))
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

#[derive(Clone, Debug)]
struct Caller {
    id: i64,
    name: String,
    is_host: bool,
}

async fn caller(pool: &PgPool, headers: &HeaderMap) -> ApiResult<Option<Caller>> {
    let Some(h) = headers.get(axum::http::header::AUTHORIZATION) else { return Ok(None) };
    let token = h
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| ApiError(StatusCode::UNAUTHORIZED, "the Authorization header must be `Bearer <token>`".into()))?;
    let row = sqlx::query("SELECT u.id, u.name, u.is_host FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = $1")
        .bind(token_hash(token.trim()))
        .fetch_optional(pool)
        .await?;
    match row {
        Some(r) => Ok(Some(Caller { id: r.get("id"), name: r.get("name"), is_host: r.get("is_host") })),
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
    for r in sqlx::query("SELECT kind, state, count(*) AS n FROM jobs GROUP BY kind, state ORDER BY kind, state").fetch_all(&s.pool).await?
    {
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
    out.push_str(&crate::web::http_metrics_text());
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
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            Err(ApiError(StatusCode::CONFLICT, format!("the name {:?} is taken", u.name)))
        }
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

/// The leaderboard, drawn by its format: `{"ladder", "format", "columns":
/// [{"key", "label"}], "rows": [{"rank", "bot", "name", <key>: value...}]}`.
async fn leaderboard(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let table = match crate::results::standings(&s.pool, id).await {
        Ok(Some(t)) => t,
        Ok(None) => return Err(not_found(&format!("ladder {id}"))),
        Err(crate::store::StoreError::Db(e)) => return Err(e.into()),
        Err(crate::store::StoreError::Invalid(why)) => return Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, why)),
    };
    let mut v = serde_json::to_value(&table).map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    v["ladder"] = json!(id);
    Ok(Json(v))
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
    let file =
        q.file.ok_or_else(|| bad("say the file's name: ?file=bot.py (its extension picks the language; archives: .tar, .tar.gz, .zip)"))?;
    let bytes = body.to_vec();
    let sub = tokio::task::spawn_blocking(move || Submission::from_upload(&file, &bytes, &SubmissionLimits::default()))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("checking the upload failed: {e}")))?
        .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
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
    let language = &sub.language.name;
    let (version, job) = crate::store::submit_version(&s.pool, bot, language, &sub.main, &sub.source_tar(), &sub.source_hash()).await?;
    Ok((
        if created { StatusCode::CREATED } else { StatusCode::ACCEPTED },
        Json(json!({"bot": bot, "version": version, "compile_job": job, "language": language, "main": sub.main})),
    )
        .into_response())
}

async fn bot(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let b = sqlx::query(
        "SELECT b.id, b.name, b.ladder_id, l.name AS ladder_name, l.format, g.kind, b.current_version, b.disabled_reason, u.name AS owner \
         FROM bots b JOIN users u ON u.id = b.owner_id JOIN ladders l ON l.id = b.ladder_id JOIN games g ON g.id = l.game_id WHERE b.id = $1",
    )
    .bind(id)
    .fetch_optional(&s.pool)
    .await?
    .ok_or_else(|| not_found(&format!("bot {id}")))?;
    let versions = sqlx::query(
        "SELECT id, number, language, main, status, image_id, created_at::text AS at FROM bot_versions WHERE bot_id = $1 ORDER BY number",
    )
    .bind(id)
    .fetch_all(&s.pool)
    .await?;
    let rating = sqlx::query("SELECT mu, sigma, games FROM ratings WHERE bot_id = $1").bind(id).fetch_optional(&s.pool).await?;
    Ok(Json(json!({
        "id": b.get::<i64, _>("id"), "name": b.get::<String, _>("name"), "owner": b.get::<String, _>("owner"),
        "ladder": b.get::<i64, _>("ladder_id"), "ladder_name": b.get::<String, _>("ladder_name"),
        "format": b.get::<String, _>("format"), "game": b.get::<String, _>("kind"),
        "current_version": b.get::<Option<i64>, _>("current_version"),
        "disabled_reason": b.get::<Option<String>, _>("disabled_reason"),
        "rating": rating.map(|r| json!({"mu": r.get::<f64, _>("mu"), "sigma": r.get::<f64, _>("sigma"), "games": r.get::<i32, _>("games")})),
        "versions": versions.iter().map(|v| json!({"id": v.get::<i64, _>("id"), "number": v.get::<i32, _>("number"),
            "language": v.get::<String, _>("language"), "main": v.get::<String, _>("main"), "status": v.get::<String, _>("status"),
            "image": v.get::<Option<String>, _>("image_id"), "submitted": v.get::<String, _>("at")})).collect::<Vec<_>>(),
    })))
}

/// Whether `who` owns the bot (or is a host).
async fn may_see(pool: &PgPool, who: &Caller, bot: i64) -> ApiResult<bool> {
    if who.is_host {
        return Ok(true);
    }
    let owner: Option<i64> = sqlx::query_scalar("SELECT owner_id FROM bots WHERE id = $1").bind(bot).fetch_optional(pool).await?;
    Ok(owner == Some(who.id))
}

/// A version's row, for its bot's owner (or a host) only; `what` names
/// what is refused to others.
async fn owned_version(s: &AppState, headers: &HeaderMap, id: i64, what: &str) -> ApiResult<sqlx::postgres::PgRow> {
    let who = require_caller(&s.pool, headers).await?;
    let v = sqlx::query("SELECT bot_id, status, compile_log, source FROM bot_versions WHERE id = $1")
        .bind(id)
        .fetch_optional(&s.pool)
        .await?
        .ok_or_else(|| not_found(&format!("version {id}")))?;
    if !may_see(&s.pool, &who, v.get("bot_id")).await? {
        return Err(forbidden(&format!("only the bot's owner can read its {what}")));
    }
    Ok(v)
}

async fn version_log(State(s): State<AppState>, Path(id): Path<i64>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let v = owned_version(&s, &headers, id, "compile log").await?;
    Ok(Json(json!({"version": id, "status": v.get::<String, _>("status"), "log": v.get::<Option<String>, _>("compile_log")})))
}

async fn match_info(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let m = sqlx::query(
        "SELECT m.id, m.ladder_id, l.name AS ladder_name, g.kind, m.state, m.seed, m.rated, m.engine, m.turns, m.error, \
                m.created_at::text AS created, m.finished_at::text AS finished \
         FROM matches m LEFT JOIN ladders l ON l.id = m.ladder_id LEFT JOIN games g ON g.id = l.game_id WHERE m.id = $1",
    )
    .bind(id)
    .fetch_optional(&s.pool)
    .await?
    .ok_or_else(|| not_found(&format!("match {id}")))?;
    let seats = sqlx::query(
        "SELECT s.seat, s.bot_id, b.name, u.name AS owner, s.version_id, s.score, s.rank, s.result, s.status \
         FROM match_seats s JOIN bots b ON b.id = s.bot_id JOIN users u ON u.id = b.owner_id \
         WHERE s.match_id = $1 ORDER BY s.seat",
    )
    .bind(id)
    .fetch_all(&s.pool)
    .await?;
    Ok(Json(json!({
        "id": m.get::<i64, _>("id"), "ladder": m.get::<Option<i64>, _>("ladder_id"),
        "ladder_name": m.get::<Option<String>, _>("ladder_name"), "game": m.get::<Option<String>, _>("kind"),
        "state": m.get::<String, _>("state"),
        "seed": m.get::<i64, _>("seed"), "rated": m.get::<bool, _>("rated"), "engine": m.get::<Option<String>, _>("engine"),
        "turns": m.get::<Option<i32>, _>("turns"), "error": m.get::<Option<String>, _>("error"),
        "created": m.get::<String, _>("created"), "finished": m.get::<Option<String>, _>("finished"),
        "seats": seats.iter().map(|r| json!({"seat": r.get::<i32, _>("seat"), "bot": r.get::<i64, _>("bot_id"),
            "name": r.get::<String, _>("name"), "owner": r.get::<String, _>("owner"),
            "version": r.get::<i64, _>("version_id"), "score": r.get::<Option<f64>, _>("score"),
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
    let r = sqlx::query("SELECT bot_id, stderr, stderr_turns FROM match_seats WHERE match_id = $1 AND seat = $2")
        .bind(id)
        .bind(seat)
        .fetch_optional(&s.pool)
        .await?
        .ok_or_else(|| not_found(&format!("seat {seat} of match {id}")))?;
    if !may_see(&s.pool, &who, r.get("bot_id")).await? {
        return Err(forbidden("only the bot's owner can read its stderr"));
    }
    let text = r.get::<Option<String>, _>("stderr");
    let ends: Vec<(u32, usize)> =
        r.get::<Option<Value>, _>("stderr_turns").and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default();
    let turns = text.as_deref().map(|t| stderr_by_turn(t, &ends)).unwrap_or_default();
    Ok(Json(json!({"match": id, "seat": seat, "stderr": text, "turns": turns})))
}

/// A seat's stderr cut at the recorded turn ends: `[{"turn", "text"}]`.
/// Ends that do not fit the text (a hand-edited row) are skipped, never a panic.
fn stderr_by_turn(text: &str, ends: &[(u32, usize)]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut start = 0;
    for &(turn, end) in ends {
        if end < start || end > text.len() || !text.is_char_boundary(end) {
            continue;
        }
        out.push(json!({"turn": turn, "text": &text[start..end]}));
        start = end;
    }
    if start < text.len() {
        out.push(json!({"turn": Value::Null, "text": &text[start..]}));
    }
    out
}

fn require_host(who: &Caller) -> ApiResult<()> {
    if who.is_host {
        Ok(())
    } else {
        Err(forbidden("only hosts may do this"))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewLadder {
    name: String,
    game: String,
    format: Option<String>,
    settings: Option<Value>,
}

async fn create_ladder(State(s): State<AppState>, headers: HeaderMap, body: axum::body::Bytes) -> ApiResult<Response> {
    require_host(&require_caller(&s.pool, &headers).await?)?;
    let l: NewLadder = serde_json::from_slice(&body).map_err(|e| {
        bad(format!("expected {{\"name\": \"...\", \"game\": \"snake\", \"format\"?: \"rated\", \"settings\"?: {{...}}}}: {e}"))
    })?;
    if !valid_name(&l.name) {
        return Err(bad("a ladder's name is 1 to 40 letters, digits, '_', '.' or '-'"));
    }
    let kind = koth_games::GameKind::from_name(&l.game)
        .ok_or_else(|| bad(format!("unknown game {:?}; koth plays {}", l.game, koth_games::GameKind::ALL.map(|g| g.name()).join(", "))))?;
    let config = crate::format::LadderConfig::with_request(
        &crate::format::LadderConfig::default_for(kind),
        l.format.as_deref(),
        l.settings.as_ref(),
    )
    .and_then(|c| c.check(kind).map(|()| c))
    .map_err(bad)?;
    let format = config.format.name();
    match crate::store::create_ladder(&s.pool, &l.name, kind, &config).await {
        Ok(id) => Ok((StatusCode::CREATED, Json(json!({"id": id, "name": l.name, "game": kind.name(), "format": format}))).into_response()),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            Err(ApiError(StatusCode::CONFLICT, format!("a ladder named {:?} exists", l.name)))
        }
        Err(e) => Err(e.into()),
    }
}

async fn set_paused(s: &AppState, headers: &HeaderMap, id: i64, paused: bool) -> ApiResult<Json<Value>> {
    require_host(&require_caller(&s.pool, headers).await?)?;
    let n = sqlx::query("UPDATE ladders SET paused = $2 WHERE id = $1").bind(id).bind(paused).execute(&s.pool).await?.rows_affected();
    if n == 0 {
        return Err(not_found(&format!("ladder {id}")));
    }
    Ok(Json(json!({"id": id, "paused": paused})))
}

async fn pause_ladder(State(s): State<AppState>, Path(id): Path<i64>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    set_paused(&s, &headers, id, true).await
}

async fn resume_ladder(State(s): State<AppState>, Path(id): Path<i64>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    set_paused(&s, &headers, id, false).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reason {
    reason: String,
}

async fn set_disabled(s: &AppState, id: i64, reason: Option<String>) -> ApiResult<Json<Value>> {
    let n =
        sqlx::query("UPDATE bots SET disabled_reason = $2 WHERE id = $1").bind(id).bind(&reason).execute(&s.pool).await?.rows_affected();
    if n == 0 {
        return Err(not_found(&format!("bot {id}")));
    }
    Ok(Json(json!({"id": id, "disabled_reason": reason})))
}

async fn disable_bot(
    State(s): State<AppState>,
    Path(id): Path<i64>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<Value>> {
    require_host(&require_caller(&s.pool, &headers).await?)?;
    let r: Reason =
        serde_json::from_slice(&body).map_err(|e| bad(format!("expected {{\"reason\": \"...\"}} (shown to the owner): {e}")))?;
    if r.reason.trim().is_empty() {
        return Err(bad("say why: the reason is shown to the bot's owner"));
    }
    set_disabled(&s, id, Some(format!("disabled by a host: {}", r.reason.trim()))).await
}

async fn enable_bot(State(s): State<AppState>, Path(id): Path<i64>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    require_host(&require_caller(&s.pool, &headers).await?)?;
    set_disabled(&s, id, None).await
}

async fn delete_bot(State(s): State<AppState>, Path(id): Path<i64>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let who = require_caller(&s.pool, &headers).await?;
    let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM bots WHERE id = $1").bind(id).fetch_optional(&s.pool).await?;
    exists.ok_or_else(|| not_found(&format!("bot {id}")))?;
    if !may_see(&s.pool, &who, id).await? {
        return Err(forbidden("only the bot's owner can delete it"));
    }
    // Withdrawn, not erased: its matches stay in everyone's history.
    set_disabled(&s, id, Some("deleted by its owner".into())).await
}

async fn rating_history(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let rows = sqlx::query("SELECT match_id, mu, sigma, at::text AS at FROM rating_history WHERE bot_id = $1 ORDER BY id")
        .bind(id)
        .fetch_all(&s.pool)
        .await?;
    Ok(Json(Value::Array(
        rows.iter()
            .map(|r| {
                let (mu, sigma) = (r.get::<f64, _>("mu"), r.get::<f64, _>("sigma"));
                json!({"match": r.get::<i64, _>("match_id"), "mu": mu, "sigma": sigma,
                       "score": crate::rating::leaderboard_score(crate::rating::Rating { mu, sigma }), "at": r.get::<String, _>("at")})
            })
            .collect(),
    )))
}

async fn bot_matches(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let ids: Vec<i64> = sqlx::query_scalar("SELECT match_id FROM match_seats WHERE bot_id = $1 ORDER BY match_id DESC LIMIT 50")
        .bind(id)
        .fetch_all(&s.pool)
        .await?;
    Ok(Json(Value::Array(matches_with_seats(&s.pool, &ids).await?)))
}

async fn ladder_matches(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM ladders WHERE id = $1").bind(id).fetch_optional(&s.pool).await?;
    exists.ok_or_else(|| not_found(&format!("ladder {id}")))?;
    let ids: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM matches WHERE ladder_id = $1 ORDER BY id DESC LIMIT 50").bind(id).fetch_all(&s.pool).await?;
    Ok(Json(Value::Array(matches_with_seats(&s.pool, &ids).await?)))
}

/// Matches (newest first) with every seat's bot and outcome.
async fn matches_with_seats(pool: &PgPool, ids: &[i64]) -> ApiResult<Vec<Value>> {
    let matches =
        sqlx::query("SELECT id, state, rated, turns, finished_at::text AS finished FROM matches WHERE id = ANY($1) ORDER BY id DESC")
            .bind(ids)
            .fetch_all(pool)
            .await?;
    let seats = sqlx::query(
        "SELECT s.match_id, s.seat, s.bot_id, b.name, s.rank, s.result, s.score FROM match_seats s JOIN bots b ON b.id = s.bot_id \
         WHERE s.match_id = ANY($1) ORDER BY s.match_id, s.seat",
    )
    .bind(ids)
    .fetch_all(pool)
    .await?;
    let mut by_match: std::collections::HashMap<i64, Vec<Value>> = std::collections::HashMap::new();
    for r in &seats {
        by_match.entry(r.get("match_id")).or_default().push(json!({
            "seat": r.get::<i32, _>("seat"), "bot": r.get::<i64, _>("bot_id"), "name": r.get::<String, _>("name"),
            "rank": r.get::<Option<i32>, _>("rank"), "result": r.get::<Option<String>, _>("result"), "score": r.get::<Option<f64>, _>("score"),
        }));
    }
    Ok(matches
        .iter()
        .map(|r| {
            let id: i64 = r.get("id");
            json!({"match": id, "state": r.get::<String, _>("state"), "rated": r.get::<bool, _>("rated"),
                   "turns": r.get::<Option<i32>, _>("turns"), "finished": r.get::<Option<String>, _>("finished"),
                   "seats": by_match.remove(&id).unwrap_or_default()})
        })
        .collect())
}

/// How a bot did against each bot it met: a win is a better rank in the
/// same match (so it means the same in 2-seat and free-for-all games).
async fn head_to_head(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM bots WHERE id = $1").bind(id).fetch_optional(&s.pool).await?;
    exists.ok_or_else(|| not_found(&format!("bot {id}")))?;
    let rows = sqlx::query(
        "SELECT o.bot_id, b.name, count(*) AS played, \
                count(*) FILTER (WHERE me.rank < o.rank) AS won, \
                count(*) FILTER (WHERE me.rank > o.rank) AS lost, \
                count(*) FILTER (WHERE me.rank = o.rank) AS tied \
         FROM match_seats me \
         JOIN matches m ON m.id = me.match_id AND m.state = 'finished' \
         JOIN match_seats o ON o.match_id = me.match_id AND o.bot_id <> me.bot_id \
         JOIN bots b ON b.id = o.bot_id \
         WHERE me.bot_id = $1 GROUP BY o.bot_id, b.name ORDER BY played DESC, b.name LIMIT 100",
    )
    .bind(id)
    .fetch_all(&s.pool)
    .await?;
    Ok(Json(Value::Array(
        rows.iter()
            .map(|r| {
                json!({"bot": r.get::<i64, _>("bot_id"), "name": r.get::<String, _>("name"), "played": r.get::<i64, _>("played"),
                       "won": r.get::<i64, _>("won"), "lost": r.get::<i64, _>("lost"), "tied": r.get::<i64, _>("tied")})
            })
            .collect(),
    )))
}

async fn me(State(s): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let who = require_caller(&s.pool, &headers).await?;
    Ok(Json(json!({"id": who.id, "name": who.name, "is_host": who.is_host})))
}

/// The games koth plays: seats, time per move, what a timeout does.
async fn games() -> Json<Value> {
    Json(Value::Array(
        koth_games::GameKind::ALL
            .iter()
            .map(|g| {
                let (lo, hi) = g.seat_range();
                json!({"name": g.name(), "seats": [lo, hi], "time": g.time_policy(), "protocol": format!("/games/{}", g.name())})
            })
            .collect(),
    ))
}

/// The languages a bot may be written in, as shown to authors.
async fn languages() -> Json<Value> {
    let all = koth_runner::language::all()
        .iter()
        .map(|l| json!({"name": l.name, "display": l.display, "extensions": l.extensions, "compiled": l.compile.is_some()}))
        .collect();
    Json(Value::Array(all))
}

/// Pictures of every turn of a finished match, for the replay viewer: the
/// replay played again through the game's rules ([`koth_games::replay`]),
/// kept for the next viewers ([`FramesCache`]).
async fn frames(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Response> {
    let json = |bytes| ([(axum::http::header::CONTENT_TYPE, "application/json")], bytes).into_response();
    if let Some(b) = s.frames.get(id) {
        return Ok(json(b));
    }
    let _permit = s.frames.computing.acquire().await.map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    // Another request may have drawn it while this one waited.
    if let Some(b) = s.frames.get(id) {
        return Ok(json(b));
    }
    let r: Option<Option<Value>> = sqlx::query_scalar("SELECT replay FROM matches WHERE id = $1").bind(id).fetch_optional(&s.pool).await?;
    let replay = match r {
        None => return Err(not_found(&format!("match {id}"))),
        Some(None) => return Err(ApiError(StatusCode::CONFLICT, format!("match {id} has not finished; its replay comes when it does"))),
        Some(Some(v)) => v,
    };
    let drawn = tokio::task::spawn_blocking(move || {
        let replay = koth_games::replay::Replay::from_value(&replay)?;
        koth_games::replay::frames(&replay).map(|f| axum::body::Bytes::from(serde_json::to_vec(&f).unwrap_or_default()))
    });
    let bytes = drawn
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("drawing the replay failed: {e}")))?
        .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, format!("match {id}'s replay cannot be drawn: {e}")))?;
    s.frames.put(id, bytes.clone());
    Ok(json(bytes))
}

async fn version_source(State(s): State<AppState>, Path(id): Path<i64>, headers: HeaderMap) -> ApiResult<Response> {
    let v = owned_version(&s, &headers, id, "source").await?;
    let tar: Vec<u8> = v.get("source");
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "application/x-tar".to_owned()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"version-{id}.tar\"")),
        ],
        tar,
    )
        .into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewChallenge {
    ladder: i64,
    bots: Vec<i64>,
}

async fn challenge(State(s): State<AppState>, headers: HeaderMap, body: axum::body::Bytes) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    let c: NewChallenge = serde_json::from_slice(&body).map_err(|e| bad(format!("expected {{\"ladder\": 1, \"bots\": [1, 2]}}: {e}")))?;
    let kind: Option<String> = sqlx::query_scalar("SELECT g.kind FROM ladders l JOIN games g ON g.id = l.game_id WHERE l.id = $1")
        .bind(c.ladder)
        .fetch_optional(&s.pool)
        .await?;
    let kind = kind.and_then(|k| koth_games::GameKind::from_name(&k)).ok_or_else(|| not_found(&format!("ladder {}", c.ladder)))?;
    let (lo, hi) = kind.seat_range();
    if c.bots.len() < lo || c.bots.len() > hi {
        return Err(bad(format!("{} is played by {lo} to {hi} bots; {} given", kind.name(), c.bots.len())));
    }
    if !who.is_host {
        let mine: i64 = sqlx::query_scalar("SELECT count(*) FROM bots WHERE id = ANY($1) AND owner_id = $2")
            .bind(&c.bots)
            .bind(who.id)
            .fetch_one(&s.pool)
            .await?;
        if mine == 0 {
            return Err(forbidden("a challenge must include one of your own bots"));
        }
    }
    let seed = {
        use rand::Rng;
        (rand::thread_rng().gen::<u64>() >> 1) as i64
    };
    let id = crate::store::create_challenge(&s.pool, c.ladder, &c.bots, seed)
        .await
        .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, e))?;
    Ok((StatusCode::CREATED, Json(json!({"match": id, "rated": false}))).into_response())
}

/// Every route: (method, path, summary, who may call it).
pub const ROUTES: &[(&str, &str, &str, &str)] = &[
    ("get", "/health", "Whether the database is reachable", "anyone"),
    ("get", "/metrics", "Prometheus metrics: jobs, matches, bots", "anyone"),
    ("post", "/api/users", "Create an account; the token is returned once", "anyone"),
    ("get", "/api/ladders", "Ladders and their games", "anyone"),
    ("post", "/api/ladders", "Create a ladder (format and settings default to the game's seed)", "hosts"),
    ("get", "/api/ladders/{id}/leaderboard", "The ladder's leaderboard, by its format", "anyone"),
    ("post", "/api/ladders/{id}/pause", "Stop scheduling the ladder", "hosts"),
    ("post", "/api/ladders/{id}/resume", "Schedule the ladder again", "hosts"),
    (
        "post",
        "/api/ladders/{id}/bots/{name}",
        "Submit a bot (new) or a new version (yours); body: the file or archive, ?file=<name>",
        "users",
    ),
    ("get", "/api/bots/{id}", "A bot, its versions and rating", "anyone"),
    ("get", "/api/bots/{id}/ratings", "A bot's rating history", "anyone"),
    ("get", "/api/bots/{id}/matches", "A bot's last 50 matches", "anyone"),
    ("post", "/api/bots/{id}/disable", "Disable a bot, with a reason shown to its owner", "hosts"),
    ("post", "/api/bots/{id}/enable", "Enable a bot again", "hosts"),
    ("post", "/api/bots/{id}/delete", "Withdraw a bot (its matches stay in history)", "owner, hosts"),
    ("get", "/api/versions/{id}/log", "A version's compile log", "owner, hosts"),
    ("get", "/api/versions/{id}/source", "A version's sources, as a tar archive", "owner, hosts"),
    ("get", "/api/matches/{id}", "A match's seats and outcomes", "anyone"),
    ("get", "/api/matches/{id}/replay", "A finished match's replay", "anyone"),
    ("get", "/api/matches/{id}/stderr/{seat}", "A seat's stderr in a match", "owner, hosts"),
    ("post", "/api/challenges", "An unrated match between chosen bots, one of them yours", "users"),
    ("get", "/api/openapi.json", "This document", "anyone"),
    ("get", "/api/ladders/{id}/bots", "The ladder's bots, their owners, versions and status", "anyone"),
    ("get", "/api/ladders/{id}/matches", "The ladder's last 50 matches, with every seat", "anyone"),
    ("get", "/api/me", "The account of the token", "users"),
    ("get", "/api/games", "The games koth plays: seats, time per move", "anyone"),
    ("get", "/api/languages", "The languages a bot may be written in, and their file extensions", "anyone"),
    ("get", "/api/matches/{id}/frames", "Pictures of every turn of a finished match (the replay played again through the rules)", "anyone"),
    ("get", "/api/bots/{id}/head-to-head", "A bot's record against each bot it met", "anyone"),
];

/// The OpenAPI 3 document of [`ROUTES`].
pub fn openapi_document() -> Value {
    let mut paths = serde_json::Map::new();
    for (method, path, summary, who) in ROUTES {
        let params: Vec<Value> = path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": if name == "name" { "string" } else { "integer" }}}))
            .collect();
        let mut op = json!({
            "summary": summary,
            "description": format!("Who may call it: {who}."),
            "parameters": params,
            "responses": {
                "200": {"description": "OK"},
                "4XX": {"description": "The request's fault; the body is {\"error\": \"...\"} saying what and what to do"},
                "503": {"description": "The database is not available"}
            }
        });
        if *who != "anyone" {
            op["security"] = json!([{"token": []}]);
        }
        paths.entry(path.to_string()).or_insert_with(|| json!({}))[*method] = op;
    }
    json!({
        "openapi": "3.0.3",
        "info": {"title": "koth", "version": env!("CARGO_PKG_VERSION"),
                 "description": "King-of-the-Hill contests: bots, ladders, matches, replays."},
        "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
        "paths": paths,
    })
}

async fn openapi() -> Json<Value> {
    Json(openapi_document())
}

async fn ladder_bots(State(s): State<AppState>, Path(id): Path<i64>) -> ApiResult<Json<Value>> {
    let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM ladders WHERE id = $1").bind(id).fetch_optional(&s.pool).await?;
    exists.ok_or_else(|| not_found(&format!("ladder {id}")))?;
    let rows = sqlx::query(
        "SELECT b.id, b.name, u.name AS owner, b.disabled_reason, v.number AS current, v.language, \
                (SELECT status FROM bot_versions WHERE bot_id = b.id ORDER BY number DESC LIMIT 1) AS latest_status \
         FROM bots b JOIN users u ON u.id = b.owner_id LEFT JOIN bot_versions v ON v.id = b.current_version \
         WHERE b.ladder_id = $1 ORDER BY b.id",
    )
    .bind(id)
    .fetch_all(&s.pool)
    .await?;
    Ok(Json(Value::Array(
        rows.iter()
            .map(|r| {
                json!({"id": r.get::<i64, _>("id"), "name": r.get::<String, _>("name"), "owner": r.get::<String, _>("owner"),
                       "current_version": r.get::<Option<i32>, _>("current"), "language": r.get::<Option<String>, _>("language"),
                       "latest_status": r.get::<Option<String>, _>("latest_status"),
                       "disabled_reason": r.get::<Option<String>, _>("disabled_reason")})
            })
            .collect(),
    )))
}
