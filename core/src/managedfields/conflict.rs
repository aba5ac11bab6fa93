//! Apply conflicts (SMD's `merge.Conflict`) and the messages kube words them with
//! (`k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go`), plus kube's
//! manager identifiers, which those messages decode.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use super::path::Path;
use super::set::FieldSet;
use super::value::{go_quote, write_json_string};

/// A field another manager owns with a different value than the one applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The owner's manager identifier.
    pub manager: String,
    /// The field.
    pub path: Path,
}

impl fmt::Display for Conflict {
    /// SMD's wording: `conflict with "alice": .data.k`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "conflict with {}: {}",
            go_quote(&self.manager),
            self.path
        )
    }
}

/// The conflicts of one apply, ordered by manager identifier, then by path in field
/// set order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conflicts(pub Vec<Conflict>);

impl Conflicts {
    /// One conflict per path of each manager's set, managers in identifier order.
    pub fn from_sets(sets: &BTreeMap<String, FieldSet>) -> Self {
        let mut out = Vec::new();
        for (manager, set) in sets {
            set.for_each_path(|p| {
                out.push(Conflict {
                    manager: manager.clone(),
                    path: Path::from(p),
                });
            });
        }
        Conflicts(out)
    }

    /// Every conflicting path.
    pub fn to_set(&self) -> FieldSet {
        FieldSet::from_paths(self.0.iter().map(|c| &c.path))
    }

    /// Paths grouped by manager, managers sorted.
    fn by_manager(&self) -> BTreeMap<&str, Vec<&Path>> {
        let mut m: BTreeMap<&str, Vec<&Path>> = BTreeMap::new();
        for c in &self.0 {
            m.entry(c.manager.as_str()).or_default().push(&c.path);
        }
        m
    }
}

impl fmt::Display for Conflicts {
    /// SMD's `Conflicts.Error()`: a single conflict as itself, several grouped under
    /// `conflicts with "m":` headers, one `- path` a line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [one] = self.0.as_slice() {
            return write!(f, "{one}");
        }
        let mut first = true;
        for (manager, paths) in self.by_manager() {
            let sep = if std::mem::take(&mut first) { "" } else { "\n" };
            write!(f, "{sep}conflicts with {}:", go_quote(manager))?;
            for p in paths {
                write!(f, "\n- {p}")?;
            }
        }
        Ok(())
    }
}

/// The operation a manager entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Any other write (create, update, patch).
    Update,
}

impl Operation {
    /// The `operation` string of a `managedFields` entry.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// kube's manager identifier (`BuildManagerIdentifier`): the `managedFields` entry
/// without fields, type and time, as Go's `json.Marshal` writes it, e.g.
/// `{"manager":"kubectl","operation":"Update","apiVersion":"v1"}`. An applier's has
/// no `apiVersion`, so applying with another version is the same manager; empty
/// fields are left out.
pub fn manager_identifier(
    manager: &str,
    operation: Operation,
    api_version: &str,
    subresource: &str,
) -> String {
    let api_version = match operation {
        Operation::Apply => "",
        Operation::Update => api_version,
    };
    let fields = [
        ("manager", manager),
        ("operation", operation.as_str()),
        ("apiVersion", api_version),
        ("subresource", subresource),
    ];
    let mut out = String::from("{");
    for (name, v) in fields.into_iter().filter(|(_, v)| !v.is_empty()) {
        if out.len() > 1 {
            out.push(',');
        }
        write_json_string(&mut out, name, true);
        out.push(':');
        write_json_string(&mut out, v, true);
    }
    out.push('}');
    out
}

/// What kube prints of a manager in a conflict message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManagerInfo {
    /// The manager's name (`fieldManager`).
    pub manager: String,
    /// `Apply` or `Update` (kube prints version and time for `Update` only).
    pub operation: String,
    /// The API version of an `Update`.
    pub api_version: String,
    /// The subresource written through, if any.
    pub subresource: String,
    /// The time of an `Update`, already formatted (kube prints it as RFC 3339 in
    /// UTC). kube's identifiers never carry one, so its messages never show it.
    pub time: Option<String>,
}

