//! The values of a spec, checked once its shape is known ([`super::schema`]
//! has removed unknown keys and values of the wrong type): ranges, names,
//! windows, signatures, simulator settings, unit counts, and the exports
//! against each other. Pure: no file or network I/O.
//!
//! Every check reports what it finds and goes on with a default, so one
//! pass reports every problem; [`Validator::spec`] yields the typed
//! [`Spec`], which is only handed out when nothing was reported.

mod catalog;
mod columns;
mod decoding;
mod export;
mod output;
mod overlap;
mod selection;
mod source;
mod units;

use super::error::line_col;
use super::raw::RawSpec;
use super::{MAX_NAME_LEN, Spec, SpecError, defaults};
use crate::vocab::evm::is_address;
use crate::vocab::window::parse_duration;
use std::ops::Range;
use toml::Spanned;

/// Collects the problems of one spec text.
pub(super) struct Validator<'a> {
    file: &'a str,
    text: &'a str,
    errors: Vec<SpecError>,
}

impl<'a> Validator<'a> {
    pub(super) fn new(file: &'a str, text: &'a str) -> Validator<'a> {
        Validator {
            file,
            text,
            errors: Vec::new(),
        }
    }

    /// The spec file's path (relative paths in it are relative to its directory).
    pub(super) fn file(&self) -> &str {
        self.file
    }

    /// Every problem reported so far, in the order of the text.
    pub(super) fn into_errors(mut self) -> Vec<SpecError> {
        self.errors.sort_by_key(|e| (e.line, e.col));
        self.errors
    }

    /// Reports a problem at `span` of the text.
    pub(super) fn err(&mut self, span: Range<usize>, key: impl Into<String>, message: impl Into<String>) {
        let (line, col) = line_col(self.text, span.start);
        self.errors.push(SpecError {
            file: self.file.into(),
            line,
            col,
            key: key.into(),
            message: message.into(),
        });
    }

    /// The whole spec; check [`Validator::into_errors`] before using it.
    pub(super) fn spec(&mut self, raw: RawSpec) -> Spec {
        let name = raw.name.as_ref().map(|n| n.get_ref().clone()).unwrap_or_default();
        if let Some(n) = &raw.name {
            self.name(n.span(), &name);
        }
        let source = self.source(&raw.source.map(Spanned::into_inner).unwrap_or_default());
        let raw_output = raw.output.map(Spanned::into_inner).unwrap_or_default();
        let output = self.output(&raw_output);
        if raw.export.is_empty() {
            self.err(0..0, "export", "the spec has no [[export]] table: add at least one");
        }
        let poll = self.duration(&raw.poll_interval, "poll_interval", defaults::POLL_INTERVAL_SECS as i64);
        let roll = self.duration(&raw.roll_interval, "roll_interval", defaults::ROLL_INTERVAL_SECS as i64);
        let mut exports = Vec::new();
        for (i, e) in raw.export.iter().enumerate() {
            if let Some(x) = self.export(i, e.get_ref(), poll, roll) {
                exports.push(x);
            }
        }
        self.overlaps(&raw.export, &exports);
        self.shared_tables(&raw.export, &exports);
        self.same_columns(&raw.export, &exports);
        Spec {
            file: self.file.into(),
            name,
            source,
            output,
            exports,
        }
    }

    /// The job name: it must fit in file and directory names.
    fn name(&mut self, span: Range<usize>, name: &str) {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) || name.starts_with('.') {
            let shown: String = name.chars().take(80).collect();
            self.err(
                span,
                "name",
                format!("`{shown}` is not a job name: use letters, digits, `-`, `_` and `.`, not starting with `.`"),
            );
        } else if name.len() > MAX_NAME_LEN {
            self.err(
                span,
                "name",
                format!(
                    "{} characters is too long: at most {MAX_NAME_LEN} (it starts every file name, and file names are limited to 255 bytes)",
                    name.len()
                ),
            );
        }
    }

    /// An integer from `lo` to `hi`; `default` when absent or out of range.
    fn int_in(&mut self, v: &Option<Spanned<i64>>, key: &str, lo: i64, hi: i64, default: i64) -> i64 {
        match v {
            None => default,
            Some(s) if (lo..=hi).contains(s.get_ref()) => *s.get_ref(),
            Some(s) => {
                self.err(s.span(), key, format!("must be an integer from {lo} to {hi}, got {}", s.get_ref()));
                default
            }
        }
    }

    /// An address, lower-cased.
    fn address(&mut self, v: &Spanned<String>, key: &str) -> String {
        if !is_address(v.get_ref()) {
            self.err(
                v.span(),
                key,
                format!("`{}` is not an address: expected 0x followed by 40 hex digits", v.get_ref()),
            );
        }
        v.get_ref().to_ascii_lowercase()
    }

    /// A list of at least one and at most `max` items.
    fn list<T>(&mut self, v: &Option<Spanned<Vec<Spanned<T>>>>, key: &str, max: usize) -> Option<Vec<Spanned<T>>>
    where
        T: Clone,
    {
        let l = v.as_ref()?;
        if l.get_ref().is_empty() {
            self.err(l.span(), key, "must not be empty");
        } else if l.get_ref().len() > max {
            self.err(l.span(), key, format!("takes at most {max} items, got {}", l.get_ref().len()));
        }
        Some(l.get_ref().clone())
    }

    /// A duration in any form [`parse_duration`] takes, or a number of seconds.
    fn duration(&mut self, v: &Option<Spanned<toml::Value>>, key: &str, default: i64) -> i64 {
        let Some(v) = v else {
            return default;
        };
        let r = match v.get_ref() {
            toml::Value::Integer(n) if (1..=10_000_000).contains(n) => Ok(*n),
            toml::Value::String(s) => parse_duration(s),
            other => Err(format!(
                "expected a duration ({}) or a number of seconds, got {other}",
                crate::vocab::forms::DURATION_FORMS
            )),
        };
        r.unwrap_or_else(|m| {
            self.err(v.span(), key, m);
            default
        })
    }
}

/// At most 100 characters of `s`, for messages about hostile input.
fn short(s: &str) -> String {
    match s.char_indices().nth(100) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// `v` without repeats, first occurrences kept in order.
fn dedup(mut v: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(x.clone()));
    v
}
