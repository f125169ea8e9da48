//! Sessions: who runs a transaction (SID, SERIAL#, container, user, redo thread), by the name
//! a scenario or the workload gives it.

use std::fmt;

use serde::Deserialize;

use super::SimDatabase;
use super::transactions::Tx;
use crate::sim::SimError;

/// A session's name (`"S1"`, `"victim"`): any text a scenario or the workload chooses. The
/// database's own sessions, which run DDL, are named `__…`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(transparent)]
pub struct SessionName(String);

impl SessionName {
    /// The session that runs DDL in a container.
    pub(super) fn ddl(con: usize) -> SessionName {
        SessionName(format!("__ddl_{con}"))
    }

    /// Whether the database runs the session itself (DDL), rather than a scenario or the
    /// workload.
    pub(crate) fn is_internal(&self) -> bool {
        self.0.starts_with("__")
    }
}

impl From<&str> for SessionName {
    fn from(name: &str) -> SessionName {
        SessionName(name.to_owned())
    }
}

impl From<String> for SessionName {
    fn from(name: String) -> SessionName {
        SessionName(name)
    }
}

impl fmt::Display for SessionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A connected session.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub sid: u32,
    pub serial: u32,
    pub con: usize,
    pub user: String,
    pub thread: usize,
    pub private_strand: Option<bool>,
    pub(super) tx: Option<Tx>,
}

impl Session {
    /// Whether the session has a transaction open.
    pub fn has_tx(&self) -> bool {
        self.tx.is_some()
    }
}

impl SimDatabase {
    /// The session, opened with its defaults if it does not exist yet.
    pub(super) fn session_mut(&mut self, name: &SessionName) -> Result<&mut Session, SimError> {
        if !self.sessions.contains_key(name) {
            self.begin(name, None, None, None)?;
        }
        self.sessions
            .get_mut(name)
            .ok_or_else(|| SimError::Scenario(format!("no session {name}")))
    }

    /// Opens a session, or re-configures one without an open transaction.
    pub(super) fn begin(
        &mut self,
        name: &SessionName,
        pdb: Option<&str>,
        user: Option<&str>,
        private_strand: Option<bool>,
    ) -> Result<(), SimError> {
        let con = match pdb {
            Some(p) => self
                .containers
                .iter()
                .position(|c| c.name.as_deref() == Some(p))
                .ok_or_else(|| SimError::Scenario(format!("no PDB named {p}")))?,
            None => 0,
        };
        if let Some(s) = self.sessions.get_mut(name) {
            if s.tx.is_some() {
                // a session changes nothing about an open transaction
                return Ok(());
            }
            s.con = con;
            if let Some(u) = user {
                s.user = u.to_owned();
            }
            s.private_strand = private_strand;
            return Ok(());
        }
        let sid = self.next_sid;
        self.next_sid += 1 + self.rng.below(7) as u32;
        let serial = 1000 + self.rng.below(60_000) as u32;
        let thread = sid as usize % self.threads.len().max(1);
        self.sessions.insert(
            name.clone(),
            Session {
                sid,
                serial,
                con,
                user: user.unwrap_or("APP").to_owned(),
                thread,
                private_strand,
                tx: None,
            },
        );
        Ok(())
    }

    /// Whether a session with this SID and SERIAL# exists.
    pub(crate) fn session_alive(&self, sid: u32, serial: u32) -> bool {
        self.sessions
            .values()
            .any(|s| s.sid == sid && s.serial == serial)
    }

    /// The container a session works in.
    pub(crate) fn session_con(&self, session: &SessionName) -> Option<usize> {
        self.sessions.get(session).map(|s| s.con)
    }
}
