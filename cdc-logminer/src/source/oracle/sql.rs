//! The SQL text of every statement the real source runs, in one place, with its binds.
//! Pure functions, shape-tested here without a database.
//!
//! ```text
//!   connect ── NLS_SESSION (4 ALTER SESSION) ── identity / threads / PDBs / current SCN
//!   inventory ── ARCHIVED_LOGS (one DEST_ID, current incarnation) + ONLINE_LOGS
//!   objects ── OBJECTS_* + IOT_TOP_* ── layouts ── COLUMNS_* + PRIMARY_KEY_*
//!   session ── ADD_LOGFILE_NEW, ADD_LOGFILE_ADD… ── START_LOGMNR ── mining_query() ── END_LOGMNR
//!           or START_LOGMNR_RANGE (by SCN range, no logs added: a PDB's session)
//!   orphans ── ACTIVE_TRANSACTIONS, SESSION_EXISTS
//! ```

use std::fmt::Write as _;

use cdc_core::{ConId, ObjectId};

use crate::source::{ORACLE_MAINTAINED_OWNERS, RedoBound};

/// The NLS settings the decoder reads, set on every new connection (`docs/decoding.md`).
/// `SYYYY` writes a sign position before the year, so a date before Christ keeps its `-`
/// (under `YYYY` Oracle prints the bare year and it would read as a year after Christ). The
/// session zone is UTC because a TIMESTAMP WITH LOCAL TIME ZONE literal carries no offset and
/// is read as UTC.
pub const NLS_SESSION: [&str; 5] = [
    "ALTER SESSION SET NLS_DATE_FORMAT = 'SYYYY-MM-DD HH24:MI:SS'",
    "ALTER SESSION SET NLS_TIMESTAMP_FORMAT = 'SYYYY-MM-DD HH24:MI:SS.FF9'",
    "ALTER SESSION SET NLS_TIMESTAMP_TZ_FORMAT = 'SYYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM'",
    "ALTER SESSION SET NLS_NUMERIC_CHARACTERS = '.,'",
    "ALTER SESSION SET TIME_ZONE = '+00:00'",
];

pub const NLS_READ: &str = "SELECT PARAMETER, VALUE FROM NLS_SESSION_PARAMETERS \
WHERE PARAMETER IN ('NLS_DATE_FORMAT', 'NLS_TIMESTAMP_FORMAT', 'NLS_TIMESTAMP_TZ_FORMAT', 'NLS_NUMERIC_CHARACTERS')";

/// The database's character sets, which the internal form of text values is stored in.
pub const CHARACTER_SETS: &str = "SELECT PARAMETER, VALUE FROM NLS_DATABASE_PARAMETERS \
WHERE PARAMETER IN ('NLS_CHARACTERSET', 'NLS_NCHAR_CHARACTERSET')";

pub const IDENTITY: &str =
    "SELECT DBID, NAME, RESETLOGS_CHANGE#, DATABASE_ROLE, OPEN_MODE, CDB FROM V$DATABASE";

pub const ENABLED_THREADS: &str =
    "SELECT THREAD# FROM V$THREAD WHERE ENABLED <> 'DISABLED' ORDER BY THREAD#";

pub const PDBS: &str =
    "SELECT CON_ID, NAME, OPEN_MODE FROM V$PDBS WHERE NAME <> 'PDB$SEED' ORDER BY CON_ID";

/// The database clock's offset from UTC in minutes (SYSTIMESTAMP carries the server's zone).
pub const UTC_OFFSET_MINUTES: &str = "SELECT ROUND((CAST(SYSTIMESTAMP AS DATE) - \
CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS DATE)) * 1440) FROM DUAL";

pub const CURRENT_SCN: &str = "SELECT CURRENT_SCN FROM V$DATABASE";

/// The PDB the session is connected to: `CON_ID` (0 in a non-CDB, 1 at the root) and
/// `CON_NAME`.
pub const SESSION_CONTAINER: &str =
    "SELECT SYS_CONTEXT('USERENV', 'CON_ID'), SYS_CONTEXT('USERENV', 'CON_NAME') FROM DUAL";

/// Valid local archive destinations, lowest first: `DEST_ID`, `DEST_NAME`. TYPE LOCAL also on
/// a standby (V$ARCHIVE_DEST.TARGET reads PRIMARY there only on a primary).
pub const ARCHIVE_DESTINATIONS: &str = "SELECT DEST_ID, DEST_NAME FROM V$ARCHIVE_DEST_STATUS \
WHERE STATUS = 'VALID' AND TYPE = 'LOCAL' ORDER BY DEST_ID";

