//! Finding tables: by name for a session (`OWNER.TABLE` or `PDB.OWNER.TABLE`), and by their
//! place in a container.

use super::sessions::SessionName;
use super::{Container, SimDatabase};
use crate::sim::SimError;
use crate::sim::model::SimTable;

/// Where a table is: its container and its place among the container's tables. Dropped tables
/// keep their place, so a reference stays valid for the redo written before the drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TableRef {
    /// Index into the database's containers.
    pub con: usize,
    /// Index into that container's tables.
    pub index: usize,
}

/// The live table `name` names (`OWNER.TABLE` in container `con`, or the first container;
/// `PDB.OWNER.TABLE`), or ORA-00942.
pub(super) fn resolve_table(
    containers: &[Container],
    con: Option<usize>,
    name: &str,
) -> Result<TableRef, SimError> {
    let parts: Vec<&str> = name.split('.').collect();
    let (con_idx, owner, table) = match parts.as_slice() {
        [pdb, owner, table] => {
            let idx = containers
                .iter()
                .position(|c| c.name.as_deref() == Some(*pdb))
                .ok_or_else(|| SimError::Scenario(format!("no PDB named {pdb}")))?;
            (idx, *owner, *table)
        }
        [owner, table] => (con.unwrap_or(0), *owner, *table),
        _ => {
            return Err(SimError::Scenario(format!(
                "table {name:?}: expected OWNER.TABLE or PDB.OWNER.TABLE"
            )));
        }
    };
    let c = containers
        .get(con_idx)
        .ok_or_else(|| SimError::Scenario("no container".into()))?;
    c.tables
        .iter()
        .rposition(|t| !t.dropped && t.id.owner == owner && t.id.table == table)
        .map(|index| TableRef {
            con: con_idx,
            index,
        })
        .ok_or_else(|| {
            SimError::Ora(
                cdc_core::ora::OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST,
                format!("ORA-00942: table or view does not exist ({name})"),
            )
        })
}

impl SimDatabase {
    /// The table a reference points to.
    pub(crate) fn table(&self, t: TableRef) -> Result<&SimTable, SimError> {
        self.containers
            .get(t.con)
            .and_then(|c| c.tables.get(t.index))
            .ok_or_else(|| SimError::Scenario("no such table".into()))
    }

    pub(super) fn table_mut(&mut self, t: TableRef) -> Result<&mut SimTable, SimError> {
        self.containers
            .get_mut(t.con)
            .and_then(|c| c.tables.get_mut(t.index))
            .ok_or_else(|| SimError::Scenario("no such table".into()))
    }

    /// Looks a table up in container `con` (`OWNER.TABLE`, or `PDB.OWNER.TABLE`).
    pub(crate) fn find_table_in(&self, con: usize, name: &str) -> Result<TableRef, SimError> {
        resolve_table(&self.containers, Some(con), name)
    }

    /// Looks a table up for a session (`OWNER.TABLE` in the session's container).
    pub(crate) fn find_table(
        &self,
        session: Option<&SessionName>,
        name: &str,
    ) -> Result<TableRef, SimError> {
        let con = session.and_then(|s| self.sessions.get(s)).map(|s| s.con);
        resolve_table(&self.containers, con, name)
    }
}
