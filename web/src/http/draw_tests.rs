//! `POST /api/replays/frames` under a flood: one replay drawn at a time,
//! the others refused at once.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::routing::post;
use axum::Router;
use tower::ServiceExt;

use super::{draw_replay, ApiOptions, AppState};

const REPLAY: &str = include_str!("../../../games/tests/golden/replay.json");

/// The route alone, with its own drawing slots and a database it never
/// reaches (drawing a sent replay reads none).
fn route() -> (Router, Arc<crate::drawing::Drawing>) {
    let pool = sqlx::PgPool::connect_lazy("postgres://nobody@127.0.0.1:1/none").unwrap();
    let drawing = Arc::new(crate::drawing::Drawing::default());
    let state = AppState { pool, drawing: drawing.clone(), options: ApiOptions::default() };
    (Router::new().route("/api/replays/frames", post(draw_replay)).with_state(state), drawing)
}

async fn post_replay(app: &Router) -> (StatusCode, Option<String>, serde_json::Value) {
    let req = Request::post("/api/replays/frames").header("content-type", "application/json").body(Body::from(REPLAY)).unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let retry = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
    (status, retry, serde_json::from_slice(&bytes).unwrap())
}

/// Six callers while a replay is being drawn (its slot held here): each is
/// answered 429 with `Retry-After` and a JSON reason while the slot is
/// still held, so none waited for it; once it is free, a replay is drawn.
#[tokio::test]
async fn callers_beyond_the_one_drawing_get_429_at_once() {
    let (app, drawing) = route();
    let busy = drawing.uploaded().expect("the slot is free");
    let flood: Vec<_> = (0..6)
        .map(|_| {
            tokio::spawn({
                let app = app.clone();
                async move { post_replay(&app).await }
            })
        })
        .collect();
    for caller in flood {
        let (status, retry, body) = caller.await.unwrap();
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
        assert_eq!(retry.as_deref(), Some("5"));
        assert!(body["error"].as_str().unwrap().contains("one at a time"), "{body}");
    }
    drop(busy);
    let (status, _, body) = post_replay(&app).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["info"]["game"], "target", "{body}");
    assert!(body["frames"].is_object(), "{body}");
}
