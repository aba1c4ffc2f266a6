// doctests for macros
mod to_schema;
mod transaction;
