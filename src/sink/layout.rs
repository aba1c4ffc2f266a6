//! Where a unit's files go and what they are named (the *Layout* section
//! of [`super`]): partition directories, and file names that say which
//! unit and sequence a file is, read back strictly.

use super::Sink;
use crate::vocab::chain::Chain;
use crate::vocab::window::date_string;

impl Sink {
    /// Partition directory of a row group: `<table>/chain=<c>/date=<d>`
    /// (`table`: a dataset's name, or a decoded table's).
    pub fn partition_dir(&self, table: &str, chain: Chain, day: Option<i32>) -> String {
        let mut dir = table.to_string();
        for key in &self.partition_by {
            match (key.as_str(), day) {
                ("chain", _) => dir.push_str(&format!("/chain={chain}")),
                ("date", Some(d)) => dir.push_str(&format!("/date={}", date_string(d))),
                _ => {}
            }
        }
        dir
    }

    pub(super) fn partitions_by_date(&self) -> bool {
        self.partition_by.iter().any(|k| k == "date")
    }
}

/// File name of sequence `seq` of a unit whose files are named
/// `<prefix>-…` (`prefix` is `<job>-<unit>`).
pub fn file_name(prefix: &str, seq: u64) -> String {
    format!("{prefix}-{seq:06}.parquet")
}

/// The unit id and sequence of a file name written by [`file_name`] for a
/// file stem without the job's name (`<unit>-<seq>.parquet`), read strictly:
/// anything else is not one of that job's files.
pub fn parse_file_name(name: &str) -> Option<(&str, u64)> {
    let stem = name.strip_suffix(".parquet")?;
    let (unit, seq) = stem.rsplit_once('-')?;
    (seq.len() >= 6 && seq.bytes().all(|b| b.is_ascii_digit())).then_some(())?;
    crate::plan::is_unit_id(unit).then_some(())?;
    Some((unit, seq.parse().ok()?))
}
