use std::ops::{Add, Div, Mul, Sub};

use rstest::rstest;
use Expression as Expr;
use Predicate as Pred;

use super::*;
use crate::arrow::array::{
    create_array, Array, ArrayRef, BinaryViewArray, BooleanArray, GenericStringArray, Int32Array,
    Int32Builder, ListArray, ListViewArray, MapArray, MapBuilder, MapFieldNames, StringArray,
    StringBuilder, StringViewArray, StructArray,
};
use crate::arrow::buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use crate::arrow::compute::kernels::cmp::{gt_eq, lt};
use crate::arrow::datatypes::{DataType, Field, Fields, Schema, TimeUnit};
use crate::engine::arrow_conversion::TryIntoKernel as _;
use crate::engine::arrow_data::{ArrowEngineData, EngineDataArrowExt as _};
use crate::engine::arrow_expression::evaluate_expression::to_json;
use crate::engine::arrow_expression::opaque::{
    ArrowOpaqueExpression as _, ArrowOpaqueExpressionOp, ArrowOpaquePredicate as _,
    ArrowOpaquePredicateOp,
};
use crate::engine::arrow_utils::apply_schema::apply_schema;
use crate::expressions::*;
use crate::kernel_predicates::{
    DirectDataSkippingPredicateEvaluator, DirectPredicateEvaluator,
    IndirectDataSkippingPredicateEvaluator,
};
#[cfg(feature = "geo-type-in-dev")]
use crate::schema::EdgeInterpolationAlgorithm;
use crate::schema::{
    schema, schema_ref, ArrayType, DataType as KernelDataType, MapType, StructField, StructType,
};
use crate::unit_test_utils::assert_result_error_with_message;
#[cfg(feature = "geo-type-in-dev")]
use crate::unit_test_utils::{geography_type, geometry_type};
use crate::KernelResult;

#[test]
fn test_array_column() {
    let values = Int32Array::from(vec![0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let offsets = OffsetBuffer::new(ScalarBuffer::from(vec![0, 3, 6, 9]));
    let field = Arc::new(Field::new("item", DataType::Int32, true));
    let arr_field = Arc::new(Field::new("item", DataType::List(field.clone()), true));

    let schema = Schema::new([arr_field.clone()]);

    let array = ListArray::new(field.clone(), offsets, Arc::new(values), None);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(array.clone())]).unwrap();

    let not_op = Pred::not(Pred::binary(BinaryPredicateOp::In, lit(5), col!("item")));

    let in_op = Pred::binary(BinaryPredicateOp::In, lit(5), col!("item"));

    let result = evaluate_predicate(&not_op, &batch, false).unwrap();
    let expected_not_in = BooleanArray::from(vec![true, false, true]);
    assert_eq!(result, expected_not_in);

    let result = evaluate_predicate(&in_op, &batch, false).unwrap();
    let expected_in = BooleanArray::from(vec![false, true, false]);
    assert_eq!(result, expected_in);

    // Test inversion as well
    let result = evaluate_predicate(&not_op, &batch, true).unwrap();
    assert_eq!(result, expected_in);

    let result = evaluate_predicate(&in_op, &batch, true).unwrap();
    assert_eq!(result, expected_not_in);
}

/// Verifies that null UDT scalars materialize as their physical Arrow type and remain compatible
/// with the logical UDT.
#[cfg(feature = "udt-in-dev")]
#[rstest]
#[case(KernelDataType::LONG)]
#[case(KernelDataType::from(schema! { nullable "x": LONG }))]
#[case(KernelDataType::from(ArrayType::new(KernelDataType::LONG, true)))]
#[case(KernelDataType::from(MapType::new(KernelDataType::STRING, KernelDataType::LONG, true)))]
fn null_udt_scalar_uses_physical_type(#[case] sql_type: KernelDataType) {
    let udt = KernelDataType::from(
        crate::schema::UserDefinedType::try_new(sql_type.clone(), Default::default()).unwrap(),
    );
    let array = Scalar::null(udt.clone()).to_array(3).unwrap();
    let expected = Scalar::null(sql_type).to_array(3).unwrap();
    assert_eq!(array.as_ref(), expected.as_ref());
    assert!(top_level_types_compatible(&udt, array.data_type()));
    assert!(!top_level_types_compatible(&udt, &DataType::Boolean));
}

#[test]
fn test_bad_right_type_array() {
    let values = Int32Array::from(vec![0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let field = Arc::new(Field::new("item", DataType::Int32, true));
    let schema = Schema::new([field.clone()]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(values.clone())]).unwrap();

    let in_op = Pred::not(Pred::binary(BinaryPredicateOp::In, lit(5), col!("item")));

    let in_result = evaluate_predicate(&in_op, &batch, false);

    assert_result_error_with_message(
        in_result,
        "Invalid expression evaluation: Cannot cast to list array: Int32",
    );
}

#[test]
fn test_in_predicate_with_utf8view_list_column() {
    let values = StringViewArray::from(vec!["hello", "world", "foo", "bar", "hello", "baz"]);
    let offsets = OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 2, 3, 6]));
    let item_field = Arc::new(Field::new("item", DataType::Utf8View, true));
    let list_field = Arc::new(Field::new(
        "items",
        DataType::List(item_field.clone()),
        true,
    ));
    let schema = Schema::new([list_field]);
    let list_array = ListArray::new(item_field, offsets, Arc::new(values), None);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(list_array)]).unwrap();

    let in_pred = Pred::binary(BinaryPredicateOp::In, lit("hello"), col!("items"));

    let expected = BooleanArray::from(vec![true, false, true]);
    assert_eq!(
        evaluate_predicate(&in_pred, &batch, false).unwrap(),
        expected
    );
}

#[test]
fn test_in_predicate_with_list_view_column() {
    // Three rows: [0,1,2], [3,4,5], [6,7,8]
    let values = Int32Array::from(vec![0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let offsets = ScalarBuffer::from(vec![0i32, 3, 6]);
    let sizes = ScalarBuffer::from(vec![3i32, 3, 3]);
    let item_field = Arc::new(Field::new("item", DataType::Int32, true));
    let list_field = Arc::new(Field::new(
        "items",
        DataType::ListView(item_field.clone()),
        true,
    ));
    let schema = Schema::new([list_field]);
    let list_view_array = ListViewArray::new(item_field, offsets, sizes, Arc::new(values), None);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(list_view_array)]).unwrap();

    let in_op = Pred::binary(BinaryPredicateOp::In, lit(5), col!("items"));
    let not_op = Pred::not(Pred::binary(BinaryPredicateOp::In, lit(5), col!("items")));

    let result = evaluate_predicate(&in_op, &batch, false).unwrap();
    let expected_in = BooleanArray::from(vec![false, true, false]);
    assert_eq!(result, expected_in);

    let result = evaluate_predicate(&not_op, &batch, false).unwrap();
    let expected_not_in = BooleanArray::from(vec![true, false, true]);
    assert_eq!(result, expected_not_in);

    // Test inversion
    let result = evaluate_predicate(&in_op, &batch, true).unwrap();
    assert_eq!(result, expected_not_in);

    let result = evaluate_predicate(&not_op, &batch, true).unwrap();
    assert_eq!(result, expected_in);
}

