//! Query parameters → the registry's options (list, watch, write, delete), with
//! kube-apiserver's errors for bad values. The [`Query`] itself is parsed once, with the
//! request's [`RequestInfo`](crate::request::RequestInfo).

use kapi_core::selector::{FieldSelector, LabelSelector};
use kapi_storage::ReadAt;
use serde_json::Value;

use crate::registry::{
    DeleteOptions, FieldValidation, ListOptions, Propagation, WatchOptions, WriteOptions,
};
use crate::request::query::Query;
use crate::status::ApiError;

impl Query {
    /// `ListOptions` as kube-apiserver validates them (422 Invalid, every error at
    /// once): `resourceVersionMatch` only with a `resourceVersion` and without
    /// `continue`, `sendInitialEvents` only on a watch with `NotOlderThan`.
    fn validate_list(&self, watch: bool) -> Result<(), ApiError> {
        let matching = self.get("resourceVersionMatch").unwrap_or("");
        let rv = self.get("resourceVersion").unwrap_or("");
        let continuing = !self.get("continue").unwrap_or("").is_empty();
        let initial_events = self.get("sendInitialEvents").is_some();
        let mut errs: Vec<(String, String)> = Vec::new();
        let mut err = |field: &str, message: String| errs.push((field.into(), message));
        let forbidden = |why: &str| format!("Forbidden: {why}");
        if watch {
            if initial_events && matching != "NotOlderThan" {
                err(
                    "resourceVersionMatch",
                    forbidden(
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    ),
                );
            }
            if !matching.is_empty() {
                if !initial_events {
                    err(
                        "resourceVersionMatch",
                        forbidden(
                            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                        ),
                    );
                }
                if matching != "NotOlderThan" {
                    err(
                        "resourceVersionMatch",
                        format!(
                            "Unsupported value: {matching:?}: supported values: \"NotOlderThan\""
                        ),
                    );
                }
                if continuing {
                    err(
                        "resourceVersionMatch",
                        forbidden("resourceVersionMatch is forbidden when continue is provided"),
                    );
                }
            }
        } else {
            if !matching.is_empty() {
                if rv.is_empty() {
                    err(
                        "resourceVersionMatch",
                        forbidden(
                            "resourceVersionMatch is forbidden unless resourceVersion is provided",
                        ),
                    );
                }
                if continuing {
                    err(
                        "resourceVersionMatch",
                        forbidden("resourceVersionMatch is forbidden when continue is provided"),
                    );
                }
                if !matches!(matching, "Exact" | "NotOlderThan") {
                    err(
                        "resourceVersionMatch",
                        format!(
                            "Unsupported value: {matching:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
                        ),
                    );
                }
                if matching == "Exact" && rv == "0" {
                    err(
                        "resourceVersionMatch",
                        forbidden(
                            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                        ),
                    );
                }
            }
            if initial_events {
                err(
                    "sendInitialEvents",
                    forbidden("sendInitialEvents is forbidden for list"),
                );
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid_options_all("ListOptions", &errs))
        }
    }

    fn selectors(&self) -> Result<(LabelSelector, FieldSelector), ApiError> {
        let label = match self.get("labelSelector") {
            Some(s) => LabelSelector::parse(s).map_err(|e| {
                ApiError::bad_request(format!("unable to parse requirement: {}", e.message()))
            })?,
            None => LabelSelector::everything(),
        };
        let field = match self.get("fieldSelector") {
            Some(s) => FieldSelector::parse(s).map_err(|e| {
                ApiError::bad_request(format!("invalid field selector: {}", e.message()))
            })?,
            None => FieldSelector::everything(),
        };
        Ok((label, field))
    }

    fn resource_version(&self) -> Result<Option<i64>, ApiError> {
        match self.get("resourceVersion") {
            None | Some("") => Ok(None),
            Some(rv) => rv
                .parse::<i64>()
                .ok()
                .filter(|v| *v >= 0)
                .map(Some)
                .ok_or_else(|| ApiError::bad_request(format!("invalid resource version: {rv}"))),
        }
    }

    /// The `fieldSelector` with `metadata.name=<name>` added, for requests that name
    /// one object in their path; 400 when the query selects another name.
    pub fn field_selector_with_name(&self, name: &str) -> Result<FieldSelector, ApiError> {
        let by_name = format!(
            "metadata.name={}",
            kapi_core::selector::field::escape_value(name)
        );
        let combined = match self.get("fieldSelector").filter(|s| !s.is_empty()) {
            Some(s) => {
                let existing = FieldSelector::parse(s).map_err(|e| {
                    ApiError::bad_request(format!("invalid field selector: {}", e.message()))
                })?;
                if existing
                    .requires_exact_match("metadata.name")
                    .is_some_and(|n| n != name)
                {
                    return Err(ApiError::bad_request(format!(
                        "fieldSelector metadata.name doesn't match requested name: {name}"
                    )));
                }
                format!("{s},{by_name}")
            }
            None => by_name,
        };
        FieldSelector::parse(&combined)
            .map_err(|e| ApiError::bad_request(format!("invalid field selector: {}", e.message())))
    }

