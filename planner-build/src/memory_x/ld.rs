//! The `MEMORY` command of a GNU ld linker script, read as ld reads it: regions on one line
//! or over several, `/* */` comments anywhere, `ORIGIN`/`org`/`o` and `LENGTH`/`len`/`l`,
//! attributes in parentheses, the comma between ORIGIN and LENGTH and between regions
//! optional, numbers in ld's forms (`0x`/`$` hex, leading-0 octal, `h`/`o`/`b`/`d`
//! suffixes, `K`/`M` scaling) and constant expressions (`+ - * / % << >> & | ~`, unary
//! minus, parentheses, `ORIGIN(r)`/`LENGTH(r)` of a region defined before). Anything else in
//! an expression (a symbol, `SIZEOF`, `.`) is refused with its position: its value is not
//! known before the link.

use std::path::Path;

use planner::Error;

/// One region of a `MEMORY` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Region {
    pub(super) name: String,
    pub(super) origin: u64,
    pub(super) length: u64,
    /// Line of the region's name (1-based).
    pub(super) line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A name, keyword or number: ld's lexer does not tell them apart by their first
    /// character alone (`o`, `l` are keywords in MEMORY; `0x10` and `10K` are numbers).
    Word(String),
    /// A quoted name.
    Quoted(String),
    /// Punctuation and operators (`<<` and `>>` as one).
    Punct(&'static str),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
    col: usize,
}

const PUNCT: [&str; 16] = [
    "<<", ">>", "{", "}", "(", ")", ":", "=", ",", "+", "-", "*", "/", "%", "&", "|",
];

/// What the script's errors point at and how they end.
struct Ctx<'a> {
    path: &'a Path,
}

impl Ctx<'_> {
    fn err(&self, line: usize, col: usize, what: &str) -> Error {
        Error::invalid_input(format!(
            "{}:{line}:{col}: {what}; write regions as `NAME (rwx) : ORIGIN = 0x20000000, LENGTH = 512K` in the MEMORY block",
            self.path.display()
        ))
    }
}

fn tokens(text: &str, ctx: &Ctx<'_>) -> Result<Vec<Token>, Error> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    let advance = |i: &mut usize, line: &mut usize, col: &mut usize, c: char| {
        *i += 1;
        if c == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
    };
    while let Some(&c) = chars.get(i) {
        if c.is_whitespace() {
            advance(&mut i, &mut line, &mut col, c);
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            let (l0, c0) = (line, col);
            advance(&mut i, &mut line, &mut col, '/');
            advance(&mut i, &mut line, &mut col, '*');
            loop {
                match chars.get(i) {
                    None => return Err(ctx.err(l0, c0, "a `/*` comment is never closed")),
                    Some('*') if chars.get(i + 1) == Some(&'/') => {
                        advance(&mut i, &mut line, &mut col, '*');
                        advance(&mut i, &mut line, &mut col, '/');
                        break;
                    }
                    Some(&c) => advance(&mut i, &mut line, &mut col, c),
                }
            }
            continue;
        }
        let (l0, c0) = (line, col);
        let tok = if c == '"' {
            advance(&mut i, &mut line, &mut col, c);
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None => return Err(ctx.err(l0, c0, "a quoted name is never closed")),
                    Some('"') => {
                        advance(&mut i, &mut line, &mut col, '"');
                        break;
                    }
                    Some(&c) => {
                        s.push(c);
                        advance(&mut i, &mut line, &mut col, c);
                    }
                }
            }
            Tok::Quoted(s)
        } else if is_word(c) {
            let mut s = String::new();
            while let Some(&c) = chars.get(i).filter(|&&c| is_word(c)) {
                s.push(c);
                advance(&mut i, &mut line, &mut col, c);
            }
            Tok::Word(s)
        } else {
            let two: String = chars[i..].iter().take(2).collect();
            match PUNCT.iter().find(|p| two.starts_with(**p)) {
                Some(&p) => {
                    for c in p.chars() {
                        advance(&mut i, &mut line, &mut col, c);
                    }
                    Tok::Punct(p)
                }
                None => {
                    // Any other character (`~`, or `;` and `>` of SECTIONS): a token of its own.
                    advance(&mut i, &mut line, &mut col, c);
                    Tok::Word(c.to_string())
                }
            }
        };
        out.push(Token {
            tok,
            line: l0,
            col: c0,
        });
    }
    Ok(out)
}

