//! Utilities to make working with directory and file paths easier

use std::slice;
use std::str::FromStr;
#[cfg(feature = "adaptive-metadata-in-dev")]
use std::sync::LazyLock;

use delta_kernel_derive::internal_api;
use url::Url;
use uuid::Uuid;

use crate::actions::visitors::InCommitTimestampVisitor;
#[cfg(feature = "adaptive-metadata-in-dev")]
use crate::actions::visitors::LastManifestCommitVisitor;
#[cfg(feature = "adaptive-metadata-in-dev")]
use crate::actions::{LastManifestCommit, COMMIT_INFO_NAME, LAST_MANIFEST_COMMIT_FIELD};
use crate::engine_data::RowVisitor;
#[cfg(feature = "adaptive-metadata-in-dev")]
use crate::schema::lazy_schema_ref;
use crate::schema::SchemaRef;
use crate::utils::require;
use crate::{Engine, EngineData, FileMeta, KernelError, KernelResult, Version};

/// The delta log subdirectory with a trailing slash for directory URL joins.
pub(crate) const DELTA_LOG_DIR_WITH_SLASH: &str = "_delta_log/";

/// How many characters a version tag has
const VERSION_LEN: usize = 20;

/// How many characters a part specifier on a multipart checkpoint has
const MULTIPART_PART_LEN: usize = 10;

/// The number of characters in the uuid part of a uuid checkpoint
const UUID_PART_LEN: usize = 36;

/// The subdirectory name within the table root where the delta log resides
const DELTA_LOG_DIR: &str = "_delta_log";
/// The subdirectory name within the delta log where staged commits reside
const STAGED_COMMITS_DIR: &str = "_staged_commits/";
/// The subdirectory name within the delta log where checkpoint sidecars reside
const SIDECAR_DIR_WITH_SLASH: &str = "_sidecars/";

#[derive(Debug, Clone, PartialEq, Eq)]
#[internal_api]
pub(crate) enum LogPathFileType {
    Commit,
    /// Staged commits are commits with UUID filenames, stored in _delta_log/_staged_commits dir.
    StagedCommit,
    /// A classic-named checkpoint, `<version>.checkpoint.parquet`. The name is the file-naming
    /// scheme, not the spec version: this file may hold a V1 checkpoint with its actions inline,
    /// or a V2 checkpoint that references sidecars.
    ClassicCheckpoint,
    /// A uuid-named checkpoint, `<version>.checkpoint.<uuid>.{parquet,json}`. Always V2, since
    /// only the V2 spec writes this naming scheme. Each writer picks a fresh uuid, so several
    /// can share a version.
    #[allow(unused)]
    UuidCheckpoint,
    // NOTE: Delta spec doesn't actually say, but checkpoint part numbers are effectively 31-bit
    // unsigned integers: Negative values are never allowed, but Java integer types are always
    // signed. Approximate that as u32 here.
    #[allow(unused)]
    MultiPartCheckpoint {
        part_num: u32,
        num_parts: u32,
    },
    #[allow(unused)]
    CompactedCommit {
        hi: Version,
    },
    Crc,
    Unknown,
}

/// Identifies one checkpoint among those at a single version and orders it against its siblings.
///
/// The variant is the naming scheme, read from the file name with no I/O. Naming scheme and
/// [checkpoint spec] are independent: only multi-part (always V1) and uuid (always V2) pin the
/// spec, so a `Classic` checkpoint follows either one and only its contents say which.
///
/// Variant order is the rank and each payload breaks ties within a rank, so the derived [`Ord`] is
/// the whole comparison: `Uuid` > `MultiPart` > `Classic`, matching Delta-Spark. Reordering these
/// changes which checkpoint kernel selects.
///
/// [checkpoint spec]: https://github.com/delta-io/delta/blob/master/PROTOCOL.md#checkpoint-specs
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[internal_api]
pub(crate) enum CheckpointInstance {
    /// `<version>.checkpoint.parquet`. At most one per version, so nothing to break ties on.
    Classic,
    /// `<version>.checkpoint.<part_num>.<num_parts>.parquet`. More parts wins.
    MultiPart { num_parts: u32 },
    /// `<version>.checkpoint.<uuid>.{json,parquet}`. The greater file name wins.
    Uuid { filename: String },
}

impl CheckpointInstance {
    /// The instance a checkpoint part belongs to, or `None` for a non-checkpoint file.
    pub(crate) fn of<Location: AsUrl>(part: &ParsedLogPath<Location>) -> Option<Self> {
        match &part.file_type {
            LogPathFileType::ClassicCheckpoint => Some(Self::Classic),
            LogPathFileType::UuidCheckpoint => Some(Self::Uuid {
                filename: part.filename.clone(),
            }),
            LogPathFileType::MultiPartCheckpoint { num_parts, .. } => Some(Self::MultiPart {
                num_parts: *num_parts,
            }),
            _ => None,
        }
    }

    /// How many files this checkpoint spans.
    pub(crate) fn num_parts(&self) -> usize {
        match self {
            Self::MultiPart { num_parts } => *num_parts as usize,
            Self::Classic | Self::Uuid { .. } => 1,
        }
    }

    /// Whether `part_files` holds every part this checkpoint needs.
    pub(crate) fn is_complete<Location: AsUrl>(
        &self,
        part_files: &[ParsedLogPath<Location>],
    ) -> bool {
        self.num_parts() == part_files.len()
    }
}

/// A ParsedLogPath is a well-understood path to a file in the _delta_log directory.
///
/// Note this includes things like checkpoints and commits (containing current table state), but
/// also files used for various optimizations like CRC, compaction, etc.
///
/// Every parsed log path has a version. And additionally, we implement a 'should_list' method
/// which controls whether or not we include this file in our listing. For example, when we list
/// the _delta_log we may see _staged_commits/00000000000000000000.{uuid}.json, but we MUST NOT
/// include those in listing, as only the catalog can tell us which are valid commits.
#[derive(Debug, Clone, PartialEq, Eq)]
#[internal_api]
pub(crate) struct ParsedLogPath<Location: AsUrl = FileMeta> {
    pub location: Location,
    #[allow(unused)]
    pub filename: String,
    #[allow(unused)]
    pub extension: String,
    pub version: Version,
    pub file_type: LogPathFileType,
}

// Internal helper used by TryFrom<FileMeta> below. It parses a fixed-length path component.
// A parsing failure returns None. A wrong length produces None, even if the parse succeeded.
fn parse_path_part<T: FromStr>(value: &str, expect_len: usize) -> Option<T> {
    match value.parse() {
        Ok(result) if value.len() == expect_len => Some(result),
        _ => None,
    }
}

