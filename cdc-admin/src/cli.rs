//! The command line (clap). Every command and flag here is what the docs may show.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::rest::DEFAULT_CONNECT;

#[derive(Debug, Parser)]
#[command(
    name = "oracle-cdc-admin",
    version,
    about = "Show and move an oracle-cdc connector's offsets, steer its snapshots, look inside it, \
             and check a database before the first start",
    long_about = "Show and move an oracle-cdc connector's offsets, steer its snapshots, look \
inside it, and check a database before the first start.\n\nIt talks to the running oracle-cdc \
through its REST API (--connect), to Kafka for the topics it reads and writes (--bootstrap, or \
the connector's configuration), and to the database through --config (Oracle, or the \
simulator). Exit status: 0 done, 1 refused or failed, 64 usage; `check`: 0 ready, 1 blocking, 2 \
warnings; `journal inspect`: 1 when a restart would stop with CDC-4002."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// The connector's REST API.
    #[arg(long, global = true, value_name = "URL", default_value = DEFAULT_CONNECT)]
    pub connect: String,
    /// The connector, when the worker runs more than one.
    #[arg(long, global = true, value_name = "NAME")]
    pub name: Option<String>,
    /// The connector's configuration file (.properties or .json): the database connection,
    /// the Kafka client settings and the topic names. Without it they are read from the
    /// running connector (whose passwords the REST API does not show).
    #[arg(long, short, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Kafka brokers (host:port,…) instead of the configuration's.
    #[arg(long, global = true, value_name = "HOST:PORT")]
    pub bootstrap: Option<String>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The stored offset: show it, or move it.
    #[command(subcommand)]
    Offsets(OffsetsCommand),
    /// Snapshot tables again: writes a `snapshot` signal, waits for its `signal-ack`, then
    /// follows the snapshot until it completes. When the connector is stopped or failed
    /// because the redo from its resume point is gone (CDC-2001/2002), first moves its offset
    /// to the current SCN, past the gap, if every captured table is listed (or
    /// --skip-gap-for-unlisted-tables).
    Resnapshot(ResnapshotArgs),
    /// The connector's open transactions, largest first.
    Transactions(TransactionsArgs),
    /// The transaction journal topic, read directly from Kafka.
    #[command(subcommand)]
    Journal(JournalCommand),
    /// Checks a database before the first start: each finding with the SQL that fixes it,
    /// the capture user's grants among them (CREATE SESSION, LOGMINING, EXECUTE on
    /// DBMS_LOGMNR, SELECT on the V$, GV$ and DBA_ views read). A view the check itself may
    /// not read is a blocking finding with its GRANT, and the other checks go on. Exit status
    /// 0 ready, 1 blocking (or a database it cannot connect to), 2 warnings only.
    Check(CheckArgs),
}

#[derive(Debug, Subcommand)]
pub enum OffsetsCommand {
    /// The stored position in words: resume point, last acknowledged commit, database,
    /// released XIDs, snapshot state, pending tables. An offset the connector cannot read
    /// (CDC-3002) is printed as stored, with why, and the exit status is 1.
    Show {
        /// Also ask the database (--config) whether the logs the resume point needs are still
        /// available, and which is the oldest.
        #[arg(long)]
        check_redo: bool,
    },
    /// Moves the resume point: stop → read → edit → PATCH → resume, refusing an SCN above the
    /// current SCN or whose redo is purged. An offset the connector cannot read is replaced
    /// only with --replace-unreadable.
    Set(SetArgs),
}

#[derive(Debug, Args)]
pub struct SetArgs {
    /// The new resume SCN.
    #[arg(long, value_name = "N")]
    pub scn: u64,
    /// Why (recorded in the `offsets-set` ops events).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Allow a move forward: the changes in between are not delivered.
    #[arg(long)]
    pub allow_skip: bool,
    /// Deliver the acknowledged transactions after the new SCN again (clears the last-commit
    /// fields and the event index).
    #[arg(long)]
    pub redeliver: bool,
    /// Remove these transactions (`con:usn.slot.sqn`) from `released_xids` (CDC-7001).
    #[arg(long, value_name = "XID", num_args = 1..)]
    pub forget_released: Vec<String>,
    /// The operator recorded in the ops events (default: $USER).
    #[arg(long, value_name = "NAME")]
    pub operator: Option<String>,
    /// How long the connector may take to stop, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub stop_timeout: u64,
    /// Replace a stored offset the connector cannot read (CDC-3002: empty, unversioned, newer
    /// version, bad snapshot block) with a fresh one at --scn, keeping what still reads of
    /// dbid and resetlogs_scn (checked against the database), journal_generation,
    /// released_xids, signal_offset and the fields this version does not know; the rest is
    /// dropped, and the output names each.
    #[arg(long, conflicts_with = "redeliver")]
    pub replace_unreadable: bool,
}

#[derive(Debug, Args)]
pub struct ResnapshotArgs {
    /// Table patterns: regular expressions matched against whole `OWNER.TABLE` (or
    /// `PDB.OWNER.TABLE`) names, as `cdc.tables.include` is.
    #[arg(long, value_name = "PATTERN", num_args = 1.., required = true)]
    pub tables: Vec<String>,
    /// A SQL condition every snapshotted row meets.
    #[arg(long, value_name = "SQL")]
    pub predicate: Option<String>,
    /// Return once the signal is acknowledged, without following the snapshot.
    #[arg(long)]
    pub no_follow: bool,
    /// How long to wait for the acknowledgement, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,
    /// When moving past a gap: accept that the captured tables the patterns do not list lose
    /// the changes between the resume point and the current SCN.
    #[arg(long)]
    pub skip_gap_for_unlisted_tables: bool,
    /// When moving past a gap: the operator recorded in the `offsets-set` ops events
    /// (default: $USER).
    #[arg(long, value_name = "NAME")]
    pub operator: Option<String>,
    /// When moving past a gap: how long the connector may take to stop, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub stop_timeout: u64,
}

#[derive(Debug, Args)]
pub struct TransactionsArgs {
    /// Oldest first instead of largest first.
    #[arg(long)]
    pub oldest: bool,
}

#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// The journal's open transactions, chunks, generations and sizes; damaged or orphaned
    /// chunks named; and what a restart would make of it. Exit status 1 when a restart would
    /// stop with CDC-4002 (a gap or a damaged chunk of an open transaction, a key that does
    /// not read), 0 when it would rebuild cleanly.
    Inspect,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Also check that the archived logs reach back to this resume SCN.
    #[arg(long, value_name = "N")]
    pub resume_scn: Option<u64>,
}
