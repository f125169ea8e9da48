//! The integration tests of cdc-admin, one binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod check;
mod docs_check;
mod inspect_e2e;
mod journal;
mod offsets_e2e;
mod resnapshot_e2e;
mod support;
