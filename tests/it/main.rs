//! Integration tests: one binary, a module per area.

mod client;
mod comforts;
mod common;
mod compact;
mod compact_seams;
mod decoded;
mod export;
mod forms;
mod hostile;
mod input;
mod interrupted;
mod layout;
mod lease;
mod limits;
mod operator;
mod ops;
mod planning;
mod resume;
mod s3;
mod scale;
mod schedule;
mod seams;
mod sim;
mod sorting;
mod storage;
mod truth;
