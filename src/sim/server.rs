//! HTTP routing, query validation, cursors and fault injection.

use super::SimOptions;
use super::data::SimData;
use super::json;
use crate::vocab::chain::Chain;
use crate::vocab::evm::{is_abi_signature, is_address, is_hash32, signature_topic, split_top_level};
use crate::vocab::window::{Resolved, Window, day_of, iso, parse_instant};
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Mutex;

struct Sim {
    data: SimData,
    opts: SimOptions,
    /// Unix ms the clock is frozen at, or `i64::MIN` when it runs.
    frozen_ms: AtomicI64,
    secret: u64,
    requests: AtomicU64,
    bucket: Mutex<(f64, Instant)>,
}

impl Sim {
    fn now_ms(&self) -> i64 {
        match self.frozen_ms.load(Ordering::Relaxed) {
            i64::MIN => chrono::Utc::now().timestamp_millis(),
            t => t,
        }
    }
    fn roll(&self) -> f64 {
        let n = self.requests.fetch_add(1, Ordering::Relaxed);
        let z = crate::sim::server::mix(self.secret ^ 0x5eed, n);
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A running in-process simulator.
#[derive(Debug)]
pub struct SimHandle {
    /// The loopback address it listens on.
    pub addr: SocketAddr,
    /// The server task.
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl SimHandle {
    /// `http://addr`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Starts a simulator on an ephemeral loopback port.
pub async fn spawn(opts: SimOptions) -> Result<SimHandle, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot bind the simulator: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let app = router(opts)?;
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(SimHandle { addr, task })
}

/// Serves the simulator on `listener` until the process ends.
pub async fn serve(opts: SimOptions, listener: TcpListener) -> Result<(), String> {
    let app = router(opts)?;
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}

fn router(opts: SimOptions) -> Result<Router, String> {
    let frozen_ms = match (&opts.frozen_at, opts.freeze_head) {
        (Some(t), _) => Some(parse_instant(t).map_err(|e| format!("--frozen-at: {e}"))? * 1000),
        (None, true) => Some(chrono::Utc::now().timestamp_millis()),
        (None, false) => None,
    };
    for (name, v) in [
        ("--error-rate", opts.error_rate),
        ("--reset-rate", opts.reset_rate),
        ("--truncate-rate", opts.truncate_rate),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("{name} must be between 0 and 1, got {v}"));
        }
    }
    if opts.quota_rps < 0.0 {
        return Err("--quota-rps must not be negative".into());
    }
    let sim = Arc::new(Sim {
        data: SimData::new(opts.seed, opts.events_per_block),
        secret: mix(opts.seed, 0xc0ff_ee00),
        frozen_ms: AtomicI64::new(frozen_ms.unwrap_or(i64::MIN)),
        requests: AtomicU64::new(0),
        bucket: Mutex::new((opts.quota_rps.max(1.0), Instant::now())),
        opts,
    });
    if sim.opts.reorg_depth > 0 {
        inject_reorg(&sim, sim.opts.reorg_depth, None);
    }
    Ok(Router::new()
        .route("/v2/{chain}/wallets/{wallet}/portfolio/daily", get(portfolio))
        .route("/v2/{chain}/tokens/{address}", get(token))
        .route("/v2/{chain}/blocks", get(blocks))
        .route("/v2/{chain}/blocks/{number}", get(block_by_number))
        .route("/v2/{chain}/events", get(events))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(sim.clone(), faults))
        .route("/_sim/reorg", post(admin_reorg))
        .route("/_sim/advance", post(admin_advance))
        .route("/_sim/forks", get(admin_forks))
        .with_state(sim))
}

/// Reorgs the last `depth` blocks up to the head, of one chain or all.
fn inject_reorg(sim: &Sim, depth: u64, chain: Option<Chain>) -> Vec<super::data::Fork> {
    let now = sim.now_ms();
    Chain::ALL
        .into_iter()
        .filter(|c| chain.is_none_or(|x| x == *c))
        .map(|c| {
            let head = sim.data.head(c, now);
            sim.data.reorg(c, (head + 1).saturating_sub(depth.max(1)))
        })
        .collect()
}