// Numeric path components must contain only ASCII digits. Rust's integer parsers also accept a
// leading `+`, which is not valid in Delta's zero-padded numeric filename components.
fn parse_numeric_path_part<T: FromStr>(value: &str, expect_len: usize) -> Option<T> {
    if !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    parse_path_part(value, expect_len)
}

// We normally construct ParsedLogPath from FileMeta, but in testing it's convenient to use
// a Url directly instead. This trait decouples the two.
#[internal_api]
pub(crate) trait AsUrl {
    fn as_url(&self) -> &Url;
}

impl AsUrl for FileMeta {
    fn as_url(&self) -> &Url {
        &self.location
    }
}

impl AsUrl for Url {
    fn as_url(&self) -> &Url {
        self
    }
}

fn path_contains_delta_log_dir(mut path_segments: std::str::Split<'_, char>) -> bool {
    path_segments.any(|p| p == DELTA_LOG_DIR)
}

/// Returns whether `rel_path`, a path relative to the `_delta_log/` directory, could still be
/// within the version-named region of a lexicographically sorted log listing.
///
/// Every listable log file begins with a 20-digit version, so its first byte is an ASCII digit.
/// Paths like `_staged_commits/`, `_sidecars/`, and `_last_checkpoint` sort after every
/// version-named file because `'_'` (0x5F) > `'9'` (0x39), so a sorted listing can stop at the
/// first relative path whose first byte sorts past `'9'`.
///
/// This is a scan bound, not a log-file filter, so it must not require a digit first byte: a
/// path sorting before `'0'` (e.g. a dot-prefixed `.{version}.json.crc` written by some engines)
/// can still be followed by version-named files, and stopping there would silently drop them.
/// Such paths are kept here and discarded by [`ParsedLogPath`] parsing instead. An empty
/// `rel_path` is conservatively kept.
pub(crate) fn may_begin_listable_log_path(rel_path: &str) -> bool {
    rel_path.as_bytes().first().is_none_or(|b| *b <= b'9')
}

impl<Location: AsUrl> ParsedLogPath<Location> {
    /// Estimated heap size in bytes, best-effort estimate.
    ///
    /// The Url(self.location) is measured via `len()` because it doesn't expose the capacity of its
    /// internal `serialization` String. Any String capacity slack on it is not counted.
    pub(crate) fn estimated_heap_size_bytes(&self) -> usize {
        self.filename.capacity() + self.extension.capacity() + self.location.as_url().as_str().len()
    }

    // NOTE: We can't actually impl TryFrom because Option<T> is a foreign struct even if T is
    // local.
    #[internal_api]
    pub(crate) fn try_from(location: Location) -> KernelResult<Option<ParsedLogPath<Location>>> {
        let url = location.as_url();
        let Some(mut path_segments) = url.path_segments() else {
            return Ok(None);
        };
        #[allow(clippy::unwrap_used)]
        let filename = path_segments
            .next_back()
            .unwrap() // "the iterator always contains at least one string (which may be empty)"
            .to_string();
        let subdir = path_segments.next_back();
        if filename.is_empty() {
            return Ok(None); // Not a valid log path
        }

        let mut split = filename.split('.');

        // NOTE: str::split always returns at least one item, even for the empty string.
        #[allow(clippy::unwrap_used)]
        let version = split.next().unwrap();

        // Every valid log path starts with a zero-padded 20-digit version.
        let Some(version) = parse_numeric_path_part::<Version>(version, VERSION_LEN) else {
            return Ok(None);
        };

        // Every valid log path has a file extension as its last part. Return None if it's missing.
        let split: Vec<_> = split.collect();
        let extension = match split.last() {
            Some(extension) => extension.to_string(),
            None => return Ok(None),
        };

        // this check determines if we're in the delta log dir, or in the staged commits dir. The
        // check is:
        // 1. If the dir is named _staged_commits, check if the parent dir is _delta_log, and ensure
        //    no higher level directories are _also_ named _delta_log. If those checks pass we're in
        //    the staged_commits dir
        // 2. if the dir is named _delta_log, ensure no higher level directories are _also_ named
        //    _delta_log. If those checks pass, we're in the delta log dir
        let (in_delta_log_dir, in_staged_commits_dir) = if subdir == Some("_staged_commits") {
            if path_segments.next_back() == Some(DELTA_LOG_DIR)
                && !path_contains_delta_log_dir(path_segments)
            {
                (false, true)
            } else {
                (false, false)
            }
        } else {
            (
                subdir == Some(DELTA_LOG_DIR) && !path_contains_delta_log_dir(path_segments),
                false,
            )
        };

        // Parse the file type, based on the number of remaining parts
        let file_type = match split.as_slice() {
            ["json"] if in_delta_log_dir => LogPathFileType::Commit,
            [uuid, "json"] if in_staged_commits_dir => {
                // staged commits like _delta_log/_staged_commits/00000000000000000000.{uuid}.json
                match parse_path_part::<String>(uuid, UUID_PART_LEN) {
                    Some(_uuid) => LogPathFileType::StagedCommit,
                    None => LogPathFileType::Unknown,
                }
            }
            ["crc"] if in_delta_log_dir => LogPathFileType::Crc,
            ["checkpoint", "parquet"] if in_delta_log_dir => LogPathFileType::ClassicCheckpoint,
            ["checkpoint", uuid, "json" | "parquet"] if in_delta_log_dir => {
                let Some(_) = parse_path_part::<String>(uuid, UUID_PART_LEN) else {
                    return Ok(None);
                };
                LogPathFileType::UuidCheckpoint
            }
            [hi, "compacted", "json"] if in_delta_log_dir => {
                let Some(hi) = parse_numeric_path_part(hi, VERSION_LEN) else {
                    return Ok(None);
                };
                LogPathFileType::CompactedCommit { hi }
            }
            ["checkpoint", part_num, num_parts, "parquet"] if in_delta_log_dir => {
                let Some(part_num) = parse_numeric_path_part(part_num, MULTIPART_PART_LEN) else {
                    return Ok(None);
                };
                let Some(num_parts) = parse_numeric_path_part(num_parts, MULTIPART_PART_LEN) else {
                    return Ok(None);
                };

                // A valid part_num must be in the range [1, num_parts]
                if !(0 < part_num && part_num <= num_parts) {
                    return Ok(None);
                }
                LogPathFileType::MultiPartCheckpoint {
                    part_num,
                    num_parts,
                }
            }

            // Unrecognized log paths are allowed, so long as they have a valid version.
            _ => LogPathFileType::Unknown,
        };
        Ok(Some(ParsedLogPath {
            location,
            filename,
            extension,
            version,
            file_type,
        }))
    }

