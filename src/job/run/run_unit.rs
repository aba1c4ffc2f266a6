//! One unit: page → decode → write → commit.
//!
//! The unit's [`Pager`] requests pages in its own task and decodes each
//! with [`UnitDecoder`] (every dataset through [`crate::decode::page`];
//! a decoding export's logs through its [`LogDecoder`], into a table per
//! event); this loop checks the page against the paging guard, hands the
//! rows to the unit's [`UnitWriter`]s (one per table the export writes, in
//! [`crate::spec::Export::tables`] order), and commits every `commit_pages` pages or
//! `commit_interval`, or when an open file reaches `file_rows`/`file_bytes`.
//! A commit finishes the open files (durable under their final names) and
//! only then writes the unit's checkpoint with the cursor after the last
//! page they hold: a crash between the two leaves files no checkpoint
//! covers, removed as orphans by the next run. On an error the rows since
//! the last commit are discarded; a signal, or a refusal of the key or of
//! the unit's endpoint (said once for the run, not as the unit's failure),
//! commits them first.

use super::counters::ExportKey;
use super::counters::unit_credit;
use super::setup::Shared;
use super::setup::units_in_flight;
use crate::api::ApiError;
use crate::api::types::Block;
use crate::decode::abi::{DecodeCounts, LogDecoder};
use crate::decode::{self, Ctx, DecodeError, Decoded};
use crate::fetch::{FetchError, PageDecoder, Pager, Records};
use crate::job::error::UnitError;
use crate::job::guard::PageGuard;
use crate::plan::{Unit, UnitRange};
use crate::sink::UnitWriter;
use crate::spec::HashEncoding;
use crate::state::{CommittedFile, STATE_VERSION, TailBlock, UnitState};
use std::sync::Arc;
use std::time::Instant;

/// Decodes a unit's pages (in its fetch task).
#[derive(Debug)]
pub struct UnitDecoder {
    unit: Arc<Unit>,
    enc: HashEncoding,
    /// A decoding export's decoder of logs.
    logs: Option<Arc<LogDecoder>>,
    /// With `logs`: also the raw `events` table.
    also_raw: bool,
}

/// A decoded page: rows for each table the unit writes, what the paging
/// guard checks, and for block units the edges the checkpoint notes.
#[derive(Debug)]
pub struct UnitPage {
    /// Rows per table, in the unit's writers' order.
    pub outputs: Vec<Decoded>,
    /// The page's keys (`block_number`/`log_index`, …) for the guard.
    pub guard: arrow_array::RecordBatch,
    /// Block edges seen on this page (block units only).
    pub edges: Edges,
    /// Decoded events: what was left out or changed.
    pub counts: DecodeCounts,
}

/// What a page of blocks says of its unit's edges, for reorg checks: the
/// parent hash of the unit's first block and its highest block's hash.
#[derive(Debug, Default)]
pub struct Edges {
    first_parent_hash: Option<String>,
    last_block: Option<TailBlock>,
}

impl PageDecoder for UnitDecoder {
    type Output = UnitPage;
    type Error = DecodeError;

    fn decode(&self, page: u64, records: Records<'_>) -> Result<UnitPage, DecodeError> {
        let ctx = Ctx {
            unit: &self.unit,
            page,
            enc: self.enc,
        };
        if let (Records::Events(logs), Some(decoder)) = (records, &self.logs) {
            let d = decoder.decode(ctx, logs)?;
            let mut outputs = d.tables;
            if self.also_raw {
                outputs.push(decode::page(ctx, records)?);
            }
            return Ok(UnitPage {
                outputs,
                guard: d.keys,
                edges: Edges::default(),
                counts: d.counts,
            });
        }
        let edges = match records {
            Records::Blocks(b) => block_edges(&self.unit.range, b),
            _ => Edges::default(),
        };
        let decoded = decode::page(ctx, records)?;
        Ok(UnitPage {
            guard: decoded.batch.clone(),
            outputs: vec![decoded],
            edges,
            counts: DecodeCounts::default(),
        })
    }
}

/// The edges of a block unit found among `blocks`.
fn block_edges(range: &UnitRange, blocks: &[Block]) -> Edges {
    let mut edges = Edges::default();
    let UnitRange::Blocks { start, end } = *range else {
        return edges;
    };
    for b in blocks {
        let Some(n) = b.number.map(|n| n.0 as u64).filter(|n| (start..end).contains(n)) else {
            continue;
        };
        if n == start
            && let Some(p) = &b.parent_hash
        {
            edges.first_parent_hash = Some(p.to_ascii_lowercase());
        }
        if let Some(h) = &b.hash
            && edges.last_block.as_ref().is_none_or(|l| n > l.number)
        {
            edges.last_block = Some(TailBlock {
                number: n,
                hash: h.to_ascii_lowercase(),
            });
        }
    }
    edges
}

