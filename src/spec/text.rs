//! Spec text before parsing: `${VAR}` interpolation and `--set key=value`
//! overrides, so one spec serves several environments. Both keep every
//! other line where it was, so errors still point at the right line.

use super::SpecError;
use toml_edit::{DocumentMut, Item};

/// Where in the TOML text a `${` stands: what its value must be escaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Outside strings: the value is TOML source (`max_concurrency = ${N}`).
    Bare,
    /// `"…"` (or `"""…"""` when `multi`): backslashes, quotes and control
    /// characters escaped.
    Basic,
    /// `'…'`: inserted as it is; it cannot hold `'` or a line break.
    Literal,
    /// `'''…'''`: inserted as it is; it cannot hold three quotes in a row.
    MultiLiteral,
    /// `# …`: left alone, unset variables included.
    Comment,
}

/// Replaces `${NAME}` with the variable's value (`$${` stays a literal
/// `${`), escaped for where it stands: in a basic string `"…"` the value's
/// backslashes, quotes and control characters are escaped; in a literal
/// string `'…'` it goes in as it is (backslashes kept; a value a literal
/// string cannot hold is an error); outside strings it is TOML source.
/// Comments are left alone, so an unset variable there is no error. Unset
/// variables elsewhere are errors pointing at their line and column.
pub(crate) fn interpolate(file: &str, text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, Vec<SpecError>> {
    if !text.contains("${") {
        return Ok(text.to_string());
    }
    let mut s = Interpolation {
        file,
        text,
        env,
        out: String::with_capacity(text.len()),
        errors: Vec::new(),
        i: 0,
        line: 1,
        line_start: 0,
        ctx: Ctx::Bare,
        multi: false,
    };
    while s.i < text.len() {
        let c = text.as_bytes()[s.i];
        if c == b'\n' {
            s.newline();
        } else if s.ctx != Ctx::Comment && s.at(s.i, "$${") {
            s.out.push_str("${");
            s.i += 3;
        } else if s.ctx != Ctx::Comment && s.at(s.i, "${") {
            s.reference();
        } else {
            s.copy(c);
        }
    }
    if s.errors.is_empty() { Ok(s.out) } else { Err(s.errors) }
}

/// The state of one pass of [`interpolate`] over a text.
struct Interpolation<'a> {
    file: &'a str,
    text: &'a str,
    env: &'a dyn Fn(&str) -> Option<String>,
    out: String,
    errors: Vec<SpecError>,
    /// Byte offset of the next character.
    i: usize,
    /// 1-based line of `i`, and the offset that line starts at.
    line: usize,
    line_start: usize,
    /// Where `i` stands, and whether its string is a `"""` one.
    ctx: Ctx,
    multi: bool,
}

