//! Commits: one snapshot per change, written on the current version.
//!
//! A change adds files (in parts, each with its transaction id) and
//! removes files; its operation follows from what it does: `append`
//! (adds only), `replace` (a rearrangement: compaction), `overwrite`
//! (adds and removes), `delete` (removes only). One attempt:
//!
//! 1. leaves out the parts the table already records ([`Current::recorded_version`]);
//! 2. writes the added files' manifest (once per change: the entries
//!    inherit their sequence numbers, so a retry reuses it);
//! 3. rewrites each manifest holding a removed file, the file marked
//!    deleted and the others carried (refused when a removed file is not
//!    in the table);
//! 4. folds small manifests together past [`super::Limits::merge_manifests_at`];
//! 5. writes the manifest list and the next metadata version,
//!    create-if-absent ([`Attempt::Conflict`] when another writer made it).

use super::manifest::{self, ManifestContext, ManifestEntry, ManifestFile, Status};
use super::metadata::{MetadataLogEntry, Operation, Snapshot, SnapshotLogEntry, SnapshotRef, TableMetadata, uuid4};
use super::relayout::NewLayout;
use super::stats::DataFile;
use super::{Current, ENGINE, IcebergError, TXN_PREFIX, Table, Written, backoff};
use crate::storage::Storage;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

/// Files joining the table together, with the transaction id that says
/// they did.
#[derive(Debug, Clone, Default)]
pub struct Part {
    /// The files (paths relative to the table).
    pub files: Vec<DataFile>,
    /// `(application id, version)`: recorded in the snapshot's summary; a
    /// part whose application already has this version (or a later one)
    /// is in, and is left out.
    pub txn: Option<(String, i64)>,
}

/// One snapshot's worth of change.
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// Files joining the table.
    pub parts: Vec<Part>,
    /// Files leaving it (paths relative to the table); each must be in
    /// the current snapshot, or the commit is refused. When the parts
    /// carry transaction ids and all of them are in, the removes are
    /// taken as made too, and nothing is committed.
    pub removes: Vec<String>,
    /// Whether the change rearranges rows without changing them
    /// (compaction: a `replace` snapshot).
    pub rearranges: bool,
    /// Whether parts may already be in (files published again after a
    /// crash), so their transaction ids are checked before the first
    /// attempt too, not only after a conflict.
    pub may_be_in: bool,
    /// Keys of the snapshot's summary besides the counts and
    /// transaction ids (which win on a clash).
    pub summary: BTreeMap<String, String>,
    /// The layout the table takes in the same version, its files made
    /// for it ([`Table::new_layout`]); refused when the table's schema or
    /// spec changed since it was made.
    pub layout: Option<NewLayout>,
}

impl Change {
    /// The operation a snapshot of this change records.
    pub fn operation(&self) -> Operation {
        let adds = self.parts.iter().any(|p| !p.files.is_empty());
        match (adds, self.removes.is_empty(), self.rearranges) {
            (_, true, _) => Operation::Append,
            (true, false, true) => Operation::Replace,
            (true, false, false) => Operation::Overwrite,
            (false, false, _) => Operation::Delete,
        }
    }
}

/// What one attempt at a commit came to.
#[derive(Debug, Clone)]
pub enum Attempt {
    /// A new version holding the change's snapshot.
    Committed(Arc<Current>),
    /// Every part was in already (and the removes with them): nothing
    /// committed; the version it was checked on.
    AlreadyIn(Arc<Current>),
    /// Another writer made the next version first: reload and try again.
    Conflict,
}

/// What an attempt wrote that a later attempt may reuse or must delete.
#[derive(Debug, Default)]
struct Staged {
    /// The added files' manifest: which parts it holds, and its row.
    adds: Option<(Vec<usize>, ManifestFile)>,
    /// Files written for the last attempt only (its manifest list,
    /// rewritten and folded manifests).
    attempt: Vec<String>,
    /// When the first of them was written.
    since: Option<std::time::Instant>,
    /// An attempt's outcome is unknown (it may land yet): nothing staged
    /// is deleted.
    keep: bool,
}