fn json_response(v: &impl serde::Serialize) -> Response {
    let body = serde_json::to_vec(v).unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn admin_params(q: &Option<String>) -> std::collections::HashMap<String, String> {
    form_urlencoded::parse(q.as_deref().unwrap_or("").as_bytes()).into_owned().collect()
}

async fn admin_reorg(State(sim): State<Arc<Sim>>, RawQuery(q): RawQuery) -> Response {
    let p = admin_params(&q);
    let Some(depth) = p.get("depth").and_then(|d| d.parse::<u64>().ok()).filter(|d| *d >= 1) else {
        return ApiError(
            StatusCode::BAD_REQUEST,
            "invalid_parameter",
            "depth: expected a number of blocks >= 1".into(),
        )
        .into_response();
    };
    let chain = match p.get("chain").map(|c| c.parse::<Chain>()) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(m)) => return ApiError(StatusCode::BAD_REQUEST, "invalid_parameter", m).into_response(),
    };
    json_response(&inject_reorg(&sim, depth, chain))
}

async fn admin_advance(State(sim): State<Arc<Sim>>, RawQuery(q): RawQuery) -> Response {
    let p = admin_params(&q);
    let Some(secs) = p.get("secs").and_then(|d| d.parse::<i64>().ok()).filter(|d| *d >= 0) else {
        return ApiError(
            StatusCode::BAD_REQUEST,
            "invalid_parameter",
            "secs: expected a number of seconds >= 0".into(),
        )
        .into_response();
    };
    let r = sim
        .frozen_ms
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| (t != i64::MIN).then_some(t + secs * 1000));
    match r {
        Ok(t) => json_response(&serde_json::json!({ "now": iso((t + secs * 1000).div_euclid(1000)) })),
        Err(_) => ApiError(
            StatusCode::CONFLICT,
            "not_frozen",
            "the clock runs; start with --freeze-head or --frozen-at".into(),
        )
        .into_response(),
    }
}

async fn admin_forks(State(sim): State<Arc<Sim>>) -> Response {
    json_response(&sim.data.forks())
}

/// A 4xx answer with the `{"error": {"code", "message"}}` body.
struct ApiError(StatusCode, &'static str, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = Vec::new();
        body.extend_from_slice(b"{\"error\":{\"code\":");
        json::push_str(&mut body, self.1);
        body.extend_from_slice(b",\"message\":");
        json::push_str(&mut body, &self.2);
        body.extend_from_slice(b"}}");
        (self.0, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, "invalid_parameter", msg.into())
}

/// A path the service does not have: 404 with its own code, distinct
/// from `not_found` (a missing token or block), as a real service answers
/// a wrong base URL path.
async fn not_found() -> ApiError {
    ApiError(StatusCode::NOT_FOUND, "no_route", "no such route".into())
}

fn ok_json(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn faults(State(sim): State<Arc<Sim>>, headers: HeaderMap, req: Request, next: Next) -> Response {
    let opts = &sim.opts;
    if opts.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(opts.latency_ms)).await;
    }
    if let (Some(key), Some(given)) = (&opts.api_key, headers.get(header::AUTHORIZATION)) {
        let expected = format!("Bearer {key}");
        if given.as_bytes() != expected.as_bytes() {
            return ApiError(StatusCode::UNAUTHORIZED, "unauthorized", "the API key is not valid".into()).into_response();
        }
    }
    if opts.quota_rps > 0.0 {
        let mut b = sim.bucket.lock().await;
        let now = Instant::now();
        let cap = opts.quota_rps.max(1.0);
        b.0 = (b.0 + now.duration_since(b.1).as_secs_f64() * opts.quota_rps).min(cap);
        b.1 = now;
        if b.0 < 1.0 {
            let wait = ((1.0 - b.0) / opts.quota_rps).ceil().max(1.0) as u64;
            drop(b);
            let mut resp = ApiError(StatusCode::TOO_MANY_REQUESTS, "rate_limited", "request quota exceeded".into()).into_response();
            resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(wait));
            return resp;
        }
        b.0 -= 1.0;
    }
    let roll = sim.roll();
    if roll < opts.error_rate {
        let which = (roll / opts.error_rate * 3.0) as u32;
        return match which {
            0 => (
                StatusCode::BAD_GATEWAY,
                [(header::CONTENT_TYPE, "text/html")],
                "<html><body><h1>502 Bad Gateway</h1></body></html>",
            )
                .into_response(),
            1 => (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::CONTENT_TYPE, "application/json")],
                "{\"error\":{\"code\":\"unavailable\",\"message\":\"try again\"}}",
            )
                .into_response(),
            _ => (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(header::CONTENT_TYPE, "text/html")],
                "<html><body>Internal Server Error</body></html>",
            )
                .into_response(),
        };
    }
    let roll = roll - opts.error_rate;
    let reset = roll >= 0.0 && roll < opts.reset_rate;
    let truncate = roll >= opts.reset_rate && roll < opts.reset_rate + opts.truncate_rate;
    let resp = next.run(req).await;
    if !(reset || truncate) || resp.status() != StatusCode::OK {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let cut = Bytes::copy_from_slice(&bytes[..bytes.len() / 2]);
    if reset {
        // Headers promise the whole body; the stream dies half way, so the
        // connection is torn down under the client.
        let stream = futures::stream::iter(vec![
            Ok(cut),
            Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "simulated reset")),
        ]);
        let mut r = Response::from_parts(parts, Body::from_stream(stream));
        r.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
        r
    } else {
        let mut r = Response::from_parts(parts, Body::from(cut.clone()));
        r.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(cut.len()));
        r
    }
}