impl Interpolation<'_> {
    fn at(&self, i: usize, pat: &str) -> bool {
        self.text.get(i..).is_some_and(|r| r.starts_with(pat))
    }

    fn newline(&mut self) {
        self.line += 1;
        self.line_start = self.i + 1;
        // Single-line strings and comments end at a line break.
        if self.ctx == Ctx::Comment || self.ctx == Ctx::Literal || (self.ctx == Ctx::Basic && !self.multi) {
            self.ctx = Ctx::Bare;
        }
        self.out.push('\n');
        self.i += 1;
    }

    /// `${NAME}` at `i`: the variable's value, escaped for where it stands.
    fn reference(&mut self) {
        let col = self.i - self.line_start + 1;
        let (file, line) = (self.file, self.line);
        let err = |message: String| SpecError {
            file: file.into(),
            line,
            col,
            key: String::new(),
            message,
        };
        let rest = &self.text[self.i + 2..];
        let close = rest.find(['}', '\n']).filter(|&j| rest.as_bytes()[j] == b'}');
        let Some(end) = close else {
            self.errors.push(err("`${` without a closing `}`".into()));
            self.out.push_str("${");
            self.i += 2;
            return;
        };
        let name = &rest[..end];
        self.i += 2 + end + 1;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            self.errors.push(err(format!(
                "`${{{name}}}` is not a variable reference: names are letters, digits and `_`"
            )));
            return;
        }
        let Some(v) = (self.env)(name) else {
            self.errors
                .push(err(format!("`${{{name}}}`: environment variable `{name}` is not set")));
            return;
        };
        match self.ctx {
            Ctx::Basic => escape_basic(&v, &mut self.out),
            Ctx::Literal if v.contains(['\'', '\n', '\r']) => self.errors.push(err(format!(
                "the value of `{name}` holds a quote or a line break, which a literal string '…' cannot: use a \"…\" string"
            ))),
            Ctx::MultiLiteral if v.contains("'''") => self.errors.push(err(format!(
                "the value of `{name}` holds three quotes in a row, which a ''' string cannot: use a \"\"\" string"
            ))),
            _ => self.out.push_str(&v),
        }
    }

    /// Not a `${`: copies what starts at `i` (byte `c`), tracking strings
    /// and comments.
    fn copy(&mut self, c: u8) {
        let (text, i) = (self.text, self.i);
        let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
        let closing = |q: &str| {
            // Up to two more quotes may belong to the string itself.
            let mut n = 3;
            while n < 5 && self.at(i + n, q) {
                n += 1;
            }
            n
        };
        let (ctx, multi) = (self.ctx, self.multi);
        let (n, next) = match ctx {
            Ctx::Bare if c == b'#' => (1, Ctx::Comment),
            Ctx::Bare if self.at(i, "\"\"\"") => {
                self.multi = true;
                (3, Ctx::Basic)
            }
            Ctx::Bare if c == b'"' => {
                self.multi = false;
                (1, Ctx::Basic)
            }
            Ctx::Bare if self.at(i, "'''") => (3, Ctx::MultiLiteral),
            Ctx::Bare if c == b'\'' => (1, Ctx::Literal),
            // An escape: the next character cannot end the string.
            Ctx::Basic if c == b'\\' => (1 + text[i + 1..].chars().next().map_or(0, char::len_utf8), ctx),
            Ctx::Basic if multi && self.at(i, "\"\"\"") => (closing("\""), Ctx::Bare),
            Ctx::Basic if !multi && c == b'"' => (1, Ctx::Bare),
            Ctx::Literal if c == b'\'' => (1, Ctx::Bare),
            Ctx::MultiLiteral if self.at(i, "'''") => (closing("'"), Ctx::Bare),
            _ => (ch_len, ctx),
        };
        self.ctx = next;
        self.out.push_str(&text[i..i + n]);
        self.i += n;
    }
}

/// Appends `v` escaped for a TOML basic string.
fn escape_basic(v: &str, out: &mut String) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
}

