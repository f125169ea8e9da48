//! Reading one value according to its [`KeyKind`].
//!
//! Each function here is a pure function of the text; what the value means together with
//! other keys is decided in `validate`.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::keys::KeyKind;
use super::secret::Secret;
use crate::position::Scn;

/// A value read according to its kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Parsed {
    Int(i64),
    Unsigned(u64),
    Duration(Duration),
    /// `None` for the `-1` of [`KeyKind::DurationMsOrMinusOne`].
    OptionalDuration(Option<Duration>),
    Bytes(u64),
    Bool(bool),
    /// The canonical spelling of a choice.
    Choice(&'static str),
    Text(String),
    Secret(Secret),
    Path(PathBuf),
    List(Vec<String>),
    /// Regular expressions, not compiled yet (that needs the case-sensitivity key).
    Patterns(Vec<String>),
    OraCodes(Vec<u32>),
    /// `(table, columns)` in the order given.
    KeyColumns(Vec<(String, Vec<String>)>),
    Properties(Vec<(String, String)>),
    TimeOfDay(TimeOfDay),
    /// A connect string, with any `jdbc:oracle:thin:@` removed.
    ConnectString(String),
    HostPort(HostPort),
    Brokers(Vec<String>),
    Scn(Scn),
    ReplicationFactor(i16),
}

/// Why a value was refused; the allowed text comes from the kind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Invalid {
    pub detail: Option<String>,
}

impl Invalid {
    fn because(detail: impl Into<String>) -> Invalid {
        Invalid {
            detail: Some(detail.into()),
        }
    }
}

/// A time of day, `HH:mm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeOfDay {
    pub hour: u8,
    pub minute: u8,
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.hour, self.minute)
    }
}

