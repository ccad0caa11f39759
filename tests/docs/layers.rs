//! The stair rail (issue 19): the crate is one house with one-way stairs.
//! Every top-level module under src/ has a rank (the table below, the same
//! as the restructure plan's); a module may use only its own rank or below,
//! modules of one rank must not form a cycle, and every src file belongs to
//! a ranked module.
//!
//! The checker reads the source text, not the compiler's view, so it is a
//! few plain functions over (path, text) pairs that the unit tests below
//! feed with made-up sources. What it reads:
//! - paths starting `crate::` (in `use`, in expressions, in types, in macro
//!   bodies), also grouped: `use crate::{app, ui::x}` is two imports;
//! - `super::` chains, resolved against the file's module path and any
//!   inline `mod name { .. }` around them; a chain that climbs to the crate
//!   root imports the top-level module named next;
//! - code under `#[cfg(test)]` too: a test that reaches up the stairs is
//!   still a dependency of its module.
//!
//! What it ignores: comments (so doc comments and the examples in them),
//! string, byte-string, raw-string and char literals (so a path spelled in a
//! string, such as serde's `with = "..."`, is not seen), `$crate` (a macro's
//! own crate), visibility (`pub(crate)`, `pub(super)`), glob imports of the
//! crate root (`use crate::*`), and `netlens::` paths (only main.rs, benches
//! and tests use those, and they sit above every rank). A file belongs to the
//! module of its place under src/ (`src/x.rs`, `src/x/...`); `#[path]` is not
//! followed, so keep files where their module is. src/lib.rs and src/main.rs
//! are the crate roots and belong to no module.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

/// Bottom to top: a module may use its own rank or below.
const RANKS: &[&[&str]] = &[
    /* 0 */ &["model", "units", "text"],
    /* 1 */ &["packet"],
    /* 2 */
    &[
        "collect",
        "capture",
        "dns",
        "load",
        "path",
        "safe_file",
        "clock",
    ],
    /* 3 */ &["findings"],
    /* 4 */ &["session", "notify"],
    /* 5 */ &["report", "export", "record", "config"],
    /* 6 */ &["app"],
    /* 7 */ &["ui"],
    /* 8 */ &["commands", "cli", "manual"],
];

/// Crate roots: they declare the modules and belong to none of them.
const ROOTS: &[&str] = &["src/lib.rs", "src/main.rs"];

fn rank(module: &str) -> Option<usize> {
    RANKS.iter().position(|modules| modules.contains(&module))
}

