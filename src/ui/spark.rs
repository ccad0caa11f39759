//! Text sparklines: a series in block characters, newest on the right.

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The last `width` values as bars scaled to the largest of them. All-zero
/// series draw as the lowest bar, so a flat line still shows.
pub fn spark(values: &[f64], width: usize) -> String {
    let start = values.len().saturating_sub(width);
    let shown = &values[start..];
    let max = shown.iter().copied().fold(0.0, f64::max);
    shown
        .iter()
        .map(|v| {
            if max <= 0.0 || !v.is_finite() {
                BARS[0]
            } else {
                let level = (v / max * 7.0).round().clamp(0.0, 7.0) as usize;
                BARS[level]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_to_the_max_and_keeps_the_newest() {
        assert_eq!(spark(&[0.0, 1.0, 2.0], 3), "▁▅█");
        assert_eq!(spark(&[9.0, 0.0, 0.0], 2), "▁▁");
        assert_eq!(spark(&[], 5), "");
    }
}
