//! A job's identity: what it exports and how its files are laid out, as
//! opposed to how it gets there. Two specs with the same identity describe
//! the same job, so a resumed run may change any operational setting
//! (service URL, key variable, concurrency, rate, page size, timeouts,
//! retries, memory, commit cadence, progress) without `--fresh`. A change
//! of how the files are laid out ([`LAYOUT_KEYS`]) or of their format is
//! made from the stored files, with no request (`crate::job::change`'s convert
//! and relayout). The output location is not part of it: state lives in the
//! output, so finding the state there already says it is the same place
//! (`out`, `./out/`, its absolute path and `file://` form alike).
//!
//! Each export's identity is a map from its spec keys to canonical values
//! (windows as resolved forms, signatures as topic0 hashes), so a change can
//! be reported key by key with its old and new value. Stored in `job.json`.

use super::changes::{LayoutChange, LayoutKey};
use super::decoding::U256Columns;
use super::{Export, Output, OutputFormat, Selection, Spec};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One export's identity: spec key → canonical value. `chains` is kept
/// apart: adding a chain grows the job instead of changing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportIdentity {
    /// The chains, in spec order.
    pub chains: Vec<String>,
    /// Every other key that decides rows or units.
    pub keys: BTreeMap<String, Value>,
}

/// The job's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobIdentity {
    /// `[output]` keys that decide the files' layout and content.
    pub output: BTreeMap<String, Value>,
    /// Per export, in spec order.
    pub exports: Vec<ExportIdentity>,
}

fn window_value(w: &crate::vocab::window::Window) -> Value {
    use crate::vocab::window::{Window, iso};
    match *w {
        Window::Relative { secs } => json!(format!("last {secs}s")),
        Window::Interval { start, end } => json!(format!("{}..{}", iso(start), iso(end))),
        Window::Blocks { first, last } => json!(format!("{first}..{last}")),
    }
}

impl ExportIdentity {
    /// The identity of `e`.
    pub fn of(e: &Export) -> ExportIdentity {
        let mut k = BTreeMap::new();
        k.insert("dataset".into(), json!(e.dataset.name()));
        match &e.selection {
            Selection::BlockWindow {
                window,
                chunk_blocks,
                chunk_secs,
            } => {
                k.insert("window".into(), window_value(window));
                k.insert("chunk_blocks".into(), json!(chunk_blocks));
                k.insert("chunk_duration".into(), json!(chunk_secs));
            }
            Selection::BlockNumbers(numbers) => {
                k.insert("numbers".into(), json!(numbers));
            }
            Selection::Events {
                window,
                contract_address,
                topics,
                chunk_blocks,
                chunk_secs,
                ..
            } => {
                k.insert("window".into(), window_value(window));
                k.insert("contract_address".into(), json!(contract_address));
                k.insert("signatures".into(), json!(topics));
                k.insert("chunk_blocks".into(), json!(chunk_blocks));
                k.insert("chunk_duration".into(), json!(chunk_secs));
            }
            Selection::Portfolio {
                wallets,
                token_address,
                window,
            } => {
                k.insert("window".into(), window_value(window));
                k.insert("wallets".into(), json!(wallets));
                k.insert("token_address".into(), json!(token_address));
            }
            Selection::Tokens { addresses } => {
                k.insert("addresses".into(), json!(addresses));
            }
        }
        k.insert("align".into(), json!(e.align));
        k.insert("incremental".into(), json!(e.incremental.as_ref().map(|i| i.start)));
        // Only decoding exports have these keys: raw exports' identities
        // stay as jobs recorded them before decoding existed.
        if let Some(d) = &e.decoding {
            let tables: Vec<String> = d.tables.iter().map(|t| format!("{}: {}", t.table, t.signature())).collect();
            k.insert("decode".into(), json!(tables));
            k.insert("u256".into(), json!(d.u256));
            k.insert("also_raw".into(), json!(d.also_raw));
        }
        // Only when some are left out, so a job recorded before columns
        // could be chosen keeps its identity (absent: every column).
        if !e.dropped_columns.is_empty() {
            k.insert(COLUMNS_KEY.into(), json!(e.dropped_columns));
        }
        ExportIdentity {
            chains: e.chains.iter().map(|c| c.name().to_string()).collect(),
            keys: k,
        }
    }

