//! Paging of one work unit: a sequential cursor chain (cursors are opaque
//! and only valid in order). A task per unit requests each page as soon as
//! the previous one's cursor is known, and hands pages over through a
//! one-page channel: while the unit's loop writes or commits (an fsync),
//! the next page waits ready and the one after is already in flight, so
//! the unit never leaves a request slot idle; memory stays at most three
//! pages per unit. The global concurrency and rate bounds live in the
//! client ([`crate::api::Limiter`]); many units page at once under them.
//!
//! Decoding is the caller's: [`Pager::start`] takes a [`PageDecoder`] and
//! hands it every page as [`Records`] in the fetch task, event pages while
//! they still borrow from the response body (no copy of the JSON strings).
//! So this stage knows the service's records, never the Arrow side, and the
//! caller decodes all four datasets at one site. Pages are numbered here,
//! once, from 1 for the pages of this run.

use crate::api::types::{Block, Event, PortfolioDay, Token};
use crate::api::{ApiError, BlocksQuery, Client, Endpoint, EventsQuery, PortfolioQuery, Resource, Sort};
use crate::plan::{Unit, UnitRange};
use crate::spec::{Export, Selection};
use crate::vocab::Dataset;
use crate::vocab::window::Resolved;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::task::JoinHandle;

/// One page of records as the service sent them.
#[derive(Debug, Clone, Copy)]
pub enum Records<'a> {
    /// Blocks.
    Blocks(&'a [Block]),
    /// Events, borrowing from the response body.
    Events(&'a [Event<'a>]),
    /// Portfolio days.
    Portfolio(&'a [PortfolioDay]),
    /// Tokens with the address each was requested as (404s are left out).
    Tokens(&'a [(String, Token)]),
}

/// Turns a unit's pages into what its caller writes. Runs in the fetch
/// task, so it must be cheap to share and must not block for long.
pub trait PageDecoder: Send + Sync + 'static {
    /// A decoded page.
    type Output: Send + 'static;
    /// Why a page could not be decoded (carried to the caller with the page,
    /// never retried: the same body would fail the same way).
    type Error: std::error::Error + Send + 'static;
    /// Decodes page number `page` (1-based, this run) of the unit.
    fn decode(&self, page: u64, records: Records<'_>) -> Result<Self::Output, Self::Error>;
}

/// A decoded page and the cursor of the page after it (`None`: the unit is complete).
#[derive(Debug)]
pub struct Fetched<T> {
    /// Page number within the unit (1-based, this run).
    pub number: u64,
    /// The decoded records (or why they could not be).
    pub page: T,
    /// Cursor of the following page.
    pub next: Option<String>,
}

/// Why paging a unit stopped.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A request failed.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The fetch task ended without handing over the unit's last page.
    #[error("unit {unit}: the fetch task stopped before the last page")]
    Stopped {
        /// Unit id.
        unit: String,
    },
    /// The fetch task panicked.
    #[error("unit {unit}: the fetch task failed")]
    Panicked {
        /// Unit id.
        unit: String,
        /// The panic, as the runtime reported it.
        #[source]
        source: tokio::task::JoinError,
    },
}

type PageResult<D> = Result<Fetched<Result<<D as PageDecoder>::Output, <D as PageDecoder>::Error>>, ApiError>;

/// The request parameters of a unit, fixed for its whole cursor chain.
#[derive(Debug, Clone)]
struct Request {
    unit: Arc<Unit>,
    window: Option<String>,
    contract_address: Option<String>,
    topics: Vec<String>,
    token_address: Option<String>,
    page_size: u32,
}

/// Pages through one unit.
#[derive(Debug)]
pub struct Pager<D: PageDecoder> {
    pages: tokio::sync::mpsc::Receiver<PageResult<D>>,
    task: JoinHandle<()>,
    /// The last page (no next cursor) or an error was handed over.
    ended: bool,
    unit_id: String,
}

