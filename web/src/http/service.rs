//! The service's own routes: health, metrics, the OpenAPI document, the
//! audit trail.

use super::*;

/// This resource's routes, each declared on its handler.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(health)).routes(routes!(metrics)).routes(routes!(openapi)).routes(routes!(audit))
}

/// Whether the database is reachable.
#[utoipa::path(get, path = "/health", tag = "service",
    responses((status = 200, body = Health), (status = 503, body = Health, description = "The database cannot be reached")))]
async fn health(State(s): State<AppState>) -> Response {
    match reads::ping(&s.pool).await {
        Ok(_) => Json(Health { status: HealthStatus::Ok, database: "ok".into() }).into_response(),
        Err(e) => {
            (StatusCode::SERVICE_UNAVAILABLE, Json(Health { status: HealthStatus::Degraded, database: e.to_string() })).into_response()
        }
    }
}

/// Prometheus metrics: jobs, matches, bots; match, queue-wait and compile
/// duration histograms; matches per minute; runners; the database pool;
/// HTTP requests; resident memory.
#[utoipa::path(get, path = "/metrics", tag = "service", responses((status = 200, content_type = "text/plain", body = String)))]
async fn metrics(State(s): State<AppState>) -> ApiResult<Response> {
    let mut out = String::new();
    let counts = reads::counts(&s.pool).await?;
    out.push_str("# HELP koth_jobs Jobs in the queue by kind and state.\n# TYPE koth_jobs gauge\n");
    for (kind, state, n) in &counts.jobs {
        out.push_str(&format!("koth_jobs{{kind=\"{kind}\",state=\"{state}\"}} {n}\n"));
    }
    out.push_str("# HELP koth_matches Matches by state.\n# TYPE koth_matches gauge\n");
    for (state, n) in &counts.matches {
        out.push_str(&format!("koth_matches{{state=\"{state}\"}} {n}\n"));
    }
    out.push_str(&format!("# HELP koth_bots Enabled bots.\n# TYPE koth_bots gauge\nkoth_bots {}\n", counts.bots));
    let ops = reads::operations(&s.pool).await?;
    use koth_scheduler::metrics::{gauge_text, histogram_text, histograms};
    out.push_str(&histogram_text(
        "koth_match_seconds",
        "Finished matches' run time on a runner (claimed to finished), by game and ladder.",
        &histograms(&ops.match_seconds),
    ));
    out.push_str(&histogram_text(
        "koth_queue_wait_seconds",
        "Jobs' wait from queued to claimed by a runner, by kind, game and ladder.",
        &histograms(&ops.wait_seconds),
    ));
    out.push_str(&histogram_text("koth_compile_seconds", "Finished compiles' run time, by language.", &histograms(&ops.compile_seconds)));
    let per_minute: Vec<_> = ops
        .finished_last_10_minutes
        .iter()
        .map(|(game, ladder, n)| (vec![("game", game.clone()), ("ladder", ladder.clone())], *n as f64 / 10.0))
        .collect();
    out.push_str(&gauge_text("koth_matches_finished_per_minute", "Matches finished per minute over the last 10 minutes.", &per_minute));
    out.push_str(&gauge_text(
        "koth_runners",
        "Runner processes that reported in the last two report periods (alive), and job holders running a job now (busy).",
        &[(vec![("state", "alive".into())], ops.runners_alive as f64), (vec![("state", "busy".into())], ops.workers_busy as f64)],
    ));
    let pool_size = s.pool.size() as f64;
    let idle = s.pool.num_idle() as f64;
    out.push_str(&gauge_text(
        "koth_db_pool_connections",
        "This process's database connections: open and in use, open and idle, and the most it opens.",
        &[
            (vec![("state", "in_use".into())], pool_size - idle),
            (vec![("state", "idle".into())], idle),
            (vec![("state", "max".into())], f64::from(s.pool.options().get_max_connections())),
        ],
    ));
    if let Some(rss) = resident_bytes("self") {
        out.push_str(&format!(
            "# HELP koth_resident_bytes Resident memory of this process.\n# TYPE koth_resident_bytes gauge\nkoth_resident_bytes {rss}\n"
        ));
    }
    out.push_str(&crate::pages::http_metrics_text());
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response())
}

/// A process's resident memory (`VmRSS`), in bytes: `"self"` or a pid
/// (`koth bench soak` reads its `koth up`'s).
pub fn resident_bytes(process: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let kb: u64 = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kb * 1024)
}

/// This document.
#[utoipa::path(get, path = "/api/openapi.json", tag = "service", responses((status = 200, body = Object)))]
async fn openapi() -> Response {
    // Built once: the routes do not change while the process runs.
    static DOC: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(|| serde_json::to_vec(&openapi_document()).unwrap_or_default());
    ([(axum::http::header::CONTENT_TYPE, "application/json")], DOC.as_slice()).into_response()
}

/// Entries a page of the audit trail holds unless the request says.
const AUDIT_PAGE: u32 = 100;
/// The most a request may ask for.
const AUDIT_PAGE_MAX: u32 = 1000;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct AuditQuery {
    /// Only this ladder's entries.
    #[param(minimum = 1)]
    ladder: Option<i64>,
    /// Only this bot's entries and those of the matches it played.
    #[param(minimum = 1)]
    bot: Option<i64>,
    /// Only entries of this kind.
    action: Option<AuditAction>,
    /// Only entries older than this one: the previous page's `next_before`.
    #[param(minimum = 1)]
    before: Option<i64>,
    /// How many, newest first (100 unless said; at most 1000).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<u32>,
}

/// The audit trail (hosts), newest first: every match's and compile's
/// outcome, validation verdict, automatic disable and host action, with
/// who did it, when and why. Filtered by ladder, bot or kind; `before`
/// pages back.
#[utoipa::path(get, path = "/api/audit", tag = "service", security(("token" = [])), params(AuditQuery),
    responses((status = 200, body = AuditPage), (status = 403, body = ErrorBody, description = "Not a host")))]
async fn audit(State(s): State<AppState>, ApiQuery(q): ApiQuery<AuditQuery>, headers: HeaderMap) -> ApiResult<Json<AuditPage>> {
    require_host(&require_caller(&s.pool, &headers).await?)?;
    let limit = q.limit.unwrap_or(AUDIT_PAGE);
    if !(1..=AUDIT_PAGE_MAX).contains(&limit) {
        return Err(bad(format!("\"limit\" is {limit}: ask for 1 to {AUDIT_PAGE_MAX} entries, and page back with \"before\"")));
    }
    for (name, id) in [("ladder", q.ladder), ("bot", q.bot), ("before", q.before)] {
        if id.is_some_and(|id| id < 1) {
            return Err(bad(format!("\"{name}\" is an id: a whole number from 1")));
        }
    }
    let filter = koth_scheduler::db::audit::Filter { ladder: q.ladder, bot: q.bot, action: q.action, before: q.before, limit };
    Ok(Json(koth_scheduler::db::audit::list(&s.pool, &filter).await?))
}
