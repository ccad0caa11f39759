//! Text payloads (HTTP, SMTP, FTP, RTSP, WHOIS first lines; SSH banners;
//! Redis RESP) and tcpdump's hex dump.

use super::{Ctx, R, Trunc, print_char, printn, u8_at};
use std::fmt::Write;

pub const HTTP_METHODS: &[&str] = &[
    "OPTIONS",
    "GET",
    "HEAD",
    "POST",
    "PUT",
    "DELETE",
    "TRACE",
    "CONNECT",
    "PROPFIND",
    "PROPPATCH",
    "MKCOL",
    "COPY",
    "MOVE",
    "LOCK",
    "UNLOCK",
    "ORDERPATCH",
    "PATCH",
];

pub const RTSP_METHODS: &[&str] = &[
    "DESCRIBE",
    "ANNOUNCE",
    "GET_PARAMETER",
    "OPTIONS",
    "PAUSE",
    "PLAY",
    "RECORD",
    "REDIRECT",
    "SETUP",
    "SET_PARAMETER",
    "TEARDOWN",
];

/// The whitespace-separated token at `idx`; returns the index after it and
/// any following spaces, or None.
fn fetch_token(b: &[u8], idx: usize, len: usize) -> Option<(usize, String)> {
    let mut i = idx;
    let mut token = String::new();
    while i < len {
        let c = *b.get(i)?;
        if !c.is_ascii_graphic() {
            break;
        }
        if token.len() < 16 {
            token.push(c as char);
        }
        i += 1;
    }
    if i == len || token.is_empty() {
        return None;
    }
    while i < len {
        let c = *b.get(i)?;
        if c == b'\r' || c == b'\n' {
            break;
        }
        if c.is_ascii_graphic() {
            break;
        }
        i += 1;
    }
    Some((i, token))
}

/// txtproto_print without -v: the protocol name, then ": first line" when
/// the payload looks like a request or response.
pub fn txtproto(
    ctx: &mut Ctx,
    b: &[u8],
    len: usize,
    proto: &'static str,
    cmds: Option<&[&str]>,
) -> R {
    ctx.proto = proto;
    let mut print_this = cmds.is_none();
    if let Some(cmds) = cmds
        && let Some((idx, token)) = fetch_token(b, 0, len)
    {
        if cmds.iter().any(|c| c.eq_ignore_ascii_case(&token)) {
            print_this = true;
        } else if let Some((_, code)) = fetch_token(b, idx, len) {
            let c = code.as_bytes();
            if c.len() == 3 && c.iter().all(u8::is_ascii_digit) {
                print_this = true;
            }
        }
    }
    ctx.s(&proto.to_ascii_uppercase());
    if print_this {
        txt_line(ctx, b, len)?;
    }
    Ok(())
}

/// print_txt_line for the first line: printable ASCII up to CRLF or LF.
fn txt_line(ctx: &mut Ctx, b: &[u8], len: usize) -> R {
    let mut idx = 0;
    while idx < len {
        let c = u8_at(b, idx)?;
        if c == b'\n' {
            return emit(ctx, b, idx);
        }
        if c == b'\r' {
            if idx + 1 >= len {
                return Ok(());
            }
            if u8_at(b, idx + 1)? == b'\n' {
                return emit(ctx, b, idx);
            }
            return Ok(());
        }
        if !(c.is_ascii_graphic() || c == b' ') && c != b'\t' {
            return Ok(());
        }
        idx += 1;
    }
    emit(ctx, b, idx)?;
    Err(Trunc)
}

fn emit(ctx: &mut Ctx, b: &[u8], n: usize) -> R {
    ctx.s(": ");
    for c in &b[..n] {
        ctx.out.push(*c as char);
    }
    Ok(())
}

pub fn ssh(ctx: &mut Ctx, b: &[u8], len: usize) -> R {
    ctx.proto = "ssh";
    if len < 4 || b.len() < 4 || &b[..4] != b"SSH-" {
        return Ok(());
    }
    let mut idx = 0;
    while idx < len {
        let c = u8_at(b, idx)?;
        if c == b'\n' {
            break;
        }
        if c == b'\r' {
            if idx + 1 >= len {
                return Ok(());
            }
            if u8_at(b, idx + 1)? == b'\n' {
                break;
            }
            return Ok(());
        }
        if !(c.is_ascii_graphic() || c == b' ') {
            return Ok(());
        }
        idx += 1;
    }
    ctx.s(": SSH: ");
    for c in &b[..idx] {
        ctx.out.push(*c as char);
    }
    Ok(())
}

/// Redis RESP, pipelined messages included.
pub fn resp(ctx: &mut Ctx, b: &[u8], len: usize) -> R {
    ctx.proto = "resp";
    ctx.s(": RESP");
    let mut at = 0usize;
    let mut left = len;
    while left > 0 {
        let used = resp_parse(ctx, b, at, left)?;
        at += used;
        left -= used;
    }
    Ok(())
}

