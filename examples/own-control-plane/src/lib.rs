//! A control plane of its own kinds, served by the kapi library: `Book` (namespaced,
//! with a CEL rule, a status subresource and a Rust hook) and `Library`
//! (cluster-scoped), compiled from `schemas/` by `build.rs`, beside only Namespaces and
//! RBAC from Kubernetes' built-ins. `main.rs` serves it; the tests and the controller
//! example (`examples/controller`) start it in process.
//!
//! Only two built-in groups are compiled in: `Cargo.toml` names kapi-kube's `core`
//! (Namespaces are core's) and `rbac` features and turns off kapi's and
//! kapi-test-server's default (`all-builtins`). Of core's kinds, [`register_all`]
//! keeps Namespaces.

use kapi_apiserver::registry::Resources;
use kapi_core::{Only, Registrar};

include!(concat!(env!("OUT_DIR"), "/kapi_generated.rs"));

/// This control plane's kinds and the built-ins it keeps: Namespaces (its books live
/// in them) and the RBAC kinds (its authorization).
pub fn register_all(registrar: &mut dyn Registrar) {
    register(registrar);
    kapi_kube::generated::register(&mut Only::new(registrar, |r| {
        (r.group.is_empty() && r.kind == "Namespace") || r.group == "rbac.authorization.k8s.io"
    }));
}

/// [`register_all`] into a new [`Resources`].
pub fn resources() -> Resources {
    let mut resources = Resources::new();
    register_all(&mut resources);
    resources
}

pub mod hooks {
    //! Hand-written behaviour for the generated kinds.

    use kapi_core::field::{ErrorList, FieldError, FieldPath};

    use crate::books_example_com::v1::Book;

    /// A Book's ISBN-13 must have its check digit right (the schema checks the form).
    #[derive(Default)]
    pub struct BookHooks;

    /// Whether `isbn`'s thirteenth digit is the check digit of the first twelve.
    fn check_digit_holds(isbn: &str) -> bool {
        let digits: Vec<u32> = isbn.chars().filter_map(|c| c.to_digit(10)).collect();
        if digits.len() != 13 {
            return true; // the schema's pattern says what is wrong
        }
        let sum: u32 = digits[..12]
            .iter()
            .enumerate()
            .map(|(i, d)| if i % 2 == 0 { *d } else { d * 3 })
            .sum();
        (10 - sum % 10) % 10 == digits[12]
    }

    impl kapi_core::Hooks<Book> for BookHooks {
        fn validate(&self, book: &Book) -> ErrorList {
            let mut errs = ErrorList::new();
            if let Some(spec) = book.spec.as_ref().filter(|s| !check_digit_holds(&s.isbn)) {
                errs.push(FieldError::invalid(
                    &FieldPath::new("spec.isbn"),
                    spec.isbn.clone(),
                    "the check digit does not match",
                ));
            }
            errs
        }

        fn validate_update(&self, new: &Book, _old: &Book) -> ErrorList {
            self.validate(new)
        }
    }
}
