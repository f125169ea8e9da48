//! The position (v1): what a record's source offset says, as typed fields.
//!
//! One struct field or group per row of the field table (`docs/decisions.md`, D13). Groups of
//! offset fields that only mean something together are one `Option` of a struct, so that "half a
//! last commit" cannot be represented: `resume_rs_id` + `resume_ssn` are [`ResumePoint::addr`]; the
//! five `last_commit_*` fields and `event_index` are [`LastCommit`]; the three `start_*` fields are
//! [`FirstStart`]. How the fields are spelled in JSON is in [`crate::codec`].

use std::collections::{BTreeSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use cdc_core::{ConXid, PositionError, RedoAddr, RedoThread, Scn};
use serde_json::Value;

use crate::error::OffsetError;

/// Where a restart mines from: `resume_scn` chooses the logs; `resume_rs_id`/`resume_ssn`, when
/// present, is the redo byte address the rows are read from, inclusive.
///
/// Without an address (a first start, or after the operator removed it) mining starts at the
/// first SCN of the log holding `scn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResumePoint {
    pub scn: Scn,
    pub addr: Option<RedoAddr>,
}

impl ResumePoint {
    /// Resume from a redo address (inclusive); `scn` must not be above the SCN of the row there.
    pub fn at(mark: RedoMark) -> ResumePoint {
        ResumePoint {
            scn: mark.scn,
            addr: Some(mark.addr),
        }
    }

    /// Resume from the first SCN of the log holding `scn`.
    pub fn from_scn(scn: Scn) -> ResumePoint {
        ResumePoint { scn, addr: None }
    }
}

/// A row's place in the redo: its redo address and its SCN. The resume rule takes these for the
/// mined-to point and for what holds each open transaction back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RedoMark {
    pub addr: RedoAddr,
    pub scn: Scn,
}

impl RedoMark {
    pub fn new(addr: RedoAddr, scn: Scn) -> RedoMark {
        RedoMark { addr, scn }
    }
}

/// The commit whose records were acknowledged last, and how many of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LastCommit {
    /// `last_commit_scn`
    pub scn: Scn,
    /// `last_commit_xid`, `con:usn.slot.sqn`
    pub xid: ConXid,
    /// `last_commit_thread`
    pub thread: RedoThread,
    /// `last_commit_rs_id` + `last_commit_ssn`: the COMMIT row's redo address. The skip rule
    /// compares commits by this, because commit order is redo order (`docs/decisions.md`, D2).
    pub addr: RedoAddr,
    /// `event_index`: how many records of this commit were acknowledged (1 after its first
    /// record; the commit's record count after its last).
    pub event_index: u64,
}

/// The database an offset belongs to: `dbid` and `resetlogs_scn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DbIdentity {
    /// V$DATABASE.DBID.
    pub dbid: u64,
    /// V$DATABASE.RESETLOGS_CHANGE#: which incarnation of the database.
    pub resetlogs_scn: Scn,
}

impl DbIdentity {
    pub fn new(dbid: u64, resetlogs_scn: Scn) -> DbIdentity {
        DbIdentity {
            dbid,
            resetlogs_scn,
        }
    }
}

impl fmt::Display for DbIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DBID {} RESETLOGS {}", self.dbid, self.resetlogs_scn)
    }
}

/// The first-start rule (`docs/decisions.md`, D9), kept in the position from the first start until
/// the first commit is acknowledged: `start_floor_scn`, `start_open_scn`, `start_open_xids`. The
/// operator's "skip forward" sets it too, with no listed transactions ([`crate::edit`]).
///
/// At a first start the engine reads the current SCN `q` ([`FirstStart::open_scn`]), then the
/// transactions open in the captured containers ([`FirstStart::open_xids`]), then the start SCN
/// `s` ([`FirstStart::floor_scn`]). Every transaction open at `s` is then either listed or began
/// at or after `q`, so below `s` only those are kept; the rule is in [`crate::rules`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FirstStart {
    /// `start_floor_scn`: the start SCN `s`. Commits below it are not published.
    pub floor_scn: Scn,
    /// `start_open_scn`: the SCN `q` read before the open transactions were listed.
    pub open_scn: Scn,
    /// `start_open_xids`: the transactions listed as open.
    pub open_xids: BTreeSet<ConXid>,
}

/// The ledger of transactions that orphan detection released or the age policy discarded:
/// `released_xids`. A later COMMIT for one of them stops the task with CDC-7001, so a
/// transaction given up on is never published in part.
///
/// Bounded at [`ReleasedXids::CAPACITY`] entries; the oldest is evicted first. Entries are kept
/// oldest first, which is also their order in the offset's CSV.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ReleasedXids {
    /// Shared: every record's position carries the ledger, which changes rarely.
    entries: Arc<VecDeque<ConXid>>,
}