    /// The dataset this export recorded (None: a record without one).
    pub fn dataset(&self) -> Option<&str> {
        self.keys.get("dataset").and_then(Value::as_str)
    }

    /// The columns this export does not write, as recorded (none: every
    /// column, also for a record made before columns could be chosen).
    pub fn dropped_columns(&self) -> Vec<String> {
        self.keys
            .get(COLUMNS_KEY)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
            .unwrap_or_default()
    }

    /// The decoded tables this export recorded (none: a raw export).
    fn decoded_tables(&self) -> Vec<super::DecodedTable> {
        let entries = self.keys.get("decode").and_then(Value::as_array);
        entries
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter_map(|t| t.split_once(':'))
            .filter_map(|(table, signature)| {
                let event = super::decoding::parse_event(signature).ok()?;
                Some(super::DecodedTable {
                    table: table.trim().to_string(),
                    event,
                })
            })
            .collect()
    }

    /// The columns this export leaves out of its table `table`, as
    /// recorded, in file order.
    pub fn dropped_from(&self, table: &str) -> Vec<String> {
        let dropped = self.dropped_columns();
        if dropped.is_empty() {
            return dropped;
        }
        let Some(dataset) = crate::vocab::Dataset::parse(self.dataset().unwrap_or_default()) else {
            return Vec::new();
        };
        // The dataset's own table comes last: the answer for any other.
        let mut tables = super::decoding::table_columns(dataset, &self.decoded_tables(), self.u256().unwrap_or_default(), true);
        let i = tables.iter().position(|(t, _)| t == table).unwrap_or(tables.len() - 1);
        tables.swap_remove(i).1.into_iter().filter(|c| dropped.contains(c)).collect()
    }

    /// The change of `now` from `self` that leaves out columns this
    /// export wrote and brings none back ([`LayoutChange::Columns`],
    /// made from the stored files); None when the columns are the same,
    /// or one comes back (the stored rows do not hold it).
    pub fn columns_dropped(&self, now: &ExportIdentity, index: usize) -> Option<LayoutChange> {
        let (was, is) = (self.dropped_columns(), now.dropped_columns());
        if was == is || !was.iter().all(|c| is.contains(c)) {
            return None;
        }
        Some(LayoutChange::Columns {
            export: index,
            was: show(self.keys.get(COLUMNS_KEY).unwrap_or(&Value::Null)),
            now: show(now.keys.get(COLUMNS_KEY).unwrap_or(&Value::Null)),
        })
    }

    /// The u256 columns a decoding export recorded (None: not decoding);
    /// a column the record does not say true is not there.
    pub fn u256(&self) -> Option<U256Columns> {
        let v = self.keys.get("u256")?;
        let on = |column: &str| v.get(column).and_then(Value::as_bool) == Some(true);
        Some(U256Columns {
            decimal38: on("decimal38"),
            binary: on("binary"),
        })
    }

    /// The keys a derivation of tables is made by (decoding, u256 columns,
    /// the raw table, the signatures), as recorded: equal for two exports
    /// that derive their tables alike.
    pub fn derivation(&self) -> [Option<&Value>; 4] {
        ["decode", "u256", "also_raw", "signatures"].map(|k| self.keys.get(k))
    }

    /// The tables (directories under the output) this export wrote, as
    /// recorded: its dataset's, or its decoded tables (and the dataset's
    /// with `also_raw`).
    pub fn tables(&self) -> Vec<String> {
        let dataset = self.dataset().unwrap_or_default().to_string();
        let Some(decoded) = self.keys.get("decode").and_then(Value::as_array) else {
            return vec![dataset];
        };
        let mut out: Vec<String> = decoded
            .iter()
            .filter_map(Value::as_str)
            .filter_map(|t| t.split_once(':').map(|(name, _)| name.trim().to_string()))
            .collect();
        if self.keys.get("also_raw").and_then(Value::as_bool) == Some(true) {
            out.push(dataset);
        }
        out
    }

