//! Scenario tests of the updater: sequences of applies and updates by several
//! managers, checking the object and every manager's set afterwards. The scenarios
//! restate SMD's `merge/*_test.go` (leaf, set, nested, multiple appliers, deduced,
//! ignore, schema change, default keys) in kapi's terms, plus kube-like flows.

use serde_json::Value;

use crate::managedfields::{ApplyError, Managers, Updater, fieldsv1};
use crate::schema::Schema;

mod flows;
mod lists;
mod structs;

/// One step of a scenario.
pub(super) enum Op {
    /// A non-forced apply that must succeed.
    Apply(&'static str, Value),
    /// A forced apply.
    ForceApply(&'static str, Value),
    /// An update writing the object.
    Update(&'static str, Value),
    /// A non-forced apply that must fail with these conflicts (manager, path).
    Conflicts(&'static str, Value, &'static [(&'static str, &'static str)]),
}

struct State<'s> {
    updater: Updater<'s>,
    live: Value,
    managers: Managers,
}

impl State<'_> {
    fn run(&mut self, name: &str, op: Op) {
        match op {
            Op::Apply(m, config) => self.apply(name, m, &config, false),
            Op::ForceApply(m, config) => self.apply(name, m, &config, true),
            Op::Update(m, new) => {
                let managers = self
                    .updater
                    .update(&self.live, &new, &self.managers, m, "v1");
                self.managers = managers.unwrap_or_else(|e| panic!("{name}: update by {m}: {e}"));
                self.live = new;
            }
            Op::Conflicts(m, config, want) => {
                let result =
                    self.updater
                        .apply(&self.live, &config, &self.managers, m, "v1", false);
                let Err(ApplyError::Conflicts(got)) = result else {
                    panic!("{name}: apply by {m}: want conflicts, got {result:?}");
                };
                let got: Vec<(String, String)> = got
                    .0
                    .iter()
                    .map(|c| (c.manager.clone(), c.path.to_string()))
                    .collect();
                let want: Vec<(String, String)> = want
                    .iter()
                    .map(|(m, p)| (m.to_string(), p.to_string()))
                    .collect();
                assert_eq!(got, want, "{name}: conflicts");
            }
        }
    }

    fn apply(&mut self, name: &str, m: &str, config: &Value, force: bool) {
        let result = self
            .updater
            .apply(&self.live, config, &self.managers, m, "v1", force);
        let (live, managers) = result.unwrap_or_else(|e| panic!("{name}: apply by {m}: {e}"));
        self.live = live;
        self.managers = managers;
    }
}

/// Runs `ops` from nothing (a null object, as SMD's fixture starts) and checks the
/// object and the managers (each manager's set as `fieldsV1`).
pub(super) fn scenario(
    name: &str,
    updater: Updater<'_>,
    ops: Vec<Op>,
    object: Value,
    managed: &[(&str, Value)],
) -> Managers {
    let mut state = State {
        updater,
        live: Value::Null,
        managers: Managers::new(),
    };
    for op in ops {
        state.run(name, op);
    }
    assert_eq!(state.live, object, "{name}: object");
    let got: Vec<(&str, String)> = state
        .managers
        .iter()
        .map(|(m, s)| (m.as_str(), fieldsv1::encode(&s.set)))
        .collect();
    let want: Vec<(&str, String)> = managed
        .iter()
        .map(|(m, doc)| {
            (
                *m,
                fieldsv1::encode(&fieldsv1::decode(doc).expect("test set")),
            )
        })
        .collect();
    assert_eq!(got, want, "{name}: managers");
    state.managers
}

pub(super) fn schema(doc: Value) -> Schema {
    Schema::parse(&doc).expect("test schema")
}
