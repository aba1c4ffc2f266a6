//! A running job seen from outside: its tallies as they stand and, for
//! incremental exports, the mark and how far it is behind the confirmed
//! head ([`Live`]). The command line turns these into metrics; the run
//! report keeps each mark's start and end.
//!
//! Lag is measured at each pass (each poll in follow mode) and only when
//! someone watches it ([`Live::watch_lag`]): it costs a request for the
//! head and, when behind, one for two block timestamps, which a run
//! without metrics does not send. Blocks: `lag_blocks` are the confirmed
//! blocks not exported yet (head less confirmations, from the mark on);
//! `lag_seconds` the time between the last exported block and the
//! confirmed head. Portfolios: the complete UTC days not exported yet, as
//! seconds. Both drop to 0 as soon as a segment catches up.

use super::counters::{ExportKey, MarkProgress, Tally};
use super::report::final_tallies;
use super::setup::Shared;
use crate::api::{BlocksQuery, Client, Sort};
use crate::job::error::UnitError;
use crate::spec::Export;
use crate::vocab::Chain;
use crate::vocab::Dataset;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A handle on a running job's figures; cheap to clone, readable from any
/// thread, also after the run ends.
#[derive(Clone)]
pub struct Live {
    shared: Arc<Shared>,
    started_unix: f64,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Live")
    }
}

impl Live {
    pub(crate) fn new(shared: Arc<Shared>) -> Live {
        let now = chrono::Utc::now().timestamp_micros() as f64 / 1e6;
        let started_unix = now - shared.started.elapsed().as_secs_f64();
        Live { shared, started_unix }
    }

    /// The tallies as they stand, request counters included.
    pub fn tallies(&self) -> BTreeMap<ExportKey, Tally> {
        final_tallies(&self.shared, &[])
    }

    /// The change of output format the run made first, from the files
    /// the output holds (no request).
    pub fn conversion(&self) -> Option<crate::job::change::convert::Converted> {
        self.shared
            .conversion
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The pace requests are sent at, in requests a second (None: unpaced).
    pub fn pace(&self) -> Option<f64> {
        self.shared.client.pace()
    }

    /// When the run started (unix seconds).
    pub fn started_unix(&self) -> f64 {
        self.started_unix
    }

    /// When `t`'s export last committed on its chain (unix seconds), if it did.
    pub fn last_commit_unix(&self, t: &Tally) -> Option<f64> {
        (t.files > 0 || t.rows > 0).then_some(self.started_unix + t.elapsed_secs)
    }

    /// Incremental exports' marks and lag, by export and chain.
    pub fn marks(&self) -> BTreeMap<ExportKey, MarkProgress> {
        self.shared.marks_live()
    }

    /// Measure lag from now on (see the module doc for its cost).
    pub fn watch_lag(&self) {
        self.shared.watch_lag.store(true, Ordering::Relaxed);
    }
}

impl Shared {
    /// Notes the mark of `key` as it is now (the first note is its start).
    pub(crate) fn note_mark(&self, key: ExportKey, next: u64) {
        let mut m = self.marks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let p = m.entry(key).or_insert_with(|| MarkProgress {
            from: next,
            ..MarkProgress::default()
        });
        p.next = next;
        if let Some(c) = p.confirmed {
            let lag = (c + 1).saturating_sub(next);
            p.lag_blocks = Some(lag);
            if lag == 0 {
                p.lag_seconds = Some(0.0);
            }
        }
    }

    fn note_lag(&self, key: ExportKey, head: Option<u64>, confirmed: Option<u64>, lag_blocks: Option<u64>, lag_seconds: f64) {
        let mut m = self.marks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let p = m.entry(key).or_default();
        p.head = head;
        p.confirmed = confirmed;
        p.lag_blocks = lag_blocks;
        p.lag_seconds = Some(lag_seconds);
    }

    pub(crate) fn marks_live(&self) -> BTreeMap<ExportKey, MarkProgress> {
        self.marks.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Whether lag is measured (metrics asked for it).
    pub(crate) fn watching_lag(&self) -> bool {
        self.watch_lag.load(Ordering::Relaxed)
    }

    /// Measures the lag of `e` on `chain` from mark `next`: blocks against
    /// `head` (the newest block, fetched by the caller when it needs it
    /// anyway), portfolios against the start of today (`now`).
    pub(crate) async fn measure_lag(
        &self,
        client: &Client,
        e: &Export,
        chain: Chain,
        next: u64,
        head: Option<u64>,
        now: i64,
    ) -> Result<(), UnitError> {
        let key = ExportKey {
            export: e.index,
            dataset: e.dataset,
            chain,
        };
        if e.dataset == Dataset::Portfolio {
            let today = now.div_euclid(86_400) * 86_400;
            self.note_lag(key, None, None, None, (today - next as i64).max(0) as f64);
            return Ok(());
        }
        let head = match head {
            Some(h) => h,
            None => super::incremental::head(client, chain).await?,
        };
        let confirmations = e.incremental.as_ref().map_or(0, |i| i.confirmations(chain));
        let confirmed = head.checked_sub(confirmations);
        let lag_blocks = confirmed.map_or(0, |c| (c + 1).saturating_sub(next));
        let lag_seconds = match confirmed {
            Some(c) if lag_blocks > 0 => {
                let last = next.saturating_sub(1);
                let times = block_times(client, chain, &[last, c]).await?;
                match (times.get(&last), times.get(&c)) {
                    (Some(a), Some(b)) => (b - a).max(0) as f64,
                    _ => 0.0,
                }
            }
            _ => 0.0,
        };
        self.note_lag(key, Some(head), confirmed, Some(lag_blocks), lag_seconds);
        Ok(())
    }
}

/// Timestamps (unix seconds) of blocks `numbers`, in one request.
async fn block_times(client: &Client, chain: Chain, numbers: &[u64]) -> Result<HashMap<u64, i64>, UnitError> {
    let q = BlocksQuery {
        numbers: Some(numbers.to_vec()),
        sort: Some(Sort::Earliest),
        limit: Some(numbers.len().max(1) as u32),
        ..Default::default()
    };
    let page = client.blocks(chain, &q).await?;
    Ok(page
        .blocks
        .into_iter()
        .filter_map(|b| {
            let n = u64::try_from(b.number?.0).ok()?;
            let t = crate::vocab::window::parse_instant(b.timestamp.as_deref()?).ok()?;
            Some((n, t))
        })
        .collect())
}