    /// How `now` differs from `self`, one line per key; empty when it is
    /// the same export, possibly with chains added.
    pub fn changes(&self, now: &ExportIdentity, index: usize) -> Vec<String> {
        let mut out = Vec::new();
        let keys: std::collections::BTreeSet<&String> = self.keys.keys().chain(now.keys.keys()).collect();
        for key in keys {
            // A key recorded as null is a key not set.
            let (a, b) = (
                self.keys.get(key).filter(|v| !v.is_null()),
                now.keys.get(key).filter(|v| !v.is_null()),
            );
            if a == b {
                continue;
            }
            let back: Vec<String> = match key.as_str() {
                COLUMNS_KEY => {
                    let is = now.dropped_columns();
                    self.dropped_columns().into_iter().filter(|c| !is.contains(c)).collect()
                }
                _ => Vec::new(),
            };
            let dropped = self.dropped_columns();
            let sources: Vec<String> = self
                .decoded_tables()
                .iter()
                .flat_map(|t| t.wide_sources())
                .filter(|c| dropped.contains(c))
                .collect();
            if key == "u256" && !sources.is_empty() {
                out.push(format!(
                    "{}: `u256` columns are computed from a wide integer's text and its `_f64`, and the job's files do not hold `{}`; \
                     --fresh fetches export[{index}] again",
                    key_change(index, key, a, b),
                    sources.join("`, `")
                ));
            } else if back.is_empty() {
                out.push(key_change(index, key, a, b).to_string());
            } else {
                out.push(format!(
                    "{}: the job's files do not hold {} `{}`, so the stored rows cannot give {} back; --fresh \
                     fetches export[{index}] ({} on {}) again, with every column the spec selects",
                    key_change(index, key, a, b),
                    if back.len() == 1 { "column" } else { "columns" },
                    back.join("`, `"),
                    if back.len() == 1 { "it" } else { "them" },
                    show(now.keys.get("dataset").unwrap_or(&Value::Null)),
                    now.chains.join(", ")
                ));
            }
        }
        let removed: Vec<&str> = self.chains.iter().filter(|c| !now.chains.contains(c)).map(String::as_str).collect();
        if !removed.is_empty() {
            out.push(format!(
                "export[{index}].chains: {} removed (was {}, now {}; chains may be added, not removed)",
                removed.join(", "),
                show(&json!(self.chains)),
                show(&json!(now.chains))
            ));
        }
        out
    }
}

/// The key of an export's identity that records the columns it does not
/// write, in its dataset's order (absent: every column).
pub(crate) const COLUMNS_KEY: &str = "exclude_columns";

/// Keys of a decoding export whose change is made from the rows the job
/// stored (`crate::job`'s relayout): decoded tables built from the stored
/// raw logs, wide-integer columns computed from the stored values.
pub(crate) const DERIVED_KEYS: [&str; 3] = ["decode", "u256", "also_raw"];

impl ExportIdentity {
    /// Whether `now` differs from `self` only in how rows the job stored
    /// are derived, so the change is made from them: decoding added to a
    /// raw export that keeps its raw table (`also_raw = true`) and selects
    /// the same events, or other `u256` columns of the same decoded tables.
    /// Anything else (a decoded table added to a decoding export, whose
    /// raw logs were not kept; `also_raw` dropped or added) is not.
    pub fn derivable(&self, now: &ExportIdentity) -> bool {
        let rest = |i: &ExportIdentity| {
            let mut k = i.keys.clone();
            for key in DERIVED_KEYS.iter().chain(&["signatures"]) {
                k.remove(*key);
            }
            k
        };
        let topics = |i: &ExportIdentity| -> std::collections::BTreeSet<String> {
            i.keys
                .get("signatures")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
                .unwrap_or_default()
        };
        if self.keys == now.keys || rest(self) != rest(now) || topics(self) != topics(now) {
            return false;
        }
        // Logs are decoded from their topics and data: without them the
        // stored rows cannot make a decoded table.
        if self.dropped_columns().iter().any(|c| c == "topics" || c == "data") {
            return false;
        }
        let key = |i: &ExportIdentity, k: &str| i.keys.get(k).cloned();
        // Wide integers' `u256` columns are computed from their decimal
        // text, which `_f64` beside it marks.
        let dropped = self.dropped_columns();
        if key(self, "u256") != key(now, "u256")
            && self
                .decoded_tables()
                .iter()
                .flat_map(|t| t.wide_sources())
                .any(|c| dropped.contains(&c))
        {
            return false;
        }
        match (key(self, "decode"), key(now, "decode")) {
            (None, Some(_)) => key(now, "also_raw") == Some(json!(true)),
            (Some(a), Some(b)) => a == b && key(self, "also_raw") == key(now, "also_raw") && key(self, "u256") != key(now, "u256"),
            _ => false,
        }
    }
}

