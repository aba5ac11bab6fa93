//! A CRD's `spec.conversion`, checked as kube's `validateCustomResourceConversion`
//! checks it, in kube's words. kube validates its internal type, so the messages name
//! the internal fields (`spec.conversion.webhookClientConfig.url`,
//! `spec.conversion.conversionReviewVersions`) whatever the v1 body calls them
//! (`spec.conversion.webhook.clientConfig.url`); kapi names them the same way.
//!
//! With `Webhook`: exactly one of `url` (kube's `ValidateWebhookURL`: https, a host, no
//! user information, fragment or query) and `service` (`ValidateWebhookService`: name,
//! namespace, a valid port, a path of DNS-1123 segments); a `caBundle` of PEM
//! certificates (unless the stored CRD, not yet established or with a bad bundle of
//! its own, is being updated); `conversionReviewVersions` required, unique, DNS-1035
//! labels, one of them `v1` or `v1beta1` (on update only if the stored CRD had one, or
//! none); and `spec.preserveUnknownFields` false. Without it: no client configuration
//! and no review versions.
//!
//! Deliberate differences: a bad `caBundle` is shown as the base64 the body holds, where
//! kube prints Go's `[]byte{...}`; a URL Go's parser refuses outright (a bad escape)
//! gets the scheme and host checks only, not kube's `url must be a valid URL`.

use base64::Engine;
use kapi_core::{ErrorList, FieldError, FieldPath};
use serde_json::Value;

use kapi_apiextensions::conditions;

use crate::hooks::webhook_client::{review_versions_errors, service_errors, url_errors};

