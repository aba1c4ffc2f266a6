//! The shape of a spec — which keys each table takes and what type each
//! value has — checked on the parsed TOML tree before serde sees it.
//!
//! Invariants:
//! - Every problem of shape is reported, not the first: unknown keys (with
//!   the nearest known key as a suggestion), values of the wrong type and
//!   missing required keys, each with the span of the offending key or value.
//! - After [`check`] the tree holds only known keys with values of the
//!   right type (offending entries are removed), so deserializing it into
//!   the raw model ([`super::raw`]) cannot fail on shape, and the semantic
//!   checks run on everything that is left: one `validate` shows it all.
//! - [`SPEC`] lists the same keys as the raw model; a unit test builds a
//!   spec with every key and deserializes it, so the two cannot drift apart.

use std::borrow::Cow;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// What a key's value must be.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// A string.
    Str,
    /// An integer (TOML integers are i64).
    Int,
    /// An integer from 0 to the bound.
    UInt(u64),
    /// A float or an integer.
    Float,
    /// `true` or `false`.
    Bool,
    /// An array of strings.
    StrList,
    /// An array of integers.
    IntList,
    /// A duration: a string such as `30s` or a number of seconds.
    Duration,
    /// Incremental `start`: a block number, a date string or a TOML date.
    Start,
    /// `confirmations`: a number, or a table of numbers by chain.
    Confirmations,
    /// A table of strings under any keys.
    StrTable,
    /// A table with these keys.
    Table(&'static [Key]),
    /// An array of tables with these keys.
    Tables(&'static [Key]),
}

/// One key of a table.
#[derive(Debug)]
pub(crate) struct Key {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) required: bool,
}

const fn opt(name: &'static str, kind: Kind) -> Key {
    Key {
        name,
        kind,
        required: false,
    }
}

const fn req(name: &'static str, kind: Kind) -> Key {
    Key {
        name,
        kind,
        required: true,
    }
}

/// `[source.sim]`: the simulator's settings (see [`super::SimOptions`]).
const SIM: &[Key] = &[
    opt("seed", Kind::UInt(u64::MAX)),
    opt("events_per_block", Kind::UInt(u32::MAX as u64)),
    opt("quota_rps", Kind::Float),
    opt("error_rate", Kind::Float),
    opt("reset_rate", Kind::Float),
    opt("truncate_rate", Kind::Float),
    opt("latency_ms", Kind::UInt(u64::MAX)),
    opt("freeze_head", Kind::Bool),
    opt("frozen_at", Kind::Str),
    opt("api_key", Kind::Str),
    opt("forbid", Kind::StrList),
    opt("inclusive_end", Kind::Bool),
    opt("topics_as_numbers", Kind::Bool),
    opt("scan_budget", Kind::UInt(u64::MAX)),
    opt("reorg_depth", Kind::UInt(u64::MAX)),
];

const SOURCE: &[Key] = &[
    req("base_url", Kind::Str),
    opt("api_key_env", Kind::Str),
    opt("max_concurrency", Kind::Int),
    opt("requests_per_second", Kind::Float),
    opt("page_size", Kind::Int),
    opt("timeout_secs", Kind::Int),
    opt("max_retries", Kind::Int),
    opt("max_response_mb", Kind::Int),
    opt("max_retry_after_secs", Kind::Int),
    opt("sim", Kind::Table(SIM)),
];

const OUTPUT: &[Key] = &[
    req("uri", Kind::Str),
    opt("partition_by", Kind::StrList),
    opt("compression", Kind::Str),
    opt("compression_level", Kind::Int),
    opt("row_group_rows", Kind::Int),
    opt("file_rows", Kind::Int),
    opt("file_mb", Kind::Int),
    opt("commit_interval_secs", Kind::Int),
    opt("commit_pages", Kind::Int),
    opt("hash_encoding", Kind::Str),
    opt("memory_budget_mb", Kind::Int),
    opt("compact", Kind::Bool),
    opt("target_file_mb", Kind::Int),
    opt("bloom_filters", Kind::StrList),
    opt("endpoint", Kind::Str),
    opt("region", Kind::Str),
    opt("allow_http", Kind::Bool),
    opt("format", Kind::Str),
    opt("delta_retention", Kind::Duration),
    opt("catalog", Kind::Table(CATALOG)),
    opt("table_properties", Kind::StrTable),
];

/// `[output.catalog]`: an Iceberg REST catalog.
const CATALOG: &[Key] = &[
    req("type", Kind::Str),
    req("uri", Kind::Str),
    req("namespace", Kind::Str),
    opt("warehouse", Kind::Str),
    opt("credential_env", Kind::Str),
    opt("token_env", Kind::Str),
    opt("oauth2_server_uri", Kind::Str),
    opt("scope", Kind::Str),
];

