//! The state documents: what each file under `_chainetl/<job>/` holds (see
//! the table in [`super`]), and what to do when one cannot be read.
//! Fields added after a format version was released are optional
//! (`#[serde(default)]`), so documents written by earlier builds of the same
//! [`STATE_VERSION`](super::STATE_VERSION) still load.

use crate::plan::Segment;
use crate::vocab::chain::Chain;
use crate::vocab::window::Resolved;
use serde::{Deserialize, Serialize};

/// A block as exported: its number and hash, to notice later that a
/// reorg replaced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TailBlock {
    /// Block number.
    pub number: u64,
    /// Its hash when it was exported.
    pub hash: String,
}

/// High-water mark of an incremental export on one chain
/// (`marks/e<idx>-<chain>.json`): everything below `next` is exported and
/// committed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mark {
    /// Format version.
    pub version: u32,
    /// Export index.
    pub export: usize,
    /// Chain.
    pub chain: Chain,
    /// First block (or, for portfolios, unix second of the first day) not exported yet.
    pub next: u64,
    /// Hashes of the last exported blocks, oldest first.
    #[serde(default)]
    pub tail: Vec<TailBlock>,
    /// A reorg repair in progress: files of blocks from here on are being replaced.
    #[serde(default)]
    pub repair_from: Option<u64>,
    /// Reorgs repaired so far.
    #[serde(default)]
    pub reorgs: u64,
    /// `delta` format: files (paths relative to the output root) of the
    /// blocks a reorg repair rewound, still in the tables: the next
    /// segment's files replace them in one commit a table, so no version
    /// holds blocks of both branches (`job::reorg`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replacing: Vec<String>,
    /// `delta` format: the lowest file sequence a unit of this export and
    /// chain starts at without a checkpoint — above every file of the
    /// units a repair rewound, which stay on storage for the tables'
    /// earlier versions, and above their transaction versions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq_floor: u64,
    /// Time of the last change (RFC 3339).
    pub updated_at: String,
}

/// A pending segment as stored (`segments/<key>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SegmentDoc {
    /// Format version.
    pub version: u32,
    /// The segment.
    #[serde(flatten)]
    pub segment: Segment,
    /// When a run fixed it (RFC 3339).
    pub created_at: String,
}

/// Job-level state, written once when the job starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobState {
    /// Format version.
    pub version: u32,
    /// Job name.
    pub name: String,
    /// Spec content hash.
    pub spec_hash: String,
    /// Frozen windows, one per export.
    pub windows: Vec<Option<Resolved>>,
    /// The page size the windows were cut into units for (frozen with them;
    /// absent in jobs started before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u32>,
    /// The rule its windows were cut into units by ([`crate::vocab::cuts::CutRule`],
    /// frozen with them; absent in jobs started before it was recorded,
    /// which keep the hourly rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_rule: Option<u32>,
    /// When the job was first started (RFC 3339).
    pub created_at: String,
    /// chainetl version that started it.
    pub chainetl_version: String,
    /// What the job exports and how its files are laid out (absent in jobs
    /// started before it was recorded: those compare `spec_hash`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<crate::spec::JobIdentity>,
    /// The sequence a unit without a checkpoint starts its files at: above
    /// every file an earlier `--fresh` of the job removed, so no name a
    /// Delta table's earlier versions read is written again (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq_floor: u64,
    /// The generation compactions start above: after a `--fresh`, every
    /// generation the job had taken (its compacted files, published or
    /// hidden, and its records' generations, rolled back ones included),
    /// so no name a killed run's late upload may still land under is
    /// written again (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub generation_floor: u64,
}

/// An export appended to a job after it started (`exports/e<idx>.json`):
/// its identity and its window, frozen when it was added.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AddedExport {
    /// Format version.
    pub version: u32,
    /// Export index.
    pub export: usize,
    /// What it exports.
    pub identity: crate::spec::ExportIdentity,
    /// Its frozen window.
    pub window: Option<Resolved>,
    /// When it was added (RFC 3339).
    pub created_at: String,
}

