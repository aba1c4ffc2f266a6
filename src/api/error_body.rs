//! The error body of a 4xx or 5xx: the service's `{"error": {"code",
//! "message"}}`, a bare `{"message"}`, or whatever text a proxy sent,
//! short, on one line, with every registered secret masked (servers quote
//! requests back).

use super::types::ErrorBody;
use crate::util::redact::redact;

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