#[rstest]
#[case::utf8view(
    Arc::new(StringViewArray::from(vec![None, Some("apple"), Some("hello"), Some("zebra")])) as ArrayRef,
    DataType::Utf8View,
    lit("hello"),
)]
#[case::large_utf8(
    Arc::new(GenericStringArray::<i64>::from(vec![None, Some("apple"), Some("hello"), Some("zebra")])) as ArrayRef,
    DataType::LargeUtf8,
    lit("hello"),
)]
#[case::binary_view(
    Arc::new(BinaryViewArray::from(vec![None, Some(b"apple".as_ref()), Some(b"hello"), Some(b"zebra")])) as ArrayRef,
    DataType::BinaryView,
    lit(b"hello".as_ref()),
)]
fn test_binary_predicate_with_view_types(
    #[case] array: ArrayRef,
    #[case] dtype: DataType,
    #[case] lit: Expr,
) {
    let schema = Schema::new([Arc::new(Field::new("col", dtype, true))]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![array]).unwrap();
    let column = col!("col");

    let predicate_lt = column.clone().lt(lit.clone());
    let results = evaluate_predicate(&predicate_lt, &batch, false).unwrap();
    let expected_lt = BooleanArray::from(vec![None, Some(true), Some(false), Some(false)]);
    assert_eq!(results, expected_lt);

    let predicate_le = column.clone().le(lit.clone());
    let results = evaluate_predicate(&predicate_le, &batch, false).unwrap();
    let expected_le = BooleanArray::from(vec![None, Some(true), Some(true), Some(false)]);
    assert_eq!(results, expected_le);

    let predicate_gt = column.clone().gt(lit.clone());
    let results = evaluate_predicate(&predicate_gt, &batch, false).unwrap();
    let expected_gt = BooleanArray::from(vec![None, Some(false), Some(false), Some(true)]);
    assert_eq!(results, expected_gt);

    let predicate_ge = column.clone().ge(lit.clone());
    let results = evaluate_predicate(&predicate_ge, &batch, false).unwrap();
    let expected_ge = BooleanArray::from(vec![None, Some(false), Some(true), Some(true)]);
    assert_eq!(results, expected_ge);

    let predicate_eq = column.clone().eq(lit.clone());
    let results = evaluate_predicate(&predicate_eq, &batch, false).unwrap();
    let expected_eq = BooleanArray::from(vec![None, Some(false), Some(true), Some(false)]);
    assert_eq!(results, expected_eq);

    let predicate_ne = column.clone().ne(lit.clone());
    let results = evaluate_predicate(&predicate_ne, &batch, false).unwrap();
    let expected_ne = BooleanArray::from(vec![None, Some(true), Some(false), Some(true)]);
    assert_eq!(results, expected_ne);

    let predicate_distinct = column.clone().distinct(lit.clone());
    let results = evaluate_predicate(&predicate_distinct, &batch, false).unwrap();
    let expected_distinct =
        BooleanArray::from(vec![Some(true), Some(true), Some(false), Some(true)]);
    assert_eq!(results, expected_distinct);

    // Test inversion (NOT pushdown): each inverted op equals the complement
    let results = evaluate_predicate(&predicate_lt, &batch, true).unwrap();
    assert_eq!(results, expected_ge);
    let results = evaluate_predicate(&predicate_le, &batch, true).unwrap();
    assert_eq!(results, expected_gt);
    let results = evaluate_predicate(&predicate_gt, &batch, true).unwrap();
    assert_eq!(results, expected_le);
    let results = evaluate_predicate(&predicate_ge, &batch, true).unwrap();
    assert_eq!(results, expected_lt);
    let results = evaluate_predicate(&predicate_eq, &batch, true).unwrap();
    assert_eq!(results, expected_ne);
    let results = evaluate_predicate(&predicate_ne, &batch, true).unwrap();
    assert_eq!(results, expected_eq);
    let results = evaluate_predicate(&predicate_distinct, &batch, true).unwrap();
    let expected_not_distinct =
        BooleanArray::from(vec![Some(false), Some(false), Some(true), Some(false)]);
    assert_eq!(results, expected_not_distinct);
}

#[test]
fn test_literal_type_array() {
    let field = Arc::new(Field::new("item", DataType::Int32, true));
    let schema = Schema::new([field.clone()]);
    let batch = RecordBatch::new_empty(Arc::new(schema));

    let not_in_op = Pred::not(Pred::binary(
        BinaryPredicateOp::In,
        lit(5),
        Scalar::Array(
            ArrayData::try_new(
                ArrayType::new(KernelDataType::INTEGER, false),
                vec![Scalar::Integer(1), Scalar::Integer(2)],
            )
            .unwrap(),
        ),
    ));

    let result = evaluate_predicate(&not_in_op, &batch, false).unwrap();
    let not_in_expected = BooleanArray::from(vec![true]);
    assert_eq!(result, not_in_expected);

    // Test inversion
    let result = evaluate_predicate(&not_in_op, &batch, true).unwrap();
    let in_expected = BooleanArray::from(vec![false]);
    assert_eq!(result, in_expected);
}

#[test]
fn null_variant_scalar_builds_null_struct_array() {
    use crate::arrow::array::{Array as _, AsArray as _};
    // A variant is physically a struct, so a null variant scalar must build as an all-null struct
    // array rather than erroring ("Variant is not supported as scalar yet").
    let arr = Scalar::null(KernelDataType::unshredded_variant())
        .to_array(3)
        .expect("null variant scalar should build a null struct array");
    assert_eq!(arr.len(), 3);
    assert_eq!(arr.null_count(), 3);
    // The underlying representation is a struct.
    assert_eq!(arr.as_struct().len(), 3);
}

#[test]
fn test_literal_complex_type_array() {
    use crate::arrow::array::{Array as _, AsArray as _};
    use crate::arrow::datatypes::Int32Type;

    let array_type = ArrayType::new(KernelDataType::INTEGER, true);
    let array_value = Scalar::Array(
        ArrayData::try_new(
            array_type.clone(),
            vec![
                Scalar::from(1),
                Scalar::from(2),
                Scalar::Null(KernelDataType::INTEGER),
                Scalar::from(3),
            ],
        )
        .unwrap(),
    );
    let map_type = MapType::new(KernelDataType::STRING, array_type.clone(), true);
    let map_value = Scalar::Map(
        MapData::try_new(
            map_type.clone(),
            [
                ("array".to_string(), array_value.clone()),
                ("null_array".to_string(), Scalar::null(array_type.clone())),
            ],
        )
        .unwrap(),
    );
    let struct_type = schema! {
        nullable "scalar": INTEGER,
        nullable "list": (array_type.clone()),
        nullable "null_list": (array_type.clone()),
        nullable "map": (map_type.clone()),
        nullable "null_map": (map_type.clone()),
    };
    let struct_fields = struct_type.fields().cloned().collect::<Vec<_>>();
    let struct_value = Scalar::Struct(
        crate::expressions::StructData::try_new(
            struct_fields.clone(),
            vec![
                Scalar::Integer(42),
                array_value,
                Scalar::null(array_type.clone()),
                map_value,
                Scalar::null(map_type.clone()),
            ],
        )
        .unwrap(),
    );
    let nested_array_type = ArrayType::new(struct_type.clone(), true);
    let nested_array_value = Scalar::Array(
        ArrayData::try_new(
            nested_array_type.clone(),
            vec![
                struct_value.clone(),
                Scalar::null(struct_type.clone()),
                struct_value.clone(),
            ],
        )
        .unwrap(),
    )
    .to_array(5)
    .unwrap();
    assert_eq!(nested_array_value.len(), 5);

    let struct_values = nested_array_value.as_list::<i32>().values();
    let struct_values = struct_values.as_struct();
    assert_eq!(struct_values.len(), 5 * 3); // five rows, three elements per row

    // each nested array value has three elements, the middle one NULL
    let expected_valid = [true, false, true];
    let expected_valid = (0..5).flat_map(|_| expected_valid.iter().cloned());
    assert!(expected_valid
        .zip(struct_values.nulls().unwrap())
        .all(|(a, b)| a == b));

    let expected_values = [Some(42), None, Some(42)];
    let expected_values = (0..5).flat_map(|_| expected_values.iter().cloned());
    assert!(expected_values
        .zip(struct_values.column(0).as_primitive::<Int32Type>())
        .all(|(a, b)| a == b));
    assert_eq!(struct_values.column(2).null_count(), 15);

    // The leaf value column has 40 elements (not 60) becuase 1/3 of the parent structs are NULL.
    let list_values = struct_values.column(1);
    let list_values = list_values.as_list::<i32>().values();
    assert_eq!(list_values.len(), 40);
    let expected_values = [Some(1), Some(2), None, Some(3)];
    let expected_values = (0..10).flat_map(|_| expected_values.iter().cloned());
    assert!(expected_values
        .zip(list_values.as_primitive::<Int32Type>())
        .all(|(a, b)| a == b));

    let map_values = struct_values.column(3);
    let map_array = map_values.as_map();
    assert_eq!(map_array.keys().len(), 5 * 2 * 2);
    // values len = keys len
    assert_eq!(map_array.values().len(), 5 * 2 * 2);
    // this should be 5 rows * 2 non-null parents * 1 non-null per map * 4 elements
    // NOTE: one of those elements is NULL but primitive arrays don't care about that
    assert_eq!(
        map_array.values().as_list::<i32>().values().len(),
        5 * 2 * 4
    );
    let expected_keys = ["array", "null_array"];
    let expected_values = [Some(1), Some(2), None, Some(3)];
    let expected_keys = (0..10).flat_map(|_| expected_keys.iter().cloned());
    let expected_values = (0..10).flat_map(|_| expected_values.iter().cloned());
    let map_keys = map_array.keys().as_string::<i32>();
    assert!(expected_keys.zip(map_keys).all(|(a, b)| a == b.unwrap()));
    let map_values = map_array
        .values()
        .as_list::<i32>()
        .values()
        .as_primitive::<Int32Type>();
    assert!(expected_values.zip(map_values).all(|(a, b)| a == b));
}

