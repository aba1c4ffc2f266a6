//! Paging of one work unit: a sequential cursor chain (cursors are opaque
//! and only valid in order). A task per unit requests each page as soon as
//! the previous one's cursor is known, and hands pages over through a
//! one-page channel: while the unit's loop writes or commits (an fsync),
//! the next page waits ready and the one after is already in flight, so
//! the unit never leaves a request slot idle; memory stays at most three
//! pages per unit. Event pages (most of the volume) are decoded to Arrow
//! right here, straight from the response body. The global concurrency and
//! rate bounds live in the client ([`crate::api::Limiter`]); many units
//! page at once under them.

pub mod guard;

use crate::api::types::{Block, PortfolioDay, Token};
use crate::api::{ApiError, BlocksQuery, Client, EventsQuery, PortfolioQuery, Sort};
use crate::decode::{Ctx, DecodeError, Decoded};
use crate::plan::{Unit, UnitRange};
use crate::spec::{Export, Selection};
use crate::vocab::window::Resolved;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// Token lookups per page of a tokens unit.
pub const TOKENS_PER_PAGE: usize = 10;

/// One page of records.
#[derive(Debug)]
pub enum Page {
    /// Blocks.
    Blocks(Vec<Block>),
    /// Events, already decoded (or why they could not be).
    Events(Result<Decoded, DecodeError>),
    /// Portfolio days.
    Portfolio(Vec<PortfolioDay>),
    /// Tokens with the address each was requested as (404s are left out).
    Tokens(Vec<(String, Token)>),
}

/// A page and the cursor of the page after it (`None`: the unit is complete).
#[derive(Debug)]
pub struct Fetched {
    /// The records.
    pub page: Page,
    /// Cursor of the following page.
    pub next: Option<String>,
}

/// The request parameters of a unit, fixed for its whole cursor chain.
#[derive(Debug, Clone)]
struct Request {
    unit: Arc<Unit>,
    window: Option<String>,
    contract_address: Option<String>,
    topics: Vec<String>,
    token_address: Option<String>,
    page_size: u32,
    enc: crate::spec::HashEncoding,
}

/// Pages through one unit.
#[derive(Debug)]
pub struct Pager {
    pages: tokio::sync::mpsc::Receiver<Result<Fetched, ApiError>>,
    task: JoinHandle<()>,
    /// The last page (no next cursor) or an error was handed over.
    ended: bool,
    unit_id: String,
}

impl Pager {
    /// Starts paging `unit` from `cursor` (None: from the beginning).
    pub fn start(
        client: Client,
        unit: Arc<Unit>,
        export: &Export,
        page_size: u32,
        enc: crate::spec::HashEncoding,
        cursor: Option<String>,
    ) -> Pager {
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
            enc,
        };
        let (tx, pages) = tokio::sync::mpsc::channel(1);
        let task = tokio::spawn(async move {
            let mut cursor = cursor;
            for page in 1u64.. {
                let fetched = fetch(&client, &req, page, cursor.take()).await;
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
    pub async fn next(&mut self) -> Result<Option<Fetched>, ApiError> {
        match self.pages.recv().await {
            Some(r) => {
                self.ended = r.as_ref().map_or(true, |f| f.next.is_none());
                r.map(Some)
            }
            None if self.ended => Ok(None),
            // The task stopped without handing over the last page: never
            // mistake that for the end of the unit.
            None => Err(ApiError::Exhausted {
                url: self.unit_id.clone(),
                attempts: 0,
                last: "the fetch task stopped unexpectedly".into(),
            }),
        }
    }
}

impl Drop for Pager {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A page; a body that is not the documented JSON is said to belong to
/// this chain, dataset, unit and page, as decoding errors are.
async fn fetch(client: &Client, req: &Request, page: u64, cursor: Option<String>) -> Result<Fetched, ApiError> {
    let unit = &req.unit;
    fetch_page(client, req, page, cursor)
        .await
        .map_err(|e| e.at(|| format!("{} {} unit {}, page {page}", unit.chain, unit.dataset, unit.id)))
}

async fn fetch_page(client: &Client, req: &Request, page: u64, cursor: Option<String>) -> Result<Fetched, ApiError> {
    let unit = &req.unit;
    let limit = Some(req.page_size.min(1000));
    match &unit.range {
        UnitRange::Blocks { .. } | UnitRange::Time { .. } | UnitRange::Numbers { .. } if unit.dataset == crate::spec::Dataset::Blocks => {
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
            Ok(Fetched {
                page: Page::Blocks(p.blocks),
                next: p.next_cursor.filter(|c| !c.is_empty()),
            })
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
            let ctx = Ctx { unit, page, enc: req.enc };
            let (decoded, next) = client
                .events(unit.chain, &q, |p| (crate::decode::events::decode(ctx, &p.events), p.next_cursor))
                .await?;
            Ok(Fetched {
                page: Page::Events(decoded),
                next: next.filter(|c| !c.is_empty()),
            })
        }
        UnitRange::Wallet { wallet, .. } => {
            let q = PortfolioQuery {
                token_address: req.token_address.clone(),
                window: req.window.clone(),
                limit: Some(req.page_size.min(31)),
                cursor,
            };
            let p = client.portfolio(unit.chain, wallet, &q).await?;
            Ok(Fetched {
                page: Page::Portfolio(p.portfolio),
                next: p.next_cursor.filter(|c| !c.is_empty()),
            })
        }
        UnitRange::Tokens { addresses } => {
            // The cursor of a tokens unit is the index of the next address.
            let start: usize = cursor.as_deref().and_then(|c| c.parse().ok()).unwrap_or(0).min(addresses.len());
            let end = (start + TOKENS_PER_PAGE).min(addresses.len());
            let lookups = addresses[start..end]
                .iter()
                .map(|a| async move { client.token(unit.chain, a).await.map(|t| t.map(|t| (a.clone(), t))) });
            let found = futures::future::try_join_all(lookups).await?;
            Ok(Fetched {
                page: Page::Tokens(found.into_iter().flatten().collect()),
                next: (end < addresses.len()).then(|| end.to_string()),
            })
        }
    }
}
