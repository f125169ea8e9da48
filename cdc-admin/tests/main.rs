//! The integration tests of cdc-admin, one binary.

mod journal;
