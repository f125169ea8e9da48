//! `transactions`: the open transactions of a running connector, from its read-only
//! `/oracle-cdc/connectors/{name}/transactions` resource.

use serde_json::Value;

use crate::error::AdminError;
use crate::rest::ConnectClient;

/// How the list is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Most events first (the resource's order).
    Largest,
    /// Lowest first SCN first.
    Oldest,
}

/// The resource's body, ordered.
pub fn fetch(rest: &ConnectClient, name: &str, order: Order) -> Result<Value, AdminError> {
    let path = format!(
        "/oracle-cdc/connectors/{}/transactions",
        crate::rest::segment(name)
    );
    let mut body = rest.get(&path)?;
    if order == Order::Oldest
        && let Some(list) = body.get_mut("transactions").and_then(Value::as_array_mut)
    {
        list.sort_by_key(|t| scn_of(t.get("first_scn")));
    }
    Ok(body)
}

fn scn_of(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::String(s)) => s.parse().unwrap_or(u64::MAX),
        Some(v) => v.as_u64().unwrap_or(u64::MAX),
        None => u64::MAX,
    }
}

fn text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "-".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

fn age(ms: Option<&Value>) -> String {
    let Some(ms) = ms.and_then(Value::as_u64) else {
        return "-".to_owned();
    };
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86_400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// A table for people.
pub fn render_text(body: &Value) -> String {
    let list = body
        .get("transactions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = format!(
        "{} open transaction(s), {} buffered event(s), mined to SCN {}\n",
        text(body.get("open_transactions")),
        text(body.get("buffered_events")),
        text(body.get("mined_to_scn")),
    );
    if list.is_empty() {
        return out;
    }
    out.push_str(&format!(
        "{:<20} {:<12} {:<14} {:>16} {:>8} {:>10} {}\n",
        "XID", "CONTAINER", "USER", "FIRST SCN", "AGE", "EVENTS", "STORED"
    ));
    for t in &list {
        let mut stored = Vec::new();
        if t.get("spilled").and_then(Value::as_bool) == Some(true) {
            stored.push("spilled");
        }
        if t.get("journaled").and_then(Value::as_bool) == Some(true) {
            stored.push("journaled");
        }
        out.push_str(&format!(
            "{:<20} {:<12} {:<14} {:>16} {:>8} {:>10} {}\n",
            text(t.get("xid")),
            text(t.get("container")),
            text(t.get("user")),
            text(t.get("first_scn")),
            age(t.get("age_ms")),
            text(t.get("events")),
            if stored.is_empty() {
                "memory".to_owned()
            } else {
                stored.join("+")
            }
        ));
    }
    if body.get("truncated").and_then(Value::as_bool) == Some(true) {
        out.push_str("(more transactions are open than the connector lists)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table_shows_each_transaction_and_where_it_is_kept() {
        let body = json!({
            "open_transactions": 2, "buffered_events": 12, "mined_to_scn": "900",
            "transactions": [
                {"xid": "5.1.9", "container": null, "user": "APP", "first_scn": "100",
                 "age_ms": 3_723_000, "events": 10, "spilled": true, "journaled": false},
                {"xid": "6.2.1", "user": "HR", "first_scn": "50", "age_ms": 5000,
                 "events": 2, "spilled": false, "journaled": false},
            ]
        });
        let text = render_text(&body);
        assert!(
            text.starts_with("2 open transaction(s), 12 buffered event(s)"),
            "{text}"
        );
        let rows: Vec<&str> = text.lines().skip(2).collect();
        assert!(
            rows[0].contains("5.1.9") && rows[0].contains("1h02m") && rows[0].ends_with("spilled")
        );
        assert!(rows[1].contains("6.2.1") && rows[1].contains("5s") && rows[1].ends_with("memory"));
    }
}
