//! The context of a manifest check: the file's path and text, so that every error points
//! at the key at fault ([`Ctx::err`]), and TOML syntax errors placed the same way.

use std::path::Path;
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use toml::Spanned;

use crate::error::{Error, Result, Span, did_you_mean};

pub(crate) struct Ctx<'a> {
    pub(crate) path: &'a Path,
    pub(crate) text: &'a Arc<str>,
}

impl Ctx<'_> {
    pub(crate) fn span(&self, range: std::ops::Range<usize>) -> Span {
        Span {
            path: self.path.to_path_buf(),
            text: self.text.clone(),
            range,
        }
    }

    pub(crate) fn err<T>(
        &self,
        s: &Spanned<T>,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Error {
        Error::input(message).at(self.span(s.span())).help(help)
    }

    /// [`Ctx::alignment`] of a setting that may be left out.
    pub(crate) fn optional_alignment(
        &self,
        v: &Option<Spanned<i64>>,
        what: &str,
    ) -> Result<Option<u64>> {
        v.as_ref().map(|a| self.alignment(a, what)).transpose()
    }

    pub(crate) fn alignment(&self, v: &Spanned<i64>, what: &str) -> Result<u64> {
        let a = *v.get_ref();
        if a <= 0 || !(a as u64).is_power_of_two() {
            return Err(self.err(
                v,
                format!("{what} is {a}, which is not a power of two"),
                "use 1, 2, 4, 8, 16, 32, ...",
            ));
        }
        // The generated arenas are aligned by `planner::rt::Align<N>`, which stops here.
        if a as u64 > crate::rt::MAX_ALIGN {
            return Err(self.err(
                v,
                format!(
                    "{what} is {a}, above {}, the largest alignment generated arenas support",
                    crate::rt::MAX_ALIGN
                ),
                format!("use a power of two up to {}", crate::rt::MAX_ALIGN),
            ));
        }
        Ok(a as u64)
    }
}

pub(super) fn toml_error(e: toml::de::Error, ctx: &Ctx<'_>) -> Error {
    let msg = e.message().trim().to_string();
    let span = e.span();
    let mut err = Error::input(msg.clone()).with_source(e);
    // serde says "unknown field `x`, expected one of `a`, `b`": add a did-you-mean.
    if let Some(rest) = msg.strip_prefix("unknown field `")
        && let Some((seen, expected)) = rest.split_once('`')
    {
        let names: Vec<&str> = expected
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| s)
            .collect();
        let help = match did_you_mean(seen, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("remove `{seen}`; the keys allowed here are listed above"),
        };
        err = err.help(help);
    }
    match span {
        Some(r) => err.at(ctx.span(r)),
        None => err.note(format!("in {}", ctx.path.display())),
    }
}
