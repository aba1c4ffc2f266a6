//! The errors a request ends with, after retries. Each says what was
//! requested (the URL, password masked) and why it ended; server text
//! quoted in one has every registered secret masked.

use std::time::Duration;

/// Errors of one request, after retries. URLs in them have any password
/// masked, and quoted server text has every registered secret masked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// A 4xx other than 401/403/429: not retried.
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
    /// 401: the key was refused (or one is wanted): every request of the
    /// client ends so ([`super::Refusal`]).
    #[error("{}: HTTP 401 on GET {url}: {message}", match env {
        Some(e) => format!("the service refused the API key taken from ${e}"),
        None => "the service wants an API key".to_string(),
    })]
    Unauthorized {
        /// Variable that held the key (None: no key was sent).
        env: Option<String>,
        /// The server's message.
        message: String,
        /// The request URL.
        url: String,
    },
    /// 403: the service will not serve this endpoint on this chain to the
    /// key: every request of the client for it ends so ([`super::Refusal`]).
    #[error("the service refused {resource} {}: HTTP 403 on GET {url}: {message}", match env {
        Some(e) => format!("to the API key taken from ${e}"),
        None => "without an API key".to_string(),
    })]
    Forbidden {
        /// The chain's endpoint refused.
        resource: super::Resource,
        /// Variable that held the key (None: no key was sent).
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
