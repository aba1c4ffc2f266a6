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
use crate::spec::{JobIdentity, LayoutChange, OutputFormat};
use serde::{Deserialize, Serialize};

/// A migration in progress (`migration.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Migration {
    /// Format version.
    pub version: u32,
    /// The output format the job's files were in.
    pub from: OutputFormat,
    /// The output format they are being put in.
    pub to: OutputFormat,
    /// The job's identity once it is done (the spec that asked for it).
    pub identity: JobIdentity,
    /// How far it got ([`Phase`]; not written while [`Phase::Begun`]).
    #[serde(default, skip_serializing_if = "Phase::is_begun")]
    pub phase: Phase,
    /// A rewrite into another layout (format unchanged): the changed
    /// layout keys, one line a key.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "crate::spec::changes::lines")]
    pub layout: Vec<LayoutChange>,
    /// A rewrite: the version its commits record in each Delta table's
    /// log under `chainetl-<job>-relayout`, so a commit made again after
    /// a crash is found there and not made twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite_version: Option<i64>,
    /// When it began (RFC 3339).
    pub started_at: String,
}

/// How far a migration got (`phase`), for the steps that cannot be redone
/// from scratch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Recorded, nothing past that (`phase` absent, or empty).
    #[default]
    #[serde(rename = "")]
    Begun,
    /// Converting to parquet: only the tables' Delta logs are left to delete.
    Logs,
    /// A rewrite: its outputs being written, nothing a reader sees changed.
    Rewrite,
    /// A rewrite: every output written and recorded; swapping them in.
    Swap,
    /// A rewrite: swapped in; the units' checkpoints and the job's
    /// document are left to set.
    Applied,
}

