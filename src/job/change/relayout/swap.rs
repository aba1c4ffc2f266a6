//! The swap of a rewrite (see *Exactly once* in [`super`]): the outputs
//! revealed, the inputs deleted (`parquet`) or replaced in one commit a
//! table (`delta`), then the checkpoints and compaction records set from
//! the rewrite's documents. Every step is idempotent, so a run killed
//! part way makes it again from the documents.

use crate::job::error::RunError;
use crate::job::tables::{compaction_app_id, relayout_app_id, unit_app_id};
use crate::sink::Sink;
use crate::spec::{LayoutChange, Spec};
use crate::state::{CommittedFile, Compaction, Migration, Rewrite, STATE_VERSION, StateStore};
use crate::storage::delta::{Change, Part};
use futures::{StreamExt, TryStreamExt};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// Files revealed or deleted at once.
const IO_AT_ONCE: usize = 16;

/// Makes the documents' outputs the job's files (see *Exactly once*).
pub(super) async fn swap(spec: &Spec, sink: &Arc<Sink>, state: &StateStore, docs: &[Rewrite], m: &Migration) -> Result<(), RunError> {
    if sink.delta().is_some() {
        let outputs: Vec<&CommittedFile> = docs.iter().flat_map(|d| d.outputs.iter()).collect();
        futures::stream::iter(outputs)
            .map(|f| sink.reveal(&f.path))
            .buffer_unordered(IO_AT_ONCE)
            .try_collect::<Vec<()>>()
            .await?;
        crate::util::failpoint::hit("rewrite-published");
        // Derived tables change what readers read (new rows, new values):
        // a data change, not a rearrangement.
        let derived = m.layout.iter().any(LayoutChange::is_derived);
        // New partition columns or column types: the tables' metadata too.
        let relayouts = m.layout.iter().any(LayoutChange::changes_columns);
        commit(spec, sink, state, docs, m.rewrite_version.unwrap_or(1), !derived, relayouts).await?;
        crate::util::failpoint::hit("rewrite-committed");
    } else {
        for d in docs {
            futures::stream::iter(&d.outputs)
                .map(|f| sink.reveal(&f.path))
                .buffer_unordered(IO_AT_ONCE)
                .try_collect::<Vec<()>>()
                .await?;
            futures::stream::iter(&d.inputs)
                .map(|rel| state.delete_data(rel))
                .buffer_unordered(IO_AT_ONCE)
                .try_collect::<Vec<()>>()
                .await?;
            crate::util::failpoint::hit("during-rewrite-swap");
        }
    }
    state.apply_rewrites(docs).await?;
    crate::util::failpoint::hit("rewrite-checkpointed");
    set_records(state, docs).await?;
    // `delta`: the inputs of units waiting for their segment are in no
    // version; their checkpoints count the new files now.
    if sink.delta().is_some() {
        for rel in docs.iter().filter(|d| !d.live).flat_map(|d| d.inputs.iter()) {
            state.delete_data(rel).await?;
        }
    }
    Ok(())
}

