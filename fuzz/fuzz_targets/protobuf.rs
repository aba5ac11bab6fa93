//! Protobuf request bodies: arbitrary bytes read as the endpoints read a
//! `application/vnd.kubernetes.protobuf` body (the `k8s\0` envelope, then the kind's
//! message through the built-in catalog). Nothing may panic or nest without bound, and
//! what decodes must encode and decode again to the same JSON.
//!
//! Input: an enveloped body; when its kind is not catalogued, the bytes after the
//! envelope's magic are read as the message of a kind picked by the first byte.
#![no_main]

use kapi_core::protobuf::{decode, encode, envelope};
use kapi_kube::generated::protobuf::CATALOG;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (message, raw) = match envelope::unwrap(data) {
        Ok(env) => {
            let (group, version) = env.api_version.split_once('/').unwrap_or(("", env.api_version));
            match CATALOG.kind(group, version, env.kind) {
                Some(m) => (m, env.raw),
                None => return,
            }
        }
        Err(_) => {
            let Some((first, rest)) = data.split_first() else {
                return;
            };
            let kind = &CATALOG.kinds[usize::from(*first) % CATALOG.kinds.len()];
            (CATALOG.message(kind.message), rest)
        }
    };
    let Ok(decoded) = decode::decode(&CATALOG, message, raw) else {
        return;
    };
    let mut bytes = Vec::new();
    encode::encode(&CATALOG, message, &decoded.object, &mut bytes)
        .unwrap_or_else(|e| panic!("decoded JSON does not encode: {e}"));
    let again = decode::decode(&CATALOG, message, &bytes)
        .unwrap_or_else(|e| panic!("encoded bytes do not decode: {e}"));
    assert_eq!(again.object, decoded.object, "a second round trip changed the object");
    assert!(again.unknown.is_empty(), "encoding wrote fields the catalog lacks");
});
