//! The editing keys every one-line prompt shares (filters, load targets,
//! DNS probes, replay times), as listed in `keymap::PROMPT_KEYS`.

use super::keymap::Key;

/// Longest text a prompt takes (a pcap filter is the longest in practice).
pub const MAX_CHARS: usize = 300;

/// The prompt's text as shown, with the cursor; when it is full, a note
/// first (the end of a long text may be cut at the screen's edge).
pub fn shown(text: &str) -> String {
    if text.chars().count() >= MAX_CHARS {
        format!("[full: {MAX_CHARS} characters at most] {text}▏")
    } else {
        format!("{text}▏")
    }
}

/// Applies an editing key to `text`; returns whether it was one. Enter and
/// Esc are left to the prompt, which knows what they mean.
pub fn edit(text: &mut String, key: Key) -> bool {
    match key {
        Key::Char(c) => {
            if text.chars().count() < MAX_CHARS {
                text.push(c);
            }
        }
        Key::Backspace => {
            text.pop();
        }
        Key::Ctrl('u') => text.clear(),
        Key::Ctrl('w') => {
            let kept = text.trim_end().len();
            let word_start = text[..kept].rfind(char::is_whitespace).map_or(0, |i| i + 1);
            text.truncate(word_start);
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(start: &str, keys: &[Key]) -> String {
        let mut text = start.to_string();
        for key in keys {
            assert!(edit(&mut text, *key), "{key:?}");
        }
        text
    }

    #[test]
    fn editing_keys() {
        assert_eq!(typed("port 5", &[Key::Char('3')]), "port 53");
        assert_eq!(typed("port 53", &[Key::Backspace]), "port 5");
        assert_eq!(typed("127.0.0.1:5201", &[Key::Ctrl('u')]), "");
        assert_eq!(typed("tcp and port 53", &[Key::Ctrl('w')]), "tcp and port ");
        assert_eq!(typed("tcp and port ", &[Key::Ctrl('w')]), "tcp and ");
        assert_eq!(typed("tcp", &[Key::Ctrl('w')]), "");
        assert_eq!(typed("", &[Key::Backspace, Key::Ctrl('w')]), "");
        // Multi-byte characters are deleted whole.
        assert_eq!(typed("naïve", &[Key::Backspace, Key::Backspace]), "naï");
    }

    #[test]
    fn prompt_keys_and_the_rest() {
        let mut text = "x".repeat(MAX_CHARS);
        assert!(edit(&mut text, Key::Char('y')));
        assert_eq!(text.len(), MAX_CHARS);
        assert!(!edit(&mut text, Key::Enter));
        assert!(!edit(&mut text, Key::Esc));
        assert!(!edit(&mut text, Key::Ctrl('l')));
    }
}
