//! Decoded events: which events an export decodes and into which tables.
//!
//! An events export decodes when it has `decode = true` (its `signatures`
//! must then be full event signatures, not topic0 hashes), an `abi` file
//! (every non-anonymous event in it; the export selects just those), or is
//! one of the preset datasets ([`PRESETS`]). Each event gets a table of its
//! own under the output, `<uri>/<table>/chain=…/date=…/`, named by `table`
//! (an export decoding one event) or the event's name in snake_case. With
//! `also_raw = true` the raw `events` table is written too.
//!
//! A decoded table's columns are named here ([`DecodedTable::columns`]), so
//! that a spec's column selection is checked against them: the log's
//! [`IDENTITY`], then a column per parameter in declaration order (unnamed
//! ones `arg<i>`; a name that repeats an earlier column's in any case, or a
//! column one adds, gets `_<i>`), a wide integer's followed by `_f64` and
//! the `u256` variants it has.

use alloy_dyn_abi::{DynSolType, Specifier};
use alloy_json_abi::{Event, EventParam};
use serde::Serialize;

/// The identity columns every decoded table starts with.
pub const IDENTITY: [&str; 7] = [
    "chain",
    "block_number",
    "block_timestamp",
    "transaction_hash",
    "transaction_index",
    "log_index",
    "contract_address",
];

/// Hive partition keys: a column of that name would be hidden by the
/// directory's value in engines that read partitions.
pub const PARTITION_KEYS: [&str; 2] = ["chain", "date"];

/// The columns of a wide integer after its exact decimal text: `_f64`
/// always, `_decimal38` and `_binary` as `u256` says.
const WIDE_SUFFIXES: [&str; 4] = ["", "_f64", "_decimal38", "_binary"];

/// The preset datasets: `(dataset, signature)`; the table is the dataset's name.
pub const PRESETS: [(&str, &str); 3] = [
    (
        "erc20_transfers",
        "event Transfer(address indexed from, address indexed to, uint256 value)",
    ),
    (
        "erc20_approvals",
        "event Approval(address indexed owner, address indexed spender, uint256 value)",
    ),
    (
        "erc721_transfers",
        "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
    ),
];

/// Names that cannot be a decoded table: the raw datasets' directories and
/// the job state's.
pub const RESERVED_TABLES: [&str; 5] = ["blocks", "events", "portfolio", "tokens", "_chainetl"];

/// Extra columns of integers wider than 64 bits (`u256 = [...]`, as cryo's
/// `--u256-types`): the exact decimal text and a Float64 are always written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct U256Columns {
    /// `<name>_decimal38`: Decimal128(38,0), null where it does not fit.
    pub decimal38: bool,
    /// `<name>_binary`: 32 bytes, big-endian two's complement.
    pub binary: bool,
}

/// One decoded table: its name and the event it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedTable {
    /// The table's name: its directory under the output.
    pub table: String,
    /// The event, as parsed.
    pub event: Event,
}

impl DecodedTable {
    /// The table's columns, in its schema's order (see the module doc),
    /// with the `u256` variants `wide` asks for.
    pub fn columns(&self, wide: U256Columns) -> Vec<String> {
        let mut out: Vec<String> = IDENTITY.iter().map(|c| c.to_string()).collect();
        for (column, is_wide) in parameter_columns(&self.event) {
            if is_wide {
                let on = [true, true, wide.decimal38, wide.binary];
                out.extend(
                    WIDE_SUFFIXES
                        .iter()
                        .zip(on)
                        .filter(|(_, on)| *on)
                        .map(|(s, _)| format!("{column}{s}")),
                );
            } else {
                out.push(column);
            }
        }
        out
    }

    /// The columns of its wide integers' exact decimal text and their
    /// `_f64`: what their `u256` variants are computed from.
    pub fn wide_sources(&self) -> Vec<String> {
        parameter_columns(&self.event)
            .into_iter()
            .filter(|(_, wide)| *wide)
            .flat_map(|(c, _)| [format!("{c}_f64"), c])
            .collect()
    }

    /// The columns `wide` adds to its wide integers' (`_decimal38`,
    /// `_binary`).
    pub fn variant_columns(&self, wide: U256Columns) -> Vec<String> {
        let all = self.columns(wide);
        let plain = self.columns(U256Columns::default());
        all.into_iter().filter(|c| !plain.contains(c)).collect()
    }

    /// The event's full signature (`event Transfer(address indexed from, …)`).
    pub fn signature(&self) -> String {
        self.event.full_signature()
    }

    /// The event's topic0, lower-case 0x-hex.
    pub fn topic0(&self) -> String {
        self.event.selector().to_string()
    }
}

/// What an export decodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoding {
    /// Its tables, in order (a log two tables share a topic0 with goes to
    /// the first it fits).
    pub tables: Vec<DecodedTable>,
    /// Extra columns of wide integers.
    pub u256: U256Columns,
    /// Also write the raw `events` table.
    pub also_raw: bool,
}