/// What [`JobIdentity::compare`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Comparison {
    /// `(from, to)`: the output format changed.
    pub format: Option<(OutputFormat, OutputFormat)>,
    /// Changed layout keys ([`LAYOUT_KEYS`]), and derived-table keys of
    /// exports ([`ExportIdentity::derivable`]): made by rewriting the
    /// stored files, with no request.
    pub layout: Vec<LayoutChange>,
    /// The exports whose derived tables change ([`ExportIdentity::derivable`]).
    pub derived: Vec<usize>,
    /// Every other change, one line a key.
    pub changes: Vec<String>,
}

/// One changed key of export `index`.
fn key_change(index: usize, key: &str, was: Option<&Value>, now: Option<&Value>) -> LayoutChange {
    LayoutChange::Derived {
        export: index,
        key: key.to_string(),
        was: show(was.unwrap_or(&Value::Null)),
        now: show(now.unwrap_or(&Value::Null)),
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => super::changes::UNSET.into(),
        other => other.to_string(),
    }
}

/// `[output]` keys of how the stored files are laid out and encoded, by
/// name ([`LayoutKey::ALL`]'s). A change of one is made by rewriting the
/// stored files (`crate::job::change`'s relayout), not by fetching them
/// again.
pub const LAYOUT_KEYS: [&str; 5] = {
    let mut names = [""; 5];
    let mut i = 0;
    while i < names.len() {
        names[i] = LayoutKey::ALL[i].name();
        i += 1;
    }
    names
};

/// `[output]` keys every job writing into one table folder must agree on:
/// a reader of the folder sees one format, one set of partition columns
/// and one type for each column.
pub const SHARED_KEYS: [&str; 3] = ["format", "partition_by", "hash_encoding"];

/// Layout keys recorded from 0.2.0 on: a job started before has none of
/// them, and its files may have been written with any value, so a change
/// of one applies to files written from then on, as before.
const RECORDED_SINCE_0_2: [&str; 3] = ["bloom_filters", "compression", "row_group_rows"];

fn compression_value(c: super::Compression) -> Value {
    use super::Compression;
    json!(match c {
        Compression::Zstd(level) => format!("zstd({level})"),
        Compression::Snappy => "snappy".into(),
        Compression::Lz4 => "lz4".into(),
        Compression::Gzip => "gzip".into(),
        Compression::None => "none".into(),
    })
}

fn output_identity(o: &Output) -> BTreeMap<String, Value> {
    let mut k = BTreeMap::new();
    k.insert("partition_by".into(), json!(o.partition_by));
    k.insert("hash_encoding".into(), json!(o.hash_encoding));
    // A set: its order, and a column named twice, change no file.
    let blooms: std::collections::BTreeSet<&String> = o.bloom_filters.iter().collect();
    k.insert("bloom_filters".into(), json!(blooms));
    k.insert("compression".into(), compression_value(o.compression));
    k.insert("row_group_rows".into(), json!(o.row_group_rows));
    // Only when not the default, so parquet jobs started before the key
    // existed keep their identity (an absent `format` reads as parquet).
    if o.format != super::OutputFormat::Parquet {
        k.insert("format".into(), json!(o.format.name()));
    }
    k
}

/// `key` of an output identity; an absent `format` is parquet.
fn output_key<'a>(output: &'a BTreeMap<String, Value>, key: &str) -> std::borrow::Cow<'a, Value> {
    match output.get(key) {
        Some(v) => std::borrow::Cow::Borrowed(v),
        None if key == "format" => std::borrow::Cow::Owned(json!("parquet")),
        None => std::borrow::Cow::Owned(Value::Null),
    }
}

impl JobIdentity {
    /// The identity of `spec`.
    pub fn of(spec: &Spec) -> JobIdentity {
        JobIdentity {
            output: output_identity(&spec.output),
            exports: spec.exports.iter().map(ExportIdentity::of).collect(),
        }
    }

