//! Reading a job without running it: `status`, `plan` and `verify`
//! ([`inspect`]), the typed view `status` prints as text and JSON
//! ([`status_view`]) and the document the report page draws
//! ([`overview`]).
//! Nothing here takes the job's lease or writes to the output.

pub mod inspect;
pub mod overview;
pub mod status_view;
