//! `chainetl verify`: checks that every file a checkpoint says was
//! committed is still there and as it was committed, and finds the
//! operations a process began and did not finish ([`Interrupted`]): their
//! files are in flight, neither damaged nor final, so they are reported as
//! the operation, never as problems of files.
//!
//! # Reading content
//!
//! Reading committed files back for `verify`: each file the state counts is
//! checked against what was recorded when it was committed — present, the
//! recorded size, and then either its content checksum (the default: the
//! whole file is read, [`Depth::Content`]) or its Parquet footer's row count
//! (`verify --quick`, and files committed before checksums were recorded).
//!
//! Files are read [`FILES_IN_FLIGHT`] at a time, each streamed (see
//! [`crate::storage::checksum`]), so memory stays bounded; [`Progress`] counts
//! files and bytes for the terminal. A file the store cannot read for a
//! reason of the store (not of the file) is an error, not a problem of the
//! file: `verify --repair` must not redo a unit because the store was
//! briefly unreachable.

use super::{StateError, StateStore, UnitState};
use futures::{StreamExt, TryStreamExt};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

/// A committed file that is not as its checkpoint says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    /// The unit that committed it; empty for a file no state accounts for,
    /// which no unit's export can repair. For a compacted file, the first
    /// of `units`.
    pub unit: String,
    /// Every unit whose rows the file holds (a compacted file holds
    /// several; a unit file, its one unit).
    pub units: Vec<String>,
    /// Path relative to the output root.
    pub path: String,
    /// What is wrong.
    pub what: String,
}

/// The kind of an operation begun and not finished, as scripts read it
/// (`compaction_swap`, `compaction`, `repair`, `conversion`, `rewrite`,
/// `fresh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// New files written, old ones not all deleted.
    CompactionSwap,
    /// New files written hidden, before the swap.
    Compaction,
    /// Units being exported again (`verify --repair`).
    Repair,
    /// A change of the output's format, made from its rows.
    Conversion,
    /// A rewrite of the output's files into another layout.
    Rewrite,
    /// A `--fresh` clearing.
    Fresh,
}

impl Operation {
    /// The word scripts read.
    pub fn name(self) -> &'static str {
        match self {
            Operation::CompactionSwap => "compaction_swap",
            Operation::Compaction => "compaction",
            Operation::Repair => "repair",
            Operation::Conversion => "conversion",
            Operation::Rewrite => "rewrite",
            Operation::Fresh => "fresh",
        }
    }

    /// Whether a run finishes it (rather than `compact`'s swap, with no
    /// unit to run).
    pub fn needs_run(self) -> bool {
        !matches!(self, Operation::CompactionSwap | Operation::Compaction)
    }

    /// Whether it changes the output's format or layout.
    pub fn changes_output(self) -> bool {
        matches!(self, Operation::Conversion | Operation::Rewrite)
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An operation a process began and did not finish, as the job's state
/// records it: until it ends, readers of the output see a table that is not
/// the job's (rows twice, or missing), and the files it touches are in
/// flight, not damaged.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Interrupted {
    /// Which operation.
    pub kind: Operation,
    /// Where: a partition (`events/chain=base/date=2025-05-31`), or the job.
    pub at: String,
    /// What was interrupted, in words.
    pub what: &'static str,
    /// What readers see until it ends.
    pub readers: &'static str,
    /// What finishes it.
    pub finish: &'static str,
}

impl Interrupted {
    /// The operations `compactions` record as begun and not finished.
    pub fn of_compactions(compactions: &[super::Compaction]) -> Vec<Interrupted> {
        let mut out = Vec::new();
        for c in compactions {
            let (kind, what, readers, finish) = if !c.dissolving.is_empty() {
                (
                    Operation::Repair,
                    "a repair (verify --repair) was interrupted",
                    "rows of the units being exported again may be missing",
                    "the next run or `chainetl verify SPEC --repair` finishes it (exporting those units again)",
                )
            } else {
                match &c.pending {
                    Some(p) if p.swapping => (
                        Operation::CompactionSwap,
                        "a compaction swap was interrupted (new files written, old ones not all deleted)",
                        "rows twice (new files beside old ones), or missing",
                        "`chainetl compact SPEC` or the next run finishes it, with no request to the service",
                    ),
                    Some(_) => (
                        Operation::Compaction,
                        "a compaction was interrupted before its swap",
                        "the table as it was (the new files are hidden)",
                        "`chainetl compact SPEC` or the next run rolls it back, with no request to the service",
                    ),
                    None => continue,
                }
            };
            out.push(Interrupted {
                kind,
                at: c.partition.clone(),
                what,
                readers,
                finish,
            });
        }
        out
    }

