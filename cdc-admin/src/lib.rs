//! `oracle-cdc-admin`: the operator's tool beside a running `oracle-cdc`.
//!
//! ```text
//!   oracle-cdc-admin ──REST (Connect's API + /oracle-cdc/…)──> oracle-cdc
//!         │ └──Kafka (ops, signals, journal topics)──> broker
//!         └──RedoSource (`--config`: Oracle, or the simulator for trials)──> database
//! ```
//!
//! - [`offsets`]: `offsets show` and `offsets set`, the spec's stop → read → edit → PATCH →
//!   resume with the edits of [`cdc_offset::edit`], checked against the database's redo.
//! - [`signals`]: `resnapshot`, a `snapshot` signal and its `signal-ack`.
//! - [`transactions`]: the open transactions of a running connector.
//! - [`journal`]: `journal inspect`, the journal topic read directly.
//! - [`check`]: the preflight of a database before the first start.
//!
//! Exit codes: 0 done, 1 refused or failed, 64 usage (`check`: 0 ready, 1 blocking, 2 warnings).

pub mod check;
pub mod cli;
pub mod context;
pub mod error;
pub mod journal;
pub mod offsets;
pub mod ops;
pub mod redo;
pub mod rest;
pub mod signals;
pub mod transactions;

pub use error::AdminError;