impl fmt::Display for ManagerInfo {
    /// kube's `printManager`: `"kubectl"`, `"kubectl" with subresource "status"`,
    /// `"kubectl-edit" using v1`, `"kubectl-edit" using v1 at 2024-01-02T03:04:05Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", go_quote(&self.manager))?;
        if !self.subresource.is_empty() {
            write!(f, " with subresource {}", go_quote(&self.subresource))?;
        }
        if self.operation == Operation::Update.as_str() {
            write!(f, " using {}", self.api_version)?;
            if let Some(t) = &self.time {
                write!(f, " at {t}")?;
            }
        }
        Ok(())
    }
}

/// Decodes a manager identifier as kube's `printManager` does (`json.Unmarshal` into a
/// `ManagedFieldsEntry`): `None` when it is not such JSON (kube then prints the raw
/// identifier quoted). Unknown keys are ignored; a known key of the wrong type, or a
/// `time` that is not RFC 3339, fails the decoding as it does in Go.
pub fn parse_manager_identifier(id: &str) -> Option<ManagerInfo> {
    let entry = match serde_json::from_str::<Value>(id).ok()? {
        Value::Object(entry) => entry,
        // Go decodes `null` into the zero entry.
        Value::Null => return Some(ManagerInfo::default()),
        _ => return None,
    };
    let text = |key: &str| -> Option<String> {
        match entry.get(key) {
            None | Some(Value::Null) => Some(String::new()),
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => None,
        }
    };
    let time = match entry.get("time") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            let t = chrono::DateTime::parse_from_rfc3339(s).ok()?;
            Some(
                t.with_timezone(&chrono::Utc)
                    .format("%Y-%m-%dT%H:%M:%SZ")
                    .to_string(),
            )
        }
        Some(_) => return None,
    };
    Some(ManagerInfo {
        manager: text("manager")?,
        operation: text("operation")?,
        api_version: text("apiVersion")?,
        subresource: text("subresource")?,
        time,
    })
}

/// One entry of kube's `details.causes` for a conflict (its `type` is
/// [`CAUSE_TYPE`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConflictCause {
    /// `conflict with "alice"` (with the manager as [`ManagerInfo`] prints it).
    pub message: String,
    /// The path, e.g. `.data.k`.
    pub field: String,
}

/// The `type` of kube's conflict causes.
pub const CAUSE_TYPE: &str = "FieldManagerConflict";

/// The body of kube's 409 for failed applies (`NewConflictError`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConflictReport {
    /// The status message, e.g. `Apply failed with 1 conflict: conflict with
    /// "alice": .data.k`.
    pub message: String,
    /// One cause per conflict, in order.
    pub causes: Vec<ConflictCause>,
}

