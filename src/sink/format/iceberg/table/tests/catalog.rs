//! A catalog commit's requirements and updates, made from the versions
//! the file-system layout writes whole.

use super::*;
use crate::sink::format::iceberg::table::catalog_commit::changes;
use serde_json::Value;

fn actions(updates: &[Value]) -> Vec<&str> {
    updates.iter().map(|u| u["action"].as_str().unwrap()).collect()
}

fn kinds(requirements: &[Value]) -> Vec<&str> {
    requirements.iter().map(|r| r["type"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn a_catalog_commit_asserts_what_it_was_made_on_and_sends_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let storage = storage(dir.path());
    let (t, v1) = made(&storage).await;
    let f = put_file(&storage, &v1, "chain=base/date=2025-01-01/a.parquet", 1, 10).await;
    let v2 = committed(t.commit(&storage, &append(vec![part(vec![f], "job-a", 1)]), 3).await.unwrap());
    let (req, up) = changes(&v1.metadata, &v2.metadata);
    assert_eq!(kinds(&req), ["assert-table-uuid", "assert-ref-snapshot-id"]);
    assert_eq!(req[1]["snapshot-id"], Value::Null, "a first snapshot asserts main has none");
    assert_eq!(actions(&up), ["add-snapshot", "set-snapshot-ref"]);
    let snap = &up[0]["snapshot"];
    assert_eq!(snap["summary"]["chainetl.txn.job-a"], "1");
    assert_eq!(snap["summary"]["operation"], "append");
    assert_eq!(up[1]["ref-name"], "main");
    assert_eq!(up[1]["type"], "branch");
    assert_eq!(up[1]["snapshot-id"], snap["snapshot-id"]);

    // A column added: a new schema made current, the name mapping with it.
    let mut wider: Vec<Field> = events_schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    wider.push(Field::new("note", DataType::Utf8, true));
    let v3 = t.add_columns(&storage, &Schema::new(wider), 3).await.unwrap().unwrap();
    let (req, up) = changes(&v2.metadata, &v3.metadata);
    assert_eq!(
        kinds(&req),
        [
            "assert-table-uuid",
            "assert-ref-snapshot-id",
            "assert-current-schema-id",
            "assert-last-assigned-field-id"
        ]
    );
    assert_eq!(req[1]["snapshot-id"], v2.metadata.current_snapshot_id.unwrap());
    assert_eq!(actions(&up), ["add-schema", "set-current-schema", "set-properties"]);
    assert_eq!(up[1]["schema-id"], -1, "the schema just added");
    assert!(up[2]["updates"].get(NAME_MAPPING).is_some());

    // Nothing changed: nothing to send.
    let (_, up) = changes(&v3.metadata, &v3.metadata);
    assert!(up.is_empty());

    // Snapshots dropped and a property gone.
    let mut v4 = v3.metadata.clone();
    v4.snapshots.clear();
    v4.refs.clear();
    v4.properties.remove(NAME_MAPPING);
    let (_, up) = changes(&v3.metadata, &v4);
    assert_eq!(actions(&up), ["remove-snapshots", "remove-snapshot-ref", "remove-properties"]);
    assert_eq!(up[0]["snapshot-ids"], serde_json::json!([v2.metadata.current_snapshot_id.unwrap()]));
}