/// Characters of an ld name or number (`$` starts a hex number, `.` is in section names).
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '$')
}

/// A number in ld's notation, `None` if `w` is not one.
fn number(w: &str) -> Option<u64> {
    if !w.starts_with(|c: char| c.is_ascii_digit() || c == '$') {
        return None;
    }
    let (body, scale) = match w.chars().last()? {
        'K' | 'k' => (&w[..w.len() - 1], 1024u64),
        'M' | 'm' => (&w[..w.len() - 1], 1024 * 1024),
        _ => (w, 1),
    };
    let hex = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0X"))
        .or_else(|| body.strip_prefix('$'));
    let (digits, radix) = match (hex, body.chars().last()?) {
        (Some(h), _) => (h, 16),
        // ld's radix suffixes: 10h, 17o, 101b, 10d.
        (None, 'h' | 'H' | 'x' | 'X') if scale == 1 => (&body[..body.len() - 1], 16),
        (None, 'o' | 'O') if scale == 1 => (&body[..body.len() - 1], 8),
        (None, 'b' | 'B') if scale == 1 => (&body[..body.len() - 1], 2),
        (None, 'd' | 'D') if scale == 1 => (&body[..body.len() - 1], 10),
        // As in C, a leading 0 is octal.
        (None, _) if body.len() > 1 && body.starts_with('0') => (&body[1..], 8),
        (None, _) => (body, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()?.checked_mul(scale)
}

struct Parser<'a> {
    toks: &'a [Token],
    at: usize,
    ctx: &'a Ctx<'a>,
    /// Where the script ends, for errors there.
    end: (usize, usize),
    regions: Vec<Region>,
}

const ORIGIN: [&str; 3] = ["ORIGIN", "org", "o"];
const LENGTH: [&str; 3] = ["LENGTH", "len", "l"];

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.at)
    }

    fn pos(&self) -> (usize, usize) {
        self.peek().map_or(self.end, |t| (t.line, t.col))
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.toks.get(self.at).cloned();
        self.at += usize::from(t.is_some());
        t
    }

    fn err_here(&self, what: &str) -> Error {
        let (l, c) = self.pos();
        self.ctx.err(l, c, what)
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Punct(q), .. }) if *q == p)
    }

    fn expect_punct(&mut self, p: &str, after: &str) -> Result<(), Error> {
        if self.is_punct(p) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.err_here(&format!("expected `{p}` {after}, found {}", self.found())))
        }
    }

    fn found(&self) -> String {
        match self.peek().map(|t| &t.tok) {
            None => "the end of the file".into(),
            Some(Tok::Word(w)) => format!("`{w}`"),
            Some(Tok::Quoted(q)) => format!("\"{q}\""),
            Some(Tok::Punct(p)) => format!("`{p}`"),
        }
    }

    fn is_keyword(&self, set: &[&str]) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Word(w), .. }) if set.contains(&w.as_str()))
    }

    /// The regions up to the `}` that closes the block.
    fn block(&mut self) -> Result<(), Error> {
        loop {
            if self.is_punct("}") {
                self.at += 1;
                return Ok(());
            }
            if self.is_punct(",") {
                self.at += 1;
                continue;
            }
            let Some(t) = self.next() else {
                return Err(self.err_here("the MEMORY block has no closing `}`"));
            };
            let name = match t.tok {
                Tok::Word(w) if w == "INCLUDE" => {
                    return Err(self.ctx.err(
                        t.line,
                        t.col,
                        "INCLUDE inside MEMORY is not followed here, so its regions cannot be checked; write the regions the plan uses in this file",
                    ));
                }
                Tok::Word(w) if w.chars().all(is_word) => w,
                Tok::Quoted(q) => q,
                other => {
                    let shown = match other {
                        Tok::Word(w) => w,
                        Tok::Punct(p) => p.to_string(),
                        Tok::Quoted(q) => q,
                    };
                    return Err(self.ctx.err(
                        t.line,
                        t.col,
                        &format!("expected a region name, found `{shown}`"),
                    ));
                }
            };
            if self.is_punct("(") {
                // Attributes (`rwx`, `!w`, `rx!w`): what the region may hold, not its place.
                while !self.is_punct(")") {
                    if self.next().is_none() {
                        return Err(self.ctx.err(
                            t.line,
                            t.col,
                            &format!("the attributes of region {name} have no closing `)`"),
                        ));
                    }
                }
                self.at += 1;
            }
            self.expect_punct(":", &format!("after region name {name}"))?;
            if self.is_keyword(&LENGTH) {
                return Err(self.err_here(&format!(
                    "region {name} gives LENGTH before ORIGIN, which GNU ld refuses; put ORIGIN first"
                )));
            }
            let origin = self.assigned(&name, &ORIGIN, "`:`")?;
            if self.is_punct(",") {
                self.at += 1;
            }
            let length = self.assigned(&name, &LENGTH, "its ORIGIN")?;
            self.regions.push(Region {
                name,
                origin,
                length,
                line: t.line,
            });
        }
    }

    /// `ORIGIN = expr` (or `LENGTH = expr`) of region `name` after `after`, where `keyword`
    /// lists the word and its short forms: the expression's value.
    fn assigned(&mut self, name: &str, keyword: &[&str; 3], after: &str) -> Result<u64, Error> {
        let [word, short @ ..] = keyword;
        if !self.is_keyword(keyword) {
            return Err(self.err_here(&format!(
                "region {name} needs `{word} = ...` (or {}) after {after}, found {}",
                short.join(", "),
                self.found()
            )));
        }
        self.at += 1;
        self.expect_punct("=", &format!("after {word}"))?;
        self.expr()
    }

    /// A constant expression, as a non-negative value.
    fn expr(&mut self) -> Result<u64, Error> {
        let (l, c) = self.pos();
        let v = self.binary(0)?;
        u64::try_from(v).map_err(|_| {
            self.ctx.err(
                l,
                c,
                &format!("this expression is {v}, not an address or a size from 0 to 2^64 - 1"),
            )
        })
    }

    fn binary(&mut self, min_prec: u8) -> Result<i128, Error> {
        let mut lhs = self.unary()?;
        loop {
            let Some(Token {
                tok: Tok::Punct(op),
                line,
                col,
            }) = self.peek().cloned()
            else {
                return Ok(lhs);
            };
            let prec = match op {
                "|" => 1,
                "&" => 2,
                "<<" | ">>" => 3,
                "+" | "-" => 4,
                "*" | "/" | "%" => 5,
                _ => return Ok(lhs),
            };
            if prec < min_prec {
                return Ok(lhs);
            }
            self.at += 1;
            let rhs = self.binary(prec + 1)?;
            let v = match op {
                "|" => Some(lhs | rhs),
                "&" => Some(lhs & rhs),
                "<<" => u32::try_from(rhs)
                    .ok()
                    .filter(|&s| s < 64)
                    .and_then(|s| lhs.checked_shl(s)),
                ">>" => u32::try_from(rhs)
                    .ok()
                    .filter(|&s| s < 128)
                    .map(|s| lhs >> s),
                "+" => lhs.checked_add(rhs),
                "-" => lhs.checked_sub(rhs),
                "*" => lhs.checked_mul(rhs),
                "/" => lhs.checked_div(rhs),
                _ => lhs.checked_rem(rhs),
            };
            lhs = v
                .filter(|v| v.unsigned_abs() <= u128::from(u64::MAX))
                .ok_or_else(|| {
                    self.ctx.err(
                        line,
                        col,
                        &format!("`{lhs} {op} {rhs}` divides by zero or leaves 64 bits"),
                    )
                })?;
        }
    }

    fn unary(&mut self) -> Result<i128, Error> {
        let Some(t) = self.next() else {
            return Err(self.err_here("expected a number, found the end of the file"));
        };
        match t.tok {
            Tok::Punct("-") => Ok(-self.unary()?),
            Tok::Punct("+") => self.unary(),
            Tok::Word(w) if w == "~" => Ok(!self.unary()? & i128::from(u64::MAX)),
            Tok::Punct("(") => {
                let v = self.binary(0)?;
                self.expect_punct(")", "to close the parenthesis")?;
                Ok(v)
            }
            Tok::Word(w) if ORIGIN[..1].contains(&w.as_str()) || LENGTH[..1].contains(&w.as_str()) => {
                self.expect_punct("(", &format!("after {w}"))?;
                let (l, c) = self.pos();
                let name = match self.next().map(|t| t.tok) {
                    Some(Tok::Word(n) | Tok::Quoted(n)) => n,
                    _ => return Err(self.ctx.err(l, c, &format!("{w}( needs a region name"))),
                };
                self.expect_punct(")", &format!("after {w}({name}"))?;
                let r = self.regions.iter().find(|r| r.name == name).ok_or_else(|| {
                    self.ctx.err(
                        l,
                        c,
                        &format!("{w}({name}) names no region defined before it"),
                    )
                })?;
                Ok(i128::from(if w == "ORIGIN" { r.origin } else { r.length }))
            }
            Tok::Word(w) => number(&w).map(i128::from).ok_or_else(|| {
                self.ctx.err(
                    t.line,
                    t.col,
                    &format!(
                        "cannot read `{w}` as a number: only numbers (0x20000000, 512K, 2M), + - * / % << >> & | ~, parentheses and ORIGIN()/LENGTH() of an earlier region are read here, since a symbol's value is known only at link time; write the value as a number"
                    ),
                )
            }),
            Tok::Quoted(q) => Err(self.ctx.err(
                t.line,
                t.col,
                &format!("expected a number, found \"{q}\""),
            )),
            Tok::Punct(p) => Err(self.ctx.err(
                t.line,
                t.col,
                &format!("expected a number, found `{p}`"),
            )),
        }
    }
}