fn parse_chain(name: &str) -> Result<Chain, ApiError> {
    name.parse()
        .map_err(|e: String| ApiError(StatusCode::NOT_FOUND, "unknown_chain", e))
}

/// The query string as pairs; repeated keys are kept.
fn query_pairs(raw: &Option<String>) -> Vec<(String, String)> {
    match raw {
        Some(q) => form_urlencoded::parse(q.as_bytes()).into_owned().collect(),
        None => Vec::new(),
    }
}

fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn limit(pairs: &[(String, String)], max: u64, default: u64) -> Result<u64, ApiError> {
    match param(pairs, "limit") {
        None => Ok(default),
        Some(v) => match v.parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(bad(format!("limit must be an integer from 1 to {max}, got `{v}`"))),
        },
    }
}

fn address_param(pairs: &[(String, String)], name: &str) -> Result<Option<[u8; 20]>, ApiError> {
    match param(pairs, name) {
        None => Ok(None),
        Some(v) => parse_address(v)
            .map(Some)
            .ok_or_else(|| bad(format!("{name} must match ^0x[a-fA-F0-9]{{40}}$, got `{v}`"))),
    }
}

fn parse_address(v: &str) -> Option<[u8; 20]> {
    if !is_address(v) {
        return None;
    }
    let mut out = [0u8; 20];
    hex::decode_to_slice(&v[2..], &mut out).ok()?;
    Some(out)
}

fn descending(pairs: &[(String, String)]) -> Result<bool, ApiError> {
    match param(pairs, "sort_by") {
        None | Some("latest") => Ok(true),
        Some("earliest") => Ok(false),
        Some(v) => Err(bad(format!("sort_by must be `latest` or `earliest`, got `{v}`"))),
    }
}

fn window(pairs: &[(String, String)], now: i64) -> Result<Option<Resolved>, ApiError> {
    match param(pairs, "window") {
        None => Ok(None),
        Some(v) => Window::parse(v).map(|w| Some(w.resolve(now))).map_err(bad),
    }
}

/// Paging position, sealed into an opaque cursor: which query it belongs to
/// (`fp`), the frozen range `[lo, hi)` and where the next page starts.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    fp: u64,
    lo: u64,
    hi: u64,
    pos: u64,
    idx: u64,
}

impl Cursor {
    fn seal(self, secret: u64) -> String {
        let mut raw = Vec::with_capacity(48);
        raw.push(1u8);
        for v in [self.fp, self.lo, self.hi, self.pos, self.idx] {
            raw.extend_from_slice(&v.to_be_bytes());
        }
        let mac = raw.iter().fold(secret, |acc, b| mix(acc, *b as u64));
        raw.extend_from_slice(&mac.to_be_bytes());
        B64.encode(raw)
    }

    fn open(text: &str, secret: u64, fp: u64) -> Result<Cursor, ApiError> {
        let forged = || ApiError(StatusCode::BAD_REQUEST, "invalid_cursor", "the cursor is not valid".into());
        let raw = B64.decode(text).map_err(|_| forged())?;
        if raw.len() != 49 || raw[0] != 1 {
            return Err(forged());
        }
        let mac = raw[..41].iter().fold(secret, |acc, b| mix(acc, *b as u64));
        let word = |i: usize| u64::from_be_bytes(raw[i..i + 8].try_into().unwrap_or([0; 8]));
        if word(41) != mac {
            return Err(forged());
        }
        let c = Cursor {
            fp: word(1),
            lo: word(9),
            hi: word(17),
            pos: word(25),
            idx: word(33),
        };
        if c.fp != fp {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "invalid_cursor",
                "the cursor belongs to another query".into(),
            ));
        }
        Ok(c)
    }
}

