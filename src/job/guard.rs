//! Bounds on one unit's cursor chain, whatever the server answers.
//!
//! A unit pages until the service stops sending a cursor, so a server that
//! never stops — the same cursor again, a cycle of cursors, empty pages
//! with fresh cursors forever, the same rows under new cursors — would page
//! forever and commit its rows again and again. The guard ends such a unit
//! with an error (exit 1, the unit is retried by the next run) before any
//! repeated row is written:
//!
//! - a cursor the unit already sent is never followed again (cycles of any
//!   length; cursors are remembered as 64-bit hashes, so memory is 8 bytes
//!   a page, however long the server's cursors);
//! - rows are asked for oldest first (`sort_by=earliest`), so the rows of
//!   events or blocks must be strictly increasing in their key
//!   (`block_number, log_index`; `number`), within a page and from one page
//!   to the next; a page that repeats a row or goes back is refused;
//! - portfolio rows must not repeat a (date, token) of the unit, within a
//!   page or across pages (in any order: the service does not say how it
//!   orders days);
//! - at most [`MAX_PAGES_WITHOUT_ROWS`] pages in a row may bring no row of
//!   the unit's range.

use crate::vocab::Dataset;
use crate::vocab::chain::Chain;
use arrow_array::Array;
use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Int64Type};
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// Pages in a row with no row of the unit's range before the unit fails.
pub const MAX_PAGES_WITHOUT_ROWS: u32 = 100;

/// Why a unit's paging was stopped.
#[derive(Debug, thiserror::Error)]
#[error(
    "{chain} {dataset} unit {unit}, page {page}: {what}; the server is looping or repeating rows, so the unit stops here (nothing from these pages is committed)"
)]
pub struct PagingError {
    /// Chain.
    pub chain: Chain,
    /// Dataset.
    pub dataset: Dataset,
    /// Unit id.
    pub unit: String,
    /// Page number within the unit (1-based, this run).
    pub page: u64,
    /// What the server did.
    pub what: String,
}

/// The state of one unit's checks.
#[derive(Debug)]
pub struct PageGuard {
    chain: Chain,
    dataset: Dataset,
    unit: String,
    sent: HashSet<u64>,
    last_key: Option<(i64, i64)>,
    portfolio_keys: HashSet<u64>,
    without_rows: u32,
}

/// Row `i`'s token address as bytes, whether the column holds hex text or
/// binary (the `binary` option); `None` for a null (the chain's native coin).
fn token_bytes(tokens: &dyn Array, i: usize) -> Option<&[u8]> {
    if tokens.is_null(i) {
        return None;
    }
    if let Some(a) = tokens.as_string_opt::<i32>() {
        Some(a.value(i).as_bytes())
    } else if let Some(a) = tokens.as_binary_opt::<i32>() {
        Some(a.value(i))
    } else {
        tokens.as_fixed_size_binary_opt().map(|a| a.value(i))
    }
}