/// Archived copies at one destination of the current incarnation, deleted ones included so a
/// purge is seen as one; on a physical standby only the copies already applied, so mining
/// stays at or below the applied SCN. Binds: `:1` from SCN (NEXT_CHANGE# above it), `:2`
/// DEST_ID. DICTIONARY_BEGIN/END flag the logs of a dictionary build. The last column is
/// FIRST_TIME in ms since the epoch: FIRST_TIME is a DATE on the database's clock (SYSDATE's),
/// so the clock's distance from UTC is taken off.
pub const ARCHIVED_LOGS: &str = "SELECT A.THREAD#, A.SEQUENCE#, A.FIRST_CHANGE#, A.NEXT_CHANGE#, \
A.STATUS, A.DELETED, A.NAME, A.DEST_ID, A.DICTIONARY_BEGIN, A.DICTIONARY_END, \
ROUND((A.FIRST_TIME - DATE '1970-01-01' - (SYSDATE - CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS DATE))) \
* 86400000) FROM V$ARCHIVED_LOG A, V$DATABASE D \
WHERE A.NEXT_CHANGE# > :1 AND A.DEST_ID = :2 AND A.ARCHIVED = 'YES' \
AND A.RESETLOGS_CHANGE# = D.RESETLOGS_CHANGE# AND A.RESETLOGS_TIME = D.RESETLOGS_TIME \
AND (D.DATABASE_ROLE <> 'PHYSICAL STANDBY' OR A.APPLIED = 'YES') \
ORDER BY A.THREAD#, A.SEQUENCE#";

/// Online logs with one member each, FIRST_TIME last (in ms since the epoch, as in
/// [`ARCHIVED_LOGS`]). Bind: `:1` from SCN.
pub const ONLINE_LOGS: &str = "SELECT L.GROUP#, L.THREAD#, L.SEQUENCE#, L.FIRST_CHANGE#, \
L.NEXT_CHANGE#, L.STATUS, L.ARCHIVED, MIN(F.MEMBER), \
ROUND((L.FIRST_TIME - DATE '1970-01-01' - (SYSDATE - CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS DATE))) \
* 86400000) FROM V$LOG L JOIN V$LOGFILE F ON F.GROUP# = L.GROUP# \
WHERE L.NEXT_CHANGE# > :1 AND L.STATUS <> 'UNUSED' \
GROUP BY L.GROUP#, L.THREAD#, L.SEQUENCE#, L.FIRST_CHANGE#, L.NEXT_CHANGE#, L.STATUS, L.ARCHIVED, \
L.FIRST_TIME \
ORDER BY L.THREAD#, L.SEQUENCE#";

/// Tables, partitions and subpartitions of user schemas, per container:
/// CON_ID, container name, OWNER, OBJECT_NAME, SUBOBJECT_NAME, OBJECT_ID, OBJECT_TYPE.
pub const OBJECTS_CDB: &str = "SELECT O.CON_ID, C.NAME, O.OWNER, O.OBJECT_NAME, O.SUBOBJECT_NAME, \
O.OBJECT_ID, O.OBJECT_TYPE FROM CDB_OBJECTS O JOIN V$CONTAINERS C ON C.CON_ID = O.CON_ID \
WHERE O.OBJECT_TYPE IN ('TABLE', 'TABLE PARTITION', 'TABLE SUBPARTITION') \
AND O.ORACLE_MAINTAINED = 'N' AND O.TEMPORARY = 'N' AND C.NAME <> 'PDB$SEED'";

pub const OBJECTS_NON_CDB: &str = "SELECT 0, NULL, O.OWNER, O.OBJECT_NAME, O.SUBOBJECT_NAME, \
O.OBJECT_ID, O.OBJECT_TYPE FROM DBA_OBJECTS O \
WHERE O.OBJECT_TYPE IN ('TABLE', 'TABLE PARTITION', 'TABLE SUBPARTITION') \
AND O.ORACLE_MAINTAINED = 'N' AND O.TEMPORARY = 'N'";

/// IOT top indexes: CON_ID, TABLE_OWNER, TABLE_NAME, INDEX_NAME, index OBJECT_ID.
pub const IOT_TOP_CDB: &str = "SELECT I.CON_ID, I.TABLE_OWNER, I.TABLE_NAME, I.INDEX_NAME, O.OBJECT_ID \
FROM CDB_INDEXES I JOIN CDB_OBJECTS O ON O.CON_ID = I.CON_ID AND O.OWNER = I.OWNER \
AND O.OBJECT_NAME = I.INDEX_NAME AND O.OBJECT_TYPE = 'INDEX' WHERE I.INDEX_TYPE = 'IOT - TOP'";