/// One use of a top-level module by a source file.
#[derive(Debug, Clone, PartialEq)]
struct Import {
    file: String,
    line: usize,
    /// The importing file's top-level module.
    from: String,
    /// The imported path's top-level module.
    to: String,
    /// The path as written, roughly (`crate::ui::x`, `super::super::app`).
    path: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Violation {
    /// A module uses one of a higher rank.
    Upward(Import),
    /// A module uses a module that has no rank.
    ImportsUnranked(Import),
    /// A src file outside every ranked module.
    Unranked { file: String, module: String },
    /// Modules of one rank that use each other round a loop: `modules` is
    /// the loop (first module repeated at the end), `via` one import per step.
    Cycle {
        modules: Vec<String>,
        via: Vec<Import>,
    },
}

impl Violation {
    /// The modules involved, for the tally: `app -> ui`.
    fn pair(&self) -> String {
        match self {
            Violation::Upward(import) | Violation::ImportsUnranked(import) => {
                format!("{} -> {}", import.from, import.to)
            }
            Violation::Unranked { module, .. } => format!("{module} (no rank)"),
            Violation::Cycle { modules, .. } => format!("cycle {}", modules.join(" -> ")),
        }
    }
}

fn rank_label(module: &str) -> String {
    rank(module).map_or("no rank".to_string(), |r| format!("rank {r}"))
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Violation::Upward(i) | Violation::ImportsUnranked(i) => write!(
                f,
                "{}:{}: {} ({}) uses {} ({}): `{}`",
                i.file,
                i.line,
                i.from,
                rank_label(&i.from),
                i.to,
                rank_label(&i.to),
                i.path
            ),
            Violation::Unranked { file, module } => write!(
                f,
                "{file}: belongs to `{module}`, which has no rank in tests/docs/layers.rs"
            ),
            Violation::Cycle { modules, via } => {
                write!(
                    f,
                    "cycle in {}: {}",
                    rank_label(&modules[0]),
                    modules.join(" -> ")
                )?;
                for i in via {
                    write!(
                        f,
                        "\n    {}:{}: {} uses {}: `{}`",
                        i.file, i.line, i.from, i.to, i.path
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// The module path of a file under src/ (`src/a/b.rs` is `a::b`,
/// `src/a/mod.rs` is `a`); None for the crate roots and non-Rust files.
fn module_path(file: &str) -> Option<Vec<String>> {
    if ROOTS.contains(&file) {
        return None;
    }
    let rest = file.strip_prefix("src/")?.strip_suffix(".rs")?;
    let mut parts: Vec<String> = rest.split('/').map(str::to_string).collect();
    if parts.len() > 1 && parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some(parts)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

/// Identifiers, `::` and punctuation with their lines; comments, literals
/// and numbers are dropped (their newlines still count).
fn lex(text: &str) -> Vec<Token> {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Skips a "..." body from just after the opening quote.
    let skip_quoted = |mut i: usize, line: &mut usize| -> usize {
        while i < c.len() {
            match c[i] {
                '\\' => {
                    if at(i + 1) == '\n' {
                        *line += 1;
                    }
                    i += 2;
                }
                '"' => return i + 1,
                ch => {
                    if ch == '\n' {
                        *line += 1;
                    }
                    i += 1;
                }
            }
        }
        i
    };
    // Skips a raw string body (after the opening quote) closed by `"` and
    // `hashes` '#'.
    let skip_raw = |mut i: usize, hashes: usize, line: &mut usize| -> usize {
        while i < c.len() {
            if c[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#') {
                return i + 1 + hashes;
            }
            if c[i] == '\n' {
                *line += 1;
            }
            i += 1;
        }
        i
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_quoted(i + 1, &mut line);
        } else if ch == '\'' {
            if at(i + 1) == '\\' {
                // '\n', '\'', '\u{..}': past the escaped char to the close.
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                // A lifetime or label: its name lexes as an identifier.
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let prefix = matches!(word.as_str(), "r" | "b" | "br" | "c" | "cr");
            let raw = word.ends_with('r') && prefix;
            if prefix && at(i) == '"' {
                i = if raw {
                    skip_raw(i + 1, 0, &mut line)
                } else {
                    skip_quoted(i + 1, &mut line)
                };
            } else if raw && at(i) == '#' {
                let mut hashes = 0;
                while at(i + hashes) == '#' {
                    hashes += 1;
                }
                if at(i + hashes) == '"' {
                    i = skip_raw(i + hashes + 1, hashes, &mut line);
                } else {
                    // r#ident: a raw identifier.
                    i += 1;
                    let start = i;
                    while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                        i += 1;
                    }
                    out.push(Token {
                        tok: Tok::Ident(c[start..i].iter().collect()),
                        line,
                    });
                }
            } else if word == "b" && at(i) == '\'' {
                // b'x': the char branch above skips the rest.
            } else {
                out.push(Token {
                    tok: Tok::Ident(word),
                    line,
                });
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Token {
                tok: Tok::PathSep,
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                tok: Tok::Punct(ch),
                line,
            });
            i += 1;
        }
    }
    out
}

fn ident(tokens: &[Token], i: usize) -> Option<&str> {
    match tokens.get(i).map(|t| &t.tok) {
        Some(Tok::Ident(name)) => Some(name),
        _ => None,
    }
}

fn is(tokens: &[Token], i: usize, tok: &Tok) -> bool {
    tokens.get(i).is_some_and(|t| &t.tok == tok)
}

/// `a::b::c` from i on, as far as the path goes.
fn path_text(tokens: &[Token], mut i: usize) -> String {
    let mut parts = Vec::new();
    while let Some(name) = ident(tokens, i) {
        parts.push(name.to_string());
        if !is(tokens, i + 1, &Tok::PathSep) {
            break;
        }
        i += 2;
    }
    parts.join("::")
}

/// The top-level modules a path at the crate root names, from token i (just
/// after `crate::` or the last `super::`): one for `x::..`, one per item
/// for `{x, y::z}`. Each with its line and its text after the root.
fn named_at_root(tokens: &[Token], i: usize) -> Vec<(String, usize, String)> {
    if let Some(name) = ident(tokens, i) {
        if name == "self" {
            return Vec::new();
        }
        return vec![(name.to_string(), tokens[i].line, path_text(tokens, i))];
    }
    if !is(tokens, i, &Tok::Punct('{')) {
        return Vec::new(); // `*`
    }
    let mut found = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for j in i..tokens.len() {
        match &tokens[j].tok {
            Tok::Punct('{') => {
                depth += 1;
                item_start = depth == 1;
                continue;
            }
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Tok::Punct(',') if depth == 1 => {
                item_start = true;
                continue;
            }
            Tok::Ident(name) if item_start && depth == 1 && name != "self" => {
                found.push((name.clone(), tokens[j].line, path_text(tokens, j)));
            }
            _ => {}
        }
        item_start = false;
    }
    found
}

/// Every use of another top-level module in one file.
fn imports(file: &str, text: &str) -> Vec<Import> {
    let Some(own) = module_path(file) else {
        return Vec::new();
    };
    let tokens = lex(text);
    let mut found = Vec::new();
    // Inline modules around the current token: (name, brace depth of body).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let mut depth = 0;
    let mut add = |to: String, line: usize, path: String| {
        if to != own[0] {
            found.push(Import {
                file: file.to_string(),
                line,
                from: own[0].clone(),
                to,
                path,
            });
        }
    };
    let mut i = 0;
    while i < tokens.len() {
        let after_sep = i > 0 && is(&tokens, i - 1, &Tok::PathSep);
        let after_dollar = i > 0 && is(&tokens, i - 1, &Tok::Punct('$'));
        match &tokens[i].tok {
            Tok::Punct('{') => {
                depth += 1;
                if let Some(name) = pending_mod.take() {
                    inline.push((name, depth));
                }
            }
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            Tok::Punct(';') => pending_mod = None,
            Tok::Ident(word) if word == "mod" => {
                if let Some(name) = ident(&tokens, i + 1)
                    && is(&tokens, i + 2, &Tok::Punct('{'))
                {
                    pending_mod = Some(name.to_string());
                }
            }
            Tok::Ident(word)
                if word == "crate"
                    && !after_sep
                    && !after_dollar
                    && is(&tokens, i + 1, &Tok::PathSep) =>
            {
                for (to, line, rest) in named_at_root(&tokens, i + 2) {
                    add(to, line, format!("crate::{rest}"));
                }
            }
            Tok::Ident(word)
                if word == "super" && !after_sep && is(&tokens, i + 1, &Tok::PathSep) =>
            {
                let mut climbs = 0;
                let mut j = i;
                while ident(&tokens, j) == Some("super") && is(&tokens, j + 1, &Tok::PathSep) {
                    climbs += 1;
                    j += 2;
                }
                let here = own.len() + inline.len();
                if climbs == here {
                    for (to, line, rest) in named_at_root(&tokens, j) {
                        add(to, line, format!("{}{rest}", "super::".repeat(climbs)));
                    }
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Every violation in a tree of (path under the crate, text) files.
fn check(files: &[(String, String)]) -> Vec<Violation> {
    let mut files: Vec<&(String, String)> = files.iter().collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut violations = Vec::new();
    // Same-rank uses between two modules: (from, to) -> the first import.
    let mut sideways: BTreeMap<(String, String), Import> = BTreeMap::new();
    for (file, text) in files {
        let Some(own) = module_path(file) else {
            continue;
        };
        let Some(from_rank) = rank(&own[0]) else {
            violations.push(Violation::Unranked {
                file: file.clone(),
                module: own[0].clone(),
            });
            continue;
        };
        for import in imports(file, text) {
            match rank(&import.to) {
                None => violations.push(Violation::ImportsUnranked(import)),
                Some(to_rank) if to_rank > from_rank => violations.push(Violation::Upward(import)),
                Some(to_rank) if to_rank == from_rank => {
                    let key = (import.from.clone(), import.to.clone());
                    sideways.entry(key).or_insert(import);
                }
                Some(_) => {}
            }
        }
    }
    violations.extend(cycles(&sideways));
    violations
}

/// One loop per group of same-rank modules that reach each other.
fn cycles(edges: &BTreeMap<(String, String), Import>) -> Vec<Violation> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    let reach = |start: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.to_string()];
        while let Some(m) = todo.pop() {
            for n in next.get(m.as_str()).into_iter().flatten() {
                if seen.insert(n.to_string()) {
                    todo.push(n.to_string());
                }
            }
        }
        seen
    };
    let mut reported: BTreeSet<String> = BTreeSet::new();
    let mut found = Vec::new();
    for start in next.keys() {
        if reported.contains(*start) || !reach(start).contains(*start) {
            continue;
        }
        // The group: every module on a loop through start.
        let group: BTreeSet<String> = reach(start)
            .into_iter()
            .filter(|m| reach(m).contains(*start))
            .collect();
        // A shortest loop start -> .. -> start, breadth first.
        let mut came_from: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start.to_string()]);
        'search: while let Some(m) = queue.pop_front() {
            for n in next.get(m.as_str()).into_iter().flatten() {
                if *n == *start {
                    came_from.insert(format!("{start}#end"), m.clone());
                    break 'search;
                }
                if !came_from.contains_key(*n) {
                    came_from.insert(n.to_string(), m.clone());
                    queue.push_back(n.to_string());
                }
            }
        }
        // Back from the module that closes the loop to start, then reversed.
        let mut modules = vec![start.to_string()];
        let mut at = came_from[&format!("{start}#end")].clone();
        while at != *start {
            modules.push(at.clone());
            at = came_from[&at].clone();
        }
        modules[1..].reverse();
        modules.push(start.to_string());
        let via = modules
            .windows(2)
            .map(|w| edges[&(w[0].clone(), w[1].clone())].clone())
            .collect();
        reported.extend(group);
        found.push(Violation::Cycle { modules, via });
    }
    found
}

/// Every .rs file under dir, as ("src/...", text), sorted.
fn read_tree(root: &Path, dir: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut todo = vec![root.join(dir)];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let name = path.strip_prefix(root).expect("under the crate");
                files.push((name.to_string_lossy().replace('\\', "/"), text));
            }
        }
    }
    files.sort();
    files
}

/// This crate's src/, or with NETLENS_LAYERS_ROOT=DIR the src/ of another
/// checkout (another branch's worktree, `git archive` of main), to see its
/// violations without building it.
#[test]
fn the_source_tree_has_one_way_stairs() {
    let root = std::env::var_os("NETLENS_LAYERS_ROOT").map_or_else(
        || env!("CARGO_MANIFEST_DIR").into(),
        std::path::PathBuf::from,
    );
    let files = read_tree(&root, "src");
    assert!(
        files.len() > 20,
        "found only {} files under src",
        files.len()
    );
    let violations = check(&files);
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for v in &violations {
        println!("{v}");
        *tally.entry(v.pair()).or_default() += 1;
    }
    if !violations.is_empty() {
        println!("\nper module pair:");
        for (pair, count) in &tally {
            println!("{count:5}  {pair}");
        }
    }
    assert!(
        violations.is_empty(),
        "{} stair violations (listed above); ranks are in tests/docs/layers.rs",
        violations.len()
    );
}

#[cfg(test)]
mod checker {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn an_upward_import_is_named_with_file_line_and_modules() {
        let files = tree(&[
            ("src/model/sample.rs", "//! Samples.\n\nuse crate::ui::x;\n"),
            ("src/ui/x.rs", "use crate::model::sample;\n"),
        ]);
        let found = check(&files);
        assert_eq!(found.len(), 1, "{found:?}");
        let Violation::Upward(import) = &found[0] else {
            panic!("{found:?}")
        };
        assert_eq!(
            (
                import.file.as_str(),
                import.line,
                import.from.as_str(),
                import.to.as_str()
            ),
            ("src/model/sample.rs", 3, "model", "ui")
        );
        assert_eq!(
            found[0].to_string(),
            "src/model/sample.rs:3: model (rank 0) uses ui (rank 7): `crate::ui::x`"
        );
    }