impl Table {
    /// Makes `change` in one snapshot on the current version; a conflict
    /// is retried on the new version, up to `attempts` times, leaving out
    /// the parts the table records by then. Returns the version committed
    /// ([`Attempt::Committed`]) or the one that already held every part
    /// ([`Attempt::AlreadyIn`]).
    pub async fn commit(&self, storage: &Storage, change: &Change, attempts: u32) -> Result<Attempt, IcebergError> {
        let mut staged = Staged::default();
        let Some(first) = self.load_cached(storage).await? else {
            return Err(self.refused("no table to commit to (it is created first)"));
        };
        let snapshot_id = first.metadata.new_snapshot_id();
        let mut first = Some(first).filter(|_| self.catalog.is_some());
        for attempt in 0..attempts.max(1) {
            let cached = first.is_some();
            let base = match first.take() {
                Some(c) => Some(c),
                None => self.load_to_write(storage).await?,
            };
            let Some(base) = base else {
                return Err(self.refused("the table's metadata is gone"));
            };
            // An attempt whose answer was lost (a catalog's 5xx or
            // timeout) may have landed: its snapshot says so.
            if attempt > 0 && base.metadata.snapshot(snapshot_id).is_some() {
                staged.attempt.clear();
                staged.adds = None;
                return Ok(Attempt::Committed(base));
            }
            let check = attempt > 0 || change.may_be_in;
            let outcome = self.attempt(storage, &base, change, check, snapshot_id, attempt, &mut staged).await;
            match outcome {
                Ok(Attempt::Conflict) => {
                    let files = std::mem::take(&mut staged.attempt);
                    if !staged.keep {
                        self.discard(storage, files).await;
                    }
                    tokio::time::sleep(backoff(attempt)).await;
                }
                Ok(done) => {
                    if matches!(done, Attempt::AlreadyIn(_)) {
                        self.discard_all(storage, staged).await;
                    }
                    return Ok(done);
                }
                // Made on the version this process last saw, which another
                // of its outputs (a compaction's) may have moved on from:
                // decided again on the table as it is.
                Err(IcebergError::Refused { .. } | IcebergError::Layout { .. }) if cached => {
                    self.discard(storage, std::mem::take(&mut staged.attempt)).await;
                }
                Err(e) => {
                    self.discard_all(storage, staged).await;
                    return Err(e);
                }
            }
        }
        self.discard_all(storage, staged).await;
        Err(IcebergError::Conflict {
            table: self.rel.clone(),
            attempts,
        })
    }

    /// One attempt at `change` on `base`, with a snapshot id of its own;
    /// for a caller that runs its own retries. Every part's transaction
    /// id is checked.
    pub async fn try_commit(&self, storage: &Storage, base: &Current, change: &Change) -> Result<Attempt, IcebergError> {
        let mut staged = Staged::default();
        let id = base.metadata.new_snapshot_id();
        let outcome = self.attempt(storage, base, change, true, id, 0, &mut staged).await;
        if !matches!(outcome, Ok(Attempt::Committed(_))) {
            self.discard_all(storage, staged).await;
        }
        outcome
    }

    async fn discard_all(&self, storage: &Storage, staged: Staged) {
        if staged.keep {
            return;
        }
        let mut files = staged.attempt;
        files.extend(staged.adds.map(|(_, m)| m.path));
        self.discard(storage, files).await;
    }

