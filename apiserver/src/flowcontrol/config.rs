//! FlowSchemas and PriorityLevelConfigurations as API Priority and Fairness uses them,
//! read from their `flowcontrol.apiserver.k8s.io/v1` JSON with v1's defaults applied
//! where a field is absent (kube's `pkg/apis/flowcontrol/v1/defaults.go`), and the
//! mandatory `exempt` and `catch-all` objects kube's `apf_controller.go` imagines when
//! they are missing.
//!
//! Differences from kube:
//! - an object this module cannot read (not an object, a Limited level without
//!   `limited`, a FlowSchema without a level name) is skipped and reported by name in
//!   [`Config::skipped`], where kube's controller logs it and ignores it;
//! - `handSize` is clamped to `queues` (validation forbids more; kube refuses the
//!   level), and `queues` of 0 under `Queue` reads as a `Reject` level, as kube's
//!   queue set treats a level of no queues.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The mandatory exempt level's and schema's name.
pub const EXEMPT: &str = "exempt";
/// The mandatory catch-all level's and schema's name.
pub const CATCH_ALL: &str = "catch-all";

/// v1's default `nominalConcurrencyShares` of a Limited level.
const DEFAULT_SHARES: u32 = 30;
/// v1's default `queues`.
const DEFAULT_QUEUES: u32 = 64;
/// v1's default `handSize`.
const DEFAULT_HAND_SIZE: u32 = 8;
/// v1's default `queueLengthLimit`.
const DEFAULT_QUEUE_LENGTH_LIMIT: u32 = 50;
/// v1's default `matchingPrecedence`.
const DEFAULT_PRECEDENCE: i64 = 1000;

/// How a FlowSchema tells flows apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distinguisher {
    /// No distinguisher: one flow per schema.
    None,
    /// By the user's name.
    ByUser,
    /// By the request's namespace.
    ByNamespace,
}

/// Who a rule applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A user by name (`*`: every user).
    User(String),
    /// A group by name (`*`: every group).
    Group(String),
    /// A service account by namespace and name (name `*`: every one of the namespace).
    ServiceAccount {
        /// The service account's namespace.
        namespace: String,
        /// Its name, or `*`.
        name: String,
    },
}

/// A rule matching resource requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRule {
    /// Verbs (`["*"]`: all).
    pub verbs: Vec<String>,
    /// API groups (`["*"]`: all; `""` is core).
    pub api_groups: Vec<String>,
    /// Resources, `resource/subresource` for a subresource (`["*"]`: all).
    pub resources: Vec<String>,
    /// Whether cluster-scoped requests (no namespace) match.
    pub cluster_scope: bool,
    /// Namespaces of namespaced requests (`["*"]`: all).
    pub namespaces: Vec<String>,
}

/// A rule matching non-resource requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NonResourceRule {
    /// Verbs (`["*"]`: all).
    pub verbs: Vec<String>,
    /// Paths: exact, `*` for all, or a prefix ending in `*`.
    pub non_resource_urls: Vec<String>,
}

/// Subjects with the resource and non-resource rules they are matched by.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyRules {
    /// Whom the rules apply to.
    pub subjects: Vec<Subject>,
    /// Rules of resource requests.
    pub resource_rules: Vec<ResourceRule>,
    /// Rules of non-resource requests.
    pub non_resource_rules: Vec<NonResourceRule>,
}

/// A FlowSchema as classification needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSchema {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` (empty for an imagined mandatory schema).
    pub uid: String,
    /// `spec.matchingPrecedence`: lower matches first.
    pub matching_precedence: i64,
    /// `spec.priorityLevelConfiguration.name`.
    pub priority_level: String,
    /// `spec.distinguisherMethod.type`.
    pub distinguisher: Distinguisher,
    /// `spec.rules`.
    pub rules: Vec<PolicyRules>,
}

/// What a Limited level does with a request over its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitResponse {
    /// Reject it at once.
    Reject,
    /// Queue it, shuffle-sharded to `hand_size` of `queues` queues.
    Queue {
        /// Number of queues.
        queues: u32,
        /// Queues dealt to each flow.
        hand_size: u32,
        /// Most requests waiting in one queue.
        queue_length_limit: u32,
    },
}

