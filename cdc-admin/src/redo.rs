//! Whether the redo a resume SCN needs is still there, asked of the database through
//! [`RedoSource`]: the log holding the SCN, the logs after it (a gap or a purge stops the
//! connector with CDC-2001 / CDC-2002), and the oldest log still available.

use cdc_core::Scn;
use cdc_core::config::CdcConfig;
use cdc_logminer::RedoSource;
use cdc_logminer::engine::plan_logs;
use cdc_logminer::source::{LogFile, LogInventoryQuery};
use serde_json::{Value, json};

use crate::error::AdminError;

/// What the database says of the redo from one SCN.
#[derive(Debug, Clone)]
pub struct RedoReport {
    /// The SCN asked about.
    pub scn: Scn,
    /// `V$DATABASE.CURRENT_SCN`.
    pub current_scn: Scn,
    /// The log holding `scn` (any copy listed, purged or not).
    pub holding: Option<LogFile>,
    /// The oldest log not purged.
    pub oldest_available: Option<LogFile>,
    /// Why the redo from `scn` cannot be mined (the connector's own CDC-2001/2002 check), or
    /// `None` when every log from the one holding `scn` on is present.
    pub problem: Option<String>,
}

impl RedoReport {
    pub fn available(&self) -> bool {
        self.problem.is_none()
    }

    /// Whether the log holding `scn` is the oldest one still available: the next purge takes
    /// the redo the resume point needs.
    pub fn needs_oldest(&self) -> bool {
        match (&self.holding, &self.oldest_available) {
            (Some(holding), Some(oldest)) => {
                self.available()
                    && holding.thread == oldest.thread
                    && holding.sequence == oldest.sequence
            }
            _ => false,
        }
    }

    pub fn to_json(&self) -> Value {
        let log = |l: &LogFile| {
            json!({
                "thread": l.thread.to_string(),
                "sequence": l.sequence,
                "first_scn": l.first_scn.0.to_string(),
                "name": l.name,
                "purged": l.is_purged(),
            })
        };
        json!({
            "scn": self.scn.0.to_string(),
            "current_scn": self.current_scn.0.to_string(),
            "available": self.available(),
            "needs_oldest_log": self.needs_oldest(),
            "holding_log": self.holding.as_ref().map(log),
            "oldest_available_log": self.oldest_available.as_ref().map(log),
            "problem": self.problem,
        })
    }

    /// One line per fact, for people.
    pub fn render_text(&self) -> String {
        let describe = |l: &LogFile| {
            format!(
                "thread {} sequence {} from SCN {} ({})",
                l.thread,
                l.sequence,
                l.first_scn,
                l.name.as_deref().unwrap_or("no file name")
            )
        };
        let mut out = String::new();
        out.push_str(&format!(
            "redo from SCN {}: {}\n",
            self.scn,
            match &self.problem {
                None => "available".to_owned(),
                Some(problem) => format!("NOT available: {problem}"),
            }
        ));
        if let Some(log) = &self.holding {
            out.push_str(&format!("  log holding it: {}\n", describe(log)));
        }
        match &self.oldest_available {
            Some(log) => out.push_str(&format!("  oldest log available: {}\n", describe(log))),
            None => out.push_str("  no log is available\n"),
        }
        if self.needs_oldest() {
            out.push_str(
                "  warning: the resume point needs the oldest log available; the next purge \
                 of archived logs stops the connector (CDC-2002)\n",
            );
        }
        out.push_str(&format!("  current SCN: {}\n", self.current_scn));
        out
    }
}

/// Asks `source` about the redo from `scn`.
pub fn check(
    source: &mut dyn RedoSource,
    config: &CdcConfig,
    scn: Scn,
) -> Result<RedoReport, AdminError> {
    let current_scn = source
        .current_scn()
        .map_err(|e| AdminError::Source(e.to_string()))?;
    let query = LogInventoryQuery {
        from: Scn::ZERO,
        mode: config.capture.mode,
        destination: config.capture.archive_destination.clone(),
    };
    let inventory = source
        .log_inventory(&query)
        .map_err(|e| AdminError::Source(e.to_string()))?;
    Ok(report(inventory, config, scn, current_scn))
}

/// The report from a log inventory (pure: the tests give the inventory).
pub fn report(
    inventory: Vec<LogFile>,
    config: &CdcConfig,
    scn: Scn,
    current_scn: Scn,
) -> RedoReport {
    let holding = inventory
        .iter()
        .filter(|l| l.first_scn <= scn && scn < l.next_scn)
        .min_by_key(|l| (l.is_purged(), l.sequence))
        .cloned();
    let oldest_available = inventory
        .iter()
        .filter(|l| !l.is_purged() && l.name.is_some())
        .min_by_key(|l| (l.thread, l.sequence))
        .cloned();
    let problem = match &holding {
        None => Some(match inventory.iter().map(|l| l.first_scn).min() {
            Some(first) if scn < first => format!(
                "no log holds SCN {scn}: the oldest log listed starts at SCN {first}, so the redo \
                 before it is gone"
            ),
            _ => format!("no log holds SCN {scn}"),
        }),
        Some(log) => plan_logs(&inventory, log.sequence, config.capture.mode)
            .err()
            .map(|e| e.to_string()),
    };
    RedoReport {
        scn,
        current_scn,
        holding,
        oldest_available,
        problem,
    }
}
