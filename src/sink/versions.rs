//! Fencing tokens for documents with one writer: the version of each such
//! object this process last read or wrote, so that its next write can be
//! conditional on it.
//!
//! The fence ([`super::fence`]) stops a holder whose lease ran out by its
//! own clock. This is the second line, held by the store itself: a run
//! writes a single-writer document (a unit's checkpoint, a compaction
//! record) only if it is still the version it last saw (`PutMode::Update`
//! on that ETag), or, where it last saw none, only if there still is none
//! (`PutMode::Create`). A holder paused past its lease whose clock somehow
//! let it through (a clock stepped back, a renewal that landed but whose
//! answer came late) then fails on the first document the new holder
//! changed, instead of overwriting it. Documents this process has not seen
//! are written unconditionally; local disk, locked by the OS, keeps no
//! versions; nor does a store without conditional writes.
//!
//! The map is the sink's, shared by every `StateStore` of one process on
//! one output, so that two of them never hold different versions of one
//! document.

use object_store::UpdateVersion;
use object_store::path::Path;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// What this process last saw of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// It was there, at this version.
    Version(UpdateVersion),
    /// It was not there (read as missing, or deleted by this process).
    Absent,
}

/// The versions last seen, by object path.
#[derive(Debug, Default)]
pub struct Versions {
    seen: Mutex<HashMap<Path, Seen>>,
}

impl Versions {
    /// What was last seen of `path`, if anything.
    pub fn get(&self, path: &Path) -> Option<Seen> {
        self.seen.lock().ok().and_then(|m| m.get(path).cloned())
    }

    /// `path` was read or written at this version; a store that reports no
    /// ETag (which conditional writes need) leaves it unknown.
    pub fn saw(&self, path: &Path, e_tag: Option<String>, version: Option<String>) {
        let Ok(mut m) = self.seen.lock() else { return };
        if e_tag.is_none() {
            m.remove(path);
        } else {
            m.insert(path.clone(), Seen::Version(UpdateVersion { e_tag, version }));
        }
    }

    /// `path` was read as missing.
    pub fn saw_absent(&self, path: &Path) {
        if let Ok(mut m) = self.seen.lock() {
            m.insert(path.clone(), Seen::Absent);
        }
    }

    /// This process deleted `path`: if it was tracked, it is now absent.
    pub fn deleted(&self, path: &Path) {
        if let Ok(mut m) = self.seen.lock()
            && let Some(s) = m.get_mut(path)
        {
            *s = Seen::Absent;
        }
    }

    /// Every tracked path under `prefix` but not in `listed` is absent (a
    /// listing of `prefix` no longer shows it: another run deleted it).
    pub fn absent_unless(&self, prefix: &Path, listed: &HashSet<Path>) {
        let Ok(mut m) = self.seen.lock() else { return };
        for (path, seen) in m.iter_mut() {
            if path.prefix_matches(prefix) && !listed.contains(path) {
                *seen = Seen::Absent;
            }
        }
    }

    /// Forgets `path`: its next write is unconditional.
    pub fn forget(&self, path: &Path) {
        if let Ok(mut m) = self.seen.lock() {
            m.remove(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_document_is_absent_only_if_it_was_tracked() {
        let v = Versions::default();
        let (a, b) = (Path::from("a.json"), Path::from("b.json"));
        v.saw(&a, Some("\"1\"".into()), None);
        assert!(matches!(v.get(&a), Some(Seen::Version(u)) if u.e_tag.as_deref() == Some("\"1\"")));
        v.deleted(&a);
        v.deleted(&b);
        assert_eq!(v.get(&a), Some(Seen::Absent));
        assert_eq!(v.get(&b), None);
        v.saw(&a, None, Some("v1".into()));
        assert_eq!(v.get(&a), None, "no ETag: no conditional write");
    }
}
