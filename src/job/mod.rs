//! The job stage: everything `chainetl` does to a job, in four rooms, each
//! importing only the rooms listed after it (and the shared pieces at the
//! bottom):
//!
//! - [`view`]: reading a job without running it — `status`, `plan`,
//!   `verify` ([`view::inspect`]), the typed view `status` renders as text
//!   and JSON ([`view::status_view`]) and the report page's document
//!   ([`view::overview`]);
//! - [`run`]: running a job — `chainetl run` and its passes, one unit's
//!   page → decode → write → commit, follow mode and reorg repair, live
//!   figures and the run report; also `chainetl compact`, which opens the
//!   job as a run does;
//! - [`change`]: changing the output — opening a job and deciding whether
//!   the spec is the same, grown, changed or refused ([`change::prepare`]),
//!   one format or layout per table folder ([`change::sharing`]),
//!   converting between formats ([`change::convert`]) and rewriting into
//!   another layout (`change::relayout`);
//! - [`maintain`]: maintenance of the files a job committed — compaction
//!   ([`maintain::compact`]: which partitions, and the exactly-once swap)
//!   and vacuum of Delta tables ([`maintain::vacuum`]);
//! - shared by all: [`error`] (what fails, and its exit code), [`guard`]
//!   (bounds on a unit's cursor chain) and [`tables`] (the tables an export
//!   writes, and the transaction ids of a table format's commits).
//!
//! The invariants each room keeps are in its own module doc; the commit
//! rule itself is [`crate::state`]'s.

pub mod change;
pub mod error;
pub mod guard;
pub mod maintain;
pub mod run;
pub mod tables;
pub mod view;

pub use error::{RunError, UnitError};
pub use run::counters::ExportProgress;
pub use run::live::Live;
pub use run::reorg::Reorg;
pub use run::report::MarkProgress;
pub use run::report::{ExportKey, FailedUnit, MarkSummary, RunSummary, Tally};
pub use run::report_format::{REPORT_VERSION, RunStatus};
pub use run::schedule::parse_shard;
pub use run::setup::client_config;
pub use run::{JobEvent, MAX_REPAIR_PASSES, Observer, RunOptions, compact_job, run};
pub use view::inspect::{ConversionPlan, JobStatus, PlanView, plan_view, status, verify};
