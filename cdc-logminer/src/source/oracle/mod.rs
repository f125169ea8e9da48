//! The real database: `OracleSource` over ODPI-C (the `oracle` crate, feature `oracle`).
//!
//! ```text
//!   OracleSource ── oracle::Connection (one session, NLS set at connect)
//!        │ every statement's text comes from `sql` (pure, shape-tested without a database)
//!        │ errors: ORA-n ──cdc_core::ora──► SourceError::Ora; DPI-1047 ──► ClientLibraryMissing
//!        ├ mine: a watchdog cancels the query at the step timeout (ORA-01013 ──► Timeout)
//!        ├ preflight_facts (`Preflight`, for `oracle-cdc-admin check`): read-only queries of
//!        │ `preflight_sql`, whose rows are read into facts by pure functions
//!        └ snapshot_reader() ──► OracleSnapshotReader: a session of its own for flashback
//!          reads (`snapshot_sql`: the statements, and rows read back as the decoder reads
//!          SQL_REDO literals)
//! ```
//!
//! The SQL text is always compiled so its shape tests run on every machine; the connection
//! code needs the feature. ODPI-C is compiled from the crate's bundled sources, so the build
//! needs no Oracle software; Instant Client is loaded at run time, and without it `connect`
//! fails with [`SourceError::ClientLibraryMissing`](super::SourceError) naming DPI-1047.

pub mod preflight_sql;
pub mod snapshot_sql;
pub mod sql;

#[cfg(feature = "oracle")]
mod client;
#[cfg(feature = "oracle")]
mod preflight;
#[cfg(feature = "oracle")]
mod snapshot;

#[cfg(feature = "oracle")]
pub use client::OracleSource;
#[cfg(feature = "oracle")]
pub use snapshot::OracleSnapshotReader;

use serde::{Deserialize, Serialize};

/// How to reach the database: the `cdc.database.*` keys. `Debug` masks the password.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectOptions {
    /// `cdc.database.url`: an Easy Connect string or a TNS descriptor; overrides host/port/…
    pub url: Option<String>,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub service: Option<String>,
    pub sid: Option<String>,
    pub user: String,
    pub password: String,
    /// `cdc.database.wallet.location`
    pub wallet_location: Option<String>,
    /// Use TCPS.
    pub tls: bool,
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("url", &self.url)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("service", &self.service)
            .field("sid", &self.sid)
            .field("user", &self.user)
            .field("password", &cdc_core::config::MASK)
            .field("wallet_location", &self.wallet_location)
            .field("tls", &self.tls)
            .finish()
    }
}

#[cfg(test)]
mod debug_tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_password() {
        let options = ConnectOptions {
            user: "c##cdc".into(),
            password: "hunter2-secret".into(),
            ..ConnectOptions::default()
        };
        let shown = format!("{options:?} {options:#?}");
        assert!(!shown.contains("hunter2-secret"), "{shown}");
        assert!(shown.contains("c##cdc"), "{shown}");
    }
}

impl ConnectOptions {
    /// The connect string ODPI-C is given.
    pub fn connect_string(&self) -> Result<String, String> {
        if let Some(url) = &self.url {
            return Ok(url.clone());
        }
        let host = self
            .host
            .as_deref()
            .ok_or("cdc.database.host or cdc.database.url is required")?;
        let port = self.port.unwrap_or(1521);
        let protocol = if self.tls { "TCPS" } else { "TCP" };
        let data = match (&self.service, &self.sid) {
            (Some(service), _) => format!("(SERVICE_NAME={service})"),
            (None, Some(sid)) => format!("(SID={sid})"),
            (None, None) => {
                return Err(
                    "cdc.database.host needs cdc.database.service or cdc.database.sid".into(),
                );
            }
        };
        let security = match &self.wallet_location {
            Some(w) => format!("(SECURITY=(MY_WALLET_DIRECTORY={w}))"),
            None => String::new(),
        };
        Ok(format!(
            "(DESCRIPTION=(ADDRESS=(PROTOCOL={protocol})(HOST={host})(PORT={port}))(CONNECT_DATA={data}){security})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_strings() {
        let mut o = ConnectOptions {
            host: Some("db".into()),
            service: Some("FREE".into()),
            user: "c##cdc".into(),
            ..Default::default()
        };
        assert_eq!(
            o.connect_string().unwrap(),
            "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=db)(PORT=1521))(CONNECT_DATA=(SERVICE_NAME=FREE)))"
        );
        o.tls = true;
        o.port = Some(2484);
        o.wallet_location = Some("/w".into());
        assert_eq!(
            o.connect_string().unwrap(),
            "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCPS)(HOST=db)(PORT=2484))(CONNECT_DATA=(SERVICE_NAME=FREE))(SECURITY=(MY_WALLET_DIRECTORY=/w)))"
        );
        o.service = None;
        o.sid = Some("ORCL".into());
        assert!(o.connect_string().unwrap().contains("(SID=ORCL)"));
        o.sid = None;
        assert!(o.connect_string().is_err());
        o.url = Some("db:1521/FREEPDB1".into());
        assert_eq!(o.connect_string().unwrap(), "db:1521/FREEPDB1");
    }
}
