//! The step after a unit's checkpoint in a table format that publishes
//! ([`crate::sink::format::TableFormat::publishes`], Delta): publishing
//! the files the checkpoint counts to their tables.
//!
//! # Order, and why nothing is added twice
//!
//! A unit's commit makes its files durable, then writes its checkpoint
//! (the cursor after them, the files, `next_seq`), then publishes: one
//! Delta commit per table, adding the files with the transaction
//! identifier `(chainetl-<job>-<unit>, next_seq)`. So:
//!
//! - a crash before the checkpoint leaves files no checkpoint counts:
//!   orphans, never in a log (removed by the next run like in `parquet`);
//! - a crash between the checkpoint and the Delta commit leaves files the
//!   checkpoint counts that the log lacks: the next run publishes them
//!   ([`reconcile`]) — the files of the unit's checkpoint with a sequence
//!   at or above the version the log has for the unit, in a commit that
//!   records `next_seq`;
//! - a crash after the Delta commit: the log's version for the unit is
//!   `next_seq`, so nothing is left to publish.
//!
//! Whatever the checkpoint says, the log decides: every publication is a
//! commit conditional on the unit's version in the log (checked again on
//! every retry after a conflict), so two processes publishing the same
//! files add them once.
//!
//! A unit's last publication (it is done) is followed by a checkpoint
//! marked `published`, so later runs look only at units not so marked —
//! at most the units in flight when a run died.
//!
//! # Whole changes
//!
//! Some files must join a table in one commit with the removal of others,
//! and are held until then:
//!
//! - an incremental export's units publish when their segment closes,
//!   checked against the chain: the whole segment in one commit a table,
//!   removing what a reorg repair rewound ([`publish_segment`]);
//! - a unit exported again (`verify --repair`, a dissolved compaction)
//!   publishes once it and its group are done, removing the files it
//!   replaces ([`publish_replacing`]).
//!
//! Each such commit carries every unit's transaction id, so once it is in
//! the log its removes are taken as made too (`sink::format::delta::table::Change`).

use super::setup::Shared;
use crate::job::error::UnitError;
use crate::plan::Unit;
use crate::sink::format::{Change, Joining, Stored};
use crate::sink::{SinkError, WrittenFile};
use crate::state::{CommittedFile, StateError, UnitState};
use arrow_schema::SchemaRef;

/// The application id of `unit`'s transactions.
fn app_id(shared: &Shared, unit: &str) -> String {
    crate::job::tables::unit_app_id(&shared.state, unit)
}

/// Whether `unit`'s files wait to be published with its whole segment
/// ([`publish_segment`]): an incremental export's, where files are
/// published.
pub(crate) fn held(shared: &Shared, unit: &Unit) -> bool {
    shared.sink.format().publishes() && shared.spec.exports.get(unit.export).is_some_and(|e| e.incremental.is_some())
}

fn stored(f: &CommittedFile) -> Stored {
    Stored::at(f.path.clone(), f.bytes, Some(f.rows))
}

/// Publishes an incremental export's segment, checked against the chain,
/// in one commit a table: every file of its units (one transaction id
/// each), and the removal of `replacing` (what a reorg repair rewound)
/// still in the table. A commit a crash left is found by its transaction
/// ids and not made again.
pub(crate) async fn publish_segment(
    shared: &Shared,
    units: &[Unit],
    states: &std::collections::HashMap<String, UnitState>,
    replacing: &[String],
) -> Result<(), UnitError> {
    if !shared.sink.format().publishes() {
        return Ok(());
    }
    let mut by_table: Whole = Default::default();
    for unit in units {
        let Some(st) = states.get(&unit.id) else { continue };
        for (table, schema) in shared.unit_tables(unit) {
            let dir = format!("{table}/");
            let files: Vec<Stored> = st.committed.iter().filter(|f| f.path.starts_with(&dir)).map(stored).collect();
            if !files.is_empty() {
                by_table.entry(table).or_default().0.push(Joining {
                    files,
                    schema: Some(schema),
                    txn: Some((app_id(shared, &unit.id), st.next_seq as i64)),
                    adopted: false,
                });
            }
        }
    }
    let restarted = units.iter().filter_map(|u| states.get(&u.id)).flat_map(|st| st.replaces.iter());
    for r in replacing.iter().chain(restarted) {
        if let Some((table, _)) = r.split_once('/') {
            by_table.entry(table.to_string()).or_default().1.push(r.clone());
        }
    }
    publish_whole(shared, by_table).await?;
    Ok(())
}

/// Each table's files to add (a batch a unit, with its transaction id)
/// and to remove (paths under the output root).
type Whole = std::collections::BTreeMap<String, (Vec<Joining>, Vec<String>)>;

/// Publishes `by_table`, one commit a table.
async fn publish_whole(shared: &Shared, by_table: Whole) -> Result<(), SinkError> {
    crate::util::failpoint::hit("before-table-commit");
    for (table, (joining, removes)) in by_table {
        crate::sink::format::publish(&shared.sink, &table, Change::whole(joining, removes)).await?;
    }
    crate::util::failpoint::hit("after-table-commit");
    Ok(())
}

/// Publishes the files of one commit of `unit` (grouped by table: the
/// writers' tables, schemas and files) with version `next_seq`.
pub(crate) async fn publish(
    shared: &Shared,
    unit: &str,
    next_seq: u64,
    written: Vec<(String, SchemaRef, Vec<WrittenFile>)>,
) -> Result<(), UnitError> {
    let format = shared.sink.format();
    if !format.publishes() {
        return Ok(());
    }
    let txn = (app_id(shared, unit), next_seq as i64);
    crate::util::failpoint::hit("before-table-commit");
    let results = futures::future::join_all(
        written
            .iter()
            .filter(|(_, _, files)| !files.is_empty())
            .map(|(table, schema, files)| {
                let files = files.iter().map(Stored::written).collect();
                format.commit(&shared.sink, table, Change::publication(schema, files, txn.clone(), false))
            }),
    )
    .await;
    for r in results {
        r?;
    }
    crate::util::failpoint::hit("after-table-commit");
    Ok(())
}