/// Notes a page's edges in the checkpoint; they reach storage with the
/// next commit, together with the rows they describe.
fn note_edges(st: &mut UnitState, edges: Edges) {
    if let Some(p) = edges.first_parent_hash {
        st.first_parent_hash = Some(p);
    }
    if let Some(lb) = edges.last_block
        && st.last_block.as_ref().is_none_or(|l| lb.number > l.number)
    {
        st.last_block = Some(lb);
    }
}

/// Rows and pages fetched since the last commit, and the cursor after them.
#[derive(Default)]
struct Pending {
    cursor: Option<String>,
    rows: u64,
    pages: u64,
    counts: DecodeCounts,
}

/// A unit being run.
struct UnitRun<'a> {
    shared: &'a Shared,
    unit: &'a Arc<Unit>,
    key: ExportKey,
    st: UnitState,
    /// One per table the export writes.
    writers: Vec<UnitWriter>,
    /// The schema of each writer's table.
    tables: Vec<arrow_schema::SchemaRef>,
    pending: Pending,
    pages: u64,
    /// What the unit counts for in its export's progress while in flight.
    credit: u64,
}

/// Runs `unit` from its checkpoint `st` (None: from the start) to its end,
/// a failure or a signal.
pub(crate) async fn run(shared: &Shared, unit: &Arc<Unit>, st: Option<UnitState>) -> Result<(), UnitError> {
    let spec = &shared.spec;
    let Some(export) = spec.exports.get(unit.export) else {
        return Ok(());
    };
    let st = match st {
        Some(st) => st,
        None => {
            // Above what a reorg repair rewound, which the tables' earlier
            // versions still read (`Mark::seq_floor`).
            let rewound = if super::publish::held(shared, unit) {
                shared.state.load_mark(unit.export, unit.chain).await?.map_or(0, |m| m.seq_floor)
            } else {
                0
            };
            UnitState {
                version: STATE_VERSION,
                unit: unit.id.clone(),
                next_seq: shared.state.seq_floor().max(rewound),
                ..Default::default()
            }
        }
    };
    let key = ExportKey::of(unit);
    let logs = shared.decoders.get(unit.export).cloned().flatten();
    let decoder = UnitDecoder {
        unit: unit.clone(),
        enc: spec.output.hash_encoding,
        also_raw: export.decoding.as_ref().is_some_and(|d| d.also_raw),
        logs: logs.clone(),
    };
    let mut pager = Pager::start(
        shared.client_for(key),
        unit.clone(),
        export,
        spec.source.page_size,
        st.cursor.clone(),
        decoder,
    );
    let tables = shared.unit_tables(unit);
    let share = spec.output.memory_budget / units_in_flight(spec) / tables.len().max(1);
    let prefix = shared.state.file_prefix(&unit.id);
    let writers = tables
        .iter()
        .map(|(table, schema)| UnitWriter::new(shared.sink.clone(), table, unit.chain, &prefix, schema.clone(), st.next_seq, share))
        .collect();
    let tables = tables.into_iter().map(|(_, schema)| schema).collect();
    let mut run = UnitRun {
        shared,
        unit,
        key,
        pending: Pending {
            cursor: st.cursor.clone(),
            ..Pending::default()
        },
        st,
        writers,
        tables,
        pages: 0,
        credit: 0,
    };
    match run.pages(&mut pager).await {
        Ok(done) => {
            run.commit(done).await?;
            if done && let Some(p) = shared.progress.get(unit.export) {
                p.unit_done(unit.estimated_requests, run.pages, run.credit);
            }
            Ok(())
        }
        Err(e) => {
            if let Some(p) = shared.progress.get(unit.export) {
                p.release(run.credit);
            }
            // Rows since the last commit are discarded: the cursor has not
            // moved past them, so the next run fetches them again.
            for w in &mut run.writers {
                w.abort().await;
            }
            Err(e)
        }
    }
}

