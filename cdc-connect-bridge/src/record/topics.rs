//! Topic names: the table topic from `cdc.topic.template` (sanitised by cdc-core's
//! [`TopicTemplate::render`]) and the side topics resolved at validation.

use std::collections::HashMap;

use cdc_core::TableId;
use cdc_core::config::TopicTemplate;

use crate::record::error::BridgeError;

/// The topic of a table's records. `database` stands for `${database}`, and for `${pdb}` in a
/// non-CDB.
pub fn table_topic(template: &TopicTemplate, database: &str, table: &TableId) -> String {
    template.render(database, table.pdb.as_deref(), &table.owner, &table.table)
}

/// The side topics (`cdc.ops.topic`, …), `${prefix}` already replaced by the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideTopics {
    pub ops: String,
    pub heartbeat: String,
    pub dlq: String,
    pub schema: String,
    pub signals: String,
    pub txjournal: String,
    pub transactions: String,
}

/// An injective stand-in for a name that only uses topic characters, so two tables render to
/// the same stand-in topic only when the template itself joins them.
fn escaped(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.push_str(&format!("-{:x}-", u32::from(c)));
        }
    }
    out
}

/// Which table owns each topic: a template may route several tables to one topic on purpose
/// (no `${table}`), but two tables that meet only because sanitising made their names equal
/// stop with CDC-6004.
#[derive(Debug, Default)]
pub struct TopicOwners {
    owners: HashMap<String, TableId>,
}

impl TopicOwners {
    pub fn claim(
        &mut self,
        template: &TopicTemplate,
        database: &str,
        table: &TableId,
        topic: &str,
    ) -> Result<(), BridgeError> {
        let Some(owner) = self.owners.get(topic) else {
            self.owners.insert(topic.to_owned(), table.clone());
            return Ok(());
        };
        if owner == table {
            return Ok(());
        }
        let stand_in = |t: &TableId| {
            template.render(
                &escaped(database),
                t.pdb.as_deref().map(escaped).as_deref(),
                &escaped(&t.owner),
                &escaped(&t.table),
            )
        };
        if stand_in(owner) == stand_in(table) {
            return Ok(());
        }
        Err(BridgeError::NameCollision {
            what: "the topics of tables",
            first: owner.to_string(),
            second: table.to_string(),
            name: topic.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_and_sanitising() {
        let cdb = TopicTemplate::parse("${prefix}.${pdb}.${schema}.${table}", "cdc").unwrap();
        let t = TableId::new("APP", "ORDERS").in_pdb("FREEPDB1");
        assert_eq!(table_topic(&cdb, "FREE", &t), "cdc.FREEPDB1.APP.ORDERS");
        let plain = TopicTemplate::parse("${prefix}.${schema}.${table}", "cdc").unwrap();
        let odd = TableId::new("APP", "Order Lines$2");
        assert_eq!(table_topic(&plain, "FREE", &odd), "cdc.APP.Order_Lines_2");

        let mut owners = TopicOwners::default();
        let a = TableId::new("APP", "A B");
        let b = TableId::new("APP", "A$B");
        let topic = table_topic(&plain, "DB", &a);
        assert_eq!(topic, table_topic(&plain, "DB", &b));
        owners.claim(&plain, "DB", &a, &topic).unwrap();
        owners.claim(&plain, "DB", &a, &topic).unwrap();
        let err = owners.claim(&plain, "DB", &b, &topic).unwrap_err();
        assert_eq!(err.code(), cdc_core::CdcCode::NameCollision);

        // one topic for every table of a schema, on purpose
        let merged = TopicTemplate::parse("${prefix}.${schema}.all", "cdc").unwrap();
        let mut owners = TopicOwners::default();
        owners.claim(&merged, "DB", &a, "cdc.APP.all").unwrap();
        owners.claim(&merged, "DB", &b, "cdc.APP.all").unwrap();
    }
}
