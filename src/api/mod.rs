//! Typed client of the Blockchain Data Service v2.
//!
//! Owns retries: 429, 5xx, timeouts, connection errors and truncated or
//! unparsable bodies are retried with exponential backoff and jitter
//! (`backon`), honouring `Retry-After`; any other 4xx fails at once with the
//! server's message and the request path. The API key only ever travels in
//! the `Authorization` header: it is in no error, log line or `Debug` output.

mod limit;
pub mod types;

pub use limit::Limiter;
use types::*;

use crate::chain::Chain;
use backon::BackoffBuilder;
use serde::de::DeserializeOwned;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// An API key that never prints.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Wraps a key.
    pub fn new(s: String) -> Secret {
        Secret(s)
    }
    fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Client settings (from `[source]`).
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `http(s)://host[:port]`, without `/v2`.
    pub base_url: String,
    /// The bearer key, if any.
    pub api_key: Option<Secret>,
    /// Name of the variable the key came from, for error messages.
    pub api_key_env: Option<String>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub max_retries: usize,
    /// Requests in flight at once.
    pub max_concurrency: usize,
    /// Optional request-rate bound.
    pub requests_per_second: Option<f64>,
    /// Smallest backoff delay.
    pub min_backoff: Duration,
    /// Largest backoff delay.
    pub max_backoff: Duration,
}

impl ClientConfig {
    /// Defaults for `base_url`.
    pub fn new(base_url: impl Into<String>) -> ClientConfig {
        ClientConfig {
            base_url: base_url.into(),
            api_key: None,
            api_key_env: None,
            timeout: Duration::from_secs(30),
            max_retries: 10,
            max_concurrency: 8,
            requests_per_second: None,
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(10),
        }
    }
}

/// Errors of one request, after retries.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// A 4xx other than 401/429: not retried.
    #[error("the service rejected GET {path}: HTTP {status}{}: {message}", code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    Rejected {
        /// HTTP status.
        status: u16,
        /// Error code from the body, if any.
        code: Option<String>,
        /// The server's message.
        message: String,
        /// Request path and query.
        path: String,
    },
    /// 401: the key was refused.
    #[error("the service refused the API key{}: HTTP 401 on GET {path}: {message}", env.as_deref().map(|e| format!(" taken from ${e}")).unwrap_or_default())]
    Unauthorized {
        /// Variable that held the key.
        env: Option<String>,
        /// The server's message.
        message: String,
        /// Request path and query.
        path: String,
    },
    /// Every attempt failed with a retryable error.
    #[error("GET {path} failed after {attempts} attempts; last error: {last}")]
    Exhausted {
        /// Request path and query.
        path: String,
        /// Attempts made.
        attempts: usize,
        /// What the last attempt saw.
        last: String,
    },
    /// The base URL could not be reached at all.
    #[error("cannot reach the service at {base_url} (GET {path}) after {attempts} attempts: {last}")]
    Unreachable {
        /// The configured base URL.
        base_url: String,
        /// Request path and query.
        path: String,
        /// Attempts made.
        attempts: usize,
        /// The connection error.
        last: String,
    },
    /// The request could not be built (bad base URL).
    #[error("cannot build a request to {base_url}: {message}")]
    Config {
        /// The configured base URL.
        base_url: String,
        /// What is wrong.
        message: String,
    },
}

/// Counters of everything the client did, for progress and reports.
#[derive(Debug, Default)]
pub struct Stats {
    /// Requests sent (every attempt).
    pub requests: AtomicU64,
    /// Attempts that were retried.
    pub retries: AtomicU64,
    /// 429 answers.
    pub throttled: AtomicU64,
    /// 5xx answers.
    pub server_errors: AtomicU64,
    /// Connection errors, resets and timeouts.
    pub transport_errors: AtomicU64,
    /// Bodies that were cut short or did not parse.
    pub bad_bodies: AtomicU64,
    /// Response bytes received.
    pub bytes: AtomicU64,
}

