//! The one error enum of this crate, and how each case becomes an operator-visible
//! [`CdcError`].
//!
//! Reading an offset fails with CDC-3002 (the offset is damaged or from a newer connector); the
//! identity check with CDC-5001; the released ledger with CDC-7001. Every message says which
//! field or value is wrong and what the operator can do about it, because the operator reads it
//! from a stopped task with the stored offset in front of them.
//!
//! The admin tool's edits fail with [`EditError`], which is a usage error of the tool and never
//! a stop of the task, so it carries no CDC code.

use std::fmt;

use cdc_core::{CdcCode, CdcError, ConXid, PositionError, Scn};

use crate::position::DbIdentity;

/// Why a position could not be read, or why a rule stops the task.
#[derive(Debug, thiserror::Error)]
pub enum OffsetError {
    /// The offset text is not JSON at all.
    #[error(
        "the stored offset is not JSON ({source}); restore it from the offsets topic or reset it"
    )]
    NotJson {
        #[source]
        source: serde_json::Error,
    },
    /// The offset is JSON but not an object.
    #[error(
        "the stored offset is a JSON {found}, not an object of fields; restore it from the offsets topic or reset it"
    )]
    NotAnObject { found: &'static str },
    /// `{}`: there is an offset, but it holds nothing.
    #[error(
        "the stored offset is an empty object and holds no position; restore it, or delete it so the connector makes a first start"
    )]
    Empty,
    /// The object has no `v`.
    #[error(
        "the stored offset has no version field v, so it was not written by this connector; restore it, or add \"v\": 1 if it was edited by hand from a v1 offset"
    )]
    NoVersion,
    /// `v` is there but is not a whole number.
    #[error(
        "the stored offset has v = {value}, which is not a version number; restore it, or set \"v\": 1 if it was edited by hand from a v1 offset"
    )]
    BadVersion { value: String },
    /// `v` is a number this connector never wrote (0).
    #[error(
        "the stored offset has v = {found}, a version no connector writes; restore it, or set \"v\": 1 if it was edited by hand from a v1 offset"
    )]
    UnknownVersion { found: u64 },
    /// `v` is newer than this connector reads; guessing could skip or repeat changes.
    #[error("the stored offset has v = {found}, written by a newer connector version; this connector reads v{supported} and does not guess at newer positions. Run the newer connector version again, or reset the offset", supported = crate::POSITION_VERSION)]
    NewerVersion { found: u64 },
    /// A field the position cannot do without is absent.
    #[error("the stored offset has no {field}; {action}")]
    MissingField {
        field: &'static str,
        action: &'static str,
    },
    /// A known field holds a value of the wrong shape.
    #[error(
        "the stored offset field {field} = {value} is not {expected}; restore it from the offsets topic or correct it"
    )]
    BadField {
        field: &'static str,
        value: String,
        expected: &'static str,
    },
    /// A known field holds text that is not an RS_ID or XID.
    #[error(
        "the stored offset field {field} = {value} cannot be read ({source}); restore it from the offsets topic or correct it"
    )]
    BadPosition {
        field: &'static str,
        value: String,
        #[source]
        source: PositionError,
    },
    /// Only some fields of a group that belongs together are present.
    #[error("the stored offset has {present} but not {missing}; {action}", present = join(present), missing = join(missing))]
    IncompleteGroup {
        present: Vec<&'static str>,
        missing: Vec<&'static str>,
        action: &'static str,
    },
    /// `event_index` counts records of the last commit, but there is no last commit.
    #[error(
        "the stored offset has event_index = {event_index} but no last_commit_* fields, so it does not say which commit's records were delivered; restore the last_commit_* fields, or set event_index to 0 to deliver those transactions again"
    )]
    EventIndexWithoutCommit { event_index: u64 },
    /// `snapshot` does not hold a JSON object as text.
    #[error(
        "the stored offset field snapshot does not hold the snapshot progress as JSON object text ({reason}); restore it from the offsets topic, or remove it and take the snapshot again"
    )]
    BadSnapshot { reason: String },
    /// A v1 field name was given to [`crate::Extra::insert`]: it would be written twice.
    #[error("{name} is a field of the position itself and cannot be kept as an unknown field")]
    ReservedName { name: String },
    /// An unknown field holds a list or a map, which Kafka Connect cannot store in an offset.
    #[error(
        "the stored offset field {field} holds a JSON {found}; offsets hold strings, numbers and booleans only. Remove the field"
    )]
    NotPrimitive { field: String, found: &'static str },
    /// The database is not the one the offset belongs to.
    #[error("{}", identity_message(offset, database))]
    IdentityMismatch {
        offset: DbIdentity,
        database: DbIdentity,
    },
    /// A COMMIT for a transaction that orphan detection released or the age policy discarded.
    #[error(
        "a COMMIT at SCN {commit_scn} was mined for transaction {xid}, which was released as an orphan or discarded earlier (it is in released_xids); publishing it now could publish only part of it. Move resume_scn back to the first SCN of {xid} and remove {xid} from released_xids"
    )]
    ReleasedTransactionCommitted { xid: ConXid, commit_scn: Scn },
}

