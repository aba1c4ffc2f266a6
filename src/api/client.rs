//! The client and its retry loop: one GET, attempted until it succeeds,
//! fails for good, runs out of retries or of its time budget, or is
//! stopped (the job cancelled, the service declared down, the key or the
//! request's resource refused).

use super::health::Health;
use super::outcome::{Attempt, Parser};
use super::refusal::Refusals;
use super::{ApiError, ClientConfig, Limiter, Refusal, Resource, Stats};
use crate::util::redact::{redact, register_url};
use backon::BackoffBuilder;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The client. Cheap to clone; clones share limits, counters, the
/// service's health, its refusals and the cancel signal.
#[derive(Debug, Clone)]
pub struct Client {
    pub(super) http: reqwest::Client,
    pub(super) cfg: Arc<ClientConfig>,
    pub(super) limiter: Arc<Limiter>,
    pub(super) stats: Arc<Stats>,
    pub(super) health: Arc<Health>,
    /// What the service refused: the key, or chains' endpoints.
    pub(super) refusals: Arc<Refusals>,
    cancel: Option<watch::Receiver<bool>>,
    /// The requests the unit paging through this client has left, this
    /// one included (None: not a unit's pages): waiting for a concurrency
    /// slot, the request with the most left behind it goes first.
    pub(super) left: Option<Arc<AtomicU64>>,
    /// `base_url` with any password masked, for messages.
    pub(super) shown_base: Arc<str>,
}

impl Client {
    /// Builds a client; fails only when the HTTP stack cannot start.
    pub fn new(cfg: ClientConfig) -> Result<Client, ApiError> {
        let shown_base: Arc<str> = register_url(&cfg.base_url).into();
        // Masked wherever a server quotes it back, whoever built the client.
        if let Some(k) = &cfg.api_key {
            crate::util::redact::register(k.expose());
        }
        crate::util::tls::install();
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
            health: Arc::new(Health::new()),
            refusals: Arc::new(Refusals::new()),
            cancel: None,
            left: None,
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

    /// The same client, its requests waiting for a concurrency slot as
    /// ones with `left` requests behind them (a unit's estimate, kept up
    /// to date by its pager).
    pub fn with_work_left(&self, left: Arc<AtomicU64>) -> Client {
        Client {
            left: Some(left),
            ..self.clone()
        }
    }

    /// Whether a free concurrency slot goes to the request whose unit has
    /// the most left ([`Limiter::order_by_work_left`]).
    pub fn order_by_work_left(&self, on: bool) {
        self.limiter.order_by_work_left(on);
    }

    /// The shared counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// The pace the client's requests are sent at, in requests a second
    /// (None: unpaced).
    pub fn pace(&self) -> Option<f64> {
        self.limiter.rate_now()
    }

    /// The service's base URL, any password masked, for messages.
    pub fn shown_base_url(&self) -> &str {
        &self.shown_base
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

    /// Every refusal the service made (the key's first), as the first
    /// request to meet each learnt it.
    pub fn refusals(&self) -> Vec<Refusal> {
        self.refusals.all()
    }

    /// Whether the service refused the key: every request now fails.
    pub fn key_refused(&self) -> bool {
        self.refusals.key().is_some()
    }

    /// Whether a request for `r` would now fail, refused (the key, or `r`).
    pub fn refused(&self, r: Resource) -> bool {
        self.refusals.covering(r).is_some()
    }

    /// GET of a body read with serde.
    pub(super) async fn get<T: DeserializeOwned>(&self, resource: Resource, path: &str, params: &[(&str, String)]) -> Result<T, ApiError> {
        let parser = Parser {
            parse: &|body: &[u8]| super::body::parse::<T>(body),
            locate: &super::body::locate::<T>,
        };
        self.get_with(resource, path, params, parser).await
    }

    /// Resolves when the job is cancelled, the service declared down, or
    /// the key or `resource` refused, with the error the request ends with.
    async fn stopped(&self, resource: Resource) -> ApiError {
        let mut cancel = self.cancel.clone();
        let mut down = self.health.down_tx.subscribe();
        let mut refused = self.refusals.tx.subscribe();
        loop {
            if cancel.as_ref().is_some_and(|c| *c.borrow()) {
                return ApiError::Cancelled;
            }
            if let Some(e) = self.service_down() {
                return e;
            }
            if let Some(r) = self.refusals.covering(resource) {
                return r.error();
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
                _ = refused.changed() => {}
            }
        }
    }

    /// GET of `resource` with retries, within the request's time budget;
    /// stops at once when the job is cancelled, the service declared down,
    /// or the key or `resource` refused.
    pub(super) async fn get_with<T>(
        &self,
        resource: Resource,
        path: &str,
        params: &[(&str, String)],
        parser: Parser<'_, T>,
    ) -> Result<T, ApiError> {
        let path_q = path_and_query(path, params);
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
        let stopped = self.stopped(resource);
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
                a = self.attempt(resource, &url, &shown, left, &parser) => a,
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
                return Err(self.out_of_retries(only_transport, shown, attempts, why));
            };
            let delay = self.retry_delay(delay, after, connect);
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

    /// The wait before the next attempt: the backoff's `delay`, or the
    /// server's `Retry-After` when longer; after a failed connection, no
    /// longer than until the service would be declared down, so that the
    /// job learns it then, not a backoff later.
    fn retry_delay(&self, delay: Duration, after: Option<Duration>, connect: bool) -> Duration {
        let delay = after.map_or(delay, |a| a.max(delay));
        if connect {
            delay.min(self.health.down_in(self.cfg.down_after()) + Duration::from_millis(10))
        } else {
            delay
        }
    }

    /// The error of a request whose retries are spent: the service could
    /// not be reached at all, or it kept failing.
    fn out_of_retries(&self, only_transport: bool, url: String, attempts: usize, last: String) -> ApiError {
        if only_transport {
            ApiError::Unreachable {
                base_url: self.shown_base.to_string(),
                url,
                attempts,
                last,
            }
        } else {
            ApiError::Exhausted { url, attempts, last }
        }
    }
}

/// `path?k=v&…`, the parameters URL-encoded.
fn path_and_query(path: &str, params: &[(&str, String)]) -> String {
    let mut path_q = path.to_string();
    if !params.is_empty() {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in params {
            s.append_pair(k, v);
        }
        path_q.push('?');
        path_q.push_str(&s.finish());
    }
    path_q
}
