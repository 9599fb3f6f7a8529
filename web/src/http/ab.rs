//! The A/B tests' routes: "is version #N of my bot better than #M?",
//! asked of the server (`crate::db::ab` plays and counts the pairs;
//! docs/ab.md). Each handler is small and on its own, so that it moves
//! with its resource.

use super::*;
use koth_ladder::sprt::{self, Hypothesis};
use koth_scheduler::db::ab::{self, AbError, NewTest};

/// This resource's routes, each declared on its handler.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(start_ab, bot_ab_tests)).routes(routes!(ab_test))
}

/// Start an A/B test of two compiled versions of one of the caller's bots:
/// pairs of unrated games on one seed with the seats swapped, within the
/// owner's fair share of the runners, until the sequential test says
/// "better" or "not better" or the pairs allowed are played. One test at a
/// time per bot.
#[utoipa::path(post, path = "/api/bots/{id}/ab", tag = "bots", security(("token" = [])),
    params(("id" = i64, Path, description = "The bot")), request_body = NewAbTest,
    responses((status = 201, body = AbTest),
              (status = 403, body = ErrorBody, description = "Not the bot's owner"),
              (status = 409, body = ErrorBody, description = "The bot has an A/B test running already"),
              (status = 422, body = ErrorBody, description = "A version cannot be tested (not compiled, refused, the same twice), or the bot is disabled")))]
pub(super) async fn start_ab(
    State(s): State<AppState>,
    ApiPath(id): ApiPath<i64>,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> ApiResult<Response> {
    let who = require_caller(&s.pool, &headers).await?;
    let r: NewAbTest =
        json_body(&body, r#"{"new": 2, "old": 1} (version numbers of the bot; optional: elo0, elo1, alpha, beta, max_pairs)"#)?;
    let hypothesis = Hypothesis::new(
        r.elo0.unwrap_or(sprt::DEFAULT_ELO0),
        r.elo1.unwrap_or(sprt::DEFAULT_ELO1),
        r.alpha.unwrap_or(sprt::DEFAULT_ALPHA),
        r.beta.unwrap_or(sprt::DEFAULT_BETA),
    )
    .map_err(|e| bad(e.to_string()))?;
    let seed = {
        use rand::Rng;
        (rand::thread_rng().gen::<u64>() >> 2) as i64
    };
    let t = NewTest {
        bot: id,
        account: who.id,
        new_number: r.new,
        old_number: r.old,
        hypothesis,
        max_pairs: r.max_pairs.unwrap_or(ab::DEFAULT_MAX_PAIRS),
        seed,
    };
    let test = match ab::start(&s.pool, &t).await {
        Ok(test) => test,
        Err(e) => return Err(ab_error(e)),
    };
    let info = ab::test(&s.pool, test).await?.ok_or_else(|| not_found(&format!("A/B test {test}")))?;
    Ok((StatusCode::CREATED, Json(info)).into_response())
}

fn ab_error(e: AbError) -> ApiError {
    match e {
        AbError::NotFound(m) => ApiError::NotFound(m),
        AbError::Forbidden(m) => ApiError::Forbidden(m),
        AbError::Invalid(m) => ApiError::Unprocessable(m),
        AbError::Running { message, .. } => ApiError::Conflict(message),
        AbError::Store(e) => e.into(),
    }
}

/// A bot's A/B tests, newest first, each with its tally, statistic,
/// verdict and games.
#[utoipa::path(get, path = "/api/bots/{id}/ab", tag = "bots", params(("id" = i64, Path, description = "The bot")),
    responses((status = 200, body = Vec<AbTest>)))]
pub(super) async fn bot_ab_tests(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Vec<AbTest>>> {
    bot_exists(&s.pool, id).await?;
    Ok(Json(ab::tests_of(&s.pool, id).await?))
}

/// One A/B test and where it stands.
#[utoipa::path(get, path = "/api/ab/{id}", tag = "bots", params(("id" = i64, Path, description = "The A/B test")),
    responses((status = 200, body = AbTest)))]
pub(super) async fn ab_test(State(s): State<AppState>, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<AbTest>> {
    ab::test(&s.pool, id).await?.map(Json).ok_or_else(|| not_found(&format!("A/B test {id}")))
}