/// A priority level's kind and settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelKind {
    /// Never limited.
    Exempt,
    /// Limited to a share of the server's concurrency.
    Limited {
        /// What it does over its limit.
        limit_response: LimitResponse,
        /// `borrowingLimitPercent`, absent meaning no limit.
        borrowing_limit_percent: Option<u32>,
    },
}

/// A PriorityLevelConfiguration as dispatching needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorityLevel {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` (empty for an imagined mandatory level).
    pub uid: String,
    /// `nominalConcurrencyShares` (30 by default when Limited, 0 when Exempt).
    pub shares: u32,
    /// `lendablePercent` (0 by default).
    pub lendable_percent: u32,
    /// Exempt or Limited.
    pub kind: LevelKind,
}

impl PriorityLevel {
    /// Whether the level is exempt from limits.
    pub fn is_exempt(&self) -> bool {
        matches!(self.kind, LevelKind::Exempt)
    }

    /// The queuing settings, when the level queues.
    pub fn queuing(&self) -> Option<(u32, u32, u32)> {
        match self.kind {
            LevelKind::Limited {
                limit_response:
                    LimitResponse::Queue {
                        queues,
                        hand_size,
                        queue_length_limit,
                    },
                ..
            } => Some((queues, hand_size, queue_length_limit)),
            _ => None,
        }
    }
}

/// The whole configuration: schemas in matching order and levels by name, the
/// mandatory ones included.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// FlowSchemas whose level exists, by increasing precedence then name.
    pub flow_schemas: Vec<FlowSchema>,
    /// Priority levels by name.
    pub levels: BTreeMap<String, PriorityLevel>,
    /// Objects left out, with why (unreadable, or a schema's level missing).
    pub skipped: Vec<String>,
}

impl Config {
    /// Reads FlowSchema and PriorityLevelConfiguration objects (whole objects, with
    /// `metadata` and `spec`), adding the mandatory ones that are missing.
    pub fn from_objects(flow_schemas: &[Value], levels: &[Value]) -> Self {
        let mut config = Config::default();
        for object in levels {
            match parse_level(object) {
                Ok(level) => {
                    config.levels.insert(level.name.clone(), level);
                }
                Err(why) => config.skipped.push(why),
            }
        }
        for (name, spec) in [
            (EXEMPT, mandatory_exempt_level()),
            (CATCH_ALL, mandatory_catch_all_level()),
        ] {
            if !config.levels.contains_key(name) {
                let level = parse_level(&json!({ "metadata": { "name": name }, "spec": spec }))
                    .expect("the mandatory levels are well formed");
                config.levels.insert(name.into(), level);
            }
        }
        for object in flow_schemas {
            match parse_flow_schema(object) {
                Ok(fs) if config.levels.contains_key(&fs.priority_level) => {
                    config.flow_schemas.push(fs)
                }
                // A dangling schema matches nothing (kube sets its Dangling condition).
                Ok(fs) => config.skipped.push(format!(
                    "FlowSchema {}: PriorityLevelConfiguration {} not found",
                    fs.name, fs.priority_level
                )),
                Err(why) => config.skipped.push(why),
            }
        }
        for (name, spec) in [
            (EXEMPT, mandatory_exempt_schema()),
            (CATCH_ALL, mandatory_catch_all_schema()),
        ] {
            if !config.flow_schemas.iter().any(|fs| fs.name == name) {
                let fs = parse_flow_schema(&json!({ "metadata": { "name": name }, "spec": spec }))
                    .expect("the mandatory schemas are well formed");
                config.flow_schemas.push(fs);
            }
        }
        config.flow_schemas.sort_by(|a, b| {
            (a.matching_precedence, &a.name).cmp(&(b.matching_precedence, &b.name))
        });
        config
    }
}

/// The mandatory `exempt` level's spec.
fn mandatory_exempt_level() -> Value {
    json!({ "type": "Exempt", "exempt": { "nominalConcurrencyShares": 0, "lendablePercent": 0 } })
}

/// The mandatory `catch-all` level's spec.
fn mandatory_catch_all_level() -> Value {
    json!({
        "type": "Limited",
        "limited": {
            "nominalConcurrencyShares": 5,
            "lendablePercent": 0,
            "limitResponse": { "type": "Reject" },
        },
    })
}

