//! Finishing what a dead run left of a compaction (a swap rolled back or
//! forward), and `verify --repair` of compacted partitions (see
//! [`super`]).

use super::Compactor;
use crate::job::error::RunError;
use crate::state::{Compaction, JobFile};
use std::collections::HashMap;

impl Compactor<'_> {
    /// What a run holding the whole job does first (so readers see no
    /// swap half done for longer than it takes): finishes every swap and
    /// repair a dead run left, then dissolves the compacted partitions
    /// holding rows of `repair` or of units whose checkpoint is gone.
    /// Returns the units to export again.
    pub async fn start(&self, repair: &[String]) -> Result<Vec<String>, RunError> {
        let mut records = Vec::new();
        for mut c in self.state.load_compactions().await? {
            if self.recover(&mut c).await? {
                records.push(c);
            }
        }
        let mut units = repair.to_vec();
        units.extend(self.uncheckpointed(&records).await?);
        if units.is_empty() {
            return Ok(units);
        }
        self.dissolve_for(&units).await
    }

    /// Finishes every swap and repair a dead run left.
    pub(crate) async fn recover_all(&self) -> Result<(), RunError> {
        for mut c in self.state.load_compactions().await? {
            self.recover(&mut c).await?;
        }
        Ok(())
    }

    /// Units of fixed windows whose rows one of `records` holds but whose
    /// checkpoint is gone (deleted by hand, as a damaged checkpoint's fix
    /// says): they will be exported again, so their compacted rows must go
    /// first ([`Compactor::dissolve_for`]).
    pub async fn uncheckpointed(&self, records: &[Compaction]) -> Result<Vec<String>, RunError> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let states = self.state.load_units().await?;
        let mut out: Vec<String> = Vec::new();
        for c in records {
            for u in self.units_of(c) {
                if self.fixed_window(&u) && !states.contains_key(&u) && !out.contains(&u) {
                    out.push(u);
                }
            }
        }
        Ok(out)
    }

    /// Whether `unit` is of an export of a fixed window (planned again
    /// whenever it has no checkpoint; not a period's or segment's).
    pub(super) fn fixed_window(&self, unit: &str) -> bool {
        super::unit_export(unit)
            .and_then(|(e, _)| self.spec.exports.get(e))
            .is_some_and(|e| !e.per_run())
    }

    /// The units whose files a compaction replaced.
    pub(super) fn units_of(&self, c: &Compaction) -> Vec<String> {
        self.replaced_files(c).into_iter().map(|(u, _)| u).collect()
    }

    /// The unit and sequence of each file a compaction replaced.
    fn replaced_files(&self, c: &Compaction) -> Vec<(String, u64)> {
        let prefix = format!("{}-", self.spec.name);
        c.replaced
            .iter()
            .filter_map(|r| r.rsplit('/').next())
            .filter_map(|n| n.strip_prefix(&prefix).and_then(crate::sink::parse_file_name))
            .map(|(u, seq)| (u.to_string(), seq))
            .collect()
    }

    /// `verify --repair` of `units`: every compacted partition holding rows
    /// of one of them is dissolved, and with it every unit whose rows it
    /// holds, and so on (a unit's rows may span partitions). Returns the
    /// units to export again, `units` included. Refused when one of them
    /// has no checkpoint to delete (a closed period's or segment's unit),
    /// since nothing would export it again.
    pub async fn dissolve_for(&self, units: &[String]) -> Result<Vec<String>, RunError> {
        self.recover_all().await?;
        let records = self.state.load_compactions().await?;
        let units_of: Vec<Vec<String>> = records.iter().map(|c| self.units_of(c)).collect();
        let (all, hit) = crate::state::repair_closure(&units_of, units);
        let states = self.state.load_units().await?;
        // A unit of a fixed window without a checkpoint is planned again
        // anyway; one of a closed period or segment would never be.
        if let Some(u) = all.iter().find(|u| !states.contains_key(*u) && !self.fixed_window(u)) {
            return Err(RunError::Repair(format!(
                "unit {u} shares compacted files with the units to repair but has no checkpoint to export it again from; \
                 re-run with --fresh to export the job again"
            )));
        }
        // Recorded before any of their rows leaves, until all are exported
        // again (the dissolving records go before that).
        self.state.begin_repair(&all).await?;
        for c in records.iter().enumerate().filter(|(i, _)| hit[*i]).map(|(_, c)| c) {
            let mut c = c.clone();
            c.dissolving = all.clone();
            c.updated_at = chrono::Utc::now().to_rfc3339();
            self.state.save_compaction(&c).await?;
        }
        for c in records.iter().enumerate().filter(|(i, _)| hit[*i]).map(|(_, c)| c) {
            let mut c = c.clone();
            c.dissolving = all.clone();
            self.dissolve(&c).await?;
        }
        Ok(all)
    }

    /// Finishes what a dead run left of a record: a repair's dissolving,
    /// or a swap (rolled back before `swapping`, forward after). Returns
    /// whether the record still stands.
    pub(super) async fn recover(&self, c: &mut Compaction) -> Result<bool, RunError> {
        if !c.dissolving.is_empty() {
            self.dissolve(c).await?;
            return Ok(false);
        }
        match c.pending.clone() {
            Some(p) if p.swapping => self.finish_swap(c, true).await?,
            Some(p) => {
                self.delete_hidden(&c.partition, Some(p.generation)).await?;
                c.pending = None;
                c.rolled_back = c.rolled_back.max(p.generation);
                c.updated_at = chrono::Utc::now().to_rfc3339();
                self.state.save_compaction(c).await?;
            }
            None => {}
        }
        Ok(true)
    }

    /// Deletes the job's outputs not yet revealed in a partition (of one
    /// generation, or all).
    pub(super) async fn delete_hidden(&self, partition: &str, generation: Option<u64>) -> Result<(), RunError> {
        let table = partition.split('/').next().unwrap_or_default().to_string();
        for f in self.state.list_files(&[table].into()).await? {
            let here = f.rel.rsplit_once('/').is_some_and(|(d, _)| d == partition);
            if here && matches!(f.kind, JobFile::Hidden(g) if generation.is_none_or(|x| x == g)) {
                self.state.delete_data(&f.rel).await?;
            }
        }
        Ok(())
    }

    /// `verify --repair` of a compacted partition, finished: the units to
    /// export again lose their checkpoints, then the compacted files go and
    /// the record becomes one of nothing compacted that keeps its
    /// generations taken (`rolled_back`). Their unit files are gone
    /// already, so nothing of theirs is left twice; until the units run,
    /// their rows are missing.
    ///
    /// Where the format publishes, nothing leaves the table here: the units
    /// restart as one group (above the sequences of the files the record
    /// replaced) whose new files replace the compacted ones in one commit
    /// a table once all are done (`job::publish`); storage keeps the
    /// compacted files for the table's earlier versions.
    pub async fn dissolve(&self, c: &Compaction) -> Result<(), RunError> {
        let mut above: HashMap<String, u64> = HashMap::new();
        for (unit, seq) in self.replaced_files(c) {
            let next = above.entry(unit).or_default();
            *next = (*next).max(seq + 1);
        }
        let outputs = c.pending.iter().flat_map(|p| p.outputs.iter());
        let compacted: Vec<String> = c.files.iter().chain(outputs).map(|f| f.path.clone()).collect();
        // Where the format publishes, the compacted files leave the
        // tables with the units' new files, in one commit a table once all
        // of them are done; where readers list the folder, they go now.
        let table = super::table_of(&c.partition).to_string();
        let live = self.state.list_live_files(&[table].into()).await?;
        let shared: Vec<String> = live
            .iter()
            .flatten()
            .map(|f| f.rel.clone())
            .filter(|r| compacted.contains(r))
            .collect();
        self.state
            .restart_units(&c.dissolving, &above, &self.spec.tables(), &shared)
            .await?;
        self.delete_hidden(&c.partition, None).await?;
        if live.is_none() {
            for rel in &compacted {
                self.state.delete_data(rel).await?;
            }
        }
        // The record's names stay taken (`rolled_back`): an upload of a
        // swap rolled back may still land, and in the delta format its
        // compacted files stay on storage for earlier versions. A record of
        // nothing compacted yet keeps them, as a merge rolled back does.
        let kept = Compaction {
            generation: 0,
            files: Vec::new(),
            replaced: Vec::new(),
            replaced_rows: Default::default(),
            pending: None,
            rolled_back: c.generation.max(c.rolled_back).max(c.pending.as_ref().map_or(0, |p| p.generation)),
            dissolving: Vec::new(),
            updated_at: chrono::Utc::now().to_rfc3339(),
            ..c.clone()
        };
        self.state.save_compaction(&kept).await?;
        Ok(())
    }
}
