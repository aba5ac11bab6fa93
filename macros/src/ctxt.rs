//! Error collection: every problem found while reading the input is recorded with its
//! span and reported together (serde's `Ctxt`).

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use quote::ToTokens;

/// Collects errors while the input is parsed and checked. It must be consumed with
/// [`Ctxt::check`]: dropping it unchecked is a bug in this crate and panics.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    /// A context with no errors yet.
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error spanned at the tokens of `obj`.
    pub fn error_spanned_by<A: ToTokens, T: Display>(&self, obj: A, msg: T) {
        self.syn_error(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// Records an error from syn.
    pub fn syn_error(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(err);
    }

    /// Consumes the context: all recorded errors combined into one, if any.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.take().expect("Ctxt checked twice").into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}
