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