    /// An interrupted change of the output's format (`migration.json`).
    pub fn conversion(m: &super::Migration) -> Interrupted {
        if !m.layout.is_empty() {
            return Interrupted {
                kind: Operation::Rewrite,
                at: format!("the job's output ({})", crate::spec::changes::lines_of(&m.layout)),
                what: "a rewrite of the output's files into another layout was interrupted",
                // What this output's readers see: its format is one.
                readers: if m.from == crate::spec::OutputFormat::Parquet {
                    "a group of files can be seen twice while its new files are published and the old deleted"
                } else {
                    "each table in the old layout until its one commit"
                },
                finish: "`chainetl run` with the spec that changed the layout finishes it, with no request to the service",
            };
        }
        Interrupted {
            kind: Operation::Conversion,
            at: format!("the job's output, {} to {}", m.from, m.to),
            what: "a conversion of the output's format was interrupted",
            readers: if m.to == crate::spec::OutputFormat::Parquet {
                "each table whole in its old format; the files no version of it read are deleted before its log"
            } else {
                "each table whole in one format or the other: a table's one commit adds all its files at once"
            },
            finish: "`chainetl run` with the spec that changed the format finishes it, with no request to the service",
        }
    }

    /// A repair whose units (`pending` of them) are not all exported
    /// again yet (`repair.json`).
    pub fn repair(pending: usize) -> Interrupted {
        Interrupted {
            kind: Operation::Repair,
            at: format!("the job ({pending} unit{} to export again)", if pending == 1 { "" } else { "s" }),
            what: "a repair (verify --repair) was interrupted",
            readers: "rows of the units being exported again may be missing (or, where the format publishes, still \
                      in the files they replace)",
            finish: "the next run or `chainetl verify SPEC --repair` finishes it (exporting those units again)",
        }
    }

    /// An interrupted `--fresh`.
    pub fn fresh() -> Interrupted {
        Interrupted {
            kind: Operation::Fresh,
            at: "the job".into(),
            what: "a --fresh clearing was interrupted",
            readers: "part of the old output, being deleted",
            finish: "the next run finishes the clearing and exports the job again",
        }
    }
}

/// What [`StateStore::verify`] found.
#[derive(Debug, Default)]
pub struct Verified {
    /// Files missing or changed, and rows missing or twice.
    pub problems: Vec<FileProblem>,
    /// The rows readers see, per table and chain, against the rows the job
    /// committed (see [`super::rows`]).
    pub rows: Vec<super::TableRows>,
    /// Compacted partitions checked file by file only.
    pub uncounted: usize,
    /// The files and bytes readers see, a table ([`super::LiveTable`]),
    /// from the listing checked.
    pub tables: Vec<super::LiveTable>,
}

