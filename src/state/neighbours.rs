//! The other jobs sharing the output: the directories beside this job's
//! under `_chainetl/`, each with the identity its `job.json` records —
//! read as plain JSON, so a document of another build or state version
//! still says what it records — and, while it changes its layout or
//! format, the identity it is changing to (its `migration.json`), which
//! is the one it will write in; exports appended after it started
//! (`exports/e<i>.json`) join it.

use super::{StateError, StateStore};
use crate::spec::JobIdentity;

/// Another job with state at the output.
#[derive(Debug, Clone)]
pub struct Neighbour {
    /// Its name.
    pub name: String,
    /// The identity it writes in: that of a change in progress, else the
    /// one its `job.json` records (None: it records none that reads).
    pub identity: Option<JobIdentity>,
}

impl StateStore {
    /// Every other job with state at the output, by name.
    pub async fn neighbours(&self) -> Result<Vec<Neighbour>, StateError> {
        let root = self.storage().path("_chainetl");
        let listed = self
            .storage()
            .store()
            .list_with_delimiter(Some(&root))
            .await
            .map_err(|e| StateError::io("_chainetl", "listing", e))?;
        let mut out = Vec::new();
        for dir in listed.common_prefixes {
            let Some(name) = dir.filename().map(str::to_string) else {
                continue;
            };
            if name == self.job {
                continue;
            }
            let identity_in = |doc: &str| {
                let rel = format!("_chainetl/{name}/{doc}");
                async move {
                    let object = self.storage().get(&rel).await.map_err(|e| StateError::io(&rel, "reading", e))?;
                    Ok::<_, StateError>(object.and_then(|o| {
                        let v: serde_json::Value = serde_json::from_slice(&o.bytes).ok()?;
                        serde_json::from_value(v.get("identity")?.clone()).ok()
                    }))
                }
            };
            let mut identity: Option<JobIdentity> = match identity_in("migration.json").await? {
                Some(changing) => Some(changing),
                None => identity_in("job.json").await?,
            };
            // Exports appended after it started write its tables too.
            if let Some(identity) = identity.as_mut() {
                let dir = format!("_chainetl/{name}/exports/");
                let listed = self.storage().list(&dir).await.map_err(|e| StateError::io(&dir, "listing", e))?;
                let mut added: Vec<(usize, crate::spec::ExportIdentity)> = Vec::new();
                for meta in listed {
                    let rel = self.storage().rel_of(&meta.location);
                    let Some(o) = self.storage().get(&rel).await.map_err(|e| StateError::io(&rel, "reading", e))? else {
                        continue;
                    };
                    let doc: Option<super::AddedExport> = serde_json::from_slice(&o.bytes).ok();
                    if let Some(doc) = doc {
                        added.push((doc.export, doc.identity));
                    }
                }
                added.sort_by_key(|(i, _)| *i);
                for (i, e) in added {
                    if i >= identity.exports.len() {
                        identity.exports.push(e);
                    }
                }
            }
            out.push(Neighbour { name, identity });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}
