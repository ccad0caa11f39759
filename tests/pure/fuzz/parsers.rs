//! Property tests over the parsers of user input: the duration, filter,
//! config, replay time and load target parsers return Ok or Err on any
//! input, never panic. Bounded case counts keep each to about a second.

use crate::common::random;

use netlens::packet::filter::Filter;
use netlens::units::{parse_duration, parse_interval, parse_rate, parse_request_rate};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Durations as people mistype them: digits, dots, units, signs, huge.
fn duration_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9.]{0,30}(ms|s|m|h|d|)",
        "[+-]?[0-9]{1,25}(\\.[0-9]{0,5})?(ms|s|m|h)?",
        ".{0,40}",
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn durations_parse_or_fail_within_their_maximum(text in duration_text()) {
        super::cap();
        if let Ok(d) = parse_duration(&text) {
            prop_assert!(d <= netlens::units::MAX_DURATION);
            prop_assert!(std::time::Instant::now().checked_add(d).is_some());
        }
        if let Ok(d) = parse_interval(&text) {
            prop_assert!(d <= netlens::units::MAX_INTERVAL);
        }
        let _ = parse_rate(&text);
        let _ = parse_request_rate(&text);
    }

    #[test]
    fn replay_times_parse_or_fail(text in prop_oneof![duration_text(), "[+-]?[0-9:]{0,12}"]) {
        super::cap();
        let start = 1_704_103_200.0;
        if let Ok(t) = netlens::record::time::parse_at(&text, start, start + 5.0, 3600) {
            prop_assert!(t.is_finite());
        }
    }

    #[test]
    fn filters_from_random_bytes_parse_or_fail(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        super::cap();
        let _ = Filter::parse(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn grammar_shaped_filters_parse_or_fail(seed in 1u64.., depth in 0u32..6, wrap in 0usize..150) {
        super::cap();
        let mut rng = random::XorShift(seed);
        let inner = random::random_filter(&mut rng, depth);
        // Wrapped in parentheses and `not`s up to past the nesting limit.
        let text = format!("{}{}{inner}{}", "not ".repeat(wrap % 3), "(".repeat(wrap), ")".repeat(wrap));
        let _ = Filter::parse(&text);
    }

    #[test]
    fn config_text_parses_or_fails(text in "[a-z_\\[\\]=\" .0-9\\n{}-]{0,200}") {
        super::cap();
        let _ = netlens::config::parse(&text);
    }

    #[test]
    fn config_values_for_every_key_parse_or_fail(
        key in prop_oneof![
            Just("tab"), Just("interval"), Just("theme"), Just("mouse"), Just("compact"),
            Just("[columns]\nsockets"), Just("[columns]\nflows"), Just("[dns]\nprobes"),
            Just("[dns]\nservers"), Just("[thresholds]\nretrans_warn_percent"),
            Just("[thresholds]\nsyn_flood_syn_recv"),
        ],
        value in prop_oneof![
            duration_text().prop_map(|t| format!("{t:?}")),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| format!("{n:?}")),
            "\\[(\"[a-zA-Z0-9:./]{0,20}\", ){0,3}\\]",
            Just("true".to_string()),
            Just("{}".to_string()),
        ],
    ) {
        super::cap();
        let _ = netlens::config::parse(&format!("{key} = {value}\n"));
    }

    #[test]
    fn load_targets_parse_or_fail(text in "[0-9.:\\[\\]]{0,40}") {
        super::cap();
        // Digits, dots, colons and brackets only: every such target is an
        // address literal to `resolve`, so nothing reaches a resolver.
        let _ = netlens::load::resolve(&text);
    }
}