/// A `host:port` address; IPv6 hosts are written in brackets.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// Reads `text` as a value of `kind`. Surrounding blanks are ignored except in secrets.
pub(crate) fn parse_value(kind: &KeyKind, text: &str) -> Result<Parsed, Invalid> {
    let trimmed = text.trim();
    match *kind {
        KeyKind::Integer { min, max } => {
            let value = parse_i64(trimmed)?;
            in_range(value, min, max).map(Parsed::Int)
        }
        KeyKind::Unsigned => trimmed
            .parse::<u64>()
            .map(Parsed::Unsigned)
            .map_err(|_| Invalid::default()),
        KeyKind::DurationMs { min, max } => {
            let value = parse_u64(trimmed)?;
            in_range(value, min, max).map(|ms| Parsed::Duration(Duration::from_millis(ms)))
        }
        KeyKind::DurationMsOrMinusOne { min, .. } => {
            if trimmed == "-1" {
                return Ok(Parsed::OptionalDuration(None));
            }
            let value = parse_u64(trimmed)?;
            in_range(value, min, super::keys::MAX_MS)
                .map(|ms| Parsed::OptionalDuration(Some(Duration::from_millis(ms))))
        }
        KeyKind::Bytes { min, max } => {
            let value = parse_u64(trimmed)?;
            in_range(value, min, max).map(Parsed::Bytes)
        }
        KeyKind::Boolean => {
            if trimmed.eq_ignore_ascii_case("true") {
                Ok(Parsed::Bool(true))
            } else if trimmed.eq_ignore_ascii_case("false") {
                Ok(Parsed::Bool(false))
            } else {
                Err(Invalid::default())
            }
        }
        KeyKind::Choice(allowed) => allowed
            .iter()
            .find(|candidate| candidate.eq_ignore_ascii_case(trimmed))
            .map(|canonical| Parsed::Choice(canonical))
            .ok_or_default(),
        KeyKind::Text => Ok(Parsed::Text(trimmed.to_owned())),
        KeyKind::Name => non_empty(trimmed).map(|name| Parsed::Text(name.to_owned())),
        KeyKind::Secret => {
            if text.is_empty() {
                Err(Invalid::because("empty"))
            } else {
                Ok(Parsed::Secret(Secret::new(text)))
            }
        }
        KeyKind::Path => non_empty(trimmed).map(|path| Parsed::Path(PathBuf::from(path))),
        KeyKind::List => Ok(Parsed::List(split_list(trimmed))),
        KeyKind::RegexList => split_patterns(trimmed).map(Parsed::Patterns),
        KeyKind::OraCodes => split_list(trimmed)
            .iter()
            .map(|code| parse_ora_code(code))
            .collect::<Result<Vec<_>, _>>()
            .map(Parsed::OraCodes),
        KeyKind::KeyColumns => parse_key_columns(trimmed).map(Parsed::KeyColumns),
        KeyKind::DriverProperties => parse_driver_properties(trimmed).map(Parsed::Properties),
        KeyKind::TimeOfDay => parse_time_of_day(trimmed).map(Parsed::TimeOfDay),
        KeyKind::DatabaseUrl => parse_connect_string(trimmed).map(Parsed::ConnectString),
        KeyKind::Host => {
            if trimmed.is_empty() || trimmed.contains(char::is_whitespace) || trimmed.contains('/')
            {
                Err(Invalid::default())
            } else {
                Ok(Parsed::Text(trimmed.to_owned()))
            }
        }
        KeyKind::ListenAddress => parse_host_port(trimmed, 0).map(Parsed::HostPort),
        KeyKind::Brokers => {
            let brokers = split_list(trimmed);
            if brokers.is_empty() {
                return Err(Invalid::because("no broker given"));
            }
            for broker in &brokers {
                parse_host_port(broker, 1)?;
            }
            Ok(Parsed::Brokers(brokers))
        }
        KeyKind::Scn => {
            let value = parse_u64(trimmed)?;
            in_range(value, 1, u64::MAX).map(|scn| Parsed::Scn(Scn(scn)))
        }
        KeyKind::ArchiveDestination => parse_archive_destination(trimmed).map(Parsed::Text),
        KeyKind::ReplicationFactor => match trimmed.parse::<i16>() {
            Ok(factor) if factor == -1 || factor >= 1 => Ok(Parsed::ReplicationFactor(factor)),
            _ => Err(Invalid::default()),
        },
        KeyKind::TopicPrefix => {
            if trimmed.is_empty() {
                Err(Invalid::because("empty"))
            } else if trimmed.len() > 200 {
                Err(Invalid::because(format!("{} characters", trimmed.len())))
            } else if let Some(bad) = trimmed.chars().find(|&c| !is_topic_char(c)) {
                Err(Invalid::because(format!("{bad:?} is not allowed")))
            } else {
                Ok(Parsed::Text(trimmed.to_owned()))
            }
        }
        // Checked with the prefix in `topics`, which knows the variables.
        KeyKind::TopicName | KeyKind::TopicTemplate => {
            non_empty(trimmed).map(|text| Parsed::Text(text.to_owned()))
        }
        KeyKind::ClassName => {
            let valid = !trimmed.is_empty()
                && trimmed
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '$'));
            if valid {
                Ok(Parsed::Text(trimmed.to_owned()))
            } else {
                Err(Invalid::default())
            }
        }
    }
}

trait OkOrDefault<T> {
    fn ok_or_default(self) -> Result<T, Invalid>;
}

impl<T> OkOrDefault<T> for Option<T> {
    fn ok_or_default(self) -> Result<T, Invalid> {
        self.ok_or_else(Invalid::default)
    }
}

/// Letters, digits, `.`, `_` and `-`: what Kafka allows in a topic name.
pub(crate) fn is_topic_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

fn non_empty(text: &str) -> Result<&str, Invalid> {
    if text.is_empty() {
        Err(Invalid::because("empty"))
    } else {
        Ok(text)
    }
}

fn parse_i64(text: &str) -> Result<i64, Invalid> {
    text.parse::<i64>()
        .map_err(|_| Invalid::because("not an integer"))
}

fn parse_u64(text: &str) -> Result<u64, Invalid> {
    match text.parse::<u64>() {
        Ok(value) => Ok(value),
        Err(_) if text.parse::<i64>().is_ok() => Err(Invalid::because("negative")),
        Err(_) => Err(Invalid::because("not an integer")),
    }
}

fn in_range<T: PartialOrd>(value: T, min: T, max: T) -> Result<T, Invalid> {
    if value < min {
        Err(Invalid::because("too small"))
    } else if value > max {
        Err(Invalid::because("too large"))
    } else {
        Ok(value)
    }
}

