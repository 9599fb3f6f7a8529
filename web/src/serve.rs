//! Serving the HTTP service on a socket, as `koth web` and `koth up` do:
//! the listener, hyper's HTTP/1 connection settings and the connection
//! caps, in one function ([`serve`]).
//!
//! What a client may hold, and how it is answered when it asks too much:
//!
//! | limit | enforced by | answer |
//! |---|---|---|
//! | a request's line and headers within [`HttpLimits::header_timeout`] | hyper's `header_read_timeout` (also the idle time of a kept-alive connection) | the connection is closed |
//! | a request's line and headers at most [`HttpLimits::max_head_bytes`] | hyper's `max_header_size` | 431, JSON |
//! | a URI of at most [`HttpLimits::max_uri_bytes`] | a layer before the routes (hyper's own limit, 64 KiB, is above it) | 414, JSON |
//! | connections from one address ([`HttpLimits::max_connections_per_address`]; IPv6 by its /64) | [`serve`]'s accept loop | closed at once, unread |
//! | connections in all ([`HttpLimits::max_connections`], below the descriptor limit) | the same | closed at once, unread |
//! | a request body (40 MiB, [`crate::http::MAX_BODY`]) | axum's `DefaultBodyLimit` | 413, JSON |
//!
//! hyper answers the requests it cannot parse itself (400, 414, 431), with
//! no body and no hook to give it one; [`JsonParseErrors`], between hyper
//! and the socket, gives those answers the same `{"error": ...}` body as
//! every other error of the service.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;

/// What one client may hold and send (see the module's table).
#[derive(Clone, Debug)]
pub struct HttpLimits {
    /// A request's line and headers must arrive within this; a kept-alive
    /// connection with no new request is closed after it too.
    pub header_timeout: Duration,
    /// Connections held at once, from every address.
    pub max_connections: usize,
    /// Connections held at once from one IPv4 address or IPv6 /64.
    pub max_connections_per_address: usize,
    /// Longest URI (path and query), in bytes.
    pub max_uri_bytes: usize,
    /// Longest request line and headers together, in bytes.
    pub max_head_bytes: usize,
}

/// [`HttpLimits::header_timeout`] by default, in seconds.
pub const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 10;
/// [`HttpLimits::max_connections_per_address`] by default.
pub const DEFAULT_CONNECTIONS_PER_ADDRESS: usize = 256;
/// [`HttpLimits::max_uri_bytes`] by default.
pub const DEFAULT_MAX_URI_BYTES: usize = 8 << 10;
/// [`HttpLimits::max_head_bytes`] by default.
pub const DEFAULT_MAX_HEAD_BYTES: usize = 32 << 10;
/// Descriptors [`default_max_connections`] leaves to everything but
/// connections: the database pool, the runners' boxes, files.
pub const RESERVED_DESCRIPTORS: usize = 1024;

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_timeout: Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECS),
            max_connections: default_max_connections(),
            max_connections_per_address: DEFAULT_CONNECTIONS_PER_ADDRESS,
            max_uri_bytes: DEFAULT_MAX_URI_BYTES,
            max_head_bytes: DEFAULT_MAX_HEAD_BYTES,
        }
    }
}

/// The process's descriptor limit, raised first to the most it may have
/// (its hard limit), less [`RESERVED_DESCRIPTORS`]: connections past it are
/// refused, so the process never runs out of descriptors for the rest.
pub fn default_max_connections() -> usize {
    descriptor_limit().saturating_sub(RESERVED_DESCRIPTORS).max(64)
}

/// `RLIMIT_NOFILE`'s soft limit, raised to its hard limit.
pub fn descriptor_limit() -> usize {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write `lim`.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX)
}

/// Serve `app` on `listener` until `shutdown` resolves, then finish the
/// requests being answered. Every request carries its peer's
/// [`ConnectInfo<SocketAddr>`].
pub async fn serve(listener: TcpListener, app: Router, limits: HttpLimits, shutdown: impl Future<Output = ()>) -> io::Result<()> {
    let max_uri = limits.max_uri_bytes;
    let app = app.layer(middleware::from_fn(move |req: Request, next: Next| uri_limit(max_uri, req, next)));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(limits.header_timeout).max_header_size(limits.max_head_bytes);
    let connections = Arc::new(Connections::new(limits.max_connections, limits.max_connections_per_address));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut refusals = Refusals::default();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors (other work took them, since
                    // connections stop below the limit) or a connection
                    // reset before it was taken: wait a little, go on.
                    refusals.note(format_args!("accepting a connection failed: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let held = match connections.admit(peer.ip()) {
            Ok(held) => held,
            Err(why) => {
                refusals.note(format_args!("refused a connection from {}: {why}", peer.ip()));
                drop(stream);
                continue;
            }
        };
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            tower::ServiceExt::oneshot(app.clone(), req)
        });
        let io = hyper_util::rt::TokioIo::new(JsonParseErrors::new(stream, &limits));
        let conn = graceful.watch(http.serve_connection(io, service));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(peer = %peer, "connection ended: {e}");
            }
            drop(held);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// 414 for a URI over the limit, before any route sees it.
