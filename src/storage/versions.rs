//! Fencing tokens for documents with one writer: the version of each such
//! object this process wrote last (or found when it first read it), so that
//! its next write can be conditional on it.
//!
//! The fence ([`super::fence`]) stops a holder whose lease ran out by its
//! own clock. This is the second line, held by the store itself: a run
//! writes a single-writer document (a unit's checkpoint, a compaction
//! record, the compaction index) only if it is still the version this
//! process last wrote (`PutMode::Update` on that ETag), or, where it has
//! none, only if there still is none (`PutMode::Create`).
//!
//! Rules, each against a stale holder thawed after another run took over:
//!
//! - **A write sets the token; a read never replaces one.** A read sets it
//!   only at first sight (a checkpoint a previous run left). A stale holder
//!   that reads the new holder's version keeps its own, older token, and
//!   its next write is refused.
//! - **A listing of a directory settles what is absent**
//!   ([`Versions::listed`]): a document under a listed directory with no
//!   token is absent, so the first checkpoint of a unit is a create, refused
//!   where the new holder already wrote one. Listings are taken when a run
//!   plans (no write of its own in flight), so one that no longer shows a
//!   document this process wrote means another run (a shard closing a
//!   segment, a fold) removed it.
//! - **A delete by this process makes the document absent.**
//! - **A write whose outcome is unknown** (the store's retries ran out)
//!   leaves the document [`Seen::Unknown`]: its next write is
//!   unconditional.
//!
//! Local disk, locked by the OS, keeps no tokens; nor does a store without
//! conditional writes. The map is the sink's: every `StateStore` on one
//! opened output shares it.

use object_store::UpdateVersion;
use object_store::path::Path;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// What this process knows of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// It is at this version, as far as this process knows.
    Version(UpdateVersion),
    /// It is not there.
    Absent,
    /// Unknown (a write that may or may not have landed): write it
    /// unconditionally.
    Unknown,
}

#[derive(Debug, Default)]
struct Known {
    seen: HashMap<Path, Seen>,
    listed: HashSet<Path>,
}

/// The tokens, by object path.
#[derive(Debug, Default)]
pub struct Versions {
    known: Mutex<Known>,
}

impl Versions {
    /// What this process knows of `path`: its token, absent under a listed
    /// directory, else nothing (write unconditionally).
    pub fn get(&self, path: &Path) -> Seen {
        let Ok(k) = self.known.lock() else { return Seen::Unknown };
        match k.seen.get(path) {
            Some(s) => s.clone(),
            None if k.listed.iter().any(|dir| path.prefix_matches(dir)) => Seen::Absent,
            None => Seen::Unknown,
        }
    }

    /// This process wrote `path`, now at this version (a store that
    /// reports no ETag, which conditional writes need, leaves it unknown).
    pub fn wrote(&self, path: &Path, e_tag: Option<String>, version: Option<String>) {
        let Ok(mut k) = self.known.lock() else { return };
        let seen = match e_tag {
            Some(e_tag) => Seen::Version(UpdateVersion {
                e_tag: Some(e_tag),
                version,
            }),
            None => Seen::Unknown,
        };
        k.seen.insert(path.clone(), seen);
    }

    /// `path` was read, at this version (None: missing). Sets the token only
    /// where this process had none.
    pub fn read(&self, path: &Path, found: Option<(Option<String>, Option<String>)>) {
        let Ok(mut k) = self.known.lock() else { return };
        if k.seen.contains_key(path) {
            return;
        }
        let seen = match found {
            None => Seen::Absent,
            Some((Some(e_tag), version)) => Seen::Version(UpdateVersion {
                e_tag: Some(e_tag),
                version,
            }),
            Some((None, _)) => Seen::Unknown,
        };
        k.seen.insert(path.clone(), seen);
    }

    /// This process deleted `path`.
    pub fn deleted(&self, path: &Path) {
        let Ok(mut k) = self.known.lock() else { return };
        let listed = k.listed.iter().any(|dir| path.prefix_matches(dir));
        if listed {
            // Absent by the listing's rule; no entry to keep.
            k.seen.remove(path);
        } else if let Some(s) = k.seen.get_mut(path) {
            *s = Seen::Absent;
        }
    }

    /// `path` was found gone where this process had written it: absent
    /// from now on (a later write of it is a create).
    pub fn forget_to_absent(&self, path: &Path) {
        if let Ok(mut k) = self.known.lock() {
            k.seen.insert(path.clone(), Seen::Absent);
        }
    }

    /// A write of `path` may or may not have landed.
    pub fn uncertain(&self, path: &Path) {
        if let Ok(mut k) = self.known.lock() {
            k.seen.insert(path.clone(), Seen::Unknown);
        }
    }

    /// `dir` was just listed and holds `present`: documents under it that
    /// are not there are absent from now on, and their tokens go (which
    /// also keeps the map as small as the directory).
    pub fn listed(&self, dir: &Path, present: &HashSet<Path>) {
        let Ok(mut k) = self.known.lock() else { return };
        k.seen.retain(|path, _| !path.prefix_matches(dir) || present.contains(path));
        k.listed.insert(dir.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(e: &str) -> Seen {
        Seen::Version(UpdateVersion {
            e_tag: Some(e.into()),
            version: None,
        })
    }

    #[test]
    fn a_read_never_replaces_the_token_of_a_write() {
        let k = Versions::default();
        let a = Path::from("j/units/a.json");
        k.read(&a, Some((Some("1".into()), None)));
        assert_eq!(k.get(&a), v("1"), "first sight");
        k.wrote(&a, Some("2".into()), None);
        k.read(&a, Some((Some("3".into()), None)));
        k.read(&a, None);
        assert_eq!(k.get(&a), v("2"));
        k.uncertain(&a);
        assert_eq!(k.get(&a), Seen::Unknown);
        k.wrote(&a, None, Some("v".into()));
        assert_eq!(k.get(&a), Seen::Unknown, "no ETag: no conditional write");
    }

    #[test]
    fn a_listing_settles_what_is_absent_under_it() {
        let k = Versions::default();
        let (dir, a, b, c) = (
            Path::from("j/units"),
            Path::from("j/units/a.json"),
            Path::from("j/units/b.json"),
            Path::from("j/other/c.json"),
        );
        assert_eq!(k.get(&b), Seen::Unknown, "never seen, never listed");
        k.wrote(&a, Some("1".into()), None);
        k.wrote(&b, Some("1".into()), None);
        k.listed(&dir, &HashSet::from([a.clone()]));
        assert_eq!((k.get(&a), k.get(&b)), (v("1"), Seen::Absent));
        assert_eq!(k.get(&Path::from("j/units/new.json")), Seen::Absent);
        assert_eq!(k.get(&c), Seen::Unknown);
        k.deleted(&a);
        assert_eq!(k.get(&a), Seen::Absent);
        k.wrote(&c, Some("1".into()), None);
        k.deleted(&c);
        assert_eq!(k.get(&c), Seen::Absent);
    }
}
