//! [`OracleSource`]: the [`RedoSource`] over one ODPI-C connection.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use cdc_core::ora::OraCode;
use cdc_core::{
    ColumnDef, ColumnType, ConId, MinedRow, ObjectId, Operation, OracleDateTime, RedoAddr,
    RedoThread, RsId, Scn, SupplementalLogging, TableId, TableLayout, UniqueIndex, Xid, choose_key,
};
use oracle::sql_type::ToSql;
use oracle::{Connection, Row};

use super::ConnectOptions;
use super::snapshot::OracleSnapshotReader;
use super::sql::{self, Bind, Statement};
use crate::source::{
    ActiveTransaction, CaptureMode, CapturedObject, DatabaseIdentity, DatabaseRole,
    DictionaryBuild, DictionarySource, LogFile, LogInventoryQuery, LogLocation, LogStatus,
    MineSummary, MiningQuery, MiningWindow, NlsSettings, OpenMode, PdbInfo, RedoBound, RedoSource,
    RowSink, SegmentKind, SessionMode, SessionRef, SnapshotReader, SourceError, TableFilter,
};

pub(super) fn driver(e: oracle::Error) -> SourceError {
    SourceError::from_driver_message(&e.to_string())
}

pub(super) fn binds(binds: &[Bind]) -> Vec<&dyn ToSql> {
    binds
        .iter()
        .map(|b| match b {
            Bind::Int(i) => i as &dyn ToSql,
            Bind::Text(s) => s as &dyn ToSql,
        })
        .collect()
}

pub(super) fn col<T: oracle::sql_type::FromSql>(row: &Row, i: usize) -> Result<T, SourceError> {
    row.get(i).map_err(driver)
}

/// A FIRST_TIME column read as ms since the epoch; `None` when NULL or before 1970.
fn epoch_ms(ms: Option<i64>) -> Option<u64> {
    ms.and_then(|ms| u64::try_from(ms).ok())
}

fn parse_date(text: &str) -> Option<OracleDateTime> {
    let (d, t) = text.split_once(' ')?;
    let mut d = d.split('-');
    let mut t = t.split(':');
    OracleDateTime::new(
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
        0,
    )
}

/// The real database, through one connection and its LogMiner session.
pub struct OracleSource {
    options: ConnectOptions,
    conn: Connection,
    is_cdb: bool,
}

impl fmt::Debug for OracleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OracleSource")
            .field(
                "connect_string",
                &self.options.connect_string().unwrap_or_default(),
            )
            .field("user", &self.options.user)
            .field("is_cdb", &self.is_cdb)
            .finish_non_exhaustive()
    }
}

impl OracleSource {
    /// Connects and sets the session's NLS formats. Without Oracle Instant Client this fails
    /// with [`SourceError::ClientLibraryMissing`] (DPI-1047), never a panic.
    pub fn connect(options: ConnectOptions) -> Result<OracleSource, SourceError> {
        let conn = Self::open(&options)?;
        let mut source = OracleSource {
            options,
            conn,
            is_cdb: false,
        };
        source.is_cdb = source.identity()?.is_cdb;
        Ok(source)
    }

    /// Connects for a preflight check (`oracle-cdc-admin check`): the session alone, its
    /// identity not read, so a capture user who may not read V$DATABASE is a finding of the
    /// check rather than a refused connection. Whether the database is a CDB comes from the
    /// session's context, which needs no grant (a release without CON_ID, before 12c, has no
    /// containers).
    pub fn connect_for_preflight(options: ConnectOptions) -> Result<OracleSource, SourceError> {
        let conn = Self::open(&options)?;
        let mut source = OracleSource {
            options,
            conn,
            is_cdb: false,
        };
        source.is_cdb = source
            .rows(super::preflight_sql::SESSION_CONTAINER, &[])
            .ok()
            .and_then(|rows| rows.first().and_then(|r| col::<String>(r, 0).ok()))
            .is_some_and(|con_id| super::preflight_sql::in_cdb(&con_id));
        Ok(source)
    }

    /// Whether the database is a CDB, as read at connect.
    pub(super) fn is_cdb(&self) -> bool {
        self.is_cdb
    }

