//! Transactions: XIDs, the START row with the first change, SSNs, statements, savepoints,
//! COMMIT and ROLLBACK, and the ground truth a commit adds to.

use std::collections::BTreeSet;

use cdc_core::change::ChangeOp;
use cdc_core::{Scn, Value, Xid};

use super::SimDatabase;
use super::records::{Body, Group, Record};
use super::sessions::Session;
use super::sessions::SessionName;
use super::tables::TableRef;
use super::versions::StoredRow;
use crate::sim::SimError;
use crate::sim::order::RowPos;
use crate::sim::truth::{TruthChange, TruthTransaction};

/// One row change of a transaction: what undo reverses and a commit adds to the ground truth.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TxChange {
    pub(super) table: TableRef,
    pub(super) row_id: String,
    pub(super) ssn: u64,
    pub(super) op: ChangeOp,
    pub(super) before: Option<Vec<Value>>,
    pub(super) after: Option<Vec<Value>>,
    pub(super) set: Vec<usize>,
    pub(super) scn: Scn,
    pub(super) undone: bool,
    /// The statement failed: reversed at once, never committed.
    pub(super) failed: bool,
    /// A DBMS_LOB call: only LOB rows carry it.
    pub(super) lob_only: bool,
}

/// A session's open transaction.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Tx {
    pub(super) xid: Xid,
    pub(super) start_scn: Scn,
    pub(super) private: bool,
    pub(super) strand: Vec<Group>,
    pub(super) strand_bytes: u64,
    pub(super) changes: Vec<TxChange>,
    pub(super) savepoints: Vec<(String, usize)>,
    pub(super) next_ssn: u64,
    pub(super) unknown_sqn: bool,
    /// The START row has been written (with the first change).
    pub(super) start_written: bool,
}

/// The transaction slots of the undo segments the simulated database starts with.
const UNDO_SLOTS: u64 = 10 * 32;

impl SimDatabase {
    /// The container's next XID that no open transaction of it holds.
    fn alloc_xid(&mut self, con: usize) -> Xid {
        let live: BTreeSet<(u16, u16)> = self
            .sessions
            .values()
            .filter(|s| s.con == con)
            .filter_map(|s| s.tx.as_ref())
            .map(|t| (t.xid.usn, t.xid.slot))
            .collect();
        let Some(c) = self.containers.get_mut(con) else {
            return Xid::new(1, 0, 1);
        };
        // the ten undo segments of 32 slots each that a small database has online
        for _ in 0..UNDO_SLOTS {
            let n = c.next_xid;
            c.next_xid += 1;
            let xid = Xid::new(1 + (n % 10) as u16, ((n / 10) % 32) as u16, 600 + n / 320);
            if !live.contains(&(xid.usn, xid.slot)) {
                return xid;
            }
        }
        // every slot of them is held: automatic undo brings more segments online, as Oracle
        // does under many concurrent transactions
        let n = c.next_xid;
        let (usn, slot) = (11..=u16::MAX)
            .flat_map(|usn| (0..32).map(move |slot| (usn, slot)))
            .find(|pair| !live.contains(pair))
            .unwrap_or((u16::MAX, 0));
        Xid::new(usn, slot, 600 + n / 320)
    }

    /// Makes sure the session has a transaction; returns whether it was just started.
    pub(super) fn ensure_tx(&mut self, session: &SessionName) -> Result<bool, SimError> {
        let (con, has, pref) = {
            let s = self.session_mut(session)?;
            (s.con, s.tx.is_some(), s.private_strand)
        };
        if has {
            return Ok(false);
        }
        let xid = self.alloc_xid(con);
        let private = match pref {
            Some(p) => p,
            None => self.config.private_strands && self.rng.chance(self.config.private_strand_rate),
        };
        let unknown_sqn = self.rng.chance(self.config.unknown_sqn_rate);
        if let Some(s) = self.sessions.get_mut(session) {
            s.tx = Some(Tx {
                xid,
                start_scn: Scn(0),
                private,
                strand: Vec::new(),
                strand_bytes: 0,
                changes: Vec::new(),
                savepoints: Vec::new(),
                next_ssn: 1,
                unknown_sqn,
                start_written: false,
            });
        }
        Ok(true)
    }

    /// A row of the session's transaction, not yet placed in a log.
    pub(super) fn record(
        &self,
        session: &SessionName,
        scn: Scn,
        ssn: u64,
        rollback: bool,
        body: Body,
    ) -> Result<Record, SimError> {
        let s = self
            .sessions
            .get(session)
            .ok_or_else(|| SimError::Scenario(format!("no session {session}")))?;
        let tx = s
            .tx
            .as_ref()
            .ok_or_else(|| SimError::Scenario(format!("session {session} has no transaction")))?;
        let mut xid = tx.xid;
        if rollback && tx.unknown_sqn {
            xid.sqn = Xid::UNKNOWN_SQN;
        }
        Ok(Record {
            scn,
            time: self.clock.now_seconds(),
            xid,
            con: s.con,
            ssn,
            rollback,
            zero_rs_id: false,
            user: s.user.clone(),
            sid: s.sid,
            serial: s.serial,
            body,
        })
    }