impl<D: PageDecoder> Pager<D> {
    /// Starts paging `unit` from `cursor` (None: from the beginning),
    /// decoding each page with `decoder`.
    pub fn start(client: Client, unit: Arc<Unit>, export: &Export, page_size: u32, cursor: Option<String>, decoder: D) -> Pager<D> {
        let window = match &unit.range {
            UnitRange::Blocks { start, end } => Some(
                Resolved::Blocks {
                    first: *start,
                    last: end - 1,
                }
                .to_string(),
            ),
            UnitRange::Time { start, end } | UnitRange::Wallet { start, end, .. } => {
                Some(Resolved::Time { start: *start, end: *end }.to_string())
            }
            UnitRange::Numbers { .. } | UnitRange::Tokens { .. } => None,
        };
        let (contract_address, topics, token_address) = match &export.selection {
            Selection::Events {
                contract_address, topics, ..
            } => (contract_address.clone(), topics.clone(), None),
            Selection::Portfolio { token_address, .. } => (None, Vec::new(), token_address.clone()),
            _ => (None, Vec::new(), None),
        };
        let unit_id = unit.id.clone();
        let req = Request {
            unit,
            window,
            contract_address,
            topics,
            token_address,
            page_size,
        };
        let left = Arc::new(AtomicU64::new(req.unit.estimated_requests.max(1)));
        let client = client.with_work_left(left.clone());
        let (tx, pages) = tokio::sync::mpsc::channel(1);
        let task = tokio::spawn(async move {
            let mut cursor = cursor;
            for page in 1u64.. {
                let fetched = fetch(&client, &req, &decoder, page, cursor.take()).await;
                if let Some(n) = fetched
                    .as_ref()
                    .ok()
                    .and_then(|(_, reached)| requests_left(&req.unit, page, *reached))
                {
                    left.store(n, Ordering::Relaxed);
                }
                let fetched = fetched.map(|(f, _)| f);
                let next = fetched.as_ref().ok().and_then(|f| f.next.clone());
                if tx.send(fetched).await.is_err() {
                    return;
                }
                match next {
                    Some(c) => cursor = Some(c),
                    None => return,
                }
            }
        });
        Pager {
            pages,
            task,
            ended: false,
            unit_id,
        }
    }

    /// The next page, or `None` when the unit is exhausted.
    #[allow(clippy::type_complexity)]
    pub async fn next(&mut self) -> Result<Option<Fetched<Result<D::Output, D::Error>>>, FetchError> {
        match self.pages.recv().await {
            Some(r) => {
                self.ended = r.as_ref().map_or(true, |f| f.next.is_none());
                Ok(Some(r?))
            }
            None if self.ended => Ok(None),
            // The task stopped without handing over the last page: never
            // mistake that for the end of the unit.
            None => Err(match (&mut self.task).await {
                Err(source) => FetchError::Panicked {
                    unit: self.unit_id.clone(),
                    source,
                },
                Ok(()) => FetchError::Stopped {
                    unit: self.unit_id.clone(),
                },
            }),
        }
    }
}

impl<D: PageDecoder> Drop for Pager<D> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a unit's requests ask for: its chain's endpoint for its dataset,
/// as [`fetch_page`] requests it (what a 403 refuses, [`crate::api::refusal`]).
pub fn resource(unit: &Unit) -> Resource {
    Resource {
        chain: unit.chain,
        endpoint: Endpoint::of(unit.dataset),
    }
}

/// The requests a unit has left after `pages` pages of this run, the last
/// reaching block `reached`: for a block range, its pages so far scaled by
/// the blocks left against the blocks done (a resumed unit's earlier pages
/// are not counted, so it looks shorter than it is); otherwise the plan's
/// estimate less the pages so far. None: a block range's page reached no
/// block (the estimate stands). Only orders requests waiting for a slot
/// ([`Client::with_work_left`]).
fn requests_left(unit: &Unit, pages: u64, reached: Option<u64>) -> Option<u64> {
    match (&unit.range, reached) {
        (UnitRange::Blocks { start, end }, Some(b)) if b >= *start && end > start => {
            let done = (b - start + 1).min(end - start);
            let left = end - start - done;
            let scaled = u128::from(pages) * u128::from(left) / u128::from(done);
            Some(u64::try_from(scaled).unwrap_or(u64::MAX).max(1))
        }
        (UnitRange::Blocks { .. }, _) => None,
        _ => Some(unit.estimated_requests.saturating_sub(pages).max(1)),
    }
}

/// A page, and the block its last record reached (for [`requests_left`]);
/// a body that is not the documented JSON is said to belong to this
/// chain, dataset, unit and page, as decoding errors are.
#[allow(clippy::type_complexity)]
async fn fetch<D: PageDecoder>(
    client: &Client,
    req: &Request,
    decoder: &D,
    page: u64,
    cursor: Option<String>,
) -> Result<(Fetched<Result<D::Output, D::Error>>, Option<u64>), ApiError> {
    let unit = &req.unit;
    let (decoded, next, reached) = fetch_page(client, req, decoder, page, cursor)
        .await
        .map_err(|e| e.at(|| format!("{} {} unit {}, page {page}", unit.chain, unit.dataset, unit.id)))?;
    let fetched = Fetched {
        number: page,
        page: decoded,
        next: next.filter(|c| !c.is_empty()),
    };
    Ok((fetched, reached))
}

