//! The export path's own stages, each alone, in memory, on one thread,
//! hot: what they cost with no HTTP, no kernel, no storage, no runtime.
//! A floor under the export path's CPU (docs/performance.md).
//!
//! - `read-and-decode`: saved events pages (the service's JSON bodies)
//!   read as `Client::events` reads them (`chainetl::api::read_events_page`)
//!   and decoded into Arrow batches (`chainetl::decode::events::decode`);
//! - the Parquet writer: the rows of an export's files read back into
//!   batches of a page's size, then written again to memory with the
//!   writer properties the export uses (`chainetl::sink::file_properties`,
//!   `as-configured`), and with statistics and bloom filters, or
//!   compression, turned off, so a profile's shares have a figure.
//!
//!   cargo bench --bench parquet_floor -- SPEC [PAGE.json...] FILE.parquet...
//!
//! SPEC is the export's spec (its `[output]`: codec, level, bloom
//! filters, row groups; its `source.page_size`: the batch size). Prints
//! one JSON object a line: variant, rows, CPU µs a row (best of
//! `REPS`), and for the writer the bytes written.
use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use std::process::ExitCode;

const REPS: usize = 3;

/// CPU seconds this process has used, user and system.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(r.ru_utime) + secs(r.ru_stime)
}

/// `props` with `variant`'s parts turned off.
fn variant(props: &WriterProperties, bloom_columns: &[String], name: &str) -> WriterProperties {
    let mut b = props.clone().into_builder();
    if name.contains("no-statistics") {
        b = b.set_statistics_enabled(EnabledStatistics::None);
        for c in bloom_columns {
            b = b.set_column_bloom_filter_enabled(ColumnPath::from(c.as_str()), false);
        }
    }
    if name.contains("uncompressed") {
        b = b.set_compression(Compression::UNCOMPRESSED);
    }
    b.build()
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [spec, files @ ..] = args.as_slice() else {
        return Err("usage: cargo bench --bench parquet_floor -- SPEC FILE.parquet...".into());
    };
    let (pages, files): (Vec<&String>, Vec<&String>) = files.iter().partition(|f| f.ends_with(".json"));
    if files.is_empty() {
        return Err("no Parquet files given".into());
    }
    let spec = chainetl::spec::Spec::load(spec).map_err(|e| format!("{spec}: {e}"))?;
    if !pages.is_empty() {
        read_and_decode(&pages, spec.output.hash_encoding)?;
    }
    let mut inputs: Vec<(Vec<RecordBatch>, WriterProperties)> = Vec::new();
    let mut rows = 0;
    for f in files {
        let bytes = bytes::Bytes::from(std::fs::read(f).map_err(|e| format!("{f}: {e}"))?);
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
            .map_err(|e| format!("{f}: {e}"))?
            .with_batch_size(spec.source.page_size as usize);
        let schema = reader.schema().clone();
        let props = chainetl::sink::file_properties(&spec.output, &schema, &[]).map_err(|e| format!("{f}: {e}"))?;
        let batches: Vec<RecordBatch> = reader
            .build()
            .map_err(|e| format!("{f}: {e}"))?
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{f}: {e}"))?;
        rows += batches.iter().map(|b| b.num_rows()).sum::<usize>();
        if !batches.is_empty() {
            inputs.push((batches, props));
        }
    }
    if rows == 0 {
        return Err("the files hold no rows".into());
    }
    for name in [
        "as-configured",
        "no-statistics-or-bloom-filters",
        "uncompressed",
        "uncompressed-no-statistics-or-bloom-filters",
    ] {
        let mut best = f64::MAX;
        let mut written = 0;
        for _ in 0..REPS {
            let start = cpu_seconds();
            written = 0;
            for (batches, props) in &inputs {
                let props = variant(props, &spec.output.bloom_filters, name);
                let mut w = ArrowWriter::try_new(Vec::new(), batches[0].schema(), Some(props)).map_err(|e| e.to_string())?;
                for b in batches {
                    w.write(b).map_err(|e| e.to_string())?;
                }
                written += w.into_inner().map_err(|e| e.to_string())?.len();
            }
            best = best.min(cpu_seconds() - start);
        }
        println!(
            "{{\"variant\": \"{name}\", \"rows\": {rows}, \"cpu_us_per_row\": {:.3}, \"bytes\": {written}}}",
            best / rows as f64 * 1e6
        );
    }
    Ok(())
}

/// Prints the CPU a row of reading and decoding the events pages saved
/// at `paths`.
fn read_and_decode(paths: &[&String], enc: chainetl::spec::HashEncoding) -> Result<(), String> {
    use chainetl::plan::{Unit, UnitRange};
    let bodies: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).map_err(|e| format!("{p}: {e}")))
        .collect::<Result<_, _>>()?;
    let unit = Unit {
        id: "e0-events-bench".into(),
        export: 0,
        dataset: chainetl::vocab::Dataset::Events,
        chain: chainetl::vocab::chain::Chain::Ethereum,
        range: UnitRange::Blocks { start: 0, end: u64::MAX },
        estimated_requests: 0,
    };
    let mut best = f64::MAX;
    let mut rows = 0;
    for _ in 0..REPS {
        let start = cpu_seconds();
        rows = 0;
        for (page, (body, path)) in bodies.iter().zip(paths).enumerate() {
            let events = chainetl::api::read_events_page(body).map_err(|e| format!("{path}: {e}"))?.events;
            let ctx = chainetl::decode::Ctx {
                unit: &unit,
                page: page as u64,
                enc,
            };
            rows += chainetl::decode::events::decode(ctx, &events)
                .map_err(|e| format!("{path}: {e}"))?
                .batch
                .num_rows();
        }
        best = best.min(cpu_seconds() - start);
    }
    if rows == 0 {
        return Err("the pages hold no events".into());
    }
    println!(
        "{{\"variant\": \"read-and-decode\", \"rows\": {rows}, \"cpu_us_per_row\": {:.3}}}",
        best / rows as f64 * 1e6
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("parquet_floor: {e}");
            ExitCode::from(2)
        }
    }
}