    #[test]
    fn a_same_rank_cycle_is_named() {
        let files = tree(&[
            ("src/collect/a.rs", "use crate::capture::ring;\n"),
            (
                "src/capture/ring.rs",
                "fn f() {\n    crate::dns::probe();\n}\n",
            ),
            (
                "src/dns/probe.rs",
                "\n\npub fn g() -> crate::collect::a::T { todo!() }\n",
            ),
            // Same rank one way only: fine.
            ("src/load/x.rs", "use crate::safe_file;\n"),
        ]);
        let found = check(&files);
        assert_eq!(found.len(), 1, "{found:?}");
        let Violation::Cycle { modules, via } = &found[0] else {
            panic!("{found:?}")
        };
        assert_eq!(modules, &["capture", "dns", "collect", "capture"]);
        let sites: Vec<_> = via.iter().map(|i| (i.file.as_str(), i.line)).collect();
        assert_eq!(
            sites,
            [
                ("src/capture/ring.rs", 2),
                ("src/dns/probe.rs", 3),
                ("src/collect/a.rs", 1)
            ]
        );
        let text = found[0].to_string();
        assert!(
            text.starts_with("cycle in rank 2: capture -> dns -> collect -> capture"),
            "{text}"
        );
    }

    #[test]
    fn a_clean_tree_passes() {
        let files = tree(&[
            ("src/lib.rs", "pub mod model;\npub mod ui;\n"),
            (
                "src/main.rs",
                "use netlens::ui;\nfn main() { crate::x(); }\n",
            ),
            (
                "src/model.rs",
                "pub mod flow;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::flow::F;\n}\n",
            ),
            (
                "src/model/flow.rs",
                "pub(crate) struct F;\nuse super::Other;\nfn f() { super::super::model::x(); }\n",
            ),
            (
                "src/packet/decode.rs",
                "use crate::{model::{self, flow::F}, units};\nuse crate::*;\n",
            ),
            (
                "src/findings/stack.rs",
                "use super::thresholds::T;\npub(super) fn f() {}\nmacro_rules! m { () => { $crate::ui::x() } }\n",
            ),
            (
                "src/ui/mod.rs",
                "use crate::{app::State, findings, model::flow};\nuse super::ui::bar;\n",
            ),
            (
                "src/ui/tabs/dns.rs",
                "use super::super::app;\nuse crate::app::Tab;\n",
            ),
            ("src/manual.rs", "mod sections { use super::super::ui; }\n"),
        ]);
        let found = check(&files);
        let listed: String = found.iter().map(|v| format!("{v}\n")).collect();
        assert_eq!(found, [], "{listed}");
        // Not vacuous: one use up the stairs in the same tree is caught.
        let mut files = files;
        files.push((
            "src/model/y.rs".into(),
            "fn f() { super::super::ui::draw() }\n".into(),
        ));
        let found: Vec<String> = check(&files).iter().map(|v| v.to_string()).collect();
        assert_eq!(
            found,
            ["src/model/y.rs:1: model (rank 0) uses ui (rank 7): `super::super::ui::draw`"]
        );
    }

