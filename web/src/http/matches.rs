//! Matches: their seats, replays, frames, live view and stderr; drawing a
//! sent replay; challenges and cancelling.

use super::*;
use crate::usecase::challenge;

/// This resource's routes, each declared on its handler.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(match_info))
        .routes(routes!(replay))
        .routes(routes!(frames))
        .routes(routes!(live))
        .routes(routes!(draw_replay))
        .routes(routes!(stderr))
        .routes(routes!(seat_data))
        .routes(routes!(challenge))
        .routes(routes!(cancel_match))
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
/// ([`koth_scheduler::packed`]); a client that accepts `zstd` and owns no seat
/// gets it as stored. Adding the stderr takes one of the drawing slots
/// ([`crate::drawing`]).
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
        // Expanding a replay (up to 64 MiB of JSON) and writing the stderr
        // into it is CPU that any owner can ask for again and again: it
        // takes a drawing slot, at nice 19, as drawing a match does.
        let slot = s.drawing.stored().await;
        let json = crate::drawing::run(slot, move || {
            let json = replays::to_json(&stored)?;
            koth_games::replay::with_stderr(&json, &theirs)
        })
        .await
        .map_err(|e| ApiError::Internal(format!("adding the stderr: {e}")))?
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
        Some(None) => Err(ApiError::Conflict(format!("match {id} has not finished; its replay comes when it does"))),
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
    ApiError::Internal(format!("match {id}'s stored replay is damaged: {why}"))
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
    let drawn = crate::drawing::run(slot, move || -> Result<_, ApiError> {
        let unprocessable = |e: String| ApiError::Unprocessable(format!("match {id}'s replay cannot be drawn: {e}"));
        let (replay, repacked) = match &stored {
            StoredReplay::Packed(z) => {
                let json = packed::unzstd(z).map_err(|e| ApiError::Internal(format!("match {id}'s stored replay is damaged: {e}")))?;
                (koth_games::replay::Replay::from_json(&json).map_err(unprocessable)?, None)
            }
            StoredReplay::Json(v) => {
                let r = koth_games::replay::Replay::from_value(v).map_err(unprocessable)?;
                let p = PackedReplay::pack(&r);
                (r, Some(p))
            }
        };
        let frames = koth_games::replay::frames(&replay).map_err(unprocessable)?;
        let json = serde_json::to_vec(&frames).map_err(|e| ApiError::Internal(e.to_string()))?;
        Ok((packed::gzip(&json), repacked))
    });
    let (gz, repacked) = drawn.await.map_err(|e| ApiError::Internal(format!("drawing the replay: {e}")))??;
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
    let drawn = drawn.await.map_err(|e| ApiError::Internal(format!("drawing the match: {e}")))?;
    drawn.map(Json).map_err(|e| ApiError::Unprocessable(format!("match {id} cannot be drawn while it runs: {e}")))
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
        return Err(ApiError::TooMany { retry_after_secs: crate::drawing::UPLOADED_RETRY_AFTER_SECS, message: msg.into() });
    };
    let body = axum::body::to_bytes(req.into_body(), MAX_BODY)
        .await
        .map_err(|e| ApiError::TooLarge(format!("the replay could not be read whole (at most 40 MiB): {e}")))?;
    let drawn = crate::drawing::run(slot, move || -> Result<DrawnReplay, String> {
        let replay = koth_games::replay::Replay::from_json(&body)?;
        let frames = koth_games::replay::frames(&replay)?;
        let frames = serde_json::to_value(&frames).map_err(|e| e.to_string())?;
        Ok(DrawnReplay { info: MatchInfo::of_local_replay(&replay), frames })
    })
    .await
    .map_err(|e| ApiError::Internal(format!("drawing the replay: {e}")))?;
    drawn.map(|d| Json(d).into_response()).map_err(|e| ApiError::Unprocessable(format!("this file is not a replay koth can draw: {e}")))
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

/// The snapshot of a seat's data its match started from (its owner,
/// hosts): a tar archive, for `koth replay rerun --data`
/// (docs/replay.md, "Bot data").
#[utoipa::path(get, path = "/api/matches/{id}/data/{seat}", tag = "matches", security(("token" = [])),
    params(("id" = i64, Path, description = "The match"), ("seat" = i32, Path, description = "The seat, from 0")),
    responses((status = 200, content_type = "application/x-tar", body = Vec<u8>,
               description = "The snapshot (a deterministic tar; its sha256 is the seat's data.started_from)"),
              (status = 404, body = ErrorBody, description = "No such seat, or it carried no data")))]