    /// Parse a location into a commit path (published or staged), returning an error if invalid or
    /// not a commit.
    pub(crate) fn parse_commit(location: Location) -> KernelResult<Self> {
        let url = location.as_url().to_string();
        let parsed =
            Self::try_from(location)?.ok_or_else(|| KernelError::invalid_log_path(&url))?;
        require!(
            parsed.is_commit(),
            KernelError::generic(format!(
                "Expected a commit path, got {} of type {:?}",
                url, parsed.file_type
            ))
        );
        Ok(parsed)
    }

    pub(crate) fn should_list(&self) -> bool {
        match self.file_type {
            LogPathFileType::Commit
            | LogPathFileType::ClassicCheckpoint
            | LogPathFileType::UuidCheckpoint
            | LogPathFileType::MultiPartCheckpoint { .. }
            | LogPathFileType::CompactedCommit { .. }
            | LogPathFileType::Crc
            | LogPathFileType::Unknown => true,
            LogPathFileType::StagedCommit => false,
        }
    }

    /// Convenience wrapper around [`version_as_i64`] for this parsed path's `version`.
    #[cfg(feature = "declarative-plans")]
    pub(crate) fn version_as_i64(&self) -> KernelResult<i64> {
        crate::version_as_i64(self.version)
    }

    #[internal_api]
    pub(crate) fn is_commit(&self) -> bool {
        matches!(
            self.file_type,
            LogPathFileType::Commit | LogPathFileType::StagedCommit
        )
    }

    #[internal_api]
    pub(crate) fn is_checkpoint(&self) -> bool {
        CheckpointInstance::of(self).is_some()
    }

    #[internal_api]
    #[allow(dead_code)] // currently only used in tests, which don't "count"
    pub(crate) fn is_unknown(&self) -> bool {
        matches!(self.file_type, LogPathFileType::Unknown)
    }

    /// Whether this log path's file extension is `json`.
    #[internal_api]
    #[allow(dead_code)] // not all cfgs exercise this
    pub(crate) fn is_json(&self) -> bool {
        self.extension == "json"
    }
}

impl ParsedLogPath<FileMeta> {
    /// Extract the In-Commit Timestamp from the CommitInfo action in this commit log file.
    /// This is a utility function that can be used by multiple parts of the codebase
    /// (snapshot, CDF, time travel, etc.).
    ///
    /// This method performs IO by reading the commit log file from storage.
    ///
    /// Returns the inCommitTimestamp value, or an error if ICT is not found or cannot be read.
    /// Callers should handle enablement version checks before calling this method.
    #[tracing::instrument(skip(engine), ret, fields(version = self.version, path = %self.location.as_url()))]
    pub(crate) fn read_in_commit_timestamp(&self, engine: &dyn Engine) -> KernelResult<i64> {
        let actions = self.read_commit_info_batch(engine, InCommitTimestampVisitor::schema())?;
        in_commit_timestamp_from(actions.as_ref())
    }

    /// Extract the In-Commit Timestamp and `commitInfo.lastManifestCommit` (adaptiveMetadata) from
    /// this commit log file in a single read. The `lastManifestCommit` is `None` if the commit
    /// carries none.
    ///
    /// This method performs IO by reading the commit log file from storage. Returns an error if
    /// this is not a commit file, the file cannot be read, the In-Commit Timestamp is missing, or
    /// the `lastManifestCommit` is invalid, including a pointer to a manifest commit newer than
    /// this commit.
    #[cfg(feature = "adaptive-metadata-in-dev")]
    #[cfg_attr(not(test), allow(dead_code))]
    #[tracing::instrument(skip(engine), ret, fields(version = self.version, path = %self.location.as_url()))]
    pub(crate) fn read_ict_and_last_manifest_commit(
        &self,
        engine: &dyn Engine,
    ) -> KernelResult<(i64, Option<LastManifestCommit>)> {
        static SCHEMA: LazyLock<SchemaRef> = lazy_schema_ref! {
            nullable COMMIT_INFO_NAME: {
                nullable "inCommitTimestamp": LONG,
                (&LAST_MANIFEST_COMMIT_FIELD),
            },
        };
        let actions = self.read_commit_info_batch(engine, SCHEMA.clone())?;
        let in_commit_timestamp = in_commit_timestamp_from(actions.as_ref())?;
        let mut visitor = LastManifestCommitVisitor::default();
        visitor.visit_rows_of(actions.as_ref())?;
        if let Some(last_manifest_commit) = &visitor.last_manifest_commit {
            require!(
                u64::try_from(last_manifest_commit.version).is_ok_and(|v| v <= self.version),
                KernelError::generic(format!(
                    "lastManifestCommit version {} exceeds commit version {}",
                    last_manifest_commit.version, self.version
                ))
            );
        }
        Ok((in_commit_timestamp, visitor.last_manifest_commit))
    }

    /// Reads the first batch of this commit log file's actions with `schema`. When In-Commit
    /// Timestamps are enabled, commitInfo is the first action, so this batch holds it. Errors if
    /// this is not a commit file or the file has no actions.
    fn read_commit_info_batch(
        &self,
        engine: &dyn Engine,
        schema: SchemaRef,
    ) -> KernelResult<Box<dyn EngineData>> {
        require!(
            self.is_commit(),
            KernelError::generic(format!("expected a commit file, got: {:?}", self.file_type))
        );
        let mut actions =
            engine
                .json_handler()
                .read_json_files(slice::from_ref(&self.location), schema, None)?;
        match actions.next() {
            Some(actions) => actions,
            None => Err(KernelError::generic("Commit file contains no actions")),
        }
    }
}

/// Extracts the In-Commit Timestamp from a batch of commit actions whose first row is the
/// commitInfo. Errors if the timestamp is absent.
fn in_commit_timestamp_from(actions: &dyn EngineData) -> KernelResult<i64> {
    let mut visitor = InCommitTimestampVisitor::default();
    visitor.visit_rows_of(actions)?;
    visitor
        .in_commit_timestamp
        .ok_or_else(|| KernelError::generic("In-Commit Timestamp not found in commit file"))
}

impl ParsedLogPath<Url> {
    /// Helper method to create a path with the given filename generator
    fn create_path(table_root: &Url, filename: String) -> KernelResult<Self> {
        let location = table_root.join(DELTA_LOG_DIR_WITH_SLASH)?.join(&filename)?;
        Self::try_from(location)?.ok_or_else(|| {
            KernelError::internal_error(format!("Attempted to create an invalid path: {filename}"))
        })
    }

