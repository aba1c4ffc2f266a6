//! Unit checkpoints: `units/<unit>.json` while a unit is in progress,
//! replaced after each commit (the unit's files are durable first:
//! invariant 1 of [`super`]); once done, folded into a manifest
//! (`manifests/…json`).
//!
//! # Manifests
//!
//! The checkpoints of finished units, many to a document
//! (`manifests/<seq>-<tag>.json`), so that reading a job's state costs a
//! few requests however many units it finished. See *Manifests* in
//! [`super`] for why no crash, shard or lease holder loses an entry.

use super::docs::Versioned;
use super::{STATE_VERSION, StateError, StateStore, UnitState};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A job's unit checkpoints as stored: its manifests, in the order they
/// apply, and its per-unit files.
pub(super) struct Stored {
    /// `(rel, manifest)`, in the order they apply.
    pub(super) manifests: Vec<(String, Manifest)>,
    /// Per-unit files, by unit id.
    pub(super) files: HashMap<String, UnitState>,
}

impl Stored {
    /// The manifests' entries, applied in order (a later entry of a unit
    /// replaces an earlier one; `dropped` removes it).
    pub(super) fn folded(&self) -> HashMap<String, UnitState> {
        let mut out = HashMap::new();
        for (_, m) in &self.manifests {
            m.apply(&mut out);
        }
        out
    }

    /// Every unit's checkpoint: manifest entries, overridden by per-unit
    /// files (a per-unit file is never older than a manifest entry of its
    /// unit: folding deletes it after writing the entry, and dropping a
    /// unit deletes it before writing the tombstone).
    pub(super) fn units(self) -> HashMap<String, UnitState> {
        let mut out = self.folded();
        out.extend(self.files);
        out
    }
}

impl StateStore {
    /// Every unit checkpoint, by unit id.
    pub async fn load_units(&self) -> Result<HashMap<String, UnitState>, StateError> {
        Ok(self.load_stored().await?.units())
    }

    /// The manifests and per-unit files, read concurrently.
    pub(super) async fn load_stored(&self) -> Result<Stored, StateError> {
        let manifests = self.load_manifests().await?;
        let files: Vec<UnitState> = self.load_dir_listed("units").await?.into_iter().map(|(_, d)| d).collect();
        Ok(Stored {
            manifests,
            files: files.into_iter().map(|s| (s.unit.clone(), s)).collect(),
        })
    }

    /// Writes one unit's checkpoint.
    pub async fn save_unit(&self, st: &UnitState) -> Result<(), StateError> {
        self.write_doc(&self.unit_path(&st.unit), st).await
    }

    pub(super) fn unit_path(&self, id: &str) -> String {
        format!("{}/units/{id}.json", self.dir)
    }

    /// Makes `ids` export again from the start. In `parquet`, their
    /// checkpoints are deleted ([`StateStore::delete_units`]). In `delta`,
    /// each gets a checkpoint of nothing done whose `next_seq` is above
    /// every file it wrote (`above`: a sequence per unit, besides its
    /// checkpoint's): its earlier files stay on storage for the tables'
    /// earlier versions, and the log remembers its transaction versions,
    /// so the new files must neither reuse a name nor a version. Its
    /// earlier files still in `tables` are what its new ones replace
    /// ([`UnitState::replaces`]), in one commit a table once it is done.
    /// With `shared` files (compacted files holding rows of several of
    /// `ids`), the units are one group ([`UnitState::together`]) that
    /// replaces its files and those in one commit a table once all are done.
    pub async fn restart_units(
        &self,
        ids: &[String],
        above: &HashMap<String, u64>,
        tables: &std::collections::BTreeSet<String>,
        shared: &[String],
    ) -> Result<(), StateError> {
        let Some(live) = self.list_live_files(tables).await? else {
            return self.delete_units(ids).await;
        };
        if ids.is_empty() {
            return Ok(());
        }
        let mut replaces: HashMap<&str, Vec<String>> = HashMap::new();
        let mut live_above: HashMap<&str, u64> = HashMap::new();
        for f in &live {
            if let super::JobFile::Unit(unit, seq) = &f.kind {
                replaces.entry(unit.as_str()).or_default().push(f.rel.clone());
                let next = live_above.entry(unit.as_str()).or_default();
                *next = (*next).max(seq + 1);
            }
        }
        let states = self.load_units().await?;
        for id in ids {
            // Above the version the tables record for the unit, too: its
            // replacing commit's version must be new to them.
            let app = format!("chainetl-{}", self.file_prefix(id));
            let logged = self.recorded_version(tables.iter().map(String::as_str), &app).await?.max(0) as u64;
            let next_seq = [
                Some(logged + 1),
                states.get(id).map(|s| s.next_seq),
                above.get(id).copied(),
                live_above.get(id.as_str()).copied(),
                Some(self.seq_floor()),
            ]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or_default();
            let st = UnitState {
                version: STATE_VERSION,
                unit: id.clone(),
                next_seq,
                updated_at: chrono::Utc::now().to_rfc3339(),
                ..Default::default()
            };
            // What an earlier restart (another partition of the same
            // repair) recorded stays.
            let before = states.get(id);
            let mut st = st;
            for r in before
                .iter()
                .flat_map(|b| b.replaces.iter())
                .chain(replaces.remove(id.as_str()).iter().flatten())
                .chain(shared)
            {
                if !st.replaces.contains(r) {
                    st.replaces.push(r.clone());
                }
            }
            let group = if shared.is_empty() { &[][..] } else { ids };
            for u in before.iter().flat_map(|b| b.together.iter()).chain(group) {
                if !st.together.contains(u) {
                    st.together.push(u.clone());
                }
            }
            self.save_unit(&st).await?;
        }
        Ok(())
    }

