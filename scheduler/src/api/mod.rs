//! The HTTP API (axum), served by `koth up` and `koth web` with the web
//! pages ([`crate::web`]).
//!
//! JSON in and out; every error is `{"error": "..."}` with a status that
//! says whose fault it is. Authentication: `Authorization: Bearer <token>`;
//! tokens are shown once at account creation and stored as SHA-256 hashes.
//! Only a bot's owner (and hosts) may submit new versions of it, read its
//! compile logs and its stderr in matches; everything else is public.
//!
//! Every route, its parameters, request body, responses and who may call
//! it are declared once, on its handler (`#[utoipa::path]`); the router and
//! the OpenAPI document served at `/api/openapi.json` are both built from
//! those declarations ([`routes`]), so they cannot disagree. The request and
//! response types are in [`types`], shared with the CLI client.
//!
//! Uploads are checked by the submission rules of koth-runner
//! ([`Submission::from_upload`]), the crate that owns the languages.

/// The API's requests and responses ([`crate::types`]).
pub use crate::types;

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use koth_runner::submission::{Submission, SubmissionLimits};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::db::contests::{self, Deadline, DeadlineSet};
use crate::db::replays::{self, StoredReplay};
use crate::db::runners::{self, Can};
use crate::db::{accounts, reads};
use crate::packed::{self, PackedReplay};
use crate::types::*;
use koth_ladder::quota::{self, OverLimit, SignupLimits};

/// Largest request body (an upload).
pub const MAX_BODY: usize = 40 << 20;

#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) pool: PgPool,
    /// Drawing replays: its slots ([`crate::drawing`]).
    drawing: Arc<crate::drawing::Drawing>,
    options: ApiOptions,
}

/// What a host may set about the API.
#[derive(Clone, Debug)]
pub struct ApiOptions {
    /// Tokens made through the API (sign-up, new, rotated) stop working this
    /// long after they are made; `None`: never. (The host's token that
    /// `koth up` writes to its data folder never expires.)
    pub token_lifetime: Option<std::time::Duration>,
    /// Challenges one account may have queued or playing at once (hosts
    /// are not limited): challenges go ahead of ladder matches, so one
    /// account must not be able to fill every runner.
    pub challenges_in_flight: u32,
    /// Versions one account may submit in an hour (hosts are not limited).
    pub submissions_per_hour: u32,
    /// Bytes of sources one account may upload in a day.
    pub upload_bytes_per_day: u64,
    /// Versions of one account waiting for their compile at once: compiles
    /// go ahead of every match.
    pub compiles_queued: u32,
    /// Accounts made through the API from one address, and in all, in an
    /// hour (`koth up` and the host make theirs without).
    pub signups: SignupLimits,
}

impl ApiOptions {
    /// The submission limits of an ordinary account.
    pub fn submission_limits(&self) -> quota::SubmissionLimits {
        quota::SubmissionLimits {
            compiles_queued: self.compiles_queued,
            submissions_per_hour: self.submissions_per_hour,
            upload_bytes_per_day: self.upload_bytes_per_day,
        }
    }
}

impl Default for ApiOptions {
    fn default() -> Self {
        ApiOptions {
            token_lifetime: None,
            challenges_in_flight: DEFAULT_CHALLENGES_IN_FLIGHT,
            submissions_per_hour: DEFAULT_SUBMISSIONS_PER_HOUR,
            upload_bytes_per_day: DEFAULT_UPLOAD_BYTES_PER_DAY,
            compiles_queued: DEFAULT_COMPILES_QUEUED,
            signups: DEFAULT_SIGNUPS,
        }
    }
}

/// [`ApiOptions::challenges_in_flight`] by default.
pub const DEFAULT_CHALLENGES_IN_FLIGHT: u32 = 3;
/// [`ApiOptions::submissions_per_hour`] by default.
pub const DEFAULT_SUBMISSIONS_PER_HOUR: u32 = 30;
/// [`ApiOptions::upload_bytes_per_day`] by default (100 MiB).
pub const DEFAULT_UPLOAD_BYTES_PER_DAY: u64 = 100 << 20;
/// [`ApiOptions::compiles_queued`] by default.
pub const DEFAULT_COMPILES_QUEUED: u32 = 8;

/// [`ApiOptions::signups`] by default: a class behind one address signs
/// up within the first, and a contest's opening hour within the second.
pub const DEFAULT_SIGNUPS: SignupLimits = SignupLimits { per_address_per_hour: 20, per_hour: 600 };

/// A 429 for a request over one of its limits.
fn over_limit(e: OverLimit) -> Response {
    too_many(e.retry_after_secs, e.message)
}

/// A 429: which limit, and when to try again.
fn too_many(retry_after_secs: f64, msg: String) -> Response {
    let secs = retry_after_secs.ceil().max(1.0) as u64;
    (StatusCode::TOO_MANY_REQUESTS, [(axum::http::header::RETRY_AFTER, secs.to_string())], Json(ErrorBody { error: msg })).into_response()
}

/// An API error: a status and a message for the client.
#[derive(Debug)]
pub struct ApiError(pub(crate) StatusCode, pub(crate) String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(ErrorBody { error: self.1 })).into_response()
    }
}

impl From<crate::db::store::StoreError> for ApiError {
    fn from(e: crate::db::store::StoreError) -> Self {
        match e {
            crate::db::store::StoreError::Db(e) => e.into(),
            // A stored row koth cannot read: its fault, said plainly.
            crate::db::store::StoreError::Invalid(why) => ApiError(StatusCode::INTERNAL_SERVER_ERROR, why),
        }
    }
}

/// `Path` whose rejection (a malformed or out-of-range id) is a JSON 400.
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(v)) => Ok(ApiPath(v)),
            Err(e) => Err(bad(format!("{}; ids are whole numbers from 1 to {}", e.body_text(), i64::MAX))),
        }
    }
}

/// `Query` whose rejection is a JSON 400.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(ApiQuery(v)),
            Err(e) => Err(bad(e.body_text())),
        }
    }
}

/// The request's body, whole; over [`MAX_BODY`] it is a JSON 413.
pub struct ApiBody(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for ApiBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::body::Bytes::from_request(req, state).await {
            Ok(b) => Ok(ApiBody(b)),
            Err(e) => Err(ApiError(e.status(), format!("{}; the largest body is {} MiB", e.body_text(), MAX_BODY >> 20))),
        }
    }
}

/// A JSON body of type `T`, whatever the Content-Type says (clients forget
/// it); `expected` shows its shape in the error.
fn json_body<T: DeserializeOwned>(body: &[u8], expected: &str) -> ApiResult<T> {
    let mut v: Value = serde_json::from_slice(body).map_err(|e| bad(format!("expected {expected}: {e}")))?;
    // Every request body is an object (serde would also read a struct from
    // an array of its fields in order: `[null, null]` is not a request).
    if !v.is_object() {
        return Err(bad(format!("expected {expected}: the body must be a JSON object")));
    }
    if has_nul(&v) {
        return Err(bad("text in a request may not contain NUL characters (\\u0000)"));
    }
    whole_numbers(&mut v);
    serde_json::from_value(v).map_err(|e| bad(format!("expected {expected}: {e}")))
}

/// A NUL anywhere in the JSON's strings or keys (PostgreSQL's text cannot hold one).
fn has_nul(v: &Value) -> bool {
    match v {
        Value::String(t) => t.contains('\0'),
        Value::Array(a) => a.iter().any(has_nul),
        Value::Object(o) => o.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

/// JSON does not tell 1 from 1.0 (JSON Schema counts both as integers):
/// integral floats become integers before the typed reading.
fn whole_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15) {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(whole_numbers),
        Value::Object(o) => o.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        // SQLSTATE class 22, a data exception: a value of the request the
        // database cannot store (a NUL in a text, a number out of range).
        // The request's fault, not an outage.
        if let sqlx::Error::Database(d) = &e {
            if d.code().is_some_and(|c| c.starts_with("22")) {
                return bad(format!("the database refused a value of this request: {}", d.message()));
            }
        }
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
fn conflict(msg: String) -> ApiError {
    ApiError(StatusCode::CONFLICT, msg)
}
fn forbidden(msg: &str) -> ApiError {
    ApiError(StatusCode::FORBIDDEN, msg.into())
}

type ApiResult<T> = Result<T, ApiError>;

/// The whole HTTP service: the API, the web pages, metrics and request
/// logs (see [`crate::web`] for the pages and the layers).
pub fn router(pool: PgPool) -> Router {
    router_with(pool, ApiOptions::default())
}

/// The API and pages, with the host's options.
pub fn router_with(pool: PgPool, options: ApiOptions) -> Router {
    let drawing = Arc::new(crate::drawing::Drawing::default());
    let (api, _) = routes().split_for_parts();
    // A game's page needs the database: added games are rows.
    let api = api.route("/games/{name}", axum::routing::get(game_page));
    crate::web::service(api.layer(DefaultBodyLimit::max(MAX_BODY)), AppState { pool, drawing, options })
}

async fn game_page(State(s): State<AppState>, axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    let added = koth_games::GameKind::from_name(&name).is_none() && matches!(crate::db::games::by_name(&s.pool, &name).await, Ok(Some(_)));
    // koth's own games' pages lead with the kits this server can run.
    let kits = if added { Vec::new() } else { offered_kits(&s.pool, &name).await.unwrap_or_default() };
    crate::web::game_page(&name, added, &kits)
}

/// The OpenAPI document: every route's declaration, as served.
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    let mut doc = routes().split_for_parts().1;
    // After the routes are in: the conventions apply to each of them.
    utoipa::Modify::modify(&Conventions, &mut doc);
    doc
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "koth",
        description = "King-of-the-Hill contests: bots, ladders, matches, replays. \
        Errors are `{\"error\": \"...\"}` saying what was wrong and what to do."
    ),
    components(schemas(ErrorBody))
)]
struct ApiDoc;

/// What every route shares: the bearer token scheme, and error responses
/// (the request's fault: 4XX; the database unavailable: 503).
struct Conventions;

