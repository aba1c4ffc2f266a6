//! `GET /v2/{chain}/events`: the events of a block window, filtered by
//! contract and topic0, paged; a selective filter examines at most
//! `scan_budget` events per request (a page may then come back short,
//! with a cursor to go on).

use super::cursor::{Cursor, fingerprint, finish_list, page_start};
use super::json;
use super::params::{ListQuery, address_param, block_range, param};
use super::reply::{ApiError, bad, ok_json};
use super::state::Sim;
use crate::vocab::chain::Chain;
use crate::vocab::evm::{is_abi_signature, is_hash32, signature_topic, split_top_level};
use crate::vocab::window::iso;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use std::sync::Arc;

/// Which events a query keeps.
struct Filter {
    contract: Option<[u8; 20]>,
    /// topic0s; empty: any.
    topics: Vec<[u8; 32]>,
}

pub(super) async fn events(State(sim): State<Arc<Sim>>, Path(chain): Path<String>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let ListQuery {
        chain,
        pairs,
        limit,
        desc,
        window: w,
    } = ListQuery::parse(&sim, &chain, &q)?;
    let filter = Filter {
        contract: address_param(&pairs, "contract_address")?,
        topics: topics(&pairs)?,
    };
    let fp = fingerprint("events", chain, &pairs);
    let (lo, hi) = block_range(&sim, chain, w);
    let c = page_start(&sim, &pairs, fp, || Cursor {
        fp,
        lo,
        hi,
        pos: if desc { hi } else { lo },
        idx: 0,
    })?;
    let mut out = Vec::with_capacity(limit as usize * 700 + 64);
    out.extend_from_slice(b"{\"events\":[");
    let (pos, idx) = scan(&sim, chain, &filter, c, desc, limit, &mut out);
    let more = if desc { pos > c.lo } else { pos < c.hi };
    finish_list(&mut out, more.then_some(Cursor { pos, idx, ..c }), sim.secret);
    Ok(ok_json(out))
}

/// `signatures`: topic0 hashes or ABI signatures, as topic0s.
fn topics(pairs: &[(String, String)]) -> Result<Vec<[u8; 32]>, ApiError> {
    let mut topics = Vec::new();
    let Some(list) = param(pairs, "signatures") else {
        return Ok(topics);
    };
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
        hex::decode_to_slice(&hex_topic[2..], &mut t).map_err(|e| bad(format!("signatures: bad hex ({e})")))?;
        topics.push(t);
    }
    Ok(topics)
}

/// Writes the events of the page starting at `c` to `out`, at most
/// `limit` of them and `scan_budget` examined; returns where the next page
/// starts. Ascending: `(pos, idx)` is the next event. Descending: `pos`
/// is one past the block being read and `idx` counts events already
/// emitted from its top.
fn scan(sim: &Sim, chain: Chain, filter: &Filter, c: Cursor, desc: bool, limit: u64, out: &mut Vec<u8>) -> (u64, u64) {
    let data = &sim.data;
    let mut taken = 0u64;
    let mut scanned = 0u64;
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
            if filter.contract.is_some_and(|c| c != addr) || (!filter.topics.is_empty() && !filter.topics.contains(&data.topic0(kind))) {
                continue;
            }
            if ts_block != block {
                ts = iso(data.block_timestamp(chain, block));
                ts_block = block;
            }
            if taken > 0 {
                out.push(b',');
            }
            json::event(out, &data.event(chain, block, i), &ts, sim.opts.topics_as_numbers);
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
    (pos, idx)
}
