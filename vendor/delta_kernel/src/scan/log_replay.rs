use std::clone::Clone;
use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

use delta_kernel_derive::internal_api;
use itertools::Itertools;
use serde::{Deserialize, Serialize};
use url::Url;

use super::data_skipping::DataSkippingFilter;
use super::metrics::ScanMetrics;
use super::state_info::{ResolvedPhysicalStatsSchemas, StateInfo};
use super::{PhysicalPredicate, ScanMetadata, COMMIT_READ_SCHEMA};
use crate::actions::deletion_vector::DeletionVectorDescriptor;
use crate::engine_data::{EngineData, GetData, RowVisitor, TypedGetData as _};
use crate::expressions::{
    col, column_expr_ref, column_name, null_lit, ColumnName, Expression, ExpressionRef,
    MapToStructOptions, Predicate, PredicateRef, UnaryExpressionOp,
};
use crate::log_replay::deduplicator::{CheckpointDeduplicator, Deduplicator, FileActionInfo};
use crate::log_replay::{
    ActionsBatch, FileActionDeduplicator, FileActionKey, HasSelectionVector,
    ParallelLogReplayProcessor,
};
use crate::log_segment::CheckpointReadInfo;
use crate::scan::transform_spec::{
    get_transform_expr, parse_partition_values, FileRowTrackingMetadata, TransformSpec,
};
use crate::schema::{
    lazy_schema_ref, ColumnNamesAndTypes, DataType, MapType, SchemaRef, SchemaStructPatchBuilder,
    StructField, StructType, ToSchema as _,
};
use crate::struct_patch::{project_struct_preserving_nulls, ProjectionStructPatchBuilder};
use crate::table_features::ColumnMappingMode;
use crate::utils::{require, FoldWithOption as _};
use crate::{Engine, ExpressionEvaluator, KernelError, KernelResult};

/// Read-time stats toggles consumed by [`ScanLogReplayProcessor`].
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct ScanStatsOptions {
    /// Skip reading file statistics entirely. Disables data skipping.
    pub(crate) skip_stats: bool,
    /// Synthesize the `stats` JSON output via `ToJson(stats_parsed)` on checkpoints
    /// whose `add.stats` is null but whose `add.stats_parsed` is populated
    /// (writeStatsAsJson=false, writeStatsAsStruct=true). When false, `ScanFile.stats`
    /// is left null on such checkpoints; engines that consume `stats_parsed` directly
    /// avoid reading JSON stats in checkpoints and the per-batch `ToJson` cost.
    pub(crate) synthesize_json: bool,
}

impl Default for ScanStatsOptions {
    fn default() -> Self {
        Self {
            skip_stats: false,
            synthesize_json: true,
        }
    }
}

/// Read-time partition value toggles consumed by [`ScanLogReplayProcessor`].
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct ScanPartitionValuesOptions {
    /// Emit the typed `partitionValues_parsed` struct column in scan metadata output,
    /// independent of any predicate.
    pub(crate) parsed_struct: bool,
}

/// Internal serializable state (schemas, transform spec, column mapping, etc.)
/// NOTE: This is opaque to the user - it is passed through as a blob.
#[derive(serde::Serialize, serde::Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct InternalScanState {
    logical_schema: Arc<StructType>,
    physical_schema: Arc<StructType>,
    predicate_schema: Option<Arc<StructType>>,
    transform_spec: Option<Arc<TransformSpec>>,
    column_mapping_mode: ColumnMappingMode,
    /// Physical statistics schemas restored when a parallel worker reconstructs log replay.
    #[serde(default)]
    physical_stats_schemas: Option<ResolvedPhysicalStatsSchemas>,
    #[serde(default)]
    stats_options: ScanStatsOptions,
    #[serde(default)]
    partition_values_options: ScanPartitionValuesOptions,
    /// Physical partition schema for checkpoint partition pruning via `partitionValues_parsed`
    physical_partition_schema: Option<SchemaRef>,
    /// Physical leaf paths eligible for data skipping. Carried alongside
    /// `physical_stats_schemas.read` so the distributed `DataSkippingFilter` rebuilds the same
    /// filter the sequential phase used. `#[serde(default)]` keeps older blobs readable: an empty
    /// set drops every data-column reference, which means no skipping but is still correct.
    #[serde(default)]
    eligible_physical_stats_columns: HashSet<ColumnName>,
    /// Caller-requested physical stats columns preserved across distributed log replay.
    /// `serde(default)` accepts serialized representations that omit this field.
    #[serde(default)]
    requested_physical_stats_columns: Vec<ColumnName>,
    #[serde(default)]
    is_catalog_managed: bool,
    skip_row_transforms: bool,
    /// Table root for normalizing paths. `Some` iff adaptiveMetadata is enabled.
    #[serde(default)]
    dv_normalization_root: Option<Url>,
}

/// Serializable processor state for distributed processing. This can be serialized using the
/// default serde serialization, or through custom serialization in the engine.
///
/// This struct contains all the information needed to reconstruct a `ScanLogReplayProcessor`
/// on remote compute nodes, enabling distributed log replay processing.
///
/// # Serialization Limitations
///
/// - **Opaque expressions**: Predicates containing [`Predicate::Opaque`] or expressions containing
///   [`Expression::Opaque`] cannot be serialized using serde. Attempting to serialize state with
///   opaque expressions will result in an error. Connectors that require opaque expression support
///   can work around this by serializing the predicate separately using their own serialization
///   mechanism, then reconstructing the processor state on the remote node.
///
/// - **Large state**: The `seen_file_keys` field can be large for tables with many commits.
///   Connectors are free to serialize this field using their own format (e.g., more compact binary
///   representations) rather than using the serde-based serialization.
///
/// [`Predicate::Opaque`]: crate::expressions::Predicate::Opaque
/// [`Expression::Opaque`]: crate::expressions::Expression::Opaque
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SerializableScanState {
    /// Optional predicate for data skipping (if provided)
    pub predicate: Option<PredicateRef>,
    /// Opaque internal state blob
    pub internal_state_blob: Vec<u8>,
    /// Set of file action keys that have already been processed.
    pub seen_file_keys: HashSet<FileActionKey>,
    /// Information about checkpoint reading for stats optimization
    pub(crate) checkpoint_info: CheckpointReadInfo,
}

/// [`ScanLogReplayProcessor`] performs log replay (processes actions) specifically for doing a
/// table scan.
///
/// During a table scan, the processor reads batches of log actions (in reverse chronological order)
/// and performs the following steps:
///
/// - Transformation and Data Skipping: Applies a built-in transformation (`commit_transform` or
///   `checkpoint_transform`) to parse action metadata, then applies a predicate-based filter (via
///   [`DataSkippingFilter`]). This includes both data column stats (min/max/nullCount) and
///   partition value filtering in a single columnar pass. A secondary row-level partition filter
///   catches remaining files the columnar pass cannot prune (e.g. null partition values where
///   null-safety conservatively keeps them).
/// - Action Deduplication: Leverages the [`FileActionDeduplicator`] to ensure that for each unique
///   file (identified by its path and deletion vector unique ID), only the latest valid Add action
///   is processed.
/// - Parse-error fallback: If transformation and data skipping return [`KernelError::ParseError`],
///   deduplicates the raw batch first, then retries transformation and data skipping on the
///   surviving actions.
/// - Row StructPatch passthrough: Any user-provided row-level transformation expressions (e.g.
///   those derived from projection or filters) are preserved and passed through to the engine,
///   which applies them as part of its scan execution logic.
///
/// [`ScanLogReplayProcessor::process_actions_batch_sequential`] applies these steps to each batch
/// of log actions and produces a [`ScanMetadata`] result. This result includes the transformed
/// batch, a selection vector indicating which rows are valid, and any row-level transformation
/// expressions that need to be applied to the selected rows.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::private_intra_doc_links)]
pub struct ScanLogReplayProcessor {
    data_skipping_filter: Option<DataSkippingFilter>,
    /// StructPatch for log batches (commit files) - uses ParseJson for stats and MapToStruct
    /// for partition values
    commit_transform: Arc<dyn ExpressionEvaluator>,
    /// StructPatch for checkpoint batches - reads pre-parsed stats_parsed and
    /// partitionValues_parsed directly when available, otherwise parses from raw columns
    checkpoint_transform: Arc<dyn ExpressionEvaluator>,
    /// Final metadata projection built when log replay starts.
    ///
    /// Batch processing applies it after data skipping and deduplication, so predicate-only fields
    /// remain available internally but are absent from returned `ScanMetadata`.
    stats_output_projection: Option<Arc<dyn ExpressionEvaluator>>,
    state_info: Arc<StateInfo>,
    /// A set of (data file path, dv_unique_id) pairs that have been seen thus
    /// far in the log. This is used to filter out files with Remove actions as
    /// well as duplicate entries in the log.
    seen_file_keys: HashSet<FileActionKey>,
    /// Read-time stats options.
    stats_options: ScanStatsOptions,
    /// Read-time partition value options.
    partition_values_options: ScanPartitionValuesOptions,
    /// Information about checkpoint reading for stats optimization
    checkpoint_info: CheckpointReadInfo,
    /// Metrics related to the scan
    metrics: Arc<ScanMetrics>,
}

struct RetryTransformAndDataSkipOutput {
    transformed_actions: Box<dyn EngineData>,
    final_selection: Vec<bool>,
    row_transform_exprs: Vec<Option<ExpressionRef>>,
    active_add_file_sizes: Vec<u64>,
}

impl ScanLogReplayProcessor {
    // These index positions correspond to the order of columns defined in
    // `AddRemoveDedupVisitor::selected_column_names_and_types()`
    const ADD_PATH_INDEX: usize = 0; // Position of "add.path" in getters
    const ADD_PARTITION_VALUES_INDEX: usize = 1; // Position of "add.partitionValues" in getters
    const ADD_SIZE_INDEX: usize = 2; // Position of "add.size" in getters
    const ADD_DV_START_INDEX: usize = 3; // Start position of add deletion vector columns
    const BASE_ROW_ID_INDEX: usize = 6; // Position of add.baseRowId in getters

    // Position of add.defaultRowCommitVersion in getters
    const DEFAULT_ROW_COMMIT_VERSION_INDEX: usize = 7;
    const REMOVE_PATH_INDEX: usize = 8; // Position of "remove.path" in getters
    const REMOVE_DV_START_INDEX: usize = 9; // Start position of remove deletion vector columns

    /// Create a new [`ScanLogReplayProcessor`] instance
    pub(crate) fn new(
        engine: &dyn Engine,
        state_info: Arc<StateInfo>,
        checkpoint_info: CheckpointReadInfo,
        stats_options: ScanStatsOptions,
        partition_values_options: ScanPartitionValuesOptions,
    ) -> KernelResult<Self> {
        let dedup_capacity = state_info.dedup_capacity_hint();
        Self::new_with_seen_files(
            engine,
            state_info,
            checkpoint_info,
            HashSet::with_capacity(dedup_capacity),
            stats_options,
            partition_values_options,
        )
    }