impl utoipa::Modify for Conventions {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, RefOr, ResponseBuilder};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme("token", SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()));
        let schema = RefOr::Ref(utoipa::openapi::Ref::from_schema_name("ErrorBody"));
        let error = |what: &str| {
            ResponseBuilder::new()
                .description(what)
                .content("application/json", ContentBuilder::new().schema(Some(schema.clone())).build())
                .build()
        };
        for item in doc.paths.paths.values_mut() {
            for op in [&mut item.get, &mut item.post, &mut item.put, &mut item.delete, &mut item.patch].into_iter().flatten() {
                let r = &mut op.responses.responses;
                r.entry("4XX".into()).or_insert_with(|| RefOr::T(error("The request's fault: what was wrong and what to do")));
                r.entry("503".into()).or_insert_with(|| RefOr::T(error("The database is not available; try again shortly")));
            }
        }
    }
}

/// Every route, each declared on its handler.
fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(health))
        .routes(routes!(metrics))
        .routes(routes!(openapi))
        .routes(routes!(create_user))
        .routes(routes!(me, delete_me))
        .routes(routes!(my_bots))
        .routes(routes!(my_tokens, new_token_route))
        .routes(routes!(revoke_token))
        .routes(routes!(rotate_token))
        .routes(routes!(games, add_game))
        .routes(routes!(game_info))
        .routes(routes!(game_folder))
        .routes(routes!(starter))
        .routes(routes!(languages))
        .routes(routes!(ladders, create_ladder))
        .routes(routes!(formats))
        .routes(routes!(leaderboard))
        .routes(routes!(pause_ladder))
        .routes(routes!(resume_ladder))
        .routes(routes!(contest))
        .routes(routes!(set_deadline))
        .routes(routes!(start_finals))
        .routes(routes!(final_standings_csv))
        .routes(routes!(ladder_bots))
        .routes(routes!(ladder_matches))
        .routes(routes!(submit))
        .routes(routes!(bot))
        .routes(routes!(rating_history))
        .routes(routes!(bot_matches))
        .routes(routes!(head_to_head))
        .routes(routes!(disable_bot))
        .routes(routes!(enable_bot))
        .routes(routes!(delete_bot))
        .routes(routes!(version_log))
        .routes(routes!(version_source))
        .routes(routes!(match_info))
        .routes(routes!(replay))
        .routes(routes!(frames))
        .routes(routes!(live))
        .routes(routes!(draw_replay))
        .routes(routes!(stderr))
        .routes(routes!(challenge))
        .routes(routes!(cancel_match))
        .routes(routes!(audit))
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

/// A new token, which never expires, for an existing account (returned
/// once): the host's, when `koth up` finds its token file gone.
pub async fn new_token_for(pool: &PgPool, user: i64, name: &str) -> Result<String, sqlx::Error> {
    let token = new_token();
    accounts::create_token(pool, user, name, &token_hash(&token), None).await.map_err(|e| match e {
        crate::db::store::StoreError::Db(e) => e,
        crate::db::store::StoreError::Invalid(why) => sqlx::Error::Protocol(why),
    })?;
    Ok(token)
}

/// Create an account and its first token (returned once), which never
/// expires (the host's own, made by `koth up`).
pub async fn create_account(pool: &PgPool, name: &str, is_host: bool) -> Result<(i64, String), sqlx::Error> {
    create_account_for(pool, name, is_host, None).await
}

async fn create_account_for(
    pool: &PgPool,
    name: &str,
    is_host: bool,
    lifetime: Option<std::time::Duration>,
) -> Result<(i64, String), sqlx::Error> {
    let token = new_token();
    let id = accounts::create_account(pool, name, is_host, &token_hash(&token), lifetime).await?;
    Ok((id, token))
}

#[derive(Clone, Debug)]
struct Caller {
    id: i64,
    name: String,
    is_host: bool,
    /// The id of the token the request came with.
    token: i64,
}

async fn caller(pool: &PgPool, headers: &HeaderMap) -> ApiResult<Option<Caller>> {
    let Some(h) = headers.get(axum::http::header::AUTHORIZATION) else { return Ok(None) };
    let token = h
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| ApiError(StatusCode::UNAUTHORIZED, "the Authorization header must be `Bearer <token>`".into()))?;
    let hash = token_hash(token.trim());
    match accounts::account_by_token(pool, &hash).await? {
        Some((me, token)) => Ok(Some(Caller { id: me.id, name: me.name, is_host: me.is_host, token })),
        None if accounts::token_expired(pool, &hash).await? => Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "this token has expired (this server gives tokens a lifetime): make a new one with another of your tokens, \
             on your account's page (/me) or with `koth tokens new`, or ask a host"
                .into(),
        )),
        None => Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "unknown token (revoked, or its account deleted): sign in with another of your tokens, or sign up for a new \
             account on the home page or with `koth signup NAME`"
                .into(),
        )),
    }
}

async fn require_caller(pool: &PgPool, headers: &HeaderMap) -> ApiResult<Caller> {
    caller(pool, headers)
        .await?
        .ok_or_else(|| ApiError(StatusCode::UNAUTHORIZED, "this needs an account: send `Authorization: Bearer <token>`".into()))
}

/// Whether the database is reachable.
#[utoipa::path(get, path = "/health", tag = "service",
    responses((status = 200, body = Health), (status = 503, body = Health, description = "The database cannot be reached")))]
async fn health(State(s): State<AppState>) -> Response {
    match reads::ping(&s.pool).await {
        Ok(_) => Json(Health { status: "ok".into(), database: "ok".into() }).into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, Json(Health { status: "degraded".into(), database: e.to_string() })).into_response(),
    }
}

/// Prometheus metrics: jobs, matches, bots; match, queue-wait and compile
/// duration histograms; matches per minute; runners; the database pool;
/// HTTP requests; resident memory.
#[utoipa::path(get, path = "/metrics", tag = "service", responses((status = 200, content_type = "text/plain", body = String)))]
async fn metrics(State(s): State<AppState>) -> ApiResult<Response> {
    let mut out = String::new();
    let counts = reads::counts(&s.pool).await?;
    out.push_str("# HELP koth_jobs Jobs in the queue by kind and state.\n# TYPE koth_jobs gauge\n");
    for (kind, state, n) in &counts.jobs {
        out.push_str(&format!("koth_jobs{{kind=\"{kind}\",state=\"{state}\"}} {n}\n"));
    }
    out.push_str("# HELP koth_matches Matches by state.\n# TYPE koth_matches gauge\n");
    for (state, n) in &counts.matches {
        out.push_str(&format!("koth_matches{{state=\"{state}\"}} {n}\n"));
    }
    out.push_str(&format!("# HELP koth_bots Enabled bots.\n# TYPE koth_bots gauge\nkoth_bots {}\n", counts.bots));
    let ops = reads::operations(&s.pool).await?;
    use crate::metrics::{gauge_text, histogram_text, histograms};
    out.push_str(&histogram_text(
        "koth_match_seconds",
        "Finished matches' run time on a runner (claimed to finished), by game and ladder.",
        &histograms(&ops.match_seconds),
    ));
    out.push_str(&histogram_text(
        "koth_queue_wait_seconds",
        "Jobs' wait from queued to claimed by a runner, by kind, game and ladder.",
        &histograms(&ops.wait_seconds),
    ));
    out.push_str(&histogram_text("koth_compile_seconds", "Finished compiles' run time, by language.", &histograms(&ops.compile_seconds)));
    let per_minute: Vec<_> = ops
        .finished_last_10_minutes
        .iter()
        .map(|(game, ladder, n)| (vec![("game", game.clone()), ("ladder", ladder.clone())], *n as f64 / 10.0))
        .collect();
    out.push_str(&gauge_text("koth_matches_finished_per_minute", "Matches finished per minute over the last 10 minutes.", &per_minute));
    out.push_str(&gauge_text(
        "koth_runners",
        "Runner processes that reported in the last two report periods (alive), and job holders running a job now (busy).",
        &[(vec![("state", "alive".into())], ops.runners_alive as f64), (vec![("state", "busy".into())], ops.workers_busy as f64)],
    ));
    let pool_size = s.pool.size() as f64;
    let idle = s.pool.num_idle() as f64;
    out.push_str(&gauge_text(
        "koth_db_pool_connections",
        "This process's database connections: open and in use, open and idle, and the most it opens.",
        &[
            (vec![("state", "in_use".into())], pool_size - idle),
            (vec![("state", "idle".into())], idle),
            (vec![("state", "max".into())], f64::from(s.pool.options().get_max_connections())),
        ],
    ));
    if let Some(rss) = resident_bytes("self") {
        out.push_str(&format!(
            "# HELP koth_resident_bytes Resident memory of this process.\n# TYPE koth_resident_bytes gauge\nkoth_resident_bytes {rss}\n"
        ));
    }
    out.push_str(&crate::web::http_metrics_text());
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response())
}

/// A process's resident memory (`VmRSS`), in bytes: `"self"` or a pid
/// (`koth bench soak` reads its `koth up`'s).
pub fn resident_bytes(process: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let kb: u64 = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kb * 1024)
}

/// This document.
#[utoipa::path(get, path = "/api/openapi.json", tag = "service", responses((status = 200, body = Object)))]
async fn openapi() -> Response {
    // Built once: the routes do not change while the process runs.
    static DOC: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(|| serde_json::to_vec(&openapi_document()).unwrap_or_default());
    ([(axum::http::header::CONTENT_TYPE, "application/json")], DOC.as_slice()).into_response()
}

/// Create an account; its token is returned this once.
#[utoipa::path(post, path = "/api/users", tag = "accounts", request_body = NewUser,
    responses((status = 201, body = NewAccount), (status = 409, body = ErrorBody, description = "The name is taken"),
              (status = 429, body = ErrorBody, description = "Too many accounts made lately, from this address or in all; see Retry-After")))]
