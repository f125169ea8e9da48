//! ORA error codes as named constants, and the one table that decides what the engine does
//! with each.
//!
//! The driver hands the engine an error message; [`find_in`] (or [`classify_message`]) pulls
//! the ORA code out of it and [`classify`] maps the code onto a class, each class onto a CDC
//! code (see `crate::error`). A code that is not in [`CLASSIFICATION`] is never retried and never
//! ignored: [`stop_for_unclassified`] turns it into an immediate stop naming the code.
//!
//! ```text
//!   "ORA-00604: …\nORA-03113: end-of-file on communication channel"
//!        │ classify_message (skips the ORA-00604 wrapper)
//!        ▼
//!   OraCode(3113) ──classify──► OraClass::Transient ──cdc_code──► CDC-1001 TRANSIENT_DATABASE
//! ```

use std::fmt;

use crate::error::{CdcCode, CdcError};

/// An Oracle error number, as in `ORA-01291`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OraCode(pub u32);

/// Oracle prints error numbers with five digits.
const MAX_DIGITS: usize = 5;

/// Declares the named constants and, from the same list, the table of names, so a code is
/// named in one place only.
macro_rules! ora_codes {
    ($($(#[$doc:meta])* $name:ident = $number:literal,)*) => {
        impl OraCode {
            $($(#[$doc])* pub const $name: OraCode = OraCode($number);)*
        }

        /// Every named code with its constant's name.
        static NAMES: &[(OraCode, &str)] = &[$((OraCode($number), stringify!($name)),)*];
    };
}

ora_codes! {
    // Transient (CDC-1001): the connection or the instance is away for a while.
    /// The session was killed.
    SESSION_KILLED = 28,
    /// The session was marked to be killed.
    SESSION_MARKED_FOR_KILL = 31,
    /// An error at recursive SQL level; wraps the error that caused it.
    RECURSIVE_SQL_ERROR = 604,
    /// The instance is starting up or shutting down.
    INITIALIZATION_OR_SHUTDOWN_IN_PROGRESS = 1033,
    /// The instance is not available.
    ORACLE_NOT_AVAILABLE = 1034,
    /// An immediate shutdown is in progress.
    IMMEDIATE_SHUTDOWN_IN_PROGRESS = 1089,
    /// A shutdown is in progress.
    SHUTDOWN_IN_PROGRESS = 1090,
    /// The instance terminated and the connection was dropped.
    INSTANCE_TERMINATED = 1092,
    /// The database is not open.
    DATABASE_NOT_OPEN = 1109,
    /// The connection was lost; the database server usually reports why.
    END_OF_FILE_ON_COMMUNICATION_CHANNEL = 3113,
    /// The session is not connected.
    NOT_CONNECTED = 3114,
    /// The connection lost contact (network disconnect).
    CONNECTION_LOST_CONTACT = 3135,
    /// The state of PL/SQL packages was discarded, e.g. after a package was recompiled.
    PACKAGE_STATE_DISCARDED = 4068,
    /// Connecting timed out.
    CONNECT_TIMEOUT = 12170,
    /// The listener does not know the service (yet), e.g. while the instance registers.
    LISTENER_UNKNOWN_SERVICE = 12514,
    /// The listener has no handler for the service.
    LISTENER_NO_HANDLER = 12516,
    /// The listener blocks new connections to the instance.
    LISTENER_BLOCKING_NEW_CONNECTIONS = 12528,
    /// The connection was closed.
    CONNECTION_CLOSED = 12537,
    /// No listener answers.
    NO_LISTENER = 12541,
    /// The destination host is unreachable.
    DESTINATION_HOST_UNREACHABLE = 12543,
    /// A pluggable database is not open yet, as seen while PDBs open after a restart.
    PLUGGABLE_DATABASE_OPENING = 16331,
    /// The JDBC driver's I/O error.
    IO_ERROR = 17002,
    /// The JDBC driver's closed connection.
    CLOSED_CONNECTION = 17008,
    /// The JDBC driver read no more data from the socket.
    NO_MORE_DATA_FROM_SOCKET = 17410,
    /// The JDBC driver got -1 from a read call.
    GOT_MINUS_ONE_FROM_READ = 17800,
    /// A call cannot be replayed safely after a failover.
    CANNOT_SAFELY_REPLAY_CALL = 25408,

    // Remine the step (CDC-1002): a log changed under the step.
    /// An archived log holds another sequence than the one required: an online log was
    /// switched or overwritten while it was read.
    ARCHIVED_LOG_WRONG_SEQUENCE = 310,
    /// Names the archived log that an accompanying error is about.
    ARCHIVED_LOG_FILE = 334,
    /// The log file was already added to the LogMiner session.
    DUPLICATE_LOG_FILE = 1289,
    /// START_LOGMNR asked for a range the added logs do not cover.
    MISSING_LOG_FILE = 1291,
    /// The header of a log file does not match the thread and sequence LogMiner expected.
    LOG_FILE_HEADER_MISMATCH = 1368,

    // Log purged (CDC-2002): a listed log cannot be opened.
    /// A log file cannot be opened (removed from disk, or locked).
    FILE_CANNOT_BE_OPENED = 1284,
    /// An archived log cannot be opened.
    CANNOT_OPEN_ARCHIVED_LOG = 308,
    /// A file could not be read.
    ERROR_READING_FILE = 1285,
    /// Listed with the codes for a log that is listed but cannot be opened.
    LOG_UNAVAILABLE = 16226,

    // Privilege (CDC-5002).
    /// The user lacks a privilege.
    INSUFFICIENT_PRIVILEGES = 1031,
    /// The table or view does not exist, or the user may not see it.
    TABLE_OR_VIEW_DOES_NOT_EXIST = 942,
    /// The user name or password is wrong.
    INVALID_CREDENTIALS = 1017,
    /// The account is locked.
    ACCOUNT_LOCKED = 28000,
    /// The user lacks CREATE SESSION.
    NO_CREATE_SESSION_PRIVILEGE = 1045,

    // The engine's own step timeout.
    /// The current call was cancelled; the engine cancels a step at
    /// `cdc.mining.query.timeout.ms`.
    USER_REQUESTED_CANCEL = 1013,

    // Snapshot reads (CDC-8001 once retries run out); handled by the snapshot reader.
    /// Undo needed for a consistent read is gone.
    SNAPSHOT_TOO_OLD = 1555,
    /// The number is not a valid SCN (for flashback or SCN-to-time).
    INVALID_SCN = 8181,
    /// The table definition changed after the flashback SCN (seen within seconds of DDL).
    TABLE_DEFINITION_CHANGED = 1466,

    // Other codes seen with LogMiner; unclassified, so they stop the task.
    /// A checksum error in a redo log block.
    REDO_BLOCK_CHECKSUM_ERROR = 368,
    /// Log corruption near a block.
    LOG_CORRUPTION = 353,
    /// An internal error.
    INTERNAL_ERROR = 600,
    /// Out of process memory.
    OUT_OF_PROCESS_MEMORY = 4030,
    /// PGA memory use exceeds PGA_AGGREGATE_LIMIT.
    PGA_LIMIT_EXCEEDED = 4036,
    /// The SCN range given to LogMiner is invalid.
    INVALID_SCN_RANGE = 1281,
    /// The log comes from another database incarnation.
    DIFFERENT_INCARNATION = 1287,
    /// Removing a log that was never added.
    LOG_FILE_NOT_REGISTERED = 1290,
    /// START_LOGMNR with no log added.
    NO_LOG_FILE_SPECIFIED = 1292,
    /// V$LOGMNR_CONTENTS was read before START_LOGMNR.
    START_LOGMNR_NOT_INVOKED = 1306,
    /// No LogMiner session is active.
    NO_LOGMINER_SESSION = 1307,
    /// The dictionary's DB_ID does not match the logs.
    DB_ID_MISMATCH = 1324,
    /// A dictionary build into the redo needs ARCHIVELOG mode.
    ARCHIVELOG_MODE_REQUIRED_FOR_BUILD = 1325,
    /// LogMiner could not establish its dictionary.
    DICTIONARY_NOT_ESTABLISHED = 1333,
    /// LogMiner found corruption in the log stream.
    LOGSTREAM_CORRUPTION = 1343,
    /// A query ended on DDL: DDL tracking is on but supplemental logging is off.
    DDL_TRACKING_WITHOUT_SUPPLEMENTAL_LOGGING = 1347,
    /// LogMiner is older than the dictionary it mines.
    LOGMINER_OLDER_THAN_DICTIONARY = 1358,
    /// Not every log holding the redo dictionary was added.
    DICTIONARY_INCOMPLETE = 1371,
    /// More than 1000 expressions in an IN list (cdc.mining.inlist.max keeps below it).
    TOO_MANY_IN_LIST_EXPRESSIONS = 1795,
    /// A PL/SQL backtrace line that follows the error it locates.
    AT_LINE = 6512,
    /// A PL/SQL block did not compile; a PLS-nnnnn line says why. PLS-00201 (identifier must
    /// be declared) naming DBMS_LOGMNR_D is a dictionary build without EXECUTE on the package.
    PLSQL_COMPILATION_ERROR = 6550,
    /// The flat file dictionary is desupported.
    FLAT_FILE_DICTIONARY_DESUPPORTED = 44613,
    /// The operation must run in the root container, not in a pluggable database.
    NOT_ALLOWED_IN_PLUGGABLE_DATABASE = 65040,
}

impl OraCode {
    pub fn number(self) -> u32 {
        self.0
    }

    /// The constant's name for a named code, e.g. `MISSING_LOG_FILE`.
    pub fn name(self) -> Option<&'static str> {
        NAMES
            .iter()
            .find(|(code, _)| *code == self)
            .map(|(_, name)| *name)
    }

    /// Reads `ORA-01291` or `ORA-1291`, the prefix in any case. Up to five digits; anything
    /// else, or surrounding text other than whitespace, is `None`.
    pub fn parse(text: &str) -> Option<OraCode> {
        let text = text.trim();
        let prefix = text.get(..4)?;
        if !prefix.eq_ignore_ascii_case("ORA-") {
            return None;
        }
        let digits = text.get(4..)?;
        if digits.is_empty()
            || digits.len() > MAX_DIGITS
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        digits.parse().ok().map(OraCode)
    }
}

impl fmt::Display for OraCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ORA-{:05}", self.0)
    }
}

/// Every `ORA-n` in a driver message, in order of appearance.
///
/// A code is `ORA-` (any case) and one to five digits, not preceded by a letter or digit (so
/// `FLORA-1` is no code) and not followed by a sixth digit.
pub fn codes_in(message: &str) -> impl Iterator<Item = OraCode> + '_ {
    let bytes = message.as_bytes();
    (0..bytes.len()).filter_map(move |start| {
        let prefix = bytes.get(start..start + 4)?;
        if !prefix.eq_ignore_ascii_case(b"ORA-") {
            return None;
        }
        if start > 0 && bytes.get(start - 1).is_some_and(u8::is_ascii_alphanumeric) {
            return None;
        }
        let rest = bytes.get(start + 4..)?;
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > MAX_DIGITS {
            return None;
        }
        let number = rest
            .get(..digits)?
            .iter()
            .fold(0u32, |n, b| n * 10 + u32::from(b - b'0'));
        Some(OraCode(number))
    })
}