/// The tables an export of `dataset` writes, each with every column it
/// has when none is left out, in file order: each of `decoded`'s (with
/// the columns `u256` adds) and, where `raw` (no decoding, or
/// `also_raw`), the dataset's own. The one place a table's columns are
/// decided: validation, the job's identity and the writers ask it.
pub fn table_columns(dataset: crate::vocab::Dataset, decoded: &[DecodedTable], u256: U256Columns, raw: bool) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = decoded.iter().map(|t| (t.table.clone(), t.columns(u256))).collect();
    if raw || decoded.is_empty() {
        out.push((
            dataset.name().to_string(),
            dataset.columns().iter().map(|c| c.to_string()).collect(),
        ));
    }
    out
}

/// Whether an integer type is wider than an Int64 column holds: written
/// as exact decimal text and a Float64 (and the `u256` variants).
pub fn wide_integer(ty: &DynSolType) -> bool {
    matches!(ty, DynSolType::Uint(n) if *n > 56) || matches!(ty, DynSolType::Int(n) if *n > 64)
}

/// Each parameter of `event`: its column's name and whether it is a wide
/// integer ([`wide_integer`]). A type that does not resolve (validation
/// refuses such events) is named as a narrow one.
pub fn parameter_columns(event: &Event) -> Vec<(String, bool)> {
    // Lower-case: DuckDB and Spark match column names regardless of case.
    let mut taken: Vec<String> = IDENTITY.iter().chain(PARTITION_KEYS.iter()).map(|c| c.to_string()).collect();
    event
        .inputs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let wide = p.resolve().is_ok_and(|ty| wide_integer(&ty));
            (column_name(p, i, wide, &mut taken), wide)
        })
        .collect()
}

/// The column of parameter `i`: its name (`arg<i>` when unnamed), with
/// `_<i>` (then `_<i>_<k>`) when it or a column it adds (`_f64`, …) would
/// repeat an earlier column's name in any case. Records what it takes.
fn column_name(p: &EventParam, i: usize, wide: bool, taken: &mut Vec<String>) -> String {
    let base = if p.name.is_empty() { format!("arg{i}") } else { p.name.clone() };
    let suffixes: &[&str] = if wide { &WIDE_SUFFIXES } else { &[""] };
    let names = |c: &str| suffixes.iter().map(|s| format!("{c}{s}").to_ascii_lowercase()).collect::<Vec<_>>();
    let free = |c: &str, taken: &Vec<String>| names(c).iter().all(|n| !taken.contains(n));
    let column = std::iter::once(base.clone())
        .chain((0..).map(|k| if k == 0 { format!("{base}_{i}") } else { format!("{base}_{i}_{k}") }))
        .find(|c| free(c, taken))
        .unwrap_or(base);
    taken.extend(names(&column));
    column
}

/// Parses an event signature as people paste it: with or without the
/// `event` keyword, with a trailing `;`.
pub fn parse_event(text: &str) -> Result<Event, String> {
    let t = text.trim().trim_end_matches(';').trim_end();
    Event::parse(t).map_err(|e| parser_message(&e.to_string()))
}

/// alloy's parser errors draw a caret under the text; said in one line:
/// what was expected, and where.
fn parser_message(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match lines.iter().position(|l| l.trim_start().starts_with('^')) {
        Some(caret) => {
            let col = lines[caret].find('^').unwrap_or(0) + 1;
            let what: Vec<&str> = lines[caret + 1..].iter().map(|l| l.trim()).filter(|l| !l.is_empty()).collect();
            let what = if what.is_empty() {
                "not an event signature".to_string()
            } else {
                what.join("; ")
            };
            format!("{what} (at character {col})")
        }
        None => lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(": "),
    }
}

/// The default table name of an event: its name in snake_case
/// (`OwnershipTransferred` → `ownership_transferred`, `ERC20Sent` →
/// `erc20_sent`).
pub fn snake_case(name: &str) -> String {
    // Leading underscores (`_Transfer`) say nothing of the table.
    let chars: Vec<char> = name.trim_start_matches('_').chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase() || prev.is_ascii_digit() || (prev.is_ascii_uppercase() && next_lower) {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "event_");
    }
    out.chars().take(64).collect()
}

/// Whether `name` can be a table's directory: `[a-z][a-z0-9_]*`, at most
/// 64 characters, not reserved.
pub fn valid_table_name(name: &str) -> Result<(), String> {
    let ok_chars = name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if name.is_empty() || name.len() > 64 || !ok_chars || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(format!(
            "`{name}` is not a table name: use 1 to 64 lower-case letters, digits and `_`, starting with a letter"
        ));
    }
    if RESERVED_TABLES.contains(&name) {
        return Err(format!("`{name}` is reserved (a raw dataset's or the job state's directory)"));
    }
    Ok(())
}