impl ReleasedXids {
    /// How many XIDs the ledger keeps: the last 256.
    pub const CAPACITY: usize = 256;

    pub fn new() -> ReleasedXids {
        ReleasedXids::default()
    }

    /// Records a released or discarded transaction as the newest entry. An XID already in the
    /// ledger moves to the newest place, since it is the latest thing known about it. Returns
    /// the entry evicted to stay within the capacity, if any.
    pub fn release(&mut self, xid: ConXid) -> Option<ConXid> {
        let entries = Arc::make_mut(&mut self.entries);
        entries.retain(|entry| *entry != xid);
        entries.push_back(xid);
        if entries.len() > Self::CAPACITY {
            entries.pop_front()
        } else {
            None
        }
    }

    /// Removes an XID (the operator action of CDC-7001). Returns whether it was there.
    pub fn forget(&mut self, xid: ConXid) -> bool {
        if !self.contains(xid) {
            return false;
        }
        Arc::make_mut(&mut self.entries).retain(|entry| *entry != xid);
        true
    }

    pub fn contains(&self, xid: ConXid) -> bool {
        self.entries.contains(&xid)
    }

    /// The rule: a COMMIT mined for a released XID stops the task with CDC-7001.
    pub fn check_commit(&self, xid: ConXid, commit_scn: Scn) -> Result<(), OffsetError> {
        if self.contains(xid) {
            return Err(OffsetError::ReleasedTransactionCommitted { xid, commit_scn });
        }
        Ok(())
    }

    /// Oldest first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ConXid> + '_ {
        self.entries.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Reads the offset's CSV (`3:5.12.900,3:5.12.901`, oldest first; blanks around entries
    /// allowed; the empty string is the empty ledger). More than the capacity keeps the newest.
    pub fn parse_csv(text: &str) -> Result<ReleasedXids, PositionError> {
        let mut ledger = ReleasedXids::new();
        for xid in parse_xid_csv(text)? {
            ledger.release(xid);
        }
        Ok(ledger)
    }
}

impl FromIterator<ConXid> for ReleasedXids {
    /// Releases each XID in turn, oldest first.
    fn from_iter<I: IntoIterator<Item = ConXid>>(iter: I) -> Self {
        let mut ledger = ReleasedXids::new();
        for xid in iter {
            ledger.release(xid);
        }
        ledger
    }
}

/// The CSV form, oldest first.
impl fmt::Display for ReleasedXids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_xid_csv(f, self.iter())
    }
}

pub(crate) fn parse_xid_csv(text: &str) -> Result<Vec<ConXid>, PositionError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|entry| ConXid::parse(entry.trim()))
        .collect()
}

pub(crate) fn write_xid_csv(
    out: &mut impl fmt::Write,
    xids: impl Iterator<Item = ConXid>,
) -> fmt::Result {
    for (i, xid) in xids.enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        write!(out, "{xid}")?;
    }
    Ok(())
}

/// Fields of a stored offset this connector does not know, in the order they were read. They
/// are written back after the known fields, so a one-version downgrade does not lose what a
/// newer connector wrote.
///
/// Only names that are not v1 fields and primitive values (string, number, boolean, null) are
/// held: a known name would be written twice, and Kafka Connect cannot store a list or a map in
/// an offset.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Extra {
    /// Shared: every record's position carries them, and they never change while capturing.
    fields: Arc<serde_json::Map<String, Value>>,
}

impl Extra {
    pub fn new() -> Extra {
        Extra::default()
    }

    /// Adds or replaces a field; refuses v1 names and lists or maps.
    pub fn insert(&mut self, name: impl Into<String>, value: Value) -> Result<(), OffsetError> {
        let name = name.into();
        if crate::codec::is_known_field(&name) {
            return Err(OffsetError::ReservedName { name });
        }
        if matches!(value, Value::Array(_) | Value::Object(_)) {
            return Err(OffsetError::NotPrimitive {
                found: crate::error::json_kind(&value),
                field: name,
            });
        }
        Arc::make_mut(&mut self.fields).insert(name, value);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.get(name)
    }

    /// Removes a field, keeping the order of the others.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        if !self.fields.contains_key(name) {
            return None;
        }
        Arc::make_mut(&mut self.fields).shift_remove(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.fields
            .iter()
            .map(|(name, value)| (name.as_str(), value))
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}

