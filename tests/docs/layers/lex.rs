//! The lexer: a file's text as identifiers, `::` and punctuation with
//! their lines, and small readers over those tokens.

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: usize,
}

/// Identifiers, `::` and punctuation with their lines; comments, literals
/// and numbers are dropped (their newlines still count).
pub(super) fn lex(text: &str) -> Vec<Token> {
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

pub(super) fn ident(tokens: &[Token], i: usize) -> Option<&str> {
    match tokens.get(i).map(|t| &t.tok) {
        Some(Tok::Ident(name)) => Some(name),
        _ => None,
    }
}

pub(super) fn is(tokens: &[Token], i: usize, tok: &Tok) -> bool {
    tokens.get(i).is_some_and(|t| &t.tok == tok)
}

/// `a::b::c` from i on, as far as the path goes.
pub(super) fn path_text(tokens: &[Token], mut i: usize) -> String {
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