    /// Deletes files an attempt wrote that no version names (best effort:
    /// what is left is unreferenced, and [`Table::expire`] deletes it).
    async fn discard(&self, storage: &Storage, paths: Vec<String>) {
        let Some(base) = self.last.lock().ok().and_then(|l| l.clone()) else {
            return;
        };
        for abs in paths {
            if let Ok(rel) = self.rel_of(&base, &abs)
                && let Err(e) = storage.delete(&rel).await
            {
                tracing::debug!(table = %self.rel, file = %rel, error = %e, "could not delete an unused iceberg file");
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn attempt(
        &self,
        storage: &Storage,
        base: &Current,
        change: &Change,
        check: bool,
        snapshot_id: i64,
        attempt: u32,
        staged: &mut Staged,
    ) -> Result<Attempt, IcebergError> {
        let location = base.metadata.location.clone();
        staged.since.get_or_insert_with(std::time::Instant::now);
        if base.metadata.snapshot(snapshot_id).is_some() {
            return Err(self.refused(format!("snapshot id {snapshot_id} is taken")));
        }
        // Parts the table records are left out.
        let mut kept = Vec::new();
        for (i, p) in change.parts.iter().enumerate() {
            let is_in = match &p.txn {
                Some((app, v)) if check => base.recorded_version(app).is_some_and(|r| r >= *v),
                _ => false,
            };
            if !is_in {
                kept.push(i);
            }
        }
        let has_txn = change.parts.iter().any(|p| p.txn.is_some());
        if kept.is_empty() && (change.removes.is_empty() || has_txn) {
            return Ok(Attempt::AlreadyIn(Arc::new(base.clone())));
        }
        let (schema, spec) = match &change.layout {
            Some(l) if !l.fits(base) => {
                return Err(self.layout(format!(
                    "its schema or partitioning changed while this change was made for {}",
                    l.spec.show(&l.schema)
                )));
            }
            Some(l) => (&l.schema, &l.spec),
            None => (base.schema(), base.spec()),
        };
        let adds: Vec<&DataFile> = kept.iter().flat_map(|&i| &change.parts[i].files).collect();
        let mut seen = HashSet::new();
        for f in &adds {
            if f.spec_id != spec.spec_id || f.partition.len() != spec.fields.len() {
                return Err(self.layout(format!(
                    "{} is of partition spec {} and the table's is {} ({}): its partitioning changed while this run wrote",
                    f.path,
                    f.spec_id,
                    spec.spec_id,
                    spec.show(schema)
                )));
            }
            if !seen.insert(f.path.as_str()) {
                return Err(self.refused(format!("{} is added twice by one change", f.path)));
            }
        }
        let seq = base.metadata.last_sequence_number + 1;
        let ctx = ManifestContext {
            schema,
            spec,
            location: &location,
        };
        let parent = match base.snapshot() {
            Some(s) => match self.manifest_list(storage, base, &s.manifest_list).await? {
                Some(list) => list,
                None => return Ok(Attempt::Conflict),
            },
            None => Vec::new(),
        };
        let mut manifests = Vec::new();
        let mut deleted: Vec<DataFile> = Vec::new();
        let removes: HashSet<&str> = change.removes.iter().map(String::as_str).collect();
        let mut untouched = Vec::new();
        for m in parent {
            // A manifest left with no live file (its files removed by the
            // parent) is not carried further.
            if m.content == 0 && m.added_files == 0 && m.existing_files == 0 && m.added_snapshot_id != snapshot_id {
                continue;
            }
            if removes.is_empty() || m.content != 0 {
                untouched.push(m);
                continue;
            }
            let Some(entries) = self.manifest_entries(storage, base, &m).await? else {
                return Ok(Attempt::Conflict);
            };
            if !entries
                .iter()
                .any(|e| e.status != Status::Deleted && removes.contains(e.file.path.as_str()))
            {
                untouched.push(m);
                continue;
            }
            let rewritten: Vec<ManifestEntry> = entries
                .into_iter()
                .filter(|e| e.status != Status::Deleted)
                .map(|e| {
                    let gone = removes.contains(e.file.path.as_str());
                    let e = carried(e, &m, if gone { Some(snapshot_id) } else { None });
                    if gone {
                        deleted.push(e.file.clone());
                    }
                    e
                })
                .collect();
            let spec_of = base.metadata.spec_by_id(m.spec_id).unwrap_or(base.spec());
            let ctx_of = ManifestContext {
                spec: spec_of,
                schema: base.schema(),
                ..ctx
            };
            manifests.push(self.put_manifest(storage, &ctx_of, &rewritten, snapshot_id, seq, staged).await?);
        }
        if deleted.len() != removes.len() {
            let found: HashSet<&str> = deleted.iter().map(|f| f.path.as_str()).collect();
            let missing: BTreeSet<&&str> = removes.iter().filter(|p| !found.contains(**p)).collect();
            return Err(self.refused(format!(
                "cannot remove {}: not in the table's snapshot {}",
                missing.into_iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", "),
                base.snapshot().map_or_else(|| "(none)".into(), |s| s.snapshot_id.to_string())
            )));
        }
        if !adds.is_empty() {
            let reuse = staged.adds.as_ref().is_some_and(|(parts, _)| *parts == kept);
            if !reuse {
                if let Some((_, old)) = staged.adds.take()
                    && !staged.keep
                {
                    self.discard(storage, vec![old.path]).await;
                }
                let entries: Vec<ManifestEntry> = adds
                    .iter()
                    .map(|f| ManifestEntry {
                        status: Status::Added,
                        snapshot_id: Some(snapshot_id),
                        sequence_number: None,
                        file_sequence_number: None,
                        file: (*f).clone(),
                    })
                    .collect();
                let m = self.write_manifest(storage, &ctx, &entries, snapshot_id, seq).await?;
                staged.adds = Some((kept.clone(), m));
            }
            if let Some((_, m)) = &mut staged.adds {
                // Written on an earlier attempt: its row takes this
                // attempt's sequence number, as its entries inherit it.
                m.sequence_number = seq;
                m.min_sequence_number = seq;
                manifests.insert(0, m.clone());
            }
        }
        let manifests = self.fold(storage, base, manifests, untouched, snapshot_id, seq, staged).await?;
        let Some(manifests) = manifests else {
            return Ok(Attempt::Conflict);
        };
        let parent_id = base.metadata.current_snapshot_id;
        let list = manifest::write_manifest_list(snapshot_id, parent_id, seq, &manifests).map_err(|m| self.refused(m))?;
        let name = format!("snap-{snapshot_id}-{attempt}-{}.avro", uuid4());
        storage
            .put_atomic(&self.metadata_rel(&name), list)
            .await
            .map_err(|e| self.storage_error(e))?;
        let list_abs = format!("{location}/metadata/{name}");
        staged.attempt.push(list_abs.clone());
        crate::util::failpoint::hit("table-manifests-written");
        self.check_staged(storage, base, staged).await?;
        let summary = summary(change, &kept, &adds, &deleted, base.snapshot());
        let mut metadata = self.next_metadata(base, snapshot_id, seq, list_abs, summary);
        if let Some(l) = &change.layout {
            l.apply(&mut metadata);
            if let Some(s) = metadata.snapshots.last_mut() {
                s.schema_id = Some(l.schema.schema_id);
            }
        }
        match self.write_next(storage, Some(base), metadata).await? {
            Written::Made(c) => {
                staged.attempt.clear();
                staged.adds = None;
                Ok(Attempt::Committed(c))
            }
            Written::Lost => Ok(Attempt::Conflict),
            Written::Unknown => {
                // It may land yet, naming what this attempt wrote: kept
                // (leftovers past ORPHAN_AGE are expired's to delete).
                staged.keep = true;
                Ok(Attempt::Conflict)
            }
        }
    }

    /// Refuses the commit where a file it wrote and is about to name is
    /// gone: one written longer than [`super::STAGED_CHECK_AFTER`] ago may
    /// have been taken for a leftover (a vacuum, another engine's orphan
    /// removal) while this process was paused, and a version naming it
    /// would break every reader.
    async fn check_staged(&self, storage: &Storage, base: &Current, staged: &Staged) -> Result<(), IcebergError> {
        if staged.since.is_none_or(|t| t.elapsed() < super::STAGED_CHECK_AFTER) {
            return Ok(());
        }
        let own = staged.attempt.iter().chain(staged.adds.iter().map(|(_, m)| &m.path));
        for abs in own {
            let rel = self.rel_of(base, abs)?;
            if !storage.exists(&rel).await.map_err(|e| self.storage_error(e))? {
                return Err(self.refused(format!(
                    "{rel}, written by this commit, is gone (deleted while the commit was paused, as a leftover): \
                     nothing was committed; run again"
                )));
            }
        }
        Ok(())
    }

    /// The metadata of the version after `base`, with a snapshot of id
    /// `id` at sequence number `seq`, listing `manifest_list`.
    fn next_metadata(&self, base: &Current, id: i64, seq: i64, manifest_list: String, summary: BTreeMap<String, String>) -> TableMetadata {
        let mut m = base.metadata.clone();
        let now = chrono::Utc::now().timestamp_millis().max(m.last_updated_ms);
        let previous = format!("{}/metadata/v{}.metadata.json", m.location, base.version);
        m.metadata_log.push(MetadataLogEntry {
            metadata_file: previous,
            timestamp_ms: m.last_updated_ms,
        });
        self.trim_log(&mut m);
        m.snapshots.push(Snapshot {
            snapshot_id: id,
            parent_snapshot_id: m.current_snapshot_id,
            sequence_number: seq,
            timestamp_ms: now,
            manifest_list,
            summary,
            schema_id: Some(m.current_schema_id),
        });
        m.snapshot_log.push(SnapshotLogEntry {
            snapshot_id: id,
            timestamp_ms: now,
        });
        m.current_snapshot_id = Some(id);
        m.refs.insert("main".into(), SnapshotRef::branch(id));
        // A table made before chainetl declared its order gains it.
        m.declare_key_order();
        m.last_sequence_number = seq;
        m.last_updated_ms = now;
        m
    }

    /// Keeps the last [`super::Limits::previous_versions`] entries of the
    /// metadata log (or as many as the table's
    /// `write.metadata.previous-versions-max` says).
    pub(crate) fn trim_log(&self, m: &mut TableMetadata) {
        let keep = m
            .properties
            .get("write.metadata.previous-versions-max")
            .and_then(|v| v.parse().ok())
            .unwrap_or(self.limits.previous_versions)
            .max(1);
        let extra = m.metadata_log.len().saturating_sub(keep);
        m.metadata_log.drain(..extra);
    }

    /// The manifests of the manifest list at `list` (a location `base`
    /// names); `None` when it is gone (expired by a writer that committed
    /// since: a conflict).
    pub(crate) async fn manifest_list(
        &self,
        storage: &Storage,
        base: &Current,
        list: &str,
    ) -> Result<Option<Vec<ManifestFile>>, IcebergError> {
        let rel = self.rel_of(base, list)?;
        let Some(o) = storage.get(&rel).await.map_err(|e| self.storage_error(e))? else {
            return Ok(None);
        };
        manifest::read_manifest_list(&o.bytes)
            .map(Some)
            .map_err(|m| self.unreadable(&rel, m))
    }

    /// The entries of manifest `m` of `base`; `None` when it is gone.
    pub(crate) async fn manifest_entries(
        &self,
        storage: &Storage,
        base: &Current,
        m: &ManifestFile,
    ) -> Result<Option<Vec<ManifestEntry>>, IcebergError> {
        let rel = self.rel_of(base, &m.path)?;
        let Some(o) = storage.get(&rel).await.map_err(|e| self.storage_error(e))? else {
            return Ok(None);
        };
        manifest::read_manifest(&o.bytes, &base.metadata.location, m.spec_id)
            .map(Some)
            .map_err(|e| match e {
                manifest::ManifestError::Foreign(msg) => self.layout(format!(
                    "{rel}: {msg}: another engine wrote this table in a way chainetl does not read; write the job into another output"
                )),
                manifest::ManifestError::Unreadable(msg) => self.unreadable(&rel, msg),
            })
    }

    /// Writes `entries` as a manifest of this attempt's.
    async fn put_manifest(
        &self,
        storage: &Storage,
        ctx: &ManifestContext<'_>,
        entries: &[ManifestEntry],
        snapshot_id: i64,
        seq: i64,
        staged: &mut Staged,
    ) -> Result<ManifestFile, IcebergError> {
        let m = self.write_manifest(storage, ctx, entries, snapshot_id, seq).await?;
        staged.attempt.push(m.path.clone());
        Ok(m)
    }

    /// Writes `entries` as a new manifest added by snapshot `snapshot_id`
    /// at `seq`; its manifest list row.
    async fn write_manifest(
        &self,
        storage: &Storage,
        ctx: &ManifestContext<'_>,
        entries: &[ManifestEntry],
        snapshot_id: i64,
        seq: i64,
    ) -> Result<ManifestFile, IcebergError> {
        let bytes = manifest::write_manifest(ctx, entries).map_err(|m| self.refused(m))?;
        let name = format!("{}-m0.avro", uuid4());
        let length = bytes.len() as i64;
        storage
            .put_atomic(&self.metadata_rel(&name), bytes)
            .await
            .map_err(|e| self.storage_error(e))?;
        let count = |s: Status| entries.iter().filter(move |e| e.status == s);
        let rows = |s: Status| count(s).map(|e| e.file.record_count as i64).sum::<i64>();
        let live: Vec<&DataFile> = entries.iter().filter(|e| e.status != Status::Deleted).map(|e| &e.file).collect();
        let min_seq = entries
            .iter()
            .filter(|e| e.status != Status::Deleted)
            .map(|e| e.sequence_number.unwrap_or(seq))
            .min()
            .unwrap_or(seq);
        Ok(ManifestFile {
            path: format!("{}/metadata/{name}", ctx.location),
            length,
            spec_id: ctx.spec.spec_id,
            content: 0,
            sequence_number: seq,
            min_sequence_number: min_seq,
            added_snapshot_id: snapshot_id,
            added_files: count(Status::Added).count() as i32,
            existing_files: count(Status::Existing).count() as i32,
            deleted_files: count(Status::Deleted).count() as i32,
            added_rows: rows(Status::Added),
            existing_rows: rows(Status::Existing),
            deleted_rows: rows(Status::Deleted),
            partitions: manifest::summarize(ctx.spec.fields.len(), &live),
        })
    }

    /// The snapshot's manifests: `written` (this change's) then
    /// `untouched` (the parent's it keeps), the untouched small data
    /// manifests of the default spec folded into manifests of up to
    /// [`super::Limits::manifest_target_bytes`] once there would be more
    /// than [`super::Limits::merge_manifests_at`]. `None` when a manifest
    /// to fold is gone (a conflict).
    #[allow(clippy::too_many_arguments)]
    async fn fold(
        &self,
        storage: &Storage,
        base: &Current,
        mut written: Vec<ManifestFile>,
        untouched: Vec<ManifestFile>,
        snapshot_id: i64,
        seq: i64,
        staged: &mut Staged,
    ) -> Result<Option<Vec<ManifestFile>>, IcebergError> {
        let target = self.limits.manifest_target_bytes as i64;
        if written.len() + untouched.len() <= self.limits.merge_manifests_at.max(2) {
            written.extend(untouched);
            return Ok(Some(written));
        }
        let spec_id = base.spec().spec_id;
        let (small, mut kept): (Vec<ManifestFile>, Vec<ManifestFile>) = untouched
            .into_iter()
            .partition(|m| m.content == 0 && m.spec_id == spec_id && m.length < target);
        let mut bins: Vec<Vec<ManifestFile>> = Vec::new();
        let mut size = 0;
        for m in small {
            if bins.is_empty() || size + m.length > target {
                bins.push(Vec::new());
                size = 0;
            }
            size += m.length;
            if let Some(b) = bins.last_mut() {
                b.push(m);
            }
        }
        let ctx = ManifestContext {
            schema: base.schema(),
            spec: base.spec(),
            location: &base.metadata.location,
        };
        for bin in bins {
            if bin.len() < 2 {
                kept.extend(bin);
                continue;
            }
            let mut entries = Vec::new();
            for m in &bin {
                let Some(es) = self.manifest_entries(storage, base, m).await? else {
                    return Ok(None);
                };
                entries.extend(es.into_iter().filter(|e| e.status != Status::Deleted).map(|e| carried(e, m, None)));
            }
            written.push(self.put_manifest(storage, &ctx, &entries, snapshot_id, seq, staged).await?);
        }
        written.extend(kept);
        Ok(Some(written))
    }
}

/// Live entry `e` of manifest `m` written into a new manifest: carried
/// (`Existing`), or removed by snapshot `removed_by`; its snapshot id and
/// sequence numbers written out, as inheritance would give them.
fn carried(e: ManifestEntry, m: &ManifestFile, removed_by: Option<i64>) -> ManifestEntry {
    let seq = e.sequence_number.unwrap_or(m.sequence_number);
    ManifestEntry {
        status: if removed_by.is_some() { Status::Deleted } else { Status::Existing },
        snapshot_id: removed_by.or(e.snapshot_id).or(Some(m.added_snapshot_id)),
        sequence_number: Some(seq),
        file_sequence_number: Some(e.file_sequence_number.unwrap_or(seq)),
        file: e.file,
    }
}

/// The summary of a snapshot of `change` (its parts `kept`) adding
/// `adds` and removing `deleted`, on `parent`: the operation, the counts
/// (totals carried from the parent's where it has them), the engine, the
/// transaction ids and the change's own keys.
fn summary(
    change: &Change,
    kept: &[usize],
    adds: &[&DataFile],
    deleted: &[DataFile],
    parent: Option<&Snapshot>,
) -> BTreeMap<String, String> {
    let mut s = change.summary.clone();
    for &i in kept {
        if let Some((app, v)) = &change.parts[i].txn {
            let key = format!("{TXN_PREFIX}{app}");
            let v = s.get(&key).and_then(|x| x.parse::<i64>().ok()).map_or(*v, |x| x.max(*v));
            s.insert(key, v.to_string());
        }
    }
    let operation = if adds.is_empty() && change.removes.is_empty() {
        Operation::Append
    } else if adds.is_empty() {
        Operation::Delete
    } else {
        change.operation()
    };
    s.insert("operation".into(), operation.name().into());
    s.insert("engine-name".into(), ENGINE.into());
    s.insert("engine-version".into(), env!("CARGO_PKG_VERSION").into());
    let files = adds.len() as u64;
    let records: u64 = adds.iter().map(|f| f.record_count).sum();
    let bytes: u64 = adds.iter().map(|f| f.file_size).sum();
    let gone = deleted.len() as u64;
    let gone_records: u64 = deleted.iter().map(|f| f.record_count).sum();
    let gone_bytes: u64 = deleted.iter().map(|f| f.file_size).sum();
    let mut put = |k: &str, v: u64| {
        s.insert(k.into(), v.to_string());
    };
    for (k, v) in [
        ("added-data-files", files),
        ("added-records", records),
        ("added-files-size", bytes),
        ("deleted-data-files", gone),
        ("deleted-records", gone_records),
        ("removed-files-size", gone_bytes),
    ] {
        if v > 0 {
            put(k, v);
        }
    }
    let partitions: HashSet<_> = adds
        .iter()
        .map(|f| &f.partition)
        .chain(deleted.iter().map(|f| &f.partition))
        .collect();
    put("changed-partition-count", partitions.len() as u64);
    for (total, plus, minus) in [
        ("total-data-files", files, gone),
        ("total-records", records, gone_records),
        ("total-files-size", bytes, gone_bytes),
        ("total-delete-files", 0, 0),
        ("total-position-deletes", 0, 0),
        ("total-equality-deletes", 0, 0),
    ] {
        // A parent without totals (another writer's) leaves them unknown.
        let before = match parent {
            None => Some(0),
            Some(p) => p.count(total),
        };
        if let Some(b) = before {
            put(total, (b + plus).saturating_sub(minus));
        }
    }
    s
}
