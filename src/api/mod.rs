//! Typed client of the Blockchain Data Service v2.
//!
//! Owns retries: 429, 5xx, timeouts, connection errors and truncated bodies
//! are retried with exponential backoff and jitter (`backon`), honouring
//! `Retry-After` up to `max_retry_after`; any other 4xx fails at once with
//! the server's message and the request URL. A 2xx body that is not the
//! documented JSON (not JSON at all, invalid UTF-8, or JSON of the wrong
//! shape) fails at once too: the service would send it again.
//!
//! Bounds, whatever the server does:
//! - memory: a body is read incrementally and never held past
//!   `max_response_bytes` (error bodies past [`ERROR_BODY_BYTES`]), so the
//!   client holds at most `max_concurrency` such bodies;
//! - time: each request (all its attempts and waits) ends within its
//!   budget, `timeout × (max_retries + 1)`;
//! - reachability: when no request of the client has reached the service
//!   for [`ClientConfig::down_after`], every request fails at once with one
//!   [`ApiError::ServiceDown`] (the job stops rather than each unit
//!   retrying to exhaustion in turn);
//! - cancellation: once the cancel signal is set, waits and requests in
//!   flight end at once and no request is sent.
//!
//! The API key only ever travels in the `Authorization` header: it is in
//! no error, log line or `Debug` output, and whatever a server quotes back
//! is passed through [`crate::util::redact`] before it reaches an error.

mod limit;
pub mod types;

pub use limit::Limiter;
use types::*;

use crate::spec::defaults;
use crate::util::redact::redact;
use crate::vocab::chain::Chain;
use backon::BackoffBuilder;
use serde::de::DeserializeOwned;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Error bodies (4xx, 5xx) are read this far: enough for any message,
/// and what a hostile server sends past it is not kept.
pub const ERROR_BODY_BYTES: usize = 64 << 10;

/// Smallest backoff delay between attempts.
pub const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// Largest backoff delay between attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);

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
    /// Largest response body accepted.
    pub max_response_bytes: u64,
    /// Longest `Retry-After` honoured; a longer one is waited this long.
    pub max_retry_after: Duration,
}

impl ClientConfig {
    /// Defaults for `base_url`: the spec's defaults ([`defaults`]) and the
    /// backoff bounds [`MIN_BACKOFF`], [`MAX_BACKOFF`].
    pub fn new(base_url: impl Into<String>) -> ClientConfig {
        ClientConfig {
            base_url: base_url.into(),
            api_key: None,
            api_key_env: None,
            timeout: Duration::from_secs(defaults::TIMEOUT_SECS),
            max_retries: defaults::MAX_RETRIES,
            max_concurrency: defaults::MAX_CONCURRENCY,
            requests_per_second: None,
            min_backoff: MIN_BACKOFF,
            max_backoff: MAX_BACKOFF,
            max_response_bytes: defaults::MAX_RESPONSE_MB << 20,
            max_retry_after: Duration::from_secs(defaults::MAX_RETRY_AFTER_SECS),
        }
    }

    /// The longest one request may take, all attempts and waits included:
    /// as long as every attempt timing out.
    pub fn budget(&self) -> Duration {
        self.timeout
            .saturating_mul(u32::try_from(self.max_retries).unwrap_or(u32::MAX).saturating_add(1))
    }

    /// How long to wait for a connection.
    pub fn connect_timeout(&self) -> Duration {
        self.timeout.min(Duration::from_secs(10))
    }

    /// When no request has reached the service for this long (and the
    /// latest could not connect), the service is declared down: three
    /// connect timeouts, between 5 s and a minute.
    pub fn down_after(&self) -> Duration {
        (self.connect_timeout() * 3).clamp(Duration::from_secs(5), Duration::from_secs(60))
    }
}

