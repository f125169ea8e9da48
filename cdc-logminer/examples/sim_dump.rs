//! Prints the simulated V$LOGMNR_CONTENTS rows of a seeded workload as JSON lines, in redo
//! order, one object per row keyed by Oracle's column names.
//!
//! ```text
//! cargo run -p cdc-logminer --example sim_dump -- --seed 7 --changes 200 [--pdbs FREEPDB1,FREEPDB2]
//!     [--faults none] [--scenario FILE] [--exclude-user ETL_BATCH] [--truth]
//! ```
//!
//! Every table of every container is captured (HR.AUDIT_LOG too), so what is printed is what
//! a query for all of them returns. `--truth` prints the ground truth (committed transactions
//! as JSON lines) instead. The same arguments always print the same bytes.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use cdc_logminer::sim::source::mine_all;
use cdc_logminer::sim::{
    Scenario, SimConfig, SimDatabase, SimSource, Workload, WorkloadConfig, row_to_json,
};

#[derive(Debug)]
struct Args {
    seed: u64,
    changes: u64,
    pdbs: Vec<String>,
    scenario: Option<String>,
    exclude: Vec<String>,
    truth: bool,
}

fn usage() -> &'static str {
    "usage: sim_dump [--seed N] [--changes M] [--pdbs A,B] [--faults none] [--scenario FILE] [--exclude-user U] [--truth]"
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        seed: 1,
        changes: 100,
        pdbs: Vec::new(),
        scenario: None,
        exclude: Vec::new(),
        truth: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value\n{}", usage()))
        };
        match flag.as_str() {
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--changes" => {
                args.changes = value()?.parse().map_err(|e| format!("--changes: {e}"))?
            }
            "--pdbs" => {
                args.pdbs = value()?
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            }
            "--faults" => {
                let v = value()?;
                if v != "none" {
                    return Err(format!(
                        "--faults {v}: only `none` is meaningful for a dump (faults fail the query)"
                    ));
                }
            }
            "--scenario" => args.scenario = Some(value()?),
            "--exclude-user" => args.exclude.push(value()?),
            "--truth" => args.truth = true,
            "--help" | "-h" => return Err(usage().to_owned()),
            other => return Err(format!("unknown argument {other}\n{}", usage())),
        }
    }
    Ok(args)
}

fn run(args: Args) -> Result<(), String> {
    let mut source = match &args.scenario {
        Some(path) => Scenario::load(std::path::Path::new(path))
            .and_then(Scenario::play)
            .map_err(|e| e.to_string())?,
        None => {
            let config = SimConfig {
                seed: args.seed,
                pdbs: args.pdbs.clone(),
                ..SimConfig::default()
            };
            let db = SimDatabase::new(config).map_err(|e| e.to_string())?;
            let workload = Workload::random(WorkloadConfig {
                seed: args.seed,
                changes: args.changes,
                ..WorkloadConfig::default()
            });
            let mut source = SimSource::with_workload(db, workload, 0);
            while source.advance(1024).map_err(|e| e.to_string())? {}
            source
        }
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.truth {
        for tx in &source.database().truth().transactions {
            let line = serde_json::to_string(tx).map_err(|e| e.to_string())?;
            writeln!(out, "{line}").map_err(|e| e.to_string())?;
        }
    } else {
        let rows = mine_all(&mut source, &|_| true, &args.exclude).map_err(|e| e.to_string())?;
        for row in &rows {
            writeln!(out, "{}", row_to_json(row)).map_err(|e| e.to_string())?;
        }
    }
    out.flush().map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    match parse().and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sim_dump: {e}");
            ExitCode::FAILURE
        }
    }
}
