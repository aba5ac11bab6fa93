//! Which of a CRD's names it may have: kube-apiserver's naming controller. A name
//! stays the CRD's once accepted; a new one is accepted unless another resource of the
//! group (another CRD's accepted names, or a compiled resource) already uses it.

use std::collections::BTreeSet;

use serde_json::{Value, json};

/// The names in use in one group, by resources other than the CRD being looked at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TakenNames {
    /// Plurals, singulars and short names.
    pub resources: BTreeSet<String>,
    /// Kinds and list kinds.
    pub kinds: BTreeSet<String>,
}

impl TakenNames {
    /// Adds the names of one resource.
    pub fn add(&mut self, names: &Value) {
        let text = |k: &str| names.get(k).and_then(Value::as_str).unwrap_or_default();
        for k in ["plural", "singular"] {
            if !text(k).is_empty() {
                self.resources.insert(text(k).to_string());
            }
        }
        for s in strings(names.get("shortNames")) {
            self.resources.insert(s);
        }
        for k in ["kind", "listKind"] {
            if !text(k).is_empty() {
                self.kinds.insert(text(k).to_string());
            }
        }
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The outcome for one CRD: the names it gets and its `NamesAccepted` condition.
#[derive(Clone, Debug, PartialEq)]
pub struct Naming {
    /// `status.acceptedNames`.
    pub accepted: Value,
    /// Whether every requested name was accepted.
    pub all_accepted: bool,
    /// The condition's reason (`NoConflicts`, `PluralConflict`, ...).
    pub reason: &'static str,
    /// The condition's message.
    pub message: String,
}

fn fresh(requested: &str, accepted: &str, used: &BTreeSet<String>) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        Ok(())
    } else {
        Err(format!("{requested:?} is already in use"))
    }
}

/// Decides the accepted names of a CRD whose `spec.names` are `requested` and whose
/// `status.acceptedNames` are `accepted`, given the names `taken` by the rest of its
/// group. Like kube-apiserver, the last conflict found gives the reason.
pub fn accept(requested: &Value, accepted: &Value, taken: &TakenNames) -> Naming {
    let text = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut out = accepted.as_object().cloned().unwrap_or_default();
    let mut conflict: Option<(&'static str, String)> = None;
    for (key, reason, used) in [
        ("plural", "PluralConflict", &taken.resources),
        ("singular", "SingularConflict", &taken.resources),
    ] {
        match fresh(&text(requested, key), &text(accepted, key), used) {
            Ok(()) => {
                out.insert(key.into(), json!(text(requested, key)));
            }
            Err(m) => conflict = Some((reason, m)),
        }
    }
    let wanted = strings(requested.get("shortNames"));
    let had = strings(accepted.get("shortNames"));
    if wanted != had {
        let errs: Vec<String> = wanted
            .iter()
            .filter(|s| !had.contains(s))
            .filter_map(|s| fresh(s, "", &taken.resources).err())
            .collect();
        if errs.is_empty() {
            out.insert("shortNames".into(), json!(wanted));
        } else {
            let message = if errs.len() == 1 {
                errs[0].clone()
            } else {
                format!("[{}]", errs.join(", "))
            };
            conflict = Some(("ShortNamesConflict", message));
        }
    }
    for (key, reason) in [("kind", "KindConflict"), ("listKind", "ListKindConflict")] {
        match fresh(&text(requested, key), &text(accepted, key), &taken.kinds) {
            Ok(()) => {
                out.insert(key.into(), json!(text(requested, key)));
            }
            Err(m) => conflict = Some((reason, m)),
        }
    }
    match requested.get("categories") {
        Some(c) => out.insert("categories".into(), c.clone()),
        None => out.remove("categories"),
    };
    // `plural` and `kind` are always written (required, even when empty, as Go writes
    // them); empty short names are left out, as Go's omitempty leaves them.
    for key in ["plural", "kind"] {
        out.entry(key).or_insert_with(|| json!(""));
    }
    if out
        .get("shortNames")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        out.remove("shortNames");
    }
    let (all_accepted, reason, message) = match conflict {
        None => (true, "NoConflicts", "no conflicts found".to_string()),
        Some((reason, message)) => (false, reason, message),
    };
    Naming {
        accepted: Value::Object(out),
        all_accepted,
        reason,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(kind: &str, plural: &str, short: &[&str]) -> Value {
        json!({
            "kind": kind, "listKind": format!("{kind}List"), "plural": plural,
            "singular": kind.to_lowercase(), "shortNames": short,
        })
    }

    #[test]
    fn fresh_names_are_accepted() {
        let n = accept(
            &names("Foo", "foos", &["fo"]),
            &json!({}),
            &TakenNames::default(),
        );
        assert!(n.all_accepted);
        assert_eq!(n.accepted, names("Foo", "foos", &["fo"]));
        assert_eq!(
            (n.reason, n.message.as_str()),
            ("NoConflicts", "no conflicts found")
        );
    }

    #[test]
    fn a_name_in_use_is_refused_with_kube_apiserver_s_words() {
        let mut taken = TakenNames::default();
        taken.add(&names("Bar", "bars", &["fo"]));
        let n = accept(&names("Foo", "foos", &["fo"]), &json!({}), &taken);
        assert!(!n.all_accepted);
        assert_eq!(n.reason, "ShortNamesConflict");
        assert_eq!(n.message, "\"fo\" is already in use");
        assert!(n.accepted.get("shortNames").is_none());
        assert_eq!(n.accepted["plural"], "foos");

        let mut foo_taken = TakenNames::default();
        foo_taken.add(&names("Foo", "others", &[]));
        let n = accept(&names("Foo", "foos", &[]), &json!({}), &foo_taken);
        // plural and kind are always there, even empty, as Go writes them.
        assert_eq!(n.accepted, json!({"plural": "foos", "kind": ""}));

        let n = accept(&names("Bar", "foos", &[]), &json!({}), &taken);
        assert_eq!(
            (n.reason, n.message.as_str()),
            ("ListKindConflict", "\"BarList\" is already in use")
        );
    }

    #[test]
    fn accepted_names_stay_accepted() {
        let mut taken = TakenNames::default();
        taken.add(&names("Foo", "others", &[]));
        let mine = names("Foo", "foos", &[]);
        let n = accept(&mine, &mine, &taken);
        assert!(n.all_accepted, "{n:?}");
    }
}