    /// The output format it records (`parquet` where none is recorded).
    pub fn format(&self) -> String {
        output_key(&self.output, "format").as_str().unwrap_or("parquet").to_string()
    }

    /// This identity with output format `format`, recorded as
    /// [`JobIdentity::of`] records it (nothing for `parquet`).
    pub fn with_format(&self, format: &str) -> JobIdentity {
        let mut out = self.clone();
        out.output.remove("format");
        if format != "parquet" {
            out.output.insert("format".into(), json!(format));
        }
        out
    }

    /// How `now` differs from `self` (a job's stored identity): a change
    /// of output format, which is made from the rows the output holds,
    /// apart from every other change (see [`JobIdentity::changes`]).
    pub fn compare(&self, now: &JobIdentity) -> Comparison {
        let (was, is) = (self.format(), now.format());
        let mut stored = self.with_format(&is);
        let mut layout = Vec::new();
        for typed in LayoutKey::ALL {
            let key = typed.name();
            let recorded = self.output.contains_key(key) || !RECORDED_SINCE_0_2.contains(&key);
            let (a, b) = (output_key(&self.output, key), output_key(&now.output, key));
            if recorded && a != b {
                layout.push(LayoutChange::Output {
                    key: typed,
                    was: show(&a),
                    now: show(&b),
                });
            }
            match now.output.get(key) {
                Some(v) => stored.output.insert(key.to_string(), v.clone()),
                None => stored.output.remove(key),
            };
        }
        for (i, (was, is)) in self.exports.iter().zip(&now.exports).enumerate() {
            if let Some(change) = was.columns_dropped(is, i) {
                layout.push(change);
                match is.keys.get(COLUMNS_KEY) {
                    Some(v) => stored.exports[i].keys.insert(COLUMNS_KEY.to_string(), v.clone()),
                    None => stored.exports[i].keys.remove(COLUMNS_KEY),
                };
            }
        }
        let mut derived = Vec::new();
        for (i, (was, is)) in self.exports.iter().zip(&now.exports).enumerate() {
            if !was.derivable(is) {
                continue;
            }
            for key in DERIVED_KEYS {
                let (a, b) = (was.keys.get(key), is.keys.get(key));
                if a != b {
                    layout.push(key_change(i, key, a, b));
                }
            }
            derived.push(i);
            stored.exports[i].keys = is.keys.clone();
        }
        // A format this build does not know (a newer build's) is no
        // change it can make: it stays among the other changes.
        let format = match (OutputFormat::named(&was), OutputFormat::named(&is)) {
            (Some(a), Some(b)) if a != b => Some((a, b)),
            (Some(_), Some(_)) => None,
            _ => {
                stored = stored.with_format(&was);
                None
            }
        };
        Comparison {
            changes: stored.changes(now),
            layout,
            derived,
            format,
        }
    }

    /// Every table (directory under the output) its exports write.
    pub fn tables(&self) -> std::collections::BTreeSet<String> {
        self.exports.iter().flat_map(|e| e.tables()).filter(|t| !t.is_empty()).collect()
    }

    /// The columns the exports writing `table` leave out of it (none: every
    /// column; validation holds them to one set a table).
    fn dropped_columns(&self, table: &str) -> Vec<String> {
        self.exports
            .iter()
            .find(|e| e.tables().iter().any(|t| t == table))
            .map(|e| e.dropped_from(table))
            .unwrap_or_default()
    }