#[test]
fn test_invalid_array_sides() {
    let values = Int32Array::from(vec![0, 1, 2, 3, 4, 5, 6, 7, 8]);
    let offsets = OffsetBuffer::new(ScalarBuffer::from(vec![0, 3, 6, 9]));
    let field = Arc::new(Field::new("item", DataType::Int32, true));
    let arr_field = Arc::new(Field::new("item", DataType::List(field.clone()), true));

    let schema = Schema::new([arr_field.clone()]);

    let array = ListArray::new(field.clone(), offsets, Arc::new(values), None);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(array.clone())]).unwrap();

    let in_op = Pred::not(Pred::binary(
        BinaryPredicateOp::In,
        col!("item"),
        col!("item"),
    ));

    let in_result = evaluate_predicate(&in_op, &batch, false);

    assert_result_error_with_message(in_result, "Invalid expression evaluation: Invalid right value for (NOT) IN comparison, left is: Column(item) right is: Column(item)");
}

#[test]
fn test_str_arrays() {
    let values = GenericStringArray::<i32>::from(vec![
        "hi", "bye", "hi", "hi", "bye", "bye", "hi", "bye", "hi",
    ]);
    let offsets = OffsetBuffer::new(ScalarBuffer::from(vec![0, 3, 6, 9]));
    let field = Arc::new(Field::new("item", DataType::Utf8, true));
    let arr_field = Arc::new(Field::new("item", DataType::List(field.clone()), true));
    let schema = Schema::new([arr_field.clone()]);
    let array = ListArray::new(field.clone(), offsets, Arc::new(values), None);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(array.clone())]).unwrap();

    let str_not_op = Pred::not(Pred::binary(
        BinaryPredicateOp::In,
        lit("bye"),
        col!("item"),
    ));

    let str_in_op = Pred::binary(BinaryPredicateOp::In, lit("hi"), col!("item"));

    let result = evaluate_predicate(&str_in_op, &batch, false).unwrap();
    let in_expected = BooleanArray::from(vec![true, true, true]);
    assert_eq!(result, in_expected);

    let result = evaluate_predicate(&str_not_op, &batch, false).unwrap();
    let not_in_expected = BooleanArray::from(vec![false, false, false]);
    assert_eq!(result, not_in_expected);

    // Test inversion
    let result = evaluate_predicate(&str_in_op, &batch, true).unwrap();
    assert_eq!(result, not_in_expected);

    let result = evaluate_predicate(&str_not_op, &batch, true).unwrap();
    assert_eq!(result, in_expected);
}

#[test]
fn test_extract_column() {
    let schema = Schema::new(vec![Field::new("a", DataType::Int32, false)]);
    let values = Int32Array::from(vec![1, 2, 3]);
    let batch =
        RecordBatch::try_new(Arc::new(schema.clone()), vec![Arc::new(values.clone())]).unwrap();
    let column = col!("a");

    let results = evaluate_expression(&column, &batch, None).unwrap();
    assert_eq!(results.as_ref(), &values);

    let schema = Schema::new(vec![Field::new(
        "b",
        DataType::Struct(Fields::from(vec![Field::new("a", DataType::Int32, false)])),
        false,
    )]);

    let struct_values: ArrayRef = Arc::new(values.clone());
    let struct_array = StructArray::from(vec![(
        Arc::new(Field::new("a", DataType::Int32, false)),
        struct_values,
    )]);
    let batch = RecordBatch::try_new(
        Arc::new(schema.clone()),
        vec![Arc::new(struct_array.clone())],
    )
    .unwrap();
    let column = col!("b.a");
    let results = evaluate_expression(&column, &batch, None).unwrap();
    assert_eq!(results.as_ref(), &values);
}

#[test]
fn test_binary_op_scalar() {
    let schema = Schema::new(vec![Field::new("a", DataType::Int32, false)]);
    let values = Int32Array::from(vec![1, 2, 3]);
    let batch = RecordBatch::try_new(Arc::new(schema.clone()), vec![Arc::new(values)]).unwrap();
    let column = col!("a");

    let expression = column.clone().add(lit(1));
    let results = evaluate_expression(&expression, &batch, None).unwrap();
    let expected = Arc::new(Int32Array::from(vec![2, 3, 4]));
    assert_eq!(results.as_ref(), expected.as_ref());

    let expression = column.clone().sub(lit(1));
    let results = evaluate_expression(&expression, &batch, None).unwrap();
    let expected = Arc::new(Int32Array::from(vec![0, 1, 2]));
    assert_eq!(results.as_ref(), expected.as_ref());

    let expression = column.clone().mul(lit(2));
    let results = evaluate_expression(&expression, &batch, None).unwrap();
    let expected = Arc::new(Int32Array::from(vec![2, 4, 6]));
    assert_eq!(results.as_ref(), expected.as_ref());

    // TODO handle type casting
    let expression = column.div(lit(1));
    let results = evaluate_expression(&expression, &batch, None).unwrap();
    let expected = Arc::new(Int32Array::from(vec![1, 2, 3]));
    assert_eq!(results.as_ref(), expected.as_ref())
}

#[test]
fn test_binary_op() {
    let schema = Schema::new(vec![
        Field::new("a", DataType::Int32, false),
        Field::new("b", DataType::Int32, false),
    ]);
    let values = Int32Array::from(vec![1, 2, 3]);
    let batch = RecordBatch::try_new(
        Arc::new(schema.clone()),
        vec![Arc::new(values.clone()), Arc::new(values)],
    )
    .unwrap();
    let column_a = col!("a");
    let column_b = col!("b");

    let expression = column_a.clone().add(column_b.clone());
    let results = evaluate_expression(&expression, &batch, None).unwrap();
    let expected = Arc::new(Int32Array::from(vec![2, 4, 6]));
    assert_eq!(results.as_ref(), expected.as_ref());

    let expression = column_a.clone().sub(column_b.clone());
    let results = evaluate_expression(&expression, &batch, None).unwrap();
    let expected = Arc::new(Int32Array::from(vec![0, 0, 0]));
    assert_eq!(results.as_ref(), expected.as_ref());

    let expression = column_a.clone().mul(column_b);
    let results = evaluate_expression(&expression, &batch, None).unwrap();
    let expected = Arc::new(Int32Array::from(vec![1, 4, 9]));
    assert_eq!(results.as_ref(), expected.as_ref());
}