impl UnitRun<'_> {
    /// Pages until the unit ends (true) or a signal stops it (false),
    /// committing as it goes.
    async fn pages(&mut self, pager: &mut Pager<UnitDecoder>) -> Result<bool, UnitError> {
        let out = &self.shared.spec.output;
        let progress = self.shared.progress.get(self.unit.export).cloned().unwrap_or_default();
        let mut guard = PageGuard::new(self.unit.chain, self.unit.dataset, &self.unit.id, self.st.cursor.as_deref());
        let mut last_commit = Instant::now();
        // A resumed unit's progress counts against what its estimate leaves.
        let estimate_left = self.unit.estimated_requests.saturating_sub(self.st.pages);
        loop {
            if *self.shared.cancel.borrow() {
                return Ok(false);
            }
            let f = match pager.next().await {
                Ok(Some(f)) => f,
                Ok(None) => return Ok(true),
                // A signal, or a refusal of the key or of this unit's
                // endpoint: keep what is buffered (committed by the
                // caller); the pages before are whole, and the unit is
                // left to resume, not failed.
                Err(FetchError::Api(e)) if matches!(e, ApiError::Cancelled) || crate::job::error::refused(&e) => return Ok(false),
                Err(e) => return Err(e.into()),
            };
            let page = f.page?;
            self.pages = f.number;
            note_edges(&mut self.st, page.edges);
            guard.check(f.number, &page.guard, f.next.as_deref())?;
            let mut rows = 0;
            for (writer, decoded) in self.writers.iter_mut().zip(page.outputs) {
                rows += decoded.batch.num_rows() as u64;
                writer.write(decoded).await?;
            }
            let credit = unit_credit(f.number, estimate_left);
            progress.page(rows, self.credit, credit);
            self.credit = credit;
            self.pending.rows += rows;
            self.pending.pages += 1;
            self.pending.counts += page.counts;
            let last = f.next.is_none();
            self.pending.cursor = f.next;
            if last {
                return Ok(true);
            }
            if self.pending.pages >= out.commit_pages as u64
                || last_commit.elapsed() >= out.commit_interval
                || self
                    .writers
                    .iter()
                    .any(|w| w.max_open_rows() >= out.file_rows as u64 || w.max_open_bytes() >= out.file_bytes)
            {
                self.commit(false).await?;
                last_commit = Instant::now();
            }
        }
    }

    /// Finishes the open files, then checkpoints what they hold (`done`:
    /// the unit is complete).
    async fn commit(&mut self, done: bool) -> Result<(), UnitError> {
        if self.pending.pages == 0 && !done {
            return Ok(());
        }
        let mut files = Vec::new();
        let mut by_table = Vec::new();
        for (w, schema) in self.writers.iter_mut().zip(&self.tables) {
            let written = w.finish().await?;
            files.extend(written.iter().cloned());
            by_table.push((w.table().to_string(), schema.clone(), written));
        }
        if !files.is_empty() {
            crate::util::failpoint::hit("after-file-write");
        }
        // Every writer continues from the highest sequence: files written
        // after this checkpoint all have sequences at or above it, which
        // is what makes them uncommitted (see `StateStore::remove_orphans`).
        let next_seq = self.writers.iter().map(|w| w.next_seq).max().unwrap_or(self.st.next_seq);
        for w in &mut self.writers {
            w.next_seq = next_seq;
        }
        let st = &mut self.st;
        st.cursor = if done { None } else { self.pending.cursor.clone() };
        st.next_seq = next_seq;
        st.rows += self.pending.rows;
        st.pages += self.pending.pages;
        st.files += files.len() as u64;
        st.committed.extend(files.iter().map(CommittedFile::from));
        let bytes: u64 = files.iter().map(|f| f.bytes).sum();
        st.bytes += bytes;
        st.done = done;
        st.updated_at = chrono::Utc::now().to_rfc3339();
        self.shared.state.save_unit(st).await?;
        // A unit exported again (`replaces`) is published by the pass once
        // it and its group are done, replacing its earlier files in the
        // same commit; an incremental export's, with its segment.
        let own_commit = st.replaces.is_empty() && st.together.is_empty() && !super::publish::held(self.shared, self.unit);
        if self.shared.sink.format().publishes() && own_commit {
            super::publish::publish(self.shared, &self.unit.id, next_seq, by_table).await?;
            if done {
                st.published = true;
                self.shared.state.save_unit(st).await?;
            }
        }
        let rows = self.pending.rows;
        let counts = self.pending.counts;
        let elapsed = self.shared.started.elapsed().as_secs_f64();
        let hint = counts
            .shape
            .and_then(|shape| self.shared.decoders.get(self.unit.export)?.as_ref()?.hint(shape));
        self.shared.tally(self.key, |t| {
            t.undecodable += counts.undecodable;
            t.layout_mismatched += counts.mismatched;
            if t.decode_hint.is_none() {
                t.decode_hint = hint;
            }
            t.decimal38_nulls += counts.decimal38_nulls;
            t.invalid_utf8 += counts.invalid_utf8;
            t.rows += rows;
            t.files += files.len() as u64;
            t.bytes += bytes;
            t.elapsed_secs = elapsed;
            t.units_done += u64::from(done);
        });
        self.pending = Pending {
            cursor: st.cursor.clone(),
            ..Pending::default()
        };
        Ok(())
    }
}
