//! Core v1 `bindings`: a `Binding` posted to a namespace's collection binds the pod it
//! names, as kube-apiserver's `BindingREST` serves both this and `pods/{name}/binding`
//! (schedulers older than `pods/binding` post here). The pod's own subresource does the
//! work: [`crate::hooks::core`]'s binding rules, retried on conflicts, with its errors.

use std::sync::Arc;

use async_trait::async_trait;
use kapi_auth::UserInfo;
use serde_json::{Value, json};

use kapi_apiserver::endpoints::{Api, CreateOnly, CreateOnlyPath};
use kapi_apiserver::registry::WriteOptions;
use kapi_apiserver::request::ResourcePath;
use kapi_apiserver::status::ApiError;

/// The `bindings` collection, to register with the server's [`Api`].
pub fn create_only() -> Arc<dyn CreateOnly> {
    Arc::new(Bindings)
}

struct Bindings;

#[async_trait]
impl CreateOnly for Bindings {
    fn path(&self) -> CreateOnlyPath {
        CreateOnlyPath {
            group: "",
            versions: &["v1"],
            plural: "bindings",
            subresource: None,
        }
    }

    fn body_kind<'a>(&self, _r: &'a ResourcePath) -> (&'a str, &'a str, &'static str) {
        ("", "v1", "Binding")
    }

    async fn create(
        &self,
        api: &Api,
        r: &ResourcePath,
        body: Value,
        _user: &UserInfo,
    ) -> Result<Value, ApiError> {
        let namespace = r.namespace.as_deref().unwrap_or_default();
        let name = kapi_apiserver::registry::object::meta_str(&body, "name");
        if name.is_empty() {
            // kube's object-meta validation of the posted Binding.
            return Err(ApiError {
                code: http::StatusCode::UNPROCESSABLE_ENTITY,
                reason: "Invalid",
                message: "Binding \"\" is invalid: metadata.name: Required value: name or \
                          generateName is required"
                    .into(),
                details: Some(json!({"kind": "Binding", "causes": [{
                    "reason": "FieldValueRequired",
                    "message": "Required value: name or generateName is required",
                    "field": "metadata.name"}]})),
                continue_token: None,
            });
        }
        let pods = api.registry.get("", "v1", "pods").ok_or_else(|| {
            ApiError::internal(
                "binding a pod",
                &std::io::Error::other("pods are not served"),
            )
        })?;
        pods.create_on_subresource(
            Some(namespace),
            name,
            "binding",
            &body,
            &WriteOptions::default(),
        )
        .await?;
        Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success", "code": 201}))
    }
}
