//! [`Store`]'s `DELETE`: preconditions, finalizers and the propagation policy's
//! finalizer, graceful marking or removal.

use kapi_core::ResourceInfo;
use kapi_storage::{Update, UpdateAttempts, UpdateError, Updated};
use serde_json::{Value, json};

use crate::registry::object::{
    self, finalizers, is_being_deleted, meta_str, set_finalizers, set_meta,
};
use crate::registry::options::{AdmissionRequest, DeleteOptions, Operation, Propagation};
use crate::status::ApiError;

use super::{Deletion, FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Store};

impl Store {
    /// `DELETE .../{name}`: checks preconditions, then deletes the object, or, when it
    /// has finalizers (or the propagation policy adds one), marks it with a
    /// `deletionTimestamp` and keeps it until they are gone.
    pub async fn delete(
        &self,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Deletion, ApiError> {
        let info = self.info().clone();
        let key = self.key(namespace, name);
        let mut dry_result = None;
        let request = AdmissionRequest {
            operation: Operation::Delete,
            info: &info,
            subresource: "",
            namespace,
            name,
            dry_run: opts.dry_run,
        };
        let outcome = async {
            let mut attempts = UpdateAttempts::begin(self.storage.as_ref(), &key, self.ttl).await?;
            loop {
                let decision = async {
                    let kv = attempts.current();
                    let mut obj = self.decode_served(&kv.value, kv.mod_revision).await?;
                    check_preconditions(&info, name, &obj, opts)?;
                    if let Some(why) = self.strategy.forbid_delete(&obj) {
                        return Err(ApiError::forbidden(&info, name, &why));
                    }
                    if let Some(admission) = &opts.admission {
                        admission.validate(&request, None, Some(&obj)).await?;
                    }
                    let mut fins = finalizers(&obj);
                    let wanted = match opts.propagation {
                        Some(Propagation::Orphan) => Some(ORPHAN_FINALIZER),
                        Some(Propagation::Foreground) => Some(FOREGROUND_FINALIZER),
                        _ => None,
                    };
                    if let Some(f) = wanted {
                        if !fins.iter().any(|x| x == f) {
                            fins.push(f.to_string());
                        }
                    }
                    let keep = !fins.is_empty() || self.strategy.finalizing(&obj);
                    if opts.dry_run {
                        dry_result = Some(if !keep {
                            Deletion::Deleted(obj)
                        } else {
                            Deletion::Pending(obj)
                        });
                        return Ok(Update::Keep);
                    }
                    if !keep {
                        return Ok(Update::Delete);
                    }
                    let before = obj.clone();
                    set_finalizers(&mut obj, &fins);
                    if !is_being_deleted(&obj) {
                        self.strategy.prepare_for_delete(&mut obj);
                        set_meta(&mut obj, "deletionTimestamp", Some(json!(object::now())));
                        set_meta(&mut obj, "deletionGracePeriodSeconds", Some(json!(0)));
                    }
                    if obj == before {
                        Ok(Update::Keep)
                    } else {
                        Ok(Update::Write(self.encode_for_storage(&obj).await?))
                    }
                }
                .await;
                if let Some(done) = attempts.settle(decision).await? {
                    return Ok(done);
                }
            }
        }
        .await;
        match outcome {
            Err(UpdateError::Rejected(e)) => Err(e),
            Err(UpdateError::Storage(e)) => Err(self.storage_error(name, &e)),
            Ok(_) if dry_result.is_some() => Ok(dry_result.take().expect("checked")),
            Ok(Updated::Written(kv) | Updated::Kept(kv)) => Ok(Deletion::Pending(
                self.decode_served(&kv.value, kv.mod_revision).await?,
            )),
            Ok(Updated::Deleted(d)) => {
                let obj = self.decode_served(&d.prev.value, d.revision).await?;
                self.removed(&obj).await;
                Ok(Deletion::Deleted(obj))
            }
        }
    }
}

fn check_preconditions(
    info: &ResourceInfo,
    name: &str,
    obj: &Value,
    opts: &DeleteOptions,
) -> Result<(), ApiError> {
    if let Some(uid) = &opts.precondition_uid {
        let actual = meta_str(obj, "uid");
        if uid != actual {
            return Err(ApiError::conflict(
                info,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                ),
            ));
        }
    }
    if let Some(rv) = &opts.precondition_resource_version {
        let actual = meta_str(obj, "resourceVersion");
        if rv != actual {
            return Err(ApiError::conflict(
                info,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
                ),
            ));
        }
    }
    Ok(())
}
