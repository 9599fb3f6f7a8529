//! Accounts and their tokens: sign-up, the caller's account, bots and
//! tokens, deleting an account.

use super::*;

/// This resource's routes, each declared on its handler.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_user))
        .routes(routes!(me, delete_me))
        .routes(routes!(my_bots))
        .routes(routes!(my_tokens, new_token_route))
        .routes(routes!(revoke_token))
        .routes(routes!(rotate_token))
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
    match db::accounts::sign_up(&s.pool, &u.name, address, &s.options.signups, &token_hash(&token), s.options.token_lifetime).await {
        Ok(id) => Ok((StatusCode::CREATED, Json(NewAccount { id, name: u.name, token })).into_response()),
        Err(db::accounts::SignupError::OverLimit(e)) => Err(e.into()),
        Err(db::accounts::SignupError::Db(sqlx::Error::Database(e))) if e.is_unique_violation() => {
            Err(ApiError::Conflict(format!("the name {:?} is taken", u.name)))
        }
        Err(db::accounts::SignupError::Db(e)) => Err(e.into()),
    }
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
    Ok(Json(db::accounts::tokens(&s.pool, who.id, who.token).await?))
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
    let info = db::accounts::create_token(&s.pool, who.id, &r.name, &token_hash(&token), s.options.token_lifetime).await?;
    Ok((StatusCode::CREATED, Json(NewToken { token, info })).into_response())
}

/// Revoke one of the caller's tokens (the current one too): it stops
/// working at once.
#[utoipa::path(delete, path = "/api/me/tokens/{id}", tag = "accounts", security(("token" = [])),
    params(("id" = i64, Path, description = "The token's id (GET /api/me/tokens)")),
    responses((status = 204, description = "Revoked")))]
async fn revoke_token(State(s): State<AppState>, ApiPath(id): ApiPath<i64>, headers: HeaderMap) -> ApiResult<StatusCode> {
    let who = require_caller(&s.pool, &headers).await?;
    if !db::accounts::revoke_token(&s.pool, who.id, id).await? {
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
    match db::accounts::rotate_token(&s.pool, who.id, id, &token_hash(&token), s.options.token_lifetime).await? {
        Some(info) => Ok((StatusCode::CREATED, Json(NewToken { token, info })).into_response()),
        None => Err(not_found(&format!("token {id} of yours"))),
    }
}

/// Delete the caller's account: every token revoked, every bot withdrawn;
/// the name stays taken and the matches stay in history.
#[utoipa::path(delete, path = "/api/me", tag = "accounts", security(("token" = [])), responses((status = 200, body = AccountDeleted)))]
async fn delete_me(State(s): State<AppState>, headers: HeaderMap) -> ApiResult<Json<AccountDeleted>> {
    let who = require_caller(&s.pool, &headers).await?;
    let bots_withdrawn = db::accounts::delete_account(&s.pool, who.id).await?;
    Ok(Json(AccountDeleted { id: who.id, bots_withdrawn }))
}
