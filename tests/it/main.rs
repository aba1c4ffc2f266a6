//! Integration tests: one binary, a module per area.

mod common;
mod export;
mod resume;
mod truth;
