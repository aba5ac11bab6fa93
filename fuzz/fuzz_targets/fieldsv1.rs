//! `metadata.managedFields[].fieldsV1`: arbitrary bytes read as JSON and decoded as a
//! field set, which must encode back to a document that decodes to the same set (and
//! to the same text again); and whole `managedFields` lists read as kube reads them.
#![no_main]

use kapi_core::fieldmanager::entries;
use kapi_core::managedfields::fieldsv1;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(set) = fieldsv1::decode(&doc) {
        let text = fieldsv1::encode(&set);
        let again = fieldsv1::decode_str(&text)
            .unwrap_or_else(|e| panic!("{text} does not decode: {e}"));
        assert_eq!(again, set, "{text}");
        assert_eq!(fieldsv1::encode(&again), text);
        assert_eq!(fieldsv1::decode(&fieldsv1::to_value(&set)).as_ref(), Ok(&set));
    }
    if let Ok(managed) = entries::decode(&doc) {
        let written = entries::encode(&managed).unwrap_or(serde_json::Value::Array(Vec::new()));
        let back = entries::decode(&written).expect("written entries read back");
        assert_eq!(back.fields, managed.fields);
    }
});