    /// A new session with the engine's NLS formats (`sql::NLS_SESSION`): the mining
    /// session's, and a snapshot reader's.
    pub(super) fn open(options: &ConnectOptions) -> Result<Connection, SourceError> {
        let connect_string = options
            .connect_string()
            .map_err(|message| SourceError::Invalid { message })?;
        let conn = Connection::connect(&options.user, &options.password, connect_string)
            .map_err(driver)?;
        for stmt in sql::NLS_SESSION {
            conn.execute(stmt, &[]).map_err(driver)?;
        }
        Ok(conn)
    }

    /// Each PDB's CON_ID by name (none in a non-CDB).
    fn pdb_ids(&self) -> Result<BTreeMap<String, u32>, SourceError> {
        if !self.is_cdb {
            return Ok(BTreeMap::new());
        }
        self.rows(sql::PDBS, &[])?
            .iter()
            .map(|r| Ok((col::<String>(r, 1)?, col::<u32>(r, 0)?)))
            .collect()
    }

    pub(super) fn rows(&self, stmt: &str, params: &[Bind]) -> Result<Vec<Row>, SourceError> {
        let p = binds(params);
        let rs = self.conn.query(stmt, &p).map_err(driver)?;
        rs.map(|r| r.map_err(driver)).collect()
    }

    fn exec(&self, stmt: &str, params: &[Bind]) -> Result<(), SourceError> {
        let p = binds(params);
        self.conn.execute(stmt, &p).map(|_| ()).map_err(driver)
    }

    fn mined_row(row: &Row) -> Result<MinedRow, SourceError> {
        let rs_id: String = col(row, 1)?;
        let rs_id = RsId::parse(&rs_id).map_err(|e| SourceError::Driver {
            message: e.to_string(),
        })?;
        let op: u16 = col(row, 7)?;
        let mut m = MinedRow::new(
            Scn(col(row, 0)?),
            rs_id,
            col(row, 2)?,
            Xid::new(col(row, 4)?, col(row, 5)?, col(row, 6)?),
            Operation::from_code(op),
        );
        m.csf = col::<u8>(row, 3)? == 1;
        m.rollback = col::<u8>(row, 8)? == 1;
        m.status = col(row, 9)?;
        m.info = col(row, 10)?;
        m.seg_owner = col(row, 11)?;
        m.table_name = col(row, 12)?;
        m.data_obj = col::<Option<u32>>(row, 13)?.map(ObjectId);
        m.row_id = col(row, 14)?;
        m.sql_redo = col(row, 15)?;
        m.username = col(row, 16)?;
        m.session = col(row, 17)?;
        m.serial = col(row, 18)?;
        m.src_con_id = ConId(col::<Option<u32>>(row, 19)?.unwrap_or(0));
        m.src_con_name = col(row, 20)?;
        m.thread = RedoThread(col(row, 21)?);
        m.timestamp = col::<Option<String>>(row, 22)?.and_then(|t| parse_date(&t));
        Ok(m)
    }
}

impl RedoSource for OracleSource {
    fn identity(&mut self) -> Result<DatabaseIdentity, SourceError> {
        let rows = self.rows(sql::IDENTITY, &[])?;
        let row = rows.first().ok_or_else(|| SourceError::Driver {
            message: "V$DATABASE returned no row".into(),
        })?;
        let is_cdb = col::<String>(row, 5)? == "YES";
        let mut identity = DatabaseIdentity {
            dbid: col(row, 0)?,
            name: col(row, 1)?,
            resetlogs_scn: Scn(col(row, 2)?),
            role: DatabaseRole::from_view(&col::<String>(row, 3)?),
            open_mode: OpenMode::from_view(&col::<String>(row, 4)?),
            enabled_threads: Vec::new(),
            is_cdb,
            open_pdbs: Vec::new(),
            session_pdb: None,
            valid_archive_destinations: Vec::new(),
            utc_offset_minutes: 0,
        };
        if let Some(r) = self.rows(sql::UTC_OFFSET_MINUTES, &[])?.first() {
            identity.utc_offset_minutes = col::<i64>(r, 0)?.clamp(-24 * 60, 24 * 60) as i32;
        }
        if let Some(r) = self.rows(sql::SESSION_CONTAINER, &[])?.first() {
            // SYS_CONTEXT answers text: CON_ID 0 in a non-CDB, 1 at the root, above in a PDB
            let con_id: String = col(r, 0)?;
            if con_id.trim().parse::<u32>().is_ok_and(|id| id > 1) {
                identity.session_pdb = col(r, 1)?;
            }
        }
        for r in self.rows(sql::ARCHIVE_DESTINATIONS, &[])? {
            identity.valid_archive_destinations.push(col(&r, 1)?);
        }
        for r in self.rows(sql::ENABLED_THREADS, &[])? {
            identity.enabled_threads.push(RedoThread(col(&r, 0)?));
        }
        if is_cdb {
            for r in self.rows(sql::PDBS, &[])? {
                identity.open_pdbs.push(PdbInfo {
                    con_id: ConId(col(&r, 0)?),
                    name: col(&r, 1)?,
                    open_mode: OpenMode::from_view(&col::<String>(&r, 2)?),
                });
            }
        }
        Ok(identity)
    }

