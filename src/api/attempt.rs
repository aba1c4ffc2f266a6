//! One attempt of a request: send it under the client's limits, read the
//! body within its cap, and decide from the answer whether the request is
//! done, should be retried (429, 5xx, transport errors, a body cut short)
//! or has failed for good (any other 4xx, a body that is not the
//! documented JSON, a body over the cap). A 401 or 403 is recorded as a
//! refusal of the whole client ([`super::refusal`]) while the attempt
//! still holds its slot, and no attempt is sent that a refusal covers.

use super::body::{ERROR_BODY_BYTES, bad_body, error_message, error_parts, read_body};
use super::outcome::{Attempt, Parser};
use super::{ApiError, Client, Refusal, Resource};
use crate::util::redact::redact;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A response whose body has been read.
struct Answer {
    status: u16,
    /// `Retry-After`, capped at `max_retry_after`.
    retry_after: Option<Duration>,
    body: bytes::Bytes,
}

impl Client {
    /// One attempt for `resource`, within `left` of the request's budget.
    pub(super) async fn attempt<T>(
        &self,
        resource: Resource,
        url: &str,
        shown: &str,
        left: Duration,
        parser: &Parser<'_, T>,
    ) -> Attempt<T> {
        let work_left = self.left.as_ref().map_or(super::slots::URGENT, |l| l.load(Ordering::Relaxed));
        let turn = self.limiter.acquire_for(work_left).await;
        // Refused while it waited for its turn: not sent.
        if let Some(r) = self.refusals.covering(resource) {
            return Attempt::Fail(r.error());
        }
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let resp = match self.send(url, left).await {
            Ok(r) => r,
            Err(a) => return a,
        };
        self.health.contact();
        let answer = match self.receive(resp, shown).await {
            Ok(a) => a,
            Err(a) => return a,
        };
        if matches!(answer.status, 401 | 403) {
            // Recorded before the slot is given up, so that no request
            // takes the slot before every request has learnt of it.
            return Attempt::Fail(self.refuse(resource, answer.status, &answer.body, shown));
        }
        // The slot is for the exchange; parsing (and, for events, decoding)
        // must not hold it.
        drop(turn.permit);
        self.stats.bytes.fetch_add(answer.body.len() as u64, Ordering::Relaxed);
        self.judge(answer, shown, parser, turn.generation).await
    }

    /// Sends the request; a transport error is retried, and tells the
    /// service's health whether a connection was made.
    async fn send<T>(&self, url: &str, left: Duration) -> Result<reqwest::Response, Attempt<T>> {
        let mut req = self
            .http
            .get(url)
            .header("accept", "application/json")
            .timeout(self.cfg.timeout.min(left).max(Duration::from_millis(1)));
        if let Some(k) = &self.cfg.api_key {
            req = req.bearer_auth(k.expose());
        }
        let e = match req.send().await {
            Ok(r) => return Ok(r),
            Err(e) => e,
        };
        self.stats.transport_errors.fetch_add(1, Ordering::Relaxed);
        if crate::util::fd_limit::is_exhausted(&e) {
            // Not the service: this process has no descriptor left for a
            // socket. Retried (others' files close meanwhile), never
            // counted against the service's health.
            return Err(Attempt::Retry {
                why: format!(
                    "this process ran out of file descriptors (the open-file limit, ulimit -n, is {}): not a problem of the service; lower source.max_concurrency or raise the limit",
                    crate::util::fd_limit::current().map_or("unknown".into(), |l| l.to_string())
                ),
                after: None,
                // Not a transport failure either: out of retries, it must
                // not read as "cannot reach the service".
                transport: false,
                connect: false,
            });
        }
        let why = describe(&e);
        if e.is_builder() {
            return Err(Attempt::Fail(ApiError::Config {
                base_url: self.shown_base.to_string(),
                message: why,
            }));
        }
        if e.is_connect() {
            self.health.connect_failed(self.cfg.down_after(), &why);
        } else {
            // It connected (then timed out or was cut off): the
            // service is there.
            self.health.contact();
        }
        Err(Attempt::Retry {
            why,
            after: None,
            transport: true,
            connect: e.is_connect(),
        })
    }

    /// Reads the answer's body within its cap: `max_response_bytes` for a
    /// 2xx (over it fails), [`ERROR_BODY_BYTES`] for an error (its start is
    /// enough for the message).
    async fn receive<T>(&self, mut resp: reqwest::Response, shown: &str) -> Result<Answer, Attempt<T>> {
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
        let too_large = || {
            Attempt::Fail(ApiError::TooLarge {
                url: shown.to_string(),
                limit,
            })
        };
        if ok && resp.content_length().is_some_and(|n| n > limit) {
            return Err(too_large());
        }
        let body = match read_body(&mut resp, limit, !ok).await {
            Ok((body, false)) => body,
            Ok((_, true)) if ok => return Err(too_large()),
            // An error body past the cap: its start is enough for the message.
            Ok((body, true)) => body,
            Err(e) => {
                self.stats.transport_errors.fetch_add(1, Ordering::Relaxed);
                return Err(Attempt::retry(format!("HTTP {status}, body not received: {}", describe(&e)), None));
            }
        };
        Ok(Answer { status, retry_after, body })
    }

    /// What the answer means for the request.
    async fn judge<T>(&self, answer: Answer, shown: &str, parser: &Parser<'_, T>, generation: u64) -> Attempt<T> {
        let Answer { status, retry_after, body } = answer;
        match status {
            200..=299 => match (parser.parse)(&body) {
                Ok(v) => {
                    self.limiter.accepted().await;
                    Attempt::Done(v)
                }
                Err(e) if e.classify() == serde_json::error::Category::Eof => {
                    // Cut short in transit: the next attempt may get it whole.
                    self.stats.bad_bodies.fetch_add(1, Ordering::Relaxed);
                    Attempt::retry(format!("response body cut short ({} bytes): {e}", body.len()), None)
                }
                Err(e) => {
                    self.stats.bad_bodies.fetch_add(1, Ordering::Relaxed);
                    Attempt::Fail(bad_body(&body, &e, parser.locate, shown))
                }
            },
            429 => {
                self.stats.throttled.fetch_add(1, Ordering::Relaxed);
                self.limiter.throttled(generation).await;
                let wait = retry_after.unwrap_or(Duration::from_secs(1).min(self.cfg.max_retry_after));
                Attempt::retry("HTTP 429 Too Many Requests".into(), Some(wait))
            }
            500..=599 => {
                self.stats.server_errors.fetch_add(1, Ordering::Relaxed);
                Attempt::retry(format!("HTTP {status}: {}", error_message(&body)), retry_after)
            }
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

impl Client {
    /// Records a 401 (the key) or 403 (`resource`) for every request of
    /// the client; the error this request ends with.
    fn refuse(&self, resource: Resource, status: u16, body: &[u8], shown: &str) -> ApiError {
        let refusal = Refusal {
            status,
            resource: (status == 403).then_some(resource),
            variable: self.cfg.api_key_env.clone(),
            url: shown.to_string(),
            message: error_message(body),
        };
        let e = refusal.error();
        self.refusals.record(refusal);
        e
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
