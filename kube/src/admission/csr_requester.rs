//! A new CertificateSigningRequest's requester: kube's CSR strategy
//! (`PrepareForCreate` in `pkg/registry/certificates/certificates/strategy.go`) drops
//! whatever `spec.username`, `uid`, `groups` and `extra` the body says and writes the
//! requesting user's, so a signer can trust them. kapi's strategies do not see the user,
//! so this runs at the end of mutating admission, where kube's strategy runs too:
//! after the mutating webhooks, which cannot change it, and before validation.

use kapi_auth::UserInfo;
use serde_json::{Value, json};

use kapi_apiserver::registry::{AdmissionRequest, Operation};

/// Whether `request` creates a CertificateSigningRequest.
pub fn handles(request: &AdmissionRequest<'_>) -> bool {
    request.operation == Operation::Create
        && request.subresource.is_empty()
        && request.info.group == "certificates.k8s.io"
        && request.info.plural == "certificatesigningrequests"
}

/// Writes `user` as `csr`'s requester (fields it does not have stay absent).
pub fn admit(user: &UserInfo, csr: &mut Value) {
    let Some(spec) = csr.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for field in ["username", "uid", "groups", "extra"] {
        spec.remove(field);
    }
    if !user.name.is_empty() {
        spec.insert("username".into(), json!(user.name));
    }
    if !user.uid.is_empty() {
        spec.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        spec.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".into(), json!(user.extra));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requester_is_who_asks() {
        let mut csr = json!({"spec": {"request": "x", "username": "someone-else",
            "groups": ["system:masters"], "uid": "forged"}});
        let mut user = UserInfo::new("jane", &["dev", "system:authenticated"]);
        user.extra.insert("scopes".into(), vec!["a".to_string()]);
        admit(&user, &mut csr);
        assert_eq!(
            csr["spec"],
            json!({"request": "x", "username": "jane",
                "groups": ["dev", "system:authenticated"], "extra": {"scopes": ["a"]}})
        );
    }
}