#[test]
fn test_binary_cmp() {
    let schema = Schema::new(vec![Field::new("a", DataType::Int32, false)]);
    let values = Int32Array::from(vec![1, 2, 3]);
    let batch = RecordBatch::try_new(Arc::new(schema.clone()), vec![Arc::new(values)]).unwrap();
    let column = col!("a");

    let predicate_lt = column.clone().lt(lit(2));
    let results = evaluate_predicate(&predicate_lt, &batch, false).unwrap();
    let expected_lt = BooleanArray::from(vec![true, false, false]);
    assert_eq!(results, expected_lt);

    let predicate_le = column.clone().le(lit(2));
    let results = evaluate_predicate(&predicate_le, &batch, false).unwrap();
    let expected_le = BooleanArray::from(vec![true, true, false]);
    assert_eq!(results, expected_le);

    let predicate_gt = column.clone().gt(lit(2));
    let results = evaluate_predicate(&predicate_gt, &batch, false).unwrap();
    let expected_gt = BooleanArray::from(vec![false, false, true]);
    assert_eq!(results, expected_gt);

    let predicate_ge = column.clone().ge(lit(2));
    let results = evaluate_predicate(&predicate_ge, &batch, false).unwrap();
    let expected_ge = BooleanArray::from(vec![false, true, true]);
    assert_eq!(results, expected_ge);

    let predicate_eq = column.clone().eq(lit(2));
    let results = evaluate_predicate(&predicate_eq, &batch, false).unwrap();
    let expected_eq = BooleanArray::from(vec![false, true, false]);
    assert_eq!(results, expected_eq);

    let predicate_ne = column.clone().ne(lit(2));
    let results = evaluate_predicate(&predicate_ne, &batch, false).unwrap();
    let expected_ne = BooleanArray::from(vec![true, false, true]);
    assert_eq!(results, expected_ne);

    // Test inversion
    let results = evaluate_predicate(&predicate_lt, &batch, true).unwrap();
    assert_eq!(results, expected_ge);

    let results = evaluate_predicate(&predicate_le, &batch, true).unwrap();
    assert_eq!(results, expected_gt);

    let results = evaluate_predicate(&predicate_gt, &batch, true).unwrap();
    assert_eq!(results, expected_le);

    let results = evaluate_predicate(&predicate_ge, &batch, true).unwrap();
    assert_eq!(results, expected_lt);

    let results = evaluate_predicate(&predicate_eq, &batch, true).unwrap();
    assert_eq!(results, expected_ne);

    let results = evaluate_predicate(&predicate_ne, &batch, true).unwrap();
    assert_eq!(results, expected_eq);
}

#[test]
fn test_logical() {
    let t = Some(true);
    let f = Some(false);
    let n = None;

    let schema = Schema::new(vec![
        Field::new("a", DataType::Boolean, false),
        Field::new("b", DataType::Boolean, true),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema.clone()),
        vec![
            Arc::new(BooleanArray::from(vec![t, t, f, f, t, f])),
            Arc::new(BooleanArray::from(vec![t, f, t, f, n, n])),
        ],
    )
    .unwrap();
    let column_a = column_pred!("a");
    let column_b = column_pred!("b");

    let pred_and_col = Pred::and(column_a.clone(), column_b.clone());
    let results = evaluate_predicate(&pred_and_col, &batch, false).unwrap();
    let expected = BooleanArray::from(vec![t, f, f, f, n, f]);
    assert_eq!(results, expected);

    let pred_and_lit = Pred::and(column_a.clone(), Pred::TRUE);
    let results = evaluate_predicate(&pred_and_lit, &batch, false).unwrap();
    let expected = BooleanArray::from(vec![t, t, f, f, t, f]);
    assert_eq!(results, expected);

    let pred_or_col = Pred::or(column_a.clone(), column_b);
    let results = evaluate_predicate(&pred_or_col, &batch, false).unwrap();
    let expected = BooleanArray::from(vec![t, t, t, f, t, n]);
    assert_eq!(results, expected);

    let pred_or_lit = Pred::or(column_a.clone(), Pred::FALSE);
    let results = evaluate_predicate(&pred_or_lit, &batch, false).unwrap();
    let expected = BooleanArray::from(vec![t, t, f, f, t, f]);
    assert_eq!(results, expected);

    // Test inversion
    let results = evaluate_predicate(&pred_and_col, &batch, true).unwrap();
    let expected = BooleanArray::from(vec![f, t, t, t, n, t]);
    assert_eq!(results, expected);

    let results = evaluate_predicate(&pred_and_lit, &batch, true).unwrap();
    let expected = BooleanArray::from(vec![f, f, t, t, f, t]);
    assert_eq!(results, expected);

    let results = evaluate_predicate(&pred_or_col, &batch, true).unwrap();
    let expected = BooleanArray::from(vec![f, f, f, t, f, n]);
    assert_eq!(results, expected);

    let results = evaluate_predicate(&pred_or_lit, &batch, true).unwrap();
    let expected = BooleanArray::from(vec![f, f, t, t, f, t]);
    assert_eq!(results, expected);
}

#[derive(Debug, PartialEq)]
struct OpaqueLessThanOp;

impl OpaqueLessThanOp {
    fn name(&self) -> &str {
        "less_than"
    }

    fn eval_pred(
        &self,
        args: &[Expression],
        batch: &RecordBatch,
        inverted: bool,
    ) -> KernelResult<BooleanArray> {
        let op_fn = match inverted {
            true => gt_eq,
            false => lt,
        };

        let [left, right] = args else {
            panic!("Invalid arg count: {}", args.len());
        };

        let eval = |arg| evaluate_expression(arg, batch, Some(&KernelDataType::INTEGER));
        Ok(op_fn(&eval(left)?, &eval(right)?)?)
    }
}

impl ArrowOpaqueExpressionOp for OpaqueLessThanOp {
    fn name(&self) -> &str {
        self.name()
    }

    fn eval_expr_scalar(
        &self,
        _eval_expr: &ScalarExpressionEvaluator<'_>,
        _exprs: &[Expression],
    ) -> KernelResult<Scalar> {
        unimplemented!() // OpaqueExpressionOp is already tested
    }

    fn eval_expr(
        &self,
        args: &[Expression],
        batch: &RecordBatch,
        result_type: Option<&KernelDataType>,
    ) -> KernelResult<ArrayRef> {
        assert!(matches!(result_type, None | Some(&KernelDataType::BOOLEAN)));
        let result = self.eval_pred(args, batch, false)?;
        Ok(Arc::new(result))
    }
}

impl ArrowOpaquePredicateOp for OpaqueLessThanOp {
    fn name(&self) -> &str {
        self.name()
    }

    fn eval_pred(
        &self,
        args: &[Expression],
        batch: &RecordBatch,
        inverted: bool,
    ) -> KernelResult<BooleanArray> {
        self.eval_pred(args, batch, inverted)
    }

    fn eval_pred_scalar(
        &self,
        _eval_expr: &ScalarExpressionEvaluator<'_>,
        _eval_pred: &DirectPredicateEvaluator<'_>,
        _exprs: &[Expression],
        _inverted: bool,
    ) -> KernelResult<Option<bool>> {
        unimplemented!() // OpaquePredicateOp is already tested
    }

    fn eval_as_data_skipping_predicate(
        &self,
        _predicate_evaluator: &DirectDataSkippingPredicateEvaluator<'_>,
        _exprs: &[Expr],
        _inverted: bool,
    ) -> Option<bool> {
        unimplemented!() // OpaquePredicateOp is already tested
    }

