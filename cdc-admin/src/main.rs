//! `oracle-cdc-admin`: see the crate documentation ([`cdc_admin`]).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use cdc_admin::cli::{Cli, Command, JournalCommand, OffsetsCommand};
use cdc_admin::context::{self, CALL_TIMEOUT};
use cdc_admin::error::EXIT_USAGE;
use cdc_admin::journal::Acknowledged;
use cdc_admin::offsets::{self, OpsWriter, SetRequest, Stored};
use cdc_admin::rest::ConnectClient;
use cdc_admin::signals::{self, GapCheck, PastGap, ResnapshotRequest};
use cdc_admin::transactions::{self, Order};
use cdc_admin::{AdminError, redo};
use cdc_core::{ConXid, Scn};
use clap::Parser;
use serde_json::Value;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return match error.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(EXIT_USAGE),
            };
        }
    };
    match run(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            if cli.global.json {
                print(&serde_json::json!({"error": error.to_string()}).to_string());
            }
            eprintln!("oracle-cdc-admin: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
}

fn emit(json: bool, text: &str, value: &Value) {
    if json {
        print(&serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()));
    } else {
        print(text);
    }
}

fn run(cli: &Cli) -> Result<u8, AdminError> {
    let g = &cli.global;
    let rest = ConnectClient::new(&g.connect, CALL_TIMEOUT);
    let config = || context::connector_config(g.config.as_deref(), &rest, g.name.as_deref());
    match &cli.command {
        Command::Offsets(OffsetsCommand::Show { check_redo }) => {
            let config = config()?;
            let name = rest.resolve(g.name.as_deref())?;
            let position = match offsets::read_stored(&rest, &name, &config)? {
                Stored::None => None,
                Stored::Readable(position) => Some(position),
                Stored::Unreadable(unreadable) => {
                    // what is stored and why it does not read; the connector cannot start
                    let (text, value) = offsets::describe_unreadable(&name, &unreadable);
                    emit(g.json, &text, &value);
                    return Ok(1);
                }
            };
            let redo = match (&position, check_redo) {
                (Some(p), true) => {
                    let mut source = offsets::open_source(&config, Some(p))?;
                    Some(redo::check(&mut source, &config, p.resume)?)
                }
                _ => None,
            };
            let (text, value) = offsets::describe(&name, position.as_ref(), redo.as_ref());
            emit(g.json, &text, &value);
            Ok(0)
        }
        Command::Offsets(OffsetsCommand::Set(args)) => {
            let config = config()?;
            let name = rest.resolve(g.name.as_deref())?;
            let forget_released = args
                .forget_released
                .iter()
                .map(|x| {
                    ConXid::parse(x)
                        .map_err(|e| AdminError::Usage(format!("--forget-released {x}: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let request = SetRequest {
                scn: Scn(args.scn),
                reason: args.reason.clone(),
                operator: context::operator(args.operator.as_deref()),
                allow_skip: args.allow_skip,
                redeliver: args.redeliver,
                forget_released,
                stop_timeout: Duration::from_secs(args.stop_timeout),
                replace_unreadable: args.replace_unreadable,
                command: "offsets set",
            };
            let client = context::kafka_config(&config, g.bootstrap.as_deref())?;
            let stored = match offsets::read_stored(&rest, &name, &config)? {
                Stored::Readable(position) => Some(position),
                Stored::None | Stored::Unreadable(_) => None,
            };
            let mut source = offsets::open_source(&config, stored.as_ref())?;
            let ops = OpsWriter {
                client: &client,
                config: &config,
            };
            let outcome = offsets::set(&rest, &name, &config, &mut source, &ops, &request)?;
            let value = serde_json::json!({
                "connector": name,
                "direction": outcome.direction,
                "previous_resume_scn": outcome.previous.map(|s| s.0.to_string()),
                "new_resume_scn": outcome.position.resume.scn.0.to_string(),
                "offset": Value::Object(outcome.position.to_offset_map()),
                "replaced": outcome.replaced.as_ref().map(|r| serde_json::json!({
                    "error": r.error,
                    "kept": r.kept_fields,
                    "dropped": r.dropped_fields,
                })),
            });
            emit(g.json, &outcome.text, &value);
            Ok(0)
        }
        Command::Resnapshot(args) => {
            let config = config()?;
            let client = context::kafka_config(&config, g.bootstrap.as_deref())?;
            let request = ResnapshotRequest {
                tables: args.tables.clone(),
                predicate: args.predicate.clone(),
                ack_timeout: Duration::from_secs(args.timeout),
                follow: !args.no_follow,
            };
            let mut progress: Box<dyn Write> = if g.json {
                Box::new(std::io::sink())
            } else {
                Box::new(std::io::stdout())
            };
            // the connector the signal is keyed by
            let name = g
                .name
                .clone()
                .unwrap_or_else(|| config.connect.name.clone());
            let outcome = match signals::check_gap(&rest, &name, &config)? {
                GapCheck::Gap(gap) => {
                    let past = PastGap {
                        skip_gap_for_unlisted_tables: args.skip_gap_for_unlisted_tables,
                        operator: context::operator(args.operator.as_deref()),
                        stop_timeout: Duration::from_secs(args.stop_timeout),
                    };
                    signals::resnapshot_past_gap(
                        &rest,
                        &name,
                        &client,
                        &config,
                        gap,
                        &request,
                        &past,
                        &mut *progress,
                    )?
                }
                other => {
                    if let Some(note) = other.note() {
                        eprintln!("oracle-cdc-admin: {note}");
                    }
                    signals::resnapshot(&client, &config, &request, &mut *progress)?
                }
            };
            if g.json {
                emit(true, "", &outcome.to_json());
            }
            Ok(0)
        }
        Command::Transactions(args) => {
            let name = rest.resolve(g.name.as_deref())?;
            let order = if args.oldest {
                Order::Oldest
            } else {
                Order::Largest
            };
            let body = transactions::fetch(&rest, &name, order)?;
            emit(g.json, &transactions::render_text(&body), &body);
            Ok(0)
        }
        Command::Journal(JournalCommand::Inspect) => {
            let config = config()?;
            // with the stored offset's generation, chunks written after it are named orphaned
            // (never acknowledged); with no offset stored the next start is a first start;
            // without a reachable connector the generations are listed
            let acknowledged = match rest
                .resolve(g.name.as_deref())
                .and_then(|name| offsets::read_position(&rest, &name, &config))
            {
                Ok(Some(position)) => Acknowledged::Generation(position.journal_generation),
                Ok(None) => Acknowledged::NoOffset,
                Err(_) => Acknowledged::Unknown,
            };
            let report = cdc_admin::journal::inspect_acknowledged(
                &config,
                g.bootstrap.as_deref(),
                acknowledged,
            )
            .map_err(|e| match e {
                cdc_admin::journal::JournalInspectError::NoBrokers => {
                    AdminError::Usage(e.to_string())
                }
                other => AdminError::Kafka(other.to_string()),
            })?;
            emit(g.json, &report.render_text(), &report.to_json());
            // 1 when a restart would stop with CDC-4002
            Ok(report.restart().exit_status())
        }
        Command::Check(args) => {
            let Some(path) = g.config.as_deref() else {
                return Err(AdminError::Usage(
                    "check needs the connector's configuration: --config FILE".to_owned(),
                ));
            };
            let config = context::read_config_file(path)?;
            let outcome = cdc_admin::check::run(&config, args.resume_scn.map(Scn), g.json)
                .map_err(|e| AdminError::Failed(e.to_string()))?;
            print(&outcome.text);
            Ok(outcome.exit)
        }
    }
}
