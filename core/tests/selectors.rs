//! Label and field selector parsing, rendering and matching, checked against
//! Kubernetes' behaviour (`k8s.io/apimachinery/pkg/labels` and `pkg/fields`).

use std::collections::BTreeMap;

use kapi_core::selector::{
    FieldOperator, FieldSelector, LabelSelector, Operator, Requirement, SelectorError,
};
use serde_json::json;

const KEY_RE: &str = "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

fn label_sets() -> [BTreeMap<String, String>; 3] {
    let set = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>()
    };
    [
        set(&[]),
        set(&[
            ("app", "web"),
            ("env", "prod"),
            ("tier", "frontend"),
            ("example.com/app", "shop"),
            ("replicas", "3"),
        ]),
        set(&[
            ("app", "db"),
            ("env", "staging"),
            ("replicas", "10"),
            ("empty", ""),
        ]),
    ]
}

enum Want {
    /// Parses; renders as the string; matches the three label sets as given.
    Ok(&'static str, [bool; 3]),
    /// Fails with exactly this message.
    Err(&'static str),
    /// Fails with a message starting with this.
    ErrStarts(&'static str),
}

#[test]
fn label_selector_table() {
    let long63 = "a".repeat(63);
    let long64 = "a".repeat(64);
    let key64 = format!("{long64}=x");
    let key63 = format!("{long63}=x");
    let val64 = format!("a={long64}");
    let key64_err = format!(
        "unable to parse requirement: <nil>: Invalid value: \"{long64}\": name part must be no more than 63 bytes"
    );
    let val64_err = format!(
        "unable to parse requirement: values[0][a]: Invalid value: \"{long64}\": must be no more than 63 bytes"
    );
    let three_part = format!(
        "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character {KEY_RE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    );
    let empty_name = format!(
        "unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character {KEY_RE}"
    );
    let bad_name = format!(
        "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character {KEY_RE}"
    );
    let bad_value =
        format!("unable to parse requirement: values[0][x]: Invalid value: \"a||y\": {VALUE_MSG}");
    let bad_value2 =
        format!("unable to parse requirement: values[1][a]: Invalid value: \"c-\": {VALUE_MSG}");
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };

    use Want::*;
    let cases: Vec<(&str, Want)> = vec![
        // Valid, with canonical rendering and matching on [empty, L1, L2].
        ("", Ok("", [true, true, true])),
        ("   ", Ok("", [true, true, true])),
        ("app=web", Ok("app=web", [false, true, false])),
        ("app==web", Ok("app==web", [false, true, false])),
        ("app!=web", Ok("app!=web", [true, false, true])),
        (
            "env in (prod,staging)",
            Ok("env in (prod,staging)", [false, true, true]),
        ),
        (
            "env notin (prod)",
            Ok("env notin (prod)", [true, false, true]),
        ),
        ("tier", Ok("tier", [false, true, false])),
        ("!tier", Ok("!tier", [true, false, true])),
        ("replicas>5", Ok("replicas>5", [false, false, true])),
        ("replicas<5", Ok("replicas<5", [false, true, false])),
        (
            "replicas>-1",
            ErrStarts(
                "unable to parse requirement: values[0][replicas]: Invalid value: \"-1\": a valid label must",
            ),
        ),
        (
            "  app = web , env in ( prod , staging )  ",
            Ok("app=web,env in (prod,staging)", [false, true, false]),
        ),
        ("a\tin\n(b)\r", Ok("a in (b)", [false, false, false])),
        ("a notin(b)", Ok("a notin (b)", [true, true, true])),
        ("x=a,a=x", Ok("a=x,x=a", [false, false, false])),
        (
            "tier,!canary,app",
            Ok("app,!canary,tier", [false, true, false]),
        ),
        ("empty=", Ok("empty=", [false, false, true])),
        ("empty= ,app", Ok("app,empty=", [false, false, true])),
        ("empty", Ok("empty", [false, false, true])),
        ("a!=", Ok("a!=", [true, true, true])),
        // Kubernetes accepts `in ()`: the set holding only the empty value.
        ("a in ()", Ok("a in ()", [false, false, false])),
        ("empty in ()", Ok("empty in ()", [false, false, true])),
        ("env notin ()", Ok("env notin ()", [true, true, true])),
        ("a in (,b)", Ok("a in (,b)", [false, false, false])),
        ("app in (web,)", Ok("app in (,web)", [false, true, false])),
        (
            "env in (staging,prod,prod)",
            Ok("env in (prod,staging)", [false, true, true]),
        ),
        (
            "example.com/app=shop",
            Ok("example.com/app=shop", [false, true, false]),
        ),
        (
            "example.com/app",
            Ok("example.com/app", [false, true, false]),
        ),
        (
            "app=web,app=db",
            Ok("app=web,app=db", [false, false, false]),
        ),
        ("in=notin", Ok("in=notin", [false, false, false])),
        (
            "app in (in, notin)",
            Ok("app in (in,notin)", [false, false, false]),
        ),
        ("x>1,z<5", Ok("x>1,z<5", [false, false, false])),
        (
            leak(key63),
            Ok(leak(format!("{long63}=x")), [false, false, false]),
        ),
        // Invalid.
        ("x=a||y=b", Err(leak(bad_value))),
        ("a in (b,c-)", Err(leak(bad_value2))),
        (
            "x==a==b",
            Err("found '==', expected: ',' or 'end of string'"),
        ),
        ("!x=a", Err("found '=', expected: ',' or 'end of string'")),
        (
            "x<a",
            Err(
                "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
        ),
        (
            "a>",
            Err(
                "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
        ),
        (
            "a in (b",
            Err("unable to parse requirement: found '', expected: ',' or ')'"),
        ),
        (
            "a in b",
            Err("unable to parse requirement: found 'b' expected: '('"),
        ),
        (
            "a in (b c)",
            Err("unable to parse requirement: found 'c', expected: ',' or ')'"),
        ),
        (
            "a in (=)",
            Err("unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ),
        (
            "a=(b)",
            Err("unable to parse requirement: found '(', expected: identifier"),
        ),
        ("a,", Err("found '', expected: identifier after ','")),
        ("a,,b", Err("found ',', expected: identifier after ','")),
        (
            ",a",
            Err("found ',', expected: !, identifier, or 'end of string'"),
        ),
        (
            ")",
            Err("found ')', expected: !, identifier, or 'end of string'"),
        ),
        (
            "a b",
            Err("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ),
        (
            "!",
            Err("unable to parse requirement: found '', expected: identifier"),
        ),
        (
            "!=a",
            Err("found '!=', expected: !, identifier, or 'end of string'"),
        ),
        ("a/b/c=d", Err(leak(three_part))),
        (
            "/a",
            Err(
                "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty",
            ),
        ),
        ("a/", Err(leak(empty_name))),
        ("-a", Err(leak(bad_name))),
        (
            "Example.com/a",
            Err(
                "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
        ),
        (leak(key64), Err(leak(key64_err))),
        (leak(val64), Err(leak(val64_err))),
        (
            "a=-b",
            ErrStarts(
                "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be",
            ),
        ),
    ];
    assert!(cases.len() >= 40, "{} cases", cases.len());

    let sets = label_sets();
    for (input, want) in cases {
        let got = LabelSelector::parse(input);
        match (want, got) {
            (Ok(rendered, matches), Result::Ok(sel)) => {
                assert_eq!(sel.to_string(), rendered, "rendering of {input:?}");
                for (set, want) in sets.iter().zip(matches) {
                    assert_eq!(sel.matches(set), want, "{input:?} on {set:?}");
                }
                // The canonical string parses back to the same selector.
                assert_eq!(LabelSelector::parse(rendered).as_ref(), Result::Ok(&sel));
            }
            (Err(msg), Result::Err(e)) => assert_eq!(e.to_string(), msg, "error of {input:?}"),
            (ErrStarts(msg), Result::Err(e)) => {
                assert!(e.to_string().starts_with(msg), "error of {input:?}: {e}")
            }
            (_, got) => panic!("{input:?}: unexpected {got:?}"),
        }
    }
}

#[test]
fn label_selector_structure_and_json_labels() {
    let sel = LabelSelector::parse("tier, env in (b,a), !x, n>3").unwrap();
    let reqs = sel.requirements();
    assert_eq!(reqs.len(), 4);
    // Sorted by key (not by rendering).
    assert_eq!(sel.to_string(), "env in (a,b),n>3,tier,!x");
    assert_eq!(reqs[0].key(), "env");
    assert_eq!(reqs[0].operator(), Operator::In);
    assert_eq!(reqs[0].values(), ["a".to_string(), "b".to_string()]);
    assert_eq!(reqs[1].operator(), Operator::GreaterThan);
    assert_eq!(reqs[2].operator(), Operator::Exists);
    assert_eq!(reqs[3].operator(), Operator::DoesNotExist);
    assert!(LabelSelector::parse("").unwrap().is_empty());

    let labels = json!({"tier": "web", "env": "a", "n": "4", "x": 1});
    let map = labels.as_object().unwrap();
    // A non-string value counts as absent.
    assert!(sel.matches(map));
    let labels = json!({"tier": "web", "env": "a", "n": "three"});
    assert!(!sel.matches(labels.as_object().unwrap()));
}

#[test]
fn requirement_new_validates_like_new_requirement() {
    let e = Requirement::new("a", Operator::In, Vec::<String>::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"
    );
    let e = Requirement::new("a", Operator::Equals, ["x", "y"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "values: Invalid value: [\"x\",\"y\"]: exact-match compatibility requires one single value"
    );
    let e = Requirement::new("a", Operator::Exists, ["x"]).unwrap_err();
    assert!(e.message().contains("values set must be empty"));
    let e = Requirement::new("a/b/c", Operator::GreaterThan, ["x"]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("[key: Invalid value: \"a/b/c\": a valid label key")
    );
    assert!(e.to_string().ends_with(
        "values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer]"
    ));
    let r = Requirement::new("example.com/app", Operator::NotIn, ["b", "a", "b"]).unwrap();
    assert_eq!(r.to_string(), "example.com/app notin (a,b)");
    let sel = LabelSelector::from_requirements(vec![
        r,
        Requirement::new("a", Operator::DoesNotExist, Vec::<String>::new()).unwrap(),
    ]);
    assert_eq!(sel.to_string(), "!a,example.com/app notin (a,b)");
    let _: &dyn std::error::Error = &SelectorError::new("x");
}

fn getter(fields: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |path| map.get(path).cloned()
}

/// A field selector, and its rendering and match on the sample pod, or its error.
type FieldCase = (&'static str, Result<(&'static str, bool), &'static str>);

#[test]
fn field_selector_table() {
    let pod = getter(&[
        ("metadata.name", "web-1"),
        ("metadata.namespace", "default"),
        ("status.phase", "Running"),
        ("spec.nodeName", "a,b=c\\d"),
    ]);
    // (input, Ok(rendered, matches pod) or Err(message))
    let cases: Vec<FieldCase> = vec![
        ("", Ok(("", true))),
        ("metadata.name=web-1", Ok(("metadata.name=web-1", true))),
        ("metadata.name==web-1", Ok(("metadata.name=web-1", true))),
        ("metadata.name!=web-1", Ok(("metadata.name!=web-1", false))),
        (
            "status.phase!=Failed,metadata.namespace=default",
            Ok(("metadata.namespace=default,status.phase!=Failed", true)),
        ),
        ("b=2,a=1", Ok(("a=1,b=2", false))),
        ("a=1,,b=2", Ok(("a=1,b=2", false))),
        (
            "spec.nodeName=a\\,b\\=c\\\\d",
            Ok(("spec.nodeName=a\\,b\\=c\\\\d", true)),
        ),
        ("spec.unknown=", Ok(("spec.unknown=", true))),
        ("spec.unknown!=", Ok(("spec.unknown!=", false))),
        ("a!=b!c", Ok(("a!=b!c", true))),
        (
            " metadata.name = web-1",
            Ok((" metadata.name = web-1", false)),
        ),
        (
            "metadata.name=x\\!y",
            Err("invalid field selector: invalid escape sequence: \\!"),
        ),
        (
            "metadata.name=x=y",
            Err("invalid field selector: unescaped character in value: 61"),
        ),
        (
            "metadata.name=x\\",
            Err("invalid field selector: invalid escape sequence: \\"),
        ),
        (
            "abc",
            Err("invalid selector: 'abc'; can't understand 'abc'"),
        ),
        (
            "x=a,y",
            Err("invalid selector: 'x=a,y'; can't understand 'y'"),
        ),
    ];
    for (input, want) in cases {
        match (want, FieldSelector::parse(input)) {
            (Ok((rendered, m)), Result::Ok(sel)) => {
                assert_eq!(sel.to_string(), rendered, "rendering of {input:?}");
                assert_eq!(sel.matches(&pod), m, "matching {input:?}");
                assert_eq!(FieldSelector::parse(rendered).as_ref(), Result::Ok(&sel));
            }
            (Err(msg), Result::Err(e)) => assert_eq!(e.to_string(), msg, "error of {input:?}"),
            (_, got) => panic!("{input:?}: unexpected {got:?}"),
        }
    }

    let sel = FieldSelector::parse("status.phase!=Failed,metadata.name==web-1").unwrap();
    let keys: Vec<_> = sel
        .requirements()
        .iter()
        .map(|r| r.field.as_str())
        .collect();
    assert_eq!(keys, ["metadata.name", "status.phase"]);
    assert_eq!(sel.requirements()[0].operator, FieldOperator::Equals);
    assert_eq!(sel.requires_exact_match("metadata.name"), Some("web-1"));
    assert_eq!(sel.requires_exact_match("status.phase"), None);
    assert_eq!(
        kapi_core::selector::field::escape_value("a\\b,c=d"),
        "a\\\\b\\,c\\=d"
    );
}

#[test]
fn a_label_selector_object_becomes_the_string_syntax() {
    use kapi_core::selector::LabelSelector;
    use serde_json::json;
    let sel = LabelSelector::from_json(&json!({
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["front", "edge"]},
            {"key": "canary", "operator": "DoesNotExist"}
        ]
    }))
    .unwrap();
    assert_eq!(sel.to_string(), "app=web,!canary,tier in (edge,front)");
    // A ReplicationController's selector is a plain map.
    let rc = LabelSelector::from_json(&json!({"app": "web", "tier": "db"})).unwrap();
    assert_eq!(rc.to_string(), "app=web,tier=db");
    assert!(LabelSelector::from_json(&json!(null)).unwrap().is_empty());
    let bad =
        LabelSelector::from_json(&json!({"matchExpressions": [{"key": "a", "operator": "Near"}]}));
    assert_eq!(
        bad.unwrap_err().message(),
        "\"Near\" is not a valid label selector operator"
    );
}
