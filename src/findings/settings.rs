//! The settings a fix names, with their values: a catalogue entry's fix
//! says "raise net.core.somaxconn", the finding adds "here
//! net.core.somaxconn = 4096", read in the watched namespace that
//! sample. Every sysctl a catalogue fix names is read (a test holds the
//! knob lists to the catalogue), so the join is the whole catalogue's.

use crate::model::Sample;

/// The sysctl names in `text`: words that start with "net." and run on
/// through lower-case letters, digits, '_' and '.', without a trailing
/// dot. A pattern ("net.ipv4.conf.*.rp_filter") yields its head only,
/// which no knob matches.
pub fn named(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let at = rest.find("net.")?;
        // A word of its own: "subnet.x" is not one.
        let starts_word = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'));
        let word = &rest[at..];
        let end = word
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.'))
            .unwrap_or(word.len());
        let name = word[..end].trim_end_matches('.');
        rest = &word[end.max(4)..];
        Some(starts_word.then_some(name))
    })
    .flatten()
    .filter(|name| name.matches('.').count() >= 2)
}

/// A knob's value in `sample`: the namespace's (TCP tab and findings'
/// knobs), else the host-wide softnet ones.
fn value<'a>(sample: &'a Sample, name: &str) -> Option<&'a str> {
    let tcp = sample.tcp.as_ref().and_then(|t| t.knob(name));
    let cpu = || {
        sample
            .cpu
            .as_ref()
            .and_then(|c| c.knobs.get(name))
            .map(String::as_str)
    };
    tcp.or_else(cpu)
}

/// `text` and, after it, the value of each setting it names that
/// `sample` holds, as `sysctl` prints them: "...; here net.core.somaxconn
/// = 4096, net.ipv4.tcp_rmem = 4096 131072 6291456". Unchanged when it
/// names none netlens read.
pub fn with_values(text: &str, sample: &Sample) -> String {
    let mut values: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for name in named(text) {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        if let Some(value) = value(sample, name) {
            let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
            values.push(format!("{name} = {value}"));
        }
    }
    if values.is_empty() {
        return text.to_string();
    }
    format!("{text}; here {}", values.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sockets::TcpSample;

    #[test]
    fn names_are_whole_words_and_patterns_yield_no_knob() {
        let text = "raise net.core.somaxconn, or net.ipv4.tcp_rmem's maximum; \
                    net.ipv4.conf.*.rp_filter; a subnet.ipv4.x; net.core.rmem_max.";
        let names: Vec<&str> = named(text).collect();
        assert_eq!(
            names,
            [
                "net.core.somaxconn",
                "net.ipv4.tcp_rmem",
                "net.ipv4.conf",
                "net.core.rmem_max"
            ]
        );
    }

    #[test]
    fn each_setting_read_gets_its_value_once() {
        let mut tcp = TcpSample::default();
        tcp.knobs.insert("net.core.somaxconn".into(), "4096".into());
        tcp.knobs
            .insert("net.ipv4.tcp_rmem".into(), "4096\t131072\t6291456".into());
        let sample = Sample {
            tcp: Some(tcp),
            ..Default::default()
        };
        let text = "raise net.core.somaxconn (and the backlog), net.ipv4.tcp_rmem's \
                    maximum or net.ipv4.udp_mem; net.core.somaxconn again";
        assert_eq!(
            with_values(text, &sample),
            format!(
                "{text}; here net.core.somaxconn = 4096, net.ipv4.tcp_rmem = 4096 131072 \
                 6291456"
            )
        );
        assert_eq!(with_values(text, &Sample::default()), text);
    }
}