    fn as_data_skipping_predicate(
        &self,
        _predicate_evaluator: &IndirectDataSkippingPredicateEvaluator<'_>,
        _exprs: &[Expr],
        _inverted: bool,
    ) -> Option<Pred> {
        unimplemented!() // OpaquePredicateOp is already tested
    }
}

#[test]
fn test_opaque() {
    let expr = Expr::arrow_opaque(OpaqueLessThanOp, [col!("x"), lit(10)]);
    let pred = Pred::arrow_opaque(OpaqueLessThanOp, [col!("x"), lit(10)]);

    assert_eq!(
        format!("{expr:?}"),
        "Opaque(OpaqueExpression { op: ArrowOpaqueExpressionOpAdaptor(OpaqueLessThanOp), exprs: [Column(ColumnName { path: [\"x\"] }), Literal(Integer(10))] })"
    );
    assert_eq!(
        format!("{pred:?}"),
        "Opaque(OpaquePredicate { op: ArrowOpaquePredicateOpAdaptor(OpaqueLessThanOp), exprs: [Column(ColumnName { path: [\"x\"] }), Literal(Integer(10))] })"
    );

    assert_eq!(expr, expr);
    assert_eq!(pred, pred);

    let data = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, false)])),
        vec![Arc::new(Int32Array::from(vec![1, 10, 100]))],
    )
    .unwrap();

    let lt_result = evaluate_predicate(&pred, &data, false).unwrap();
    let lt_expected = BooleanArray::from(vec![true, false, false]);
    assert_eq!(lt_result, lt_expected);

    let not_lt_result = evaluate_predicate(&pred, &data, true).unwrap();
    let not_lt_expected = BooleanArray::from(vec![false, true, true]);
    assert_eq!(not_lt_result, not_lt_expected);

    let lt_result = evaluate_expression(&expr, &data, Some(&KernelDataType::BOOLEAN)).unwrap();
    assert_eq!(lt_result.as_ref(), &lt_expected);
}

#[test]
fn test_create_many_all_null_row() {
    // note that we _allow_ nested nulls, since the top-level struct can be NULL
    let schema = schema_ref! {
        nullable "x": {
            nullable "a": INTEGER,
            not_null "b": STRING,
        },
        nullable "c": STRING,
    };
    let handler = ArrowEvaluationHandler;
    let row: Vec<Scalar> = schema
        .fields()
        .map(|f| Scalar::null(f.data_type().clone()))
        .collect();
    let result = handler.create_many(schema.clone(), vec![row]).unwrap();
    let expected = RecordBatch::try_new(
        Arc::new(schema.as_ref().try_into_arrow().unwrap()),
        vec![
            Arc::new(StructArray::new_null(
                [
                    Arc::new(Field::new("a", DataType::Int32, true)),
                    Arc::new(Field::new("b", DataType::Utf8, false)),
                ]
                .into(),
                1,
            )),
            create_array!(Utf8, [None::<String>]),
        ],
    )
    .unwrap();

    let result = result.try_into_record_batch().unwrap();
    assert_eq!(result, expected);
}

#[test]
fn test_create_many_rejects_null_in_non_nullable_field() {
    let not_null_schema = schema_ref! {
        not_null "a": STRING,
    };
    let handler = ArrowEvaluationHandler;
    let row = vec![Scalar::null(KernelDataType::STRING)];
    assert_result_error_with_message(
        handler.create_many(not_null_schema, vec![row]),
        "Invalid argument error: Column 'a' is declared as non-nullable but contains null values",
    );
}

#[test]
fn test_scalar_map() -> KernelResult<()> {
    // making an 2-row array each with a map with 2 pairs.
    // result: { key1: 1, key2: null }, { key1: 1, key2: null }
    let map_type = MapType::new(KernelDataType::STRING, KernelDataType::INTEGER, true);
    let map_data = MapData::try_new(
        map_type,
        [("key1".to_string(), 1.into()), ("key2".to_string(), None)],
    )?;
    let scalar_map = Scalar::Map(map_data);
    let arrow_array = scalar_map.to_array(2)?;
    let map_array = arrow_array.as_any().downcast_ref::<MapArray>().unwrap();

    let key_builder = StringBuilder::new();
    let val_builder = Int32Builder::new();
    let names = MapFieldNames {
        entry: "key_values".to_string(),
        key: "keys".to_string(),
        value: "values".to_string(),
    };
    let mut builder = MapBuilder::new(Some(names), key_builder, val_builder);
    builder.keys().append_value("key1");
    builder.values().append_value(1);
    builder.keys().append_value("key2");
    builder.values().append_null();
    builder.append(true).unwrap();
    builder.keys().append_value("key1");
    builder.values().append_value(1);
    builder.keys().append_value("key2");
    builder.values().append_null();
    builder.append(true).unwrap();
    let expected = builder.finish();

    assert_eq!(map_array, &expected);
    Ok(())
}

#[test]
fn test_null_scalar_map() -> KernelResult<()> {
    let map_type = MapType::new(KernelDataType::STRING, KernelDataType::STRING, false);
    let null_scalar_map = Scalar::null(map_type);
    let arrow_array = null_scalar_map.to_array(1)?;
    let map_array = arrow_array.as_any().downcast_ref::<MapArray>().unwrap();

    assert_eq!(map_array.len(), 1);
    assert_eq!(map_array.null_count(), 1);
    assert!(map_array.is_null(0));

    Ok(())
}

#[test]
fn test_apply_schema_column_count_mismatch() {
    // Create a struct array with 3 columns
    let struct_array = StructArray::from(vec![
        (
            Arc::new(Field::new("a", DataType::Int32, false)),
            create_array!(Int32, [1]) as ArrayRef,
        ),
        (
            Arc::new(Field::new("b", DataType::Int32, false)),
            create_array!(Int32, [2]) as ArrayRef,
        ),
        (
            Arc::new(Field::new("c", DataType::Int32, false)),
            create_array!(Int32, [3]) as ArrayRef,
        ),
    ]);

    // Create a schema with only 2 fields (mismatch)
    let schema = KernelDataType::from(schema! {
        not_null "a": INTEGER,
        not_null "b": INTEGER,
    });

    let result = apply_schema(&struct_array, &schema);

    assert_result_error_with_message(
        result,
        "Passed struct had 3 columns, but transformed column has 2",
    );
}

