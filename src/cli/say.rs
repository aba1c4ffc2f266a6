//! What the command line writes on stderr besides log events: the run's
//! intro, progress lines, failed units, signals and errors. As text, or,
//! with `--log-format json`, as one JSON object per line shaped like the
//! log events' (`timestamp`, `level`, `fields` with `message`), plus
//! `fields.event` naming what the line is and its figures as numbers, so a
//! log pipeline parses a whole run without reading a human-formatted line.
//!
//! Every line goes through the redactor, as log events do, and is written
//! with one `write_all`, so lines from different tasks never interleave.

use crate::util::redact::StderrWriter;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static JSON: AtomicBool = AtomicBool::new(false);

/// Switches stderr to JSON lines (`--log-format json`).
pub(super) fn set_json(on: bool) {
    JSON.store(on, Ordering::Relaxed);
}

/// Whether stderr is JSON lines.
pub(super) fn json() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// Severity of a line, as the log events spell it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Level {
    Info,
    Warn,
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }
}

/// Writes `text` as it is (text mode), or one JSON object whose message is
/// `text` without its trailing line break and whose fields are `event` and
/// `fields` (an object; anything else is ignored).
pub(super) fn say(level: Level, event: &str, text: &str, fields: Value) {
    if json() {
        write(&line(level, event, text.trim_end(), fields));
    } else {
        write(text);
    }
}

/// One JSON log line (ending in a line break).
fn line(level: Level, event: &str, message: &str, fields: Value) -> String {
    let mut f = Map::new();
    f.insert("message".into(), message.into());
    f.insert("event".into(), event.into());
    if let Value::Object(extra) = fields {
        f.extend(extra);
    }
    let obj = json!({
        "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "level": level.as_str(),
        "fields": f,
    });
    format!("{obj}\n")
}

fn write(text: &str) {
    let _ = StderrWriter.write_all(text.as_bytes());
}

/// A usage error from the argument parser, as one JSON line when the
/// arguments ask for JSON logs (the parser failed, so the flag is looked
/// for in the raw arguments). False when it is not for JSON.
pub(super) fn usage_error_json(args: &[String], rendered: &str) -> bool {
    let asked = args.windows(2).any(|w| w[0] == "--log-format" && w[1] == "json") || args.iter().any(|a| a == "--log-format=json");
    if asked {
        write(&line(Level::Error, "usage_error", rendered.trim_end(), json!({})));
    }
    asked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_one_json_object_with_its_fields() {
        let l = line(Level::Warn, "progress", "a\nb", json!({"rows": 3}));
        assert!(l.ends_with('\n') && !l.trim_end().contains('\n'));
        /// The line's shape, and nothing else in it.
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Line {
            timestamp: String,
            level: String,
            fields: Value,
        }
        let back: Line = serde_json::from_str(&l).unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(&back.timestamp).is_ok(), "{l}");
        assert_eq!(back.level, "WARN");
        assert_eq!(back.fields, json!({"event": "progress", "message": "a\nb", "rows": 3}));
    }
}
