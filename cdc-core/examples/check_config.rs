//! Validates a connector configuration and prints what the connector would run with.
//!
//! ```sh
//! cargo run -p cdc-core --example check_config -- connector.properties
//! cargo run -p cdc-core --example check_config -- connector.json
//! ```
//!
//! A `.properties` file or a Kafka Connect JSON body (`{"name": …, "config": {…}}`) is read;
//! every problem is reported at once, each naming its key. Exit status: 0 valid, 1 invalid,
//! 64 usage.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use cdc_core::config::Config;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: check_config <connector.properties | connector.json>");
        return ExitCode::from(64);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let parsed = if text.trim_start().starts_with('{') {
        Config::from_connect_json(&text)
    } else {
        Config::from_properties(&text)
    };
    let config = match parsed {
        Ok(config) => config,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match config.validate() {
        Ok(valid) => {
            for warning in valid.warnings() {
                eprintln!("warning: {warning}");
            }
            println!("{path}: valid. The connector would run with (secrets masked):");
            println!("{valid:#?}");
            ExitCode::SUCCESS
        }
        Err(errors) => {
            eprintln!("{path}: {} problem(s):", errors.errors().len());
            eprintln!("{errors}");
            ExitCode::FAILURE
        }
    }
}