#[test]
fn test_to_json_with_struct_array() {
    // Create a test struct array
    let boolean_field = Arc::new(Field::new("bool_field", ArrowDataType::Boolean, true));
    let int_field = Arc::new(Field::new("int_field", ArrowDataType::Int32, true));
    let string_field = Arc::new(Field::new("string_field", ArrowDataType::Utf8, true));

    let boolean_array = Arc::new(BooleanArray::from(vec![
        Some(true),
        Some(false),
        None,
        None,
        None,
    ]));
    let int_array = Arc::new(Int32Array::from(vec![Some(42), None, Some(84), None, None]));
    let string_array = Arc::new(StringArray::from(vec![
        Some("hello"),
        Some("world"),
        Some("test"),
        None,
        None,
    ]));

    let struct_array = StructArray::new(
        vec![boolean_field, int_field, string_field].into(),
        vec![boolean_array, int_array, string_array],
        Some(NullBuffer::new(BooleanBuffer::from(vec![
            true, true, true, true, false,
        ]))),
    );

    // Test the to_json function
    let result = to_json(&struct_array).unwrap();
    let json_array = result.as_any().downcast_ref::<StringArray>().unwrap();

    assert_eq!(json_array.len(), 5);
    assert_eq!(
        json_array.value(0),
        r#"{"bool_field":true,"int_field":42,"string_field":"hello"}"#
    );
    assert_eq!(
        json_array.value(1),
        r#"{"bool_field":false,"string_field":"world"}"#
    );
    assert_eq!(
        json_array.value(2),
        r#"{"int_field":84,"string_field":"test"}"#
    );
    // All fields of the struct row are null
    assert_eq!(json_array.value(3), r#"{}"#);
    // The struct row itself is null
    assert!(json_array.is_null(4));
}

#[test]
fn test_to_json_with_null_struct() {
    // Create a test struct array with a NullBuffer
    let int_field = Arc::new(Field::new("int_field", ArrowDataType::Int32, true));
    let int_array = Arc::new(Int32Array::from(vec![Some(42), Some(24)]));

    let struct_array = StructArray::new(
        vec![int_field].into(),
        vec![int_array],
        Some(crate::arrow::buffer::NullBuffer::new(
            crate::arrow::buffer::BooleanBuffer::from(vec![true, false]),
        )),
    );

    // Test the to_json function
    let result = to_json(&struct_array).unwrap();
    let json_array = result.as_any().downcast_ref::<StringArray>().unwrap();

    assert_eq!(json_array.len(), 2);
    assert!(!json_array.is_null(0));
    assert!(json_array.is_null(1));
    assert_eq!(json_array.value(0), r#"{"int_field":42}"#);
}

#[test]
fn test_to_json_with_non_struct_array() {
    // Test that to_json fails when input is not a StructArray
    let int_array = Int32Array::from(vec![1, 2, 3]);
    let result = to_json(&int_array);
    assert_result_error_with_message(result, "TO_JSON can only be applied to struct arrays");

    let string_array = StringArray::from(vec!["hello", "world"]);
    let result = to_json(&string_array);
    assert_result_error_with_message(result, "TO_JSON can only be applied to struct arrays");

    let boolean_array = BooleanArray::from(vec![true, false]);
    let result = to_json(&boolean_array);
    assert_result_error_with_message(result, "TO_JSON can only be applied to struct arrays");
}

#[test]
fn test_to_json_with_empty_struct_array() {
    // Test to_json with an empty struct array
    let int_field = Arc::new(Field::new("int_field", ArrowDataType::Int32, true));
    let int_array = Arc::new(Int32Array::from(Vec::<Option<i32>>::new()));

    let struct_array = StructArray::new(vec![int_field].into(), vec![int_array], None);

    let result = to_json(&struct_array).unwrap();
    let json_array = result.as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(json_array.len(), 0);
}

#[test]
fn test_to_json_with_nested_struct() {
    // Test to_json with nested struct fields
    let inner_int_field = Arc::new(Field::new("inner_int", ArrowDataType::Int32, true));
    let inner_string_field = Arc::new(Field::new("inner_string", ArrowDataType::Utf8, true));

    let inner_int_array = Arc::new(Int32Array::from(vec![Some(10), None]));
    let inner_string_array = Arc::new(StringArray::from(vec![Some("nested"), Some("value")]));

    let inner_struct_array = Arc::new(StructArray::new(
        vec![inner_int_field, inner_string_field].into(),
        vec![inner_int_array, inner_string_array],
        None,
    ));

    let outer_field = Arc::new(Field::new("outer_int", ArrowDataType::Int32, true));
    let nested_field = Arc::new(Field::new(
        "nested_struct",
        ArrowDataType::Struct(
            vec![
                Field::new("inner_int", ArrowDataType::Int32, true),
                Field::new("inner_string", ArrowDataType::Utf8, true),
            ]
            .into(),
        ),
        true,
    ));

    let outer_array = Arc::new(Int32Array::from(vec![Some(100), Some(200)]));

    let struct_array = StructArray::new(
        vec![outer_field, nested_field].into(),
        vec![outer_array, inner_struct_array],
        None,
    );

    let result = to_json(&struct_array).unwrap();
    let json_array = result.as_any().downcast_ref::<StringArray>().unwrap();

    assert_eq!(json_array.len(), 2);
    assert_eq!(
        json_array.value(0),
        r#"{"outer_int":100,"nested_struct":{"inner_int":10,"inner_string":"nested"}}"#
    );
    assert_eq!(
        json_array.value(1),
        r#"{"outer_int":200,"nested_struct":{"inner_string":"value"}}"#
    );
}

fn make_mixed_string_batch() -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("s_utf8", DataType::Utf8, true),
            Field::new("s_large", DataType::LargeUtf8, true),
            Field::new("s_view", DataType::Utf8View, true),
        ])),
        vec![
            Arc::new(StringArray::from(vec!["a"])) as ArrayRef,
            Arc::new(GenericStringArray::<i64>::from(vec!["b"])) as ArrayRef,
            Arc::new(StringViewArray::from(vec!["c"])) as ArrayRef,
        ],
    )
    .unwrap()
}

fn mixed_string_kernel_schema() -> StructType {
    schema! {
        nullable "s_utf8": STRING,
        nullable "s_large": STRING,
        nullable "s_view": STRING,
    }
}

/// Evaluator must succeed when a struct contains Utf8, LargeUtf8, and Utf8View columns in the
/// empty patch branch. The output schema is derived from actual column types, so
/// `LargeUtf8` and `Utf8View` columns remain valid even though the kernel type is `STRING`.
#[test]
fn test_evaluator_mixed_string_types_identity_transform() {
    let engine_data = ArrowEngineData::new(make_mixed_string_batch());
    let schema = mixed_string_kernel_schema();
    let input_schema = Arc::new(schema.clone());
    let output_type = KernelDataType::from(schema);

    let handler = ArrowEvaluationHandler;
    let expression: ExpressionRef =
        Arc::new(Expression::struct_patch(ExpressionStructPatchBuilder::new()).unwrap());
    handler
        .new_expression_evaluator(input_schema, expression, output_type)
        .unwrap()
        .evaluate(&engine_data)
        .unwrap();
}

/// Evaluator must succeed when a struct contains Utf8, LargeUtf8, and Utf8View columns in the
/// struct expression branch.
#[test]
fn test_evaluator_mixed_string_types_struct_expression() {
    let inner_batch = make_mixed_string_batch();
    let inner_struct: ArrayRef = Arc::new(StructArray::from(inner_batch));
    let inner_arrow_type = inner_struct.data_type().clone();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("st", inner_arrow_type, false)])),
        vec![inner_struct],
    )
    .unwrap();
    let engine_data = ArrowEngineData::new(batch);

    let schema = mixed_string_kernel_schema();
    let input_schema = schema_ref! {
        not_null "st": (schema.clone()),
    };
    let output_type = KernelDataType::from(schema);

    let handler = ArrowEvaluationHandler;
    let expression: ExpressionRef = Arc::new(col!("st"));
    handler
        .new_expression_evaluator(input_schema, expression, output_type)
        .unwrap()
        .evaluate(&engine_data)
        .unwrap();
}

#[derive(Clone, Copy, Debug)]
enum EvaluatorKind {
    Expression,
    Predicate,
}

#[derive(Clone, Copy, Debug)]
enum TopLevelSchemaMismatch {
    MissingField,
    ReorderedFields,
    RenamedField,
    WrongType,
}

impl TopLevelSchemaMismatch {
    fn expected_schema(self) -> SchemaRef {
        schema_ref! {
            nullable "a": INTEGER,
            nullable "b": STRING,
        }
    }

    fn data_schema(self) -> Schema {
        match self {
            Self::MissingField => Schema::new(vec![Field::new("a", DataType::Int32, true)]),
            Self::ReorderedFields => Schema::new(vec![
                Field::new("b", DataType::Utf8, true),
                Field::new("a", DataType::Int32, true),
            ]),
            Self::RenamedField => Schema::new(vec![
                Field::new("a", DataType::Int32, true),
                Field::new("c", DataType::Utf8, true),
            ]),
            Self::WrongType => Schema::new(vec![
                Field::new("a", DataType::Int64, true),
                Field::new("b", DataType::Utf8, true),
            ]),
        }
    }