async fn uri_limit(max: usize, req: Request, next: Next) -> Response {
    let len = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if len > max {
        let error = format!("URI too long: {len} bytes, at most {max} are read");
        return (StatusCode::URI_TOO_LONG, axum::Json(serde_json::json!({ "error": error }))).into_response();
    }
    next.run(req).await
}

/// Refusals and accept errors are logged at most every ten seconds, with
/// how many there were: a flood must not flood the log too.
#[derive(Default)]
struct Refusals {
    last: Option<Instant>,
    since: u64,
}

impl Refusals {
    fn note(&mut self, what: std::fmt::Arguments) {
        self.since += 1;
        if self.last.is_none_or(|t| t.elapsed() >= Duration::from_secs(10)) {
            tracing::warn!("{what} ({} such since the last line like this)", self.since);
            self.last = Some(Instant::now());
            self.since = 0;
        }
    }
}

/// Connections held, in all and by address.
struct Connections {
    max: usize,
    max_per_address: usize,
    held: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// One admitted connection; dropping it frees its place.
struct Held {
    connections: Arc<Connections>,
    key: IpAddr,
}

impl Connections {
    fn new(max: usize, max_per_address: usize) -> Self {
        Connections { max, max_per_address, held: Mutex::new((0, HashMap::new())) }
    }

    fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Held, String> {
        let key = address_key(ip);
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (total, by_address) = &mut *held;
        if *total >= self.max {
            return Err(format!("{total} connections are open, the most this server holds"));
        }
        let mine = by_address.entry(key).or_insert(0);
        if *mine >= self.max_per_address {
            return Err(format!("it holds {mine} connections, the most one address may"));
        }
        *mine += 1;
        *total += 1;
        Ok(Held { connections: self.clone(), key })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = self.connections.held.lock().unwrap_or_else(|e| e.into_inner());
        let (total, by_address) = &mut *held;
        *total -= 1;
        if let Some(n) = by_address.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                by_address.remove(&self.key);
            }
        }
    }
}

/// An IPv4 address as it is (an IPv4-mapped IPv6 one too); an IPv6
/// address by its /64, the least a host is given.
fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & (u128::MAX << 64)).into()),
        },
    }
}

/// The socket, with hyper's own answers to requests it cannot parse (a
/// head over the limit: 431; a URI over 64 KiB: 414; not HTTP: 400) given
/// a JSON body. hyper writes those as a bare head with `content-length: 0`
/// and then closes the connection; such a head, and only such a head,
/// written at the start of a write is replaced by the same status with
/// `{"error": ...}`. Everything else passes through untouched.
pub struct JsonParseErrors<IO> {
    io: IO,
    max_uri_bytes: usize,
    max_head_bytes: usize,
    /// A replacement being written, how much of it is out, and what the
    /// caller is told it wrote once all of it is.
    pending: Option<(Vec<u8>, usize, usize)>,
}

impl<IO> JsonParseErrors<IO> {
    pub fn new(io: IO, limits: &HttpLimits) -> Self {
        JsonParseErrors { io, max_uri_bytes: limits.max_uri_bytes, max_head_bytes: limits.max_head_bytes, pending: None }
    }

    /// The JSON answer for hyper's bodiless head `head`, if that is what it is.
    fn replacement(&self, head: &[u8]) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(head).ok()?;
        let rest = text.strip_prefix("HTTP/1.1 ").or_else(|| text.strip_prefix("HTTP/1.0 "))?;
        let body = text.strip_suffix("\r\n\r\n")?;
        if body.contains("\r\n\r\n") {
            return None;
        }
        let error = match rest.get(..4)? {
            "400 " => "bad request: not an HTTP/1.1 request this server can read".to_owned(),
            "414 " => format!("URI too long: at most {} bytes are read", self.max_uri_bytes),
            "431 " => format!("request head too large: its line and headers may be at most {} bytes", self.max_head_bytes),
            _ => return None,
        };
        let mut lines = body.split("\r\n");
        let status = lines.next()?;
        let headers: Vec<&str> = lines.collect();
        if !headers.iter().any(|h| h.eq_ignore_ascii_case("content-length: 0")) {
            return None;
        }
        let json = serde_json::json!({ "error": error }).to_string();
        let mut out = format!("{status}\r\n");
        for h in headers.iter().filter(|h| !h.to_ascii_lowercase().starts_with("content-length:")) {
            out.push_str(h);
            out.push_str("\r\n");
        }
        out.push_str(&format!("{}: application/json\r\n{}: {}\r\n\r\n{json}", header::CONTENT_TYPE, header::CONTENT_LENGTH, json.len()));
        Some(out.into_bytes())
    }
}

