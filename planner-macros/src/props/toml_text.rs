//! TOML text for names of any kind, shared by the tests that put hostile names in a
//! manifest: the property tests (`props.rs`), `planner-build/tests/names.rs` and the
//! `generated_names` fuzz target (both include this file).

/// A TOML basic string holding `s` exactly: everything but ASCII letters and digits as a
/// `\u` or `\U` escape.
pub fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if (c as u32) <= 0xffff {
            out.push_str(&format!("\\u{:04X}", c as u32));
        } else {
            out.push_str(&format!("\\U{:08X}", c as u32));
        }
    }
    out.push('"');
    out
}
