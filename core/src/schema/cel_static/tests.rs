use serde_json::json;

use super::{Estimate, Ty, check};
use crate::schema::Schema;

fn schema() -> Schema {
    Schema::parse(&json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "shelves": {"type": "integer"},
                    "title": {"type": "string", "maxLength": 10},
                    "free": {"type": "string"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "books": {
                        "type": "array",
                        "maxItems": 5,
                        "items": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}}
                    },
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                              "properties": {"known": {"type": "string"}}}
                }
            }
        }
    }))
    .unwrap()
}

fn run(src: &str) -> Result<Estimate, String> {
    let s = schema();
    let program = cel::Program::compile(src).unwrap();
    check(
        program.expression(),
        program.source_info(),
        &[("self", Ty::Resource(&s))],
    )
}

#[test]
fn reports_an_undefined_field_as_cel_go_does() {
    let err = run("self.spec.shelfs > 0").unwrap_err();
    assert_eq!(
        err,
        "ERROR: <input>:1:10: undefined field 'shelfs'\n | self.spec.shelfs > 0\n | .........^"
    );
    assert!(
        run("has(self.spec.shelfs)")
            .unwrap_err()
            .contains("undefined field 'shelfs'")
    );
    assert!(run("self.spec.shelves > 0").is_ok());
}

#[test]
fn a_resource_root_has_api_version_kind_and_metadata_names() {
    assert!(run("self.apiVersion == 'v1' && self.kind == 'Book'").is_ok());
    assert!(run("self.metadata.name.startsWith('a') && has(self.metadata.generateName)").is_ok());
    let err = run("self.metadata.labels.size() > 0").unwrap_err();
    assert!(err.contains("undefined field 'labels'"), "{err}");
}

#[test]
fn maps_comprehensions_and_unknown_fields() {
    assert!(run("self.spec.labels.anything == 'x'").is_ok());
    assert!(run("self.spec.extra.whatever == 1 && self.spec.extra.known == 'k'").is_ok());
    assert!(run("self.spec.books.all(b, b.name != '')").is_ok());
    let err = run("self.spec.books.all(b, b.nme != '')").unwrap_err();
    assert!(err.contains("undefined field 'nme'"), "{err}");
    assert!(run("self.spec.labels.all(k, self.spec.labels[k] != k)").is_ok());
    assert!(run("self.spec.books.map(b, b.name).all(n, n.size() < 5)").is_ok());
}

#[test]
fn selection_on_a_scalar_is_refused() {
    let err = run("self.spec.title.length > 1").unwrap_err();
    assert!(
        err.contains("type 'string' does not support field selection"),
        "{err}"
    );
}

#[test]
fn costs_follow_cel_go() {
    // self (1) + .spec (1) + .title (1) + equality over the shorter side (3 chars: 1).
    assert_eq!(run("self.spec.title == 'abc'").unwrap().max_cost, 4);
    // contains: ceil(40 * 0.1) * ceil(3 * 0.1), plus its operands (3 and 0).
    assert_eq!(
        run("self.spec.title.contains('abc')").unwrap().max_cost,
        3 + 4
    );
    // An unbounded string compared with another is charged at 3 MiB.
    let unbounded = run("self.spec.free == self.spec.free").unwrap().max_cost;
    assert_eq!(unbounded, 6 + (super::MAX_REQUEST_BYTES - 2).div_ceil(10));
}

#[test]
fn comprehensions_multiply_by_their_range() {
    let bounded = run("self.spec.books.all(b, b.name.startsWith('x'))")
        .unwrap()
        .max_cost;
    let unbounded = run("self.spec.tags.all(t, t.startsWith('x'))")
        .unwrap()
        .max_cost;
    assert!(bounded < 100, "{bounded}");
    // Items of at least 2 bytes and a comma: about a million of them fit in 3 MiB.
    assert!(unbounded > 1_000_000, "{unbounded}");
    let nested = run("self.spec.tags.all(a, self.spec.tags.all(b, a == b))")
        .unwrap()
        .max_cost;
    assert!(nested > 1_000_000_000_000, "{nested}");
}

#[test]
fn reports_past_characters_of_any_width() {
    let err = run("'é' == self.spec.titel").unwrap_err();
    assert!(
        err.starts_with("ERROR: <input>:1:17: undefined field 'titel'"),
        "{err}"
    );
}
