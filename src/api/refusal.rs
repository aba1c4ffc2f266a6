//! What the service refuses for good, beyond the request that learnt it:
//! the key (401) or one chain's endpoint (403). A refusal is recorded once,
//! shared by every clone of the client, and wakes every request waiting on
//! it, so no further request is spent on what would be refused again.
//!
//! What a refusal covers:
//! - **401: the whole key.** The service does not accept the key sent (or
//!   wants one where none was): every request would get the same answer.
//!   Every request of the client stops, in flight or waiting.
//! - **403: one chain's endpoint.** The service does not describe 403.
//!   chainetl reads it as HTTP defines it (RFC 9110 §15.5.4: the
//!   credentials are understood and do not grant access to this resource)
//!   at the grain plans grant access — a chain, an endpoint ("a key may
//!   grant access to additional features"): so a 403 stops the requests
//!   to that endpoint on that chain, and nothing else. Finer grains (one
//!   wallet, one token) are not told apart: the rest of that endpoint on
//!   that chain would be spent finding out.
//!
//! Neither is retried: the same key would be refused the same way.

use super::ApiError;
use crate::vocab::{Chain, Dataset};
use std::fmt;
use std::sync::{Mutex, OnceLock, PoisonError};
use tokio::sync::watch;

/// An endpoint of the service, as a plan grants it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `/blocks` and `/blocks/{number}`.
    Blocks,
    /// `/events`.
    Events,
    /// `/wallets/{wallet}/portfolio/daily`.
    Portfolio,
    /// `/tokens/{address}`.
    Tokens,
}

impl Endpoint {
    /// The endpoint a dataset's units page through.
    pub fn of(dataset: Dataset) -> Endpoint {
        match dataset {
            Dataset::Blocks => Endpoint::Blocks,
            Dataset::Events => Endpoint::Events,
            Dataset::Portfolio => Endpoint::Portfolio,
            Dataset::Tokens => Endpoint::Tokens,
        }
    }

    /// Its name (`blocks`, `events`, `portfolio`, `tokens`).
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Blocks => "blocks",
            Endpoint::Events => "events",
            Endpoint::Portfolio => "portfolio",
            Endpoint::Tokens => "tokens",
        }
    }
}

/// One endpoint on one chain: what a request asks for, and what a 403 refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Resource {
    /// The chain in the path.
    pub chain: Chain,
    /// The endpoint.
    pub endpoint: Endpoint,
}

/// `events on arbitrum`.
impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {}", self.endpoint.name(), self.chain)
    }
}

/// A refusal of the service, as the first request to meet it learnt it.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// 401 or 403.
    pub status: u16,
    /// What it covers: None, the key (every request); a resource (403).
    pub resource: Option<Resource>,
    /// The variable the key was read from (never the key); None: no key was sent.
    pub variable: Option<String>,
    /// The request refused, any password masked.
    pub url: String,
    /// The server's message, every registered secret masked.
    pub message: String,
}

impl Refusal {
    /// Whether a request for `r` would be refused too.
    pub fn covers(&self, r: Resource) -> bool {
        self.resource.is_none_or(|x| x == r)
    }

    /// The error a request it covers ends with.
    pub fn error(&self) -> ApiError {
        match self.resource {
            None => ApiError::Unauthorized {
                env: self.variable.clone(),
                message: self.message.clone(),
                url: self.url.clone(),
            },
            Some(resource) => ApiError::Forbidden {
                resource,
                env: self.variable.clone(),
                message: self.message.clone(),
                url: self.url.clone(),
            },
        }
    }
}

/// The refusals a client has met, shared by its clones.
#[derive(Debug)]
pub(super) struct Refusals {
    /// The key's (401), once.
    key: OnceLock<Refusal>,
    /// Resources' (403), the first of each.
    resources: Mutex<Vec<Refusal>>,
    /// Bumped at each new refusal, waking requests that wait.
    pub(super) tx: watch::Sender<u64>,
}

impl Refusals {
    pub(super) fn new() -> Refusals {
        Refusals {
            key: OnceLock::new(),
            resources: Mutex::new(Vec::new()),
            tx: watch::Sender::new(0),
        }
    }

    /// Records `r` unless a refusal of its scope is recorded already, and
    /// wakes every waiting request.
    pub(super) fn record(&self, r: Refusal) {
        let new = match r.resource {
            None => self.key.set(r).is_ok(),
            Some(res) => {
                let mut all = self.resources.lock().unwrap_or_else(PoisonError::into_inner);
                let new = !all.iter().any(|x| x.covers(res));
                if new {
                    all.push(r);
                }
                new
            }
        };
        if new {
            self.tx.send_modify(|n| *n += 1);
        }
    }

    /// The refusal a request for `r` would meet, if any.
    pub(super) fn covering(&self, r: Resource) -> Option<Refusal> {
        if let Some(k) = self.key.get() {
            return Some(k.clone());
        }
        let all = self.resources.lock().unwrap_or_else(PoisonError::into_inner);
        all.iter().find(|x| x.covers(r)).cloned()
    }

    /// The key's refusal, if any.
    pub(super) fn key(&self) -> Option<&Refusal> {
        self.key.get()
    }

    /// Every refusal met: the key's first, then resources' in the order met.
    pub(super) fn all(&self) -> Vec<Refusal> {
        let mut out: Vec<Refusal> = self.key.get().cloned().into_iter().collect();
        out.extend(self.resources.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(resource: Option<Resource>) -> Refusal {
        Refusal {
            status: if resource.is_some() { 403 } else { 401 },
            resource,
            variable: Some("BDS_API_KEY".into()),
            url: "http://h/v2/x".into(),
            message: "no".into(),
        }
    }

    #[test]
    fn a_403_covers_its_chains_endpoint_and_a_401_everything_each_said_once() {
        let r = Refusals::new();
        let events_arb = Resource {
            chain: Chain::Arbitrum,
            endpoint: Endpoint::Events,
        };
        let blocks_arb = Resource {
            chain: Chain::Arbitrum,
            endpoint: Endpoint::Blocks,
        };
        let events_eth = Resource {
            chain: Chain::Ethereum,
            endpoint: Endpoint::Events,
        };
        let woken = r.tx.subscribe();
        r.record(refusal(Some(events_arb)));
        r.record(refusal(Some(events_arb)));
        assert_eq!(*woken.borrow(), 1, "the same resource is recorded once");
        assert!(r.covering(events_arb).is_some());
        assert!(r.covering(blocks_arb).is_none() && r.covering(events_eth).is_none());
        assert!(matches!(
            r.covering(events_arb).map(|x| x.error()),
            Some(ApiError::Forbidden { .. })
        ));
        r.record(refusal(None));
        r.record(refusal(None));
        assert_eq!(*woken.borrow(), 2);
        assert!(matches!(
            r.covering(events_eth).map(|x| x.error()),
            Some(ApiError::Unauthorized { .. })
        ));
        let all = r.all();
        assert_eq!((all.len(), all[0].status, all[1].status), (2, 401, 403));
        assert_eq!(events_arb.to_string(), "events on arbitrum");
    }
}