    /// The session's open transaction.
    pub(super) fn tx_mut(&mut self, session: &SessionName) -> Result<&mut Tx, SimError> {
        self.sessions
            .get_mut(session)
            .and_then(|s| s.tx.as_mut())
            .ok_or_else(|| SimError::Scenario(format!("session {session} has no transaction")))
    }

    /// Writes the redo of one statement (one or more row changes sharing an RS_ID), starting
    /// the transaction first if needed.
    pub(super) fn statement(
        &mut self,
        session: &SessionName,
        changes: Vec<(Body, TxChange)>,
    ) -> Result<(), SimError> {
        self.ensure_tx(session)?;
        let scn = self.next_scn();
        let mut records: Vec<Record> = self.start_record(session, scn)?.into_iter().collect();
        for (body, mut change) in changes {
            let ssn = self.next_ssn(session)?;
            change.ssn = ssn;
            change.scn = scn;
            records.push(self.record(session, scn, ssn, false, body)?);
            self.tx_mut(session)?.changes.push(change);
        }
        self.emit(session, Group { records });
        Ok(())
    }

    /// The next SSN of the session's transaction (a per-transaction counter from 1).
    pub(super) fn next_ssn(&mut self, session: &SessionName) -> Result<u64, SimError> {
        let tx = self.tx_mut(session)?;
        let ssn = tx.next_ssn;
        tx.next_ssn += 1;
        Ok(ssn)
    }

    /// The START row of the session's transaction at `scn`, if it has not been written yet.
    pub(super) fn start_record(
        &mut self,
        session: &SessionName,
        scn: Scn,
    ) -> Result<Option<Record>, SimError> {
        if self.tx_mut(session)?.start_written {
            return Ok(None);
        }
        self.tx_mut(session)?.start_written = true;
        let zero = self.rng.chance(self.config.zero_xid_start_rate);
        let mut start = self.record(session, scn, 0, false, Body::Start)?;
        if zero {
            start.xid = Xid::ZERO;
        }
        self.tx_mut(session)?.start_scn = scn;
        Ok(Some(start))
    }

    /// A further row of the last change (the LOB locator UPDATE): its own redo record and
    /// SSN; an undo of the change pairs with it.
    pub(super) fn statement_continuation(
        &mut self,
        session: &SessionName,
        body: Body,
    ) -> Result<(), SimError> {
        let scn = self.next_scn();
        let ssn = self.next_ssn(session)?;
        if let Some(c) = self.tx_mut(session)?.changes.last_mut() {
            c.ssn = ssn;
        }
        let record = self.record(session, scn, ssn, false, body)?;
        self.emit(
            session,
            Group {
                records: vec![record],
            },
        );
        Ok(())
    }

    /// Ends a transaction that never wrote redo (no change): Oracle writes nothing for it.
    fn end_silent(&mut self, session: &SessionName) -> bool {
        let Some(s) = self.sessions.get_mut(session) else {
            return true;
        };
        match &s.tx {
            None => true,
            Some(tx) if !tx.start_written => {
                s.tx = None;
                true
            }
            Some(_) => false,
        }
    }

    /// COMMIT: the strand and the COMMIT row reach the log, the locks go, and the surviving
    /// changes join the ground truth.
    pub(super) fn commit(&mut self, session: &SessionName) -> Result<(), SimError> {
        if self.end_silent(session) {
            return Ok(());
        }
        self.flush_strand(session);
        let scn = self.next_scn();
        let record = self.record(session, scn, 0, false, Body::Commit)?;
        let (thread, con) = {
            let s = self
                .sessions
                .get(session)
                .ok_or_else(|| SimError::Scenario("no session".into()))?;
            (s.thread, s.con)
        };
        let commit_addr = self.write_group(
            thread,
            Group {
                records: vec![record.clone()],
            },
        );
        let tx = self
            .sessions
            .get_mut(session)
            .and_then(|s| s.tx.take())
            .ok_or_else(|| SimError::Scenario("no transaction".into()))?;
        self.release_locks(session);
        let mut changes = Vec::new();
        for c in tx.changes.iter().filter(|c| !c.undone && !c.failed) {
            let table = self.table(c.table)?;
            let columns = table.layout().map(|l| l.columns.as_slice()).unwrap_or(&[]);
            let named = |row: &Option<Vec<Value>>| {
                row.as_ref().map(|r| {
                    columns
                        .iter()
                        .map(|c| c.name.clone())
                        .zip(r.iter().cloned())
                        .collect::<Vec<_>>()
                })
            };
            changes.push(TruthChange {
                op: c.op,
                table: table.id.clone(),
                scn: c.scn,
                row_id: c.row_id.clone(),
                before: named(&c.before),
                after: named(&c.after),
                unsupported: table.unsupported(),
                lob_only: c.lob_only,
            });
        }
        if !changes.is_empty() {
            let container = self.containers.get(con);
            self.truth.transactions.push(TruthTransaction {
                con: container.map(|c| c.con).unwrap_or_default(),
                pdb: container.and_then(|c| c.name.clone()),
                xid: tx.xid,
                username: record.user.clone(),
                start_scn: tx.start_scn,
                commit_scn: scn,
                commit_addr,
                commit_time: record.time,
                changes,
            });
        }
        // the after images become the rows' committed versions (moved, not copied)
        let mut versions = Vec::with_capacity(tx.changes.len());
        for c in tx.changes.into_iter().filter(|c| !c.undone && !c.failed) {
            let pos = RowPos::parse(&c.row_id).ok_or_else(|| {
                SimError::Scenario(format!("a change of row {:?}: not a ROWID", c.row_id))
            })?;
            versions.push((c.table, pos, c.after.map(StoredRow::from)));
        }
        self.versions
            .write()
            .commit(scn, self.clock.epoch_nanos(), versions);
        Ok(())
    }

