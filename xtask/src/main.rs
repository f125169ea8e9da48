//! `cargo x`: the developer tasks of oracle-cdc.
//!
//! - `cargo x ci`: exactly what CI runs: `cargo fmt --check`, clippy over the whole workspace
//!   with warnings denied, and every test, closing with one `N passed, N failed` line.
//! - `cargo x bench [BENCH…]`: the criterion benches (all, or the named bench targets).
//! - `cargo x fuzz decode --seconds N`: the SQL_REDO parser fuzz target.
//!
//! It only sequences cargo commands; every check lives in the crates' own tests.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "\
usage: cargo x <task>

tasks:
  ci                          fmt check, clippy -D warnings, all tests (what CI runs)
  bench [BENCH...]            criterion benches (all, or the named ones: decode, engine,
                              offset_codec)
  fuzz decode --seconds N     fuzz the SQL_REDO parser for N seconds (default 60); needs
                              `cargo install cargo-fuzz --locked` and a C++ compiler
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench(&args[1..]),
        Some("fuzz") => fuzz(&args[1..]),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            Ok(())
        }
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(64);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("cargo x: {message}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    // xtask/ sits directly under the workspace root
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cargo() -> Command {
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(workspace_root());
    cmd
}

fn run(step: &str, mut cmd: Command) -> Result<(), String> {
    println!("==> {step}");
    let status = cmd
        .status()
        .map_err(|e| format!("{step}: could not start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{step} failed ({status})"))
    }
}

fn ci() -> Result<(), String> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    run("cargo fmt --check", fmt)?;

    let mut clippy = cargo();
    // --all-features: the real Oracle source (feature `oracle`) must build and keep its
    // missing-client test without Oracle Instant Client
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]);
    run("cargo clippy -D warnings", clippy)?;

    let mut test = cargo();
    test.args(["test", "--workspace", "--all-targets", "--all-features"]);
    let (passed, failed) = run_counting("cargo test --workspace", test)?;
    // one closing line for the whole workspace: cargo prints a line per test binary, and the
    // last of those may belong to a binary with no tests
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        return Err(format!("{failed} tests failed"));
    }
    Ok(())
}

/// Runs a `cargo test`, passing its output through, and adds up its `test result:` lines.
fn run_counting(step: &str, mut cmd: Command) -> Result<(u64, u64), String> {
    use std::io::{BufRead, BufReader};
    println!("==> {step}");
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{step}: could not start: {e}"))?;
    let (mut passed, mut failed) = (0u64, 0u64);
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("{step}: reading its output: {e}"))?;
            println!("{line}");
            if let Some(rest) = line.strip_prefix("test result: ") {
                passed += count_before(rest, " passed");
                failed += count_before(rest, " failed");
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("{step}: could not wait for it: {e}"))?;
    if status.success() {
        Ok((passed, failed))
    } else {
        println!("{passed} passed, {} failed", failed.max(1));
        Err(format!("{step} failed ({status})"))
    }
}

/// The number just before `label` in a `test result:` line (`ok. 12 passed; 0 failed; …`).
fn count_before(line: &str, label: &str) -> u64 {
    line.find(label)
        .and_then(|end| {
            let start = line[..end].rfind(' ').map_or(0, |i| i + 1);
            line[start..end].parse().ok()
        })
        .unwrap_or(0)
}

fn bench(names: &[String]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["bench", "--workspace"]);
    for name in names {
        cmd.args(["--bench", name]);
    }
    run("cargo bench", cmd)
}

fn fuzz(args: &[String]) -> Result<(), String> {
    let Some(target) = args.first() else {
        return Err("fuzz needs a target, e.g. `cargo x fuzz decode --seconds 60`".into());
    };
    let mut seconds: u64 = 60;
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--seconds" => {
                seconds = rest
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--seconds needs a whole number")?;
            }
            other => return Err(format!("unknown fuzz option {other:?}")),
        }
    }
    let fuzz_dir = match target.as_str() {
        "decode" => workspace_root().join("crates/cdc-logminer/fuzz"),
        other => return Err(format!("unknown fuzz target {other:?}; known: decode")),
    };
    // the corpus grows under corpus/ (not committed); seeds/ holds the reference shapes
    std::fs::create_dir_all(fuzz_dir.join("corpus").join(target))
        .map_err(|e| format!("cannot create the fuzz corpus directory: {e}"))?;
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(&fuzz_dir)
        // cargo-fuzz needs nightly flags; the stable toolchain accepts them this way
        .env("RUSTC_BOOTSTRAP", "1")
        .args(["fuzz", "run", target])
        .arg(format!("corpus/{target}"))
        .arg(format!("seeds/{target}"))
        .arg("--")
        .arg(format!("-max_total_time={seconds}"));
    run(&format!("cargo fuzz run {target} ({seconds} s)"), cmd)
}
