//! Unit checkpoints: `units/<unit>.json` while a unit is in progress,
//! replaced after each commit (the unit's files are durable first:
//! invariant 1 of [`super`]); once done, folded into a manifest
//! (`manifests/…json`, see [`super::manifests`]), so that reading a job's
//! state costs a few requests however many units it finished.

use super::manifests::{Manifest, next_seq};
use super::{StateError, StateStore, UnitState};
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
