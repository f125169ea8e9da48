//! [`OracleSnapshotReader`]: snapshot (flashback) reads on a session of their own.
//!
//! ```text
//!   OracleSource::snapshot_reader() ── a new connection, same ConnectOptions
//!        │ NLS_SESSION (the mining session's formats) + SNAPSHOT_SESSION (binary sort)
//!        ▼
//!   OracleSnapshotReader ── estimate / boundaries / read   (statements: snapshot_sql)
//!        │ a PDB's table: ALTER SESSION SET CONTAINER = "PDB" first, settings again
//!        │ rows: texts ──snapshot_sql::convert_row (the decoder's parser and conversion)──► values
//!        ▼
//!   sink(SnapshotRow) ── Break stops the read (the cursor is closed when dropped)
//! ```
//!
//! The reader keeps no password: it is given a connected session, and its `Debug` shows the
//! connect string, the user and the container it is in.
//!
//! # Error handling
//!
//! Nothing is retried here. Driver errors go through `SourceError::from_driver_message`, so
//! ORA-01555 (snapshot too old), ORA-08181 (an SCN the database does not know) and ORA-01466
//! (the table's definition changed after the SCN) come out as [`SourceError::Ora`] with their
//! codes, for the snapshot stage to act on (a smaller chunk, CDC-8001, or waiting for the
//! stream to pass the DDL). A value the decoder refuses is a [`SourceError::Driver`] naming
//! the table and column, never the value; a query the reader cannot write (a NULL key bound,
//! an SCN beyond a signed bind) is [`SourceError::Invalid`].

use std::fmt;

use cdc_core::TableId;
use cdc_core::change::ColumnValue;
use oracle::{Connection, ResultSet, Row};

use super::ConnectOptions;
use super::client::{OracleSource, binds, col, driver};
use super::snapshot_sql::{self, ColumnRead};
use super::sql::{self, Bind, Statement};
use crate::source::{
    SnapshotBound, SnapshotQuery, SnapshotReadSummary, SnapshotReader, SnapshotRow, SnapshotSink,
    SourceError, TableEstimate,
};

/// Where a reader's session goes and as whom: what its `Debug` shows.
#[derive(Clone, PartialEq, Eq)]
struct SessionLabel {
    connect_string: String,
    user: String,
}

impl SessionLabel {
    fn of(options: &ConnectOptions) -> SessionLabel {
        SessionLabel {
            connect_string: options.connect_string().unwrap_or_default(),
            user: options.user.clone(),
        }
    }
}

/// A read-only session for snapshot reads, apart from the LogMiner session.
pub struct OracleSnapshotReader {
    conn: Connection,
    label: SessionLabel,
    /// The container the session opened in (`CON_NAME`); `None` in a non-CDB.
    home: Option<String>,
    /// The container the session is in now, its settings applied there.
    current: Option<String>,
}

impl fmt::Debug for OracleSnapshotReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OracleSnapshotReader")
            .field("connect_string", &self.label.connect_string)
            .field("user", &self.label.user)
            .field("container", &self.current)
            .finish_non_exhaustive()
    }
}

impl OracleSnapshotReader {
    /// Opens a new session with `options` and the engine's NLS formats, sorting and comparing
    /// in binary.
    pub(super) fn open(options: &ConnectOptions) -> Result<OracleSnapshotReader, SourceError> {
        let conn = OracleSource::open(options)?;
        for stmt in snapshot_sql::SNAPSHOT_SESSION {
            conn.execute(stmt, &[]).map_err(driver)?;
        }
        let home = session_container(&conn)?;
        Ok(OracleSnapshotReader {
            conn,
            label: SessionLabel::of(options),
            current: home.clone(),
            home,
        })
    }

    /// Moves the session into `table`'s container when it is elsewhere, and sets its
    /// settings again there (the formats the rows are read in must hold in every container).
    fn enter(&mut self, table: &TableId) -> Result<(), SourceError> {
        let Some(target) =
            snapshot_sql::container_switch(self.current.as_deref(), self.home.as_deref(), table)
        else {
            return Ok(());
        };
        let target = target.to_owned();
        self.conn
            .execute(&snapshot_sql::set_container(&target), &[])
            .map_err(driver)?;
        for stmt in sql::NLS_SESSION
            .iter()
            .chain(snapshot_sql::SNAPSHOT_SESSION.iter())
        {
            self.conn.execute(stmt, &[]).map_err(driver)?;
        }
        // only once the settings hold: a failure above leaves the next call to switch again
        self.current = Some(target);
        Ok(())
    }

    /// Runs a query, `fetch_size` rows per round trip.
    fn result_set(
        &self,
        statement: &Statement,
        fetch_size: u32,
    ) -> Result<ResultSet<'static, Row>, SourceError> {
        let p = binds(&statement.binds);
        self.conn
            .statement(&statement.text)
            .fetch_array_size(fetch_size.max(1))
            .build()
            .and_then(|stmt| stmt.into_result_set::<Row>(&p))
            .map_err(driver)
    }
}

