//! Reading an `audit.k8s.io/v1` `Policy` from YAML or JSON (JSON is YAML), with errors
//! that name the file, the line and column, and the field.
//!
//! The policy is read straight from the YAML nodes rather than through serde, so that every
//! error can point at the node it is about. kube-apiserver's rules are checked too (see
//! `ValidatePolicy`): a level on every rule, known stages, non-resource URLs that begin
//! with `/` and end any `*` there, no rule on both resources and non-resource URLs,
//! `resourceNames` only with `resources`, and at least one rule.

use std::fmt;
use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};

use super::policy::{GroupResources, Level, Policy, PolicyRule, Stage, StageSet};

/// The only `apiVersion` accepted.
pub const API_VERSION: &str = "audit.k8s.io/v1";

/// Why a policy could not be read.
#[derive(Debug)]
pub struct PolicyError {
    /// The file, when the policy came from one.
    pub file: Option<PathBuf>,
    /// Line (from 1) of the node the error is about; 0 when unknown.
    pub line: usize,
    /// Column (from 1); 0 when unknown.
    pub column: usize,
    /// The field the error is about (`rules[2].level`), or empty.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("audit policy")?;
        if let Some(file) = &self.file {
            write!(f, " {}", file.display())?;
        }
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        f.write_str(": ")?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyError {}

impl Policy {
    /// Reads and checks the policy file at `path` (`--audit-policy-file`).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Policy, PolicyError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| PolicyError {
            file: Some(path.to_path_buf()),
            line: 0,
            column: 0,
            field: String::new(),
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(&text).map_err(|mut e| {
            e.file = Some(path.to_path_buf());
            e
        })
    }

    /// Reads and checks a policy from YAML or JSON text.
    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        let docs = MarkedYaml::load_from_str(text).map_err(|e| PolicyError {
            file: None,
            line: e.marker().line(),
            column: e.marker().col() + 1,
            field: String::new(),
            message: format!("invalid YAML: {}", e.info()),
        })?;
        // Empty documents (a leading or trailing `---`) are not policies.
        let mut docs = docs
            .iter()
            .filter(|d| !matches!(d.data, YamlData::Value(Scalar::Null)));
        let Some(doc) = docs.next() else {
            return Err(at_start("the file holds no policy"));
        };
        if let Some(extra) = docs.next() {
            return Err(error(
                extra,
                "",
                "one Policy per file: found a second document",
            ));
        }
        read_policy(doc)
    }
}

fn at_start(message: &str) -> PolicyError {
    PolicyError {
        file: None,
        line: 0,
        column: 0,
        field: String::new(),
        message: message.into(),
    }
}

fn error(node: &MarkedYaml<'_>, field: &str, message: impl Into<String>) -> PolicyError {
    PolicyError {
        file: None,
        line: node.span.start.line(),
        column: node.span.start.col() + 1,
        field: field.into(),
        message: message.into(),
    }
}

type Entries<'a, 'input> = Vec<(&'a str, &'a MarkedYaml<'input>, &'a MarkedYaml<'input>)>;

/// The entries of a mapping, keyed by string, refusing keys not in `known`.
///
/// Unknown keys are errors (kube-apiserver ignores them): a misspelt `namespace:` would
/// otherwise silently widen a rule.
fn mapping<'a, 'input>(
    node: &'a MarkedYaml<'input>,
    field: &str,
    known: &[&str],
) -> Result<Entries<'a, 'input>, PolicyError> {
    let YamlData::Mapping(map) = &node.data else {
        return Err(error(node, field, "expected a mapping"));
    };
    let mut out = Vec::with_capacity(map.len());
    for (k, v) in map {
        let YamlData::Value(Scalar::String(key)) = &k.data else {
            return Err(error(k, field, "mapping keys must be strings"));
        };
        if !known.contains(&key.as_ref()) {
            return Err(error(
                k,
                &child(field, key),
                format!("unknown field; expected one of {}", known.join(", ")),
            ));
        }
        out.push((key.as_ref(), k, v));
    }
    Ok(out)
}

fn child(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_string()
    } else {
        format!("{field}.{key}")
    }
}