    /// ROLLBACK: undo rows for every change, newest first, then the ROLLBACK row.
    pub(super) fn rollback(&mut self, session: &SessionName) -> Result<(), SimError> {
        if self.end_silent(session) {
            return Ok(());
        }
        self.undo_from(session, 0)?;
        self.flush_strand(session);
        let scn = self.next_scn();
        let mut record = self.record(session, scn, 0, false, Body::Rollback)?;
        if self.tx_mut(session)?.unknown_sqn {
            record.xid.sqn = Xid::UNKNOWN_SQN;
        }
        record.zero_rs_id = self.rng.chance(self.config.zero_rs_id_rollback_rate);
        let thread = self.sessions.get(session).map(|s| s.thread).unwrap_or(0);
        self.write_group(
            thread,
            Group {
                records: vec![record],
            },
        );
        if let Some(s) = self.sessions.get_mut(session) {
            s.tx = None;
        }
        self.release_locks(session);
        self.truth.rolled_back += 1;
        Ok(())
    }

    /// SAVEPOINT: a name for the transaction's changes so far (a name used again moves).
    pub(super) fn savepoint(&mut self, session: &SessionName, name: &str) -> Result<(), SimError> {
        self.ensure_tx_quiet(session)?;
        let tx = self.tx_mut(session)?;
        let at = tx.changes.len();
        tx.savepoints.retain(|(n, _)| n != name);
        tx.savepoints.push((name.to_owned(), at));
        Ok(())
    }

    /// A savepoint before any change: the transaction exists from here on, but writes no redo
    /// (not even its START row) until its first change.
    fn ensure_tx_quiet(&mut self, session: &SessionName) -> Result<(), SimError> {
        self.ensure_tx(session).map(|_| ())
    }

    /// ROLLBACK TO SAVEPOINT: undo rows for the changes after it; the transaction goes on.
    pub(super) fn rollback_to(
        &mut self,
        session: &SessionName,
        name: &str,
    ) -> Result<(), SimError> {
        let at = {
            let tx = self.tx_mut(session)?;
            let pos = tx
                .savepoints
                .iter()
                .rposition(|(n, _)| n == name)
                .ok_or_else(|| SimError::Ora(cdc_core::ora::OraCode(1086), format!("ORA-01086: savepoint '{name}' never established in this session or is invalid")))?;
            let at = tx.savepoints[pos].1;
            tx.savepoints.truncate(pos + 1);
            at
        };
        self.undo_from(session, at)
    }

    /// Open transactions, as GV$TRANSACTION lists them (only those with a change).
    pub(crate) fn open_transactions(&self) -> Vec<(&SessionName, &Session, Xid, Scn)> {
        self.sessions
            .iter()
            .filter_map(|(n, s)| {
                s.tx.as_ref()
                    .filter(|t| !t.changes.is_empty())
                    .map(|t| (n, s, t.xid, t.start_scn))
            })
            .collect()
    }

    /// Open transactions by session name, with their number of changes (for the generator).
    pub(crate) fn tx_changes(&self, session: &SessionName) -> Option<usize> {
        self.sessions
            .get(session)
            .and_then(|s| s.tx.as_ref())
            .map(|t| t.changes.len())
    }

    /// The session's open transaction's latest savepoint (for the generator).
    pub(crate) fn tx_has_savepoint(&self, session: &SessionName) -> Option<String> {
        self.sessions
            .get(session)
            .and_then(|s| s.tx.as_ref())
            .and_then(|t| t.savepoints.last().map(|(n, _)| n.clone()))
    }

    /// A session killed: what its transaction wrote stays in the log (its strand too), but no
    /// end record ever follows, so the transaction is an orphan.
    pub(super) fn kill_session(&mut self, session: &SessionName) {
        self.flush_strand(session);
        self.sessions.remove(session);
        self.release_locks(session);
        self.truth.rolled_back += 1;
    }

    /// The instance goes down: recovery rolls every open transaction back (undo rows and a
    /// ROLLBACK row each), and every session is gone.
    pub(super) fn instance_crash(&mut self) -> Result<(), SimError> {
        let names: Vec<SessionName> = self.sessions.keys().cloned().collect();
        for n in &names {
            self.rollback(n)?;
        }
        self.sessions.clear();
        Ok(())
    }
}
