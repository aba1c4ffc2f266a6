//! What the client is configured with: the service, the key, and every
//! bound on a request (timeout, retries, backoff, body size, waits).

use crate::spec::defaults;
use std::fmt;
use std::time::Duration;

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

    pub(super) fn expose(&self) -> &str {
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

#[cfg(test)]
mod tests {
    use super::*;

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
