//! A CRD's `Webhook` conversion (apiextensions-apiserver's `webhookConverter`): the
//! objects to convert are posted in one `ConversionReview` (`apiextensions.k8s.io/v1`
//! or `v1beta1`, the first of the CRD's `conversionReviewVersions` kapi speaks) to the
//! webhook's `clientConfig`, and the review's answer is read as kube reads it. What
//! the converted objects must be is checked by the store's generic conversion
//! ([`kapi_apiserver::registry::conversion`]).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use kapi_apiserver::registry::Converter;
use kapi_apiserver::webhook::{Endpoint, ServiceResolver};
use serde_json::{Value, json};

/// How long one conversion call may take. kube-apiserver bounds it only by the
/// request's own deadline; kapi gives it the longest admission webhook timeout.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The review versions kapi speaks, as kube.
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// The converter of one CRD with `conversion.strategy: Webhook`.
pub struct WebhookConverter {
    /// Where the webhook is called, or why it cannot be (every conversion fails so).
    endpoint: Result<Endpoint, String>,
    /// `v1` or `v1beta1`.
    review_version: Option<&'static str>,
    /// Where a `clientConfig.service` is served.
    services: Option<Arc<dyn ServiceResolver>>,
}

impl WebhookConverter {
    /// The converter `crd` asks for, if its strategy is `Webhook`; `services` resolves
    /// a `clientConfig.service`.
    pub fn for_crd(crd: &Value, services: Option<&Arc<dyn ServiceResolver>>) -> Option<Self> {
        Self::for_conversion(&crd["spec"]["conversion"], services)
    }

    /// [`WebhookConverter::for_crd`] from a CRD's `spec.conversion` as JSON text (what
    /// a compiled resource's `register` hands over).
    pub fn for_conversion_json(
        conversion: &str,
        services: Option<&Arc<dyn ServiceResolver>>,
    ) -> Option<Self> {
        Self::for_conversion(&serde_json::from_str(conversion).ok()?, services)
    }

    fn for_conversion(
        conversion: &Value,
        services: Option<&Arc<dyn ServiceResolver>>,
    ) -> Option<Self> {
        if conversion["strategy"] != "Webhook" {
            return None;
        }
        let webhook = &conversion["webhook"];
        let review_version = webhook["conversionReviewVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find_map(|v| REVIEW_VERSIONS.iter().copied().find(|k| *k == v));
        Some(Self {
            endpoint: Endpoint::from_client_config(&webhook["clientConfig"]),
            review_version,
            services: services.cloned(),
        })
    }
}

/// Go's `GroupVersionKind.String()` of an object.
fn gvk(obj: &Value) -> String {
    let text = |k: &str| obj[k].as_str().unwrap_or_default().to_string();
    format!("{}, Kind={}", text("apiVersion"), text("kind"))
}

#[async_trait]
impl Converter for WebhookConverter {
    async fn convert(&self, objects: Vec<Value>, api_version: &str) -> Result<Vec<Value>, String> {
        let from = objects.first().map(gvk).unwrap_or_default();
        let failed = |why: String| format!("conversion webhook for {from} failed: {why}");
        let version = self
            .review_version
            .ok_or_else(|| "no supported conversion review versions".to_string())?;
        let endpoint = self.endpoint.as_ref().map_err(|e| failed(e.clone()))?;
        let uid = uuid::Uuid::new_v4().to_string();
        let review = json!({
            "apiVersion": format!("apiextensions.k8s.io/{version}"),
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objects},
        });
        let body = serde_json::to_vec(&review).map_err(|e| failed(e.to_string()))?;
        let answer = endpoint
            .post(body, TIMEOUT, self.services.as_deref())
            .await
            .map_err(&failed)?;
        let answer: Value = serde_json::from_slice(&answer).map_err(|e| failed(e.to_string()))?;
        converted_objects(version, &uid, answer).map_err(failed)
    }
}

/// kube's `getConvertedObjectsFromResponse`: the answer's objects, or why it is not a
/// successful answer to review `uid` (v1beta1 answers are not checked for kind and
/// uid, as kube does not check them).
fn converted_objects(version: &str, uid: &str, mut answer: Value) -> Result<Vec<Value>, String> {
    if version == "v1" {
        let got = gvk(&answer);
        let want = "apiextensions.k8s.io/v1, Kind=ConversionReview";
        if got != want {
            return Err(format!("expected webhook response of {want}, got {got}"));
        }
    }
    let Some(response) = answer.get_mut("response").filter(|r| !r.is_null()) else {
        return Err("no response provided".into());
    };
    if version == "v1" {
        let got = response["uid"].as_str().unwrap_or_default();
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
    }
    let result = &response["result"];
    let status = result["status"].as_str().unwrap_or_default();
    if status != "Success" {
        return Err(match result["message"].as_str().filter(|m| !m.is_empty()) {
            Some(m) => m.to_string(),
            None => format!("response.result.status was '{status}', not 'Success'"),
        });
    }
    match response["convertedObjects"].take() {
        Value::Array(objects) => Ok(objects),
        Value::Null => Ok(Vec::new()),
        other => Err(format!(
            "json: cannot unmarshal {} into Go struct field ConversionResponse.response.convertedObjects of type []runtime.RawExtension",
            if other.is_object() { "object" } else { "value" }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(uid: &str, result: Value, objects: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": uid, "result": result, "convertedObjects": objects}})
    }

    #[test]
    fn answers_are_read_as_kube_reads_them() {
        let ok = answer("u", json!({"status": "Success"}), json!([{"a": 1}]));
        assert_eq!(
            converted_objects("v1", "u", ok.clone()).unwrap(),
            vec![json!({"a": 1})]
        );
        assert_eq!(
            converted_objects("v1", "other", ok.clone()).unwrap_err(),
            "expected response.uid=\"other\", got \"u\""
        );
        // v1beta1 answers are not checked for their uid or kind.
        assert!(converted_objects("v1beta1", "other", ok).is_ok());
        let failure = answer(
            "u",
            json!({"status": "Failure", "message": "no way"}),
            json!([]),
        );
        assert_eq!(converted_objects("v1", "u", failure).unwrap_err(), "no way");
        let silent = answer("u", json!({"status": "Failure"}), json!([]));
        assert_eq!(
            converted_objects("v1", "u", silent).unwrap_err(),
            "response.result.status was 'Failure', not 'Success'"
        );
        let wrong = json!({"apiVersion": "v1", "kind": "Status"});
        assert_eq!(
            converted_objects("v1", "u", wrong).unwrap_err(),
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Status"
        );
        let empty = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"});
        assert_eq!(
            converted_objects("v1", "u", empty).unwrap_err(),
            "no response provided"
        );
    }

    #[test]
    fn the_first_review_version_kapi_speaks_is_used() {
        let crd = |versions: Value| {
            json!({"spec": {"conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": versions,
                "clientConfig": {"url": "https://127.0.0.1:1/convert"}}}}})
        };
        let c = WebhookConverter::for_crd(&crd(json!(["v2", "v1beta1", "v1"])), None).unwrap();
        assert_eq!(c.review_version, Some("v1beta1"));
        let c = WebhookConverter::for_crd(&crd(json!(["v2"])), None).unwrap();
        assert_eq!(c.review_version, None);
        let none = json!({"spec": {"conversion": {"strategy": "None"}}});
        assert!(WebhookConverter::for_crd(&none, None).is_none());
    }
}
