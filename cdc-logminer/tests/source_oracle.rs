//! The real source without Oracle Instant Client: connecting fails with the typed DPI-1047
//! error that says how to install the client, never a panic. Runs with `--features oracle`.
#![cfg(feature = "oracle")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cdc_logminer::source::SourceError;
use cdc_logminer::source::oracle::{ConnectOptions, OracleSource};

fn instant_client_installed() -> bool {
    let dirs = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    dirs.split(':')
        .chain([
            "/usr/lib",
            "/usr/lib64",
            "/usr/local/lib",
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/oracle",
        ])
        .any(|d| std::path::Path::new(d).join("libclntsh.so").exists())
}

#[test]
fn missing_instant_client_is_dpi_1047() {
    let options = ConnectOptions {
        host: Some("127.0.0.1".into()),
        port: Some(1),
        service: Some("FREEPDB1".into()),
        user: "c##cdc".into(),
        password: "secret".into(),
        ..ConnectOptions::default()
    };
    let result = std::panic::catch_unwind(|| OracleSource::connect(options));
    let result = result.expect("connecting must not panic");
    let err = result.expect_err("no database listens on port 1");
    if instant_client_installed() {
        // with a client, the failure is a connection error instead
        assert!(
            !matches!(err, SourceError::ClientLibraryMissing { .. }),
            "{err}"
        );
        return;
    }
    match &err {
        SourceError::ClientLibraryMissing { message, help } => {
            assert!(message.contains("DPI-1047"), "{message}");
            assert!(help.contains("Instant Client"));
        }
        other => panic!("expected ClientLibraryMissing, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("DPI-1047") && text.contains("Instant Client"),
        "{text}"
    );
    assert!(!text.contains("secret"), "the password never appears");
}
