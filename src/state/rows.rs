//! Counting rows for `verify`: the rows readers see, per table and chain,
//! against the rows the job committed — so a row lost with every file in
//! place (a unit file deleted and recorded as compacted when no compacted
//! file holds its rows) is found, not only a file missing or changed.
//!
//! # The ledger
//!
//! Every file a unit committed is in its checkpoint with its row count
//! (`committed`, kept through compactions and rewrites, which only add the
//! unit's new files and drop the ones they rewrote). A committed file is
//! either still a file readers see, or named by a compaction record's
//! `replaced`: that record's compacted files hold its rows. Records whose
//! `replaced` lists share a file are one *group* (a rewrite into another
//! layout spreads one compacted partition over several, each record
//! naming every file the partition replaced). For each group:
//!
//! > rows of the group's compacted files = rows of the distinct unit files
//! > it replaced, as their checkpoints counted them
//!
//! Fewer: rows lost, of the group's units (repairing them dissolves the
//! group and exports them again). More: rows twice.
//!
//! A file no checkpoint counts — a unit's of a closed period or segment
//! (its checkpoint dropped once the segment closed) — is counted with the
//! rows the record's `replaced_rows` says the compaction took from it. A
//! group naming a file neither counts (a record written before records
//! counted rows; a decoded table made from compacted raw files, whose
//! record names the units by the files they would have had in it) is
//! checked file by file only, and left out of the totals on both sides;
//! [`Counted::uncounted`] says how many.
//!
//! The rows of every file counted are those its checkpoint or record
//! recorded: `verify`'s file checks hold each file to them (its checksum,
//! or its footer's row count), so they are the rows readers see.

use super::{Compaction, FileProblem, JobFile, UnitState};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Rows of one table and chain.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct TableRows {
    /// The table.
    pub table: String,
    /// The chain; None for rows of compacted files holding several
    /// chains (and of the files they replaced).
    pub chain: Option<String>,
    /// Rows the job committed.
    pub committed: u64,
    /// Rows readers see.
    pub seen: u64,
}

/// What counting found.
#[derive(Debug, Default)]
pub(super) struct Counted {
    /// Groups of compacted files holding other than the rows they replaced.
    pub(super) problems: Vec<FileProblem>,
    /// Per table and chain, sorted.
    pub(super) tables: Vec<TableRows>,
    /// Compacted partitions checked file by file only (see the module doc).
    pub(super) uncounted: usize,
}

/// What the job's records say, for counting.
pub(super) struct Ledger<'a> {
    /// Every unit's checkpoint (those a repair is exporting again left out).
    pub states: Vec<&'a UnitState>,
    /// The compaction records with no operation in progress.
    pub compactions: &'a [Compaction],
    /// Files readers see (a table's current version where the format
    /// publishes, else storage).
    pub live: HashSet<&'a str>,
    /// Files of operations in progress: not counted.
    pub in_flight: &'a HashSet<String>,
    /// The format publishes: a unit's files are in its tables once it is
    /// published.
    pub publishes: bool,
}

/// The chain of a unit id (`e<i>-<dataset>-<chain>-…`).
fn chain_of(unit: &str) -> Option<&str> {
    unit.split('-').nth(2)
}

fn table_of(rel: &str) -> &str {
    rel.split('/').next().unwrap_or_default()
}

