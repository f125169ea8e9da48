//! The module boundaries inside `cdc-logminer` that the compiler cannot see, because the modules
//! share a crate:
//!
//! - `decode/` is the pure SQL_REDO decoder: it names neither the engine, nor the sources, nor
//!   the simulator (it must run for any source, and the simulator's own encoder must not be what
//!   makes its tests pass);
//! - `sim/` is the redo simulator: it names neither the decoder nor the engine, so that it stays
//!   independent of what it is used to test.
//!
//! A rule is broken by any path `crate::<module>` (or `cdc_logminer::<module>`, or a
//! `crate::{…}` group naming the module) in a file of the guarded folder, comments excepted.

use std::fs;
use std::path::{Path, PathBuf};

/// A folder of `cdc-logminer/src` and the crate modules its files must not name.
pub const RULES: [(&str, &[&str]); 2] = [
    ("decode", &["engine", "source", "sim"]),
    ("sim", &["decode", "engine"]),
];

/// Every broken rule under `src` (the `cdc-logminer/src` folder), as `file:line: text`.
pub fn check(src: &Path) -> Result<Vec<String>, String> {
    let mut broken = Vec::new();
    for (folder, forbidden) in RULES {
        let mut files = Vec::new();
        rust_files(&src.join(folder), &mut files)?;
        files.sort();
        for file in files {
            let text = fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            for (line, module) in named_modules(&text) {
                if forbidden.contains(&module.as_str()) {
                    broken.push(format!(
                        "{}:{line}: `{folder}` must not name `{module}`",
                        file.display()
                    ));
                }
            }
        }
    }
    Ok(broken)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
            .path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The crate-level modules a file names, each with its (1-based) line: the first segment after
/// `crate::` or `cdc_logminer::`, or every first-level name of a `crate::{…}` group.
pub fn named_modules(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    // comments removed line by line; a `//` inside a string literal only hides the rest of
    // its line, which can hide a name but never invent one
    let code: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.split("//").next().unwrap_or("")))
        .collect();
    let joined: String = code
        .iter()
        .map(|(_, line)| *line)
        .collect::<Vec<_>>()
        .join("\n");
    let line_of = |offset: usize| joined[..offset].matches('\n').count() + 1;
    for root in ["crate::", "cdc_logminer::"] {
        let mut from = 0;
        while let Some(at) = joined[from..].find(root) {
            let start = from + at;
            from = start + root.len();
            // `foo_crate::` is not `crate::`
            let before = joined[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &joined[from..];
            if let Some(group) = rest.strip_prefix('{') {
                for name in first_level_names(group) {
                    found.push((line_of(start), name));
                }
            } else {
                let name = identifier(rest);
                if !name.is_empty() {
                    found.push((line_of(start), name.to_owned()));
                }
            }
        }
    }
    found.sort();
    found
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The names at the top level of a `{…}` use group (its text after the `{`).
fn first_level_names(group: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut expect_name = true;
    let mut rest = group;
    while let Some(c) = rest.chars().next() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => expect_name = true,
            c if depth == 0 && expect_name && (c.is_alphanumeric() || c == '_') => {
                let name = identifier(rest);
                names.push(name.to_owned());
                expect_name = false;
                rest = &rest[name.len()..];
                continue;
            }
            _ => {}
        }
        rest = &rest[c.len_utf8()..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(text: &str) -> Vec<String> {
        named_modules(text).into_iter().map(|(_, m)| m).collect()
    }

    #[test]
    fn paths_groups_and_the_crate_name_are_seen() {
        assert_eq!(modules("use crate::engine::CaptureEngine;"), ["engine"]);
        assert_eq!(
            modules("use crate::{decode::{a, b}, sim::Db};"),
            ["decode", "sim"]
        );
        assert_eq!(modules("let x = cdc_logminer::source::from();"), ["source"]);
        assert_eq!(
            named_modules("\n\nfn f() { crate::sim::x() }"),
            [(3, "sim".to_owned())]
        );
    }

    #[test]
    fn comments_and_longer_names_are_not_paths() {
        assert!(modules("// crate::engine is not named here").is_empty());
        assert!(modules("use my_crate::engine;").is_empty());
        assert_eq!(modules("use crate::decode; // crate::engine"), ["decode"]);
    }

    #[test]
    fn a_broken_rule_is_reported_with_its_file_and_line() {
        let dir = std::env::temp_dir().join(format!("xtask-boundaries-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let decode = dir.join("decode");
        let sim = dir.join("sim");
        assert!(fs::create_dir_all(&decode).is_ok() && fs::create_dir_all(&sim).is_ok());
        assert!(fs::write(decode.join("ok.rs"), "use crate::decode::x;\n").is_ok());
        assert!(fs::write(sim.join("bad.rs"), "\nuse crate::engine::Record;\n").is_ok());
        let broken = check(&dir);
        let _ = fs::remove_dir_all(&dir);
        let broken = broken.unwrap_or_default();
        assert_eq!(broken.len(), 1, "{broken:?}");
        assert!(
            broken[0].ends_with("bad.rs:2: `sim` must not name `engine`"),
            "{broken:?}"
        );
    }

    #[test]
    fn the_workspace_keeps_its_boundaries() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cdc-logminer/src");
        assert_eq!(check(&src), Ok(Vec::new()));
    }
}