/// Applies `key.path=value` overrides (`export.0.window=7d`). The value is
/// read as TOML when it parses as a TOML value (numbers, booleans, arrays,
/// quoted strings) and as a plain string otherwise.
pub(crate) fn apply_overrides(file: &str, text: &str, sets: &[String]) -> Result<String, Vec<SpecError>> {
    if sets.is_empty() {
        return Ok(text.to_string());
    }
    let err = |message: String| {
        vec![SpecError {
            file: file.into(),
            line: 0,
            col: 0,
            key: String::new(),
            message,
        }]
    };
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| err(e.to_string()))?;
    for set in sets {
        let Some((path, raw)) = set.split_once('=') else {
            return Err(err(format!("--set `{set}`: expected key.path=value")));
        };
        let value = match format!("v = {raw}").parse::<DocumentMut>() {
            Ok(d) => d.get("v").and_then(|i| i.as_value()).cloned().unwrap_or_else(|| raw.into()),
            Err(_) => raw.into(),
        };
        let mut item: &mut Item = doc.as_item_mut();
        let parts: Vec<&str> = path.trim().split('.').collect();
        for (k, part) in parts.iter().enumerate() {
            let last = k + 1 == parts.len();
            item = match part.parse::<usize>() {
                Ok(i) => match item {
                    Item::ArrayOfTables(a) => match a.get_mut(i) {
                        Some(t) => {
                            // Step into the table as an item.
                            let t: &mut toml_edit::Table = t;
                            let key = parts.get(k + 1).copied().unwrap_or("");
                            if last || key.is_empty() {
                                return Err(err(format!("--set `{path}`: name a key inside export {i}")));
                            }
                            if k + 2 == parts.len() {
                                t.insert(key, Item::Value(value.clone()));
                                break;
                            }
                            &mut t[key]
                        }
                        None => return Err(err(format!("--set `{path}`: there is no [[{}]] number {i}", parts[..k].join(".")))),
                    },
                    _ => return Err(err(format!("--set `{path}`: `{}` is not a list of tables", parts[..k].join(".")))),
                },
                Err(_) if last => {
                    match item.as_table_like_mut() {
                        Some(t) => {
                            t.insert(part, Item::Value(value.clone()));
                        }
                        None => return Err(err(format!("--set `{path}`: `{}` is not a table", parts[..k].join(".")))),
                    }
                    break;
                }
                Err(_) => {
                    if item.get(part).is_none() {
                        match item.as_table_like_mut() {
                            Some(t) => {
                                t.insert(part, Item::Table(toml_edit::Table::new()));
                            }
                            None => return Err(err(format!("--set `{path}`: `{}` is not a table", parts[..k].join(".")))),
                        }
                    }
                    &mut item[*part]
                }
            };
        }
    }
    Ok(doc.to_string())
}

/// Errors found in the text `apply_overrides` made from `original`, told
/// where the user wrote what they are about: an error on a key a `--set`
/// gave (or inside it) names that `--set`; one on a line the overrides did
/// not touch keeps that line's number in the file (inserted keys move the
/// lines below them); one on a line an override rewrote with no key of
/// its own names the overrides.
pub(crate) fn blame_overrides(original: &str, applied: &str, sets: &[String], errors: Vec<SpecError>) -> Vec<SpecError> {
    if sets.is_empty() {
        return errors;
    }
    let paths: Vec<&str> = sets
        .iter()
        .map(|s| s.split_once('=').map_or(s.as_str(), |(p, _)| p).trim())
        .collect();
    let lines = line_map(original, applied);
    let by_set = |e: &SpecError| {
        paths.iter().find(|p| {
            let key = key_path(p);
            e.key == key || e.key.starts_with(&format!("{key}.")) || e.key.starts_with(&format!("{key}["))
        })
    };
    errors
        .into_iter()
        .map(|mut e| {
            if let Some(p) = by_set(&e) {
                (e.file, e.line, e.col) = (format!("--set {p}"), 0, 0);
            } else if e.line > 0
                && let Some(l) = &lines
            {
                // Too long to compare (None): lines are kept as they are.
                match l.get(e.line - 1).copied().flatten() {
                    Some(line) => e.line = line + 1,
                    None => {
                        (e.file, e.line, e.col) = (format!("--set {}", paths.join(", --set ")), 0, 0);
                    }
                }
            }
            e
        })
        .collect()
}