/// The rule of `groups` matching every request.
fn everything_of_groups(groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({ "kind": "Group", "group": { "name": g } }))
        .collect();
    json!({
        "subjects": subjects,
        "resourceRules": [{
            "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
            "namespaces": ["*"], "clusterScope": true,
        }],
        "nonResourceRules": [{ "verbs": ["*"], "nonResourceURLs": ["*"] }],
    })
}

/// The mandatory `exempt` schema's spec.
fn mandatory_exempt_schema() -> Value {
    json!({
        "priorityLevelConfiguration": { "name": EXEMPT },
        "matchingPrecedence": 1,
        "rules": [everything_of_groups(&["system:masters"])],
    })
}

/// The mandatory `catch-all` schema's spec.
fn mandatory_catch_all_schema() -> Value {
    json!({
        "priorityLevelConfiguration": { "name": CATCH_ALL },
        "matchingPrecedence": 10000,
        "distinguisherMethod": { "type": "ByUser" },
        "rules": [everything_of_groups(&["system:unauthenticated", "system:authenticated"])],
    })
}

/// `metadata.name` and `metadata.uid`.
fn name_and_uid(object: &Value) -> Result<(String, String), String> {
    let meta = &object["metadata"];
    let name = meta["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| "an object without metadata.name".to_string())?;
    let uid = meta["uid"].as_str().unwrap_or_default();
    Ok((name.into(), uid.into()))
}

/// A string list (absent: empty).
fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A non-negative integer field, `default` when absent or not one.
fn count(value: &Value, default: u32) -> u32 {
    value
        .as_u64()
        .map(|n| n.min(u64::from(u32::MAX)) as u32)
        .unwrap_or(default)
}

/// Reads a PriorityLevelConfiguration.
pub fn parse_level(object: &Value) -> Result<PriorityLevel, String> {
    let (name, uid) = name_and_uid(object)?;
    let spec = &object["spec"];
    let broken = |why: &str| format!("PriorityLevelConfiguration {name}: {why}");
    let level = match spec["type"].as_str() {
        Some("Exempt") => {
            let exempt = &spec["exempt"];
            PriorityLevel {
                shares: count(&exempt["nominalConcurrencyShares"], 0),
                lendable_percent: count(&exempt["lendablePercent"], 0).min(100),
                kind: LevelKind::Exempt,
                name,
                uid,
            }
        }
        Some("Limited") => {
            let limited = &spec["limited"];
            if !limited.is_object() {
                return Err(broken("type Limited without limited"));
            }
            let response = &limited["limitResponse"];
            let limit_response = match response["type"].as_str() {
                Some("Queue") => {
                    let q = &response["queuing"];
                    let queues = count(&q["queues"], DEFAULT_QUEUES);
                    if queues == 0 {
                        LimitResponse::Reject
                    } else {
                        LimitResponse::Queue {
                            queues,
                            hand_size: count(&q["handSize"], DEFAULT_HAND_SIZE).clamp(1, queues),
                            queue_length_limit: count(
                                &q["queueLengthLimit"],
                                DEFAULT_QUEUE_LENGTH_LIMIT,
                            ),
                        }
                    }
                }
                Some("Reject") => LimitResponse::Reject,
                _ => return Err(broken("limitResponse.type is neither Queue nor Reject")),
            };
            PriorityLevel {
                shares: count(&limited["nominalConcurrencyShares"], DEFAULT_SHARES),
                lendable_percent: count(&limited["lendablePercent"], 0).min(100),
                kind: LevelKind::Limited {
                    limit_response,
                    borrowing_limit_percent: limited["borrowingLimitPercent"]
                        .as_u64()
                        .map(|n| n.min(u64::from(u32::MAX)) as u32),
                },
                name,
                uid,
            }
        }
        _ => return Err(broken("type is neither Exempt nor Limited")),
    };
    Ok(level)
}

/// Reads a FlowSchema.
pub fn parse_flow_schema(object: &Value) -> Result<FlowSchema, String> {
    let (name, uid) = name_and_uid(object)?;
    let spec = &object["spec"];
    let priority_level = spec["priorityLevelConfiguration"]["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| format!("FlowSchema {name}: no priorityLevelConfiguration.name"))?
        .to_string();
    let distinguisher = match spec["distinguisherMethod"]["type"].as_str() {
        Some("ByUser") => Distinguisher::ByUser,
        Some("ByNamespace") => Distinguisher::ByNamespace,
        _ => Distinguisher::None,
    };
    let rules = spec["rules"]
        .as_array()
        .map(|rules| rules.iter().map(parse_rules).collect())
        .unwrap_or_default();
    Ok(FlowSchema {
        matching_precedence: spec["matchingPrecedence"]
            .as_i64()
            .unwrap_or(DEFAULT_PRECEDENCE),
        name,
        uid,
        priority_level,
        distinguisher,
        rules,
    })
}

/// Reads one `PolicyRulesWithSubjects`.
fn parse_rules(value: &Value) -> PolicyRules {
    let subjects = value["subjects"]
        .as_array()
        .map(|s| s.iter().filter_map(parse_subject).collect())
        .unwrap_or_default();
    let resource_rules = value["resourceRules"]
        .as_array()
        .map(|rules| {
            rules
                .iter()
                .map(|r| ResourceRule {
                    verbs: strings(&r["verbs"]),
                    api_groups: strings(&r["apiGroups"]),
                    resources: strings(&r["resources"]),
                    cluster_scope: r["clusterScope"].as_bool().unwrap_or(false),
                    namespaces: strings(&r["namespaces"]),
                })
                .collect()
        })
        .unwrap_or_default();
    let non_resource_rules = value["nonResourceRules"]
        .as_array()
        .map(|rules| {
            rules
                .iter()
                .map(|r| NonResourceRule {
                    verbs: strings(&r["verbs"]),
                    non_resource_urls: strings(&r["nonResourceURLs"]),
                })
                .collect()
        })
        .unwrap_or_default();
    PolicyRules {
        subjects,
        resource_rules,
        non_resource_rules,
    }
}

/// Reads one subject; one of an unknown kind, or missing its member, matches nothing.
fn parse_subject(value: &Value) -> Option<Subject> {
    let text = |v: &Value| v.as_str().map(String::from);
    match value["kind"].as_str()? {
        "User" => text(&value["user"]["name"]).map(Subject::User),
        "Group" => text(&value["group"]["name"]).map(Subject::Group),
        "ServiceAccount" => {
            let sa = &value["serviceAccount"];
            Some(Subject::ServiceAccount {
                namespace: text(&sa["namespace"])?,
                name: text(&sa["name"])?,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_where_fields_are_absent() {
        let level = parse_level(&json!({
            "metadata": { "name": "l", "uid": "u1" },
            "spec": { "type": "Limited", "limited": { "limitResponse": { "type": "Queue" } } },
        }))
        .unwrap();
        assert_eq!(level.uid, "u1");
        assert_eq!(level.shares, 30);
        assert_eq!(level.lendable_percent, 0);
        assert_eq!(level.queuing(), Some((64, 8, 50)));
        let LevelKind::Limited {
            borrowing_limit_percent,
            ..
        } = level.kind
        else {
            panic!("limited")
        };
        assert_eq!(borrowing_limit_percent, None);

        let fs = parse_flow_schema(&json!({
            "metadata": { "name": "f" },
            "spec": { "priorityLevelConfiguration": { "name": "l" } },
        }))
        .unwrap();
        assert_eq!(fs.matching_precedence, 1000);
        assert_eq!(fs.distinguisher, Distinguisher::None);
    }

    #[test]
    fn mandatory_objects_are_imagined_and_dangling_schemas_dropped() {
        let config = Config::from_objects(
            &[json!({
                "metadata": { "name": "orphan" },
                "spec": { "priorityLevelConfiguration": { "name": "nowhere" } },
            })],
            &[json!({ "metadata": { "name": "broken" }, "spec": { "type": "Limited" } })],
        );
        let names: Vec<_> = config
            .flow_schemas
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["exempt", "catch-all"]);
        assert!(config.levels["exempt"].is_exempt());
        assert_eq!(config.levels["catch-all"].shares, 5);
        assert!(!config.levels.contains_key("broken"));
        assert_eq!(config.skipped.len(), 2);
    }
}