    fn expected_error(self) -> &'static str {
        match self {
            // Validation treats a renamed field as a missing expected field.
            Self::MissingField | Self::RenamedField => {
                "Expected schema field 'b' is missing in data schema fields"
            }
            Self::ReorderedFields => {
                "Expected schema field 'b' is out of order in data schema fields"
            }
            Self::WrongType => "Expected schema type for 'a' does not match the data schema type",
        }
    }
}

#[rstest]
#[case::missing_field(TopLevelSchemaMismatch::MissingField)]
#[case::reordered_fields(TopLevelSchemaMismatch::ReorderedFields)]
#[case::renamed_field(TopLevelSchemaMismatch::RenamedField)]
#[case::wrong_type(TopLevelSchemaMismatch::WrongType)]
fn evaluator_rejects_mismatched_top_level_schema(
    #[values(EvaluatorKind::Expression, EvaluatorKind::Predicate)] evaluator_kind: EvaluatorKind,
    #[case] mismatch: TopLevelSchemaMismatch,
) {
    let expected_schema = mismatch.expected_schema();
    let data_schema = mismatch.data_schema();
    let batch = ArrowEngineData::new(RecordBatch::new_empty(Arc::new(data_schema)));
    let handler = ArrowEvaluationHandler;
    let result = match evaluator_kind {
        EvaluatorKind::Expression => handler
            .new_expression_evaluator(
                expected_schema,
                Arc::new(col!("a")),
                KernelDataType::INTEGER,
            )
            .unwrap()
            .evaluate(&batch),
        EvaluatorKind::Predicate => handler
            .new_predicate_evaluator(expected_schema, Arc::new(Predicate::TRUE))
            .unwrap()
            .evaluate(&batch),
    };

    assert_result_error_with_message(result, mismatch.expected_error());
}

#[rstest]
fn evaluator_accepts_extra_top_level_fields(
    #[values(EvaluatorKind::Expression, EvaluatorKind::Predicate)] evaluator_kind: EvaluatorKind,
) {
    let expected_schema = schema_ref! {
        nullable "a": INTEGER,
        nullable "b": STRING,
    };
    let data_schema = Schema::new(vec![
        Field::new("before", DataType::Duration(TimeUnit::Second), true),
        Field::new("a", DataType::Int32, true),
        Field::new("between", DataType::Boolean, true),
        Field::new("b", DataType::Utf8, true),
        Field::new("after", DataType::Boolean, true),
    ]);
    let batch = ArrowEngineData::new(RecordBatch::new_empty(Arc::new(data_schema)));
    let handler = ArrowEvaluationHandler;

    match evaluator_kind {
        EvaluatorKind::Expression => handler
            .new_expression_evaluator(
                expected_schema,
                Arc::new(col!("a")),
                KernelDataType::INTEGER,
            )
            .unwrap()
            .evaluate(&batch)
            .unwrap(),
        EvaluatorKind::Predicate => handler
            .new_predicate_evaluator(expected_schema, Arc::new(Predicate::TRUE))
            .unwrap()
            .evaluate(&batch)
            .unwrap(),
    };
}

#[test]
fn evaluator_accepts_nested_schema_differences() {
    let input_schema = schema_ref! {
        nullable "s": { not_null "a": INTEGER },
    };
    let batch_schema = Schema::new(vec![Field::new(
        "s",
        DataType::Struct(
            vec![Field::new(
                "unsupported",
                DataType::Duration(TimeUnit::Second),
                true,
            )]
            .into(),
        ),
        true,
    )]);

    validate_data_schema_top_level(&input_schema, &batch_schema).unwrap();
}

#[test]
fn evaluator_accepts_conflicting_nested_field_type() {
    let input_schema = schema_ref! {
        nullable "s": { not_null "a": INTEGER },
    };
    let batch_schema = schema_ref! {
        nullable "s": { nullable "a": STRING },
    };
    let batch_schema: Schema = batch_schema.as_ref().try_into_arrow().unwrap();

    validate_data_schema_top_level(&input_schema, &batch_schema).unwrap();
}

#[test]
fn evaluator_accepts_variant_arrow_struct_representation() {
    let input_schema = schema_ref! {
        nullable "v": (KernelDataType::unshredded_variant()),
    };
    let batch_schema = Schema::new(vec![Field::new(
        "v",
        DataType::Struct(
            vec![
                Field::new("metadata", DataType::Binary, false),
                Field::new("value", DataType::Binary, false),
            ]
            .into(),
        ),
        true,
    )]);

    validate_data_schema_top_level(&input_schema, &batch_schema).unwrap();
}

fn kernel_int_array_type() -> KernelDataType {
    ArrayType::new(KernelDataType::INTEGER, true).into()
}

fn arrow_int_array_element() -> Arc<Field> {
    Arc::new(Field::new("element", DataType::Int32, true))
}

fn arrow_int_string_map_type() -> DataType {
    let entries = Field::new(
        "entries",
        DataType::Struct(
            vec![
                Field::new("key", DataType::Int32, false),
                Field::new("value", DataType::Utf8, true),
            ]
            .into(),
        ),
        false,
    );
    DataType::Map(Arc::new(entries), false)
}

#[test]
fn evaluator_accepts_round_trippable_arrow_representations() {
    // Each Arrow type maps unambiguously to a Kernel type through `TryIntoKernel`.
    let arrow_types = [
        DataType::Utf8,
        DataType::LargeUtf8,
        DataType::Utf8View,
        DataType::Int64,
        DataType::UInt64,
        DataType::Int32,
        DataType::UInt32,
        DataType::Int16,
        DataType::UInt16,
        DataType::Int8,
        DataType::UInt8,
        DataType::Null,
        DataType::Float32,
        DataType::Float64,
        DataType::Boolean,
        DataType::Binary,
        DataType::FixedSizeBinary(16),
        DataType::LargeBinary,
        DataType::BinaryView,
        DataType::Decimal128(10, 2),
        DataType::Date32,
        DataType::Date64,
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
        DataType::Timestamp(TimeUnit::Microsecond, None),
        DataType::Timestamp(TimeUnit::Nanosecond, None),
        DataType::Timestamp(TimeUnit::Millisecond, None),
        DataType::Struct(Fields::empty()),
        DataType::List(arrow_int_array_element()),
        DataType::ListView(arrow_int_array_element()),
        DataType::LargeList(arrow_int_array_element()),
        DataType::LargeListView(arrow_int_array_element()),
        DataType::FixedSizeList(arrow_int_array_element(), 3),
        arrow_int_string_map_type(),
        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        DataType::Dictionary(
            Box::new(DataType::Int32),
            Box::new(DataType::Dictionary(
                Box::new(DataType::Int16),
                Box::new(DataType::Utf8),
            )),
        ),
    ];

    for data_type in arrow_types {
        let expected_type = (&data_type).try_into_kernel().unwrap();
        assert_top_level_type_compatible(expected_type, data_type);
    }
}

// Some Kernel types, such as interval types, are not round-trippable through Arrow. This test
// ensures `validate_data_schema_top_level` accepts their Arrow representations.
#[rstest]
#[case::year_month(KernelDataType::INTERVAL_YEAR_MONTH, DataType::Int32)]
#[case::year_month_unsigned(KernelDataType::INTERVAL_YEAR_MONTH, DataType::UInt32)]
#[case::day_time(KernelDataType::INTERVAL_DAY_TIME, DataType::Int64)]
#[case::day_time_unsigned(KernelDataType::INTERVAL_DAY_TIME, DataType::UInt64)]
fn evaluator_accepts_non_round_trippable_interval_arrow_representation(
    #[case] expected_type: KernelDataType,
    #[case] data_type: DataType,
) {
    assert_top_level_type_compatible(expected_type, data_type);
}