    /// Where a job of this identity and one of `other`'s would mix in the
    /// table folders both write: each shared table with the keys of
    /// [`SHARED_KEYS`] they differ in, `key: value here, value there`. A
    /// key `other` does not record (a job started before it was) is not
    /// compared, nor a partition key a table has no directories of (the
    /// date of `tokens`).
    pub fn mixes_with(&self, other: &JobIdentity) -> Vec<(String, Vec<String>)> {
        let theirs = other.tables();
        let mut out = Vec::new();
        for table in self.tables().into_iter().filter(|t| theirs.contains(t)) {
            let undated = crate::vocab::dataset::Dataset::parse(&table) == Some(crate::vocab::dataset::Dataset::Tokens);
            let value = |output: &BTreeMap<String, Value>, key: &str| -> Value {
                let v = output_key(output, key).into_owned();
                match (key, v) {
                    ("partition_by", Value::Array(keys)) if undated => Value::Array(keys.into_iter().filter(|k| k != "date").collect()),
                    (_, v) => v,
                }
            };
            let mut keys: Vec<String> = SHARED_KEYS
                .iter()
                .filter(|k| **k == "format" || other.output.contains_key(**k))
                .filter_map(|k| {
                    let (here, there) = (value(&self.output, k), value(&other.output, k));
                    (here != there).then(|| format!("{k}: {} here, {} there", show(&here), show(&there)))
                })
                .collect();
            // One set of columns a folder, as one type a column.
            let (here, there) = (self.dropped_columns(&table), other.dropped_columns(&table));
            if here != there {
                keys.push(format!("{COLUMNS_KEY}: {} here, {} there", show(&json!(here)), show(&json!(there))));
            }
            if !keys.is_empty() {
                out.push((table, keys));
            }
        }
        out
    }

    /// The indexes of `now`'s exports inserted among this identity's,
    /// when `now` holds every one of its exports, unchanged and in order,
    /// and one or more before the last of them; None otherwise.
    fn inserted_in(&self, now: &JobIdentity) -> Option<Vec<usize>> {
        let mut inserted = Vec::new();
        let mut old = self.exports.iter().peekable();
        for (i, e) in now.exports.iter().enumerate() {
            match old.peek() {
                Some(was) if was.changes(e, i).is_empty() => {
                    old.next();
                }
                Some(_) => inserted.push(i),
                None => break,
            }
        }
        (old.peek().is_none() && !inserted.is_empty()).then_some(inserted)
    }

    /// The stored value of layout key `key`, if recorded.
    pub fn layout_value(&self, key: &str) -> Option<&Value> {
        self.output.get(key)
    }

    /// A short stable hash.
    pub fn hash(&self) -> String {
        let v = serde_json::to_vec(self).unwrap_or_default();
        let digest = crate::vocab::evm::keccak(&v);
        hex::encode(&digest[..16])
    }