async fn create_user(
    State(s): State<AppState>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    ApiBody(body): ApiBody,
) -> ApiResult<Response> {
    let u: NewUser = json_body(&body, r#"{"name": "..."}"#)?;
    if !valid_name(&u.name) {
        return Err(bad(NAME_RULE));
    }
    let token = new_token();
    let address = peer.map(|p| p.0 .0.ip());
    match accounts::sign_up(&s.pool, &u.name, address, &s.options.signups, &token_hash(&token), s.options.token_lifetime).await {
        Ok(id) => Ok((StatusCode::CREATED, Json(NewAccount { id, name: u.name, token })).into_response()),
        Err(accounts::SignupError::OverLimit(e)) => Ok(over_limit(e)),
        Err(accounts::SignupError::Db(sqlx::Error::Database(e))) if e.is_unique_violation() => {
            Err(ApiError(StatusCode::CONFLICT, format!("the name {:?} is taken", u.name)))
        }
        Err(accounts::SignupError::Db(e)) => Err(e.into()),
    }
}

/// Names of users, bots and ladders.
const NAME_RULE: &str = "a name is 1 to 40 letters, digits, '_', '.' or '-', and not only dots";

/// A name that cannot be confused with a path (`.`, `..`).
fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.len() <= 40 && n.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)) && !n.chars().all(|c| c == '.')
}

/// The token's account.
#[utoipa::path(get, path = "/api/me", tag = "accounts", security(("token" = [])), responses((status = 200, body = Me)))]
async fn me(State(s): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Me>> {
    let who = require_caller(&s.pool, &headers).await?;
    Ok(Json(Me { id: who.id, name: who.name, is_host: who.is_host }))
}

/// The caller's bots, on every ladder.
#[utoipa::path(get, path = "/api/me/bots", tag = "accounts", security(("token" = [])), responses((status = 200, body = Vec<MyBot>)))]
async fn my_bots(State(s): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Vec<MyBot>>> {
    let who = require_caller(&s.pool, &headers).await?;
    Ok(Json(reads::bots_of(&s.pool, who.id).await?))
}

/// The caller's tokens (the one used for this request is `current`).
#[utoipa::path(get, path = "/api/me/tokens", tag = "accounts", security(("token" = [])), responses((status = 200, body = Vec<TokenInfo>)))]
async fn my_tokens(State(s): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Vec<TokenInfo>>> {
    let who = require_caller(&s.pool, &headers).await?;
    Ok(Json(accounts::tokens(&s.pool, who.id, who.token).await?))
}

/// Make a new token for the caller's account; it is shown this once.
#[utoipa::path(post, path = "/api/me/tokens", tag = "accounts", security(("token" = [])), request_body = NewTokenRequest,
    responses((status = 201, body = NewToken)))]
async fn new_token_route(State(s): State<AppState>, headers: HeaderMap, ApiBody(body): ApiBody) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    let r: NewTokenRequest = json_body(&body, r#"{"name": "laptop"}"#)?;
    if !valid_name(&r.name) {
        return Err(bad(NAME_RULE));
    }
    let token = new_token();
    let info = accounts::create_token(&s.pool, who.id, &r.name, &token_hash(&token), s.options.token_lifetime).await?;
    Ok((StatusCode::CREATED, Json(NewToken { token, info })).into_response())
}

/// Revoke one of the caller's tokens (the current one too): it stops
/// working at once.
#[utoipa::path(delete, path = "/api/me/tokens/{id}", tag = "accounts", security(("token" = [])),
    params(("id" = i64, Path, description = "The token's id (GET /api/me/tokens)")),
    responses((status = 204, description = "Revoked")))]
async fn revoke_token(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<StatusCode> {
    let who = require_caller(&s.pool, &headers).await?;
    if !accounts::revoke_token(&s.pool, who.id, id).await? {
        return Err(not_found(&format!("token {id} of yours")));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Replace one of the caller's tokens by a new one of the same name: the
/// old one stops working as the new one is shown (this once).
#[utoipa::path(post, path = "/api/me/tokens/{id}/rotate", tag = "accounts", security(("token" = [])),
    params(("id" = i64, Path, description = "The token's id (GET /api/me/tokens)")),
    responses((status = 201, body = NewToken)))]
async fn rotate_token(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    let token = new_token();
    match accounts::rotate_token(&s.pool, who.id, id, &token_hash(&token), s.options.token_lifetime).await? {
        Some(info) => Ok((StatusCode::CREATED, Json(NewToken { token, info })).into_response()),
        None => Err(not_found(&format!("token {id} of yours"))),
    }
}

/// Delete the caller's account: every token revoked, every bot withdrawn;
/// the name stays taken and the matches stay in history.
#[utoipa::path(delete, path = "/api/me", tag = "accounts", security(("token" = [])), responses((status = 200, body = AccountDeleted)))]
async fn delete_me(State(s): State<AppState>, headers: HeaderMap) -> ApiResult<Json<AccountDeleted>> {
    let who = require_caller(&s.pool, &headers).await?;
    let bots_withdrawn = accounts::delete_account(&s.pool, who.id).await?;
    Ok(Json(AccountDeleted { id: who.id, bots_withdrawn }))
}

/// The games this server plays: koth's own and those hosts added (with
/// their status); seats, time per move, what a timeout does.
#[utoipa::path(get, path = "/api/games", tag = "games", responses((status = 200, body = Vec<GameInfo>)))]
async fn games(State(s): State<AppState>) -> ApiResult<Json<Vec<GameInfo>>> {
    let known = runners::availability(&s.pool).await?;
    let mut all: Vec<GameInfo> = koth_games::GameKind::ALL.iter().map(|g| builtin_info(*g, known.as_ref())).collect();
    for g in crate::db::games::all(&s.pool).await? {
        let kits = added_kits(&s.pool, g.game.name()).await?;
        all.push(added_info(&g, starter_infos(g.game.name(), &kits, known.as_ref())));
    }
    Ok(Json(all))
}

fn builtin_info(g: koth_games::GameKind, known: Option<&std::collections::BTreeMap<String, Can>>) -> GameInfo {
    let starters = starter_infos(g.name(), &builtin_kits(g.name()), known);
    game_info_of(&g.into(), GameStatus::Ready, None, None, starters)
}

fn added_info(g: &crate::db::games::AddedGame, starters: Vec<StarterInfo>) -> GameInfo {
    game_info_of(&g.game, g.status, g.log.clone(), g.added_by.clone(), starters)
}

fn game_info_of(
    g: &koth_ladder::served::ServedGame,
    status: GameStatus,
    log: Option<String>,
    added_by: Option<String>,
    starters: Vec<StarterInfo>,
) -> GameInfo {
    let (lo, hi) = g.seat_range();
    GameInfo {
        name: g.name().into(),
        seats: [lo, hi],
        time: serde_json::to_value(g.time_policy()).unwrap_or_default(),
        protocol: format!("/games/{}", g.name()),
        starters,
        title: g.title().into(),
        added: matches!(g, koth_ladder::served::ServedGame::Added(_)),
        status,
        log,
        added_by,
    }
}

/// A starter kit: its file name, language and source.
type Kit = (String, &'static koth_runner::language::Language, Vec<u8>);

/// koth's own game's kits (`starters/` of koth's repository).
fn builtin_kits(game: &str) -> Vec<Kit> {
    koth_runner::starters::of_game(game).iter().map(|k| (k.file.to_owned(), k.language, k.source.as_bytes().to_vec())).collect()
}

/// An added game's kits, from its folder (its `starters/`, else its
/// example bots); none for a game that is not there.
async fn added_kits(pool: &PgPool, game: &str) -> ApiResult<Vec<Kit>> {
    let Some(tar) = crate::db::games::source_by_name(pool, game).await? else { return Ok(Vec::new()) };
    let package = koth_runner::game::GamePackage::from_tar(&tar).map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e))?;
    Ok(package.starter_kits().into_iter().map(|k| (k.file, k.language, k.source)).collect())
}

/// Kits as this server offers them: each says whether a runner can run its
/// language (nothing reported yet: nothing refused).
fn starter_infos(game: &str, kits: &[Kit], known: Option<&std::collections::BTreeMap<String, Can>>) -> Vec<StarterInfo> {
    kits.iter()
        .map(|(file, language, _)| {
            let why = match language_can(known, language) {
                Some(Can::Err(why)) => Some(why),
                _ => None,
            };
            StarterInfo::new(game, language, file, why)
        })
        .collect()
}

/// A game's kits as this server offers them, for its page.
pub(crate) async fn offered_kits(pool: &PgPool, game: &str) -> ApiResult<Vec<StarterInfo>> {
    let kits = match koth_games::GameKind::from_name(game) {
        Some(_) => builtin_kits(game),
        None => added_kits(pool, game).await?,
    };
    Ok(starter_infos(game, &kits, runners::availability(pool).await?.as_ref()))
}

/// One game: koth's own, or one a host added (with its validation's log).
#[utoipa::path(get, path = "/api/games/{game}", tag = "games", params(("game" = String, Path, description = "The game's name")),
    responses((status = 200, body = GameInfo)))]
async fn game_info(State(s): State<AppState>, ApiPath(game): ApiPath<String>) -> ApiResult<Json<GameInfo>> {
    let known = runners::availability(&s.pool).await?;
    if let Some(g) = koth_games::GameKind::from_name(&game) {
        return Ok(Json(builtin_info(g, known.as_ref())));
    }
    let added = crate::db::games::by_name(&s.pool, &game).await?.ok_or_else(|| not_found(&format!("game {game:?}")))?;
    let kits = added_kits(&s.pool, &game).await?;
    Ok(Json(added_info(&added, starter_infos(&game, &kits, known.as_ref()))))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct AddGameQuery {
    /// The archive's name (.tar, .tar.gz, .zip), for messages.
    #[param(required = true, pattern = r"^[A-Za-z0-9_.-]+$")]
    file: Option<String>,
}

/// Add a game to this server (hosts): the body is an archive of the game's
/// folder (`game.json`, its referee, example bots in `bots/`; see
/// `/games/authoring`). It is checked at once; then a runner builds its
/// referee and plays its example bots against each other, and the game is
/// offered for ladders only if that match is played cleanly
/// (`GET /api/games/{game}` follows it). A refused game may be added again
/// under its name.
#[utoipa::path(post, path = "/api/games", tag = "games", security(("token" = [])), params(AddGameQuery),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The game's folder as a tar, tar.gz or zip archive"),
    responses((status = 202, body = GameAdded, description = "Stored; its validation match is queued"),
              (status = 409, body = ErrorBody, description = "A game of this name exists (validating or ready)"),
              (status = 413, body = ErrorBody, description = "Larger than 40 MiB"),
              (status = 422, body = ErrorBody, description = "Not a game folder koth can take (what is wrong, what to do)")))]