    // TODO: normalize all these log path constructors. we have overlap with this + LogPath +
    // LogRoot types.
    #[allow(unused)]
    /// Create a new ParsedCommitPath<Url> for a new json commit file
    pub(crate) fn new_commit(table_root: &Url, version: Version) -> KernelResult<Self> {
        let filename = format!("{version:020}.json");
        let path = Self::create_path(table_root, filename)?;
        if !path.is_commit() {
            return Err(KernelError::internal_error(
                "ParsedLogPath::new_commit created a non-commit path",
            ));
        }
        Ok(path)
    }

    /// Create a new ParsedCheckpointPath<Url> for a classic parquet checkpoint file
    pub(crate) fn new_classic_parquet_checkpoint(
        table_root: &Url,
        version: Version,
    ) -> KernelResult<Self> {
        let filename = format!("{version:020}.checkpoint.parquet");
        let path = Self::create_path(table_root, filename)?;
        if !path.is_checkpoint() {
            return Err(KernelError::internal_error(
                "ParsedLogPath::new_classic_parquet_checkpoint created a non-checkpoint path",
            ));
        }
        Ok(path)
    }

    /// Create a new ParsedCheckpointPath<Url> for a UUID-based parquet checkpoint file
    #[allow(dead_code)] // TODO: Remove this once we have a use case for it
    pub(crate) fn new_uuid_parquet_checkpoint(
        table_root: &Url,
        version: Version,
    ) -> KernelResult<Self> {
        let filename = format!("{:020}.checkpoint.{}.parquet", version, Uuid::new_v4());
        let path = Self::create_path(table_root, filename)?;
        if !path.is_checkpoint() {
            return Err(KernelError::internal_error(
                "ParsedLogPath::new_uuid_parquet_checkpoint created a non-checkpoint path",
            ));
        }
        Ok(path)
    }

    /// Create a new `ParsedLogPath<Url>` for a version checksum (CRC) file.
    #[internal_api]
    pub(crate) fn new_crc(table_root: &Url, version: Version) -> KernelResult<Self> {
        let filename = format!("{version:020}.crc");
        let path = Self::create_path(table_root, filename)?;
        if !matches!(path.file_type, LogPathFileType::Crc) {
            return Err(KernelError::internal_error(
                "ParsedLogPath::new_crc created a non-CRC path",
            ));
        }
        Ok(path)
    }

    /// Create a new ParsedLogPath<Url> for a log compaction file
    // TODO(#2337): remove allow(dead_code) when log compaction is re-enabled
    #[allow(dead_code)]
    pub(crate) fn new_log_compaction(
        table_root: &Url,
        start_version: Version,
        end_version: Version,
    ) -> KernelResult<Self> {
        let filename = format!("{start_version:020}.{end_version:020}.compacted.json");
        let path = Self::create_path(table_root, filename)?;
        if !matches!(path.file_type, LogPathFileType::CompactedCommit { .. }) {
            return Err(KernelError::internal_error(
                "ParsedLogPath::new_log_compaction created a non-compaction path",
            ));
        }
        Ok(path)
    }
}

/// A checkpoint sidecar is a uniquely-named parquet file: `{unique}.parquet` where `unique` is
/// some unique string such as a UUID. We use `<version>.checkpoint.<uuid>.parquet` here.
///
/// Sidecar paths should be URI-encoded. All characters in the filename here are Unreserved
/// Characters, so we can just retain them. Ref: <https://www.ietf.org/rfc/rfc2396.txt>
pub(crate) fn new_sidecar(table_root: &Url, version: Version) -> KernelResult<(String, Url)> {
    let filename = format!("{version:020}.checkpoint.{}.parquet", Uuid::new_v4());
    let url = table_root
        .join(DELTA_LOG_DIR_WITH_SLASH)?
        .join(SIDECAR_DIR_WITH_SLASH)?
        .join(&filename)?;
    Ok((filename, url))
}

/// A wrapper around parsed log path to provide more structure/safety when handling
/// table/log/commit paths.
#[derive(Debug, Clone)]
pub(crate) struct LogRoot {
    table_root: Url,
    log_root: Url,
}

impl LogRoot {
    /// Create a new LogRoot from the table root URL (e.g. s3://bucket/table ->
    /// s3://bucket/table/_delta_log/)
    ///
    /// TODO: could take a `table_root: TableRoot`
    pub(crate) fn new(mut table_root: Url) -> KernelResult<Self> {
        if !table_root.path().ends_with('/') {
            let new_path = format!("{}/", table_root.path());
            table_root.set_path(&new_path);
        }
        let log_root = table_root.join(DELTA_LOG_DIR_WITH_SLASH)?;
        Ok(Self {
            table_root,
            log_root,
        })
    }

    pub(crate) fn table_root(&self) -> &Url {
        &self.table_root
    }

    pub(crate) fn log_root(&self) -> &Url {
        &self.log_root
    }

    /// Create a new commit path (absolute path) for the given version.
    pub(crate) fn new_commit_path(&self, version: Version) -> KernelResult<ParsedLogPath<Url>> {
        let filename = format!("{version:020}.json");
        let path = self.log_root().join(&filename)?;
        ParsedLogPath::try_from(path)?.ok_or_else(|| {
            KernelError::internal_error(format!("Attempted to create an invalid path: {filename}"))
        })
    }