/// The container a session is in (`CON_NAME`), `None` in a non-CDB (CON_ID 0).
fn session_container(conn: &Connection) -> Result<Option<String>, SourceError> {
    let mut rows = conn.query(sql::SESSION_CONTAINER, &[]).map_err(driver)?;
    let Some(row) = rows.next() else {
        return Ok(None);
    };
    let row = row.map_err(driver)?;
    // SYS_CONTEXT answers text: 0 in a non-CDB, 1 at the root, above in a PDB
    let con_id: String = col(&row, 0)?;
    if con_id.trim().parse::<u32>().is_ok_and(|id| id >= 1) {
        col(&row, 1)
    } else {
        Ok(None)
    }
}

/// The texts of a fetched row's select items (`reads[i]` at column `i`): LONG RAW bytes
/// hex-encoded, everything else as the database wrote its text.
fn texts(row: &Row, reads: &[ColumnRead]) -> Result<Vec<Option<String>>, SourceError> {
    reads
        .iter()
        .enumerate()
        .map(|(i, read)| {
            if read.fetches_bytes() {
                Ok(col::<Option<Vec<u8>>>(row, i)?.map(|b| snapshot_sql::hex(&b)))
            } else {
                col::<Option<String>>(row, i)
            }
        })
        .collect()
}

impl SnapshotReader for OracleSnapshotReader {
    fn estimate(&mut self, table: &TableId) -> Result<TableEstimate, SourceError> {
        self.enter(table)?;
        let params = [
            Bind::Text(table.owner.clone()),
            Bind::Text(table.table.clone()),
        ];
        let p = binds(&params);
        let mut rows = self
            .conn
            .query(snapshot_sql::TABLE_ESTIMATE, &p)
            .map_err(driver)?;
        let Some(row) = rows.next() else {
            // a table the session cannot see: no statistics; its read says why
            return Ok(TableEstimate::default());
        };
        let row = row.map_err(driver)?;
        Ok(TableEstimate {
            rows: col(&row, 0)?,
            blocks: col(&row, 1)?,
        })
    }

    fn boundaries(
        &mut self,
        query: &SnapshotQuery,
        every: u64,
        max: usize,
    ) -> Result<Vec<SnapshotBound>, SourceError> {
        let plan = snapshot_sql::boundaries_statement(query, every, max)?;
        if max == 0 {
            return Ok(Vec::new());
        }
        self.enter(&query.table)?;
        let mut out = Vec::new();
        for row in self.result_set(&plan.statement, query.fetch_size)? {
            let row = row.map_err(driver)?;
            out.push(match &plan.key {
                Some(reads) => SnapshotBound::Key(snapshot_sql::convert_row(
                    &query.table,
                    &query.layout,
                    reads,
                    &texts(&row, reads)?,
                )?),
                None => SnapshotBound::RowId(col(&row, 0)?),
            });
            if out.len() >= max {
                break;
            }
        }
        Ok(out)
    }

    fn read(
        &mut self,
        query: &SnapshotQuery,
        sink: &mut SnapshotSink<'_>,
    ) -> Result<SnapshotReadSummary, SourceError> {
        let plan = snapshot_sql::read_statement(query)?;
        let mut summary = SnapshotReadSummary::default();
        if plan.limit == Some(0) {
            return Ok(summary);
        }
        self.enter(&query.table)?;
        let mut rows = self.result_set(&plan.statement, query.fetch_size)?;
        // the ROWID follows the reads in the select list
        let row_id_at = plan.reads.len();
        // FETCH FIRST limits the rows in the database; without it (a LONG column) this does
        while plan.limit.is_none_or(|limit| summary.rows < limit) {
            let Some(row) = rows.next() else {
                break;
            };
            let row = row.map_err(driver)?;
            let values = snapshot_sql::convert_row(
                &query.table,
                &query.layout,
                &plan.reads,
                &texts(&row, &plan.reads)?,
            )?;
            let row_id: String = col(&row, row_id_at)?;
            let bound = match &plan.key {
                Some(key) => snapshot_sql::key_bound(&values, key),
                None => SnapshotBound::RowId(row_id.clone()),
            };
            let values = values
                .into_iter()
                .zip(&plan.reads)
                .take(plan.selected)
                .map(|(value, read)| ColumnValue {
                    column: read.column,
                    value,
                })
                .collect();
            summary.rows += 1;
            if sink(SnapshotRow {
                row_id,
                values,
                bound,
            })
            .is_break()
            {
                summary.stopped_by_sink = true;
                break;
            }
        }
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the reader's `Debug` shows is made from the options without the password.
    #[test]
    fn the_label_never_holds_the_password() {
        let options = ConnectOptions {
            host: Some("db".into()),
            service: Some("FREEPDB1".into()),
            user: "c##cdc".into(),
            password: "hunter2-secret".into(),
            ..ConnectOptions::default()
        };
        let label = SessionLabel::of(&options);
        let shown = format!("{} {}", label.connect_string, label.user);
        assert!(!shown.contains("hunter2-secret"), "{shown}");
        assert!(
            shown.contains("c##cdc") && shown.contains("FREEPDB1"),
            "{shown}"
        );
    }
}
