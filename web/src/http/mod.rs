//! The HTTP API (axum), served by `koth up` and `koth web` with the web
//! pages ([`crate::pages`]).
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
//! One module per resource, each with its handlers and its `routes()`:
//! `accounts` (sign-up, the caller's account and tokens), `games` (games,
//! their folders and kits, languages), `ladders` (formats, ladders, their
//! leaderboards, bots and matches), `contests` (deadline, finals,
//! standings), `bots` (submitting, bots and versions), `ab` (A/B tests of
//! a bot's versions), `matches`
//! (matches, replays, frames, stderr, challenges) and `service` (health,
//! metrics, this document, the audit trail). This module holds what they
//! share: the options, the error, the extractors, the caller's account.
//!
//! Uploads are checked by the submission rules of koth-runner
//! ([`Submission::from_upload`]), the crate that owns the languages.

/// The API's requests and responses ([`koth_scheduler::types`]).
pub use koth_scheduler::types;

mod ab;
mod accounts;
mod bots;
mod contests;
mod games;
mod ladders;
mod matches;
mod service;

pub use service::resident_bytes;

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

use crate::usecase::{valid_name, NAME_RULE};
use koth_ladder::quota::{self, OverLimit, SignupLimits};
use koth_scheduler::db::contests::{Deadline, DeadlineSet};
use koth_scheduler::db::replays::{self, StoredReplay};
use koth_scheduler::db::runners::{self, Can};
use koth_scheduler::db::{self, reads};
use koth_scheduler::packed::{self, PackedReplay};
use koth_scheduler::types::*;

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

/// An API error, by kind: each kind is one status, and every one answers
/// `{"error": "..."}` (one [`IntoResponse`]), the message saying what was
/// wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed (its body, path or query).
    #[error("{0}")]
    BadRequest(String),
    /// 401: no account, or a token that does not work.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: the caller may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// 404: what the request names does not exist (the whole message).
    #[error("{0}")]
    NotFound(String),
    /// 409: the request conflicts with what is stored (a name taken, too late).
    #[error("{0}")]
    Conflict(String),
    /// 413: the body is too large, or could not be read whole.
    #[error("{0}")]
    TooLarge(String),
    /// 422: well formed, but refused (an upload that does not build, a
    /// bot that cannot play).
    #[error("{0}")]
    Unprocessable(String),
    /// 429: over a limit; `Retry-After` says when to try again (whole
    /// seconds, at least 1).
    #[error("{message}")]
    TooMany { retry_after_secs: f64, message: String },
    /// 500: koth's own fault (a stored row it cannot read, a task that
    /// failed).
    #[error("{0}")]
    Internal(String),
    /// 503: the database is not available.
    #[error("{0}")]
    Unavailable(String),
}

impl ApiError {
    /// The status every error of this kind answers with.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match self {
            ApiError::TooMany { retry_after_secs, message } => {
                let secs = retry_after_secs.ceil().max(1.0) as u64;
                (status, [(axum::http::header::RETRY_AFTER, secs.to_string())], Json(ErrorBody { error: message })).into_response()
            }
            other => (status, Json(ErrorBody { error: other.to_string() })).into_response(),
        }
    }
}

/// A request over one of its limits (koth_ladder's quotas): a 429.
impl From<OverLimit> for ApiError {
    fn from(e: OverLimit) -> Self {
        ApiError::TooMany { retry_after_secs: e.retry_after_secs, message: e.message }
    }
}

/// A refused submission, by its kind.
impl From<crate::usecase::submit::Refusal> for ApiError {
    fn from(r: crate::usecase::submit::Refusal) -> Self {
        use crate::usecase::submit::Refusal;
        match r {
            Refusal::BadName | Refusal::NoFileName => ApiError::BadRequest(r.to_string()),
            Refusal::NoLadder(_) => ApiError::NotFound(r.to_string()),
            Refusal::Closed { .. } | Refusal::NotYours => ApiError::Forbidden(r.to_string()),
            Refusal::OverLimit(e) => e.into(),
            Refusal::LanguageNotRun { .. } => ApiError::Unprocessable(r.to_string()),
        }
    }
}