pub const IOT_TOP_NON_CDB: &str = "SELECT 0, I.TABLE_OWNER, I.TABLE_NAME, I.INDEX_NAME, O.OBJECT_ID \
FROM DBA_INDEXES I JOIN DBA_OBJECTS O ON O.OWNER = I.OWNER \
AND O.OBJECT_NAME = I.INDEX_NAME AND O.OBJECT_TYPE = 'INDEX' WHERE I.INDEX_TYPE = 'IOT - TOP'";

/// Columns of one table, hidden ones included (a column SET UNUSED keeps its place in the
/// segment until it is dropped, so the segment column numbers of older rows count it).
/// Binds: `:1` CON_ID, `:2` OWNER, `:3` TABLE_NAME.
pub const COLUMNS_CDB: &str = "SELECT COLUMN_NAME, COLUMN_ID, DATA_TYPE, DATA_LENGTH, CHAR_LENGTH, \
DATA_PRECISION, DATA_SCALE, NULLABLE, HIDDEN_COLUMN, SEGMENT_COLUMN_ID FROM CDB_TAB_COLS \
WHERE CON_ID = :1 AND OWNER = :2 AND TABLE_NAME = :3 ORDER BY COLUMN_ID NULLS LAST, SEGMENT_COLUMN_ID";

/// Columns of one table in a non-CDB, hidden ones included. Binds: `:1` OWNER, `:2` TABLE_NAME.
pub const COLUMNS_NON_CDB: &str = "SELECT COLUMN_NAME, COLUMN_ID, DATA_TYPE, DATA_LENGTH, CHAR_LENGTH, \
DATA_PRECISION, DATA_SCALE, NULLABLE, HIDDEN_COLUMN, SEGMENT_COLUMN_ID FROM DBA_TAB_COLS \
WHERE OWNER = :1 AND TABLE_NAME = :2 ORDER BY COLUMN_ID NULLS LAST, SEGMENT_COLUMN_ID";

/// Primary key columns in key order. Binds: `:1` CON_ID, `:2` OWNER, `:3` TABLE_NAME.
pub const PRIMARY_KEY_CDB: &str = "SELECT CC.COLUMN_NAME FROM CDB_CONSTRAINTS C \
JOIN CDB_CONS_COLUMNS CC ON CC.CON_ID = C.CON_ID AND CC.OWNER = C.OWNER \
AND CC.CONSTRAINT_NAME = C.CONSTRAINT_NAME \
WHERE C.CON_ID = :1 AND C.OWNER = :2 AND C.TABLE_NAME = :3 AND C.CONSTRAINT_TYPE = 'P' \
ORDER BY CC.POSITION";

/// Binds: `:1` OWNER, `:2` TABLE_NAME.
pub const PRIMARY_KEY_NON_CDB: &str = "SELECT CC.COLUMN_NAME FROM DBA_CONSTRAINTS C \
JOIN DBA_CONS_COLUMNS CC ON CC.OWNER = C.OWNER AND CC.CONSTRAINT_NAME = C.CONSTRAINT_NAME \
WHERE C.OWNER = :1 AND C.TABLE_NAME = :2 AND C.CONSTRAINT_TYPE = 'P' ORDER BY CC.POSITION";

/// Unique indexes of one table with their columns, in index order. Binds: `:1` CON_ID, `:2`
/// OWNER, `:3` TABLE_NAME. Unusable indexes are left out: they enforce nothing.
pub const UNIQUE_INDEXES_CDB: &str = "SELECT I.OWNER, I.INDEX_NAME, IC.COLUMN_NAME \
FROM CDB_INDEXES I JOIN CDB_IND_COLUMNS IC ON IC.CON_ID = I.CON_ID \
AND IC.INDEX_OWNER = I.OWNER AND IC.INDEX_NAME = I.INDEX_NAME \
WHERE I.CON_ID = :1 AND I.TABLE_OWNER = :2 AND I.TABLE_NAME = :3 \
AND I.UNIQUENESS = 'UNIQUE' AND I.STATUS <> 'UNUSABLE' \
ORDER BY I.OWNER, I.INDEX_NAME, IC.COLUMN_POSITION";

/// Binds: `:1` OWNER, `:2` TABLE_NAME.
pub const UNIQUE_INDEXES_NON_CDB: &str = "SELECT I.OWNER, I.INDEX_NAME, IC.COLUMN_NAME \
FROM DBA_INDEXES I JOIN DBA_IND_COLUMNS IC \
ON IC.INDEX_OWNER = I.OWNER AND IC.INDEX_NAME = I.INDEX_NAME \
WHERE I.TABLE_OWNER = :1 AND I.TABLE_NAME = :2 \
AND I.UNIQUENESS = 'UNIQUE' AND I.STATUS <> 'UNUSABLE' \
ORDER BY I.OWNER, I.INDEX_NAME, IC.COLUMN_POSITION";