async fn seat_data(State(s): State<AppState>, ApiPath((id, seat)): ApiPath<(i64, i32)>, headers: HeaderMap) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    let (owner, archive) = koth_scheduler::db::bot_data::seat_snapshot(&s.pool, id, seat)
        .await?
        .ok_or_else(|| not_found(&format!("seat {seat} of match {id}")))?;
    if !who.is_host && owner != who.id {
        return Err(forbidden("only the bot's owner can read its data"));
    }
    let archive = archive.ok_or_else(|| {
        ApiError::NotFound(format!("seat {seat} of match {id} carried no data (its ladder keeps none, or the match was not played)"))
    })?;
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "application/x-tar".to_owned()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"match-{id}-seat-{seat}-data.tar\"")),
        ],
        archive,
    )
        .into_response())
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

/// An unrated match between chosen bots, seats in that order; one of them must be the caller's.
#[utoipa::path(post, path = "/api/challenges", tag = "matches", security(("token" = [])), request_body = NewChallenge,
    responses((status = 201, body = ChallengeCreated),
              (status = 422, body = ErrorBody, description = "A bot cannot play now (no ready version, disabled, another ladder, twice)"),
              (status = 429, body = ErrorBody, description = "Too many of the caller's challenges are queued or playing; see Retry-After")))]
async fn challenge(State(s): State<AppState>, headers: HeaderMap, ApiBody(body): ApiBody) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    let c: NewChallenge = json_body(&body, r#"{"ladder": 1, "bots": [1, 2]}"#)?;
    // The facts the decision needs, then the decision (`usecase::challenge`).
    let mut conn = s.pool.acquire().await?;
    let game = koth_scheduler::db::store::ladder_config(&mut conn, c.ladder).await?.map(|(kind, _)| kind);
    drop(conn);
    let callers_bots = if who.is_host { None } else { Some(reads::owned_among(&s.pool, &c.bots, who.id).await?) };
    let seats = game.as_ref().map(|g| {
        let (lo, hi) = g.seat_range();
        (g.name(), lo, hi)
    });
    challenge::admit(&challenge::Request { ladder: c.ladder, bots: &c.bots }, &challenge::Facts { game: seats, callers_bots })?;
    let seed = {
        use rand::Rng;
        (rand::thread_rng().gen::<u64>() >> 1) as i64
    };
    let limit = if who.is_host { None } else { Some(s.options.challenges_in_flight) };
    let id = match koth_scheduler::db::store::create_challenge(&s.pool, c.ladder, &c.bots, seed, who.id, limit).await {
        Ok(id) => id,
        Err(koth_scheduler::db::store::ChallengeError::Invalid(why)) => return Err(challenge::Refusal::CannotPlay(why).into()),
        Err(koth_scheduler::db::store::ChallengeError::OverLimit(e)) => return Err(challenge::Refusal::OverLimit(e).into()),
        // The database failing is not the caller's fault: 503, try again.
        Err(koth_scheduler::db::store::ChallengeError::Db(e)) => return Err(e.into()),
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
    let requester = koth_scheduler::db::store::match_requester(&s.pool, id).await?.ok_or_else(|| not_found(&format!("match {id}")))?;
    if !who.is_host && requester != Some(who.id) {
        return Err(forbidden("only who asked for a challenge, or a host, can cancel a match"));
    }
    let why =
        if who.is_host { format!("cancelled by {}, a host", who.name) } else { format!("cancelled by {}, who asked for it", who.name) };
    match koth_scheduler::db::store::cancel_match(&s.pool, id, who.id, &why).await? {
        koth_scheduler::db::store::Cancelled::Done => Ok(Json(MatchCancelled { id, reason: why })),
        koth_scheduler::db::store::Cancelled::TooLate(state) => Err(ApiError::Conflict(format!(
            "match {id} cannot be cancelled: {}",
            if state == MatchState::Queued { "a runner is playing it" } else { "it is over" }
        ))),
        koth_scheduler::db::store::Cancelled::NoSuchMatch => Err(not_found(&format!("match {id}"))),
    }
}
