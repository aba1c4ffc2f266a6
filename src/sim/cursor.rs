//! Paging: opaque cursors sealed with the simulator's secret, bound to
//! the query they were issued for, so a forged or borrowed cursor is a 400.

use super::params::param;
use super::reply::ApiError;
use super::state::{Sim, mix};
use crate::vocab::chain::Chain;
use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;

/// Paging position, sealed into an opaque cursor: which query it belongs to
/// (`fp`), the frozen range `[lo, hi)` and where the next page starts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cursor {
    pub(super) fp: u64,
    pub(super) lo: u64,
    pub(super) hi: u64,
    pub(super) pos: u64,
    pub(super) idx: u64,
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
        // Why a cursor does not open is not told: it is opaque.
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
pub(super) fn fingerprint(route: &str, chain: Chain, pairs: &[(String, String)]) -> u64 {
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

/// Where this page starts: the query's `cursor`, or `fresh()` on the first page.
pub(super) fn page_start(sim: &Sim, pairs: &[(String, String)], fp: u64, fresh: impl FnOnce() -> Cursor) -> Result<Cursor, ApiError> {
    match param(pairs, "cursor") {
        Some(text) => Cursor::open(text, sim.secret, fp),
        None => Ok(fresh()),
    }
}

/// Closes a list body: `]`, the next page's cursor if any, `}`.
pub(super) fn finish_list(out: &mut Vec<u8>, next: Option<Cursor>, secret: u64) {
    out.push(b']');
    if let Some(c) = next {
        out.extend_from_slice(b",\"next_cursor\":\"");
        out.extend_from_slice(c.seal(secret).as_bytes());
        out.push(b'"');
    }
    out.push(b'}');
}
