//! The web pages, and the layers every HTTP request goes through.
//!
//! **Pages.** No separate front-end build: each page is a small HTML shell
//! that names what it shows (`<body data-page="bot" data-id="7">`), one
//! script (`web/static/app.js`) and one style sheet (`web/static/app.css`), embedded in
//! the binary. The script reads everything through the public JSON API, so
//! the pages can show nothing the API would not: who may read a bot's
//! sources, compile logs and stderr is decided in one place,
//! [`crate::http`]. Signing in stores the account's API token in the
//! browser's local storage and sends it as `Authorization: Bearer`.
//! The protocol pages for bot authors are the Markdown files of
//! `docs/games/`, rendered on the server.
//!
//! | path | page |
//! |---|---|
//! | `/` | the front door: what koth is, where authors and hosts start, each ladder's leaders, the matches playing now, the ladders, signing in or up |
//! | `/ladders/{id}` | leaderboard, bots and recent matches of a ladder |
//! | `/bots/{id}` | a bot: versions, compile log (owner), A/B tests of its versions (and, for its owner, the form that starts one), rating plot, matches, head-to-head |
//! | `/matches/{id}` | a match: seats, outcomes and the replay viewer |
//! | `/submit` | the submit form, then the compile and first matches as they happen |
//! | `/me` | the signed-in author's bots on every ladder, and their API tokens |
//! | `/replay` | a replay file from the reader's machine, dropped or chosen, in the match viewer |
//! | `/audit` | hosts: the audit trail, newest first, filtered by ladder, bot or kind |
//! | `/games`, `/games/{name}` | how bots talk to each game |
//! | `/games/authoring` | for game authors: a game as a folder, the referee protocol |
//!
//! The same match page serves one replay file on an author's machine
//! ([`local_viewer`], `koth replay view`).
//!
//! **Safety.** Text from users and bots (names, stderr, compile logs) is
//! only ever put in the page as text (`textContent`), never as HTML; the
//! Content-Security-Policy allows scripts and styles from this origin only,
//! so even a mistake there would not run injected script.
//!
//! **Operations.** Every request is logged by tracing (method, path,
//! status, latency; JSON lines with `KOTH_LOG_FORMAT=json`) and counted in
//! Prometheus metrics by route and status, with a latency histogram, served
//! at `/metrics` beside the queue's gauges.

use std::sync::LazyLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Path, Request};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

const APP_JS: &str = include_str!("../static/app.js");
const APP_CSS: &str = include_str!("../static/app.css");

/// The protocol pages: (game, Markdown).
const GAME_DOCS: &[(&str, &str)] = &[
    ("flit", include_str!("../../docs/games/flit.md")),
    ("slime", include_str!("../../docs/games/slime.md")),
    ("linkage", include_str!("../../docs/games/linkage.md")),
    ("target", include_str!("../../docs/games/target.md")),
    ("snake", include_str!("../../docs/games/snake.md")),
];
const GAMES_INDEX: &str = include_str!("../../docs/games/README.md");
/// For game authors: a game as a folder, the referee protocol.
const AUTHORING: &str = include_str!("../../docs/games/authoring.md");

const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// The API's routes, the pages and the layers, as one service.
pub(crate) fn service<S: Clone + Send + Sync + 'static>(api: Router<S>, state: S) -> Router {
    let router = Router::new()
        .merge(api)
        .route("/", get(|| page("koth", "home", None)))
        .route("/ladders/{id}", get(|Path(id): Path<i64>| page("Ladder", "ladder", Some(id))))
        .route("/bots/{id}", get(|Path(id): Path<i64>| page("Bot", "bot", Some(id))))
        .route("/matches/{id}", get(|Path(id): Path<i64>| page("Match", "match", Some(id))))
        .route("/submit", get(|| page("Submit a bot", "submit", None)))
        .route("/me", get(|| page("Your account", "me", None)))
        .route("/replay", get(|| page("Open a replay", "replay", None)))
        .route("/audit", get(|| page("Audit trail", "audit", None)))
        .route("/games", get(games_index))
        .route("/games/authoring", get(authoring))
        .fallback(not_found)
        .with_state(state);
    layers(with_assets(router))
}

/// The pages' one script and one style sheet.
fn with_assets(router: Router) -> Router {
    router
        .route("/static/app.js", get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }))
        .route("/static/app.css", get(|| async { asset("text/css; charset=utf-8", APP_CSS) }))
}

