//! The swap of a rewrite (see *Exactly once* in [`super`]): table by
//! table, the outputs revealed and made to replace the inputs in the
//! table (one commit where the format has them, else the inputs deleted
//! group by group), then the checkpoints and compaction records set from
//! the rewrite's documents. Every step is idempotent, so a run killed
//! part way makes it again from the documents.

use crate::job::error::RunError;
use crate::job::tables::{compaction_app_id, relayout_app_id, unit_app_id};
use crate::sink::Sink;
use crate::sink::format::{Change, Joining, Stored};
use crate::spec::{LayoutChange, Spec};
use crate::state::{CommittedFile, Compaction, Migration, Rewrite, STATE_VERSION, StateStore};
use futures::{StreamExt, TryStreamExt};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// Files revealed or deleted at once.
const IO_AT_ONCE: usize = 16;

/// Makes the documents' outputs the job's files (see *Exactly once*).
pub(super) async fn swap(spec: &Spec, sink: &Arc<Sink>, state: &StateStore, docs: &[Rewrite], m: &Migration) -> Result<(), RunError> {
    // Derived tables change what readers read (new rows, new values):
    // a data change, not a rearrangement.
    let rearranges = !m.layout.iter().any(LayoutChange::is_derived);
    // New partition columns or column types: the tables' layout too. So
    // are other `u256` columns, where a table's columns can be dropped
    // (Iceberg: the decoded tables' schema loses a column the spec no
    // longer writes, in the snapshot that rewrites their files; Delta
    // refuses the drop before anything is written).
    let u256 = sink.format().column_drop_refusal().is_none()
        && m.layout
            .iter()
            .any(|c| matches!(c, LayoutChange::Derived { key, .. } if key == "u256"));
    let relayouts = u256 || m.layout.iter().any(LayoutChange::changes_columns);
    replace(spec, sink, state, docs, m.rewrite_version.unwrap_or(1), rearranges, relayouts).await?;
    crate::util::failpoint::hit("rewrite-committed");
    // Groups waiting for their segment (in a format that publishes) are
    // in no version: their outputs wait in their place. (A hive folder's
    // readers see every group; a document of an older release may say
    // otherwise.)
    let publishes = sink.format().publishes();
    let waiting: Vec<&Rewrite> = docs.iter().filter(|d| publishes && !d.live).collect();
    reveal(sink, waiting.iter().flat_map(|d| d.outputs.iter())).await?;
    state.apply_rewrites(docs).await?;
    crate::util::failpoint::hit("rewrite-checkpointed");
    set_records(state, docs).await?;
    for d in waiting {
        delete(state, d.inputs.iter()).await?;
    }
    Ok(())
}

async fn reveal(sink: &Sink, files: impl Iterator<Item = &CommittedFile>) -> Result<(), RunError> {
    futures::stream::iter(files)
        .map(|f| sink.reveal(&f.path))
        .buffer_unordered(IO_AT_ONCE)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

async fn delete(state: &StateStore, files: impl Iterator<Item = &String>) -> Result<(), RunError> {
    futures::stream::iter(files)
        .map(|rel| state.delete_data(rel))
        .buffer_unordered(IO_AT_ONCE)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// Table by table, the live groups' outputs revealed and made to replace
/// their inputs (`rearranges`: the rows stay, e.g. Delta's `OPTIMIZE`,
/// `dataChange = false`; else a data change, for derived tables), with the
/// transaction `(chainetl-<job>-relayout, version)` and each unit's and
/// the compactions' versions; where the table's partition columns or
/// column types change, the same change gives it its new layout. In a
/// format that publishes, the table's outputs are revealed before its one
/// commit (no reader sees them until it); in a hive folder, whose readers
/// see a file once revealed, a group's outputs are revealed just before
/// its inputs are deleted, so a reader sees one group's rows twice at
/// most, for as long as that takes.
async fn replace(
    spec: &Spec,
    sink: &Arc<Sink>,
    state: &StateStore,
    docs: &[Rewrite],
    version: i64,
    rearranges: bool,
    relayouts: bool,
) -> Result<(), RunError> {
    let units = state.load_units().await?;
    let publishes = sink.format().publishes();
    let mut tables: BTreeMap<String, Vec<&Rewrite>> = BTreeMap::new();
    for d in docs.iter().filter(|d| d.live || !publishes) {
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
    // A table of the job holding none of its files still takes its new
    // partition columns or types.
    for table in schemas.keys().filter(|_| relayouts) {
        if !tables.contains_key(table) {
            tables.insert(table.clone(), Vec::new());
        }
    }
    for (table, docs) in tables {
        let dir = format!("{table}/");
        let outputs: Vec<&CommittedFile> = docs
            .iter()
            .flat_map(|d| d.outputs.iter())
            .filter(|f| f.path.starts_with(&dir))
            .collect();
        if publishes {
            reveal(sink, outputs.iter().copied()).await?;
            crate::util::failpoint::hit("rewrite-published");
        }
        let mut joining = vec![Joining {
            files: outputs.iter().map(|f| Stored::at(f.path.clone(), f.bytes, Some(f.rows))).collect(),
            // The rewrite's files have their own schema.
            schema: None,
            txn: Some((relayout_app_id(spec), version)),
            adopted: false,
        }];
        let version_of = |txn| Joining {
            files: Vec::new(),
            schema: None,
            txn: Some(txn),
            adopted: false,
        };
        for d in &docs {
            if let Some(u) = &d.unit
                && units.contains_key(u)
            {
                joining.push(version_of((unit_app_id(state, u), d.next_seq as i64)));
            }
        }
        if let Some(g) = docs.iter().filter(|d| d.unit.is_none()).map(|d| d.generation).max() {
            joining.push(version_of((compaction_app_id(spec), g as i64)));
        }
        let r = Change {
            joining,
            removes: docs
                .iter()
                .flat_map(|d| d.inputs.iter())
                .filter(|r| r.starts_with(&dir))
                .cloned()
                .collect(),
            rearranges,
            again: true,
            schema: schemas.get(&table).cloned(),
            // Only when the spec changed them: a column a newer release
            // added is never dropped here.
            relayout: relayouts,
            ..Change::default()
        };
        let doomed: HashSet<String> = sink.format().commit(sink, &table, r).await?.to_delete.into_iter().collect();
        crate::util::failpoint::hit("during-rewrite-commit");
        for d in &docs {
            if !publishes {
                reveal(sink, d.outputs.iter().filter(|f| f.path.starts_with(&dir))).await?;
            }
            delete(state, d.inputs.iter().filter(|r| doomed.contains(*r))).await?;
            crate::util::failpoint::hit("during-rewrite-swap");
        }
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
