//! The one integration-test binary of cdc-journal.
mod contract;
mod golden;
mod writer;
