//! Games, their folders and starter kits, and the languages runners offer.

use super::*;
use crate::usecase::submit::language_can;

/// This resource's routes, each declared on its handler.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(games, add_game))
        .routes(routes!(game_info))
        .routes(routes!(game_folder))
        .routes(routes!(starter))
        .routes(routes!(languages))
}

/// The games this server plays: koth's own and those hosts added (with
/// their status); seats, time per move, what a timeout does.
#[utoipa::path(get, path = "/api/games", tag = "games", responses((status = 200, body = Vec<GameInfo>)))]
async fn games(State(s): State<AppState>) -> ApiResult<Json<Vec<GameInfo>>> {
    let known = runners::availability(&s.pool).await?;
    let mut all: Vec<GameInfo> = koth_games::GameKind::ALL.iter().map(|g| builtin_info(*g, known.as_ref())).collect();
    for g in koth_scheduler::db::games::all(&s.pool).await? {
        let kits = added_kits(&s.pool, g.game.name()).await?;
        all.push(added_info(&g, starter_infos(g.game.name(), &kits, known.as_ref())));
    }
    Ok(Json(all))
}

fn builtin_info(g: koth_games::GameKind, known: Option<&std::collections::BTreeMap<String, Can>>) -> GameInfo {
    let starters = starter_infos(g.name(), &builtin_kits(g.name()), known);
    game_info_of(&g.into(), GameStatus::Ready, None, None, starters)
}

fn added_info(g: &koth_scheduler::db::games::AddedGame, starters: Vec<StarterInfo>) -> GameInfo {
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
    let Some(tar) = koth_scheduler::db::games::source_by_name(pool, game).await? else { return Ok(Vec::new()) };
    let package = koth_runner::game::GamePackage::from_tar(&tar).map_err(ApiError::Internal)?;
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
    let added = koth_scheduler::db::games::by_name(&s.pool, &game).await?.ok_or_else(|| not_found(&format!("game {game:?}")))?;
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
            .map_err(|e| ApiError::Internal(format!("checking the upload failed: {e}")))?
            .map_err(ApiError::Unprocessable)?;
    let name = package.manifest.name.clone();
    let manifest = serde_json::to_value(&package.manifest).map_err(|e| ApiError::Internal(e.to_string()))?;
    // The ladder it would get must be one this server can run.
    koth_ladder::served::ServedGame::Added(Box::new(package.manifest.clone())).default_ladder().map_err(ApiError::Unprocessable)?;
    match koth_scheduler::db::games::add(&s.pool, &name, &manifest, &package.to_tar(), &package.source_hash(), who.id).await? {
        koth_scheduler::db::games::Added::Queued(_) => Ok((
            StatusCode::ACCEPTED,
            Json(GameAdded {
                url: format!("/api/games/{name}"),
                name,
                status: GameStatus::Validating,
                example_bots: package.example_bots(),
            }),
        )
            .into_response()),
        koth_scheduler::db::games::Added::Taken(status) => Err(ApiError::Conflict(format!(
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
    let tar = koth_scheduler::db::games::source_by_name(&s.pool, &game).await?.ok_or_else(|| not_found(&format!("added game {game:?}")))?;
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
        let exists =
            koth_games::GameKind::from_name(&game).is_some() || koth_scheduler::db::games::by_name(&s.pool, &game).await?.is_some();
        return Err(if exists {
            ApiError::NotFound(format!("game {game:?} has no starter kits (its folder has no starters/ and no one-file example bots)"))
        } else {
            not_found(&format!("game {game:?}"))
        });
    }
    let infos = starter_infos(&game, &kits, runners::availability(&s.pool).await?.as_ref());
    let offered: Vec<&str> = infos.iter().filter(|k| k.available).map(|k| k.language.as_str()).collect();
    let offered =
        if offered.is_empty() { "none (no runner here can run a language it has a kit in)".to_owned() } else { offered.join(", ") };
    let Some(i) = kits.iter().position(|(_, l, _)| l.name == language) else {
        return Err(ApiError::NotFound(format!("{game} has no starter kit in {language:?}; this server offers it in: {offered}")));
    };
    if let Some(why) = &infos[i].unavailable {
        return Err(ApiError::NotFound(format!(
            "this server cannot run {} bots ({why}), so it offers no {game} kit in it; it offers: {offered}",
            infos[i].display
        )));
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