impl Versioned for AddedExport {
    fn version(&self) -> u32 {
        self.version
    }
}

/// One unit's checkpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UnitState {
    /// Format version.
    pub version: u32,
    /// Unit id.
    pub unit: String,
    /// Cursor of the next page to fetch (None: from the start, or done).
    pub cursor: Option<String>,
    /// Sequence number of the next file.
    pub next_seq: u64,
    /// Rows committed.
    pub rows: u64,
    /// Files committed.
    pub files: u64,
    /// Bytes committed.
    pub bytes: u64,
    /// Pages committed.
    pub pages: u64,
    /// Whether the unit is complete.
    pub done: bool,
    /// Time of the last commit (RFC 3339).
    pub updated_at: String,
    /// Blocks units: parent hash of the first block exported, for continuity checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_parent_hash: Option<String>,
    /// Blocks units: number and hash of the last block exported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_block: Option<TailBlock>,
    /// Every file committed, for `verify` (absent in checkpoints written
    /// before it was recorded: those are checked by sequence number only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub committed: Vec<CommittedFile>,
    /// `delta` format: every file of the (done) unit is in its tables'
    /// logs, so no later run need ask them (`job::publish`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub published: bool,
    /// `delta` format: files (paths relative to the output root) of an
    /// earlier export of this unit still in its tables, which the unit's
    /// files replace in one commit a table once it is done — so readers
    /// see the old rows or the new, never neither (`verify --repair`; see
    /// `StateStore::restart_units`). Until then its files are not
    /// published.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    /// `delta` format: the units exported again together with this one
    /// (itself included) because their rows share compacted files; they
    /// publish as one, in one commit a table, once every one is done.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub together: Vec<String>,
}

/// A committed data file, as its checkpoint records it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CommittedFile {
    /// Path relative to the output root.
    pub path: String,
    /// Rows in it.
    pub rows: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// The checksum of its content as written (`xxh64:<hex>`, see
    /// [`crate::storage::checksum`]); absent for files committed by builds
    /// before checksums were recorded, which `verify` checks by size and
    /// row count only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
}

impl From<&crate::sink::WrittenFile> for CommittedFile {
    fn from(w: &crate::sink::WrittenFile) -> CommittedFile {
        CommittedFile {
            path: w.rel.clone(),
            rows: w.rows,
            bytes: w.bytes,
            checksum: Some(w.checksum.clone()),
        }
    }
}

/// A partition's compaction by this job (an entry of `compactions.json`,
/// or `compacted/<partition key>.json` while a swap or repair changes it):
/// which compacted files hold which unit files' rows, and the swap in
/// progress, if any (see *Compaction records* in [`super`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Compaction {
    /// Format version.
    pub version: u32,
    /// The partition's directory relative to the output root, e.g.
    /// `events/chain=base/date=2024-01-02`.
    pub partition: String,
    /// Generation of `files` (0: nothing compacted yet).
    pub generation: u64,
    /// The compacted files of the partition, as written.
    pub files: Vec<CommittedFile>,
    /// Unit files (paths) whose rows `files` hold: gone, or about to be.
    pub replaced: Vec<String>,
    /// Rows of files of `replaced`, by path, as the compaction that took
    /// them read them (absent in records written before they were
    /// counted, and for a decoded table's files named after the raw files
    /// they were decoded from): `verify` counts rows with them where no
    /// checkpoint counts the file (a unit of a closed period or segment).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub replaced_rows: std::collections::BTreeMap<String, u64>,
    /// A compaction in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingCompaction>,
    /// The last generation of a swap rolled back (its outputs deleted
    /// unpublished), or of a compaction `verify --repair` dissolved, when
    /// above `generation`: no later compaction of the partition writes its
    /// names again, since an upload a killed run had sent may still land
    /// under one (*One writer per job* in docs/exactly-once.md). 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rolled_back: u64,
    /// `verify --repair` is exporting these units (those of this partition
    /// and of every partition they share compacted files with) again:
    /// their checkpoints are to be deleted, then the compacted files, then
    /// this record made one of nothing compacted (`rolled_back` keeping its
    /// generations taken).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dissolving: Vec<String>,
    /// Time of the last change (RFC 3339).
    pub updated_at: String,
}