    /// Create new [`ScanLogReplayProcessor`] with pre-populated seen_file_keys.
    ///
    /// This is useful when reconstructing a processor from serialized state, where the
    /// seen_file_keys have already been computed during a previous phase of log replay.
    ///
    /// # Parameters
    /// - `engine`: Engine for creating evaluators and filters
    /// - `state_info`: StateInfo containing schemas, transforms, and predicates
    /// - `checkpoint_info`: Information about checkpoint reading for stats optimization
    /// - `seen_file_keys`: Pre-computed set of file action keys that have been seen
    /// - `stats_options`: Read-time stats options (see [`ScanStatsOptions`])
    /// - `partition_values_options`: Read-time partition value options (see
    ///   [`ScanPartitionValuesOptions`])
    pub(crate) fn new_with_seen_files(
        engine: &dyn Engine,
        state_info: Arc<StateInfo>,
        checkpoint_info: CheckpointReadInfo,
        seen_file_keys: HashSet<FileActionKey>,
        stats_options: ScanStatsOptions,
        partition_values_options: ScanPartitionValuesOptions,
    ) -> KernelResult<Self> {
        let CheckpointReadInfo {
            has_stats_parsed,
            has_partition_values_parsed,
            checkpoint_read_schema,
        } = checkpoint_info.clone();
        let ScanStatsOptions {
            skip_stats,
            synthesize_json,
        } = stats_options;

        // Create metrics first so we can pass them to DataSkippingFilter
        let metrics = Arc::new(ScanMetrics::default());

        // Extract the physical predicate for data skipping and partition filtering.
        // DataSkippingFilter expects Option<(PredicateRef, SchemaRef)>.
        let physical_predicate = match &state_info.physical_predicate {
            PhysicalPredicate::Some(predicate, schema) => Some((predicate.clone(), schema.clone())),
            _ => None,
        };

        // When skip_stats is enabled, disable both data column skipping and partition pruning.
        // Both rely on the same DataSkippingFilter columnar pass, so they are controlled together.
        let stats_schema_for_transform = if skip_stats {
            None
        } else {
            state_info.physical_stats_read_schema().cloned()
        };

        // The partition schema feeds two consumers: the DataSkippingFilter (predicate
        // pruning, disabled by skip_stats together with stats) and the engine-facing
        // `partitionValues_parsed` output column (requested via `parsed_struct`, independent
        // of skip_stats). Either consumer keeps the transform emitting the column.
        let partition_schema_for_transform =
            if partition_values_options.parsed_struct || !skip_stats {
                state_info.physical_partition_schema.clone()
            } else {
                None
            };

        let output_schema = scan_row_schema_with_parsed_columns(
            stats_schema_for_transform.clone(),
            partition_schema_for_transform.clone(),
        )?;
        let stats_output_projection = build_stats_output_projection(
            engine,
            output_schema.clone(),
            state_info.physical_stats_output_schema().map(AsRef::as_ref),
        )?;

        // Create data skipping filter that reads stats_parsed and partitionValues_parsed
        // from the transformed batch. This avoids double JSON parsing -- the transform parses
        // JSON once, then data skipping reads the already-parsed columns from the output.
        //
        // When partition columns are referenced by the predicate, the filter receives a
        // partition schema + expression to extract typed partition values. Since the transform
        // already produces `partitionValues_parsed`, the filter reads that column directly.
        let data_skipping_filter = if skip_stats {
            None
        } else {
            DataSkippingFilter::new(
                engine,
                physical_predicate.as_ref().map(|(p, _)| p.clone()),
                stats_schema_for_transform.as_ref(),
                column_expr_ref!("stats_parsed"),
                partition_schema_for_transform.as_ref(),
                column_expr_ref!("partitionValues_parsed"),
                // The transform flattens `add.*` to top-level columns, so `path` is non-null
                // exactly for Add rows.
                Arc::new(Predicate::is_not_null(col!("path")).into()),
                output_schema.clone(),
                &state_info.eligible_physical_stats_columns,
                Some(metrics.clone()),
            )
        };

        Ok(Self {
            data_skipping_filter,
            // Commit transform: parse JSON for stats, MapToStruct for partition values
            commit_transform: engine.evaluation_handler().new_expression_evaluator(
                COMMIT_READ_SCHEMA.clone(),
                get_add_transform_expr(
                    stats_schema_for_transform.clone(),
                    false,
                    skip_stats,
                    synthesize_json,
                    partition_schema_for_transform.clone(),
                    false,
                ),
                output_schema.clone().into(),
            )?,
            // Checkpoint transform: read pre-parsed columns directly when available
            checkpoint_transform: engine.evaluation_handler().new_expression_evaluator(
                checkpoint_read_schema,
                get_add_transform_expr(
                    stats_schema_for_transform,
                    has_stats_parsed,
                    skip_stats,
                    synthesize_json,
                    partition_schema_for_transform,
                    has_partition_values_parsed,
                ),
                output_schema.into(),
            )?,
            stats_output_projection,
            seen_file_keys,
            state_info,
            stats_options,
            partition_values_options,
            checkpoint_info,
            metrics,
        })
    }

    /// Get a reference to the checkpoint info.
    pub(crate) fn checkpoint_info(&self) -> &CheckpointReadInfo {
        &self.checkpoint_info
    }

    pub(crate) fn get_metrics(&self) -> &ScanMetrics {
        self.metrics.as_ref()
    }

    pub(crate) fn is_catalog_managed(&self) -> bool {
        self.state_info.is_catalog_managed
    }

    /// Serialize the processor state for distributed processing.
    ///
    /// Consumes the processor and returns a `SerializableScanState` containing:
    /// - The predicate (if any) for data skipping
    /// - An opaque internal state blob (schemas, transform spec, column mapping mode)
    /// - The set of seen file keys including their deletion vector information
    ///
    /// The returned state can be used with `from_serializable_state` to reconstruct the
    /// processor on remote compute nodes.
    ///
    /// WARNING: The SerializableScanState may only be deserialized using an equal binary version
    /// of delta-kernel-rs. Using different versions for serialization and deserialization leads to
    /// undefined behaviour!
    #[internal_api]
    #[allow(unused)]
    pub(crate) fn into_serializable_state(self) -> KernelResult<SerializableScanState> {
        let StateInfo {
            logical_schema,
            physical_schema,
            physical_predicate,
            transform_spec,
            column_mapping_mode,
            physical_stats_schemas,
            physical_partition_schema,
            eligible_physical_stats_columns,
            requested_physical_stats_columns,
            is_catalog_managed,
            skip_row_transforms,
            dv_normalization_root,
        } = self.state_info.as_ref().clone();

        // Extract predicate from PhysicalPredicate
        let (predicate, predicate_schema) = match physical_predicate {
            PhysicalPredicate::Some(pred, schema) => (Some(pred), Some(schema)),
            _ => (None, None),
        };

        // Serialize internal state to JSON blob (schemas, transform spec, and column mapping mode)
        let internal_state = InternalScanState {
            logical_schema,
            physical_schema,
            transform_spec,
            predicate_schema,
            column_mapping_mode,
            physical_stats_schemas,
            stats_options: self.stats_options,
            partition_values_options: self.partition_values_options,
            physical_partition_schema,
            eligible_physical_stats_columns,
            requested_physical_stats_columns,
            is_catalog_managed,
            skip_row_transforms,
            dv_normalization_root,
        };
        let internal_state_blob = serde_json::to_vec(&internal_state).map_err(|e| {
            KernelError::generic(format!("Failed to serialize internal state: {e}"))
        })?;

        Ok(SerializableScanState {
            predicate,
            internal_state_blob,
            seen_file_keys: self.seen_file_keys,
            checkpoint_info: self.checkpoint_info,
        })
    }

    /// Reconstruct a processor from serialized state.
    ///
    /// Creates a new processor with the provided state. All fields (partition_filter,
    /// data_skipping_filter, commit_transform, checkpoint_transform, and seen_file_keys) are
    /// reconstructed from the serialized state and engine.
    ///
    /// # Parameters
    /// - `engine`: Engine for creating evaluators and filters
    /// - `state`: The serialized state containing predicate, internal state blob, and seen file
    ///   keys
    ///
    /// # Returns
    /// A new `ScanLogReplayProcessor` wrapped in an Arc.
    #[internal_api]
    #[allow(unused)]
    pub(crate) fn from_serializable_state(
        engine: &dyn Engine,
        state: SerializableScanState,
    ) -> KernelResult<Self> {
        // Deserialize internal state from json
        let internal_state: InternalScanState = serde_json::from_slice(&state.internal_state_blob)
            .map_err(KernelError::MalformedJson)?;
        if let Some(schemas) = &internal_state.physical_stats_schemas {
            schemas.validate()?;
        }

        // Reconstruct PhysicalPredicate from predicate and predicate schema
        let physical_predicate = match state.predicate {
            Some(predicate) => {
                let Some(predicate_schema) = internal_state.predicate_schema else {
                    return Err(KernelError::generic(
                        "Invalid serialized internal state. Expected predicate schema.",
                    ));
                };
                PhysicalPredicate::Some(predicate, predicate_schema)
            }
            None => PhysicalPredicate::None,
        };

        let state_info = Arc::new(StateInfo {
            logical_schema: internal_state.logical_schema,
            physical_schema: internal_state.physical_schema,
            physical_predicate,
            transform_spec: internal_state.transform_spec,
            column_mapping_mode: internal_state.column_mapping_mode,
            physical_stats_schemas: internal_state.physical_stats_schemas,
            physical_partition_schema: internal_state.physical_partition_schema,
            eligible_physical_stats_columns: internal_state.eligible_physical_stats_columns,
            requested_physical_stats_columns: internal_state.requested_physical_stats_columns,
            is_catalog_managed: internal_state.is_catalog_managed,
            skip_row_transforms: internal_state.skip_row_transforms,
            dv_normalization_root: internal_state.dv_normalization_root,
        });

        Self::new_with_seen_files(
            engine,
            state_info,
            state.checkpoint_info,
            state.seen_file_keys,
            internal_state.stats_options,
            internal_state.partition_values_options,
        )
    }

    fn transform_and_data_skip(
        &self,
        actions: &dyn EngineData,
        is_log_batch: bool,
    ) -> KernelResult<(Box<dyn EngineData>, Vec<bool>)> {
        let transform = if is_log_batch {
            &self.commit_transform
        } else {
            &self.checkpoint_transform
        };
        let start = std::time::Instant::now();
        let transformed = transform.evaluate(actions);
        self.metrics
            .add_action_transform_time_ns(start.elapsed().as_nanos() as u64);
        let transformed = transformed?;
        require!(
            transformed.len() == actions.len(),
            KernelError::internal_error(format!(
                "transform output length {} != actions length {}",
                transformed.len(),
                actions.len()
            ))
        );

        let selection_vector = self.build_selection_vector(transformed.as_ref())?;
        require!(
            selection_vector.len() == actions.len(),
            KernelError::internal_error(format!(
                "selection vector length {} != actions length {}",
                selection_vector.len(),
                actions.len()
            ))
        );
        Ok((transformed, selection_vector))
    }

    fn project_stats_output(
        &self,
        transformed_actions: Box<dyn EngineData>,
    ) -> KernelResult<Box<dyn EngineData>> {
        match &self.stats_output_projection {
            Some(projection) => projection.evaluate(transformed_actions.as_ref()),
            None => Ok(transformed_actions),
        }
    }