async fn add_game(
    State(s): State<AppState>,
    ApiQuery(q): ApiQuery<AddGameQuery>,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    require_host(&who)?;
    let file = q.file.ok_or_else(|| bad("say the archive's name: ?file=game.tar.gz (a tar, tar.gz or zip of the game's folder)"))?;
    let bytes = body.to_vec();
    let package =
        tokio::task::spawn_blocking(move || koth_runner::game::GamePackage::from_upload(&file, &bytes, &SubmissionLimits::default()))
            .await
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("checking the upload failed: {e}")))?
            .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, e))?;
    let name = package.manifest.name.clone();
    let manifest = serde_json::to_value(&package.manifest).map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    // The ladder it would get must be one this server can run.
    koth_ladder::served::ServedGame::Added(Box::new(package.manifest.clone()))
        .default_ladder()
        .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, e))?;
    match crate::db::games::add(&s.pool, &name, &manifest, &package.to_tar(), &package.source_hash(), who.id).await? {
        crate::db::games::Added::Queued(_) => Ok((
            StatusCode::ACCEPTED,
            Json(GameAdded {
                url: format!("/api/games/{name}"),
                name,
                status: GameStatus::Validating,
                example_bots: package.example_bots(),
            }),
        )
            .into_response()),
        crate::db::games::Added::Taken(status) => Err(conflict(format!(
            "a game named {name:?} exists ({}); a game that ladders use is not replaced: give this one another name in its {}",
            status.as_str(),
            koth_games::external::MANIFEST
        ))),
    }
}

/// An added game's folder, as a tar archive: to play its matches locally
/// with `koth match --game ./FOLDER` (every match page says the command).
#[utoipa::path(get, path = "/api/games/{game}/folder", tag = "games", params(("game" = String, Path, description = "An added game's name")),
    responses((status = 200, content_type = "application/x-tar", body = Vec<u8>, description = "The game's folder, as a tar archive")))]
async fn game_folder(State(s): State<AppState>, ApiPath(game): ApiPath<String>) -> ApiResult<Response> {
    let tar = crate::db::games::source_by_name(&s.pool, &game).await?.ok_or_else(|| not_found(&format!("added game {game:?}")))?;
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "application/x-tar".to_owned()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{game}.tar\"")),
        ],
        tar,
    )
        .into_response())
}

/// A game's starter kit in one language: a bot that plays legally, to
/// save under its file name, try with `koth match` and improve. koth's own
/// games have kits in the languages most authors start with; an added
/// game's are its folder's `starters/`, else its one-file example bots.
/// Only kits in a language this server's runners can run are offered.
#[utoipa::path(get, path = "/api/games/{game}/starters/{language}", tag = "games",
    params(("game" = String, Path, description = "The game"), ("language" = String, Path, description = "The language's name (`GET /api/languages`)")),
    responses((status = 200, content_type = "text/plain", body = String, description = "The bot's source, as an attachment named after its file"),
              (status = 404, body = ErrorBody, description = "No kit for this game in this language, or not one this server can run")))]
async fn starter(State(s): State<AppState>, ApiPath((game, language)): ApiPath<(String, String)>) -> ApiResult<Response> {
    let kits = match koth_games::GameKind::from_name(&game) {
        Some(_) => builtin_kits(&game),
        None => added_kits(&s.pool, &game).await?,
    };
    if kits.is_empty() {
        return Err(not_found(&format!("game {game:?} (or a kit of it)")));
    }
    let infos = starter_infos(&game, &kits, runners::availability(&s.pool).await?.as_ref());
    let offered: Vec<&str> = infos.iter().filter(|k| k.available).map(|k| k.language.as_str()).collect();
    let offered =
        if offered.is_empty() { "none (no runner here can run a language it has a kit in)".to_owned() } else { offered.join(", ") };
    let Some(i) = kits.iter().position(|(_, l, _)| l.name == language) else {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("{game} has no starter kit in {language:?}; this server offers it in: {offered}"),
        ));
    };
    if let Some(why) = &infos[i].unavailable {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("this server cannot run {} bots ({why}), so it offers no {game} kit in it; it offers: {offered}", infos[i].display),
        ));
    }
    let (file, _, source) = kits.into_iter().nth(i).expect("found above");
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8".to_owned()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file}\"")),
        ],
        source,
    )
        .into_response())
}

/// The languages a bot may be written in, their file extensions, and
/// whether this server's runners can run each (with what), or why not.
#[utoipa::path(get, path = "/api/languages", tag = "games", responses((status = 200, body = Vec<LanguageInfo>)))]
async fn languages(State(s): State<AppState>) -> ApiResult<Json<Vec<LanguageInfo>>> {
    let known = runners::availability(&s.pool).await?;
    Ok(Json(
        koth_runner::language::all()
            .iter()
            .map(|l| {
                let can = language_can(known.as_ref(), l);
                LanguageInfo {
                    name: l.name.clone(),
                    display: l.display.clone(),
                    extensions: l.extensions.clone(),
                    compiled: l.compile.is_some(),
                    available: !matches!(can, Some(Can::Err(_))),
                    runs_with: match &can {
                        Some(Can::Ok(how)) => Some(how.clone()),
                        _ => None,
                    },
                    unavailable: match can {
                        Some(Can::Err(why)) => Some(why),
                        _ => None,
                    },
                }
            })
            .collect(),
    ))
}

/// What the runners said of `lang` (`None`: no runner has reported yet).
fn language_can(known: Option<&std::collections::BTreeMap<String, Can>>, lang: &koth_runner::language::Language) -> Option<Can> {
    let known = known?;
    Some(
        known
            .get(&lang.name)
            .cloned()
            .unwrap_or_else(|| Can::Err(format!("no runner of this server reported {} (runners older than the server?)", lang.display))),
    )
}

/// The ladder formats: each one's name, whether it ends (only those that
/// do may play a contest's finals) and its own settings with their
/// defaults.
#[utoipa::path(get, path = "/api/formats", tag = "ladders", responses((status = 200, body = Vec<FormatInfo>)))]
async fn formats() -> Json<Vec<FormatInfo>> {
    use koth_ladder::format::{Format, FormatName};
    Json(
        FormatName::ALL
            .into_iter()
            .map(|name| FormatInfo { name, ends: Format::default_of(name).ends(), settings: Format::default_settings(name) })
            .collect(),
    )
}

/// Ladders and their games.
#[utoipa::path(get, path = "/api/ladders", tag = "ladders", responses((status = 200, body = Vec<LadderSummary>)))]
async fn ladders(State(s): State<AppState>) -> ApiResult<Json<Vec<LadderSummary>>> {
    Ok(Json(reads::ladders(&s.pool).await?))
}

/// Create a ladder (hosts): format and settings default to the game's seed.
#[utoipa::path(post, path = "/api/ladders", tag = "ladders", security(("token" = [])), request_body = NewLadder,
    responses((status = 201, body = LadderCreated), (status = 409, body = ErrorBody, description = "A ladder of that name exists")))]
async fn create_ladder(State(s): State<AppState>, headers: HeaderMap, ApiBody(body): ApiBody) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    require_host(&who)?;
    let l: NewLadder = json_body(&body, r#"{"name": "...", "game": "snake", "format"?: "rated", "settings"?: {...}}"#)?;
    if !valid_name(&l.name) {
        return Err(bad(NAME_RULE));
    }
    let game = served_game(&s.pool, &l.game).await?;
    let config = game
        .default_ladder()
        .and_then(|base| koth_ladder::format::LadderConfig::with_request(&base, l.format, l.settings.as_ref()))
        .and_then(|c| game.check(&c).map(|()| c))
        .map_err(bad)?;
    let format = config.format.kind();
    match crate::db::store::create_ladder_by(&s.pool, &l.name, &game, &config, crate::db::audit::Actor::Account(who.id)).await {
        Ok(id) => Ok((StatusCode::CREATED, Json(LadderCreated { id, name: l.name, game: game.name().into(), format })).into_response()),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            Err(ApiError(StatusCode::CONFLICT, format!("a ladder named {:?} exists", l.name)))
        }
        Err(e) => Err(e.into()),
    }
}

/// A game ladders may be made for: koth's own, or an added one that is
/// ready; the error says which games there are, or why this one is not.
async fn served_game(pool: &PgPool, name: &str) -> ApiResult<koth_ladder::served::ServedGame> {
    if let Some(g) = koth_games::GameKind::from_name(name) {
        return Ok(g.into());
    }
    match crate::db::games::by_name(pool, name).await? {
        Some(g) if g.status == GameStatus::Ready => Ok(g.game),
        Some(g) if g.status == GameStatus::Validating => {
            Err(conflict(format!("game {name:?} is still being validated (its example bots are playing); try again shortly")))
        }
        Some(g) => Err(conflict(format!("game {name:?} was refused by its validation: {}", g.log.unwrap_or_else(|| "no log".into())))),
        None => {
            let mut names: Vec<String> = koth_games::GameKind::ALL.iter().map(|g| g.name().to_owned()).collect();
            names.extend(
                crate::db::games::all(pool).await?.into_iter().filter(|g| g.status == GameStatus::Ready).map(|g| g.game.name().to_owned()),
            );
            Err(bad(format!("unknown game {name:?}; this server plays {}", names.join(", "))))
        }
    }
}

/// The ladder's leaderboard, drawn by its format: the columns are the format's own.
#[utoipa::path(get, path = "/api/ladders/{id}/leaderboard", tag = "ladders", params(("id" = i64, Path, description = "The ladder")),
    responses((status = 200, body = Leaderboard)))]
async fn leaderboard(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Leaderboard>> {
    match crate::db::results::standings(&s.pool, id).await {
        Ok(Some(standings)) => Ok(Json(Leaderboard { ladder: id, standings })),
        Ok(None) => Err(not_found(&format!("ladder {id}"))),
        Err(crate::db::store::StoreError::Db(e)) => Err(e.into()),
        Err(crate::db::store::StoreError::Invalid(why)) => Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, why)),
    }
}

async fn set_paused(s: &AppState, headers: &HeaderMap, id: i64, paused: bool) -> ApiResult<Json<Paused>> {
    let who = require_caller(&s.pool, headers).await?;
    require_host(&who)?;
    if !reads::set_paused(&s.pool, id, paused, who.id).await? {
        return Err(not_found(&format!("ladder {id}")));
    }
    Ok(Json(Paused { id, paused }))
}

