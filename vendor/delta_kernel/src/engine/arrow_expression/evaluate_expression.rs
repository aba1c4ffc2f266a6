//! Expression handling based on arrow-rs compute kernels.
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use chrono::Utc;
use itertools::Itertools;
use tracing::warn;

use super::timestamp_timezone::TimestampTimezone;
use crate::arrow::array::types::*;
use crate::arrow::array::{
    self as arrow_array, make_array, new_null_array, Array, ArrayBuilder, ArrayData, ArrayRef,
    AsArray, BooleanArray, Datum, ListArray, MapArray, MutableArrayData, NullBufferBuilder,
    RecordBatch, StringArray, StructArray,
};
use crate::arrow::buffer::{NullBuffer, OffsetBuffer};
use crate::arrow::compute::kernels::cast_utils::{string_to_datetime, Parser};
use crate::arrow::compute::kernels::cmp::{distinct, eq, gt, gt_eq, lt, lt_eq, neq, not_distinct};
use crate::arrow::compute::kernels::comparison::in_list_utf8;
use crate::arrow::compute::kernels::numeric::{add, div, mul, sub};
use crate::arrow::compute::{
    and_kleene, can_cast_types, cast, is_not_null, is_null, not, or_kleene,
};
use crate::arrow::datatypes::{
    DataType as ArrowDataType, Field as ArrowField, Fields as ArrowFields, IntervalUnit,
    Schema as ArrowSchema, TimeUnit,
};
use crate::arrow::error::ArrowError;
use crate::arrow::json::writer::{make_encoder, EncoderOptions};
use crate::arrow::json::StructMode;
use crate::delta_kernel_derive::internal_api;
use crate::engine::arrow_conversion::{TryFromKernel, TryIntoArrow, LIST_ARRAY_ROOT};
use crate::engine::arrow_expression::opaque::{
    ArrowOpaqueExpressionOpAdaptor, ArrowOpaquePredicateOpAdaptor,
};
use crate::engine::arrow_utils::{list_type_with_element, parse_json_impl, prim_array_cmp};
use crate::engine::ensure_data_types::{ensure_data_types, ValidationMode};
use crate::error::{KernelError, KernelResult};
use crate::expressions::{
    BinaryExpression, BinaryExpressionOp, BinaryPredicate, BinaryPredicateOp, Expression,
    ExpressionRef, ExpressionStructPatch, JunctionPredicate, JunctionPredicateOp, OpaqueExpression,
    OpaquePredicate, Predicate, Scalar, UnaryExpression, UnaryExpressionOp, UnaryPredicate,
    UnaryPredicateOp, VariadicExpression, VariadicExpressionOp,
};
use crate::schema::{DataType, PrimitiveType, StructField, StructType};

#[internal_api]
pub(crate) trait ProvidesColumnByName {
    fn schema_fields(&self) -> &ArrowFields;
    fn column_by_name(&self, name: &str) -> Option<&ArrayRef>;
}

impl ProvidesColumnByName for RecordBatch {
    fn schema_fields(&self) -> &ArrowFields {
        self.schema_ref().fields()
    }
    fn column_by_name(&self, name: &str) -> Option<&ArrayRef> {
        self.column_by_name(name)
    }
}

impl ProvidesColumnByName for StructArray {
    fn schema_fields(&self) -> &ArrowFields {
        self.fields()
    }
    fn column_by_name(&self, name: &str) -> Option<&ArrayRef> {
        self.column_by_name(name)
    }
}

// Given a RecordBatch or StructArray, recursively probe for a nested column path and return the
// corresponding column, or Err if the path is invalid. For example, given the following schema:
// ```text
// root: {
//   a: int32,
//   b: struct {
//     c: int32,
//     d: struct {
//       e: int32,
//       f: int64,
//     },
//   },
// }
// ```
// The path ["b", "d", "f"] would retrieve the int64 column while ["a", "b"] would produce an error.
#[internal_api]
pub(crate) fn extract_column(
    parent: &dyn ProvidesColumnByName,
    col: &[impl AsRef<str>],
) -> KernelResult<ArrayRef> {
    Ok(extract_column_ref(parent, col)?.clone())
}

/// Like [`extract_column`], but returns a borrowed [`ArrayRef`] reference.
#[internal_api]
pub(crate) fn extract_column_ref<'a>(
    mut parent: &'a dyn ProvidesColumnByName,
    col: &[impl AsRef<str>],
) -> KernelResult<&'a ArrayRef> {
    let mut field_names = col.iter();
    let mut field_name = match field_names.next() {
        Some(name) => name.as_ref(),
        None => return Err(ArrowError::SchemaError("Empty column path".to_string()))?,
    };
    loop {
        let child = parent
            .column_by_name(field_name)
            .ok_or_else(|| ArrowError::SchemaError(format!("No such field: {field_name}")))?;
        field_name = match field_names.next() {
            Some(name) => name.as_ref(),
            None => return Ok(child),
        };
        parent = child
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| ArrowError::SchemaError(format!("Not a struct: {field_name}")))?;
    }
}

/// Evaluates a struct expression with given field expressions and output schema
fn evaluate_struct_expression(
    fields: &[ExpressionRef],
    batch: &RecordBatch,
    output_schema: &StructType,
    nullability_predicate: Option<&ExpressionRef>,
) -> KernelResult<ArrayRef> {
    if fields.len() != output_schema.num_fields() {
        return Err(KernelError::generic(format!(
            "Struct expression field count mismatch: {} fields in expression but {} in schema",
            fields.len(),
            output_schema.num_fields()
        )));
    }

    let output_cols: Vec<ArrayRef> = fields
        .iter()
        .zip(output_schema.fields())
        .map(|(expr, field)| evaluate_expression(expr, batch, Some(field.data_type())))
        .try_collect()?;
    let output_fields: Vec<ArrowField> = output_cols
        .iter()
        .zip(output_schema.fields())
        .map(|(output_col, output_field)| {
            ArrowField::new(
                output_field.name(),
                output_col.data_type().clone(),
                output_field.nullable, /* Use schema's nullability; Arrow will validate any
                                        * mismatch */
            )
        })
        .collect();
    let null_buffer = if let Some(predicate_expr) = nullability_predicate {
        let predicate_array = evaluate_expression(predicate_expr, batch, Some(&DataType::BOOLEAN))?;
        let bool_array = predicate_array
            .as_any()
            .downcast_ref::<BooleanArray>()
            .ok_or_else(|| {
                KernelError::generic("Nullability predicate must evaluate to boolean")
            })?;
        let values = bool_array.values();
        let combined = match bool_array.nulls() {
            Some(nulls) => values & nulls.inner(),
            None => values.clone(),
        };
        Some(NullBuffer::new(combined))
    } else {
        None
    };
    let data = StructArray::try_new(output_fields.into(), output_cols, null_buffer)?;
    Ok(Arc::new(data))
}

/// Evaluates a struct patch expression by building expressions in input schema order.
fn evaluate_struct_patch_expression(
    patch: &ExpressionStructPatch,
    batch: &RecordBatch,
    output_schema: &StructType,
) -> KernelResult<ArrayRef> {
    let mut used_field_patches = 0;

    // Collect output columns directly to avoid creating intermediate Expr::Column instances.
    let mut output_cols = Vec::with_capacity(output_schema.num_fields());

    // Helper lambda to get the next output field type
    let mut output_schema_iter = output_schema.fields();
    let mut next_output_type = || {
        output_schema_iter
            .next()
            .map(|field| field.data_type())
            .ok_or_else(|| KernelError::generic("Too few fields in output schema"))
    };

    // Handle prepends (insertions before any field)
    for expr in &patch.prepended_fields {
        output_cols.push(evaluate_expression(expr, batch, Some(next_output_type()?))?);
    }

    // Extract the input path, if any
    let source_array = patch
        .input_path()
        .map(|path| extract_column(batch, path))
        .transpose()?;

    let source_data: &dyn ProvidesColumnByName = match source_array {
        Some(ref array) => array
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| KernelError::generic("Input path must point to a struct"))?,
        None => batch,
    };

    // Process each input field in order
    for input_field in source_data.schema_fields() {
        let field_name: &str = input_field.name();

        let field_patch = patch.field_patches.get(field_name);
        if field_patch.is_none_or(|patch| patch.keep_input) {
            output_cols.push(extract_column(source_data, &[field_name])?);
            let _ = next_output_type()?; // consume and discard the output schema field
        }

        // Process any insertions that come at or after this field's output position.
        if let Some(field_patch) = field_patch {
            for expr in &field_patch.insertions {
                output_cols.push(evaluate_expression(expr, batch, Some(next_output_type()?))?);
            }
            used_field_patches += 1;
        }
    }

    // Verify that all non-optional field patches were used
    let required_count = patch
        .field_patches
        .values()
        .filter(|ft| !ft.optional)
        .count();
    if used_field_patches < required_count {
        return Err(KernelError::generic(
            "Some non-optional field patches reference invalid input field names",
        ));
    }

    // Handle appends (insertions after all input fields and field-specific insertions)
    for expr in &patch.appended_fields {
        output_cols.push(evaluate_expression(expr, batch, Some(next_output_type()?))?);
    }

    // Verify we consumed all output schema fields
    if output_schema_iter.next().is_some() {
        return Err(KernelError::generic("Too many fields in output schema"));
    }

    // Build the final struct, preserving null bitmap for nested patches
    let output_fields: Vec<ArrowField> = output_cols
        .iter()
        .zip(output_schema.fields())
        .map(|(output_col, output_field)| {
            ArrowField::new(
                output_field.name(),
                output_col.data_type().clone(),
                output_col.is_nullable(),
            )
        })
        .collect();

    // For nested patches, get the source struct's null bitmap to preserve null rows
    let source_null_buffer = source_array.as_ref().and_then(|arr| {
        arr.as_any()
            .downcast_ref::<StructArray>()
            .and_then(|s| s.nulls().cloned())
    });

    let data = StructArray::try_new(output_fields.into(), output_cols, source_null_buffer)?;
    Ok(Arc::new(data))
}

/// Evaluates a kernel expression over a record batch
pub fn evaluate_expression(
    expression: &Expression,
    batch: &RecordBatch,
    result_type: Option<&DataType>,
) -> KernelResult<ArrayRef> {
    use BinaryExpressionOp::*;
    use Expression::*;
    use UnaryExpressionOp::*;
    use VariadicExpressionOp::*;
    match (expression, result_type) {
        (Literal(scalar), _) => {
            validate_array_type(scalar.to_array(batch.num_rows())?, result_type)
        }
        (Column(name), _) => validate_array_type(extract_column(batch, name)?, result_type),
        (Struct(fields, nullability), Some(DataType::Struct(output_schema))) => {
            evaluate_struct_expression(fields, batch, output_schema, nullability.as_ref())
        }
        (Struct(..), dt) => Err(KernelError::Generic(format!(
            "Struct expression expects a DataType::Struct result, but got {dt:?}"
        ))),
        (StructPatch(patch), Some(DataType::Struct(output_schema))) => {
            evaluate_struct_patch_expression(patch, batch, output_schema)
        }
        (StructPatch(_), _) => Err(KernelError::generic(
            "Data type is required to evaluate struct patch expressions",
        )),
        (Predicate(pred), None | Some(&DataType::BOOLEAN)) => {
            let result = evaluate_predicate(pred, batch, false)?;
            Ok(Arc::new(result))
        }
        (Predicate(_), Some(data_type)) => Err(KernelError::generic(format!(
            "Predicate evaluation produces boolean output, but caller expects {data_type:?}"
        ))),
        (Unary(UnaryExpression { op: ToJson, expr }), result_type) => match result_type {
            None | Some(&DataType::STRING) => {
                let input = evaluate_expression(expr, batch, None)?;
                Ok(to_json(&input)?)
            }
            Some(data_type) => Err(KernelError::generic(format!(
                "ToJson operator requires STRING output, but got {data_type:?}"
            ))),
        },
        (Binary(BinaryExpression { op, left, right }), _) => {
            let left_arr = evaluate_expression(left.as_ref(), batch, None)?;
            let right_arr = evaluate_expression(right.as_ref(), batch, None)?;

            type Operation = fn(&dyn Datum, &dyn Datum) -> KernelResult<ArrayRef, ArrowError>;
            let eval: Operation = match op {
                Plus => add,
                Minus => sub,
                Multiply => mul,
                Divide => div,
            };

            validate_array_type(eval(&left_arr, &right_arr)?, result_type)
        }
        (
            Variadic(VariadicExpression {
                op: Coalesce,
                exprs,
            }),
            result_type,
        ) => {
            let mut arrays: Vec<ArrayRef> = Vec::with_capacity(exprs.len());

            for expr in exprs {
                let array = evaluate_expression(expr, batch, result_type)?;
                let null_count = array.null_count();
                arrays.push(array);
                // Short-circuit: if this array has no nulls, we can stop evaluating
                // remaining expressions since no more values are needed.
                if null_count == 0 {
                    break;
                }
            }

            // Coalesce accumulated arrays
            Ok(coalesce_arrays(&arrays, result_type)?)
        }
        (Variadic(VariadicExpression { op: Array, exprs }), result_type) => {
            evaluate_array_expression(exprs, batch, result_type)
        }
        (Opaque(OpaqueExpression { op, exprs }), _) => {
            match op
                .any_ref()
                .downcast_ref::<ArrowOpaqueExpressionOpAdaptor>()
            {
                Some(op) => op.eval_expr(exprs, batch, result_type),
                None => Err(KernelError::unsupported(format!(
                    "Unsupported opaque expression: {op:?}"
                ))),
            }
        }
        (ParseJson(p), _) => {
            let json_arr = evaluate_expression(&p.json_expr, batch, Some(&DataType::STRING))?;
            // Coarser backstop for genuinely malformed JSON (incomplete records, unmatched
            // braces, etc.). Cell-level type-parse failures in failure-prone leaves
            // (Timestamp/Date/Decimal) are handled inside `parse_json_impl` itself, which
            // converts them to per-cell NULL rather than failing the batch.
            match parse_json_impl(json_arr.as_ref(), p.output_schema.clone()) {
                Ok(batch) => Ok(Arc::new(StructArray::from(batch)) as ArrayRef),
                Err(e) => {
                    warn!(
                        "Failed to parse JSON stats as {}: {e}. Using null stats.",
                        p.output_schema,
                    );
                    let arrow_schema = ArrowSchema::try_from_kernel(p.output_schema.as_ref())?;
                    Ok(new_null_array(
                        &ArrowDataType::Struct(arrow_schema.fields().clone()),
                        json_arr.len(),
                    ))
                }
            }
        }
        (MapToStruct(m), Some(DataType::Struct(output_schema))) => {
            let map_arr = evaluate_expression(&m.map_expr, batch, None)?;
            let timestamp_timezone = TimestampTimezone::try_from_options(&m.options)?;
            let result = evaluate_map_to_struct(&map_arr, output_schema, timestamp_timezone)?;
            Ok(Arc::new(result) as ArrayRef)
        }
        (MapToStruct(_), dt) => Err(KernelError::Generic(format!(
            "MapToStruct expression requires a DataType::Struct result type, but got {dt:?}"
        ))),
        (Cast(c), result_type) => {
            let input = evaluate_expression(&c.expr, batch, None)?;
            let target = ArrowDataType::try_from_kernel(&c.target)?;
            // Arrow errors (rather than nulls per-value) on a type pair it cannot cast; degrade
            // that to an all-NULL column so an unsupported cast keeps the file.
            let output = if can_cast_types(input.data_type(), &target) {
                cast(&input, &target)?
            } else {
                new_null_array(&target, input.len())
            };
            validate_array_type(output, result_type)
        }
        (Unknown(name), _) => Err(KernelError::unsupported(format!(
            "Unknown expression: {name:?}"
        ))),
    }
}