/// Fingerprint of a query: everything but `limit` and `cursor`.
fn fingerprint(route: &str, chain: Chain, pairs: &[(String, String)]) -> u64 {
    let mut items: Vec<&(String, String)> = pairs.iter().filter(|(k, _)| k != "limit" && k != "cursor").collect();
    items.sort();
    let mut z = mix(route.len() as u64, chain.index());
    for b in route.bytes() {
        z = mix(z, b as u64);
    }
    for (k, v) in items {
        for b in k.bytes().chain([b'=']).chain(v.bytes()).chain([0u8]) {
            z = mix(z, b as u64);
        }
    }
    z
}

fn page_start(sim: &Sim, pairs: &[(String, String)], fp: u64, fresh: impl FnOnce() -> Cursor) -> Result<Cursor, ApiError> {
    match param(pairs, "cursor") {
        Some(text) => Cursor::open(text, sim.secret, fp),
        None => Ok(fresh()),
    }
}

fn finish_list(out: &mut Vec<u8>, next: Option<Cursor>, secret: u64) {
    out.push(b']');
    if let Some(c) = next {
        out.extend_from_slice(b",\"next_cursor\":\"");
        out.extend_from_slice(c.seal(secret).as_bytes());
        out.push(b'"');
    }
    out.push(b'}');
}

/// What the two block-based list endpoints (blocks, events) share.
struct ListQuery {
    chain: Chain,
    pairs: Vec<(String, String)>,
    limit: u64,
    desc: bool,
    window: Option<Resolved>,
}

impl ListQuery {
    fn parse(sim: &Sim, chain: &str, q: &Option<String>) -> Result<ListQuery, ApiError> {
        let chain = parse_chain(chain)?;
        let pairs = query_pairs(q);
        let limit = limit(&pairs, 1000, 50)?;
        let desc = descending(&pairs)?;
        let window = window(&pairs, sim.now_ms() / 1000)?;
        Ok(ListQuery {
            chain,
            pairs,
            limit,
            desc,
            window,
        })
    }
}

/// The block range `[lo, hi)` a window selects on `chain`, clipped to the head.
fn block_range(sim: &Sim, chain: Chain, w: Option<Resolved>) -> (u64, u64) {
    let head = sim.data.head(chain, sim.now_ms());
    let (lo, hi) = match w {
        None => (0, head + 1),
        Some(Resolved::Blocks { first, last }) => (first, last.saturating_add(1)),
        Some(Resolved::Time { start, end }) => sim.data.blocks_in_time(chain, start, end, sim.opts.inclusive_end),
    };
    (lo.min(head + 1), hi.min(head + 1))
}