/// Seconds from the time an SCN was current to a table's last DDL (negative: the DDL came
/// first), both in the database's clock. Binds: `:1` SCN, `:2` CON_ID, `:3` OWNER, `:4`
/// TABLE_NAME. SCN_TO_TIMESTAMP raises ORA-08181 for an SCN older than its map.
pub const LAST_DDL_AFTER_CDB: &str = "SELECT ROUND((O.LAST_DDL_TIME - \
CAST(SCN_TO_TIMESTAMP(:1) AS DATE)) * 86400) FROM CDB_OBJECTS O \
WHERE O.CON_ID = :2 AND O.OWNER = :3 AND O.OBJECT_NAME = :4 AND O.OBJECT_TYPE = 'TABLE'";

/// Binds: `:1` SCN, `:2` OWNER, `:3` TABLE_NAME.
pub const LAST_DDL_AFTER_NON_CDB: &str = "SELECT ROUND((O.LAST_DDL_TIME - \
CAST(SCN_TO_TIMESTAMP(:1) AS DATE)) * 86400) FROM DBA_OBJECTS O \
WHERE O.OWNER = :2 AND O.OBJECT_NAME = :3 AND O.OBJECT_TYPE = 'TABLE'";

/// Database-wide supplemental logging (in a CDB, CDB$ROOT's, which every PDB has).
pub const SUPPLEMENTAL_DATABASE: &str =
    "SELECT SUPPLEMENTAL_LOG_DATA_ALL, SUPPLEMENTAL_LOG_DATA_PK FROM V$DATABASE";

/// Each PDB's own supplemental logging (CDB only).
pub const SUPPLEMENTAL_PDBS: &str =
    "SELECT CON_ID, ALL_COLUMN, PRIMARY_KEY FROM CDB_SUPPLEMENTAL_LOGGING";

/// A table's own supplemental log groups. Binds: `:1` CON_ID, `:2` OWNER, `:3` TABLE_NAME.
pub const LOG_GROUPS_CDB: &str = "SELECT LOG_GROUP_TYPE FROM CDB_LOG_GROUPS \
WHERE CON_ID = :1 AND OWNER = :2 AND TABLE_NAME = :3";

/// Binds: `:1` OWNER, `:2` TABLE_NAME.
pub const LOG_GROUPS_NON_CDB: &str =
    "SELECT LOG_GROUP_TYPE FROM DBA_LOG_GROUPS WHERE OWNER = :1 AND TABLE_NAME = :2";

/// Starts a new log list (and ends any session). Bind: `:1` file name.
pub const ADD_LOGFILE_NEW: &str =
    "BEGIN DBMS_LOGMNR.ADD_LOGFILE(LOGFILENAME => :1, OPTIONS => DBMS_LOGMNR.NEW); END;";

/// Adds a log to the list. Bind: `:1` file name.
pub const ADD_LOGFILE_ADD: &str =
    "BEGIN DBMS_LOGMNR.ADD_LOGFILE(LOGFILENAME => :1, OPTIONS => DBMS_LOGMNR.ADDFILE); END;";

/// Starts the session at the first SCN of the window, online catalog, the statement options
/// the decoder expects. Bind: `:1` start SCN.
pub const START_LOGMNR: &str = "BEGIN DBMS_LOGMNR.START_LOGMNR(STARTSCN => :1, OPTIONS => \
DBMS_LOGMNR.DICT_FROM_ONLINE_CATALOG + DBMS_LOGMNR.NO_ROWID_IN_STMT + DBMS_LOGMNR.NO_SQL_DELIMITER); END;";

/// Starts a session by SCN range alone, without added logs (what a session connected to a PDB
/// can do; ADD_LOGFILE there is ORA-65040), online catalog, the same statement options.
/// Binds: `:1` start SCN, `:2` end SCN.
pub const START_LOGMNR_RANGE: &str = "BEGIN DBMS_LOGMNR.START_LOGMNR(STARTSCN => :1, \
ENDSCN => :2, OPTIONS => DBMS_LOGMNR.DICT_FROM_ONLINE_CATALOG + DBMS_LOGMNR.NO_ROWID_IN_STMT + \
DBMS_LOGMNR.NO_SQL_DELIMITER); END;";

/// Starts the session at `:1` with the dictionary of a build in the added logs, tracked through
/// the DDL after it (the replay of a step whose rows are older than a DDL), the same statement
/// options. LogMiner reads from the build; rows below the start SCN are not returned.
pub const START_LOGMNR_REDO_DICTIONARY: &str = "BEGIN DBMS_LOGMNR.START_LOGMNR(STARTSCN => :1, \
OPTIONS => DBMS_LOGMNR.DICT_FROM_REDO_LOGS + DBMS_LOGMNR.DDL_DICT_TRACKING + \
DBMS_LOGMNR.NO_ROWID_IN_STMT + DBMS_LOGMNR.NO_SQL_DELIMITER); END;";

