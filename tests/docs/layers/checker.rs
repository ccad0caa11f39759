//! The checker's own tests, on made-up source trees.

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