/// Evaluate an `ARRAY(e0, e1, ..., eN-1)` constructor expression into an Arrow `ListArray`.
///
/// Each input expression produces one column of length M (rows in the batch); the output
/// is an `Array<element_type>` column of length M where row i holds
/// `[arr_0[i], ..., arr_{N-1}[i]]`. The element type is inferred from the inputs (which must
/// all evaluate to the same Arrow element type); at least one input is required.
///
/// When provided, `result_type` must be a [`DataType::Array`]. Its element type is forwarded
/// to the children as a schema hint (struct/nested-array elements need their schema to
/// evaluate, the same way a bare struct expression does), and when it declares the element
/// field non-nullable, no input may contain nulls. See [`VariadicExpressionOp::Array`] for
/// the expression contract.
fn evaluate_array_expression(
    exprs: &[Expression],
    batch: &RecordBatch,
    result_type: Option<&DataType>,
) -> KernelResult<ArrayRef> {
    let num_rows = batch.num_rows();

    let array_type = match result_type {
        Some(DataType::Array(arr_ty)) => Some(arr_ty.as_ref()),
        Some(other) => {
            return Err(KernelError::generic(format!(
                "Array expression requires a DataType::Array result type, but got {other:?}"
            )));
        }
        None => None,
    };
    let element_kernel_type = array_type.map(|a| a.element_type());
    let contains_null = array_type.is_none_or(|a| a.contains_null());

    let element_arrays: Vec<ArrayRef> = exprs
        .iter()
        .map(|expr| evaluate_expression(expr, batch, element_kernel_type))
        .try_collect()?;

    let element_type = element_arrays
        .first()
        .ok_or_else(|| KernelError::generic("Array expression requires at least one element"))?
        .data_type()
        .clone();
    // Single pass over the evaluated inputs: every input must evaluate to the shared element
    // type, and (when the element field is declared non-nullable) must not contain nulls --
    // otherwise the output's field metadata would lie about the values it holds.
    for (i, arr) in element_arrays.iter().enumerate() {
        if arr.data_type() != &element_type {
            return Err(KernelError::generic(format!(
                "Array expression inputs must share the same element type; input 0 evaluates \
                 to {element_type:?} but input {i} evaluates to {:?}",
                arr.data_type()
            )));
        }
        if !contains_null && arr.null_count() > 0 {
            return Err(KernelError::generic(format!(
                "Array expression declares non-nullable elements (result_type contains_null \
                 is false) but input {i} contains {} null value(s)",
                arr.null_count()
            )));
        }
    }

    let n = element_arrays.len();
    // Build the flat values buffer in row-major order: row r is [arr_0[r], ..., arr_{n-1}[r]].
    // `MutableArrayData` is type-erased (works for any element type) and avoids the
    // (num_rows * n)-sized indices buffer that `arrow_select::interleave` would require.
    let array_data: Vec<ArrayData> = element_arrays.iter().map(|a| a.to_data()).collect();
    let total_len = num_rows.checked_mul(n).ok_or_else(|| {
        KernelError::generic(format!(
            "Array expression length overflows usize: num_rows={num_rows} * inputs={n}"
        ))
    })?;
    let mut mutable = MutableArrayData::new(array_data.iter().collect(), false, total_len);
    for row in 0..num_rows {
        for col in 0..n {
            mutable.try_extend(col, row, row + 1)?;
        }
    }
    let values = make_array(mutable.freeze());

    // Every row's list has exactly `n` elements. `from_lengths` builds `[0, n, 2n, ..., M*n]`
    // but panics on i32 overflow, so guard first (`LargeListArray` would be needed beyond
    // i32::MAX). `total_len == num_rows * n` was overflow-checked as usize above.
    i32::try_from(total_len).map_err(|_| {
        KernelError::generic(format!(
            "Array expression offsets overflow i32: num_rows={num_rows} * inputs={n}; \
             LargeListArray would be required"
        ))
    })?;
    let offsets = OffsetBuffer::<i32>::from_lengths(std::iter::repeat_n(n, num_rows));
    let field = Arc::new(ArrowField::new(
        LIST_ARRAY_ROOT,
        element_type,
        contains_null,
    ));
    let list = ListArray::try_new(field, offsets, values, None)?;
    // Validate the assembled array's element type against the caller-declared result type,
    // consistent with the other expression arms. (Element nullability is enforced above, since
    // `validate_array_type` runs in TypesAndNames mode where nullability checks are a no-op.)
    validate_array_type(Arc::new(list), result_type)
}

/// Direction for casting between Arrow view and non-view string/binary types.
#[derive(Clone, Copy)]
enum ViewCast {
    ToView,
    ToNonView,
}

/// Casts list element types between view and non-view string/binary variants.
///
/// When [`ViewCast::ToView`], non-view string/binary element types are converted to their view
/// equivalents (e.g. `List<Utf8>` -> `List<Utf8View>`). View container types (`ListView`,
/// `LargeListView`) are preserved.
///
/// When [`ViewCast::ToNonView`], view element types are converted to their non-view equivalents
/// (e.g. `List<Utf8View>` -> `List<Utf8>`). Additionally, view container types are always
/// converted to their non-view equivalents (e.g. `ListView<Int32>` -> `List<Int32>`), even
/// when the element type does not change.
///
/// Nested type conversion is not supported.
fn cast_list_elements(
    vals: &Arc<dyn Array>,
    field: &Arc<ArrowField>,
    dir: ViewCast,
) -> KernelResult<Arc<dyn Array>> {
    let to_type = match dir {
        ViewCast::ToView => match field.data_type() {
            ArrowDataType::Utf8 | ArrowDataType::LargeUtf8 => ArrowDataType::Utf8View,
            ArrowDataType::Binary | ArrowDataType::LargeBinary => ArrowDataType::BinaryView,
            _ => return Ok(vals.clone()),
        },
        ViewCast::ToNonView => match field.data_type() {
            ArrowDataType::Utf8View => ArrowDataType::Utf8,
            ArrowDataType::BinaryView => ArrowDataType::Binary,
            other => {
                if !matches!(
                    vals.data_type(),
                    ArrowDataType::ListView(_) | ArrowDataType::LargeListView(_)
                ) {
                    return Ok(vals.clone());
                }
                // Container is a view type but element is not -- preserve element type,
                // cast only the container (ListView -> List, LargeListView -> LargeList).
                other.clone()
            }
        },
    };
    let new_field = Arc::new(field.as_ref().clone().with_data_type(to_type));
    let container = list_type_with_element(vals.data_type(), new_field)?;
    let container = match (container, dir) {
        (ArrowDataType::ListView(field), ViewCast::ToNonView) => ArrowDataType::List(field),
        (ArrowDataType::LargeListView(field), ViewCast::ToNonView) => {
            ArrowDataType::LargeList(field)
        }
        (container, _) => container,
    };
    Ok(cast(vals, &container)?)
}

/// This function converts ArrowView types to their non-view type equivalents. This is used for
/// [`evaluate_predicate`] conversion, currently does not support nested conversion. This only
/// supports limited conversions (see code for exactly which).
fn arrow_convert_to_non_view_type(vals: Arc<dyn Array>) -> KernelResult<Arc<dyn Array>> {
    match vals.data_type() {
        ArrowDataType::List(field) => cast_list_elements(&vals, field, ViewCast::ToNonView),
        ArrowDataType::LargeList(field) => cast_list_elements(&vals, field, ViewCast::ToNonView),
        ArrowDataType::ListView(field) => cast_list_elements(&vals, field, ViewCast::ToNonView),
        ArrowDataType::LargeListView(field) => {
            cast_list_elements(&vals, field, ViewCast::ToNonView)
        }
        ArrowDataType::Utf8View => Ok(cast(&vals, &ArrowDataType::Utf8)?),
        ArrowDataType::BinaryView => Ok(cast(&vals, &ArrowDataType::Binary)?),
        _ => Ok(vals),
    }
}

/// This function converts  Arrow types to their Arrow view type equivalents. This is used for
/// [`evaluate_predicate`] conversion, currently does not support nested conversion. This only
/// supports limited conversions (see code for exactly which).
fn arrow_convert_to_view_type(vals: Arc<dyn Array>) -> KernelResult<Arc<dyn Array>> {
    match vals.data_type() {
        ArrowDataType::List(field) => cast_list_elements(&vals, field, ViewCast::ToView),
        ArrowDataType::LargeList(field) => cast_list_elements(&vals, field, ViewCast::ToView),
        ArrowDataType::ListView(field) => cast_list_elements(&vals, field, ViewCast::ToView),
        ArrowDataType::LargeListView(field) => cast_list_elements(&vals, field, ViewCast::ToView),
        ArrowDataType::Utf8 | ArrowDataType::LargeUtf8 => {
            Ok(cast(&vals, &ArrowDataType::Utf8View)?)
        }
        ArrowDataType::Binary | ArrowDataType::LargeBinary => {
            Ok(cast(&vals, &ArrowDataType::BinaryView)?)
        }
        _ => Ok(vals),
    }
}

/// Evaluates a (possibly inverted) kernel predicate over a record batch
pub fn evaluate_predicate(
    predicate: &Predicate,
    batch: &RecordBatch,
    inverted: bool,
) -> KernelResult<BooleanArray> {
    use BinaryPredicateOp::*;
    use Predicate::*;

    // Helper to conditionally invert results of arrow operations if we couldn't push down the NOT.
    let maybe_inverted = |result: Cow<'_, BooleanArray>| match inverted {
        true => not(&result),
        false => Ok(result.into_owned()),
    };

    match predicate {
        BooleanExpression(expr) => {
            // Grr -- there's no way to cast an `Arc<dyn Array>` back to its native type, so we
            // can't use `Arc::into_inner` here and must clone instead. At least the inner `Buffer`
            // instances are still cheaply clonable.
            let arr = evaluate_expression(expr, batch, Some(&DataType::BOOLEAN))?;
            match arr.as_any().downcast_ref::<BooleanArray>() {
                Some(arr) => Ok(maybe_inverted(Cow::Borrowed(arr))?),
                None => Err(KernelError::generic("expected boolean array")),
            }
        }
        Not(pred) => evaluate_predicate(pred, batch, !inverted),
        Unary(UnaryPredicate { op, expr }) => {
            let arr = evaluate_expression(expr.as_ref(), batch, None)?;
            let eval_op_fn = match (op, inverted) {
                (UnaryPredicateOp::IsNull, false) => is_null,
                (UnaryPredicateOp::IsNull, true) => is_not_null,
            };
            Ok(eval_op_fn(&arr)?)
        }
        Binary(BinaryPredicate { op, left, right }) => {
            let (left, right) = (left.as_ref(), right.as_ref());

            // IN is different from all the others, and also quite complex, so factor it out.
            //
            // TODO: Factor out as a stand-alone function instead of a closure?
            let eval_in = || match (left, right) {
                (Expression::Literal(_), Expression::Column(_)) => {
                    let left = evaluate_expression(left, batch, None)?;
                    let left = arrow_convert_to_non_view_type(left)?;

                    let right = evaluate_expression(right, batch, None)?;
                    let right = arrow_convert_to_non_view_type(right)?;
                    if let Some(string_arr) = left.as_string_opt::<i32>() {
                        if let Some(list_arr) = right.as_list_opt::<i32>() {
                            if list_arr.value_type() == ArrowDataType::Utf8 {
                                let result = in_list_utf8(string_arr, list_arr)?;
                                return Ok(result);
                            }
                        }
                    }

                    use ArrowDataType::*;
                    prim_array_cmp! {
                        left, right,
                        (Int8, Int8Type),
                        (Int16, Int16Type),
                        (Int32, Int32Type),
                        (Int64, Int64Type),
                        (UInt8, UInt8Type),
                        (UInt16, UInt16Type),
                        (UInt32, UInt32Type),
                        (UInt64, UInt64Type),
                        (Float16, Float16Type),
                        (Float32, Float32Type),
                        (Float64, Float64Type),
                        (Timestamp(TimeUnit::Second, _), TimestampSecondType),
                        (Timestamp(TimeUnit::Millisecond, _), TimestampMillisecondType),
                        (Timestamp(TimeUnit::Microsecond, _), TimestampMicrosecondType),
                        (Timestamp(TimeUnit::Nanosecond, _), TimestampNanosecondType),
                        (Date32, Date32Type),
                        (Date64, Date64Type),
                        (Time32(TimeUnit::Second), Time32SecondType),
                        (Time32(TimeUnit::Millisecond), Time32MillisecondType),
                        (Time64(TimeUnit::Microsecond), Time64MicrosecondType),
                        (Time64(TimeUnit::Nanosecond), Time64NanosecondType),
                        (Duration(TimeUnit::Second), DurationSecondType),
                        (Duration(TimeUnit::Millisecond), DurationMillisecondType),
                        (Duration(TimeUnit::Microsecond), DurationMicrosecondType),
                        (Duration(TimeUnit::Nanosecond), DurationNanosecondType),
                        (Interval(IntervalUnit::DayTime), IntervalDayTimeType),
                        (Interval(IntervalUnit::YearMonth), IntervalYearMonthType),
                        (Interval(IntervalUnit::MonthDayNano), IntervalMonthDayNanoType),
                        (Decimal128(_, _), Decimal128Type),
                        (Decimal256(_, _), Decimal256Type)
                    }
                }
                (Expression::Literal(lit), Expression::Literal(Scalar::Array(ad))) => {
                    // Logical (SQL) equality, so a NULL never matches another NULL. Struct, array,
                    // and map elements/needles are unsupported: `logical_eq` returns `false` for
                    // them, so they never match, not even a structurally identical value.
                    let exists = ad.array_elements().iter().any(|e| lit.logical_eq(e));
                    Ok(BooleanArray::from(vec![exists]))
                }
                (l, r) => Err(KernelError::invalid_expression(format!(
                    "Invalid right value for (NOT) IN comparison, left is: {l} right is: {r}"
                ))),
            };

            let eval_fn = match (op, inverted) {
                (LessThan, false) => lt,
                (LessThan, true) => gt_eq,
                (GreaterThan, false) => gt,
                (GreaterThan, true) => lt_eq,
                (Equal, false) => eq,
                (Equal, true) => neq,
                (Distinct, false) => distinct,
                (Distinct, true) => not_distinct,
                (In, _) => return Ok(maybe_inverted(Cow::Owned(eval_in()?))?),
            };

            let left = evaluate_expression(left, batch, None)?;
            let right = evaluate_expression(right, batch, None)?;

            // If the types differ (e.g. one side is a view type and the other is not),
            // normalize both to view types since benchamrking results show that casting from
            // non-view to view type is faster than casting from view type to non-view
            // type.
            let (left, right) = if left.data_type() == right.data_type() {
                (left, right)
            } else {
                (
                    arrow_convert_to_view_type(left)?,
                    arrow_convert_to_view_type(right)?,
                )
            };
            Ok(eval_fn(&left, &right)?)
        }
        Junction(JunctionPredicate { op, preds }) => {
            // Leverage de Morgan's laws (invert the children and swap the operator):
            // NOT(AND(A, B)) = OR(NOT(A), NOT(B))
            // NOT(OR(A, B)) = AND(NOT(A), NOT(B))
            //
            // In case of an empty junction, we return a default value of TRUE (FALSE) for AND (OR),
            // as a "hidden" extra child: AND(TRUE, ...) = AND(...) and OR(FALSE, ...) = OR(...).
            use JunctionPredicateOp::*;
            type Operation =
                fn(&BooleanArray, &BooleanArray) -> KernelResult<BooleanArray, ArrowError>;
            let (reducer, default): (Operation, _) = match (op, inverted) {
                (And, false) | (Or, true) => (and_kleene, true),
                (Or, false) | (And, true) => (or_kleene, false),
            };
            preds
                .iter()
                .map(|pred| evaluate_predicate(pred, batch, inverted))
                .reduce(|l, r| Ok(reducer(&l?, &r?)?))
                .unwrap_or_else(|| Ok(BooleanArray::from(vec![default; batch.num_rows()])))
        }
        Opaque(OpaquePredicate { op, exprs }) => {
            match op.any_ref().downcast_ref::<ArrowOpaquePredicateOpAdaptor>() {
                Some(op) => op.eval_pred(exprs, batch, inverted),
                None => Err(KernelError::unsupported(format!(
                    "Unsupported opaque predicate: {op:?}"
                ))),
            }
        }
        Unknown(name) => Err(KernelError::unsupported(format!(
            "Unknown predicate: {name:?}"
        ))),
    }
}

/// `chrono` formats implementing the timestamp encoding [`UnaryExpressionOp::ToJson`] requires.
///
/// `%.3f` truncates rather than rounds, and floors below the epoch. Reader subtracts .000999
/// from the query value before comparing it to the max stat so it doesn't skip the wrong files.
///
/// The `Z` is literal rather than `%:z`, which spells a zero offset `+00:00`. Both are valid ISO
/// 8601, but every Delta writer emits `Z` (including this crate's own partition-value
/// serialization), so matching it keeps stats parseable by readers that accept only that form.
/// Hardcoding it is safe because a Delta `TIMESTAMP` stat is always UTC: `arrow_conversion` accepts
/// a timezone-annotated array only when the annotation is UTC.
const STATS_TIMESTAMP_TZ_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.3fZ";
const STATS_TIMESTAMP_NTZ_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.3f";

/// Converts a StructArray to JSON-encoded strings
#[internal_api]
pub(crate) fn to_json(input: &dyn Datum) -> KernelResult<ArrayRef, ArrowError> {
    let (array_ref, _is_scalar) = input.get();
    match array_ref.data_type() {
        ArrowDataType::Struct(_) => {
            let struct_array = array_ref.as_struct_opt().ok_or_else(|| {
                ArrowError::InvalidArgumentError(format!(
                    "Failed to convert {} to StructArray",
                    array_ref.data_type(),
                ))
            })?;

            let num_rows = struct_array.len();
            if num_rows == 0 {
                return Ok(Arc::new(StringArray::from(Vec::<Option<String>>::new())));
            }

            // Create the encoder using make_encoder with "struct mode" (not "list mode")
            let field = Arc::new(ArrowField::new_struct(
                "root",
                struct_array.fields().iter().cloned().collect_vec(),
                true,
            ));
            let options = EncoderOptions::default()
                .with_struct_mode(StructMode::ObjectOnly)
                .with_timestamp_format(STATS_TIMESTAMP_NTZ_FORMAT.to_string())
                .with_timestamp_tz_format(STATS_TIMESTAMP_TZ_FORMAT.to_string());
            let mut encoder = make_encoder(&field, struct_array, &options)?;

            // Pre-allocate the various buffers
            const ROW_SIZE_ESTIMATE: usize = 64;
            let mut data = Vec::with_capacity(num_rows * ROW_SIZE_ESTIMATE);
            let mut offsets = Vec::with_capacity(num_rows + 1);
            offsets.push(0);
            let mut nulls = NullBufferBuilder::new(num_rows);

            for i in 0..num_rows {
                if struct_array.is_null(i) {
                    nulls.append_null();
                } else {
                    encoder.encode(i, &mut data);
                    nulls.append_non_null();
                }

                // We have to set a valid physical offset even if the entry was null.
                // But it will refer to a 0-byte slice, since we didn't encode any new data.
                let offset = i32::try_from(data.len()).map_err(|_| {
                    ArrowError::InvalidArgumentError("Failed to convert offset".to_string())
                })?;
                offsets.push(offset);
            }

            let array = StringArray::try_new(
                OffsetBuffer::new(offsets.into()),
                data.into(),
                nulls.finish(),
            )?;
            Ok(Arc::new(array))
        }
        _ => Err(ArrowError::InvalidArgumentError(format!(
            "TO_JSON can only be applied to struct arrays, got {:?}",
            array_ref.data_type()
        ))),
    }
}

