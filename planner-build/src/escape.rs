//! How text from the manifest or the model (names, ids, file paths) is written into the
//! C header and the linker scripts, so that no input can change what they mean.
//!
//! The rule, for C comments, linker-script comments and linker-script strings alike: the
//! text is printable ASCII with no `\` at all (so no backslash-newline splice, in any
//! phase of translation), and no byte pair that ends a comment or starts one (`*/`, `/*`)
//! or starts a trigraph (`??`, which C before C23 reads in phase 1, `??/` being `\`).
//! Everything else is percent-encoded, byte by byte of its UTF-8: `%` itself, `\`, `"`
//! (which would end a linker-script string), control characters (a newline would end a
//! C++ `//` or a linker line), any byte above `~`, and the second character of those pairs.
//! The encoding is reversible, so a name is still readable and never ambiguous: `x*\` +
//! newline + `/` is written `x*%5C%0A/`.

use std::fmt::Write as _;

/// `text` as it may appear inside a C or linker-script `/* ... */` comment or inside a
/// linker-script `"..."` string (see the module documentation for the rule).
pub(crate) fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prev = None;
    for c in text.chars() {
        let paired = matches!(
            (prev, c),
            (Some('*'), '/') | (Some('/'), '*') | (Some('?'), '?')
        );
        let plain = (' '..='~').contains(&c) && !matches!(c, '%' | '\\' | '"');
        if plain && !paired {
            out.push(c);
            prev = Some(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
            // The last character written is a hex digit.
            prev = None;
        }
    }
    out
}

/// True when `name` can stand in a linker script as a region name: an identifier, which
/// GNU ld and LLD both read as one name token.
pub(crate) fn is_linker_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn percent_decode(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn nothing_that_ends_a_comment_or_splices_a_line() {
        let cases = [
            "x*\\\n/\n#define A 1\n/*",
            "*/",
            "/*",
            "a//b",
            "??/",
            "???=",
            "%41",
            "\"quoted\"",
            "tab\there",
            "naïve ✓",
            "sequential/dense_2/MatMul;model/conv*2",
        ];
        for c in cases {
            let e = text(c);
            for bad in ["*/", "/*", "\\", "??", "\"", "\n", "\r"] {
                assert!(!e.contains(bad), "{c:?} -> {e:?} contains {bad:?}");
            }
            assert!(e.chars().all(|c| (' '..='~').contains(&c)), "{e:?}");
            assert_eq!(percent_decode(&e), c, "{e:?}");
        }
        assert_eq!(text("x*\\\n/"), "x*%5C%0A/");
        assert_eq!(text("a*/b/*c"), "a*%2Fb/%2Ac");
        assert_eq!(text("conv/BiasAdd:0"), "conv/BiasAdd:0");
    }

    #[test]
    fn linker_names() {
        assert!(is_linker_name("RAM") && is_linker_name("_d2") && is_linker_name("SRAM1"));
        for bad in ["", "1X", "RAM }", "A\"B", "a.b", "RAM\n"] {
            assert!(!is_linker_name(bad), "{bad:?}");
        }
    }
}
