//! Functionality to create and execute scans (reads) over data stored in a delta table

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use delta_kernel_derive::internal_api;
use itertools::Itertools;
use tracing::{debug, info, warn};
use url::Url;

use self::data_skipping::as_checkpoint_skipping_predicate;
use self::log_replay::{get_scan_metadata_transform_expr, scan_action_iter};
use crate::actions::deletion_vector::{
    deletion_treemap_to_bools, split_vector, DeletionVectorDescriptor,
};
use crate::actions::{Add, ADD_FIELD, ADD_NAME, REMOVE_FIELD, SIDECAR_FIELD};
use crate::cancellation::{CancellableIterator, CancellationTokenRef};
#[cfg(feature = "declarative-plans")]
use crate::checkpoint::CheckpointShape;
use crate::engine_data::FilteredEngineData;
use crate::expressions::{column_name, ColumnName, ExpressionRef, Predicate, PredicateRef};
use crate::kernel_predicates::{
    DefaultKernelPredicateEvaluator, EmptyColumnResolver, KernelPredicateEvaluator as _,
};
use crate::log_replay::{ActionsBatch, HasSelectionVector};
use crate::log_segment::{ActionsWithCheckpointInfo, CheckpointReadInfo, LogSegment};
use crate::log_segment_files::LogSegmentFiles;
use crate::metrics::events::emit_scan_metadata_completed;
use crate::metrics::{MetricId, ScanType};
use crate::parallel::sequential_phase::SequentialPhase;
#[cfg(feature = "declarative-plans")]
use crate::plans::ir::plan::Plan;
use crate::scan::log_replay::{
    ScanLogReplayProcessor, BASE_ROW_ID_NAME, CLUSTERING_PROVIDER_NAME,
    DEFAULT_ROW_COMMIT_VERSION_NAME,
};
use crate::scan::metrics::ScanMetrics;
use crate::scan::state_info::StateInfo;
use crate::schema::{
    lazy_schema_ref, schema_ref, ArrayType, DataType, MapType, PrimitiveType, Schema, SchemaRef,
    StructField, StructType, ToSchema as _,
};
use crate::table_configuration::TableConfiguration;
use crate::table_features::{ColumnMappingMode, Operation};
use crate::transforms::{transform_output_type, ExpressionTransform, SchemaTransform};
use crate::utils::{require, FoldWithOption as _, IteratorExt};
use crate::{
    Engine, EngineData, FileMeta, KernelError, KernelResult, KernelResultIteratorStatic,
    SnapshotRef, Version,
};

pub(crate) mod data_skipping;
pub(crate) mod field_classifiers;
pub mod log_replay;
pub(crate) mod metrics;
#[cfg(feature = "declarative-plans")]
pub(crate) mod scan_plan;
pub mod state;
pub(crate) mod state_info;
pub(crate) mod transform_spec;

#[cfg(test)]
pub(crate) mod test_utils;

#[cfg(test)]
mod tests;

pub(crate) static COMMIT_READ_SCHEMA: LazyLock<SchemaRef> = lazy_schema_ref! {
    (&ADD_FIELD),
    (&REMOVE_FIELD),
};
pub(crate) static CHECKPOINT_READ_SCHEMA: LazyLock<SchemaRef> = lazy_schema_ref! {
    (&ADD_FIELD),
};

pub use crate::table_configuration::StatsOutputSchemas;

/// Initial checkpoint projection without JSON `add.stats`.
/// Discovery restores JSON stats when structured stats cannot satisfy the scan.
pub(crate) static CHECKPOINT_READ_SCHEMA_NO_JSON_STATS: LazyLock<SchemaRef> = LazyLock::new(|| {
    let add_schema = Add::to_schema();
    schema_ref! {
        nullable ADD_NAME: {
            ..(add_schema.fields().filter(|f| f.name() != "stats")),
        },
    }
});
static PARALLEL_CHECKPOINT_READ_SCHEMA: LazyLock<SchemaRef> = lazy_schema_ref! {
    (&ADD_FIELD),
    (&REMOVE_FIELD),
    (&SIDECAR_FIELD),
};
static PARALLEL_CHECKPOINT_READ_SCHEMA_NO_JSON_STATS: LazyLock<SchemaRef> = LazyLock::new(|| {
    let add_schema = Add::to_schema();
    schema_ref! {
        nullable ADD_NAME: {
            ..(add_schema.fields().filter(|f| f.name() != "stats")),
        },
        (&REMOVE_FIELD),
        (&SIDECAR_FIELD),
    }
});
#[allow(unused)]
pub use crate::parallel::parallel_scan_metadata::{
    AfterSequentialScanMetadata, ParallelScanMetadata, ParallelState, SequentialScanMetadata,
};

/// Configures structured-stats output and JSON synthesis in scan metadata.
/// Existing JSON passes through for commits and checkpoints without compatible structured stats
/// unless stats are disabled.
///
/// Most consumers should pick one of the named constructors:
/// - [`Self::json_only`] (default) -- JSON stats only.
/// - [`Self::all_struct`] -- all struct stats without JSON synthesis. Compatible checkpoints omit
///   JSON stats; commits and checkpoints without compatible structured stats pass existing JSON
///   through.
/// - [`Self::struct_columns`] -- selected struct stats with the same JSON behavior.
/// - [`Self::all`] -- both representations.
/// - [`Self::none`] -- neither, AND disables internal data skipping. Unlike the other four
///   constructors, this is the only one that stops kernel from reading stats from parquet at all.
#[derive(Clone, Debug)]
pub struct StatsOptions {
    /// Whether to surface JSON stats on parsed-stats checkpoints (where the
    /// checkpoint writes stats only as a struct, not as JSON). When true, kernel
    /// re-serializes the struct stats into JSON so engines that read JSON stats
    /// see a populated value; when false, JSON stats are left null on such
    /// checkpoints and the engine consumes the struct stats directly.
    ///
    /// No effect on tables that write JSON stats directly, or on commit JSON --
    /// the existing JSON is passed through regardless.
    pub(crate) synthesize_json: bool,

    /// Which struct stats columns to request in `stats_parsed`.
    pub(crate) struct_stats: StructStats,

    /// Whether a VARIANT column's min/max statistic is requested. See
    /// [`Self::with_variant_min_max_stats`].
    pub(crate) variant_min_max: bool,

    /// Whether Geometry bounding-box statistics are requested. See
    /// [`Self::with_geometry_min_max_stats`].
    #[cfg(feature = "geo-type-in-dev")]
    pub(crate) geometry_min_max: bool,
}

/// Controls which struct stats columns appear in `stats_parsed`.
///
/// Indexed columns are non-partition data columns named by `delta.dataSkippingStatsColumns`, or,
/// when that property is absent, the first `delta.dataSkippingNumIndexedCols` leaf columns (32 by
/// default). Extra-indexed columns fall outside that set but are known by the connector to have
/// stats, for example because another writer generated them.
#[derive(Clone, Debug)]
pub enum StructStats {
    /// Don't emit `stats_parsed`. Kernel still reads predicate-referenced stats for
    /// internal data skipping unless the caller picked [`StatsOptions::none`], which
    /// disables stats reading entirely.
    None,
    /// Emit all indexed columns, plus the `extra_indexed` columns.
    ///
    /// Clustering columns outside these sets are not added automatically.
    AllIndexed {
        /// Columns outside the indexed set that may have on-disk stats. Names that cannot be
        /// resolved are omitted with a warning. Missing per-file values read as NULL and do not
        /// prune.
        extra_indexed: Vec<ColumnName>,
    },
    /// Emit only the `requested` data columns, regardless of the table's indexed set.
    /// Predicate-only statistics may still be read for data skipping but are not returned.
    Columns {
        /// Columns to request, even outside the indexed set. Names that cannot be resolved return
        /// an error. Missing per-file values read as NULL and do not prune.
        requested: Vec<ColumnName>,
    },
}

impl Default for StatsOptions {
    /// JSON only, no struct stats.
    fn default() -> Self {
        Self {
            synthesize_json: true,
            struct_stats: StructStats::None,
            variant_min_max: false,
            #[cfg(feature = "geo-type-in-dev")]
            geometry_min_max: false,
        }
    }
}

impl StatsOptions {
    /// JSON only. Equivalent to [`Default::default`].
    pub fn json_only() -> Self {
        Self::default()
    }

