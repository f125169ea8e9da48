//! Topic names: `${prefix}` substitution, the per-table template and sanitising.
//!
//! Side topics (`cdc.ops.topic`, …) are fixed names, resolved once at validation and checked
//! against Kafka's rules. Table topics come from `cdc.topic.template`, rendered per table; the
//! database supplies the names, so there characters Kafka forbids become `_` instead of failing.

use std::fmt;

use super::values::is_topic_char;

/// The longest topic name Kafka accepts.
pub const MAX_TOPIC_LEN: usize = 249;

/// Replaces every character Kafka forbids in a topic name (outside `[a-zA-Z0-9._-]`) by `_`.
pub fn sanitize_topic_name(name: &str) -> String {
    name.chars()
        .map(|c| if is_topic_char(c) { c } else { '_' })
        .collect()
}

/// A variable of the topic template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TopicVar {
    Prefix,
    Pdb,
    Schema,
    Table,
    Database,
}

impl TopicVar {
    const ALL: [(&'static str, TopicVar); 5] = [
        ("prefix", TopicVar::Prefix),
        ("pdb", TopicVar::Pdb),
        ("schema", TopicVar::Schema),
        ("table", TopicVar::Table),
        ("database", TopicVar::Database),
    ];
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(TopicVar),
}

/// Splits `text` into literals and `${…}` variables; `allowed` says which variables may appear.
fn parse_parts(text: &str, allowed: &[TopicVar]) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        if start > 0 {
            parts.push(Part::Literal(rest[..start].to_owned()));
        }
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("unclosed ${{ in {text:?}"))?;
        let name = &after[..end];
        let var = TopicVar::ALL
            .iter()
            .find(|(known, var)| *known == name && allowed.contains(var))
            .map(|(_, var)| *var)
            .ok_or_else(|| format!("unknown variable ${{{name}}}"))?;
        parts.push(Part::Var(var));
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest.to_owned()));
    }
    Ok(parts)
}

/// Resolves a side topic name: `${prefix}` replaced, the result checked against Kafka's rules.
/// The literal part is checked even when the prefix is unusable, so one bad prefix does not
/// also fail every topic derived from it.
pub(crate) fn resolve_topic_name(text: &str, prefix: Option<&str>) -> Result<String, String> {
    let parts = parse_parts(text, &[TopicVar::Prefix])?;
    let mut name = String::new();
    for part in &parts {
        match part {
            Part::Literal(literal) => {
                if let Some(bad) = literal.chars().find(|&c| !is_topic_char(c)) {
                    return Err(format!("{bad:?} is not allowed in a topic name"));
                }
                name.push_str(literal);
            }
            Part::Var(_) => name.push_str(prefix.unwrap_or_default()),
        }
    }
    if prefix.is_some() {
        if name.is_empty() || name == "." || name == ".." {
            return Err(format!("{name:?} is not a topic name"));
        }
        if name.len() > MAX_TOPIC_LEN {
            return Err(format!(
                "{} characters, more than {MAX_TOPIC_LEN}",
                name.len()
            ));
        }
    }
    Ok(name)
}

/// `cdc.topic.template`, ready to render the topic of any table.
#[derive(Clone, PartialEq, Eq)]
pub struct TopicTemplate {
    template: String,
    prefix: String,
    parts: Vec<Part>,
}

impl TopicTemplate {
    /// Reads a template; every `${…}` must be one of the five variables. A template without
    /// `${table}` is allowed: it routes several tables to one topic on purpose.
    pub fn parse(template: &str, prefix: &str) -> Result<TopicTemplate, String> {
        let all: Vec<TopicVar> = TopicVar::ALL.iter().map(|(_, var)| *var).collect();
        let parts = parse_parts(template, &all)?;
        Ok(TopicTemplate {
            template: template.to_owned(),
            prefix: prefix.to_owned(),
            parts,
        })
    }

    /// The template as configured.
    pub fn as_str(&self) -> &str {
        &self.template
    }

    /// The topic of a table. `pdb` is `None` in a non-CDB, where `${pdb}` renders as the
    /// database name. The result is sanitised: characters Kafka forbids become `_`.
    pub fn render(&self, database: &str, pdb: Option<&str>, schema: &str, table: &str) -> String {
        let mut topic = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(literal) => topic.push_str(literal),
                Part::Var(TopicVar::Prefix) => topic.push_str(&self.prefix),
                Part::Var(TopicVar::Pdb) => topic.push_str(pdb.unwrap_or(database)),
                Part::Var(TopicVar::Schema) => topic.push_str(schema),
                Part::Var(TopicVar::Table) => topic.push_str(table),
                Part::Var(TopicVar::Database) => topic.push_str(database),
            }
        }
        sanitize_topic_name(&topic)
    }
}

impl fmt::Debug for TopicTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TopicTemplate")
            .field("template", &self.template)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl fmt::Display for TopicTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.template)
    }
}
