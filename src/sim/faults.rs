//! Fault injection, a layer in front of the v2 routes: latency, the API
//! key check (401, quoting the key it was sent back, as careless servers
//! do), resources the key's plan lacks (403, `--forbid`), a request quota
//! answered with 429 and `Retry-After`, and a share of requests answered
//! with a 5xx, reset mid-body or cut short. Which request gets a fault is
//! drawn deterministically from the seed. Every request and refusal is
//! counted ([`super::state::SimStats`]).

use super::reply::ApiError;
use super::state::{Sim, SimStats};
use crate::vocab::chain::Chain;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub(super) async fn faults(State(sim): State<Arc<Sim>>, headers: HeaderMap, req: Request, next: Next) -> Response {
    let opts = &sim.opts;
    sim.stats.requests.fetch_add(1, Ordering::SeqCst);
    if opts.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(opts.latency_ms)).await;
    }
    if let Some(refused) = unauthorized(&sim, &headers) {
        refusal(&sim.stats, &sim.stats.unauthorized);
        return refused;
    }
    if let Some(refused) = forbidden(&sim, &headers, req.uri().path()) {
        refusal(&sim.stats, &sim.stats.forbidden);
        return refused;
    }
    if let Some(throttled) = over_quota(&sim).await {
        return throttled;
    }
    let roll = sim.roll();
    if roll < opts.error_rate {
        return server_error(roll / opts.error_rate);
    }
    let roll = roll - opts.error_rate;
    let reset = roll >= 0.0 && roll < opts.reset_rate;
    let truncate = roll >= opts.reset_rate && roll < opts.reset_rate + opts.truncate_rate;
    let resp = next.run(req).await;
    if !(reset || truncate) || resp.status() != StatusCode::OK {
        return resp;
    }
    cut_short(resp, reset).await
}

/// Counts a refusal, and notes the time of the first.
fn refusal(stats: &SimStats, counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::SeqCst);
    let now = chrono::Utc::now().timestamp_millis();
    let _ = stats.first_refusal_ms.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst);
}

/// 401 when a key is set and the request carries another; the message
/// quotes the key sent, so that clients are tested to mask it.
fn unauthorized(sim: &Sim, headers: &HeaderMap) -> Option<Response> {
    let (key, given) = (sim.opts.api_key.as_ref()?, headers.get(header::AUTHORIZATION)?);
    let expected = format!("Bearer {key}");
    (given.as_bytes() != expected.as_bytes()).then(|| {
        let sent = String::from_utf8_lossy(given.as_bytes());
        let sent = sent.strip_prefix("Bearer ").unwrap_or(&sent);
        ApiError(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            format!("the API key `{sent}` is not valid"),
        )
        .into_response()
    })
}

/// 403 for a resource `--forbid` names: what a key (or no key) whose plan
/// lacks a chain or an endpoint gets. Whichever key is sent: a wrong one
/// got its 401 first.
fn forbidden(sim: &Sim, headers: &HeaderMap, path: &str) -> Option<Response> {
    let mut parts = path.trim_start_matches('/').split('/');
    let (Some("v2"), Some(chain), Some(endpoint)) = (parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    let endpoint = if endpoint == "wallets" { "portfolio" } else { endpoint };
    let chain = chain.parse::<Chain>().ok()?;
    sim.forbidden
        .iter()
        .any(|(c, e)| c.is_none_or(|c| c == chain) && e.is_none_or(|e| e == endpoint))
        .then(|| {
            let whose = if headers.contains_key(header::AUTHORIZATION) {
                "this API key's plan does not include"
            } else {
                "an API key whose plan includes them is needed for"
            };
            ApiError(StatusCode::FORBIDDEN, "forbidden", format!("{whose} {endpoint} on {chain}")).into_response()
        })
}

/// 429 with `Retry-After` when the request quota (a token bucket of a
/// second's worth) is spent.
async fn over_quota(sim: &Sim) -> Option<Response> {
    let rps = sim.opts.quota_rps;
    if rps <= 0.0 {
        return None;
    }
    let mut b = sim.bucket.lock().await;
    let now = Instant::now();
    let cap = rps.max(1.0);
    b.0 = (b.0 + now.duration_since(b.1).as_secs_f64() * rps).min(cap);
    b.1 = now;
    if b.0 < 1.0 {
        let wait = ((1.0 - b.0) / rps).ceil().max(1.0) as u64;
        drop(b);
        let mut resp = ApiError(StatusCode::TOO_MANY_REQUESTS, "rate_limited", "request quota exceeded".into()).into_response();
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(wait));
        return Some(resp);
    }
    b.0 -= 1.0;
    None
}

/// One of three 5xx answers, by `share` in `[0, 1)`: a proxy's HTML 502,
/// the service's JSON 503, an HTML 500.
fn server_error(share: f64) -> Response {
    match (share * 3.0) as u32 {
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
    }
}

/// The first half of `resp`'s body: with the connection reset after it
/// (`reset`), or as a complete but truncated body.
async fn cut_short(resp: Response, reset: bool) -> Response {
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