/// The first ORA code in a driver error message.
pub fn find_in(message: &str) -> Option<OraCode> {
    codes_in(message).next()
}

/// What the engine does with an ORA code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OraClass {
    /// Reconnect with backoff and mine the step again (CDC-1001 once the budget is spent).
    Transient,
    /// Discard the step and mine it again without reconnecting (CDC-1002 after too many).
    RemineStep,
    /// A needed log is gone: stop (CDC-2002).
    LogPurged,
    /// The capture user may not do this: stop (CDC-5002).
    Privilege,
    /// ORA-01013: the engine's own step timeout cancelled the query; the adaptive window halves
    /// and mines again (CDC-4003 if it keeps happening at one log).
    QueryCancelled,
    /// Not in the table: stop at once, see [`stop_for_unclassified`].
    Unclassified,
}

impl OraClass {
    /// The CDC code an error of this class carries when it reaches the operator.
    ///
    /// `None` for [`OraClass::QueryCancelled`], which is the engine's own timeout and no error
    /// by itself (the stall rule decides when it becomes CDC-4003), and for
    /// [`OraClass::Unclassified`], whose code [`stop_for_unclassified`] chooses.
    pub fn cdc_code(self) -> Option<CdcCode> {
        match self {
            OraClass::Transient => Some(CdcCode::TransientDatabase),
            OraClass::RemineStep => Some(CdcCode::MiningStepRetry),
            OraClass::LogPurged => Some(CdcCode::LogPurged),
            OraClass::Privilege => Some(CdcCode::Privilege),
            OraClass::QueryCancelled | OraClass::Unclassified => None,
        }
    }
}