    fn retry_transform_and_data_skip(
        &self,
        actions: Box<dyn EngineData>,
        is_log_batch: bool,
        dedup_selection: Vec<bool>,
        row_transform_exprs: Vec<Option<ExpressionRef>>,
        active_add_file_sizes: Vec<u64>,
    ) -> KernelResult<RetryTransformAndDataSkipOutput> {
        let row_transform_exprs = dedup_selection
            .iter()
            .enumerate()
            .filter(|(_, selected)| **selected)
            .map(|(row, _)| row_transform_exprs.get(row).cloned().flatten())
            .collect();
        let active_add_file_sizes = dedup_selection
            .iter()
            .zip(active_add_file_sizes)
            .filter_map(|(selected, size)| (*selected).then_some(size))
            .collect();
        let actions = actions.apply_selection_vector(dedup_selection)?;
        let (transformed_actions, final_selection) =
            self.transform_and_data_skip(actions.as_ref(), is_log_batch)?;
        Ok(RetryTransformAndDataSkipOutput {
            transformed_actions,
            final_selection,
            row_transform_exprs,
            active_add_file_sizes,
        })
    }

    fn record_selected_add_files(
        &self,
        selection_vector: &[bool],
        active_add_file_sizes: &[u64],
    ) -> KernelResult<()> {
        require!(
            selection_vector.len() == active_add_file_sizes.len(),
            KernelError::internal_error(format!(
                "selection vector length {} != active Add file sizes length {}",
                selection_vector.len(),
                active_add_file_sizes.len()
            ))
        );
        for (selected, size) in selection_vector.iter().zip(active_add_file_sizes) {
            if *selected {
                self.metrics.record_selected_add_file(*size);
            }
        }
        Ok(())
    }
}

/// A visitor that deduplicates a stream of add and remove actions into a stream of valid adds. Log
/// replay visits actions newest-first, so once we've seen a file action for a given (path, dvId)
/// pair, we should ignore all subsequent (older) actions for that same (path, dvId) pair. If the
/// first action for a given file is a remove, then that file does not show up in the result at all.
struct AddRemoveDedupVisitor<'a, D: Deduplicator> {
    deduplicator: D,
    selection_vector: Vec<bool>,
    state_info: Arc<StateInfo>,
    row_transform_exprs: Vec<Option<ExpressionRef>>,
    active_add_file_sizes: Vec<u64>,
    metrics: &'a ScanMetrics,
}

impl<'a, D: Deduplicator> AddRemoveDedupVisitor<'a, D> {
    fn new(
        deduplicator: D,
        selection_vector: Vec<bool>,
        state_info: Arc<StateInfo>,
        metrics: &'a ScanMetrics,
    ) -> AddRemoveDedupVisitor<'a, D> {
        let active_add_file_sizes = vec![0; selection_vector.len()];
        AddRemoveDedupVisitor {
            deduplicator,
            selection_vector,
            state_info,
            row_transform_exprs: Vec::new(),
            active_add_file_sizes,
            metrics,
        }
    }

    /// True if this row contains an Add action that should survive log replay. Skip it if the row
    /// is not an Add action, or the file has already been seen previously.
    fn is_valid_add<'b>(
        &mut self,
        row: usize,
        getters: &[&'b dyn GetData<'b>],
        selected: bool,
    ) -> KernelResult<bool> {
        // When processing file actions, we extract path and deletion vector information based on
        // action type:
        // - For Add actions: path is at index 0, size at 2, then followed by DV fields at indexes
        //   3-5
        // - For Remove actions (in log batches only): path is at index 8, followed by DV fields at
        //   indexes 9-11
        // The file extraction logic selects the appropriate indexes based on whether we found a
        // valid path. Remove getters are not included when visiting a non-log batch
        // (checkpoint batch), so do not try to extract remove actions in that case.
        let is_log_batch = self.deduplicator.is_log_batch();
        if !selected {
            // Data-skipping predicates keep non-Add rows, so an unselected row is an Add. We
            // don't put it into dedup in favor of performance and memory.

            // TODO(#2945): A stats update can cause the newest Add to be pruned before
            // deduplication, allowing an older Add for the same file to survive. We should
            // fix the problem.
            self.metrics.record_add_file_seen(is_log_batch);
            return Ok(false);
        }
        let Some(FileActionInfo {
            key: file_key,
            size,
            is_add,
        }) = self.deduplicator.extract_file_action(
            row,
            getters,
            !is_log_batch, // skip_removes. true if this is a checkpoint batch
        )?
        else {
            self.metrics.incr_non_file_actions();
            return Ok(false);
        };

        if is_add {
            self.metrics.record_add_file_seen(is_log_batch);
        } else {
            self.metrics.incr_remove_files_seen_from_delta_files();
        };

        // Check both adds and removes (skipping already-seen), but only transform and return adds
        if self.deduplicator.check_and_record_seen(file_key) || !is_add {
            return Ok(false);
        }

        // Parse partition values for building the per-row transform expression.
        // Partition pruning is handled by DataSkippingFilter in the columnar data skipping phase,
        // so we only need to parse values here for the transform.

        // Only needed for survived addFiles.
        let partition_values = match &self.state_info.transform_spec {
            Some(transform) if !self.state_info.skip_row_transforms => {
                let partition_values = getters[ScanLogReplayProcessor::ADD_PARTITION_VALUES_INDEX]
                    .get(row, "add.partitionValues")?;
                parse_partition_values(
                    &self.state_info.logical_schema,
                    transform,
                    &partition_values,
                    self.state_info.column_mapping_mode,
                )?
            }
            _ => Default::default(),
        };

        if !self.state_info.skip_row_transforms {
            let base_row_id: Option<i64> =
                getters[ScanLogReplayProcessor::BASE_ROW_ID_INDEX].get_opt(row, "add.baseRowId")?;
            let default_row_commit_version: Option<i64> = getters
                [ScanLogReplayProcessor::DEFAULT_ROW_COMMIT_VERSION_INDEX]
                .get_opt(row, "add.defaultRowCommitVersion")?;
            let patch_expr = self
                .state_info
                .transform_spec
                .as_ref()
                .map(|transform_spec| {
                    get_transform_expr(
                        transform_spec,
                        partition_values,
                        &self.state_info.physical_schema,
                        FileRowTrackingMetadata {
                            base_row_id,
                            default_row_commit_version,
                        },
                    )
                })
                .transpose()?;
            if patch_expr.is_some() {
                // fill in any needed `None`s for previous rows
                self.row_transform_exprs.resize_with(row, Default::default);
                self.row_transform_exprs.push(patch_expr);
            }
        }
        self.active_add_file_sizes[row] = size;
        Ok(true)
    }
}

impl<D: Deduplicator> RowVisitor for AddRemoveDedupVisitor<'_, D> {
    fn selected_column_names_and_types(&self) -> (&'static [ColumnName], &'static [DataType]) {
        // NOTE: The visitor assumes a schema with adds first and removes optionally afterward.
        static NAMES_AND_TYPES: LazyLock<ColumnNamesAndTypes> = LazyLock::new(|| {
            const STRING: DataType = DataType::STRING;
            const INTEGER: DataType = DataType::INTEGER;
            const LONG: DataType = DataType::LONG;
            let ss_map: DataType = MapType::new(STRING, STRING, true).into();
            let types_and_names = vec![
                (STRING, column_name!("add.path")),
                (ss_map, column_name!("add.partitionValues")),
                (LONG, column_name!("add.size")),
                (STRING, column_name!("add.deletionVector.storageType")),
                (STRING, column_name!("add.deletionVector.pathOrInlineDv")),
                (INTEGER, column_name!("add.deletionVector.offset")),
                (LONG, column_name!("add.baseRowId")),
                (LONG, column_name!("add.defaultRowCommitVersion")),
                (STRING, column_name!("remove.path")),
                (STRING, column_name!("remove.deletionVector.storageType")),
                (STRING, column_name!("remove.deletionVector.pathOrInlineDv")),
                (INTEGER, column_name!("remove.deletionVector.offset")),
            ];
            let (types, names) = types_and_names.into_iter().unzip();
            (names, types).into()
        });
        let (names, types) = NAMES_AND_TYPES.as_ref();
        if self.deduplicator.is_log_batch() {
            (names, types)
        } else {
            // All checkpoint actions are already reconciled and Remove actions in checkpoint files
            // only serve as tombstones for vacuum jobs. So we only need to examine the adds here.
            let add_count = ScanLogReplayProcessor::REMOVE_PATH_INDEX;
            (&names[..add_count], &types[..add_count])
        }
    }

    fn visit<'a>(&mut self, row_count: usize, getters: &[&'a dyn GetData<'a>]) -> KernelResult<()> {
        let start = std::time::Instant::now();

        let is_log_batch = self.deduplicator.is_log_batch();
        let expected_getters = if is_log_batch { 12 } else { 8 };
        require!(
            getters.len() == expected_getters,
            KernelError::InternalError(format!(
                "Wrong number of AddRemoveDedupVisitor getters: {}",
                getters.len()
            ))
        );

        for row in 0..row_count {
            let selected = self.selection_vector[row];
            self.selection_vector[row] = self.is_valid_add(row, getters, selected)?;
        }

        self.metrics
            .add_dedup_visitor_time_ns(start.elapsed().as_nanos() as u64);

        Ok(())
    }
}

pub(crate) static FILE_CONSTANT_VALUES_NAME: &str = "fileConstantValues";
pub(crate) static PATH_NAME: &str = "path";
pub(crate) static BASE_ROW_ID_NAME: &str = "baseRowId";
pub(crate) static DEFAULT_ROW_COMMIT_VERSION_NAME: &str = "defaultRowCommitVersion";
pub(crate) static CLUSTERING_PROVIDER_NAME: &str = "clusteringProvider";
pub(crate) static PARTITION_VALUES_NAME: &str = "partitionValues";
pub(crate) static SIZE_NAME: &str = "size";
#[cfg(feature = "adaptive-metadata-in-dev")]
pub(crate) static MODIFICATION_TIME_NAME: &str = "modificationTime";
#[cfg(feature = "adaptive-metadata-in-dev")]
pub(crate) static DATA_CHANGE_NAME: &str = "dataChange";
pub(crate) static TAGS_NAME: &str = "tags";
pub(crate) static STATS_NAME: &str = "stats";
pub(crate) static STATS_PARSED_NAME: &str = "stats_parsed";
#[internal_api]
pub(crate) static PARTITION_VALUES_PARSED_NAME: &str = "partitionValues_parsed";

// NB: If you update this schema, ensure you update the comment describing it in the doc comment
// for `scan_row_schema` in scan/mod.rs! You'll also need to update ScanFileVisitor as the
// indexes will be off, and [`get_add_transform_expr`] below to match it.
pub(crate) static SCAN_ROW_SCHEMA: LazyLock<SchemaRef> = lazy_schema_ref! {
    // Note that fields projected out of a nullable struct must be nullable
    nullable PATH_NAME: STRING,
    nullable SIZE_NAME: LONG,
    nullable "modificationTime": LONG,
    nullable STATS_NAME: STRING,
    nullable "deletionVector": (DeletionVectorDescriptor::to_schema()),
    nullable FILE_CONSTANT_VALUES_NAME: {
        nullable PARTITION_VALUES_NAME: { STRING => nullable STRING },
        nullable BASE_ROW_ID_NAME: LONG,
        nullable DEFAULT_ROW_COMMIT_VERSION_NAME: LONG,
        nullable TAGS_NAME: { STRING => nullable STRING },
        nullable CLUSTERING_PROVIDER_NAME: STRING,
    },
};