fn assert_top_level_type_compatible(expected_type: KernelDataType, data_type: DataType) {
    let expected_schema =
        Arc::new(StructType::try_new([StructField::nullable("value", expected_type)]).unwrap());
    let data_schema = Schema::new(vec![Field::new("value", data_type, true)]);
    validate_data_schema_top_level(&expected_schema, &data_schema).unwrap();
}

#[rstest]
#[case::container_and_primitive(empty_struct_type(), DataType::Int32)]
#[case::different_container_kinds(kernel_int_array_type(), arrow_int_string_map_type())]
fn evaluator_rejects_incompatible_top_level_container_types(
    #[case] expected_type: KernelDataType,
    #[case] data_type: DataType,
) {
    let expected_schema =
        Arc::new(StructType::try_new([StructField::nullable("value", expected_type)]).unwrap());
    let data_schema = Schema::new(vec![Field::new("value", data_type, true)]);

    assert_result_error_with_message(
        validate_data_schema_top_level(&expected_schema, &data_schema),
        "Expected schema type for 'value' does not match the data schema type",
    );
}

fn empty_struct_type() -> KernelDataType {
    StructType::try_new([]).unwrap().into()
}

// helper to build a RecordBatch via `create_many` and assert it equals `expected`
fn assert_create_many(rows: Vec<Vec<Scalar>>, schema: SchemaRef, expected: RecordBatch) {
    let handler = ArrowEvaluationHandler;
    let actual = handler.create_many(schema, rows).unwrap();
    let actual_rb = actual.try_into_record_batch().unwrap();
    assert_eq!(actual_rb, expected);
}

#[test]
fn test_create_many_multiple_rows() {
    let row1 = vec![1.into(), "A".into()];
    let row2 = vec![2.into(), "B".into()];
    let row3 = vec![Scalar::Null(KernelDataType::INTEGER), "C".into()];
    let schema = schema_ref! {
        nullable "id": INTEGER,
        nullable "name": STRING,
    };
    let expected_schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, true),
        Field::new("name", DataType::Utf8, true),
    ]));
    let expected = RecordBatch::try_new(
        expected_schema,
        vec![
            create_array!(Int32, [Some(1), Some(2), None]),
            create_array!(Utf8, ["A", "B", "C"]),
        ],
    )
    .unwrap();
    assert_create_many(vec![row1, row2, row3], schema, expected);
}

#[test]
fn test_create_many_empty_rows_returns_zero_row_batch() {
    let schema = schema_ref! {
        nullable "a": INTEGER,
        nullable "b": STRING,
    };
    let handler = ArrowEvaluationHandler;
    let result = handler.create_many(schema.clone(), vec![]).unwrap();
    assert_eq!(result.len(), 0);
    let rb = result.try_into_record_batch().unwrap();
    assert_eq!(rb.num_rows(), 0);
    assert_eq!(rb.num_columns(), 2);
}

#[test]
fn test_create_many_wrong_field_count_returns_error() {
    let schema = schema_ref! {
        nullable "a": INTEGER,
        nullable "b": STRING,
    };
    // Row has 3 scalars but schema has 2 fields
    let bad_row = vec![1.into(), "x".into(), 99.into()];
    let handler = ArrowEvaluationHandler;
    assert_result_error_with_message(
        handler.create_many(schema, vec![bad_row]),
        "Row 0 has 3 scalars but schema has 2 fields",
    );
}

#[test]
fn test_create_many_wrong_field_type_returns_error() {
    let schema = schema_ref! {
        nullable "a": INTEGER,
        nullable "b": STRING,
    };
    // Row 1 passes a Long where an Integer is expected for field "a"
    let good_row = vec![1.into(), "x".into()];
    let bad_row = vec![1i64.into(), "y".into()];
    let handler = ArrowEvaluationHandler;
    assert_result_error_with_message(
        handler.create_many(schema, vec![good_row, bad_row]),
        "Row 1, field 'a' (expected type integer, got long): Invalid expression evaluation: Invalid builder for long",
    );
}

#[test]
fn test_create_many_nested_struct() {
    // Schema: outer { inner: Struct { x: INT, y: STRING }, flag: BOOLEAN }
    let inner_type = KernelDataType::from(schema! {
        nullable "x": INTEGER,
        nullable "y": STRING,
    });
    let schema = schema_ref! {
        nullable "inner": (inner_type.clone()),
        nullable "flag": BOOLEAN,
    };

    // Row 1: inner = Struct { x: 10, y: "hello" }, flag = true
    let row1 = vec![
        Scalar::Struct(
            crate::expressions::StructData::try_new(
                vec![
                    StructField::nullable("x", KernelDataType::INTEGER),
                    StructField::nullable("y", KernelDataType::STRING),
                ],
                vec![10.into(), "hello".into()],
            )
            .unwrap(),
        ),
        true.into(),
    ];
    // Row 2: inner = null struct, flag = false
    let row2 = vec![Scalar::Null(inner_type), false.into()];

    let arrow_inner_fields: Fields = vec![
        Field::new("x", DataType::Int32, true),
        Field::new("y", DataType::Utf8, true),
    ]
    .into();
    let expected_schema = Arc::new(Schema::new(vec![
        Field::new("inner", DataType::Struct(arrow_inner_fields.clone()), true),
        Field::new("flag", DataType::Boolean, true),
    ]));

    // Build expected inner struct column: row 1 has values, row 2 is null
    let inner_col = Arc::new(StructArray::new(
        arrow_inner_fields.clone(),
        vec![
            create_array!(Int32, [Some(10), None]) as ArrayRef,
            create_array!(Utf8, [Some("hello"), None]) as ArrayRef,
        ],
        // null buffer: row 0 valid, row 1 null
        Some(NullBuffer::from(BooleanBuffer::from(vec![true, false]))),
    ));
    let expected = RecordBatch::try_new(
        expected_schema,
        vec![inner_col, create_array!(Boolean, [true, false])],
    )
    .unwrap();
    assert_create_many(vec![row1, row2], schema, expected);
}

#[test]
fn test_void_scalar_to_array() {
    let scalar = Scalar::Null(KernelDataType::VOID);
    let array = scalar.to_array(5).unwrap();
    assert_eq!(array.len(), 5);
    assert_eq!(*array.data_type(), DataType::Null);
}

// Interval scalars materialize as their physical integer arrays (Int32 months / Int64 micros).
#[rstest]
#[case::year_month(Scalar::IntervalYearMonth(30), DataType::Int32)]
#[case::day_time(Scalar::IntervalDayTime(5), DataType::Int64)]
fn test_interval_scalar_to_array(#[case] scalar: Scalar, #[case] arrow_type: DataType) {
    let array = scalar.to_array(2).unwrap();
    assert_eq!(array.len(), 2);
    assert_eq!(*array.data_type(), arrow_type);

    let nulls = Scalar::Null(scalar.data_type()).to_array(2).unwrap();
    assert_eq!(*nulls.data_type(), arrow_type);
}

#[cfg(feature = "geo-type-in-dev")]
#[rstest]
#[case(geometry_type("EPSG:4326"))]
#[case(geography_type("EPSG:4326", EdgeInterpolationAlgorithm::Spherical))]
fn test_geo_append_null_unsupported(#[case] dt: KernelDataType) {
    let mut builder: Box<dyn crate::arrow::array::ArrayBuilder> =
        Box::new(crate::arrow::array::BinaryBuilder::new());
    let err = Scalar::append_null(builder.as_mut(), &dt, 1).unwrap_err();
    assert!(
        matches!(err, KernelError::Unsupported(_)),
        "expected Unsupported, got: {err:?}"
    );
}