    /// Create a new staged commit path (absolute path) for the given version.
    pub(crate) fn new_staged_commit_path(
        &self,
        version: Version,
    ) -> KernelResult<ParsedLogPath<Url>> {
        let uuid = uuid::Uuid::new_v4();
        let filename = format!("{version:020}.{uuid}.json");
        let path = self.log_root().join(STAGED_COMMITS_DIR)?.join(&filename)?;
        ParsedLogPath::try_from(path)?.ok_or_else(|| {
            KernelError::internal_error(format!("Attempted to create an invalid path: {filename}"))
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use test_utils::add_commit;

    use super::*;
    use crate::engine::sync::SyncEngine;
    use crate::object_store::memory::InMemory;
    use crate::unit_test_utils::assert_result_error_with_message;

    /// Builds a `ParsedLogPath` by parsing a real log file name, so `filename`, `extension` and
    /// `file_type` agree. `size` is a parameter because listing tests use it to mark where a file
    /// came from.
    pub(crate) fn parse_log_path(filename: &str, size: u64) -> ParsedLogPath {
        let url = Url::parse(&format!("memory:///_delta_log/{filename}")).unwrap();
        ParsedLogPath::try_from(FileMeta {
            location: url,
            last_modified: 0,
            size,
        })
        .unwrap_or_else(|e| panic!("{filename} is not a log path: {e}"))
        .unwrap_or_else(|| panic!("{filename} is not a log path"))
    }

    /// One part of a multi-part checkpoint. Kernel never writes these, so there's no production
    /// constructor to reuse.
    pub(crate) fn multipart_checkpoint_name(
        version: Version,
        part_num: u32,
        num_parts: u32,
    ) -> String {
        format!("{version:020}.checkpoint.{part_num:010}.{num_parts:010}.parquet")
    }

    impl ParsedLogPath<FileMeta> {
        pub(crate) fn create_parsed_published_commit(table_root: &Url, version: Version) -> Self {
            let filename = format!("{version:020}.json");
            let location = table_root
                .join(DELTA_LOG_DIR_WITH_SLASH)
                .unwrap()
                .join(&filename)
                .unwrap();
            let parsed = ParsedLogPath::try_from(FileMeta::new(location, 0, 100))
                .unwrap()
                .unwrap();
            assert!(parsed.file_type == LogPathFileType::Commit);
            parsed
        }

        pub(crate) fn create_parsed_staged_commit(table_root: &Url, version: Version) -> Self {
            let uuid = Uuid::new_v4();
            let filename = format!("{version:020}.{uuid}.json");
            let location = table_root
                .join(DELTA_LOG_DIR_WITH_SLASH)
                .unwrap()
                .join(STAGED_COMMITS_DIR)
                .unwrap()
                .join(&filename)
                .unwrap();
            let parsed = ParsedLogPath::try_from(FileMeta::new(location, 0, 100))
                .unwrap()
                .unwrap();
            assert!(parsed.file_type == LogPathFileType::StagedCommit);
            parsed
        }

        pub(crate) fn create_parsed_crc(table_root: &Url, version: Version) -> Self {
            let filename = format!("{version:020}.crc");
            let location = table_root
                .join(DELTA_LOG_DIR_WITH_SLASH)
                .unwrap()
                .join(&filename)
                .unwrap();
            let parsed = ParsedLogPath::try_from(FileMeta::new(location, 0, 100))
                .unwrap()
                .unwrap();
            assert!(parsed.file_type == LogPathFileType::Crc);
            parsed
        }
    }

    fn table_root_dir_url() -> Url {
        let path = PathBuf::from("./tests/data/table-with-dv-small/");
        let path = std::fs::canonicalize(path).unwrap();
        assert!(path.is_dir());
        let url = url::Url::from_directory_path(path).unwrap();
        assert!(url.path().ends_with('/'));
        url
    }

    fn table_log_dir_url() -> Url {
        let path = PathBuf::from("./tests/data/table-with-dv-small/_delta_log/");
        let path = std::fs::canonicalize(path).unwrap();
        assert!(path.is_dir());
        let url = url::Url::from_directory_path(path).unwrap();
        assert!(url.path().ends_with('/'));
        url
    }

    #[test]
    fn test_may_begin_listable_log_path() {
        // version-named files, and anything sorting before them, keep the scan going
        assert!(may_begin_listable_log_path("00000000000000000010.json"));
        assert!(may_begin_listable_log_path(
            ".00000000000000000010.json.crc"
        ));
        assert!(may_begin_listable_log_path(""));
        // paths sorting past '9' end the version-named region
        assert!(!may_begin_listable_log_path("_last_checkpoint"));
        assert!(!may_begin_listable_log_path("_sidecars/3a0d65cd.parquet"));
        assert!(!may_begin_listable_log_path(
            "_staged_commits/00000000000000000010.3a0d65cd.json"
        ));
        assert!(!may_begin_listable_log_path("Zsentinel"));
    }

    #[rstest::rstest]
    #[case::not_versioned("_last_checkpoint")]
    #[case::missing_extension("00000000000000000010")]
    #[case::invalid_version("abc.json")]
    #[case::version_too_long("000000000000000000010.json")]
    #[case::version_too_short("0000000000000000010.json")]
    #[case::signed_version("+0000000000000000001.json")]
    #[case::invalid_uuid_checkpoint("00000000000000000002.checkpoint.foo.parquet")]
    #[case::short_uuid_checkpoint(
        "00000000000000000010.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e.parquet"
    )]
    #[case::zero_checkpoint_part("00000000000000000008.checkpoint.0000000000.0000000002.parquet")]
    #[case::checkpoint_part_exceeds_total(
        "00000000000000000008.checkpoint.0000000003.0000000002.parquet"
    )]
    #[case::short_checkpoint_part("00000000000000000008.checkpoint.000000001.0000000002.parquet")]
    #[case::signed_checkpoint_part("00000000000000000008.checkpoint.+000000001.0000000002.parquet")]
    #[case::signed_checkpoint_total(
        "00000000000000000008.checkpoint.0000000001.+000000002.parquet"
    )]
    #[case::short_checkpoint_total("00000000000000000008.checkpoint.0000000001.000000002.parquet")]
    #[case::non_digit_checkpoint_part(
        "00000000000000000008.checkpoint.00000000x1.0000000002.parquet"
    )]
    #[case::non_digit_checkpoint_total(
        "00000000000000000008.checkpoint.0000000001.00000000x2.parquet"
    )]
    #[case::signed_compacted_high("00000000000000000008.+0000000000000000015.compacted.json")]
    #[case::short_compacted_high("00000000000000000008.0000000000000000015.compacted.json")]
    #[case::long_compacted_high("00000000000000000008.000000000000000000015.compacted.json")]
    #[case::non_digit_compacted_high("00000000000000000008.00000000000000000a15.compacted.json")]
    fn test_reject_invalid_log_paths(#[case] filename: &str) {
        let log_path = table_log_dir_url().join(filename).unwrap();
        assert!(
            ParsedLogPath::try_from(log_path).unwrap().is_none(),
            "expected {filename} to be rejected"
        );
    }

    #[test]
    fn test_unknown_invalid_patterns() {
        let table_log_dir = table_log_dir_url();

        // invalid -- not a file
        let log_path = table_log_dir.join("subdir/").unwrap();
        assert!(log_path
            .path()
            .ends_with("/tests/data/table-with-dv-small/_delta_log/subdir/"));
        let log_path = ParsedLogPath::try_from(log_path).unwrap();
        assert!(log_path.is_none());

        // empty extension - should be treated as unknown file type
        let log_path = table_log_dir.join("00000000000000000011.").unwrap();
        let result = ParsedLogPath::try_from(log_path);
        assert!(
            matches!(
                result,
                Ok(Some(ParsedLogPath {
                    file_type: LogPathFileType::Unknown,
                    ..
                }))
            ),
            "Expected Unknown file type, got {result:?}"
        );

        // unknown - two parts
        let log_path = table_log_dir.join("00000000000000000010.foo").unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(log_path.filename, "00000000000000000010.foo");
        assert_eq!(log_path.extension, "foo");
        assert_eq!(log_path.version, 10);
        assert!(matches!(log_path.file_type, LogPathFileType::Unknown));
        assert!(log_path.is_unknown());

        // unknown - many parts
        let log_path = table_log_dir
            .join("00000000000000000010.a.b.c.foo")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(log_path.filename, "00000000000000000010.a.b.c.foo");
        assert_eq!(log_path.extension, "foo");
        assert_eq!(log_path.version, 10);
        assert!(log_path.is_unknown());
    }

    #[test]
    fn test_commit_patterns() {
        let table_log_dir = table_log_dir_url();

        let log_path = table_log_dir.join("00000000000000000000.json").unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(log_path.filename, "00000000000000000000.json");
        assert_eq!(log_path.extension, "json");
        assert_eq!(log_path.version, 0);
        assert!(matches!(log_path.file_type, LogPathFileType::Commit));
        assert!(log_path.is_commit());
        assert!(!log_path.is_checkpoint());

        let log_path = table_log_dir.join("00000000000000000005.json").unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(log_path.version, 5);
        assert!(log_path.is_commit());
    }

    #[test]
    fn test_crc_patterns() {
        let table_log_dir = table_log_dir_url();

        let log_path = table_log_dir.join("00000000000000000000.crc").unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(log_path.filename, "00000000000000000000.crc");
        assert_eq!(log_path.extension, "crc");
        assert_eq!(log_path.version, 0);
        assert!(matches!(log_path.file_type, LogPathFileType::Crc));
        assert!(!log_path.is_commit());
        assert!(!log_path.is_checkpoint());

        let log_path = table_log_dir.join("00000000000000000005.crc").unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(log_path.version, 5);
        assert!(log_path.file_type == LogPathFileType::Crc);
    }

    #[test]
    fn test_single_part_checkpoint_patterns() {
        let table_log_dir = table_log_dir_url();

        let log_path = table_log_dir
            .join("00000000000000000002.checkpoint.parquet")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(log_path.filename, "00000000000000000002.checkpoint.parquet");
        assert_eq!(log_path.extension, "parquet");
        assert_eq!(log_path.version, 2);
        assert!(matches!(
            log_path.file_type,
            LogPathFileType::ClassicCheckpoint
        ));
        assert!(!log_path.is_commit());
        assert!(log_path.is_checkpoint());

        // invalid file extension
        let log_path = table_log_dir
            .join("00000000000000000002.checkpoint.json")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(log_path.filename, "00000000000000000002.checkpoint.json");
        assert_eq!(log_path.extension, "json");
        assert_eq!(log_path.version, 2);
        assert!(!log_path.is_commit());
        assert!(!log_path.is_checkpoint());
        assert!(log_path.is_unknown());
    }

    #[test]
    fn test_uuid_checkpoint_patterns() {
        let table_log_dir = table_log_dir_url();

        let log_path = table_log_dir
            .join("00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.parquet")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.parquet"
        );
        assert_eq!(log_path.extension, "parquet");
        assert_eq!(log_path.version, 2);
        assert!(matches!(
            log_path.file_type,
            LogPathFileType::UuidCheckpoint
        ));
        assert!(!log_path.is_commit());
        assert!(log_path.is_checkpoint());

        let log_path = table_log_dir
            .join("00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json"
        );
        assert_eq!(log_path.extension, "json");
        assert_eq!(log_path.version, 2);
        assert!(matches!(
            log_path.file_type,
            LogPathFileType::UuidCheckpoint
        ));
        assert!(!log_path.is_commit());
        assert!(log_path.is_checkpoint());

        let log_path = table_log_dir
            .join("00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.foo")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.foo"
        );
        assert_eq!(log_path.extension, "foo");
        assert_eq!(log_path.version, 2);
        assert!(!log_path.is_commit());
        assert!(!log_path.is_checkpoint());
        assert!(log_path.is_unknown());

        // invalid file extension
        let log_path = table_log_dir
            .join("00000000000000000002.checkpoint.foo")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(log_path.filename, "00000000000000000002.checkpoint.foo");
        assert_eq!(log_path.extension, "foo");
        assert_eq!(log_path.version, 2);
        assert!(!log_path.is_commit());
        assert!(!log_path.is_checkpoint());
        assert!(log_path.is_unknown());
    }

    #[test]
    fn test_multi_part_checkpoint_patterns() {
        let table_log_dir = table_log_dir_url();

        let log_path = table_log_dir
            .join("00000000000000000008.checkpoint.0000000000.0000000002.json")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000008.checkpoint.0000000000.0000000002.json"
        );
        assert_eq!(log_path.extension, "json");
        assert_eq!(log_path.version, 8);
        assert!(!log_path.is_commit());
        assert!(!log_path.is_checkpoint());
        assert!(log_path.is_unknown());

        let log_path = table_log_dir
            .join("00000000000000000008.checkpoint.0000000001.0000000002.parquet")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000008.checkpoint.0000000001.0000000002.parquet"
        );
        assert_eq!(log_path.extension, "parquet");
        assert_eq!(log_path.version, 8);
        assert!(matches!(
            log_path.file_type,
            LogPathFileType::MultiPartCheckpoint {
                part_num: 1,
                num_parts: 2
            }
        ));
        assert!(!log_path.is_commit());
        assert!(log_path.is_checkpoint());

        let log_path = table_log_dir
            .join("00000000000000000008.checkpoint.0000000002.0000000002.parquet")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000008.checkpoint.0000000002.0000000002.parquet"
        );
        assert_eq!(log_path.extension, "parquet");
        assert_eq!(log_path.version, 8);
        assert!(matches!(
            log_path.file_type,
            LogPathFileType::MultiPartCheckpoint {
                part_num: 2,
                num_parts: 2
            }
        ));
        assert!(!log_path.is_commit());
        assert!(log_path.is_checkpoint());
    }

    #[test]
    fn test_compacted_delta_patterns() {
        let table_log_dir = table_log_dir_url();

        let log_path = table_log_dir
            .join("00000000000000000008.00000000000000000015.compacted.json")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000008.00000000000000000015.compacted.json"
        );
        assert_eq!(log_path.extension, "json");
        assert_eq!(log_path.version, 8);
        assert!(matches!(
            log_path.file_type,
            LogPathFileType::CompactedCommit { hi: 15 },
        ));
        assert!(!log_path.is_commit());
        assert!(!log_path.is_checkpoint());

        // invalid extension
        let log_path = table_log_dir
            .join("00000000000000000008.00000000000000000015.compacted.parquet")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000008.00000000000000000015.compacted.parquet"
        );
        assert_eq!(log_path.extension, "parquet");
        assert_eq!(log_path.version, 8);
        assert!(!log_path.is_commit());
        assert!(!log_path.is_checkpoint());
        assert!(log_path.is_unknown());
    }

    #[test]
    fn test_new_commit() {
        let table_root_dir = table_root_dir_url();
        let log_path = ParsedLogPath::new_commit(&table_root_dir, 10).unwrap();
        assert_eq!(log_path.version, 10);
        assert!(log_path.is_commit());
        assert_eq!(log_path.extension, "json");
        assert!(matches!(log_path.file_type, LogPathFileType::Commit));
        assert_eq!(log_path.filename, "00000000000000000010.json");
    }

    #[test]
    fn test_new_uuid_parquet_checkpoint() {
        let table_root_dir = table_root_dir_url();
        let log_path = ParsedLogPath::new_uuid_parquet_checkpoint(&table_root_dir, 10).unwrap();

        assert_eq!(log_path.version, 10);
        assert!(log_path.is_checkpoint());
        assert_eq!(log_path.extension, "parquet");
        assert!(
            matches!(log_path.file_type, LogPathFileType::UuidCheckpoint),
            "Expected UuidCheckpoint file type"
        );

        let filename = log_path.filename.to_string();
        let filename_parts: Vec<&str> = filename.split('.').collect();
        assert_eq!(filename_parts.len(), 4);
        assert_eq!(filename_parts[0], "00000000000000000010");
        assert_eq!(filename_parts[1], "checkpoint");
        assert_eq!(filename_parts[2].len(), UUID_PART_LEN);
        assert_eq!(filename_parts[3], "parquet");
    }

    #[test]
    fn test_new_classic_parquet_checkpoint() {
        let table_root_dir = table_root_dir_url();
        let log_path = ParsedLogPath::new_classic_parquet_checkpoint(&table_root_dir, 10).unwrap();

        assert_eq!(log_path.version, 10);
        assert!(log_path.is_checkpoint());
        assert_eq!(log_path.extension, "parquet");
        assert!(matches!(
            log_path.file_type,
            LogPathFileType::ClassicCheckpoint
        ));
        assert_eq!(log_path.filename, "00000000000000000010.checkpoint.parquet");
    }

    #[test]
    fn test_staged_commit_paths() {
        let table_log_dir = table_log_dir_url();

        // valid staged commit
        let log_path = table_log_dir
            .join("_staged_commits/00000000000000000010.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000010.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json"
        );
        assert_eq!(log_path.extension, "json");
        assert_eq!(log_path.version, 10);
        assert!(matches!(log_path.file_type, LogPathFileType::StagedCommit));
        assert!(log_path.is_commit());
        assert!(!log_path.is_checkpoint());
        assert!(!log_path.is_unknown());

        // invalid uuid
        let log_path = table_log_dir
            .join("_staged_commits/00000000000000000010.not-a-uuid.json")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert!(log_path.is_unknown());
        assert!(!log_path.is_commit());
        assert!(!log_path.is_checkpoint());

        // outside _staged_commits directory
        let log_path = table_log_dir
            .join("00000000000000000010.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json")
            .unwrap();
        let log_path = ParsedLogPath::try_from(log_path).unwrap().unwrap();
        assert_eq!(
            log_path.filename,
            "00000000000000000010.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json"
        );
        assert_eq!(log_path.extension, "json");
        assert_eq!(log_path.version, 10);
        assert!(matches!(log_path.file_type, LogPathFileType::Unknown));
        assert!(!log_path.is_commit());
        assert!(!log_path.is_checkpoint());
        assert!(log_path.is_unknown());
    }

    #[test]
    fn test_should_list() {
        let mut path = ParsedLogPath {
            location: table_log_dir_url(),
            filename: "".to_string(),
            extension: "".to_string(),
            version: 0,
            file_type: LogPathFileType::Commit,
        };

        for (file_type, should_list) in [
            (LogPathFileType::Commit, true),
            (LogPathFileType::StagedCommit, false),
            (LogPathFileType::ClassicCheckpoint, true),
            (LogPathFileType::UuidCheckpoint, true),
            (
                LogPathFileType::MultiPartCheckpoint {
                    part_num: 1,
                    num_parts: 2,
                },
                true,
            ),
            (LogPathFileType::CompactedCommit { hi: 10 }, true),
            (LogPathFileType::Crc, true),
            (LogPathFileType::Unknown, true),
        ] {
            path.file_type = file_type;
            assert_eq!(
                path.should_list(),
                should_list,
                "file_type: {:?}",
                path.file_type
            );
        }
    }

    #[tokio::test]
    async fn test_read_in_commit_timestamp_success() {
        let store = Arc::new(InMemory::new());
        let engine = SyncEngine::new_with_store(store.clone());
        let table_root = "memory://test/";
        let table_url = url::Url::parse(table_root).unwrap();

        // Create a commit file with ICT using add_commit
        let commit_content = r#"{"commitInfo":{"timestamp":1000,"inCommitTimestamp":2000},"protocol":{"minReaderVersion":3,"minWriterVersion":7,"writerFeatures":["inCommitTimestamp"]},"metaData":{"id":"test","schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"integer\",\"nullable\":true}]}"}}"#;
        add_commit(table_root, store.as_ref(), 0, commit_content.to_string())
            .await
            .unwrap();

        // Create ParsedLogPath for the commit file
        let commit_path = table_url
            .join("_delta_log/00000000000000000000.json")
            .unwrap();
        let parsed_path = ParsedLogPath::try_from(FileMeta {
            location: commit_path,
            last_modified: 0,
            size: commit_content.len() as u64,
        })
        .unwrap()
        .unwrap();

        // Now actually test reading the timestamp
        let result = parsed_path.read_in_commit_timestamp(&engine).unwrap();
        assert_eq!(result, 2000);
    }

    #[tokio::test]
    async fn test_read_in_commit_timestamp_missing_ict() {
        let store = Arc::new(InMemory::new());
        let engine = SyncEngine::new_with_store(store.clone());
        let table_root = "memory://test/";
        let table_url = url::Url::parse(table_root).unwrap();

        // Create a commit file without ICT
        let commit_content = r#"{"commitInfo":{"timestamp":1000},"protocol":{"minReaderVersion":3,"minWriterVersion":7},"metaData":{"id":"test","schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"integer\",\"nullable\":true}]}"}}"#;
        add_commit(table_root, store.as_ref(), 0, commit_content.to_string())
            .await
            .unwrap();

        // Create ParsedLogPath for the commit file
        let commit_path = table_url
            .join("_delta_log/00000000000000000000.json")
            .unwrap();
        let parsed_path = ParsedLogPath::try_from(FileMeta {
            location: commit_path,
            last_modified: 0,
            size: commit_content.len() as u64,
        })
        .unwrap()
        .unwrap();

        // Should return error when ICT is missing
        let result = parsed_path.read_in_commit_timestamp(&engine);
        assert_result_error_with_message(result, "In-Commit Timestamp not found");
    }

    #[rstest::rstest]
    #[case::in_commit_timestamp(
        |path: &ParsedLogPath<FileMeta>, engine: &dyn Engine| {
            path.read_in_commit_timestamp(engine).map(|_| ())
        }
    )]
    #[cfg_attr(
        feature = "adaptive-metadata-in-dev",
        case::last_manifest_commit(
            |path: &ParsedLogPath<FileMeta>, engine: &dyn Engine| {
                path.read_ict_and_last_manifest_commit(engine).map(|_| ())
            }
        )
    )]
    fn test_read_commit_file_method_on_non_commit_file_fails(
        #[case] read: fn(&ParsedLogPath<FileMeta>, &dyn Engine) -> KernelResult<()>,
    ) {
        let engine = SyncEngine::new();
        let table_url = url::Url::try_from("file:///tmp/test_table").unwrap();
        let checkpoint_path = table_url
            .join("_delta_log/00000000000000000000.checkpoint.parquet")
            .unwrap();
        let parsed_path = ParsedLogPath::try_from(FileMeta {
            location: checkpoint_path,
            last_modified: 0,
            size: 100,
        })
        .unwrap()
        .unwrap();

        assert_result_error_with_message(read(&parsed_path, &engine), "expected a commit file");
    }

    #[cfg(feature = "adaptive-metadata-in-dev")]
    #[rstest::rstest]
    #[case::commit_info_without_it(r#"{"commitInfo":{"inCommitTimestamp":10}}"#, Ok(None))]
    #[case::present(
        r#"{"commitInfo":{"inCommitTimestamp":10,"lastManifestCommit":{"version":3,"contentRootVersion":2}}}"#,
        Ok(Some((3, 2)))
    )]
    #[case::pointer_equal_to_commit(
        r#"{"commitInfo":{"inCommitTimestamp":10,"lastManifestCommit":{"version":5,"contentRootVersion":5}}}"#,
        Ok(Some((5, 5)))
    )]
    #[case::missing_ict(
        r#"{"commitInfo":{"lastManifestCommit":{"version":3,"contentRootVersion":2}}}"#,
        Err("In-Commit Timestamp not found")
    )]
    #[case::commit_info_not_first(
        concat!(
            r#"{"txn":{"appId":"a","version":1}}"#,
            "\n",
            r#"{"commitInfo":{"inCommitTimestamp":10,"lastManifestCommit":{"version":3,"contentRootVersion":2}}}"#,
        ),
        Err("In-Commit Timestamp not found")
    )]
    #[case::missing_content_root_version(
        r#"{"commitInfo":{"inCommitTimestamp":10,"lastManifestCommit":{"version":3}}}"#,
        Err(r#""contentRootVersion""#)
    )]
    #[case::missing_version(
        r#"{"commitInfo":{"inCommitTimestamp":10,"lastManifestCommit":{"contentRootVersion":2}}}"#,
        Err(r#""version""#)
    )]
    #[case::content_root_newer_than_version(
        r#"{"commitInfo":{"inCommitTimestamp":10,"lastManifestCommit":{"version":1,"contentRootVersion":2}}}"#,
        Err("lastManifestCommit contentRootVersion 2 exceeds version 1")
    )]
    #[case::pointer_newer_than_commit(
        r#"{"commitInfo":{"inCommitTimestamp":10,"lastManifestCommit":{"version":6,"contentRootVersion":2}}}"#,
        Err("lastManifestCommit version 6 exceeds commit version 5")
    )]
    #[case::negative_versions(
        r#"{"commitInfo":{"inCommitTimestamp":10,"lastManifestCommit":{"version":-1,"contentRootVersion":-2}}}"#,
        Err("lastManifestCommit contentRootVersion -2 must be non-negative")
    )]
    #[tokio::test]
    async fn test_read_ict_and_last_manifest_commit(
        #[case] commit_content: &str,
        #[case] expected: Result<Option<(i64, i64)>, &str>,
    ) {
        let store = Arc::new(InMemory::new());
        let engine = SyncEngine::new_with_store(store.clone());
        let table_root = "memory://test/";
        let commit_version = 5;
        add_commit(
            table_root,
            store.as_ref(),
            commit_version,
            commit_content.to_string(),
        )
        .await
        .unwrap();
        let parsed_path = ParsedLogPath::create_parsed_published_commit(
            &url::Url::parse(table_root).unwrap(),
            commit_version,
        );

        let result = parsed_path.read_ict_and_last_manifest_commit(&engine);
        match expected {
            Err(message) => assert_result_error_with_message(result, message),
            Ok(expected) => assert_eq!(
                result.unwrap(),
                (
                    10,
                    expected.map(|(v, c)| LastManifestCommit::new(v, c).unwrap())
                )
            ),
        }
    }

    /// Verifies `new_sidecar` builds a `<version:020>.checkpoint.<uuid>.parquet` filename
    /// under `<table_root>/_delta_log/_sidecars/`.
    #[rstest::rstest]
    #[case::version_zero(0)]
    #[case::small_version(7)]
    #[case::large_version(1_234_567_890)]
    fn test_new_sidecar_path(#[case] version: Version) {
        let table_root = Url::parse("memory:///table/").unwrap();
        let (filename, url) = new_sidecar(&table_root, version).unwrap();

        // Filename: `<version:020>.checkpoint.<uuid>.parquet`
        let prefix = format!("{version:020}.checkpoint.");
        assert!(
            filename.starts_with(&prefix) && filename.ends_with(".parquet"),
            "unexpected filename: {filename}"
        );
        // The middle segment must be a valid UUID.
        let uuid_part = filename
            .strip_prefix(&prefix)
            .and_then(|s| s.strip_suffix(".parquet"))
            .unwrap();
        Uuid::parse_str(uuid_part).expect("middle segment must be a valid UUID");

        // URL: `<table_root>/_delta_log/_sidecars/<filename>`
        let expected = table_root
            .join("_delta_log/_sidecars/")
            .unwrap()
            .join(&filename)
            .unwrap();
        assert_eq!(url, expected);
    }
}