/// Build the scan-row schema, appending the opt-in typed `stats_parsed` / `partitionValues_parsed`
/// columns when requested.
///
/// These typed columns are appended at the top level (siblings of `fileConstantValues`) rather than
/// nested inside it. This mirrors `stats_parsed`, keeps `fileConstantValues` a fixed shape
/// regardless of the engine's options, and keeps data-skipping paths uniform:
/// `partitionValues_parsed.<col>` parallels `stats_parsed.minValues.<col>`. The checkpoint source
/// is also `add.partitionValues_parsed`, a sibling of `add.stats_parsed`.
fn scan_row_schema_with_parsed_columns(
    stats_schema: Option<SchemaRef>,
    partition_schema: Option<SchemaRef>,
) -> KernelResult<SchemaRef> {
    let needs_extra = stats_schema.is_some() || partition_schema.is_some();
    if !needs_extra {
        return Ok(SCAN_ROW_SCHEMA.clone());
    }
    let patch = SchemaStructPatchBuilder::new()
        .fold_with(stats_schema.as_ref(), |patch, schema| {
            patch.append(StructField::nullable(STATS_PARSED_NAME, schema.clone()))
        })
        .fold_with(partition_schema.as_ref(), |patch, schema| {
            patch.append(StructField::nullable(
                PARTITION_VALUES_PARSED_NAME,
                schema.clone(),
            ))
        });
    Ok(Arc::new(patch.build(&SCAN_ROW_SCHEMA)?))
}

/// Builds the final `stats_parsed` projection for log replay.
///
/// [`ScanLogReplayProcessor::new_with_seen_files`] calls this after its commit and checkpoint
/// transforms have established the internal metadata schema. It returns no evaluator when that
/// schema already matches the consumer-facing schema.
fn build_stats_output_projection(
    engine: &dyn Engine,
    input_schema: SchemaRef,
    output_stats_schema: Option<&StructType>,
) -> KernelResult<Option<Arc<dyn ExpressionEvaluator>>> {
    let input_stats_schema =
        input_schema
            .field(STATS_PARSED_NAME)
            .and_then(|field| match field.data_type() {
                DataType::Struct(schema) => Some(schema.as_ref()),
                _ => None,
            });
    if input_stats_schema == output_stats_schema {
        return Ok(None);
    }

    let projection = ProjectionStructPatchBuilder::new(&input_schema);
    let projection = match output_stats_schema {
        Some(schema) => projection.replace(
            STATS_PARSED_NAME,
            StructField::nullable(STATS_PARSED_NAME, schema.clone()),
            project_struct_preserving_nulls([STATS_PARSED_NAME], schema),
        ),
        None => projection.drop_if_exists(STATS_PARSED_NAME),
    };
    let (output_schema, expression) = projection.build()?;
    Ok(Some(engine.evaluation_handler().new_expression_evaluator(
        input_schema,
        expression,
        output_schema.into(),
    )?))
}

/// Build the add transform expression with optional stats and partition value parsing.
///
/// # Parameters
/// - `physical_stats_read_schema`: Schema for parsing stats from JSON for data skipping and
///   structured output, or None if structured stats are not needed.
/// - `has_stats_parsed`: Whether checkpoint has pre-parsed stats_parsed column. When true and
///   `synthesize_json` is true, stats output uses `COALESCE(add.stats, ToJson(add.stats_parsed))`
///   so that `ScanFile.stats` is populated even when the checkpoint lacks JSON stats
///   (writeStatsAsJson=false).
/// - `skip_stats`: When true, replaces the stats column with a null literal, avoiding reads of the
///   JSON stats column in checkpoint parquet files.
/// - `synthesize_json`: When false, disables the `ToJson(add.stats_parsed)` fallback regardless of
///   `has_stats_parsed`. Compatible parsed-stats checkpoints produce null JSON stats and can omit
///   the JSON stats column; JSON-only checkpoints and commits retain `add.stats` as fallback input.
/// - `partition_schema`: Schema of typed partition columns for data skipping, or None if partition
///   value parsing is not needed.
/// - `has_partition_values_parsed`: Whether the source carries a native `partitionValues_parsed`
///   column (checkpoint). When true it is read directly; otherwise the struct is reconstructed from
///   the `partitionValues` string map.
///
/// The transform includes `stats_parsed` only when `physical_stats_read_schema` is Some,
/// and `partitionValues_parsed` only when `partition_schema` is Some.
/// Stats are output using physical column names.
fn get_add_transform_expr(
    physical_stats_read_schema: Option<SchemaRef>,
    has_stats_parsed: bool,
    skip_stats: bool,
    synthesize_json: bool,
    partition_schema: Option<SchemaRef>,
    has_partition_values_parsed: bool,
) -> ExpressionRef {
    let stats_expr = if skip_stats {
        Arc::new(null_lit(DataType::STRING))
    } else if has_stats_parsed && synthesize_json {
        // Checkpoint may lack JSON stats when writeStatsAsJson=false. Fall back to
        // serializing stats_parsed so ScanFile.stats is populated either way.
        Arc::new(Expression::coalesce([
            col!("add.stats"),
            Expression::unary(UnaryExpressionOp::ToJson, col!("add.stats_parsed")),
        ]))
    } else if has_stats_parsed {
        // The compatible checkpoint projection can omit add.stats when JSON output is disabled.
        Arc::new(null_lit(DataType::STRING))
    } else {
        column_expr_ref!("add.stats")
    };
    let mut fields = vec![
        column_expr_ref!("add.path"),
        column_expr_ref!("add.size"),
        column_expr_ref!("add.modificationTime"),
        stats_expr,
        column_expr_ref!("add.deletionVector"),
        Arc::new(Expression::struct_from([
            column_expr_ref!("add.partitionValues"),
            column_expr_ref!("add.baseRowId"),
            column_expr_ref!("add.defaultRowCommitVersion"),
            column_expr_ref!("add.tags"),
            column_expr_ref!("add.clusteringProvider"),
        ])),
    ];

    // Add stats_parsed when needed for data skipping or connector output.
    if let Some(stats_schema) = physical_stats_read_schema {
        let stats_parsed_expr = if has_stats_parsed {
            // Checkpoint has stats_parsed column - read directly
            col!("add.stats_parsed")
        } else {
            // No stats_parsed available (JSON log files) - parse JSON
            Expression::parse_json(col!("add.stats"), stats_schema)
        };
        fields.push(Arc::new(stats_parsed_expr));
    }

    // Add partitionValues_parsed when partition columns are needed for data skipping or for the
    // engine-facing typed output column.
    if partition_schema.is_some() {
        let pv_parsed_expr = if has_partition_values_parsed {
            // Checkpoint carries a native partitionValues_parsed column - read it directly.
            col!("add.partitionValues_parsed")
        } else {
            // No native column (JSON commit): reconstruct from the string map.
            Expression::map_to_struct(col!("add.partitionValues"), MapToStructOptions::default())
        };
        fields.push(Arc::new(pv_parsed_expr));
    }

    Arc::new(Expression::struct_from(fields))
}

// TODO: Move this to transaction/mod.rs once `scan_metadata_from` is pub, as this is used for
// deletion vector update transformations.
#[allow(unused)]
pub(crate) fn get_scan_metadata_transform_expr() -> ExpressionRef {
    static EXPR: LazyLock<ExpressionRef> = LazyLock::new(|| {
        Arc::new(Expression::struct_from([Arc::new(
            Expression::struct_from([
                column_expr_ref!("path"),
                column_expr_ref!("fileConstantValues.partitionValues"),
                column_expr_ref!("size"),
                column_expr_ref!("modificationTime"),
                column_expr_ref!("stats"),
                column_expr_ref!("fileConstantValues.tags"),
                column_expr_ref!("deletionVector"),
                column_expr_ref!("fileConstantValues.baseRowId"),
                column_expr_ref!("fileConstantValues.defaultRowCommitVersion"),
                column_expr_ref!("fileConstantValues.clusteringProvider"),
            ]),
        )]))
    });
    EXPR.clone()
}

impl ParallelLogReplayProcessor for ScanLogReplayProcessor {
    type Output = ScanMetadata;

    // WARNING: This function performs all the same operations as
    // [`ScanLogReplayProcessor::process_actions_batch_sequential`]! Any changes performed to this
    // function probably also need to be applied to the other copy. The copy exists because
    // parallel processing requires `&self`, while sequential processing requires `&mut self`.
    #[tracing::instrument(
        name = "scan_log_replay.process_actions_batch_parallel",
        skip_all,
        fields(enable_call_frame),
        err
    )]
    fn process_actions_batch_parallel(
        &self,
        actions_batch: ActionsBatch,
    ) -> KernelResult<Self::Output> {
        let ActionsBatch {
            actions,
            is_log_batch,
        } = actions_batch;
        require!(
            !is_log_batch,
            KernelError::generic(
                "Parallel checkpoint processor may only be applied to checkpoint files"
            )
        );

        let mut should_retry_transform_and_data_skip = false;
        // Step 1: Apply transform + data skipping. Do this before deduplication to reduce the size
        // of the dedup map and avoid String allocations.
        // This step transforms all Adds, including those superseded by Removes (dead Adds).
        // The transform for a dead Add may fail because it may have a different partition column
        // type. In that case, we get a ParseError and retry after deduplication.
        let (pre_dedup_transform_result, pre_dedup_selection) =
            match self.transform_and_data_skip(actions.as_ref(), is_log_batch) {
                Ok((transformed_actions, pre_dedup_selection)) => {
                    (Ok(transformed_actions), pre_dedup_selection)
                }
                Err(err @ KernelError::ParseError(_, _)) => {
                    should_retry_transform_and_data_skip = true;
                    (Err(err), vec![true; actions.len()])
                }
                Err(err) => return Err(err),
            };

        // Step 2: Run deduplication visitor on RAW batch (needs add.path, remove.path, etc.)
        let deduplicator = CheckpointDeduplicator::try_new(
            &self.seen_file_keys,
            Self::ADD_PATH_INDEX,
            Self::ADD_SIZE_INDEX,
            Self::ADD_DV_START_INDEX,
            self.state_info.dv_normalization_root.clone(),
        )?;
        let (dedup_selection, row_transform_exprs, active_add_file_sizes) = {
            let mut visitor = AddRemoveDedupVisitor::new(
                deduplicator,
                pre_dedup_selection,
                self.state_info.clone(),
                &self.metrics,
            );
            visitor.visit_rows_of(actions.as_ref())?;
            (
                visitor.selection_vector,
                visitor.row_transform_exprs,
                visitor.active_add_file_sizes,
            )
        };

        // Step 3: Return transformed batch with updated selection vector
        let RetryTransformAndDataSkipOutput {
            transformed_actions,
            final_selection,
            row_transform_exprs,
            active_add_file_sizes,
        } = if should_retry_transform_and_data_skip {
            // If step 1 failed with a parse error, filter out the dead Adds and retry after
            // deduplication.
            self.retry_transform_and_data_skip(
                actions,
                is_log_batch,
                dedup_selection,
                row_transform_exprs,
                active_add_file_sizes,
            )?
        } else {
            RetryTransformAndDataSkipOutput {
                transformed_actions: pre_dedup_transform_result?,
                final_selection: dedup_selection,
                row_transform_exprs,
                active_add_file_sizes,
            }
        };
        self.record_selected_add_files(&final_selection, &active_add_file_sizes)?;
        let transformed_actions = self.project_stats_output(transformed_actions)?;
        let scan_metadata =
            ScanMetadata::try_new(transformed_actions, final_selection, row_transform_exprs)?;
        self.metrics
            .update_peak_hash_set_size(self.seen_file_keys.len());
        Ok(scan_metadata)
    }
}

