"""What the read-back scripts (delta_check.py, iceberg_check.py, the
formats conformance's driver) say of a table's rows, in one place: rows as
comparable text, distinct keys, a blocks table's broken links and gaps,
and an Iceberg table's snapshots read as pyiceberg reads them. Arrow
tables in, plain values out."""


def rows_of(table, columns):
    """Each row as one JSON object, keys sorted, of its values as text;
    the rows sorted. Two tables of the same types give the same list
    exactly when they hold the same rows.

    The text is Arrow's (a cast to string), made a column at a time in
    Arrow, and null is "None". A column Arrow cannot cast (binary, lists)
    or whose text would need escaping falls back to Python's str() and
    json's quoting."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from json.encoder import encode_basestring as quote

    if table.num_rows == 0:
        return []
    fields = []
    for name in sorted(columns):
        col = table.column(name)
        text = None
        try:
            text = pc.fill_null(pc.cast(col, pa.string()), "None")
            if pc.any(pc.match_substring_regex(text, r'["\\\x00-\x1f]')).as_py():
                text = None
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            text = None
        if text is None:
            quoted = pa.array([quote(str(v)) for v in col.to_pylist()], pa.string())
        else:
            quoted = pc.binary_join_element_wise('"', text, '"', "")
        fields.append(pc.binary_join_element_wise(quote(name) + ": ", quoted, ""))
    rows = pc.binary_join_element_wise("{", pc.binary_join_element_wise(*fields, ", "), "}", "")
    return pc.take(rows, pc.sort_indices(rows)).to_pylist()


def key_set(t, keys):
    """The distinct keys of the rows, as an Arrow array of text (one per
    key: its columns' text joined), for counting and for `is_in`. A hash
    reads as 0x-hex whether stored as text or bytes, so a rewrite into
    another hash encoding keeps every key."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if t.num_rows == 0:
        return pa.array([], pa.string())
    parts = []
    for k in keys:
        col = t.column(k)
        if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type) or pa.types.is_fixed_size_binary(col.type):
            text = pa.array([None if v is None else "0x" + v.hex() for v in col.to_pylist()], pa.string())
        else:
            text = pc.cast(col, pa.string())
        parts.append(pc.fill_null(text, "\x00null"))
    return pc.unique(pc.binary_join_element_wise(*parts, "\x1f"))


def holds(keys, parent):
    """Whether key set `keys` holds every key of key set `parent`."""
    import pyarrow.compute as pc

    return len(parent) == 0 or pc.all(pc.is_in(parent, value_set=keys)).as_py()


def broken_links(t):
    """Consecutive blocks of one chain where the later's parent_hash is not
    the earlier's hash: blocks of two branches side by side."""
    blocks = sorted(zip(t.column("chain").to_pylist(), t.column("number").to_pylist(),
                        t.column("hash").to_pylist(), t.column("parent_hash").to_pylist()))
    broken = 0
    for a, b in zip(blocks, blocks[1:]):
        if a[0] == b[0] and b[1] == a[1] + 1 and b[3] != a[2]:
            broken += 1
    return broken


def gaps(t):
    """Block numbers missing between a chain's lowest and highest."""
    by_chain = {}
    for c, n in zip(t.column("chain").to_pylist(), t.column("number").to_pylist()):
        by_chain.setdefault(c, set()).add(n)
    return sum(max(ns) - min(ns) + 1 - len(ns) for ns in by_chain.values())


def iceberg_snapshots(table, snapshots, selected_fields):
    """Each of `snapshots` of pyiceberg table `table` as pyiceberg reads it,
    as (snapshot, Arrow table): a scan of the snapshot, planned, then its
    tasks read by pyiceberg's ArrowScan, as `scan(…).to_arrow()` does. Each
    task (a data file, its delete files, the projection) is read once:
    a data file's path never names other bytes, and snapshots share most
    of their files."""
    import pyarrow as pa
    from pyiceberg.io.pyarrow import ArrowScan

    read = {}
    for s in snapshots:
        scan = table.scan(snapshot_id=s.snapshot_id, selected_fields=selected_fields)
        projection = scan.projection()
        reader = ArrowScan(table.metadata, table.io, projection, scan.row_filter, scan.case_sensitive)
        columns = (projection.schema_id, tuple(f.field_id for f in projection.fields))
        parts = []
        for task in scan.plan_files():
            key = (task.file.file_path, frozenset(d.file_path for d in task.delete_files), columns)
            if key not in read:
                read[key] = reader.to_table([task])
            parts.append(read[key])
        # As ArrowScan joins a scan's batches (their types may differ: large_ types).
        yield s, pa.concat_tables(parts, promote_options="permissive") if parts else reader.to_table([])