/// Errors of one request, after retries. URLs in them have any password
/// masked, and quoted server text has every registered secret masked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// A 4xx other than 401/429: not retried.
    #[error("the service rejected GET {url}: HTTP {status}{}: {message}", code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    Rejected {
        /// HTTP status.
        status: u16,
        /// Error code from the body, if any.
        code: Option<String>,
        /// The server's message.
        message: String,
        /// The request URL.
        url: String,
    },
    /// 401: the key was refused.
    #[error("the service refused the API key{}: HTTP 401 on GET {url}: {message}", env.as_deref().map(|e| format!(" taken from ${e}")).unwrap_or_default())]
    Unauthorized {
        /// Variable that held the key.
        env: Option<String>,
        /// The server's message.
        message: String,
        /// The request URL.
        url: String,
    },
    /// Every attempt failed with a retryable error.
    #[error("GET {url} failed after {attempts} attempts; last error: {last}")]
    Exhausted {
        /// The request URL.
        url: String,
        /// Attempts made.
        attempts: usize,
        /// What the last attempt saw.
        last: String,
    },
    /// Retrying would overrun the request's time budget.
    #[error(
        "GET {url} gave up after {attempts} attempts: another would end past the request's time budget of {} s \
         (source.timeout_secs × (source.max_retries + 1)); last error: {last}",
        budget.as_secs()
    )]
    OverBudget {
        /// The request URL.
        url: String,
        /// Attempts made.
        attempts: usize,
        /// The budget.
        budget: Duration,
        /// What the last attempt saw.
        last: String,
    },
    /// The base URL could not be reached at all by this request.
    #[error("cannot reach the service at {base_url} (GET {url}) after {attempts} attempts: {last}")]
    Unreachable {
        /// The configured base URL.
        base_url: String,
        /// The request URL.
        url: String,
        /// Attempts made.
        attempts: usize,
        /// The connection error.
        last: String,
    },
    /// No request of the client has connected for a while: every request fails.
    #[error(
        "cannot connect to the service at {base_url}: no request has reached it for {} s; last error: {last}",
        secs.as_secs()
    )]
    ServiceDown {
        /// The configured base URL.
        base_url: String,
        /// How long nothing connected.
        secs: Duration,
        /// The connection error, with the OS error.
        last: String,
    },
    /// A response body over the cap: not retried (the service would send
    /// it again).
    #[error(
        "GET {url}: the response body is larger than {} MiB (source.max_response_mb); not retried: \
         the service misbehaves, or pages this large need a higher source.max_response_mb",
        limit >> 20
    )]
    TooLarge {
        /// The request URL.
        url: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// A 2xx body that is not the documented JSON: not retried.
    #[error("{}", bad_body_text(at, *row, field, message, url))]
    BadBody {
        /// Where the page belongs (chain, dataset, unit, page), set by the pager.
        at: Option<String>,
        /// The record within the page.
        row: Option<usize>,
        /// The field.
        field: Option<String>,
        /// What is wrong.
        message: String,
        /// The request URL.
        url: String,
    },
    /// The job was interrupted (SIGINT/SIGTERM) before the request ended.
    #[error("interrupted")]
    Cancelled,
    /// The request could not be built (bad base URL).
    #[error("cannot build a request to {base_url}: {message}")]
    Config {
        /// The configured base URL.
        base_url: String,
        /// What is wrong.
        message: String,
    },
}

fn bad_body_text(at: &Option<String>, row: Option<usize>, field: &Option<String>, message: &str, url: &str) -> String {
    let mut s = at.clone().unwrap_or_else(|| "response".into());
    if let Some(r) = row {
        s.push_str(&format!(", row {r}"));
    }
    if let Some(f) = field {
        s.push_str(&format!(": field `{f}`"));
    }
    format!("{s}: {message} (GET {url}); not retried: the service sent a body that is not the documented JSON")
}

impl ApiError {
    /// Says where a bad body belongs (`ethereum events unit X, page 3`).
    pub fn at(self, place: impl FnOnce() -> String) -> ApiError {
        match self {
            ApiError::BadBody {
                at: None,
                row,
                field,
                message,
                url,
            } => ApiError::BadBody {
                at: Some(place()),
                row,
                field,
                message,
                url,
            },
            e => e,
        }
    }
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

/// The client. Cheap to clone; clones share limits, counters, the
/// service's health and the cancel signal.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    cfg: Arc<ClientConfig>,
    limiter: Arc<Limiter>,
    stats: Arc<Stats>,
    health: Arc<Health>,
    cancel: Option<watch::Receiver<bool>>,
    /// `base_url` with any password masked, for messages.
    shown_base: Arc<str>,
}