/// The review versions kapi (as kube) can send.
pub(crate) const ACCEPTED_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// kube's checks of `crd`'s conversion (the CRD as JSON), `old` the stored CRD on update.
pub(super) fn conversion_errors(crd: &Value, old: Option<&Value>) -> ErrorList {
    let at = FieldPath::new("spec.conversion");
    let conversion = &crd["spec"]["conversion"];
    let mut errs = ErrorList::new();
    if !conversion.is_object() {
        return errs;
    }
    let client = conversion["webhook"]["clientConfig"]
        .as_object()
        .map(|_| &conversion["webhook"]["clientConfig"]);
    let versions: Vec<&str> = conversion["webhook"]["conversionReviewVersions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let config_path = at.child("webhookClientConfig");
    if conversion["strategy"] != "Webhook" {
        if client.is_some() {
            errs.push(FieldError::forbidden(
                &config_path,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !versions.is_empty() {
            errs.push(FieldError::forbidden(
                &at.child("conversionReviewVersions"),
                "should not be set when strategy is not set to Webhook",
            ));
        }
        return errs;
    }
    if crd["spec"]["preserveUnknownFields"] == true {
        errs.push(FieldError::invalid(
            &at.child("strategy"),
            "Webhook",
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    // A missing client configuration is the CRD parser's error (the same words).
    if let Some(client) = client {
        let url = client["url"].as_str();
        let service = client["service"].as_object().map(|_| &client["service"]);
        match (url, service) {
            (Some(url), None) => errs.extend(url_errors(&config_path.child("url"), url)),
            (None, Some(service)) => {
                errs.extend(service_errors(&config_path.child("service"), service));
            }
            _ => errs.push(FieldError::required(
                &config_path,
                "exactly one of url or service is required",
            )),
        }
        let bundle = client["caBundle"].as_str().unwrap_or_default();
        if !bundle.is_empty() && !old.is_some_and(allows_invalid_ca_bundle) {
            if let Some(why) = ca_bundle_error(bundle) {
                errs.push(FieldError::invalid(
                    &config_path.child("caBundle"),
                    bundle,
                    why,
                ));
            }
        }
    }
    let require_recognized = old.is_none_or(|o| {
        let stored: Vec<&str> = o["spec"]["conversion"]["webhook"]["conversionReviewVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        stored.is_empty() || stored.iter().any(|v| ACCEPTED_REVIEW_VERSIONS.contains(v))
    });
    // kube's `validateConversionReviewVersions`.
    errs.extend(review_versions_errors(
        &at.child("conversionReviewVersions"),
        &versions,
        require_recognized.then_some(&ACCEPTED_REVIEW_VERSIONS[..]),
        "",
    ));
    errs
}

/// Why a `caBundle` (base64 in JSON) holds no certificate, as client-go's
/// `ParseCertsPEM` says it.
fn ca_bundle_error(bundle: &str) -> Option<String> {
    let pem = base64::engine::general_purpose::STANDARD
        .decode(bundle)
        .ok()?;
    match kapi_apiserver::tls::roots_of(&pem) {
        Ok(roots) if !roots.is_empty() => None,
        _ => Some("data does not contain any valid RSA or ECDSA certificates".into()),
    }
}

/// kube's `allowInvalidCABundle`: the stored CRD is not established, or its own
/// bundle is bad.
fn allows_invalid_ca_bundle(old: &Value) -> bool {
    if !conditions::is_true(&old["status"], conditions::ESTABLISHED) {
        return true;
    }
    old["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"]
        .as_str()
        .filter(|b| !b.is_empty())
        .is_some_and(|b| ca_bundle_error(b).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(conversion: Value) -> Value {
        json!({"spec": {"conversion": conversion}})
    }

    fn messages(errs: &ErrorList) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn webhook_configuration_in_kubes_words() {
        let bad = crd(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "http://user@host/path?q=1#f"},
            "conversionReviewVersions": ["v2", "v2", "V3"]}}));
        assert_eq!(
            messages(&conversion_errors(&bad, None)),
            [
                "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"user\": user information is not permitted in the URL",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"f\": fragments are not permitted in the URL",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"q=1\": query parameters are not permitted in the URL",
                "spec.conversion.conversionReviewVersions[1]: Invalid value: \"v2\": duplicate version",
                "spec.conversion.conversionReviewVersions[2]: Invalid value: \"V3\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "spec.conversion.conversionReviewVersions: Invalid value: [\"v2\",\"v2\",\"V3\"]: must include at least one of v1, v1beta1",
            ]
        );
        let both = crd(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "https://h", "service": {"name": "s", "namespace": "n"}},
            "conversionReviewVersions": ["v1"]}}));
        assert_eq!(
            messages(&conversion_errors(&both, None)),
            [
                "spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"
            ]
        );
        let service = crd(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"name": "", "namespace": "n", "port": 0,
                "path": "/ok//Bad/"}, "caBundle": "bm90IGEgY2VydA=="},
            "conversionReviewVersions": ["v1beta1"]}}));
        assert_eq!(
            messages(&conversion_errors(&service, None)),
            [
                "spec.conversion.webhookClientConfig.service.name: Required value: service name is required",
                "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                "spec.conversion.webhookClientConfig.service.path: Invalid value: \"/ok//Bad/\": segment[1] may not be empty",
                "spec.conversion.webhookClientConfig.service.path: Invalid value: \"/ok//Bad/\": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.conversion.webhookClientConfig.caBundle: Invalid value: \"bm90IGEgY2VydA==\": data does not contain any valid RSA or ECDSA certificates",
            ]
        );
    }

    #[test]
    fn none_takes_no_webhook_and_old_review_versions_are_kept() {
        let none = crd(json!({"strategy": "None", "webhook": {
            "clientConfig": {"url": "https://h"}, "conversionReviewVersions": ["v1"]}}));
        assert_eq!(
            messages(&conversion_errors(&none, None)),
            [
                "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
                "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook",
            ]
        );
        // A stored CRD with only unknown review versions may keep them.
        let legacy = crd(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "https://h"}, "conversionReviewVersions": ["v0"]}}));
        assert!(conversion_errors(&legacy, Some(&legacy)).is_empty());
        assert_eq!(conversion_errors(&legacy, None).len(), 1);
        let ok = crd(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "https://conv.example.com:8443/convert"},
            "conversionReviewVersions": ["v1", "v1beta1"]}}));
        assert!(conversion_errors(&ok, None).is_empty());
    }
}
