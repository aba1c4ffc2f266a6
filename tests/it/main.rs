//! Integration tests: one binary, a module per area.

mod client;
mod common;
mod export;
mod operator;
mod resume;
mod sim;
mod truth;
