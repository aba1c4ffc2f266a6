//! Reading a job without running it: `status`, `plan` and `verify`
//! ([`inspect`]) and the document the report page draws ([`overview`]).
//! Nothing here takes the job's lease or writes to the output.

pub mod inspect;
pub mod overview;