/// kube's conflict message and causes. `describe` decodes a manager identifier
/// ([`parse_manager_identifier`] for kube's identifiers); `None` prints the identifier
/// itself, quoted.
///
/// One conflict: `Apply failed with 1 conflict: conflict with "alice" using v1: .data.k`.
/// Several: `Apply failed with 2 conflicts: conflicts with "alice":\n- .data.a\n- .data.b`,
/// managers sorted by identifier, each followed by its paths.
pub fn conflict_report(
    conflicts: &Conflicts,
    describe: impl Fn(&str) -> Option<ManagerInfo>,
) -> ConflictReport {
    let print = |id: &str| match describe(id) {
        Some(info) => info.to_string(),
        None => go_quote(id),
    };
    let causes = conflicts
        .0
        .iter()
        .map(|c| ConflictCause {
            message: format!("conflict with {}", print(&c.manager)),
            field: c.path.to_string(),
        })
        .collect();
    let message = if let [one] = conflicts.0.as_slice() {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            print(&one.manager),
            one.path
        )
    } else {
        let mut lines = Vec::new();
        for (manager, paths) in conflicts.by_manager() {
            lines.push(format!("conflicts with {}:", print(manager)));
            lines.extend(paths.iter().map(|p| format!("- {p}")));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.0.len(),
            lines.join("\n")
        )
    };
    ConflictReport { message, causes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::managedfields::PathElement;

    fn conflict(manager: &str, fields: &[&str]) -> Conflict {
        Conflict {
            manager: manager.to_owned(),
            path: Path(fields.iter().map(|f| PathElement::field(*f)).collect()),
        }
    }

    #[test]
    fn words_conflicts_as_kube() {
        let alice = manager_identifier("alice", Operation::Update, "v1", "");
        assert_eq!(
            alice,
            r#"{"manager":"alice","operation":"Update","apiVersion":"v1"}"#
        );
        let bob = manager_identifier("bob", Operation::Apply, "v1", "status");
        assert_eq!(
            bob,
            r#"{"manager":"bob","operation":"Apply","subresource":"status"}"#
        );

        let one = Conflicts(vec![conflict(&alice, &["data", "k"])]);
        let report = conflict_report(&one, parse_manager_identifier);
        assert_eq!(
            report.message,
            r#"Apply failed with 1 conflict: conflict with "alice" using v1: .data.k"#
        );
        assert_eq!(
            report.causes,
            vec![ConflictCause {
                message: r#"conflict with "alice" using v1"#.to_owned(),
                field: ".data.k".to_owned(),
            }]
        );

        let several = Conflicts(vec![
            conflict(&bob, &["spec", "x"]),
            conflict(&alice, &["data", "a"]),
            conflict(&alice, &["data", "b"]),
        ]);
        let report = conflict_report(&several, parse_manager_identifier);
        assert_eq!(
            report.message,
            "Apply failed with 3 conflicts: conflicts with \"alice\" using v1:\n- .data.a\n- .data.b\n\
             conflicts with \"bob\" with subresource \"status\":\n- .spec.x"
        );
        assert_eq!(
            report.causes[0].message,
            r#"conflict with "bob" with subresource "status""#
        );

        // Identifiers that are not kube's JSON are printed quoted.
        let plain = Conflicts(vec![conflict("alice", &["data", "k"])]);
        let report = conflict_report(&plain, parse_manager_identifier);
        assert_eq!(
            report.message,
            r#"Apply failed with 1 conflict: conflict with "alice": .data.k"#
        );
        assert_eq!(plain.to_string(), r#"conflict with "alice": .data.k"#);
    }

    #[test]
    fn prints_managers_as_kube() {
        let timed = r#"{"manager":"kubectl-edit","operation":"Update","apiVersion":"apps/v1","time":"2026-01-02T04:04:05+01:00"}"#;
        let info = parse_manager_identifier(timed).unwrap();
        assert_eq!(
            info.to_string(),
            r#""kubectl-edit" using apps/v1 at 2026-01-02T03:04:05Z"#
        );
        assert_eq!(parse_manager_identifier(r#"{"manager":1}"#), None);
        assert_eq!(parse_manager_identifier(r#"{"time":"yesterday"}"#), None);
        assert_eq!(
            parse_manager_identifier("null").unwrap().to_string(),
            r#""""#
        );
        let applier = parse_manager_identifier(r#"{"manager":"a\"b","operation":"Apply","x":1}"#);
        assert_eq!(applier.unwrap().to_string(), r#""a\"b""#);
    }

    #[test]
    fn smd_wording() {
        let c = Conflicts(vec![
            conflict("b", &["x"]),
            conflict("a", &["y"]),
            conflict("a", &["z"]),
        ]);
        assert_eq!(
            c.to_string(),
            "conflicts with \"a\":\n- .y\n- .z\nconflicts with \"b\":\n- .x"
        );
    }
}
