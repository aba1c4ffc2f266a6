//! Derived tables made from the rows a job stored, with no request (see
//! `crate::spec`'s `ExportIdentity::derivable`): a rewrite whose groups
//! are one export's files of the tables the change derives from.
//!
//! - **Decoding added** to a raw events export that keeps its raw table
//!   (`also_raw = true`): each group's raw files are read back and decoded
//!   into the export's decoded tables. The raw files stay as they are (a
//!   group's document lists no input to delete); a unit's checkpoint then
//!   counts its decoded files too, and a compacted partition's rows become
//!   compacted files of each decoded table's partitions.
//! - **Other `u256` columns**: the export's decoded tables are written
//!   again with the spec's columns, the wide-integer ones computed from the
//!   stored decimal text (`crate::sink`'s relayout).
//!
//! Several exports may write one table — the usual shape is one export a
//! chain (or a window), each with its own window — and take the same
//! change together: what is decided is which exports' rows each file
//! holds (a unit's file, its unit's export; a compacted file, the exports
//! of the units whose files its record replaced), not which exports name
//! the table.
//!
//! Refused, before anything is written: a compacted partition holding rows
//! of an export the change does not derive alike (they cannot be told
//! apart), a decoded table another export writes without deriving it
//! alike, where the format makes tables (`delta`) a decoded table to make that is there already
//! (another job's: its layout is not checked until the swap, when the way
//! back is gone), and where a format never drops a table's columns
//! (`delta`) a `u256` column dropped (a table's
//! columns are only ever added).

use super::Group;
use crate::decode::abi::LogDecoder;
use crate::job::error::RunError;
use crate::sink::format::TableFormat;
use crate::spec::{JobIdentity, Spec};
use crate::state::JobState;
use std::collections::BTreeSet;
use std::sync::Arc;

/// One export's derived-table change.
pub(super) struct Derivation {
    /// The export's index.
    pub(super) export: usize,
    /// The tables read.
    pub(super) from: BTreeSet<String>,
    /// Decoding: the raw logs are decoded into its tables; None: the
    /// tables are written again with the spec's columns.
    pub(super) decoder: Option<Arc<LogDecoder>>,
}

/// The derived-table changes from the job as recorded to `spec`.
pub(super) fn derivations(spec: &Spec, job: &JobState) -> Result<Vec<Derivation>, RunError> {
    let Some(stored) = &job.identity else {
        return Ok(Vec::new());
    };
    let compared = stored.compare(&JobIdentity::of(spec));
    if compared.derived.is_empty() {
        return Ok(Vec::new());
    }
    let decoders = crate::job::tables::decoders(spec)?;
    let mut out = Vec::new();
    for &i in &compared.derived {
        let (Some(e), Some(was)) = (spec.exports.get(i), stored.exports.get(i)) else {
            continue;
        };
        let Some(decoding) = &e.decoding else {
            continue;
        };
        out.push(if was.keys.contains_key("decode") {
            Derivation {
                export: i,
                from: decoding.tables.iter().map(|t| t.table.clone()).collect(),
                decoder: None,
            }
        } else {
            Derivation {
                export: i,
                from: [e.dataset.name().to_string()].into(),
                decoder: decoders.get(i).cloned().flatten(),
            }
        });
    }
    Ok(out)
}

/// Refuses decoding into a table the format has made already (see the
/// module doc).
pub(super) async fn refuse_tables(spec: &Spec, sink: &Arc<crate::sink::Sink>, job: &JobState) -> Result<(), RunError> {
    for d in derivations(spec, job)? {
        for t in d.decoder.iter().flat_map(|dec| dec.tables()) {
            if sink.format().has_table(sink, &t.table).await? {
                return Err(RunError::Migration(format!(
                    "job `{}`: export[{}] would decode into a new {} table {}, but a table is there already (another \
                     job's?): give the decoded table another name (`table`), or move that table away",
                    spec.name, d.export, spec.output.format, t.table
                )));
            }
        }
    }
    Ok(())
}

/// The derivation a group's files belong to: its unit's export's, or,
/// for a compacted partition, that of the first export whose rows it
/// holds (see [`holding`]) that takes a change reading its table.
pub(super) fn of_group<'a>(spec: &Spec, derivations: &'a [Derivation], g: &Group) -> Option<&'a Derivation> {
    match (&g.unit, &g.partition) {
        (Some(u), _) => {
            let (export, _) = crate::job::maintain::compact::unit_export(u)?;
            derivations.iter().find(|d| d.export == export)
        }
        (None, Some(p)) => {
            let table = p.split('/').next().unwrap_or_default();
            holding(spec, g, table)
                .into_iter()
                .find_map(|e| derivations.iter().find(|d| d.export == e && d.from.contains(table)))
        }
        (None, None) => None,
    }
}

