//! The docs check: what `README.md` and `docs/*.md` tell an operator must exist.
//!
//! - every link to an anchor (`[…](runbooks.md#cdc-2002)`, `[…](#moving-the-offset-by-hand)`)
//!   and every `runbooks.md#…` the text names, and every runbook link of the CDC code table
//!   (`CdcCode::runbook`, which every stop message carries), lands on a heading (GitHub's slug
//!   rules) or an `<a id>` of the file it names;
//! - every `oracle-cdc-admin …` and `oracle-cdc …` command line shown (shell code blocks and
//!   inline code) names subcommands and flags that exist: `oracle-cdc-admin`'s from its own
//!   `--help` (the binary Cargo built for these tests), `oracle-cdc`'s from its clap
//!   definitions in `cdc-connect-bridge/src/bin/oracle-cdc/main.rs` (that binary belongs to
//!   another crate, so it is not built for this test; its source is read instead);
//! - every metric `oracle_cdc_…` named is a series of `/metrics`
//!   (`cdc_connect_bridge::operator::metrics::SERIES`), `_total` and the histogram suffixes
//!   counting as the base name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use cdc_connect_bridge::operator::metrics::SERIES;
use cdc_core::CdcCode;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `README.md` and every markdown file under `docs/`, by their path from the root.
fn doc_files() -> BTreeMap<String, String> {
    let root = root();
    let mut files = BTreeMap::new();
    let read = |path: &Path| {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    files.insert("README.md".to_owned(), read(&root.join("README.md")));
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().expect("a file name").to_string_lossy();
        files.insert(format!("docs/{name}"), read(&path));
    }
    files
}

// ---------------------------------------------------------------------------------------------
// Markdown: code blocks, inline code, headings

/// A fenced code block: its info string and lines.
struct Block {
    info: String,
    lines: Vec<String>,
}

/// The text outside fenced code blocks, and the blocks.
fn split_fences(text: &str) -> (Vec<String>, Vec<Block>) {
    let mut prose = Vec::new();
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            match open.take() {
                Some(block) => blocks.push(block),
                None => {
                    open = Some(Block {
                        info: trimmed.trim_start_matches('`').trim().to_owned(),
                        lines: Vec::new(),
                    });
                }
            }
            continue;
        }
        match &mut open {
            Some(block) => block.lines.push(line.to_owned()),
            None => prose.push(line.to_owned()),
        }
    }
    (prose, blocks)
}

/// The contents of the inline code spans of `text` (single backticks).
fn inline_code(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        spans.push(after[..end].to_owned());
        rest = &after[end + 1..];
    }
    spans
}

/// GitHub's anchor for a heading: lower case, punctuation removed, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a file: its headings' slugs (a repeated one gets `-1`, `-2` …) and the ids
/// of its `<a id="…">` / `<a name="…">` tags.
fn anchors(text: &str) -> BTreeSet<String> {
    let (prose, _) = split_fences(text);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in &prose {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(&line[hashes..]);
            let n = seen.entry(base.clone()).or_insert(0);
            out.insert(if *n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            });
            *n += 1;
        }
        for tag in ["<a id=\"", "<a name=\""] {
            for (at, _) in line.match_indices(tag) {
                let id = &line[at + tag.len()..];
                out.insert(id.split('"').next().unwrap_or_default().to_owned());
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Links and runbook anchors

/// `file#anchor` resolved from the doc `from` (a path from the root); `None` when the target
/// is not a markdown file of the repository.
fn resolve(from: &str, target: &str) -> Option<(String, String)> {
    let (file, anchor) = target.split_once('#')?;
    if file.contains("://") || file.starts_with("mailto:") {
        return None;
    }
    let file = if file.is_empty() {
        from.to_owned()
    } else {
        let dir = Path::new(from).parent().unwrap_or(Path::new(""));
        let mut parts: Vec<String> = dir
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        for part in file.split('/') {
            match part {
                "." | "" => {}
                ".." => {
                    parts.pop();
                }
                other => parts.push(other.to_owned()),
            }
        }
        parts.join("/")
    };
    file.ends_with(".md").then(|| (file, anchor.to_owned()))
}

/// The `(target)` of every markdown link in `line`.
fn link_targets(line: &str) -> Vec<String> {
    line.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &line[at + 2..];
            rest.find(')').map(|end| rest[..end].trim().to_owned())
        })
        .collect()
}