/// Stop scheduling the ladder (hosts).
#[utoipa::path(post, path = "/api/ladders/{id}/pause", tag = "ladders", security(("token" = [])),
    params(("id" = i64, Path, description = "The ladder")), responses((status = 200, body = Paused)))]
async fn pause_ladder(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Json<Paused>> {
    set_paused(&s, &headers, id, true).await
}

/// Schedule the ladder again (hosts).
#[utoipa::path(post, path = "/api/ladders/{id}/resume", tag = "ladders", security(("token" = [])),
    params(("id" = i64, Path, description = "The ladder")), responses((status = 200, body = Paused)))]
async fn resume_ladder(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Json<Paused>> {
    set_paused(&s, &headers, id, false).await
}

fn store_error(e: crate::db::store::StoreError) -> ApiError {
    match e {
        crate::db::store::StoreError::Db(e) => e.into(),
        crate::db::store::StoreError::Invalid(why) => ApiError(StatusCode::INTERNAL_SERVER_ERROR, why),
    }
}

async fn contest_of(pool: &PgPool, id: i64) -> ApiResult<Contest> {
    let mut conn = pool.acquire().await?;
    let row = contests::contest(&mut conn, id).await.map_err(store_error)?.ok_or_else(|| not_found(&format!("ladder {id}")))?;
    drop(conn);
    let standings = match row.final_standings.clone() {
        Some(frozen) => Some(frozen),
        None if row.finals.is_some() => contests::finals_standings(pool, id).await.map_err(store_error)?,
        None => None,
    };
    Ok(Contest {
        ladder: id,
        phase: row.phase(),
        deadline: row.deadline,
        finals: row.finals,
        finals_started_at: row.finals_started_at,
        standings,
        finished_at: row.finished_at,
        played_out: contests::played_out(pool, id).await.map_err(store_error)?,
    })
}

/// The ladder's contest: phase, deadline, finals and their standings.
#[utoipa::path(get, path = "/api/ladders/{id}/contest", tag = "contests", params(("id" = i64, Path, description = "The ladder")),
    responses((status = 200, body = Contest)))]
async fn contest(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Contest>> {
    Ok(Json(contest_of(&s.pool, id).await?))
}

/// Set, move or remove the ladder's deadline (hosts); submissions are
/// refused once it has passed. Fixed once the finals start.
#[utoipa::path(post, path = "/api/ladders/{id}/deadline", tag = "contests", security(("token" = [])),
    params(("id" = i64, Path, description = "The ladder")), request_body = DeadlineRequest,
    responses((status = 200, body = Contest), (status = 409, body = ErrorBody, description = "The finals have started")))]
async fn set_deadline(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<i64>,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> ApiResult<Json<Contest>> {
    let who = require_caller(&s.pool, &headers).await?;
    require_host(&who)?;
    let r: DeadlineRequest = json_body(&body, r#"{"at": "2026-12-01T18:00:00Z"} or {"in_seconds": 3600} or {} (no deadline)"#)?;
    let deadline = match (r.at, r.in_seconds) {
        (Some(_), Some(_)) => return Err(bad("give the deadline as \"at\" or as \"in_seconds\", not both")),
        (Some(at), None) => Deadline::At(at),
        (None, Some(secs)) => Deadline::InSeconds(
            u32::try_from(secs).map_err(|_| bad(format!("\"in_seconds\" is {secs}: a deadline is now (0) or later, not before")))?,
        ),
        (None, None) => Deadline::Remove,
    };
    match contests::set_deadline(&s.pool, id, &deadline, who.id).await.map_err(store_error)? {
        DeadlineSet::Done => Ok(Json(contest_of(&s.pool, id).await?)),
        DeadlineSet::NoSuchLadder => Err(not_found(&format!("ladder {id}"))),
        DeadlineSet::FinalsStarted => {
            Err(ApiError(StatusCode::CONFLICT, "the finals have started: the deadline that chose their entrants stays".into()))
        }
        DeadlineSet::NotATime(why) => Err(bad(format!("\"at\" is not a time: {why}; write it as RFC 3339, e.g. 2026-12-01T18:00:00Z"))),
    }
}

/// Start the contest's finals (hosts): the top N of the standings now, in
/// a format that ends, on matches of their own. The deadline must have
/// passed and every version must be compiled and validated.
#[utoipa::path(post, path = "/api/ladders/{id}/finals", tag = "contests", security(("token" = [])),
    params(("id" = i64, Path, description = "The ladder")), request_body = FinalsRequest,
    responses((status = 200, body = Contest),
              (status = 409, body = ErrorBody, description = "Not now: the deadline has not passed, versions are still compiling, or the finals have started")))]
async fn start_finals(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<i64>,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> ApiResult<Json<Contest>> {
    let who = require_caller(&s.pool, &headers).await?;
    require_host(&who)?;
    let r: FinalsRequest = json_body(&body, r#"{"top": 8, "format"?: "round_robin", "settings"?: {"rounds": 2}, "budget"?: 200}"#)?;
    let now = contest_of(&s.pool, id).await?;
    match now.phase {
        koth_ladder::contest::Phase::Open => {
            return Err(conflict(match now.deadline {
                Some(d) => format!(
                    "submissions are open until the deadline, {d}; start the finals after it, or move the deadline first \
                     (on the ladder's page, /ladders/{id}, or `koth contest deadline {id} --now`)"
                ),
                None => format!(
                    "this ladder has no deadline; set one first: on the ladder's page (/ladders/{id}), or close submissions \
                     now with `koth contest deadline {id} --now`"
                ),
            }))
        }
        koth_ladder::contest::Phase::Finals | koth_ladder::contest::Phase::Final => {
            return Err(conflict("the finals have already started".into()))
        }
        koth_ladder::contest::Phase::Closed => {}
    }
    let mut conn = s.pool.acquire().await?;
    let (kind, ladder) =
        crate::db::store::ladder_config(&mut conn, id).await.map_err(store_error)?.ok_or_else(|| not_found(&format!("ladder {id}")))?;
    drop(conn);
    let format = r.format.unwrap_or(koth_ladder::format::FormatName::RoundRobin);
    let config =
        koth_ladder::contest::finals_config(&ladder, format, r.settings.as_ref()).and_then(|c| kind.check(&c).map(|()| c)).map_err(bad)?;
    let seats = kind.seats(&config);
    if (r.top as usize) < seats {
        return Err(bad(format!("the finals need at least {seats} bots (a match's seats), not top {}", r.top)));
    }
    let waiting = contests::versions_in_progress(&s.pool, id).await?;
    if waiting > 0 {
        return Err(conflict(format!(
            "{waiting} version(s) submitted before the deadline are still compiling or in their validation game; start the finals when they are done"
        )));
    }
    let table = crate::db::results::standings(&s.pool, id).await.map_err(store_error)?.ok_or_else(|| not_found(&format!("ladder {id}")))?;
    let playable: Vec<i64> = reads::ladder_bots(&s.pool, id)
        .await?
        .into_iter()
        .filter(|b| b.disabled_reason.is_none() && b.current_version.is_some())
        .map(|b| b.id)
        .collect();
    let finalists = koth_ladder::contest::finalists(&table, &playable, r.top as usize);
    if finalists.len() < seats {
        return Err(conflict(format!(
            "only {} bot(s) can play (a ready version, not disabled); a finals match needs {seats}",
            finalists.len()
        )));
    }
    check_budget(&config, seats, finalists.len(), r.budget)?;
    let plan = FinalsPlan { top: r.top, format: format.to_owned(), settings: config.to_stored().1, finalists, budget: r.budget };
    if !contests::start_finals(&s.pool, id, &plan, who.id).await? {
        return Err(conflict("the finals could not start: they have just been started, or the deadline was just moved".into()));
    }
    Ok(Json(contest_of(&s.pool, id).await?))
}

/// Adaptive finals (a budget) must be playable as asked
/// ([`koth_ladder::finals::check`]); finals without a budget need nothing.
fn check_budget(config: &koth_ladder::format::LadderConfig, seats: usize, finalists: usize, budget: Option<u32>) -> ApiResult<()> {
    match budget {
        None => Ok(()),
        Some(budget) => koth_ladder::finals::check(&config.format, seats, finalists, budget).map_err(bad),
    }
}

/// The final standings as CSV (one line per place), once the finals are
/// over; the same as JSON is the contest's `standings`.
#[utoipa::path(get, path = "/api/ladders/{id}/final-standings.csv", tag = "contests", params(("id" = i64, Path, description = "The ladder")),
    responses((status = 200, content_type = "text/csv", body = String), (status = 404, body = ErrorBody, description = "No such ladder, or its finals are not over")))]
async fn final_standings_csv(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Response> {
    let c = contest_of(&s.pool, id).await?;
    let Some(standings) = c.standings.filter(|_| c.phase == koth_ladder::contest::Phase::Final) else {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("no final standings yet: the contest is {}; they are final once its finals are over", c.phase.as_str()),
        ));
    };
    let disposition = format!("attachment; filename=\"ladder-{id}-final-standings.csv\"");
    Ok((
        [(axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()), (axum::http::header::CONTENT_DISPOSITION, disposition)],
        koth_ladder::contest::to_csv(&standings),
    )
        .into_response())
}

async fn ladder_exists(pool: &PgPool, id: i64) -> ApiResult<()> {
    if reads::ladder_exists(pool, id).await? {
        Ok(())
    } else {
        Err(not_found(&format!("ladder {id}")))
    }
}

async fn bot_exists(pool: &PgPool, id: i64) -> ApiResult<()> {
    if reads::bot_exists(pool, id).await? {
        Ok(())
    } else {
        Err(not_found(&format!("bot {id}")))
    }
}

/// The ladder's bots, their owners, versions and status.
#[utoipa::path(get, path = "/api/ladders/{id}/bots", tag = "ladders", params(("id" = i64, Path, description = "The ladder")),
    responses((status = 200, body = Vec<LadderBot>)))]
async fn ladder_bots(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Vec<LadderBot>>> {
    ladder_exists(&s.pool, id).await?;
    Ok(Json(reads::ladder_bots(&s.pool, id).await?))
}

/// The ladder's last 50 matches, with every seat.
#[utoipa::path(get, path = "/api/ladders/{id}/matches", tag = "ladders", params(("id" = i64, Path, description = "The ladder")),
    responses((status = 200, body = Vec<MatchSummary>)))]
