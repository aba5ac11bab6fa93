//! [`Store`]'s field management: the `metadata.managedFields` every write records
//! ([`Store::record_update`], run by create and update), and server-side apply
//! ([`Store::apply`]), both by `kapi_core::fieldmanager` with the resource's schema.

use kapi_core::fieldmanager::{FieldManager, FieldManagerError, Target};
use kapi_core::managedfields::CAUSE_TYPE;
use serde_json::{Map, Value, json};

use crate::registry::object::{self, set_meta};
use crate::registry::options::WriteOptions;
use crate::status::ApiError;

use super::{Store, Subresource, Written};

impl Subresource {
    /// The subresource's name (`""` for the object itself), as admission and
    /// `managedFields` name it.
    pub fn name(&self) -> &str {
        match self {
            Subresource::Main => "",
            Subresource::Status => "status",
            Subresource::Scale => "scale",
            Subresource::Extra(name) => name.as_ref(),
        }
    }
}

impl Store {
    /// The field manager of writes through `subresource` (`""`: the object itself).
    fn field_manager<'s>(&'s self, subresource: &'s str) -> FieldManager<'s> {
        let info = self.info();
        let target = match subresource {
            "" => Target::Main {
                has_status: info.subresources.status,
            },
            name => Target::Subresource(name),
        };
        FieldManager::new(
            self.strategy.schema(),
            info.api_version(),
            &info.kind,
            target,
        )
    }

    /// Records in `new`'s `managedFields` what `opts`' manager changed from `live`
    /// (`{}` on create) through `subresource`; an apply has recorded its own.
    pub(super) fn record_update(
        &self,
        live: &Value,
        new: &mut Value,
        subresource: &str,
        opts: &WriteOptions,
    ) {
        if !opts.applied {
            self.field_manager(subresource)
                .update(live, new, &opts.field_manager, &object::now());
        }
    }

    /// Server-side apply of `config` to object `name` through `sub` by `opts`' field
    /// manager: merged into the stored object by the schema, with the fields this
    /// manager applied before and no longer applies removed and other managers' fields
    /// a 409 unless `opts.force`; then written as any update is (admission, the
    /// strategy, validation). A missing object is created from the configuration
    /// (not through a subresource: that is a 404). Returns the object and whether it
    /// was created.
    pub async fn apply(
        &self,
        namespace: Option<&str>,
        name: &str,
        config: Value,
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<(Written, bool), ApiError> {
        // Unknown fields are refused or dropped (with a warning) before the merge, as
        // kube decodes an apply patch.
        let mut warnings = self.unknown_fields(&config, opts.field_validation)?;
        let mut config = config;
        self.strategy.schema().prune(&mut config);
        object::prune_metadata(&mut config);
        let opts = WriteOptions {
            applied: true,
            ..opts.clone()
        };
        let subresource = sub.name().to_string();
        let manager = opts.field_manager.clone();
        let force = opts.force;
        let result = self
            .update_with(namespace, name, sub.clone(), &opts, |current| {
                self.field_manager(&subresource)
                    .apply(current, &config, &manager, force, &object::now())
                    .map_err(|e| apply_error(self, name, e))
            })
            .await;
        match result {
            Err(e) if e.reason == "NotFound" && sub == Subresource::Main => {
                let mut obj = self
                    .field_manager("")
                    .apply(&json!({}), &config, &manager, force, &object::now())
                    .map_err(|e| apply_error(self, name, e))?;
                set_meta(&mut obj, "name", Some(Value::from(name)));
                let (obj, more) = self.create(namespace, obj, &opts).await?;
                warnings.extend(more);
                Ok(((obj, warnings), true))
            }
            Err(e) => Err(e),
            Ok((obj, more)) => {
                warnings.extend(more);
                Ok(((obj, warnings), false))
            }
        }
    }
}

/// A refused apply in kube's words: conflicts are its 409 with one
/// `FieldManagerConflict` cause per field, a bad configuration a 400.
fn apply_error(store: &Store, name: &str, e: FieldManagerError) -> ApiError {
    match e {
        FieldManagerError::Conflicts(report) => {
            let causes: Vec<Value> = report
                .causes
                .iter()
                // A cause's type is `reason` on the wire (Go's `json:"reason"` tag).
                .map(|c| json!({"reason": CAUSE_TYPE, "message": c.message, "field": c.field}))
                .collect();
            let mut details = Map::new();
            details.insert("causes".into(), Value::Array(causes));
            ApiError {
                code: http::StatusCode::CONFLICT,
                reason: "Conflict",
                message: report.message,
                details: Some(Value::Object(details)),
                continue_token: None,
            }
        }
        FieldManagerError::BadRequest(why) => ApiError::bad_request(why),
        FieldManagerError::Internal(why) => ApiError::internal(
            "applying the configuration",
            &std::io::Error::other(format!("{} {name}: {why}", store.info().kind)),
        ),
    }
}