impl Ledger<'_> {
    /// Counts the rows (see the module doc); `unit_of` names the unit of a
    /// file name of the job's.
    pub(super) fn count(&self, unit_of: impl Fn(&str) -> Option<String>) -> Counted {
        let mut committed: HashMap<&str, (&str, u64)> = HashMap::new();
        for st in &self.states {
            for f in &st.committed {
                committed.insert(f.path.as_str(), (st.unit.as_str(), f.rows));
            }
        }
        let groups = groups(self.compactions);
        let mut out = Counted::default();
        let mut totals: BTreeMap<(String, Option<String>), (u64, u64)> = BTreeMap::new();
        // Unit files whose rows an uncounted group holds: on neither side.
        let mut uncounted_files: HashSet<&str> = HashSet::new();
        let mut several: HashSet<&str> = HashSet::new();
        for group in groups {
            let records: Vec<&Compaction> = group.iter().map(|&i| &self.compactions[i]).collect();
            let replaced: BTreeSet<&str> = records.iter().flat_map(|c| c.replaced.iter().map(String::as_str)).collect();
            let files = records.iter().flat_map(|c| c.files.iter());
            if replaced.iter().any(|r| self.in_flight.contains(*r)) || files.clone().any(|f| self.in_flight.contains(&f.path)) {
                uncounted_files.extend(replaced.iter().copied());
                continue;
            }
            // Each replaced file's rows: its checkpoint's, else the
            // record's (a unit whose checkpoint a closed segment dropped).
            let recorded: HashMap<&str, u64> = records
                .iter()
                .flat_map(|c| c.replaced_rows.iter().map(|(p, r)| (p.as_str(), *r)))
                .collect();
            let mut known: Vec<(String, u64)> = Vec::new();
            let mut by_record: Vec<(&str, String, u64)> = Vec::new();
            for r in &replaced {
                if let Some((unit, rows)) = committed.get(r) {
                    known.push((unit.to_string(), *rows));
                } else if let (Some(rows), Some(unit)) = (recorded.get(r), r.rsplit('/').next().and_then(&unit_of)) {
                    known.push((unit.clone(), *rows));
                    by_record.push((r, unit, *rows));
                }
            }
            if known.len() != replaced.len() {
                out.uncounted += records.len();
                uncounted_files.extend(replaced.iter().copied());
                continue;
            }
            let held: u64 = files.map(|f| f.rows).sum();
            let chains: BTreeSet<&str> = known.iter().map(|(unit, _)| chain_of(unit).unwrap_or_default()).collect();
            let expected: u64 = known.iter().map(|(_, rows)| rows).sum();
            let table = table_of(&records[0].partition).to_string();
            // Rows of compacted files holding several chains are counted
            // for none of them, on both sides.
            let chain = match chains.iter().collect::<Vec<_>>().as_slice() {
                [one] => Some(one.to_string()),
                _ => {
                    several.extend(replaced.iter().copied());
                    None
                }
            };
            // Rows no checkpoint counts are the job's by the record.
            for (_, unit, rows) in &by_record {
                let c = chain.as_ref().and(chain_of(unit)).map(str::to_string);
                totals.entry((table.clone(), c)).or_default().0 += rows;
            }
            totals.entry((table, chain)).or_default().1 += held;
            if held != expected {
                out.problems.push(problem(&records, &replaced, held, expected, &unit_of));
            }
        }
        let replaced_anywhere: HashSet<&str> = self
            .compactions
            .iter()
            .flat_map(|c| c.replaced.iter().map(String::as_str))
            .collect();
        for st in &self.states {
            let chain = chain_of(&st.unit).map(str::to_string);
            for f in st.committed.iter().filter(|f| !uncounted_files.contains(f.path.as_str())) {
                if self.in_flight.contains(&f.path) {
                    continue;
                }
                let replaced = replaced_anywhere.contains(f.path.as_str());
                let live = self.live.contains(f.path.as_str());
                // `delta`: a unit's files join its tables once it is done.
                if self.publishes && !live && !replaced && !st.published {
                    continue;
                }
                let chain = if several.contains(f.path.as_str()) { None } else { chain.clone() };
                let e = totals.entry((table_of(&f.path).to_string(), chain)).or_default();
                e.0 += f.rows;
                if live && !replaced {
                    e.1 += f.rows;
                }
            }
        }
        out.tables = totals
            .into_iter()
            .map(|((table, chain), (committed, seen))| TableRows {
                table,
                chain,
                committed,
                seen,
            })
            .collect();
        out
    }
}

/// The records in groups: those whose `replaced` share a file are one.
/// Records naming no file are left out.
fn groups(records: &[Compaction]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..records.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, c) in records.iter().enumerate() {
        for r in &c.replaced {
            match first.get(r.as_str()) {
                Some(&j) => {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    parent[a] = b;
                }
                None => {
                    first.insert(r.as_str(), i);
                }
            }
        }
    }
    let mut out: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, c) in records.iter().enumerate() {
        if c.files.is_empty() && c.replaced.is_empty() {
            continue;
        }
        out.entry(root(&mut parent, i)).or_default().push(i);
    }
    out.into_values().collect()
}

/// The problem of a group holding `held` rows where the files it replaced
/// had `expected`.
fn problem(
    records: &[&Compaction],
    replaced: &BTreeSet<&str>,
    held: u64,
    expected: u64,
    unit_of: &impl Fn(&str) -> Option<String>,
) -> FileProblem {
    let units: Vec<String> = replaced
        .iter()
        .filter_map(|r| r.rsplit('/').next().and_then(unit_of))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let at = match records {
        [one] => one.partition.clone(),
        more => format!("{} (and {} more partitions sharing its files)", more[0].partition, more.len() - 1),
    };
    let what = if held < expected {
        format!(
            "{} rows missing: its compacted files hold {held} rows, the {} unit files they replaced {expected} \
             (every file in place, the rows gone)",
            expected - held,
            replaced.len()
        )
    } else {
        format!(
            "{} rows twice: its compacted files hold {held} rows, the {} unit files they replaced {expected}",
            held - expected,
            replaced.len()
        )
    };
    FileProblem {
        unit: units.first().cloned().unwrap_or_default(),
        units,
        path: at,
        what,
    }
}