    /// Deletes unit checkpoints: a completed segment no longer needs them,
    /// or their units are to be exported again. Per-unit files go first,
    /// then a manifest drops the folded ones: a crash between leaves the
    /// units as they were (still done), never a per-unit file that outlives
    /// the manifest that drops its unit.
    pub async fn delete_units(&self, ids: &[String]) -> Result<(), StateError> {
        if ids.is_empty() {
            return Ok(());
        }
        for id in ids {
            self.sink.delete(&self.unit_path(id)).await?;
        }
        let manifests = self.load_manifests().await?;
        let mut folded = HashMap::new();
        for (_, m) in &manifests {
            m.apply(&mut folded);
        }
        let dropped: Vec<String> = ids.iter().filter(|id| folded.contains_key(*id)).cloned().collect();
        if !dropped.is_empty() {
            self.create_manifest(&Manifest::new(next_seq(&manifests), Vec::new(), dropped))
                .await?;
        }
        Ok(())
    }
}

/// A run holding the whole job merges the manifests into one at its end
/// once there are this many (each fold adds one: a run's passes, each
/// shard's), so a job whose last run held it is one manifest. A merge
/// rewrites every entry, once a run, which is small beside the run.
pub const MERGE_AT: usize = 2;
/// A run that does not end (`--follow`: a fold a pass) merges at the start
/// of a pass once there are this many, so its state stays a few objects
/// while a merge rewrites the entries only every so many passes.
pub const MERGE_IN_RUN_AT: usize = 16;

/// Finished units' checkpoints folded together, and units dropped
/// (`manifests/<seq>-<tag>.json`). Manifests apply in `seq` order (then
/// name): a later entry of a unit replaces an earlier one, and `dropped`
/// removes the unit's earlier entries.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// Format version.
    pub version: u32,
    /// Order of application: one more than the highest when it was written.
    pub seq: u64,
    /// Units whose checkpoints were deleted ([`StateStore::delete_units`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// Checkpoints of finished units, by unit id.
    #[serde(default)]
    pub units: Vec<UnitState>,
    /// When it was written (RFC 3339).
    pub created_at: String,
}

impl Versioned for Manifest {
    fn version(&self) -> u32 {
        self.version
    }
    const FIX: &'static str = "restore it from a backup, or re-run with --fresh to start the job over \
         (this deletes its output); do not delete it alone: the units it drops would come back as done";
}

impl Manifest {
    /// A manifest applying after those of `seq - 1` and below.
    pub(super) fn new(seq: u64, mut units: Vec<UnitState>, mut dropped: Vec<String>) -> Manifest {
        units.sort_by(|a, b| a.unit.cmp(&b.unit));
        dropped.sort();
        Manifest {
            version: STATE_VERSION,
            seq,
            dropped,
            units,
            created_at: chrono::Utc::now().to_rfc3339(),
        }
    }

    /// Applies this manifest over the entries of the ones before it.
    pub(super) fn apply(&self, out: &mut HashMap<String, UnitState>) {
        for id in &self.dropped {
            out.remove(id);
        }
        for u in &self.units {
            out.insert(u.unit.clone(), u.clone());
        }
    }
}

/// The `seq` of a manifest that applies after all of `manifests`.
pub(super) fn next_seq(manifests: &[(String, Manifest)]) -> u64 {
    manifests.iter().map(|(_, m)| m.seq).max().map_or(0, |s| s + 1)
}

/// A name part no other writer uses: time, process, call.
fn unique_tag() -> String {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{}-{n}", chrono::Utc::now().format("%Y%m%dT%H%M%S%3fZ"), std::process::id())
}