    /// `ListOptions`: selectors, `limit`, `continue`, and `resourceVersion` with
    /// `resourceVersionMatch` as the API defines them.
    pub fn list_options(&self) -> Result<ListOptions, ApiError> {
        let (label_selector, field_selector) = self.selectors()?;
        // Every integer of ListOptions must parse (kube decodes them all), even the
        // ones a list does not use.
        self.int("timeoutSeconds")?;
        // Zero and negative limits mean no limit, as in kube-apiserver.
        let limit = self.int("limit")?.filter(|n| *n > 0).map(|n| n as usize);
        self.validate_list(false)?;
        let rv = self.resource_version()?;
        let read_at = match (self.get("resourceVersionMatch").unwrap_or(""), rv) {
            ("", None) => ReadAt::Latest,
            ("", Some(0)) => ReadAt::Any,
            // With a limit, a non-zero resourceVersion is an exact snapshot (legacy rule).
            ("", Some(n)) if limit.is_some() => ReadAt::Exact(n),
            ("", Some(n)) => ReadAt::NotOlderThan(n),
            ("NotOlderThan", Some(0)) => ReadAt::Any,
            ("NotOlderThan", Some(n)) => ReadAt::NotOlderThan(n),
            (_, Some(n)) => ReadAt::Exact(n),
            // validate_list refused a match without a resourceVersion.
            (_, None) => ReadAt::Latest,
        };
        Ok(ListOptions {
            label_selector,
            field_selector,
            limit,
            continue_token: self
                .get("continue")
                .filter(|c| !c.is_empty())
                .map(str::to_string),
            read_at,
        })
    }

    /// Watch options.
    pub fn watch_options(&self) -> Result<WatchOptions, ApiError> {
        let (label_selector, field_selector) = self.selectors()?;
        self.int("limit")?;
        self.timeout_seconds()?;
        self.validate_list(true)?;
        Ok(WatchOptions {
            label_selector,
            field_selector,
            resource_version: self.resource_version()?,
            send_initial_events: self.flag("sendInitialEvents"),
            allow_bookmarks: self.flag("allowWatchBookmarks"),
        })
    }

    /// `timeoutSeconds`; 400 when it is not an integer.
    pub fn timeout_seconds(&self) -> Result<Option<i64>, ApiError> {
        self.int("timeoutSeconds")
    }

    /// Options of create, update and patch; `kind` (`CreateOptions`, `UpdateOptions`,
    /// `PatchOptions`) names them in a 422, as kube-apiserver validates them.
    pub fn write_options(&self, kind: &str) -> Result<WriteOptions, ApiError> {
        self.checked_write_options(kind, Vec::new())
    }

    /// `PatchOptions`: an apply patch needs a `fieldManager`, and only an apply patch
    /// may say `force`.
    pub fn patch_options(&self, apply: bool) -> Result<WriteOptions, ApiError> {
        let mut errs = Vec::new();
        if apply && self.get("fieldManager").is_none_or(str::is_empty) {
            errs.push((
                "fieldManager".to_string(),
                "Required value: is required for apply patch".to_string(),
            ));
        }
        if !apply && self.get("force").is_some() {
            errs.push((
                "force".into(),
                "Forbidden: may not be specified for non-apply patch".into(),
            ));
        }
        self.checked_write_options("PatchOptions", errs)
    }

    fn checked_write_options(
        &self,
        kind: &str,
        mut errs: Vec<(String, String)>,
    ) -> Result<WriteOptions, ApiError> {
        errs.extend(self.dry_run_errors());
        let manager = self.get("fieldManager").unwrap_or("");
        // kube: at most 128 characters, every one printable.
        if manager.chars().count() > 128 {
            errs.push((
                "fieldManager".into(),
                "Too long: may not be more than 128 bytes".into(),
            ));
        }
        if let Some((i, c)) = manager.chars().enumerate().find(|(_, c)| c.is_control()) {
            errs.push((
                "fieldManager".into(),
                format!(
                    "Invalid value: {manager:?}: invalid character U+{:04X} (at position {i})",
                    c as u32
                ),
            ));
        }
        let field_validation = match self.get("fieldValidation").unwrap_or("") {
            "" | "Warn" => FieldValidation::Warn,
            "Strict" => FieldValidation::Strict,
            "Ignore" => FieldValidation::Ignore,
            other => {
                errs.push((
                    "fieldValidation".into(),
                    format!(
                        "Unsupported value: {other:?}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
                    ),
                ));
                FieldValidation::Warn
            }
        };
        if !errs.is_empty() {
            return Err(ApiError::invalid_options_all(kind, &errs));
        }
        Ok(WriteOptions {
            dry_run: self.get("dryRun").is_some_and(|d| d == "All"),
            field_validation,
            admission: None,
            field_manager: manager.to_string(),
            force: self.flag("force"),
            applied: false,
        })
    }

