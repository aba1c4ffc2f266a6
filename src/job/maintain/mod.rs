//! Maintenance of the files a job committed, with no request to the
//! service: compaction ([`compact`]: which partitions are finished, and
//! the exactly-once swap of their files for a few right-sized ones, also
//! how `verify --repair` finishes a dead run's swap) and vacuum
//! ([`vacuum`]: deleting what a Delta table's versions within the
//! retention no longer read).

pub mod compact;
pub mod vacuum;
