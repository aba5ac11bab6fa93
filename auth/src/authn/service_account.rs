//! ServiceAccount tokens: JWTs signed by a key of the server's, as kube-apiserver's
//! bound tokens (TokenRequest) are, with the same claims.
//!
//! A token proves only what it says; the server must still check that the
//! ServiceAccount it names exists with the same uid ([`ServiceAccountClaims::service_account`]),
//! so that deleting a ServiceAccount revokes its tokens.

use std::collections::BTreeMap;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::user::{UserInfo, service_account_groups, service_account_user};

/// The claims of a ServiceAccount token, as kube-apiserver writes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceAccountClaims {
    /// The issuer (`--service-account-issuer`).
    pub iss: String,
    /// `system:serviceaccount:{namespace}:{name}`.
    pub sub: String,
    /// The audiences the token is for.
    pub aud: Vec<String>,
    /// Expiry, seconds since the epoch.
    pub exp: i64,
    /// Issued at.
    pub iat: i64,
    /// Not before.
    pub nbf: i64,
    /// The token's unique id.
    pub jti: String,
    /// What the token is bound to.
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: KubernetesClaims,
}

/// The `kubernetes.io` claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubernetesClaims {
    /// The ServiceAccount's namespace.
    pub namespace: String,
    /// The ServiceAccount.
    pub serviceaccount: ObjectClaim,
    /// The Pod the token is bound to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<ObjectClaim>,
    /// The Secret the token is bound to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ObjectClaim>,
}

/// A name and uid in the `kubernetes.io` claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectClaim {
    /// The object's name.
    pub name: String,
    /// The object's uid.
    pub uid: String,
}

impl ServiceAccountClaims {
    /// The namespace, name and uid of the ServiceAccount the token names.
    pub fn service_account(&self) -> (&str, &str, &str) {
        (
            &self.kubernetes.namespace,
            &self.kubernetes.serviceaccount.name,
            &self.kubernetes.serviceaccount.uid,
        )
    }

    /// The user the token authenticates, as kube-apiserver builds it.
    pub fn user(&self) -> UserInfo {
        let (ns, name, uid) = self.service_account();
        let mut extra = BTreeMap::new();
        extra.insert(
            "authentication.kubernetes.io/credential-id".to_string(),
            vec![format!("JTI={}", self.jti)],
        );
        if let Some(pod) = &self.kubernetes.pod {
            extra.insert(
                "authentication.kubernetes.io/pod-name".to_string(),
                vec![pod.name.clone()],
            );
            extra.insert(
                "authentication.kubernetes.io/pod-uid".to_string(),
                vec![pod.uid.clone()],
            );
        }
        UserInfo {
            name: service_account_user(ns, name),
            uid: uid.to_string(),
            groups: service_account_groups(ns),
            extra,
        }
    }
}

/// Why a token is not a valid ServiceAccount token.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    /// Not a JWT of ours at all (another kind of token, or another signer).
    #[error("not a service account token of this server")]
    NotOurs,
    /// Ours, but expired.
    #[error("service account token has expired")]
    Expired,
    /// Ours, but for other audiences.
    #[error("token audiences {0:?} is invalid for the target audiences")]
    Audience(Vec<String>),
    /// Ours, but malformed.
    #[error("invalid service account token: {0}")]
    Invalid(String),
}

/// Issues and verifies ServiceAccount tokens.
pub struct ServiceAccountTokens {
    issuer: String,
    audiences: Vec<String>,
    signing: EncodingKey,
    key_id: String,
    verifying: Vec<DecodingKey>,
}

impl std::fmt::Debug for ServiceAccountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountTokens")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .finish_non_exhaustive()
    }
}

/// Tokens live at least this long (kube-apiserver's minimum `expirationSeconds`).
pub const MIN_EXPIRATION_SECONDS: i64 = 600;
/// A TokenRequest without `expirationSeconds` gets this.
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;