const EXPORT: &[Key] = &[
    req("dataset", Kind::Str),
    req("chains", Kind::StrList),
    opt("window", Kind::Str),
    opt("numbers", Kind::IntList),
    opt("contract_address", Kind::Str),
    opt("signatures", Kind::StrList),
    opt("wallets", Kind::StrList),
    opt("token_address", Kind::Str),
    opt("addresses", Kind::StrList),
    opt("chunk_blocks", Kind::Int),
    opt("chunk_duration", Kind::Str),
    opt("align", Kind::Str),
    opt("incremental", Kind::Bool),
    opt("start", Kind::Start),
    opt("confirmations", Kind::Confirmations),
    opt("poll_interval", Kind::Duration),
    opt("roll_interval", Kind::Duration),
    opt("decode", Kind::Bool),
    opt("abi", Kind::Str),
    opt("table", Kind::Str),
    opt("u256", Kind::StrList),
    opt("also_raw", Kind::Bool),
    opt("columns", Kind::StrList),
    opt("exclude_columns", Kind::StrList),
];

/// The whole spec.
pub(crate) const SPEC: &[Key] = &[
    req("name", Kind::Str),
    req("source", Kind::Table(SOURCE)),
    req("output", Kind::Table(OUTPUT)),
    opt("poll_interval", Kind::Duration),
    opt("roll_interval", Kind::Duration),
    opt("export", Kind::Tables(EXPORT)),
];

/// The keys of `[source]` (for tests).
#[cfg(test)]
pub(crate) fn source() -> &'static [Key] {
    SOURCE
}
/// The keys of `[source.sim]` (for tests).
#[cfg(test)]
pub(crate) fn sim() -> &'static [Key] {
    SIM
}
/// The keys of `[output]` (for tests).
#[cfg(test)]
pub(crate) fn output() -> &'static [Key] {
    OUTPUT
}
/// The keys of `[[export]]` (for tests).
#[cfg(test)]
pub(crate) fn export() -> &'static [Key] {
    EXPORT
}

/// A shape problem: where, which key, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) span: Range<usize>,
    pub(crate) key: String,
    pub(crate) message: String,
}

/// Checks `root` against [`SPEC`], removing every entry that does not fit.
pub(crate) fn check(root: &mut Spanned<DeTable<'_>>) -> Vec<Problem> {
    let mut out = Vec::new();
    let span = root.span();
    check_table(root.get_mut(), span, SPEC, "", &mut out);
    out
}