/// The one classification table, for the mining and session path. Codes of the snapshot path
/// (ORA-01555, ORA-08181) are the snapshot reader's to handle and are not listed here.
pub static CLASSIFICATION: &[(OraCode, OraClass)] = &[
    (OraCode::SESSION_KILLED, OraClass::Transient),
    (OraCode::SESSION_MARKED_FOR_KILL, OraClass::Transient),
    (OraCode::RECURSIVE_SQL_ERROR, OraClass::Transient),
    (
        OraCode::INITIALIZATION_OR_SHUTDOWN_IN_PROGRESS,
        OraClass::Transient,
    ),
    (OraCode::ORACLE_NOT_AVAILABLE, OraClass::Transient),
    (OraCode::IMMEDIATE_SHUTDOWN_IN_PROGRESS, OraClass::Transient),
    (OraCode::SHUTDOWN_IN_PROGRESS, OraClass::Transient),
    (OraCode::INSTANCE_TERMINATED, OraClass::Transient),
    (OraCode::DATABASE_NOT_OPEN, OraClass::Transient),
    (
        OraCode::END_OF_FILE_ON_COMMUNICATION_CHANNEL,
        OraClass::Transient,
    ),
    (OraCode::NOT_CONNECTED, OraClass::Transient),
    (OraCode::CONNECTION_LOST_CONTACT, OraClass::Transient),
    (OraCode::PACKAGE_STATE_DISCARDED, OraClass::Transient),
    (OraCode::CONNECT_TIMEOUT, OraClass::Transient),
    (OraCode::LISTENER_UNKNOWN_SERVICE, OraClass::Transient),
    (OraCode::LISTENER_NO_HANDLER, OraClass::Transient),
    (
        OraCode::LISTENER_BLOCKING_NEW_CONNECTIONS,
        OraClass::Transient,
    ),
    (OraCode::CONNECTION_CLOSED, OraClass::Transient),
    (OraCode::NO_LISTENER, OraClass::Transient),
    (OraCode::DESTINATION_HOST_UNREACHABLE, OraClass::Transient),
    (OraCode::PLUGGABLE_DATABASE_OPENING, OraClass::Transient),
    (OraCode::IO_ERROR, OraClass::Transient),
    (OraCode::CLOSED_CONNECTION, OraClass::Transient),
    (OraCode::NO_MORE_DATA_FROM_SOCKET, OraClass::Transient),
    (OraCode::GOT_MINUS_ONE_FROM_READ, OraClass::Transient),
    (OraCode::CANNOT_SAFELY_REPLAY_CALL, OraClass::Transient),
    (OraCode::ARCHIVED_LOG_WRONG_SEQUENCE, OraClass::RemineStep),
    (OraCode::ARCHIVED_LOG_FILE, OraClass::RemineStep),
    (OraCode::DUPLICATE_LOG_FILE, OraClass::RemineStep),
    (OraCode::MISSING_LOG_FILE, OraClass::RemineStep),
    (OraCode::LOG_FILE_HEADER_MISMATCH, OraClass::RemineStep),
    (OraCode::FILE_CANNOT_BE_OPENED, OraClass::LogPurged),
    (OraCode::CANNOT_OPEN_ARCHIVED_LOG, OraClass::LogPurged),
    (OraCode::ERROR_READING_FILE, OraClass::LogPurged),
    (OraCode::LOG_UNAVAILABLE, OraClass::LogPurged),
    (OraCode::INSUFFICIENT_PRIVILEGES, OraClass::Privilege),
    (OraCode::TABLE_OR_VIEW_DOES_NOT_EXIST, OraClass::Privilege),
    (OraCode::INVALID_CREDENTIALS, OraClass::Privilege),
    (OraCode::ACCOUNT_LOCKED, OraClass::Privilege),
    (OraCode::NO_CREATE_SESSION_PRIVILEGE, OraClass::Privilege),
    (OraCode::USER_REQUESTED_CANCEL, OraClass::QueryCancelled),
];