/// The regions of every `MEMORY` block of the linker script `text` (read from `path`).
pub(super) fn regions(text: &str, path: &Path) -> Result<Vec<Region>, Error> {
    let ctx = Ctx { path };
    let toks = tokens(text, &ctx)?;
    let end = (text.lines().count().max(1), 1);
    let mut p = Parser {
        toks: &toks,
        at: 0,
        ctx: &ctx,
        end,
        regions: Vec::new(),
    };
    let mut blocks = 0;
    while let Some(t) = p.next() {
        if t.tok == Tok::Word("MEMORY".into()) {
            p.expect_punct("{", "after MEMORY")?;
            p.block()?;
            blocks += 1;
        }
    }
    if blocks == 0 {
        return Err(ctx.err(1, 1, "no MEMORY block"));
    }
    Ok(p.regions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<Vec<(String, u64, u64, usize)>, String> {
        regions(text, Path::new("m.x"))
            .map(|v| {
                v.into_iter()
                    .map(|r| (r.name, r.origin, r.length, r.line))
                    .collect()
            })
            .map_err(|e| e.message().to_string())
    }

    #[test]
    fn numbers_in_lds_forms() {
        assert_eq!(number("0x20000000"), Some(0x2000_0000));
        assert_eq!(number("$ff"), Some(255));
        assert_eq!(number("512K"), Some(512 * 1024));
        assert_eq!(number("2m"), Some(2 << 20));
        assert_eq!(number("0x10K"), Some(16 * 1024));
        assert_eq!(number("010"), Some(8));
        assert_eq!(number("0"), Some(0));
        assert_eq!(number("10h"), Some(16));
        assert_eq!(number("101b"), Some(5));
        assert_eq!(number("17o"), Some(15));
        assert_eq!(number("12d"), Some(12));
        assert_eq!(number("_stack"), None);
        assert_eq!(number("0xffffffffffffffffK"), None);
    }

    #[test]
    fn regions_over_lines_with_comments_attributes_and_expressions() {
        let t = "/* board */\nMEMORY\n{\n  FLASH : ORIGIN = 0x28000000, LENGTH = 8M\n  RAM (rwx) :\n    ORIGIN = 0x20000000, /* DTCM */\n    LENGTH = 512K\n  SRAM (rw!x) : org = ORIGIN(RAM) + LENGTH(RAM) len = (1 << 20) - 4K,\n  \"X Y\":o=0,l=1\n}\nSECTIONS { .text : { *(.text*) } > FLASH }\n";
        assert_eq!(
            one(t).unwrap(),
            vec![
                ("FLASH".into(), 0x2800_0000, 8 << 20, 4),
                ("RAM".into(), 0x2000_0000, 512 << 10, 5),
                ("SRAM".into(), 0x2008_0000, (1 << 20) - 4096, 8),
                ("X Y".into(), 0, 1, 9),
            ]
        );
        // The reproducer's shape: one region over three lines.
        let t = "MEMORY\n{\n  FLASH : ORIGIN = 0x28000000, LENGTH = 8M\n  RAM (rwx) :\n    ORIGIN = 0x20000000,\n    LENGTH = 512K\n}\n";
        assert_eq!(
            one(t).unwrap()[1],
            ("RAM".into(), 0x2000_0000, 512 << 10, 4)
        );
        // Two MEMORY commands add up, as in ld.
        assert_eq!(
            one("MEMORY { A : o = 1, l = 2 } MEMORY { B : o = 3, l = 4 }")
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn what_is_refused_says_where_and_why() {
        let e = one("MEMORY {\n  RAM : ORIGIN = _start, LENGTH = 1\n}").unwrap_err();
        assert!(
            e.starts_with("m.x:2:18: cannot read `_start` as a number"),
            "{e}"
        );
        for (text, want) in [
            (
                "MEMORY {\n  RAM : LENGTH = 1, ORIGIN = 0\n}",
                "m.x:2:9: region RAM gives LENGTH before ORIGIN",
            ),
            (
                "MEMORY {\n  RAM : ORIGIN = 0\n}",
                "m.x:3:1: region RAM needs `LENGTH = ...` (or len, l) after its ORIGIN, found `}`;",
            ),
            (
                "MEMORY { RAM : org 0 }",
                "m.x:1:20: expected `=` after ORIGIN, found `0`;",
            ),
            (
                "MEMORY { RAM : 0, LENGTH = 1 }",
                "m.x:1:16: region RAM needs `ORIGIN = ...` (or org, o) after `:`, found `0`;",
            ),
            (
                "MEMORY { RAM : ORIGIN = 4 - 8, LENGTH = 1 }",
                "this expression is -4",
            ),
            (
                "MEMORY { RAM : ORIGIN = 4 / 0, LENGTH = 1 }",
                "divides by zero",
            ),
            (
                "MEMORY { RAM : ORIGIN = ORIGIN(FLASH), LENGTH = 1 }",
                "ORIGIN(FLASH) names no region defined before it",
            ),
            (
                "MEMORY { INCLUDE ram.x }",
                "INCLUDE inside MEMORY is not followed",
            ),
            ("MEMORY { RAM : ORIGIN = 0, LENGTH = 1", "no closing `}`"),
            (
                "MEMORY { /* RAM : ORIGIN = 0, LENGTH = 1 }",
                "m.x:1:10: a `/*` comment is never closed",
            ),
            ("SECTIONS {}", "no MEMORY block"),
            (
                "MEMORY { RAM : ORIGIN = 0xffffffffffffffff * 2, LENGTH = 1 }",
                "leaves 64 bits",
            ),
        ] {
            let e = one(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
