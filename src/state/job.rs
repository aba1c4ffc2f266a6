//! Job-level documents: `job.json` (the frozen windows and identity),
//! `exports/e<i>.json` (exports appended later) and `runs/<run-id>.json`
//! (run reports).
//!
//! # Segments and periods
//!
//! Segments and periods of aligned and incremental exports:
//! `segments/…json` (a slice fixed by a run before its units start,
//! create-if-absent so concurrent shards cut the same one) and
//! `periods/<segment-id>.json` (an aligned period exported completely).
//!
//! # Marks
//!
//! High-water marks of incremental exports: `marks/e<i>-<chain>.json`.

use super::{AddedExport, JobState, Mark, STATE_VERSION, SegmentDoc, StateError, StateStore};
use crate::plan::Segment;
use crate::vocab::chain::Chain;

impl StateStore {
    /// The job state, if the job ran before.
    pub async fn load_job(&self) -> Result<Option<JobState>, StateError> {
        let rel = format!("{}/job.json", self.dir);
        let job: Option<JobState> = self.read_doc(&rel).await?;
        self.known_cut_rule(&rel, job)
    }

    /// `job`, unless it was cut by a rule this build does not know (a newer
    /// build started it): planning it by another rule would name other units.
    fn known_cut_rule(&self, rel: &str, job: Option<JobState>) -> Result<Option<JobState>, StateError> {
        match &job {
            Some(j) if crate::vocab::cuts::CutRule::of_version(j.cut_rule).is_none() => Err(StateError::Corrupt {
                path: self.location(rel),
                message: format!(
                    "cut rule {} is not known to this build: run the chainetl version that started the job ({})",
                    j.cut_rule.unwrap_or_default(),
                    j.chainetl_version
                ),
                source: None,
            }),
            _ => Ok(job),
        }
    }

    /// Writes the job state unless another process (a shard) did first, and
    /// returns whichever state won, so every shard freezes the same windows.
    pub async fn create_job(&self, job: &JobState) -> Result<JobState, StateError> {
        let rel = format!("{}/job.json", self.dir);
        let won = self.create_doc(&rel, job).await?;
        Ok(self.known_cut_rule(&rel, Some(won))?.unwrap_or_else(|| job.clone()))
    }

    /// `job` as this build's format: a job an older build started says
    /// [`STATE_VERSION`] from now on, before this build writes anything an
    /// older one would not read (manifests, `compactions.json`), so that
    /// such a build refuses the job rather than take its finished units
    /// for not started. The content is unchanged, so shards doing this at
    /// once write the same document.
    pub async fn upgrade_job(&self, mut job: JobState) -> Result<JobState, StateError> {
        if job.version < STATE_VERSION {
            job.version = STATE_VERSION;
            self.write_doc(&format!("{}/job.json", self.dir), &job).await?;
        }
        Ok(job)
    }

    /// Records an export appended to the job unless a run (another shard)
    /// did first; returns whichever record won, so every shard freezes the
    /// same window for it.
    pub async fn create_added_export(&self, doc: &AddedExport) -> Result<AddedExport, StateError> {
        self.create_doc(&format!("{}/exports/e{}.json", self.dir, doc.export), doc).await
    }

    /// The record of export `export` appended to the job, if a run made one.
    pub async fn load_added_export(&self, export: usize) -> Result<Option<AddedExport>, StateError> {
        self.read_doc(&format!("{}/exports/e{export}.json", self.dir)).await
    }

    /// Writes an arbitrary JSON document under the job's state directory (run reports).
    pub async fn save_doc(&self, name: &str, doc: &serde_json::Value) -> Result<String, StateError> {
        let rel = format!("{}/{name}", self.dir);
        self.write_doc(&rel, doc).await?;
        Ok(rel)
    }

    /// The report of the run that ended last (`runs/latest.json`), as
    /// JSON; None before a run ended, or when it does not read as JSON.
    pub async fn load_latest_report(&self) -> Result<Option<serde_json::Value>, StateError> {
        let rel = format!("{}/runs/latest.json", self.dir);
        let Some(bytes) = self.read(&rel).await? else {
            return Ok(None);
        };
        Ok(serde_json::from_slice::<serde_json::Value>(&bytes).ok().filter(|v| v.is_object()))
    }

