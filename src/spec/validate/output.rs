//! `[output]`: where the files go and how they are laid out, encoded,
//! rolled and committed.

use super::Validator;
use crate::spec::raw::RawOutput;
use crate::spec::{Compression, HashEncoding, Output, OutputFormat, defaults};
use std::time::Duration;

impl Validator<'_> {
    pub(super) fn output(&mut self, o: &RawOutput) -> Output {
        let uri = self.uri(o);
        let partition_by = self.partition_by(o);
        let compression = self.compression(o);
        let hash_encoding = self.hash_encoding(o);
        let row_group_rows = self.int_in(
            &o.row_group_rows,
            "output.row_group_rows",
            1_000,
            10_000_000,
            defaults::ROW_GROUP_ROWS as i64,
        );
        let file_rows = self.int_in(&o.file_rows, "output.file_rows", 1_000, 100_000_000, defaults::FILE_ROWS as i64);
        let file_mb = self.int_in(&o.file_mb, "output.file_mb", 1, 1_048_576, defaults::FILE_MB as i64);
        let commit_interval_secs = self.int_in(
            &o.commit_interval_secs,
            "output.commit_interval_secs",
            1,
            3600,
            defaults::COMMIT_INTERVAL_SECS as i64,
        );
        let commit_pages = self.int_in(&o.commit_pages, "output.commit_pages", 1, 100_000, defaults::COMMIT_PAGES as i64);
        let memory_budget_mb = self.int_in(
            &o.memory_budget_mb,
            "output.memory_budget_mb",
            16,
            65_536,
            defaults::MEMORY_BUDGET_MB as i64,
        );
        let target_file_mb = self.int_in(
            &o.target_file_mb,
            "output.target_file_mb",
            1,
            16_384,
            defaults::TARGET_FILE_MB as i64,
        );
        let bloom_filters = self.bloom_filters(o);
        let format = self.format(o);
        let delta_retention = self.duration(&o.delta_retention, "output.delta_retention", defaults::DELTA_RETENTION_SECS);
        let catalog = self.catalog(o, format);
        let table_properties = self.table_properties(o, format);
        Output {
            uri,
            partition_by,
            compression,
            row_group_rows: row_group_rows as usize,
            file_rows: file_rows as usize,
            file_bytes: file_mb as usize * 1024 * 1024,
            commit_interval: Duration::from_secs(commit_interval_secs as u64),
            commit_pages: commit_pages as usize,
            hash_encoding,
            memory_budget: memory_budget_mb as usize * 1024 * 1024,
            compact: o.compact.as_ref().is_none_or(|c| *c.get_ref()),
            target_file_bytes: target_file_mb as usize * 1024 * 1024,
            bloom_filters,
            endpoint: o.endpoint.as_ref().map(|e| e.get_ref().clone()),
            region: o.region.as_ref().map(|e| e.get_ref().clone()),
            allow_http: o.allow_http.as_ref().map(|e| *e.get_ref()),
            format,
            delta_retention: Duration::from_secs(delta_retention as u64),
            catalog,
            table_properties,
        }
    }

    /// `output.uri`, and the S3 settings that apply only to an `s3://` one.
    fn uri(&mut self, o: &RawOutput) -> String {
        let uri = o.uri.as_ref().map(|u| u.get_ref().trim().to_string()).unwrap_or_default();
        let uri_span = o.uri.as_ref().map(|u| u.span());
        if uri_span.is_none() {
            // Missing: reported by the schema pass.
        } else if uri.is_empty() {
            self.err(
                uri_span.clone().unwrap_or(0..0),
                "output.uri",
                "must not be empty: a local path, file:///abs/path or s3://bucket/prefix",
            );
        } else if uri.contains("://") && !(uri.starts_with("file:///") || uri.starts_with("s3://")) {
            self.err(
                uri_span.clone().unwrap_or(0..0),
                "output.uri",
                format!("`{uri}`: expected a local path, file:///abs/path or s3://bucket/prefix"),
            );
        }
        if !uri.starts_with("s3://") {
            for (key, span) in [
                ("endpoint", o.endpoint.as_ref().map(|x| x.span())),
                ("region", o.region.as_ref().map(|x| x.span())),
                ("allow_http", o.allow_http.as_ref().map(|x| x.span())),
            ] {
                if let Some(span) = span {
                    self.err(span, format!("output.{key}"), "applies only to s3:// outputs");
                }
            }
        }
        uri
    }

    /// `output.partition_by`: distinct keys from `chain`, `date`, sorted.
    fn partition_by(&mut self, o: &RawOutput) -> Vec<String> {
        let mut partition_by = vec!["chain".to_string(), "date".to_string()];
        if let Some(p) = &o.partition_by {
            partition_by.clear();
            for k in p.get_ref() {
                match k.get_ref().as_str() {
                    "chain" | "date" if !partition_by.contains(k.get_ref()) => partition_by.push(k.get_ref().clone()),
                    other => self.err(
                        k.span(),
                        "output.partition_by",
                        format!("`{other}`: expected distinct keys from `chain`, `date`"),
                    ),
                }
            }
            partition_by.sort();
        }
        partition_by
    }

    /// `output.bloom_filters`: column names (a table without the column
    /// has no filter for it), each a plain identifier.
    fn bloom_filters(&mut self, o: &RawOutput) -> Vec<String> {
        let Some(list) = &o.bloom_filters else {
            return defaults::bloom_filter_columns();
        };
        let mut out = Vec::new();
        for c in list.get_ref() {
            let name = c.get_ref();
            let plain =
                !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !plain {
                self.err(
                    c.span(),
                    "output.bloom_filters",
                    format!("`{name}`: expected a column name (lower-case letters, digits, `_`), e.g. `transaction_hash`"),
                );
            } else if !out.contains(name) {
                out.push(name.clone());
            }
        }
        out
    }

    /// `output.compression` and its `compression_level`.
    fn compression(&mut self, o: &RawOutput) -> Compression {
        let level = self.int_in(
            &o.compression_level,
            "output.compression_level",
            1,
            22,
            i64::from(defaults::COMPRESSION_LEVEL),
        ) as i32;
        match o.compression.as_ref().map(|c| c.get_ref().as_str()) {
            None | Some("zstd") => Compression::Zstd(level),
            Some("snappy") => Compression::Snappy,
            Some("lz4") => Compression::Lz4,
            Some("gzip") => Compression::Gzip,
            Some("none") | Some("uncompressed") => Compression::None,
            Some(other) => {
                if let Some(c) = &o.compression {
                    self.err(
                        c.span(),
                        "output.compression",
                        format!("`{other}`: expected zstd, snappy, lz4, gzip or none"),
                    );
                }
                Compression::Zstd(level)
            }
        }
    }

    /// `output.format`.
    fn format(&mut self, o: &RawOutput) -> OutputFormat {
        match o.format.as_ref().map(|c| c.get_ref().as_str()) {
            None | Some("parquet") => OutputFormat::Parquet,
            Some("delta") => OutputFormat::Delta,
            Some("iceberg") => OutputFormat::Iceberg,
            Some(other) => {
                if let Some(c) = &o.format {
                    self.err(
                        c.span(),
                        "output.format",
                        match crate::spec::shape::nearest(other, OutputFormat::ALL.iter().map(|f| f.name())) {
                            Some(n) => format!("`{}`: did you mean `{n}`?", super::short(other)),
                            None => format!("`{}`: expected parquet, delta or iceberg", super::short(other)),
                        },
                    );
                }
                OutputFormat::Parquet
            }
        }
    }

    /// `output.hash_encoding`.
    fn hash_encoding(&mut self, o: &RawOutput) -> HashEncoding {
        match o.hash_encoding.as_ref().map(|c| c.get_ref().as_str()) {
            None | Some("hex") => HashEncoding::Hex,
            Some("binary") => HashEncoding::Binary,
            Some(other) => {
                if let Some(c) = &o.hash_encoding {
                    self.err(c.span(), "output.hash_encoding", format!("`{other}`: expected hex or binary"));
                }
                HashEncoding::Hex
            }
        }
    }
}