impl Stats {
    /// Reads a counter.
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// Sort order of list endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// Oldest first.
    Earliest,
    /// Newest first (the service default).
    Latest,
}

/// Query of `GET /blocks`.
#[derive(Debug, Clone, Default)]
pub struct BlocksQuery {
    /// Explicit block numbers (≤ 1000).
    pub numbers: Option<Vec<u64>>,
    /// Window in service form.
    pub window: Option<String>,
    /// Order.
    pub sort: Option<Sort>,
    /// Page size (1..=1000).
    pub limit: Option<u32>,
    /// Cursor from the previous page.
    pub cursor: Option<String>,
}

/// Query of `GET /events`.
#[derive(Debug, Clone, Default)]
pub struct EventsQuery {
    /// Contract filter.
    pub contract_address: Option<String>,
    /// topic0 hashes or ABI signatures.
    pub signatures: Vec<String>,
    /// Window in service form.
    pub window: Option<String>,
    /// Order.
    pub sort: Option<Sort>,
    /// Page size (1..=1000).
    pub limit: Option<u32>,
    /// Cursor from the previous page.
    pub cursor: Option<String>,
}

/// Query of `GET /wallets/{w}/portfolio/daily`.
#[derive(Debug, Clone, Default)]
pub struct PortfolioQuery {
    /// Token filter.
    pub token_address: Option<String>,
    /// Window in service form.
    pub window: Option<String>,
    /// Page size (1..=31).
    pub limit: Option<u32>,
    /// Cursor from the previous page.
    pub cursor: Option<String>,
}

/// The client. Cheap to clone; clones share limits and counters.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    cfg: Arc<ClientConfig>,
    limiter: Arc<Limiter>,
    stats: Arc<Stats>,
}

enum Attempt<T> {
    Done(T),
    Retry {
        why: String,
        after: Option<Duration>,
        transport: bool,
    },
    Fail(ApiError),
}

impl Client {
    /// Builds a client; fails only when the HTTP stack cannot start.
    pub fn new(cfg: ClientConfig) -> Result<Client, ApiError> {
        let http = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .connect_timeout(cfg.timeout.min(Duration::from_secs(10)))
            .pool_max_idle_per_host(cfg.max_concurrency.max(1) * 2)
            .tcp_nodelay(true)
            .user_agent(concat!("chainetl/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ApiError::Config {
                base_url: cfg.base_url.clone(),
                message: e.to_string(),
            })?;
        let limiter = Arc::new(Limiter::new(cfg.max_concurrency, cfg.requests_per_second));
        Ok(Client {
            http,
            cfg: Arc::new(cfg),
            limiter,
            stats: Arc::new(Stats::default()),
        })
    }

    /// The same client (connections, limits) counting into `stats`, so
    /// requests can be attributed to an export.
    pub fn with_stats(&self, stats: Arc<Stats>) -> Client {
        Client { stats, ..self.clone() }
    }