    /// What changed from `self` (a job's stored identity) to `now`, key by
    /// key; empty when `now` is the same job or grows it (exports appended,
    /// chains added).
    pub fn changes(&self, now: &JobIdentity) -> Vec<String> {
        let mut out = Vec::new();
        let keys: std::collections::BTreeSet<&String> = self.output.keys().chain(now.output.keys()).collect();
        for key in keys {
            let (was, is) = (output_key(&self.output, key), output_key(&now.output, key));
            if was != is {
                out.push(format!("output.{key}: was {}, now {}", show(&was), show(&is)));
            }
        }
        if let Some(inserted) = self.inserted_in(now) {
            out.extend(inserted.into_iter().map(|i| {
                format!(
                    "export[{i}] ({} on {}) was inserted before exports the job has (exports may be appended, at the \
                     end: move it after the others)",
                    show(now.exports[i].keys.get("dataset").unwrap_or(&Value::Null)),
                    now.exports[i].chains.join(", ")
                )
            }));
            return out;
        }
        for (i, was) in self.exports.iter().enumerate() {
            match now.exports.get(i) {
                Some(is) => out.extend(was.changes(is, i)),
                None => out.push(format!(
                    "export[{i}] ({} on {}) was removed (exports may be appended, not removed)",
                    show(was.keys.get("dataset").unwrap_or(&Value::Null)),
                    was.chains.join(", ")
                )),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(keys: &[(&str, Value)]) -> ExportIdentity {
        ExportIdentity {
            chains: vec!["base".into()],
            keys: keys.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }
    }

    #[test]
    fn a_key_recorded_as_null_and_a_key_not_recorded_are_no_change() {
        let was = export(&[("dataset", json!("events")), ("chunk_blocks", Value::Null)]);
        let now = export(&[("dataset", json!("events"))]);
        assert_eq!(was.changes(&now, 4), Vec::<String>::new());
        let blocks = export(&[("dataset", json!("blocks"))]);
        assert_eq!(was.changes(&blocks, 4), ["export[4].dataset: was \"events\", now \"blocks\""]);
    }

    #[test]
    fn columns_left_out_are_a_layout_change_and_a_column_brought_back_is_refused() {
        let spec = |extra: &str| {
            let text = format!(
                "name = \"c\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"1..9\"\n{extra}\n"
            );
            JobIdentity::of(&Spec::parse("c.toml", &text).unwrap())
        };
        let all = spec("");
        // Absent: every column, as a job recorded before columns could be chosen.
        assert!(!all.exports[0].keys.contains_key(COLUMNS_KEY));
        let fewer = spec("exclude_columns = [\"logs_bloom\"]");
        let c = all.compare(&fewer);
        assert!(c.changes.is_empty(), "{c:?}");
        assert_eq!(c.layout.len(), 1, "{c:?}");
        assert!(c.layout[0].changes_columns() && !c.layout[0].is_derived());
        assert_eq!(
            c.layout[0].to_string(),
            "export[0].exclude_columns: was unset, now [\"logs_bloom\"]"
        );
        assert!(
            fewer
                .compare(&spec("exclude_columns = [\"extra_data\", \"logs_bloom\"]"))
                .changes
                .is_empty()
        );
        let back = fewer.compare(&all);
        assert!(back.layout.is_empty(), "{back:?}");
        assert_eq!(back.changes.len(), 1, "{back:?}");
        assert!(back.changes[0].contains("do not hold column `logs_bloom`"), "{back:?}");
        assert!(fewer.compare(&fewer).changes.is_empty() && fewer.compare(&fewer).layout.is_empty());
    }

    #[test]
    fn an_export_inserted_among_the_jobs_is_named_alone() {
        let tokens = export(&[("dataset", json!("tokens"))]);
        let events = export(&[("dataset", json!("events"))]);
        let blocks = export(&[("dataset", json!("blocks"))]);
        let job = |exports: &[&ExportIdentity]| JobIdentity {
            output: BTreeMap::new(),
            exports: exports.iter().map(|e| (*e).clone()).collect(),
        };
        let changes = job(&[&events, &tokens]).changes(&job(&[&events, &blocks, &tokens]));
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(changes[0].starts_with("export[1] (\"blocks\" on base) was inserted"), "{changes:?}");
        // Appended: no change; replaced: key by key.
        assert!(job(&[&events, &tokens]).changes(&job(&[&events, &tokens, &blocks])).is_empty());
        assert!(
            job(&[&events, &tokens])
                .changes(&job(&[&events, &blocks]))
                .iter()
                .any(|c| c.contains("dataset"))
        );
    }

    #[test]
    fn jobs_mix_only_in_the_tables_both_write_and_by_the_keys_readers_see() {
        let job = |tables: &[&str], output: &[(&str, Value)]| JobIdentity {
            output: output.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            exports: tables.iter().map(|t| export(&[("dataset", json!(t))])).collect(),
        };
        let a = job(
            &["events", "blocks"],
            &[("partition_by", json!(["chain", "date"])), ("compression", json!("zstd(1)"))],
        );
        let b = job(&["events"], &[("partition_by", json!(["chain"])), ("compression", json!("snappy"))]);
        assert_eq!(
            a.mixes_with(&b),
            [(
                "events".to_string(),
                vec!["partition_by: [\"chain\",\"date\"] here, [\"chain\"] there".to_string()]
            )]
        );
        let same = job(
            &["events"],
            &[("partition_by", json!(["chain", "date"])), ("compression", json!("snappy"))],
        );
        assert!(a.mixes_with(&same).is_empty(), "compression is not seen by readers");
        let elsewhere = job(&["tokens"], &[("format", json!("delta"))]);
        assert!(a.mixes_with(&elsewhere).is_empty(), "no table in common");
        // Tokens have no date directories.
        let tokens = |p: Value| job(&["tokens"], &[("partition_by", p)]);
        assert!(tokens(json!(["chain", "date"])).mixes_with(&tokens(json!(["chain"]))).is_empty());
        assert!(!tokens(json!(["chain"])).mixes_with(&tokens(json!([]))).is_empty());
        // A job recording no partition_by (started before it was) is not compared by it.
        assert!(a.mixes_with(&job(&["events"], &[])).is_empty());
        assert_eq!(
            a.mixes_with(&job(&["blocks"], &[("format", json!("delta"))]))[0].1,
            ["format: \"parquet\" here, \"delta\" there"]
        );
    }
}