impl JobFile {
    /// The unit of a unit file.
    pub(super) fn unit(self) -> Option<String> {
        match self {
            JobFile::Unit(u, _) => Some(u),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::CommittedFile;

    /// Files by path and rows.
    fn committed(files: &[(&str, u64)]) -> Vec<CommittedFile> {
        files
            .iter()
            .map(|(p, rows)| CommittedFile {
                path: p.to_string(),
                rows: *rows,
                ..Default::default()
            })
            .collect()
    }

    fn unit(id: &str, files: &[(&str, u64)]) -> UnitState {
        UnitState {
            unit: id.into(),
            done: true,
            committed: committed(files),
            ..Default::default()
        }
    }

    fn record(partition: &str, files: &[(&str, u64)], replaced: &[&str]) -> Compaction {
        Compaction {
            partition: partition.into(),
            files: committed(files),
            replaced: replaced.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn unit_of(name: &str) -> Option<String> {
        name.strip_prefix("j-")
            .map(|n| n.rsplit_once('-').map_or(n, |(u, _)| u).to_string())
    }

    fn count(states: &[UnitState], records: &[Compaction], live: &[&str]) -> Counted {
        let none = HashSet::new();
        Ledger {
            states: states.iter().collect(),
            compactions: records,
            live: live.iter().copied().collect(),
            in_flight: &none,
            publishes: false,
        }
        .count(unit_of)
    }

    #[test]
    fn a_unit_file_recorded_as_compacted_whose_rows_no_compacted_file_holds_is_rows_missing() {
        let a = unit(
            "e0-events-base-b0-9",
            &[
                ("events/d1/j-e0-events-base-b0-9-000000", 5),
                ("events/d2/j-e0-events-base-b0-9-000001", 3),
            ],
        );
        let b = unit("e0-events-base-b10-19", &[("events/d1/j-e0-events-base-b10-19-000000", 4)]);
        let exact = record(
            "events/d1",
            &[("events/d1/j-compacted-000001-000000", 9)],
            &["events/d1/j-e0-events-base-b0-9-000000", "events/d1/j-e0-events-base-b10-19-000000"],
        );
        let c = count(
            &[a.clone(), b.clone()],
            std::slice::from_ref(&exact),
            &["events/d2/j-e0-events-base-b0-9-000001"],
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(
            c.tables,
            [TableRows {
                table: "events".into(),
                chain: Some("base".into()),
                committed: 12,
                seen: 12
            }]
        );
        // The defect: the second day's file deleted, named as replaced.
        let mut lost = exact;
        lost.replaced.push("events/d2/j-e0-events-base-b0-9-000001".into());
        let c = count(&[a, b], &[lost], &[]);
        assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
        assert!(c.problems[0].what.starts_with("3 rows missing"), "{}", c.problems[0].what);
        assert_eq!(c.problems[0].units, ["e0-events-base-b0-9", "e0-events-base-b10-19"]);
        assert_eq!((c.tables[0].committed, c.tables[0].seen), (12, 9));
    }

    #[test]
    fn records_sharing_replaced_files_are_counted_as_one() {
        let a = unit("e0-events-base-b0-9", &[("events/d1/j-e0-events-base-b0-9-000000", 6)]);
        // A rewrite spread one compacted partition over two, each naming
        // the files it replaced.
        let r1 = record(
            "events/x=1",
            &[("events/x=1/j-compacted-000002-000000", 2)],
            &["events/d1/j-e0-events-base-b0-9-000000"],
        );
        let r2 = record(
            "events/x=2",
            &[("events/x=2/j-compacted-000002-000000", 4)],
            &["events/d1/j-e0-events-base-b0-9-000000"],
        );
        let c = count(std::slice::from_ref(&a), &[r1.clone(), r2], &[]);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!((c.tables[0].committed, c.tables[0].seen), (6, 6));
        let c = count(&[a], &[r1], &[]);
        assert!(c.problems[0].what.starts_with("4 rows missing"), "{:?}", c.problems);
    }

    #[test]
    fn a_file_of_a_closed_segment_is_counted_by_the_rows_its_record_took() {
        let mut r = record(
            "events/d1",
            &[("events/d1/j-compacted-000001-000000", 9)],
            &["events/d1/j-e0-events-base-b0-9-000000"],
        );
        r.replaced_rows.insert("events/d1/j-e0-events-base-b0-9-000000".into(), 9);
        let c = count(&[], std::slice::from_ref(&r), &[]);
        assert!(c.problems.is_empty() && c.uncounted == 0, "{:?}", c.problems);
        assert_eq!(
            (c.tables[0].chain.as_deref(), c.tables[0].committed, c.tables[0].seen),
            (Some("base"), 9, 9)
        );
        r.replaced.push("events/d2/j-e0-events-base-b0-9-000001".into());
        r.replaced_rows.insert("events/d2/j-e0-events-base-b0-9-000001".into(), 2);
        let c = count(&[], &[r], &[]);
        assert!(c.problems[0].what.starts_with("2 rows missing"), "{:?}", c.problems);
    }

    #[test]
    fn a_group_naming_a_file_no_checkpoint_counts_is_left_out_on_both_sides() {
        let r = record(
            "events/d1",
            &[("events/d1/j-compacted-000001-000000", 9)],
            &["events/d1/j-e0-events-base-b0-9-000000"],
        );
        let c = count(&[], &[r], &[]);
        assert!(c.problems.is_empty() && c.tables.is_empty());
        assert_eq!(c.uncounted, 1);
    }
}
