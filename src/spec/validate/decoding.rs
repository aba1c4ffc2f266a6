//! `decode`, `abi`, `table`, `u256`, `also_raw` and the preset datasets of
//! an events export (see [`crate::spec::decoding`]). Reads the `abi` file,
//! relative to the spec's directory: the one file the validator reads.

use super::export::At;
use super::{Validator, short};
use crate::spec::decoding::{DecodedTable, Decoding, PRESETS, U256Columns, parse_event, snake_case, valid_table_name};
use crate::spec::raw::RawExport;
use crate::spec::{Export, Selection};
use alloy_json_abi::{Event, JsonAbi};
use std::ops::Range;
use toml::Spanned;

/// topic0s one export may select: each is in every request's query string.
const MAX_TOPICS: usize = 100;

/// The `u256` column kinds, and the names they may be given as.
const U256_KINDS: [(&str, &str); 3] = [("decimal38", "decimal38"), ("decimal128", "decimal38"), ("binary", "binary")];

impl Validator<'_> {
    /// Exports may write one decoded table only with one event and the
    /// same columns: files of both land in one directory, read as one table.
    pub(super) fn shared_tables(&mut self, raw: &[Spanned<RawExport>], exports: &[Export]) {
        let mut seen: Vec<(&str, &DecodedTable, U256Columns, usize)> = Vec::new();
        for e in exports {
            let Some(d) = &e.decoding else { continue };
            for t in &d.tables {
                let clash = seen
                    .iter()
                    .find(|(name, other, cols, _)| *name == t.table && (!same_event(&other.event, &t.event) || *cols != d.u256));
                if let Some((_, other, _, j)) = clash {
                    let span = raw.get(e.index).map_or(0..0, |r| {
                        let r = r.get_ref();
                        r.table.as_ref().or(r.dataset.as_ref()).map_or(0..0, Spanned::span)
                    });
                    let what = if !same_event(&other.event, &t.event) {
                        format!("{} there, {} here", other.signature(), t.signature())
                    } else {
                        "other `u256` columns".to_string()
                    };
                    self.err(
                        span,
                        format!("export[{}].table", e.index),
                        format!(
                            "table `{}` is also written by export[{j}] with other columns ({what}): give one of them another name with `table` (an export decoding one event), or decode them in one export",
                            t.table
                        ),
                    );
                }
                seen.push((&t.table, t, d.u256, e.index));
            }
        }
    }

    /// What the export decodes (None: raw events only). Adds the topic0 of
    /// every decoded event to what `selection` selects.
    pub(super) fn decoding(&mut self, at: &At<'_>, selection: &mut Selection) -> Option<Decoding> {
        let e = at.raw;
        let preset = e
            .dataset
            .as_ref()
            .and_then(|d| PRESETS.iter().find(|(name, _)| name == d.get_ref()));
        let decode = e.decode.as_ref().map(|d| *d.get_ref());
        let mut events: Vec<(Event, Range<usize>)> = Vec::new();
        if let Some((name, sig)) = preset {
            for key in ["signatures", "abi", "decode"] {
                if let Some(span) = self.span_of(at, key) {
                    self.err(span, at.key(key), format!("does not apply to dataset `{name}`: it decodes `{sig}`"));
                }
            }
            events.extend(parse_event(sig).ok().map(|ev| (ev, at.dataset_span.clone())));
        } else {
            if decode == Some(true) {
                events.extend(self.signature_events(at));
            }
            if let Some(abi) = &e.abi {
                if decode == Some(false) {
                    self.err(
                        abi.span(),
                        at.key("abi"),
                        "decodes every event of the ABI: drop `decode = false`, or `abi`",
                    );
                }
                events.extend(self.abi_events(at, abi).into_iter().map(|ev| (ev, abi.span())));
            }
        }
        if events.is_empty() {
            for key in ["table", "u256", "also_raw"] {
                if let Some(span) = self.span_of(at, key) {
                    self.err(
                        span,
                        at.key(key),
                        "applies only to a decoding export (`decode = true`, `abi`, or a preset dataset)",
                    );
                }
            }
            return None;
        }
        let tables = self.tables(at, preset.map(|(name, _)| *name), events);
        if let Selection::Events { topics, .. } = selection {
            for t in &tables {
                let topic = t.topic0();
                if !topics.contains(&topic) {
                    topics.push(topic);
                }
            }
            if topics.len() > MAX_TOPICS {
                let span = e.abi.as_ref().map_or(at.dataset_span.clone(), Spanned::span);
                self.err(
                    span,
                    at.key("abi"),
                    format!(
                        "selects {} events; a request names at most {MAX_TOPICS}: split the ABI's events across exports (`signatures`)",
                        topics.len()
                    ),
                );
            }
        }
        Some(Decoding {
            tables,
            u256: self.u256(at),
            also_raw: e.also_raw.as_ref().is_some_and(|b| *b.get_ref()),
        })
    }

    /// Where `key` is in the export, if written.
    fn span_of(&self, at: &At<'_>, key: &str) -> Option<Range<usize>> {
        let e = at.raw;
        let s = |v: Option<Range<usize>>| v;
        match key {
            "signatures" => s(e.signatures.as_ref().map(Spanned::span)),
            "abi" => s(e.abi.as_ref().map(Spanned::span)),
            "decode" => s(e.decode.as_ref().map(Spanned::span)),
            "table" => s(e.table.as_ref().map(Spanned::span)),
            "u256" => s(e.u256.as_ref().map(Spanned::span)),
            "also_raw" => s(e.also_raw.as_ref().map(Spanned::span)),
            _ => None,
        }
    }

    /// `decode = true`: each of `signatures` parsed as an event; a topic0
    /// hash cannot be decoded.
    fn signature_events(&mut self, at: &At<'_>) -> Vec<(Event, Range<usize>)> {
        let mut out = Vec::new();
        let Some(list) = &at.raw.signatures else {
            let span = at.raw.decode.as_ref().map_or(at.dataset_span.clone(), Spanned::span);
            self.err(
                span,
                at.key("signatures"),
                "decode = true needs `signatures` (full event signatures) or `abi`",
            );
            return out;
        };
        for s in list.get_ref() {
            let t = s.get_ref().trim();
            if t.starts_with("0x") || t.starts_with("0X") {
                self.err(
                    s.span(),
                    at.key("signatures"),
                    format!("`{}` is a topic0 hash: decode = true needs the event's signature, e.g. `event Transfer(address indexed from, address indexed to, uint256 value)`", short(t)),
                );
                continue;
            }
            match parse_event(t) {
                Ok(ev) if ev.anonymous => self.err(
                    s.span(),
                    at.key("signatures"),
                    "an anonymous event has no topic0 to select or decode it by",
                ),
                Ok(ev) => out.push((ev, s.span())),
                // The selection pass reports signatures that do not parse.
                Err(_) => {}
            }
        }
        out
    }

    /// The non-anonymous events of the `abi` file.
    fn abi_events(&mut self, at: &At<'_>, abi: &Spanned<String>) -> Vec<Event> {
        let path = abi.get_ref().trim();
        let full = std::path::Path::new(self.file())
            .parent()
            .map_or_else(|| path.into(), |dir| dir.join(path));
        let text = match std::fs::read_to_string(&full) {
            Ok(t) => t,
            Err(e) => {
                self.err(abi.span(), at.key("abi"), format!("cannot read {}: {e}", full.display()));
                return Vec::new();
            }
        };
        let parsed = parse_abi(&text);
        let abi_doc = match parsed {
            Ok(a) => a,
            Err(e) => {
                self.err(abi.span(), at.key("abi"), format!("{} is not a JSON ABI: {e}", full.display()));
                return Vec::new();
            }
        };
        let events: Vec<Event> = abi_doc.events().filter(|ev| !ev.anonymous).cloned().collect();
        if events.is_empty() {
            self.err(
                abi.span(),
                at.key("abi"),
                format!("{} has no event with a topic0 to decode", full.display()),
            );
        }
        events
    }

    /// Table names: `table` for an export of one event, else each event's
    /// name in snake_case (a preset: the dataset's name); a name two events
    /// share gets the later one's topic0 prefix.
    fn tables(&mut self, at: &At<'_>, preset: Option<&str>, events: Vec<(Event, Range<usize>)>) -> Vec<DecodedTable> {
        let named = at.raw.table.as_ref();
        if let Some(t) = named
            && events.len() > 1
        {
            self.err(
                t.span(),
                at.key("table"),
                format!(
                    "names one table, but this export decodes {} events: drop `table` (each gets its event's name) or split the export",
                    events.len()
                ),
            );
        }
        let mut tables: Vec<DecodedTable> = Vec::new();
        for (event, span) in events {
            if let Err(m) = decodable(&event) {
                self.err(span.clone(), at.key("signatures"), m);
                continue;
            }
            if tables.iter().any(|t| same_event(&t.event, &event)) {
                continue;
            }
            let mut table = match (named, preset) {
                (Some(t), _) => t.get_ref().trim().to_string(),
                (None, Some(p)) => p.to_string(),
                (None, None) => snake_case(&event.name),
            };
            if tables.iter().any(|t| t.table == table) {
                let base = format!("{table}_{}", &event.selector().to_string()[2..10]);
                table = (1..)
                    .map(|k| if k == 1 { base.clone() } else { format!("{base}_{k}") })
                    .find(|c| tables.iter().all(|t| &t.table != c))
                    .unwrap_or(base);
            }
            if let Err(m) = valid_table_name(&table) {
                let span = named.map_or(span, Spanned::span);
                self.err(span, at.key("table"), format!("event {}: {m}", event.name));
            }
            tables.push(DecodedTable { table, event });
        }
        tables
    }

    /// `u256`: extra columns of wide integers.
    fn u256(&mut self, at: &At<'_>) -> U256Columns {
        let mut cols = U256Columns::default();
        for s in self.list(&at.raw.u256, &at.key("u256"), 8).unwrap_or_default() {
            match U256_KINDS.iter().find(|(name, _)| *name == s.get_ref().trim()) {
                Some((_, "decimal38")) => cols.decimal38 = true,
                Some(_) => cols.binary = true,
                None => self.err(
                    s.span(),
                    at.key("u256"),
                    match crate::spec::shape::nearest(s.get_ref(), U256_KINDS.iter().map(|(name, _)| *name)) {
                        Some(n) => format!("unknown `{}`: did you mean `{n}`?", short(s.get_ref())),
                        None => format!(
                            "unknown `{}`: expected decimal38 or binary (the exact text and `_f64` are always written)",
                            short(s.get_ref())
                        ),
                    },
                ),
            }
        }
        cols
    }
}