/// Coalesce multiple arrays into one by selecting the first non-null value from each row.
///
/// This function implements SQL COALESCE semantics: for each row, it iterates through
/// the input arrays from left to right and returns the first non-null value found. If all values
/// are null for a given row, the result will be null for that row.
///
/// # Parameters
/// - `arrays`: Slice of Arrow arrays to coalesce. Must not be empty and all arrays must have the
///   same data type.
/// - `result_type`: Optional expected result type. If provided, must match the arrays' data type.
///
/// # Returns
/// An `ArrayRef` containing the coalesced values with the same number of rows as the input arrays.
///
/// # Errors
/// This function returns an `ArrowError` in the following cases:
/// - **Empty input**: The default engine currently does not support empty COALESCE statements.
/// - **Mismatched row counts**: Not all arrays have the same number of rows.
/// - **Mismatched data types**: Not all arrays have exactly the same data type.
/// - **Invalid result type**: If `result_type` is provided but doesn't match the arrays' data type.
fn coalesce_arrays(
    arrays: &[ArrayRef],
    result_type: Option<&DataType>,
) -> KernelResult<ArrayRef, ArrowError> {
    let Some((first, rest)) = arrays.split_first() else {
        return Err(ArrowError::InvalidArgumentError(
            "The default engine currently does not support empty COALESCE statements".into(),
        ));
    };

    // Validate against the expected output type, if provided
    if let Some(result_type) = result_type {
        let result_type = result_type.try_into_arrow()?;
        if first.data_type() != &result_type {
            return Err(ArrowError::InvalidArgumentError(format!(
                "Requested result type {result_type:?} does not match arrays' data type {:?}",
                first.data_type()
            )));
        }
    }

    // Early exit for single array case
    if rest.is_empty() {
        return Ok(first.clone());
    }

    // Verify all arrays have the same length and data type
    for (i, arr) in rest.iter().enumerate() {
        if arr.len() != first.len() {
            return Err(ArrowError::InvalidArgumentError(format!(
                "Array at index {} has length {}, expected {}",
                i + 1,
                arr.len(),
                first.len()
            )));
        }
        if arr.data_type() != first.data_type() {
            return Err(ArrowError::InvalidArgumentError(format!(
                "Array at index {} has type {:?}, but expected {:?}",
                i + 1,
                arr.data_type(),
                first.data_type()
            )));
        }
    }

    // Collect ArrayData for MutableArrayData
    let array_data: Vec<ArrayData> = arrays.iter().map(|arr| arr.to_data()).collect();

    // Build result
    let mut mutable = MutableArrayData::new(array_data.iter().collect(), false, first.len());
    for row in 0..first.len() {
        // Find first non-null value for this row
        match arrays.iter().enumerate().find(|(_, arr)| arr.is_valid(row)) {
            Some((array_idx, _)) => mutable.try_extend(array_idx, row, row + 1)?,
            None => mutable.try_extend_nulls(1)?,
        };
    }

    Ok(make_array(mutable.freeze()))
}

/// Parses one raw partition-value string into its target [`Scalar`], or `None` for a null value.
///
/// An empty string casts via [`PrimitiveType::empty_string_partition_cast`].
/// `timestamp_timezone` applies only to `TIMESTAMP` values without an embedded offset or named
/// timezone; it does not affect `DATE` or `TIMESTAMP_NTZ`.
fn parse_partition_scalar(
    prim: &PrimitiveType,
    raw: &str,
    timestamp_timezone: TimestampTimezone,
) -> KernelResult<Option<Scalar>> {
    if raw.is_empty() {
        return Ok(prim.empty_string_partition_cast());
    }
    match prim {
        PrimitiveType::Date => {
            let days = Date32Type::parse(raw).ok_or_else(|| {
                KernelError::ParseError(raw.to_string(), DataType::Primitive(prim.clone()))
            })?;
            return Ok(Some(Scalar::Date(days)));
        }
        PrimitiveType::Timestamp => {
            let micros = timestamp_timezone.parse_timestamp(raw).ok_or_else(|| {
                KernelError::ParseError(raw.to_string(), DataType::Primitive(prim.clone()))
            })?;
            return Ok(Some(Scalar::Timestamp(micros)));
        }
        PrimitiveType::TimestampNtz => {
            let micros = string_to_datetime(&Utc, raw)
                .map_err(|_| {
                    KernelError::ParseError(raw.to_string(), DataType::Primitive(prim.clone()))
                })?
                .timestamp_micros();
            return Ok(Some(Scalar::TimestampNtz(micros)));
        }
        _ => {}
    }
    let scalar = prim.parse_scalar(raw)?;
    Ok((!matches!(scalar, Scalar::Null(_))).then_some(scalar))
}

/// Evaluates `MAP_TO_STRUCT(map_col, output_schema)`: extracts keys from a `Map<String, String>`
/// and parses each value into its target type, producing a `StructArray`. An empty-string value
/// casts via [`PrimitiveType::empty_string_partition_cast`].
/// `timestamp_timezone` controls `TIMESTAMP` values without an embedded offset or named timezone.
///
/// - Missing keys produce null values
/// - Parse errors are propagated (indicating a broken table)
/// - Duplicate keys are invalid input and their result is undefined
fn evaluate_map_to_struct(
    map_arr: &ArrayRef,
    output_schema: &StructType,
    timestamp_timezone: TimestampTimezone,
) -> KernelResult<StructArray> {
    let map_array = map_arr
        .as_any()
        .downcast_ref::<MapArray>()
        .ok_or_else(|| KernelError::generic("MapToStruct requires a MapArray as input"))?;

    let map_keys = map_array
        .keys()
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| KernelError::generic("MapToStruct requires maps with string keys"))?;
    let map_values = map_array
        .values()
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| KernelError::generic("MapToStruct requires maps with string values"))?;

    let num_rows = map_array.len();
    let fields: Vec<&StructField> = output_schema.fields().collect();

    // Pre-build a builder and resolve the PrimitiveType for each output field.
    let mut builders: Vec<Box<dyn ArrayBuilder>> = Vec::with_capacity(fields.len());
    let mut target_types: Vec<&PrimitiveType> = Vec::with_capacity(fields.len());
    for field in &fields {
        let prim = match field.data_type() {
            DataType::Primitive(p) => p,
            other => {
                return Err(KernelError::generic(format!(
                    "MapToStruct only supports primitive target types, got {other:?}"
                )));
            }
        };
        target_types.push(prim);
        let arrow_type = ArrowDataType::try_from_kernel(field.data_type())?;
        builders.push(arrow_array::make_builder(&arrow_type, num_rows));
    }

    // Reverse lookup from field name to field index. Each map key is compared against this once
    // per row, avoiding repeated string comparisons and storing only entries we care about.
    let field_indices: HashMap<&str, usize> = HashMap::from_iter(
        fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name().as_str(), i)),
    );

    // Per-field index into the flat `map_keys`/`map_values` arrays, tracking the most recently
    // matched map entry for each output field. For a given row with entry range
    // `[entry_start, entry_end)`, checking `matched_entry_idx[i] >= entry_start` tells us whether
    // field `i` was found in that row's map. Because Arrow enforces monotonically increasing
    // offsets, stale matches from earlier rows are naturally below the current row's `entry_start`,
    // so we never need to clear or reinitialize this vector between rows.
    let mut matched_entry_idx: Vec<i32> = vec![-1; fields.len()];

    let offsets = map_array.value_offsets();
    let mut entry_end = offsets[0];

    for row in 0..num_rows {
        let entry_start = entry_end;
        entry_end = offsets[row + 1];

        // Scan this row's map entries (skipped entirely for null rows since offsets still
        // increase monotonically — the empty range means no matches are recorded).
        if map_array.is_valid(row) {
            for entry_idx in entry_start..entry_end {
                let key = map_keys.value(entry_idx as usize);
                if let Some(&i) = field_indices.get(key) {
                    matched_entry_idx[i] = entry_idx;
                }
            }
        }

        for (i, field) in fields.iter().enumerate() {
            let entry_idx = matched_entry_idx[i];
            let builder = builders[i].as_mut();

            // Only process values belonging to the current row (entry_idx >= entry_start)
            // and where the value is non-null.
            if entry_idx >= entry_start && map_values.is_valid(entry_idx as usize) {
                let raw = map_values.value(entry_idx as usize);
                match parse_partition_scalar(target_types[i], raw, timestamp_timezone)? {
                    Some(scalar) => scalar.append_to(builder, 1)?,
                    None => Scalar::append_null(builder, field.data_type(), 1)?,
                }
            } else {
                Scalar::append_null(builder, field.data_type(), 1)?;
            }
        }
    }

    let output_columns: Vec<ArrayRef> = builders.iter_mut().map(|b| b.finish()).collect();
    let arrow_fields: Vec<ArrowField> = fields
        .iter()
        .map(|f| ArrowField::try_from_kernel(*f))
        .try_collect()?;

    // Propagate the input map's null bitmap to the output struct. This is critical:
    // when a map row is null, the loop above appends null to every child builder
    // (since no keys match). Without this null bitmap, the output struct row appears
    // valid (non-null) to Arrow, but its children contain nulls. If any child field
    // is non-nullable, Arrow rejects this as "Found unmasked nulls for non-nullable
    // StructArray field". With the bitmap, the struct row is marked null, which masks
    // the child nulls and satisfies Arrow's validation.
    //
    // This matters during checkpoint creation: the COALESCE expression evaluates
    // MAP_TO_STRUCT for all rows including non-add actions (remove, metadata, protocol)
    // where the partition values map is null. Partition columns declared NOT NULL would
    // cause the checkpoint to fail without this propagation.
    Ok(StructArray::try_new(
        arrow_fields.into(),
        output_columns,
        map_array.nulls().cloned(),
    )?)
}

