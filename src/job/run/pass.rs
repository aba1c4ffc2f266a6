//! A pass of a job, top to bottom: what [`Passes::run`] does, in order.
//!
//! 1. **Open periods** ([`Passes::open_periods`], once per run): the current
//!    period of every aligned export (`align = "day"`/`"hour"`) is recorded
//!    in `segments/` before its units start, unless it is exported already.
//! 2. **Step incremental exports** ([`Passes::step_incremental_exports`]):
//!    finish a repair a crash left, check the exported tail for reorgs, and
//!    cut a segment up to the confirmed head ([`super::incremental`],
//!    [`super::reorg`]).
//! 3. **Plan** ([`Passes::plan_pass`]): every unit of the frozen windows and
//!    pending segments (this shard's share), files of uncommitted work
//!    removed, the units not yet done ordered largest first.
//! 4. **Run the units** ([`super::schedule::execute`]) under the request slots.
//! 5. **Close segments** ([`Passes::close_segments`]) whose units are all
//!    done, across shards (whichever finishes last closes it): a closed
//!    aligned period is recorded in `periods/` and its checkpoints
//!    dropped; an incremental segment moves its export's mark.
//! 6. **Again or stop**: after a reorg repair, pass again (at most
//!    [`crate::job::MAX_REPAIR_PASSES`]); following, compact now and then
//!    ([`Passes::compact_finished`]) and wait for the next poll
//!    ([`Passes::wait_for_poll`]); otherwise stop. A signal, a failure or
//!    a refusal of the service (the key, or a chain's endpoint) stops it
//!    after the pass (a refused key at once: no unit starts after it).
//!
//! At the end, finished units' checkpoints are folded into a manifest
//! ([`Passes::fold_state`]) and finished partitions compacted.

use super::counters::ExportKey;
use super::incremental::{self, Finished, head, initial_mark, next_window};
use super::live::Live;
use super::reorg::repair;
use super::report::{FailedUnit, Outcome};
use super::report_format::SegmentStatus;
use super::schedule::{self, Todo};
use super::setup::Shared;
use super::{JobEvent, MAX_REPAIR_PASSES, RunOptions};
use crate::api::Client;
use crate::job::error::{RunError, UnitError};
use crate::job::maintain::compact::{CompactSummary, Compactor};
use crate::plan::{self, Segment, Unit};
use crate::spec::Export;
use crate::state::{JobState, UnitState};
use crate::vocab::{Chain, Dataset};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How often follow mode looks for finished partitions.
const FOLLOW_COMPACT_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// How often follow mode polls when no export says.
const DEFAULT_POLL: Duration = Duration::from_secs(15);

/// The pass loop's state: what each pass plans from and adds to.
pub(super) struct Passes<'a> {
    shared: Arc<Shared>,
    job: &'a JobState,
    opts: &'a RunOptions,
    /// The instant relative and aligned windows resolve against.
    now: i64,
    /// Aligned periods and incremental segments recorded and not yet closed.
    pending: Vec<Segment>,
    /// Units already counted in the tallies (a unit is planned again each pass).
    seen: HashSet<String>,
    /// When each incremental export last cut a segment on a chain.
    last_cut: HashMap<(usize, Chain), Instant>,
    /// When follow mode last looked for partitions to compact.
    last_compact: Option<Instant>,
    /// Whether this run paged any unit (else it has nothing to fold).
    ran_units: bool,
    pub(super) out: Outcome,
}