/// Whether alloy can decode `event`: every type resolves, at most three
/// parameters are indexed.
fn decodable(event: &Event) -> Result<(), String> {
    use alloy_dyn_abi::Specifier;
    for (i, p) in event.inputs.iter().enumerate() {
        let _: alloy_dyn_abi::DynSolType = p
            .resolve()
            .map_err(|e| format!("event {}: parameter {i} (`{}`): {e}", event.name, p.ty))?;
    }
    let indexed = event.inputs.iter().filter(|p| p.indexed).count();
    if indexed > 3 {
        return Err(format!(
            "event {} has {indexed} indexed parameters: a log has room for 3",
            event.name
        ));
    }
    Ok(())
}

/// One event, however its ABI spells it: name, parameter types, names and
/// `indexed` (build artifacts add `internalType`, which does not change a
/// log's columns).
fn same_event(a: &Event, b: &Event) -> bool {
    a.anonymous == b.anonymous && a.full_signature() == b.full_signature()
}

/// A JSON ABI as tools write it: a bare array or a build artifact holding
/// one under `"abi"`, perhaps after a byte-order mark; events written by
/// older compilers without `"anonymous"` are not anonymous.
fn parse_abi(text: &str) -> Result<JsonAbi, serde_json::Error> {
    let mut doc: serde_json::Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))?;
    if doc.get("abi").is_some_and(serde_json::Value::is_array) {
        doc = doc["abi"].take();
    }
    if let Some(items) = doc.as_array_mut() {
        for item in items.iter_mut().filter_map(serde_json::Value::as_object_mut) {
            if item.get("type").and_then(serde_json::Value::as_str) == Some("event") {
                item.entry("anonymous").or_insert(serde_json::Value::Bool(false));
            }
        }
    }
    serde_json::from_value(doc)
}

#[cfg(test)]
mod tests {
    use super::parse_abi;

    #[test]
    fn abis_as_tools_write_them() {
        let event = r#"{"type": "event", "name": "Transfer", "inputs": [{"name": "from", "type": "address", "indexed": true}]}"#;
        for text in [
            format!("[{event}]"),
            format!("\u{feff}[{event}]"),
            format!(r#"{{"contractName": "T", "abi": [{event}]}}"#),
        ] {
            let abi = parse_abi(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let events: Vec<_> = abi.events().collect();
            assert_eq!(events.len(), 1, "{text}");
            assert!(!events[0].anonymous);
        }
        assert!(parse_abi("{\"abi\": 3}").is_err());
        assert!(parse_abi("not json").is_err());
    }
}
