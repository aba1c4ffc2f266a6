//! Changing the output: opening a job and deciding what the spec asks of
//! the files the output holds ([`prepare`]: the same job, grown, a change
//! of format or layout to make from the stored rows, or refused before
//! anything is deleted), keeping one format and layout per table folder
//! ([`sharing`]), and carrying a change out: a conversion between formats
//! ([`convert`]) or a rewrite into another layout ([`relayout`]), each
//! recorded in `migration.json` before it changes anything.

pub mod convert;
pub mod prepare;
pub mod relayout;
pub(crate) mod sharing;
