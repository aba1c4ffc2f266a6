//! A 2xx body that is not the documented JSON, said precisely: which
//! record and field, or that it is not JSON at all (and how it starts).
//! Such a body fails the request at once: the service would send it again.

use super::ApiError;
use crate::util::redact::redact;
use serde::de::DeserializeOwned;

/// The path (`blocks[3].number`) of the first value `T` cannot read.
pub(super) fn locate<T: DeserializeOwned>(body: &[u8]) -> Option<String> {
    let mut de = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize::<_, T>(&mut de)
        .err()
        .map(|e| e.path().to_string())
}

/// A 2xx body that is not the documented JSON, said precisely: which
/// record and field, or that it is not JSON at all (and how it starts).
pub(super) fn bad_body(body: &[u8], e: &serde_json::Error, locate: &(dyn Fn(&[u8]) -> Option<String> + Sync), url: &str) -> ApiError {
    let fail = |row, field, message: String| ApiError::BadBody {
        at: None,
        row,
        field,
        message: redact(&message).into_owned(),
        url: url.to_string(),
    };
    if let Err(u) = std::str::from_utf8(body) {
        return fail(
            None,
            None,
            format!(
                "the body ({} bytes) is not valid JSON: invalid UTF-8 at byte {}",
                body.len(),
                u.valid_up_to()
            ),
        );
    }
    if e.classify() != serde_json::error::Category::Data {
        let start: String = String::from_utf8_lossy(&body[..body.len().min(240)])
            .chars()
            .filter(|c| !c.is_control())
            .take(60)
            .collect();
        return fail(
            None,
            None,
            format!("the body ({} bytes) is not valid JSON ({e}); it starts `{start}`", body.len()),
        );
    }
    let path = locate(body).unwrap_or_default();
    let (row, field) = split_path(&path, &e.to_string());
    fail(row, field, e.to_string())
}

/// `events[3].topics[1]` → row 3, field `topics`; `events` or
/// `token.decimals` → that field; the root (`.`) → the field a "missing
/// field" message names.
fn split_path(path: &str, message: &str) -> (Option<usize>, Option<String>) {
    let mut segs = path.split('.').filter(|s| !s.is_empty());
    match segs.next() {
        Some(first) if first.contains('[') => {
            let name = |s: &str| s.split('[').next().unwrap_or(s).to_string();
            let row = first.split('[').nth(1).and_then(|r| r.trim_end_matches(']').parse().ok());
            (row, Some(segs.next().map_or_else(|| name(first), name)))
        }
        Some(_) => (None, Some(path.to_string())),
        None => {
            let missing = message.strip_prefix("missing field `").and_then(|m| m.split('`').next());
            (None, missing.map(str::to_string))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_path_names_the_row_and_field() {
        assert_eq!(split_path("events[3].log_index", "x"), (Some(3), Some("log_index".into())));
        assert_eq!(split_path("events[0].topics[1]", "x"), (Some(0), Some("topics".into())));
        assert_eq!(split_path("events[2]", "x"), (Some(2), Some("events".into())));
        assert_eq!(split_path("events", "x"), (None, Some("events".into())));
        assert_eq!(split_path("token.decimals", "x"), (None, Some("token.decimals".into())));
        assert_eq!(
            split_path(".", "missing field `events` at line 1 column 2"),
            (None, Some("events".into()))
        );
        assert_eq!(split_path(".", "trailing characters"), (None, None));
    }
}