/// Every anchor a doc or the CDC code table points at that does not exist, one line each.
fn broken_anchors(files: &BTreeMap<String, String>) -> Vec<String> {
    let anchors_of: BTreeMap<&str, BTreeSet<String>> = files
        .iter()
        .map(|(name, text)| (name.as_str(), anchors(text)))
        .collect();
    let root = root();
    let mut broken = Vec::new();
    let check = |from: &str, target: &str| -> Option<String> {
        let (file, anchor) = resolve(from, target)?;
        let missing = format!("{target}: no anchor #{anchor} in {file}");
        match anchors_of.get(file.as_str()) {
            Some(set) => (!set.contains(&anchor)).then_some(missing),
            None if root.join(&file).is_file() => {
                let text = std::fs::read_to_string(root.join(&file)).unwrap_or_default();
                (!anchors(&text).contains(&anchor)).then_some(missing)
            }
            None => Some(format!("{target}: no file {file}")),
        }
    };
    for (name, text) in files {
        let (prose, blocks) = split_fences(text);
        for line in &prose {
            for target in link_targets(line) {
                broken.extend(check(name, &target).map(|m| format!("{name}: {m}")));
            }
        }
        // `docs/runbooks.md#cdc-1001` named in text or code, as the stop messages print it
        let all = prose
            .iter()
            .chain(blocks.iter().flat_map(|b| b.lines.iter()));
        for line in all {
            for (at, _) in line.match_indices("runbooks.md#") {
                let anchor: String = line[at + "runbooks.md#".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                    .collect();
                if anchor.is_empty() || anchor == "cdc-nnnn" {
                    continue;
                }
                let target = format!("runbooks.md#{anchor}");
                broken.extend(check("docs/runbooks.md", &target).map(|m| format!("{name}: {m}")));
            }
        }
    }
    for code in CdcCode::ALL {
        let link = code.runbook();
        let target = link.strip_prefix("docs/").unwrap_or(link);
        if check("docs/index.md", target).is_some() {
            broken.push(format!("{} links {link}, which does not exist", code.id()));
        }
    }
    // a link to runbooks.md is also a mention of it: one report is enough
    broken.sort();
    broken.dedup();
    broken
}

#[test]
fn every_anchor_the_docs_and_the_error_table_link_exists() {
    let files = doc_files();
    let broken = broken_anchors(&files);
    assert!(broken.is_empty(), "broken anchors:\n{}", broken.join("\n"));
}

#[test]
fn anchors_follow_githubs_slug_rules() {
    assert_eq!(slug(" CDC-2002 LOG_PURGED"), "cdc-2002-log_purged");
    assert_eq!(
        slug(" Moving the offset by hand"),
        "moving-the-offset-by-hand"
    );
    assert_eq!(slug(" `offsets set`: moving it"), "offsets-set-moving-it");
    let doc = "# A\n## A\n```sh\n# not a heading\n```\n<a id=\"x-1\"></a>\n";
    let found = anchors(doc);
    assert!(found.contains("a") && found.contains("a-1") && found.contains("x-1"));
    assert!(!found.contains("not-a-heading"));
    let mut files = BTreeMap::new();
    files.insert(
        "docs/a.md".to_owned(),
        "# Top\nSee [it](b.md#there) and [here](#top) and [gone](#nowhere).\n".to_owned(),
    );
    files.insert("docs/b.md".to_owned(), "## There\n".to_owned());
    let broken = broken_anchors(&files);
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].contains("#nowhere"), "{broken:?}");
}

// ---------------------------------------------------------------------------------------------
// Commands and flags

/// One command level: its flags (`--name` or `-c` → takes a value, takes several) and
/// subcommands.
#[derive(Debug, Default, Clone)]
struct CommandSpec {
    flags: BTreeMap<String, (bool, bool)>,
    subcommands: BTreeMap<String, CommandSpec>,
}

impl CommandSpec {
    fn help_flags(&mut self) {
        for flag in ["--help", "-h"] {
            self.flags.insert(flag.to_owned(), (false, false));
        }
    }
}

/// Reads a clap `--help` page: the `Commands:` and `Options:` sections.
fn parse_help(text: &str) -> (Vec<String>, BTreeMap<String, (bool, bool)>) {
    let mut commands = Vec::new();
    let mut flags = BTreeMap::new();
    let mut section = "";
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            section = line;
            continue;
        }
        let trimmed = line.trim_start();
        if section == "Commands:"
            && line.starts_with("  ")
            && !line.starts_with("   ")
            && let Some(word) = trimmed.split_whitespace().next()
        {
            commands.push(word.to_owned());
        }
        if section == "Options:" && trimmed.starts_with('-') {
            // `-c, --config <FILE>  The …` or `--forget-released <XID>...  Remove …`
            let head = trimmed.split("  ").next().unwrap_or_default();
            let takes = head.contains('<');
            let many = head.contains(">...");
            for word in head.split([',', ' ']) {
                if word.starts_with('-') {
                    flags.insert(word.to_owned(), (takes, many));
                }
            }
        }
    }
    (commands, flags)
}