/// The exports whose rows a compacted partition of `table` holds: those
/// of the units whose files its record replaced, or, where it names none,
/// every export writing the table.
fn holding(spec: &Spec, g: &Group, table: &str) -> Vec<usize> {
    let named = exports_holding(spec, g);
    if !named.is_empty() {
        return named;
    }
    spec.exports
        .iter()
        .filter(|e| e.tables().iter().any(|t| t == table))
        .map(|e| e.index)
        .collect()
}

/// The exports whose rows a compacted partition's files hold: those of
/// the units whose files its record replaced (sorted; empty when it
/// names none).
fn exports_holding(spec: &Spec, g: &Group) -> Vec<usize> {
    let prefix = format!("{}-", spec.name);
    let exports: BTreeSet<usize> = g
        .replaced
        .iter()
        .filter_map(|r| r.rsplit('/').next()?.strip_prefix(&prefix))
        .filter_map(crate::sink::parse_file_name)
        .filter_map(|(unit, _)| crate::job::maintain::compact::unit_export(unit).map(|(e, _)| e))
        .collect();
    exports.into_iter().collect()
}

/// The keys a derivation is made by, as the spec has them: equal for two
/// exports that derive their tables alike.
fn derived_keys(identity: &JobIdentity, export: usize) -> [Option<&serde_json::Value>; 4] {
    identity.exports.get(export).map_or([None; 4], |e| e.derivation())
}

/// The groups a derivation reads (each with the files of the tables it
/// reads only); refused as the module doc says.
pub(super) fn select(
    spec: &Spec,
    job: &JobState,
    groups: Vec<Group>,
    derivations: &[Derivation],
    format: &dyn TableFormat,
) -> Result<Vec<Group>, RunError> {
    let refused = |what: String| RunError::Migration(format!("job `{}`: {what}", spec.name));
    let identity = JobIdentity::of(spec);
    // Export `e` takes the change `d` takes, alike.
    let alike = |d: &Derivation, e: usize| {
        derivations
            .iter()
            .any(|o| o.export == e && o.from == d.from && derived_keys(&identity, e) == derived_keys(&identity, d.export))
    };
    let writers = |table: &str| {
        spec.exports
            .iter()
            .filter(move |e| e.tables().iter().any(|t| t == table))
            .map(|e| e.index)
            .collect::<Vec<_>>()
    };
    for d in derivations {
        if let Some(decoder) = &d.decoder {
            for t in decoder.tables() {
                if let Some(e) = writers(&t.table).into_iter().find(|e| *e != d.export && !alike(d, *e)) {
                    return Err(refused(format!(
                        "export[{}] would decode into table {}, which export[{e}] writes too without decoding into it \
                         alike in this change: give its decoded table another name (`table`), or make the same \
                         change to export[{e}]",
                        d.export, t.table
                    )));
                }
            }
        }
        if let Some(why) = format.column_drop_refusal()
            && d.decoder.is_none()
        {
            let was = job
                .identity
                .as_ref()
                .and_then(|i| i.exports.get(d.export))
                .and_then(|e| e.u256())
                .unwrap_or_default();
            let now = spec.exports[d.export].decoding.as_ref().map(|x| x.u256).unwrap_or_default();
            if (was.decimal38 && !now.decimal38) || (was.binary && !now.binary) {
                return Err(refused(format!(
                    "export[{}] drops u256 columns, and {why}: keep them, or \
                     run once with format = \"parquet\", once without them, then once with format = \"{}\" (each \
                     with no request)",
                    d.export, spec.output.format
                )));
            }
        }
    }
    let mut out = Vec::new();
    for mut g in groups {
        let Some(d) = of_group(spec, derivations, &g) else {
            continue;
        };
        if let Some(p) = &g.partition {
            let table = p.split('/').next().unwrap_or_default();
            if let Some(e) = holding(spec, &g, table).into_iter().find(|e| !alike(d, *e)) {
                return Err(refused(format!(
                    "the compacted files of {p} hold rows of export[{e}] beside export[{}]'s, and the change does not \
                     make export[{e}]'s derived tables alike, so their rows cannot be told apart to make export[{}]'s \
                     from them: make the same change to export[{e}], or re-run with --fresh to export the new spec",
                    d.export, d.export
                )));
            }
        }
        g.inputs.retain(|table, _| d.from.contains(table));
        if !g.inputs.is_empty() {
            out.push(g);
        }
    }
    Ok(out)
}