fn hash_of(v: impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

impl PageGuard {
    /// A guard for a unit starting (or resuming) at `cursor`.
    pub fn new(chain: Chain, dataset: Dataset, unit: &str, cursor: Option<&str>) -> PageGuard {
        let mut sent = HashSet::new();
        if let Some(c) = cursor {
            sent.insert(hash_of(c));
        }
        PageGuard {
            chain,
            dataset,
            unit: unit.into(),
            sent,
            last_key: None,
            portfolio_keys: HashSet::new(),
            without_rows: 0,
        }
    }

    fn err(&self, page: u64, what: String) -> PagingError {
        PagingError {
            chain: self.chain,
            dataset: self.dataset,
            unit: self.unit.clone(),
            page,
            what,
        }
    }

    /// Checks page `page` (its decoded rows of the unit's range, and the
    /// cursor it gave for the next page) before it is written.
    pub fn check(&mut self, page: u64, batch: &RecordBatch, next: Option<&str>) -> Result<(), PagingError> {
        if let Some(c) = next
            && !self.sent.insert(hash_of(c))
        {
            let shown: String = c.chars().take(40).collect();
            return Err(self.err(page, format!("the next cursor `{shown}` was already followed in this unit")));
        }
        match self.dataset {
            Dataset::Events => self.ordered(page, batch, "block_number", Some("log_index"))?,
            Dataset::Blocks => self.ordered(page, batch, "number", None)?,
            Dataset::Portfolio => self.portfolio(page, batch)?,
            Dataset::Tokens => {}
        }
        if batch.num_rows() == 0 && next.is_some() {
            self.without_rows += 1;
            if self.without_rows >= MAX_PAGES_WITHOUT_ROWS {
                return Err(self.err(
                    page,
                    format!(
                        "{} pages in a row brought no row of the unit's range, each with a new cursor",
                        self.without_rows
                    ),
                ));
            }
        } else {
            self.without_rows = 0;
        }
        Ok(())
    }

    /// Rows keyed by (`major`, `minor`) must be strictly increasing: each
    /// after the one before it in the page, the first after the previous
    /// page's last.
    fn ordered(&mut self, page: u64, batch: &RecordBatch, major: &str, minor: Option<&str>) -> Result<(), PagingError> {
        let col = |name: &str| batch.column_by_name(name).and_then(|c| c.as_primitive_opt::<Int64Type>());
        let Some(a) = col(major) else {
            return Ok(());
        };
        let b = minor.and_then(col);
        let show = |(x, y): (i64, i64)| match minor {
            Some(m) => format!("{major} {x}, {m} {y}"),
            None => format!("{major} {x}"),
        };
        let mut prev = self.last_key;
        for i in 0..a.len() {
            if a.is_null(i) {
                continue;
            }
            let k = (a.value(i), b.filter(|b| !b.is_null(i)).map_or(0, |b| b.value(i)));
            if let Some(p) = prev
                && k <= p
            {
                let what = match (k == p, prev == self.last_key) {
                    (true, false) => "the page holds a row twice",
                    (false, false) => "the page's rows are out of order",
                    (_, true) => "the page repeats or goes back to rows already received",
                };
                return Err(self.err(
                    page,
                    format!(
                        "{what} ({} after {}; rows were asked for oldest first, so each must come after the one before it)",
                        show(k),
                        show(p)
                    ),
                ));
            }
            prev = Some(k);
        }
        self.last_key = prev;
        Ok(())
    }

    fn portfolio(&mut self, page: u64, batch: &RecordBatch) -> Result<(), PagingError> {
        let dates = batch.column_by_name("date").and_then(|c| c.as_primitive_opt::<Date32Type>());
        let tokens = batch.column_by_name("token_address");
        let (Some(dates), Some(tokens)) = (dates, tokens) else {
            return Ok(());
        };
        let mut this_page = HashSet::new();
        for i in 0..dates.len() {
            let token = token_bytes(tokens.as_ref(), i);
            let key = hash_of((dates.value(i), token));
            let earlier = self.portfolio_keys.contains(&key);
            if earlier || !this_page.insert(key) {
                let day = crate::vocab::window::date_string(dates.value(i));
                let token = token.map_or("the native coin".to_string(), |t| {
                    std::str::from_utf8(t).map_or_else(|_| format!("0x{}", hex::encode(t)), str::to_string)
                });
                let where_ = if earlier { "already received" } else { "twice within the page" };
                return Err(self.err(page, format!("the page repeats the holdings of {day} in {token} {where_}")));
            }
        }
        self.portfolio_keys.extend(this_page);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    fn events(keys: &[(i64, i64)]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("block_number", DataType::Int64, false),
            Field::new("log_index", DataType::Int64, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(keys.iter().map(|k| k.0))),
                Arc::new(Int64Array::from_iter_values(keys.iter().map(|k| k.1))),
            ],
        )
        .unwrap()
    }

    fn guard() -> PageGuard {
        PageGuard::new(Chain::Ethereum, Dataset::Events, "u", None)
    }

    #[test]
    fn a_repeated_cursor_ends_the_unit() {
        let mut g = guard();
        g.check(1, &events(&[(1, 0)]), Some("a")).unwrap();
        g.check(2, &events(&[(2, 0)]), Some("b")).unwrap();
        let e = g.check(3, &events(&[(3, 0)]), Some("a")).unwrap_err();
        assert!(e.to_string().contains("already followed"), "{e}");
        // The cursor a resumed unit starts from counts as followed.
        let mut g = PageGuard::new(Chain::Ethereum, Dataset::Events, "u", Some("same"));
        assert!(g.check(1, &events(&[(1, 0)]), Some("same")).is_err());
    }

    #[test]
    fn repeated_or_backward_rows_end_the_unit() {
        let mut g = guard();
        g.check(1, &events(&[(5, 0), (5, 1)]), Some("a")).unwrap();
        assert!(g.check(2, &events(&[(5, 1)]), Some("b")).is_err());
        let mut g = guard();
        g.check(1, &events(&[(5, 0), (5, 1)]), Some("a")).unwrap();
        g.check(2, &events(&[(5, 2), (6, 0)]), Some("b")).unwrap();
        assert!(g.check(3, &events(&[(4, 9)]), Some("c")).is_err());
    }

    #[test]
    fn a_row_repeated_or_out_of_order_within_one_page_ends_the_unit() {
        // The same log twice in one page was written twice.
        let e = guard().check(1, &events(&[(5, 0), (5, 1), (5, 1)]), Some("a")).unwrap_err();
        assert!(e.to_string().contains("block_number 5, log_index 1"), "{e}");
        assert!(guard().check(1, &events(&[(5, 1), (5, 0)]), Some("a")).is_err());
        assert!(guard().check(1, &events(&[(6, 0), (5, 9)]), Some("a")).is_err());
        guard().check(1, &events(&[(5, 0), (5, 1), (6, 0)]), Some("a")).unwrap();
    }

    #[test]
    fn a_portfolio_page_repeating_a_day_and_token_within_itself_ends_the_unit() {
        use arrow_array::{Date32Array, StringArray};
        let page = |rows: &[(i32, &str)]| {
            let schema = Arc::new(Schema::new(vec![
                Field::new("date", DataType::Date32, false),
                Field::new("token_address", DataType::Utf8, true),
            ]));
            let dates = Date32Array::from_iter_values(rows.iter().map(|r| r.0));
            let tokens = StringArray::from_iter_values(rows.iter().map(|r| r.1));
            RecordBatch::try_new(schema, vec![Arc::new(dates), Arc::new(tokens)]).unwrap()
        };
        let mut g = PageGuard::new(Chain::Ethereum, Dataset::Portfolio, "u", None);
        // Days in any order (the service does not say), each (day, token) once.
        g.check(1, &page(&[(20_001, "0xa"), (20_000, "0xa"), (20_000, "0xb")]), Some("a"))
            .unwrap();
        let mut g = PageGuard::new(Chain::Ethereum, Dataset::Portfolio, "u", None);
        let e = g
            .check(1, &page(&[(20_000, "0xa"), (20_000, "0xb"), (20_000, "0xa")]), Some("a"))
            .unwrap_err();
        assert!(e.to_string().contains("0xa") && e.to_string().contains("2024-10-04"), "{e}");
    }

    #[test]
    fn empty_pages_are_bounded() {
        let mut g = guard();
        for p in 1..MAX_PAGES_WITHOUT_ROWS as u64 {
            g.check(p, &events(&[]), Some(&format!("c{p}"))).unwrap();
        }
        assert!(g.check(999, &events(&[]), Some("last")).is_err());
        // Rows reset the count; an empty last page is fine.
        let mut g = guard();
        for p in 1..1000u64 {
            let rows = if p % 50 == 0 { vec![(p as i64, 0)] } else { vec![] };
            g.check(p, &events(&rows), Some(&format!("c{p}"))).unwrap();
        }
        g.check(1000, &events(&[]), None).unwrap();
    }
}