/// The job's settled compaction records in one document
/// (`compactions.json`), so that reading them costs one request however
/// many partitions were compacted; a record being changed is a file of its
/// own in `compacted/` until it is settled again and folded in (see
/// *Compaction records* in [`super`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CompactionIndex {
    /// Format version.
    pub version: u32,
    /// Records with no swap or repair in progress, by partition.
    pub records: Vec<Compaction>,
    /// What the job's state was (a digest, see the job stage's compaction)
    /// when a pass last found every partition either compacted or waiting
    /// for the state to change: a pass that finds the same state has
    /// nothing to look for, and lists no files. None: look.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<String>,
    /// Time of the last change (RFC 3339).
    pub updated_at: String,
}

impl Versioned for CompactionIndex {
    fn version(&self) -> u32 {
        self.version
    }
    const FIX: &'static str = Compaction::FIX;
}

/// A compaction of a partition in progress.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PendingCompaction {
    /// Generation of the files being written.
    pub generation: u64,
    /// Whether every output is durable under its hidden name: from here
    /// on the compaction is finished forward (publish, delete the inputs),
    /// before it, rolled back (delete the outputs).
    pub swapping: bool,
    /// The files replaced: unit files and earlier compacted files.
    pub inputs: Vec<String>,
    /// The outputs, under their final names (once `swapping`).
    pub outputs: Vec<CommittedFile>,
}

impl Versioned for Compaction {
    fn version(&self) -> u32 {
        self.version
    }
    const FIX: &'static str = "restore it from a backup, or re-run with --fresh to start the job over \
         (this deletes its output); do not delete it alone: its compacted files would be counted beside \
         the files they replaced, or the files of a swap in progress would be left";
}

/// A state document carrying its format version.
pub(super) trait Versioned {
    /// The format version the document says it is.
    fn version(&self) -> u32;
    /// What to do when the document cannot be read: the safe fix.
    const FIX: &'static str = "re-run with --fresh to start the job over (this deletes its output)";
}

impl Versioned for JobState {
    fn version(&self) -> u32 {
        self.version
    }
}

impl JobState {
    /// The page size to cut units for: the one frozen when the job started,
    /// so a resumed run (or another shard) finds the same units even with a
    /// different `page_size` in the spec.
    pub fn cut_page_size(&self, spec: &crate::spec::Spec) -> u32 {
        self.page_size.unwrap_or(spec.source.page_size)
    }

    /// How the job's windows are cut into units: the page size and rule
    /// frozen when it started. A rule this build does not know was checked
    /// when the document was read ([`super::StateStore::load_job`]).
    pub fn cutting(&self, spec: &crate::spec::Spec) -> crate::plan::Cutting {
        crate::plan::Cutting {
            page_size: self.cut_page_size(spec),
            rule: crate::vocab::cuts::CutRule::of_version(self.cut_rule).unwrap_or(crate::vocab::cuts::CutRule::LATEST),
        }
    }
}

impl Versioned for UnitState {
    fn version(&self) -> u32 {
        self.version
    }
    // Safe because a unit without a checkpoint owns no committed file: the
    // next run removes every file of the unit before fetching it again.
    const FIX: &'static str = "delete this file and re-run: the unit is exported again from the start, \
         its earlier files removed first (the rest of the job is kept)";
}

impl Versioned for Mark {
    fn version(&self) -> u32 {
        self.version
    }
    const FIX: &'static str = "restore it from a backup, or re-run with --fresh to start the job over \
         (this deletes its output); do not delete it alone: the export would start again from `start` \
         beside the files it already wrote";
}

impl Versioned for SegmentDoc {
    fn version(&self) -> u32 {
        self.version
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