impl StateStore {
    /// Checks every file under `tables` the checkpoints say was committed:
    /// it exists, has the recorded size, and its content is as committed
    /// (see [`super::verify`] for `depth`). Checkpoints written before
    /// files were recorded are checked by sequence number (every sequence
    /// below `next_seq` exists). Then counts the rows (see
    /// [`super::rows`]).
    pub async fn verify(
        &self,
        tables: &BTreeSet<String>,
        states: &HashMap<String, UnitState>,
        depth: Depth,
        progress: &Progress,
    ) -> Result<Verified, StateError> {
        let listed = self.list_files(tables).await?;
        let all_sizes: HashMap<&str, u64> = listed.iter().map(|f| (f.rel.as_str(), f.bytes)).collect();
        // What the job's output holds: in the `delta` format the tables'
        // current versions (files they no longer have stay on storage for
        // earlier versions), else what storage holds.
        let present = match self.list_live_files(tables).await? {
            Some(live) => live,
            None => listed.clone(),
        };
        let files: Vec<(String, String, u64, u64)> = present
            .iter()
            .filter_map(|f| match &f.kind {
                super::JobFile::Unit(unit, seq) => Some((f.rel.clone(), unit.clone(), *seq, f.bytes)),
                _ => None,
            })
            .collect();
        let all = self.load_compactions().await?;
        // Records of an operation in progress ([`Interrupted`]): their
        // files, and the units a repair is exporting again, are in flight.
        // A compaction before its swap leaves the table as it was: only its
        // hidden outputs are in flight, its record is checked as settled.
        let (in_flight, dissolving) = in_flight(&all);
        let busy = |c: &super::Compaction| c.pending.as_ref().is_some_and(|p| p.swapping) || !c.dissolving.is_empty();
        let compactions: Vec<_> = all.iter().filter(|c| !busy(c)).cloned().collect();
        let in_flight_names: HashSet<&str> = in_flight.iter().filter_map(|r| r.rsplit('/').next()).collect();
        // Files a compaction replaced are accounted for by its files.
        let replaced: HashSet<&str> = compactions.iter().flat_map(|c| c.replaced.iter().map(String::as_str)).collect();
        let replaced_names: HashSet<&str> = replaced.iter().filter_map(|r| r.rsplit('/').next()).collect();
        let mut seqs: HashMap<&str, HashSet<u64>> = HashMap::new();
        for (_, unit, seq, _) in &files {
            seqs.entry(unit.as_str()).or_default().insert(*seq);
        }
        let mut problems = Vec::new();
        let mut checks = Vec::new();
        let mut ids: Vec<&String> = states.keys().filter(|id| !dissolving.contains(id.as_str())).collect();
        ids.sort();
        for id in ids {
            let st = &states[id];
            let problem = |path: &str, what: String| FileProblem {
                unit: id.clone(),
                units: vec![id.clone()],
                path: path.into(),
                what,
            };
            if st.committed.is_empty() && st.files == 0 {
                // Nothing written (a unit without rows), whatever its
                // sequence (one after a `--fresh` starts above 0).
                continue;
            }
            if st.committed.is_empty() {
                let present = seqs.get(id.as_str());
                for seq in (0..st.next_seq).filter(|s| !present.is_some_and(|p| p.contains(s))) {
                    let name = crate::sink::file_name(&self.file_prefix(id), seq);
                    if replaced_names.contains(name.as_str()) || in_flight_names.contains(name.as_str()) {
                        continue;
                    }
                    problems.push(problem(&name, "missing".into()));
                }
                continue;
            }
            checks.extend(
                st.committed
                    .iter()
                    .filter(|f| !replaced.contains(f.path.as_str()) && !in_flight.contains(&f.path))
                    .map(|f| Check {
                        file: f.clone(),
                        by: "committed",
                        unit: id.clone(),
                        units: std::sync::Arc::from([id.clone()]),
                    }),
            );
        }
        let files: Vec<_> = files.into_iter().filter(|(rel, ..)| !in_flight.contains(rel)).collect();
        let (twice, compacted) = self.verify_compacted(&compactions, &files, &replaced);
        problems.extend(twice);
        checks.extend(compacted);
        problems.extend(self.check_files(checks, &all_sizes, depth, progress).await?);
        // Compacted files a repair's units are to replace are in flight too.
        let mut in_flight = in_flight;
        in_flight.extend(states.values().flat_map(|s| s.replaces.iter().cloned()));
        problems.extend(self.unnamed_compacted(&compactions, &present, &in_flight));
        // (A swap in flight may be in the log before its record says so.)
        let gone: HashSet<&str> = replaced.iter().copied().chain(in_flight.iter().map(String::as_str)).collect();
        problems.extend(self.verify_tables(tables, states, &all_sizes, &gone).await?);
        let ledger = super::rows::Ledger {
            states: states
                .iter()
                .filter(|(id, _)| !dissolving.contains(id.as_str()))
                .map(|(_, s)| s)
                .collect(),
            compactions: &compactions,
            live: present.iter().map(|f| f.rel.as_str()).collect(),
            in_flight: &in_flight,
            publishes: self.sink.format().publishes(),
        };
        let counted = ledger.count(|name| self.classify(name).and_then(super::JobFile::unit));
        problems.extend(counted.problems);
        Ok(Verified {
            problems,
            rows: counted.tables,
            uncounted: counted.uncounted,
            tables: super::LiveTable::tally(tables, &present),
        })
    }