/// Whether the service can be reached, shared by every request. The
/// service is declared down when connections have failed, with nothing
/// reaching it in between, for a whole `down_after`: counted from the
/// first failure, so that a long idle spell (follow mode between polls)
/// is not mistaken for an outage.
#[derive(Debug)]
struct Health {
    start: Instant,
    /// Milliseconds after `start` of the last exchange that reached the service.
    last_contact_ms: AtomicU64,
    /// Milliseconds after `start` of the first failed connection since
    /// then (`NONE`: none).
    failing_since_ms: AtomicU64,
    /// Set once, when the service is declared down.
    down: OnceLock<(Duration, String)>,
    /// Wakes requests waiting to retry when the service is declared down.
    down_tx: watch::Sender<bool>,
}

const NONE: u64 = u64::MAX;

impl Health {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    fn contact(&self) {
        self.last_contact_ms.fetch_max(self.now_ms(), Ordering::Relaxed);
        self.failing_since_ms.store(NONE, Ordering::Relaxed);
    }

    /// How long connections have failed with nothing reaching the service.
    fn failing_for(&self) -> Duration {
        let since = self.failing_since_ms.load(Ordering::Relaxed);
        if since == NONE {
            return Duration::ZERO;
        }
        let since = since.max(self.last_contact_ms.load(Ordering::Relaxed));
        Duration::from_millis(self.now_ms().saturating_sub(since))
    }

    /// How long until the service would be declared down, if nothing reaches it.
    fn down_in(&self, after: Duration) -> Duration {
        after.saturating_sub(self.failing_for())
    }

    /// A connection failed: declares the service down when connections
    /// have failed, with nothing reaching it, for `after`.
    fn connect_failed(&self, after: Duration, why: &str) {
        let _ = self
            .failing_since_ms
            .compare_exchange(NONE, self.now_ms(), Ordering::Relaxed, Ordering::Relaxed);
        let silent = self.failing_for();
        if silent >= after && self.down.set((silent, why.to_string())).is_ok() {
            self.down_tx.send_replace(true);
        }
    }
}

enum Attempt<T> {
    Done(T),
    Retry {
        why: String,
        after: Option<Duration>,
        transport: bool,
        /// No connection was made.
        connect: bool,
    },
    Fail(ApiError),
}

/// Reads a 2xx body into `T`, and on failure says where in the body
/// (`events[3].log_index`) the first bad value is.
struct Parser<'p, T> {
    parse: &'p (dyn Fn(&[u8]) -> Result<T, serde_json::Error> + Sync),
    locate: &'p (dyn Fn(&[u8]) -> Option<String> + Sync),
}

impl Client {
    /// Builds a client; fails only when the HTTP stack cannot start.
    pub fn new(cfg: ClientConfig) -> Result<Client, ApiError> {
        let shown_base: Arc<str> = crate::util::redact::register_url(&cfg.base_url).into();
        let http = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .connect_timeout(cfg.connect_timeout())
            .pool_max_idle_per_host(cfg.max_concurrency.max(1) * 2)
            .tcp_nodelay(true)
            .user_agent(concat!("chainetl/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ApiError::Config {
                base_url: shown_base.to_string(),
                message: redact(&e.to_string()).into_owned(),
            })?;
        let limiter = Arc::new(Limiter::new(cfg.max_concurrency, cfg.requests_per_second));
        Ok(Client {
            http,
            cfg: Arc::new(cfg),
            limiter,
            stats: Arc::new(Stats::default()),
            health: Arc::new(Health {
                start: Instant::now(),
                last_contact_ms: AtomicU64::new(0),
                failing_since_ms: AtomicU64::new(NONE),
                down: OnceLock::new(),
                down_tx: watch::Sender::new(false),
            }),
            cancel: None,
            shown_base,
        })
    }