fn string(node: &MarkedYaml<'_>, field: &str) -> Result<String, PolicyError> {
    match &node.data {
        YamlData::Value(Scalar::String(s)) => Ok(s.to_string()),
        _ => Err(error(node, field, "expected a string")),
    }
}

fn boolean(node: &MarkedYaml<'_>, field: &str) -> Result<bool, PolicyError> {
    match &node.data {
        YamlData::Value(Scalar::Boolean(b)) => Ok(*b),
        _ => Err(error(node, field, "expected true or false")),
    }
}

/// The items of a sequence; `null` (a key without a value) is an empty list.
fn sequence<'a, 'input>(
    node: &'a MarkedYaml<'input>,
    field: &str,
) -> Result<&'a [MarkedYaml<'input>], PolicyError> {
    match &node.data {
        YamlData::Sequence(items) => Ok(items),
        YamlData::Value(Scalar::Null) => Ok(&[]),
        _ => Err(error(node, field, "expected a list")),
    }
}

fn strings(node: &MarkedYaml<'_>, field: &str) -> Result<Vec<String>, PolicyError> {
    sequence(node, field)?
        .iter()
        .enumerate()
        .map(|(i, item)| string(item, &format!("{field}[{i}]")))
        .collect()
}

fn stages(node: &MarkedYaml<'_>, field: &str) -> Result<StageSet, PolicyError> {
    let mut set = StageSet::EMPTY;
    for (i, item) in sequence(node, field)?.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let name = string(item, &f)?;
        let stage = name.parse::<Stage>().map_err(|()| {
            error(
                item,
                &f,
                format!(
                    "unknown stage {name:?}; allowed stages are RequestReceived, ResponseStarted, ResponseComplete, Panic"
                ),
            )
        })?;
        set = set.with(stage);
    }
    Ok(set)
}

fn read_policy(doc: &MarkedYaml<'_>) -> Result<Policy, PolicyError> {
    let entries = mapping(
        doc,
        "",
        &[
            "apiVersion",
            "kind",
            "metadata",
            "rules",
            "omitStages",
            "omitManagedFields",
        ],
    )?;
    let mut policy = Policy::default();
    let (mut api_version, mut kind, mut rules) = (None, None, None);
    for (key, k, v) in entries {
        match key {
            "apiVersion" => api_version = Some((string(v, key)?, v)),
            "kind" => kind = Some((string(v, key)?, v)),
            "metadata" => {}
            "rules" => rules = Some((k, v)),
            "omitStages" => policy.omit_stages = stages(v, key)?,
            "omitManagedFields" => policy.omit_managed_fields = boolean(v, key)?,
            _ => unreachable!("mapping() refuses other keys"),
        }
    }
    match api_version {
        Some((v, _)) if v == API_VERSION => {}
        Some((v, node)) => {
            return Err(error(
                node,
                "apiVersion",
                format!("unsupported {v:?}; expected {API_VERSION:?}"),
            ));
        }
        None => return Err(error(doc, "apiVersion", format!("required: {API_VERSION}"))),
    }
    match kind {
        Some((k, _)) if k == "Policy" => {}
        Some((k, node)) => {
            return Err(error(
                node,
                "kind",
                format!("expected \"Policy\", not {k:?}"),
            ));
        }
        None => return Err(error(doc, "kind", "required: Policy")),
    }
    if let Some((_, v)) = rules {
        for (i, item) in sequence(v, "rules")?.iter().enumerate() {
            policy.rules.push(read_rule(item, &format!("rules[{i}]"))?);
        }
    }
    // kube-apiserver refuses an empty policy: it would record nothing, which is better
    // said by not configuring audit at all.
    if policy.rules.is_empty() {
        let node = rules.map_or(doc, |(k, _)| k);
        return Err(error(node, "rules", "a policy needs at least one rule"));
    }
    Ok(policy)
}

