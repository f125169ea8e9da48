//! `cdc-offset`: the source position of oracle-cdc (v1), the resume rule and the replay-suffix
//! skip rule.
//!
//! The offset is the product's promise: a restart repeats nothing and skips nothing (invariant 1 in
//! `docs/decisions.md`), and its cursor is a redo byte address, not an SCN (invariant 2). This
//! crate is where that promise is stated and proven. It sits in the pure layer, on `cdc-core` only;
//! `cdc-buffer`, `cdc-logminer` and the bridge use it, and `oracle-cdc-admin` (`cdc-admin`) moves
//! offsets with [`edit`] and reads undecodable ones with [`codec`]'s salvage. No I/O, no threads:
//! every function is a function of its inputs.
//!
//! ```text
//!  engine (cdc-logminer)                      bridge                 oracle-cdc-admin
//!  ───────────────────────                    ──────                 ────────────────
//!  rules::record_resume ─► Position::at_record ─► codec: to_json ─►  offsets topic / REST
//!  rules::resume_candidate ─► at_heartbeat        (Connect offset)        │
//!                                                                         ▼
//!  start: codec: Position::from_json ◄──────────────────────────  edit::{mine_again_from,
//!         check_identity, skip_rule,                                deliver_again,
//!         FirstStart::keeps_row, ReleasedXids::check_commit         skip_forward, …}
//! ```
//!
//! - [`position`]: the typed position, one field or group per row of the field table
//!   (`docs/decisions.md`, D13).
//! - [`codec`]: the flat JSON object Kafka Connect stores, byte-stable, with unknown fields kept.
//! - [`rules`]: the resume candidate, the skip rule, the first-start rule, the journal-load
//!   rule; the identity check
//!   ([`Position::check_identity`], CDC-5001) and the released ledger
//!   ([`ReleasedXids::check_commit`], CDC-7001) sit with their types.
//! - [`snapshot`]: the snapshot progress the `snapshot` field holds (a frontier per table).
//! - [`edit`]: the operator's edits of `docs/runbooks.md`, "Moving the offset by hand".
//!
//! The property test `tests/replay_suffix.rs` generates redo histories and proves that a
//! restart from any acknowledged record's position emits exactly the unacknowledged suffix;
//! `tests/golden.rs` pins the stored format.
//!
//! # Decisions the offset format leaves open
//!
//! - **Groups are whole or absent.** The resume address, the last commit with `event_index`,
//!   and the three first-start fields are each one `Option` of a struct; a stored offset with
//!   part of a group stops with CDC-3002 saying which fields to restore or remove.
//!   `event_index` belongs to the last commit: it is written only with it, and read without it
//!   only as 0 (the runbook's edit that publishes the last commits again).
//! - **Numbers** are JSON integers up to `i64::MAX` (Kafka Connect's `long`), decimal strings
//!   above; reading also takes decimal strings and exact integral floats up to 2^53, never a
//!   rounded value ([`codec`]).
//! - **Field order** is fixed ([`codec::FIELDS`], matching the example body in `docs/rest.md`),
//!   unknown fields after the known ones in the order read, absent optional fields left out:
//!   equal positions encode to equal bytes.
//! - **`mined_to` is inclusive**: the resume address may be the last row applied, which a
//!   restart reads again; the skip rule drops what it completes. So a record's position never
//!   depends on a row that has not been read.
//! - **First start** follows D9 (`docs/decisions.md`): `start_open_scn` is `q`, read before
//!   listing the open transactions, `start_floor_scn` is `s`, read after; below `s` only listed
//!   transactions and those whose START is at or after `q` are kept, and commits below `s` are
//!   skipped.
//! - **Skip forward** also sets the start floor (no listed transactions) at the new SCN, so the
//!   commits of the log holding it that lie below it are not published (in part or whole).
//! - **Journal load**: a journaled transaction whose acknowledged journal ends before the
//!   mining start is stale and not rebuilt ([`rules::JournalRule`]); the property test found
//!   the restart that otherwise publishes an undone change.
//! - **The released ledger** keeps the newest 256 distinct XIDs, oldest first in its CSV; a
//!   repeated release moves the XID to the newest place.

pub mod codec;
pub mod edit;
pub mod error;
pub mod position;
pub mod rules;
pub mod snapshot;

pub use error::{EditError, OffsetError};
pub use position::{
    DbIdentity, Extra, FirstStart, LastCommit, Position, RedoMark, ReleasedXids, ResumePoint,
};
pub use rules::{JournalRule, OpenTransaction, RecordPlace, SkipDecision, SkipRule};
pub use snapshot::{SnapshotBound, SnapshotProgress, SnapshotScope, TableProgress};

/// The position version this connector writes and reads (`v`).
pub const POSITION_VERSION: u64 = 1;