    /// The newest `newest` run reports (`runs/<run-id>.json`, oldest
    /// first), as JSON; `latest.json` and a report that does not read as
    /// JSON (a hand-edited one) are left out. For `chainetl report`.
    pub async fn load_run_reports(&self, newest: usize) -> Result<Vec<serde_json::Value>, StateError> {
        let mut rels: Vec<String> = self
            .json_paths("runs")
            .await?
            .into_iter()
            .filter(|r| !r.ends_with("/latest.json"))
            .collect();
        // Run ids start with their UTC start time: names sort by it.
        rels.sort();
        let skip = rels.len().saturating_sub(newest);
        let mut out = Vec::new();
        for rel in rels.into_iter().skip(skip) {
            let Some(bytes) = self.read(&rel).await? else {
                continue;
            };
            match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(v) if v.is_object() => out.push(v),
                _ => tracing::warn!("{rel} is not a run report; left out"),
            }
        }
        Ok(out)
    }
}

impl StateStore {
    /// Where a pending segment is stored: one per export and chain for
    /// incremental exports (so that concurrent shards cut the same one),
    /// one per period for aligned exports.
    fn segment_path(&self, seg: &Segment) -> String {
        match seg.chain {
            Some(c) => format!("{}/segments/e{}-{c}.json", self.dir, seg.export),
            None => format!("{}/segments/{}.json", self.dir, seg.id()),
        }
    }

    /// Pending segments, oldest first.
    pub async fn load_segments(&self) -> Result<Vec<Segment>, StateError> {
        let mut out: Vec<SegmentDoc> = self.load_dir("segments").await?;
        out.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.segment.id().cmp(&b.segment.id())));
        Ok(out.into_iter().map(|d| d.segment).collect())
    }

    /// Records a pending segment unless one is already pending in its place;
    /// returns the one that is.
    pub async fn create_segment(&self, seg: &Segment) -> Result<Segment, StateError> {
        let doc = SegmentDoc {
            version: STATE_VERSION,
            segment: seg.clone(),
            created_at: chrono::Utc::now().to_rfc3339(),
        };
        Ok(self.create_doc(&self.segment_path(seg), &doc).await?.segment)
    }

    /// Forgets a pending segment (complete, or replaced by a reorg repair).
    pub async fn remove_segment(&self, seg: &Segment) -> Result<(), StateError> {
        self.sink.delete(&self.segment_path(seg)).await?;
        Ok(())
    }

    fn period_path(&self, seg: &Segment) -> String {
        format!("{}/periods/{}.json", self.dir, seg.id())
    }

    /// Whether an aligned period was exported completely.
    pub async fn period_done(&self, seg: &Segment) -> Result<bool, StateError> {
        Ok(self.read(&self.period_path(seg)).await?.is_some())
    }

    /// The aligned periods exported completely, oldest first.
    pub async fn load_periods(&self) -> Result<Vec<Segment>, StateError> {
        let mut out: Vec<Segment> = self
            .load_dir::<SegmentDoc>("periods")
            .await?
            .into_iter()
            .map(|d| d.segment)
            .collect();
        out.sort_by_key(|s| (s.export, s.id()));
        Ok(out)
    }

    /// Records an aligned period as complete.
    pub async fn save_period_done(&self, seg: &Segment) -> Result<(), StateError> {
        let doc = SegmentDoc {
            version: STATE_VERSION,
            segment: seg.clone(),
            created_at: chrono::Utc::now().to_rfc3339(),
        };
        self.write_doc(&self.period_path(seg), &doc).await
    }
}

impl StateStore {
    fn mark_path(&self, export: usize, chain: Chain) -> String {
        format!("{}/marks/e{export}-{chain}.json", self.dir)
    }

    /// The high-water mark of an incremental export on a chain.
    pub async fn load_mark(&self, export: usize, chain: Chain) -> Result<Option<Mark>, StateError> {
        self.read_doc(&self.mark_path(export, chain)).await
    }

    /// Every high-water mark of the job.
    pub async fn load_marks(&self) -> Result<Vec<Mark>, StateError> {
        self.load_dir("marks").await
    }

    /// Writes a high-water mark atomically.
    pub async fn save_mark(&self, mark: &Mark) -> Result<(), StateError> {
        self.write_doc(&self.mark_path(mark.export, mark.chain), mark).await
    }
}
