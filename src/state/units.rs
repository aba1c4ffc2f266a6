//! Unit checkpoints: `units/<unit>.json`, one per unit, replaced after
//! each commit (the unit's files are durable first: invariant 1 of
//! [`super`]).

use super::{StateError, StateStore, UnitState};
use std::collections::HashMap;

impl StateStore {
    /// Every unit checkpoint, by unit id.
    pub async fn load_units(&self) -> Result<HashMap<String, UnitState>, StateError> {
        let mut out = HashMap::new();
        for m in self.list(&format!("{}/units", self.dir)).await? {
            let rel = self.sink.rel_of(&m.location);
            if !rel.ends_with(".json") {
                continue;
            }
            if let Some(st) = self.read_doc::<UnitState>(&rel).await? {
                out.insert(st.unit.clone(), st);
            }
        }
        Ok(out)
    }

    /// Writes one unit's checkpoint.
    pub async fn save_unit(&self, st: &UnitState) -> Result<(), StateError> {
        self.write_doc(&format!("{}/units/{}.json", self.dir, st.unit), st).await
    }

    /// Deletes unit checkpoints that a completed segment no longer needs.
    pub async fn delete_units(&self, ids: &[String]) -> Result<(), StateError> {
        for id in ids {
            self.sink.delete(&format!("{}/units/{id}.json", self.dir)).await?;
        }
        Ok(())
    }
}
