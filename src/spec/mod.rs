//! Pipeline specs: parse TOML into the raw model (`raw`), then validate
//! without I/O into a typed, ready-to-plan [`Spec`]. Validation collects
//! every error, each with `file:line:col`, the key path and what was
//! expected, so a user fixes a spec in one pass.
//!
//! The passes, each reporting everything it finds: TOML syntax (all
//! syntax errors, a duplicate key by name; nothing else is checked on a
//! text that is not TOML), then the shape (`schema`: unknown keys with a
//! "did you mean", types, missing keys; offending entries are dropped),
//! then the values of what is left (`validate`: ranges, names, windows,
//! signatures, simulator settings, unit counts) and the exports against
//! each other (no two may select the same rows).
//!
//! Invariants of a [`Spec`]: every block number is at most
//! [`crate::vocab::window::MAX_BLOCK`], every export and chain plans at most
//! [`crate::vocab::cuts::MAX_UNITS`] units, the job name fits in file names, and no two
//! exports overlap. Every setting left out takes its value from
//! [`defaults`].
//!
//! `spec` comes first among the stages: it imports only the shared
//! vocabulary ([`crate::vocab`]).

pub mod changes;
pub mod decoding;
pub mod defaults;
mod error;
mod identity;
mod model;
mod raw;
mod shape;
mod sim_options;
mod text;
mod validate;

use crate::vocab::Dataset;
pub use changes::{FormatChange, LayoutChange, LayoutKey};
pub use decoding::{DecodedTable, Decoding, U256Columns};
pub use error::{SpecError, SpecErrors};
pub use identity::{Comparison, ExportIdentity, JobIdentity, LAYOUT_KEYS, SHARED_KEYS};
pub use model::{
    BaseUrl, Catalog, CatalogAuth, Compression, Export, HashEncoding, Incremental, MAX_NAME_LEN, Output, OutputFormat, Selection, Source,
    Spec, looks_like_a_key,
};
pub use sim_options::{FORBID_ENDPOINTS, SimOptions, parse_forbid};

use raw::RawSpec;
use validate::Validator;

/// The commented example spec written by `chainetl init`.
pub const EXAMPLE: &str = include_str!("example.toml");

impl Spec {
    /// Reads and validates a spec file.
    pub fn load(path: &str) -> Result<Spec, SpecErrors> {
        Spec::load_with(path, &[])
    }

    /// Reads a spec file, interpolates `${VAR}`s from the environment,
    /// applies `--set key.path=value` overrides, and validates the result.
    pub fn load_with(path: &str, sets: &[String]) -> Result<Spec, SpecErrors> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SpecErrors(vec![SpecError {
                file: path.into(),
                line: 0,
                col: 0,
                key: String::new(),
                message: format!("cannot read the spec: {e}"),
            }])
        })?;
        let text = text::interpolate(path, &text, &|k| std::env::var(k).ok()).map_err(SpecErrors)?;
        let applied = text::apply_overrides(path, &text, sets).map_err(SpecErrors)?;
        Spec::parse(path, &applied).map_err(|e| SpecErrors(text::blame_overrides(&text, &applied, sets, e.0)))
    }

    /// Validates spec text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Spec, SpecErrors> {
        let (mut root, syntax) = toml::de::DeTable::parse_recoverable(text);
        if !syntax.is_empty() {
            // The recovered tree of a text that is not TOML would only add
            // confusing follow-on errors: report the syntax alone.
            let mut errors: Vec<SpecError> = syntax.iter().map(|e| error::syntax_error(file, text, e)).collect();
            errors.sort_by_key(|e| (e.line, e.col));
            errors.dedup();
            return Err(SpecErrors(errors));
        }
        let mut v = Validator::new(file, text);
        for p in shape::check(&mut root) {
            v.err(p.span, p.key, p.message);
        }
        let raw = match <RawSpec as serde::Deserialize>::deserialize(toml::de::Deserializer::from(root)) {
            Ok(r) => r,
            Err(e) => {
                // Unreachable while `schema` matches the raw model (a unit
                // test checks it); reported with the rest all the same.
                let span = e.span().unwrap_or(0..0);
                v.err(span, "", e.message().trim().to_string());
                return Err(SpecErrors(v.into_errors()));
            }
        };
        let spec = v.spec(raw);
        let errors = v.into_errors();
        if errors.is_empty() { Ok(spec) } else { Err(SpecErrors(errors)) }
    }

    /// A hash of everything that decides which rows land where; resuming a
    /// job whose hash changed is refused.
    pub fn content_hash(&self) -> String {
        let value = serde_json::json!({
            "name": self.name,
            "output": self.output,
            "exports": self.exports,
        });
        let digest = crate::vocab::evm::keccak(value.to_string().as_bytes());
        hex::encode(&digest[..16])
    }
}

#[cfg(test)]
mod tests;
