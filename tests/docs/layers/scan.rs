//! What one file imports: `crate::` and `super::` paths read from its
//! tokens, resolved to the top-level modules they name.

use super::lex::{Tok, Token, ident, is, lex, path_text};
use super::{Import, module_path};

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
pub(super) fn imports(file: &str, text: &str) -> Vec<Import> {
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