    /// All struct stats without JSON synthesis. Compatible checkpoints omit JSON stats and avoid
    /// per-batch `ToJson`; commits and checkpoints without compatible structured stats pass
    /// existing JSON through.
    pub fn all_struct() -> Self {
        Self {
            synthesize_json: false,
            struct_stats: StructStats::AllIndexed {
                extra_indexed: Vec::new(),
            },
            ..Self::default()
        }
    }

    /// Returns struct stats for only `cols`, regardless of the table's indexed set.
    /// Predicate-only statistics may still be read for data skipping but are not returned.
    ///
    /// Names that cannot be resolved return an error. Missing per-file values read as NULL and do
    /// not prune.
    pub fn struct_columns(cols: Vec<ColumnName>) -> Self {
        Self {
            synthesize_json: false,
            struct_stats: StructStats::Columns { requested: cols },
            ..Self::default()
        }
    }

    /// Returns struct stats for all indexed columns and `extra_indexed`.
    ///
    /// Extra-indexed columns bypass the table's configured indexed set. Missing on-disk stats read
    /// as NULL and do not prune; names that cannot be resolved are ignored with a warning.
    pub fn all_struct_with_extra_indexed(extra_indexed: Vec<ColumnName>) -> Self {
        Self {
            synthesize_json: false,
            struct_stats: StructStats::AllIndexed { extra_indexed },
            ..Self::default()
        }
    }

    /// Both JSON and struct stats. Pays for both representations.
    pub fn all() -> Self {
        Self {
            struct_stats: StructStats::AllIndexed {
                extra_indexed: Vec::new(),
            },
            ..Self::default()
        }
    }

    /// **Disables all stats work**: no stats output, no internal data skipping (even
    /// when a predicate is set). Kernel reads no stats columns from parquet at all.
    /// Use when the engine handles its own pruning.
    ///
    /// To get internal predicate-based skipping without `stats_parsed` output, use
    /// [`StatsOptions::default`] (JSON only) or set `struct_stats` to `AllIndexed`/`Columns`.
    pub fn none() -> Self {
        Self {
            synthesize_json: false,
            ..Self::default()
        }
    }

    /// Requests each VARIANT column's min/max statistic in the `minValues` and `maxValues` of
    /// `stats_parsed`, typed as the variant's physical struct. Off by default.
    ///
    /// The statistic is itself a VARIANT value, so kernel never prunes with it. It requires struct
    /// stats without JSON synthesis, such as [`Self::all_struct`]; [`ScanBuilder::build`] rejects
    /// any other combination.
    ///
    /// The protocol encodes the statistic in the stats JSON as a z85 string of the unshredded
    /// variant, and kernel does not implement that encoding: for commits, and for checkpoints
    /// without compatible `stats_parsed`, the engine's [`ParseJson`] must decode it. A compatible
    /// checkpoint's `stats_parsed` stores the statistic as its physical struct, which kernel reads
    /// directly. If `stats_parsed` omits it, as kernel-written checkpoints do, it reads as null.
    ///
    /// With the default engine, a [`ParseJson`] failure on any file's statistic nulls the stats of
    /// every file in that batch, so kernel cannot prune those files either.
    ///
    /// [`ParseJson`]: crate::expressions::ParseJsonExpression
    #[cfg_attr(not(feature = "internal-api"), allow(dead_code))]
    #[internal_api]
    pub(crate) fn with_variant_min_max_stats(mut self, include: bool) -> Self {
        self.variant_min_max = include;
        self
    }

    /// Requests Geometry bounding-box corner points in `stats_parsed.minValues` and
    /// `stats_parsed.maxValues`, retaining each column's logical Geometry type and CRS. Off by
    /// default; Geography bounds are not included.
    ///
    /// The corner-point statistics encoding is experimental; see the
    /// [geospatial RFC](https://github.com/delta-io/delta/issues/4725). It is gated by `geo-type-in-dev`.
    ///
    /// Kernel does not use these bounds for spatial pruning. This option requires struct stats
    /// without JSON synthesis, such as [`Self::all_struct`]; [`ScanBuilder::build`] rejects any
    /// other combination.
    ///
    /// The engine passed to [`Scan::scan_metadata`] or another scan execution API must support
    /// Geometry statistics. Its [`ParseJson`] must decode WKT bounds, and its Parquet handler must
    /// read WKB bounds into the same logical Geometry type. If the footer schema reports Binary,
    /// the Parquet handler must validate the file's Geometry annotation and CRS. Kernel does not
    /// check engine capability or prescribe an in-memory representation.
    ///
    /// [`ParseJson`]: crate::expressions::ParseJsonExpression
    #[cfg(feature = "geo-type-in-dev")]
    #[cfg_attr(not(feature = "internal-api"), allow(dead_code))]
    #[internal_api]
    pub(crate) fn with_geometry_min_max_stats(mut self, include: bool) -> Self {
        self.geometry_min_max = include;
        self
    }

    /// Checks that the options form a supported combination.
    ///
    /// # Errors
    ///
    /// Returns [`KernelError::Unsupported`] if VARIANT or Geometry min/max stats are requested
    /// without struct stats output or with JSON stats synthesis.
    pub(crate) fn validate(&self) -> KernelResult<()> {
        for (include, option) in [
            (self.variant_min_max, "with_variant_min_max_stats"),
            #[cfg(feature = "geo-type-in-dev")]
            (self.geometry_min_max, "with_geometry_min_max_stats"),
        ] {
            if !include {
                continue;
            }
            require!(
                !matches!(self.struct_stats, StructStats::None),
                KernelError::unsupported(format!(
                    "StatsOptions::{option} requires struct stats output"
                ))
            );
            require!(
                !self.synthesize_json,
                KernelError::unsupported(format!(
                    "StatsOptions::{option} cannot be combined with JSON stats synthesis"
                ))
            );
        }
        Ok(())
    }
}

/// Engine-facing partition value options. Pass to [`ScanBuilder::with_partition_values`] to
/// declare whether scan metadata output includes the typed `partitionValues_parsed` struct
/// alongside the raw string map (`fileConstantValues.partitionValues`), which is always present.
///
/// When the typed struct is requested, scan metadata output gains a top-level
/// `partitionValues_parsed` struct column with one typed nullable field per partition column
/// (physical names, table partition-column order). On non-partitioned tables the column is
/// omitted. Values come directly from the checkpoint's native `partitionValues_parsed` column
/// when present, otherwise from parsing the string map.
#[derive(Clone, Debug, Default)]
pub struct PartitionValuesOptions {
    /// Whether to emit the typed `partitionValues_parsed` struct column.
    pub(crate) parsed_struct: bool,
}

impl PartitionValuesOptions {
    /// Raw string map only, no typed struct. Equivalent to [`Default::default`].
    pub fn string_map_only() -> Self {
        Self::default()
    }

    /// Emit the typed `partitionValues_parsed` struct alongside the raw string map. Lets engines
    /// consume `partitionValues_parsed` directly instead of parsing the string map per row.
    pub fn with_struct() -> Self {
        Self {
            parsed_struct: true,
        }
    }
}

/// Builder to scan a snapshot of a table.
pub struct ScanBuilder {
    snapshot: SnapshotRef,
    logical_read_schema: Option<SchemaRef>,
    predicate: Option<PredicateRef>,
    stats: StatsOptions,
    correlation_id: Option<Arc<str>>,
    without_row_transforms: bool,
    partition_values: PartitionValuesOptions,
    cancellation_token: Option<CancellationTokenRef>,
}

impl std::fmt::Debug for ScanBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> KernelResult<(), std::fmt::Error> {
        f.debug_struct("ScanBuilder")
            .field("logical_read_schema", &self.logical_read_schema)
            .field("predicate", &self.predicate)
            .field("stats", &self.stats)
            .field("correlation_id", &self.correlation_id)
            .field("without_row_transforms", &self.without_row_transforms)
            .field("partition_values", &self.partition_values)
            .finish()
    }
}

impl ScanBuilder {
    /// Create a new [`ScanBuilder`] instance.
    pub fn new(snapshot: impl Into<SnapshotRef>) -> Self {
        Self {
            snapshot: snapshot.into(),
            logical_read_schema: None,
            predicate: None,
            stats: StatsOptions::default(),
            correlation_id: None,
            without_row_transforms: false,
            partition_values: PartitionValuesOptions::default(),
            cancellation_token: None,
        }
    }