/// Classifies an ORA code. `extra_transient` is `cdc.retry.extra.error.codes`.
///
/// The table wins over the extra codes: an extra code only turns an otherwise unclassified
/// code into [`OraClass::Transient`]. Every listed class already has handling more fitting than
/// reconnect-and-retry (mine the step again, stop on missing redo, stop on a missing grant,
/// shrink the window), and letting a configuration line retry a purged log or a missing grant
/// would only hide the stop behind the retry budget (a day by default) — no setting lets the
/// connector continue past missing redo.
pub fn classify(code: OraCode, extra_transient: &[OraCode]) -> OraClass {
    if let Some((_, class)) = CLASSIFICATION.iter().find(|(listed, _)| *listed == code) {
        return *class;
    }
    if extra_transient.contains(&code) {
        OraClass::Transient
    } else {
        OraClass::Unclassified
    }
}

/// Codes that only wrap or locate another error: ORA-00604 (recursive SQL) and ORA-06512 (a
/// PL/SQL backtrace line).
fn is_wrapper(code: OraCode) -> bool {
    code == OraCode::RECURSIVE_SQL_ERROR || code == OraCode::AT_LINE
}

/// Finds and classifies the ORA code of a driver message, looking through wrappers.
///
/// ORA-00604 says only that recursive SQL failed and is followed by the error that made it
/// fail, and ORA-06512 lines locate an error, so the first code that is neither decides: a
/// privilege error inside recursive SQL is a privilege error, not a transient one. A message
/// of wrappers only is classified by its first code (ORA-00604 alone is transient). `None` when
/// the message holds no ORA code; the caller decides about plain I/O errors.
pub fn classify_message(message: &str, extra_transient: &[OraCode]) -> Option<(OraCode, OraClass)> {
    let code = codes_in(message)
        .find(|code| !is_wrapper(*code))
        .or_else(|| find_in(message))?;
    Some((code, classify(code, extra_transient)))
}