fn join(fields: &[&'static str]) -> String {
    fields.join(", ")
}

fn identity_message(offset: &DbIdentity, database: &DbIdentity) -> String {
    if offset.dbid != database.dbid {
        format!(
            "the offset belongs to the database with DBID {} but the connector is connected to DBID {}; \
             the offset of one database cannot be used on another",
            offset.dbid, database.dbid
        )
    } else {
        format!(
            "the offset belongs to DBID {} at RESETLOGS SCN {}, but the database was opened with \
             RESETLOGS at SCN {} since (a new incarnation, e.g. after a point-in-time recovery or \
             flashback); redo of the old incarnation cannot be continued",
            offset.dbid, offset.resetlogs_scn, database.resetlogs_scn
        )
    }
}

impl OffsetError {
    /// The CDC code the task stops with.
    pub fn code(&self) -> CdcCode {
        match self {
            OffsetError::IdentityMismatch { .. } => CdcCode::Topology,
            OffsetError::ReleasedTransactionCommitted { .. } => CdcCode::OrphanReleaseViolation,
            _ => CdcCode::Corruption,
        }
    }
}

impl From<OffsetError> for CdcError {
    fn from(error: OffsetError) -> CdcError {
        let cdc = CdcError::new(error.code(), error.to_string());
        // The message already says everything this crate knows; keep only the cause it came
        // from (a JSON or RS_ID/XID parse error) in the source chain.
        match error {
            OffsetError::NotJson { source } => cdc.with_source(source),
            OffsetError::BadPosition { source, .. } => cdc.with_source(source),
            _ => cdc,
        }
    }
}

/// Why the admin tool refuses an edit of the offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// "Mine again" asked for an SCN after the current resume point: that would skip changes.
    #[error(
        "SCN {requested} is after the current resume_scn {current}: mining from it skips every change in between. Skipping forward is a separate, deliberate edit"
    )]
    WouldSkipForward { current: Scn, requested: Scn },
    /// "Skip forward" asked for an SCN that is not after the current resume point.
    #[error(
        "SCN {requested} is not after the current resume_scn {current}; to mine again from an earlier SCN use the mine-again edit"
    )]
    NotForward { current: Scn, requested: Scn },
    /// The XID to forget is not in the ledger.
    #[error("transaction {xid} is not in released_xids")]
    NotReleased { xid: ConXid },
}

/// Renders a JSON value's kind in the words of the messages above.
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// Shows a stored value in a message: strings quoted, long values cut.
pub(crate) struct Shown<'a>(pub &'a serde_json::Value);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAX: usize = 80;
        let text = self.0.to_string();
        match text.char_indices().nth(MAX) {
            Some((cut, _)) => write!(f, "{}…", &text[..cut]),
            None => f.write_str(&text),
        }
    }
}