    /// `dryRun` takes only `All` (and nothing, or an empty value).
    fn dry_run_errors(&self) -> Vec<(String, String)> {
        match self.get("dryRun") {
            None | Some("" | "All") => Vec::new(),
            Some(other) => vec![(
                "dryRun".into(),
                format!("Unsupported value: [{other:?}]: supported values: \"All\""),
            )],
        }
    }

    /// `DeleteOptions` from the query, then from the body (which wins), as
    /// kube-apiserver merges them: a value of the wrong type is a 400, values it
    /// refuses a 422 (`DeleteOptions.meta.k8s.io "" is invalid`).
    pub fn delete_options(&self, body: Option<&Value>) -> Result<DeleteOptions, ApiError> {
        let mut errs = self.dry_run_errors();
        let mut opts = DeleteOptions {
            dry_run: self.get("dryRun").is_some_and(|d| d == "All"),
            grace_period_seconds: self.int("gracePeriodSeconds")?,
            ..DeleteOptions::default()
        };
        let mut policy = self.get("propagationPolicy").map(str::to_string);
        let mut orphan = self
            .get("orphanDependents")
            .map(|_| self.flag("orphanDependents"));
        if let Some(body) = body.filter(|b| b.is_object()) {
            let field = |name: &str| body.get(name).filter(|v| !v.is_null());
            let wrong_type = |name: &str, want: &str| {
                ApiError::bad_request(format!(
                    "unable to decode DeleteOptions: {name} must be {want}"
                ))
            };
            if let Some(p) = field("propagationPolicy") {
                policy = Some(
                    p.as_str()
                        .ok_or_else(|| wrong_type("propagationPolicy", "a string"))?
                        .to_string(),
                );
            }
            if let Some(o) = field("orphanDependents") {
                orphan = Some(
                    o.as_bool()
                        .ok_or_else(|| wrong_type("orphanDependents", "a boolean"))?,
                );
            }
            if let Some(g) = field("gracePeriodSeconds") {
                opts.grace_period_seconds = Some(
                    g.as_i64()
                        .ok_or_else(|| wrong_type("gracePeriodSeconds", "an integer"))?,
                );
            }
            if let Some(pre) = field("preconditions") {
                if !pre.is_object() {
                    return Err(wrong_type("preconditions", "an object"));
                }
                let text = |name: &str| match pre.get(name).filter(|v| !v.is_null()) {
                    None => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(_) => Err(wrong_type(&format!("preconditions.{name}"), "a string")),
                };
                opts.precondition_uid = text("uid")?;
                opts.precondition_resource_version = text("resourceVersion")?;
            }
            if let Some(d) = field("dryRun") {
                let values = d
                    .as_array()
                    .filter(|a| a.iter().all(Value::is_string))
                    .ok_or_else(|| wrong_type("dryRun", "a list of strings"))?;
                errs.retain(|(f, _)| f != "dryRun");
                if let Some(bad) = values.iter().find(|v| *v != "All") {
                    errs.push((
                        "dryRun".into(),
                        format!("Unsupported value: [{bad}]: supported values: \"All\""),
                    ));
                }
                opts.dry_run = !values.is_empty();
            }
        }
        if let (Some(_), Some(p)) = (orphan, &policy) {
            errs.push((
                "propagationPolicy".into(),
                format!("Invalid value: {p:?}: orphanDependents and deletionPropagation cannot be both set"),
            ));
        }
        opts.propagation = match policy.as_deref() {
            None => None,
            Some("Background") => Some(Propagation::Background),
            Some("Foreground") => Some(Propagation::Foreground),
            Some("Orphan") => Some(Propagation::Orphan),
            Some(other) => {
                errs.push((
                    "propagationPolicy".into(),
                    format!("Unsupported value: {other:?}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""),
                ));
                None
            }
        };
        match orphan {
            Some(true) => opts.propagation = Some(Propagation::Orphan),
            // The legacy `orphanDependents: false` is a background delete that answers
            // 202 when it has to wait.
            Some(false) => {
                opts.orphan_dependents_false = true;
                opts.propagation.get_or_insert(Propagation::Background);
            }
            None => {}
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid_options_all("DeleteOptions", &errs));
        }
        Ok(opts)
    }
}
