//! The macro's arguments: `"name-or-path"` and an optional `crate = path`.

use syn::parse::{Parse, ParseStream};
use syn::{LitStr, Path, Token};

/// Parsed arguments.
pub(crate) struct Args {
    /// The model name or plan path, with its span for errors.
    pub(crate) target: LitStr,
    /// Path of the `planner` crate in generated code.
    pub(crate) krate: Path,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Args> {
        if input.is_empty() {
            return Err(input.error(
                "include_model! needs the model's name or its plan file's path: include_model!(\"kws\")",
            ));
        }
        let target: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a string literal with the model's name or the plan file's path, such as \"kws\"",
            )
        })?;
        let mut krate: Path = syn::parse_quote!(::planner);
        while input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: Token![crate] = input.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "unknown argument; the only option is `crate = path::to::planner`",
                )
            })?;
            let _ = key;
            input.parse::<Token![=]>()?;
            krate = input.parse()?;
        }
        if !input.is_empty() {
            return Err(input.error("unexpected tokens; write include_model!(\"kws\") or include_model!(\"kws\", crate = ::planner)"));
        }
        Ok(Args { target, krate })
    }
}
