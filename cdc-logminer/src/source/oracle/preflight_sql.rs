//! The preflight's statements and how their rows read as [`PreflightFacts`] parts: pure, so
//! they are tested on every machine; `preflight.rs` runs them (feature `oracle`).
//!
//! [`PreflightFacts`]: crate::source::preflight::PreflightFacts

use cdc_core::TableId;

use crate::source::preflight::{CAPTURE_VIEWS, DatabaseSupplemental, Grant, TableSupplemental};

/// LOG_MODE, the three database-level supplemental logging flags.
pub const DATABASE: &str = "SELECT LOG_MODE, SUPPLEMENTAL_LOG_DATA_MIN, SUPPLEMENTAL_LOG_DATA_PK, \
SUPPLEMENTAL_LOG_DATA_ALL FROM V$DATABASE";

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

    /// What the capture user lacks: LogMiner's privileges, SELECT on [`CAPTURE_VIEWS`]
    /// (granted on the `V_$` view, or through SELECT_CATALOG_ROLE or SELECT ANY DICTIONARY),
    /// FLASHBACK on each of `tables` (or FLASHBACK ANY TABLE), EXECUTE on DBMS_LOGMNR_D
    /// (or EXECUTE_CATALOG_ROLE). A DBA role counts as all of it.
    pub fn missing(&self, tables: &[TableId]) -> Vec<Grant> {
        if self.has_role("DBA") {
            return Vec::new();
        }
        let mut out = Vec::new();
        if !self.has_privilege("LOGMINING") {
            out.push(Grant::Logmining);
        }
        if !self.has_privilege("SELECT ANY TRANSACTION") {
            out.push(Grant::SelectAnyTransaction);
        }
        let dictionary =
            self.has_privilege("SELECT ANY DICTIONARY") || self.has_role("SELECT_CATALOG_ROLE");
        for view in CAPTURE_VIEWS {
            let base = view.replacen("V$", "V_$", 1);
            if !dictionary && !self.has_object("SYS", &base, &["SELECT", "READ"]) {
                out.push(Grant::SelectOnView((*view).to_owned()));
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
        if !self.has_role("EXECUTE_CATALOG_ROLE")
            && !self.has_privilege("EXECUTE ANY PROCEDURE")
            && !self.has_object("SYS", "DBMS_LOGMNR_D", &["EXECUTE"])
        {
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
    use super::*;

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

        let none = SessionGrants::default().missing(&tables);
        assert!(none.contains(&Grant::Logmining));
        assert!(none.contains(&Grant::SelectAnyTransaction));
        assert!(none.contains(&Grant::SelectOnView("V$LOGMNR_CONTENTS".into())));
        assert!(none.contains(&Grant::Flashback(orders.clone())));
        assert!(none.contains(&Grant::ExecuteDbmsLogmnrD));
        assert_eq!(none.len(), 2 + CAPTURE_VIEWS.len() + 2 + 1);

        let granted = SessionGrants {
            privileges: vec!["LOGMINING".into(), "SELECT ANY TRANSACTION".into()],
            roles: vec!["SELECT_CATALOG_ROLE".into(), "EXECUTE_CATALOG_ROLE".into()],
            object_privileges: vec![obj("APP", "ORDERS", "FLASHBACK")],
        };
        assert_eq!(granted.missing(&tables), vec![Grant::Flashback(codes)]);

        let direct_views = SessionGrants {
            privileges: vec![
                "LOGMINING".into(),
                "SELECT ANY TRANSACTION".into(),
                "FLASHBACK ANY TABLE".into(),
            ],
            roles: vec![],
            object_privileges: CAPTURE_VIEWS
                .iter()
                .filter(|v| **v != "V$THREAD")
                .map(|v| obj("SYS", &v.replacen("V$", "V_$", 1), "SELECT"))
                .chain([obj("SYS", "DBMS_LOGMNR_D", "EXECUTE")])
                .collect(),
        };
        assert_eq!(
            direct_views.missing(&tables),
            vec![Grant::SelectOnView("V$THREAD".into())]
        );

        let dba = SessionGrants {
            roles: vec!["DBA".into()],
            ..SessionGrants::default()
        };
        assert!(dba.missing(&tables).is_empty());
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
}
