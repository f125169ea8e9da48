//! Secrets and pass-through properties that may hold them.
//!
//! A password must never reach a log line, an error or a `{:?}`: it lives in a [`Secret`],
//! whose `Debug` and `Display` print `****`, and is read only through
//! [`Secret::expose_secret`], which is easy to find in review.

use std::collections::BTreeMap;
use std::fmt;

/// What a secret prints as.
pub const MASK: &str = "****";

/// A configuration value that must not be shown: passwords, JAAS configs, client secrets.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret text, for handing to the driver or the Kafka client only.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret(value)
    }
}

/// Whether a property name holds a secret. Applies to pass-through Kafka, converter, driver
/// and Connect properties, whose names we do not control: anything ending in `password`
/// (`sasl.password`, `ssl.key.password`), a JAAS config (it embeds the password), basic-auth
/// user info or a private key, and anything that mentions a password, secret or credential.
/// Masking too much in a log costs nothing; masking too little leaks a password.
pub fn is_secret_name(name: &str) -> bool {
    // `sasl.oauthbearer.config` carries the OAuth client secret (`clientSecret=…`)
    const SECRET_ENDINGS: [&str; 5] = [
        "jaas.config",
        "user.info",
        "keystore.key",
        "key.pem",
        "oauthbearer.config",
    ];
    const SECRET_WORDS: [&str; 5] = ["pass", "pwd", "secret", "credential", "token"];
    let name = name.trim().to_ascii_lowercase();
    SECRET_ENDINGS.iter().any(|ending| name.ends_with(ending))
        || SECRET_WORDS.iter().any(|word| name.contains(word))
}

/// A value of a pass-through property: plain, or secret when its name says so.
#[derive(Clone, PartialEq, Eq)]
pub enum PropertyValue {
    Plain(String),
    Secret(Secret),
}

impl PropertyValue {
    /// Wraps `value` as a secret when `name` is a secret's name.
    pub fn for_name(name: &str, value: String) -> PropertyValue {
        if is_secret_name(name) {
            PropertyValue::Secret(Secret(value))
        } else {
            PropertyValue::Plain(value)
        }
    }

    /// The value, secret or not, for handing to the client that needs it.
    pub fn expose(&self) -> &str {
        match self {
            PropertyValue::Plain(text) => text,
            PropertyValue::Secret(secret) => secret.expose_secret(),
        }
    }

    pub fn is_secret(&self) -> bool {
        matches!(self, PropertyValue::Secret(_))
    }
}

impl fmt::Debug for PropertyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PropertyValue::Plain(text) => fmt::Debug::fmt(text, f),
            PropertyValue::Secret(secret) => fmt::Debug::fmt(secret, f),
        }
    }
}

/// Properties handed on to another component (Kafka client, converter, driver), sorted by
/// name; secret values are masked in `Debug`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Properties {
    entries: BTreeMap<String, PropertyValue>,
}

impl Properties {
    pub fn new() -> Properties {
        Properties::default()
    }

    /// Adds or replaces a property; secrecy follows the name.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        let value = PropertyValue::for_name(&name, value.into());
        self.entries.insert(name, value);
    }

    pub fn get(&self, name: &str) -> Option<&PropertyValue> {
        self.entries.get(name)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Names and values with secrets exposed, for configuring the client they belong to.
    pub fn iter_exposed(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|(name, value)| (name.as_str(), value.expose()))
    }

    /// Names and values as kept (secrets wrapped).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &PropertyValue)> {
        self.entries
            .iter()
            .map(|(name, value)| (name.as_str(), value))
    }
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.entries.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for name in [
            "sasl.password",
            "ssl.key.password",
            "sasl.jaas.config",
            "basic.auth.user.info",
            "sasl.oauthbearer.config",
            "kafka.sasl.oauthbearer.config",
            "sasl.oauthbearer.client.secret",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "bootstrap.servers",
            "acks",
            "security.protocol",
            "sasl.oauthbearer.method",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn debug_masks_secret_properties() {
        let mut props = Properties::new();
        props.insert("sasl.password", "hunter2");
        props.insert("acks", "all");
        let shown = format!("{props:?}");
        assert!(!shown.contains("hunter2"));
        assert!(shown.contains("all"));
        assert_eq!(props.iter_exposed().count(), 2);
    }
}