/// Comma-separated names, blanks trimmed, empty items dropped.
pub(crate) fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Splits a regex list on the commas that separate expressions: not those escaped as `\,` and
/// not those inside `()`, `[]` or `{}` (as in `A{1,3}`), which belong to an expression.
pub(crate) fn split_patterns(text: &str) -> Result<Vec<String>, Invalid> {
    let mut patterns = Vec::new();
    let mut current = String::new();
    let mut depth: usize = 0;
    let mut in_class = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                // `\,` is a literal comma; the regex needs no escape for it.
                Some(',') => current.push(','),
                Some(other) => {
                    current.push('\\');
                    current.push(other);
                }
                None => current.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                current.push(c);
            }
            ']' if in_class => {
                in_class = false;
                current.push(c);
            }
            '(' | '{' if !in_class => {
                depth += 1;
                current.push(c);
            }
            ')' | '}' if !in_class => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' if depth == 0 && !in_class => {
                push_pattern(&mut patterns, &mut current);
            }
            _ => current.push(c),
        }
    }
    push_pattern(&mut patterns, &mut current);
    Ok(patterns)
}

fn push_pattern(patterns: &mut Vec<String>, current: &mut String) {
    let pattern = current.trim();
    if !pattern.is_empty() {
        patterns.push(pattern.to_owned());
    }
    current.clear();
}

/// `ORA-12345`, `ORA-1234` or `12345`; case ignored.
fn parse_ora_code(code: &str) -> Result<u32, Invalid> {
    let digits = code
        .strip_prefix("ORA-")
        .or_else(|| code.strip_prefix("ora-"))
        .unwrap_or(code);
    match digits.parse::<u32>() {
        Ok(number)
            if !digits.is_empty()
                && digits.chars().all(|c| c.is_ascii_digit())
                && number <= 99_999 =>
        {
            Ok(number)
        }
        _ => Err(Invalid::because(format!("{code:?} is not an ORA code"))),
    }
}

/// A table name with two or three non-empty dot-separated parts: `[PDB.]OWNER.TABLE`.
pub(crate) fn is_table_name(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    (2..=3).contains(&parts.len()) && parts.iter().all(|part| !part.trim().is_empty())
}

fn parse_key_columns(text: &str) -> Result<Vec<(String, Vec<String>)>, Invalid> {
    let mut entries = Vec::new();
    for entry in text
        .split(';')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
    {
        let malformed = || Invalid::because(format!("{entry:?} is not [PDB.]SCHEMA.TABLE:C1,C2"));
        let (table, columns) = entry.split_once(':').ok_or_else(malformed)?;
        let table = table.trim();
        let columns = split_list(columns);
        if !is_table_name(table) || columns.is_empty() {
            return Err(malformed());
        }
        entries.push((table.to_owned(), columns));
    }
    Ok(entries)
}

fn parse_driver_properties(text: &str) -> Result<Vec<(String, String)>, Invalid> {
    let mut properties = Vec::new();
    for pair in text
        .split(';')
        .map(str::trim)
        .filter(|pair| !pair.is_empty())
    {
        let (name, value) = pair
            .split_once('=')
            .filter(|(name, _)| !name.trim().is_empty())
            // Never echo the pair: its value may be a password.
            .ok_or_else(|| {
                Invalid::because(format!("entry {} has no name=value", properties.len() + 1))
            })?;
        properties.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    Ok(properties)
}

fn parse_time_of_day(text: &str) -> Result<TimeOfDay, Invalid> {
    let (hour, minute) = text.split_once(':').ok_or_default()?;
    let two_digits = |part: &str| part.len() == 2 && part.chars().all(|c| c.is_ascii_digit());
    if !two_digits(hour) || !two_digits(minute) {
        return Err(Invalid::default());
    }
    match (hour.parse::<u8>(), minute.parse::<u8>()) {
        (Ok(hour), Ok(minute)) if hour < 24 && minute < 60 => Ok(TimeOfDay { hour, minute }),
        _ => Err(Invalid::default()),
    }
}

/// Removes `jdbc:oracle:thin:@`, refuses credentials embedded in the URL.
fn parse_connect_string(text: &str) -> Result<String, Invalid> {
    const JDBC: &str = "jdbc:oracle:thin:@";
    let jdbc_prefix = text
        .get(..JDBC.len())
        .filter(|head| head.eq_ignore_ascii_case(JDBC));
    let connect = if let Some(head) = jdbc_prefix {
        &text[head.len()..]
    } else if text.to_ascii_lowercase().starts_with("jdbc:") {
        return Err(Invalid::because(
            "only jdbc:oracle:thin:@ URLs are understood",
        ));
    } else {
        text
    };
    if connect.trim().is_empty() {
        return Err(Invalid::because("empty"));
    }
    if connect.contains('@') {
        return Err(Invalid::because(
            "credentials belong in cdc.database.user and cdc.database.password",
        ));
    }
    Ok(connect.trim().to_owned())
}

/// Shows a database URL with anything before an `@` (credentials) masked.
pub(crate) fn mask_url_credentials(url: &str) -> String {
    match url.rfind('@') {
        Some(at) => {
            let scheme_end = if url.to_ascii_lowercase().starts_with("jdbc:oracle:thin:") {
                "jdbc:oracle:thin:".len()
            } else {
                0
            };
            if at > scheme_end {
                format!("{}****{}", &url[..scheme_end], &url[at..])
            } else {
                url.to_owned()
            }
        }
        None => url.to_owned(),
    }
}

/// `host:port` or `[ipv6]:port` with the port at least `min_port`.
pub(crate) fn parse_host_port(text: &str, min_port: u16) -> Result<HostPort, Invalid> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, port) = rest
            .split_once("]:")
            .ok_or_else(|| Invalid::because("no port"))?;
        (host, port)
    } else {
        text.rsplit_once(':')
            .ok_or_else(|| Invalid::because("no port"))?
    };
    if host.is_empty()
        || host.contains(char::is_whitespace)
        || (host.contains(':') && !text.starts_with('['))
    {
        return Err(Invalid::because("bad host"));
    }
    match port.parse::<u16>() {
        Ok(port) if port >= min_port => Ok(HostPort {
            host: host.to_owned(),
            port,
        }),
        _ => Err(Invalid::because("bad port")),
    }
}