/// Requests one page and decodes it: the decoded page, the raw next
/// cursor, and the block number of the page's last record (blocks and
/// events).
#[allow(clippy::type_complexity)]
async fn fetch_page<D: PageDecoder>(
    client: &Client,
    req: &Request,
    decoder: &D,
    page: u64,
    cursor: Option<String>,
) -> Result<(Result<D::Output, D::Error>, Option<String>, Option<u64>), ApiError> {
    let unit = &req.unit;
    let limit = Some(req.page_size.min(crate::vocab::cuts::MAX_PAGE_ITEMS));
    match &unit.range {
        UnitRange::Blocks { .. } | UnitRange::Time { .. } | UnitRange::Numbers { .. } if unit.dataset == Dataset::Blocks => {
            let numbers = match &unit.range {
                UnitRange::Numbers { numbers } => Some(numbers.clone()),
                _ => None,
            };
            let q = BlocksQuery {
                numbers,
                window: req.window.clone(),
                sort: Some(Sort::Earliest),
                limit,
                cursor,
            };
            let p = client.blocks(unit.chain, &q).await?;
            let reached = p.blocks.last().and_then(|b| b.number).and_then(|n| u64::try_from(n.0).ok());
            Ok((decoder.decode(page, Records::Blocks(&p.blocks)), p.next_cursor, reached))
        }
        UnitRange::Blocks { .. } | UnitRange::Time { .. } | UnitRange::Numbers { .. } => {
            let q = EventsQuery {
                contract_address: req.contract_address.clone(),
                signatures: req.topics.clone(),
                window: req.window.clone(),
                sort: Some(Sort::Earliest),
                limit,
                cursor,
            };
            client
                .events(unit.chain, &q, |p| {
                    let reached = p.events.last().and_then(|e| e.block_number).and_then(|n| u64::try_from(n.0).ok());
                    (decoder.decode(page, Records::Events(&p.events)), p.next_cursor, reached)
                })
                .await
        }
        UnitRange::Wallet { wallet, .. } => {
            let q = PortfolioQuery {
                token_address: req.token_address.clone(),
                window: req.window.clone(),
                limit: Some(req.page_size.min(crate::vocab::cuts::PORTFOLIO_DAYS_PER_PAGE as u32)),
                cursor,
            };
            let p = client.portfolio(unit.chain, wallet, &q).await?;
            Ok((decoder.decode(page, Records::Portfolio(&p.portfolio)), p.next_cursor, None))
        }
        UnitRange::Tokens { addresses } => {
            // The cursor of a tokens unit is the index of the next address.
            let start: usize = cursor.as_deref().and_then(|c| c.parse().ok()).unwrap_or(0).min(addresses.len());
            let end = (start + crate::vocab::cuts::TOKENS_PER_PAGE).min(addresses.len());
            let lookups = addresses[start..end]
                .iter()
                .map(|a| async move { client.token(unit.chain, a).await.map(|t| t.map(|t| (a.clone(), t))) });
            let found: Vec<(String, Token)> = futures::future::try_join_all(lookups).await?.into_iter().flatten().collect();
            Ok((
                decoder.decode(page, Records::Tokens(&found)),
                (end < addresses.len()).then(|| end.to_string()),
                None,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::chain::Chain;

    fn unit(range: UnitRange) -> Unit {
        Unit {
            id: "e0-events-ethereum-b1000-1100".into(),
            export: 0,
            dataset: Dataset::Events,
            chain: Chain::Ethereum,
            range,
            estimated_requests: 40,
        }
    }

    #[test]
    fn a_units_requests_left_scale_its_pages_by_the_blocks_left() {
        let blocks = unit(UnitRange::Blocks { start: 1000, end: 1100 });
        // A quarter of the blocks in 10 pages: 30 more.
        assert_eq!(requests_left(&blocks, 10, Some(1024)), Some(30));
        // The last block reached: one, never none, until the unit ends.
        assert_eq!(requests_left(&blocks, 60, Some(1099)), Some(1));
        // A block past the range (a lying server) or before it, and a page
        // with no record, leave the estimate as it was.
        assert_eq!(requests_left(&blocks, 60, Some(5000)), Some(1));
        assert_eq!(requests_left(&blocks, 3, Some(10)), None);
        assert_eq!(requests_left(&blocks, 3, None), None);
        // The largest numbers do not overflow.
        let wide = unit(UnitRange::Blocks { start: 0, end: u64::MAX });
        assert_eq!(requests_left(&wide, u64::MAX, Some(0)), Some(u64::MAX));
        // No block range: the plan's estimate less the pages so far.
        let time = unit(UnitRange::Time { start: 0, end: 3600 });
        assert_eq!(requests_left(&time, 15, None), Some(25));
        assert_eq!(requests_left(&time, 90, None), Some(1));
    }
}