impl ScanLogReplayProcessor {
    // WARNING: This function performs all the same operations as
    // [`<ScanLogReplayProcessor as ParallelLogReplayProcessor>::process_actions_batch_parallel`]!
    // Any changes performed to this function probably also need to be applied to the other copy.
    // The copy exists because this method requires `&mut self`, while parallel processing requires
    // `&self`.
    #[tracing::instrument(
        name = "scan_log_replay.process_actions_batch_sequential",
        skip_all,
        fields(enable_call_frame),
        err
    )]
    pub(crate) fn process_actions_batch_sequential(
        &mut self,
        actions_batch: ActionsBatch,
    ) -> KernelResult<ScanMetadata> {
        let ActionsBatch {
            actions,
            is_log_batch,
        } = actions_batch;

        let mut should_retry_transform_and_data_skip = false;
        // Step 1: Apply transform + data skipping. Do this before deduplication to reduce the size
        // of the dedup map and avoid String allocations.
        // This step transforms all Adds, including those superseded by Removes (dead Adds).
        // The transform for a dead Add may fail because it may have a different partition column
        // type. In that case, we get a ParseError and retry after deduplication.
        // The transform depends on the batch type:
        // - Log batches: parse JSON for stats, MapToStruct for partition values
        // - Checkpoint batches: read pre-parsed columns directly when available
        // This avoids double JSON parsing -- the transform already parsed the stats.
        // Data skipping is safe for Remove rows: their add-side columns (stats_parsed,
        // partitionValues_parsed) are null. For stats, the skipping predicate wraps comparisons
        // with ISNULL guards that keep rows with missing stats. For partition values, the
        // predicate is wrapped with OR(NOT is_add, pred) via guard_for_removes, so non-Add
        // rows always pass the partition filter regardless of null partition values.
        let (pre_dedup_transform_result, pre_dedup_selection) =
            match self.transform_and_data_skip(actions.as_ref(), is_log_batch) {
                Ok((transformed_actions, pre_dedup_selection)) => {
                    (Ok(transformed_actions), pre_dedup_selection)
                }
                Err(err @ KernelError::ParseError(_, _)) => {
                    should_retry_transform_and_data_skip = true;
                    (Err(err), vec![true; actions.len()])
                }
                Err(err) => return Err(err),
            };

        // Step 2: Run deduplication visitor on RAW batch (needs add.path, remove.path, etc.)
        let deduplicator = FileActionDeduplicator::new(
            &mut self.seen_file_keys,
            is_log_batch,
            Self::ADD_PATH_INDEX,
            Self::ADD_SIZE_INDEX,
            Self::REMOVE_PATH_INDEX,
            Self::ADD_DV_START_INDEX,
            Self::REMOVE_DV_START_INDEX,
            self.state_info.dv_normalization_root.clone(),
        );
        let (dedup_selection, row_transform_exprs, active_add_file_sizes) = {
            let mut visitor = AddRemoveDedupVisitor::new(
                deduplicator,
                pre_dedup_selection,
                self.state_info.clone(),
                &self.metrics,
            );
            visitor.visit_rows_of(actions.as_ref())?;
            (
                visitor.selection_vector,
                visitor.row_transform_exprs,
                visitor.active_add_file_sizes,
            )
        };

        // Step 3: Return transformed batch with updated selection vector
        let RetryTransformAndDataSkipOutput {
            transformed_actions,
            final_selection,
            row_transform_exprs,
            active_add_file_sizes,
        } = if should_retry_transform_and_data_skip {
            // If step 1 failed with a parse error, filter out the dead Adds and retry after
            // deduplication.
            self.retry_transform_and_data_skip(
                actions,
                is_log_batch,
                dedup_selection,
                row_transform_exprs,
                active_add_file_sizes,
            )?
        } else {
            RetryTransformAndDataSkipOutput {
                transformed_actions: pre_dedup_transform_result?,
                final_selection: dedup_selection,
                row_transform_exprs,
                active_add_file_sizes,
            }
        };
        self.record_selected_add_files(&final_selection, &active_add_file_sizes)?;
        let transformed_actions = self.project_stats_output(transformed_actions)?;
        let scan_metadata =
            ScanMetadata::try_new(transformed_actions, final_selection, row_transform_exprs)?;
        self.metrics
            .update_peak_hash_set_size(self.seen_file_keys.len());
        Ok(scan_metadata)
    }

    fn build_selection_vector(&self, batch: &dyn EngineData) -> KernelResult<Vec<bool>> {
        match &self.data_skipping_filter {
            Some(filter) => filter.apply(batch),
            None => Ok(vec![true; batch.len()]),
        }
    }
}

