//! Why logs of a decoded event's topic0 fit none of its tables, in words a
//! user can act on: most often a signature pasted without its `indexed`
//! marks (`Transfer(address,address,uint256)`), whose logs carry three
//! topics where the signature declares one.

use super::{EventTable, LogDecoder};
use alloy_dyn_abi::DynSolType;

/// The shape of a log that carried a decoded event's topic0 and fit none
/// of its tables: the first candidate table, the topics it carried and
/// its data in 32-byte words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogShape {
    /// Index of the first table with the log's topic0.
    pub table: usize,
    /// Topics the log carried (topic0 included).
    pub topics: usize,
    /// Its data's length in 32-byte words.
    pub words: usize,
}

/// Topics and data words `t`'s event declares (data words: at least, for
/// dynamic types).
fn declared(t: &EventTable) -> (usize, usize) {
    let indexed = t.params.iter().filter(|p| p.indexed).count();
    let words = t.params.iter().filter(|p| !p.indexed).map(|p| head_words(&p.ty)).sum();
    (1 + indexed, words)
}

/// The words a value of `ty` takes in the data's head.
fn head_words(ty: &DynSolType) -> usize {
    match ty {
        DynSolType::FixedArray(inner, n) if !inner.is_dynamic() => head_words(inner) * n,
        DynSolType::Tuple(items) if !ty.is_dynamic() => items.iter().map(head_words).sum(),
        _ => 1,
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

impl LogDecoder {
    /// What to tell the user of logs shaped as `shape`: what they carry
    /// against what the signature declares, and a signature that fits
    /// them (its first parameters marked `indexed`), or the preset of the
    /// same event, where one does.
    pub fn hint(&self, shape: LogShape) -> Option<String> {
        let t = self.tables.get(shape.table)?;
        let (topics, words) = declared(t);
        let mut out = format!(
            "they carry {}'s topic0 but {} and {} of data, where `{}` declares {} and {}",
            t.event.name,
            plural(shape.topics, "topic"),
            plural(shape.words, "word"),
            t.event.signature(),
            plural(topics, "topic"),
            plural(words, "word"),
        );
        // The same parameters, the first `topics - 1` of them indexed.
        let n = shape.topics.saturating_sub(1);
        let inputs = &t.event.inputs;
        let refit: usize = t.params.iter().skip(n).map(|p| head_words(&p.ty)).sum();
        if n <= inputs.len() && n <= 3 && refit == shape.words && t.params.iter().take(n).all(|p| !p.ty.is_dynamic()) {
            let params: Vec<String> = inputs
                .iter()
                .enumerate()
                .map(|(i, p)| if i < n { format!("{} indexed", p.ty) } else { p.ty.clone() })
                .collect();
            out.push_str(&format!(": write `{}({})`", t.event.name, params.join(",")));
            let preset = crate::spec::decoding::PRESETS.iter().find(|(_, sig)| {
                alloy_json_abi::Event::parse(sig)
                    .is_ok_and(|e| e.selector() == t.event.selector() && e.inputs.iter().filter(|p| p.indexed).count() == n)
            });
            if let Some((dataset, _)) = preset {
                out.push_str(&format!(", or use dataset = \"{dataset}\""));
            }
        }
        Some(out)
    }
}
