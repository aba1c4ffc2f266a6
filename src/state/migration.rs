//! A change of how a job's rows are stored, made from the rows its output
//! holds (`migration.json`), and the bookkeeping it needs of the units'
//! checkpoints.
//!
//! # The record
//!
//! `_chainetl/<job>/migration.json` ([`Migration`]) is written (atomic
//! replace) before a migration changes anything, and deleted last, after
//! `job.json` records the new identity. While it is there:
//!
//! - the job's output is part way between two layouts, and only a run of
//!   the spec that asked for the change (the record's `identity`) may go
//!   on — it finishes the migration first, with no request to the
//!   service; any other spec is refused (`--fresh` aside, which deletes
//!   the record with the rest of the state);
//! - `status` and `verify` name it as interrupted.
//!
//! A crash after `job.json` records the new identity and before the
//! record is deleted leaves a record naming the job's own identity: the
//! next run deletes it.
//!
//! `phase` says how far a step that cannot be redone from scratch got
//! (converting to `parquet` deletes each table's Delta log last, once
//! every file no current version reads is gone; a run that finds
//! `logs` set does only what is left of that).

use super::docs::Versioned;
use super::{JobState, STATE_VERSION, StateError, StateStore};
use crate::spec::JobIdentity;
use serde::{Deserialize, Serialize};

/// A migration in progress (`migration.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Migration {
    /// Format version.
    pub version: u32,
    /// The output format the job's files were in.
    pub from: String,
    /// The output format they are being put in.
    pub to: String,
    /// The job's identity once it is done (the spec that asked for it).
    pub identity: JobIdentity,
    /// How far it got: empty, or `logs` (converting to parquet: only
    /// the tables' Delta logs are left to delete).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// When it began (RFC 3339).
    pub started_at: String,
}

impl Versioned for Migration {
    fn version(&self) -> u32 {
        self.version
    }
    const FIX: &'static str = "run the spec that changed the output format again, which finishes the conversion \
         (with no request to the service), or re-run with --fresh to start the job over (this deletes its output)";
}

impl Migration {
    /// A migration of the output from format `from` to `to`, ending with
    /// `identity` recorded as the job's.
    pub fn new(from: &str, to: &str, identity: JobIdentity) -> Migration {
        Migration {
            version: STATE_VERSION,
            from: from.into(),
            to: to.into(),
            identity,
            phase: String::new(),
            started_at: chrono::Utc::now().to_rfc3339(),
        }
    }
}

impl StateStore {
    fn migration_path(&self) -> String {
        format!("{}/migration.json", self.dir)
    }

    /// The migration in progress, if any.
    pub async fn load_migration(&self) -> Result<Option<Migration>, StateError> {
        self.read_doc(&self.migration_path()).await
    }

    /// Records `m` (begun, or a phase reached) before what it says is done.
    pub async fn save_migration(&self, m: &Migration) -> Result<(), StateError> {
        self.write_doc(&self.migration_path(), m).await
    }

    /// Ends a migration: `job` (with the new identity) replaces the job's
    /// document, then the record goes.
    pub async fn end_migration(&self, job: &JobState) -> Result<(), StateError> {
        self.write_doc(&format!("{}/job.json", self.dir), job).await?;
        crate::util::failpoint::hit("migration-recorded");
        self.sink.delete(&self.migration_path()).await?;
        Ok(())
    }

    /// Marks every done unit `published` (its files are in its tables'
    /// logs: a conversion to `delta` added them) but those of `held` (an
    /// incremental segment's, published with it), in one manifest, after
    /// folding the per-unit checkpoints of done units. Only with the whole
    /// job's lease. Returns how many it marked.
    pub async fn mark_published(&self, held: &std::collections::HashSet<String>) -> Result<usize, StateError> {
        self.fold_units(|_| true).await?;
        let stored = self.load_stored().await?;
        let marked: Vec<super::UnitState> = stored
            .folded()
            .into_values()
            .filter(|s| s.done && !s.published && !stored.files.contains_key(&s.unit) && !held.contains(&s.unit))
            .map(|mut s| {
                s.published = true;
                s
            })
            .collect();
        if marked.is_empty() {
            return Ok(0);
        }
        let n = marked.len();
        let seq = super::units::next_seq(&stored.manifests);
        self.create_manifest(&super::Manifest::new(seq, marked, Vec::new())).await?;
        Ok(n)
    }
}