    fn current_scn(&mut self) -> Result<Scn, SourceError> {
        let rows = self.rows(sql::CURRENT_SCN, &[])?;
        let row = rows.first().ok_or_else(|| SourceError::Driver {
            message: "V$DATABASE returned no row".into(),
        })?;
        Ok(Scn(col(row, 0)?))
    }

    fn log_inventory(&mut self, query: &LogInventoryQuery) -> Result<Vec<LogFile>, SourceError> {
        let dests = self.rows(sql::ARCHIVE_DESTINATIONS, &[])?;
        let mut dest = None;
        for r in &dests {
            let id: u32 = col(r, 0)?;
            let name: String = col(r, 1)?;
            let wanted = query
                .destination
                .as_deref()
                .is_none_or(|w| w.eq_ignore_ascii_case(&name));
            if wanted {
                dest = Some((id, name));
                break;
            }
        }
        let (dest_id, dest_name) = dest.ok_or_else(|| SourceError::Invalid {
            message: format!(
                "no valid local archive destination{}",
                query
                    .destination
                    .as_deref()
                    .map(|d| format!(" named {d}"))
                    .unwrap_or_default()
            ),
        })?;
        let from = Bind::Int(query.from.get() as i64);
        let mut by_key: BTreeMap<(u16, u32), LogFile> = BTreeMap::new();
        for r in self.rows(
            sql::ARCHIVED_LOGS,
            &[from.clone(), Bind::Int(i64::from(dest_id))],
        )? {
            let status: String = col(&r, 4)?;
            let deleted: String = col(&r, 5)?;
            let dictionary_begin: String = col(&r, 8)?;
            let dictionary_end: String = col(&r, 9)?;
            let f = LogFile {
                thread: RedoThread(col(&r, 0)?),
                sequence: col(&r, 1)?,
                first_scn: Scn(col(&r, 2)?),
                next_scn: Scn(col(&r, 3)?),
                status: LogStatus::from_view(&status),
                archived: true,
                deleted: deleted == "YES",
                name: col(&r, 6)?,
                location: LogLocation::Archived {
                    dest_id,
                    dest_name: dest_name.clone(),
                },
                dictionary_begin: dictionary_begin == "YES",
                dictionary_end: dictionary_end == "YES",
                first_time_ms: epoch_ms(col(&r, 10)?),
            };
            by_key.insert((f.thread.0, f.sequence), f);
        }
        if query.mode == CaptureMode::Online {
            for r in self.rows(sql::ONLINE_LOGS, &[from])? {
                let thread = RedoThread(col(&r, 1)?);
                let sequence: u32 = col(&r, 2)?;
                if by_key.contains_key(&(thread.0, sequence)) {
                    continue;
                }
                let status: String = col(&r, 5)?;
                let archived: String = col(&r, 6)?;
                by_key.insert(
                    (thread.0, sequence),
                    LogFile {
                        thread,
                        sequence,
                        first_scn: Scn(col(&r, 3)?),
                        next_scn: Scn(col(&r, 4)?),
                        status: LogStatus::from_view(&status),
                        archived: archived == "YES",
                        deleted: false,
                        name: col(&r, 7)?,
                        location: LogLocation::Online { group: col(&r, 0)? },
                        // V$LOG has no dictionary flags: a build is found once archived
                        dictionary_begin: false,
                        dictionary_end: false,
                        first_time_ms: epoch_ms(col(&r, 8)?),
                    },
                );
            }
        }
        Ok(by_key.into_values().collect())
    }

