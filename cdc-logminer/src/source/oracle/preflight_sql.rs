//! The preflight's statements and how their rows read as [`PreflightFacts`] parts: pure, so
//! they are tested on every machine; `preflight.rs` runs them (feature `oracle`).
//!
//! [`PreflightFacts`]: crate::source::preflight::PreflightFacts

use cdc_core::TableId;

use super::sql;
use crate::source::preflight::{
    DatabaseSupplemental, Grant, PreflightRead, TableSupplemental, preflight_views,
};

/// LOG_MODE, the three database-level supplemental logging flags, the role and the open mode.
pub const DATABASE: &str = "SELECT LOG_MODE, SUPPLEMENTAL_LOG_DATA_MIN, SUPPLEMENTAL_LOG_DATA_PK, \
SUPPLEMENTAL_LOG_DATA_ALL, DATABASE_ROLE, OPEN_MODE FROM V$DATABASE";

/// The enabled redo threads (the connector's own statement).
pub const THREADS: &str = sql::ENABLED_THREADS;

/// The session's container (`CON_ID`, `CON_NAME`), which needs no grant: whether the database
/// is a CDB, read before any view is.
pub const SESSION_CONTAINER: &str = sql::SESSION_CONTAINER;

/// The capture user.
pub const USER: &str = "SELECT USER FROM DUAL";

/// System privileges of the session, direct or through roles.
pub const SESSION_PRIVS: &str = "SELECT PRIVILEGE FROM SESSION_PRIVS";

/// Roles enabled in the session.
pub const SESSION_ROLES: &str = "SELECT ROLE FROM SESSION_ROLES";

/// Object privileges granted to the user directly.
pub const USER_TAB_PRIVS: &str =
    "SELECT OWNER, TABLE_NAME, PRIVILEGE FROM USER_TAB_PRIVS WHERE GRANTEE = USER";

/// The release (`19.0.0.0.0`).
pub const VERSION: &str = "SELECT VERSION FROM V$INSTANCE";

/// Switches in the last hour, and in the busiest clock hour of the last 24.
pub const LOG_SWITCHES: &str = "SELECT \
(SELECT COUNT(*) FROM V$LOG_HISTORY WHERE FIRST_TIME > SYSDATE - 1/24), \
(SELECT NVL(MAX(COUNT(*)), 0) FROM V$LOG_HISTORY WHERE FIRST_TIME > SYSDATE - 1 \
GROUP BY TRUNC(FIRST_TIME, 'HH24')) FROM DUAL";

/// The oldest archived log still available, with its time.
pub const OLDEST_ARCHIVED_LOG: &str = "SELECT FIRST_CHANGE#, \
TO_CHAR(FIRST_TIME, 'YYYY-MM-DD HH24:MI:SS') FROM V$ARCHIVED_LOG \
WHERE DELETED = 'NO' AND STATUS = 'A' ORDER BY FIRST_CHANGE# FETCH FIRST 1 ROWS ONLY";

/// A parameter's value; bind the name (`undo_retention`).
pub const PARAMETER: &str = "SELECT VALUE FROM V$PARAMETER WHERE NAME = :1";

/// A table's supplemental log groups; bind owner and table.
pub const TABLE_LOG_GROUPS: &str =
    "SELECT LOG_GROUP_TYPE FROM DBA_LOG_GROUPS WHERE OWNER = :1 AND TABLE_NAME = :2";

/// The enabled primary and unique constraints of a table whose columns are all NOT NULL;
/// bind owner and table. Any row is a usable key.
pub const USABLE_KEYS: &str = "SELECT c.CONSTRAINT_NAME FROM DBA_CONSTRAINTS c \
WHERE c.OWNER = :1 AND c.TABLE_NAME = :2 AND c.STATUS = 'ENABLED' \
AND (c.CONSTRAINT_TYPE = 'P' OR (c.CONSTRAINT_TYPE = 'U' AND NOT EXISTS (\
SELECT 1 FROM DBA_CONS_COLUMNS cc JOIN DBA_TAB_COLUMNS tc \
ON tc.OWNER = cc.OWNER AND tc.TABLE_NAME = cc.TABLE_NAME AND tc.COLUMN_NAME = cc.COLUMN_NAME \
WHERE cc.OWNER = c.OWNER AND cc.CONSTRAINT_NAME = c.CONSTRAINT_NAME AND tc.NULLABLE = 'Y')))";

/// A table's columns; bind owner and table.
pub const COLUMNS: &str = "SELECT COLUMN_NAME FROM DBA_TAB_COLUMNS WHERE OWNER = :1 AND TABLE_NAME = :2 ORDER BY COLUMN_ID";

