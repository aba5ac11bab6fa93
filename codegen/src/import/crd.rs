//! The parts of an imported kind's `CustomResourceDefinition` that come from the
//! configuration: annotations, names, printer columns, and the conversion of a kind
//! served in several versions.

use super::config::KindConfig;
use super::openapi::Resource;
use super::yaml::Node;
use super::{KindImport, SUBRESOURCES_ANNOTATION, VERBS_ANNOTATION};
use crate::validate::{
    CONVERSION_HOOKS_ANNOTATION, CONVERSION_OBJECT_HOOKS_ANNOTATION, HOOKS_ANNOTATION,
};

/// `spec.conversion` of a kind served in several versions: converted in process by
/// the generated code and its hooks; the webhook is where kapi serves the same
/// conversion as ConversionReview (its `/convert`, behind the `kubernetes` Service, as
/// kube-apiserver is), for a CRD that needs one.
pub(super) fn conversion() -> Node {
    Node::Map(vec![
        ("strategy".into(), Node::str("Webhook")),
        (
            "webhook".into(),
            Node::Map(vec![
                (
                    "conversionReviewVersions".into(),
                    Node::Seq(vec![Node::str("v1")]),
                ),
                (
                    "clientConfig".into(),
                    Node::Map(vec![(
                        "service".into(),
                        Node::Map(vec![
                            ("namespace".into(), Node::str("default")),
                            ("name".into(), Node::str("kubernetes")),
                            ("path".into(), Node::str("/convert")),
                        ]),
                    )]),
                ),
            ]),
        ),
    ])
}

/// The CRD's `metadata.annotations`, sorted by key: the hooks (and conversion hooks), the configured
/// subresources with their verbs (`name=verb,verb;name=verb`), and the resource's verbs.
pub(super) fn annotations(k: &KindConfig, res: &Resource) -> Vec<(String, Node)> {
    let mut annotations = Vec::new();
    if let Some(h) = &k.hooks {
        annotations.push((HOOKS_ANNOTATION.to_string(), Node::str(h)));
    }
    if let Some(h) = &k.conversion_hooks {
        annotations.push((CONVERSION_HOOKS_ANNOTATION.to_string(), Node::str(h)));
        annotations.push((
            CONVERSION_OBJECT_HOOKS_ANNOTATION.to_string(),
            Node::str("true"),
        ));
    }
    if !k.subresources.is_empty() {
        let mut subs = k.subresources.clone();
        subs.sort();
        subs.dedup();
        let written: Vec<String> = subs.iter().map(|s| res.subresource_entry(s)).collect();
        annotations.push((
            SUBRESOURCES_ANNOTATION.to_string(),
            Node::str(written.join(";")),
        ));
    }
    let verbs: Vec<&str> = res.verbs.iter().map(String::as_str).collect();
    annotations.push((VERBS_ANNOTATION.to_string(), Node::str(verbs.join(","))));
    annotations.sort_by(|a, b| a.0.cmp(&b.0));
    annotations
}

/// The CRD's `spec.names`: kind, list kind, plural and singular, and the configured
/// short names and categories.
pub(super) fn crd_names(ki: &KindImport<'_>) -> Vec<(String, Node)> {
    let k = ki.cfg;
    let mut names = vec![
        ("kind".to_string(), Node::str(&k.kind)),
        ("listKind".to_string(), Node::str(format!("{}List", k.kind))),
        ("plural".to_string(), Node::str(&ki.plural)),
        ("singular".to_string(), Node::str(k.kind.to_lowercase())),
    ];
    if !k.short_names.is_empty() {
        names.push(("shortNames".to_string(), strings(&k.short_names)));
    }
    if !k.categories.is_empty() {
        names.push(("categories".to_string(), strings(&k.categories)));
    }
    names
}

/// The version's `additionalPrinterColumns`, from the configuration.
pub(super) fn printer_columns(k: &KindConfig) -> Node {
    let columns = k
        .printer_columns
        .iter()
        .map(|c| {
            let mut col = vec![
                ("name".to_string(), Node::str(&c.name)),
                ("type".to_string(), Node::str(&c.type_)),
                ("jsonPath".to_string(), Node::str(&c.json_path)),
            ];
            if let Some(d) = &c.description {
                col.push(("description".to_string(), Node::str(d)));
            }
            if let Some(f) = &c.format {
                col.push(("format".to_string(), Node::str(f)));
            }
            if let Some(p) = c.priority {
                col.push(("priority".to_string(), Node::Number(p.into())));
            }
            Node::Map(col)
        })
        .collect();
    Node::Seq(columns)
}

pub(super) fn strings(items: &[String]) -> Node {
    Node::Seq(items.iter().map(Node::str).collect())
}