/// A range session asked for the redo dictionary: sent as asked, so the database answers
/// (ORA-01371 in a PDB, where no log can be added to hold the build). Binds: `:1` start SCN,
/// `:2` end SCN.
pub const START_LOGMNR_RANGE_REDO_DICTIONARY: &str = "BEGIN DBMS_LOGMNR.START_LOGMNR(STARTSCN => :1, \
ENDSCN => :2, OPTIONS => DBMS_LOGMNR.DICT_FROM_REDO_LOGS + DBMS_LOGMNR.DDL_DICT_TRACKING + \
DBMS_LOGMNR.NO_ROWID_IN_STMT + DBMS_LOGMNR.NO_SQL_DELIMITER); END;";

/// Writes the LogMiner dictionary into the redo. Needs EXECUTE on DBMS_LOGMNR_D
/// (EXECUTE_CATALOG_ROLE) and ARCHIVELOG mode (ORA-01325).
pub const BUILD_DICTIONARY: &str =
    "BEGIN DBMS_LOGMNR_D.BUILD(OPTIONS => DBMS_LOGMNR_D.STORE_IN_REDO_LOGS); END;";

/// Ends the session; ORA-01307 (no session) is ignored by the caller.
pub const END_LOGMNR: &str = "BEGIN DBMS_LOGMNR.END_LOGMNR; END;";

/// GV$TRANSACTION with the owning session.
pub const ACTIVE_TRANSACTIONS: &str = "SELECT T.CON_ID, T.XIDUSN, T.XIDSLOT, T.XIDSQN, T.START_SCN, \
S.SID, S.SERIAL#, S.USERNAME FROM GV$TRANSACTION T \
LEFT JOIN GV$SESSION S ON S.SADDR = T.SES_ADDR AND S.INST_ID = T.INST_ID";

/// Binds: `:1` SID, `:2` SERIAL#.
pub const SESSION_EXISTS: &str = "SELECT COUNT(*) FROM GV$SESSION WHERE SID = :1 AND SERIAL# = :2";

/// The columns of the mining query, in this order.
pub const MINED_COLUMNS: [&str; 23] = [
    "SCN",
    "RS_ID",
    "SSN",
    "CSF",
    "XIDUSN",
    "XIDSLT",
    "XIDSQN",
    "OPERATION_CODE",
    "ROLLBACK",
    "STATUS",
    "INFO",
    "SEG_OWNER",
    "TABLE_NAME",
    "DATA_OBJ#",
    "ROW_ID",
    "SQL_REDO",
    "USERNAME",
    "SESSION#",
    "SERIAL#",
    "SRC_CON_ID",
    "SRC_CON_NAME",
    "THREAD#",
    "TO_CHAR(TIMESTAMP, 'YYYY-MM-DD HH24:MI:SS')",
];

/// A bind value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bind {
    Int(i64),
    Text(String),
}

/// A statement with its positional binds (`:1`, `:2`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub text: String,
    pub binds: Vec<Bind>,
}

fn in_lists(out: &mut String, column: &str, ids: &[ObjectId], inlist_max: usize) {
    let max = inlist_max.clamp(1, 1000);
    out.push('(');
    for (i, chunk) in ids.chunks(max).enumerate() {
        if i > 0 {
            out.push_str(" OR ");
        }
        let _ = write!(out, "{column} IN (");
        for (j, id) in chunk.iter().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{}", id.0);
        }
        out.push(')');
    }
    out.push(')');
}