    #[test]
    fn grouped_imports_and_super_chains_to_the_root_count() {
        let files = tree(&[
            (
                "src/findings/x.rs",
                "use crate::{\n    app,\n    model::F,\n    ui::{a, b},\n};\n",
            ),
            (
                "src/model.rs",
                "mod tests {\n    mod deeper {\n        use super::super::super::app::S;\n    }\n}\n",
            ),
        ]);
        let found: Vec<String> = check(&files).iter().map(|v| v.to_string()).collect();
        assert_eq!(
            found,
            [
                "src/findings/x.rs:2: findings (rank 3) uses app (rank 6): `crate::app`",
                "src/findings/x.rs:4: findings (rank 3) uses ui (rank 7): `crate::ui`",
                "src/model.rs:3: model (rank 0) uses app (rank 6): `super::super::super::app::S`",
            ]
        );
    }

    /// Comments, doc comments (and the examples in them), strings of every
    /// kind and char literals are not code; the real import after them is
    /// still found on its own line.
    #[test]
    fn comments_strings_and_doc_examples_do_not_count() {
        let text = r####"//! Module doc: `crate::ui::x` is mentioned here.
//!
//! ```
//! use netlens::ui; crate::app::run();
//! ```

// use crate::ui::x;
/* a block /* nested: crate::app */ still comment crate::ui */
/// Doc example:
/// ```
/// crate::ui::draw();
/// ```
#[doc = "crate::ui::in_an_attribute"]
fn f<'a>(x: &'a str) -> char {
    let s = "use crate::ui::x; \" still the string crate::app";
    let r = r#"crate::ui "quoted" crate::app"#;
    let b = b"crate::ui";
    let br = br##"crate::ui "# crate::app"##;
    let q = '"';
    let e = '\'';
    let u = '\u{1F600}';
    let multi = "line one
crate::ui on line two";
    'outer: loop { break 'outer; }
    let r#type = 1;
    q
}
use crate::app::Real;
"####;
        let files = tree(&[("src/model/strings.rs", text)]);
        let found: Vec<String> = check(&files).iter().map(|v| v.to_string()).collect();
        let line = text
            .lines()
            .position(|l| l.starts_with("use crate::app::Real"))
            .unwrap()
            + 1;
        assert_eq!(
            found,
            [format!(
                "src/model/strings.rs:{line}: model (rank 0) uses app (rank 6): `crate::app::Real`"
            )]
        );
    }

    #[test]
    fn files_outside_ranked_modules_are_named() {
        let files = tree(&[
            ("src/lib.rs", "pub mod tmux;\n"),
            ("src/main.rs", ""),
            ("src/tmux.rs", "use crate::cli;\n"),
            ("src/man_sections.rs", ""),
            ("src/cli.rs", "use crate::tmux::run;\n"),
        ]);
        let found: Vec<String> = check(&files).iter().map(|v| v.to_string()).collect();
        assert_eq!(
            found,
            [
                "src/cli.rs:1: cli (rank 8) uses tmux (no rank): `crate::tmux::run`",
                "src/man_sections.rs: belongs to `man_sections`, which has no rank in tests/docs/layers.rs",
                "src/tmux.rs: belongs to `tmux`, which has no rank in tests/docs/layers.rs",
            ]
        );
    }

    #[test]
    fn module_paths_follow_the_file_layout() {
        assert_eq!(
            module_path("src/a/b.rs"),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(module_path("src/a/mod.rs"), Some(vec!["a".into()]));
        assert_eq!(module_path("src/a.rs"), Some(vec!["a".into()]));
        assert_eq!(module_path("src/lib.rs"), None);
        assert_eq!(module_path("src/main.rs"), None);
    }
}