/// `delta`: one commit a table removing the live groups' inputs and adding
/// their outputs (`rearranges`: `OPTIMIZE`, `dataChange = false`; else a
/// `WRITE`, for derived tables); where the table's partition columns or
/// column types change, the same commit replaces its layout (an overwrite
/// of its schema: `DeltaTables::replace`).
async fn commit(
    spec: &Spec,
    sink: &Arc<Sink>,
    state: &StateStore,
    docs: &[Rewrite],
    version: i64,
    rearranges: bool,
    relayouts: bool,
) -> Result<(), RunError> {
    let Some(delta) = sink.delta() else {
        return Ok(());
    };
    let units = state.load_units().await?;
    let mut tables: BTreeMap<String, Vec<&Rewrite>> = BTreeMap::new();
    for d in docs.iter().filter(|d| d.live) {
        for t in d
            .inputs
            .iter()
            .chain(d.outputs.iter().map(|f| &f.path))
            .filter_map(|r| r.split('/').next())
        {
            let e = tables.entry(t.to_string()).or_default();
            if !e.iter().any(|x| std::ptr::eq(*x, d)) {
                e.push(d);
            }
        }
    }
    let schemas = crate::job::change::convert::table_schemas(spec)?;
    // A table of the job's holding none of its files still takes its new
    // partition columns or types.
    for table in schemas.keys().filter(|_| relayouts) {
        if !tables.contains_key(table) {
            tables.insert(table.clone(), Vec::new());
        }
    }
    for (table, docs) in tables {
        let dir = format!("{table}/");
        // Other partition columns or column types: the commit replaces the
        // table's layout as well as its files (only when the spec changed
        // them: a column a newer release added is never dropped here).
        let replaces = match schemas.get(&table) {
            Some(schema) if relayouts => delta.needs_replacing(sink, &table, schema).await?,
            _ => false,
        };
        if docs.is_empty() && !replaces {
            continue;
        }
        // A derived table may be new, or lack the columns it gains.
        if let Some(schema) = schemas.get(&table)
            && !replaces
            && docs.iter().any(|d| d.outputs.iter().any(|f| f.path.starts_with(&dir)))
        {
            delta.check_table(sink, &table, schema).await?;
        }
        let in_table = |rel: &str| rel.strip_prefix(&dir).map(str::to_string);
        let mut adds = Vec::new();
        for f in docs.iter().flat_map(|d| d.outputs.iter()).filter(|f| f.path.starts_with(&dir)) {
            adds.push(delta.add_stored(sink, &table, &f.path, f.bytes, Some(f.rows)).await?);
        }
        let mut parts = vec![Part {
            adds,
            txn: Some((relayout_app_id(spec), version)),
        }];
        for d in &docs {
            if let Some(u) = &d.unit
                && units.contains_key(u)
            {
                parts.push(Part {
                    adds: Vec::new(),
                    txn: Some((unit_app_id(state, u), d.next_seq as i64)),
                });
            }
        }
        if let Some(g) = docs.iter().filter(|d| d.unit.is_none()).map(|d| d.generation).max() {
            parts.push(Part {
                adds: Vec::new(),
                txn: Some((compaction_app_id(spec), g as i64)),
            });
        }
        let change = Change {
            parts,
            removes: docs.iter().flat_map(|d| d.inputs.iter()).filter_map(|r| in_table(r)).collect(),
            rearranges,
            may_be_in: true,
        };
        match schemas.get(&table) {
            Some(schema) if replaces => delta.replace(sink, &table, schema, change).await?,
            _ => delta.commit(sink, &table, change).await?,
        };
        crate::util::failpoint::hit("during-rewrite-commit");
    }
    Ok(())
}

/// The compaction records as the documents leave them: a record for each
/// partition the rewritten compacted files went to, listing them and the
/// unit files the records they came from replaced; the records they came
/// from gone. Idempotent.
async fn set_records(state: &StateStore, docs: &[Rewrite]) -> Result<(), RunError> {
    let current = state.load_compactions().await?;
    // The rows each replaced file had, as the records they came from say.
    let rows_of: BTreeMap<&str, u64> = current
        .iter()
        .flat_map(|c| c.replaced_rows.iter().map(|(p, r)| (p.as_str(), *r)))
        .collect();
    let mut new: BTreeMap<String, Compaction> = BTreeMap::new();
    for d in docs.iter().filter(|d| d.unit.is_none()) {
        for f in &d.outputs {
            let partition = f.path.rsplit_once('/').map_or("", |(p, _)| p).to_string();
            let r = new.entry(partition.clone()).or_insert_with(|| Compaction {
                version: STATE_VERSION,
                partition,
                ..Default::default()
            });
            r.generation = r.generation.max(d.generation);
            if !r.files.iter().any(|x| x.path == f.path) {
                r.files.push(f.clone());
            }
            // In the record's table: a derived table's record names the
            // units by the files they would have had in it.
            let table = f.path.split('/').next().unwrap_or_default();
            for u in &d.replaced {
                let named = match u.split_once('/') {
                    Some((_, rest)) => format!("{table}/{rest}"),
                    None => u.clone(),
                };
                // A decoded table's rows are not the raw file's.
                if let Some(rows) = rows_of.get(u.as_str()).filter(|_| named == *u) {
                    r.replaced_rows.insert(named.clone(), *rows);
                }
                if !r.replaced.contains(&named) {
                    r.replaced.push(named);
                }
            }
        }
    }
    for (partition, mut r) in new {
        if current
            .iter()
            .any(|c| c.partition == partition && c.files == r.files && c.replaced == r.replaced)
        {
            continue;
        }
        r.updated_at = chrono::Utc::now().to_rfc3339();
        state.save_compaction(&r).await?;
    }
    let kept: HashSet<String> = docs
        .iter()
        .filter(|d| d.unit.is_none())
        .flat_map(|d| d.outputs.iter().map(|f| f.path.rsplit_once('/').map_or("", |(p, _)| p).to_string()))
        .collect();
    for d in docs {
        // A partition whose files were only read (decoded into derived
        // tables) keeps its record.
        if let Some(p) = &d.partition
            && !d.inputs.is_empty()
            && !kept.contains(p)
            && current.iter().any(|c| &c.partition == p)
        {
            state.delete_compaction(p).await?;
        }
    }
    Ok(())
}
