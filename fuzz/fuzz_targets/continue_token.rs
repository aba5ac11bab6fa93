//! The `continue` token of a paginated list: any string a client sends is decoded, and
//! a token that decodes is encoded again into one that decodes to the same revision
//! and key. Any revision and key the server encodes decodes back (a negative revision
//! as "the latest", `None`), or is refused for the reasons the decoder gives (revision
//! 0, an empty, absolute or `..` key).
//! The token also goes through the query string of a list.
#![no_main]

use kapi_apiserver::request::Query;
use kapi_apiserver::registry::list::{decode_continue, encode_continue};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(token) = std::str::from_utf8(data) {
        if let Ok((revision, start)) = decode_continue(token) {
            let again = encode_continue(revision.unwrap_or(-1), &start);
            assert_eq!(decode_continue(&again).ok(), Some((revision, start)));
        }
        let query = form_urlencoded::Serializer::new(String::new())
            .append_pair("limit", "5")
            .append_pair("continue", token)
            .finish();
        if let Ok(opts) = Query::parse(Some(&query)).list_options()
            && let Some(token) = opts.continue_token
        {
            let _ = decode_continue(&token);
        }
    }
    // The first 8 bytes as a revision, the rest as a start key.
    if data.len() >= 8 {
        let (rv, key) = data.split_at(8);
        let revision = i64::from_le_bytes(rv.try_into().expect("8 bytes"));
        let key = String::from_utf8_lossy(key);
        let token = encode_continue(revision, &key);
        match decode_continue(&token) {
            Ok(decoded) => assert_eq!(
                decoded,
                ((revision > 0).then_some(revision), key.to_string())
            ),
            Err(_) => assert!(
                revision == 0 || key.is_empty() || key.contains("..") || key.starts_with('/'),
                "({revision}, {key:?}) encodes to a token that does not decode"
            ),
        }
    }
});
