//! Row locks: a row changed by an open transaction is held by its session until the
//! transaction ends; another session's change of it is refused ([`SimError::Busy`]) where
//! Oracle would wait.

use super::SimDatabase;
use super::sessions::SessionName;
use super::tables::TableRef;
use crate::sim::SimError;

/// A row of a table, by ROWID. The derived order (table, then ROWID) keeps a table's locks
/// together, which [`SimDatabase::rows_locked_by_others`] reads as one range.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct RowKey {
    pub table: TableRef,
    pub row_id: String,
}

impl SimDatabase {
    /// Takes the row for the session, unless another session holds it.
    pub(super) fn lock(&mut self, session: &SessionName, key: RowKey) -> Result<(), SimError> {
        match self.locks.get(&key) {
            Some(holder) if holder != session => Err(SimError::Busy(format!(
                "row {} is locked by session {holder}",
                key.row_id
            ))),
            _ => {
                self.locks.insert(key, session.clone());
                Ok(())
            }
        }
    }

    /// The rows of a table another session holds locks on (a few: the open transactions').
    pub(crate) fn rows_locked_by_others(&self, session: &SessionName, t: TableRef) -> Vec<&String> {
        let first = RowKey {
            table: t,
            row_id: String::new(),
        };
        self.locks
            .range(first..)
            .take_while(|(key, _)| key.table == t)
            .filter(|(_, holder)| *holder != session)
            .map(|(key, _)| &key.row_id)
            .collect()
    }

    /// The session's transaction ended: its rows are free.
    pub(super) fn release_locks(&mut self, session: &SessionName) {
        self.locks.retain(|_, holder| holder != session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lock range of a table relies on this order: container, table, then ROWID.
    #[test]
    fn row_keys_order_by_container_then_table_then_row_id() {
        let key = |con, index, row_id: &str| RowKey {
            table: TableRef { con, index },
            row_id: row_id.to_owned(),
        };
        let mut keys = vec![
            key(1, 0, "A"),
            key(0, 1, "A"),
            key(0, 0, "B"),
            key(0, 0, "A"),
        ];
        keys.sort();
        assert_eq!(
            keys,
            vec![
                key(0, 0, "A"),
                key(0, 0, "B"),
                key(0, 1, "A"),
                key(1, 0, "A"),
            ]
        );
    }
}