async fn ladder_matches(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Vec<MatchSummary>>> {
    ladder_exists(&s.pool, id).await?;
    Ok(Json(reads::ladder_matches(&s.pool, id).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct SubmitQuery {
    /// The file's name: its extension picks the language (archives: .tar, .tar.gz, .zip).
    #[param(required = true, pattern = r"^[A-Za-z0-9_.-]+\.[A-Za-z0-9]+$")]
    file: Option<String>,
}

/// Submit a bot (new) or a new version (yours): the body is the file or archive.
#[utoipa::path(post, path = "/api/ladders/{id}/bots/{name}", tag = "bots", security(("token" = [])),
    params(("id" = i64, Path, description = "The ladder"),
           ("name" = String, Path, description = "The bot's name", pattern = r"^(?!\.+$)[A-Za-z0-9_.-]{1,40}$"), SubmitQuery),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The source file or archive"),
    responses((status = 201, body = Submitted, description = "A new bot and its first version"),
              (status = 202, body = Submitted, description = "A new version of the caller's bot"),
              (status = 409, body = ErrorBody, description = "A bot of this name was just created"),
              (status = 429, body = ErrorBody, description = "Over a submission limit (versions per hour, bytes per day, compiles waiting); see Retry-After"),
              (status = 413, body = ErrorBody, description = "Larger than 40 MiB"),
              (status = 422, body = ErrorBody, description = "The upload breaks a submission rule (which, and what to do)")))]
async fn submit(
    State(s): State<AppState>,
    ApiPath((ladder, name)): ApiPath<(i64, String)>,
    ApiQuery(q): ApiQuery<SubmitQuery>,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    if !valid_name(&name) {
        return Err(bad(NAME_RULE));
    }
    ladder_exists(&s.pool, ladder).await?;
    if let Some(deadline) = contests::submissions_closed(&s.pool, ladder).await? {
        return Err(forbidden(&closed_at(ladder, &deadline)));
    }
    let file =
        q.file.ok_or_else(|| bad("say the file's name: ?file=bot.py (its extension picks the language; archives: .tar, .tar.gz, .zip)"))?;
    // A quick look before the upload is read (seconds for a large archive):
    // refuses at once what is over a limit already. The limits hold by the
    // check inside the transaction that stores the version (`store::submit`).
    let limits = if who.is_host { None } else { Some(s.options.submission_limits()) };
    if let Some(limits) = &limits {
        let mut conn = s.pool.acquire().await?;
        let usage = accounts::submission_usage(&mut conn, who.id).await?;
        if let Err(e) = quota::check_submission(limits, &usage, None) {
            return Ok(over_limit(e));
        }
    }
    let bytes = body.to_vec();
    let sub = tokio::task::spawn_blocking(move || Submission::from_upload(&file, &bytes, &SubmissionLimits::default()))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("checking the upload failed: {e}")))?
        .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    let known = runners::availability(&s.pool).await?;
    if let Some(Can::Err(why)) = language_can(known.as_ref(), sub.language) {
        let runs: Vec<&str> = koth_runner::language::all()
            .iter()
            .filter(|l| matches!(language_can(known.as_ref(), l), Some(Can::Ok(_))))
            .map(|l| l.name.as_str())
            .collect();
        let runs = if runs.is_empty() { "none yet".to_owned() } else { runs.join(", ") };
        return Err(ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("{} bots cannot be run on this server: {why}. Submit in a language it runs: {runs}", sub.language.display),
        ));
    }
    let stored = sub.source_tar();
    let language = sub.language.name.clone();
    let hash = sub.source_hash();
    let new = crate::db::store::NewVersion {
        ladder,
        bot_name: &name,
        owner: who.id,
        owner_is_host: who.is_host,
        language: &language,
        main: &sub.main,
        source: &stored,
        source_hash: &hash,
    };
    use crate::db::store::SubmitError;
    let done = match crate::db::store::submit(&s.pool, &new, limits.as_ref()).await {
        Ok(done) => done,
        Err(SubmitError::OverLimit(e)) => return Ok(over_limit(e)),
        Err(SubmitError::Closed(deadline)) => return Err(forbidden(&closed_at(ladder, &deadline))),
        Err(SubmitError::NotYours) => return Err(forbidden("this bot belongs to someone else; choose another name")),
        Err(SubmitError::NoLadder) => return Err(not_found(&format!("ladder {ladder}"))),
        Err(SubmitError::Db(e)) => return Err(e.into()),
    };
    let status = if done.created { StatusCode::CREATED } else { StatusCode::ACCEPTED };
    let body =
        Submitted { bot: done.bot, version: done.version, number: done.number, compile_job: done.compile_job, language, main: sub.main };
    Ok((status, Json(body)).into_response())
}

/// Submissions to `ladder` are closed since `deadline`.
fn closed_at(ladder: i64, deadline: &str) -> String {
    format!(
        "submissions to this ladder closed at its deadline, {deadline}; the versions ready then play on (the ladder's page \
         shows its contest: /ladders/{ladder})"
    )
}

/// A bot, its versions and rating.
#[utoipa::path(get, path = "/api/bots/{id}", tag = "bots", params(("id" = i64, Path, description = "The bot")),
    responses((status = 200, body = BotInfo)))]
async fn bot(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<BotInfo>> {
    reads::bot_info(&s.pool, id).await?.map(Json).ok_or_else(|| not_found(&format!("bot {id}")))
}

/// A bot's rating history: one point per rated match.
#[utoipa::path(get, path = "/api/bots/{id}/ratings", tag = "bots", params(("id" = i64, Path, description = "The bot")),
    responses((status = 200, body = Vec<RatingPoint>)))]
async fn rating_history(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Vec<RatingPoint>>> {
    bot_exists(&s.pool, id).await?;
    Ok(Json(reads::rating_history(&s.pool, id).await?))
}

/// A bot's last 50 matches, with every seat.
#[utoipa::path(get, path = "/api/bots/{id}/matches", tag = "bots", params(("id" = i64, Path, description = "The bot")),
    responses((status = 200, body = Vec<MatchSummary>)))]
async fn bot_matches(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Vec<MatchSummary>>> {
    bot_exists(&s.pool, id).await?;
    Ok(Json(reads::bot_matches(&s.pool, id).await?))
}

/// A bot's record against each bot it met: a win is a better rank in the
/// same match (so it means the same in 2-seat and free-for-all games).
#[utoipa::path(get, path = "/api/bots/{id}/head-to-head", tag = "bots", params(("id" = i64, Path, description = "The bot")),
    responses((status = 200, body = Vec<HeadToHead>)))]
async fn head_to_head(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Vec<HeadToHead>>> {
    bot_exists(&s.pool, id).await?;
    Ok(Json(reads::head_to_head(&s.pool, id).await?))
}

async fn set_disabled(s: &AppState, who: &Caller, id: i64, reason: Option<String>, action: AuditAction) -> ApiResult<Json<BotDisabled>> {
    if !reads::set_disabled(&s.pool, id, reason.as_deref(), who.id, action).await? {
        return Err(not_found(&format!("bot {id}")));
    }
    Ok(Json(BotDisabled { id, disabled_reason: reason }))
}

/// Disable a bot (hosts), with a reason shown to its owner.
#[utoipa::path(post, path = "/api/bots/{id}/disable", tag = "bots", security(("token" = [])),
    params(("id" = i64, Path, description = "The bot")), request_body = Reason, responses((status = 200, body = BotDisabled)))]
async fn disable_bot(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<i64>,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> ApiResult<Json<BotDisabled>> {
    let who = require_caller(&s.pool, &headers).await?;
    require_host(&who)?;
    let r: Reason = json_body(&body, r#"{"reason": "..."} (shown to the owner)"#)?;
    if r.reason.trim().is_empty() {
        return Err(bad("say why: the reason is shown to the bot's owner"));
    }
    set_disabled(&s, &who, id, Some(format!("disabled by a host: {}", r.reason.trim())), AuditAction::BotDisabled).await
}

/// Enable a bot again (hosts).
#[utoipa::path(post, path = "/api/bots/{id}/enable", tag = "bots", security(("token" = [])),
    params(("id" = i64, Path, description = "The bot")), responses((status = 200, body = BotDisabled)))]
async fn enable_bot(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Json<BotDisabled>> {
    let who = require_caller(&s.pool, &headers).await?;
    require_host(&who)?;
    set_disabled(&s, &who, id, None, AuditAction::BotEnabled).await
}

/// Withdraw a bot (its owner or a host); its matches stay in history.
#[utoipa::path(post, path = "/api/bots/{id}/delete", tag = "bots", security(("token" = [])),
    params(("id" = i64, Path, description = "The bot")), responses((status = 200, body = BotDisabled)))]
async fn delete_bot(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Json<BotDisabled>> {
    let who = require_caller(&s.pool, &headers).await?;
    bot_exists(&s.pool, id).await?;
    if !may_see(&s.pool, &who, id).await? {
        return Err(forbidden("only the bot's owner can delete it"));
    }
    // Withdrawn, not erased: its matches stay in everyone's history.
    set_disabled(&s, &who, id, Some("deleted by its owner".into()), AuditAction::BotDeleted).await
}

/// Whether `who` owns the bot (or is a host).
async fn may_see(pool: &PgPool, who: &Caller, bot: i64) -> ApiResult<bool> {
    if who.is_host {
        return Ok(true);
    }
    Ok(reads::bot_owner(pool, bot).await? == Some(who.id))
}

/// A version's row, for its bot's owner (or a host) only; `what` names
/// what is refused to others.
async fn owned_version(s: &AppState, headers: &HeaderMap, id: i64, what: &str) -> ApiResult<reads::VersionRow> {
    let who = require_caller(&s.pool, headers).await?;
    let v = reads::version(&s.pool, id).await?.ok_or_else(|| not_found(&format!("version {id}")))?;
    if !may_see(&s.pool, &who, v.bot).await? {
        return Err(forbidden(&format!("only the bot's owner can read its {what}")));
    }
    Ok(v)
}

/// A version's compile log (its owner, hosts).
#[utoipa::path(get, path = "/api/versions/{id}/log", tag = "bots", security(("token" = [])),
    params(("id" = i64, Path, description = "The version")), responses((status = 200, body = VersionLog)))]