    /// The same client, stopping every wait and request once `cancel`
    /// turns true (requests then fail with [`ApiError::Cancelled`]).
    pub fn with_cancel(&self, cancel: watch::Receiver<bool>) -> Client {
        Client {
            cancel: Some(cancel),
            ..self.clone()
        }
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

    /// The error every request now fails with, once the service has been
    /// declared down.
    pub fn service_down(&self) -> Option<ApiError> {
        self.health.down.get().map(|(secs, last)| ApiError::ServiceDown {
            base_url: self.shown_base.to_string(),
            secs: *secs,
            last: last.clone(),
        })
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
        let parser = Parser {
            parse: &parse,
            locate: &|body: &[u8]| {
                let mut de = serde_json::Deserializer::from_slice(body);
                serde_path_to_error::deserialize::<_, EventsPage<'_>>(&mut de)
                    .err()
                    .map(|e| e.path().to_string())
            },
        };
        self.get_with(&format!("/v2/{chain}/events"), &params, parser).await
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

    /// `GET /v2/{chain}/tokens/{address}`; `Ok(None)` when the service
    /// answers its documented "no such token": a 404 whose JSON error code
    /// is `not_found`. Any other 404 (a wrong base URL path, a proxy's
    /// page) is an error naming the URL, never "no such token".
    pub async fn token(&self, chain: Chain, address: &str) -> Result<Option<Token>, ApiError> {
        match self.get::<TokenResponse>(&format!("/v2/{chain}/tokens/{address}"), &[]).await {
            Ok(r) => Ok(Some(r.token)),
            Err(ApiError::Rejected {
                status: 404,
                code: Some(c),
                ..
            }) if c == "not_found" => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn get<T: DeserializeOwned>(&self, path: &str, params: &[(&str, String)]) -> Result<T, ApiError> {
        let parser = Parser {
            parse: &|body: &[u8]| serde_json::from_slice::<T>(body),
            locate: &locate::<T>,
        };
        self.get_with(path, params, parser).await
    }

    /// Resolves when the job is cancelled or the service declared down,
    /// with the error the request ends with.
    async fn stopped(&self) -> ApiError {
        let mut cancel = self.cancel.clone();
        let mut down = self.health.down_tx.subscribe();
        loop {
            if cancel.as_ref().is_some_and(|c| *c.borrow()) {
                return ApiError::Cancelled;
            }
            if let Some(e) = self.service_down() {
                return e;
            }
            let cancelled = async {
                match cancel.as_mut() {
                    Some(c) => c.changed().await.is_ok(),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                alive = cancelled => if !alive {
                    // The sender is gone: nothing can cancel any more.
                    cancel = None;
                },
                _ = down.changed() => {}
            }
        }
    }

    /// GET with retries, within the request's time budget; stops at once
    /// when the job is cancelled or the service declared down.
    async fn get_with<T>(&self, path: &str, params: &[(&str, String)], parser: Parser<'_, T>) -> Result<T, ApiError> {
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
        let shown = format!("{}{}", self.shown_base.trim_end_matches('/'), path_q);
        let mut backoff = backon::ExponentialBuilder::default()
            .with_min_delay(self.cfg.min_backoff)
            .with_max_delay(self.cfg.max_backoff)
            .with_jitter()
            .with_max_times(self.cfg.max_retries)
            .build();
        let budget = self.cfg.budget();
        let started = Instant::now();
        let stopped = self.stopped();
        tokio::pin!(stopped);
        let mut attempts = 0;
        let mut only_transport = true;
        loop {
            attempts += 1;
            let left = budget.saturating_sub(started.elapsed());
            // `biased`: once cancelled, no further request is sent.
            let outcome = tokio::select! {
                biased;
                e = &mut stopped => return Err(e),
                a = self.attempt(&url, &shown, left, &parser) => a,
            };
            let (why, after, transport, connect) = match outcome {
                Attempt::Done(v) => return Ok(v),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry {
                    why,
                    after,
                    transport,
                    connect,
                } => (why, after, transport, connect),
            };
            only_transport &= transport;
            let Some(delay) = backoff.next() else {
                return Err(if only_transport {
                    ApiError::Unreachable {
                        base_url: self.shown_base.to_string(),
                        url: shown,
                        attempts,
                        last: why,
                    }
                } else {
                    ApiError::Exhausted {
                        url: shown,
                        attempts,
                        last: why,
                    }
                });
            };
            let mut delay = after.map_or(delay, |a| a.max(delay));
            if connect {
                // Try again when the service would be declared down, so
                // that the job learns it then, not a backoff later.
                delay = delay.min(self.health.down_in(self.cfg.down_after()) + Duration::from_millis(10));
            }
            if started.elapsed() + delay >= budget {
                return Err(ApiError::OverBudget {
                    url: shown,
                    attempts,
                    budget,
                    last: why,
                });
            }
            self.stats.retries.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(path = %path_q, attempt = attempts, delay_ms = delay.as_millis() as u64, "retrying: {why}");
            tokio::select! {
                biased;
                e = &mut stopped => return Err(e),
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// One attempt, within `left` of the request's budget.
    async fn attempt<T>(&self, url: &str, shown: &str, left: Duration, parser: &Parser<'_, T>) -> Attempt<T> {
        let permit = self.limiter.acquire().await;
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let mut req = self
            .http
            .get(url)
            .header("accept", "application/json")
            .timeout(self.cfg.timeout.min(left).max(Duration::from_millis(1)));
        if let Some(k) = &self.cfg.api_key {
            req = req.bearer_auth(k.expose());
        }
        let mut resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                self.stats.transport_errors.fetch_add(1, Ordering::Relaxed);
                let why = describe(&e);
                if e.is_builder() {
                    return Attempt::Fail(ApiError::Config {
                        base_url: self.shown_base.to_string(),
                        message: why,
                    });
                }
                if e.is_connect() {
                    self.health.connect_failed(self.cfg.down_after(), &why);
                } else {
                    // It connected (then timed out or was cut off): the
                    // service is there.
                    self.health.contact();
                }
                return Attempt::Retry {
                    why,
                    after: None,
                    transport: true,
                    connect: e.is_connect(),
                };
            }
        };
        self.health.contact();
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(self.cfg.max_retry_after.as_secs_f64())));
        let ok = (200..300).contains(&status);
        let limit = if ok { self.cfg.max_response_bytes } else { ERROR_BODY_BYTES as u64 };
        if ok && resp.content_length().is_some_and(|n| n > limit) {
            return Attempt::Fail(ApiError::TooLarge {
                url: shown.to_string(),
                limit,
            });
        }
        let body = match read_body(&mut resp, limit, !ok).await {
            Ok((body, false)) => body,
            Ok((_, true)) if ok => {
                return Attempt::Fail(ApiError::TooLarge {
                    url: shown.to_string(),
                    limit,
                });
            }
            // An error body past the cap: its start is enough for the message.
            Ok((body, true)) => body,
            Err(e) => {
                self.stats.transport_errors.fetch_add(1, Ordering::Relaxed);
                return Attempt::Retry {
                    why: format!("HTTP {status}, body not received: {}", describe(&e)),
                    after: None,
                    transport: false,
                    connect: false,
                };
            }
        };
        // The slot is for the exchange; parsing (and, for events, decoding)
        // must not hold it.
        drop(permit);
        self.stats.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
        match status {
            200..=299 => match (parser.parse)(&body) {
                Ok(v) => {
                    self.limiter.accepted().await;
                    Attempt::Done(v)
                }
                Err(e) if e.classify() == serde_json::error::Category::Eof => {
                    // Cut short in transit: the next attempt may get it whole.
                    self.stats.bad_bodies.fetch_add(1, Ordering::Relaxed);
                    Attempt::Retry {
                        why: format!("response body cut short ({} bytes): {e}", body.len()),
                        after: None,
                        transport: false,
                        connect: false,
                    }
                }
                Err(e) => {
                    self.stats.bad_bodies.fetch_add(1, Ordering::Relaxed);
                    Attempt::Fail(bad_body(&body, &e, parser.locate, shown))
                }
            },
            429 => {
                self.stats.throttled.fetch_add(1, Ordering::Relaxed);
                self.limiter.throttled().await;
                let wait = retry_after.unwrap_or(Duration::from_secs(1).min(self.cfg.max_retry_after));
                Attempt::Retry {
                    why: "HTTP 429 Too Many Requests".into(),
                    after: Some(wait),
                    transport: false,
                    connect: false,
                }
            }
            500..=599 => {
                self.stats.server_errors.fetch_add(1, Ordering::Relaxed);
                Attempt::Retry {
                    why: format!("HTTP {status}: {}", error_message(&body)),
                    after: retry_after,
                    transport: false,
                    connect: false,
                }
            }
            401 => Attempt::Fail(ApiError::Unauthorized {
                env: self.cfg.api_key_env.clone(),
                message: error_message(&body),
                url: shown.to_string(),
            }),
            _ => {
                let (code, message) = error_parts(&body);
                Attempt::Fail(ApiError::Rejected {
                    status,
                    code,
                    message,
                    url: shown.to_string(),
                })
            }
        }
    }
}

/// Reads a body incrementally, keeping at most `limit` bytes; `true` when
/// the body went on past it (the rest is not read). Past the limit, only
/// an error body's start is wanted: `keep_start` says whether to keep it.
async fn read_body(resp: &mut reqwest::Response, limit: u64, keep_start: bool) -> Result<(bytes::Bytes, bool), reqwest::Error> {
    let mut parts: Vec<bytes::Bytes> = Vec::new();
    let mut total = 0u64;
    while let Some(chunk) = resp.chunk().await? {
        total += chunk.len() as u64;
        if total > limit {
            if !keep_start {
                return Ok((bytes::Bytes::new(), true));
            }
            let keep = chunk.len() - usize::try_from(total - limit).unwrap_or(chunk.len()).min(chunk.len());
            parts.push(chunk.slice(..keep));
            return Ok((concat(parts), true));
        }
        parts.push(chunk);
    }
    Ok((concat(parts), false))
}

fn concat(mut parts: Vec<bytes::Bytes>) -> bytes::Bytes {
    if parts.len() == 1 {
        return parts.pop().unwrap_or_default();
    }
    let mut out = bytes::BytesMut::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        out.extend_from_slice(&p);
    }
    out.freeze()
}

/// The path (`blocks[3].number`) of the first value `T` cannot read.
fn locate<T: DeserializeOwned>(body: &[u8]) -> Option<String> {
    let mut de = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize::<_, T>(&mut de)
        .err()
        .map(|e| e.path().to_string())
}

/// A 2xx body that is not the documented JSON, said precisely: which
/// record and field, or that it is not JSON at all (and how it starts).
fn bad_body(body: &[u8], e: &serde_json::Error, locate: &(dyn Fn(&[u8]) -> Option<String> + Sync), url: &str) -> ApiError {
    let fail = |row, field, message: String| ApiError::BadBody {
        at: None,
        row,
        field,
        message: redact(&message).into_owned(),
        url: url.to_string(),
    };
    if let Err(u) = std::str::from_utf8(body) {
        return fail(
            None,
            None,
            format!(
                "the body ({} bytes) is not valid JSON: invalid UTF-8 at byte {}",
                body.len(),
                u.valid_up_to()
            ),
        );
    }
    if e.classify() != serde_json::error::Category::Data {
        let start: String = String::from_utf8_lossy(&body[..body.len().min(240)])
            .chars()
            .filter(|c| !c.is_control())
            .take(60)
            .collect();
        return fail(
            None,
            None,
            format!("the body ({} bytes) is not valid JSON ({e}); it starts `{start}`", body.len()),
        );
    }
    let path = locate(body).unwrap_or_default();
    let (row, field) = split_path(&path, &e.to_string());
    fail(row, field, e.to_string())
}

/// `events[3].topics[1]` → row 3, field `topics`; `events` or
/// `token.decimals` → that field; the root (`.`) → the field a "missing
/// field" message names.
fn split_path(path: &str, message: &str) -> (Option<usize>, Option<String>) {
    let mut segs = path.split('.').filter(|s| !s.is_empty());
    match segs.next() {
        Some(first) if first.contains('[') => {
            let name = |s: &str| s.split('[').next().unwrap_or(s).to_string();
            let row = first.split('[').nth(1).and_then(|r| r.trim_end_matches(']').parse().ok());
            (row, Some(segs.next().map_or_else(|| name(first), name)))
        }
        Some(_) => (None, Some(path.to_string())),
        None => {
            let missing = message.strip_prefix("missing field `").and_then(|m| m.split('`').next());
            (None, missing.map(str::to_string))
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
    redact(&s).into_owned()
}

/// The error code and message of an error body, with every registered
/// secret masked (servers quote requests back).
fn error_parts(body: &[u8]) -> (Option<String>, String) {
    let clean = |s: &str| -> String {
        let s: String = s.chars().filter(|c| !c.is_control()).take(200).collect();
        redact(&s).into_owned()
    };
    if let Ok(b) = serde_json::from_slice::<ErrorBody>(body) {
        if let Some(d) = b.error {
            return (d.code.as_deref().map(clean), clean(&d.message.unwrap_or_default()));
        }
        if let Some(m) = b.message {
            return (None, clean(&m));
        }
    }
    let text = clean(&String::from_utf8_lossy(body));
    (None, if text.trim().is_empty() { "(empty body)".into() } else { text })
}

fn error_message(body: &[u8]) -> String {
    let (code, msg) = error_parts(body);
    match code {
        Some(c) => format!("{c}: {msg}"),
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_path_names_the_row_and_field() {
        assert_eq!(split_path("events[3].log_index", "x"), (Some(3), Some("log_index".into())));
        assert_eq!(split_path("events[0].topics[1]", "x"), (Some(0), Some("topics".into())));
        assert_eq!(split_path("events[2]", "x"), (Some(2), Some("events".into())));
        assert_eq!(split_path("events", "x"), (None, Some("events".into())));
        assert_eq!(split_path("token.decimals", "x"), (None, Some("token.decimals".into())));
        assert_eq!(
            split_path(".", "missing field `events` at line 1 column 2"),
            (None, Some("events".into()))
        );
        assert_eq!(split_path(".", "trailing characters"), (None, None));
    }

    #[test]
    fn the_service_is_down_after_failing_for_the_whole_time_not_after_idling() {
        let h = Health {
            start: Instant::now() - Duration::from_secs(100),
            last_contact_ms: AtomicU64::new(0),
            failing_since_ms: AtomicU64::new(NONE),
            down: OnceLock::new(),
            down_tx: watch::Sender::new(false),
        };
        // 100 s idle, then a failure: not down yet.
        h.connect_failed(Duration::from_secs(5), "refused");
        assert!(h.down.get().is_none());
        assert!(h.down_in(Duration::from_secs(5)) > Duration::from_secs(4));
        // Failing since 6 s ago: down.
        h.failing_since_ms.store(h.now_ms() - 6000, Ordering::Relaxed);
        h.connect_failed(Duration::from_secs(5), "refused");
        assert!(h.down.get().is_some_and(|(d, w)| *d >= Duration::from_secs(6) && w == "refused"));
        assert!(*h.down_tx.borrow());
        // Contact resets the count.
        let h2 = Health {
            failing_since_ms: AtomicU64::new(0),
            ..h
        };
        h2.contact();
        assert_eq!(h2.failing_for(), Duration::ZERO);
    }

    #[test]
    fn the_budget_and_the_down_time_follow_the_timeouts() {
        let mut c = ClientConfig::new("http://x");
        assert_eq!(c.budget(), Duration::from_secs(330));
        assert_eq!(c.down_after(), Duration::from_secs(30));
        c.timeout = Duration::from_secs(1);
        c.max_retries = 5;
        assert_eq!(c.budget(), Duration::from_secs(6));
        assert_eq!(c.down_after(), Duration::from_secs(5));
        c.timeout = Duration::from_secs(3600);
        c.max_retries = usize::MAX;
        assert!(c.budget() > Duration::from_secs(1 << 40), "saturates, never wraps");
        assert_eq!(c.down_after(), Duration::from_secs(30));
    }
}
