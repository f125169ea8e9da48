//! Which databases the connector captures, and how its LogMiner session is given the redo: pure
//! rules over the [`DatabaseIdentity`], applied at start and after every reconnect
//! (`start.rs::check_topology`). Each refusal is CDC-5001.
//!
//! | role              | open mode                    | `online` | `archive_only` |
//! |-------------------|------------------------------|----------|----------------|
//! | PRIMARY           | READ WRITE                   | yes      | yes            |
//! | PHYSICAL STANDBY  | READ ONLY, READ ONLY WITH APPLY | no    | yes, up to the applied SCN |
//! | PHYSICAL STANDBY  | MOUNTED                      | no       | no             |
//! | LOGICAL / SNAPSHOT STANDBY, any other | any      | no       | no             |
//! | PRIMARY           | anything but READ WRITE      | no       | no             |

use cdc_core::config::MiningMode;
use cdc_core::{CdcCode, CdcError};

use crate::source::{CaptureMode, DatabaseIdentity, DatabaseRole, OpenMode, SessionMode};

/// Whether the database's role and open mode qualify for `capture`.
pub fn check_role(identity: &DatabaseIdentity, capture: CaptureMode) -> Result<(), CdcError> {
    let refused = |why: String| Err(CdcError::new(CdcCode::Topology, why));
    let (role, open) = (&identity.role, &identity.open_mode);
    match (role, open) {
        (DatabaseRole::Primary, OpenMode::ReadWrite) => Ok(()),
        (DatabaseRole::PhysicalStandby, OpenMode::ReadOnly | OpenMode::ReadOnlyWithApply) => {
            match capture {
                CaptureMode::ArchiveOnly => Ok(()),
                // the online logs of a standby are its standby redo logs, still being received
                CaptureMode::Online => refused(format!(
                    "the database {} is a physical standby ({}); a standby is captured only with \
                     cdc.capture.mode=archive_only, up to the SCN it has applied",
                    identity.name,
                    open_mode_text(open)
                )),
            }
        }
        (DatabaseRole::PhysicalStandby, _) => refused(format!(
            "the database {} is a physical standby that is not open ({}); LogMiner's online \
             catalog needs it open READ ONLY or READ ONLY WITH APPLY",
            identity.name,
            open_mode_text(open)
        )),
        (DatabaseRole::Primary, _) => refused(format!(
            "the database {} is a primary open {}; capture needs a primary open READ WRITE",
            identity.name,
            open_mode_text(open)
        )),
        (other, _) => refused(format!(
            "the database {} is a {}; only a primary open READ WRITE, or a physical standby \
             open READ ONLY [WITH APPLY] with cdc.capture.mode=archive_only, is captured",
            identity.name,
            role_text(other)
        )),
    }
}

/// Whether the archive destination whose copies are mined is valid: `configured`
/// (`cdc.archive.destination`) or, unset, any valid local one.
pub fn check_archive_destination(
    identity: &DatabaseIdentity,
    configured: Option<&str>,
) -> Result<(), CdcError> {
    let valid = &identity.valid_archive_destinations;
    let found = match configured {
        Some(name) => valid.iter().any(|v| v.eq_ignore_ascii_case(name)),
        None => !valid.is_empty(),
    };
    if found {
        return Ok(());
    }
    let listed = if valid.is_empty() {
        "none is".to_owned()
    } else {
        format!("only {} are", valid.join(", "))
    };
    let wanted = match configured {
        Some(name) => {
            format!("cdc.archive.destination={name} is not a valid local archive destination")
        }
        None => "there is no valid local archive destination".to_owned(),
    };
    Err(CdcError::new(
        CdcCode::Topology,
        format!(
            "{wanted} of {} (V$ARCHIVE_DEST_STATUS: {listed} VALID and LOCAL); the archived logs \
             cannot be mined",
            identity.name
        ),
    ))
}

/// `cdc.mining.mode` for the session's container: `auto` mines by SCN range in a PDB and adds
/// log files elsewhere; `logs` in a PDB is refused, as ADD_LOGFILE fails there (ORA-65040).
pub fn resolve_mining_mode(
    configured: MiningMode,
    identity: &DatabaseIdentity,
) -> Result<SessionMode, CdcError> {
    match (configured, identity.session_pdb.as_deref()) {
        (MiningMode::Logs, Some(pdb)) => Err(CdcError::new(
            CdcCode::Topology,
            format!(
                "cdc.mining.mode=logs, but the session is connected to the pluggable database \
                 {pdb}, where DBMS_LOGMNR.ADD_LOGFILE fails (ORA-65040); set \
                 cdc.mining.mode=range or auto, or connect to the CDB root"
            ),
        )),
        (MiningMode::Logs, None) => Ok(SessionMode::Logs),
        (MiningMode::Range, _) => Ok(SessionMode::Range),
        (MiningMode::Auto, Some(_)) => Ok(SessionMode::Range),
        (MiningMode::Auto, None) => Ok(SessionMode::Logs),
    }
}

