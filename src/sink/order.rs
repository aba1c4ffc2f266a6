//! Whether rows arrive in the table's key order: the check behind a data
//! file's *sorting columns*, which a file declares only when every row it
//! holds was checked to follow the one before (ascending; equal keys
//! allowed). The key is [`crate::decode::natural_key`].

use arrow_array::RecordBatch;
use arrow_row::{OwnedRow, RowConverter, SortField};
use arrow_schema::{ArrowError, Schema};

/// The key order of the rows seen so far by one file.
pub(super) struct KeyOrder {
    /// Key columns, as indexes of the batches' schema.
    key: Vec<usize>,
    conv: RowConverter,
    /// The key of the last row seen.
    last: Option<OwnedRow>,
}

impl KeyOrder {
    /// A check of rows of `schema` by columns `key` (indexes into it); None
    /// when the key is empty (the table has no order to declare).
    pub(super) fn new(schema: &Schema, key: &[usize]) -> Result<Option<KeyOrder>, ArrowError> {
        if key.is_empty() {
            return Ok(None);
        }
        let fields = key.iter().map(|&i| SortField::new(schema.field(i).data_type().clone())).collect();
        Ok(Some(KeyOrder {
            key: key.to_vec(),
            conv: RowConverter::new(fields)?,
            last: None,
        }))
    }

    /// Whether `batch`'s rows continue the order: each at or after the one
    /// before it, the first at or after the last row seen. Only a batch
    /// that continues it is remembered.
    pub(super) fn continues(&mut self, batch: &RecordBatch) -> Result<bool, ArrowError> {
        if batch.num_rows() == 0 {
            return Ok(true);
        }
        let columns: Vec<_> = self.key.iter().map(|&i| batch.column(i).clone()).collect();
        let rows = self.conv.convert_columns(&columns)?;
        if self.last.as_ref().is_some_and(|l| l.row() > rows.row(0)) {
            return Ok(false);
        }
        let mut prev = rows.row(0);
        for r in rows.iter().skip(1) {
            if prev > r {
                return Ok(false);
            }
            prev = r;
        }
        self.last = Some(prev.owned());
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field};
    use std::sync::Arc;

    fn batch(a: &[i64], b: &[&str]) -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("b", DataType::Utf8, false),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(Int64Array::from(a.to_vec())), Arc::new(StringArray::from(b.to_vec()))],
        )
        .unwrap()
    }

    #[test]
    fn rows_in_order_within_and_across_batches_continue_it_and_a_step_back_does_not() {
        let first = batch(&[1, 1, 2], &["a", "b", "a"]);
        let mut order = KeyOrder::new(&first.schema(), &[0, 1]).unwrap().unwrap();
        assert!(order.continues(&first).unwrap());
        assert!(order.continues(&batch(&[2, 3], &["a", "a"])).unwrap(), "an equal key is in order");
        assert!(!order.continues(&batch(&[2], &["z"])).unwrap(), "a step back across batches");
        assert!(order.continues(&batch(&[4], &["a"])).unwrap(), "a refused batch is not remembered");
        assert!(
            !order.continues(&batch(&[5, 6, 5], &["a", "a", "b"])).unwrap(),
            "a step back within a batch"
        );
        assert!(
            !order.continues(&batch(&[7, 7], &["b", "a"])).unwrap(),
            "the second key column counts"
        );
        assert!(KeyOrder::new(&first.schema(), &[]).unwrap().is_none());
    }
}