    /// The side of [`StateStore::verify`] of a table format that records
    /// what readers see (Delta's log): every file of this job in a table's
    /// current version exists with the size the log
    /// records (and the rows, where a checkpoint counts the file: those of
    /// a closed aligned period have none left), and every file of a
    /// published unit is in its table's current version (else readers miss
    /// its rows).
    async fn verify_tables(
        &self,
        tables: &BTreeSet<String>,
        states: &HashMap<String, UnitState>,
        sizes: &HashMap<&str, u64>,
        replaced: &HashSet<&str>,
    ) -> Result<Vec<FileProblem>, StateError> {
        let format = self.sink.format();
        let (table_words, log_words) = (format.table_words(), format.log_words());
        let mut owner: HashMap<&str, (&str, Option<u64>)> = HashMap::new();
        for (id, st) in states {
            // A file a unit exported again replaces is still its own.
            for r in &st.replaces {
                owner.insert(r.as_str(), (id.as_str(), None));
            }
            for f in &st.committed {
                owner.insert(f.path.as_str(), (id.as_str(), Some(f.rows)));
            }
        }
        let mut problems = Vec::new();
        for table in tables {
            if let Some((path, what)) = format.pointer_behind(&self.sink, table).await? {
                // No unit's: `verify --repair` points it first.
                problems.push(FileProblem {
                    unit: String::new(),
                    units: Vec::new(),
                    path,
                    what,
                });
            }
            let Some(live) = format.live_files(&self.sink, table).await? else {
                // The folder's listing is what readers see: checked above.
                return Ok(Vec::new());
            };
            let mut in_table = HashSet::new();
            for f in live {
                let rel = format!("{table}/{}", f.path);
                let Some(name) = rel.rsplit('/').next() else { continue };
                // Compacted files are checked against their records.
                if !matches!(self.classify(name), Some(super::JobFile::Unit(..))) {
                    continue;
                }
                let (unit, rows) = owner.get(rel.as_str()).map_or(("", None), |(u, r)| (*u, *r));
                let problem = |what: String| FileProblem {
                    unit: unit.to_string(),
                    units: if unit.is_empty() { Vec::new() } else { vec![unit.to_string()] },
                    path: rel.clone(),
                    what,
                };
                match sizes.get(rel.as_str()) {
                    None => problems.push(problem(format!("in the {table_words}'s current version, but missing from storage"))),
                    Some(&b) if b != f.size => problems.push(problem(format!("{b} bytes, but the {log_words} records {}", f.size))),
                    _ => {}
                }
                if let (Some(r), Some(log)) = (rows, f.rows)
                    && r != log
                {
                    problems.push(problem(format!("{r} rows committed, but the {log_words} records {log}")));
                }
                in_table.insert(rel);
            }
            let dir = format!("{table}/");
            for (id, st) in states.iter().filter(|(_, st)| st.published) {
                for f in st
                    .committed
                    .iter()
                    .filter(|f| f.path.starts_with(&dir) && !in_table.contains(&f.path) && !replaced.contains(f.path.as_str()))
                {
                    problems.push(FileProblem {
                        unit: id.clone(),
                        units: vec![id.clone()],
                        path: f.path.clone(),
                        what: format!("committed, but not in the {table_words}'s current version (readers miss its rows)"),
                    });
                }
            }
        }
        Ok(problems)
    }

    /// A compacted file no record names (a record lost, the index restored
    /// from an older backup) holds rows that are also counted elsewhere, or
    /// whose units no record ties to it: nothing can repair that from state.
    fn unnamed_compacted(
        &self,
        compactions: &[super::Compaction],
        listed: &[super::Listed],
        in_flight: &HashSet<String>,
    ) -> Vec<FileProblem> {
        let named: HashSet<&str> = compactions.iter().flat_map(|c| c.files.iter().map(|f| f.path.as_str())).collect();
        listed
            .iter()
            .filter(|f| matches!(f.kind, super::JobFile::Compacted(..)) && !in_flight.contains(&f.rel))
            .filter(|f| !named.contains(f.rel.as_str()))
            .map(|f| FileProblem {
                unit: String::new(),
                units: Vec::new(),
                path: f.rel.clone(),
                what: format!(
                    "a compacted file, but no compaction record names it (its rows may be counted twice): \
                     restore {} from a backup that names it, or re-run with --fresh",
                    self.location(&format!("{}/compactions.json", self.dir))
                ),
            })
            .collect()
    }

