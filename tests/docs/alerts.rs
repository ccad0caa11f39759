//! assets/netlens-alerts.yml: generated from the findings tables (fresh),
//! valid (`promtool check rules`), and every rule fires on its crafted
//! series and stays silent on healthy ones (`promtool test rules`: the
//! finding rules' tests are generated, the raw signals' written by hand).
//! promtool comes with Debian's prometheus package, which .ci/run installs.

use std::path::Path;
use std::process::Command;

const RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/netlens-alerts.yml");
const FINDINGS_TESTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/netlens-alerts-findings-test.yml"
);
const SIGNALS_TESTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/netlens-alerts-signals-test.yml"
);

/// Compares `path` with `generated`; with NETLENS_UPDATE_README=1 rewrites it.
fn fresh(path: &str, generated: &str) {
    if std::env::var_os("NETLENS_UPDATE_README").is_some() {
        std::fs::write(path, generated).expect("write generated file");
        return;
    }
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{path} is stale: regenerate with NETLENS_UPDATE_README=1 cargo test --profile fast-build --test suite docs::alerts"
    );
}

fn promtool(args: &[&str]) -> String {
    let out = Command::new("promtool")
        .args(args)
        .output()
        .expect("promtool is needed (Debian: apt-get install prometheus; .ci/run installs it)");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool {args:?} failed:\n{report}");
    report
}

/// Checks (or, updating, rewrites) both generated files once, before any
/// test reads them.
fn generated_files_are_fresh() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        fresh(RULES, &netlens::export::alerts::rules_yaml());
        fresh(
            FINDINGS_TESTS,
            &netlens::export::alerts::findings_tests_yaml("../../assets/netlens-alerts.yml"),
        );
    });
}

#[test]
fn the_rules_file_is_generated_from_the_findings() {
    generated_files_are_fresh();
    let text = std::fs::read_to_string(RULES).unwrap();
    for id in netlens::findings::IDS {
        // The trace's findings ride on no exported series: no rule.
        let on_demand = netlens::findings::path::ON_DEMAND.contains(id);
        assert_eq!(
            text.contains(&format!("netlens_finding: \"{id}\"")),
            !on_demand,
            "rule for {id}"
        );
    }
}

#[test]
fn promtool_checks_the_rules() {
    generated_files_are_fresh();
    if crate::common::need(&["promtool"]) {
        return;
    }
    let report = promtool(&["check", "rules", RULES]);
    let rules = netlens::export::alerts::rules().len();
    assert!(
        report.contains(&format!("SUCCESS: {rules} rules found")),
        "{report}"
    );
}

#[test]
fn every_alert_fires_on_its_failure_and_stays_silent_when_healthy() {
    generated_files_are_fresh();
    if crate::common::need(&["promtool"]) {
        return;
    }
    for tests in [FINDINGS_TESTS, SIGNALS_TESTS] {
        // promtool resolves rule_files relative to the test file.
        assert!(Path::new(tests).exists(), "{tests}");
        let report = promtool(&["test", "rules", tests]);
        assert!(report.contains("SUCCESS"), "{report}");
    }
}