async fn blocks(State(sim): State<Arc<Sim>>, Path(chain): Path<String>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let ListQuery {
        chain,
        pairs,
        limit,
        desc,
        window: w,
    } = ListQuery::parse(&sim, &chain, &q)?;
    let numbers = match param(&pairs, "numbers") {
        None => None,
        Some(v) => {
            let mut list = Vec::new();
            for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                list.push(
                    item.parse::<u64>()
                        .map_err(|_| bad(format!("numbers must be block numbers, got `{item}`")))?,
                );
            }
            if list.len() > 1000 {
                return Err(bad(format!("numbers takes at most 1000 items, got {}", list.len())));
            }
            list.sort_unstable();
            list.dedup();
            Some(list)
        }
    };
    let fp = fingerprint("blocks", chain, &pairs);
    let (lo, hi) = block_range(&sim, chain, w);
    let mut out = Vec::with_capacity(limit as usize * 1400 + 64);
    out.extend_from_slice(b"{\"blocks\":[");
    let mut first = true;
    let mut emit = |out: &mut Vec<u8>, n: u64| {
        if !first {
            out.push(b',');
        }
        first = false;
        json::block(out, &sim.data.block(chain, n));
    };
    let next = if let Some(list) = numbers {
        // Numbers inside the window (and below the head), in sort order; the
        // cursor walks positions in that list.
        let selected: Vec<u64> = list.into_iter().filter(|n| (lo..hi).contains(n)).collect();
        let ordered: Vec<u64> = if desc { selected.into_iter().rev().collect() } else { selected };
        let c = page_start(&sim, &pairs, fp, || Cursor {
            fp,
            lo,
            hi,
            pos: 0,
            idx: 0,
        })?;
        let start = c.pos as usize;
        let end = (start + limit as usize).min(ordered.len());
        for n in ordered.get(start..end).unwrap_or(&[]) {
            emit(&mut out, *n);
        }
        (end < ordered.len()).then_some(Cursor { pos: end as u64, ..c })
    } else {
        let c = page_start(&sim, &pairs, fp, || Cursor {
            fp,
            lo,
            hi,
            pos: if desc { hi } else { lo },
            idx: 0,
        })?;
        // Ascending: pos is the next block; descending: pos is one past it.
        let mut pos = c.pos;
        let mut taken = 0;
        while taken < limit {
            if desc {
                if pos <= c.lo {
                    break;
                }
                pos -= 1;
                emit(&mut out, pos);
            } else {
                if pos >= c.hi {
                    break;
                }
                emit(&mut out, pos);
                pos += 1;
            }
            taken += 1;
        }
        let more = if desc { pos > c.lo } else { pos < c.hi };
        more.then_some(Cursor { pos, ..c })
    };
    finish_list(&mut out, next, sim.secret);
    Ok(ok_json(out))
}

async fn block_by_number(State(sim): State<Arc<Sim>>, Path((chain, number)): Path<(String, String)>) -> Result<Response, ApiError> {
    let chain = parse_chain(&chain)?;
    let head = sim.data.head(chain, sim.now_ms());
    let n = if number == "latest" {
        head
    } else if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
        number
            .parse::<u64>()
            .map_err(|_| bad(format!("block_number `{number}` is too large")))?
    } else {
        return Err(bad(format!("block_number must match ^(\\d+|latest)$, got `{number}`")));
    };
    if n > head {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("block {n} does not exist yet (head is {head})"),
        ));
    }
    let mut out = Vec::with_capacity(1600);
    out.extend_from_slice(b"{\"block\":");
    json::block(&mut out, &sim.data.block(chain, n));
    out.push(b'}');
    Ok(ok_json(out))
}

async fn events(State(sim): State<Arc<Sim>>, Path(chain): Path<String>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let ListQuery {
        chain,
        pairs,
        limit,
        desc,
        window: w,
    } = ListQuery::parse(&sim, &chain, &q)?;
    let contract = address_param(&pairs, "contract_address")?;
    let mut topics: Vec<[u8; 32]> = Vec::new();
    if let Some(list) = param(&pairs, "signatures") {
        for item in split_top_level(list) {
            let hex_topic = if is_hash32(item) {
                item.to_ascii_lowercase()
            } else if is_abi_signature(item) {
                signature_topic(item)
            } else {
                return Err(bad(format!(
                    "signatures: `{item}` is neither a 0x 32-byte hash nor an ABI signature like Name(type,...)"
                )));
            };
            let mut t = [0u8; 32];
            hex::decode_to_slice(&hex_topic[2..], &mut t).map_err(|_| bad("signatures: bad hex"))?;
            topics.push(t);
        }
    }
    let fp = fingerprint("events", chain, &pairs);
    let (lo, hi) = block_range(&sim, chain, w);
    let c = page_start(&sim, &pairs, fp, || Cursor {
        fp,
        lo,
        hi,
        pos: if desc { hi } else { lo },
        idx: 0,
    })?;
    let data = &sim.data;
    let mut out = Vec::with_capacity(limit as usize * 700 + 64);
    out.extend_from_slice(b"{\"events\":[");
    let mut taken = 0u64;
    let mut scanned = 0u64;
    // Ascending: (pos, idx) is the next event. Descending: pos is one past
    // the block being read and idx counts events already emitted from its top.
    let (mut pos, mut idx) = (c.pos, c.idx);
    let mut ts_block = u64::MAX;
    let mut ts = String::new();
    'blocks: loop {
        let block = if desc {
            if pos <= c.lo {
                break;
            }
            pos - 1
        } else {
            if pos >= c.hi {
                break;
            }
            pos
        };
        let count = data.event_count(chain, block) as u64;
        while idx < count {
            if taken >= limit || scanned >= sim.opts.scan_budget {
                break 'blocks;
            }
            let i = if desc { count - 1 - idx } else { idx } as u32;
            idx += 1;
            scanned += 1;
            let (addr, kind, _, _) = data.event_head(chain, block, i);
            if contract.is_some_and(|c| c != addr) || (!topics.is_empty() && !topics.contains(&data.topic0(kind))) {
                continue;
            }
            if ts_block != block {
                ts = iso(data.block_timestamp(chain, block));
                ts_block = block;
            }
            if taken > 0 {
                out.push(b',');
            }
            json::event(&mut out, &data.event(chain, block, i), &ts, sim.opts.topics_as_numbers);
            taken += 1;
        }
        idx = 0;
        if desc {
            pos -= 1
        } else {
            pos += 1
        }
        scanned += 1;
        if scanned >= sim.opts.scan_budget {
            break;
        }
    }
    let more = if desc { pos > c.lo } else { pos < c.hi };
    finish_list(&mut out, more.then_some(Cursor { pos, idx, ..c }), sim.secret);
    Ok(ok_json(out))
}

