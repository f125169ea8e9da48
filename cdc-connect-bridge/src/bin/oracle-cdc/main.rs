//! `oracle-cdc`: runs an Oracle change-data-capture connector beside Kafka, in the place a
//! Kafka Connect worker would run it, or a self-contained demo.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

mod demo;

use cdc_connect_bridge::kafka::KafkaClients;
use cdc_connect_bridge::operator::connector::Connector;
use cdc_connect_bridge::operator::control::ConnectorControl;
use cdc_connect_bridge::operator::loggers::LogLevels;
use cdc_connect_bridge::operator::rest::{RestApi, ServerInfo};
use cdc_core::config::Config;
use clap::{Parser, Subcommand};

use crate::demo::{DemoOptions, run_demo};

/// mimalloc rather than glibc's malloc: the pipeline allocates and frees small values for every
/// row (mined rows, decoded values, records), and glibc's malloc and free were about a quarter
/// of the engine's instructions. Built with the feature `malloc-override` (as the README builds
/// it), it also serves the process's C allocations, librdkafka's copy of each record among them
/// (−10 % of the delivery thread's instructions).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit code of a command line or configuration mistake.
const EXIT_USAGE: u8 = 64;

/// Exit code of a stop (SIGINT, SIGTERM) that the task did not finish within
/// `cdc.shutdown.timeout.ms`: the process exited without it.
const EXIT_STOP_FORCED: i32 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "oracle-cdc",
    version,
    about = "Oracle change data capture to Kafka: every committed change, exactly once, in commit order",
    long_about = "Oracle change data capture to Kafka: every committed change, exactly once, in \
commit order.\n\nMines the Oracle redo log with LogMiner and delivers every committed row change \
to Kafka topics (one per table, Debezium-compatible JSON), with its offsets in a Kafka \
Connect-format offsets topic and Kafka Connect's REST API for status, stop/pause/resume and \
offsets.\n\nNew here? `oracle-cdc demo` runs a simulated database through the whole pipeline \
into an in-process Kafka in under a minute. Then write a connector configuration (see \
docs/configuration.md) and start it with `oracle-cdc run --config connector.properties`."
)]
struct Cli {
    /// How log lines are written to stderr: `text` (coloured on a terminal only) or `json`
    /// (one JSON object per line, for log shippers).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// How this process reports a failure it exits with: on stderr as a line of text, or, with
/// `--log-format json`, as a log record like every other line.
static LOG_FORMAT: std::sync::OnceLock<LogFormat> = std::sync::OnceLock::new();

fn report_failure(message: &str) {
    if LOG_FORMAT.get() == Some(&LogFormat::Json) {
        tracing::error!(error = %message, "oracle-cdc is exiting");
    } else {
        eprintln!("oracle-cdc: {message}");
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a connector until SIGINT or SIGTERM.
    #[command(
        long_about = "Runs the connector a configuration describes: a Java properties file \
(connector.properties), the `config` object of a Kafka Connect JSON body \
({\"name\": …, \"config\": {…}}) or a flat JSON object. Every problem in the configuration is \
reported at once, naming the key. The REST API listens on cdc.rest.listen \
(127.0.0.1:8083 by default). SIGINT/SIGTERM stop it cleanly: the open Kafka transaction is \
finished or aborted, what Kafka acknowledged is committed, and it exits 0."
    )]
    Run {
        /// The connector configuration: .properties or .json.
        #[arg(long, short, value_name = "FILE")]
        config: PathBuf,
        /// Exit with status 1 when the task fails, instead of staying up in FAILED state
        /// (for process supervisors such as systemd or Kubernetes).
        #[arg(long)]
        exit_on_failure: bool,
    },
    /// Run the simulator's workload through the connector into Kafka and summarise what
    /// arrived.
    Demo {
        /// A Kafka broker to use (host:port) instead of an in-process mock cluster.
        #[arg(long, value_name = "HOST:PORT")]
        bootstrap: Option<String>,
        /// Row changes the simulated database makes.
        #[arg(long, default_value_t = 2000)]
        changes: u64,
        /// Seed of the simulated database: the same seed makes the same redo.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Records to print at the end.
        #[arg(long, default_value_t = 3)]
        show: usize,
        /// Deliver at least once instead of exactly once.
        #[arg(long)]
        at_least_once: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let log_levels = init_logging(cli.log_format);
    cdc_connect_bridge::memory::prefer_small_pages();
    match cli.command {
        Command::Run {
            config,
            exit_on_failure,
        } => run(&config, exit_on_failure, log_levels),
        Command::Demo {
            bootstrap,
            changes,
            seed,
            show,
            at_least_once,
        } => {
            let options = DemoOptions {
                bootstrap,
                changes,
                seed,
                show,
                exactly_once: !at_least_once,
                ..DemoOptions::default()
            };
            let mut stdout = std::io::stdout();
            match run_demo(&options, &mut stdout) {
                Ok(_) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("{error}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// Installs the stderr subscriber with a filter the REST API can change
/// (`/admin/loggers`): `RUST_LOG` when it is valid, else `info,rdkafka=warn`.
fn init_logging(format: LogFormat) -> Arc<LogLevels> {
    use std::io::IsTerminal as _;
    use tracing_subscriber::EnvFilter;
    let _ = LOG_FORMAT.set(format);
    let spec = std::env::var(EnvFilter::DEFAULT_ENV)
        .ok()
        .filter(|spec| !spec.trim().is_empty() && EnvFilter::try_new(spec).is_ok())
        .unwrap_or_else(|| "info,rdkafka=warn".to_owned());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(&spec))
        .with_writer(std::io::stderr);
    let levels = match format {
        LogFormat::Text => {
            let builder = builder
                .with_ansi(std::io::stderr().is_terminal())
                .with_filter_reloading();
            let levels = LogLevels::with_reload_handle(&spec, builder.reload_handle());
            builder.init();
            levels
        }
        LogFormat::Json => {
            let builder = builder.json().with_ansi(false).with_filter_reloading();
            let levels = LogLevels::with_reload_handle(&spec, builder.reload_handle());
            builder.init();
            levels
        }
    };
    Arc::new(levels)
}

/// What the operator should know before the connector starts: the configuration's warnings
/// (reserved keys, keys without effect, duplicates).
fn log_start_warnings(config: &cdc_core::config::CdcConfig) {
    for warning in config.warnings() {
        tracing::warn!(key = %warning.key, kind = ?warning.kind, "{}", warning.message);
    }
}

/// Reads a configuration file: Java properties, or JSON (a Connect body or a flat object).
fn read_config(path: &Path) -> Result<Config, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let parsed = if text.trim_start().starts_with('{') {
        Config::from_connect_json(&text)
    } else {
        Config::from_properties(&text)
    };
    parsed.map_err(|e| format!("{}: {e}", path.display()))
}

fn run(path: &Path, exit_on_failure: bool, log_levels: Arc<LogLevels>) -> ExitCode {
    let given = match read_config(path) {
        Ok(config) => config,
        Err(message) => {
            report_failure(&message);
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let config = match given.validate_for_delivery() {
        Ok(config) => config,
        Err(errors) => {
            report_failure(&format!(
                "{} is not a valid configuration:\n{errors}",
                path.display()
            ));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    log_start_warnings(&config);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            report_failure(&format!("cannot start the runtime: {error}"));
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve(config, given, exit_on_failure, log_levels))
}

async fn serve(
    config: cdc_core::config::CdcConfig,
    given: Config,
    exit_on_failure: bool,
    log_levels: Arc<LogLevels>,
) -> ExitCode {
    let listen = config.rest.listen.to_string();
    let listener = match tokio::net::TcpListener::bind(&listen).await {
        Ok(listener) => listener,
        Err(error) => {
            report_failure(&format!(
                "cannot listen on {listen} (cdc.rest.listen): {error}"
            ));
            return ExitCode::FAILURE;
        }
    };
    let worker_id = listener
        .local_addr()
        .map_or(listen.clone(), |a| a.to_string());
    tracing::info!(rest = %worker_id, connector = %config.connect.name, "oracle-cdc starting");
    let info = ServerInfo::default();
    if let Ok(clients) = KafkaClients::from_config(&config)
        && let Err(error) = info.kafka_cluster_id.learn_in_background(clients)
    {
        tracing::warn!(%error, "the Kafka cluster id will not be learnt (GET / shows null)");
    }
    let connector = Arc::new(Connector::new(config, &given, worker_id));

    let (rest_stop, rest_stopped) = tokio::sync::oneshot::channel::<()>();
    let control: Arc<dyn ConnectorControl> = Arc::clone(&connector) as Arc<dyn ConnectorControl>;
    let api = RestApi::new(control)
        .with_info(info)
        .with_loggers(log_levels);
    let rest = tokio::spawn(api.serve(listener, async move {
        let _ = rest_stopped.await;
    }));

    let on_signal = Arc::clone(&connector);
    let shutdown_timeout = connector.config().poll.shutdown_timeout;
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("stopping: finishing the open Kafka transaction and committing offsets");
        on_signal.shutdown();
        // whatever the task waits on (a broker, a mining step), the stop is honoured in time:
        // exiting is as safe as a kill, the next start resumes from the committed offset
        tokio::time::sleep(shutdown_timeout).await;
        let message = format!(
            "the task did not stop within cdc.shutdown.timeout.ms ({} ms); exiting without \
             waiting for it: nothing is lost, the next start resumes from the last committed \
             offset",
            shutdown_timeout.as_millis()
        );
        report_failure(&message);
        std::process::exit(EXIT_STOP_FORCED);
    });

    let supervisor = Arc::clone(&connector);
    let outcome = tokio::task::spawn_blocking(move || supervisor.supervise(exit_on_failure)).await;
    let _ = rest_stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), rest).await;
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(error)) => {
            report_failure(&error.to_string());
            ExitCode::FAILURE
        }
        Err(_) => ExitCode::FAILURE,
    }
}

/// SIGINT (Ctrl-C) or SIGTERM.
async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
