//! Integration tests: one binary, a module per area.

mod client;
mod common;
mod decoded;
mod export;
mod hostile;
mod input;
mod layout;
mod operator;
mod ops;
mod resume;
mod s3;
mod schedule;
mod seams;
mod sim;
mod storage;
mod truth;