    fn resolve_objects(
        &mut self,
        filter: &TableFilter<'_>,
    ) -> Result<Vec<CapturedObject>, SourceError> {
        let (objects_sql, iot_sql) = if self.is_cdb {
            (sql::OBJECTS_CDB, sql::IOT_TOP_CDB)
        } else {
            (sql::OBJECTS_NON_CDB, sql::IOT_TOP_NON_CDB)
        };
        let mut iot: BTreeMap<(u32, String, String), (String, u32)> = BTreeMap::new();
        for r in self.rows(iot_sql, &[])? {
            iot.insert(
                (col(&r, 0)?, col(&r, 1)?, col(&r, 2)?),
                (col(&r, 3)?, col(&r, 4)?),
            );
        }
        // per table: its own id, partitions, subpartitions
        type Parts = (Option<u32>, Vec<(String, u32)>, Vec<(String, u32)>);
        let mut tables: BTreeMap<(u32, Option<String>, String, String), Parts> = BTreeMap::new();
        for r in self.rows(objects_sql, &[])? {
            let con: u32 = col(&r, 0)?;
            let pdb: Option<String> = col(&r, 1)?;
            let owner: String = col(&r, 2)?;
            let name: String = col(&r, 3)?;
            let sub: Option<String> = col(&r, 4)?;
            let id: u32 = col(&r, 5)?;
            let kind: String = col(&r, 6)?;
            let pdb = pdb.filter(|p| p != "CDB$ROOT");
            let entry = tables.entry((con, pdb, owner, name)).or_default();
            match (kind.as_str(), sub) {
                ("TABLE", _) => entry.0 = Some(id),
                ("TABLE PARTITION", Some(s)) => entry.1.push((s, id)),
                ("TABLE SUBPARTITION", Some(s)) => entry.2.push((s, id)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        for ((con, pdb, owner, name), (table_id, parts, subparts)) in tables {
            let mut id = TableId::new(owner.clone(), name.clone());
            if let Some(p) = &pdb {
                id = id.in_pdb(p.clone());
            }
            if !filter(&id) {
                continue;
            }
            let con_id = ConId(con);
            if let Some((index, object)) = iot.get(&(con, owner, name)) {
                out.push(CapturedObject {
                    con: con_id,
                    object: ObjectId(*object),
                    table: id,
                    segment: SegmentKind::IotTop(index.clone()),
                });
            } else if !subparts.is_empty() {
                for (s, o) in subparts {
                    out.push(CapturedObject {
                        con: con_id,
                        object: ObjectId(o),
                        table: id.clone(),
                        segment: SegmentKind::Subpartition(s),
                    });
                }
            } else if !parts.is_empty() {
                for (p, o) in parts {
                    out.push(CapturedObject {
                        con: con_id,
                        object: ObjectId(o),
                        table: id.clone(),
                        segment: SegmentKind::Partition(p),
                    });
                }
            } else if let Some(o) = table_id {
                out.push(CapturedObject {
                    con: con_id,
                    object: ObjectId(o),
                    table: id,
                    segment: SegmentKind::Table,
                });
            }
        }
        Ok(out)
    }

    fn last_ddl_after(
        &mut self,
        tables: &[TableId],
        scn: Scn,
    ) -> Result<Vec<(TableId, i64)>, SourceError> {
        /// SCN_TO_TIMESTAMP of an SCN older than the database's SCN-to-time map.
        const SCN_NOT_MAPPED: OraCode = OraCode(8181);
        let pdbs = self.pdb_ids()?;
        let scn = i64::try_from(scn.0).map_err(|_| SourceError::Driver {
            message: format!("SCN {scn} is out of Oracle's range"),
        })?;
        let mut out = Vec::new();
        for t in tables {
            let (stmt, params) = if self.is_cdb {
                let Some(con) = t.pdb.as_ref().and_then(|p| pdbs.get(p)) else {
                    continue;
                };
                (
                    sql::LAST_DDL_AFTER_CDB,
                    vec![
                        Bind::Int(scn),
                        Bind::Int(i64::from(*con)),
                        Bind::Text(t.owner.clone()),
                        Bind::Text(t.table.clone()),
                    ],
                )
            } else {
                (
                    sql::LAST_DDL_AFTER_NON_CDB,
                    vec![
                        Bind::Int(scn),
                        Bind::Text(t.owner.clone()),
                        Bind::Text(t.table.clone()),
                    ],
                )
            };
            let rows = match self.rows(stmt, &params) {
                // the database no longer knows when the SCN was: it cannot say
                Err(e) if e.ora_code() == Some(SCN_NOT_MAPPED) => return Ok(out),
                other => other?,
            };
            let seconds = rows.first().map(|r| col::<Option<i64>>(r, 0)).transpose()?;
            if let Some(Some(seconds)) = seconds {
                out.push((t.clone(), seconds));
            }
        }
        Ok(out)
    }

    fn table_layouts(&mut self, tables: &[TableId]) -> Result<Vec<TableLayout>, SourceError> {
        let pdbs = self.pdb_ids()?;
        let yes = |text: String| text == "YES";
        let database = match self.rows(sql::SUPPLEMENTAL_DATABASE, &[])?.first() {
            Some(r) => SupplementalLogging {
                all_columns: yes(col(r, 0)?),
                primary_key: yes(col(r, 1)?),
            },
            None => SupplementalLogging::default(),
        };
        let mut by_pdb: BTreeMap<u32, SupplementalLogging> = BTreeMap::new();
        if self.is_cdb {
            // a PDB's own supplemental logging is extra detail for the schema topic; a release
            // or grant that does not show the view must not keep the connector from starting
            let rows = match self.rows(sql::SUPPLEMENTAL_PDBS, &[]) {
                Err(e) if e.ora_code() == Some(OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST) => {
                    tracing::warn!(error = %e, "PDB supplemental logging not readable; using the CDB's");
                    Vec::new()
                }
                other => other?,
            };
            for r in rows {
                by_pdb.insert(
                    col(&r, 0)?,
                    SupplementalLogging {
                        all_columns: yes(col(&r, 1)?),
                        primary_key: yes(col(&r, 2)?),
                    },
                );
            }
        }
        let mut out = Vec::new();
        for t in tables {
            let (cols_sql, pk_sql, unique_sql, groups_sql, pdb_logging, params) = if self.is_cdb {
                let Some(con) = t.pdb.as_ref().and_then(|p| pdbs.get(p)) else {
                    continue;
                };
                (
                    sql::COLUMNS_CDB,
                    sql::PRIMARY_KEY_CDB,
                    sql::UNIQUE_INDEXES_CDB,
                    sql::LOG_GROUPS_CDB,
                    by_pdb.get(con).copied(),
                    vec![
                        Bind::Int(i64::from(*con)),
                        Bind::Text(t.owner.clone()),
                        Bind::Text(t.table.clone()),
                    ],
                )
            } else {
                (
                    sql::COLUMNS_NON_CDB,
                    sql::PRIMARY_KEY_NON_CDB,
                    sql::UNIQUE_INDEXES_NON_CDB,
                    sql::LOG_GROUPS_NON_CDB,
                    None,
                    vec![Bind::Text(t.owner.clone()), Bind::Text(t.table.clone())],
                )
            };
            let mut columns = Vec::new();
            // (SEGMENT_COLUMN_ID, index into `columns` or None for a hidden column)
            let mut stored: Vec<(u16, Option<u16>)> = Vec::new();
            for r in self.rows(cols_sql, &params)? {
                let segment_column: Option<u16> = col(&r, 9)?;
                let column_id: Option<u16> = col(&r, 1)?;
                let hidden = col::<String>(&r, 8)? == "YES";
                let Some(position) = column_id.filter(|_| !hidden) else {
                    if let Some(n) = segment_column {
                        stored.push((n, None));
                    }
                    continue;
                };
                if let Some(n) = segment_column {
                    stored.push((n, Some(columns.len() as u16)));
                }
                let data_type: String = col(&r, 2)?;
                let ty = ColumnType::from_dictionary(&data_type);
                let char_length: Option<u32> = col(&r, 4)?;
                let data_length: u32 = col(&r, 3)?;
                let mut c = ColumnDef::new(col::<String>(&r, 0)?, position, ty.clone());
                c.length = match ty {
                    ColumnType::Char
                    | ColumnType::NChar
                    | ColumnType::Varchar2
                    | ColumnType::NVarchar2 => {
                        char_length.filter(|l| *l > 0).unwrap_or(data_length)
                    }
                    _ => data_length,
                };
                c.precision = col(&r, 5)?;
                c.scale = col(&r, 6)?;
                c.nullable = col::<String>(&r, 7)? == "Y";
                columns.push(c);
            }
            if columns.is_empty() {
                continue;
            }
            let primary_key: Vec<String> = self
                .rows(pk_sql, &params)?
                .iter()
                .map(|r| col::<String>(r, 0))
                .collect::<Result<_, _>>()?;
            let mut unique_indexes = Vec::new();
            if primary_key.is_empty() {
                let rows = self
                    .rows(unique_sql, &params)?
                    .iter()
                    .map(|r| Ok((col(r, 0)?, col(r, 1)?, col(r, 2)?)))
                    .collect::<Result<Vec<_>, SourceError>>()?;
                unique_indexes = group_unique_indexes(rows);
            }
            let (key, key_source) = choose_key(&columns, primary_key, &unique_indexes);
            let groups = self
                .rows(groups_sql, &params)?
                .iter()
                .map(|r| col::<String>(r, 0))
                .collect::<Result<Vec<_>, _>>()?;
            let supplemental = table_supplemental(database, pdb_logging, &groups);
            out.push(TableLayout {
                segment: segment_order(stored),
                table: t.clone(),
                version: 1,
                valid_from: Scn(0),
                key_source,
                columns,
                key,
                supplemental,
            });
        }
        Ok(out)
    }

    fn start_session(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        let redo_dictionary = window.dictionary == DictionarySource::RedoLogs;
        if window.mode == SessionMode::Range {
            // an end beyond the current SCN is accepted; Oracle's "highest possible SCN" of
            // the CURRENT log does not fit a signed bind, so it is capped there
            let end = i64::try_from(window.end_scn().get()).unwrap_or(i64::MAX);
            let stmt = if redo_dictionary {
                sql::START_LOGMNR_RANGE_REDO_DICTIONARY
            } else {
                sql::START_LOGMNR_RANGE
            };
            return self.exec(
                stmt,
                &[Bind::Int(window.start_scn.get() as i64), Bind::Int(end)],
            );
        }
        for (i, log) in window.logs.iter().enumerate() {
            let name = log.name.clone().ok_or_else(|| SourceError::Invalid {
                message: format!("log {}/{} has no file name", log.thread, log.sequence),
            })?;
            let stmt = if i == 0 {
                sql::ADD_LOGFILE_NEW
            } else {
                sql::ADD_LOGFILE_ADD
            };
            self.exec(stmt, &[Bind::Text(name)])?;
        }
        if window.logs.is_empty() {
            return Err(SourceError::ora(
                OraCode::NO_LOG_FILE_SPECIFIED,
                "ORA-01292: no log file has been specified for the current LogMiner session",
            ));
        }
        let stmt = if redo_dictionary {
            sql::START_LOGMNR_REDO_DICTIONARY
        } else {
            sql::START_LOGMNR
        };
        self.exec(stmt, &[Bind::Int(window.start_scn.get() as i64)])
    }

    fn build_dictionary(&mut self) -> Result<DictionaryBuild, SourceError> {
        // the build's redo lies between the SCNs read around it (no DDL runs while it writes)
        let start_scn = self.current_scn()?;
        self.exec(sql::BUILD_DICTIONARY, &[])?;
        let end_scn = self.current_scn()?;
        Ok(DictionaryBuild { start_scn, end_scn })
    }

    fn end_session(&mut self) -> Result<(), SourceError> {
        match self.exec(sql::END_LOGMNR, &[]) {
            Err(e) if e.ora_code() == Some(OraCode::NO_LOGMINER_SESSION) => Ok(()),
            other => other,
        }
    }

    fn mine(
        &mut self,
        query: &MiningQuery,
        sink: &mut RowSink<'_>,
    ) -> Result<MineSummary, SourceError> {
        let Statement { text, binds: b } = sql::mining_query(
            query.from,
            &query.objects,
            &query.excluded_users,
            query.inlist_max,
            self.is_cdb,
            query.lob_rows,
        );
        let conn = &self.conn;
        let cancelled = AtomicBool::new(false);
        let (done, wait) = mpsc::channel::<()>();
        let timeout = query.timeout;
        std::thread::scope(|scope| {
            // the watchdog cancels the query at the step timeout (the server answers ORA-01013)
            let cancelled = &cancelled;
            scope.spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(timeout) {
                    cancelled.store(true, Ordering::SeqCst);
                    let _ = conn.break_execution();
                }
            });
            let result = (|| -> Result<MineSummary, SourceError> {
                let p = binds(&b);
                // the rows come `cdc.mining.fetch.size` per round trip (the driver's own
                // default is 100)
                let rs = conn
                    .statement(&text)
                    .fetch_array_size(query.fetch_size.max(1))
                    .build()
                    .and_then(|stmt| stmt.into_result_set::<Row>(&p))
                    .map_err(driver)?;
                let mut summary = MineSummary {
                    rows: 0,
                    last: None,
                    stopped_by_sink: false,
                };
                let mut reached = matches!(query.from, RedoBound::Start);
                for r in rs {
                    let row = Self::mined_row(&r.map_err(driver)?)?;
                    match RedoAddr::new(row.rs_id, row.ssn).ok() {
                        Some(a) => {
                            if query.from.reached_by(a) {
                                reached = true;
                            }
                            if !query.from.admits(a) {
                                continue;
                            }
                            summary.last = Some(a);
                        }
                        None if !reached => continue,
                        None => {}
                    }
                    summary.rows += 1;
                    if sink(row).is_break() {
                        summary.stopped_by_sink = true;
                        break;
                    }
                }
                Ok(summary)
            })();
            let _ = done.send(());
            match result {
                Err(e)
                    if cancelled.load(Ordering::SeqCst)
                        && e.ora_code() == Some(OraCode::USER_REQUESTED_CANCEL) =>
                {
                    Err(SourceError::Timeout { after: timeout })
                }
                other => other,
            }
        })
    }

    fn active_transactions(&mut self) -> Result<Vec<ActiveTransaction>, SourceError> {
        let mut out = Vec::new();
        for r in self.rows(sql::ACTIVE_TRANSACTIONS, &[])? {
            let sid: Option<u32> = col(&r, 5)?;
            let serial: Option<u32> = col(&r, 6)?;
            out.push(ActiveTransaction {
                con: ConId(col::<Option<u32>>(&r, 0)?.unwrap_or(0)),
                xid: Xid::new(col(&r, 1)?, col(&r, 2)?, col(&r, 3)?),
                start_scn: Scn(col::<Option<u64>>(&r, 4)?.unwrap_or(0)),
                session: sid
                    .zip(serial)
                    .map(|(sid, serial)| SessionRef { sid, serial }),
                username: col(&r, 7)?,
            });
        }
        Ok(out)
    }

    fn session_exists(&mut self, session: SessionRef) -> Result<bool, SourceError> {
        let rows = self.rows(
            sql::SESSION_EXISTS,
            &[
                Bind::Int(i64::from(session.sid)),
                Bind::Int(i64::from(session.serial)),
            ],
        )?;
        Ok(rows
            .first()
            .map(|r| col::<u64>(r, 0))
            .transpose()?
            .unwrap_or(0)
            > 0)
    }

    fn nls(&mut self) -> Result<NlsSettings, SourceError> {
        let mut nls = NlsSettings::engine();
        for r in self.rows(sql::NLS_READ, &[])? {
            let name: String = col(&r, 0)?;
            let value: String = col(&r, 1)?;
            match name.as_str() {
                "NLS_DATE_FORMAT" => nls.date_format = value,
                "NLS_TIMESTAMP_FORMAT" => nls.timestamp_format = value,
                "NLS_TIMESTAMP_TZ_FORMAT" => nls.timestamp_tz_format = value,
                "NLS_NUMERIC_CHARACTERS" => nls.numeric_characters = value,
                _ => {}
            }
        }
        for r in self.rows(sql::CHARACTER_SETS, &[])? {
            let name: String = col(&r, 0)?;
            let value: String = col(&r, 1)?;
            match name.as_str() {
                "NLS_CHARACTERSET" => nls.character_set = value,
                "NLS_NCHAR_CHARACTERSET" => nls.national_character_set = value,
                _ => {}
            }
        }
        Ok(nls)
    }

    fn reconnect(&mut self) -> Result<(), SourceError> {
        let _ = self.conn.close();
        self.conn = Self::open(&self.options)?;
        Ok(())
    }

    fn snapshot_reader(&mut self) -> Result<Box<dyn SnapshotReader>, SourceError> {
        Ok(Box::new(OracleSnapshotReader::open(&self.options)?))
    }
}

/// The segment order of a table from its (SEGMENT_COLUMN_ID, column index) pairs: the stored
/// columns by segment column number. Empty when the numbers do not run 1, 2, … without a gap
/// (the dictionary then tells nothing the decoder could rely on).
fn segment_order(mut stored: Vec<(u16, Option<u16>)>) -> Vec<Option<u16>> {
    stored.sort_by_key(|(n, _)| *n);
    let consecutive = stored
        .iter()
        .enumerate()
        .all(|(i, (n, _))| usize::from(*n) == i + 1);
    if !consecutive {
        return Vec::new();
    }
    stored.into_iter().map(|(_, at)| at).collect()
}

/// Unique indexes from `(index owner, index name, column)` rows ordered by owner, name and
/// column position: each run of one owner's index is one index.
fn group_unique_indexes(rows: Vec<(String, String, String)>) -> Vec<UniqueIndex> {
    let mut out: Vec<UniqueIndex> = Vec::new();
    let mut last_owner = String::new();
    for (owner, name, column) in rows {
        match out.last_mut() {
            Some(index) if index.name == name && last_owner == owner => index.columns.push(column),
            _ => out.push(UniqueIndex {
                name,
                columns: vec![column],
            }),
        }
        last_owner = owner;
    }
    out
}

/// A table's supplemental logging: the database's, its PDB's, and its own log groups'
/// (`LOG_GROUP_TYPE`).
fn table_supplemental(
    database: SupplementalLogging,
    pdb: Option<SupplementalLogging>,
    log_groups: &[String],
) -> SupplementalLogging {
    let mut out = database;
    if let Some(pdb) = pdb {
        out.all_columns |= pdb.all_columns;
        out.primary_key |= pdb.primary_key;
    }
    for group in log_groups {
        match group.as_str() {
            "ALL COLUMN LOGGING" => out.all_columns = true,
            "PRIMARY KEY LOGGING" => out.primary_key = true,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column SET UNUSED keeps its segment place; rows in any order sort by it; numbers with
    /// a gap give no order at all.
    #[test]
    fn segment_order_counts_hidden_columns() {
        assert_eq!(
            segment_order(vec![(3, Some(1)), (1, Some(0)), (2, None)]),
            vec![Some(0), None, Some(1)]
        );
        assert_eq!(segment_order(vec![(1, Some(0)), (3, Some(1))]), vec![]);
        assert_eq!(segment_order(Vec::new()), vec![]);
    }

    /// The dictionary's rows of unique indexes become one index per owner and name, columns in
    /// order; two owners' indexes of one name stay apart.
    #[test]
    fn unique_index_rows_group_by_owner_and_name() {
        let row = |o: &str, n: &str, c: &str| (o.to_owned(), n.to_owned(), c.to_owned());
        let indexes = group_unique_indexes(vec![
            row("APP", "UK_CODE", "REGION"),
            row("APP", "UK_CODE", "CODE"),
            row("APP", "UK_EMAIL", "EMAIL"),
            row("OPS", "UK_EMAIL", "EMAIL_LOWER"),
        ]);
        let shown: Vec<(&str, Vec<&str>)> = indexes
            .iter()
            .map(|i| {
                (
                    i.name.as_str(),
                    i.columns.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("UK_CODE", vec!["REGION", "CODE"]),
                ("UK_EMAIL", vec!["EMAIL"]),
                ("UK_EMAIL", vec!["EMAIL_LOWER"]),
            ]
        );
        assert!(group_unique_indexes(Vec::new()).is_empty());
    }

    /// ALL COLUMNS or PRIMARY KEY logging from the database, the PDB or the table's own log
    /// groups; other log groups add nothing.
    #[test]
    fn supplemental_logging_adds_up_database_pdb_and_table() {
        let none = SupplementalLogging::default();
        let all = SupplementalLogging {
            all_columns: true,
            primary_key: false,
        };
        let pk = SupplementalLogging {
            all_columns: false,
            primary_key: true,
        };
        assert_eq!(table_supplemental(none, None, &[]), none);
        assert_eq!(table_supplemental(all, None, &[]), all);
        assert_eq!(table_supplemental(none, Some(pk), &[]), pk);
        let groups = ["UNIQUE KEY LOGGING".to_owned(), "USER LOG GROUP".to_owned()];
        assert_eq!(table_supplemental(none, None, &groups), none);
        let groups = ["PRIMARY KEY LOGGING".to_owned()];
        assert_eq!(
            table_supplemental(all, None, &groups),
            SupplementalLogging {
                all_columns: true,
                primary_key: true,
            }
        );
        let groups = ["ALL COLUMN LOGGING".to_owned()];
        assert_eq!(table_supplemental(none, Some(none), &groups), all);
    }

    #[test]
    fn dates_from_to_char() {
        assert_eq!(
            parse_date("2026-02-28 13:45:59"),
            OracleDateTime::new(2026, 2, 28, 13, 45, 59, 0)
        );
        assert_eq!(parse_date("garbage"), None);
    }
}
