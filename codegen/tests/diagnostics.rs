//! Broken schemas get one diagnostic each, naming file, line, column and YAML path;
//! never a panic and never generated code that does not compile.

use kapi_codegen::{Builder, Error};

const VALID: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.kapi.dev
spec:
  group: example.kapi.dev
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size:
                  type: string
";

/// Runs `check` on `files` (name, content) and returns the rendered diagnostics with the
/// temporary folder stripped.
fn diagnostics(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, content) in files {
        std::fs::write(dir.path().join(name), content).expect("write schema");
    }
    match Builder::new().schemas_dir(dir.path()).check() {
        Ok(_) => vec![],
        Err(Error::Invalid(diags)) => diags
            .iter()
            .map(|d| {
                d.to_string()
                    .replace(&format!("{}/", dir.path().display()), "")
            })
            .collect(),
        Err(e) => vec![format!("unexpected error: {e}")],
    }
}

fn broken(from: &str, to: &str) -> String {
    assert!(VALID.contains(from), "fixture does not contain {from:?}");
    VALID.replacen(from, to, 1)
}

#[test]
fn the_valid_fixture_is_valid() {
    assert_eq!(diagnostics(&[("widget.yaml", VALID)]), Vec::<String>::new());
}

/// (what is wrong, the broken file, the expected diagnostics)
fn cases() -> Vec<(&'static str, String, Vec<&'static str>)> {
    vec![
        (
            "unknown type",
            broken(
                "size:\n                  type: string",
                "size:\n                  type: strng",
            ),
            vec![
                r#"widget.yaml:23:19: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type: Unsupported value: "strng": supported values: "array", "boolean", "integer", "number", "object", "string""#,
            ],
        ),
        (
            "YAML syntax error",
            broken("  scope: Namespaced\n", "  scope: \"Namespaced\n"),
            vec!["widget.yaml:7:10: invalid YAML: invalid indentation in quoted scalar"],
        ),
        (
            "duplicate key",
            broken(
                "  scope: Namespaced\n",
                "  scope: Namespaced\n  scope: Cluster\n",
            ),
            vec!["widget.yaml:8:3: invalid YAML: duplicated key in mapping"],
        ),
        (
            "wrong apiVersion",
            broken(
                "apiextensions.k8s.io/v1\n",
                "apiextensions.k8s.io/v1beta1\n",
            ),
            vec![
                r#"widget.yaml:1:1: apiVersion: Unsupported value: "apiextensions.k8s.io/v1beta1": supported values: "apiextensions.k8s.io/v1""#,
            ],
        ),
        (
            "not a CRD",
            broken("kind: CustomResourceDefinition", "kind: Deployment"),
            vec![
                r#"widget.yaml:2:1: kind: Unsupported value: "Deployment": supported values: "CustomResourceDefinition""#,
            ],
        ),
        (
            "missing plural",
            broken("    plural: widgets\n", ""),
            vec![
                "widget.yaml:8:3: spec.names.plural: Required value",
                "widget.yaml:4:3: metadata.name: Invalid value: \"widgets.example.kapi.dev\": must be spec.names.plural+\".\"+spec.group",
            ],
        ),
        (
            "name does not match",
            broken(
                "name: widgets.example.kapi.dev",
                "name: gadgets.example.kapi.dev",
            ),
            vec![
                "widget.yaml:4:3: metadata.name: Invalid value: \"gadgets.example.kapi.dev\": must be spec.names.plural+\".\"+spec.group",
            ],
        ),
        (
            "unknown scope",
            broken("scope: Namespaced", "scope: Global"),
            vec![
                r#"widget.yaml:7:3: spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#,
            ],
        ),
        (
            "no storage version",
            broken("storage: true", "storage: false"),
            vec![
                "widget.yaml:11:3: spec.versions: Invalid value: must have exactly one version marked as storage version",
            ],
        ),
        (
            "bad version name",
            broken("- name: v1", "- name: V1"),
            vec![
                "widget.yaml:12:7: spec.versions[0].name: Invalid value: \"V1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ],
        ),
        (
            "missing schema",
            broken(
                "      schema:\n        openAPIV3Schema:\n          type: object\n",
                "      schemaa:\n        openAPIV3Schema:\n          type: object\n",
            ),
            vec![
                "widget.yaml:12:7: spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
            ],
        ),
        (
            "bad pattern",
            broken(
                "                  type: string",
                "                  type: string\n                  pattern: '^[a-z'",
            ),
            vec![
                r#"widget.yaml:24:19: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.pattern: Invalid value: "^[a-z": must be a valid regular expression, but isn't: unclosed character class"#,
            ],
        ),
        (
            "CEL rule that does not parse",
            broken(
                "                  type: string",
                "                  type: string\n                  x-kubernetes-validations:\n                    - rule: 'self.size() >'",
            ),
            vec![concat!(
                r#"widget.yaml:25:23: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.x-kubernetes-validations[0].rule: Invalid value: "self.size() >": compilation failed: ERROR: <input>:1:14: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"#,
                "\n| self.size() >\n| .............^"
            )],
        ),
        (
            "CEL rule naming a field the schema does not have",
            broken(
                "                  type: string",
                "                  type: object\n                  properties:\n                    shelves:\n                      type: integer\n                  x-kubernetes-validations:\n                    - rule: 'self.shelfs > 0'",
            ),
            vec![concat!(
                r#"widget.yaml:28:23: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.x-kubernetes-validations[0].rule: Invalid value: "self.shelfs > 0": compilation failed: ERROR: <input>:1:5: undefined field 'shelfs'"#,
                "\n | self.shelfs > 0\n | ....^"
            )],
        ),
        (
            "CEL rule over its cost budget",
            broken(
                "                  type: string",
                "                  type: array\n                  items:\n                    type: string\n                  x-kubernetes-validations:\n                    - rule: 'self.all(a, self.all(b, a == b))'",
            ),
            vec![
                "widget.yaml:27:23: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
                "widget.yaml:27:23: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                "widget.yaml:16:9: spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
            ],
        ),
        (
            "array without items",
            broken(
                "                  type: string",
                "                  type: array",
            ),
            vec![
                "widget.yaml:22:17: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.items: Required value: must be specified",
            ],
        ),
        (
            "list-map without keys",
            broken(
                "                  type: string",
                "                  type: array\n                  x-kubernetes-list-type: map\n                  items:\n                    type: object\n                    properties:\n                      name:\n                        type: string",
            ),
            vec![
                "widget.yaml:22:17: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
            ],
        ),
        (
            "properties and additionalProperties",
            broken(
                "                  type: string",
                "                  type: object\n                  properties:\n                    a:\n                      type: string\n                  additionalProperties:\n                    type: string",
            ),
            vec![
                "widget.yaml:27:19: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
            ],
        ),
        (
            "wrong keyword type",
            broken(
                "                  type: string",
                "                  type: integer\n                  minimum: three",
            ),
            vec![
                r#"widget.yaml:24:19: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.minimum: Invalid value: "three": must be of type number, not string"#,
            ],
        ),
        (
            "printer column with a bad type",
            broken(
                "      storage: true\n",
                "      storage: true\n      additionalPrinterColumns:\n        - name: Size\n          type: text\n          jsonPath: .spec.size\n",
            ),
            vec![
                r#"widget.yaml:17:11: spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "text": supported values: "integer", "number", "string", "boolean", "date""#,
            ],
        ),
        (
            "scale path outside spec",
            broken(
                "      storage: true\n",
                "      storage: true\n      subresources:\n        status: {}\n        scale:\n          specReplicasPath: .replicas\n          statusReplicasPath: .status.replicas\n",
            ),
            vec![
                r#"widget.yaml:18:11: spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".replicas": should be a json path under .spec."#,
            ],
        ),
        (
            "hooks that are not a Rust path",
            broken(
                "  name: widgets.example.kapi.dev\n",
                "  name: widgets.example.kapi.dev\n  annotations:\n    kapi.dev/hooks: \"crate::hooks::\"\n",
            ),
            vec![
                r#"widget.yaml:6:5: metadata.annotations.kapi.dev/hooks: hooks must be a Rust type path, got "crate::hooks::""#,
            ],
        ),
        (
            "a kind Rust cannot name",
            broken("    kind: Widget\n", "    kind: Self\n"),
            vec![
                "widget.yaml:9:5: spec.names.kind: kind Self cannot be a Rust type name; choose another kind",
            ],
        ),
        (
            "uppercase short name",
            broken(
                "    plural: widgets\n",
                "    plural: widgets\n    shortNames: [WD]\n",
            ),
            vec![
                "widget.yaml:11:18: spec.names.shortNames[0]: Invalid value: \"WD\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ],
        ),
    ]
}

#[test]
fn each_mistake_gets_its_diagnostic() {
    let mut failures = Vec::new();
    for (what, content, expected) in cases() {
        let got = diagnostics(&[("widget.yaml", &content)]);
        if got != expected {
            failures.push(format!(
                "{what}:\n  expected {expected:#?}\n  got      {got:#?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases().len(),
        failures.join("\n")
    );
}

#[test]
fn a_resource_defined_twice_is_reported_in_the_second_file() {
    let got = diagnostics(&[("a.yaml", VALID), ("b.yaml", VALID)]);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with(
            "b.yaml:4:3: metadata.name: resource widgets.example.kapi.dev is already defined in "
        ),
        "{got:?}"
    );
}

const DEFINITIONS: &str = "\
apiVersion: kapi.dev/v1alpha1
kind: SchemaDefinitions
definitions:
  io.example.v1.Size:
    type: string
    maxLength: 10
";

#[test]
fn a_reference_to_a_shared_definition_is_resolved() {
    let uses = broken(
        "                size:\n                  type: string\n",
        "                size:\n                  $ref: \"#/definitions/io.example.v1.Size\"\n",
    );
    assert_eq!(
        diagnostics(&[("defs.yaml", DEFINITIONS), ("widget.yaml", &uses)]),
        Vec::<String>::new()
    );
}

#[test]
fn an_unknown_reference_is_reported_where_it_is_written() {
    let uses = broken(
        "                size:\n                  type: string\n",
        "                size:\n                  $ref: \"#/definitions/io.example.v1.Missing\"\n",
    );
    assert_eq!(
        diagnostics(&[("defs.yaml", DEFINITIONS), ("widget.yaml", &uses)]),
        vec![
            "widget.yaml:23:19: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.$ref: Not found: \"io.example.v1.Missing\""
        ]
    );
}

#[test]
fn a_broken_definition_is_reported_in_its_own_file() {
    let defs = DEFINITIONS.replace("maxLength: 10", "maxLength: ten");
    let dup = DEFINITIONS.to_string();
    let got = diagnostics(&[("a.yaml", &defs), ("b.yaml", &dup)]);
    assert_eq!(
        got,
        vec![
            "b.yaml:4:3: definitions.io.example.v1.Size: definition io.example.v1.Size is already defined in a.yaml"
                .to_string(),
            "a.yaml:6:5: definitions.io.example.v1.Size.maxLength: Invalid value: \"ten\": must be of type integer, not string"
                .to_string(),
        ]
    );
}

/// Two versions that convert through a webhook, v2 renaming `size` to `dimension`.
const CONVERTING: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.kapi.dev
spec:
  group: example.kapi.dev
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        url: https://127.0.0.1:6443/convert
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size:
                  type: string
                count:
                  type: integer
    - name: v2
      served: true
      storage: false
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                dimension:
                  type: string
                count:
                  type: string
";

#[test]
fn every_field_that_neither_converts_nor_has_hooks_is_named() {
    let remedy = "name conversion hooks for widgets.example.kapi.dev (kapi.dev/conversion-hooks), \
                  or leave its conversion to its own webhook (Builder::external_conversion)";
    assert_eq!(
        diagnostics(&[("widget.yaml", CONVERTING)]),
        vec![
            format!(
                "widget.yaml:30:17: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.count: \
                 spec.count of v1 does not convert to v2: it has no field of the same name and type there; {remedy}"
            ),
            format!(
                "widget.yaml:28:17: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size: \
                 spec.size of v1 does not convert to v2: it has no field of the same name and type there; {remedy}"
            ),
            format!(
                "widget.yaml:44:17: spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.count: \
                 spec.count of v2 does not convert to v1: it has no field of the same name and type there; {remedy}"
            ),
            format!(
                "widget.yaml:42:17: spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.dimension: \
                 spec.dimension of v2 does not convert to v1: it has no field of the same name and type there; {remedy}"
            ),
        ]
    );
    // With hooks, or with the conversion left to the CRD's own webhook, it is valid.
    let hooked = CONVERTING.replacen(
        "  name: widgets.example.kapi.dev\n",
        "  name: widgets.example.kapi.dev\n  annotations:\n    kapi.dev/conversion-hooks: crate::WidgetConversion\n",
        1,
    );
    assert_eq!(
        diagnostics(&[("widget.yaml", &hooked)]),
        Vec::<String>::new()
    );
    // Object hooks are the conversion hooks' too: without them they are a mistake.
    let object_only = CONVERTING.replacen(
        "  name: widgets.example.kapi.dev\n",
        "  name: widgets.example.kapi.dev\n  annotations:\n    kapi.dev/conversion-object-hooks: \"true\"\n",
        1,
    );
    let got = diagnostics(&[("widget.yaml", &object_only)]);
    assert!(
        got.contains(
            &"widget.yaml:6:5: metadata.annotations.kapi.dev/conversion-object-hooks: \
             object hooks need conversion hooks: name them with kapi.dev/conversion-hooks"
                .to_string()
        ),
        "{got:#?}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("widget.yaml"), CONVERTING).expect("write schema");
    let external = Builder::new()
        .schemas_dir(dir.path())
        .external_conversion("widgets.example.kapi.dev")
        .check();
    assert!(external.is_ok(), "{:?}", external.err());
}
