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

mod lex;
mod scan;

use scan::imports;

/// Bottom to top: a module may use its own rank or below.
const RANKS: &[&[&str]] = &[
    /* 0 */ &["model", "units", "text", "memory"],
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
mod checker;