impl ServiceAccountTokens {
    /// Tokens signed (ES256) with the PKCS#8 PEM `private_key` and checked against
    /// `public_keys` (SPKI PEMs; the signing key's own public key among them), for
    /// `issuer`; `audiences` are the API's own (`--api-audiences`, the issuer when empty).
    pub fn new(
        issuer: &str,
        audiences: &[String],
        private_key_pem: &[u8],
        public_keys_pem: &[&[u8]],
    ) -> Result<Self, String> {
        let signing = EncodingKey::from_ec_pem(private_key_pem)
            .map_err(|e| format!("the service account signing key: {e}"))?;
        let verifying = public_keys_pem
            .iter()
            .map(|k| DecodingKey::from_ec_pem(k))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("a service account public key: {e}"))?;
        let key_id = key_id(public_keys_pem.first().copied().unwrap_or_default());
        Ok(Self {
            issuer: issuer.to_string(),
            audiences: if audiences.is_empty() {
                vec![issuer.to_string()]
            } else {
                audiences.to_vec()
            },
            signing,
            key_id,
            verifying,
        })
    }

    /// The API's audiences: a TokenRequest without audiences gets these.
    pub fn api_audiences(&self) -> &[String] {
        &self.audiences
    }

    /// Issues a token for a ServiceAccount, valid `expiration_seconds` from `now` (unix
    /// seconds).
    pub fn issue(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        audiences: &[String],
        expiration_seconds: i64,
        now: i64,
    ) -> Result<(String, ServiceAccountClaims), String> {
        let claims = ServiceAccountClaims {
            iss: self.issuer.clone(),
            sub: service_account_user(namespace, name),
            aud: if audiences.is_empty() {
                self.audiences.clone()
            } else {
                audiences.to_vec()
            },
            exp: now + expiration_seconds,
            iat: now,
            nbf: now,
            jti: uuid::Uuid::new_v4().to_string(),
            kubernetes: KubernetesClaims {
                namespace: namespace.to_string(),
                serviceaccount: ObjectClaim {
                    name: name.to_string(),
                    uid: uid.to_string(),
                },
                pod: None,
                secret: None,
            },
        };
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.key_id.clone());
        let token = jsonwebtoken::encode(&header, &claims, &self.signing)
            .map_err(|e| format!("signing the token: {e}"))?;
        Ok((token, claims))
    }

    /// Verifies a token for `audiences` (the API's own when empty) at `now` (unix
    /// seconds): signature, issuer, audience, expiry.
    pub fn verify(
        &self,
        token: &str,
        audiences: &[String],
        now: i64,
    ) -> Result<ServiceAccountClaims, TokenError> {
        // Cheap refusals first: most bearer tokens (a token file's) are not JWTs.
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::NotOurs)?;
        if header.alg != Algorithm::ES256 {
            return Err(TokenError::NotOurs);
        }
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_issuer(&[&self.issuer]);
        // Expiry and audience are checked below, against `now` and with kube's wording.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
        let mut last = TokenError::NotOurs;
        for key in &self.verifying {
            match jsonwebtoken::decode::<ServiceAccountClaims>(token, key, &validation) {
                Ok(data) => {
                    let claims = data.claims;
                    // kube-apiserver allows 60 s of clock skew on nbf and exp.
                    if claims.exp + 60 < now {
                        return Err(TokenError::Expired);
                    }
                    if claims.nbf > now + 60 {
                        return Err(TokenError::Invalid("token is not valid yet".into()));
                    }
                    let wanted = if audiences.is_empty() {
                        &self.audiences
                    } else {
                        audiences
                    };
                    if !claims.aud.iter().any(|a| wanted.contains(a)) {
                        return Err(TokenError::Audience(claims.aud));
                    }
                    return Ok(claims);
                }
                Err(e) => {
                    use jsonwebtoken::errors::ErrorKind;
                    last = match e.kind() {
                        ErrorKind::InvalidSignature | ErrorKind::InvalidIssuer => {
                            TokenError::NotOurs
                        }
                        _ => TokenError::Invalid(e.to_string()),
                    };
                }
            }
        }
        Err(last)
    }
}

/// A key id from the public key, as kube derives one (a hash of the key).
fn key_id(public_pem: &[u8]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    public_pem.hash(&mut h);
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(audiences: &[String]) -> ServiceAccountTokens {
        let key = rcgen::KeyPair::generate().unwrap();
        let public = key.public_key_pem();
        ServiceAccountTokens::new(
            "https://kapi.test",
            audiences,
            key.serialize_pem().as_bytes(),
            &[public.as_bytes()],
        )
        .unwrap()
    }

    #[test]
    fn issued_tokens_verify_until_they_expire() {
        let tokens = tokens(&[]);
        let (token, claims) = tokens
            .issue("ns", "robot", "uid-1", &[], 600, 1000)
            .unwrap();
        assert_eq!(claims.aud, ["https://kapi.test"]);
        assert_eq!(tokens.verify(&token, &[], 1000).unwrap(), claims);
        assert_eq!(tokens.verify(&token, &[], 1600 + 60).unwrap(), claims);
        assert_eq!(
            tokens.verify(&token, &[], 1600 + 61),
            Err(TokenError::Expired)
        );
    }

    #[test]
    fn audiences_must_intersect() {
        let tokens = tokens(&["api".to_string()]);
        let (token, _) = tokens
            .issue("ns", "robot", "u", &["vault".to_string()], 600, 0)
            .unwrap();
        assert_eq!(
            tokens.verify(&token, &[], 0),
            Err(TokenError::Audience(vec!["vault".into()]))
        );
        assert!(tokens.verify(&token, &["vault".to_string()], 0).is_ok());
        let (token, claims) = tokens.issue("ns", "robot", "u", &[], 600, 0).unwrap();
        assert_eq!(claims.aud, ["api"]);
        assert!(tokens.verify(&token, &[], 0).is_ok());
    }

    #[test]
    fn other_signers_and_other_tokens_are_not_ours() {
        let ours = tokens(&[]);
        let theirs = tokens(&[]);
        let (token, _) = theirs.issue("ns", "robot", "u", &[], 600, 0).unwrap();
        assert_eq!(ours.verify(&token, &[], 0), Err(TokenError::NotOurs));
        assert_eq!(
            ours.verify("a-static-token", &[], 0),
            Err(TokenError::NotOurs)
        );
        let mut tampered = ours.issue("ns", "robot", "u", &[], 600, 0).unwrap().0;
        tampered.pop();
        assert!(ours.verify(&tampered, &[], 0).is_err());
    }

    #[test]
    fn claims_make_kube_s_service_account_user() {
        let claims = ServiceAccountClaims {
            iss: "i".into(),
            sub: "system:serviceaccount:ns:robot".into(),
            aud: vec!["a".into()],
            exp: 10,
            iat: 0,
            nbf: 0,
            jti: "j".into(),
            kubernetes: KubernetesClaims {
                namespace: "ns".into(),
                serviceaccount: ObjectClaim {
                    name: "robot".into(),
                    uid: "u".into(),
                },
                pod: None,
                secret: None,
            },
        };
        let user = claims.user();
        assert_eq!(user.name, "system:serviceaccount:ns:robot");
        assert_eq!(user.uid, "u");
        assert_eq!(
            user.groups,
            ["system:serviceaccounts", "system:serviceaccounts:ns"]
        );
        assert_eq!(user.service_account(), Some(("ns", "robot")));
        let json = serde_json::to_value(&claims).unwrap();
        assert_eq!(json["kubernetes.io"]["serviceaccount"]["name"], "robot");
    }
}
