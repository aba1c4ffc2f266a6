//! Spec text before parsing: `${VAR}` interpolation and `--set key=value`
//! overrides, so one spec serves several environments. Both keep every
//! other line where it was, so errors still point at the right line.

use super::SpecError;
use toml_edit::{DocumentMut, Item};

/// Replaces `${NAME}` with the variable's value (`$${` stays a literal
/// `${`). Comment lines are left alone. Unset variables are errors.
pub(crate) fn interpolate(file: &str, text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, Vec<SpecError>> {
    let mut out = String::with_capacity(text.len());
    let mut errors = Vec::new();
    for (lineno, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with('#') || !line.contains("${") {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("${") {
            if rest[..i].ends_with('$') {
                out.push_str(&rest[..i - 1]);
                out.push_str("${");
                rest = &rest[i + 2..];
                continue;
            }
            out.push_str(&rest[..i]);
            let Some(end) = rest[i..].find('}') else {
                errors.push(SpecError {
                    file: file.into(),
                    line: lineno + 1,
                    col: line.len() - rest.len() + i + 1,
                    key: String::new(),
                    message: "`${` without a closing `}`".into(),
                });
                rest = "";
                break;
            };
            let name = &rest[i + 2..i + end];
            match env(name) {
                Some(v) if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty() => {
                    out.push_str(&v.replace('\\', "\\\\").replace('"', "\\\""))
                }
                _ => errors.push(SpecError {
                    file: file.into(),
                    line: lineno + 1,
                    col: line.len() - rest.len() + i + 1,
                    key: String::new(),
                    message: format!("`${{{name}}}`: environment variable `{name}` is not set"),
                }),
            }
            rest = &rest[i + end + 1..];
        }
        out.push_str(rest);
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
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