    /// Provide [`Schema`] for columns to select from the [`Snapshot`].
    ///
    /// A table with columns `[a, b, c]` could have a scan which reads only the first
    /// two columns by using the schema `[a, b]`.
    ///
    /// [`Schema`]: crate::schema::Schema
    /// [`Snapshot`]: crate::snapshot::Snapshot
    pub fn with_schema(mut self, logical_read_schema: SchemaRef) -> Self {
        self.logical_read_schema = Some(logical_read_schema);
        self
    }

    /// Optionally provide a [`SchemaRef`] for columns to select from the [`Snapshot`]. See
    /// [`ScanBuilder::with_schema`] for details. If `schema_opt` is `None` this is a no-op.
    ///
    /// [`Snapshot`]: crate::Snapshot
    pub fn with_schema_opt(self, schema_opt: Option<SchemaRef>) -> Self {
        self.fold_with(schema_opt, ScanBuilder::with_schema)
    }

    /// Optionally provide an expression to filter rows. For example, using the predicate `x <
    /// 4` to return a subset of the rows in the scan which satisfy the filter. If `predicate_opt`
    /// is `None`, this is a no-op.
    ///
    /// NOTE: The filtering is best-effort and can produce false positives (rows that should
    /// have been filtered out but were kept).
    ///
    /// NOTE: Predicates referencing metadata columns the caller added to the projection via
    /// [`StructType::add_metadata_column`] (row indexes, row ids, row commit versions, file paths)
    /// are not supported and will error at build time.
    ///
    /// A predicate alone enables internal data skipping; kernel does not surface stats
    /// to the engine by default. Use [`with_stats`](Self::with_stats) if the engine
    /// also wants stats in the scan metadata output.
    ///
    /// [`StructType::add_metadata_column`]: crate::schema::StructType::add_metadata_column
    pub fn with_predicate(mut self, predicate: impl Into<Option<PredicateRef>>) -> Self {
        self.predicate = predicate.into();
        self
    }

    /// Configure stats output for the scan. See [`StatsOptions`].
    ///
    /// Defaults to [`StatsOptions::default`] (JSON only). Engines that consume
    /// `stats_parsed` directly should pass [`StatsOptions::all_struct`] so compatible
    /// checkpoints omit JSON stats and skip `ToJson` synthesis.
    pub fn with_stats(mut self, stats: StatsOptions) -> Self {
        self.stats = stats;
        self
    }

    /// Returns the logical and physical schemas for structured statistics emitted by this scan.
    ///
    /// The result reflects the current [`StatsOptions`]. It is `None` when structured statistics
    /// are disabled or no data columns are selected. Predicate-only statistics used internally
    /// for data skipping are not included. Clustering columns are included only when selected by
    /// the table's stats configuration or passed as extra-indexed columns.
    ///
    /// # Errors
    ///
    /// Extra-indexed columns that cannot be resolved are omitted with a warning. Returns an error
    /// when a column requested through [`StatsOptions::struct_columns`] cannot be resolved, or when
    /// the selected fields cannot form a valid statistics schema.
    pub fn stats_output_schemas(&self) -> KernelResult<Option<StatsOutputSchemas>> {
        build_stats_output_schemas(self.snapshot.table_configuration(), &self.stats)
    }

    /// Attach an opaque, caller-supplied correlation id for joining this scan's metric events to
    /// the caller's own request or operation id. An empty id is treated as unset. When unset,
    /// behavior is unchanged.
    ///
    /// Note: like `operation_id`, the correlation id does not currently survive the
    /// [`Scan::parallel_scan_metadata`] serialization boundary. A [`ParallelState`] reconstructed
    /// from serialized bytes on a remote worker carries no correlation id (tracked in #2736).
    ///
    /// [`ParallelState`]: crate::scan::ParallelState
    pub fn with_correlation_id(mut self, correlation_id: impl Into<Arc<str>>) -> Self {
        self.correlation_id = Some(correlation_id.into()).filter(|id| !id.is_empty());
        self
    }

    /// Declare that the engine will reconstruct logical rows itself and will not consume
    /// [`ScanMetadata::scan_file_transforms`].
    ///
    /// The kernel then skips building the per-file transform expressions and the per-row
    /// partition-value parse done only to build them. The returned `scan_file_transforms` is left
    /// empty (each row's transform is `None`); use [`Scan::scan_metadata`] for listing.
    ///
    /// With this set the engine must itself apply every physical-to-logical fixup the transform
    /// would normally perform: partition column injection, column-mapping renames, generated Row
    /// IDs, and generated Row Commit Versions. Deletion vectors are unaffected: they are delivered
    /// per file in the scan metadata regardless. [`Scan::execute`] returns an error.
    pub fn without_row_transforms(mut self) -> Self {
        self.without_row_transforms = true;
        self
    }

    /// Configure partition value output for the scan. See [`PartitionValuesOptions`].
    ///
    /// Defaults to [`PartitionValuesOptions::default`] (string map only). Engines that
    /// consume `partitionValues_parsed` directly should pass
    /// [`PartitionValuesOptions::with_struct`] to also emit the typed struct column.
    pub fn with_partition_values(mut self, partition_values: PartitionValuesOptions) -> Self {
        self.partition_values = partition_values;
        self
    }

    /// Provide a [`CancellationToken`] so a cancelled request can stop an in-flight
    /// [`scan_metadata`](Scan::scan_metadata) log replay instead of running to completion.
    ///
    /// Cancellation is cooperative: Kernel forwards the token (if any) to cancellation-aware
    /// [`Engine`] operations, which own cancellation for their I/O and iterators. Work that
    /// completes concurrently with cancellation may still succeed. Passing `None` means the scan
    /// is not cancellable.
    ///
    /// [`CancellationToken`]: crate::CancellationToken
    /// [`KernelError::Cancelled`]: crate::KernelError::Cancelled
    pub fn with_cancellation_token(
        mut self,
        token: impl Into<Option<CancellationTokenRef>>,
    ) -> Self {
        self.cancellation_token = token.into();
        self
    }

