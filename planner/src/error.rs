//! The one error type of the `planner` crate.
//!
//! Errors say the problem first, then the fix, with the values seen. An error that comes from
//! a file position (a manifest key, a CSV row) carries the file, the line and column, and the
//! source line, and its `Display` renders them the way cargo renders TOML errors.

use std::boxed::Box;
use std::fmt;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

/// What went wrong, coarsely: decides the `planner` command's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A bad manifest, model, option or plan file (exit code 2).
    Input,
    /// Valid input that cannot be planned, such as a model that does not fit (exit code 1).
    Infeasible,
    /// A file could not be read or written.
    Io,
}

/// A position in a text file, with the file's text kept for rendering.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub(crate) path: PathBuf,
    pub(crate) text: Arc<str>,
    pub(crate) range: std::ops::Range<usize>,
}

impl Span {
    /// 1-based line and column of the start of the span.
    pub(crate) fn line_col(&self) -> (usize, usize) {
        let start = self.range.start.min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, start)];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[derive(Debug)]
struct Inner {
    kind: Kind,
    message: String,
    span: Option<Span>,
    label: Option<String>,
    help: Option<String>,
    notes: Vec<String>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// An error from planning: a bad input, a model that does not fit, or a file that could not
/// be read or written.
///
/// `Display` gives the full rendering (with the file, line, column and source line where
/// there is one); [`Error::message`] gives the one-line message alone.
pub struct Error {
    inner: Box<Inner>,
}

impl Error {
    fn new(kind: Kind, message: impl Into<String>) -> Error {
        Error {
            inner: Box::new(Inner {
                kind,
                message: message.into(),
                span: None,
                label: None,
                help: None,
                notes: Vec::new(),
                source: None,
            }),
        }
    }

    /// A bad model or graph (exit code 2).
    pub(crate) fn model(message: impl Into<String>) -> Error {
        Error::new(Kind::Input, message)
    }

    /// Bad input of any kind: manifest value, option, plan file (exit code 2).
    pub(crate) fn input(message: impl Into<String>) -> Error {
        Error::new(Kind::Input, message)
    }

    /// A valid input that cannot be planned (exit code 1).
    pub(crate) fn infeasible(message: impl Into<String>) -> Error {
        Error::new(Kind::Infeasible, message)
    }

    /// A file that could not be read or written.
    pub(crate) fn io(path: &Path, what: &str, err: std::io::Error) -> Error {
        let mut e = Error::new(Kind::Io, format!("cannot {what} {}: {err}", path.display()));
        e.inner.source = Some(Box::new(err));
        e
    }

    /// Attaches the position the error is about.
    pub(crate) fn at(mut self, span: Span) -> Error {
        self.inner.span = Some(span);
        self
    }

    /// Attaches a label shown under the source line, at the span.
    pub(crate) fn label(mut self, label: impl Into<String>) -> Error {
        self.inner.label = Some(label.into());
        self
    }

    /// Attaches a `help:` line that says how to fix it.
    pub(crate) fn help(mut self, help: impl Into<String>) -> Error {
        self.inner.help = Some(help.into());
        self
    }

    /// Attaches a `note:` line.
    pub(crate) fn note(mut self, note: impl Into<String>) -> Error {
        self.inner.notes.push(note.into());
        self
    }

    /// Keeps the underlying error as `source()`.
    pub(crate) fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        self.inner.source = Some(Box::new(source));
        self
    }

    /// A rejected input described by `message` (problem first, then the fix): for tools
    /// built on the planner, such as the `planner` command's own argument checks.
    pub fn invalid_input(message: impl Into<String>) -> Error {
        Error::input(message)
    }

    /// A file that could not be read or written, for tools built on the planner (the
    /// `planner-build` helper writing its outputs): `what` is the verb phrase, such as
    /// `"write plan file"`.
    pub fn file(path: &Path, what: &str, err: std::io::Error) -> Error {
        Error::io(path, what, err)
    }

    /// The one-line message, without position or help.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The `help:` text, when the error has one.
    pub fn help_text(&self) -> Option<&str> {
        self.inner.help.as_deref()
    }

    /// `file:line:col` of the position the error is about, when it has one.
    pub fn location(&self) -> Option<(PathBuf, usize, usize)> {
        self.inner.span.as_ref().map(|s| {
            let (l, c) = s.line_col();
            (s.path.clone(), l, c)
        })
    }

    /// True when the input was valid but cannot be planned (it does not fit). The
    /// `planner` command exits with 1 for these and 2 for rejected input.
    pub fn is_infeasible(&self) -> bool {
        self.inner.kind == Kind::Infeasible
    }

    /// True when a file could not be read or written.
    pub fn is_io(&self) -> bool {
        self.inner.kind == Kind::Io
    }

    /// Renders with `annotate-snippets`, the renderer rustc and cargo use.
    fn render(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
        let inner = &self.inner;
        let Some(span) = &inner.span else {
            write!(f, "{}", inner.message)?;
            if let Some(h) = &inner.help {
                write!(f, "\n  help: {h}")?;
            }
            for n in &inner.notes {
                write!(f, "\n  note: {n}")?;
            }
            return Ok(());
        };
        let path = span.path.display().to_string();
        let start = floor_char_boundary(&span.text, span.range.start.min(span.text.len()));
        let end = floor_char_boundary(&span.text, span.range.end.clamp(start, span.text.len()));
        let label = inner.label.as_deref().unwrap_or("");
        let snippet = Snippet::source(&*span.text)
            .path(&path)
            .annotation(AnnotationKind::Primary.span(start..end).label(label));
        let mut group: Group<'_> = Level::ERROR.primary_title(&inner.message).element(snippet);
        if let Some(h) = &inner.help {
            group = group.element(Level::HELP.message(h));
        }
        for n in &inner.notes {
            group = group.element(Level::NOTE.message(n));
        }
        let rendered = Renderer::plain().render(&[group]);
        // The renderer prints `error: `; callers add their own prefix, so drop it.
        let rendered = rendered.strip_prefix("error: ").unwrap_or(&rendered);
        f.write_str(rendered.trim_end())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.inner.kind)
            .field("message", &self.inner.message);
        if let Some((p, l, c)) = self.location() {
            d.field("at", &format_args!("{}:{l}:{c}", p.display()));
        }
        d.finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Picks the candidate closest to `seen` (edit distance at most a third of its length), for
/// "did you mean" hints.
pub(crate) fn did_you_mean<'a>(
    seen: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (seen.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(seen, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, c)| (d, c.len()))
        .map(|(_, c)| c)
}

/// Edit distance counting an adjacent swap as one edit (optimal string alignment), case
/// folded, so `DTMC` is one edit from `DTCM`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        assert_eq!(
            did_you_mean("plannr", ["planner", "constraints"]),
            Some("planner")
        );
        assert_eq!(did_you_mean("xyz", ["planner"]), None);
    }

    #[test]
    fn renders_position() {
        let span = Span {
            path: PathBuf::from("m.toml"),
            text: Arc::from("[model]\nname = 3\n"),
            range: 15..16,
        };
        let e = Error::input("bad name").at(span).help("give a string");
        assert_eq!(e.location(), Some((PathBuf::from("m.toml"), 2, 8)));
        let s = e.to_string();
        assert!(s.contains("m.toml:2:8"), "{s}");
        assert!(s.contains("help: give a string"), "{s}");
        let _ = ToString::to_string(&e);
    }
}