fn resp_parse(ctx: &mut Ctx, b: &[u8], at: usize, len: usize) -> R<usize> {
    if len < 1 {
        return Err(Trunc);
    }
    match u8_at(b, at)? {
        b'+' | b':' | b'-' => {
            let start = at + 1;
            let mut p = start;
            let mut left = len - 1;
            loop {
                if left < 2 {
                    return Err(Trunc);
                }
                if u8_at(b, p)? == b'\r' && u8_at(b, p + 1)? == b'\n' {
                    break;
                }
                p += 1;
                left -= 1;
            }
            segment(ctx, b, start, p - start)?;
            Ok(1 + (p - start) + 2)
        }
        b'$' => {
            let mut cur = len - 1;
            let mut p = at + 1;
            let (n, end) = resp_length(b, p, cur);
            cur -= end - p;
            p = end;
            if n >= 0 {
                let n = n as usize;
                if n == 0 {
                    ctx.s(" empty");
                } else {
                    if cur < n {
                        return Err(Trunc);
                    }
                    segment(ctx, b, p, n)?;
                    p += n;
                    cur -= n;
                }
                if cur < 2 {
                    return Err(Trunc);
                }
                if u8_at(b, p)? != b'\r' || u8_at(b, p + 1)? != b'\n' {
                    ctx.s(" invalid");
                    return Err(Trunc);
                }
                cur -= 2;
            } else {
                match n {
                    -1 => ctx.s(" null"),
                    -2 => return Err(Trunc),
                    -3 => ctx.s(" length too large"),
                    -4 => ctx.s(" length negative and not -1"),
                    _ => ctx.s(" invalid"),
                }
            }
            Ok(len - cur)
        }
        b'*' => {
            let mut cur = len - 1;
            let mut p = at + 1;
            let (n, end) = resp_length(b, p, cur);
            cur -= end - p;
            p = end;
            if n > 0 {
                for _ in 0..n {
                    let used = resp_parse(ctx, b, p, cur)?;
                    p += used;
                    cur -= used;
                }
            } else {
                match n {
                    0 => ctx.s(" empty"),
                    -1 => ctx.s(" null"),
                    -2 => return Err(Trunc),
                    -3 => ctx.s(" length too large"),
                    -4 => ctx.s(" length negative and not -1"),
                    _ => ctx.s(" invalid"),
                }
            }
            Ok(len - cur)
        }
        _ => {
            let mut p = at;
            let mut cur = len;
            while cur > 0 {
                match b.get(p) {
                    Some(b'\r' | b'\n') => {
                        p += 1;
                        cur -= 1;
                    }
                    _ => break,
                }
            }
            let start = p;
            loop {
                if cur < 1 {
                    return Err(Trunc);
                }
                let c = u8_at(b, p)?;
                if c == b'\r' || c == b'\n' {
                    break;
                }
                p += 1;
                cur -= 1;
            }
            if p > start {
                segment(ctx, b, start, p - start)?;
            }
            while cur > 0 {
                match b.get(p) {
                    Some(b'\r' | b'\n') => {
                        p += 1;
                        cur -= 1;
                    }
                    _ => break,
                }
            }
            Ok(len - cur)
        }
    }
}

fn segment(ctx: &mut Ctx, b: &[u8], start: usize, n: usize) -> R {
    ctx.s(" \"");
    printn(ctx.out, b, start, n)?;
    print_char(ctx.out, b'"');
    Ok(())
}

/// A RESP length: >= 0, -1 null, -2 truncated, -3 too large, -4 negative,
/// -5 invalid; and where parsing stopped.
fn resp_length(b: &[u8], mut p: usize, mut len: usize) -> (i64, usize) {
    if len == 0 {
        return (-2, p);
    }
    let mut neg = false;
    if b.get(p) == Some(&b'-') {
        neg = true;
        p += 1;
        len -= 1;
    }
    let mut result: i64 = 0;
    let mut saw_digit = false;
    let mut too_large = false;
    loop {
        if len == 0 {
            return (-2, p);
        }
        let Some(&c) = b.get(p) else {
            return (-2, p);
        };
        if !c.is_ascii_digit() {
            if !saw_digit {
                return (-5, p + 1);
            }
            break;
        }
        let d = i64::from(c - b'0');
        let max = i64::from(i32::MAX);
        if result > max / 10 {
            too_large = true;
        } else {
            result *= 10;
            if result == (max / 10) * 10 && d > max % 10 {
                too_large = true;
            } else {
                result += d;
            }
        }
        p += 1;
        len -= 1;
        saw_digit = true;
    }
    if b.get(p) != Some(&b'\r') {
        return (-5, p + 1);
    }
    p += 1;
    len -= 1;
    if len == 0 {
        return (-2, p);
    }
    match b.get(p) {
        Some(b'\n') => {}
        Some(_) => return (-5, p + 1),
        None => return (-2, p),
    }
    p += 1;
    if neg {
        if too_large || result != 1 {
            return (-4, p);
        }
        return (-1, p);
    }
    (if too_large { -3 } else { result }, p)
}

/// tcpdump's hex_print (no ASCII column) with "\n\t" before each line,
/// for up to `length` captured bytes: what print_unknown_data prints.
pub fn hex_print(out: &mut String, data: &[u8], length: usize) {
    let data = &data[..data.len().min(length)];
    for (line, chunk) in data.chunks(16).enumerate() {
        let _ = write!(out, "\n\t0x{:04x}: ", line * 16);
        for pair in chunk.chunks(2) {
            match pair {
                [a, b] => {
                    let _ = write!(out, " {a:02x}{b:02x}");
                }
                [a] => {
                    let _ = write!(out, " {a:02x}");
                }
                _ => {}
            }
        }
    }
}

/// hex_and_ascii_print with "\n\t" before each line, for up to `length`
/// captured bytes.
pub fn hexdump(out: &mut String, data: &[u8], length: usize) {
    let data = &data[..data.len().min(length)];
    for (line, chunk) in data.chunks(16).enumerate() {
        let mut hex = String::new();
        let mut ascii = String::new();
        for pair in chunk.chunks(2) {
            if pair.len() == 2 {
                let _ = write!(hex, " {:02x}{:02x}", pair[0], pair[1]);
            } else {
                let _ = write!(hex, " {:02x}", pair[0]);
            }
            for c in pair {
                ascii.push(if c.is_ascii_graphic() {
                    *c as char
                } else {
                    '.'
                });
            }
        }
        let _ = write!(out, "\n\t0x{:04x}: {hex:<40}  {ascii}", line * 16);
    }
}
