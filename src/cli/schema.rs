//! `chainetl schema`: a dataset's schema, a decoded event's, or every table
//! a spec's exports write, as JSON, Arrow, DuckDB or Spark DDL.

use super::{CliError, Exit};
use crate::decode::abi::EventTable;
use crate::spec::U256Columns;
use crate::spec::decoding::{PRESETS, parse_event, snake_case};
use crate::spec::{HashEncoding, Spec};
use crate::vocab::Dataset;

/// Prints the schemas asked for.
pub(super) fn schema(
    dataset: Option<&str>,
    event: Option<&str>,
    spec: Option<&str>,
    u256: &[String],
    format: &str,
) -> Result<Exit, CliError> {
    let text = match (dataset, event, spec) {
        (_, Some(sig), _) => event_schema(sig, u256, format)?,
        (_, _, Some(path)) => spec_schemas(path, format)?,
        (Some(d), _, _) => dataset_schema(d, format)?,
        (None, None, None) => return Err(CliError::Usage("name a dataset, --event or --spec".into())),
    };
    out!("{text}");
    Ok(Exit::Success)
}

fn dataset_schema(name: &str, format: &str) -> Result<String, CliError> {
    if let Some((preset, sig)) = PRESETS.iter().find(|(p, _)| *p == name) {
        return decoded(preset, sig, U256Columns::default(), HashEncoding::Hex, format);
    }
    let d = Dataset::parse(name).ok_or_else(|| {
        CliError::Usage(format!(
            "unknown dataset `{name}`: expected blocks, events, portfolio, tokens, erc20_transfers, erc20_approvals or erc721_transfers"
        ))
    })?;
    super::ddl::schema_text(d, format).map_err(CliError::Usage)
}

fn event_schema(sig: &str, u256: &[String], format: &str) -> Result<String, CliError> {
    let mut wide = U256Columns::default();
    for k in u256 {
        match k.trim() {
            "decimal38" | "decimal128" => wide.decimal38 = true,
            "binary" => wide.binary = true,
            other => return Err(CliError::Usage(format!("--u256: unknown `{other}`: expected decimal38 or binary"))),
        }
    }
    let event = parse_event(sig).map_err(|m| CliError::Usage(format!("--event: {m}")))?;
    decoded(&snake_case(&event.name), sig, wide, HashEncoding::Hex, format)
}

/// The schema of the table `table` decoding `sig`.
fn decoded(table: &str, sig: &str, wide: U256Columns, enc: HashEncoding, format: &str) -> Result<String, CliError> {
    let event = parse_event(sig).map_err(|m| CliError::Usage(format!("--event: {m}")))?;
    let t = EventTable::new(table, event, enc, wide).map_err(CliError::Usage)?;
    super::ddl::table_schema_text(table, &t.schema(), format).map_err(CliError::Usage)
}

/// Every table of every export of the spec at `path`, once each.
fn spec_schemas(path: &str, format: &str) -> Result<String, CliError> {
    let spec = Spec::load(path).map_err(CliError::Spec)?;
    let enc = spec.output.hash_encoding;
    // Its tables as the spec writes them: the columns it selects.
    let mut seen = Vec::new();
    let mut out = String::new();
    for e in &spec.exports {
        let decoded_tables = e.decoding.iter().flat_map(|d| d.tables.iter().map(move |t| (t, d.u256)));
        for (t, wide) in decoded_tables {
            if !seen.contains(&t.table) {
                seen.push(t.table.clone());
                let table = EventTable::new(&t.table, t.event.clone(), enc, wide).map_err(CliError::Usage)?;
                let schema = crate::sink::selected_schema(e, table.schema());
                out += &super::ddl::table_schema_text(&t.table, &schema, format).map_err(CliError::Usage)?;
            }
        }
        let raw = e.decoding.as_ref().is_none_or(|d| d.also_raw);
        if raw && !seen.contains(&e.dataset.name().to_string()) {
            seen.push(e.dataset.name().to_string());
            let s = crate::sink::export_schema(e, &spec.output);
            out += &super::ddl::table_schema_text(e.dataset.name(), &s, format).map_err(CliError::Usage)?;
        }
    }
    Ok(out)
}
