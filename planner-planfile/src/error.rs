//! Why a plan file was refused.

use std::fmt;

/// A plan file that could not be read: not JSON, not a plan file, a version this build
/// does not read, or a value code generation could not trust.
///
/// `Display` gives the message, then the `help:` line that says how to fix it (the form
/// the `planner` crate's own errors take, which convert from this one);
/// [`Error::message`] gives the message alone.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
    help: Option<String>,
}

impl Error {
    /// A refused plan file described by `message` (problem first, with the values seen).
    pub(crate) fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            help: None,
        }
    }

    /// Attaches a `help:` line that says how to fix it.
    pub(crate) fn help(mut self, help: impl Into<String>) -> Error {
        self.help = Some(help.into());
        self
    }

    /// The one-line message, without the help.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `help:` text, when the error has one.
    pub fn help_text(&self) -> Option<&str> {
        self.help.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("message", &self.message);
        if let Some(h) = &self.help {
            d.field("help", h);
        }
        d.finish()
    }
}

impl std::error::Error for Error {}

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The rendering the macro shows and the `planner` crate's errors share.
    #[test]
    fn renders_message_then_help() {
        let e = Error::new("x.plan.json is not a plan file").help("regenerate it");
        assert_eq!(e.message(), "x.plan.json is not a plan file");
        assert_eq!(e.help_text(), Some("regenerate it"));
        assert_eq!(
            e.to_string(),
            "x.plan.json is not a plan file\n  help: regenerate it"
        );
        assert_eq!(Error::new("bare").to_string(), "bare");
    }
}