fn role_text(role: &DatabaseRole) -> String {
    match role {
        DatabaseRole::Primary => "primary".into(),
        DatabaseRole::PhysicalStandby => "physical standby".into(),
        DatabaseRole::LogicalStandby => "logical standby".into(),
        DatabaseRole::SnapshotStandby => "snapshot standby".into(),
        DatabaseRole::Other(text) => format!("database of role {text}"),
    }
}

fn open_mode_text(open: &OpenMode) -> String {
    match open {
        OpenMode::ReadWrite => "READ WRITE".into(),
        OpenMode::ReadOnly => "READ ONLY".into(),
        OpenMode::ReadOnlyWithApply => "READ ONLY WITH APPLY".into(),
        OpenMode::Mounted => "MOUNTED".into(),
        OpenMode::Other(text) => text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdc_core::Scn;

    fn identity(role: DatabaseRole, open_mode: OpenMode) -> DatabaseIdentity {
        DatabaseIdentity {
            dbid: 1,
            name: "FREE".into(),
            resetlogs_scn: Scn(1),
            role,
            open_mode,
            enabled_threads: Vec::new(),
            is_cdb: false,
            open_pdbs: Vec::new(),
            session_pdb: None,
            valid_archive_destinations: vec!["LOG_ARCHIVE_DEST_1".into()],
            utc_offset_minutes: 0,
        }
    }

    /// The topology table, every role against every open mode and both capture modes.
    #[test]
    fn roles_and_open_modes() {
        use DatabaseRole as R;
        use OpenMode as O;
        let roles = [
            R::Primary,
            R::PhysicalStandby,
            R::LogicalStandby,
            R::SnapshotStandby,
            R::Other("FAR SYNC".into()),
        ];
        let opens = [
            O::ReadWrite,
            O::ReadOnly,
            O::ReadOnlyWithApply,
            O::Mounted,
            O::Other("MIGRATE".into()),
        ];
        for role in &roles {
            for open in &opens {
                for capture in [CaptureMode::Online, CaptureMode::ArchiveOnly] {
                    let expected = matches!(
                        (role, open, capture),
                        (R::Primary, O::ReadWrite, _)
                            | (
                                R::PhysicalStandby,
                                O::ReadOnly | O::ReadOnlyWithApply,
                                CaptureMode::ArchiveOnly,
                            )
                    );
                    let got = check_role(&identity(role.clone(), open.clone()), capture);
                    assert_eq!(got.is_ok(), expected, "{role:?} {open:?} {capture:?}");
                    if let Err(e) = got {
                        assert_eq!(e.code(), CdcCode::Topology);
                    }
                }
            }
        }
    }

    #[test]
    fn an_archive_destination_must_be_valid() {
        let mut id = identity(DatabaseRole::Primary, OpenMode::ReadWrite);
        assert!(check_archive_destination(&id, None).is_ok());
        assert!(check_archive_destination(&id, Some("log_archive_dest_1")).is_ok());
        let e = check_archive_destination(&id, Some("LOG_ARCHIVE_DEST_2")).unwrap_err();
        assert_eq!(e.code(), CdcCode::Topology);
        assert!(e.to_string().contains("only LOG_ARCHIVE_DEST_1 are"), "{e}");
        id.valid_archive_destinations.clear();
        let e = check_archive_destination(&id, None).unwrap_err();
        assert_eq!(e.code(), CdcCode::Topology);
        assert!(
            e.to_string().contains("there is no valid local archive"),
            "{e}"
        );
    }

    #[test]
    fn mining_mode_follows_the_sessions_container() {
        let mut id = identity(DatabaseRole::Primary, OpenMode::ReadWrite);
        let resolve = |mode, id: &DatabaseIdentity| resolve_mining_mode(mode, id);
        assert_eq!(resolve(MiningMode::Auto, &id).unwrap(), SessionMode::Logs);
        assert_eq!(resolve(MiningMode::Logs, &id).unwrap(), SessionMode::Logs);
        assert_eq!(resolve(MiningMode::Range, &id).unwrap(), SessionMode::Range);
        id.session_pdb = Some("FREEPDB1".into());
        assert_eq!(resolve(MiningMode::Auto, &id).unwrap(), SessionMode::Range);
        assert_eq!(resolve(MiningMode::Range, &id).unwrap(), SessionMode::Range);
        let e = resolve(MiningMode::Logs, &id).unwrap_err();
        assert_eq!(e.code(), CdcCode::Topology);
        assert!(e.to_string().contains("ORA-65040"), "{e}");
    }
}