impl<IO: AsyncWrite + Unpin> JsonParseErrors<IO> {
    /// Write out what is left of the pending replacement.
    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some((bytes, done, _)) = &mut self.pending {
            while *done < bytes.len() {
                match std::task::ready!(Pin::new(&mut self.io).poll_write(cx, &bytes[*done..])) {
                    Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                    Ok(n) => *done += n,
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
        }
        Poll::Ready(Ok(()))
    }

    /// The replacement written out whole: the replaced head is reported
    /// written.
    fn finish(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        std::task::ready!(self.drive(cx))?;
        Poll::Ready(Ok(self.pending.take().map_or(0, |(_, _, reported)| reported)))
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for JsonParseErrors<IO> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for JsonParseErrors<IO> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.pending.is_none() {
            match this.replacement(buf) {
                Some(json) => this.pending = Some((json, 0, buf.len())),
                None => return Pin::new(&mut this.io).poll_write(cx, buf),
            }
        }
        this.finish(cx)
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.pending.is_none() {
            let first = bufs.iter().find(|b| !b.is_empty()).map_or(&[][..], |b| &b[..]);
            match this.replacement(first) {
                Some(json) => this.pending = Some((json, 0, first.len())),
                None => return Pin::new(&mut this.io).poll_write_vectored(cx, bufs),
            }
        }
        this.finish(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.drive(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.drive(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpStream};

    /// A server of one route (`/who`: the peer's address) with `limits`,
    /// on a thread of its own; its address.
    fn start(limits: HttpLimits) -> SocketAddr {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                let app = Router::new()
                    .route("/who", axum::routing::get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.ip().to_string() }));
                serve(listener, app, limits, std::future::pending()).await.unwrap();
            });
        });
        rx.recv().unwrap()
    }

    fn limits() -> HttpLimits {
        HttpLimits {
            header_timeout: Duration::from_secs(60),
            max_connections: 1000,
            max_connections_per_address: 100,
            max_uri_bytes: 1024,
            max_head_bytes: 8192,
        }
    }

    /// A connection from `from` (127.0.0.x), with a read timeout far past
    /// anything the server waits for.
    fn connect(addr: SocketAddr, from: &str) -> TcpStream {
        let s = tokio::net::TcpSocket::new_v4().unwrap();
        s.bind(format!("{from}:0").parse().unwrap()).unwrap();
        let std = std::thread::scope(|_| {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async { s.connect(addr).await.unwrap().into_std().unwrap() })
        });
        std.set_nonblocking(false).unwrap();
        std.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        std
    }

    /// Send `request` and read the whole answer (the server closes, or
    /// `Connection: close` was asked); the raw text.
    fn exchange(s: &mut TcpStream, request: &[u8]) -> String {
        s.write_all(request).unwrap();
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        String::from_utf8_lossy(&raw).into_owned()
    }

    /// Status, headers and the body parsed as JSON.
    fn json_answer(raw: &str) -> (u16, String, serde_json::Value) {
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no head in {raw:?}"));
        let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(head.to_ascii_lowercase().contains("content-type: application/json"), "{raw}");
        let len: usize = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(|n| n.trim().parse().unwrap()))
            .unwrap_or_else(|| panic!("no content-length in {raw:?}"));
        assert_eq!(len, body.len(), "{raw}");
        (status, head.to_owned(), serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {raw:?}")))
    }

    #[test]
    fn hypers_own_answers_are_json() {
        // A head over the limit: hyper's 431.
        let addr = start(limits());
        let query = "a".repeat(100 << 10);
        let mut s = connect(addr, "127.0.0.1");
        let raw = exchange(&mut s, format!("GET /who?{query} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
        let (status, _, body) = json_answer(&raw);
        assert_eq!(status, 431, "{raw}");
        assert!(body["error"].as_str().unwrap().contains("8192 bytes"), "{body}");

        // A head within the limit whose URI is over hyper's 64 KiB: hyper's 414.
        let addr = start(HttpLimits { max_head_bytes: 1 << 20, ..limits() });
        let mut s = connect(addr, "127.0.0.1");
        let raw = exchange(&mut s, format!("GET /who?{query} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
        let (status, _, body) = json_answer(&raw);
        assert_eq!(status, 414, "{raw}");
        assert!(body["error"].as_str().unwrap().starts_with("URI too long"), "{body}");

        // Not HTTP at all: hyper's 400.
        let mut s = connect(addr, "127.0.0.1");
        let raw = exchange(&mut s, b"HELLO THERE\r\n\r\n");
        let (status, _, body) = json_answer(&raw);
        assert_eq!(status, 400, "{raw}");
        assert!(body["error"].as_str().unwrap().starts_with("bad request"), "{body}");
    }

    #[test]
    fn a_uri_over_the_limit_is_a_json_414_and_the_connection_serves_on() {
        let addr = start(limits());
        let mut s = connect(addr, "127.0.0.1");
        let long = format!("GET /who?{} HTTP/1.1\r\nHost: x\r\n\r\n", "b".repeat(2000));
        // Kept alive: the 414 comes from the service, not from hyper's parser.
        s.write_all(long.as_bytes()).unwrap();
        let raw = exchange(&mut s, b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let (first, second) = raw.split_at(raw.find("HTTP/1.1 200").unwrap_or_else(|| panic!("{raw}")));
        let (status, _, body) = json_answer(first);
        assert_eq!(status, 414);
        assert!(body["error"].as_str().unwrap().contains("2005 bytes, at most 1024"), "{body}");
        assert!(second.ends_with("127.0.0.1"), "{second}");
    }

    #[test]
    fn hyper_s_answers_to_good_requests_are_untouched() {
        let addr = start(limits());
        let mut s = connect(addr, "127.0.0.9");
        let raw = exchange(&mut s, b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert!(raw.starts_with("HTTP/1.1 200 OK\r\n"), "{raw}");
        assert!(raw.ends_with("\r\n\r\n127.0.0.9"), "{raw}");
        let mut s = connect(addr, "127.0.0.9");
        let raw = exchange(&mut s, b"GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert!(raw.starts_with("HTTP/1.1 404 Not Found\r\n"), "{raw}");
        assert!(raw.contains("content-length: 0\r\n"), "{raw}");
    }

    /// The worst client of one address: it opens connections and never
    /// sends a byte. Past the cap its connections are closed unread, its
    /// first ones are still served, and other addresses are served.
    #[test]
    fn one_address_holds_at_most_its_cap() {
        let addr = start(HttpLimits { max_connections_per_address: 5, ..limits() });
        let mut held: Vec<TcpStream> = (0..5).map(|_| connect(addr, "127.0.0.2")).collect();
        // Each of these is closed by the server without a byte of answer.
        for _ in 0..20 {
            let mut s = connect(addr, "127.0.0.2");
            let raw = exchange(&mut s, b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            assert_eq!(raw, "", "over the cap, yet answered");
        }
        let mut other = connect(addr, "127.0.0.3");
        assert!(exchange(&mut other, b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").ends_with("127.0.0.3"));
        // The five admitted ones are served.
        let raw = exchange(&mut held[0], b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert!(raw.ends_with("127.0.0.2"), "{raw}");
        // One closed: its place is free again.
        held.remove(0);
        let mut again = connect(addr, "127.0.0.2");
        let raw = exchange(&mut again, b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert!(raw.ends_with("127.0.0.2"), "{raw}");
    }

    #[test]
    fn past_the_global_cap_connections_are_closed_until_one_ends() {
        let addr = start(HttpLimits { max_connections: 4, ..limits() });
        let mut held: Vec<TcpStream> = (0..4).map(|i| connect(addr, &format!("127.0.1.{}", i + 1))).collect();
        let mut s = connect(addr, "127.0.2.1");
        assert_eq!(exchange(&mut s, b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), "");
        let raw = exchange(&mut held.pop().unwrap(), b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert!(raw.ends_with("127.0.1.4"), "{raw}");
        let mut s = connect(addr, "127.0.2.1");
        assert!(exchange(&mut s, b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").ends_with("127.0.2.1"));
    }

    /// Slowloris: a head that is never finished is cut at the timeout (the
    /// read below would wait 120 s; the server closes it after 1).
    #[test]
    fn an_unfinished_head_is_closed_at_the_header_timeout() {
        let addr = start(HttpLimits { header_timeout: Duration::from_secs(1), ..limits() });
        let mut s = connect(addr, "127.0.0.4");
        let start = Instant::now();
        let raw = exchange(&mut s, b"GET /who HTTP/1.1\r\nHost: x\r\nX-Slow: ");
        assert!(!raw.contains("200 OK"), "{raw}");
        assert!(start.elapsed() < Duration::from_secs(100), "held for {:?}", start.elapsed());
        // A connection that sends nothing at all, too.
        let mut s = connect(addr, "127.0.0.4");
        assert_eq!(exchange(&mut s, b""), "");
    }

    #[test]
    fn an_ipv6_host_is_counted_by_its_64() {
        let a: IpAddr = "2001:db8:1:2:3:4:5:6".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::1".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(address_key(a), address_key(b));
        assert_ne!(address_key(a), address_key(c));
        assert_eq!(address_key("::ffff:10.0.0.1".parse().unwrap()), "10.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(address_key("10.0.0.1".parse().unwrap()), "10.0.0.1".parse::<IpAddr>().unwrap());
    }
}