/// `oracle-cdc-admin`'s command tree, from its `--help` at every level.
fn admin_spec() -> CommandSpec {
    fn level(path: &[&str]) -> CommandSpec {
        let output = Command::new(env!("CARGO_BIN_EXE_oracle-cdc-admin"))
            .args(path)
            .arg("--help")
            .output()
            .expect("oracle-cdc-admin runs");
        assert!(output.status.success(), "{path:?} --help failed");
        let (commands, flags) = parse_help(&String::from_utf8_lossy(&output.stdout));
        let mut spec = CommandSpec {
            flags,
            ..CommandSpec::default()
        };
        spec.help_flags();
        for command in commands.iter().filter(|c| *c != "help") {
            let mut sub: Vec<&str> = path.to_vec();
            sub.push(command);
            spec.subcommands.insert(command.clone(), level(&sub));
        }
        if !commands.is_empty() {
            spec.subcommands
                .insert("help".to_owned(), CommandSpec::default());
        }
        spec
    }
    level(&[])
}

/// `oracle-cdc`'s command tree, read from its clap definitions: the `Cli` struct's flags, and
/// each variant of `enum Command` with its `#[arg(long …)]` fields in kebab case.
fn oracle_cdc_spec_from_source(source: &str) -> CommandSpec {
    let kebab = |s: &str| s.replace('_', "-");
    let mut root = CommandSpec::default();
    root.help_flags();
    root.flags.insert("--version".to_owned(), (false, false));
    root.flags.insert("-V".to_owned(), (false, false));
    let mut current: Option<String> = None;
    let mut in_cli = false;
    let mut in_commands = false;
    let mut attr: Option<String> = None;
    for line in source.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("struct Cli") {
            in_cli = true;
            continue;
        }
        if trimmed.starts_with("enum Command ") {
            in_commands = true;
            continue;
        }
        if line.starts_with('}') {
            in_cli = false;
            in_commands = false;
            current = None;
            continue;
        }
        if in_commands && line.starts_with("    ") && !line.starts_with("     ") {
            let name = trimmed
                .split([' ', '{', ',', '('])
                .next()
                .unwrap_or_default();
            if name.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                // CamelCase variant to kebab-case subcommand
                let mut sub = String::new();
                for (i, c) in name.chars().enumerate() {
                    if c.is_ascii_uppercase() && i > 0 {
                        sub.push('-');
                    }
                    sub.push(c.to_ascii_lowercase());
                }
                let mut spec = CommandSpec::default();
                spec.help_flags();
                root.subcommands.insert(sub.clone(), spec);
                current = Some(sub);
                continue;
            }
        }
        if !(in_cli || in_commands) {
            continue;
        }
        // an `#[arg(…)]` attribute (on one line or several), then its field
        match attr.as_mut() {
            Some(text) if !text.contains(")]") => {
                text.push_str(trimmed);
                continue;
            }
            Some(_) => {}
            None if trimmed.starts_with("#[arg(") => {
                attr = Some(trimmed.to_owned());
                continue;
            }
            None => continue,
        }
        if trimmed.starts_with("#[") || trimmed.starts_with("//") {
            continue;
        }
        let text = attr.take().unwrap_or_default();
        if !text.contains("long") {
            continue;
        }
        let Some((field, ty)) = trimmed.trim_end_matches(',').split_once(':') else {
            continue;
        };
        let field = field.trim().trim_start_matches("pub ").trim();
        let takes = ty.trim() != "bool";
        let many = ty.trim().starts_with("Vec<");
        let target = match &current {
            Some(sub) => root.subcommands.get_mut(sub).expect("the variant"),
            None => &mut root,
        };
        target
            .flags
            .insert(format!("--{}", kebab(field)), (takes, many));
        if text.contains("short") {
            let short = field.chars().next().unwrap_or('?');
            target.flags.insert(format!("-{short}"), (takes, many));
        }
    }
    // global flags are accepted after a subcommand too
    let globals: Vec<(String, (bool, bool))> = root
        .flags
        .iter()
        .filter(|(name, _)| !["--version", "-V"].contains(&name.as_str()))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    for sub in root.subcommands.values_mut() {
        for (name, how) in &globals {
            sub.flags.entry(name.clone()).or_insert(*how);
        }
    }
    root.subcommands
        .insert("help".to_owned(), CommandSpec::default());
    root
}