impl Phase {
    fn is_begun(&self) -> bool {
        *self == Phase::Begun
    }
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
    pub fn new(from: OutputFormat, to: OutputFormat, identity: JobIdentity) -> Migration {
        Migration {
            version: STATE_VERSION,
            from,
            to,
            identity,
            phase: Phase::Begun,
            layout: Vec::new(),
            rewrite_version: None,
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

    /// Deletes the record of a migration undone before it changed anything
    /// a reader sees.
    pub async fn delete_migration(&self) -> Result<(), StateError> {
        Ok(self.sink.delete(&self.migration_path()).await?)
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

/// One group of files a rewrite into another layout wrote again
/// (`rewrite/<key>.json`): a unit's files, or a compaction record's. Saved
/// once its outputs are durable (still hidden), so a run killed later
/// writes only the groups without one; deleted when the rewrite ends.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Rewrite {
    /// Format version.
    pub version: u32,
    /// The unit whose files these are; None for a compaction record's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The compaction record's partition (its files are these).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The files rewritten, paths relative to the output root.
    pub inputs: Vec<String>,
    /// `delta` format: the inputs are in their table's current version
    /// (else they wait for their segment, and so do the outputs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live: bool,
    /// The files written, under their final names.
    pub outputs: Vec<super::CommittedFile>,
    /// A unit's: the sequence after its last output.
    #[serde(default)]
    pub next_seq: u64,
    /// A compaction record's: the unit files it replaced, carried to the
    /// records of the partitions its rows go to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<String>,
    /// A compaction record's: the generation its outputs are named by.
    #[serde(default)]
    pub generation: u64,
}

impl Versioned for Rewrite {
    fn version(&self) -> u32 {
        self.version
    }
    const FIX: &'static str = "run the spec that changed the layout again, which finishes the rewrite (with no request \
         to the service), or re-run with --fresh to start the job over (this deletes its output)";
}

impl Rewrite {
    /// The document's name under `rewrite/`: the unit's id, or the
    /// record's partition with `/` as `__`.
    fn key(&self) -> String {
        match (&self.unit, &self.partition) {
            (Some(u), _) => format!("unit__{u}"),
            (None, Some(p)) => format!("compacted__{}", p.replace('/', "__")),
            (None, None) => "none".into(),
        }
    }
}

impl StateStore {
    /// Records a group a rewrite wrote again (its outputs durable).
    pub async fn save_rewrite(&self, r: &Rewrite) -> Result<(), StateError> {
        self.write_doc(&format!("{}/rewrite/{}.json", self.dir, r.key()), r).await
    }

    /// Every group a rewrite in progress wrote again.
    pub async fn load_rewrites(&self) -> Result<Vec<Rewrite>, StateError> {
        Ok(self.load_dir_listed("rewrite").await?.into_iter().map(|(_, r)| r).collect())
    }

    /// Deletes the rewrite's documents (its end).
    pub async fn delete_rewrites(&self) -> Result<(), StateError> {
        for rel in self.json_paths("rewrite").await? {
            self.sink.delete(&rel).await?;
        }
        Ok(())
    }

    /// Every file of the job under `tables` not yet published
    /// (`_<job>-….parquet.pending`: a compaction's or a rewrite's outputs),
    /// whatever it is.
    pub async fn list_hidden(&self, tables: &std::collections::BTreeSet<String>) -> Result<Vec<String>, StateError> {
        let mut out = Vec::new();
        for t in tables {
            for m in self.list(t).await? {
                // Strictly this job's names (job `daily` is not `daily-x`).
                let ours = m
                    .location
                    .filename()
                    .and_then(|n| n.strip_prefix('_')?.strip_suffix(".pending"))
                    .is_some_and(|n| self.classify(n).is_some());
                if ours {
                    out.push(self.storage().rel_of(&m.location));
                }
            }
        }
        Ok(out)
    }
}

impl StateStore {
    /// Sets the checkpoints of the units `docs` rewrote: their new files
    /// counted in place of the old (`committed`, `files`, `bytes`), and
    /// `next_seq` past them; rows and pages as they were. Idempotent. Only
    /// with the whole job's lease. Returns how many it changed.
    pub async fn apply_rewrites(&self, docs: &[Rewrite]) -> Result<usize, StateError> {
        let stored = self.load_stored().await?;
        let folded = stored.folded();
        let mut entries = Vec::new();
        let mut changed = 0;
        for d in docs {
            let Some(unit) = &d.unit else {
                continue;
            };
            let (st, own_file) = match (stored.files.get(unit), folded.get(unit)) {
                (Some(s), _) => (s, true),
                (None, Some(s)) => (s, false),
                (None, None) => continue,
            };
            let inputs: std::collections::HashSet<&str> = d.inputs.iter().map(String::as_str).collect();
            let mut new = st.clone();
            // A checkpoint from before files were listed counts every
            // sequence below `next_seq`: outputs added beside files that
            // stay (a derived table) are counted that way too, or listing
            // them would leave the files it counted unlisted.
            if st.committed.is_empty() && st.files > 0 && d.inputs.is_empty() {
                // Applied already: its outputs are below the sequence.
                if st.next_seq >= d.next_seq {
                    continue;
                }
                new.next_seq = d.next_seq;
                new.files += d.outputs.len() as u64;
                new.bytes += d.outputs.iter().map(|f| f.bytes).sum::<u64>();
                changed += 1;
                if own_file {
                    self.save_unit(&new).await?;
                } else {
                    entries.push(new);
                }
                continue;
            }
            let gone: Vec<super::CommittedFile> = new.committed.iter().filter(|c| inputs.contains(c.path.as_str())).cloned().collect();
            new.committed.retain(|c| !inputs.contains(c.path.as_str()));
            let mut added = Vec::new();
            for f in &d.outputs {
                if !new.committed.iter().any(|c| c.path == f.path) {
                    new.committed.push(f.clone());
                    added.push(f);
                }
            }
            new.next_seq = new.next_seq.max(d.next_seq);
            if new == *st {
                continue;
            }
            // A checkpoint from before files were listed counted them only.
            let gone_files = if st.committed.is_empty() { d.inputs.len() } else { gone.len() };
            new.files = (new.files + added.len() as u64).saturating_sub(gone_files as u64);
            new.bytes = (new.bytes + added.iter().map(|f| f.bytes).sum::<u64>()).saturating_sub(gone.iter().map(|f| f.bytes).sum());
            changed += 1;
            if own_file {
                self.save_unit(&new).await?;
            } else {
                entries.push(new);
            }
        }
        if !entries.is_empty() {
            let seq = super::units::next_seq(&stored.manifests);
            self.create_manifest(&super::Manifest::new(seq, entries, Vec::new())).await?;
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `migration.json` as a 0.2.0 build wrote it (pretty JSON, fields in
    /// this order), for each kind of change and phase.
    fn documents() -> Vec<String> {
        let spec = crate::spec::Spec::parse(
            "t.toml",
            "name = \"t\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"out\"\n\
             [[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"1d\"\n",
        )
        .expect("a valid spec");
        let identity = serde_json::to_string_pretty(&JobIdentity::of(&spec)).expect("an identity");
        let identity = identity.replace('\n', "\n  ");
        let doc = |rest: &str| format!("{{\n  \"version\": 3,\n{rest}  \"started_at\": \"2026-11-20T10:00:00.123456+00:00\"\n}}");
        vec![
            doc(&format!(
                "  \"from\": \"parquet\",\n  \"to\": \"delta\",\n  \"identity\": {identity},\n"
            )),
            doc(&format!(
                "  \"from\": \"delta\",\n  \"to\": \"parquet\",\n  \"identity\": {identity},\n  \"phase\": \"logs\",\n"
            )),
            doc(&format!(
                "  \"from\": \"delta\",\n  \"to\": \"delta\",\n  \"identity\": {identity},\n  \"phase\": \"rewrite\",\n  \
                 \"layout\": [\n    \"output.partition_by: was [\\\"chain\\\",\\\"date\\\"], now [\\\"chain\\\"]\",\n    \
                 \"output.hash_encoding: was \\\"hex\\\", now \\\"binary\\\"\"\n  ],\n  \"rewrite_version\": 4,\n"
            )),
            doc(&format!(
                "  \"from\": \"parquet\",\n  \"to\": \"parquet\",\n  \"identity\": {identity},\n  \"phase\": \"swap\",\n  \
                 \"layout\": [\n    \"export[0].u256: was \\\"decimal\\\", now \\\"text\\\"\"\n  ],\n"
            )),
            doc(&format!(
                "  \"from\": \"parquet\",\n  \"to\": \"parquet\",\n  \"identity\": {identity},\n  \"phase\": \"applied\",\n  \"layout\": [\n    \"output.compression: was \\\"zstd(3)\\\", now \\\"snappy\\\"\"\n  ],\n"
            )),
        ]
    }

    /// An interrupted change tells what its own output's readers see: an
    /// Iceberg or Delta rewrite never speaks of parquet's readers, nor a
    /// parquet one of a table's commit.
    #[test]
    fn an_interrupted_change_tells_its_own_formats_readers() {
        for doc in documents() {
            let mut m: Migration = serde_json::from_str(&doc).expect("reads");
            for f in OutputFormat::ALL {
                if m.from == m.to {
                    (m.from, m.to) = (f, f);
                } else if m.to == OutputFormat::Parquet {
                    m.from = if f == OutputFormat::Parquet { OutputFormat::Iceberg } else { f };
                }
                let readers = crate::state::Interrupted::conversion(&m).readers;
                let rewrite = m.from == m.to;
                if rewrite && f == OutputFormat::Parquet {
                    assert!(
                        readers.contains("files can be seen twice") && !readers.contains("commit"),
                        "{readers}"
                    );
                } else if rewrite {
                    assert!(readers.contains("one commit") && !readers.contains("parquet"), "{f}: {readers}");
                }
                assert!(!readers.contains("delta and iceberg"), "{readers}");
            }
        }
    }

    #[test]
    fn a_record_reads_typed_and_writes_back_byte_for_byte() {
        for doc in documents() {
            let m: Migration = serde_json::from_str(&doc).unwrap_or_else(|e| panic!("{e}: {doc}"));
            assert_eq!(serde_json::to_string_pretty(&m).expect("encodes"), doc);
        }
        let typed: Vec<(OutputFormat, OutputFormat, Phase, usize)> = documents()
            .iter()
            .map(|d| serde_json::from_str::<Migration>(d).expect("reads"))
            .map(|m| (m.from, m.to, m.phase, m.layout.len()))
            .collect();
        assert_eq!(
            typed,
            [
                (OutputFormat::Parquet, OutputFormat::Delta, Phase::Begun, 0),
                (OutputFormat::Delta, OutputFormat::Parquet, Phase::Logs, 0),
                (OutputFormat::Delta, OutputFormat::Delta, Phase::Rewrite, 2),
                (OutputFormat::Parquet, OutputFormat::Parquet, Phase::Swap, 1),
                (OutputFormat::Parquet, OutputFormat::Parquet, Phase::Applied, 1),
            ]
        );
        let m: Migration = serde_json::from_str(&documents()[2]).expect("reads");
        assert!(m.layout.iter().all(LayoutChange::changes_columns));
        let m: Migration = serde_json::from_str(&documents()[3]).expect("reads");
        assert!(m.layout.iter().all(LayoutChange::is_derived));
    }

    #[test]
    fn an_empty_phase_reads_as_begun_and_an_unknown_one_is_refused() {
        let doc = documents()[0].replace("\"identity\"", "\"phase\": \"\",\n  \"identity\"");
        let m: Migration = serde_json::from_str(&doc).expect("reads");
        assert_eq!(m.phase, Phase::Begun);
        let doc = documents()[1].replace("\"logs\"", "\"halfway\"");
        assert!(serde_json::from_str::<Migration>(&doc).is_err());
        let doc = documents()[0].replace("\"to\": \"delta\"", "\"to\": \"orc\"");
        assert!(serde_json::from_str::<Migration>(&doc).is_err());
    }
}