async fn version_log(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Json<VersionLog>> {
    let v = owned_version(&s, &headers, id, "compile log").await?;
    Ok(Json(VersionLog { version: id, status: v.status, log: v.log, validation: v.validation, validation_match: v.validation_match }))
}

/// A version's sources, as a tar archive (its owner, hosts).
#[utoipa::path(get, path = "/api/versions/{id}/source", tag = "bots", security(("token" = [])),
    params(("id" = i64, Path, description = "The version")),
    responses((status = 200, content_type = "application/x-tar", body = Vec<u8>)))]
async fn version_source(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Response> {
    let v = owned_version(&s, &headers, id, "source").await?;
    let tar = v.source;
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "application/x-tar".to_owned()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"version-{id}.tar\"")),
        ],
        tar,
    )
        .into_response())
}

/// A match's seats and outcomes.
#[utoipa::path(get, path = "/api/matches/{id}", tag = "matches", params(("id" = i64, Path, description = "The match")),
    responses((status = 200, body = MatchInfo)))]
async fn match_info(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<MatchInfo>> {
    reads::match_info(&s.pool, id).await?.map(Json).ok_or_else(|| not_found(&format!("match {id}")))
}

/// A finished match's replay (docs/replay.md), with the stderr of the
/// seats whose bots the caller owns (a host: every seat's) and nobody
/// else's; without a token (or with one that no longer works: the replay
/// is public), none. Stored packed and without stderr
/// ([`crate::packed`]); a client that accepts `zstd` and owns no seat
/// gets it as stored.
#[utoipa::path(get, path = "/api/matches/{id}/replay", tag = "matches", params(("id" = i64, Path, description = "The match")),
    security((), ("token" = [])),
    responses((status = 200, body = Object, description = "The replay, as docs/replay.md describes it, with the caller's seats' stderr"),
              (status = 409, body = ErrorBody, description = "The match has not finished")))]
async fn replay(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Response> {
    let stored = finished_replay(&s.pool, id).await?;
    let theirs = match caller(&s.pool, &headers).await.ok().flatten() {
        Some(who) => reads::owned_stderr(&s.pool, id, who.id, who.is_host).await?,
        None => Vec::new(),
    };
    let mut r = if theirs.is_empty() {
        match stored {
            StoredReplay::Packed(z) if packed::accepts(accept_encoding(&headers), "zstd") => encoded_json(z, Some("zstd")),
            r => replays::to_json(&r).map(|json| encoded_json(json, None)).map_err(|e| stored_unreadable(id, e))?,
        }
    } else {
        let json = replays::to_json(&stored).map_err(|e| stored_unreadable(id, e))?;
        let json = tokio::task::spawn_blocking(move || koth_games::replay::with_stderr(&json, &theirs))
            .await
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("adding the stderr: {e}")))?
            .map_err(|e| stored_unreadable(id, e))?;
        encoded_json(json, None)
    };
    // What is in it depends on who asks.
    r.headers_mut().insert(axum::http::header::VARY, axum::http::HeaderValue::from_static("accept-encoding, authorization"));
    r.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("private"));
    Ok(r)
}

async fn finished_replay(pool: &PgPool, id: i64) -> ApiResult<StoredReplay> {
    match replays::stored(pool, id).await? {
        None => Err(not_found(&format!("match {id}"))),
        Some(None) => Err(ApiError(StatusCode::CONFLICT, format!("match {id} has not finished; its replay comes when it does"))),
        Some(Some(v)) => Ok(v),
    }
}

fn accept_encoding(headers: &HeaderMap) -> Option<&str> {
    headers.get(axum::http::header::ACCEPT_ENCODING).and_then(|v| v.to_str().ok())
}

/// JSON, already compressed with `coding` (the compression layer leaves a
/// response with a `Content-Encoding` alone).
fn encoded_json(body: Vec<u8>, coding: Option<&'static str>) -> Response {
    use axum::http::header::{CONTENT_ENCODING, CONTENT_TYPE, VARY};
    let mut r = ([(CONTENT_TYPE, "application/json"), (VARY, "accept-encoding")], body).into_response();
    if let Some(c) = coding {
        r.headers_mut().insert(CONTENT_ENCODING, axum::http::HeaderValue::from_static(c));
    }
    r
}

fn stored_unreadable(id: i64, why: String) -> ApiError {
    tracing::error!(match_id = id, "{why}");
    ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("match {id}'s stored replay is damaged: {why}"))
}

/// Pictures of every turn of a finished match, for the replay viewer: the
/// replay played again through the game's rules ([`koth_games::replay`])
/// the first time the match is viewed, then kept with its replay
/// ([`replays::keep_frames`]) and served as kept (gzip).
#[utoipa::path(get, path = "/api/matches/{id}/frames", tag = "matches", params(("id" = i64, Path, description = "The match")),
    responses((status = 200, body = Object, description = "The first frame whole, then the cells each turn changed"),
              (status = 409, body = ErrorBody, description = "The match has not finished"),
              (status = 422, body = ErrorBody, description = "The stored replay does not fit the game's rules")))]
async fn frames(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Response> {
    let serve = |gz: Vec<u8>| -> ApiResult<Response> {
        if packed::accepts(accept_encoding(&headers), "gzip") {
            Ok(encoded_json(gz, Some("gzip")))
        } else {
            packed::gunzip(&gz).map(|json| encoded_json(json, None)).map_err(|e| stored_unreadable(id, e))
        }
    };
    // Kept frames are all a viewer needs: one small read, no replay.
    if let Some(gz) = replays::kept_frames(&s.pool, id).await? {
        return serve(gz);
    }
    // Not drawn yet: the match must exist and be finished.
    let stored = finished_replay(&s.pool, id).await?;
    // Drawing a long match is seconds of CPU: a few at a time, at the
    // lowest priority.
    let slot = s.drawing.stored().await;
    // Another request may have drawn it while this one waited.
    if let Some(gz) = replays::kept_frames(&s.pool, id).await? {
        return serve(gz);
    }
    let drawn = crate::drawing::run(slot, move || -> Result<_, (StatusCode, String)> {
        let unprocessable = |e: String| (StatusCode::UNPROCESSABLE_ENTITY, format!("match {id}'s replay cannot be drawn: {e}"));
        let (replay, repacked) = match &stored {
            StoredReplay::Packed(z) => {
                let json = packed::unzstd(z)
                    .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, format!("match {id}'s stored replay is damaged: {e}")))?;
                (koth_games::replay::Replay::from_json(&json).map_err(unprocessable)?, None)
            }
            StoredReplay::Json(v) => {
                let r = koth_games::replay::Replay::from_value(v).map_err(unprocessable)?;
                let p = PackedReplay::pack(&r);
                (r, Some(p))
            }
        };
        let frames = koth_games::replay::frames(&replay).map_err(unprocessable)?;
        let json = serde_json::to_vec(&frames).map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        Ok((packed::gzip(&json), repacked))
    });
    let (gz, repacked) = drawn
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("drawing the replay: {e}")))?
        .map_err(|(status, e)| ApiError(status, e))?;
    replays::keep_frames(&s.pool, id, &gz, repacked.as_ref()).await?;
    serve(gz)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct LiveQuery {
    /// The first frame wanted (the number of frames the reader has); 0 by default.
    #[param(minimum = 0)]
    from: Option<u32>,
}

/// A match while it is played: the frames and turns its runner has written
/// so far, from `from` on. The frames are drawn from the written turns by
/// the game's rules, as a finished match's are from its replay, so what is
/// seen live is what its replay will show. Drawing shares the frames' few
/// slots.
#[utoipa::path(get, path = "/api/matches/{id}/live", tag = "matches", params(("id" = i64, Path, description = "The match"), LiveQuery),
    responses((status = 200, body = LiveMatch),
              (status = 422, body = ErrorBody, description = "The turns written so far do not fit the game's rules")))]
async fn live(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, ApiQuery(q): ApiQuery<LiveQuery>) -> ApiResult<Json<LiveMatch>> {
    let info = reads::match_info(&s.pool, id).await?.ok_or_else(|| not_found(&format!("match {id}")))?;
    let idle = LiveMatch { id, running: false, turns_played: 0, frames: None, turns: Vec::new() };
    let Some(chunks) = reads::live_turns(&s.pool, id).await? else { return Ok(Json(idle)) };
    let from = q.from.unwrap_or(0) as usize;
    let slot = s.drawing.stored().await;
    let drawn = crate::drawing::run(slot, move || -> Result<LiveMatch, String> {
        use koth_games::replay::{frames, Replay, ReplaySeat, Turn};
        let Some(game) = info.game.as_deref().and_then(koth_games::GameKind::from_name) else {
            // An added game: only its referee draws it, and that runs on the
            // runner; the turns are shown as written, the board at the end.
            let mut turns = Vec::new();
            for c in &chunks {
                turns.extend(serde_json::from_slice::<Vec<Value>>(c).map_err(|e| format!("its written turns: {e}"))?);
            }
            let turns_played = turns.len() as u32;
            return Ok(LiveMatch {
                id,
                running: true,
                turns_played,
                frames: None,
                turns: turns.split_off((from.max(1) - 1).min(turns.len())),
            });
        };
        let seed = info.seed.parse().map_err(|e| format!("its seed {:?}: {e}", info.seed))?;
        let mut turns: Vec<Turn> = Vec::new();
        for c in &chunks {
            turns.extend(serde_json::from_slice::<Vec<Turn>>(c).map_err(|e| format!("its written turns: {e}"))?);
        }
        let replay = Replay {
            game: game.into(),
            seed,
            engine: String::new(),
            time_policy: None,
            seats: info.seats.iter().map(|st| ReplaySeat { name: st.name.clone(), ..ReplaySeat::default() }).collect(),
            initial: Value::Null,
            turns,
            result: Vec::new(),
            cut_short: true,
            ended_by: Default::default(),
        };
        let mut drawn = frames(&replay)?;
        let turns_played = replay.turns.len() as u32;
        drawn.frames = drawn.frames.split_off(from.min(drawn.frames.len()));
        let since = from.max(1) - 1;
        let turns = replay.turns.get(since..).unwrap_or_default();
        Ok(LiveMatch {
            id,
            running: true,
            turns_played,
            frames: Some(serde_json::to_value(&drawn).map_err(|e| e.to_string())?),
            turns: turns.iter().map(|t| serde_json::to_value(t).unwrap_or_default()).collect(),
        })
    });
    let drawn = drawn.await.map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("drawing the match: {e}")))?;
    drawn.map(Json).map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, format!("match {id} cannot be drawn while it runs: {e}")))
}