    /// The shared counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.cfg
    }

    /// `GET /v2/{chain}/blocks`.
    pub async fn blocks(&self, chain: Chain, q: &BlocksQuery) -> Result<BlocksPage, ApiError> {
        let mut params = Vec::new();
        if let Some(n) = &q.numbers {
            params.push(("numbers", n.iter().map(u64::to_string).collect::<Vec<_>>().join(",")));
        }
        push_common(&mut params, &q.window, q.sort, q.limit, &q.cursor);
        self.get(&format!("/v2/{chain}/blocks"), &params).await
    }

    /// `GET /v2/{chain}/blocks/{number}` (`None`: latest).
    pub async fn block(&self, chain: Chain, number: Option<u64>) -> Result<Block, ApiError> {
        let n = number.map(|n| n.to_string()).unwrap_or_else(|| "latest".into());
        let r: BlockResponse = self.get(&format!("/v2/{chain}/blocks/{n}"), &[]).await?;
        Ok(r.block)
    }

    /// `GET /v2/{chain}/events`. The page borrows from the response body, so
    /// it is handed to `read` (straight into Arrow builders, in the
    /// exporter) rather than returned.
    pub async fn events<T>(&self, chain: Chain, q: &EventsQuery, read: impl Fn(EventsPage<'_>) -> T + Sync) -> Result<T, ApiError> {
        let mut params = Vec::new();
        if let Some(c) = &q.contract_address {
            params.push(("contract_address", c.clone()));
        }
        if !q.signatures.is_empty() {
            params.push(("signatures", q.signatures.join(",")));
        }
        push_common(&mut params, &q.window, q.sort, q.limit, &q.cursor);
        let parse = |body: &[u8]| serde_json::from_slice::<EventsPage<'_>>(body).map(&read);
        self.get_with(&format!("/v2/{chain}/events"), &params, &parse).await
    }

    /// `GET /v2/{chain}/wallets/{wallet}/portfolio/daily`.
    pub async fn portfolio(&self, chain: Chain, wallet: &str, q: &PortfolioQuery) -> Result<PortfolioPage, ApiError> {
        let mut params = Vec::new();
        if let Some(t) = &q.token_address {
            params.push(("token_address", t.clone()));
        }
        push_common(&mut params, &q.window, None, q.limit, &q.cursor);
        self.get(&format!("/v2/{chain}/wallets/{wallet}/portfolio/daily"), &params).await
    }

    /// `GET /v2/{chain}/tokens/{address}`; `Ok(None)` when the service answers 404.
    pub async fn token(&self, chain: Chain, address: &str) -> Result<Option<Token>, ApiError> {
        match self.get::<TokenResponse>(&format!("/v2/{chain}/tokens/{address}"), &[]).await {
            Ok(r) => Ok(Some(r.token)),
            Err(ApiError::Rejected { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn get<T: DeserializeOwned>(&self, path: &str, params: &[(&str, String)]) -> Result<T, ApiError> {
        self.get_with(path, params, &|body: &[u8]| serde_json::from_slice::<T>(body)).await
    }

    /// GET with retries; `parse` reads a 2xx body (a body it cannot read is
    /// retried like a transient failure).
    async fn get_with<T>(
        &self,
        path: &str,
        params: &[(&str, String)],
        parse: &(dyn Fn(&[u8]) -> Result<T, serde_json::Error> + Sync),
    ) -> Result<T, ApiError> {
        let mut path_q = path.to_string();
        if !params.is_empty() {
            let mut s = form_urlencoded::Serializer::new(String::new());
            for (k, v) in params {
                s.append_pair(k, v);
            }
            path_q.push('?');
            path_q.push_str(&s.finish());
        }
        let url = format!("{}{}", self.cfg.base_url.trim_end_matches('/'), path_q);
        let mut backoff = backon::ExponentialBuilder::default()
            .with_min_delay(self.cfg.min_backoff)
            .with_max_delay(self.cfg.max_backoff)
            .with_jitter()
            .with_max_times(self.cfg.max_retries)
            .build();
        let mut attempts = 0;
        let mut only_transport = true;
        loop {
            attempts += 1;
            let (why, after, transport) = match self.attempt(&url, &path_q, parse).await {
                Attempt::Done(v) => return Ok(v),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry { why, after, transport } => (why, after, transport),
            };
            only_transport &= transport;
            let Some(delay) = backoff.next() else {
                return Err(if only_transport {
                    ApiError::Unreachable {
                        base_url: self.cfg.base_url.clone(),
                        path: path_q,
                        attempts,
                        last: why,
                    }
                } else {
                    ApiError::Exhausted {
                        path: path_q,
                        attempts,
                        last: why,
                    }
                });
            };
            self.stats.retries.fetch_add(1, Ordering::Relaxed);
            let delay = after.map_or(delay, |a| a.max(delay));
            tracing::debug!(path = %path_q, attempt = attempts, delay_ms = delay.as_millis() as u64, "retrying: {why}");
            tokio::time::sleep(delay).await;
        }
    }

    async fn attempt<T>(&self, url: &str, path: &str, parse: &(dyn Fn(&[u8]) -> Result<T, serde_json::Error> + Sync)) -> Attempt<T> {
        let permit = self.limiter.acquire().await;
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let mut req = self.http.get(url).header("accept", "application/json");
        if let Some(k) = &self.cfg.api_key {
            req = req.bearer_auth(k.expose());
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                self.stats.transport_errors.fetch_add(1, Ordering::Relaxed);
                if e.is_builder() {
                    return Attempt::Fail(ApiError::Config {
                        base_url: self.cfg.base_url.clone(),
                        message: describe(&e),
                    });
                }
                return Attempt::Retry {
                    why: describe(&e),
                    after: None,
                    transport: true,
                };
            }
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(300.0)));
        let body = match resp.bytes().await {
            Ok(b) => b,
            Err(e) => {
                self.stats.transport_errors.fetch_add(1, Ordering::Relaxed);
                return Attempt::Retry {
                    why: format!("HTTP {status}, body not received: {}", describe(&e)),
                    after: None,
                    transport: false,
                };
            }
        };
        // The slot is for the exchange; parsing (and, for events, decoding)
        // must not hold it.
        drop(permit);
        self.stats.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
        match status {
            200..=299 => match parse(&body) {
                Ok(v) => {
                    self.limiter.accepted().await;
                    Attempt::Done(v)
                }
                Err(e) => {
                    self.stats.bad_bodies.fetch_add(1, Ordering::Relaxed);
                    Attempt::Retry {
                        why: format!("unreadable response body ({} bytes): {e}", body.len()),
                        after: None,
                        transport: false,
                    }
                }
            },
            429 => {
                self.stats.throttled.fetch_add(1, Ordering::Relaxed);
                self.limiter.throttled().await;
                let wait = retry_after.unwrap_or(Duration::from_secs(1));
                Attempt::Retry {
                    why: "HTTP 429 Too Many Requests".into(),
                    after: Some(wait),
                    transport: false,
                }
            }
            500..=599 => {
                self.stats.server_errors.fetch_add(1, Ordering::Relaxed);
                Attempt::Retry {
                    why: format!("HTTP {status}: {}", error_message(&body)),
                    after: retry_after,
                    transport: false,
                }
            }
            401 => Attempt::Fail(ApiError::Unauthorized {
                env: self.cfg.api_key_env.clone(),
                message: error_message(&body),
                path: path.to_string(),
            }),
            _ => {
                let (code, message) = error_parts(&body);
                Attempt::Fail(ApiError::Rejected {
                    status,
                    code,
                    message,
                    path: path.to_string(),
                })
            }
        }
    }
}

fn push_common(params: &mut Vec<(&str, String)>, window: &Option<String>, sort: Option<Sort>, limit: Option<u32>, cursor: &Option<String>) {
    if let Some(w) = window {
        params.push(("window", w.clone()));
    }
    if let Some(s) = sort {
        params.push(("sort_by", if s == Sort::Earliest { "earliest" } else { "latest" }.into()));
    }
    if let Some(l) = limit {
        params.push(("limit", l.to_string()));
    }
    if let Some(c) = cursor {
        params.push(("cursor", c.clone()));
    }
}

/// A reqwest error with its causes, without the URL (which is reported separately).
fn describe(e: &reqwest::Error) -> String {
    let mut s = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "connection failed".to_string()
    } else {
        "request failed".to_string()
    };
    let mut src = std::error::Error::source(e);
    while let Some(cause) = src {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        src = cause.source();
    }
    s
}

fn error_parts(body: &[u8]) -> (Option<String>, String) {
    if let Ok(b) = serde_json::from_slice::<ErrorBody>(body) {
        if let Some(d) = b.error {
            return (d.code, d.message.unwrap_or_default());
        }
        if let Some(m) = b.message {
            return (None, m);
        }
    }
    let text = String::from_utf8_lossy(body);
    let text: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
    (None, if text.trim().is_empty() { "(empty body)".into() } else { text })
}

fn error_message(body: &[u8]) -> String {
    let (code, msg) = error_parts(body);
    match code {
        Some(c) => format!("{c}: {msg}"),
        None => msg,
    }
}