fn parse_archive_destination(text: &str) -> Result<String, Invalid> {
    const PREFIX: &str = "LOG_ARCHIVE_DEST_";
    let upper = text.to_ascii_uppercase();
    let number = upper.strip_prefix(PREFIX).ok_or_default()?;
    match number.parse::<u8>() {
        Ok(n) if (1..=31).contains(&n) && !number.starts_with('0') => Ok(upper),
        _ => Err(Invalid::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_lists_keep_commas_inside_groups() {
        assert_eq!(
            split_patterns(r"APP\.A{1,3}, APP\.(X|Y),APP\.[,]Z, A\,B").unwrap(),
            vec![r"APP\.A{1,3}", r"APP\.(X|Y)", r"APP\.[,]Z", "A,B"]
        );
        assert!(split_patterns("").unwrap().is_empty());
    }

    #[test]
    fn ora_codes() {
        assert_eq!(parse_ora_code("ORA-01234"), Ok(1234));
        assert_eq!(parse_ora_code("12541"), Ok(12541));
        assert!(parse_ora_code("ORA-").is_err());
        assert!(parse_ora_code("ORA-+1").is_err());
        assert!(parse_ora_code("ORA-123456").is_err());
    }

    #[test]
    fn host_ports() {
        assert_eq!(
            parse_host_port("[::1]:9092", 1).unwrap().to_string(),
            "[::1]:9092"
        );
        assert_eq!(parse_host_port("kafka:9092", 1).unwrap().port, 9092);
        assert!(parse_host_port("kafka", 1).is_err());
        assert!(parse_host_port("kafka:0", 1).is_err());
        assert!(parse_host_port("::1:9092", 1).is_err());
    }

    #[test]
    fn connect_strings() {
        assert_eq!(
            parse_connect_string("jdbc:oracle:thin:@//db:1521/ORCL").unwrap(),
            "//db:1521/ORCL"
        );
        assert!(parse_connect_string("jdbc:postgresql://x").is_err());
        assert!(parse_connect_string("scott/tiger@db/ORCL").is_err());
        assert_eq!(
            mask_url_credentials("jdbc:oracle:thin:scott/tiger@db/X"),
            "jdbc:oracle:thin:****@db/X"
        );
        assert_eq!(
            mask_url_credentials("jdbc:oracle:thin:@//db/X"),
            "jdbc:oracle:thin:@//db/X"
        );
        assert_eq!(mask_url_credentials("u/p@db"), "****@db");
    }

    #[test]
    fn times_of_day() {
        assert_eq!(
            parse_time_of_day("02:00"),
            Ok(TimeOfDay { hour: 2, minute: 0 })
        );
        assert!(parse_time_of_day("24:00").is_err());
        assert!(parse_time_of_day("2:00").is_err());
    }
}
