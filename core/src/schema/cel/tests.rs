//! The schema rules' and expressions' evaluation.

use serde_json::json;

use super::*;

#[test]
fn expressions_over_named_variables() {
    let obj = json!({"metadata": {"name": "a", "labels": {"x": "1"}}});
    let e = Expression::compile(
        "object.metadata.name == 'a' && request.operation == 'CREATE'",
        &["object", "request"],
    )
    .unwrap();
    let create = json!({"operation": "CREATE"});
    let update = json!({"operation": "UPDATE"});
    assert_eq!(
        e.eval_bool(&[("object", &obj), ("request", &create)]),
        Ok(true)
    );
    assert_eq!(
        e.eval_bool(&[("object", &obj), ("request", &update)]),
        Ok(false)
    );
    assert!(
        Expression::compile("authorizer.allowed()", &["object"])
            .unwrap_err()
            .contains("undeclared reference")
    );
    let not_bool = Expression::compile("object.metadata.name", &["object"]).unwrap();
    assert!(not_bool.eval_bool(&[("object", &obj)]).is_err());
    let missing = Expression::compile("object.spec.x == 1", &["object"]).unwrap();
    assert!(missing.eval_bool(&[("object", &obj)]).is_err());
}

fn check<T: Send + Sync + Clone + std::fmt::Debug>() {}

#[test]
fn compiled_rule_is_send_sync() {
    check::<CompiledRule>();
}

#[test]
fn rules_that_select_fields_answer_as_over_the_whole_object() {
    let mut node = Schema::default();
    for field in ["namespace", "replicas", "padding"] {
        node.properties.insert(field.into(), Schema::default());
    }
    let obj = json!({"namespace": "a", "replicas": 3, "padding": "xxxx", "extra": 1});
    let old = json!({"namespace": "a", "replicas": 2});
    let cases = [
        ("self.replicas <= 10 || self.size == 'large'", true),
        ("self.__namespace__ == 'a' && has(self.extra)", true),
        ("has(self.size)", false),
        ("self.replicas > oldSelf.replicas", true),
        ("size(self) == 4 && self != oldSelf", true),
    ];
    for (rule, want) in cases {
        let r = CompiledRule::compile(rule, None).unwrap();
        assert_eq!(r.eval(&node, &obj, Some(&old), false), Ok(want), "{rule}");
    }
    let p = CompiledRule::compile(
        "self.replicas > oldSelf.replicas",
        Some("'at ' + string(self.replicas)"),
    )
    .unwrap();
    let programs = p.inner.as_deref().unwrap();
    assert_eq!(
        programs.self_fields,
        Some(BTreeSet::from(["replicas".to_string()]))
    );
    assert_eq!(
        programs.old_self_fields,
        Some(BTreeSet::from(["replicas".to_string()]))
    );
    assert_eq!(
        p.eval_message(&node, &obj, Some(&old), false),
        Some(Ok("at 3".to_string()))
    );
    let whole = CompiledRule::compile("self.replicas > 0", Some("string(self)")).unwrap();
    assert_eq!(whole.inner.as_deref().unwrap().self_fields, None);
}

#[test]
fn evaluates_kubernetes_functions() {
    let cases = [
        ("self.x.isSorted()", json!({"x": [1, 2, 3]}), true),
        ("self.x.sum() == 6", json!({"x": [1, 2, 3]}), true),
        (
            "self.x.min() == 1 && self.x.max() == 3",
            json!({"x": [3, 1, 2]}),
            true,
        ),
        ("self.x.indexOf(2) == 1", json!({"x": [1, 2, 3]}), true),
        (
            "self.s.find('[0-9]+') == '12'",
            json!({"s": "ab12cd"}),
            true,
        ),
        (
            "self.s.split('/')[0].lowerAscii() == 'a'",
            json!({"s": "A/b"}),
            true,
        ),
        ("self.all(k, k.matches('^[a-z]+$'))", json!({"ab": 1}), true),
        ("isURL(self.u)", json!({"u": "https://example.com/x"}), true),
    ];
    for (rule, obj, want) in cases {
        let r = CompiledRule::compile(rule, None).unwrap();
        assert_eq!(
            r.eval(&Schema::default(), &obj, None, false),
            Ok(want),
            "{rule}"
        );
    }
}
