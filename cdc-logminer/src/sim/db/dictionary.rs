//! Dictionary builds (`DBMS_LOGMNR_D.BUILD(OPTIONS => DBMS_LOGMNR_D.STORE_IN_REDO_LOGS)`): the
//! dictionary of the moment written into the redo, and what a LogMiner session that loads it
//! (`DICT_FROM_REDO_LOGS + DDL_DICT_TRACKING`) knows of each table.
//!
//! ```text
//!   build ──► snapshot (every table's layout version at the build's SCN)
//!         ──► Dictionary records in the current log of thread 1, `dictionary_build_bytes` of
//!             them; a full log switches and the build goes on in the next one
//!         ──► DICTIONARY_BEGIN on the first log, DICTIONARY_END on the last (V$ARCHIVED_LOG)
//!   session with the build ──► RedoDictionary: a version is named if the build knew it or a
//!                              DDL after the build (tracked from the redo) made it
//! ```

use std::collections::BTreeMap;

use cdc_core::ora::OraCode;
use cdc_core::{Scn, Xid};

use super::SimDatabase;
use super::records::{Body, Group, Record};
use crate::sim::SimError;
use crate::source::DictionaryBuild;

/// The bytes of one dictionary record: a build is written as records of this size.
const RECORD_BYTES: u64 = 4096;

/// What PL/SQL answers a BUILD by a user without EXECUTE on DBMS_LOGMNR_D: the package's name
/// does not resolve, so the block does not compile (the columns are those of the Oracle
/// source's statement, `source::oracle::sql::BUILD_DICTIONARY`).
pub const BUILD_WITHOUT_GRANT: &str = "ORA-06550: line 1, column 38:\n\
PLS-00201: identifier 'DBMS_LOGMNR_D.STORE_IN_REDO_LOGS' must be declared\n\
ORA-06550: line 1, column 7:\nPL/SQL: Statement ignored";

/// A build the database wrote: its SCNs, where its records are, and what it knew.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BuildInfo {
    pub build: DictionaryBuild,
    /// Indexes into the database's logs of the first and the last log holding its records
    /// (consecutive sequences of thread 1).
    pub first_log: usize,
    pub last_log: usize,
    /// Per container, per table (by index, as the container lists them at the build): the
    /// layout version current at the build, or `None` for a table dropped before it.
    pub tables: Vec<Vec<Option<usize>>>,
}

/// The dictionary of a LogMiner session started with a build: the build's snapshot, carried
/// through the DDL after it (DDL_DICT_TRACKING).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RedoDictionary {
    /// Per (container index, table index): the oldest layout version the session can name.
    /// A table the build did not list was created after it (its CREATE is in the session's
    /// redo, which has no gap after the build): every version is named. A table dropped
    /// before the build is not known at all.
    known: BTreeMap<(usize, usize), Option<usize>>,
    tables_at_build: Vec<usize>,
}

impl RedoDictionary {
    pub(crate) fn of(build: &BuildInfo) -> RedoDictionary {
        let mut known = BTreeMap::new();
        for (con, tables) in build.tables.iter().enumerate() {
            for (table, version) in tables.iter().enumerate() {
                known.insert((con, table), *version);
            }
        }
        RedoDictionary {
            known,
            tables_at_build: build.tables.iter().map(Vec::len).collect(),
        }
    }

    /// Whether the session names rows of `table` written under layout `version`: the build
    /// knew that version or an older one of the table (the later ones came by DDL it
    /// tracked), or the table was created after the build.
    pub(crate) fn names(&self, con: usize, table: usize, version: usize) -> bool {
        match self.known.get(&(con, table)) {
            Some(Some(at_build)) => version >= *at_build,
            Some(None) => false,
            None => self
                .tables_at_build
                .get(con)
                .is_none_or(|listed| table >= *listed),
        }
    }

    /// Whether the session knows the table at all (a table dropped before the build is
    /// `"UNKNOWN"."OBJ# n"` to it).
    pub(crate) fn knows_table(&self, con: usize, table: usize) -> bool {
        !matches!(self.known.get(&(con, table)), Some(None))
    }
}

impl SimDatabase {
    /// Runs a dictionary build: the dictionary as of now, written into the redo of thread 1.
    /// Without the grant (`dictionary_build_grant` false) it fails as PL/SQL does
    /// ([`BUILD_WITHOUT_GRANT`]).
    pub fn build_dictionary(&mut self) -> Result<DictionaryBuild, SimError> {
        if !self.config.dictionary_build_grant {
            return Err(SimError::Ora(
                OraCode::PLSQL_COMPILATION_ERROR,
                BUILD_WITHOUT_GRANT.into(),
            ));
        }
        self.clock.advance_nanos(1_000 + self.rng.below(50_000));
        let start_scn = Scn(self.scn);
        let tables = self
            .containers
            .iter()
            .map(|c| {
                c.tables
                    .iter()
                    .map(|t| (!t.dropped).then(|| t.version()))
                    .collect()
            })
            .collect();
        let id = self.builds.len();
        let mut remaining = self.config.dictionary_build_bytes.max(1);
        let (mut first_log, mut last_log) = (None, 0);
        while remaining > 0 {
            let bytes = remaining.min(RECORD_BYTES);
            remaining -= bytes;
            let scn = self.next_scn();
            let Some(&log) = self.current.first() else {
                break;
            };
            // the record lands in the log current now; a switch it causes comes after it
            first_log.get_or_insert(log);
            last_log = log;
            let record = Record {
                scn,
                time: self.clock.now(),
                xid: Xid::ZERO,
                con: 0,
                ssn: 0,
                rollback: false,
                zero_rs_id: false,
                user: "SYS".into(),
                sid: 0,
                serial: 0,
                body: Body::Dictionary { build: id, bytes },
            };
            self.write_group(
                0,
                Group {
                    records: vec![record],
                },
            );
        }
        let first_log = first_log.unwrap_or(last_log);
        if let Some(log) = self.logs.get_mut(first_log) {
            log.dictionary_begin = true;
        }
        if let Some(log) = self.logs.get_mut(last_log) {
            log.dictionary_end = true;
        }
        let build = DictionaryBuild {
            start_scn,
            end_scn: Scn(self.scn),
        };
        self.builds.push(BuildInfo {
            build,
            first_log,
            last_log,
            tables,
        });
        Ok(build)
    }

    /// The builds written so far, oldest first.
    pub(crate) fn builds(&self) -> &[BuildInfo] {
        &self.builds
    }
}