fn read_rule(node: &MarkedYaml<'_>, field: &str) -> Result<PolicyRule, PolicyError> {
    let entries = mapping(
        node,
        field,
        &[
            "level",
            "users",
            "userGroups",
            "verbs",
            "resources",
            "namespaces",
            "nonResourceURLs",
            "omitStages",
            "omitManagedFields",
        ],
    )?;
    let mut rule = PolicyRule::default();
    let mut level = None;
    let mut urls_node = None;
    for (key, _, v) in entries {
        let f = child(field, key);
        match key {
            "level" => {
                let name = string(v, &f)?;
                let l = name.parse::<Level>().map_err(|()| {
                    error(
                        v,
                        &f,
                        format!(
                            "unknown level {name:?}; expected None, Metadata, Request or RequestResponse"
                        ),
                    )
                })?;
                level = Some(l);
            }
            "users" => rule.users = strings(v, &f)?,
            "userGroups" => rule.user_groups = strings(v, &f)?,
            "verbs" => rule.verbs = strings(v, &f)?,
            "namespaces" => rule.namespaces = strings(v, &f)?,
            "nonResourceURLs" => {
                rule.non_resource_urls = strings(v, &f)?;
                for (i, (url, item)) in rule
                    .non_resource_urls
                    .iter()
                    .zip(sequence(v, &f)?)
                    .enumerate()
                {
                    check_non_resource_url(url, item, &format!("{f}[{i}]"))?;
                }
                urls_node = Some(v);
            }
            "resources" => {
                for (i, item) in sequence(v, &f)?.iter().enumerate() {
                    rule.resources
                        .push(read_group_resources(item, &format!("{f}[{i}]"))?);
                }
            }
            "omitStages" => rule.omit_stages = stages(v, &f)?,
            "omitManagedFields" => rule.omit_managed_fields = Some(boolean(v, &f)?),
            _ => unreachable!("mapping() refuses other keys"),
        }
    }
    rule.level = level.ok_or_else(|| {
        error(
            node,
            &child(field, "level"),
            "required: None, Metadata, Request or RequestResponse",
        )
    })?;
    if let Some(urls) = urls_node {
        if !rule.non_resource_urls.is_empty()
            && (!rule.resources.is_empty() || !rule.namespaces.is_empty())
        {
            return Err(error(
                urls,
                &child(field, "nonResourceURLs"),
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
    }
    Ok(rule)
}

fn check_non_resource_url(
    url: &str,
    node: &MarkedYaml<'_>,
    field: &str,
) -> Result<(), PolicyError> {
    if url == "*" {
        return Ok(());
    }
    if !url.starts_with('/') {
        return Err(error(
            node,
            field,
            "non-resource URL rules must begin with a '/' character",
        ));
    }
    if url[..url.len() - 1].contains('*') {
        return Err(error(
            node,
            field,
            "non-resource URL wildcards '*' must be the final character of the rule",
        ));
    }
    Ok(())
}

fn read_group_resources(node: &MarkedYaml<'_>, field: &str) -> Result<GroupResources, PolicyError> {
    let entries = mapping(node, field, &["group", "resources", "resourceNames"])?;
    let mut gr = GroupResources::default();
    for (key, _, v) in entries {
        let f = child(field, key);
        match key {
            "group" => {
                gr.group = string(v, &f)?;
                check_group(&gr.group, v, &f)?;
            }
            "resources" => gr.resources = strings(v, &f)?,
            "resourceNames" => gr.resource_names = strings(v, &f)?,
            _ => unreachable!("mapping() refuses other keys"),
        }
    }
    if !gr.resource_names.is_empty() && gr.resources.is_empty() {
        return Err(error(
            node,
            &child(field, "resourceNames"),
            "using resourceNames requires at least one resource",
        ));
    }
    Ok(gr)
}

/// A group is `""` (core) or a DNS subdomain; `apps/v1` (a group version) is a common
/// mistake that would otherwise never match.
fn check_group(group: &str, node: &MarkedYaml<'_>, field: &str) -> Result<(), PolicyError> {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if group.is_empty() || (group.len() <= 253 && group.split('.').all(label_ok)) {
        Ok(())
    } else {
        Err(error(
            node,
            field,
            format!("{group:?} is not an API group: a lowercase DNS subdomain, without a version"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authz::Attributes;
    use crate::user::UserInfo;

    /// The example policy of the Kubernetes auditing documentation
    /// (kubernetes.io/docs/tasks/debug/debug-cluster/audit/, `audit-policy.yaml`).
    const DOCS_EXAMPLE: &str = r#"
apiVersion: audit.k8s.io/v1 # This is required.
kind: Policy
# Don't generate audit events for all requests in RequestReceived stage.
omitStages:
  - "RequestReceived"
rules:
  # Log pod changes at RequestResponse level
  - level: RequestResponse
    resources:
    - group: ""
      # Resource "pods" doesn't match requests to any subresource of pods,
      # which is consistent with the RBAC policy.
      resources: ["pods"]
  # Log "pods/log", "pods/status" at Metadata level
  - level: Metadata
    resources:
    - group: ""
      resources: ["pods/log", "pods/status"]

  # Don't log requests to a configmap called "controller-leader"
  - level: None
    resources:
    - group: ""
      resources: ["configmaps"]
      resourceNames: ["controller-leader"]

  # Don't log watch requests by the "system:kube-proxy" on endpoints or services
  - level: None
    users: ["system:kube-proxy"]
    verbs: ["watch"]
    resources:
    - group: "" # core API group
      resources: ["endpoints", "services"]

  # Don't log authenticated requests to certain non-resource URL paths.
  - level: None
    userGroups: ["system:authenticated"]
    nonResourceURLs:
    - "/api*" # Wildcard matching.
    - "/version"

  # Log the request body of configmap changes in kube-system.
  - level: Request
    resources:
    - group: "" # core API group
      resources: ["configmaps"]
    # This rule only applies to resources in the "kube-system" namespace.
    # The empty string "" can be used to select non-namespaced resources.
    namespaces: ["kube-system"]

  # Log configmap and secret changes in all other namespaces at the Metadata level.
  - level: Metadata
    resources:
    - group: "" # core API group
      resources: ["secrets", "configmaps"]

  # Log all other resources in core and extensions at the Request level.
  - level: Request
    resources:
    - group: "" # core API group
    - group: "extensions" # Version of group should NOT be included.

  # A catch-all rule to log all other requests at the Metadata level.
  - level: Metadata
    # Long-running requests like watches that fall under this rule will not
    # generate an audit event in RequestReceived.
    omitStages:
      - "RequestReceived"
"#;

    fn attrs(
        user: &str,
        groups: &[&str],
        verb: &str,
        res: &str,
        ns: &str,
        name: &str,
    ) -> Attributes {
        let (resource, sub) = res.split_once('/').unwrap_or((res, ""));
        Attributes {
            user: UserInfo::new(user, groups),
            verb: verb.into(),
            resource_request: true,
            api_version: "v1".into(),
            resource: resource.into(),
            subresource: sub.into(),
            namespace: ns.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn reads_the_documentation_example() {
        let p = Policy::parse(DOCS_EXAMPLE).expect("the docs example is a valid policy");
        assert_eq!(p.rules.len(), 9);
        assert_eq!(p.omit_stages, StageSet::of(&[Stage::RequestReceived]));
        assert_eq!(
            p.rules[2].resources[0].resource_names,
            ["controller-leader"]
        );
        assert_eq!(p.rules[4].non_resource_urls, ["/api*", "/version"]);
        assert_eq!(p.rules[5].namespaces, ["kube-system"]);
        assert_eq!(p.rules[7].resources[1].group, "extensions");

        let jane = ["system:authenticated"];
        let level = |a: &Attributes| p.evaluate(a).level;
        assert_eq!(
            level(&attrs("jane", &jane, "create", "pods", "a", "")),
            Level::RequestResponse
        );
        assert_eq!(
            level(&attrs("jane", &jane, "get", "pods/log", "a", "p")),
            Level::Metadata
        );
        assert_eq!(
            level(&attrs(
                "jane",
                &jane,
                "update",
                "configmaps",
                "kube-system",
                "controller-leader"
            )),
            Level::None
        );
        assert_eq!(
            level(&attrs(
                "system:kube-proxy",
                &jane,
                "watch",
                "services",
                "",
                ""
            )),
            Level::None
        );
        assert_eq!(
            level(&attrs(
                "system:kube-proxy",
                &jane,
                "list",
                "services",
                "",
                ""
            )),
            Level::Request
        );
        assert_eq!(
            level(&attrs(
                "jane",
                &jane,
                "update",
                "configmaps",
                "kube-system",
                "x"
            )),
            Level::Request
        );
        assert_eq!(
            level(&attrs(
                "jane",
                &jane,
                "update",
                "configmaps",
                "default",
                "x"
            )),
            Level::Metadata
        );
        assert_eq!(
            level(&attrs("jane", &jane, "create", "secrets", "default", "")),
            Level::Metadata
        );
        let mut deploy = attrs("jane", &jane, "create", "deployments", "a", "");
        deploy.api_group = "apps".into();
        assert_eq!(level(&deploy), Level::Metadata);

        let version = Attributes {
            user: UserInfo::new("jane", &jane),
            verb: "get".into(),
            path: "/version".into(),
            ..Attributes::default()
        };
        assert_eq!(level(&version), Level::None);
        let anonymous_version = Attributes {
            user: UserInfo::anonymous(),
            ..version.clone()
        };
        let c = p.evaluate(&anonymous_version);
        assert_eq!(c.level, Level::Metadata);
        assert!(c.omit_stages.contains(Stage::RequestReceived));
    }

    #[test]
    fn reads_json() {
        let p = Policy::parse(
            r#"{"apiVersion":"audit.k8s.io/v1","kind":"Policy","omitManagedFields":true,
                "rules":[{"level":"RequestResponse","resources":[{"group":"","resources":["secrets"]}],
                          "omitManagedFields":false,"omitStages":["ResponseStarted"]},
                         {"level":"Metadata"}]}"#,
        )
        .unwrap();
        assert!(p.omit_managed_fields);
        assert_eq!(p.rules[0].omit_managed_fields, Some(false));
        assert_eq!(
            p.rules[0].omit_stages,
            StageSet::of(&[Stage::ResponseStarted])
        );
        assert_eq!(p.rules[1].level, Level::Metadata);
        assert_eq!(p.rules[1].omit_managed_fields, None);
    }

    #[test]
    fn null_lists_are_empty() {
        let p = Policy::parse(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nmetadata:\n  name: x\nrules:\n- level: Metadata\n  users:\n  verbs: []\n",
        )
        .unwrap();
        assert!(p.rules[0].users.is_empty() && p.rules[0].verbs.is_empty());
    }

    fn err(text: &str) -> String {
        Policy::parse(text).unwrap_err().to_string()
    }

    const HEAD: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n";

    #[test]
    fn errors_say_where_and_what() {
        assert_eq!(
            err(&format!("{HEAD}- level: Metadata\n- level: Everything\n")),
            "audit policy:5:10: rules[1].level: unknown level \"Everything\"; expected None, Metadata, Request or RequestResponse"
        );
        assert_eq!(
            err(&format!("{HEAD}- verbs: [get]\n")),
            "audit policy:4:3: rules[0].level: required: None, Metadata, Request or RequestResponse"
        );
        assert_eq!(
            err(&format!("{HEAD}- level: None\n  namespace: [a]\n")),
            "audit policy:5:3: rules[0].namespace: unknown field; expected one of level, users, userGroups, verbs, resources, namespaces, nonResourceURLs, omitStages, omitManagedFields"
        );
        assert!(
            err(&format!("{HEAD}- level: None\n  omitStages: [Done]\n"))
                .starts_with("audit policy:5:16: rules[0].omitStages[0]: unknown stage \"Done\"")
        );
        assert_eq!(
            err(&format!(
                "{HEAD}- level: None\n  nonResourceURLs: [healthz]\n"
            )),
            "audit policy:5:21: rules[0].nonResourceURLs[0]: non-resource URL rules must begin with a '/' character"
        );
        assert_eq!(
            err(&format!(
                "{HEAD}- level: None\n  nonResourceURLs: [\"/a*/b\"]\n"
            )),
            "audit policy:5:21: rules[0].nonResourceURLs[0]: non-resource URL wildcards '*' must be the final character of the rule"
        );
        assert_eq!(
            err(&format!(
                "{HEAD}- level: None\n  namespaces: [a]\n  nonResourceURLs: [/x]\n"
            )),
            "audit policy:6:20: rules[0].nonResourceURLs: rules cannot apply to both regular resources and non-resource URLs"
        );
        assert_eq!(
            err(&format!(
                "{HEAD}- level: None\n  resources:\n  - group: apps/v1\n"
            )),
            "audit policy:6:12: rules[0].resources[0].group: \"apps/v1\" is not an API group: a lowercase DNS subdomain, without a version"
        );
        assert_eq!(
            err(&format!(
                "{HEAD}- level: None\n  resources:\n  - resourceNames: [x]\n"
            )),
            "audit policy:6:5: rules[0].resources[0].resourceNames: using resourceNames requires at least one resource"
        );
        assert_eq!(
            err("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n"),
            "audit policy:3:1: rules: a policy needs at least one rule"
        );
        assert_eq!(
            err("apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: []\n"),
            "audit policy:1:13: apiVersion: unsupported \"audit.k8s.io/v1beta1\"; expected \"audit.k8s.io/v1\""
        );
        assert_eq!(
            err("apiVersion: audit.k8s.io/v1\nkind: Pod\n"),
            "audit policy:2:7: kind: expected \"Policy\", not \"Pod\""
        );
        assert_eq!(err(""), "audit policy: the file holds no policy");
        assert!(
            err(&format!("{HEAD}- level: None\n---\nkind: Policy\n"))
                .contains("one Policy per file")
        );
        assert!(
            err(&format!("{HEAD}- level: None\n  users: bob\n"))
                .ends_with("rules[0].users: expected a list")
        );
        assert!(err("rules: [\n").starts_with("audit policy:2:1: invalid YAML"));
    }

    #[test]
    fn file_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.yaml");
        std::fs::write(&path, format!("{HEAD}- level: Loud\n")).unwrap();
        let e = Policy::from_file(&path).unwrap_err();
        assert_eq!(e.file.as_deref(), Some(path.as_path()));
        assert_eq!((e.line, e.column), (4, 10));
        assert!(e.to_string().starts_with(&format!(
            "audit policy {}:4:10: rules[0].level",
            path.display()
        )));

        let missing = Policy::from_file(dir.path().join("nope.yaml")).unwrap_err();
        assert!(
            missing.to_string().contains("nope.yaml: cannot read:"),
            "{missing}"
        );

        std::fs::write(&path, DOCS_EXAMPLE).unwrap();
        assert_eq!(Policy::from_file(&path).unwrap().rules.len(), 9);
    }
}