/// The stop for an ORA code that [`classify`] does not know.
///
/// It carries CDC-1001 TRANSIENT_DATABASE, made final so it is not retried: an unclassified
/// database error is never retried or ignored, and CDC-1001 is the code whose runbook covers
/// database errors at large, including the remedy when the operator knows the code to be
/// transient (add it to `cdc.retry.extra.error.codes`). The message names the ORA code so
/// the operator can decide.
pub fn stop_for_unclassified(code: OraCode, message: &str) -> CdcError {
    let message = message.trim();
    let text = if message.is_empty() {
        format!("{code} is not a classified database error, so the task stops instead of retrying")
    } else {
        format!(
            "{code} is not a classified database error, so the task stops instead of retrying: \
             {message}"
        )
    };
    CdcError::new(CdcCode::TransientDatabase, text).without_retry()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// The ORA codes of each class, as `docs/runbooks.md` lists them under CDC-1001, CDC-1002,
    /// CDC-2002 and CDC-5002, written out again so the table is checked against them.
    const TRANSIENT: [u32; 26] = [
        28, 31, 604, 1033, 1034, 1089, 1090, 1092, 1109, 3113, 3114, 3135, 4068, 12170, 12514,
        12516, 12528, 12537, 12541, 12543, 16331, 17002, 17008, 17410, 17800, 25408,
    ];
    const REMINE_STEP: [u32; 5] = [310, 334, 1289, 1291, 1368];
    const LOG_PURGED: [u32; 4] = [1284, 308, 1285, 16226];
    const PRIVILEGE: [u32; 5] = [1031, 942, 1017, 28000, 1045];

    fn expected() -> Vec<(u32, OraClass)> {
        let mut all = Vec::new();
        all.extend(TRANSIENT.map(|n| (n, OraClass::Transient)));
        all.extend(REMINE_STEP.map(|n| (n, OraClass::RemineStep)));
        all.extend(LOG_PURGED.map(|n| (n, OraClass::LogPurged)));
        all.extend(PRIVILEGE.map(|n| (n, OraClass::Privilege)));
        all.push((1013, OraClass::QueryCancelled));
        all
    }

    #[test]
    fn every_listed_code_has_its_class() {
        for (number, class) in expected() {
            let code = OraCode(number);
            assert_eq!(classify(code, &[]), class, "{code}");
        }
    }

    #[test]
    fn the_table_holds_nothing_else_and_no_code_twice() {
        let expected: HashSet<(u32, OraClass)> = expected().into_iter().collect();
        let table: HashSet<(u32, OraClass)> = CLASSIFICATION
            .iter()
            .map(|(code, class)| (code.0, *class))
            .collect();
        assert_eq!(table.len(), CLASSIFICATION.len(), "a code is listed twice");
        assert_eq!(table, expected);
    }

    #[test]
    fn named_constants() {
        assert_eq!(OraCode::MISSING_LOG_FILE, OraCode(1291));
        assert_eq!(OraCode::END_OF_FILE_ON_COMMUNICATION_CHANNEL, OraCode(3113));
        assert_eq!(OraCode::USER_REQUESTED_CANCEL, OraCode(1013));
        assert_eq!(OraCode::SESSION_KILLED, OraCode(28));
        assert_eq!(OraCode::PLUGGABLE_DATABASE_OPENING, OraCode(16331));
        assert_eq!(OraCode::MISSING_LOG_FILE.name(), Some("MISSING_LOG_FILE"));
        assert_eq!(OraCode(99999).name(), None);
        let numbers: HashSet<OraCode> = NAMES.iter().map(|(code, _)| *code).collect();
        assert_eq!(numbers.len(), NAMES.len(), "two constants share a number");
        for (code, _) in CLASSIFICATION {
            assert!(
                code.name().is_some(),
                "{code} is classified but has no constant"
            );
        }
        // Other codes LogMiner is known to raise (session, dictionary, corruption, memory and
        // flashback errors) are named too.
        for number in [
            1290, 1292, 1306, 1307, 65040, 1371, 1333, 1343, 1347, 1281, 368, 353, 600, 4030, 4036,
            8181, 1555, 1466, 1325, 44613, 1324, 1287, 1358, 6512, 6550,
        ] {
            assert!(
                OraCode(number).name().is_some(),
                "ORA-{number:05} has no constant"
            );
        }
    }

    #[test]
    fn cdc_codes_of_classes() {
        assert_eq!(
            OraClass::Transient.cdc_code(),
            Some(CdcCode::TransientDatabase)
        );
        assert_eq!(
            OraClass::RemineStep.cdc_code(),
            Some(CdcCode::MiningStepRetry)
        );
        assert_eq!(OraClass::LogPurged.cdc_code(), Some(CdcCode::LogPurged));
        assert_eq!(OraClass::Privilege.cdc_code(), Some(CdcCode::Privilege));
        assert_eq!(OraClass::QueryCancelled.cdc_code(), None);
        assert_eq!(OraClass::Unclassified.cdc_code(), None);
    }

    #[test]
    fn classified_codes_are_named_in_their_cdc_condition() {
        for (code, class) in CLASSIFICATION {
            if let Some(cdc) = class.cdc_code() {
                assert!(
                    cdc.condition().contains(&code.to_string()),
                    "{code} is not named in the condition of {}",
                    cdc.id()
                );
            }
        }
    }

    #[test]
    fn extra_codes_only_promote_unclassified_codes() {
        let extra = [
            OraCode(12345),
            OraCode::INSUFFICIENT_PRIVILEGES,
            OraCode::FILE_CANNOT_BE_OPENED,
        ];
        assert_eq!(classify(OraCode(12345), &[]), OraClass::Unclassified);
        assert_eq!(classify(OraCode(12345), &extra), OraClass::Transient);
        assert_eq!(
            classify(OraCode::INSUFFICIENT_PRIVILEGES, &extra),
            OraClass::Privilege
        );
        assert_eq!(
            classify(OraCode::FILE_CANNOT_BE_OPENED, &extra),
            OraClass::LogPurged
        );
        assert_eq!(
            classify(OraCode::SNAPSHOT_TOO_OLD, &[]),
            OraClass::Unclassified
        );
    }

    #[test]
    fn display_pads_to_five_digits() {
        assert_eq!(OraCode(1291).to_string(), "ORA-01291");
        assert_eq!(OraCode(28).to_string(), "ORA-00028");
        assert_eq!(OraCode(65040).to_string(), "ORA-65040");
    }

    #[test]
    fn parse_table() {
        let cases: [(&str, Option<OraCode>); 16] = [
            ("ORA-01291", Some(OraCode(1291))),
            ("ORA-1291", Some(OraCode(1291))),
            ("ora-01291", Some(OraCode(1291))),
            (" Ora-28 ", Some(OraCode(28))),
            ("ORA-00000", Some(OraCode(0))),
            ("ORA-65040", Some(OraCode(65040))),
            ("ORA-", None),
            ("ORA-123456", None),
            ("ORA--1", None),
            ("ORA-+1", None),
            ("ORA-01291:", None),
            ("ORA 01291", None),
            ("01291", None),
            ("", None),
            ("ORA-１", None),
            ("É", None),
        ];
        for (text, code) in cases {
            assert_eq!(OraCode::parse(text), code, "{text:?}");
        }
    }

    #[test]
    fn find_in_driver_messages() {
        let cases: [(&str, Option<OraCode>); 9] = [
            (
                "ORA-01291: missing log file",
                Some(OraCode::MISSING_LOG_FILE),
            ),
            (
                "java.sql.SQLException: ORA-01291: missing log file\nORA-06512: at \"SYS.DBMS_LOGMNR\", line 72",
                Some(OraCode::MISSING_LOG_FILE),
            ),
            ("Error: ora-3113 end-of-file", Some(OraCode(3113))),
            ("(ORA-17002) IO Error", Some(OraCode::IO_ERROR)),
            ("FLORA-01291 is not a code", None),
            (
                "ORA-123456 is too long, ORA-00028 is not",
                Some(OraCode::SESSION_KILLED),
            ),
            ("ORA-: nothing", None),
            ("no code here", None),
            (
                "ünïcödé ORA-01013: user requested cancel",
                Some(OraCode::USER_REQUESTED_CANCEL),
            ),
        ];
        for (message, code) in cases {
            assert_eq!(find_in(message), code, "{message:?}");
        }
    }

    #[test]
    fn classify_message_looks_through_wrappers() {
        let wrapped = "ORA-00604: error occurred at recursive SQL level 1\nORA-01031: insufficient privileges";
        assert_eq!(
            classify_message(wrapped, &[]),
            Some((OraCode::INSUFFICIENT_PRIVILEGES, OraClass::Privilege))
        );
        let backtrace = "ORA-06512: at line 1\nORA-03113: end-of-file on communication channel";
        assert_eq!(
            classify_message(backtrace, &[]),
            Some((
                OraCode::END_OF_FILE_ON_COMMUNICATION_CHANNEL,
                OraClass::Transient
            ))
        );
        let alone = "ORA-00604: error occurred at recursive SQL level 1";
        assert_eq!(
            classify_message(alone, &[]),
            Some((OraCode::RECURSIVE_SQL_ERROR, OraClass::Transient))
        );
        assert_eq!(
            classify_message("ORA-12345: custom", &[OraCode(12345)]),
            Some((OraCode(12345), OraClass::Transient))
        );
        assert_eq!(classify_message("Connection reset", &[]), None);
    }

    #[test]
    fn unclassified_code_stops_at_once_with_cdc_1001() {
        let error = stop_for_unclassified(OraCode(4031), "ORA-04031: unable to allocate\n");
        assert_eq!(error.code(), CdcCode::TransientDatabase);
        assert!(!error.is_retried(), "an unclassified code is never retried");
        let text = error.to_string();
        assert!(text.starts_with("[CDC-1001] ORA-04031 is not a classified database error"));
        assert!(
            text.contains(": ORA-04031: unable to allocate. Operator action: "),
            "{text}"
        );
        assert!(text.ends_with("Runbook: docs/runbooks.md#cdc-1001"));
        let bare = stop_for_unclassified(OraCode(4031), "  ");
        assert!(
            bare.to_string()
                .contains("instead of retrying. Operator action: ")
        );
    }

    proptest! {
        #[test]
        fn display_and_parse_round_trip(number in 0u32..100_000) {
            let code = OraCode(number);
            prop_assert_eq!(OraCode::parse(&code.to_string()), Some(code));
            prop_assert_eq!(OraCode::parse(&format!("ora-{number}")), Some(code));
            let message = format!("java.sql.SQLException: {code}: something\n");
            prop_assert_eq!(find_in(&message), Some(code));
        }

        #[test]
        fn never_panics_on_any_text(text in any::<String>()) {
            let _ = OraCode::parse(&text);
            let _ = find_in(&text);
            let _ = classify_message(&text, &[]);
        }
    }
}
