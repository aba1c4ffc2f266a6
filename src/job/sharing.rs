//! One format and one layout per table folder: jobs may share an output,
//! but every job writing into one table folder (`<uri>/<table>/`) writes
//! it in one format, with the same partition columns and the same
//! encoding of each column ([`crate::spec::SHARED_KEYS`]) — else readers of
//! the folder fail (DuckDB: "Hive partition mismatch"; pyarrow: text and
//! bytes in one column) or miss rows (a Delta log naming only one job's
//! files).
//!
//! A job that would make a folder mix — a new job, or a job changing its
//! format or layout — is refused before anything changes, naming the
//! other job and what to do. A folder that mixes already (jobs started
//! before this rule) is reported by `verify`, and its jobs run on as they
//! are.

use super::error::RunError;
use crate::spec::{JobIdentity, Spec};
use crate::state::StateStore;

/// The tables `identity` would share with other jobs at the output in
/// another format or layout: one line each, naming the job and the keys.
pub(crate) async fn mixes(identity: &JobIdentity, state: &StateStore) -> Result<Vec<String>, RunError> {
    let mut out = Vec::new();
    for n in state.neighbours().await? {
        let Some(theirs) = &n.identity else {
            continue;
        };
        for (table, keys) in identity.mixes_with(theirs) {
            out.push(format!("{table}/ (with job `{}`: {})", n.name, keys.join("; ")));
        }
    }
    Ok(out)
}

/// Refuses `spec` when its job would write a table folder another job
/// writes in another format or layout (see the module doc).
pub(crate) async fn refuse_mixing(spec: &Spec, state: &StateStore) -> Result<(), RunError> {
    let found = mixes(&JobIdentity::of(spec), state).await?;
    if found.is_empty() {
        return Ok(());
    }
    Err(RunError::Migration(format!(
        "job `{}`: its tables would hold files of other jobs sharing the output in another format or layout, which \
         readers of a folder cannot read as one table: {}; give the job an output of its own (another `uri`), or \
         the same format, partition_by and hash_encoding as the other job",
        spec.name,
        found.join(", ")
    )))
}
