//! Job-level documents: `job.json` (the frozen windows and identity),
//! `exports/e<i>.json` (exports appended later) and `runs/<run-id>.json`
//! (run reports).

use super::{AddedExport, JobState, STATE_VERSION, StateError, StateStore};

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
            Some(j) if crate::plan::CutRule::of_version(j.cut_rule).is_none() => Err(StateError::Corrupt {
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
}