    /// Build the [`Scan`].
    ///
    /// This does not scan the table at this point, but does do some work to ensure that the
    /// provided schema make sense, and to prepare some metadata that the scan will need.  The
    /// [`Scan`] type itself can be used to fetch the files and associated metadata required to
    /// perform actual data reads.
    #[tracing::instrument(name = "scan_builder.build", skip_all, fields(enable_call_frame), err)]
    pub fn build(self) -> KernelResult<Scan> {
        // Predicates may reference columns outside self.logical_read_schema, so resolve against the
        // full table schema
        let table_schema = self.snapshot.schema();
        // Reject scans of empty-schema tables. CREATE TABLE accepts an empty schema as
        // a transient state, but a scan over zero columns has no way to derive row
        // counts downstream and panics in the arrow layer. Users must populate the
        // schema with ALTER TABLE ADD COLUMN before scanning.
        if table_schema.num_fields() == 0 {
            return Err(KernelError::generic(
                "Cannot scan Delta table with empty schema; use ALTER TABLE ADD COLUMN \
                 to add at least one column before scanning",
            ));
        }

        // if no schema is provided, use snapshot's entire schema (e.g. SELECT *)
        let logical_read_schema = self
            .logical_read_schema
            .unwrap_or_else(|| table_schema.clone());

        self.snapshot
            .table_configuration()
            .ensure_operation_supported(Operation::Scan)?;

        let mut state_info = StateInfo::try_new(
            logical_read_schema,
            table_schema,
            self.snapshot.table_configuration(),
            self.predicate,
            &self.stats,
            &self.partition_values,
            (), // No classifier, default is for scans
        )?;

        // Retain the transform spec but skip building per-file expressions, which also skips the
        // per-row partition-value parse done only to build them.
        state_info.skip_row_transforms = self.without_row_transforms;

        let commits_since_checkpoint = self.snapshot.log_segment().commits_since_checkpoint();
        if self.snapshot.skipped_new_checkpoints() && commits_since_checkpoint > 0 {
            warn!(
                snapshot_version = self.snapshot.version(),
                checkpoint_version = ?self.snapshot.log_segment().checkpoint_version,
                commits_since_checkpoint,
                "Full scan may replay extra transaction-log commits because the snapshot was \
                 built with skip_new_checkpoints()"
            );
        }

        Ok(Scan {
            snapshot: self.snapshot,
            state_info: Arc::new(state_info),
            stats: self.stats,
            correlation_id: self.correlation_id,
            partition_values: self.partition_values,
            cancellation_token: self.cancellation_token,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PhysicalPredicate {
    Some(PredicateRef, SchemaRef),
    StaticSkipAll,
    None,
}

impl PhysicalPredicate {
    /// If we have a predicate, verify the columns it references and apply column mapping. First,
    /// get the set of references; use that to filter the schema to only the columns of interest
    /// (and verify that all referenced columns exist); then use the resulting logical/physical
    /// mappings to rewrite the expression with physical column names.
    ///
    /// NOTE: It is possible the predicate resolves to FALSE even ignoring column references,
    /// e.g. `col > 10 AND FALSE`. Such predicates can statically skip the whole query.
    pub(crate) fn try_new(
        predicate: &Predicate,
        logical_schema: &Schema,
        column_mapping_mode: ColumnMappingMode,
    ) -> KernelResult<PhysicalPredicate> {
        if can_statically_skip_all_files(predicate) {
            return Ok(PhysicalPredicate::StaticSkipAll);
        }
        let unresolved_references = predicate.references();
        // Group predicate references by case-folded path so that multiple references to the
        // same column with different casings (e.g., `col > 5 AND COL < 10`) all resolve
        // correctly instead of one being silently dropped.
        let mut folded_references: HashMap<Vec<String>, Vec<&ColumnName>> = HashMap::new();
        for r in &unresolved_references {
            let folded: Vec<String> = r.iter().map(|s| s.to_lowercase()).collect();
            folded_references.entry(folded).or_default().push(r);
        }
        let mut get_referenced_fields = GetReferencedFields {
            unresolved_references,
            folded_references,
            column_mappings: HashMap::new(),
            logical_path: vec![],
            folded_logical_path: vec![],
            physical_path: vec![],
            column_mapping_mode,
        };
        let schema_opt = get_referenced_fields.transform_struct(logical_schema);
        let mut unresolved = get_referenced_fields.unresolved_references.into_iter();
        if let Some(unresolved) = unresolved.next() {
            // Schema traversal failed to resolve at least one column referenced by the predicate.
            //
            // NOTE: It's a pretty serious engine bug if we got this far with a query whose WHERE
            // clause has invalid column references. Data skipping is best-effort and the predicate
            // anyway needs to be evaluated against every row of data -- which is impossible if the
            // columns are missing/invalid. Just blow up instead of trying to handle it gracefully.
            return Err(KernelError::missing_column(format!(
                "Predicate references unknown column: {unresolved}"
            )));
        }
        let Some(schema) = schema_opt else {
            // The predicate doesn't statically skip all files, and it doesn't reference any columns
            // that could dynamically change its behavior, so it's useless for data skipping.
            return Ok(PhysicalPredicate::None);
        };
        let mut apply_mappings = ApplyColumnMappings {
            column_mappings: get_referenced_fields.column_mappings,
        };
        if let Some(predicate) = apply_mappings.transform_pred(predicate) {
            Ok(PhysicalPredicate::Some(
                Arc::new(predicate.into_owned()),
                Arc::new(schema.into_owned()),
            ))
        } else {
            Ok(PhysicalPredicate::None)
        }
    }
}

// Evaluates a static data skipping predicate, ignoring any column references, and returns true if
// the predicate allows to statically skip all files. Since this is direct evaluation (not an
// expression rewrite), we use a `DefaultKernelPredicateEvaluator` with an empty column resolver.
fn can_statically_skip_all_files(predicate: &Predicate) -> bool {
    let evaluator = DefaultKernelPredicateEvaluator::from(EmptyColumnResolver);
    evaluator.eval_sql_where(predicate) == Some(false)
}

// Build the stats read schema filtering the table schema to keep only skipping-eligible
// leaf fields that the skipping expression actually references. Also extract physical name
// mappings so we can access the correct physical stats column for each logical column.
struct GetReferencedFields<'a> {
    unresolved_references: HashSet<&'a ColumnName>,
    /// Case-folded (lowercased) column path -> all predicate column names that fold to it,
    /// for O(1) case-insensitive matching. Grouped as a `Vec` so that multiple references to
    /// the same column with different casings all resolve correctly.
    folded_references: HashMap<Vec<String>, Vec<&'a ColumnName>>,
    column_mappings: HashMap<ColumnName, ColumnName>,
    logical_path: Vec<String>,
    /// Case-folded version of `logical_path`, maintained incrementally via push/pop to avoid
    /// re-folding the entire path at every leaf field.
    folded_logical_path: Vec<String>,
    physical_path: Vec<String>,
    column_mapping_mode: ColumnMappingMode,
}
impl<'a> SchemaTransform<'a> for GetReferencedFields<'a> {
    transform_output_type!(|'a, T| Option<Cow<'a, T>>);

    // Capture the path mapping for this leaf field
    fn transform_primitive(&mut self, ptype: &'a PrimitiveType) -> Option<Cow<'a, PrimitiveType>> {
        // Record the physical name mappings for all referenced leaf columns. Delta column names
        // are case-insensitive, so we probe the case-folded lookup map for O(1) matching.
        let pred_cols = self
            .folded_references
            .remove(self.folded_logical_path.as_slice())?;
        let physical = ColumnName::new(&self.physical_path);
        for pred_col in pred_cols {
            self.unresolved_references.remove(pred_col);
            // Use the predicate's column name as key so ApplyColumnMappings can look it up
            // by the exact name used in the predicate expression.
            self.column_mappings
                .insert(pred_col.clone(), physical.clone());
        }
        Some(Cow::Borrowed(ptype))
    }

    // array and map fields are not eligible for data skipping, so filter them out.
    fn transform_array(&mut self, _: &'a ArrayType) -> Option<Cow<'a, ArrayType>> {
        None
    }
    fn transform_map(&mut self, _: &'a MapType) -> Option<Cow<'a, MapType>> {
        None
    }

    fn transform_struct_field(&mut self, field: &'a StructField) -> Option<Cow<'a, StructField>> {
        let physical_name = field.physical_name(self.column_mapping_mode);
        self.logical_path.push(field.name.clone());
        self.folded_logical_path.push(field.name.to_lowercase());
        self.physical_path.push(physical_name.to_string());
        let field = self.recurse_into_struct_field(field);
        self.logical_path.pop();
        self.folded_logical_path.pop();
        self.physical_path.pop();
        Some(Cow::Owned(field?.with_name(physical_name)))
    }
}

/// Prefixes all column references in a predicate with a fixed path. The checkpoint path prefixes
/// stat expressions that already carry their `stats_parsed.*` root (e.g. `stats_parsed.minValues.x
/// > 100`) with `add`, yielding `add.stats_parsed.minValues.x > 100`.
struct PrefixColumns {
    prefix: ColumnName,
}

impl<'a> ExpressionTransform<'a> for PrefixColumns {
    transform_output_type!(|'a, T| Cow<'a, T>);

    fn transform_expr_column(&mut self, name: &'a ColumnName) -> Cow<'a, ColumnName> {
        Cow::Owned(self.prefix.join(name))
    }
}

struct ApplyColumnMappings {
    column_mappings: HashMap<ColumnName, ColumnName>,
}
impl<'a> ExpressionTransform<'a> for ApplyColumnMappings {
    transform_output_type!(|'a, T| Option<Cow<'a, T>>);

    // NOTE: We already verified all column references. But if the map probe ever did fail, the
    // transform would just delete any expression(s) that reference the invalid column.
    fn transform_expr_column(&mut self, name: &'a ColumnName) -> Option<Cow<'a, ColumnName>> {
        self.column_mappings
            .get(name)
            .map(|physical_name| Cow::Owned(physical_name.clone()))
    }
}

static RESTORED_ADD_SCHEMA: LazyLock<SchemaRef> = lazy_schema_ref! {
    nullable "add": {
        not_null "path": STRING,
        not_null "partitionValues": { STRING => nullable STRING },
        not_null "size": LONG,
        nullable "modificationTime": LONG,
        nullable "stats": STRING,
        nullable "tags": { STRING => nullable STRING },
        nullable "deletionVector": (DeletionVectorDescriptor::to_schema()),
        nullable BASE_ROW_ID_NAME: LONG,
        nullable DEFAULT_ROW_COMMIT_VERSION_NAME: LONG,
        nullable CLUSTERING_PROVIDER_NAME: STRING,
    },
};

pub(crate) fn restored_add_schema() -> &'static SchemaRef {
    &RESTORED_ADD_SCHEMA
}

/// utility method making it easy to get a transform for a particular row. If the requested row is
/// outside the range of the passed slice returns `None`, otherwise returns the element at the index
/// of the specified row
pub fn get_transform_for_row(
    row: usize,
    transforms: &[Option<ExpressionRef>],
) -> Option<ExpressionRef> {
    transforms.get(row).cloned().flatten()
}

/// [`ScanMetadata`] contains (1) a batch of [`FilteredEngineData`] specifying data files to be
/// scanned and (2) a vector of transforms (one transform per scan file) that must be applied to the
/// data read from those files.
pub struct ScanMetadata {
    /// Filtered engine data with one row per file to scan (and only selected rows should be
    /// scanned)
    pub scan_files: FilteredEngineData,

    /// Row-level transformations to apply to data read from files.
    ///
    /// Each entry in this vector corresponds to a row in the `scan_files` data. The entry is an
    /// optional expression that must be applied to convert the file's data into the logical schema
    /// expected by the scan:
    ///
    /// - `Some(expr)`: Apply this expression to transform the data to match
    ///   [`Scan::logical_schema()`].
    /// - `None`: No transformation is needed; the data is already in the correct logical form.
    ///
    /// Note: This vector can be indexed by row number, as rows masked by the selection vector will
    /// have corresponding entries that will be `None`.
    pub scan_file_transforms: Vec<Option<ExpressionRef>>,
}

impl ScanMetadata {
    fn try_new(
        data: Box<dyn EngineData>,
        selection_vector: Vec<bool>,
        scan_file_transforms: Vec<Option<ExpressionRef>>,
    ) -> KernelResult<Self> {
        Ok(Self {
            scan_files: FilteredEngineData::try_new(data, selection_vector)?,
            scan_file_transforms,
        })
    }
}

impl HasSelectionVector for ScanMetadata {
    fn has_selected_rows(&self) -> bool {
        self.scan_files.selection_vector().contains(&true)
    }
}

/// The result of building a scan over a table. This can be used to get the actual data from
/// scanning the table.
pub struct Scan {
    snapshot: SnapshotRef,
    state_info: Arc<StateInfo>,
    stats: StatsOptions,
    correlation_id: Option<Arc<str>>,
    partition_values: PartitionValuesOptions,
    /// Optional cooperative cancellation token supplied via
    /// [`ScanBuilder::with_cancellation_token`]. `None` means the scan is not cancellable.
    cancellation_token: Option<CancellationTokenRef>,
}

/// Builds the consumer-visible stats schemas without predicate-only fields.
fn build_stats_output_schemas(
    table_configuration: &TableConfiguration,
    stats: &StatsOptions,
) -> KernelResult<Option<StatsOutputSchemas>> {
    match &stats.struct_stats {
        StructStats::None => Ok(None),
        StructStats::AllIndexed { extra_indexed } => table_configuration
            .build_indexed_stats_output_schemas(
                extra_indexed,
                stats.variant_min_max,
                #[cfg(feature = "geo-type-in-dev")]
                stats.geometry_min_max,
            ),
        StructStats::Columns { requested } => table_configuration
            .build_selected_stats_output_schemas(
                requested,
                stats.variant_min_max,
                #[cfg(feature = "geo-type-in-dev")]
                stats.geometry_min_max,
            ),
    }
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> KernelResult<(), std::fmt::Error> {
        f.debug_struct("Scan")
            .field("schema", &self.state_info.logical_schema)
            .field("predicate", &self.state_info.physical_predicate)
            .field("stats", &self.stats)
            .field("correlation_id", &self.correlation_id)
            .finish()
    }
}

impl Scan {
    /// Whether stats reading is entirely skipped, disabling internal data skipping.
    fn skip_stats(&self) -> bool {
        !self.stats.synthesize_json && matches!(self.stats.struct_stats, StructStats::None)
    }

    fn checkpoint_read_options(&self) -> (SchemaRef, Option<PredicateRef>, Option<&StructType>) {
        let skip_stats = self.skip_stats();
        // The read schema is the typed shape this scan can consume, not evidence that the
        // checkpoint contains `stats_parsed`. Checkpoint discovery validates availability and
        // restores `add.stats` before opening the reader when the structured field is incompatible.
        let can_replace_json_with_structured_stats =
            !self.stats.synthesize_json && self.state_info.physical_stats_read_schema().is_some();
        let checkpoint_schema = if skip_stats || can_replace_json_with_structured_stats {
            CHECKPOINT_READ_SCHEMA_NO_JSON_STATS.clone()
        } else {
            CHECKPOINT_READ_SCHEMA.clone()
        };

        let meta_predicate = if skip_stats {
            None
        } else {
            self.build_actions_meta_predicate()
        };
        // Discovery uses this schema to augment the checkpoint projection, so `none()` must
        // suppress it as well as the initial JSON stats field.
        let physical_stats_read_schema = if skip_stats {
            None
        } else {
            self.state_info
                .physical_stats_read_schema()
                .map(AsRef::as_ref)
        };
        (
            checkpoint_schema,
            meta_predicate,
            physical_stats_read_schema,
        )
    }

    /// Build the read-options bundle passed to [`ScanLogReplayProcessor`].
    fn stats_options(&self) -> log_replay::ScanStatsOptions {
        log_replay::ScanStatsOptions {
            skip_stats: self.skip_stats(),
            synthesize_json: self.stats.synthesize_json,
        }
    }

    /// Build the partition-value read options passed to [`ScanLogReplayProcessor`].
    fn partition_values_options(&self) -> log_replay::ScanPartitionValuesOptions {
        log_replay::ScanPartitionValuesOptions {
            parsed_struct: self.partition_values.parsed_struct,
        }
    }

    /// The table's root URL. Any relative paths returned from `scan_data` (or in a callback from
    /// [`ScanMetadata::visit_scan_files`]) must be resolved against this root to get the actual
    /// path to the file.
    ///
    /// [`ScanMetadata::visit_scan_files`]: crate::scan::ScanMetadata::visit_scan_files
    // NOTE: this is obviously included in the snapshot, just re-exposed here for convenience.
    pub fn table_root(&self) -> &Url {
        self.snapshot.table_root()
    }

    /// Get a shared reference to the [`Snapshot`] of this scan.
    ///
    /// [`Snapshot`]: crate::Snapshot
    pub fn snapshot(&self) -> &SnapshotRef {
        &self.snapshot
    }

    /// Get a shared reference to the logical [`Schema`] of the scan (i.e. the output schema of the
    /// scan). Note that the logical schema can differ from the physical schema due to e.g.
    /// partition columns which are present in the logical schema but not in the physical schema.
    ///
    /// [`Schema`]: crate::schema::Schema
    pub fn logical_schema(&self) -> &SchemaRef {
        &self.state_info.logical_schema
    }

    /// Get a shared reference to the physical [`Schema`] of the scan. This represents the schema
    /// of the underlying data files which must be read from storage.
    ///
    /// [`Schema`]: crate::schema::Schema
    pub fn physical_schema(&self) -> &SchemaRef {
        &self.state_info.physical_schema
    }

    /// Get the predicate [`PredicateRef`] of the scan.
    pub fn physical_predicate(&self) -> Option<PredicateRef> {
        if let PhysicalPredicate::Some(ref predicate, _) = self.state_info.physical_predicate {
            Some(predicate.clone())
        } else {
            None
        }
    }

    /// Get an iterator of [`ScanMetadata`]s that should be used to facilitate a scan. This handles
    /// log-replay, reconciling Add and Remove actions, and applying data skipping (if possible).
    ///
    /// Reports metrics: [`MetricEvent::ScanMetadataCompleted`] when the returned iterator is
    /// fully exhausted.
    ///
    /// [`MetricEvent::ScanMetadataCompleted`]: crate::metrics::MetricEvent::ScanMetadataCompleted
    ///
    /// Each item in the returned iterator is a struct of:
    /// - `Box<dyn EngineData>`: Data in engine format, where each row represents a file to be
    ///   scanned. The schema for each row can be obtained by calling [`scan_row_schema`].
    /// - `Vec<bool>`: A selection vector. If a row is at index `i` and this vector is `false` at
    ///   index `i`, then that row should *not* be processed (i.e. it is filtered out). If the
    ///   vector is `true` at index `i` the row *should* be processed. If the selection vector is
    ///   *shorter* than the number of rows returned, missing elements are considered `true`, i.e.
    ///   included in the query. NB: If you are using the default engine and plan to call arrow's
    ///   `filter_record_batch`, you _need_ to extend this vector to the full length of the batch or
    ///   arrow will drop the extra rows.
    /// - `Vec<Option<Expression>>`: Transformation expressions that need to be applied. For each
    ///   row at index `i` in the above data, if an expression exists at index `i` in the `Vec`, the
    ///   associated expression _must_ be applied to the data read from the file specified by the
    ///   row. The resultant schema for this expression is guaranteed to be
    ///   [`Self::logical_schema()`]. If the item at index `i` in this `Vec` is `None`, or if the
    ///   `Vec` contains fewer than `i` elements, no expression need be applied and the data read
    ///   from disk is already in the correct logical state.
    pub fn scan_metadata(
        &self,
        engine: &dyn Engine,
    ) -> KernelResult<impl Iterator<Item = KernelResult<ScanMetadata>>> {
        let actions_with_checkpoint_info = self.replay_for_scan_metadata(engine)?;
        self.scan_metadata_inner(engine, actions_with_checkpoint_info)
    }

    /// Get an updated iterator of [`ScanMetadata`]s based on an existing iterator of
    /// [`EngineData`]s.
    ///
    /// The existing iterator is assumed to contain data from a previous call to `scan_metadata`.
    /// Engines may decide to cache the results of `scan_metadata` to avoid additional IO operations
    /// required to replay the log.
    ///
    /// As such the new scan's predicate must "contain" the previous scan's predicate. That is, the
    /// new scan's predicate MUST skip all files the previous scan's predicate skipped. The new
    /// scan's predicate is also allowed to skip files the previous predicate kept. For example,
    /// if the previous scan predicate was
    /// ```sql
    /// WHERE a < 42 AND b = 10
    /// ```
    /// then it is legal for the new scan to use predicates such as the following:
    /// ```sql
    /// WHERE a = 30 AND b = 10
    /// WHERE a < 10 AND b = 10
    /// WHERE a < 42 AND b = 10 AND c = 20
    /// ```
    /// but it is NOT legal for the new scan to use predicates like these:
    /// ```sql
    /// WHERE a < 42
    /// WHERE a = 50 AND b = 10
    /// WHERE a < 42 AND b <= 10
    /// WHERE a < 42 OR b = 10
    /// ```
    ///
    /// <div class="warning">
    ///
    /// The current implementation does not yet validate the existing
    /// predicate against the current predicate. Until this is implemented,
    /// the caller must ensure that the existing predicate is compatible with
    /// the current predicate.
    ///
    /// </div>
    ///
    /// # Parameters
    ///
    /// * `existing_version` - Table version the provided data was read from.
    /// * `existing_data` - Existing processed scan metadata with all selection vectors applied.
    /// * `existing_predicate` - The predicate used by the previous scan.
    #[allow(unused)]
    #[internal_api]
    pub(crate) fn scan_metadata_from(
        &self,
        engine: &dyn Engine,
        existing_version: Version,
        existing_data: impl IntoIterator<Item = Box<dyn EngineData>, IntoIter: Send + 'static>,
        _existing_predicate: Option<PredicateRef>,
    ) -> KernelResult<KernelResultIteratorStatic<ScanMetadata>> {
        // TODO(#966): validate that the current predicate is compatible with the hint predicate.
        let existing_data = existing_data.into_iter();
        // Cached metadata bypasses engine handlers, so kernel must poll cancellation while
        // consuming it.
        let existing_data =
            CancellableIterator::new(existing_data.map(Ok), self.cancellation_token.clone());

        if existing_version > self.snapshot.version() {
            return Err(KernelError::Generic(format!(
                "existing_version {} is greater than current version {}",
                existing_version,
                self.snapshot.version()
            )));
        }

        // in order to be processed by our log replay, we must re-shape the existing scan metadata
        // back into shape as we read it from the log. Since it is already reconciled data,
        // we treat it as if it originated from a checkpoint.
        // TODO(#3263): Existing data may contain `stats_parsed` and `partitionValues_parsed`;
        // provide its full schema to the evaluator.
        let transform = engine.evaluation_handler().new_expression_evaluator(
            scan_row_schema(),
            get_scan_metadata_transform_expr(),
            restored_add_schema().clone().into(),
        )?;
        let apply_transform = move |data: KernelResult<Box<dyn EngineData>>| {
            let data = data?;
            let data = transform.evaluate(data.as_ref())?;
            Ok(ActionsBatch::new(data, false))
        };

        let log_segment = self.snapshot.log_segment();

        // If the snapshot version corresponds to the hint version, we process the existing data
        // to apply file skipping and provide the required transformations.
        // Since we're only processing existing data (no checkpoint), we use the base schema
        // and no stats_parsed optimization.
        if existing_version == self.snapshot.version() {
            let actions = existing_data.map(apply_transform);
            let actions_with_checkpoint_info = ActionsWithCheckpointInfo {
                actions,
                checkpoint_info: CheckpointReadInfo {
                    has_stats_parsed: false,
                    has_partition_values_parsed: false,
                    checkpoint_read_schema: restored_add_schema().clone(),
                },
            };
            return Ok(Box::new(
                self.scan_metadata_inner(engine, actions_with_checkpoint_info)?,
            ));
        }

        // If the current log segment contains a checkpoint newer than the hint version
        // we disregard the existing data hint, and perform a full scan. The current log segment
        // only has deltas after the checkpoint, so we cannot update from prior versions.
        // TODO: we may be able to apply heuristics or other logic to try and fetch missing deltas
        // from the log.
        if matches!(log_segment.checkpoint_version, Some(v) if v > existing_version) {
            return Ok(Box::new(self.scan_metadata(engine)?));
        }

        // create a new log segment containing only the commits added after the version hint.
        let mut ascending_commit_files = log_segment.listed.ascending_commit_files.clone();
        ascending_commit_files.retain(|f| f.version > existing_version);
        let log_segment_files = LogSegmentFiles {
            ascending_commit_files,
            latest_commit_file: log_segment.listed.latest_commit_file.clone(),
            ..Default::default()
        };
        let new_log_segment = LogSegment::try_new(
            log_segment_files,
            log_segment.log_root.clone(),
            Some(log_segment.end_version),
            None, // No checkpoint in this incremental segment
        )?;

        // For incremental reads, new_log_segment has no checkpoint but we use the
        // checkpoint schema returned by the function for consistency.
        let (checkpoint_schema, meta_predicate, physical_stats_read_schema) =
            self.checkpoint_read_options();
        let result = new_log_segment.read_actions_with_projected_checkpoint_actions(
            engine,
            COMMIT_READ_SCHEMA.clone(),
            checkpoint_schema,
            meta_predicate,
            physical_stats_read_schema,
            None,
            self.cancellation_token.as_ref(),
        )?;
        // Only the cached suffix needs a kernel-side check. The engine owns cancellation for the
        // newly read action prefix.
        let existing_actions = existing_data.map(apply_transform);
        let actions_with_checkpoint_info = ActionsWithCheckpointInfo {
            actions: result.actions.chain(existing_actions),
            checkpoint_info: CheckpointReadInfo {
                has_stats_parsed: false,
                has_partition_values_parsed: false,
                checkpoint_read_schema: restored_add_schema().clone(),
            },
        };

        Ok(Box::new(self.scan_metadata_inner(
            engine,
            actions_with_checkpoint_info,
        )?))
    }

    fn scan_metadata_inner(
        &self,
        engine: &dyn Engine,
        actions_with_checkpoint_info: ActionsWithCheckpointInfo<
            impl Iterator<Item = KernelResult<ActionsBatch>> + Send,
        >,
    ) -> KernelResult<impl Iterator<Item = KernelResult<ScanMetadata>> + Send> {
        let start = Instant::now();
        let operation_id = MetricId::new();
        let is_catalog_managed = self.snapshot.table_configuration().is_catalog_managed();
        let correlation_id = self.correlation_id.clone();

        let (iter, metrics) = match self.state_info.physical_predicate {
            PhysicalPredicate::StaticSkipAll => {
                info!("Predicate statically evaluated to false; skipping all files");
                (None, Arc::new(ScanMetrics::default()))
            }
            _ => {
                let (it, m) = scan_action_iter(
                    engine,
                    actions_with_checkpoint_info.actions,
                    self.state_info.clone(),
                    actions_with_checkpoint_info.checkpoint_info,
                    self.stats_options(),
                    self.partition_values_options(),
                )?;
                (Some(it), m)
            }
        };

        let on_complete = move || {
            let event = metrics.to_event(
                operation_id,
                is_catalog_managed,
                correlation_id,
                ScanType::Full,
                start.elapsed(),
            );
            info!(%event);
            emit_scan_metadata_completed(&event);
        };
        Ok(iter.into_iter().flatten().on_complete(on_complete))
    }

    #[cfg(feature = "declarative-plans")]
    /// Builds a declarative plan that produces the scan's live `add` actions.
    ///
    /// `engine` supplies the plan executor used to inspect checkpoint shape. Returns `None` when
    /// no Delta metadata matches this scan.
    ///
    /// This method returns the metadata plan without executing it. A connector that consumes the
    /// resulting live `add` rows may run the plan through the generic
    /// [`PlanExecutor`](crate::plans::PlanExecutor) interface or its native query engine. The
    /// native path can keep the engine's batch representation instead of adapting it through
    /// [`EngineData`].
    ///
    /// # Errors
    ///
    /// Returns an error if the engine provides no [`PlanExecutor`](crate::plans::PlanExecutor),
    /// or if log discovery, checkpoint inspection, or plan construction fails.
    #[tracing::instrument(
        name = "scan.declarative_metadata_scan_plan",
        skip_all,
        fields(enable_call_frame),
        err
    )]
    pub fn declarative_metadata_scan_plan(
        &self,
        engine: &dyn Engine,
    ) -> KernelResult<Option<Plan>> {
        // Resolve the checkpoint shape once. Retain the leaf schema only when parsed metadata is
        // needed for output or pruning.
        let plan_executor = engine.require_plan_executor()?;
        let needs_leaf_schema = self.state_info.physical_stats_read_schema().is_some()
            || self.state_info.physical_partition_schema.is_some();
        let shape = if needs_leaf_schema {
            CheckpointShape::try_new_with_leaf_schema(plan_executor.as_ref(), &self.snapshot)?
        } else {
            CheckpointShape::try_new(plan_executor.as_ref(), &self.snapshot)?
        };
        self.build_metadata_scan_plan(&shape)
    }

    // Factored out to facilitate testing
    fn replay_for_scan_metadata(
        &self,
        engine: &dyn Engine,
    ) -> KernelResult<
        ActionsWithCheckpointInfo<impl Iterator<Item = KernelResult<ActionsBatch>> + Send>,
    > {
        let (checkpoint_schema, meta_predicate, physical_stats_read_schema) =
            self.checkpoint_read_options();
        // Checkpoints already represent reconciled state, so scans project only Add actions. This
        // derives `add.path IS NOT NULL` and allows readers to skip non-Add row groups.
        self.snapshot
            .log_segment()
            .read_actions_with_projected_checkpoint_actions(
                engine,
                COMMIT_READ_SCHEMA.clone(),
                checkpoint_schema,
                meta_predicate,
                physical_stats_read_schema,
                self.state_info
                    .physical_partition_schema
                    .as_ref()
                    .map(|s| s.as_ref()),
                self.cancellation_token.as_ref(),
            )
    }

    /// Builds a predicate for row group skipping in checkpoint and sidecar parquet files.
    ///
    /// The scan predicate is rewritten into a data-skipping form scoped under the `add` action:
    /// data-column references become `add.stats_parsed.{minValues,maxValues,nullCount}.<col>` and
    /// partition references become `add.partitionValues_parsed.<col>`, so the parquet reader's row
    /// group filter can use footer statistics to skip row groups that cannot contain matching
    /// files. See [`as_checkpoint_skipping_predicate`] for the rewrite and its data-stat IS NULL
    /// guards.
    ///
    /// Returns `None` if the scan has no predicate, if neither a data-column stats schema nor a
    /// partition schema is available, or if the predicate is a bare unsupported expression (e.g.
    /// column-column comparison). Junctions represent unsupported arms with a NULL literal,
    /// preserving three-valued logic while allowing independently decisive supported arms to
    /// prune.
    fn build_actions_meta_predicate(&self) -> Option<PredicateRef> {
        let PhysicalPredicate::Some(ref predicate, _) = self.state_info.physical_predicate else {
            return None;
        };
        // Skipping needs either data-column stats or partition values to rewrite against; a
        // partition-only predicate has no `stats_parsed` schema, a data-only predicate on an
        // unpartitioned table has no partition schema.
        if self.state_info.physical_stats_read_schema().is_none()
            && self.state_info.physical_partition_schema.is_none()
        {
            return None;
        }

        // `partitionValues_parsed` is keyed by PHYSICAL partition name, and (under column mapping)
        // the predicate also references physical columns, so partition detection reads the physical
        // partition schema rather than the logical names in table metadata.
        let mut partition_columns = HashSet::new();
        let mut floating_partition_columns = HashSet::new();
        if let Some(schema) = self.state_info.physical_partition_schema.as_ref() {
            for field in schema.fields() {
                let column = ColumnName::new([field.name()]);
                if field.data_type() == &DataType::FLOAT || field.data_type() == &DataType::DOUBLE {
                    floating_partition_columns.insert(column.clone());
                }
                partition_columns.insert(column);
            }
        }
        let skipping_pred = as_checkpoint_skipping_predicate(
            predicate,
            &partition_columns,
            &floating_partition_columns,
            &self.state_info.eligible_physical_stats_columns,
        )?;

        let mut prefixer = PrefixColumns {
            prefix: column_name!("add"),
        };
        let prefixed = prefixer.transform_pred(&skipping_pred);
        Some(Arc::new(prefixed.into_owned()))
    }

    /// Start a parallel scan metadata processing for the table.
    ///
    /// This method returns a [`SequentialScanMetadata`] iterator that processes commits and
    /// checkpoint manifests sequentially. After exhausting this iterator, call `finish()`
    /// to determine if a distributed phase is needed.
    ///
    /// Cancellation is not supported on this path: it errors if a token was set via
    /// [`ScanBuilder::with_cancellation_token`], rather than silently running to completion.
    /// Only [`scan_metadata`](Self::scan_metadata) honors the token today.
    ///
    /// # Example
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use delta_kernel::{Engine, KernelResult};
    /// # use delta_kernel::scan::{AfterSequentialScanMetadata, ParallelScanMetadata};
    /// # use delta_kernel::Snapshot;
    /// # use url::Url;
    /// # use test_utils::delta_kernel_default_engine::DefaultEngineBuilder;
    /// # use delta_kernel::object_store::local::LocalFileSystem;
    /// # fn main() -> KernelResult<()> {
    /// let engine = Arc::new(DefaultEngineBuilder::new(Arc::new(LocalFileSystem::new())).build());
    /// let table_root = Url::parse("file:///path/to/table")?;
    ///
    /// // Build a snapshot
    /// let snapshot = Snapshot::builder_for(table_root.clone())
    ///     .at_version(5) // Optional: specify a time-travel version (default is latest version)
    ///     .build(engine.as_ref())?;
    /// let scan = snapshot.scan_builder().build()?;
    /// let mut sequential = scan.parallel_scan_metadata(engine.clone())?;
    ///
    /// // Process sequential phase
    /// for result in sequential.by_ref() {
    ///     let scan_metadata = result?;
    ///     // Process scan metadata...
    /// }
    ///
    /// // Check if distributed phase is needed
    /// match sequential.finish()? {
    ///     AfterSequentialScanMetadata::Done => {
    ///         // All processing complete
    ///     }
    ///     AfterSequentialScanMetadata::Parallel { state, files } => {
    ///         // Distribute files for parallel processing (e.g., one file per worker)
    ///         let state = Arc::new(*state);
    ///         for file in files {
    ///             let parallel = ParallelScanMetadata::try_new(
    ///                 engine.clone(),
    ///                 state.clone(),
    ///                 vec![file],
    ///             )?;
    ///             for result in parallel {
    ///                 let scan_metadata = result?;
    ///                 // Process scan metadata...
    ///             }
    ///         }
    ///     }
    /// }
    /// # Ok(())
    /// # }
    pub fn parallel_scan_metadata(
        &self,
        engine: Arc<dyn Engine>,
    ) -> KernelResult<SequentialScanMetadata> {
        // Fail fast rather than silently ignore a caller-supplied token: the parallel path does
        // not thread cancellation, so honoring a set token would require dropping it on the floor.
        if self.cancellation_token.is_some() {
            return Err(KernelError::unsupported(
                "cancellation is not supported by parallel_scan_metadata; \
                 use scan_metadata for a cancellable scan",
            ));
        }
        // For the sequential/parallel phase approach, we use a conservative checkpoint_info
        // since SequentialPhase reads checkpoints via CheckpointManifestReader which doesn't
        // currently support stats_parsed optimization.
        let checkpoint_read_schema = if self.skip_stats() {
            PARALLEL_CHECKPOINT_READ_SCHEMA_NO_JSON_STATS.clone()
        } else {
            PARALLEL_CHECKPOINT_READ_SCHEMA.clone()
        };
        let checkpoint_info = CheckpointReadInfo {
            has_stats_parsed: false,
            has_partition_values_parsed: false,
            checkpoint_read_schema: checkpoint_read_schema.clone(),
        };
        let processor = ScanLogReplayProcessor::new(
            engine.as_ref(),
            self.state_info.clone(),
            checkpoint_info,
            self.stats_options(),
            self.partition_values_options(),
        )?;
        let sequential = SequentialPhase::try_new(
            processor,
            self.snapshot.log_segment(),
            engine.clone(),
            checkpoint_read_schema,
        )?;

        Ok(SequentialScanMetadata::new(
            sequential,
            self.correlation_id.clone(),
        ))
    }

    /// Perform an "all in one" scan. This will use the provided `engine` to read and process all
    /// the data for the query. Each [`EngineData`] in the resultant iterator is a portion of the
    /// final table data. Generally connectors/engines will want to use [`Scan::scan_metadata`] so
    /// they can have more control over the execution of the scan.
    ///
    /// Returns an error if the scan was built with [`ScanBuilder::without_row_transforms`]; use
    /// [`Scan::scan_metadata`] instead.
    // This calls [`Scan::scan_metadata`] to get an iterator of `ScanMetadata` actions for the scan,
    // and then uses the `engine`'s [`crate::ParquetHandler`] to read the actual table data.
    pub fn execute(
        &self,
        engine: Arc<dyn Engine>,
    ) -> KernelResult<impl Iterator<Item = KernelResult<Box<dyn EngineData>>>> {
        if self.state_info.skip_row_transforms {
            return Err(KernelError::unsupported(
                "Scan::execute is not supported when the scan was built with \
                 without_row_transforms; use scan_metadata for listing and read data with your \
                 own reader",
            ));
        }

        fn scan_metadata_callback(batches: &mut Vec<state::ScanFile>, file: state::ScanFile) {
            batches.push(file);
        }

        debug!(
            "Executing scan with logical schema {:#?} and physical schema {:#?}",
            self.state_info.logical_schema, self.state_info.physical_schema
        );

        let table_root = self.snapshot.table_root().clone();

        let scan_metadata_iter = self.scan_metadata(engine.as_ref())?;
        let scan_files_iter = scan_metadata_iter
            .map(|res| {
                let scan_metadata = res?;
                let scan_files = vec![];
                scan_metadata.visit_scan_files(scan_files, scan_metadata_callback)
            })
            // Iterator<Result<Vec<ScanFile>>> to Iterator<Result<ScanFile>>
            .flatten_ok();

        let physical_schema = self.physical_schema().clone();
        let logical_schema = self.logical_schema().clone();
        let result = scan_files_iter
            .map(move |scan_file| -> KernelResult<_> {
                let scan_file = scan_file?;
                let file_path = table_root.join(&scan_file.path)?;
                let mut selection_vector = scan_file
                    .dv_info
                    .get_selection_vector(engine.as_ref(), &table_root)?;
                let meta = FileMeta {
                    last_modified: scan_file.modification_time,
                    size: scan_file.size.try_into().map_err(|_| {
                        KernelError::generic("Unable to convert scan file size into FileSize")
                    })?,
                    location: file_path,
                };

                // WARNING: We validated the physical predicate against a schema that includes
                // partition columns, but the read schema we use here does _NOT_ include partition
                // columns. So we cannot safely assume that all column references are valid. See
                // https://github.com/delta-io/delta-kernel-rs/issues/434 for more details.
                //
                // TODO(#860): we disable predicate pushdown until we support row indexes.
                let read_result_iter = engine.parquet_handler().read_parquet_files(
                    &[meta],
                    physical_schema.clone(),
                    None,
                )?;

                let mut read_result_iter = read_result_iter.peekable();

                // Only flag an empty iterator as a connector bug when stats are present and report
                // a positive row count. When stats are absent we cannot distinguish a legitimate
                // 0-row file from a buggy connector, so we conservatively allow it.
                let expect_data = scan_file.stats.as_ref().is_some_and(|s| s.num_records > 0);
                if expect_data && read_result_iter.peek().is_none() {
                    return Err(KernelError::internal_error(format!(
                        "ParquetHandler returned no data for file '{}'. This is likely a connector \
                         bug -- the handler's read_parquet_files must return at least one batch for \
                         each requested file that contains rows.",
                        scan_file.path
                    )));
                }

                let engine = engine.clone(); // Arc clone
                let physical_schema_inner = physical_schema.clone();
                let logical_schema_inner = logical_schema.clone();
                Ok(read_result_iter.map(move |read_result| -> KernelResult<_> {
                    let read_result = read_result?;
                    // transform the physical data into the correct logical form
                    let logical = state::transform_to_logical(
                        engine.as_ref(),
                        read_result,
                        &physical_schema_inner,
                        &logical_schema_inner,
                        scan_file.transform.clone(), // Arc clone
                    );
                    let len = logical.as_ref().map_or(0, |res| res.len());
                    // need to split the dv_mask. what's left in dv_mask covers this result, and rest
                    // will cover the following results. we `take()` out of `selection_vector` to avoid
                    // trying to return a captured variable. We're going to reassign `selection_vector`
                    // to `rest` in a moment anyway
                    let mut sv = selection_vector.take();
                    let rest = split_vector(sv.as_mut(), len, None);
                    let result = logical.fold_with(sv, |logical, sv| {
                        logical.and_then(|data| data.apply_selection_vector(sv))
                    });
                    selection_vector = rest;
                    result
                }))
            })
            // Iterator<Result<Iterator<Result<Box<dyn EngineData>>>>> to Iterator<Result<Result<Box<dyn EngineData>>>>
            .flatten_ok()
            // Iterator<Result<Result<Box<dyn EngineData>>>> to Iterator<Result<Box<dyn EngineData>>>
            .map(|x| x?);
        Ok(result)
    }
}

/// Get the base schema that scan rows (from [`Scan::scan_metadata`]) will be returned with.
///
/// This is the base shape; engines may add trailing `*_parsed` columns by opting in via
/// [`StatsOptions`] (`stats_parsed`) or [`PartitionValuesOptions`] (`partitionValues_parsed`).
///
/// It is:
/// ```ignored
/// {
///    path: string,
///    size: long,
///    modificationTime: long,
///    stats: string,
///    deletionVector: {
///      storageType: string,
///      pathOrInlineDv: string,
///      offset: int,
///      sizeInBytes: int,
///      cardinality: long,
///    },
///    fileConstantValues: {
///      partitionValues: map<string, string>,
///      tags: map<string, string>,
///      baseRowId: long,
///      defaultRowCommitVersion: long,
///      clusteringProvider: string,
///    }
/// }
/// ```
pub fn scan_row_schema() -> SchemaRef {
    log_replay::SCAN_ROW_SCHEMA.clone()
}

pub fn selection_vector(
    engine: &dyn Engine,
    descriptor: &DeletionVectorDescriptor,
    table_root: &Url,
) -> KernelResult<Vec<bool>> {
    let storage = engine.storage_handler();
    let dv_treemap = descriptor.read(storage, table_root)?;
    Ok(deletion_treemap_to_bools(dv_treemap))
}
