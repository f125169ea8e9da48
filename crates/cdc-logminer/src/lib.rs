//! `cdc-logminer`: the capture engine of oracle-cdc — it reads Oracle's redo through LogMiner
//! and hands committed changes to the layers above.
//!
//! It sits in the I/O layer, above `cdc-core` (values, layouts, positions, error codes) and
//! `cdc-buffer` (the transaction buffer). Its pure part is [`decode`]: the SQL_REDO decoder that
//! turns each mined row into typed column values with the table's schema version.

pub mod decode;
pub mod engine;
pub mod sim;
pub mod source;
