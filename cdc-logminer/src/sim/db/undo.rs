//! Undo: the ROLLBACK=1 rows that reverse a transaction's changes (newest first) and the rows
//! they restore.

use cdc_core::Value;
use cdc_core::change::ChangeOp;

use super::SimDatabase;
use super::records::{Body, DmlKind, Group, Record};
use super::sessions::SessionName;
use super::transactions::TxChange;
use crate::sim::SimError;

impl SimDatabase {
    /// The undo record of one change, and the database state restored.
    fn undo_change(
        &mut self,
        session: &SessionName,
        change: &TxChange,
    ) -> Result<Record, SimError> {
        let table = self.table(change.table)?;
        let version = table.version();
        let lob: Vec<bool> = table
            .layout()
            .map(|l| l.columns.iter().map(|c| c.data_type.is_lob()).collect())
            .unwrap_or_default();
        let object = match (&change.before, &change.after) {
            (Some(row), _) | (None, Some(row)) => table.segment_for(row)?,
            _ => table.object,
        };
        let unsupported = table.unsupported();
        let kind = match change.op {
            ChangeOp::Insert => DmlKind::UndoInsert,
            ChangeOp::Delete => DmlKind::UndoDelete {
                row: change
                    .before
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| {
                        if lob.get(i) == Some(&true) && !v.is_null() {
                            Value::EmptyLob
                        } else {
                            v
                        }
                    })
                    .collect(),
            },
            ChangeOp::Update => {
                let before = change.before.clone().unwrap_or_default();
                DmlKind::UndoUpdate {
                    set: change
                        .set
                        .iter()
                        .map(|&i| {
                            let v = before.get(i).cloned().unwrap_or(Value::Null);
                            (
                                i,
                                if lob.get(i) == Some(&true) {
                                    Value::EmptyLob
                                } else {
                                    v
                                },
                            )
                        })
                        .collect(),
                }
            }
        };
        let body = if unsupported {
            Body::Unsupported {
                table: change.table,
                object,
                row_id: change.row_id.clone(),
            }
        } else {
            Body::Dml {
                table: change.table,
                object,
                version,
                row_id: change.row_id.clone(),
                kind,
            }
        };
        let scn = self.next_scn();
        let record = self.record(session, scn, change.ssn, true, body)?;
        let t = self.table_mut(change.table)?;
        match &change.before {
            Some(row) => {
                t.rows.insert(change.row_id.clone(), row.clone());
            }
            None => {
                t.rows.remove(&change.row_id);
            }
        }
        Ok(record)
    }

    /// Undoes the changes from index `from` on, newest first, one undo record each.
    pub(super) fn undo_from(&mut self, session: &SessionName, from: usize) -> Result<(), SimError> {
        let changes: Vec<(usize, TxChange)> = {
            let tx = self.tx_mut(session)?;
            tx.changes
                .iter()
                .enumerate()
                .skip(from)
                .filter(|(_, c)| !c.undone)
                .map(|(i, c)| (i, c.clone()))
                .rev()
                .collect()
        };
        for (i, change) in changes {
            let record = self.undo_change(session, &change)?;
            if let Some(c) = self.tx_mut(session)?.changes.get_mut(i) {
                c.undone = true;
            }
            self.emit(
                session,
                Group {
                    records: vec![record],
                },
            );
        }
        Ok(())
    }

    /// Undoes the transaction's last change (a failed statement).
    pub(super) fn undo_last(&mut self, session: &SessionName) -> Result<(), SimError> {
        let n = self.tx_mut(session)?.changes.len();
        self.undo_from(session, n.saturating_sub(1))
    }
}
