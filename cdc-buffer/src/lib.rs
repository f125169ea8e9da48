//! `cdc-buffer`: the transaction buffer of oracle-cdc.
//!
//! LogMiner hands the connector uncommitted changes; this crate holds them per transaction,
//! keyed by (container, XID), until the COMMIT (hand them over in redo order) or ROLLBACK
//! (drop them). Savepoint rollbacks arrive as undo rows and remove the changes they reverse.
//! The heap it uses is bounded by a budget: the largest transactions spill to CRC-framed,
//! append-only files and are streamed back at COMMIT. Beside the buffer sit the orphan and
//! age policies as pure state machines, and the released ledger.
//!
//! It is the local-I/O layer (see `docs/architecture.md`): above the pure `cdc-core` and
//! `cdc-offset`, below the capture engine in `cdc-logminer`. It touches only files in its spill
//! directory; it owns no thread and talks to no database or broker.
//!
//! ```text
//!  cdc-logminer engine ──begin/append/undo/rollback/commit──► buffer::TransactionBuffer
//!        ▲        │                                              │ heap (chunked lists)
//!        │        └─ facts of open transactions ─► policy        │ spill ─► codec frames
//!        └──────── CommittedChanges (redo order) ◄───────────────┘          in spill files
//! ```
//!
//! Modules: [`buffer`] (the buffer and its views and metrics), [`codec`] (the frame format of spill
//! files, versioned for a transaction journal to reuse), [`policy`] (orphans, age, ledger),
//! [`size`] (the heap measure), [`spill`] (files), [`error`] (the error type and its CDC codes).

pub mod buffer;
pub mod codec;
pub mod error;
mod pins;
pub mod policy;
pub mod size;
pub mod spill;

pub use buffer::{
    BufferMetrics, BufferSettings, CommitHolds, CommitSummary, CommittedChanges, FrameRun,
    JournalMark, SessionId, SpilledFrames, StartInfo, TransactionBuffer, TxnView, UndoOutcome,
};
pub use codec::{Frame, FrameHead, UndoRecord};
pub use error::{BufferError, TxnSummary};
pub use policy::{
    AgeDiscard, AgeSettings, DatabaseSnapshot, DiscardedTransactionDlq, OrphanCheck,
    OrphanDetector, OrphanRelease, OrphanSettings, OrphanVerdict, ReleasedLedger, TxnFacts,
    check_age,
};
pub use size::{change_heap_bytes, image_heap_bytes};
