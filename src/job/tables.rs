//! The tables an export writes, and the transaction ids a table format
//! that keeps a log (Delta) records with each commit, so that a commit
//! made again after a crash is found there and not made twice:
//!
//! - `chainetl-<job>-<unit>`, version `next_seq`: a unit's files
//!   ([`unit_app_id`]);
//! - `chainetl-<job>-compact`, version the generation: a compaction's swap
//!   ([`compaction_app_id`]);
//! - `chainetl-<job>-relayout`, version the rewrite's: a rewrite into
//!   another layout ([`relayout_app_id`]).

use crate::decode::abi::LogDecoder;
use crate::job::error::RunError;
use crate::sink::{export_schema, selected_schema};
use crate::spec::Spec;
use arrow_schema::SchemaRef;
use std::sync::Arc;

/// Each table `export` writes, and its schema (the table's, partition
/// columns included, the columns it does not write left out), in the
/// order of its writers;
/// `logs`: its decoder of logs, if it decodes.
pub(crate) fn export_tables(spec: &Spec, export: &crate::spec::Export, logs: Option<&LogDecoder>) -> Vec<(String, SchemaRef)> {
    let schemas = logs
        .iter()
        .flat_map(|l| l.tables().iter().map(|t| selected_schema(export, t.schema())));
    let schemas = schemas.chain(std::iter::repeat_with(|| export_schema(export, &spec.output)));
    export.tables().into_iter().zip(schemas).collect()
}

/// The application id of `unit`'s transactions in its tables' logs.
pub(crate) fn unit_app_id(state: &crate::state::StateStore, unit: &str) -> String {
    format!("chainetl-{}", state.file_prefix(unit))
}

/// The transaction ids of a job's units that no run of the job will look
/// for again, from its checkpoints (`units`, by unit id) and its
/// incremental exports' `marks`:
///
/// - a unit's at a version no later than its checkpoint's `next_seq`,
///   once the checkpoint says the unit is published (a unit exported
///   again is unpublished until its new files are in, at a higher
///   version);
/// - an incremental unit's whose range ends at or below its export's mark
///   on its chain, with no checkpoint: the segment was committed before
///   the mark moved past it, and its checkpoints deleted after (a reorg
///   repair moves the mark back first, and starts its units afresh above
///   every file they wrote).
///
/// Anything else, another job's ids included, is not settled.
pub(crate) fn settled_txns(
    state: &crate::state::StateStore,
    units: &std::collections::HashMap<String, crate::state::UnitState>,
    marks: &[crate::state::Mark],
) -> crate::sink::format::Settled {
    let published: std::collections::HashMap<String, i64> = units
        .values()
        .filter(|st| st.published)
        .map(|st| (unit_app_id(state, &st.unit), st.next_seq as i64))
        .collect();
    let unsettled: std::collections::HashSet<String> = units.keys().map(|u| unit_app_id(state, u)).collect();
    let marks: std::collections::HashMap<(usize, crate::vocab::chain::Chain), u64> =
        marks.iter().map(|m| ((m.export, m.chain), m.next)).collect();
    let prefix = unit_app_id(state, "");
    Arc::new(move |app: &str, version: i64| {
        if let Some(seq) = published.get(app) {
            return version <= *seq;
        }
        if unsettled.contains(app) {
            return false;
        }
        let Some(unit) = app.strip_prefix(&prefix).filter(|u| crate::plan::is_unit_id(u)) else {
            return false;
        };
        crate::plan::unit_end(unit).is_some_and(|(export, chain, end)| marks.get(&(export, chain)).is_some_and(|next| end <= *next))
    })
}

/// The application id of a job's compactions in its tables' logs.
pub(crate) fn compaction_app_id(spec: &Spec) -> String {
    format!("chainetl-{}-compact", spec.name)
}

/// The application id of a job's rewrites in its tables' logs.
pub(crate) fn relayout_app_id(spec: &Spec) -> String {
    format!("chainetl-{}-relayout", spec.name)
}

/// Decoding exports' decoders of logs, by export index.
pub(crate) fn decoders(spec: &Spec) -> Result<Vec<Option<Arc<LogDecoder>>>, RunError> {
    spec.exports
        .iter()
        .map(|e| {
            e.decoding
                .as_ref()
                .map(|d| LogDecoder::of(d, spec.output.hash_encoding).map(Arc::new))
                .transpose()
                .map_err(|message| RunError::Decoder { export: e.index, message })
        })
        .collect()
}