/// A refused challenge, by its kind.
impl From<crate::usecase::challenge::Refusal> for ApiError {
    fn from(r: crate::usecase::challenge::Refusal) -> Self {
        use crate::usecase::challenge::Refusal;
        match r {
            Refusal::NoLadder(_) => ApiError::NotFound(r.to_string()),
            Refusal::Seats { .. } => ApiError::BadRequest(r.to_string()),
            Refusal::NoneYours => ApiError::Forbidden(r.to_string()),
            Refusal::CannotPlay(why) => ApiError::Unprocessable(why),
            Refusal::OverLimit(e) => e.into(),
        }
    }
}

/// Finals that cannot start: the request's fault is a 400, the contest's
/// state a 409.
impl From<crate::usecase::finals::Refusal> for ApiError {
    fn from(r: crate::usecase::finals::Refusal) -> Self {
        match r {
            crate::usecase::finals::Refusal::NoLadder(_) => ApiError::NotFound(r.to_string()),
            r if r.is_the_requests() => ApiError::BadRequest(r.to_string()),
            r => ApiError::Conflict(r.to_string()),
        }
    }
}

impl From<koth_scheduler::db::store::StoreError> for ApiError {
    fn from(e: koth_scheduler::db::store::StoreError) -> Self {
        match e {
            koth_scheduler::db::store::StoreError::Db(e) => e.into(),
            // A stored row koth cannot read: its fault, said plainly.
            koth_scheduler::db::store::StoreError::Invalid(why) => ApiError::Internal(why),
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
            Err(e) => {
                let message = format!("{}; the largest body is {} MiB", e.body_text(), MAX_BODY >> 20);
                // axum's body rejections: over the limit (413), or a body
                // that could not be read (400).
                Err(if e.status() == StatusCode::PAYLOAD_TOO_LARGE { ApiError::TooLarge(message) } else { ApiError::BadRequest(message) })
            }
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
        ApiError::Unavailable("the database is not available; try again shortly".into())
    }
}

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::BadRequest(msg.into())
}
/// `what` (`"bot 7"`) does not exist.
fn not_found(what: &str) -> ApiError {
    ApiError::NotFound(format!("{what} does not exist"))
}
fn forbidden(msg: &str) -> ApiError {
    ApiError::Forbidden(msg.into())
}

type ApiResult<T> = Result<T, ApiError>;

/// The whole HTTP service: the API, the web pages, metrics and request
/// logs (see [`crate::pages`] for the pages and the layers).
pub fn router(pool: PgPool) -> Router {
    router_with(pool, ApiOptions::default())
}

/// The API and pages, with the host's options.
pub fn router_with(pool: PgPool, options: ApiOptions) -> Router {
    let drawing = Arc::new(crate::drawing::Drawing::default());
    let (api, _) = routes().split_for_parts();
    // A game's page needs the database: added games are rows.
    let api = api.route("/games/{name}", axum::routing::get(game_page));
    crate::pages::service(api.layer(DefaultBodyLimit::max(MAX_BODY)), AppState { pool, drawing, options })
}

async fn game_page(State(s): State<AppState>, axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    let added =
        koth_games::GameKind::from_name(&name).is_none() && matches!(koth_scheduler::db::games::by_name(&s.pool, &name).await, Ok(Some(_)));
    // koth's own games' pages lead with the kits this server can run.
    let kits = if added { Vec::new() } else { games::offered_kits(&s.pool, &name).await.unwrap_or_default() };
    crate::pages::game_page(&name, added, &kits)
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

/// Every route, each declared on its handler, resource by resource.
fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(service::routes())
        .merge(accounts::routes())
        .merge(games::routes())
        .merge(ladders::routes())
        .merge(contests::routes())
        .merge(bots::routes())
        .merge(ab::routes())
        .merge(matches::routes())
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
    db::accounts::create_token(pool, user, name, &token_hash(&token), None).await.map_err(|e| match e {
        koth_scheduler::db::store::StoreError::Db(e) => e,
        koth_scheduler::db::store::StoreError::Invalid(why) => sqlx::Error::Protocol(why),
    })?;
    Ok(token)
}