/// The statements of `read` in a database that is (`is_cdb`) or is not a CDB: the captured
/// tables are the connector's own object queries.
pub fn statements(read: PreflightRead, is_cdb: bool) -> &'static [&'static str] {
    match read {
        PreflightRead::Database => &[DATABASE],
        PreflightRead::Threads => &[THREADS],
        PreflightRead::CapturedTables if is_cdb => &[sql::OBJECTS_CDB, sql::IOT_TOP_CDB],
        PreflightRead::CapturedTables => &[sql::OBJECTS_NON_CDB, sql::IOT_TOP_NON_CDB],
        PreflightRead::TableLogGroups => &[TABLE_LOG_GROUPS],
        PreflightRead::TableKeys => &[USABLE_KEYS],
        PreflightRead::TableColumns => &[COLUMNS],
        PreflightRead::Version => &[VERSION],
        PreflightRead::LogSwitches => &[LOG_SWITCHES],
        PreflightRead::ArchivedLogs => &[OLDEST_ARCHIVED_LOG],
        PreflightRead::UndoRetention => &[PARAMETER],
    }
}

/// Whether a session whose `SYS_CONTEXT('USERENV', 'CON_ID')` reads `con_id` is in a CDB:
/// 0 in a non-CDB, 1 at the root, above in a PDB.
pub fn in_cdb(con_id: &str) -> bool {
    con_id.trim().parse::<u32>().is_ok_and(|id| id > 0)
}

/// YES, or IMPLICIT (minimal logging switched on by a stronger level).
fn yes(text: &str) -> bool {
    matches!(text.trim(), "YES" | "IMPLICIT")
}

/// The V$DATABASE flags SUPPLEMENTAL_LOG_DATA_MIN, _PK, _ALL.
pub fn database_supplemental(min: &str, pk: &str, all: &str) -> DatabaseSupplemental {
    DatabaseSupplemental {
        minimal: yes(min),
        primary_key: yes(pk),
        all_columns: yes(all),
    }
}

/// A table's LOG_GROUP_TYPE rows.
pub fn table_supplemental<'a>(types: impl IntoIterator<Item = &'a str>) -> TableSupplemental {
    let mut out = TableSupplemental::default();
    for t in types {
        match t.trim() {
            "ALL COLUMN LOGGING" => out.all_columns = true,
            "PRIMARY KEY LOGGING" => out.primary_key = true,
            _ => {}
        }
    }
    out
}

/// What the session can do, as SESSION_PRIVS, SESSION_ROLES and USER_TAB_PRIVS list it.
#[derive(Debug, Clone, Default)]
pub struct SessionGrants {
    pub privileges: Vec<String>,
    pub roles: Vec<String>,
    /// (OWNER, TABLE_NAME, PRIVILEGE).
    pub object_privileges: Vec<(String, String, String)>,
}

impl SessionGrants {
    fn has_privilege(&self, name: &str) -> bool {
        self.privileges.iter().any(|p| p.trim() == name)
    }

    fn has_role(&self, name: &str) -> bool {
        self.roles.iter().any(|r| r.trim() == name)
    }

    fn has_object(&self, owner: &str, object: &str, privileges: &[&str]) -> bool {
        self.object_privileges
            .iter()
            .any(|(o, t, p)| o == owner && t == object && privileges.contains(&p.as_str()))
    }

    /// What the capture user lacks: CREATE SESSION, LogMiner's privileges, SELECT on the
    /// views of [`preflight_views`] (granted on the `V_$` view or the dictionary view, or
    /// through SELECT_CATALOG_ROLE or SELECT ANY DICTIONARY), FLASHBACK on each of `tables`
    /// (or FLASHBACK ANY TABLE), EXECUTE on DBMS_LOGMNR and DBMS_LOGMNR_D (or
    /// EXECUTE_CATALOG_ROLE, or EXECUTE ANY PROCEDURE). A DBA role counts as all of it.
    pub fn missing(&self, tables: &[TableId], is_cdb: bool) -> Vec<Grant> {
        if self.has_role("DBA") {
            return Vec::new();
        }
        let mut out = Vec::new();
        if !self.has_privilege("CREATE SESSION") {
            out.push(Grant::CreateSession);
        }
        if !self.has_privilege("LOGMINING") {
            out.push(Grant::Logmining);
        }
        if !self.has_privilege("SELECT ANY TRANSACTION") {
            out.push(Grant::SelectAnyTransaction);
        }
        let dictionary =
            self.has_privilege("SELECT ANY DICTIONARY") || self.has_role("SELECT_CATALOG_ROLE");
        for view in preflight_views(is_cdb) {
            let base = view.replacen("V$", "V_$", 1);
            if !dictionary && !self.has_object("SYS", &base, &["SELECT", "READ"]) {
                out.push(Grant::SelectOnView(view.to_owned()));
            }
        }
        if !self.has_privilege("FLASHBACK ANY TABLE") {
            out.extend(
                tables
                    .iter()
                    .filter(|t| !self.has_object(&t.owner, &t.table, &["FLASHBACK"]))
                    .map(|t| Grant::Flashback(t.clone())),
            );
        }
        let executes = |package: &str| {
            self.has_role("EXECUTE_CATALOG_ROLE")
                || self.has_privilege("EXECUTE ANY PROCEDURE")
                || self.has_object("SYS", package, &["EXECUTE"])
        };
        if !executes("DBMS_LOGMNR") {
            out.push(Grant::ExecuteDbmsLogmnr);
        }
        if !executes("DBMS_LOGMNR_D") {
            out.push(Grant::ExecuteDbmsLogmnrD);
        }
        out
    }
}

