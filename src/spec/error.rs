//! Spec errors: each names the file, the line and column, the key path
//! and what was expected; they are collected, never returned one by one.

use std::fmt;

/// One problem in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The spec file.
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Key path such as `export[1].window`.
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}:{}: ", self.file, self.line, self.col)?;
        } else {
            write!(f, "{}: ", self.file)?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

/// Every problem found in a spec.
#[derive(Debug, Clone, thiserror::Error)]
pub struct SpecErrors(pub Vec<SpecError>);

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(f, "{n} error{} in the spec:", if n == 1 { "" } else { "s" })?;
        for e in &self.0 {
            writeln!(f, "  {e}")?;
        }
        Ok(())
    }
}

/// A TOML syntax error as a spec error; a duplicate key is named.
pub(super) fn syntax_error(file: &str, text: &str, e: &toml::de::Error) -> SpecError {
    let span = e.span().unwrap_or(0..0);
    let (line, col) = line_col(text, span.start);
    let mut message = e.message().trim().to_string();
    if message.starts_with("duplicate key")
        && let Some(k) = text.get(span.clone()).map(str::trim).filter(|k| !k.is_empty() && !k.contains('\n'))
    {
        message = format!("duplicate key `{k}`: each key may be set once per table");
    }
    SpecError {
        file: file.into(),
        line,
        col,
        key: String::new(),
        message,
    }
}

/// 1-based line and column of byte `offset` in `text`.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}