/// Make `token` (a host's own, from a secret file: `koth web
/// --host-token-file`) a token of the host account `name`, creating the
/// account if there is none; a token already there is kept. Refused if the
/// token is another account's.
pub async fn ensure_host_token(pool: &PgPool, name: &str, token: &str) -> Result<i64, String> {
    let hash = token_hash(token);
    match db::accounts::token_owner(pool, &hash).await.map_err(|e| e.to_string())? {
        Some((id, true)) => return Ok(id),
        Some((_, false)) => return Err("the host token is already a token of an account that is not a host's: choose another".into()),
        None => {}
    }
    match db::accounts::host_named(pool, name).await.map_err(|e| e.to_string())? {
        Some(id) => {
            db::accounts::create_token(pool, id, "host-token-file", &hash, None).await.map_err(|e| format!("{e:?}"))?;
            Ok(id)
        }
        None => db::accounts::create_account(pool, name, true, &hash, None).await.map_err(|e| e.to_string()),
    }
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
    let id = db::accounts::create_account(pool, name, is_host, &token_hash(&token), lifetime).await?;
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
        .ok_or_else(|| ApiError::Unauthorized("the Authorization header must be `Bearer <token>`".into()))?;
    let hash = token_hash(token.trim());
    match db::accounts::account_by_token(pool, &hash).await? {
        Some((me, token)) => Ok(Some(Caller { id: me.id, name: me.name, is_host: me.is_host, token })),
        None if db::accounts::token_expired(pool, &hash).await? => Err(ApiError::Unauthorized(
            "this token has expired (this server gives tokens a lifetime): make a new one with another of your tokens, \
             on your account's page (/me) or with `koth tokens new`, or ask a host"
                .into(),
        )),
        None => Err(ApiError::Unauthorized(
            "unknown token (revoked, or its account deleted): sign in with another of your tokens, or sign up for a new \
             account on the home page or with `koth signup NAME`"
                .into(),
        )),
    }
}

async fn require_caller(pool: &PgPool, headers: &HeaderMap) -> ApiResult<Caller> {
    caller(pool, headers).await?.ok_or_else(|| ApiError::Unauthorized("this needs an account: send `Authorization: Bearer <token>`".into()))
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
/// Whether `who` owns the bot (or is a host).
async fn may_see(pool: &PgPool, who: &Caller, bot: i64) -> ApiResult<bool> {
    if who.is_host {
        return Ok(true);
    }
    Ok(reads::bot_owner(pool, bot).await? == Some(who.id))
}

fn require_host(who: &Caller) -> ApiResult<()> {
    if who.is_host {
        Ok(())
    } else {
        Err(forbidden("only hosts may do this"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind's status, and the one body every error has.
    #[tokio::test]
    async fn every_kind_answers_its_status_with_the_error_body() {
        let m = || "what was wrong, and what to do".to_owned();
        let table = [
            (ApiError::BadRequest(m()), 400, None),
            (ApiError::Unauthorized(m()), 401, None),
            (ApiError::Forbidden(m()), 403, None),
            (ApiError::NotFound(m()), 404, None),
            (ApiError::Conflict(m()), 409, None),
            (ApiError::TooLarge(m()), 413, None),
            (ApiError::Unprocessable(m()), 422, None),
            (ApiError::TooMany { retry_after_secs: 2.1, message: m() }, 429, Some("3")),
            // Never "0": a client told to retry at once would hammer.
            (ApiError::TooMany { retry_after_secs: 0.2, message: m() }, 429, Some("1")),
            (ApiError::Internal(m()), 500, None),
            (ApiError::Unavailable(m()), 503, None),
        ];
        for (error, status, retry_after) in table {
            let kind = format!("{error:?}");
            let r = error.into_response();
            assert_eq!(r.status().as_u16(), status, "{kind}");
            assert_eq!(r.headers().get(axum::http::header::RETRY_AFTER).map(|v| v.to_str().unwrap()), retry_after, "{kind}");
            assert_eq!(r.headers()[axum::http::header::CONTENT_TYPE], "application/json", "{kind}");
            let body = axum::body::to_bytes(r.into_body(), 1 << 16).await.unwrap();
            assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), serde_json::json!({"error": m()}), "{kind}");
        }
    }

    /// A quota's refusal is a 429 with its own words and wait.
    #[test]
    fn over_a_limit_is_too_many() {
        let e: ApiError = OverLimit { retry_after_secs: 59.5, message: "30 versions an hour".into() }.into();
        assert!(
            matches!(&e, ApiError::TooMany { retry_after_secs, message } if *retry_after_secs == 59.5 && message == "30 versions an hour")
        );
        assert_eq!(e.status(), StatusCode::TOO_MANY_REQUESTS);
    }
}