fn path(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

fn check_table(t: &mut DeTable<'_>, span: Range<usize>, keys: &'static [Key], prefix: &str, out: &mut Vec<Problem>) {
    let mut remove: Vec<Cow<'static, str>> = Vec::new();
    for (k, v) in t.iter_mut() {
        let name: &str = k.get_ref();
        let full = path(prefix, name);
        let Some(key) = keys.iter().find(|x| x.name == name) else {
            out.push(Problem {
                span: k.span(),
                key: full,
                message: unknown_key_message(name, keys),
            });
            remove.push(Cow::Owned(name.to_string()));
            continue;
        };
        let vspan = v.span();
        if let Err(message) = check_value(v.get_mut(), key.kind, &full, out) {
            out.push(Problem {
                span: vspan,
                key: full,
                message,
            });
            remove.push(Cow::Owned(name.to_string()));
        }
    }
    for k in &remove {
        t.remove(k.as_ref());
    }
    // A key removed for its type was reported already; only absent ones
    // are missing.
    for key in keys.iter().filter(|k| k.required) {
        if !t.contains_key(key.name) && !remove.iter().any(|r| r == key.name) {
            let what = match key.kind {
                Kind::Table(_) => format!("the spec has no [{}] table", path(prefix, key.name)),
                _ if prefix.is_empty() => format!("missing key `{}`", key.name),
                _ => format!("missing key `{}` in [{prefix}]", key.name),
            };
            out.push(Problem {
                span: span.clone(),
                key: path(prefix, key.name),
                message: what,
            });
        }
    }
}

/// Checks one value; nested tables report their own problems into `out`
/// and are kept. `Err` is the message for a value that must be removed.
fn check_value(v: &mut DeValue<'_>, kind: Kind, full: &str, out: &mut Vec<Problem>) -> Result<(), String> {
    let got = describe(v);
    match (kind, &mut *v) {
        (Kind::Str, DeValue::String(_)) | (Kind::Bool, DeValue::Boolean(_)) => Ok(()),
        (Kind::Int, DeValue::Integer(i)) => int_of(i.as_str(), i.radix()).map(|_| ()),
        (Kind::UInt(max), DeValue::Integer(i)) => match int_of(i.as_str(), i.radix()) {
            Ok(n) if n >= 0 && (n as u64) <= max => Ok(()),
            Ok(n) => Err(format!("expected a whole number from 0 to {max}, got {n}")),
            Err(m) => Err(m),
        },
        (Kind::Float, DeValue::Float(_)) => Ok(()),
        (Kind::Float, DeValue::Integer(i)) => int_of(i.as_str(), i.radix()).map(|_| ()),
        (Kind::Duration, DeValue::String(_)) => Ok(()),
        (Kind::Duration, DeValue::Integer(i)) => int_of(i.as_str(), i.radix()).map(|_| ()),
        (Kind::Start, DeValue::String(_) | DeValue::Datetime(_)) => Ok(()),
        (Kind::Start, DeValue::Integer(i)) => int_of(i.as_str(), i.radix()).map(|_| ()),
        (Kind::Confirmations, DeValue::Integer(i)) => int_of(i.as_str(), i.radix()).map(|_| ()),
        (Kind::Confirmations, DeValue::Table(t)) => {
            for (_, x) in t.iter() {
                match x.get_ref() {
                    DeValue::Integer(i) => {
                        int_of(i.as_str(), i.radix())?;
                    }
                    other => {
                        return Err(format!("expected a number of blocks by chain, got {} for a chain", describe(other)));
                    }
                }
            }
            Ok(())
        }
        (Kind::StrList, DeValue::Array(a)) => match a.iter().find(|x| !matches!(x.get_ref(), DeValue::String(_))) {
            None => Ok(()),
            Some(x) => Err(format!(
                "expected an array of strings, got an array holding {}",
                describe(x.get_ref())
            )),
        },
        (Kind::IntList, DeValue::Array(a)) => {
            for x in a.iter() {
                match x.get_ref() {
                    DeValue::Integer(i) => {
                        int_of(i.as_str(), i.radix())?;
                    }
                    other => return Err(format!("expected an array of integers, got an array holding {}", describe(other))),
                }
            }
            Ok(())
        }
        (Kind::StrTable, DeValue::Table(t)) => match t.iter().find(|(_, x)| !matches!(x.get_ref(), DeValue::String(_))) {
            None => Ok(()),
            Some((k, x)) => Err(format!(
                "expected a table of strings, got {} for `{}`",
                describe(x.get_ref()),
                k.get_ref()
            )),
        },
        (Kind::Table(keys), DeValue::Table(t)) => {
            // An inline or dotted table has no header span of its own here;
            // missing keys point at the value.
            check_table(t, 0..0, keys, full, out);
            Ok(())
        }
        (Kind::Tables(keys), DeValue::Array(a)) => {
            for (i, item) in a.iter_mut().enumerate() {
                let span = item.span();
                match item.get_mut() {
                    DeValue::Table(t) => check_table(t, span, keys, &format!("{full}[{i}]"), out),
                    other => {
                        return Err(format!("expected [[{full}]] tables, got an array holding {}", describe(other)));
                    }
                }
            }
            Ok(())
        }
        _ => Err(format!("expected {}, got {got}", expected(kind))),
    }
}

/// The i64 an integer's text means; TOML integers are 64-bit signed.
fn int_of(text: &str, radix: u32) -> Result<i64, String> {
    // toml hands over `from_str_radix` digits: only a value past i64 fails.
    i64::from_str_radix(text, radix).map_err(|_| format!("`{text}` is out of range: TOML integers are 64-bit"))
}

fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::Str => "a string",
        Kind::Int | Kind::UInt(_) => "an integer",
        Kind::Float => "a number",
        Kind::Bool => "true or false",
        Kind::StrList => "an array of strings",
        Kind::IntList => "an array of integers",
        Kind::Duration => "a duration such as \"30s\", \"30m\", \"7d\", \"2w\" or \"P7D\", or a number of seconds",
        Kind::Start => "a block number or a date",
        Kind::Confirmations => "a number of blocks, or a table of them by chain",
        Kind::StrTable => "a table of strings",
        Kind::Table(_) => "a table",
        Kind::Tables(_) => "[[tables]]",
    }
}

fn describe(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => {
            let short: String = s.chars().take(40).collect();
            format!("a string (\"{short}\")")
        }
        DeValue::Integer(_) => "an integer".into(),
        DeValue::Float(_) => "a float".into(),
        DeValue::Boolean(_) => "a boolean".into(),
        DeValue::Datetime(_) => "a date-time".into(),
        DeValue::Array(_) => "an array".into(),
        DeValue::Table(_) => "a table".into(),
    }
}

/// "unknown key", with the nearest known key of the same table when one is
/// close (a typo), else the keys the table takes.
fn unknown_key_message(name: &str, keys: &[Key]) -> String {
    match nearest(name, keys.iter().map(|k| k.name)) {
        Some(k) => format!("unknown key; did you mean `{k}`?"),
        None => {
            let names: Vec<&str> = keys.iter().map(|k| k.name).collect();
            format!("unknown key (this table takes: {})", names.join(", "))
        }
    }
}

/// The candidate nearest to `name` when it is close enough to be a typo
/// of it (at most a third of its letters edited, at least 2 allowed),
/// for "did you mean" in errors about keys and values alike.
pub(crate) fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.trim().to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (edit_distance(&lower, c), c))
        .min()
        .filter(|(d, _)| *d <= (lower.chars().count() / 3).max(2))
        .map(|(_, c)| c)
}

/// Levenshtein distance in chars; inputs are short key names, so the
/// quadratic table is tiny, and it is capped to keep hostile keys cheap.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests;