impl StateStore {
    /// The job's manifests, in the order they apply.
    pub(super) async fn load_manifests(&self) -> Result<Vec<(String, Manifest)>, StateError> {
        let rels = self.json_paths("manifests").await?;
        self.read_manifests(rels).await
    }

    /// The manifests at `rels`, read concurrently, in the order they apply.
    async fn read_manifests(&self, rels: Vec<String>) -> Result<Vec<(String, Manifest)>, StateError> {
        let mut out: Vec<(String, Manifest)> = self.read_docs(rels).await?;
        out.sort_by(|(ra, a), (rb, b)| a.seq.cmp(&b.seq).then_with(|| ra.cmp(rb)));
        Ok(out)
    }

    /// Writes a new manifest under a name no other writer uses
    /// (create-if-absent: a clash, however unlikely, takes another name).
    pub(super) async fn create_manifest(&self, m: &Manifest) -> Result<String, StateError> {
        let json = serde_json::to_vec(m).map_err(|e| StateError::io("manifest", "encoding", e))?;
        let bytes = crate::util::redact::redact_bytes(json);
        loop {
            let rel = format!("{}/manifests/{:010}-{}.json", self.dir, m.seq, unique_tag());
            if self.create_bytes(&rel, bytes.clone()).await? {
                return Ok(rel);
            }
        }
    }

    /// Every unit checkpoint, after folding the finished units that `own`
    /// selects (see [`StateStore::fold_units`]); one read of the state.
    pub async fn load_units_folding(&self, own: impl Fn(&str) -> bool) -> Result<HashMap<String, UnitState>, StateError> {
        let stored = self.load_stored().await?;
        self.fold_stored(&stored, own).await?;
        Ok(stored.units())
    }

    /// Folds the per-unit checkpoints of finished units that `own` selects
    /// into a new manifest, then deletes those per-unit files. Only by a run
    /// holding a lease that covers those units. Returns how many it folded.
    pub async fn fold_units(&self, own: impl Fn(&str) -> bool) -> Result<usize, StateError> {
        let stored = self.load_stored().await?;
        self.fold_stored(&stored, own).await
    }

    pub(super) async fn fold_stored(&self, stored: &Stored, own: impl Fn(&str) -> bool) -> Result<usize, StateError> {
        let mut done: Vec<&UnitState> = stored.files.values().filter(|s| s.done && own(&s.unit)).collect();
        if done.is_empty() {
            return Ok(0);
        }
        done.sort_by(|a, b| a.unit.cmp(&b.unit));
        // An entry already folded as it is (a fold that died before its
        // deletes) is not written again.
        let folded = stored.folded();
        let new: Vec<UnitState> = done
            .iter()
            .filter(|s| folded.get(&s.unit) != Some(**s))
            .map(|s| (*s).clone())
            .collect();
        if !new.is_empty() {
            self.create_manifest(&Manifest::new(next_seq(&stored.manifests), new, Vec::new()))
                .await?;
        }
        crate::util::failpoint::hit("during-fold");
        // A per-unit file gone before this fold deletes it was dropped
        // meanwhile (another shard closing the unit's segment, see
        // *Manifests* in [`super`]): the entry just written must not bring
        // the unit back, so it is dropped again, after it.
        let mut gone = Vec::new();
        for s in &done {
            let rel = self.unit_path(&s.unit);
            if self.read(&rel).await?.is_none() {
                gone.push(s.unit.clone());
            } else {
                self.sink.delete(&rel).await?;
            }
        }
        if !gone.is_empty() {
            let manifests = self.load_manifests().await?;
            self.create_manifest(&Manifest::new(next_seq(&manifests), Vec::new(), gone)).await?;
        }
        Ok(done.len())
    }

    /// Merges the manifests into one once there are `at` or more
    /// ([`MERGE_AT`] at the end of a run, [`MERGE_IN_RUN_AT`] between passes).
    /// Only with the whole job's lease: no other run writes a manifest
    /// meanwhile. The merged manifest applies last; the merged ones are
    /// deleted oldest first, so what is left at any moment (a suffix of
    /// them, then the merged one) reads as the merged one alone. Whether
    /// it merged.
    pub async fn merge_manifests(&self, at: usize) -> Result<bool, StateError> {
        let rels = self.json_paths("manifests").await?;
        if rels.len() < at.max(2) {
            return Ok(false);
        }
        let manifests = self.read_manifests(rels).await?;
        let mut all = HashMap::new();
        for (_, m) in &manifests {
            m.apply(&mut all);
        }
        let merged = Manifest::new(next_seq(&manifests), all.into_values().collect(), Vec::new());
        self.create_manifest(&merged).await?;
        crate::util::failpoint::hit("during-merge");
        for (rel, _) in &manifests {
            self.sink.delete(rel).await?;
        }
        Ok(true)
    }
}