/// Draw a replay file the reader has (one `koth match --replay` wrote or
/// `koth replay download` fetched) for the viewer of `/replay`: the page
/// the site shows for a match, and its frames. Nothing is stored. One
/// replay is drawn at a time, at the lowest CPU priority
/// ([`crate::drawing`]): a caller who finds another being drawn gets 429
/// at once, before its file is read.
#[utoipa::path(post, path = "/api/replays/frames", tag = "matches",
    request_body(content = Object, content_type = "application/json", description = "A replay, as koth writes them"),
    responses((status = 200, body = DrawnReplay),
              (status = 422, body = ErrorBody, description = "Not a replay koth can draw (what is wrong with it)"),
              (status = 413, body = ErrorBody, description = "Larger than 40 MiB"),
              (status = 429, body = ErrorBody, description = "Another replay is being drawn; see Retry-After")))]
async fn draw_replay(State(s): State<AppState>, req: Request) -> Result<Response, ApiError> {
    let Some(slot) = s.drawing.uploaded() else {
        let msg = "another replay file is being drawn, and they are drawn one at a time: try again shortly, \
                   or view it on your machine with `koth replay view FILE`";
        return Ok(too_many(crate::drawing::UPLOADED_RETRY_AFTER_SECS, msg.into()));
    };
    let body = axum::body::to_bytes(req.into_body(), MAX_BODY)
        .await
        .map_err(|e| ApiError(StatusCode::PAYLOAD_TOO_LARGE, format!("the replay could not be read whole (at most 40 MiB): {e}")))?;
    let drawn = crate::drawing::run(slot, move || -> Result<DrawnReplay, String> {
        let replay = koth_games::replay::Replay::from_json(&body)?;
        let frames = koth_games::replay::frames(&replay)?;
        let frames = serde_json::to_value(&frames).map_err(|e| e.to_string())?;
        Ok(DrawnReplay { info: MatchInfo::of_local_replay(&replay), frames })
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("drawing the replay: {e}")))?;
    drawn
        .map(|d| Json(d).into_response())
        .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, format!("this file is not a replay koth can draw: {e}")))
}

#[cfg(test)]
#[path = "draw_tests.rs"]
mod draw_tests;

/// A seat's stderr in a match, whole and by turn (its owner, hosts).
#[utoipa::path(get, path = "/api/matches/{id}/stderr/{seat}", tag = "matches", security(("token" = [])),
    params(("id" = i64, Path, description = "The match"), ("seat" = i32, Path, description = "The seat, from 0")),
    responses((status = 200, body = SeatStderr)))]
async fn stderr(State(s): State<AppState>, ApiPath((id, seat)): ApiPath<(i64, i32)>, headers: HeaderMap) -> ApiResult<Json<SeatStderr>> {
    let who = require_caller(&s.pool, &headers).await?;
    let (bot, text, ends) = reads::seat_stderr(&s.pool, id, seat).await?.ok_or_else(|| not_found(&format!("seat {seat} of match {id}")))?;
    if !may_see(&s.pool, &who, bot).await? {
        return Err(forbidden("only the bot's owner can read its stderr"));
    }
    let turns = text.as_deref().map(|t| stderr_by_turn(t, &ends)).unwrap_or_default();
    Ok(Json(SeatStderr { match_id: id, seat, stderr: text, turns }))
}

/// A seat's stderr cut at the recorded turn ends, as a replay carries it
/// ([`koth_games::replay::SeatStderr::from_ends`]).
fn stderr_by_turn(text: &str, ends: &[(u32, usize)]) -> Vec<StderrTurn> {
    koth_games::replay::SeatStderr::from_ends(text, ends, None, false)
        .turns
        .into_iter()
        .map(|t| StderrTurn { turn: t.turn, text: t.text })
        .collect()
}

fn require_host(who: &Caller) -> ApiResult<()> {
    if who.is_host {
        Ok(())
    } else {
        Err(forbidden("only hosts may do this"))
    }
}

/// Entries a page of the audit trail holds unless the request says.
const AUDIT_PAGE: u32 = 100;
/// The most a request may ask for.
const AUDIT_PAGE_MAX: u32 = 1000;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct AuditQuery {
    /// Only this ladder's entries.
    #[param(minimum = 1)]
    ladder: Option<i64>,
    /// Only this bot's entries and those of the matches it played.
    #[param(minimum = 1)]
    bot: Option<i64>,
    /// Only entries of this kind.
    action: Option<AuditAction>,
    /// Only entries older than this one: the previous page's `next_before`.
    #[param(minimum = 1)]
    before: Option<i64>,
    /// How many, newest first (100 unless said; at most 1000).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<u32>,
}

/// The audit trail (hosts), newest first: every match's and compile's
/// outcome, validation verdict, automatic disable and host action, with
/// who did it, when and why. Filtered by ladder, bot or kind; `before`
/// pages back.
#[utoipa::path(get, path = "/api/audit", tag = "service", security(("token" = [])), params(AuditQuery),
    responses((status = 200, body = AuditPage), (status = 403, body = ErrorBody, description = "Not a host")))]
async fn audit(State(s): State<AppState>, ApiQuery(q): ApiQuery<AuditQuery>, headers: HeaderMap) -> ApiResult<Json<AuditPage>> {
    require_host(&require_caller(&s.pool, &headers).await?)?;
    let limit = q.limit.unwrap_or(AUDIT_PAGE);
    if !(1..=AUDIT_PAGE_MAX).contains(&limit) {
        return Err(bad(format!("\"limit\" is {limit}: ask for 1 to {AUDIT_PAGE_MAX} entries, and page back with \"before\"")));
    }
    for (name, id) in [("ladder", q.ladder), ("bot", q.bot), ("before", q.before)] {
        if id.is_some_and(|id| id < 1) {
            return Err(bad(format!("\"{name}\" is an id: a whole number from 1")));
        }
    }
    let filter = crate::db::audit::Filter { ladder: q.ladder, bot: q.bot, action: q.action, before: q.before, limit };
    Ok(Json(crate::db::audit::list(&s.pool, &filter).await?))
}

/// An unrated match between chosen bots, seats in that order; one of them must be the caller's.
#[utoipa::path(post, path = "/api/challenges", tag = "matches", security(("token" = [])), request_body = NewChallenge,
    responses((status = 201, body = ChallengeCreated),
              (status = 422, body = ErrorBody, description = "A bot cannot play now (no ready version, disabled, another ladder, twice)"),
              (status = 429, body = ErrorBody, description = "Too many of the caller's challenges are queued or playing; see Retry-After")))]
async fn challenge(State(s): State<AppState>, headers: HeaderMap, ApiBody(body): ApiBody) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    let c: NewChallenge = json_body(&body, r#"{"ladder": 1, "bots": [1, 2]}"#)?;
    let mut conn = s.pool.acquire().await?;
    let (kind, _) = crate::db::store::ladder_config(&mut conn, c.ladder)
        .await
        .map_err(store_error)?
        .ok_or_else(|| not_found(&format!("ladder {}", c.ladder)))?;
    drop(conn);
    let (lo, hi) = kind.seat_range();
    if c.bots.len() < lo || c.bots.len() > hi {
        return Err(bad(format!("{} is played by {lo} to {hi} bots; {} given", kind.name(), c.bots.len())));
    }
    if !who.is_host {
        let mine = reads::owned_among(&s.pool, &c.bots, who.id).await?;
        if mine == 0 {
            return Err(forbidden("a challenge must include one of your own bots"));
        }
    }
    let seed = {
        use rand::Rng;
        (rand::thread_rng().gen::<u64>() >> 1) as i64
    };
    let limit = if who.is_host { None } else { Some(s.options.challenges_in_flight) };
    let id = match crate::db::store::create_challenge(&s.pool, c.ladder, &c.bots, seed, who.id, limit).await {
        Ok(id) => id,
        Err(crate::db::store::ChallengeError::Invalid(why)) => return Err(ApiError(StatusCode::UNPROCESSABLE_ENTITY, why)),
        Err(crate::db::store::ChallengeError::OverLimit(e)) => return Ok(over_limit(e)),
        // The database failing is not the caller's fault: 503, try again.
        Err(crate::db::store::ChallengeError::Db(e)) => return Err(e.into()),
    };
    Ok((StatusCode::CREATED, Json(ChallengeCreated { match_id: id, rated: false })).into_response())
}

/// Cancel a queued match no runner holds yet: a challenge by whoever asked
/// for it, any match by a host.
#[utoipa::path(post, path = "/api/matches/{id}/cancel", tag = "matches", security(("token" = [])),
    params(("id" = i64, Path, description = "The match")),
    responses((status = 200, body = MatchCancelled),
              (status = 409, body = ErrorBody, description = "A runner is playing it, or it is over")))]
async fn cancel_match(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<Json<MatchCancelled>> {
    let who = require_caller(&s.pool, &headers).await?;
    let requester = crate::db::store::match_requester(&s.pool, id).await?.ok_or_else(|| not_found(&format!("match {id}")))?;
    if !who.is_host && requester != Some(who.id) {
        return Err(forbidden("only who asked for a challenge, or a host, can cancel a match"));
    }
    let why =
        if who.is_host { format!("cancelled by {}, a host", who.name) } else { format!("cancelled by {}, who asked for it", who.name) };
    match crate::db::store::cancel_match(&s.pool, id, who.id, &why).await? {
        crate::db::store::Cancelled::Done => Ok(Json(MatchCancelled { id, reason: why })),
        crate::db::store::Cancelled::TooLate(state) => Err(ApiError(
            StatusCode::CONFLICT,
            format!(
                "match {id} cannot be cancelled: {}",
                if state == MatchState::Queued { "a runner is playing it" } else { "it is over" }
            ),
        )),
        crate::db::store::Cancelled::NoSuchMatch => Err(not_found(&format!("match {id}"))),
    }
}