fn validate_array_type(array: ArrayRef, expected: Option<&DataType>) -> KernelResult<ArrayRef> {
    if let Some(expected) = expected {
        ensure_data_types(expected, array.data_type(), ValidationMode::TypesAndNames)?;
    }
    Ok(array)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rstest::rstest;

    use super::super::expected_timestamp_micros;
    use super::*;
    use crate::arrow::array::{
        ArrayRef, BinaryArray, BooleanArray, Date32Array, Float64Array, Int32Array, Int64Array,
        LargeStringArray, ListArray, MapBuilder, StringArray, StringBuilder, StructArray,
        TimestampMicrosecondArray,
    };
    use crate::arrow::buffer::{OffsetBuffer, ScalarBuffer};
    use crate::arrow::datatypes::{
        DataType as ArrowDataType, Field as ArrowField, Fields, Schema as ArrowSchema,
    };
    use crate::expressions::{
        col, column_expr_ref, lit, null_lit, ArrayData, BinaryExpressionOp, BinaryPredicateOp,
        Expression as Expr, ExpressionStructPatchBuilder, JunctionPredicateOp, MapData,
        MapToStructOptions, Predicate as Pred, StructData,
    };
    use crate::schema::{
        schema, schema_ref, ArrayType, DataType, MapType, StructField, StructType,
    };
    use crate::unit_test_utils::assert_result_error_with_message;

    fn create_test_batch() -> RecordBatch {
        let schema = ArrowSchema::new(vec![
            ArrowField::new("a", ArrowDataType::Int32, false),
            ArrowField::new("b", ArrowDataType::Int32, false),
            ArrowField::new("c", ArrowDataType::Int32, false),
        ]);
        let a_values = Int32Array::from(vec![1, 2, 3]);
        let b_values = Int32Array::from(vec![10, 20, 30]);
        let c_values = Int32Array::from(vec![100, 200, 300]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(a_values), Arc::new(b_values), Arc::new(c_values)],
        )
        .unwrap()
    }

    /// Helper function to validate Int32Array columns in test results
    fn validate_i32_column(result: &StructArray, idx: usize, expected: &[i32]) {
        let col = result
            .column(idx)
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        assert_eq!(col.values(), expected);
    }

    fn create_nested_test_batch() -> RecordBatch {
        let inner_schema = ArrowSchema::new(vec![
            ArrowField::new("x", ArrowDataType::Int32, false),
            ArrowField::new("y", ArrowDataType::Int32, false),
        ]);
        let nested_type = ArrowDataType::Struct(inner_schema.fields().clone());
        let schema = ArrowSchema::new(vec![
            ArrowField::new("a", ArrowDataType::Int32, false),
            ArrowField::new("nested", nested_type, false),
        ]);

        let x_values = Int32Array::from(vec![1, 2, 3]);
        let y_values = Int32Array::from(vec![10, 20, 30]);
        let nested_struct = StructArray::from(vec![
            (
                Arc::new(ArrowField::new("x", ArrowDataType::Int32, false)),
                Arc::new(x_values) as ArrayRef,
            ),
            (
                Arc::new(ArrowField::new("y", ArrowDataType::Int32, false)),
                Arc::new(y_values) as ArrayRef,
            ),
        ]);

        let a_values = Int32Array::from(vec![100, 200, 300]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(a_values), Arc::new(nested_struct)],
        )
        .unwrap()
    }

    #[test]
    fn test_identity_transforms() {
        let batch = create_test_batch();

        // Test 1: Empty patch (identity) - should be exactly equal to input
        let patch = ExpressionStructPatchBuilder::new();
        let output_schema = schema! {
            not_null "a": INTEGER,
            not_null "b": INTEGER,
            not_null "c": INTEGER,
        };

        let expr = Expr::struct_patch(patch).unwrap();
        let result =
            evaluate_expression(&expr, &batch, Some(&DataType::from(output_schema))).unwrap();

        // For empty patch, output should be identical to input
        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();

        // Compare each column directly with original batch columns
        for i in 0..3 {
            assert_eq!(struct_result.column(i).as_ref(), batch.column(i).as_ref());
        }

        // Test 2: Nested path identity (struct relocation without modification)
        let nested_batch = create_nested_test_batch();
        let nested_patch = ExpressionStructPatchBuilder::new_nested(["nested"]);

        let nested_output_schema = schema! {
            not_null "x": INTEGER,
            not_null "y": INTEGER,
        };

        let expr_nested = Expr::struct_patch(nested_patch).unwrap();
        let result_nested = evaluate_expression(
            &expr_nested,
            &nested_batch,
            Some(&DataType::from(nested_output_schema)),
        )
        .unwrap();

        // Extract the original nested struct for comparison
        let original_nested = nested_batch
            .column_by_name("nested")
            .unwrap()
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        let nested_result = result_nested
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();

        // Compare each column from nested struct directly
        for i in 0..2 {
            assert_eq!(
                nested_result.column(i).as_ref(),
                original_nested.column(i).as_ref()
            );
        }
    }

    #[test]
    fn test_field_operations_and_multiple_insertions() {
        let batch = create_test_batch();

        let patch = ExpressionStructPatchBuilder::new()
            .replace("a", col!("b"))
            .drop("b")
            .prepend(lit(1))
            .prepend(lit(2))
            .prepend(col!("c"))
            .insert_after("c", lit(42))
            .insert_after("c", col!("a"))
            .insert_after("c", lit(99))
            .append(lit(7));

        let output_schema = schema! {
            not_null "pre1": INTEGER,
            not_null "pre2": INTEGER,
            not_null "pre3": INTEGER,
            not_null "a": INTEGER,
            not_null "c": INTEGER,
            not_null "after_c1": INTEGER,
            not_null "after_c2": INTEGER,
            not_null "after_c3": INTEGER,
            not_null "append1": INTEGER,
        };

        let expr = Expr::struct_patch(patch).unwrap();
        let result =
            evaluate_expression(&expr, &batch, Some(&DataType::from(output_schema))).unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(struct_result.num_columns(), 9);
        assert_eq!(struct_result.len(), 3);

        // Verify multiple prepends (in order)
        validate_i32_column(struct_result, 0, &[1, 1, 1]);
        validate_i32_column(struct_result, 1, &[2, 2, 2]);
        validate_i32_column(struct_result, 2, &[100, 200, 300]); // column c

        // Verify replaced field 'a' (should be column b values: [10, 20, 30])
        validate_i32_column(struct_result, 3, &[10, 20, 30]);

        // Verify passthrough field 'c' (should be original c values: [100, 200, 300])
        validate_i32_column(struct_result, 4, &[100, 200, 300]);

        // Verify multiple insertions after c (in order)
        validate_i32_column(struct_result, 5, &[42, 42, 42]);
        validate_i32_column(struct_result, 6, &[1, 2, 3]); // original column a
        validate_i32_column(struct_result, 7, &[99, 99, 99]);

        // Verify true appends come after field-specific insertions
        validate_i32_column(struct_result, 8, &[7, 7, 7]);
    }

    #[test]
    fn test_replacement_position_is_independent_of_registration_order() {
        let batch = create_test_batch();

        let patch = ExpressionStructPatchBuilder::new()
            .insert_after("a", lit(42))
            .replace("a", col!("b"));

        let output_schema = schema! {
            not_null "a": INTEGER,
            not_null "after_a": INTEGER,
            not_null "b": INTEGER,
            not_null "c": INTEGER,
        };

        let expr = Expr::struct_patch(patch).unwrap();
        let result =
            evaluate_expression(&expr, &batch, Some(&DataType::from(output_schema))).unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        validate_i32_column(struct_result, 0, &[10, 20, 30]); // replacement column b
        validate_i32_column(struct_result, 1, &[42, 42, 42]); // insertion after replacement
        validate_i32_column(struct_result, 2, &[10, 20, 30]); // original column b
        validate_i32_column(struct_result, 3, &[100, 200, 300]); // original column c
    }

    #[test]
    fn test_nested_path_transforms() {
        let nested_batch = create_nested_test_batch();

        // Test 1: Simple struct relocation (copy nested struct to top level unchanged)
        let copy_patch = ExpressionStructPatchBuilder::new_nested(["nested"]);

        let copy_output_schema = schema! {
            not_null "x": INTEGER,
            not_null "y": INTEGER,
        };

        let expr_copy = Expr::struct_patch(copy_patch).unwrap();
        let result_copy = evaluate_expression(
            &expr_copy,
            &nested_batch,
            Some(&DataType::from(copy_output_schema)),
        )
        .unwrap();

        // Verify the copy is identical to original nested struct
        let copy_result = result_copy.as_any().downcast_ref::<StructArray>().unwrap();
        let original_nested = nested_batch
            .column_by_name("nested")
            .unwrap()
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();

        for i in 0..2 {
            assert_eq!(
                copy_result.column(i).as_ref(),
                original_nested.column(i).as_ref()
            );
        }

        // Test 2: Modify nested struct and relocate it
        let modify_patch = ExpressionStructPatchBuilder::new_nested(["nested"])
            .replace("x", lit(777))
            .insert_after("y", lit(555));

        let modify_output_schema = schema! {
            not_null "x": INTEGER,
            not_null "y": INTEGER,
            not_null "new_field": INTEGER,
        };

        let expr_modify = Expr::struct_patch(modify_patch).unwrap();
        let result_modify = evaluate_expression(
            &expr_modify,
            &nested_batch,
            Some(&DataType::from(modify_output_schema)),
        )
        .unwrap();

        let modify_result = result_modify
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        assert_eq!(modify_result.num_columns(), 3);
        assert_eq!(modify_result.len(), 3);

        // Verify replaced 'x' field (literal 777)
        validate_i32_column(modify_result, 0, &[777, 777, 777]);

        // Verify passthrough 'y' field (original nested.y: [10, 20, 30])
        validate_i32_column(modify_result, 1, &[10, 20, 30]);

        // Verify inserted field (literal 555)
        validate_i32_column(modify_result, 2, &[555, 555, 555]);
    }

    #[test]
    fn test_transform_validation() {
        let batch = create_test_batch();

        // Test unused replacement keys
        let patch = ExpressionStructPatchBuilder::new().replace("missing", lit(1));
        let output_schema = schema! {
            not_null "a": INTEGER,
            not_null "b": INTEGER,
            not_null "c": INTEGER,
        };

        let expr = Expr::struct_patch(patch).unwrap();
        let result =
            evaluate_expression(&expr, &batch, Some(&DataType::from(output_schema.clone())));
        assert!(result
            .unwrap_err()
            .to_string()
            .contains("reference invalid input field names"));

        // Test unused insertion keys
        let insertion_patch =
            ExpressionStructPatchBuilder::new().insert_after("nonexistent", lit(1));

        let expr2 = Expr::struct_patch(insertion_patch).unwrap();
        let result2 =
            evaluate_expression(&expr2, &batch, Some(&DataType::from(output_schema.clone())));
        assert!(result2.is_err());
        assert!(result2
            .unwrap_err()
            .to_string()
            .contains("reference invalid input field names"));

        // Test column count mismatch -- too many output schema fields
        let drop_patch = ExpressionStructPatchBuilder::new().drop("a");

        let wrong_output_schema = schema! {
            not_null "a": INTEGER,
            not_null "b": INTEGER,
            not_null "c": INTEGER,
        };

        let expr3 = Expr::struct_patch(drop_patch).unwrap();
        let result3 =
            evaluate_expression(&expr3, &batch, Some(&DataType::from(wrong_output_schema)));
        assert!(result3.is_err());
        assert!(result3
            .unwrap_err()
            .to_string()
            .contains("Too many fields in output schema"));

        // Test column count mismatch -- too few output schema fields
        let drop_patch = ExpressionStructPatchBuilder::new().drop("a");

        let wrong_output_schema = schema! { not_null "c": INTEGER };

        let expr3 = Expr::struct_patch(drop_patch).unwrap();
        let result3 =
            evaluate_expression(&expr3, &batch, Some(&DataType::from(wrong_output_schema)));
        assert!(result3.is_err());
        assert!(result3
            .unwrap_err()
            .to_string()
            .contains("Too few fields in output schema"));

        // Test missing output schema
        let patch = ExpressionStructPatchBuilder::new();
        let expr4 = Expr::struct_patch(patch).unwrap();
        let result4 = evaluate_expression(&expr4, &batch, None);
        assert!(result4.is_err());
        assert!(result4
            .unwrap_err()
            .to_string()
            .contains("Data type is required"));
    }

    #[test]
    fn test_replacement_occupies_field_position() {
        let batch = create_test_batch();
        let output_schema = schema! {
            not_null "a": INTEGER,
            not_null "b": INTEGER,
            not_null "c": INTEGER,
        };

        let patch = ExpressionStructPatchBuilder::new().replace("a", lit(1));
        let expr = Expr::struct_patch(patch).unwrap();
        let result =
            evaluate_expression(&expr, &batch, Some(&DataType::from(output_schema.clone())))
                .unwrap();
        let result = result.as_any().downcast_ref::<StructArray>().unwrap();
        validate_i32_column(result, 0, &[1, 1, 1]);
        validate_i32_column(result, 1, &[10, 20, 30]);
        validate_i32_column(result, 2, &[100, 200, 300]);
    }

    #[test]
    fn test_drop_field_if_exists_present() {
        let batch = create_test_batch();
        let patch = ExpressionStructPatchBuilder::new().drop_if_exists("a");
        let output_schema = schema! {
            not_null "b": INTEGER,
            not_null "c": INTEGER,
        };
        let expr = Expr::struct_patch(patch).unwrap();
        let result =
            evaluate_expression(&expr, &batch, Some(&DataType::from(output_schema))).unwrap();
        let result = result.as_any().downcast_ref::<StructArray>().unwrap();
        validate_i32_column(result, 0, &[10, 20, 30]);
        validate_i32_column(result, 1, &[100, 200, 300]);
    }

    #[test]
    fn test_drop_field_if_exists_missing() {
        let batch = create_test_batch();
        let patch = ExpressionStructPatchBuilder::new().drop_if_exists("nonexistent");
        let output_schema = schema! {
            not_null "a": INTEGER,
            not_null "b": INTEGER,
            not_null "c": INTEGER,
        };
        let expr = Expr::struct_patch(patch).unwrap();
        let result =
            evaluate_expression(&expr, &batch, Some(&DataType::from(output_schema))).unwrap();
        let result = result.as_any().downcast_ref::<StructArray>().unwrap();
        validate_i32_column(result, 0, &[1, 2, 3]);
        validate_i32_column(result, 1, &[10, 20, 30]);
        validate_i32_column(result, 2, &[100, 200, 300]);
    }

    #[test]
    fn test_drop_field_non_optional_missing_still_errors() {
        let batch = create_test_batch();
        let patch = ExpressionStructPatchBuilder::new().drop("nonexistent");
        let output_schema = schema! {
            not_null "a": INTEGER,
            not_null "b": INTEGER,
            not_null "c": INTEGER,
        };
        let expr = Expr::struct_patch(patch).unwrap();
        let result = evaluate_expression(&expr, &batch, Some(&DataType::from(output_schema)));
        assert!(result
            .unwrap_err()
            .to_string()
            .contains("reference invalid input field names"));
    }

    #[test]
    fn test_struct_expression_schema_validation() {
        let batch = create_test_batch();

        let test_cases = vec![
            (
                "too many schema fields",
                Expr::struct_from([column_expr_ref!("a"), column_expr_ref!("b")]),
                schema! {
                    not_null "a": INTEGER,
                    not_null "b": INTEGER,
                    not_null "c": INTEGER,
                },
            ),
            (
                "too few schema fields",
                Expr::struct_from([
                    column_expr_ref!("a"),
                    column_expr_ref!("b"),
                    column_expr_ref!("c"),
                ]),
                schema! {
                    not_null "a": INTEGER,
                    not_null "b": INTEGER,
                },
            ),
        ];

        for (name, expr, schema) in test_cases {
            let result = evaluate_expression(&expr, &batch, Some(&DataType::from(schema)));
            assert!(result.is_err(), "Test case '{name}' should fail");
            assert!(
                result
                    .unwrap_err()
                    .to_string()
                    .contains("field count mismatch"),
                "Test case '{name}' should contain 'field count mismatch' error"
            );
        }
    }

    #[test]
    fn test_coalesce_arrays_same_type() {
        // Test with Int32 arrays
        let arr1 = Int32Array::from(vec![Some(1), None, Some(3), None, None, Some(8), None]);
        let arr2 = Int32Array::from(vec![None, Some(2), Some(4), None, Some(6), None, None]);
        let arr3 = Int32Array::from(vec![None, None, None, Some(5), Some(7), Some(9), None]);

        let result =
            coalesce_arrays(&[Arc::new(arr1), Arc::new(arr2), Arc::new(arr3)], None).unwrap();
        let result_array = result.as_any().downcast_ref::<Int32Array>().unwrap();

        assert_eq!(result_array.len(), 7);
        assert_eq!(result_array.value(0), 1); // From arr1
        assert_eq!(result_array.value(1), 2); // From arr2
        assert_eq!(result_array.value(2), 3); // From arr1
        assert_eq!(result_array.value(3), 5); // From arr3
        assert_eq!(result_array.value(4), 6); // From arr2
        assert_eq!(result_array.value(5), 8); // From arr1
        assert!(result_array.is_null(6));

        // Test with String arrays
        let str_arr1 = Arc::new(StringArray::from(vec![Some("a"), None, Some("c")]));
        let str_arr2 = Arc::new(StringArray::from(vec![None, Some("b"), None]));

        let str_result = coalesce_arrays(&[str_arr1, str_arr2], None).unwrap();
        let str_result_array = str_result.as_any().downcast_ref::<StringArray>().unwrap();

        assert_eq!(str_result_array.len(), 3);
        assert_eq!(str_result_array.value(0), "a"); // From str_arr1
        assert_eq!(str_result_array.value(1), "b"); // From str_arr2
        assert_eq!(str_result_array.value(2), "c"); // From str_arr1
    }

    #[test]
    fn test_coalesce_arrays_all_nulls() {
        let arr1 = Arc::new(Int32Array::from(vec![None, None, None]));
        let arr2 = Arc::new(Int32Array::from(vec![None, None, None]));

        let result = coalesce_arrays(&[arr1, arr2], None).unwrap();
        let result_array = result.as_any().downcast_ref::<Int32Array>().unwrap();

        assert_eq!(result_array.len(), 3);
        assert!(result_array.is_null(0));
        assert!(result_array.is_null(1));
        assert!(result_array.is_null(2));
    }

    #[test]
    fn test_coalesce_arrays_single_array() {
        let arr: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]));
        let result = coalesce_arrays(std::slice::from_ref(&arr), None).unwrap();

        // Should return the same array
        assert_eq!(result.as_ref(), arr.as_ref());
    }

    #[test]
    fn test_coalesce_arrays_type_mismatch_error() {
        // Test Int32 vs Int64 - should fail
        let int32_arr = Arc::new(Int32Array::from(vec![Some(1), None]));
        let int64_arr = Arc::new(Int64Array::from(vec![None, Some(2)]));

        let result = coalesce_arrays(&[int32_arr, int64_arr], None);
        assert_result_error_with_message(
            result,
            "Array at index 1 has type Int64, but expected Int32",
        );

        // Test Int32 vs String - should fail
        let int_arr = Arc::new(Int32Array::from(vec![Some(1)]));
        let str_arr = Arc::new(StringArray::from(vec![Some("hello")]));

        let result2 = coalesce_arrays(&[int_arr, str_arr], None);
        assert_result_error_with_message(
            result2,
            "Array at index 1 has type Utf8, but expected Int32",
        );
    }

    #[test]
    fn test_coalesce_arrays_length_mismatch_error() {
        // Test arrays with different lengths - should fail
        let arr1 = Arc::new(Int32Array::from(vec![Some(1), Some(2)]));
        let arr2 = Arc::new(Int32Array::from(vec![Some(3), Some(4), Some(5)]));

        let result = coalesce_arrays(&[arr1, arr2], None);
        assert_result_error_with_message(result, "Array at index 1 has length 3, expected 2");
    }

    #[test]
    fn test_coalesce_arrays_empty_input_error() {
        // Test with empty arrays slice - should fail
        let result = coalesce_arrays(&[], None);
        assert_result_error_with_message(result, "empty COALESCE statements");
    }

    #[test]
    fn test_coalesce_arrays_result_type_validation() {
        let arr1 = Arc::new(Int32Array::from(vec![Some(1), None]));
        let arr2 = Arc::new(Int32Array::from(vec![None, Some(2)]));

        // Test with matching result type - should succeed
        let result = coalesce_arrays(&[arr1.clone(), arr2.clone()], Some(&DataType::INTEGER));
        assert!(result.is_ok());

        // Test with mismatched result type - should fail
        let result2 = coalesce_arrays(&[arr1, arr2], Some(&DataType::STRING));
        assert_result_error_with_message(
            result2,
            "Requested result type Utf8 does not match arrays' data type Int32",
        );
    }

    #[test]
    fn test_coalesce_arrays_first_no_nulls() {
        // First array has no nulls - coalesce_arrays still works correctly
        let arr1 = Arc::new(Int32Array::from(vec![1, 2, 3])); // No nulls
        let arr2 = Arc::new(Int32Array::from(vec![10, 20, 30]));

        let result = coalesce_arrays(&[arr1.clone(), arr2], None).unwrap();
        let result_array = result.as_any().downcast_ref::<Int32Array>().unwrap();

        // Result should be arr1's values (first non-null for each row)
        assert_eq!(result_array.len(), 3);
        assert_eq!(result_array.value(0), 1);
        assert_eq!(result_array.value(1), 2);
        assert_eq!(result_array.value(2), 3);
    }

    #[test]
    fn test_coalesce_arrays_second_no_nulls() {
        // First array has nulls, second has none
        let arr1 = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]));
        let arr2 = Arc::new(Int32Array::from(vec![10, 20, 30])); // No nulls

        let result = coalesce_arrays(&[arr1, arr2], None).unwrap();
        let result_array = result.as_any().downcast_ref::<Int32Array>().unwrap();

        // Row 0: 1 (from arr1), Row 1: 20 (from arr2), Row 2: 3 (from arr1)
        assert_eq!(result_array.len(), 3);
        assert_eq!(result_array.value(0), 1);
        assert_eq!(result_array.value(1), 20);
        assert_eq!(result_array.value(2), 3);
    }

    #[test]
    fn test_coalesce_expression_short_circuit_first() {
        // Test the short-circuit optimization when first array has no nulls
        let schema = ArrowSchema::new(vec![ArrowField::new("a", ArrowDataType::Int32, false)]);
        let a_values = Int32Array::from(vec![1, 2, 3]); // No nulls
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(a_values)]).unwrap();

        // Create coalesce expression with column that has no nulls, followed by
        // a reference to a non-existent column. If short-circuit works, the
        // non-existent column is never evaluated and no error occurs.
        let expr = Expression::coalesce([col!("a"), col!("nonexistent")]);

        // Should return column "a" directly (short-circuit skips evaluating "nonexistent")
        let result = evaluate_expression(&expr, &batch, Some(&DataType::INTEGER)).unwrap();
        let result_array = result.as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(result_array.values(), &[1, 2, 3]);
    }

    #[test]
    fn test_coalesce_expression_short_circuit_second() {
        // Test short-circuit when second array has no nulls (still needs coalesce)
        let schema = ArrowSchema::new(vec![
            ArrowField::new("a", ArrowDataType::Int32, true),
            ArrowField::new("b", ArrowDataType::Int32, false),
        ]);
        let a_values = Int32Array::from(vec![Some(1), None, Some(3)]); // Has nulls
        let b_values = Int32Array::from(vec![10, 20, 30]); // No nulls
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(a_values), Arc::new(b_values)],
        )
        .unwrap();

        // Create coalesce expression: a has nulls, b has none, c doesn't exist.
        // Short-circuit should stop after evaluating b.
        let expr = Expression::coalesce([col!("a"), col!("b"), col!("nonexistent")]);

        // Should coalesce a and b, never evaluate "nonexistent"
        let result = evaluate_expression(&expr, &batch, Some(&DataType::INTEGER)).unwrap();
        let result_array = result.as_any().downcast_ref::<Int32Array>().unwrap();
        // Row 0: 1 (from a), Row 1: 20 (from b), Row 2: 3 (from a)
        assert_eq!(result_array.len(), 3);
        assert_eq!(result_array.value(0), 1);
        assert_eq!(result_array.value(1), 20);
        assert_eq!(result_array.value(2), 3);
    }

    #[test]
    fn test_coalesce_expression_short_circuit_type_mismatch() {
        // Verify type validation works when short-circuiting
        let schema = ArrowSchema::new(vec![ArrowField::new("a", ArrowDataType::Int32, false)]);
        let a_values = Int32Array::from(vec![1, 2, 3]); // No nulls - would short-circuit
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(a_values)]).unwrap();

        let expr = Expression::coalesce([col!("a")]);

        // Request STRING type but array is INT32 - should fail even with short-circuit
        let result = evaluate_expression(&expr, &batch, Some(&DataType::STRING));
        assert!(result.is_err());
    }

    #[test]
    fn test_nested_patches() {
        let nested_batch = create_nested_test_batch();

        let patch = ExpressionStructPatchBuilder::new().replace_at(["nested"], "x", lit(999));

        let output_schema = schema! {
            not_null "a": INTEGER,
            not_null "nested": {
                not_null "x": INTEGER,
                not_null "y": INTEGER,
            },
        };

        let expr = Expr::struct_patch(patch).unwrap();
        let result =
            evaluate_expression(&expr, &nested_batch, Some(&DataType::from(output_schema)))
                .unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(struct_result.num_columns(), 2);
        assert_eq!(struct_result.len(), 3);

        // Verify original field 'a' (should be [100, 200, 300])
        validate_i32_column(struct_result, 0, &[100, 200, 300]);

        // Verify nested patch replaced 'x' with literal 999 and passed through 'y' unchanged.
        let nested_struct_result = struct_result
            .column(1)
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        validate_i32_column(nested_struct_result, 0, &[999, 999, 999]);
        validate_i32_column(nested_struct_result, 1, &[10, 20, 30]);
    }

    #[test]
    fn test_literal_type_validation() {
        let batch = create_test_batch();

        // Valid: literal matches expected type
        let result = evaluate_expression(&lit(42), &batch, Some(&DataType::INTEGER));
        assert!(result.is_ok());

        // Error: literal type mismatch
        let result = evaluate_expression(&lit(42), &batch, Some(&DataType::STRING));
        assert_result_error_with_message(result, "Incorrect datatype");
    }

    #[test]
    fn test_column_type_validation() {
        let batch = create_test_batch();

        // Valid: column matches expected type
        let result = evaluate_expression(&column_expr_ref!("a"), &batch, Some(&DataType::INTEGER));
        assert!(result.is_ok());

        // Error: column type mismatch
        let result = evaluate_expression(&column_expr_ref!("a"), &batch, Some(&DataType::STRING));
        assert_result_error_with_message(result, "Incorrect datatype");
    }

    #[test]
    fn test_binary_type_validation() {
        let batch = create_test_batch();
        let add_expr = Expr::binary(BinaryExpressionOp::Plus, col!("a"), col!("b"));

        // Valid: binary result matches expected type
        let result = evaluate_expression(&add_expr, &batch, Some(&DataType::INTEGER));
        assert!(result.is_ok());

        // Error: binary result type mismatch
        let result = evaluate_expression(&add_expr, &batch, Some(&DataType::STRING));
        assert_result_error_with_message(result, "Incorrect datatype");
    }

    fn divide(left: Expr, right: Expr) -> Expr {
        Expr::binary(BinaryExpressionOp::Divide, left, right)
    }

    #[rstest]
    #[case::equal_non_null(Some(1), Some(1), false)]
    #[case::unequal_non_null(Some(1), Some(2), true)]
    #[case::both_null(None, None, false)]
    #[case::left_null(None, Some(1), true)]
    #[case::right_null(Some(1), None, true)]
    fn test_distinct_is_null_safe(
        #[case] left: Option<i32>,
        #[case] right: Option<i32>,
        #[case] expected: bool,
    ) {
        let schema = ArrowSchema::new(vec![
            ArrowField::new("l", ArrowDataType::Int32, true),
            ArrowField::new("r", ArrowDataType::Int32, true),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int32Array::from(vec![left])),
                Arc::new(Int32Array::from(vec![right])),
            ],
        )
        .unwrap();

        let pred = Pred::distinct(col!("l"), col!("r"));
        let result = evaluate_predicate(&pred, &batch, false).unwrap();
        assert_eq!(result.null_count(), 0);
        assert_eq!(result.value(0), expected);
    }

    /// The two element sources `IN` accepts, both holding `elements`: a literal `Array` scalar
    /// and a single-row `list` column. The batch also carries an `n` column (always `1`) so the
    /// needle can be a column in the operand-shape rejection test.
    fn in_element_sources(elements: &[Option<i32>]) -> (Expr, Expr, RecordBatch) {
        let scalars = elements
            .iter()
            .map(|e| e.map_or(Scalar::Null(DataType::INTEGER), Scalar::Integer));
        let literal = Expr::Literal(Scalar::Array(
            ArrayData::try_new(ArrayType::new(DataType::INTEGER, true), scalars).unwrap(),
        ));

        let item = Arc::new(ArrowField::new("item", ArrowDataType::Int32, true));
        let list = ListArray::new(
            Arc::clone(&item),
            OffsetBuffer::new(ScalarBuffer::from(vec![0i32, elements.len() as i32])),
            Arc::new(Int32Array::from(elements.to_vec())),
            None,
        );
        let schema = ArrowSchema::new(vec![
            ArrowField::new("n", ArrowDataType::Int32, true),
            ArrowField::new("list", ArrowDataType::List(item), true),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(Int32Array::from(vec![1])), Arc::new(list)],
        )
        .unwrap();
        (literal, col!("list"), batch)
    }

    /// NULL never matches because logical equality treats it as incomparable, including to itself.
    #[rstest]
    #[case::present(Some(2), &[Some(1), Some(2)], true)]
    #[case::absent(Some(9), &[Some(1), Some(2)], false)]
    #[case::null_needle(None, &[Some(1), Some(2)], false)]
    #[case::null_needle_with_null_element(None, &[Some(1), None], false)]
    #[case::null_needle_with_only_null_element(None, &[None], false)]
    #[case::present_alongside_null_element(Some(1), &[Some(1), None], true)]
    #[case::absent_alongside_null_element(Some(9), &[Some(1), None], false)]
    fn test_in_membership_never_nulls(
        #[case] needle: Option<i32>,
        #[case] elements: &[Option<i32>],
        #[case] expected: bool,
    ) {
        let (literal_source, column_source, batch) = in_element_sources(elements);
        let needle = match needle {
            Some(n) => lit(n),
            None => null_lit(DataType::INTEGER),
        };
        for elements in [literal_source, column_source] {
            let pred = Pred::binary(BinaryPredicateOp::In, needle.clone(), elements);
            let result = evaluate_predicate(&pred, &batch, false).unwrap();
            assert_eq!(result.null_count(), 0);
            assert_eq!(result.value(0), expected);

            // `IN` never produces NULL, so `NOT IN` is always its exact complement.
            let result = evaluate_predicate(&Pred::not(pred), &batch, false).unwrap();
            assert_eq!(result.null_count(), 0);
            assert_eq!(result.value(0), !expected);
        }
    }

    /// Nested elements (struct, array, map) have no logical comparison, See
    /// [`Scalar::logical_partial_cmp`].
    #[rstest]
    #[case::struct_element(Scalar::Struct(
        StructData::try_new(
            vec![StructField::nullable("a", DataType::INTEGER)],
            vec![Scalar::Integer(1)],
        )
        .unwrap(),
    ))]
    #[case::array_element(Scalar::Array(
        ArrayData::try_new(ArrayType::new(DataType::INTEGER, true), vec![1, 2]).unwrap(),
    ))]
    #[case::map_element(Scalar::Map(
        MapData::try_new(
            MapType::new(DataType::STRING, DataType::INTEGER, false),
            vec![("k", 1)],
        )
        .unwrap(),
    ))]
    fn test_in_nested_element_never_matches(#[case] needle: Scalar) {
        // A single-element literal array holding a structurally identical copy of the needle.
        let elements = ArrayData::try_new(
            ArrayType::new(needle.data_type(), true),
            vec![needle.clone()],
        )
        .unwrap();

        let (_, _, batch) = in_element_sources(&[Some(1)]);
        let pred = Pred::binary(
            BinaryPredicateOp::In,
            Expr::Literal(needle),
            Expr::Literal(Scalar::Array(elements)),
        );
        let result = evaluate_predicate(&pred, &batch, false).unwrap();
        assert_eq!(result.null_count(), 0);
        assert!(!result.value(0));
    }

    /// Only a literal left operand is supported, so a column needle is rejected regardless of where
    /// the elements come from, as is a right operand that holds no elements at all.
    #[rstest]
    #[case::column_in_literal_array(in_element_sources(&[Some(1), Some(2)]).0)]
    #[case::column_in_column(in_element_sources(&[Some(1), Some(2)]).1)]
    #[case::non_array_right_operand(lit(1))]
    fn test_in_rejects_unsupported_operand_shapes(#[case] right: Expr) {
        let (.., batch) = in_element_sources(&[Some(1), Some(2)]);
        let pred = Pred::binary(BinaryPredicateOp::In, col!("n"), right);
        assert_result_error_with_message(
            evaluate_predicate(&pred, &batch, false),
            "Invalid right value for (NOT) IN comparison",
        );
    }

    #[rstest]
    #[case::is_null(false, &[false, true])]
    #[case::is_not_null(true, &[true, false])]
    fn test_is_null_never_yields_null(#[case] inverted: bool, #[case] expected: &[bool]) {
        let schema = ArrowSchema::new(vec![ArrowField::new("n", ArrowDataType::Int32, true)]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(Int32Array::from(vec![Some(1), None]))],
        )
        .unwrap();

        let pred = Pred::is_null(col!("n"));
        let result = evaluate_predicate(&pred, &batch, inverted).unwrap();
        assert_eq!(result.null_count(), 0);
        assert_eq!(result.values().iter().collect::<Vec<_>>(), expected);
    }

    #[rstest]
    #[case::and_false_beats_null(JunctionPredicateOp::And, Some(false), None, Some(false))]
    #[case::and_null_left_false_right(JunctionPredicateOp::And, None, Some(false), Some(false))]
    #[case::and_true_with_null_is_null(JunctionPredicateOp::And, Some(true), None, None)]
    #[case::and_both_null_is_null(JunctionPredicateOp::And, None, None, None)]
    #[case::or_true_beats_null(JunctionPredicateOp::Or, Some(true), None, Some(true))]
    #[case::or_null_left_true_right(JunctionPredicateOp::Or, None, Some(true), Some(true))]
    #[case::or_false_with_null_is_null(JunctionPredicateOp::Or, Some(false), None, None)]
    #[case::or_both_null_is_null(JunctionPredicateOp::Or, None, None, None)]
    fn test_junction_uses_kleene_logic(
        #[case] op: JunctionPredicateOp,
        #[case] left: Option<bool>,
        #[case] right: Option<bool>,
        #[case] expected: Option<bool>,
    ) {
        let schema = ArrowSchema::new(vec![ArrowField::new("x", ArrowDataType::Int32, false)]);
        let batch =
            RecordBatch::try_new(Arc::new(schema), vec![Arc::new(Int32Array::from(vec![1]))])
                .unwrap();

        let operand = |v: Option<bool>| match v {
            Some(b) => Pred::literal(b),
            None => Pred::NULL,
        };
        let pred = Pred::junction(op, [operand(left), operand(right)]);

        let result = evaluate_predicate(&pred, &batch, false).unwrap();
        let actual = result.is_valid(0).then(|| result.value(0));
        assert_eq!(actual, expected);
    }

    #[test]
    fn test_divide_integer_truncates_and_rejects_zero_divisor() {
        let schema = ArrowSchema::new(vec![
            ArrowField::new("n", ArrowDataType::Int32, false),
            ArrowField::new("d", ArrowDataType::Int32, false),
            ArrowField::new("zero", ArrowDataType::Int32, false),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int32Array::from(vec![7])),
                Arc::new(Int32Array::from(vec![2])),
                Arc::new(Int32Array::from(vec![0])),
            ],
        )
        .unwrap();

        let quotient = evaluate_expression(
            &divide(col!("n"), col!("d")),
            &batch,
            Some(&DataType::INTEGER),
        )
        .unwrap();
        assert_eq!(
            quotient.as_any().downcast_ref::<Int32Array>().unwrap(),
            &Int32Array::from(vec![3])
        );

        let result = evaluate_expression(
            &divide(col!("n"), col!("zero")),
            &batch,
            Some(&DataType::INTEGER),
        );
        assert_result_error_with_message(result, "Divide by zero");
    }

    #[test]
    fn test_divide_float_by_zero_yields_infinity_and_nan() {
        let schema = ArrowSchema::new(vec![
            ArrowField::new("n", ArrowDataType::Float64, false),
            ArrowField::new("zero", ArrowDataType::Float64, false),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Float64Array::from(vec![7.0])),
                Arc::new(Float64Array::from(vec![0.0])),
            ],
        )
        .unwrap();

        let eval = |expr| {
            let array = evaluate_expression(&expr, &batch, Some(&DataType::DOUBLE)).unwrap();
            assert_eq!(array.null_count(), 0);
            array
                .as_any()
                .downcast_ref::<Float64Array>()
                .unwrap()
                .value(0)
        };

        assert!(eval(divide(col!("n"), col!("zero"))).is_infinite());
        assert!(eval(divide(col!("zero"), col!("zero"))).is_nan());
    }

    fn create_json_batch() -> RecordBatch {
        let schema = ArrowSchema::new(vec![ArrowField::new("json_col", ArrowDataType::Utf8, true)]);
        let json_strings = StringArray::from(vec![
            Some(r#"{"a": 1, "b": "hello"}"#),
            Some(r#"{"a": 2, "b": "world"}"#),
            Some(r#"{"a": 3, "b": "test"}"#),
        ]);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(json_strings)]).unwrap()
    }

    #[rstest]
    #[case::keeps_on_true(Some(true), false)]
    #[case::nulls_on_false(Some(false), true)]
    #[case::nulls_on_null(None, true)]
    fn test_struct_nullability_predicate_keeps_only_true_rows(
        #[case] predicate: Option<bool>,
        #[case] expect_null_struct: bool,
    ) {
        let schema = ArrowSchema::new(vec![
            ArrowField::new("v", ArrowDataType::Int32, true),
            ArrowField::new("p", ArrowDataType::Boolean, true),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(BooleanArray::from(vec![predicate])),
            ],
        )
        .unwrap();

        let output_type = DataType::from(schema! { nullable "v": INTEGER });
        let expr = Expr::struct_with_nullability_from(
            [Arc::new(col!("v"))],
            Arc::new(Expr::from_pred(Pred::from_expr(col!("p")))),
        );

        let result = evaluate_expression(&expr, &batch, Some(&output_type)).unwrap();
        let result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(result.is_null(0), expect_null_struct);
    }

    /// Delta truncates timestamp stats down to milliseconds, so `ToJson` must emit exactly three
    /// fractional digits, floored: a max stat above the true value lets readers prune a file that
    /// still holds a matching row. `Timestamp` carries a `Z` suffix, `TimestampNtz` none.
    #[rstest]
    // Sub-millisecond digits are dropped, not rounded (.298677 -> .298).
    #[case::micros_dropped(1_783_007_755_298_677, "2026-07-02T15:55:55.298")]
    // A value that would carry to the next second if the formatter rounded instead of truncating.
    #[case::no_round_up(1_783_007_755_999_900, "2026-07-02T15:55:55.999")]
    // Pre-epoch: -1500us must floor to -2ms (.998), not truncate toward zero to -1ms (.999).
    #[case::pre_epoch_floors(-1_500, "1969-12-31T23:59:59.998")]
    // Whole milliseconds keep their trailing zeros rather than collapsing to fewer digits.
    #[case::exact_millis(1_783_007_755_000_000, "2026-07-02T15:55:55.000")]
    fn test_to_json_truncates_timestamps_to_milliseconds(
        #[case] micros: i64,
        #[case] expected: &str,
        #[values(None, Some("UTC"))] timezone: Option<&str>,
    ) {
        let array = TimestampMicrosecondArray::from(vec![micros]);
        let array: ArrayRef = match timezone {
            Some(tz) => Arc::new(array.with_timezone(tz)),
            None => Arc::new(array),
        };
        let field = ArrowField::new("ts", array.data_type().clone(), true);
        let value = StructArray::from(vec![(Arc::new(field), array)]);

        // A UTC-annotated array renders the protocol's `Z` suffix; NTZ has no offset at all.
        let suffix = if timezone.is_some() { "Z" } else { "" };
        assert_eq!(
            to_json_string(value),
            format!(r#"{{"ts":"{expected}{suffix}"}}"#)
        );
    }

    /// A Delta `TIMESTAMP` stat is always UTC, so every spelling of the UTC annotation must render
    /// the same literal `Z` form rather than a numeric offset a strict reader would reject. Nested
    /// too, since arrow applies the format per array at any depth.
    #[rstest]
    fn test_to_json_renders_utc_timestamps_with_a_z_suffix(
        #[values("UTC", "Etc/UTC", "+00:00")] timezone: &str,
    ) {
        let expected = "2026-07-02T15:55:55.298Z";
        let ts = Arc::new(
            TimestampMicrosecondArray::from(vec![1_783_007_755_298_677i64]).with_timezone(timezone),
        ) as ArrayRef;
        let leaf = ArrowField::new("ts", ts.data_type().clone(), true);
        let inner = StructArray::from(vec![(Arc::new(leaf), ts)]);

        let nested_field = ArrowField::new("minValues", inner.data_type().clone(), true);
        let outer = StructArray::from(vec![(
            Arc::new(nested_field),
            Arc::new(inner.clone()) as ArrayRef,
        )]);

        for (value, expected) in [
            (inner, format!(r#"{{"ts":"{expected}"}}"#)),
            (outer, format!(r#"{{"minValues":{{"ts":"{expected}"}}}}"#)),
        ] {
            assert_eq!(to_json_string(value), expected, "timezone {timezone}");
        }
    }

    /// Evaluates `ToJson` over a one-column batch wrapping `value` and returns the encoded row.
    fn to_json_string(value: StructArray) -> String {
        let schema = ArrowSchema::new(vec![ArrowField::new("s", value.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(value)]).unwrap();
        let expr = Expr::unary(UnaryExpressionOp::ToJson, col!("s"));
        let result = evaluate_expression(&expr, &batch, Some(&DataType::STRING)).unwrap();
        let result = result.as_any().downcast_ref::<StringArray>().unwrap();
        result.value(0).to_string()
    }

    /// Base64 would render `0xABCD` as `q80=`.
    #[test]
    fn test_to_json_encodes_binary_as_hex_and_nests_structs_and_arrays() {
        let item = Arc::new(ArrowField::new("item", ArrowDataType::Int32, true));
        let list = ListArray::new(
            Arc::clone(&item),
            OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 2])),
            Arc::new(Int32Array::from(vec![1, 2])),
            None,
        );
        let inner = Fields::from(vec![Arc::new(ArrowField::new(
            "z",
            ArrowDataType::Int32,
            true,
        ))]);
        let nested = StructArray::new(
            inner.clone(),
            vec![Arc::new(Int32Array::from(vec![7]))],
            None,
        );
        let fields = Fields::from(vec![
            Arc::new(ArrowField::new("b", ArrowDataType::Binary, true)),
            Arc::new(ArrowField::new("l", ArrowDataType::List(item), true)),
            Arc::new(ArrowField::new("n", ArrowDataType::Struct(inner), true)),
        ]);
        let value = StructArray::new(
            fields.clone(),
            vec![
                Arc::new(BinaryArray::from(vec![&[0xABu8, 0xCDu8][..]])),
                Arc::new(list),
                Arc::new(nested),
            ],
            None,
        );
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "s",
            ArrowDataType::Struct(fields),
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(value)]).unwrap();

        let expr = Expr::unary(UnaryExpressionOp::ToJson, col!("s"));
        let result = evaluate_expression(&expr, &batch, Some(&DataType::STRING)).unwrap();
        let result = result.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(result.value(0), r#"{"b":"abcd","l":[1,2],"n":{"z":7}}"#);
    }

    /// An empty string is not valid JSON, so it does not parse to an empty struct. A NULL input
    /// decodes as `{}` and leaves the batch intact.
    ///
    /// Nulling the whole batch for one unparseable row is a limitation rather than a guarantee: the
    /// `arrow-json` error names no row, so the fallback can only blanket the array it was given,
    /// discarding stats from rows that parsed fine.
    #[rstest]
    #[case::empty_string(vec![Some("")], 1)]
    #[case::malformed(vec![Some("{not json")], 1)]
    #[case::one_bad_input_nulls_whole_batch(vec![Some(""), Some(r#"{"a":1}"#)], 2)]
    #[case::null_input_is_empty_object(vec![None], 0)]
    fn test_parse_json_permissively_nulls_unparseable_batches(
        #[case] input: Vec<Option<&str>>,
        #[case] expected_null_count: usize,
    ) {
        let output_schema = schema_ref! {
            nullable "a": LONG,
        };
        let schema = ArrowSchema::new(vec![ArrowField::new("s", ArrowDataType::Utf8, true)]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(StringArray::from(input.clone()))],
        )
        .unwrap();

        let expr = Expr::parse_json(col!("s"), output_schema);
        let result = evaluate_expression(&expr, &batch, None).expect("parses permissively");
        assert_eq!(result.len(), input.len());
        assert_eq!(result.null_count(), expected_null_count);
    }

    #[test]
    fn test_parse_json_basic() {
        let batch = create_json_batch();

        // Define the output schema for parsing
        let output_schema = schema_ref! {
            nullable "a": LONG,
            nullable "b": STRING,
        };

        let expr = Expr::parse_json(col!("json_col"), output_schema);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(struct_result.num_columns(), 2);
        assert_eq!(struct_result.len(), 3);

        // Verify 'a' column (Long values)
        let a_col = struct_result
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(a_col.values(), &[1, 2, 3]);

        // Verify 'b' column (String values)
        let b_col = struct_result
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(b_col.value(0), "hello");
        assert_eq!(b_col.value(1), "world");
        assert_eq!(b_col.value(2), "test");
    }

    #[rstest]
    fn test_extract_variant_column_preserves_binary_representation(
        #[values(
            ArrowDataType::Binary,
            ArrowDataType::LargeBinary,
            ArrowDataType::BinaryView
        )]
        binary_type: ArrowDataType,
    ) {
        let metadata = cast(
            &BinaryArray::from(vec![&[0x01, 0x00, 0x00][..]]),
            &binary_type,
        )
        .unwrap();
        let value = cast(&BinaryArray::from(vec![&[0x0C, 0x01][..]]), &binary_type).unwrap();
        let fields: Fields = vec![
            ArrowField::new("metadata", binary_type.clone(), false),
            ArrowField::new("value", binary_type, false),
        ]
        .into();
        let variant_arrow_type = ArrowDataType::Struct(fields.clone());
        let variant = StructArray::try_new(fields, vec![metadata, value], None).unwrap();
        let schema = ArrowSchema::new(vec![ArrowField::new("v", variant_arrow_type.clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(variant)]).unwrap();

        let result =
            evaluate_expression(&col!("v"), &batch, Some(&DataType::unshredded_variant())).unwrap();

        assert_eq!(result.data_type(), &variant_arrow_type);
    }

    #[test]
    fn test_parse_json_large_string_array() {
        // See issue#1923: parse_json should handle LargeStringArray (64-bit offsets)
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "json_col",
            ArrowDataType::LargeUtf8,
            true,
        )]);
        let json_strings = LargeStringArray::from(vec![
            Some(r#"{"a": 1, "b": "hello"}"#),
            Some(r#"{"a": 2, "b": "world"}"#),
            Some(r#"{"a": 3, "b": "test"}"#),
        ]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(json_strings)]).unwrap();

        let output_schema = schema_ref! {
            nullable "a": LONG,
            nullable "b": STRING,
        };

        let expr = Expr::parse_json(col!("json_col"), output_schema);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(struct_result.num_columns(), 2);
        assert_eq!(struct_result.len(), 3);

        let a_col = struct_result
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(a_col.values(), &[1, 2, 3]);

        let b_col = struct_result
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(b_col.value(0), "hello");
        assert_eq!(b_col.value(1), "world");
        assert_eq!(b_col.value(2), "test");
    }

    #[test]
    fn test_parse_json_nested_struct() {
        let schema = ArrowSchema::new(vec![ArrowField::new("json_col", ArrowDataType::Utf8, true)]);
        let json_strings = StringArray::from(vec![
            Some(r#"{"outer": 10, "inner": {"x": 1, "y": 2}}"#),
            Some(r#"{"outer": 20, "inner": {"x": 3, "y": 4}}"#),
        ]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(json_strings)]).unwrap();

        // Define nested output schema
        let output_schema = schema_ref! {
            nullable "outer": LONG,
            nullable "inner": {
                nullable "x": LONG,
                nullable "y": LONG,
            },
        };

        let expr = Expr::parse_json(col!("json_col"), output_schema);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(struct_result.num_columns(), 2);
        assert_eq!(struct_result.len(), 2);

        // Verify 'outer' column
        let outer_col = struct_result
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(outer_col.values(), &[10, 20]);

        // Verify nested 'inner' struct
        let inner_struct = struct_result
            .column(1)
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        let x_col = inner_struct
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let y_col = inner_struct
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(x_col.values(), &[1, 3]);
        assert_eq!(y_col.values(), &[2, 4]);
    }

    #[test]
    fn test_parse_json_with_nulls() {
        let schema = ArrowSchema::new(vec![ArrowField::new("json_col", ArrowDataType::Utf8, true)]);
        // NULL JSON strings are treated as empty objects {}
        let json_strings = StringArray::from(vec![Some(r#"{"a": 1}"#), None, Some(r#"{"a": 3}"#)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(json_strings)]).unwrap();

        let output_schema = schema_ref! { nullable "a": LONG };

        let expr = Expr::parse_json(col!("json_col"), output_schema);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(struct_result.len(), 3);

        let a_col = struct_result
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        // Row 0 has value 1, row 1 is null (from empty {}), row 2 has value 3
        assert!(!a_col.is_null(0));
        assert_eq!(a_col.value(0), 1);
        assert!(a_col.is_null(1)); // NULL JSON string -> empty object -> null field
        assert!(!a_col.is_null(2));
        assert_eq!(a_col.value(2), 3);
    }

    #[test]
    fn test_parse_json_empty_batch() {
        let schema = ArrowSchema::new(vec![ArrowField::new("json_col", ArrowDataType::Utf8, true)]);
        let json_strings: StringArray = StringArray::from(Vec::<Option<&str>>::new());
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(json_strings)]).unwrap();

        let output_schema = schema_ref! { nullable "a": LONG };

        let expr = Expr::parse_json(col!("json_col"), output_schema);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(struct_result.len(), 0);
    }

    #[test]
    fn test_parse_json_missing_field() {
        // JSON objects are missing field "b" that the schema expects
        let schema = ArrowSchema::new(vec![ArrowField::new("json_col", ArrowDataType::Utf8, true)]);
        let json_strings = StringArray::from(vec![
            Some(r#"{"a": 1}"#),            // missing "b"
            Some(r#"{"a": 2, "b": "hi"}"#), // has both
            Some(r#"{"a": 3}"#),            // missing "b"
        ]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(json_strings)]).unwrap();

        let output_schema = schema_ref! {
            nullable "a": LONG,
            nullable "b": STRING,
        };

        let expr = Expr::parse_json(col!("json_col"), output_schema);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(struct_result.len(), 3);

        // 'a' column should have all values
        let a_col = struct_result
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(a_col.values(), &[1, 2, 3]);

        // 'b' column should have NULLs where missing
        let b_col = struct_result
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert!(b_col.is_null(0)); // missing in JSON
        assert_eq!(b_col.value(1), "hi");
        assert!(b_col.is_null(2)); // missing in JSON
    }

    #[test]
    fn test_parse_json_extra_field_ignored() {
        // JSON has extra field "c" not in schema - should be ignored
        let schema = ArrowSchema::new(vec![ArrowField::new("json_col", ArrowDataType::Utf8, true)]);
        let json_strings = StringArray::from(vec![
            Some(r#"{"a": 1, "b": "x", "c": "extra"}"#),
            Some(r#"{"a": 2, "b": "y", "ignored": 999}"#),
        ]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(json_strings)]).unwrap();

        // Schema only asks for "a" and "b"
        let output_schema = schema_ref! {
            nullable "a": LONG,
            nullable "b": STRING,
        };

        let expr = Expr::parse_json(col!("json_col"), output_schema);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(struct_result.num_columns(), 2); // Only 2 columns, not 3
        assert_eq!(struct_result.len(), 2);

        let a_col = struct_result
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(a_col.values(), &[1, 2]);

        let b_col = struct_result
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(b_col.value(0), "x");
        assert_eq!(b_col.value(1), "y");
    }

    #[test]
    fn test_parse_json_strict_leaf_errors_fall_back_to_all_null_struct() {
        // ParseJson is used for stats parsing. Type-parse failures on strict leaves still hit
        // the coarse swallow inside the ParseJson arm, which returns an all-null struct so
        // data skipping degrades to "include the file" rather than failing the query.
        // Per-cell NULLs on failure-prone leaves (Timestamp/Date/Decimal) are tested in
        // `engine::arrow_utils::tests::test_parse_json_safe_cast_*` and do NOT go through
        // this fallback.
        let schema = ArrowSchema::new(vec![ArrowField::new("json_col", ArrowDataType::Utf8, true)]);
        let json_strings: Vec<Option<&str>> = vec![Some(r#"{"a": "not_a_number"}"#)];
        let len = json_strings.len();
        let json_arr = StringArray::from(json_strings);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(json_arr)]).unwrap();

        let output_schema = schema_ref! { nullable "a": LONG };
        let expr = Expr::parse_json(col!("json_col"), output_schema);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        assert_eq!(result.len(), len);
        assert_eq!(result.null_count(), len);
    }

    // ==================== MapToStruct Tests ====================

    /// Helper: creates a RecordBatch with a `pv` column of type Map<String, String>.
    fn create_partition_map_batch() -> RecordBatch {
        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());

        // Row 0: {"date": "2024-01-15", "region": "us", "id": "42"}
        builder.keys().append_value("date");
        builder.values().append_value("2024-01-15");
        builder.keys().append_value("region");
        builder.values().append_value("us");
        builder.keys().append_value("id");
        builder.values().append_value("42");
        builder.append(true).unwrap();

        // Row 1: {"date": "", "region": "eu", "id": "-7"}
        builder.keys().append_value("date");
        builder.values().append_value("");
        builder.keys().append_value("region");
        builder.values().append_value("eu");
        builder.keys().append_value("id");
        builder.values().append_value("-7");
        builder.append(true).unwrap();

        // Row 2: null map
        builder.append(false).unwrap();

        let map_array = builder.finish();
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "pv",
            map_array.data_type().clone(),
            true,
        )]);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(map_array)]).unwrap()
    }

    #[test]
    fn test_map_to_struct_basic() {
        use crate::arrow::array::Date32Array;

        let batch = create_partition_map_batch();
        let output_schema = schema! {
            nullable "region": STRING,
            nullable "id": INTEGER,
            nullable "date": DATE,
        };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("pv"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type)).unwrap();
        let structs = result.as_any().downcast_ref::<StructArray>().unwrap();

        let regions = structs
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        let ids = structs
            .column(1)
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        let dates = structs
            .column(2)
            .as_any()
            .downcast_ref::<Date32Array>()
            .unwrap();

        // Row 0: all values present and parseable
        assert_eq!(regions.value(0), "us");
        assert_eq!(ids.value(0), 42);
        assert_eq!(dates.value(0), 19737); // 2024-01-15

        // Row 1: date is empty string → null, region and id are valid
        assert_eq!(regions.value(1), "eu");
        assert_eq!(ids.value(1), -7);
        assert!(dates.is_null(1));

        // Row 2: null map → all null
        assert!(regions.is_null(2));
        assert!(ids.is_null(2));
        assert!(dates.is_null(2));
    }

    #[test]
    fn test_map_to_struct_missing_key() {
        let batch = create_partition_map_batch();
        let output_schema = schema! { nullable "nonexistent": STRING };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("pv"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type)).unwrap();
        let structs = result.as_any().downcast_ref::<StructArray>().unwrap();
        let col = structs
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert!(col.is_null(0));
        assert!(col.is_null(1));
        assert!(col.is_null(2));
    }

    #[test]
    fn test_map_to_struct_ignores_undeclared_key() {
        // A partition map can carry a key for a column the current schema no longer declares
        // (a dropped or repartitioned column). MapToStruct projects only the declared output
        // fields and ignores undeclared keys rather than erroring on them.
        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        builder.keys().append_value("region");
        builder.values().append_value("us");
        builder.keys().append_value("created_at"); // dropped partition column, not in schema
        builder.values().append_value("2024-01-15");
        builder.append(true).unwrap();

        let map_array = builder.finish();
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "pv",
            map_array.data_type().clone(),
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(map_array)]).unwrap();

        let output_schema = schema! { nullable "region": STRING };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("pv"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type)).unwrap();
        let structs = result.as_any().downcast_ref::<StructArray>().unwrap();

        // Only the declared `region` field is emitted; the undeclared `created_at` key is ignored.
        assert_eq!(structs.num_columns(), 1);
        let regions = structs
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(regions.value(0), "us");
    }

    #[test]
    fn test_map_to_struct_parse_error() {
        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        builder.keys().append_value("count");
        builder.values().append_value("not_a_number");
        builder.append(true).unwrap();

        let map_array = builder.finish();
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "pv",
            map_array.data_type().clone(),
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(map_array)]).unwrap();

        let output_schema = schema! { nullable "count": INTEGER };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("pv"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type));
        assert!(result.is_err());
    }

    #[test]
    fn test_map_to_struct_timestamp_offset_normalized_to_utc() {
        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        builder.keys().append_value("ts");
        builder.values().append_value("2024-06-15T14:30:00+05:00");
        builder.append(true).unwrap();

        let map_array = builder.finish();
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "pv",
            map_array.data_type().clone(),
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(map_array)]).unwrap();

        let output_schema = schema! { nullable "ts": TIMESTAMP };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("pv"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type)).unwrap();
        let structs = result.as_any().downcast_ref::<StructArray>().unwrap();
        let ts = structs
            .column(0)
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        assert_eq!(ts.value(0), 1718443800000000); // 2024-06-15T09:30:00Z
    }

    fn evaluate_map_to_struct_field(
        raw: &str,
        target: DataType,
        timestamp_timezone: Option<&str>,
    ) -> KernelResult<ArrayRef> {
        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        builder.keys().append_value("ts");
        builder.values().append_value(raw);
        builder.append(true).unwrap();
        let map = builder.finish();
        let schema = ArrowSchema::new(vec![ArrowField::new("pv", map.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(map)]).unwrap();
        let output_schema = StructType::new_unchecked(vec![StructField::nullable("ts", target)]);
        let result_type = DataType::from(output_schema);
        let options = timestamp_timezone.map_or_else(MapToStructOptions::default, |timezone| {
            MapToStructOptions::default().with_timestamp_timezone(timezone)
        });
        let expr = Expr::map_to_struct(col!("pv"), options);
        let result = evaluate_expression(&expr, &batch, Some(&result_type))?;
        let result = result.as_any().downcast_ref::<StructArray>().unwrap();
        Ok(result.column(0).clone())
    }

    fn evaluate_map_timestamp_timezone(
        raw: &str,
        target: DataType,
        timestamp_timezone: Option<&str>,
    ) -> KernelResult<Option<i64>> {
        let field = evaluate_map_to_struct_field(raw, target, timestamp_timezone)?;
        let timestamps = field
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        Ok(timestamps.is_valid(0).then(|| timestamps.value(0)))
    }

    #[rstest]
    #[case::default_compatibility(
        None,
        "2024-01-15 12:30:45.123456",
        "2024-01-15T12:30:45.123456Z"
    )]
    #[case::iana_winter(
        Some("America/Los_Angeles"),
        "2024-01-15 12:30:45.123456",
        "2024-01-15T20:30:45.123456Z"
    )]
    #[case::iana_summer(
        Some("America/Los_Angeles"),
        "2024-06-15 08:00:00.500500",
        "2024-06-15T15:00:00.500500Z"
    )]
    #[case::fixed_minute_offset(
        Some("+05:30"),
        "2024-01-15 12:30:45.123456",
        "2024-01-15T07:00:45.123456Z"
    )]
    #[case::positive_fixed_offset_limit(
        Some("+18:00"),
        "2024-01-15 12:30:45.123456",
        "2024-01-14T18:30:45.123456Z"
    )]
    #[case::negative_fixed_offset_limit(
        Some("-18:00"),
        "2024-01-15 12:30:45.123456",
        "2024-01-16T06:30:45.123456Z"
    )]
    #[case::explicit_input_offset(
        Some("America/Los_Angeles"),
        "2024-01-15 12:30:45+02:00",
        "2024-01-15T10:30:45Z"
    )]
    #[case::explicit_input_offset_over_fixed_reader(
        Some("+05:30"),
        "2024-01-15 12:30:45+02:00",
        "2024-01-15T10:30:45Z"
    )]
    #[case::normalized_utc(
        Some("America/Los_Angeles"),
        "2024-01-15T12:30:45.123456Z",
        "2024-01-15T12:30:45.123456Z"
    )]
    #[case::embedded_iana_timezone(
        Some("Europe/Berlin"),
        "2024-01-15 12:30:45 America/New_York",
        "2024-01-15T17:30:45Z"
    )]
    #[case::embedded_iana_timezone_with_default_options(
        None,
        "2024-01-15 12:30:45 America/New_York",
        "2024-01-15T17:30:45Z"
    )]
    #[case::dst_overlap(
        Some("America/Los_Angeles"),
        "2024-11-03 01:30:00",
        "2024-11-03T08:30:00Z"
    )]
    #[case::dst_gap(
        Some("America/Los_Angeles"),
        "2024-03-10 02:30:00",
        "2024-03-10T10:30:00Z"
    )]
    #[case::thirty_minute_dst_gap(
        Some("Australia/Lord_Howe"),
        "2024-10-06 02:15:00",
        "2024-10-05T15:45:00Z"
    )]
    #[case::skipped_day(Some("Pacific/Apia"), "2011-12-30 12:00:00", "2011-12-30T22:00:00Z")]
    fn test_map_to_struct_timestamp_timezone(
        #[case] timestamp_timezone: Option<&str>,
        #[case] raw: &str,
        #[case] expected: &str,
    ) {
        assert_eq!(
            evaluate_map_timestamp_timezone(raw, DataType::TIMESTAMP, timestamp_timezone).unwrap(),
            Some(expected_timestamp_micros(expected))
        );
    }

    #[test]
    fn test_map_to_struct_timestamp_timezone_does_not_affect_timestamp_ntz() {
        let raw = "2024-01-15 12:30:45.123456";
        assert_eq!(
            evaluate_map_timestamp_timezone(
                raw,
                DataType::TIMESTAMP_NTZ,
                Some("America/Los_Angeles")
            )
            .unwrap(),
            Some(expected_timestamp_micros("2024-01-15T12:30:45.123456Z"))
        );
    }

    #[rstest]
    #[case::default(None)]
    #[case::configured(Some("America/Los_Angeles"))]
    fn test_map_to_struct_timestamp_timezone_does_not_affect_date(
        #[case] timestamp_timezone: Option<&str>,
    ) {
        let field =
            evaluate_map_to_struct_field("2024-01-15", DataType::DATE, timestamp_timezone).unwrap();
        let dates = field.as_any().downcast_ref::<Date32Array>().unwrap();
        assert_eq!(dates.value(0), 19_737);
    }

    #[test]
    fn test_map_to_struct_timestamp_timezone_reports_invalid_inputs() {
        for timezone in [
            "Not/AZone",
            "+05",
            "+0530",
            "+05:60",
            "+18:00:01",
            "+19:00",
            "+05:00:60",
            "+05:00:00:00",
        ] {
            let error = evaluate_map_timestamp_timezone(
                "2024-01-15 12:30:45",
                DataType::TIMESTAMP,
                Some(timezone),
            )
            .unwrap_err();
            assert!(error.to_string().contains(timezone));
        }

        assert!(matches!(
            evaluate_map_timestamp_timezone(
                "not a timestamp",
                DataType::TIMESTAMP,
                Some("America/Los_Angeles")
            ),
            Err(KernelError::ParseError(..))
        ));
        assert!(matches!(
            evaluate_map_timestamp_timezone(
                "2024-01-15 12:30:45+02:00 America/New_York",
                DataType::TIMESTAMP,
                None,
            ),
            Err(KernelError::ParseError(..))
        ));
    }

    #[test]
    fn test_map_to_struct_duplicate_keys() {
        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        builder.keys().append_value("x");
        builder.values().append_value("first");
        builder.keys().append_value("x");
        builder.values().append_value("last");
        builder.append(true).unwrap();

        let map_array = builder.finish();
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "pv",
            map_array.data_type().clone(),
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(map_array)]).unwrap();

        let output_schema = schema! { nullable "x": STRING };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("pv"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type)).unwrap();
        let structs = result.as_any().downcast_ref::<StructArray>().unwrap();
        let col = structs
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        // The current implementation selects the rightmost entry. The public contract leaves
        // duplicate-key behavior undefined because partitionValues maps must not contain them.
        assert_eq!(col.value(0), "last");
    }

    #[rstest]
    #[case::mixed_nulls(
        vec![
            Some(vec![("region", "us"), ("id", "42")]),
            None,
            Some(vec![("region", "eu"), ("id", "7")]),
        ],
        vec![true, false, true],
    )]
    #[case::all_nulls(vec![None, None], vec![false, false])]
    fn test_map_to_struct_null_propagation_with_non_nullable_fields(
        #[case] rows: Vec<Option<Vec<(&str, &str)>>>,
        #[case] expected_validity: Vec<bool>,
    ) {
        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        for row in &rows {
            match row {
                Some(entries) => {
                    for (k, v) in entries {
                        builder.keys().append_value(k);
                        builder.values().append_value(v);
                    }
                    builder.append(true).unwrap();
                }
                None => {
                    builder.append(false).unwrap();
                }
            }
        }
        let map_array = builder.finish();
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "pv",
            map_array.data_type().clone(),
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(map_array)]).unwrap();

        let output_schema = schema! {
            not_null "region": STRING,
            not_null "id": INTEGER,
        };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("pv"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type)).unwrap();
        let structs = result.as_any().downcast_ref::<StructArray>().unwrap();

        assert_eq!(structs.len(), expected_validity.len());
        for (i, &valid) in expected_validity.iter().enumerate() {
            assert_eq!(structs.is_valid(i), valid, "row {i} validity mismatch");
        }
    }

    #[test]
    fn test_coalesce_map_to_struct_with_null_map_non_nullable_fields() {
        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        builder.keys().append_value("date");
        builder.values().append_value("2024-01-15");
        builder.append(true).unwrap();
        builder.append(false).unwrap();

        let map_array = builder.finish();
        let map_type = map_array.data_type().clone();
        let schema = Arc::new(ArrowSchema::new(vec![
            ArrowField::new(
                "pv_parsed",
                ArrowDataType::Struct(
                    vec![ArrowField::new("date", ArrowDataType::Date32, false)].into(),
                ),
                true,
            ),
            ArrowField::new("pv", map_type, true),
        ]));

        let pv_parsed = new_null_array(schema.field(0).data_type(), 2);
        let batch = RecordBatch::try_new(schema, vec![pv_parsed, Arc::new(map_array)]).unwrap();

        let output_schema = schema! { not_null "date": DATE };
        let result_type = DataType::from(output_schema);
        let expr = Expr::coalesce([
            col!("pv_parsed"),
            Expr::map_to_struct(col!("pv"), MapToStructOptions::default()),
        ]);
        let result = evaluate_expression(&expr, &batch, Some(&result_type)).unwrap();
        let structs = result.as_any().downcast_ref::<StructArray>().unwrap();

        // Row 0: pv_parsed null, MAP_TO_STRUCT succeeds
        assert!(structs.is_valid(0));
        // Row 1: pv_parsed null, map null → null struct
        assert!(structs.is_null(1));
    }

    #[test]
    fn test_map_to_struct_non_map_input() {
        let schema = ArrowSchema::new(vec![ArrowField::new("s", ArrowDataType::Utf8, true)]);
        let strings = StringArray::from(vec![Some("hello")]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(strings)]).unwrap();

        let output_schema = schema! { nullable "x": STRING };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("s"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type));
        assert!(result.is_err());
    }

    /// An empty-string map value casts via `empty_string_partition_cast`: `""` for string, empty
    /// bytes for binary, and null for every other type.
    #[test]
    fn test_map_to_struct_empty_string_cast_semantics() {
        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        builder.keys().append_value("region");
        builder.values().append_value("");
        builder.keys().append_value("blob");
        builder.values().append_value("");
        builder.keys().append_value("count");
        builder.values().append_value("");
        builder.append(true).unwrap();

        let map_array = builder.finish();
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "pv",
            map_array.data_type().clone(),
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(map_array)]).unwrap();

        let output_schema = schema! {
            nullable "region": STRING,
            nullable "blob": BINARY,
            nullable "count": INTEGER,
        };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("pv"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type)).unwrap();
        let structs = result.as_any().downcast_ref::<StructArray>().unwrap();

        let regions = structs
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert!(!regions.is_null(0));
        assert_eq!(regions.value(0), "");

        let blobs = structs
            .column(1)
            .as_any()
            .downcast_ref::<crate::arrow::array::BinaryArray>()
            .unwrap();
        assert!(!blobs.is_null(0));
        assert_eq!(blobs.value(0), b"");

        let counts = structs
            .column(2)
            .as_any()
            .downcast_ref::<crate::arrow::array::Int32Array>()
            .unwrap();
        assert!(counts.is_null(0));
    }

    #[test]
    fn test_map_to_struct_date_and_fractional_timestamp() {
        use crate::arrow::array::{Date32Array, TimestampMicrosecondArray};

        let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        builder.keys().append_value("d");
        builder.values().append_value("2024-01-15");
        builder.keys().append_value("ts");
        builder.values().append_value("2024-01-15 12:34:56.789123");
        builder.append(true).unwrap();

        let map_array = builder.finish();
        let schema = ArrowSchema::new(vec![ArrowField::new(
            "pv",
            map_array.data_type().clone(),
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(map_array)]).unwrap();

        let output_schema = schema! {
            nullable "d": DATE,
            nullable "ts": TIMESTAMP_NTZ,
        };
        let result_type = DataType::from(output_schema);
        let expr = Expr::map_to_struct(col!("pv"), MapToStructOptions::default());
        let result = evaluate_expression(&expr, &batch, Some(&result_type)).unwrap();
        let structs = result.as_any().downcast_ref::<StructArray>().unwrap();

        let dates = structs
            .column(0)
            .as_any()
            .downcast_ref::<Date32Array>()
            .unwrap();
        assert_eq!(dates.value(0), 19737); // 2024-01-15

        // The arrow timestamp parser must land on the same microsecond instant that
        // `parse_scalar` (chrono) would produce for the same value.
        let expected = PrimitiveType::TimestampNtz
            .parse_scalar("2024-01-15 12:34:56.789123")
            .unwrap();
        let Scalar::TimestampNtz(expected_micros) = expected else {
            panic!("expected a timestamp scalar, got {expected:?}");
        };
        let timestamps = structs
            .column(1)
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        assert_eq!(timestamps.value(0), expected_micros);
    }

    /// Helper to build a batch with Int32 column `a` and a Boolean column `is_valid`.
    fn create_batch_with_bool_col(
        a_vals: Vec<Option<i32>>,
        is_valid_vals: Vec<Option<bool>>,
    ) -> RecordBatch {
        let schema = ArrowSchema::new(vec![
            ArrowField::new("a", ArrowDataType::Int32, true),
            ArrowField::new("is_valid", ArrowDataType::Boolean, true),
        ]);
        let a_array: ArrayRef = Arc::new(Int32Array::from(a_vals));
        let is_valid_array: ArrayRef = Arc::new(BooleanArray::from(is_valid_vals));
        RecordBatch::try_new(Arc::new(schema), vec![a_array, is_valid_array]).unwrap()
    }

    #[rstest]
    // Fast path: no nulls in predicate array — values bitmap used directly.
    #[case::fast_path(
        vec![Some(1), Some(2), Some(3)],
        vec![Some(true), Some(false), Some(true)],
        vec![true, false, true],
    )]
    // Slow path: predicate has nulls — Kleene AND; both false and null → null struct.
    #[case::slow_path(
        vec![Some(1), Some(2), Some(3), Some(4)],
        vec![Some(true), Some(false), None, Some(true)],
        vec![true, false, false, true],
    )]
    fn test_struct_with_nullability_predicate(
        #[case] a_vals: Vec<Option<i32>>,
        #[case] pred_vals: Vec<Option<bool>>,
        #[case] expected_valid: Vec<bool>,
    ) {
        let batch = create_batch_with_bool_col(a_vals, pred_vals);
        let schema = DataType::from(schema! { nullable "a": INTEGER });
        let expr = Expr::struct_with_nullability_from(
            [column_expr_ref!("a")],
            column_expr_ref!("is_valid"),
        );
        let result = evaluate_expression(&expr, &batch, Some(&schema)).unwrap();
        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        for (i, valid) in expected_valid.iter().enumerate() {
            assert_eq!(struct_result.is_valid(i), *valid, "row {i}");
        }
    }

    #[test]
    fn test_struct_with_nullability_predicate_nested_schema() {
        // Nested struct as schema: outer struct has one field that is itself a struct.
        let batch = create_batch_with_bool_col(
            vec![Some(1), Some(2), Some(3)],
            vec![Some(true), Some(false), Some(true)],
        );
        let schema = DataType::from(schema! {
            nullable "nested": { nullable "a": INTEGER },
        });
        let inner_expr = Expr::struct_from([column_expr_ref!("a")]);
        let expr = Expr::struct_with_nullability_from([inner_expr], column_expr_ref!("is_valid"));
        let result = evaluate_expression(&expr, &batch, Some(&schema)).unwrap();
        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert!(struct_result.is_valid(0));
        assert!(struct_result.is_null(1));
        assert!(struct_result.is_valid(2));
        // The "nested" column should itself be a StructArray with 3 rows
        let nested = struct_result
            .column(0)
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        assert_eq!(nested.len(), 3);
    }

    #[test]
    fn test_struct_with_nullability_predicate_multiple_fields() {
        // Multiple expressions: [column_expr_ref!("a"), column_expr_ref!("b")] with predicate.
        let arrow_schema = ArrowSchema::new(vec![
            ArrowField::new("a", ArrowDataType::Int32, true),
            ArrowField::new("b", ArrowDataType::Int32, true),
            ArrowField::new("is_valid", ArrowDataType::Boolean, true),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(arrow_schema),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), Some(2), Some(3)])) as ArrayRef,
                Arc::new(Int32Array::from(vec![Some(10), Some(20), Some(30)])) as ArrayRef,
                Arc::new(BooleanArray::from(vec![
                    Some(true),
                    Some(false),
                    Some(true),
                ])) as ArrayRef,
            ],
        )
        .unwrap();
        let schema = DataType::from(schema! {
            nullable "a": INTEGER,
            nullable "b": INTEGER,
        });
        let expr = Expr::struct_with_nullability_from(
            [column_expr_ref!("a"), column_expr_ref!("b")],
            column_expr_ref!("is_valid"),
        );
        let result = evaluate_expression(&expr, &batch, Some(&schema)).unwrap();
        let struct_result = result.as_any().downcast_ref::<StructArray>().unwrap();
        assert!(struct_result.is_valid(0), "row 0 should be valid");
        assert!(struct_result.is_null(1), "row 1 should be null");
        assert!(struct_result.is_valid(2), "row 2 should be valid");
        validate_i32_column(struct_result, 0, &[1, 2, 3]);
        validate_i32_column(struct_result, 1, &[10, 20, 30]);
    }

    #[test]
    fn test_struct_nullability_non_boolean_predicate_errors() {
        // Non-boolean expression (Int32 column) as nullability predicate should error.
        let batch = create_batch_with_bool_col(
            vec![Some(1), Some(2), Some(3)],
            vec![Some(true), Some(false), Some(true)],
        );
        let schema = DataType::from(schema! { nullable "a": INTEGER });
        let expr =
            Expr::struct_with_nullability_from([column_expr_ref!("a")], column_expr_ref!("a"));
        let result = evaluate_expression(&expr, &batch, Some(&schema));
        assert_result_error_with_message(result, "Incorrect datatype");
    }

    #[test]
    fn test_struct_no_result_type_errors() {
        // struct_from with result_type = None should return an error
        let batch = create_test_batch();
        let expr = Expr::struct_from([column_expr_ref!("a")]);
        let result = evaluate_expression(&expr, &batch, None);
        assert!(result.is_err());
    }

    /// Helper to build a batch with a single struct column named "stats".
    fn make_struct_batch(arrow_fields: Vec<ArrowField>, arrays: Vec<ArrayRef>) -> RecordBatch {
        let stats_type = ArrowDataType::Struct(arrow_fields.clone().into());
        let schema = ArrowSchema::new(vec![ArrowField::new("stats", stats_type, true)]);
        let stats_array = StructArray::try_new(arrow_fields.into(), arrays, None).unwrap();
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(stats_array)]).unwrap()
    }

    #[test]
    fn column_extract_struct_rejects_mismatched_field_names() {
        let batch = make_struct_batch(
            vec![
                ArrowField::new("col-abc-001", ArrowDataType::Int64, true),
                ArrowField::new("col-abc-002", ArrowDataType::Int64, true),
            ],
            vec![
                Arc::new(Int64Array::from(vec![Some(1), Some(2)])),
                Arc::new(Int64Array::from(vec![Some(10), Some(20)])),
            ],
        );

        let logical_type = DataType::from(schema! {
            nullable "my_column": LONG,
            nullable "other_column": LONG,
        });

        let expr = col!("stats");
        let result = evaluate_expression(&expr, &batch, Some(&logical_type));
        assert_result_error_with_message(result, "Missing Struct fields");
    }

    #[test]
    fn column_extract_struct_rejects_mismatched_child_types() {
        let batch = make_struct_batch(
            vec![
                ArrowField::new("a", ArrowDataType::Int64, true),
                ArrowField::new("b", ArrowDataType::Utf8, true),
            ],
            vec![
                Arc::new(Int64Array::from(vec![Some(1)])),
                Arc::new(StringArray::from(vec![Some("x")])),
            ],
        );

        let logical_type = DataType::from(schema! {
            nullable "a": LONG,
            nullable "b": LONG,
        });

        let expr = col!("stats");
        let result = evaluate_expression(&expr, &batch, Some(&logical_type));
        assert_result_error_with_message(result, "Incorrect datatype");
    }

    #[test]
    fn column_extract_struct_with_matching_names_works() {
        let batch = make_struct_batch(
            vec![
                ArrowField::new("a", ArrowDataType::Int64, true),
                ArrowField::new("b", ArrowDataType::Int64, true),
            ],
            vec![
                Arc::new(Int64Array::from(vec![Some(1)])),
                Arc::new(Int64Array::from(vec![Some(2)])),
            ],
        );

        let logical_type = DataType::from(schema! {
            nullable "a": LONG,
            nullable "b": LONG,
        });

        let expr = col!("stats");
        let result = evaluate_expression(&expr, &batch, Some(&logical_type));
        assert!(result.is_ok());
    }

    /// When a `struct_from` expression wraps a `Column` referencing stats_parsed, and the
    /// checkpoint parquet has physical column names (e.g. `col-abc-001`) but the output schema
    /// uses logical names (e.g. `id`), name-based validation correctly rejects the mismatch.
    #[test]
    fn struct_from_with_column_rejects_nested_name_mismatch() {
        let stats_fields: Vec<ArrowField> = vec![
            ArrowField::new("col-abc-001", ArrowDataType::Int64, true),
            ArrowField::new("col-abc-002", ArrowDataType::Int64, true),
        ];
        let stats_array = StructArray::try_new(
            stats_fields.clone().into(),
            vec![
                Arc::new(Int64Array::from(vec![Some(1)])),
                Arc::new(Int64Array::from(vec![Some(10)])),
            ],
            None,
        )
        .unwrap();

        let add_fields: Vec<ArrowField> = vec![
            ArrowField::new("path", ArrowDataType::Utf8, true),
            ArrowField::new(
                "stats_parsed",
                ArrowDataType::Struct(stats_fields.into()),
                true,
            ),
        ];
        let add_struct = StructArray::try_new(
            add_fields.clone().into(),
            vec![
                Arc::new(StringArray::from(vec![Some("file.parquet")])),
                Arc::new(stats_array),
            ],
            None,
        )
        .unwrap();

        let schema = ArrowSchema::new(vec![ArrowField::new(
            "add",
            ArrowDataType::Struct(add_fields.into()),
            true,
        )]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(add_struct)]).unwrap();

        let expr = Expr::struct_from([
            column_expr_ref!("add.path"),
            column_expr_ref!("add.stats_parsed"),
        ]);

        // Output schema uses logical names (differs from physical names in the batch)
        let output_type = DataType::from(schema! {
            nullable "path": STRING,
            nullable "stats_parsed": {
                nullable "id": LONG,
                nullable "value": LONG,
            },
        });

        let result = evaluate_expression(&expr, &batch, Some(&output_type));
        assert_result_error_with_message(result, "Missing Struct fields");
    }

    fn int_array_ty(contains_null: bool) -> DataType {
        DataType::from(crate::schema::ArrayType::new(
            DataType::INTEGER,
            contains_null,
        ))
    }

    /// Single-column int batch of arbitrary length (column `a`). Used to drive both the
    /// `num_rows == 0` boundary and a column with nulls.
    fn int_a_batch(values: Vec<Option<i32>>, nullable: bool) -> RecordBatch {
        let schema = ArrowSchema::new(vec![ArrowField::new("a", ArrowDataType::Int32, nullable)]);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(Int32Array::from(values))]).unwrap()
    }

    /// Two-column int batch with `a` non-null and `b` nullable. Used for null-propagation
    /// and the non-nullable-rejection tests.
    fn ab_batch_with_b_nulls() -> RecordBatch {
        let schema = ArrowSchema::new(vec![
            ArrowField::new("a", ArrowDataType::Int32, false),
            ArrowField::new("b", ArrowDataType::Int32, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(Int32Array::from(vec![Some(10), None, Some(30)])),
            ],
        )
        .unwrap()
    }

    // Happy-path Array over Int32: parameterized over (batch, inputs, expected_rows). Cases
    // cover single/multi-input row-major construction (n1..n3), mixed column+literal inputs,
    // arbitrary expression-tree children, and an empty batch (0 rows).
    #[rstest]
    #[case::n1(create_test_batch(), vec![col!("a")], vec![vec![1], vec![2], vec![3]])]
    #[case::n2(create_test_batch(), vec![col!("a"), col!("b")],
               vec![vec![1, 10], vec![2, 20], vec![3, 30]])]
    #[case::n3(create_test_batch(), vec![col!("a"), col!("b"), col!("c")],
               vec![vec![1, 10, 100], vec![2, 20, 200], vec![3, 30, 300]])]
    #[case::mixed_col_and_literal(create_test_batch(),
                                  vec![col!("a"), lit(99_i32)],
                                  vec![vec![1, 99], vec![2, 99], vec![3, 99]])]
    // Inputs can be arbitrary expression trees (columns, arithmetic, sibling variadics) --
    // the realistic shape FSR dedup-key construction will use.
    #[case::arithmetic_and_coalesce_children(create_test_batch(),
        vec![col!("a") + col!("b"),
             col!("b") - col!("a"),
             col!("a") * col!("b"),
             Expr::coalesce([col!("a"), col!("b")])],
        vec![vec![11, 9, 10, 1], vec![22, 18, 40, 2], vec![33, 27, 90, 3]])]
    #[case::empty_batch_n1(int_a_batch(vec![], false), vec![col!("a")], vec![])]
    #[case::empty_batch_n2(int_a_batch(vec![], false),
                           vec![col!("a"), lit(7_i32)], vec![])]
    fn test_evaluate_array_int_per_row(
        #[case] batch: RecordBatch,
        #[case] inputs: Vec<Expr>,
        #[case] expected: Vec<Vec<i32>>,
    ) {
        let expr = Expr::array(inputs);
        let ty = int_array_ty(true);
        let result = evaluate_expression(&expr, &batch, Some(&ty)).unwrap();
        let list = result.as_list::<i32>();
        assert_eq!(list.len(), expected.len());
        for (row, want) in expected.iter().enumerate() {
            let element = list.value(row);
            assert_eq!(
                element.as_primitive::<Int32Type>().values(),
                want.as_slice()
            );
        }
    }

    // `contains_null` from the caller-supplied `result_type` must be reflected in the
    // produced `ListArray`'s element-field metadata, for inputs without nulls and inputs
    // WITH nulls (the realistic case where a nullable input column flows through to a
    // nullable element field).
    #[rstest]
    #[case::nullable(create_test_batch(), vec![col!("a")], true)]
    #[case::non_nullable(create_test_batch(), vec![col!("a")], false)]
    #[case::with_nulls_nullable(ab_batch_with_b_nulls(), vec![col!("b")], true)]
    fn test_evaluate_array_field_nullability_matches_result_type(
        #[case] batch: RecordBatch,
        #[case] inputs: Vec<Expr>,
        #[case] contains_null: bool,
    ) {
        let expr = Expr::array(inputs);
        let ty = int_array_ty(contains_null);
        let result = evaluate_expression(&expr, &batch, Some(&ty)).unwrap();
        let ArrowDataType::List(field) = result.data_type() else {
            panic!("expected ListArray, got {:?}", result.data_type())
        };
        assert_eq!(field.name(), LIST_ARRAY_ROOT);
        assert_eq!(field.is_nullable(), contains_null);
    }

    // All validation paths in `evaluate_array_expression` share the shape "expr + batch +
    // result_type -> error containing substring". Each case targets a different guard.
    #[rstest]
    // Empty Array() is rejected regardless of result_type -- the element type is inferred
    // from the inputs, so there must be at least one.
    #[case::empty_inputs(
        create_test_batch(),
        Expr::array(Vec::<Expr>::new()),
        None,
        "requires at least one element",
    )]
    #[case::non_array_result_type(
        create_test_batch(),
        Expr::array([col!("a")]),
        Some(DataType::INTEGER),
        "requires a DataType::Array result type",
    )]
    // The mismatch error must identify which input differs (index 2). We avoid matching
    // the Arrow Debug formatter for `DataType` since that may change.
    #[case::input_type_mismatch(
        create_test_batch(),
        Expr::array([lit(1_i32), lit(2_i32), lit("text")]),
        None,
        "input 2",
    )]
    // Caller declared `contains_null=false`, but the input column has a NULL at row 1. The
    // evaluator must refuse rather than emit a `ListArray` whose field claims non-nullable
    // while the values array contains a null.
    #[case::null_in_non_nullable(
        ab_batch_with_b_nulls(),
        Expr::array([col!("b")]),
        Some(int_array_ty(false)),
        "non-nullable elements",
    )]
    fn test_evaluate_array_errors(
        #[case] batch: RecordBatch,
        #[case] expr: Expr,
        #[case] result_type: Option<DataType>,
        #[case] expected_substring: &str,
    ) {
        let result = evaluate_expression(&expr, &batch, result_type.as_ref());
        assert_result_error_with_message(result, expected_substring);
    }

    #[test]
    fn test_evaluate_array_preserves_element_nulls() {
        // a = [1, 2, 3] (non-null), b = [Some(10), None, Some(30)] (nullable).
        // ARRAY(a, b) -> [[1, 10], [2, NULL], [3, 30]] -- per-row array itself non-null.
        let batch = ab_batch_with_b_nulls();
        let expr = Expr::array([col!("a"), col!("b")]);
        let ty = int_array_ty(true);
        let result = evaluate_expression(&expr, &batch, Some(&ty)).unwrap();
        let list = result.as_list::<i32>();
        assert_eq!(list.null_count(), 0); // outer arrays are non-null
        assert_eq!(list.len(), 3);
        let row1 = list.value(1);
        let row1_vals = row1.as_primitive::<Int32Type>();
        assert_eq!(row1_vals.value(0), 2);
        assert!(row1_vals.is_null(1));
    }

    // ARRAY over struct elements: plain ARRAY of two-field structs, plus COALESCE of two
    // ARRAYs of single-field structs (the realistic FSR dedup-key shape with diverse
    // expression trees -- column refs, arithmetic, literals -- inside the struct fields).
    // `expected` is indexed as `expected[row][element_in_list][field_in_struct]`.
    #[rstest]
    #[case::array_of_two_field_structs(
        schema! {
            not_null "x": INTEGER,
            not_null "y": INTEGER,
        },
        Expr::array([
            Expr::struct_from([col!("a"), col!("b")]),
            Expr::struct_from([col!("b"), col!("c")]),
        ]),
        vec![
            vec![vec![1, 10], vec![10, 100]],
            vec![vec![2, 20], vec![20, 200]],
            vec![vec![3, 30], vec![30, 300]],
        ],
    )]
    #[case::coalesce_of_arrays_of_structs(
        schema! { not_null "x": INTEGER },
        Expr::coalesce([
            Expr::array([
                Expr::struct_from([col!("a")]),
                Expr::struct_from([col!("a") + col!("b")]),
                Expr::struct_from([lit(42_i32)]),
            ]),
            Expr::array([
                Expr::struct_from([col!("b")]),
                Expr::struct_from([col!("a") * col!("b")]),
                Expr::struct_from([lit(0_i32)]),
            ]),
        ]),
        vec![
            vec![vec![1], vec![11], vec![42]],
            vec![vec![2], vec![22], vec![42]],
            vec![vec![3], vec![33], vec![42]],
        ],
    )]
    fn test_evaluate_array_of_structs(
        #[case] struct_schema: StructType,
        #[case] expr: Expr,
        #[case] expected: Vec<Vec<Vec<i32>>>,
    ) {
        let batch = create_test_batch();
        let array_ty = DataType::from(crate::schema::ArrayType::new(struct_schema, false));
        let result = evaluate_expression(&expr, &batch, Some(&array_ty)).unwrap();
        let list = result.as_list::<i32>();
        assert_eq!(list.len(), expected.len());
        for (row, row_expected) in expected.iter().enumerate() {
            let elements = list.value(row);
            let structs = elements.as_any().downcast_ref::<StructArray>().unwrap();
            assert_eq!(structs.len(), row_expected.len());
            for (i, struct_expected) in row_expected.iter().enumerate() {
                for (field_idx, &want) in struct_expected.iter().enumerate() {
                    let arr = structs.column(field_idx).as_primitive::<Int32Type>();
                    assert_eq!(arr.value(i), want);
                }
            }
        }
    }

    #[test]
    fn test_evaluate_array_of_non_null_struct_with_inner_null_field() {
        // Result type asks for non-nullable struct elements (Array `contains_null=false`),
        // and the struct itself IS non-null at every row -- but its single `value` field
        // is nullable and contains a null at row 1. The evaluator's `contains_null=false`
        // guard operates on struct-level nulls only, so this must succeed and pass the
        // inner null through to the output.
        let batch = ab_batch_with_b_nulls();
        let inner_field_schema = schema! { nullable "value": INTEGER };
        let array_ty = DataType::from(crate::schema::ArrayType::new(
            inner_field_schema,
            /* contains_null = */ false,
        ));
        let expr = Expr::array([Expr::struct_from([col!("b")])]);
        let result = evaluate_expression(&expr, &batch, Some(&array_ty)).unwrap();
        let list = result.as_list::<i32>();

        // Outer Array element field reflects the declared non-nullability of the struct.
        let ArrowDataType::List(field) = list.data_type() else {
            panic!("expected ListArray")
        };
        assert!(!field.is_nullable(), "struct element must be non-nullable");

        // Each row's array has exactly one struct element, all struct-level non-null.
        assert_eq!(list.len(), 3);
        for row in 0..3 {
            let elements = list.value(row);
            let structs = elements.as_any().downcast_ref::<StructArray>().unwrap();
            assert_eq!(structs.len(), 1);
            assert!(structs.is_valid(0));
        }
        // The inner `value` field carries the null at row 1 through.
        let row0_value = list.value(0);
        let row0_inner = row0_value
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap()
            .column(0)
            .as_primitive::<Int32Type>();
        assert_eq!(row0_inner.value(0), 10);
        let row1_value = list.value(1);
        let row1_inner = row1_value
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap()
            .column(0)
            .as_primitive::<Int32Type>();
        assert!(row1_inner.is_null(0), "inner field must preserve the null");
        let row2_value = list.value(2);
        let row2_inner = row2_value
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap()
            .column(0)
            .as_primitive::<Int32Type>();
        assert_eq!(row2_inner.value(0), 30);
    }

    #[test]
    fn test_cast_string_to_date() {
        let schema = ArrowSchema::new(vec![ArrowField::new("part", ArrowDataType::Utf8, true)]);
        // Row 1 is unparseable and row 2 is null; both must become NULL under safe-cast semantics.
        let parts = StringArray::from(vec![Some("2025-04-11"), Some("not-a-date"), None]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(parts)]).unwrap();

        let expr = Expr::cast(col!("part"), DataType::DATE);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        let dates = result.as_primitive::<Date32Type>();
        assert_eq!(dates.value(0), 20189); // 2025-04-11 is 20189 days after the unix epoch
        assert!(dates.is_null(1));
        assert!(dates.is_null(2));
    }

    #[test]
    fn test_cast_result_type_validated() {
        let schema = ArrowSchema::new(vec![ArrowField::new("part", ArrowDataType::Utf8, true)]);
        let parts = StringArray::from(vec![Some("2025-04-11")]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(parts)]).unwrap();

        let expr = Expr::cast(col!("part"), DataType::DATE);
        // The declared result type must match the cast target.
        assert!(evaluate_expression(&expr, &batch, Some(&DataType::LONG)).is_err());
        assert!(evaluate_expression(&expr, &batch, Some(&DataType::DATE)).is_ok());
    }

    #[test]
    fn test_cast_unsupported_type_pair_yields_null() {
        // Arrow has no cast from Boolean to Date; the cast degrades to an all-NULL column.
        let schema = ArrowSchema::new(vec![ArrowField::new("flag", ArrowDataType::Boolean, true)]);
        let flags = BooleanArray::from(vec![Some(true), Some(false)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(flags)]).unwrap();

        let expr = Expr::cast(col!("flag"), DataType::DATE);
        let result = evaluate_expression(&expr, &batch, None).unwrap();

        assert_eq!(result.len(), 2);
        assert_eq!(result.null_count(), 2);
        assert_eq!(result.data_type(), &ArrowDataType::Date32);
    }
}