    /// The compaction side of [`StateStore::verify`]: replaced unit files
    /// that are back (problems now), and every compacted file to check
    /// against its record.
    fn verify_compacted(
        &self,
        compactions: &[super::Compaction],
        files: &[(String, String, u64, u64)],
        replaced: &HashSet<&str>,
    ) -> (Vec<FileProblem>, Vec<Check>) {
        // A replaced file that is back (a unit exported again beside its
        // compacted rows) holds rows twice: repairing its unit dissolves
        // the partition and exports the rows once.
        let problems = files
            .iter()
            .filter(|(rel, ..)| replaced.contains(rel.as_str()))
            .map(|(rel, unit, _, _)| FileProblem {
                unit: unit.clone(),
                units: vec![unit.clone()],
                path: rel.clone(),
                what: "present, but a compaction already holds its rows (rows twice)".into(),
            })
            .collect();
        let units_of: Vec<Vec<String>> = compactions
            .iter()
            .map(|c| {
                c.replaced
                    .iter()
                    .filter_map(|r| r.rsplit('/').next().and_then(|n| self.classify(n)))
                    .filter_map(|k| match k {
                        super::JobFile::Unit(u, _) => Some(u),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let mut checks = Vec::new();
        for (c, own) in compactions.iter().zip(&units_of) {
            // Every unit a repair of this file exports again: its own, and
            // those of the partitions their rows share compacted files with.
            let (units, _) = super::repair_closure(&units_of, own);
            let unit = units.first().cloned().unwrap_or_default();
            let units: std::sync::Arc<[String]> = units.into();
            checks.extend(c.files.iter().map(|f| Check {
                file: f.clone(),
                by: "compacted",
                unit: unit.clone(),
                units: units.clone(),
            }));
        }
        (problems, checks)
    }
}

/// The files of operations in progress, and the units a repair among them
/// is exporting again: all the files of a swap or a repair; only the
/// outputs of a compaction before its swap (its inputs are still the table).
fn in_flight(records: &[super::Compaction]) -> (HashSet<String>, HashSet<&str>) {
    let mut files: HashSet<String> = HashSet::new();
    let mut dissolving: HashSet<&str> = HashSet::new();
    for c in records {
        match &c.pending {
            Some(p) if p.swapping || !c.dissolving.is_empty() => {
                files.extend(c.replaced.iter().cloned());
                files.extend(c.files.iter().map(|f| f.path.clone()));
                files.extend(p.inputs.iter().cloned());
                files.extend(p.outputs.iter().map(|f| f.path.clone()));
            }
            Some(p) => files.extend(p.outputs.iter().map(|f| f.path.clone())),
            None if !c.dissolving.is_empty() => {
                files.extend(c.replaced.iter().cloned());
                files.extend(c.files.iter().map(|f| f.path.clone()));
            }
            None => {}
        }
        dissolving.extend(c.dissolving.iter().map(String::as_str));
    }
    (files, dissolving)
}

/// Files read at once: enough to keep an object store's latency hidden,
/// few enough to leave the machine usable.
const FILES_IN_FLIGHT: usize = 4;

/// How deeply `verify` checks each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Depth {
    /// Size, then the whole content against its checksum.
    #[default]
    Content,
    /// Size and the footer's row count (two small reads per file).
    Quick,
}

/// What `verify` has done so far, and of how much (shared with a ticker).
#[derive(Debug, Default)]
pub struct Progress {
    /// Files to check.
    pub files: AtomicU64,
    /// Files checked.
    pub files_done: AtomicU64,
    /// Bytes of the files to read whole.
    pub bytes: AtomicU64,
    /// Bytes read so far.
    pub bytes_read: AtomicU64,
    /// Files checked by size and row count only, having no checksum.
    pub without_checksum: AtomicU64,
}

/// One file to check, as a checkpoint or compaction record recorded it.
#[derive(Debug, Clone)]
pub(super) struct Check {
    /// The file as committed.
    pub(super) file: super::CommittedFile,
    /// `committed` (a unit's file) or `compacted`.
    pub(super) by: &'static str,
    /// The unit reported, and every unit whose rows the file holds (shared
    /// by the files of a partition: a year's closure can be long).
    pub(super) unit: String,
    pub(super) units: std::sync::Arc<[String]>,
}

impl StateStore {
    /// The problems of `checks` (in their order), given the sizes listed.
    pub(super) async fn check_files(
        &self,
        checks: Vec<Check>,
        sizes: &HashMap<&str, u64>,
        depth: Depth,
        progress: &Progress,
    ) -> Result<Vec<FileProblem>, StateError> {
        let reads_whole = |c: &Check| depth == Depth::Content && c.file.checksum.is_some();
        progress.files.fetch_add(checks.len() as u64, Ordering::Relaxed);
        let whole: u64 = checks
            .iter()
            .filter(|c| reads_whole(c) && sizes.get(c.file.path.as_str()) == Some(&c.file.bytes))
            .map(|c| c.file.bytes)
            .sum();
        progress.bytes.fetch_add(whole, Ordering::Relaxed);
        if depth == Depth::Content {
            let bare = checks.iter().filter(|c| c.file.checksum.is_none()).count();
            progress.without_checksum.fetch_add(bare as u64, Ordering::Relaxed);
        }
        // The first error of the store stops the whole check (the rest
        // would be read for nothing).
        let found: Vec<Option<String>> = futures::stream::iter(checks.iter().map(|c| async move {
            let what = self
                .check_one(c, sizes.get(c.file.path.as_str()).copied(), reads_whole(c), progress)
                .await;
            progress.files_done.fetch_add(1, Ordering::Relaxed);
            what
        }))
        .buffered(FILES_IN_FLIGHT)
        .try_collect()
        .await?;
        Ok(checks
            .into_iter()
            .zip(found)
            .filter_map(|(c, what)| {
                Some(FileProblem {
                    unit: c.unit,
                    units: c.units.to_vec(),
                    path: c.file.path,
                    what: what?,
                })
            })
            .collect())
    }

    /// What is wrong with one file, if anything.
    async fn check_one(&self, c: &Check, size: Option<u64>, whole: bool, progress: &Progress) -> Result<Option<String>, StateError> {
        let f = &c.file;
        let missing = || {
            let extra = if c.by == "compacted" { ", compacted" } else { "" };
            format!("missing ({} rows{extra})", f.rows)
        };
        let Some(size) = size else {
            return Ok(Some(missing()));
        };
        if size != f.bytes {
            return Ok(Some(format!("changed: {size} bytes, {} when {}", f.bytes, c.by)));
        }
        if let (true, Some(want)) = (whole, &f.checksum) {
            let got = match crate::storage::checksum::of_file(self.storage(), &f.path, &progress.bytes_read).await {
                Ok(got) => got,
                // Deleted since it was listed.
                Err(e) if e.is_not_found() => return Ok(Some(missing())),
                Err(e) => return Err(StateError::io(&f.path, "reading", e)),
            };
            return Ok((&got != want).then(|| format!("changed: its content is not what was {} ({got}, {want} when {})", c.by, c.by)));
        }
        Ok(match self.parquet_rows(&f.path, size).await? {
            Ok(rows) if rows == f.rows => None,
            Ok(rows) => Some(format!("changed: {rows} rows, {} when {}", f.rows, c.by)),
            Err(e) => Some(format!("changed: not a readable Parquet file ({e})")),
        })
    }

    /// Rows in a Parquet file of `size` bytes, from its footer (the one
    /// footer reader, [`crate::sink::reader::footer_or_why`]). The outer
    /// error is the store's; the inner one says why the file is not a
    /// readable Parquet file.
    async fn parquet_rows(&self, rel: &str, size: u64) -> Result<Result<u64, String>, StateError> {
        let footer = crate::sink::reader::footer_or_why(self.storage(), rel, size)
            .await
            .map_err(|e| StateError::io(rel, "reading", e))?;
        Ok(footer.map(|m| m.file_metadata().num_rows().max(0) as u64))
    }
}