fn oracle_cdc_spec() -> CommandSpec {
    let path = root().join("cdc-connect-bridge/src/bin/oracle-cdc/main.rs");
    let source =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let spec = oracle_cdc_spec_from_source(&source);
    for sub in ["run", "demo"] {
        assert!(
            spec.subcommands.contains_key(sub),
            "no `{sub}` read from {}: the scan of its clap definitions needs updating",
            path.display()
        );
    }
    assert!(spec.subcommands["run"].flags.contains_key("--config"));
    spec
}

/// The binaries a doc line may call.
const PROGRAMS: [&str; 2] = ["oracle-cdc-admin", "oracle-cdc"];

/// Shell words of a line, with `[…]` optional marks and `…` placeholders taken off; a quoted
/// string is one word.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                word.push('Q');
            }
            None if c.is_whitespace() => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            None => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out.into_iter()
        .map(|w| {
            w.trim_matches(['[', ']'])
                .replace('…', "")
                .replace("...", "")
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether a word ends the command (a pipe, a redirect, a comment, a list).
fn ends_command(word: &str) -> bool {
    word.starts_with(['#', '|', '&', ';', '>', '<', ')']) || word.starts_with("2>")
}

/// The invocations of our binaries in a shell line: `(program, arguments)`.
fn invocations(line: &str) -> Vec<(String, Vec<String>)> {
    let words = words(line);
    let mut found = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let name = word.rsplit('/').next().unwrap_or(word);
        let Some(program) = PROGRAMS.iter().find(|p| **p == name) else {
            continue;
        };
        let mut args = &words[i + 1..];
        if i > 0 && words[i - 1] == "--bin" {
            // `cargo run … --bin oracle-cdc -- demo`: its arguments follow `--`
            match args.iter().position(|w| w == "--") {
                Some(at) => args = &args[at + 1..],
                None => args = &[],
            }
        }
        let end = args
            .iter()
            .position(|w| ends_command(w))
            .unwrap_or(args.len());
        found.push(((*program).to_owned(), args[..end].to_vec()));
    }
    found
}

/// Checks the arguments against the command tree; the first problem, if any.
fn check_args(spec: &CommandSpec, args: &[String]) -> Result<(), String> {
    let mut level = spec;
    let mut path = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg.starts_with('-') && arg.len() > 1 && arg != "--" {
            let name = arg.split('=').next().unwrap_or(arg);
            let Some(&(takes, many)) = level.flags.get(name) else {
                return Err(format!("`{name}` is not a flag of `{}`", path.join(" ")));
            };
            if takes && !arg.contains('=') {
                i += 1;
                if many {
                    while i < args.len() && !args[i].starts_with('-') {
                        i += 1;
                    }
                }
            }
        } else if !level.subcommands.is_empty() {
            match level.subcommands.get(arg.as_str()) {
                Some(sub) => {
                    level = sub;
                    path.push(arg.clone());
                }
                None => {
                    return Err(format!(
                        "`{arg}` is not a subcommand of `{}` ({})",
                        path.join(" "),
                        level
                            .subcommands
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
        } else {
            return Err(format!(
                "`{arg}` is an argument `{}` does not take",
                path.join(" ")
            ));
        }
    }
    Ok(())
}

/// The shell lines of a doc: lines of `sh`/`bash`/`shell`/`console`/untagged blocks (with
/// `\` continuations joined) and inline code spans that start with one of our binaries.
fn command_lines(text: &str) -> Vec<String> {
    let (prose, blocks) = split_fences(text);
    let mut lines = Vec::new();
    for block in blocks {
        if !["", "sh", "bash", "shell", "console"].contains(&block.info.as_str()) {
            continue;
        }
        let mut joined = String::new();
        for line in &block.lines {
            let line = line.trim_start_matches("$ ");
            match line.strip_suffix('\\') {
                Some(head) => {
                    joined.push_str(head);
                    joined.push(' ');
                }
                None => {
                    joined.push_str(line);
                    lines.push(std::mem::take(&mut joined));
                }
            }
        }
        if !joined.is_empty() {
            lines.push(joined);
        }
    }
    // inline code spans may wrap across lines of a paragraph
    let paragraph = prose.join(" ");
    for span in inline_code(&paragraph) {
        let span = span.trim_start_matches("$ ").trim();
        if PROGRAMS
            .iter()
            .any(|p| span == *p || span.starts_with(&format!("{p} ")))
        {
            lines.push(span.to_owned());
        }
    }
    lines
}

/// Every command line of `files` with a flag or subcommand the binaries lack.
fn bad_commands(
    files: &BTreeMap<String, String>,
    specs: &BTreeMap<&str, CommandSpec>,
) -> Vec<String> {
    let mut bad = Vec::new();
    for (name, text) in files {
        for line in command_lines(text) {
            for (program, args) in invocations(&line) {
                if let Err(problem) = check_args(&specs[program.as_str()], &args) {
                    bad.push(format!("{name}: `{}`: {program}: {problem}", line.trim()));
                }
            }
        }
    }
    bad
}

fn specs() -> BTreeMap<&'static str, CommandSpec> {
    BTreeMap::from([
        ("oracle-cdc-admin", admin_spec()),
        ("oracle-cdc", oracle_cdc_spec()),
    ])
}

#[test]
fn every_command_and_flag_the_docs_show_exists() {
    let files = doc_files();
    let specs = specs();
    let bad = bad_commands(&files, &specs);
    assert!(
        bad.is_empty(),
        "commands the binaries do not have:\n{}",
        bad.join("\n")
    );
    // the docs do show commands: a parser that finds none checks nothing
    let shown: usize = files
        .values()
        .flat_map(|text| command_lines(text))
        .map(|line| invocations(&line).len())
        .sum();
    assert!(shown >= 10, "only {shown} commands found in the docs");
}

#[test]
fn a_made_up_flag_or_subcommand_is_caught() {
    let specs = specs();
    let doc = |text: &str| BTreeMap::from([("docs/x.md".to_owned(), text.to_owned())]);
    let good = doc(
        "```sh\noracle-cdc-admin --connect http://h:8083 offsets set --scn 5 \\\n  \
                    --reason 'gap in thread 1' --forget-released 3:1.2.3 4:5.6.7 --json | jq .\n\
                    cargo run -p cdc-connect-bridge --bin oracle-cdc -- demo --seed 3\n```\n\
                    Run `oracle-cdc run --config c.properties` or `oracle-cdc-admin check -c x`.\n",
    );
    assert_eq!(bad_commands(&good, &specs), Vec::<String>::new());

    let made_up = [
        "```sh\noracle-cdc-admin offsets set --scn 5 --reason x --force\n```\n",
        "Run `oracle-cdc-admin offsets rewind --scn 5`.\n",
        "```bash\n$ oracle-cdc run --config c.properties --no-such-flag\n```\n",
        "```sh\noracle-cdc-doctor setup-sql; oracle-cdc-admin doctor\n```\n",
        "Use `oracle-cdc-admin resnapshot --tables APP.T --check-redo`.\n",
    ];
    for text in made_up {
        let bad = bad_commands(&doc(text), &specs);
        assert_eq!(bad.len(), 1, "{text:?} should be caught once: {bad:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Metrics

/// Every `oracle_cdc_…` name in `text` that is no series of `/metrics`.
fn unknown_metrics(text: &str) -> Vec<String> {
    let mut known = BTreeSet::new();
    for series in SERIES {
        known.insert(series.exposed_name());
        known.insert(format!("oracle_cdc_{}", series.name));
    }
    let mut unknown = Vec::new();
    for (at, _) in text.match_indices("oracle_cdc_") {
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let name: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.ends_with('_') {
            // `oracle_cdc_<name>`: a pattern, not a name
            continue;
        }
        let base = ["_bucket", "_sum", "_count", "_total"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
            .unwrap_or(&name);
        if !known.contains(&name) && !known.contains(base) {
            unknown.push(name);
        }
    }
    unknown
}

#[test]
fn every_metric_the_docs_name_is_served() {
    let mut bad = Vec::new();
    for (name, text) in doc_files() {
        for metric in unknown_metrics(&text) {
            bad.push(format!("{name}: {metric}"));
        }
    }
    assert!(
        bad.is_empty(),
        "metrics /metrics does not serve:\n{}",
        bad.join("\n")
    );
    assert_eq!(
        unknown_metrics("`oracle_cdc_rows_mined_total`, oracle_cdc_scn_lag_bucket"),
        Vec::<String>::new()
    );
    assert_eq!(
        unknown_metrics("watch oracle_cdc_made_up_total and `oracle_cdc_<name>`"),
        vec!["oracle_cdc_made_up_total".to_owned()]
    );
}
