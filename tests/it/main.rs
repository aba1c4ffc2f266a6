//! Integration tests: one binary, a module per area.

/// Changing a job's output format from the files it holds, with no request, exact through kill -9.
mod changing;
/// The typed client against each simulator fault: exact results, retries accounted, the key never shown.
mod client;
/// Choosing the columns an export writes, and leaving more out of a finished job's files with no request.
mod columns;
/// CLI comforts: completions, man pages, `--version`, the container image and its Kubernetes example.
mod comforts;
/// Fixtures: the simulator, the binary, Parquet read-back, ground truth as rows.
mod common;
/// Compaction: one sorted file per partition, exactly once under kill -9, engines read it alike.
mod compact;
/// Compaction meeting shards, hand-edited state and damaged inputs.
mod compact_seams;
/// `status`, `report` and `verify` count the files readers see, alike, through every change.
mod counts;
/// Decoded events: typed tables from signatures, ABIs and presets, values exact.
mod decoded;
/// Delta Lake output: every reader reads the parquet export's rows, every version exact.
mod delta;
/// Delta Lake output of incremental exports and `--follow`: reorg repairs swap branches in one commit.
mod delta_follow;
/// Derived tables (decoding, u256 columns) made from the stored rows, with no request.
mod derive;
/// The docs: spec examples validate, relative links resolve, the quickstart runs as written.
mod docs;
/// Every row through every change of a job: units spanning partitions, some compacted; `verify` counts rows.
mod every_row;
/// `chainetl run` end to end: every dataset's rows equal the simulator's, row by row.
mod export;
/// Format conformance on local disk and S3, one function per guarantee, generic over the table format.
mod formats;
/// Windows and durations in every form users write them.
mod forms;
/// Hostile servers: endless, huge, hanging, wrong-shape and looping answers fail clearly.
mod hostile;
/// Iceberg tables written by the storage module, read exactly by pyiceberg and DuckDB at every snapshot.
mod iceberg;
/// Iceberg commits through a REST catalog whose commit logic is pyiceberg's: exactly once through its failures.
mod iceberg_catalog;
/// Iceberg commits: the version hint is part of each, vacuum spares commits in flight, adopted files re-partition.
mod iceberg_commits;
/// `format = "iceberg"` through the CLI: every reader, conversions, shards, vacuum.
mod iceberg_format;
/// Careless specs and flags: every error at once, with file, line and key.
mod input;
/// Operations begun and not finished: what verify, status and repair say and do.
mod interrupted;
/// The source tree's shape: stage order, file and function sizes.
mod layout;
/// A holder paused past its lease writes nothing.
mod lease;
/// The open-file limit at the maximum concurrency.
mod limits;
/// Every change of a job drawn at random from a seed: readers see a fresh export's rows after each step.
mod model;
/// A newcomer's first hour: keys never printed back, `--set` blamed, plan refusing as run does, words that agree.
mod newcomer;
/// Help and error texts, exit codes, the run report, secrets kept out, terminal progress.
mod operator;
/// Machine-readable operation: JSON lines, run reports, Prometheus metrics.
mod ops;
/// `chainetl plan` of a started job: frozen windows, units done and left.
mod planning;
/// A refused key stops the run at once, spends no request a unit, and leaves the rest not started.
mod refused;
/// Changing a job's layout (partition keys, codec, bloom filters) from the files it holds, with no request.
mod relayout;
/// `chainetl report`: the page and its JSON, in headless Chromium.
mod report;
/// Resume after kill -9, failpoints and signals: rows exactly once.
mod resume;
/// S3 output on moto through a proxy that can drop the connection.
mod s3;
/// Backfills at scale: state stays a handful of objects.
mod scale;
/// Aligned, incremental and follow runs, and reorg repair.
mod schedule;
/// Exactly-once where jobs, processes and features meet.
mod seams;
/// Simulator conformance over HTTP.
mod sim;
/// Sorting columns on every in-order file; compaction copying column chunks.
mod sorting;
/// Storage conformance on local disk and S3, one function per guarantee.
mod storage;
/// The simulator's ground truth rendered as comparable rows.
mod truth;
/// What people and scripts read of a job: instants to the second in text and whole in JSON; idle runs as lines.
mod views;
