//! Query parameters → the registry's options, with kube-apiserver's errors for bad
//! values.

use std::collections::HashMap;

use kapi_core::selector::{FieldSelector, LabelSelector};
use kapi_storage::ReadAt;
use serde_json::Value;

use crate::registry::{
    DeleteOptions, FieldValidation, ListOptions, Propagation, WatchOptions, WriteOptions,
};
use crate::status::ApiError;

/// The decoded query string; a repeated key keeps its first value.
#[derive(Debug, Default)]
pub struct Query(HashMap<String, String>);

impl Query {
    /// Parses `a=1&b=2`.
    pub fn parse(query: Option<&str>) -> Self {
        let mut map = HashMap::new();
        for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            map.entry(k.into_owned()).or_insert_with(|| v.into_owned());
        }
        Self(map)
    }

    /// One parameter.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A boolean parameter (`true`/`1` are true).
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1" | "True"))
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
        let limit = match self.get("limit") {
            None | Some("") => None,
            Some(l) => match l.parse::<i64>() {
                Ok(n) if n > 0 => Some(n as usize),
                Ok(_) => None,
                Err(_) => return Err(ApiError::bad_request(format!("invalid limit: {l}"))),
            },
        };
        let rv = self.resource_version()?;
        let read_at = match (self.get("resourceVersionMatch").unwrap_or(""), rv) {
            ("", None) => ReadAt::Latest,
            ("", Some(0)) => ReadAt::Any,
            // With a limit, a non-zero resourceVersion is an exact snapshot (legacy rule).
            ("", Some(n)) if limit.is_some() => ReadAt::Exact(n),
            ("", Some(n)) => ReadAt::NotOlderThan(n),
            ("NotOlderThan", Some(0)) => ReadAt::Any,
            ("NotOlderThan", Some(n)) => ReadAt::NotOlderThan(n),
            ("Exact", Some(n)) if n > 0 => ReadAt::Exact(n),
            (m @ ("NotOlderThan" | "Exact"), _) => {
                return Err(ApiError::bad_request(format!(
                    "resourceVersionMatch: Forbidden: resourceVersionMatch \"{m}\" is forbidden for resourceVersion \"{}\"",
                    rv.map(|v| v.to_string()).unwrap_or_default()
                )));
            }
            (m, _) => {
                return Err(ApiError::bad_request(format!(
                    "resourceVersionMatch: Unsupported value: \"{m}\": supported values: \"Exact\", \"NotOlderThan\""
                )));
            }
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
        let send_initial_events = self.flag("sendInitialEvents");
        if send_initial_events && self.get("resourceVersionMatch") != Some("NotOlderThan") {
            return Err(ApiError::bad_request(
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if send_initial_events && !self.flag("allowWatchBookmarks") {
            return Err(ApiError::bad_request(
                "allowWatchBookmarks: Forbidden: sendInitialEvents requires allowWatchBookmarks=true",
            ));
        }
        Ok(WatchOptions {
            label_selector,
            field_selector,
            resource_version: self.resource_version()?,
            send_initial_events,
            allow_bookmarks: self.flag("allowWatchBookmarks"),
        })
    }

    /// `timeoutSeconds`.
    pub fn timeout_seconds(&self) -> Option<u64> {
        self.get("timeoutSeconds").and_then(|t| t.parse().ok())
    }

    /// Options of create, update and patch.
    pub fn write_options(&self) -> Result<WriteOptions, ApiError> {
        Ok(WriteOptions {
            dry_run: self.dry_run()?,
            field_validation: match self.get("fieldValidation").unwrap_or("") {
                "" | "Warn" => FieldValidation::Warn,
                "Strict" => FieldValidation::Strict,
                "Ignore" => FieldValidation::Ignore,
                other => {
                    return Err(ApiError::bad_request(format!(
                        "fieldValidation: Unsupported value: \"{other}\": supported values: \"Ignore\", \"Strict\", \"Warn\""
                    )));
                }
            },
            admission: None,
        })
    }

    fn dry_run(&self) -> Result<bool, ApiError> {
        match self.get("dryRun") {
            None | Some("") => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(ApiError::bad_request(format!(
                "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
            ))),
        }
    }

    /// `DeleteOptions` from the query, then from the body (which wins), as
    /// kube-apiserver merges them.
    pub fn delete_options(&self, body: Option<&Value>) -> Result<DeleteOptions, ApiError> {
        let mut opts = DeleteOptions {
            dry_run: self.dry_run()?,
            grace_period_seconds: self.get("gracePeriodSeconds").and_then(|g| g.parse().ok()),
            propagation: match self.get("propagationPolicy") {
                Some(p) => Some(parse_propagation(p)?),
                None => None,
            },
            ..DeleteOptions::default()
        };
        if self.flag("orphanDependents") {
            opts.propagation = Some(Propagation::Orphan);
        }
        opts.orphan_dependents_false =
            matches!(self.get("orphanDependents"), Some("false" | "0" | "False"));
        if let Some(body) = body.filter(|b| b.is_object()) {
            if let Some(p) = body.get("propagationPolicy").and_then(Value::as_str) {
                opts.propagation = Some(parse_propagation(p)?);
            }
            match body.get("orphanDependents").and_then(Value::as_bool) {
                Some(true) => opts.propagation = Some(Propagation::Orphan),
                Some(false) => {
                    opts.orphan_dependents_false = true;
                    if opts.propagation.is_none() {
                        opts.propagation = Some(Propagation::Background);
                    }
                }
                _ => {}
            }
            if let Some(g) = body.get("gracePeriodSeconds").and_then(Value::as_i64) {
                opts.grace_period_seconds = Some(g);
            }
            if let Some(pre) = body.get("preconditions") {
                opts.precondition_uid = pre.get("uid").and_then(Value::as_str).map(str::to_string);
                opts.precondition_resource_version = pre
                    .get("resourceVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            if let Some(d) = body.get("dryRun").and_then(Value::as_array) {
                opts.dry_run = d.iter().any(|v| v == "All");
            }
        }
        Ok(opts)
    }
}

fn parse_propagation(p: &str) -> Result<Propagation, ApiError> {
    match p {
        "Background" => Ok(Propagation::Background),
        "Foreground" => Ok(Propagation::Foreground),
        "Orphan" => Ok(Propagation::Orphan),
        other => Err(ApiError::bad_request(format!(
            "propagationPolicy: Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
        ))),
    }
}