/// The position v1: everything a restart needs to emit exactly the records after the one that
/// carried it (invariant 1 in `docs/decisions.md`).
///
/// A fresh value comes from [`Position::new`] or [`Position::first_start`]; the engine then
/// derives each record's position with [`Position::at_record`] and each heartbeat's with
/// [`Position::at_heartbeat`]. [`crate::codec`] reads and writes the offset map.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    /// `resume_scn`, `resume_rs_id`, `resume_ssn`.
    pub resume: ResumePoint,
    /// The five `last_commit_*` fields and `event_index`; `None` before any commit was
    /// acknowledged, or after the operator's "deliver again" edit.
    pub last_commit: Option<LastCommit>,
    /// `journal_generation`: the task start that wrote this position. Journal chunks of a newer
    /// generation were never acknowledged.
    pub journal_generation: u64,
    /// `schema_epoch`: reserved, written as 0 by this version and kept as read.
    pub schema_epoch: u64,
    /// `dbid`, `resetlogs_scn`.
    pub identity: DbIdentity,
    /// `released_xids`.
    pub released_xids: ReleasedXids,
    /// `snapshot`: the snapshot progress as JSON object text, kept verbatim; `None` when no
    /// snapshot was ever started. Its inside belongs to the snapshot code.
    pub snapshot: Option<String>,
    /// `signal_offset`: the Kafka offset of the last signal handled.
    pub signal_offset: Option<i64>,
    /// `snapshot_pending`: the tables that joined while streaming and wait for their snapshot,
    /// as text kept verbatim; its form belongs to the multi-PDB capture code.
    pub snapshot_pending: Option<String>,
    /// `start_floor_scn`, `start_open_scn`, `start_open_xids`.
    pub first_start: Option<FirstStart>,
    /// Unknown fields, written back unchanged.
    pub extra: Extra,
}

impl Position {
    /// A position that resumes at `resume` with nothing acknowledged yet.
    pub fn new(resume: ResumePoint, identity: DbIdentity, journal_generation: u64) -> Position {
        Position {
            resume,
            last_commit: None,
            journal_generation,
            schema_epoch: 0,
            identity,
            released_xids: ReleasedXids::new(),
            snapshot: None,
            signal_offset: None,
            snapshot_pending: None,
            first_start: None,
            extra: Extra::new(),
        }
    }

    /// The position of a first start (no stored offset), which the start heartbeat makes
    /// durable before the first change (`docs/decisions.md`, D9).
    ///
    /// `open_scn` is `q`, the current SCN read before listing `open`, the transactions open in
    /// the captured containers with their START SCNs; `floor_scn` is `s`, the current SCN read
    /// after the list, or `cdc.start.scn`. Mining begins at the earlier of `q` and the oldest
    /// listed START SCN, from the first SCN of the log holding it (there is no address yet).
    pub fn first_start(
        identity: DbIdentity,
        journal_generation: u64,
        open_scn: Scn,
        open: &[(ConXid, Scn)],
        floor_scn: Scn,
    ) -> Position {
        let first_start = FirstStart::new(open_scn, open.iter().map(|(xid, _)| *xid), floor_scn);
        let oldest_open = open.iter().map(|(_, start_scn)| *start_scn).min();
        let mining_start = oldest_open.map_or(first_start.open_scn, |oldest| {
            oldest.min(first_start.open_scn)
        });
        let mut position = Position::new(
            ResumePoint::from_scn(mining_start),
            identity,
            journal_generation,
        );
        position.first_start = Some(first_start);
        position
    }

    /// The position a transaction's record carries: `resume` from
    /// [`crate::rules::record_resume`], and the commit with `event_index` = the record's
    /// 0-based index + 1. The first-start fields go: once this record is acknowledged a commit
    /// is, and every later commit is above the start SCN.
    #[must_use]
    pub fn at_record(&self, resume: ResumePoint, commit: LastCommit) -> Position {
        let mut position = self.clone();
        position.set_record(resume, commit);
        position
    }

    /// [`Position::at_record`] in place, for a caller that keeps the newest position and hands
    /// out copies of it.
    pub fn set_record(&mut self, resume: ResumePoint, commit: LastCommit) {
        self.resume = resume;
        self.last_commit = Some(commit);
        self.first_start = None;
    }

    /// The position a heartbeat, ops, journal or DLQ record carries between transactions: the
    /// last emitted commit as it is, and the latest resume candidate.
    #[must_use]
    pub fn at_heartbeat(&self, resume: ResumePoint) -> Position {
        let mut position = self.clone();
        position.resume = resume;
        position
    }

    /// The identity rule: an offset of another database, or of another incarnation of it,
    /// stops the task with CDC-5001. Run at start and after every reconnect.
    pub fn check_identity(&self, database: DbIdentity) -> Result<(), OffsetError> {
        if self.identity != database {
            return Err(OffsetError::IdentityMismatch {
                offset: self.identity,
                database,
            });
        }
        Ok(())
    }

    /// The skip rule of a restart from this position.
    pub fn skip_rule(&self) -> crate::rules::SkipRule {
        crate::rules::SkipRule::new(self)
    }
}