async fn token(State(sim): State<Arc<Sim>>, Path((chain, address)): Path<(String, String)>) -> Result<Response, ApiError> {
    let chain = parse_chain(&chain)?;
    let addr = parse_address(&address).ok_or_else(|| bad(format!("token_address must match ^0x[a-fA-F0-9]{{40}}$, got `{address}`")))?;
    let t = sim.data.token(chain, &addr).ok_or_else(|| {
        ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no token contract at {address} on {chain}"),
        )
    })?;
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"token\":");
    json::token(&mut out, &t);
    out.push(b'}');
    Ok(ok_json(out))
}

async fn portfolio(
    State(sim): State<Arc<Sim>>,
    Path((chain, wallet)): Path<(String, String)>,
    RawQuery(q): RawQuery,
) -> Result<Response, ApiError> {
    let chain = parse_chain(&chain)?;
    let wallet_addr =
        parse_address(&wallet).ok_or_else(|| bad(format!("wallet_address must match ^0x[a-fA-F0-9]{{40}}$, got `{wallet}`")))?;
    let pairs = query_pairs(&q);
    let limit = limit(&pairs, 31, 31)?;
    let token = address_param(&pairs, "token_address")?;
    let now = sim.now_ms() / 1000;
    let (start, end) = match window(&pairs, now)? {
        None => (now - 30 * 86_400, now),
        Some(Resolved::Time { start, end }) => (start, end),
        Some(Resolved::Blocks { .. }) => {
            return Err(bad(
                "window: portfolios take a relative window or a time interval, not a block range",
            ));
        }
    };
    // Days whose midnight lies in the window, clipped to today.
    let end = end.min(now + 1);
    let first_day = day_of(start + 86_399) as i64;
    let last_excl = if sim.opts.inclusive_end {
        day_of(end) as i64 + 1
    } else {
        day_of(end + 86_399) as i64
    };
    let (lo, hi) = (first_day.max(0) as u64, last_excl.max(first_day).max(0) as u64);
    let fp = fingerprint(&format!("portfolio/{}", wallet.to_ascii_lowercase()), chain, &pairs);
    let c = page_start(&sim, &pairs, fp, || Cursor {
        fp,
        lo,
        hi,
        pos: hi,
        idx: 0,
    })?;
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"{\"portfolio\":[");
    let mut pos = c.pos;
    let mut taken = 0;
    while pos > c.lo && taken < limit {
        pos -= 1;
        if taken > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"date\":\"");
        out.extend_from_slice(crate::vocab::window::date_string(pos as i32).as_bytes());
        out.extend_from_slice(b"\",\"holdings\":[");
        for (k, h) in sim
            .data
            .holdings(chain, &wallet_addr, pos as i32, token.as_ref())
            .iter()
            .enumerate()
        {
            if k > 0 {
                out.push(b',');
            }
            json::holding(&mut out, h);
        }
        out.extend_from_slice(b"]}");
        taken += 1;
    }
    finish_list(&mut out, (pos > c.lo).then_some(Cursor { pos, ..c }), sim.secret);
    Ok(ok_json(out))
}