/// V$PARAMETER's VALUE of UNDO_RETENTION, in seconds.
pub fn undo_retention(value: Option<&str>) -> Option<u64> {
    value.and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::source::preflight::connector_views;

    #[test]
    fn supplemental_flags_read_yes_and_implicit() {
        let d = database_supplemental("IMPLICIT", "NO", "YES");
        assert!(d.minimal && !d.primary_key && d.all_columns);
        assert!(!database_supplemental("NO", "NO", "NO").minimal);
        let t = table_supplemental(["PRIMARY KEY LOGGING", "USER LOG GROUP"]);
        assert!(t.primary_key && !t.all_columns);
        assert!(!table_supplemental(["UNIQUE KEY LOGGING"]).any());
        assert!(table_supplemental(["ALL COLUMN LOGGING"]).all_columns);
    }

    fn obj(owner: &str, table: &str, privilege: &str) -> (String, String, String) {
        (owner.into(), table.into(), privilege.into())
    }

    #[test]
    fn grants_are_found_direct_or_through_roles() {
        let orders = TableId::new("APP", "ORDERS");
        let codes = TableId::new("APP", "CODES");
        let tables = [orders.clone(), codes.clone()];
        let views = preflight_views(false);

        let none = SessionGrants::default().missing(&tables, false);
        assert!(none.contains(&Grant::CreateSession));
        assert!(none.contains(&Grant::Logmining));
        assert!(none.contains(&Grant::SelectAnyTransaction));
        assert!(none.contains(&Grant::SelectOnView("V$LOGMNR_CONTENTS".into())));
        assert!(none.contains(&Grant::SelectOnView("GV$TRANSACTION".into())));
        assert!(none.contains(&Grant::SelectOnView("DBA_CONSTRAINTS".into())));
        assert!(!none.contains(&Grant::SelectOnView("CDB_OBJECTS".into())));
        assert!(none.contains(&Grant::Flashback(orders.clone())));
        assert!(none.contains(&Grant::ExecuteDbmsLogmnr));
        assert!(none.contains(&Grant::ExecuteDbmsLogmnrD));
        assert_eq!(none.len(), 3 + views.len() + 2 + 2);
        let cdb = SessionGrants::default().missing(&tables, true);
        assert!(cdb.contains(&Grant::SelectOnView("CDB_OBJECTS".into())));
        assert!(cdb.contains(&Grant::SelectOnView("V$PDBS".into())));
        assert!(!cdb.contains(&Grant::SelectOnView("DBA_OBJECTS".into())));

        let session = || vec!["CREATE SESSION".to_owned()];
        let granted = SessionGrants {
            privileges: [
                session(),
                vec!["LOGMINING".into(), "SELECT ANY TRANSACTION".into()],
            ]
            .concat(),
            roles: vec!["SELECT_CATALOG_ROLE".into(), "EXECUTE_CATALOG_ROLE".into()],
            object_privileges: vec![obj("APP", "ORDERS", "FLASHBACK")],
        };
        assert_eq!(
            granted.missing(&tables, false),
            vec![Grant::Flashback(codes)]
        );

        let direct = SessionGrants {
            privileges: [
                session(),
                vec![
                    "LOGMINING".into(),
                    "SELECT ANY TRANSACTION".into(),
                    "FLASHBACK ANY TABLE".into(),
                ],
            ]
            .concat(),
            roles: vec![],
            object_privileges: views
                .iter()
                .filter(|v| !["V$THREAD", "GV$SESSION", "DBA_LOG_GROUPS"].contains(v))
                .map(|v| obj("SYS", &v.replacen("V$", "V_$", 1), "SELECT"))
                .chain([
                    obj("SYS", "DBMS_LOGMNR_D", "EXECUTE"),
                    obj("SYS", "DBMS_LOGMNR", "EXECUTE"),
                ])
                .collect(),
        };
        assert_eq!(
            direct.missing(&tables, false),
            vec![
                Grant::SelectOnView("V$THREAD".into()),
                Grant::SelectOnView("GV$SESSION".into()),
                Grant::SelectOnView("DBA_LOG_GROUPS".into()),
            ]
        );
        // the packages each by its own grant
        let only_builds = SessionGrants {
            object_privileges: vec![obj("SYS", "DBMS_LOGMNR_D", "EXECUTE")],
            ..granted.clone()
        };
        let lacked = SessionGrants {
            roles: vec!["SELECT_CATALOG_ROLE".into()],
            ..only_builds
        }
        .missing(&[], false);
        assert_eq!(lacked, vec![Grant::ExecuteDbmsLogmnr]);

        let dba = SessionGrants {
            roles: vec!["DBA".into()],
            ..SessionGrants::default()
        };
        assert!(dba.missing(&tables, false).is_empty());
    }

    /// The view names a statement's text holds: words that start `V$`, `GV$`, `DBA_`, `CDB_`.
    fn views_named(text: &str) -> BTreeSet<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '$' || c == '_' || c == '#'))
            .filter(|w| {
                ["V$", "GV$", "DBA_", "CDB_"]
                    .iter()
                    .any(|p| w.starts_with(p))
            })
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn each_read_names_the_views_its_statements_read() {
        for is_cdb in [false, true] {
            for read in PreflightRead::ALL {
                let named: BTreeSet<String> = statements(read, is_cdb)
                    .iter()
                    .flat_map(|s| views_named(s))
                    .collect();
                let said: BTreeSet<String> =
                    read.views(is_cdb).iter().map(|v| (*v).to_owned()).collect();
                assert_eq!(named, said, "{read:?} (CDB {is_cdb})");
            }
        }
    }

    /// The grant list is what the connector reads: every view named in the connector's
    /// statements (`sql.rs`, `snapshot_sql.rs`; comments and tests left out) against
    /// [`connector_views`] of a CDB and of a non-CDB.
    #[test]
    fn the_grants_checked_are_the_views_the_connector_reads() {
        let mut read = BTreeSet::new();
        for source in [include_str!("sql.rs"), include_str!("snapshot_sql.rs")] {
            let code = source.split("#[cfg(test)]").next().unwrap_or(source);
            for line in code.lines() {
                let line = line.trim_start();
                if !line.starts_with("//") {
                    read.extend(views_named(line));
                }
            }
        }
        // read when it may be: a PDB's own supplemental logging, detail for the schema topic
        // (the connector goes on with the CDB's when it is refused)
        assert!(read.remove("CDB_SUPPLEMENTAL_LOGGING"));
        let listed: BTreeSet<String> = connector_views(false)
            .chain(connector_views(true))
            .map(str::to_owned)
            .collect();
        assert_eq!(read, listed);
    }

    #[test]
    fn the_session_container_says_whether_it_is_a_cdb() {
        assert!(!in_cdb("0"));
        assert!(in_cdb("1"));
        assert!(in_cdb(" 3 "));
        assert!(!in_cdb(""));
    }

    #[test]
    fn undo_retention_reads_seconds() {
        assert_eq!(undo_retention(Some("900")), Some(900));
        assert_eq!(undo_retention(Some(" 60 ")), Some(60));
        assert_eq!(undo_retention(Some("auto")), None);
        assert_eq!(undo_retention(None), None);
    }

    #[test]
    fn table_statements_bind_owner_and_table() {
        for stmt in [TABLE_LOG_GROUPS, USABLE_KEYS, COLUMNS] {
            assert!(stmt.contains(":1") && stmt.contains(":2"), "{stmt}");
            assert!(!stmt.contains(":3"), "{stmt}");
        }
        assert!(PARAMETER.contains(":1"));
        assert!(USABLE_KEYS.contains("NULLABLE = 'Y'"));
    }

    #[test]
    fn statements_without_binds_take_no_value_from_outside() {
        // what varies (owner, table, parameter name) is bound; these take nothing at all
        for stmt in [
            DATABASE,
            THREADS,
            SESSION_CONTAINER,
            USER,
            SESSION_PRIVS,
            SESSION_ROLES,
            USER_TAB_PRIVS,
            VERSION,
            LOG_SWITCHES,
            OLDEST_ARCHIVED_LOG,
        ] {
            let binds = stmt
                .match_indices(':')
                .filter(|(i, _)| stmt[i + 1..].starts_with(|c: char| c.is_ascii_digit()))
                .count();
            assert_eq!(binds, 0, "{stmt}");
            assert!(stmt.starts_with("SELECT "), "read-only: {stmt}");
        }
        assert!(DATABASE.ends_with("DATABASE_ROLE, OPEN_MODE FROM V$DATABASE"));
        assert!(THREADS.contains("ENABLED <> 'DISABLED'"));
    }
}