/// What every request goes through: JSON errors for the API, compression,
/// metrics, the security headers, the request log.
fn layers(router: Router) -> Router {
    router
        .layer(middleware::from_fn(json_errors))
        // Replays and frames are large and repetitive JSON: gzip when the
        // client accepts it (a long Flit replay shrinks ~10×).
        .layer(tower_http::compression::CompressionLayer::new())
        .layer(middleware::from_fn(measure))
        .layer(middleware::from_fn(security_headers))
        .layer(
            tower_http::trace::TraceLayer::new_for_http()
                .make_span_with(tower_http::trace::DefaultMakeSpan::new().level(tracing::Level::INFO))
                .on_request(())
                .on_response(tower_http::trace::DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
}

/// One replay on this machine, with the site's own viewer (`koth replay
/// view`, `koth match --open`): the match page of a match numbered 0, and
/// the three API routes it reads, answered from the replay and its
/// `frames` (drawn by the caller, who has the game's referee). Nothing else: no accounts, no ladders; the header's
/// site links are hidden (`data-local`).
pub fn local_viewer(replay: &koth_games::replay::Replay, frames: &koth_games::replay::Frames) -> Result<Router, String> {
    use axum::body::Bytes;
    let json = |v: Bytes| ([(header::CONTENT_TYPE, "application/json")], v).into_response();
    let info = Bytes::from(serde_json::to_vec(&koth_scheduler::types::MatchInfo::of_local_replay(replay)).map_err(|e| e.to_string())?);
    let replay_json = Bytes::from(serde_json::to_vec(replay).map_err(|e| e.to_string())?);
    let frames_json = Bytes::from(serde_json::to_vec(frames).map_err(|e| e.to_string())?);
    let router = Router::new()
        // With its query: `/?turn=N` opens the match page at that turn.
        .route(
            "/",
            get(|uri: axum::http::Uri| async move {
                axum::response::Redirect::to(&format!("/matches/0{}", uri.query().map(|q| format!("?{q}")).unwrap_or_default()))
            }),
        )
        .route(
            "/matches/0",
            get(|| async {
                Html(shell("Replay", "data-page=\"match\" data-id=\"0\" data-local=\"1\"", "<p class=\"loading\">Loading…</p>"))
            }),
        )
        .route(
            "/api/matches/0",
            get(move || {
                let b = info.clone();
                async move { json(b) }
            }),
        )
        .route(
            "/api/matches/0/replay",
            get(move || {
                let b = replay_json.clone();
                async move { json(b) }
            }),
        )
        .route(
            "/api/matches/0/frames",
            get(move || {
                let b = frames_json.clone();
                async move { json(b) }
            }),
        )
        .fallback(local_not_found);
    Ok(layers(with_assets(router)))
}

/// Anything but the replay, on the author's machine: JSON for the API's
/// paths; a page that leads back to the replay for the rest (no site
/// around it, so none of the site's links).
async fn local_not_found(req: Request) -> Response {
    if req.uri().path().starts_with("/api/") {
        return not_found(req).await;
    }
    (
        StatusCode::NOT_FOUND,
        Html(shell(
            "Not found",
            "data-page=\"none\" data-local=\"1\"",
            "<h1>Not found</h1><p>This is koth's replay viewer on your machine: it shows one replay, and nothing of a \
             site.</p><p><a href=\"/matches/0\" id=\"back-to-replay\">Back to the replay</a></p>",
        )),
    )
        .into_response()
}

/// A page's HTML shell; `app.js` fills `<main>` from the API.
async fn page(title: &str, kind: &str, id: Option<i64>) -> Html<String> {
    let id = id.map(|i| format!(" data-id=\"{i}\"")).unwrap_or_default();
    Html(shell(title, &format!("data-page=\"{kind}\"{id}"), "<p class=\"loading\">Loading…</p>"))
}

fn shell(title: &str, body_attrs: &str, main: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · koth</title><link rel=\"stylesheet\" href=\"/static/app.css\">\
         <script defer src=\"/static/app.js\"></script></head>\n<body {body_attrs}>\
         <header><a class=\"brand\" href=\"/\">koth</a><nav><a href=\"/\">Ladders</a><a href=\"/submit\">Submit</a>\
         <a href=\"/games\">Protocols</a><a href=\"/api/openapi.json\">API</a></nav><span id=\"account\"></span></header>\n\
         <main id=\"main\">{main}</main></body></html>\n"
    )
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// Markdown to HTML; links between the docs (`flit.md`) become page links.
fn markdown(text: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let events = Parser::new_ext(text, Options::ENABLE_TABLES).map(|e| match e {
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            let dest = match dest_url.strip_suffix(".md") {
                Some(stem) if !stem.contains('/') && stem != "README" => format!("/games/{stem}").into(),
                _ => dest_url,
            };
            Event::Start(Tag::Link { link_type, dest_url: dest, title, id })
        }
        // The docs are ours, but raw HTML in them would be shown, not run.
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        e => e,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

async fn games_index() -> Html<String> {
    Html(shell("Protocols", "data-page=\"doc\"", &format!("<article class=\"doc\">{}</article>", markdown(GAMES_INDEX))))
}

async fn authoring() -> Html<String> {
    Html(shell(
        "Writing a game",
        "data-page=\"doc\"",
        &format!("<article class=\"doc\">{}<p><a href=\"/games\">All games</a></p></article>", markdown(AUTHORING)),
    ))
}

/// A game's page: koth's own games' protocols; a game a host added
/// (`added`: the API found it) is drawn by the script from the API.
pub(crate) fn game_page(name: &str, added: bool, kits: &[koth_scheduler::types::StarterInfo]) -> Response {
    if added && koth_games::external::check_name(name).is_ok() {
        return Html(shell(name, &format!("data-page=\"game\" data-game=\"{name}\""), "<p class=\"loading\">Loading…</p>")).into_response();
    }
    match GAME_DOCS.iter().find(|(g, _)| *g == name) {
        Some((g, md)) => Html(shell(
            &format!("{g} protocol"),
            &format!("data-page=\"doc\" data-game=\"{g}\""),
            &format!("<article class=\"doc\">{}{}<p><a href=\"/games\">All games</a></p></article>", starter_kits(g, kits), markdown(md)),
        ))
        .into_response(),
        None => not_found_page(&format!("koth plays no game called {name:?}")).into_response(),
    }
}

/// The game's starter kits, first on its page: what an author needs before
/// the protocol's details. Only kits this server's runners can run are
/// offered; the others are named, with why not.
fn starter_kits(game: &str, kits: &[koth_scheduler::types::StarterInfo]) -> String {
    let esc = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    let offered: Vec<&koth_scheduler::types::StarterInfo> = kits.iter().filter(|k| k.available).collect();
    let links: Vec<String> = offered
        .iter()
        .map(|k| {
            format!(
                "<li><a href=\"{url}\" download=\"{file}\" data-language=\"{lang}\">{display}</a> <code>{file}</code></li>",
                url = esc(&k.url),
                lang = esc(&k.language),
                display = esc(&k.display),
                file = esc(&k.file)
            )
        })
        .collect();
    let missing: Vec<String> = kits
        .iter()
        .filter(|k| !k.available)
        .map(|k| {
            format!("<li data-language=\"{}\">{}: {}</li>", esc(&k.language), esc(&k.display), esc(k.unavailable.as_deref().unwrap_or("")))
        })
        .collect();
    let unavailable = if missing.is_empty() {
        String::new()
    } else {
        format!(
            "<p>Not offered: this server's runners cannot run bots in these languages, so kits in them would not be played here.</p>\
             <ul class=\"kits-unavailable\" id=\"kits-unavailable\">{}</ul>",
            missing.join("")
        )
    };
    let intro = match offered.first() {
        Some(k) => format!(
            "<p>A bot that plays {game} legally, in each of these languages: save it under its name, try it with \
             <code>koth match --game {game} {file}</code> (add <code>--open</code> to watch), make it smarter, and \
             <a href=\"/submit\">submit it</a>.</p><ul class=\"kits\">{}</ul>",
            links.join(""),
            file = esc(&k.file)
        ),
        None if kits.is_empty() => return String::new(),
        None => "<p>This server's runners can run none of the languages this game has kits in.</p>".to_owned(),
    };
    format!("<section id=\"starter-kits\"><h2>Starter kits</h2>{intro}{unavailable}</section>")
}

fn not_found_page(msg: &str) -> (StatusCode, Html<String>) {
    let msg = msg.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    (
        StatusCode::NOT_FOUND,
        Html(shell(
            "Not found",
            "data-page=\"none\"",
            &format!("<h1>Not found</h1><p>{msg}</p><p><a href=\"/\">Back to the ladders</a></p>"),
        )),
    )
}

/// JSON for the API's paths, a page for the rest.
async fn not_found(req: Request) -> Response {
    let path = req.uri().path();
    if path.starts_with("/api/") {
        let error = "no such endpoint; the API's routes are in /api/openapi.json";
        (StatusCode::NOT_FOUND, axum::Json(serde_json::json!({ "error": error }))).into_response()
    } else {
        not_found_page(&format!("there is no page at {path}")).into_response()
    }
}

/// Every error of the API is JSON, the framework's own rejections too (a
/// wrong method, a body over the limit seen by a layer, ...): a non-JSON
/// error on an `/api/` path is wrapped as `{"error": ...}` with its text.
async fn json_errors(req: Request, next: Next) -> Response {
    let api = req.uri().path().starts_with("/api/");
    let resp = next.run(req).await;
    let status = resp.status();
    let is_json = resp.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !api || !(status.is_client_error() || status.is_server_error()) || is_json {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let text = axum::body::to_bytes(body, 64 << 10).await.map(|b| String::from_utf8_lossy(&b).trim().to_owned()).unwrap_or_default();
    let reason = status.canonical_reason().unwrap_or("error").to_lowercase();
    let error = if text.is_empty() { reason } else { format!("{reason}: {text}") };
    let mut json = (status, axum::Json(serde_json::json!({ "error": error }))).into_response();
    for (name, value) in parts.headers.iter().filter(|(n, _)| *n != header::CONTENT_TYPE && *n != header::CONTENT_LENGTH) {
        json.headers_mut().insert(name, value.clone());
    }
    json
}

async fn security_headers(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    resp
}

/// Request counts and latencies, by route (the route's pattern, not the
/// path, so ids do not make new series) and status.
struct HttpMetrics {
    registry: prometheus::Registry,
    requests: prometheus::IntCounterVec,
    seconds: prometheus::HistogramVec,
}

static HTTP: LazyLock<HttpMetrics> = LazyLock::new(|| {
    let registry = prometheus::Registry::new();
    let requests = prometheus::IntCounterVec::new(
        prometheus::Opts::new("koth_http_requests_total", "HTTP requests by method, route and status."),
        &["method", "route", "status"],
    )
    .expect("a valid metric");
    let seconds = prometheus::HistogramVec::new(
        prometheus::HistogramOpts::new("koth_http_request_seconds", "HTTP request latency by method and route.")
            .buckets(vec![0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]),
        &["method", "route"],
    )
    .expect("a valid metric");
    registry.register(Box::new(requests.clone())).expect("registered once");
    registry.register(Box::new(seconds.clone())).expect("registered once");
    HttpMetrics { registry, requests, seconds }
});

async fn measure(req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_owned()).unwrap_or_else(|| "unmatched".into());
    let method = req.method().as_str().to_owned();
    let start = Instant::now();
    let resp = next.run(req).await;
    let http = &*HTTP;
    http.seconds.with_label_values(&[&method, &route]).observe(start.elapsed().as_secs_f64());
    http.requests.with_label_values(&[&method, &route, resp.status().as_str()]).inc();
    resp
}

/// The HTTP metrics in Prometheus' text format.
pub(crate) fn http_metrics_text() -> String {
    use prometheus::Encoder;
    let mut out = Vec::new();
    let _ = prometheus::TextEncoder::new().encode(&HTTP.registry.gather(), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_links_become_page_links_and_raw_html_is_text() {
        let html = markdown("See [Flit](flit.md) and [the index](README.md).\n\n<script>alert(1)</script>\n");
        assert!(html.contains("href=\"/games/flit\""), "{html}");
        assert!(html.contains("href=\"README.md\""), "{html}");
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    /// The script draws seats in the colours the games' legends were
    /// checked against (`koth_games::view::SEAT_COLOURS`).
    #[test]
    fn the_scripts_seat_colours_are_the_games() {
        let start = APP_JS.find("const SEAT_COLOURS = [").expect("SEAT_COLOURS in app.js") + "const SEAT_COLOURS = [".len();
        let list = &APP_JS[start..start + APP_JS[start..].find(']').unwrap()];
        let colours: Vec<&str> = list.split(',').map(|c| c.trim().trim_matches('\'')).collect();
        assert_eq!(colours, koth_games::view::SEAT_COLOURS);
    }

    #[test]
    fn every_game_has_a_protocol_page() {
        for g in koth_games::GameKind::ALL {
            assert!(GAME_DOCS.iter().any(|(n, _)| *n == g.name()), "{g:?}");
        }
    }
}