/// The mining query of a step.
///
/// - the redo bound prunes by log sequence and block in the database (RS_ID comparison in SQL
///   would be a string comparison); the exact `(RS_ID, SSN)` bound is applied to the fetched
///   rows, which also decides about rows with the all-zero RS_ID;
/// - transaction control and MISSING_SCN rows always; DDL of user schemas; DML and
///   UNSUPPORTED rows only of the captured (container, DATA_OBJ#) pairs, in IN lists of at most
///   `inlist_max` ids (ORA-01795 above 1000);
/// - excluded users filtered out of DML rows (`USERNAME IS NULL` kept: `NOT IN` alone would
///   drop it); their DDL is kept, as a schema change to a captured table must be seen whoever
///   made it.
pub fn mining_query(
    from: RedoBound,
    objects: &[(ConId, ObjectId)],
    excluded_users: &[String],
    inlist_max: usize,
    is_cdb: bool,
    lob_rows: bool,
) -> Statement {
    let mut binds = Vec::new();
    let mut text = format!(
        "SELECT {} FROM V$LOGMNR_CONTENTS WHERE ",
        MINED_COLUMNS.join(", ")
    );
    if let Some(addr) = from.addr() {
        binds.push(Bind::Int(i64::from(addr.rs_id().seq)));
        binds.push(Bind::Int(i64::from(addr.rs_id().block)));
        text.push_str("(RBASQN > :1 OR (RBASQN = :1 AND RBABLK >= :2) OR RBASQN = 0) AND ");
    }
    text.push_str("(OPERATION_CODE IN (6, 7, 34, 36)");
    let owners: Vec<String> = ORACLE_MAINTAINED_OWNERS
        .iter()
        .map(|o| format!("'{o}'"))
        .collect();
    let _ = write!(
        text,
        " OR (OPERATION_CODE = 5 AND INFO NOT LIKE 'INTERNAL DDL%' AND NVL(SEG_OWNER, ' ') NOT IN ({}))",
        owners.join(", ")
    );
    if !objects.is_empty() {
        let mut by_con: Vec<(ConId, Vec<ObjectId>)> = Vec::new();
        for (con, id) in objects {
            match by_con.iter_mut().find(|(c, _)| c == con) {
                Some((_, ids)) => ids.push(*id),
                None => by_con.push((*con, vec![*id])),
            }
        }
        text.push_str(if lob_rows {
            " OR (OPERATION_CODE IN (1, 2, 3, 9, 10, 11, 29, 255)"
        } else {
            " OR (OPERATION_CODE IN (1, 2, 3, 255)"
        });
        // the users' binds only where the text names them: a bind the text does not name
        // fails the statement (ORA-01036)
        if !excluded_users.is_empty() {
            text.push_str(" AND (USERNAME IS NULL OR USERNAME NOT IN (");
            for (i, u) in excluded_users.iter().enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                binds.push(Bind::Text(u.clone()));
                let _ = write!(text, ":{}", binds.len());
            }
            text.push_str("))");
        }
        text.push_str(" AND (");
        for (i, (con, ids)) in by_con.iter().enumerate() {
            if i > 0 {
                text.push_str(" OR ");
            }
            if is_cdb {
                let _ = write!(text, "(SRC_CON_ID = {} AND ", con.0);
                in_lists(&mut text, "DATA_OBJ#", ids, inlist_max);
                text.push(')');
            } else {
                in_lists(&mut text, "DATA_OBJ#", ids, inlist_max);
            }
        }
        text.push_str("))");
    }
    text.push(')');
    Statement { text, binds }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::NlsSettings;
    use cdc_core::{RedoAddr, RsId};

    fn count(text: &str, needle: &str) -> usize {
        text.matches(needle).count()
    }

    #[test]
    fn mining_query_shape() {
        let addr = RedoAddr::new(RsId::new(0x59, 0xd6a1, 0x10), 3).unwrap();
        let objects: Vec<(ConId, ObjectId)> = (0..2500)
            .map(|i| (ConId(3), ObjectId(70_000 + i)))
            .chain([(ConId(4), ObjectId(80_000))])
            .collect();
        let users = vec!["ETL_BATCH".to_owned(), "O'HARA".to_owned()];
        let q = mining_query(RedoBound::After(addr), &objects, &users, 1000, true, false);
        assert!(q.text.starts_with("SELECT SCN, RS_ID, SSN, CSF, XIDUSN"));
        assert!(q.text.contains("FROM V$LOGMNR_CONTENTS WHERE (RBASQN > :1 OR (RBASQN = :1 AND RBABLK >= :2) OR RBASQN = 0)"));
        assert_eq!(q.binds[0], Bind::Int(0x59));
        assert_eq!(q.binds[1], Bind::Int(0xd6a1));
        // users are binds, never spliced into the text
        assert_eq!(q.binds[2], Bind::Text("ETL_BATCH".into()));
        assert_eq!(q.binds[3], Bind::Text("O'HARA".into()));
        assert!(!q.text.contains("O'HARA"));
        // on the DML rows only: DDL is seen whoever ran it
        assert_eq!(
            count(&q.text, "(USERNAME IS NULL OR USERNAME NOT IN (:3, :4))"),
            1
        );
        assert!(
            q.text.contains("AND NVL(SEG_OWNER, ' ') NOT IN ('SYS', "),
            "{}",
            q.text
        );
        // 2500 ids in container 3 → three IN lists, one for container 4
        assert_eq!(count(&q.text, "DATA_OBJ# IN ("), 4);
        assert!(
            q.text
                .contains("(SRC_CON_ID = 3 AND (DATA_OBJ# IN (70000, ")
        );
        assert!(
            q.text
                .contains("(SRC_CON_ID = 4 AND (DATA_OBJ# IN (80000)))")
        );
        for list in q.text.split("DATA_OBJ# IN (").skip(1) {
            let ids = list.split(')').next().unwrap().split(", ").count();
            assert!(ids <= 1000);
        }
        assert!(q.text.contains("OPERATION_CODE IN (6, 7, 34, 36)"));
        assert!(
            q.text
                .contains("OPERATION_CODE = 5 AND INFO NOT LIKE 'INTERNAL DDL%'")
        );
        assert!(q.text.contains("OPERATION_CODE IN (1, 2, 3, 255)"));
        // parentheses balance
        assert_eq!(count(&q.text, "("), count(&q.text, ")"));
        assert!(!q.text.contains(';'));
    }

    #[test]
    fn mining_query_variants() {
        let q = mining_query(
            RedoBound::Start,
            &[(ConId(0), ObjectId(5))],
            &[],
            10,
            false,
            false,
        );
        assert!(q.binds.is_empty());
        assert!(!q.text.contains("RBASQN"));
        assert!(!q.text.contains("USERNAME NOT IN"));
        assert!(!q.text.contains("SRC_CON_ID ="));
        assert!(q.text.contains("(DATA_OBJ# IN (5))"));
        let ids: Vec<(ConId, ObjectId)> = (0..25).map(|i| (ConId(0), ObjectId(i))).collect();
        let q = mining_query(RedoBound::Start, &ids, &[], 10, false, false);
        assert_eq!(count(&q.text, "DATA_OBJ# IN ("), 3);
        assert!(!q.text.contains("9, 10, 11, 29"));
        // LOB rows (cdc.lob.mode other than skip) of the same objects
        let q = mining_query(RedoBound::Start, &ids, &[], 10, false, true);
        assert!(
            q.text
                .contains("OPERATION_CODE IN (1, 2, 3, 9, 10, 11, 29, 255)")
        );
        assert_eq!(count(&q.text, "DATA_OBJ# IN ("), 3);
        // excluded users filter DML only: without captured objects no bind names them
        let users = vec!["ETL_BATCH".to_owned()];
        let q = mining_query(RedoBound::Start, &[], &users, 1000, true, false);
        assert!(q.binds.is_empty(), "{:?}", q.binds);
        assert!(!q.text.contains("USERNAME NOT IN"), "{}", q.text);
        let q = mining_query(RedoBound::Start, &[], &[], 1000, true, false);
        assert!(!q.text.contains("DATA_OBJ# IN"));
        assert_eq!(count(&q.text, "("), count(&q.text, ")"));
    }

    /// The session writes the forms the decoder reads: dates with the year's sign position
    /// (a date before Christ must not read as one after), and TIMESTAMP WITH LOCAL TIME ZONE
    /// in UTC, which is how the decoder reads a literal without an offset
    /// (`docs/decoding.md`, "Session NLS settings": under Oracle's default `DD-MON-RR` a DATE
    /// literal loses its time of day).
    #[test]
    fn the_session_writes_what_the_decoder_reads() {
        let set = |parameter: &str| {
            NLS_SESSION.iter().find_map(|s| {
                s.strip_prefix("ALTER SESSION SET ")
                    .and_then(|s| s.strip_prefix(parameter))
                    .and_then(|s| s.strip_prefix(" = '"))
                    .and_then(|s| s.strip_suffix('\''))
            })
        };
        let date = set("NLS_DATE_FORMAT").unwrap();
        assert!(crate::decode::DATE_FORMATS.contains(&date), "{date}");
        for format in [
            date,
            set("NLS_TIMESTAMP_FORMAT").unwrap(),
            set("NLS_TIMESTAMP_TZ_FORMAT").unwrap(),
        ] {
            assert!(format.starts_with("SYYYY-MM-DD HH24:MI:SS"), "{format}");
        }
        assert_eq!(set("NLS_NUMERIC_CHARACTERS"), Some(".,"));
        assert_eq!(set("TIME_ZONE"), Some("+00:00"));
        assert_eq!(
            NlsSettings::engine(),
            NlsSettings {
                date_format: date.to_owned(),
                timestamp_format: set("NLS_TIMESTAMP_FORMAT").unwrap().to_owned(),
                timestamp_tz_format: set("NLS_TIMESTAMP_TZ_FORMAT").unwrap().to_owned(),
                numeric_characters: ".,".to_owned(),
                character_set: "AL32UTF8".to_owned(),
                national_character_set: "AL16UTF16".to_owned(),
            }
        );
    }

    #[test]
    fn fixed_statements() {
        for s in [
            ADD_LOGFILE_NEW,
            ADD_LOGFILE_ADD,
            START_LOGMNR,
            START_LOGMNR_RANGE,
            START_LOGMNR_REDO_DICTIONARY,
            START_LOGMNR_RANGE_REDO_DICTIONARY,
            END_LOGMNR,
        ] {
            assert!(
                s.starts_with("BEGIN DBMS_LOGMNR.") && s.ends_with("END;"),
                "{s}"
            );
        }
        assert!(START_LOGMNR.contains("DICT_FROM_ONLINE_CATALOG"));
        assert!(START_LOGMNR.contains("NO_ROWID_IN_STMT"));
        assert!(START_LOGMNR.contains("NO_SQL_DELIMITER"));
        assert!(!START_LOGMNR.contains("COMMITTED_DATA_ONLY"));
        assert!(!START_LOGMNR.contains("CONTINUOUS_MINE"));
        // the range session: both bounds, the online catalog (a redo dictionary needs added
        // logs), the same statement options as the session over added logs
        assert!(START_LOGMNR_RANGE.contains("STARTSCN => :1, ENDSCN => :2"));
        assert_eq!(
            START_LOGMNR_RANGE.split_once("OPTIONS").map(|(_, o)| o),
            START_LOGMNR.split_once("OPTIONS").map(|(_, o)| o)
        );
        // the replay: the redo dictionary tracked through DDL, the same statement options
        for s in [
            START_LOGMNR_REDO_DICTIONARY,
            START_LOGMNR_RANGE_REDO_DICTIONARY,
        ] {
            assert!(
                s.contains("DBMS_LOGMNR.DICT_FROM_REDO_LOGS + DBMS_LOGMNR.DDL_DICT_TRACKING"),
                "{s}"
            );
            assert!(!s.contains("DICT_FROM_ONLINE_CATALOG"), "{s}");
            assert!(
                s.ends_with("DBMS_LOGMNR.NO_ROWID_IN_STMT + DBMS_LOGMNR.NO_SQL_DELIMITER); END;"),
                "{s}"
            );
        }
        assert!(START_LOGMNR_REDO_DICTIONARY.contains("STARTSCN => :1,"));
        assert!(!START_LOGMNR_REDO_DICTIONARY.contains("ENDSCN"));
        assert!(START_LOGMNR_RANGE_REDO_DICTIONARY.contains("STARTSCN => :1, ENDSCN => :2"));
        assert_eq!(
            BUILD_DICTIONARY,
            "BEGIN DBMS_LOGMNR_D.BUILD(OPTIONS => DBMS_LOGMNR_D.STORE_IN_REDO_LOGS); END;"
        );
        assert!(ARCHIVED_LOGS.contains(
            "A.DICTIONARY_BEGIN, A.DICTIONARY_END, \
ROUND((A.FIRST_TIME"
        ));
        // FIRST_TIME is the last column of both inventory queries, in ms since the epoch (UTC)
        for (sql, column) in [
            (ARCHIVED_LOGS, "A.FIRST_TIME"),
            (ONLINE_LOGS, "L.FIRST_TIME"),
        ] {
            assert!(
                sql.contains(&format!(
                    "ROUND(({column} - DATE '1970-01-01' - (SYSDATE - \
CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS DATE))) * 86400000) FROM"
                )),
                "{sql}"
            );
        }
        assert!(ONLINE_LOGS.contains("L.ARCHIVED, L.FIRST_TIME ORDER BY"));
        assert!(ARCHIVED_LOGS.contains("A.APPLIED = 'YES'"));
        assert!(ARCHIVE_DESTINATIONS.contains("V$ARCHIVE_DEST_STATUS"));
        assert!(ARCHIVE_DESTINATIONS.contains("STATUS = 'VALID' AND TYPE = 'LOCAL'"));
        assert!(SESSION_CONTAINER.contains("'CON_ID'") && SESSION_CONTAINER.contains("'CON_NAME'"));
        assert!(ARCHIVED_LOGS.contains("A.DEST_ID = :2"));
        assert!(ARCHIVED_LOGS.contains("A.RESETLOGS_CHANGE# = D.RESETLOGS_CHANGE#"));
        assert!(
            !ARCHIVED_LOGS.contains("DELETED = 'NO'"),
            "deleted copies must be listed"
        );
        assert!(ONLINE_LOGS.contains("MIN(F.MEMBER)"));
        assert!(ACTIVE_TRANSACTIONS.contains("GV$TRANSACTION"));
        assert!(SESSION_EXISTS.contains(":1") && SESSION_EXISTS.contains(":2"));
        for s in NLS_SESSION {
            assert!(s.starts_with("ALTER SESSION SET "));
        }
        assert!(NLS_SESSION[2].contains("TZH:TZM"));
        assert_eq!(MINED_COLUMNS.len(), 23);
    }
}