impl<'a> Passes<'a> {
    pub(super) async fn new(shared: Arc<Shared>, job: &'a JobState, opts: &'a RunOptions, now: i64) -> Result<Passes<'a>, RunError> {
        let pending = shared.state.load_segments().await?;
        Ok(Passes {
            shared,
            job,
            opts,
            now,
            pending,
            seen: HashSet::new(),
            last_cut: HashMap::new(),
            last_compact: None,
            ran_units: false,
            out: Outcome::default(),
        })
    }

    /// Passes until the job is done, stopped, failed, or (following) cancelled.
    pub(super) async fn run(&mut self) -> Result<(), RunError> {
        self.opts.tell(JobEvent::Started {
            live: &Live::new(self.shared.clone()),
        });
        self.open_periods().await?;
        loop {
            self.out.passes += 1;
            let reorgs_before = self.out.reorgs.len();
            self.step_incremental_exports().await;
            let todo = self.plan_pass().await?;
            self.ran_units |= !todo.is_empty();
            let replacing = todo
                .iter()
                .any(|(_, st)| st.as_ref().is_some_and(|s| !s.replaces.is_empty() || !s.together.is_empty()));
            self.opts.tell(JobEvent::Fetching {
                progress: &self.shared.progress,
            });
            let failed = schedule::execute(&self.shared, todo).await;
            self.out.failed.extend(failed);
            if replacing {
                self.publish_replacing().await?;
            }
            self.close_segments().await?;
            // A refused chain's endpoint ends the run too: passing again
            // (a repair, the next poll) would only meet it again.
            if self.shared.stopping() || !self.out.failed.is_empty() || !self.shared.client.refusals().is_empty() {
                break;
            }
            if self.opts.follow {
                self.compact_finished(false).await?;
                self.maintain_tables().await;
            }
            if self.out.reorgs.len() > reorgs_before && self.out.passes < MAX_REPAIR_PASSES {
                continue;
            }
            if !self.opts.follow || !self.wait_for_poll().await {
                break;
            }
        }
        self.out.periods = self.pending.iter().filter(|s| s.chain.is_none()).map(|s| s.window).collect();
        self.fold_state().await;
        if !self.shared.stopping() && self.out.failed.is_empty() && self.shared.client.refusals().is_empty() {
            self.compact_finished(true).await?;
            // After a run that did something (a re-run with nothing to do
            // lists nothing), and never failing a run whose rows are in.
            let worked = self.seen.len() > self.out.units_already_done || self.opts.fresh;
            if self.opts.shard.is_none() && worked {
                let shared = &self.shared;
                if let Err(e) = crate::job::maintain::vacuum::vacuum_tables(&shared.spec, &shared.sink, &shared.state).await {
                    tracing::warn!("vacuum after the run failed (run `chainetl vacuum` to retry): {e}");
                }
            }
        }
        Ok(())
    }

    /// Records the current period of every aligned export, unless it is
    /// exported already or pending.
    pub(super) async fn open_periods(&mut self) -> Result<(), RunError> {
        let state = &self.shared.state;
        for e in &self.shared.spec.exports {
            let Some(seg) = plan::aligned_segment(e, self.now) else {
                continue;
            };
            if self.pending.contains(&seg) {
                continue;
            }
            if state.period_done(&seg).await? {
                self.out.covered.push((seg.clone(), SegmentStatus::AlreadyExported));
                tracing::info!(export = e.index, "export[{}]: period {} is already exported", e.index, seg.window);
            } else {
                let s = state.create_segment(&seg).await?;
                if !self.pending.contains(&s) {
                    self.pending.push(s);
                }
            }
        }
        Ok(())
    }

    /// Steps every incremental export on every chain (see
    /// [`Passes::step_incremental`]); a failure is that export's on that
    /// chain and ends the run after this pass.
    pub(super) async fn step_incremental_exports(&mut self) {
        let clock = self.opts.as_of.unwrap_or_else(|| crate::plan::job_now(&self.shared.spec));
        let spec = self.shared.spec.clone();
        for e in spec.exports.iter().filter(|e| e.incremental.is_some()) {
            for &chain in &e.chains {
                let cut = self.last_cut.get(&(e.index, chain)).is_none_or(|t| t.elapsed() >= e.roll_interval);
                let before = self.pending.len();
                match self.step_incremental(e, chain, clock, cut).await {
                    Ok(()) => {}
                    Err(err) if err.said_once() => {}
                    Err(err) => {
                        tracing::error!(export = e.index, %chain, "incremental export failed: {err}");
                        self.note_failed(e, chain);
                        self.out.failed.push(FailedUnit {
                            unit: format!("e{}-{}-{} (mark)", e.index, e.dataset, chain),
                            chain,
                            dataset: e.dataset,
                            range: "high-water mark".into(),
                            error: err.to_string(),
                        });
                    }
                }
                if self.pending.len() > before {
                    self.last_cut.insert((e.index, chain), Instant::now());
                }
            }
        }
    }

    /// One pass of an incremental export on one chain: finish a repair left
    /// by a crash, check the exported tail for reorgs, and (when `cut`)
    /// record a segment up to the confirmed head unless one is still pending.
    async fn step_incremental(&mut self, e: &Export, chain: Chain, now: i64, cut: bool) -> Result<(), UnitError> {
        let state = self.shared.state.clone();
        let key = ExportKey {
            export: e.index,
            dataset: e.dataset,
            chain,
        };
        let client = self.client_for(key);
        let mut mark = state.load_mark(e.index, chain).await?.unwrap_or_else(|| initial_mark(e, chain));
        if let Some(from) = mark.repair_from {
            let r = repair(&state, e, &mut mark, from, &mut self.pending).await?;
            self.out.reorgs.push(r);
        }
        if e.dataset != Dataset::Portfolio
            && let Some(r) = super::reorg::check_tail(&client, &state, e, &mut mark, &mut self.pending).await?
        {
            self.out.reorgs.push(r);
        }
        self.shared.note_mark(key, mark.next);
        if !cut || self.pending.iter().any(|s| s.export == e.index && s.chain == Some(chain)) {
            self.measure_lag(&client, e, chain, mark.next, None, now).await;
            return Ok(());
        }
        let head = match e.dataset {
            Dataset::Portfolio => None,
            _ => Some(head(&client, chain).await?),
        };
        self.measure_lag(&client, e, chain, mark.next, head, now).await;
        if let Some(window) = next_window(e, &mark, now, head) {
            let seg = state
                .create_segment(&Segment {
                    export: e.index,
                    chain: Some(chain),
                    window,
                })
                .await?;
            if !self.pending.contains(&seg) {
                self.pending.push(seg);
            }
        }
        Ok(())
    }

    /// Measures lag when it is watched; a failure is only logged (the
    /// next pass measures again).
    async fn measure_lag(&self, client: &Client, e: &Export, chain: Chain, next: u64, head: Option<u64>, now: i64) {
        if !self.shared.watching_lag() {
            return;
        }
        match self.shared.measure_lag(client, e, chain, next, head, now).await {
            Ok(()) => {}
            Err(err) if err.said_once() => {}
            Err(err) => tracing::warn!(export = e.index, %chain, "could not measure the lag behind the head: {err}"),
        }
    }

    /// This pass's units not yet done, largest first; counts newly planned
    /// units into the tallies and removes files of uncommitted work.
    pub(super) async fn plan_pass(&mut self) -> Result<Vec<Todo>, RunError> {
        let spec = &self.shared.spec;
        let mut units = plan::plan(spec, &self.job.windows, self.job.cutting(spec), &self.pending);
        if let Some((k, n)) = self.opts.shard {
            units = plan::shard(units, k, n);
        }
        let state = &self.shared.state;
        // This run's finished units are folded into a manifest as it
        // reads them: a run holds the lease of exactly these units.
        let ours: HashSet<&str> = units.iter().map(|u| u.id.as_str()).collect();
        let mut states = state.load_units_folding(|id| ours.contains(id)).await?;
        let format = self.shared.sink.format();
        if self.out.passes <= 1 {
            let mut seen = HashSet::new();
            for u in &units {
                for (table, schema) in self.shared.unit_tables(u) {
                    if seen.insert(table.clone()) {
                        format.check_table(&self.shared.sink, &table, &schema).await.map_err(|e| match e {
                            crate::sink::SinkError::Config { .. } => RunError::Environment(e.to_string()),
                            e => RunError::Sink(e),
                        })?;
                    }
                }
            }
        }
        for u in &units {
            if let Some(st) = states.get_mut(&u.id) {
                super::publish::reconcile(&self.shared, u, st).await?;
            }
        }
        if self.opts.shard.is_none() {
            state.merge_manifests(crate::state::MERGE_IN_RUN_AT).await?;
        }
        if self.out.passes == 1 {
            self.opts.tell(JobEvent::Planned {
                spec,
                windows: &self.job.windows,
                segments: &self.pending,
                units: &units,
                states: &states,
            });
        }
        // Files of uncommitted work belong to units a run started. After
        // its first pass, a run has planned every unit any run started:
        // a segment is recorded before its units start, and the first pass
        // plans every recorded one. So a later pass looks only at units it
        // planned before (one that failed, or was dropped by a reorg repair
        // and planned again), not at those of segments cut since.
        let earlier: Vec<Unit>;
        let sweep: &[Unit] = if self.out.passes <= 1 {
            &units
        } else {
            earlier = units.iter().filter(|u| self.seen.contains(&u.id)).cloned().collect();
            &earlier
        };
        let removed = state.remove_orphans(sweep, &mut states, &spec.tables()).await?;
        if removed > 0 {
            tracing::info!(files = removed, "removed files of uncommitted work left by an interrupted run");
        }
        self.out.orphans_removed += removed;
        let todo = self.select(units, &states);
        for (u, _) in &todo {
            if let Some(p) = self.shared.progress.get(u.export) {
                p.units_total.fetch_add(1, Ordering::Relaxed);
                p.work_total.fetch_add(u.estimated_requests, Ordering::Relaxed);
            }
        }
        Ok(todo)
    }

    /// The units not yet done, largest first (what is left of them, by the
    /// estimate): the job ends on its shortest units, so the request slots
    /// stay busy until close to the end.
    fn select(&mut self, units: Vec<Unit>, states: &HashMap<String, UnitState>) -> Vec<Todo> {
        let mut todo = Vec::new();
        for u in units {
            let st = states.get(&u.id).cloned();
            let done = st.as_ref().is_some_and(|s| s.done);
            if self.seen.insert(u.id.clone()) {
                self.shared.tally(ExportKey::of(&u), |t| {
                    t.units += 1;
                    t.rows_before += st.as_ref().map_or(0, |s| s.rows);
                    t.units_done += u64::from(done);
                });
                self.out.units_already_done += usize::from(done);
            }
            if !done {
                todo.push((Arc::new(u), st));
            }
        }
        todo.sort_by_key(|(u, st)| std::cmp::Reverse(u.estimated_requests.saturating_sub(st.as_ref().map_or(0, |s| s.pages))));
        todo
    }

    /// In the `delta` format: publishes the done units that were exported
    /// again (`verify --repair`, a dissolved compaction), each with its
    /// group, replacing their earlier files in one commit a table.
    async fn publish_replacing(&mut self) -> Result<(), RunError> {
        let states = self.shared.state.load_units().await?;
        let mut published: HashSet<String> = HashSet::new();
        let mut ids: Vec<&String> = states.keys().collect();
        ids.sort();
        for id in ids {
            let st = &states[id];
            // An incremental export's units publish with their segment.
            let incremental = crate::job::maintain::compact::unit_export(id)
                .and_then(|(e, _)| self.shared.spec.exports.get(e))
                .is_some_and(|e| e.incremental.is_some());
            if published.contains(id) || incremental || !st.done || st.published || (st.replaces.is_empty() && st.together.is_empty()) {
                continue;
            }
            let mut st = st.clone();
            let members = st.together.clone();
            super::publish::publish_replacing(&self.shared, &mut st).await?;
            if st.published {
                published.extend(members);
                published.insert(st.unit);
            }
        }
        Ok(())
    }

    /// Closes the pending segments whose units are all done.
    pub(super) async fn close_segments(&mut self) -> Result<(), RunError> {
        let states = self.shared.state.load_units().await?;
        let spec = self.shared.spec.clone();
        for seg in self.pending.clone() {
            let Some(e) = spec.exports.get(seg.export) else {
                continue;
            };
            let units = self.segment_units(&seg);
            // Where files are published, a unit is finished once its files
            // are in its tables too: closing drops the checkpoints a later
            // run would publish them from.
            // (An incremental export's segment is published whole when it
            // closes.)
            let publishes = self.shared.sink.format().publishes() && e.incremental.is_none();
            if !units
                .iter()
                .all(|u| states.get(&u.id).is_some_and(|s| s.done && (s.published || !publishes)))
            {
                continue;
            }
            if e.incremental.is_some() {
                self.close_incremental(e, &seg, &units, &states).await;
            } else {
                self.close_period(&seg, &units).await?;
            }
        }
        Ok(())
    }

    /// A segment's own units: the plan also holds the fixed exports' units,
    /// whose checkpoints must outlive the segment.
    fn segment_units(&self, seg: &Segment) -> Vec<Unit> {
        let spec = &self.shared.spec;
        plan::plan(spec, &self.job.windows, self.job.cutting(spec), std::slice::from_ref(seg))
            .into_iter()
            .filter(|u| seg.owns(u))
            .collect()
    }

    /// An aligned period done: recorded, its segment and checkpoints dropped.
    async fn close_period(&mut self, seg: &Segment, units: &[Unit]) -> Result<(), RunError> {
        let state = &self.shared.state;
        state.save_period_done(seg).await?;
        state.remove_segment(seg).await?;
        let ids: Vec<String> = units.iter().map(|u| u.id.clone()).collect();
        state.delete_units(&ids).await?;
        self.pending.retain(|s| s != seg);
        self.out.covered.push((seg.clone(), SegmentStatus::Exported));
        Ok(())
    }

    /// An incremental segment done: checked against the chain, the mark
    /// moved past it (or rewound by a reorg). A failure is the export's on
    /// that chain, not the run's.
    async fn close_incremental(&mut self, e: &Export, seg: &Segment, units: &[Unit], states: &HashMap<String, UnitState>) {
        let chain = seg.chain.unwrap_or(Chain::Ethereum);
        let key = ExportKey {
            export: e.index,
            dataset: e.dataset,
            chain,
        };
        let client = self.client_for(key);
        let finished = incremental::finish_segment(&client, &self.shared, e, seg, units, states, &mut self.pending).await;
        if let Ok(Some(m)) = self.shared.state.load_mark(e.index, chain).await {
            self.shared.note_mark(key, m.next);
        }
        match finished {
            Ok(Finished::Advanced) => self.out.covered.push((seg.clone(), SegmentStatus::Exported)),
            Ok(Finished::Reorg(r)) => {
                self.last_cut.remove(&(e.index, r.chain));
                self.out.reorgs.push(r);
            }
            Err(err) if err.said_once() => {}
            Err(err) => {
                self.note_failed(e, chain);
                self.out.failed.push(FailedUnit {
                    unit: seg.id(),
                    chain,
                    dataset: e.dataset,
                    range: seg.window.to_string(),
                    error: err.to_string(),
                })
            }
        }
    }

    /// Counts a failure of `e` on `chain` that is not a scheduled unit's
    /// (a mark's step, a segment's close) in its tally, as the scheduler
    /// counts a unit's.
    fn note_failed(&self, e: &Export, chain: Chain) {
        let key = ExportKey {
            export: e.index,
            dataset: e.dataset,
            chain,
        };
        self.shared.tally(key, |t| t.units_failed += 1);
    }

    /// Compacts finished partitions when `output.compact` is on and this run
    /// holds the whole job (a shard leaves it to an unsharded run or
    /// `chainetl compact`): at the end of a run, and every
    /// [`FOLLOW_COMPACT_EVERY`] while following.
    /// Keeps each table's records within its own bounds as a `--follow`
    /// run goes on ([`crate::sink::format::TableFormat::maintain`]); a
    /// failure is logged, and the next poll tries again.
    async fn maintain_tables(&mut self) {
        let shared = self.shared.clone();
        if self.opts.shard.is_some() || !shared.sink.format().maintains() {
            return;
        }
        // The units' checkpoints once a poll, for the transaction ids the
        // job needs no more; unread, nothing is settled.
        let read = async { Ok::<_, crate::state::StateError>((shared.state.load_units().await?, shared.state.load_marks().await?)) };
        let settled = match read.await {
            Ok((units, marks)) => crate::job::tables::settled_txns(&shared.state, &units, &marks),
            Err(e) => {
                tracing::warn!("reading the job's checkpoints to keep its tables' records small failed: {e}");
                Arc::new(|_: &str, _: i64| false)
            }
        };
        for table in shared.spec.tables() {
            if let Err(e) = shared.sink.format().maintain(&shared.sink, &table, &settled).await {
                tracing::warn!(table = %table, "keeping the table's metadata within its properties failed (the next poll tries again): {e}");
            }
        }
    }

    pub(crate) async fn compact_finished(&mut self, end: bool) -> Result<(), RunError> {
        let shared = self.shared.clone();
        if !shared.spec.output.compact || self.opts.shard.is_some() {
            return Ok(());
        }
        if !end && self.last_compact.is_some_and(|t| t.elapsed() < FOLLOW_COMPACT_EVERY) {
            return Ok(());
        }
        self.last_compact = Some(Instant::now());
        let now = self.opts.as_of.unwrap_or_else(|| chrono::Utc::now().timestamp());
        let c = Compactor::new(&shared.spec, &shared.state, &shared.sink, now);
        let done = c.run(&|| shared.stopping()).await?;
        if done.partitions > 0 {
            tracing::info!(
                partitions = done.partitions,
                files_in = done.files_in,
                files_out = done.files_out,
                rows = done.rows,
                "compacted {} partition{}: {} files into {}",
                done.partitions,
                if done.partitions == 1 { "" } else { "s" },
                done.files_in,
                done.files_out
            );
        }
        let total = self.out.compaction.get_or_insert_with(CompactSummary::default);
        total.partitions += done.partitions;
        total.files_in += done.files_in;
        total.files_out += done.files_out;
        total.rows += done.rows;
        total.bytes_in += done.bytes_in;
        total.bytes_out += done.bytes_out;
        total.secs += done.secs;
        total.skipped.extend(done.skipped);
        Ok(())
    }

    /// Follow mode: waits for the next poll. False when a signal came.
    pub(super) async fn wait_for_poll(&self) -> bool {
        let spec = &self.shared.spec;
        let poll = spec
            .exports
            .iter()
            .filter(|e| e.incremental.is_some())
            .map(|e| e.poll_interval)
            .min()
            .unwrap_or(DEFAULT_POLL);
        let mut cancel = self.shared.cancel.clone();
        tokio::select! {
            _ = tokio::time::sleep(poll) => {}
            _ = cancel.changed() => {}
        }
        !*self.shared.cancel.borrow()
    }

    /// Folds the checkpoints of the units this run finished into a
    /// manifest, and (holding the whole job) merges the manifests once
    /// there are many, so the next run, `status` and `plan` read the state
    /// in a few requests. The state is correct unfolded, so a failure here
    /// is logged, not the run's.
    async fn fold_state(&self) {
        let state = &self.shared.state;
        if self.ran_units {
            match state.fold_units(|id| self.seen.contains(id)).await {
                Ok(n) if n > 0 => tracing::debug!(units = n, "folded finished units' checkpoints into a manifest"),
                Ok(_) => {}
                Err(e) => tracing::warn!("could not fold finished units' checkpoints (the next run does): {e}"),
            }
        }
        if self.opts.shard.is_none()
            && let Err(e) = state.merge_manifests(crate::state::MERGE_AT).await
        {
            tracing::warn!("could not merge the job's manifests (the next run does): {e}");
        }
    }

    /// The client counting into the tallies of `export` on `chain`.
    fn client_for(&self, key: ExportKey) -> Client {
        self.shared.client_for(key)
    }
}