/// `export.0.window` as error messages spell keys: `export[0].window`.
fn key_path(set_path: &str) -> String {
    let mut out = String::new();
    for part in set_path.split('.') {
        if part.parse::<usize>().is_ok() {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

/// For each line of `applied`, the line of `original` it is unchanged
/// from (0-based), by the longest common subsequence of lines; `None` for
/// texts too long to compare cheaply (specs are short).
fn line_map(original: &str, applied: &str) -> Option<Vec<Option<usize>>> {
    let a: Vec<&str> = original.lines().collect();
    let b: Vec<&str> = applied.lines().collect();
    if a.len().saturating_mul(b.len()) > 4_000_000 {
        return None;
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let w = b.len() + 1;
    let mut lcs = vec![0u32; (a.len() + 1) * w];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i * w + j] = if a[i] == b[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let mut map = vec![None; b.len()];
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            map[j] = Some(i);
            (i, j) = (i + 1, j + 1);
        } else if lcs[(i + 1) * w + j] >= lcs[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_and_reports_unset_variables_with_their_line() {
        let env = |k: &str| (k == "BUCKET").then(|| "my-bucket".to_string());
        let t = interpolate("f.toml", "# ${NOPE}\nuri = \"s3://${BUCKET}/x\"\nlit = \"$${BUCKET}\"\n", &env).unwrap();
        assert_eq!(t, "# ${NOPE}\nuri = \"s3://my-bucket/x\"\nlit = \"${BUCKET}\"\n");
        let e = interpolate("f.toml", "a = 1\nb = \"${NOPE}\"\n", &env).unwrap_err();
        assert_eq!((e[0].line, e[0].col), (2, 6));
        assert!(e[0].message.contains("`NOPE` is not set"));
    }

    #[test]
    fn comments_are_left_alone_and_each_string_kind_gets_its_escaping() {
        let env = |k: &str| match k {
            "DIR" => Some(r#"C:\data\"x""#.to_string()),
            "N" => Some("16".to_string()),
            "NL" => Some("a\nb".to_string()),
            _ => None,
        };
        let text = "a = 1 # was ${NOPE}\nc = \"${DIR}\"\nd = ${N}\ne = \"# ${N}\" # ${NOPE}\nf = '''\n${DIR}'''\ng = \"\"\"\n${NL}\"\"\"\nh = \"\\\"${N}\"\ni = '\\'\nj = '${N}'\n";
        let t = interpolate("f.toml", text, &env).unwrap();
        let v: toml::Table = toml::from_str(&t).unwrap_or_else(|e| panic!("{e}\n{t}"));
        assert_eq!(v["a"].as_integer(), Some(1));
        assert_eq!(v["c"].as_str(), Some(r#"C:\data\"x""#));
        assert_eq!(v["d"].as_integer(), Some(16));
        assert_eq!(v["e"].as_str(), Some("# 16"));
        assert_eq!(v["f"].as_str(), Some(r#"C:\data\"x""#));
        assert_eq!(v["g"].as_str(), Some("a\nb"));
        assert_eq!(v["h"].as_str(), Some("\"16"));
        assert_eq!(v["j"].as_str(), Some("16"));
        // A literal string keeps the value's backslashes as they are...
        let env = |k: &str| (k == "P").then(|| r"C:\data\out".to_string());
        let t = interpolate("f.toml", "uri = '${P}'\n", &env).unwrap();
        assert_eq!(t, "uri = 'C:\\data\\out'\n");
        // ...and refuses what it cannot hold, naming the variable only.
        let env = |k: &str| (k == "Q").then(|| "it's".to_string());
        let e = interpolate("f.toml", "a = 1\nuri = '${Q}'\n", &env).unwrap_err();
        assert_eq!((e[0].line, e[0].col), (2, 8));
        assert!(e[0].message.contains("`Q` holds a quote"), "{}", e[0].message);
    }

    #[test]
    fn overrides_set_nested_and_indexed_keys() {
        let text = "name = \"a\"\n[source]\nbase_url = \"sim\"\n[[export]]\ndataset = \"blocks\"\nwindow = \"1d\"\n";
        let t = apply_overrides(
            "f",
            text,
            &[
                "source.max_concurrency=16".into(),
                "export.0.window=7d".into(),
                "output.uri=s3://b/p".into(),
            ],
        )
        .unwrap();
        let v: toml::Table = toml::from_str(&t).unwrap();
        assert_eq!(v["source"]["max_concurrency"].as_integer(), Some(16));
        assert_eq!(v["export"][0]["window"].as_str(), Some("7d"));
        assert_eq!(v["output"]["uri"].as_str(), Some("s3://b/p"));
        assert!(apply_overrides("f", text, &["export.3.window=1d".into()]).is_err());
    }
}
