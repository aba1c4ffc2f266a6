//! One format and one layout per table folder: jobs may share an output,
//! but every job writing into one table folder (`<uri>/<table>/`) writes
//! it in one format, with the same partition columns and the same
//! encoding of each column ([`crate::spec::SHARED_KEYS`]) — else readers of
//! the folder fail (DuckDB: "Hive partition mismatch"; pyarrow: text and
//! bytes in one column) or miss rows (a Delta log naming only one job's
//! files).
//!
//! A job that would make a folder mix — a new job, a job changing its
//! format or layout, a job writing a table it did not — is refused before
//! anything changes, naming the other job and what to do. So two jobs
//! sharing a folder change its layout only together: one of them moves to
//! an output of its own first. Two new jobs started at the same instant
//! can both pass (neither sees the other yet): `verify` reports a folder
//! that mixes, and its jobs run on as they are.

use crate::job::error::RunError;
use crate::spec::{JobIdentity, Spec};
use crate::state::StateStore;
use std::collections::BTreeSet;

/// The tables `identity` would share with other jobs at the output in
/// another format or layout: each table with a line naming the job and
/// the keys.
pub(crate) async fn mixes(identity: &JobIdentity, state: &StateStore) -> Result<Vec<(String, String)>, RunError> {
    let mut out = Vec::new();
    for n in state.neighbours().await? {
        let Some(theirs) = &n.identity else {
            continue;
        };
        for (table, keys) in identity.mixes_with(theirs) {
            let line = format!("{table}/ (with job `{}`: {})", n.name, keys.join("; "));
            out.push((table, line));
        }
    }
    Ok(out)
}

/// Refuses `spec` when its job would make a table folder mix formats or
/// layouts with another job's (see the module doc), before anything
/// changes: every table of a new job (or of a `--fresh` one), of a job
/// whose format, partition keys or hash encoding change, and the tables a
/// job writes that it did not before; none for a job finishing a change
/// it began (its `migration.json` names the spec's identity) or going on
/// as it is.
pub(crate) async fn refuse_mixing(spec: &Spec, state: &StateStore, fresh: bool) -> Result<(), RunError> {
    let identity = JobIdentity::of(spec);
    if !fresh && state.load_migration().await.ok().flatten().is_some_and(|m| m.identity == identity) {
        return Ok(());
    }
    let stored = match fresh {
        true => None,
        false => state.load_job().await.ok().flatten().and_then(|j| j.identity),
    };
    let tables: BTreeSet<String> = match &stored {
        Some(s) if identity.mixes_with(s).is_empty() => identity.tables().difference(&s.tables()).cloned().collect(),
        _ => identity.tables(),
    };
    if tables.is_empty() {
        return Ok(());
    }
    let found: Vec<String> = mixes(&identity, state)
        .await?
        .into_iter()
        .filter(|(table, _)| tables.contains(table))
        .map(|(_, line)| line)
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    Err(RunError::Migration(format!(
        "job `{}`: its tables would hold files of other jobs sharing the output in another format or layout, which \
         readers of a folder cannot read as one table: {}; give the job an output of its own (another `uri`), or \
         the same format, partition_by, hash_encoding and columns as the other job",
        spec.name,
        found.join(", ")
    )))
}
