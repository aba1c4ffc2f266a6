//! `GET /v2/{chain}/blocks` (a window or explicit `numbers`, paged) and
//! `GET /v2/{chain}/blocks/{number}`.

use super::cursor::{Cursor, fingerprint, finish_list, page_start};
use super::json;
use super::params::{ListQuery, MAX_NUMBERS, block_range, param, parse_chain};
use super::reply::{ApiError, bad, ok_json};
use super::state::Sim;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;

pub(super) async fn blocks(State(sim): State<Arc<Sim>>, Path(chain): Path<String>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let ListQuery {
        chain,
        pairs,
        limit,
        desc,
        window: w,
    } = ListQuery::parse(&sim, &chain, &q)?;
    let numbers = numbers(&pairs)?;
    let fp = fingerprint("blocks", chain, &pairs);
    let (lo, hi) = block_range(&sim, chain, w);
    let (page, next) = match numbers {
        Some(list) => {
            let c = page_start(&sim, &pairs, fp, || Cursor {
                fp,
                lo,
                hi,
                pos: 0,
                idx: 0,
            })?;
            page_of_numbers(list, (lo, hi), c, desc, limit)
        }
        None => {
            let c = page_start(&sim, &pairs, fp, || Cursor {
                fp,
                lo,
                hi,
                pos: if desc { hi } else { lo },
                idx: 0,
            })?;
            page_of_range(c, desc, limit)
        }
    };
    let mut out = Vec::with_capacity(limit as usize * 1400 + 64);
    out.extend_from_slice(b"{\"blocks\":[");
    for (i, n) in page.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::block(&mut out, &sim.data.block(chain, n));
    }
    finish_list(&mut out, next, sim.secret);
    Ok(ok_json(out))
}

/// `numbers`: sorted, without repeats; `None` when absent.
fn numbers(pairs: &[(String, String)]) -> Result<Option<Vec<u64>>, ApiError> {
    let Some(v) = param(pairs, "numbers") else {
        return Ok(None);
    };
    let mut list = Vec::new();
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        list.push(
            item.parse::<u64>()
                .map_err(|_| bad(format!("numbers must be block numbers, got `{item}`")))?,
        );
    }
    if list.len() > MAX_NUMBERS {
        return Err(bad(format!("numbers takes at most {MAX_NUMBERS} items, got {}", list.len())));
    }
    list.sort_unstable();
    list.dedup();
    Ok(Some(list))
}

/// The page of explicit numbers starting at `c`: the numbers inside the
/// window `[lo, hi)` (clipped to the head), in sort order; the cursor
/// walks positions in that list.
fn page_of_numbers(list: Vec<u64>, (lo, hi): (u64, u64), c: Cursor, desc: bool, limit: u64) -> (Vec<u64>, Option<Cursor>) {
    let selected: Vec<u64> = list.into_iter().filter(|n| (lo..hi).contains(n)).collect();
    let ordered: Vec<u64> = if desc { selected.into_iter().rev().collect() } else { selected };
    let start = c.pos as usize;
    let end = (start + limit as usize).min(ordered.len());
    let page = ordered.get(start..end).unwrap_or(&[]).to_vec();
    let next = (end < ordered.len()).then_some(Cursor { pos: end as u64, ..c });
    (page, next)
}

/// The page of the block range starting at `c`. Ascending: `pos` is the
/// next block; descending: `pos` is one past it.
fn page_of_range(c: Cursor, desc: bool, limit: u64) -> (Vec<u64>, Option<Cursor>) {
    let mut page = Vec::new();
    let mut pos = c.pos;
    while (page.len() as u64) < limit {
        if desc {
            if pos <= c.lo {
                break;
            }
            pos -= 1;
            page.push(pos);
        } else {
            if pos >= c.hi {
                break;
            }
            page.push(pos);
            pos += 1;
        }
    }
    let more = if desc { pos > c.lo } else { pos < c.hi };
    (page, more.then_some(Cursor { pos, ..c }))
}

pub(super) async fn block_by_number(
    State(sim): State<Arc<Sim>>,
    Path((chain, number)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let chain = parse_chain(&chain)?;
    let head = sim.data.head(chain, sim.now_ms());
    let n = if number == "latest" {
        head
    } else if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
        // Digits only: the one way to fail is a number past u64.
        number
            .parse::<u64>()
            .map_err(|_| bad(format!("block_number `{number}` is too large")))?
    } else {
        return Err(bad(format!("block_number must match ^(\\d+|latest)$, got `{number}`")));
    };
    if n > head {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("block {n} does not exist yet (head is {head})"),
        ));
    }
    let mut out = Vec::with_capacity(1600);
    out.extend_from_slice(b"{\"block\":");
    json::block(&mut out, &sim.data.block(chain, n));
    out.push(b'}');
    Ok(ok_json(out))
}
