//! Response bodies: reading one within a byte cap, saying precisely why a
//! 2xx body is not the documented JSON, and reading an error body.
//!
//! - **Within a cap.** A body is read incrementally, never holding more
//!   than the cap, whatever the server sends or claims.
//! - **A 2xx body that is not the documented JSON** is said precisely:
//!   which record and field, or that it is not JSON at all (and how it
//!   starts). Such a body fails the request at once: the service would
//!   send it again.
//! - **The error body of a 4xx or 5xx**: the service's `{"error": {"code",
//!   "message"}}`, a bare `{"message"}`, or whatever text a proxy sent,
//!   short, on one line, with every registered secret masked (servers
//!   quote requests back).

use super::ApiError;
use super::types::ErrorBody;
use crate::util::redact::redact;
use serde::de::DeserializeOwned;

/// Error bodies (4xx, 5xx) are read this far: enough for any message,
/// and what a hostile server sends past it is not kept.
pub const ERROR_BODY_BYTES: usize = 64 << 10;

/// Reads a body incrementally, keeping at most `limit` bytes; `true` when
/// the body went on past it (the rest is not read). Past the limit, only
/// an error body's start is wanted: `keep_start` says whether to keep it.
pub(super) async fn read_body(resp: &mut reqwest::Response, limit: u64, keep_start: bool) -> Result<(bytes::Bytes, bool), reqwest::Error> {
    let mut parts: Vec<bytes::Bytes> = Vec::new();
    let mut total = 0u64;
    while let Some(chunk) = resp.chunk().await? {
        total += chunk.len() as u64;
        if total > limit {
            if !keep_start {
                return Ok((bytes::Bytes::new(), true));
            }
            let keep = chunk.len() - usize::try_from(total - limit).unwrap_or(chunk.len()).min(chunk.len());
            parts.push(chunk.slice(..keep));
            return Ok((concat(parts), true));
        }
        parts.push(chunk);
    }
    Ok((concat(parts), false))
}

fn concat(mut parts: Vec<bytes::Bytes>) -> bytes::Bytes {
    if parts.len() == 1 {
        return parts.pop().unwrap_or_default();
    }
    let mut out = bytes::BytesMut::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        out.extend_from_slice(&p);
    }
    out.freeze()
}

/// Reads a 2xx body as `T`. The whole body is checked as UTF-8 once (a
/// SIMD pass), then read as text, so the strings `T` borrows from it skip
/// serde_json's check of each one (its share: docs/performance.md). A
/// body that is not UTF-8 is read as bytes, for serde_json's own error,
/// the same either way.
pub(super) fn parse<'a, T: serde::Deserialize<'a>>(body: &'a [u8]) -> serde_json::Result<T> {
    parse_with(body, |_| None)
}

/// [`parse`], trying `fast` on the text first: a reader of a subset of the
/// pages (`api::scan`) that answers `None` for any page serde should read.
pub(super) fn parse_with<'a, T: serde::Deserialize<'a>>(body: &'a [u8], fast: impl FnOnce(&'a str) -> Option<T>) -> serde_json::Result<T> {
    match simdutf8::basic::from_utf8(body) {
        Ok(text) => fast(text).map_or_else(|| serde_json::from_str(text), Ok),
        Err(_) => serde_json::from_slice(body),
    }
}

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

/// The error code and message of an error body, with every registered
/// secret masked (servers quote requests back).
pub(super) fn error_parts(body: &[u8]) -> (Option<String>, String) {
    let clean = |s: &str| -> String {
        let s: String = s.chars().filter(|c| !c.is_control()).take(200).collect();
        redact(&s).into_owned()
    };
    if let Ok(b) = serde_json::from_slice::<ErrorBody>(body) {
        if let Some(d) = b.error {
            return (d.code.as_deref().map(clean), clean(&d.message.unwrap_or_default()));
        }
        if let Some(m) = b.message {
            return (None, clean(&m));
        }
    }
    let text = clean(&String::from_utf8_lossy(body));
    (None, if text.trim().is_empty() { "(empty body)".into() } else { text })
}

/// `code: message` of an error body, or the message alone.
pub(super) fn error_message(body: &[u8]) -> String {
    let (code, msg) = error_parts(body);
    match code {
        Some(c) => format!("{c}: {msg}"),
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text or bytes, a body reads the same and fails the same.
    #[test]
    fn a_body_parses_as_serde_json_reads_its_bytes() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Page<'a> {
            #[serde(borrow)]
            names: Vec<&'a str>,
        }
        let bodies: [&[u8]; 5] = [
            b"{\"names\": [\"a\", \"\\u00e9t\\u00e9\", \"caf\xc3\xa9\"]}",
            b"{\"names\": [\"caf\xe9\"]}",
            b"{\"names\": [\"a\"] \xff}",
            br#"{"names": ["a\n"]}"#,
            br#"{"names": [1]}"#,
        ];
        for body in bodies {
            let ours = parse::<Page<'_>>(body).map_err(|e| e.to_string());
            let theirs = serde_json::from_slice::<Page<'_>>(body).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(body));
        }
        assert_eq!(parse::<Page<'_>>(b"{\"names\": [\"caf\xc3\xa9\"]}").unwrap().names, ["café"]);
    }

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