/// Publishes what `st`'s checkpoint counts that `unit`'s tables lack (a
/// run died between the two); marks a done unit published.
///
/// A unit exported again ([`UnitState::replaces`]) publishes here, once
/// done: one commit a table removing its earlier files and adding its new
/// ones, with its transaction id — so a crash after that commit finds the
/// version in the table and commits nothing again.
pub(crate) async fn reconcile(shared: &Shared, unit: &Unit, st: &mut UnitState) -> Result<(), StateError> {
    let format = shared.sink.format();
    if !format.publishes() || st.published || (st.committed.is_empty() && !st.done) || held(shared, unit) {
        return Ok(());
    }
    // A unit exported again publishes once it is done, with its group.
    if !st.replaces.is_empty() || !st.together.is_empty() {
        if st.done {
            publish_replacing(shared, st).await?;
        }
        return Ok(());
    }
    let app = app_id(shared, &unit.id);
    let prefix = shared.state.file_prefix(&unit.id);
    let mut added = 0;
    for (table, schema) in shared.unit_tables(unit) {
        let dir = format!("{table}/");
        let files: Vec<_> = st.committed.iter().filter(|f| f.path.starts_with(&dir)).collect();
        if files.is_empty() {
            continue;
        }
        let in_table = format.recorded_version(&shared.sink, &table, &app).await?;
        let files: Vec<Stored> = files
            .into_iter()
            .filter(|f| seq_of(&f.path, &prefix).is_none_or(|s| (s as i64) >= in_table))
            .map(stored)
            .collect();
        if files.is_empty() {
            continue;
        }
        added += files.len();
        let change = Change::publication(&schema, files, (app.clone(), st.next_seq as i64), true);
        crate::sink::format::publish(&shared.sink, &table, change).await?;
    }
    if added > 0 {
        tracing::info!(
            unit = %unit.id,
            files = added,
            "published files an interrupted run had checkpointed but not yet added to the {}",
            format.log_words()
        );
    }
    if st.done {
        st.published = true;
        shared.state.save_unit(st).await?;
    }
    Ok(())
}

/// Publishes a done unit exported again ([`UnitState::replaces`]) with
/// the rest of its group ([`UnitState::together`]) once every one is done
/// (the last to finish publishes; until then nothing): one commit a
/// table adding every member's files, each with its transaction id, and
/// removing every file they replace that the table still has. Then each
/// member is marked published. A crash after a commit leaves its
/// transaction ids in the table: publishing again commits nothing twice.
pub(crate) async fn publish_replacing(shared: &Shared, st: &mut UnitState) -> Result<(), StateError> {
    if !shared.sink.format().publishes() {
        return Ok(());
    }
    let mut members = vec![st.clone()];
    if !st.together.is_empty() {
        let states = shared.state.load_units().await?;
        for id in &st.together {
            if *id == st.unit {
                continue;
            }
            match states.get(id) {
                // Restarted with this group and done.
                Some(s) if s.done && s.together.contains(&st.unit) => members.push(s.clone()),
                // Published by the group's commit already (its state
                // marked before this one's).
                Some(s) if s.done && s.published && s.together.is_empty() => {}
                // Not restarted yet (a repair still dissolving), or not done.
                _ => return Ok(()),
            }
        }
    }
    let mut by_table: Whole = Default::default();
    for m in &members {
        let mut parts: std::collections::BTreeMap<String, Vec<Stored>> = Default::default();
        for f in &m.committed {
            let table = f.path.split('/').next().unwrap_or_default().to_string();
            parts.entry(table).or_default().push(stored(f));
        }
        for (table, files) in parts {
            by_table.entry(table).or_default().0.push(Joining {
                files,
                // Its merges' files have their own schema.
                schema: None,
                txn: Some((app_id(shared, &m.unit), m.next_seq as i64)),
                adopted: false,
            });
        }
        for r in &m.replaces {
            if let Some((table, _)) = r.split_once('/') {
                let removes = &mut by_table.entry(table.to_string()).or_default().1;
                if !removes.contains(r) {
                    removes.push(r.clone());
                }
            }
        }
    }
    publish_whole(shared, by_table).await?;
    tracing::info!(unit = %st.unit, units = members.len(), "published units exported again, replacing their earlier files in one commit a table");
    for mut m in members.into_iter().skip(1) {
        m.published = true;
        m.replaces.clear();
        m.together.clear();
        shared.state.save_unit(&m).await?;
    }
    st.published = true;
    st.replaces.clear();
    st.together.clear();
    shared.state.save_unit(st).await?;
    Ok(())
}

/// The sequence of file `path` of the unit whose files are named
/// `<prefix>-<seq>.parquet`.
fn seq_of(path: &str, prefix: &str) -> Option<u64> {
    let name = path.rsplit('/').next()?;
    name.strip_prefix(prefix)?.strip_prefix('-')?.strip_suffix(".parquet")?.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_files_sequence_is_read_from_its_name() {
        assert_eq!(super::seq_of("events/chain=base/j-e0-u1-000012.parquet", "j-e0-u1"), Some(12));
        assert_eq!(super::seq_of("events/chain=base/other-000012.parquet", "j-e0-u1"), None);
    }
}
