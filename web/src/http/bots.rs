//! Bots and their versions: submitting, reading, disabling, deleting,
//! compile logs and sources.

use super::*;
use crate::usecase::submit;

/// This resource's routes, each declared on its handler.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
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
    // The facts the decision needs, then the decision (`usecase::submit`).
    let exists = reads::ladder_exists(&s.pool, ladder).await?;
    let closed_since = if exists { db::contests::submissions_closed(&s.pool, ladder).await? } else { None };
    let limits = if who.is_host { None } else { Some(s.options.submission_limits()) };
    let usage = match limits {
        Some(_) => Some(db::accounts::submission_usage(&mut *s.pool.acquire().await?, who.id).await?),
        None => None,
    };
    let request = submit::Request { ladder, name: &name, file: q.file.as_deref() };
    let facts = submit::Facts { ladder_exists: exists, closed_since: closed_since.as_deref(), quota: limits.zip(usage.as_ref()) };
    let file = submit::admit(&request, &facts)?.to_owned();
    let bytes = body.to_vec();
    let sub = tokio::task::spawn_blocking(move || Submission::from_upload(&file, &bytes, &SubmissionLimits::default()))
        .await
        .map_err(|e| ApiError::Internal(format!("checking the upload failed: {e}")))?
        .map_err(|e| ApiError::Unprocessable(e.to_string()))?;
    let known = runners::availability(&s.pool).await?;
    submit::language_runs(sub.language, known.as_ref(), koth_runner::language::all())?;
    let stored = sub.source_tar();
    let language = sub.language.name.clone();
    let hash = sub.source_hash();
    let new = koth_scheduler::db::store::NewVersion {
        ladder,
        bot_name: &name,
        owner: who.id,
        owner_is_host: who.is_host,
        language: &language,
        main: &sub.main,
        source: &stored,
        source_hash: &hash,
    };
    use koth_scheduler::db::store::SubmitError;
    // The store checks the deadline, the owner and the limits again, in
    // the transaction that writes the version.
    let done = match koth_scheduler::db::store::submit(&s.pool, &new, limits.as_ref()).await {
        Ok(done) => done,
        Err(SubmitError::OverLimit(e)) => return Err(submit::Refusal::OverLimit(e).into()),
        Err(SubmitError::Closed(deadline)) => return Err(submit::Refusal::Closed { ladder, deadline }.into()),
        Err(SubmitError::NotYours) => return Err(submit::Refusal::NotYours.into()),
        Err(SubmitError::NoLadder) => return Err(submit::Refusal::NoLadder(ladder).into()),
        Err(SubmitError::Db(e)) => return Err(e.into()),
    };
    let status = if done.created { StatusCode::CREATED } else { StatusCode::ACCEPTED };
    let body =
        Submitted { bot: done.bot, version: done.version, number: done.number, compile_job: done.compile_job, language, main: sub.main };
    Ok((status, Json(body)).into_response())
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
