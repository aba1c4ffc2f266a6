//! Secrets out of everything chainetl prints or stores.
//!
//! Invariants: every secret the process holds — the API key, a password in
//! a URL's user-info (and the Basic-auth token made from it), and the S3
//! secret key and session token from the environment — is registered here
//! before the first request or write that could carry it back; every log
//! line (text or JSON, any verbosity), every error printed by the binary,
//! every run report and every state document passes through [`redact`] on
//! its way out. The client also scrubs what it quotes from a server at the
//! source; this is the last line, for whatever else echoes a secret.
//!
//! Secrets shorter than [`MIN_LEN`] are not masked: masking every
//! occurrence of two or three common characters would garble all output,
//! and a key that short is no secret anyway.

use std::borrow::Cow;
use std::sync::RwLock;

/// What a secret is replaced with.
pub const MASK: &str = "***";

/// Shorter secrets are not masked (see the module docs).
pub const MIN_LEN: usize = 4;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Masks `secret` (and its JSON-escaped and percent-decoded spellings)
/// from now on.
pub fn register(secret: &str) {
    let mut forms = vec![secret.to_string()];
    if let Ok(json) = serde_json::to_string(secret) {
        forms.push(json[1..json.len() - 1].to_string());
    }
    if let Some(decoded) = percent_decode(secret) {
        forms.push(decoded);
    }
    let Ok(mut all) = SECRETS.write() else {
        return;
    };
    for f in forms {
        if f.chars().count() >= MIN_LEN && !all.contains(&f) {
            all.push(f);
        }
    }
    // Longest first, so that a secret containing another is masked whole.
    all.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// Registers the S3 credentials' secret parts from the environment.
pub fn register_env() {
    for var in ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"] {
        if let Ok(v) = std::env::var(var) {
            register(&v);
        }
    }
}

/// Registers the password of `url`'s user-info (and its Basic-auth token)
/// and returns the URL with the password masked, for messages.
pub fn register_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some((userinfo, host)) = rest[..authority_end].rsplit_once('@') else {
        return url.to_string();
    };
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    if !password.is_empty() {
        register(password);
        let user_d = percent_decode(user).unwrap_or_else(|| user.to_string());
        let pass_d = percent_decode(password).unwrap_or_else(|| password.to_string());
        use base64::Engine;
        register(&base64::engine::general_purpose::STANDARD.encode(format!("{user_d}:{pass_d}")));
    }
    let shown = if password.is_empty() {
        userinfo.to_string()
    } else {
        format!("{user}:{MASK}")
    };
    format!("{scheme}://{shown}@{host}{}", &rest[authority_end..])
}

/// `text` with every registered secret masked.
pub fn redact(text: &str) -> Cow<'_, str> {
    let Ok(all) = SECRETS.read() else {
        return Cow::Owned(MASK.into());
    };
    let mut out = Cow::Borrowed(text);
    for s in all.iter() {
        if out.contains(s.as_str()) {
            out = Cow::Owned(out.replace(s.as_str(), MASK));
        }
    }
    out
}

/// Masks every string in a JSON document (run reports).
pub fn redact_json(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => {
            if let Cow::Owned(r) = redact(s) {
                *s = r;
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(redact_json),
        serde_json::Value::Object(o) => o.values_mut().for_each(redact_json),
        _ => {}
    }
}

/// Masks secrets in serialised text (state documents); bytes that are not
/// UTF-8 are left as they are (chainetl only writes JSON through here).
pub fn redact_bytes(bytes: Vec<u8>) -> Vec<u8> {
    match std::str::from_utf8(&bytes) {
        Ok(s) => match redact(s) {
            Cow::Owned(r) => r.into_bytes(),
            Cow::Borrowed(_) => bytes,
        },
        Err(_) => bytes,
    }
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return None;
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Standard error through [`redact`], for the log subscriber: the fmt
/// layer writes each event with one `write_all`, so a secret is never
/// split across writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stderr;

/// The writer [`Stderr`] makes.
#[derive(Debug)]
pub struct StderrWriter;

impl std::io::Write for StderrWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Stderr {
    type Writer = StderrWriter;
    fn make_writer(&'a self) -> StderrWriter {
        StderrWriter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_masked_in_every_spelling() {
        register("k3y\"with-quote");
        assert_eq!(redact("a k3y\"with-quote b"), "a *** b");
        assert_eq!(redact(r#"{"m":"k3y\"with-quote"}"#), r#"{"m":"***"}"#);
        let shown = register_url("http://me:p%40ss-word@host:1/x?y");
        assert_eq!(shown, "http://me:***@host:1/x?y");
        assert_eq!(redact("p@ss-word and p%40ss-word"), "*** and ***");
        // base64("me:p@ss-word")
        assert_eq!(redact("Basic bWU6cEBzcy13b3Jk"), "Basic ***");
        assert_eq!(register_url("https://host/x"), "https://host/x");
        register("ab");
        assert_eq!(redact("ab"), "ab", "too short to mask");
        let mut v = serde_json::json!({"e": ["k3y\"with-quote"], "n": 1});
        redact_json(&mut v);
        assert_eq!(v, serde_json::json!({"e": ["***"], "n": 1}));
    }
}