/// Given an iterator of [`ActionsBatch`]s (batches of actions read from the log) and a predicate,
/// returns a tuple of:
/// 1. An iterator of [`ScanMetadata`]s (which includes the files to be scanned as
///    [`FilteredEngineData`] and transforms that must be applied to correctly read the data).
/// 2. An `Arc<ScanMetrics>` containing metrics collected during log replay.
///
/// Each row that is selected in the returned `engine_data` _must_ be processed to complete the
/// scan. Non-selected rows _must_ be ignored.
///
/// When `stats_options.skip_stats` is true, file statistics are not read from checkpoint parquet
/// files and columnar data skipping is disabled (no stats-based or partition-value-based
/// pruning), but row-level partition filtering still applies.
///
/// Note: The iterator of [`ActionsBatch`]s ('action_iter' parameter) must be sorted by the order of
/// the actions in the log from most recent to least recent.
pub(crate) fn scan_action_iter(
    engine: &dyn Engine,
    action_iter: impl Iterator<Item = KernelResult<ActionsBatch>>,
    state_info: Arc<StateInfo>,
    checkpoint_info: CheckpointReadInfo,
    stats_options: ScanStatsOptions,
    partition_values_options: ScanPartitionValuesOptions,
) -> KernelResult<(
    impl Iterator<Item = KernelResult<ScanMetadata>>,
    Arc<ScanMetrics>,
)> {
    let mut processor = ScanLogReplayProcessor::new(
        engine,
        state_info,
        checkpoint_info,
        stats_options,
        partition_values_options,
    )?;
    let metrics = processor.metrics.clone();
    let action_iter = action_iter
        .map(move |batch| processor.process_actions_batch_sequential(batch?))
        .filter_ok(HasSelectionVector::has_selected_rows);
    Ok((action_iter, metrics))
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use rstest::rstest;
    use url::Url;

    use super::{
        get_add_transform_expr, scan_action_iter, InternalScanState, ScanLogReplayProcessor,
        ScanPartitionValuesOptions, ScanStatsOptions, SerializableScanState,
    };
    use crate::engine::sync::SyncEngine;
    use crate::expressions::{
        col, column_name, lit, null_lit, BinaryExpressionOp, Expression, OpaquePredicateOp,
        Predicate, Scalar, ScalarExpressionEvaluator, UnaryExpressionOp,
    };
    use crate::kernel_predicates::{
        DirectDataSkippingPredicateEvaluator, DirectPredicateEvaluator,
        IndirectDataSkippingPredicateEvaluator,
    };
    use crate::log_replay::ActionsBatch;
    use crate::log_segment::CheckpointReadInfo;
    use crate::metrics::{MetricId, ScanType};
    use crate::scan::state::ScanFile;
    use crate::scan::state_info::tests::{
        assert_transform_spec, get_simple_state_info, get_state_info, get_state_info_with_stats,
        RowTrackingState, ROW_TRACKING_FEATURES,
    };
    use crate::scan::state_info::StateInfo;
    use crate::scan::test_utils::{
        add_batch_for_row_tracking, add_batch_simple, add_batch_with_partition_col,
        add_batch_with_remove, add_batch_with_remove_and_partition, run_with_validate_callback,
    };
    use crate::scan::{PhysicalPredicate, StatsOptions, COMMIT_READ_SCHEMA};
    use crate::schema::{schema_ref, DataType, MetadataColumnSpec, SchemaRef};
    use crate::table_features::ColumnMappingMode;
    use crate::unit_test_utils::assert_result_error_with_message;
    use crate::{
        EngineData, Expression as Expr, ExpressionEvaluator, ExpressionRef, KernelError,
        KernelResult,
    };

    /// Test evaluator that fails once before delegating, exposing both timed transform attempts.
    struct RetryOnceEvaluator {
        inner: Arc<dyn ExpressionEvaluator>,
        calls: Arc<AtomicUsize>,
        delay: Duration,
    }

    impl ExpressionEvaluator for RetryOnceEvaluator {
        /// Delays each attempt for deterministic timing, then triggers exactly one retry.
        fn evaluate(&self, batch: &dyn EngineData) -> KernelResult<Box<dyn EngineData>> {
            std::thread::sleep(self.delay);
            if self.calls.fetch_add(1, Ordering::Relaxed) == 0 {
                Err(KernelError::ParseError(
                    "retry".to_string(),
                    DataType::STRING,
                ))
            } else {
                self.inner.evaluate(batch)
            }
        }
    }

    fn test_checkpoint_info() -> CheckpointReadInfo {
        CheckpointReadInfo::without_stats_parsed()
    }

    /// A minimal opaque predicate op for testing serialization behavior
    #[derive(Debug, PartialEq)]
    struct OpaqueTestOp(String);

    impl OpaquePredicateOp for OpaqueTestOp {
        fn name(&self) -> &str {
            &self.0
        }

        fn eval_pred_scalar(
            &self,
            _eval_expr: &ScalarExpressionEvaluator<'_>,
            _evaluator: &DirectPredicateEvaluator<'_>,
            _exprs: &[Expr],
            _inverted: bool,
        ) -> KernelResult<Option<bool>> {
            unimplemented!()
        }

        fn eval_as_data_skipping_predicate(
            &self,
            _predicate_evaluator: &DirectDataSkippingPredicateEvaluator<'_>,
            _exprs: &[Expr],
            _inverted: bool,
        ) -> Option<bool> {
            unimplemented!()
        }

        fn as_data_skipping_predicate(
            &self,
            _predicate_evaluator: &IndirectDataSkippingPredicateEvaluator<'_>,
            _exprs: &[Expr],
            _inverted: bool,
        ) -> Option<Predicate> {
            unimplemented!()
        }
    }

    // dv-info is more complex to validate, we validate that works in the test for visit_scan_files
    // in state.rs
    fn validate_simple(_: &mut (), scan_file: ScanFile) {
        assert_eq!(
            scan_file.path,
            "part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet"
        );
        assert_eq!(scan_file.size, 635);
        assert!(scan_file.stats.is_some());
        assert_eq!(scan_file.stats.as_ref().unwrap().num_records, 10);
        assert_eq!(
            scan_file.partition_values.get("date"),
            Some(&"2017-12-10".to_string())
        );
        assert_eq!(scan_file.partition_values.get("non-existent"), None);
    }

    #[test]
    fn test_scan_action_iter() {
        run_with_validate_callback(
            vec![add_batch_simple(COMMIT_READ_SCHEMA.clone())],
            None, // not testing schema
            None, // not testing transform
            &[true, false],
            (),
            validate_simple,
        );
    }

    #[test]
    fn test_scan_action_iter_with_remove() {
        run_with_validate_callback(
            vec![add_batch_with_remove(COMMIT_READ_SCHEMA.clone())],
            None, // not testing schema
            None, // not testing transform
            &[false, false, true, false],
            (),
            validate_simple,
        );
    }

    #[test]
    fn transform_metrics_include_failed_attempt_and_retry() {
        // Build a normal replay processor so only the transform's retry behavior is replaced.
        let engine = SyncEngine::new();
        let schema = schema_ref! { nullable "value": INTEGER };
        let mut processor = ScanLogReplayProcessor::new(
            &engine,
            Arc::new(get_simple_state_info(schema, vec![]).unwrap()),
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let delay = Duration::from_millis(5);
        processor.commit_transform = Arc::new(RetryOnceEvaluator {
            inner: processor.commit_transform.clone(),
            calls: calls.clone(),
            delay,
        });

        // Process one batch; the injected parse error must trigger one successful retry.
        let batch = ActionsBatch::new(add_batch_simple(COMMIT_READ_SCHEMA.clone()), true);
        processor.process_actions_batch_sequential(batch).unwrap();

        // Confirm both attempts ran and their deterministic delays were accumulated in the event.
        assert_eq!(calls.load(Ordering::Relaxed), 2);
        let event = processor.get_metrics().to_event(
            MetricId::new(),
            false,
            None,
            ScanType::Full,
            Duration::ZERO,
        );
        assert!(event.action_transform_time >= delay * 2);
    }

    #[test]
    fn test_no_transforms() {
        let batch = vec![add_batch_simple(COMMIT_READ_SCHEMA.clone())];
        let logical_schema = schema_ref! {};
        let state_info = Arc::new(StateInfo {
            logical_schema: logical_schema.clone(),
            physical_schema: logical_schema.clone(),
            physical_predicate: PhysicalPredicate::None,
            transform_spec: None,
            column_mapping_mode: ColumnMappingMode::None,
            physical_stats_schemas: None,
            physical_partition_schema: None,
            eligible_physical_stats_columns: HashSet::new(),
            requested_physical_stats_columns: Vec::new(),
            is_catalog_managed: false,
            skip_row_transforms: false,
            dv_normalization_root: None,
        });
        let (iter, _metrics) = scan_action_iter(
            &SyncEngine::new(),
            batch
                .into_iter()
                .map(|batch| Ok(ActionsBatch::new(batch as _, true))),
            state_info,
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();
        for res in iter {
            let scan_metadata = res.unwrap();
            assert!(
                scan_metadata.scan_file_transforms.is_empty(),
                "Should have no transforms"
            );
        }
    }

    #[test]
    fn test_simple_transform() {
        let schema: SchemaRef = schema_ref! {
            nullable "value": INTEGER,
            nullable "date": DATE,
        };
        let partition_cols = vec!["date".to_string()];
        let state_info = get_simple_state_info(schema, partition_cols).unwrap();
        let batch = vec![add_batch_with_partition_col(COMMIT_READ_SCHEMA.clone())];
        let (iter, _metrics) = scan_action_iter(
            &SyncEngine::new(),
            batch
                .into_iter()
                .map(|batch| Ok(ActionsBatch::new(batch as _, true))),
            Arc::new(state_info),
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();

        fn validate_patch(patch_expr: Option<&ExpressionRef>, expected_date_offset: i32) {
            assert!(patch_expr.is_some());
            let Expr::StructPatch(patch) = patch_expr.unwrap().as_ref() else {
                panic!("Expression should always be a StructPatch expr");
            };

            // With sparse patches, we expect only one insertion for the partition column.
            assert!(patch.prepended_fields.is_empty());
            assert!(patch.appended_fields.is_empty());
            let mut field_patches = patch.field_patches.iter();
            let (field_name, field_patch) = field_patches.next().unwrap();
            assert_eq!(field_name, "value");
            assert!(field_patch.keep_input);
            let [expr] = &field_patch.insertions[..] else {
                panic!("Expected a single insertion");
            };
            let Expr::Literal(Scalar::Date(date_offset)) = expr.as_ref() else {
                panic!("Expected a literal date");
            };
            assert_eq!(*date_offset, expected_date_offset);
            assert!(field_patches.next().is_none());
        }

        for res in iter {
            let scan_metadata = res.unwrap();
            let transforms = scan_metadata.scan_file_transforms;
            // in this case we have a metadata action first and protocol 3rd, so we expect 4 items,
            // the first and 3rd being a `None`
            assert_eq!(transforms.len(), 4, "Should have 4 transforms");
            assert!(transforms[0].is_none(), "transform at [0] should be None");
            assert!(transforms[2].is_none(), "transform at [2] should be None");
            validate_patch(transforms[1].as_ref(), 17511);
            validate_patch(transforms[3].as_ref(), 17510);
        }
    }

    #[test]
    fn test_row_id_patch() {
        let schema: SchemaRef = schema_ref! { nullable "value": INTEGER };
        let state_info = get_state_info(
            schema.clone(),
            vec![],
            None,
            ROW_TRACKING_FEATURES,
            [
                ("delta.enableRowTracking", "true"),
                (
                    "delta.rowTracking.materializedRowIdColumnName",
                    "row_id_col",
                ),
                (
                    "delta.rowTracking.materializedRowCommitVersionColumnName",
                    "row_commit_version_col",
                ),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            vec![("row_id", MetadataColumnSpec::RowId)],
        )
        .unwrap();

        let transform_spec = state_info.transform_spec.as_ref().unwrap();
        assert_transform_spec(
            transform_spec,
            false,
            "row_id_col",
            "row_indexes_for_row_id_0",
        );

        let batch = vec![add_batch_for_row_tracking(COMMIT_READ_SCHEMA.clone())];
        let (iter, _metrics) = scan_action_iter(
            &SyncEngine::new(),
            batch
                .into_iter()
                .map(|batch| Ok(ActionsBatch::new(batch as _, true))),
            Arc::new(state_info),
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();

        for res in iter {
            let scan_metadata = res.unwrap();
            let transforms = scan_metadata.scan_file_transforms;
            assert_eq!(transforms.len(), 1, "Should have 1 transform");
            if let Some(Expr::StructPatch(patch)) = transforms[0].as_ref().map(Arc::as_ref) {
                assert!(patch.input_path.is_none());
                let row_id_patch = patch
                    .field_patches
                    .get("row_id_col")
                    .expect("Should have row_id_col patch");
                assert!(!row_id_patch.keep_input);
                assert_eq!(row_id_patch.insertions.len(), 1);
                let expr = &row_id_patch.insertions[0];
                let expected_expr = Arc::new(Expr::coalesce([
                    col!("row_id_col"),
                    Expr::binary(
                        BinaryExpressionOp::Plus,
                        lit(42i64),
                        col!("row_indexes_for_row_id_0"),
                    ),
                ]));
                assert_eq!(expr, &expected_expr);
            } else {
                panic!("Should have been a StructPatch expression");
            }
        }
    }

    #[rstest]
    #[case::supported_not_enabled(RowTrackingState::SupportedNotEnabled)]
    #[case::enabled(RowTrackingState::Enabled)]
    #[case::suspended(RowTrackingState::Suspended)]
    fn test_row_commit_version_patch(
        #[case] row_tracking_state: RowTrackingState,
    ) -> KernelResult<()> {
        let schema: SchemaRef = schema_ref! { nullable "value": INTEGER };
        let state_info = get_state_info(
            schema,
            vec![],
            None,
            row_tracking_state.features(),
            row_tracking_state.properties(),
            vec![("row_commit_version", MetadataColumnSpec::RowCommitVersion)],
        );
        if row_tracking_state != RowTrackingState::Enabled {
            assert_result_error_with_message(
                state_info,
                "Row commit versions are not enabled on this table",
            );
            return Ok(());
        }

        let batch = add_batch_for_row_tracking(COMMIT_READ_SCHEMA.clone());
        let (iter, _metrics) = scan_action_iter(
            &SyncEngine::new(),
            [Ok(ActionsBatch::new(batch, true))].into_iter(),
            Arc::new(state_info?),
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )?;

        let mut iter = iter.peekable();
        assert!(iter.peek().is_some(), "scan metadata must not be empty");
        for scan_metadata in iter {
            let transforms = scan_metadata?.scan_file_transforms;
            assert_eq!(transforms.len(), 1);
            let Some(Expr::StructPatch(patch)) = transforms[0].as_ref().map(Arc::as_ref) else {
                panic!("Expected a StructPatch expression");
            };
            let row_commit_version_patch = patch
                .field_patches
                .get("row_commit_version_col")
                .expect("Should have row_commit_version_col patch");
            assert_eq!(
                row_commit_version_patch.insertions,
                [Arc::new(Expr::coalesce([
                    col!("row_commit_version_col"),
                    lit(5i64),
                ]))]
            );
        }
        Ok(())
    }

    #[test]
    fn test_serialization_basic_state_and_dv_dropping() {
        // Test basic StateInfo preservation and FileActionKey preservation
        let engine = SyncEngine::new();
        let schema: SchemaRef = schema_ref! {
            nullable "id": INTEGER,
            nullable "value": STRING,
        };
        let checkpoint_info = test_checkpoint_info();
        let mut processor = ScanLogReplayProcessor::new(
            &engine,
            Arc::new(get_simple_state_info(schema.clone(), vec![]).unwrap()),
            checkpoint_info.clone(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();

        // Add file keys with and without DV info
        let key1 = crate::log_replay::FileActionKey::new("file1.parquet", None);
        let key2 = crate::log_replay::FileActionKey::new("file2.parquet", Some("dv-1".to_string()));
        let key3 = crate::log_replay::FileActionKey::new("file3.parquet", Some("dv-2".to_string()));
        processor.seen_file_keys.insert(key1.clone());
        processor.seen_file_keys.insert(key2.clone());
        processor.seen_file_keys.insert(key3.clone());

        let state_info = processor.state_info.clone();
        let deserialized = ScanLogReplayProcessor::from_serializable_state(
            &engine,
            processor.into_serializable_state().unwrap(),
        )
        .unwrap();

        // Verify StateInfo fields preserved
        assert_eq!(
            deserialized.state_info.logical_schema,
            state_info.logical_schema
        );
        assert_eq!(
            deserialized.state_info.physical_schema,
            state_info.physical_schema
        );
        assert_eq!(
            deserialized.state_info.column_mapping_mode,
            state_info.column_mapping_mode
        );

        // Verify all file keys are preserved with their DV info
        assert_eq!(deserialized.seen_file_keys.len(), 3);
        assert!(deserialized.seen_file_keys.contains(&key1));
        assert!(deserialized.seen_file_keys.contains(&key2));
        assert!(deserialized.seen_file_keys.contains(&key3));
    }

    #[test]
    fn test_serialization_preserves_stats_read_and_output_schemas() {
        let engine = SyncEngine::new();
        let schema = schema_ref! {
            nullable "id": INTEGER,
            nullable "name": STRING,
        };
        let predicate = Arc::new(Predicate::gt(col!("id"), lit(0i32)));
        let state_info = Arc::new(
            get_state_info_with_stats(
                schema,
                vec![],
                Some(predicate),
                &[],
                HashMap::new(),
                vec![],
                StatsOptions::struct_columns(vec![column_name!("name")]),
            )
            .unwrap(),
        );
        let original_read = state_info.physical_stats_read_schema().cloned().unwrap();
        let original_output = state_info.physical_stats_output_schema().cloned().unwrap();
        assert_ne!(original_read, original_output);

        let processor = ScanLogReplayProcessor::new(
            &engine,
            state_info,
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();
        let deserialized = ScanLogReplayProcessor::from_serializable_state(
            &engine,
            processor.into_serializable_state().unwrap(),
        )
        .unwrap();

        assert_eq!(
            deserialized.state_info.physical_stats_read_schema(),
            Some(&original_read)
        );
        assert_eq!(
            deserialized.state_info.physical_stats_output_schema(),
            Some(&original_output)
        );
    }

    #[test]
    fn test_serialization_with_predicate() {
        // Test that PhysicalPredicate and predicate schema are preserved
        let engine = SyncEngine::new();
        let schema: SchemaRef = schema_ref! {
            nullable "id": INTEGER,
            nullable "value": STRING,
        };
        let predicate = Arc::new(crate::expressions::Predicate::eq(col!("id"), lit(10i32)));
        let state_info = Arc::new(
            get_state_info(
                schema.clone(),
                vec![],
                Some(predicate.clone()),
                &[], // no table features
                HashMap::new(),
                vec![],
            )
            .unwrap(),
        );
        let original_pred_schema = match &state_info.physical_predicate {
            PhysicalPredicate::Some(_, s) => s.clone(),
            _ => panic!("Expected predicate"),
        };
        let checkpoint_info = test_checkpoint_info();
        let processor = ScanLogReplayProcessor::new(
            &engine,
            state_info.clone(),
            checkpoint_info.clone(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();
        let deserialized = ScanLogReplayProcessor::from_serializable_state(
            &engine,
            processor.into_serializable_state().unwrap(),
        )
        .unwrap();

        match &deserialized.state_info.physical_predicate {
            PhysicalPredicate::Some(pred, pred_schema) => {
                assert_eq!(pred.as_ref(), predicate.as_ref());
                assert_eq!(pred_schema.as_ref(), original_pred_schema.as_ref());
            }
            _ => panic!("Expected PhysicalPredicate::Some"),
        }
    }

    #[test]
    fn test_serialization_with_transforms() {
        // Test transform_spec preservation (partition columns + row tracking)
        let engine = SyncEngine::new();
        let schema: SchemaRef = schema_ref! {
            nullable "value": INTEGER,
            nullable "date": DATE,
        };
        let state_info = Arc::new(
            get_state_info(
                schema,
                vec!["date".to_string()],
                None,
                ROW_TRACKING_FEATURES,
                [
                    ("delta.enableRowTracking", "true"),
                    (
                        "delta.rowTracking.materializedRowIdColumnName",
                        "row_id_col",
                    ),
                    (
                        "delta.rowTracking.materializedRowCommitVersionColumnName",
                        "row_commit_version_col",
                    ),
                ]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
                vec![("row_id", MetadataColumnSpec::RowId)],
            )
            .unwrap(),
        );
        let original_transform = state_info.transform_spec.clone();
        assert!(original_transform.is_some());
        let checkpoint_info = test_checkpoint_info();
        let processor = ScanLogReplayProcessor::new(
            &engine,
            state_info.clone(),
            checkpoint_info.clone(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();
        let deserialized = ScanLogReplayProcessor::from_serializable_state(
            &engine,
            processor.into_serializable_state().unwrap(),
        )
        .unwrap();
        assert_eq!(deserialized.state_info.transform_spec, original_transform);
    }

    #[test]
    fn test_serialization_column_mapping_modes() {
        // Test that different ColumnMappingMode values are preserved
        let engine = SyncEngine::new();
        for mode in [
            ColumnMappingMode::None,
            ColumnMappingMode::Id,
            ColumnMappingMode::Name,
        ] {
            let schema: SchemaRef = schema_ref! { nullable "id": INTEGER };
            let state_info = Arc::new(StateInfo {
                logical_schema: schema.clone(),
                physical_schema: schema,
                physical_predicate: PhysicalPredicate::None,
                transform_spec: None,
                column_mapping_mode: mode,
                physical_stats_schemas: None,
                physical_partition_schema: None,
                eligible_physical_stats_columns: HashSet::new(),
                requested_physical_stats_columns: Vec::new(),
                is_catalog_managed: false,
                skip_row_transforms: false,
                dv_normalization_root: None,
            });
            let checkpoint_info = test_checkpoint_info();
            let processor = ScanLogReplayProcessor::new(
                &engine,
                state_info,
                checkpoint_info.clone(),
                ScanStatsOptions::default(),
                ScanPartitionValuesOptions::default(),
            )
            .unwrap();
            let deserialized = ScanLogReplayProcessor::from_serializable_state(
                &engine,
                processor.into_serializable_state().unwrap(),
            )
            .unwrap();
            assert_eq!(deserialized.state_info.column_mapping_mode, mode);
        }
    }

    #[test]
    fn test_serialization_edge_cases() {
        // Test edge cases: empty seen_file_keys, no predicate, no transform_spec
        let engine = SyncEngine::new();
        let checkpoint_info = test_checkpoint_info();
        let schema: SchemaRef = schema_ref! { nullable "id": INTEGER };
        let state_info = Arc::new(StateInfo {
            logical_schema: schema.clone(),
            physical_schema: schema,
            physical_predicate: PhysicalPredicate::None,
            transform_spec: None,
            column_mapping_mode: ColumnMappingMode::None,
            physical_stats_schemas: None,
            physical_partition_schema: None,
            eligible_physical_stats_columns: HashSet::new(),
            requested_physical_stats_columns: Vec::new(),
            is_catalog_managed: false,
            skip_row_transforms: false,
            dv_normalization_root: None,
        });
        let processor = ScanLogReplayProcessor::new(
            &engine,
            state_info,
            checkpoint_info.clone(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();
        let serialized = processor.into_serializable_state().unwrap();
        assert!(serialized.predicate.is_none());
        let deserialized =
            ScanLogReplayProcessor::from_serializable_state(&engine, serialized).unwrap();
        assert_eq!(deserialized.seen_file_keys.len(), 0);
        assert!(deserialized.state_info.transform_spec.is_none());
    }

    #[test]
    fn test_serialization_round_trips_is_catalog_managed() {
        let engine = SyncEngine::new();
        let schema: SchemaRef = schema_ref! { nullable "id": INTEGER };
        let state_info = Arc::new(StateInfo {
            logical_schema: schema.clone(),
            physical_schema: schema,
            physical_predicate: PhysicalPredicate::None,
            transform_spec: None,
            column_mapping_mode: ColumnMappingMode::None,
            physical_stats_schemas: None,
            physical_partition_schema: None,
            eligible_physical_stats_columns: HashSet::new(),
            requested_physical_stats_columns: Vec::new(),
            is_catalog_managed: true,
            skip_row_transforms: false,
            dv_normalization_root: None,
        });
        let processor = ScanLogReplayProcessor::new(
            &engine,
            state_info,
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();
        let serialized = processor.into_serializable_state().unwrap();
        let deserialized =
            ScanLogReplayProcessor::from_serializable_state(&engine, serialized).unwrap();
        assert!(deserialized.is_catalog_managed());
    }

    #[rstest]
    fn test_serialization_round_trips_skip_row_transforms(#[values(false, true)] skip: bool) {
        let engine = SyncEngine::new();
        let schema: SchemaRef = schema_ref! {
            nullable "id": INTEGER,
        };
        let state_info = Arc::new(StateInfo {
            logical_schema: schema.clone(),
            physical_schema: schema.clone(),
            physical_predicate: PhysicalPredicate::None,
            transform_spec: None,
            column_mapping_mode: ColumnMappingMode::None,
            physical_stats_schemas: None,
            physical_partition_schema: None,
            eligible_physical_stats_columns: HashSet::new(),
            requested_physical_stats_columns: Vec::new(),
            is_catalog_managed: false,
            skip_row_transforms: skip,
            dv_normalization_root: None,
        });
        let processor = ScanLogReplayProcessor::new(
            &engine,
            state_info,
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();
        let deserialized = ScanLogReplayProcessor::from_serializable_state(
            &engine,
            processor.into_serializable_state().unwrap(),
        )
        .unwrap();
        assert_eq!(deserialized.state_info.skip_row_transforms, skip);
    }

    fn processor_with_dv_normalization_root(
        engine: &SyncEngine,
        dv_normalization_root: Option<Url>,
    ) -> ScanLogReplayProcessor {
        let schema: SchemaRef = schema_ref! { nullable "id": INTEGER };
        let state_info = Arc::new(StateInfo {
            logical_schema: schema.clone(),
            physical_schema: schema,
            physical_predicate: PhysicalPredicate::None,
            transform_spec: None,
            column_mapping_mode: ColumnMappingMode::None,
            physical_stats_schemas: None,
            physical_partition_schema: None,
            eligible_physical_stats_columns: HashSet::new(),
            requested_physical_stats_columns: Vec::new(),
            is_catalog_managed: false,
            skip_row_transforms: false,
            dv_normalization_root,
        });
        ScanLogReplayProcessor::new(
            engine,
            state_info,
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap()
    }

    #[rstest]
    fn test_serialization_round_trips_dv_normalization_root(
        #[values(None, Some("s3://bucket/table/"))] root: Option<&str>,
    ) {
        let engine = SyncEngine::new();
        let root = root.map(|r| Url::parse(r).unwrap());
        let processor = processor_with_dv_normalization_root(&engine, root.clone());
        let deserialized = ScanLogReplayProcessor::from_serializable_state(
            &engine,
            processor.into_serializable_state().unwrap(),
        )
        .unwrap();
        assert_eq!(deserialized.state_info.dv_normalization_root, root);
    }

    #[test]
    fn test_deserialize_blob_without_dv_normalization_root_defaults_to_none() {
        let engine = SyncEngine::new();
        let root = Url::parse("s3://bucket/table/").unwrap();
        let mut state = processor_with_dv_normalization_root(&engine, Some(root))
            .into_serializable_state()
            .unwrap();
        let mut blob: serde_json::Value =
            serde_json::from_slice(&state.internal_state_blob).unwrap();
        assert!(blob
            .as_object_mut()
            .unwrap()
            .remove("dv_normalization_root")
            .is_some());
        state.internal_state_blob = serde_json::to_vec(&blob).unwrap();
        let deserialized = ScanLogReplayProcessor::from_serializable_state(&engine, state).unwrap();
        assert_eq!(deserialized.state_info.dv_normalization_root, None);
    }

    #[test]
    fn test_serialization_invalid_json() {
        // Test that invalid JSON blobs are properly rejected
        let engine = SyncEngine::new();
        let checkpoint_info = test_checkpoint_info();
        let invalid_state = SerializableScanState {
            predicate: None,
            internal_state_blob: vec![0, 1, 2, 3, 255], // Invalid JSON
            seen_file_keys: HashSet::new(),
            checkpoint_info,
        };
        assert!(ScanLogReplayProcessor::from_serializable_state(&engine, invalid_state).is_err());
    }

    #[test]
    fn test_serialization_missing_predicate_schema() {
        // Test that missing predicate_schema when predicate exists is detected
        let engine = SyncEngine::new();
        let schema: SchemaRef = schema_ref! { nullable "id": INTEGER };
        let checkpoint_info = test_checkpoint_info();
        let invalid_internal_state = InternalScanState {
            logical_schema: schema.clone(),
            physical_schema: schema,
            predicate_schema: None, // Missing!
            transform_spec: None,
            column_mapping_mode: ColumnMappingMode::None,
            physical_stats_schemas: None,
            stats_options: ScanStatsOptions::default(),
            partition_values_options: ScanPartitionValuesOptions::default(),
            physical_partition_schema: None,
            eligible_physical_stats_columns: HashSet::new(),
            requested_physical_stats_columns: Vec::new(),
            is_catalog_managed: false,
            skip_row_transforms: false,
            dv_normalization_root: None,
        };
        let predicate = Arc::new(crate::expressions::column_pred!("id"));
        let invalid_blob = serde_json::to_vec(&invalid_internal_state).unwrap();
        let invalid_state = SerializableScanState {
            predicate: Some(predicate), // Predicate exists but schema is None
            internal_state_blob: invalid_blob,
            seen_file_keys: HashSet::new(),
            checkpoint_info,
        };
        let result = ScanLogReplayProcessor::from_serializable_state(&engine, invalid_state);
        assert!(result.is_err());
        if let Err(e) = result {
            assert!(e.to_string().contains("predicate schema"));
        }
    }

    #[test]
    fn deserialize_internal_state_with_extry_fields_fails() {
        let schema: SchemaRef = schema_ref! { nullable "id": INTEGER };
        let invalid_internal_state = InternalScanState {
            logical_schema: schema.clone(),
            physical_schema: schema,
            predicate_schema: None,
            transform_spec: None,
            column_mapping_mode: ColumnMappingMode::None,
            physical_stats_schemas: None,
            stats_options: ScanStatsOptions::default(),
            partition_values_options: ScanPartitionValuesOptions::default(),
            physical_partition_schema: None,
            eligible_physical_stats_columns: HashSet::new(),
            requested_physical_stats_columns: Vec::new(),
            is_catalog_managed: false,
            skip_row_transforms: false,
            dv_normalization_root: None,
        };
        let blob = serde_json::to_string(&invalid_internal_state).unwrap();
        let mut obj: serde_json::Value = serde_json::from_str(&blob).unwrap();
        obj["new_field"] = serde_json::json!("my_new_value");
        let invalid_blob = obj.to_string();

        let res: KernelResult<InternalScanState, _> = serde_json::from_str(&invalid_blob);
        assert_result_error_with_message(res, "unknown field");
    }

    #[test]
    fn deserialize_serializable_scan_state_with_extra_fields_fails() {
        let state = SerializableScanState {
            predicate: None,
            internal_state_blob: vec![],
            seen_file_keys: HashSet::new(),
            checkpoint_info: test_checkpoint_info(),
        };
        let blob = serde_json::to_string(&state).unwrap();
        let mut obj: serde_json::Value = serde_json::from_str(&blob).unwrap();
        obj["new_field"] = serde_json::json!("my_new_value");
        let invalid_blob = obj.to_string();

        let res: KernelResult<SerializableScanState, _> = serde_json::from_str(&invalid_blob);
        assert_result_error_with_message(res, "unknown field");
    }

    #[test]
    fn serializng_scan_state_with_opaque_predicate_fails() {
        // Opaque predicates cannot be serialized. Connectors requiring opaque expression support
        // must serialize the predicate separately using their own mechanism.

        // Create an opaque predicate
        let opaque_predicate = Arc::new(Predicate::opaque(OpaqueTestOp("test_op".to_string()), []));

        // Directly create a SerializableScanState with the opaque predicate
        let state = SerializableScanState {
            predicate: Some(opaque_predicate),
            internal_state_blob: vec![],
            seen_file_keys: HashSet::new(),
            checkpoint_info: test_checkpoint_info(),
        };

        // Serialization should fail because opaque expressions cannot be serialized
        let result = serde_json::to_string(&state);
        assert_result_error_with_message(result, "Cannot serialize an Opaque Predicate");
    }

    #[test]
    fn test_scan_action_iter_with_skip_stats() {
        let batch = vec![add_batch_simple(COMMIT_READ_SCHEMA.clone())];
        let schema: SchemaRef = schema_ref! {
            nullable "value": INTEGER,
            nullable "date": DATE,
        };
        let state_info = get_simple_state_info(schema, vec!["date".to_string()]).unwrap();

        let (iter, _metrics) = scan_action_iter(
            &SyncEngine::new(),
            batch
                .into_iter()
                .map(|batch| Ok(ActionsBatch::new(batch as _, true))),
            Arc::new(state_info),
            test_checkpoint_info(),
            ScanStatsOptions {
                skip_stats: true,
                ..Default::default()
            },
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();

        let mut found_add = false;
        for res in iter {
            let scan_metadata = res.unwrap();
            scan_metadata
                .visit_scan_files((), |_: &mut (), scan_file: ScanFile| {
                    assert!(scan_file.stats.is_none());
                })
                .unwrap();
            found_add = true;
        }
        assert!(found_add);
    }

    /// Verify that Remove actions are not pruned by data skipping. The transform reads from
    /// `add.*` columns, so Remove rows produce null `stats_parsed` and `partitionValues_parsed`
    /// (Remove actions have their own `remove.partitionValues` and `remove.stats`, but those
    /// are not read by the transform). If a Remove were pruned, it would not be recorded in
    /// `seen_file_keys`, and a subsequent Add for the same path could incorrectly survive
    /// deduplication.
    ///
    /// Stats-based skipping is safe because null stats evaluate to NULL via ISNULL guards in
    /// the predicate construction. Partition-based skipping requires the `is_add` guard
    /// (`OR(NOT is_add, pred)`) because `eval_sql_where` adds IS NOT NULL guards that would
    /// otherwise turn null partition values into `false`, filtering the Remove.
    #[rstest]
    #[case::stats_only(
        schema_ref! { nullable "value": INTEGER },
        vec![],
        Arc::new(col!("value").gt(lit(5i32))),
        false, // use batch without partition column
    )]
    #[case::partition_predicate(
        schema_ref! { nullable "value": INTEGER, nullable "date": DATE },
        vec!["date".to_string()],
        Arc::new(col!("date").eq(lit(Scalar::Date(17_510)))),
        true, // use batch with partition column
    )]
    #[case::mixed_stats_and_partition(
        schema_ref! { nullable "value": INTEGER, nullable "date": DATE },
        vec!["date".to_string()],
        Arc::new(Predicate::and(
            col!("value").gt(lit(5i32)),
            col!("date").eq(lit(Scalar::Date(17_510))),
        )),
        true, // use batch with partition column
    )]
    fn data_skipping_does_not_prune_remove_actions(
        #[case] schema: SchemaRef,
        #[case] partition_columns: Vec<String>,
        #[case] predicate: Arc<Predicate>,
        #[case] with_partition: bool,
    ) {
        let state_info = get_state_info(
            schema,
            partition_columns,
            Some(predicate),
            &[],
            HashMap::new(),
            vec![],
        )
        .unwrap();

        // Batch: [Remove c001, Add c001, Add c000, Metadata]
        // The Remove must not be pruned -- it records c001 as seen, suppressing the c001 Add.
        let batch = if with_partition {
            vec![add_batch_with_remove_and_partition(
                COMMIT_READ_SCHEMA.clone(),
            )]
        } else {
            vec![add_batch_with_remove(COMMIT_READ_SCHEMA.clone())]
        };
        let (iter, _metrics) = scan_action_iter(
            &SyncEngine::new(),
            batch
                .into_iter()
                .map(|batch| Ok(ActionsBatch::new(batch as _, true))),
            Arc::new(state_info),
            test_checkpoint_info(),
            ScanStatsOptions::default(),
            ScanPartitionValuesOptions::default(),
        )
        .unwrap();

        let mut add_paths: Vec<String> = Vec::new();
        for res in iter {
            let scan_metadata = res.unwrap();
            let paths = scan_metadata
                .visit_scan_files(
                    Vec::new(),
                    |paths: &mut Vec<String>, scan_file: ScanFile| {
                        paths.push(scan_file.path.to_string());
                    },
                )
                .unwrap();
            add_paths.extend(paths);
        }

        // Only c000 should survive: Remove suppressed c001 via deduplication
        assert_eq!(add_paths.len(), 1, "Expected exactly one add to survive");
        assert!(
            add_paths[0].contains("c000"),
            "Expected c000 add to survive, got: {}",
            add_paths[0]
        );
    }

    /// Walk `expr` and count `Unary { op: ToJson, .. }` occurrences anywhere in the tree.
    // Closures wrap `count_to_json` to dereference `&Arc<Expression>` -> `&Expression`;
    // clippy doesn't see the auto-deref so flags them as redundant.
    #[allow(clippy::redundant_closure)]
    fn count_to_json(expr: &Expression) -> usize {
        match expr {
            Expression::Unary(u) => {
                let here = (u.op == UnaryExpressionOp::ToJson) as usize;
                here + count_to_json(&u.expr)
            }
            Expression::Binary(b) => count_to_json(&b.left) + count_to_json(&b.right),
            Expression::Variadic(v) => v.exprs.iter().map(|e| count_to_json(e)).sum(),
            Expression::Struct(fields, nullability) => {
                fields.iter().map(|e| count_to_json(e)).sum::<usize>()
                    + nullability.as_ref().map_or(0, |e| count_to_json(e))
            }
            Expression::StructPatch(p) => {
                p.prepended_fields
                    .iter()
                    .chain(p.appended_fields.iter())
                    .map(|e| count_to_json(e))
                    .sum::<usize>()
                    + p.field_patches
                        .values()
                        .flat_map(|fp| fp.insertions.iter())
                        .map(|e| count_to_json(e))
                        .sum::<usize>()
            }
            Expression::ParseJson(p) => count_to_json(&p.json_expr),
            Expression::MapToStruct(m) => count_to_json(&m.map_expr),
            Expression::Cast(c) => count_to_json(&c.expr),
            Expression::Predicate(_)
            | Expression::Literal(_)
            | Expression::Column(_)
            | Expression::Opaque(_)
            | Expression::Unknown(_) => 0,
        }
    }

    /// `synthesize_json=false` removes every `ToJson` node from the add transform;
    /// `synthesize_json=true` leaves exactly one inside the COALESCE branch.
    #[test]
    fn add_transform_omits_to_json_when_synthesis_skipped() {
        let stats_schema: SchemaRef = schema_ref! {
            nullable "id": LONG,
            nullable "value": STRING,
        };
        let partition_schema: Option<SchemaRef> = Some(schema_ref! {
            nullable "date": DATE,
        });

        // Synthesis enabled: COALESCE branch present -> exactly one ToJson.
        let with_synthesis = get_add_transform_expr(
            Some(stats_schema.clone()),
            true,  // has_stats_parsed
            false, // skip_stats
            true,  // synthesize_json
            partition_schema.clone(),
            false, // has_partition_values_parsed
        );
        assert_eq!(
            count_to_json(&with_synthesis),
            1,
            "expected exactly one ToJson(add.stats_parsed) in the COALESCE branch when synthesis is enabled"
        );

        // Synthesis disabled: no ToJson anywhere in the transform.
        let without_synthesis = get_add_transform_expr(
            Some(stats_schema),
            true,  // has_stats_parsed
            false, // skip_stats
            false, // synthesize_json
            partition_schema,
            false, // has_partition_values_parsed
        );
        assert_eq!(
            count_to_json(&without_synthesis),
            0,
            "expected no ToJson nodes anywhere in the transform when synthesis is skipped"
        );
        assert!(
            !without_synthesis
                .references()
                .contains(&column_name!("add.stats")),
            "structured-only checkpoint transform must not reference add.stats"
        );
        let Expression::Struct(fields, _) = without_synthesis.as_ref() else {
            panic!("add transform must produce a struct");
        };
        assert_eq!(
            fields[3].as_ref(),
            &null_lit(DataType::STRING),
            "structured-only checkpoint stats output must be a typed NULL"
        );
    }
}
