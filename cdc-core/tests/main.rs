//! cdc-core's integration tests, one binary with a module per area: configuration parsing,
//! validation, defaults and tables, the honesty of every key (built, reserved or refused), and
//! the documents generated from the key and code tables.

mod config_defaults;
mod config_doc;
mod config_errors;
mod config_examples;
mod config_keys;
mod config_parse;
mod config_tables;
mod records_doc;
mod runbooks_doc;
