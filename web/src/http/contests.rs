//! Contests: a ladder's deadline, its finals and their standings.

use super::*;
use crate::usecase::finals;

/// This resource's routes, each declared on its handler.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(contest))
        .routes(routes!(set_deadline))
        .routes(routes!(start_finals))
        .routes(routes!(final_standings_csv))
}

async fn contest_of(pool: &PgPool, id: i64) -> ApiResult<Contest> {
    let mut conn = pool.acquire().await?;
    let row = db::contests::contest(&mut conn, id).await?.ok_or_else(|| not_found(&format!("ladder {id}")))?;
    drop(conn);
    let standings = match row.final_standings.clone() {
        Some(frozen) => Some(frozen),
        None if row.finals.is_some() => db::contests::finals_standings(pool, id).await?,
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
        played_out: db::contests::played_out(pool, id).await?,
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
    match db::contests::set_deadline(&s.pool, id, &deadline, who.id).await? {
        DeadlineSet::Done => Ok(Json(contest_of(&s.pool, id).await?)),
        DeadlineSet::NoSuchLadder => Err(not_found(&format!("ladder {id}"))),
        DeadlineSet::FinalsStarted => {
            Err(ApiError::Conflict("the finals have started: the deadline that chose their entrants stays".into()))
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
    // The facts the decision needs, then the decision (`usecase::finals`).
    let now = contest_of(&s.pool, id).await?;
    let mut conn = s.pool.acquire().await?;
    let ladder = koth_scheduler::db::store::ladder_config(&mut conn, id).await?;
    drop(conn);
    let versions_in_progress = db::contests::versions_in_progress(&s.pool, id).await?;
    let standings = koth_scheduler::db::results::standings(&s.pool, id).await?;
    let playable: Vec<i64> = reads::ladder_bots(&s.pool, id)
        .await?
        .into_iter()
        .filter(|b| b.disabled_reason.is_none() && b.current_version.is_some())
        .map(|b| b.id)
        .collect();
    let facts = finals::Facts {
        phase: now.phase,
        deadline: now.deadline.as_deref(),
        ladder: ladder.as_ref().map(|(game, config)| (game, config)),
        versions_in_progress,
        standings: standings.as_ref(),
        playable: &playable,
    };
    let plan = finals::plan(id, &r, &facts)?;
    if !db::contests::start_finals(&s.pool, id, &plan, who.id).await? {
        return Err(ApiError::Conflict("the finals could not start: they have just been started, or the deadline was just moved".into()));
    }
    Ok(Json(contest_of(&s.pool, id).await?))
}

/// The final standings as CSV (one line per place), once the finals are
/// over; the same as JSON is the contest's `standings`.
#[utoipa::path(get, path = "/api/ladders/{id}/final-standings.csv", tag = "contests", params(("id" = i64, Path, description = "The ladder")),
    responses((status = 200, content_type = "text/csv", body = String), (status = 404, body = ErrorBody, description = "No such ladder, or its finals are not over")))]
async fn final_standings_csv(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Response> {
    let c = contest_of(&s.pool, id).await?;
    let Some(standings) = c.standings.filter(|_| c.phase == koth_ladder::contest::Phase::Final) else {
        return Err(ApiError::NotFound(format!(
            "no final standings yet: the contest is {}; they are final once its finals are over",
            c.phase.as_str()
        )));
    };
    let disposition = format!("attachment; filename=\"ladder-{id}-final-standings.csv\"");
    Ok((
        [(axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()), (axum::http::header::CONTENT_DISPOSITION, disposition)],
        koth_ladder::contest::to_csv(&standings),
    )
        .into_response())
}
