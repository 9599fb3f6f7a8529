//! Ladders: formats, creating, the leaderboard, pausing, their bots and
//! matches.

use super::*;

/// This resource's routes, each declared on its handler.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(ladders, create_ladder))
        .routes(routes!(formats))
        .routes(routes!(leaderboard))
        .routes(routes!(pause_ladder))
        .routes(routes!(resume_ladder))
        .routes(routes!(ladder_bots))
        .routes(routes!(ladder_matches))
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
    match koth_scheduler::db::store::create_ladder_by(&s.pool, &l.name, &game, &config, koth_scheduler::db::audit::Actor::Account(who.id))
        .await
    {
        Ok(id) => Ok((StatusCode::CREATED, Json(LadderCreated { id, name: l.name, game: game.name().into(), format })).into_response()),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(ApiError::Conflict(format!("a ladder named {:?} exists", l.name))),
        Err(e) => Err(e.into()),
    }
}

/// A game ladders may be made for: koth's own, or an added one that is
/// ready; the error says which games there are, or why this one is not.
async fn served_game(pool: &PgPool, name: &str) -> ApiResult<koth_ladder::served::ServedGame> {
    if let Some(g) = koth_games::GameKind::from_name(name) {
        return Ok(g.into());
    }
    match koth_scheduler::db::games::by_name(pool, name).await? {
        Some(g) if g.status == GameStatus::Ready => Ok(g.game),
        Some(g) if g.status == GameStatus::Validating => {
            Err(ApiError::Conflict(format!("game {name:?} is still being validated (its example bots are playing); try again shortly")))
        }
        Some(g) => {
            Err(ApiError::Conflict(format!("game {name:?} was refused by its validation: {}", g.log.unwrap_or_else(|| "no log".into()))))
        }
        None => {
            let mut names: Vec<String> = koth_games::GameKind::ALL.iter().map(|g| g.name().to_owned()).collect();
            names.extend(
                koth_scheduler::db::games::all(pool)
                    .await?
                    .into_iter()
                    .filter(|g| g.status == GameStatus::Ready)
                    .map(|g| g.game.name().to_owned()),
            );
            Err(bad(format!("unknown game {name:?}; this server plays {}", names.join(", "))))
        }
    }
}

/// The ladder's leaderboard, drawn by its format: the columns are the format's own.
#[utoipa::path(get, path = "/api/ladders/{id}/leaderboard", tag = "ladders", params(("id" = i64, Path, description = "The ladder")),
    responses((status = 200, body = Leaderboard)))]
async fn leaderboard(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Leaderboard>> {
    match koth_scheduler::db::results::standings(&s.pool, id).await {
        Ok(Some(standings)) => Ok(Json(Leaderboard { ladder: id, standings })),
        Ok(None) => Err(not_found(&format!("ladder {id}"))),
        Err(koth_scheduler::db::store::StoreError::Db(e)) => Err(e.into()),
        Err(koth_scheduler::db::store::StoreError::Invalid(why)) => Err(ApiError::Internal(why)),
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
