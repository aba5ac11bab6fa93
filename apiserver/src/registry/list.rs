//! List: selectors, pagination with `limit` and `continue` over one consistent
//! snapshot, and the `resourceVersion` rules of the API.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use kapi_core::ResourceInfo;
use kapi_storage::{ListRequest, ReadAt};
use serde_json::{Value, json};

use super::Store;
use super::codec::{JsonList, SpliceHead, StoredObject};
use super::keys;
use super::list_body::EncodedItem;
use super::object;
use super::options::ListOptions;
use super::predicate::Predicate;
use crate::status::ApiError;

/// The `continue` token: the list's revision and the key to start from, relative to the
/// list's prefix; base64 JSON as kube-apiserver encodes it.
pub fn encode_continue(revision: i64, start: &str) -> String {
    BASE64.encode(json!({"v": "meta.k8s.io/v1", "rv": revision, "start": start}).to_string())
}

/// A decoded `continue` token: the revision to read at (`None`: the latest, for the
/// `rv: -1` continuation of an expired token) and the start key relative to the list's
/// prefix. Errors are kube-apiserver's 400 `invalid continue token: ...`. Public for
/// the fuzz target, since the token is untrusted input.
pub fn decode_continue(token: &str) -> Result<(Option<i64>, String), ApiError> {
    let invalid = |why: &str| {
        ApiError::bad_request(format!(
            "invalid continue token: continue key is not valid{why}"
        ))
    };
    let bytes = BASE64
        .decode(token)
        .map_err(|e| invalid(&format!(": {e}")))?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| invalid(&format!(": {e}")))?;
    if v["v"] != "meta.k8s.io/v1" {
        return Err(invalid(&format!(
            ": server does not recognize this encoded version {}",
            v["v"].as_str().unwrap_or_default()
        )));
    }
    let rv = v["rv"].as_i64().filter(|rv| *rv != 0).ok_or_else(|| {
        invalid(": incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    })?;
    let start = v["start"].as_str().unwrap_or("");
    if start.is_empty() {
        return Err(invalid(
            ": encoded start key empty (version meta.k8s.io/v1)",
        ));
    }
    if start.contains("..") || start.starts_with('/') {
        return Err(invalid(&format!(": {start}")));
    }
    // kube-apiserver: a negative revision continues at the latest one.
    Ok(((rv > 0).then_some(rv), start.to_string()))
}

/// kube-apiserver's 410 for a continue token whose revision was compacted: with a
/// token that goes on from the same key at the latest revision, so a client may finish
/// the list inconsistently instead of starting over.
fn continue_expired(start: &str) -> ApiError {
    ApiError::expired(
        "The provided continue parameter is too old to display a consistent list result. \
         You can start a new list without the continue parameter, or use the continue token \
         in this response to retrieve the remainder of the results. Continuing with the \
         provided token results in an inconsistent list - objects that were created, \
         modified, or deleted between the time the first chunk was returned and now may show \
         up in the list.",
    )
    .with_continue(encode_continue(-1, start))
}

/// One object of an [`ObjectList`]: as stored, and parsed if the selectors needed it.
#[derive(Clone, Debug)]
pub struct ListItem {
    /// The stored object.
    pub stored: StoredObject,
    /// The object, if it was parsed already.
    pub decoded: Option<Value>,
}

/// A page of a collection, not yet encoded: JSON responses are assembled from the
/// stored bytes ([`ObjectList::to_json`]); everything else parses them
/// ([`ObjectList::into_value`]).
#[derive(Clone, Debug)]
pub struct ObjectList {
    /// The objects, in key order.
    pub items: Vec<ListItem>,
    /// The list's `metadata`: `resourceVersion`, and `continue` and
    /// `remainingItemCount` for a page that is not the last.
    pub metadata: Value,
}

impl ObjectList {
    /// The `{Kind}List` document.
    pub fn into_value(self, info: &ResourceInfo) -> Result<Value, ApiError> {
        let items = self
            .items
            .into_iter()
            .map(|item| match item.decoded {
                Some(obj) => Ok(obj),
                None => item.stored.decode(info),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(json!({
            "apiVersion": info.api_version(),
            "kind": info.list_kind,
            "metadata": self.metadata,
            "items": items,
        }))
    }

    /// The `{Kind}List` document in JSON, the same as [`ObjectList::into_value`]
    /// serialized, made without parsing the objects.
    pub fn to_json(&self, info: &ResourceInfo) -> Result<Bytes, ApiError> {
        self.json_document(info, "")
    }

    /// About how long the list's JSON is, a little over rather than under: its objects
    /// as stored, and room for what is written into each (`apiVersion`, `kind`,
    /// `resourceVersion`) and around the items.
    pub fn json_len_estimate(&self) -> usize {
        let objects: usize = self.items.iter().map(|i| i.stored.value.len() + 128).sum();
        objects + 512
    }

    /// [`ObjectList::to_json`] followed by `end`, written in one pass into one buffer:
    /// the cheapest form of a list sent in one piece.
    pub fn json_document(&self, info: &ResourceInfo, end: &str) -> Result<Bytes, ApiError> {
        let api_version = info.api_version();
        let (head, tail) = self.json_frame(info, &api_version, end)?;
        let splice = SpliceHead::new(&api_version, &info.kind);
        let mut out = Vec::with_capacity(self.json_len_estimate() + tail.len());
        out.extend_from_slice(head.as_bytes());
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.stored
                .json_piece(info, &api_version)?
                .write(&splice, &mut out);
        }
        out.extend_from_slice(tail.as_bytes());
        Ok(Bytes::from(out))
    }

    /// [`ObjectList::to_json`] ending in a newline (as kube-apiserver's encoder ends a
    /// document), as a response body written a chunk at a time: every item resolved
    /// first, so that the length is known and a failure comes before the answer.
    pub fn json_body(&self, info: &ResourceInfo) -> Result<JsonList, ApiError> {
        let api_version = info.api_version();
        // Sized up front: collecting `Result`s grows a vector one doubling at a time.
        let mut items = Vec::with_capacity(self.items.len());
        for item in &self.items {
            items.push(item.stored.json_piece(info, &api_version)?);
        }
        let (head, tail) = self.json_frame(info, &api_version, "\n")?;
        let splice = SpliceHead::new(&api_version, &info.kind);
        Ok(JsonList::new(head.into(), splice, items, tail.into()))
    }

    /// What comes before the list's items and after them, `end` last.
    fn json_frame(
        &self,
        info: &ResourceInfo,
        api_version: &str,
        end: &str,
    ) -> Result<(String, String), ApiError> {
        let encoded = |v: &Value| {
            serde_json::to_string(v).map_err(|e| ApiError::internal("encoding a list", &e))
        };
        // Keys in the order serde_json writes a Value's: sorted.
        let head = format!(
            "{{\"apiVersion\":{},\"items\":[",
            encoded(&Value::from(api_version))?
        );
        let tail = format!(
            "],\"kind\":{},\"metadata\":{}}}{end}",
            encoded(&Value::from(&*info.list_kind))?,
            encoded(&self.metadata)?
        );
        Ok((head, tail))
    }
}

impl Store {
    /// `GET` of a collection: the `{Kind}List` of the objects in `namespace` (or all)
    /// that pass the selectors, paginated.
    pub async fn list(
        &self,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> Result<Value, ApiError> {
        self.list_objects(namespace, opts)
            .await?
            .into_value(self.info())
    }

    /// [`Store::list`], before the objects are parsed or encoded.
    pub async fn list_objects(
        &self,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> Result<ObjectList, ApiError> {
        let info = self.info();
        let predicate = Predicate::new(
            info,
            opts.label_selector.clone(),
            opts.field_selector.clone(),
        )?;
        let prefix = keys::list_prefix(self.prefix(), namespace);
        let (mut read_at, mut start_key) = (opts.read_at, None);
        let mut continued_from = None;
        if let Some(token) = &opts.continue_token {
            if opts.read_at != ReadAt::Latest {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            let (rv, start) = decode_continue(token)?;
            read_at = rv.map_or(ReadAt::Latest, ReadAt::Exact);
            start_key = Some(format!("{prefix}{start}"));
            continued_from = Some(start);
        }
        let mut items = Vec::new();
        let mut revision = None;
        let mut next = None;
        let mut remaining;
        loop {
            let want = opts.limit.map(|l| l.saturating_sub(items.len()).max(1));
            let request = ListRequest {
                prefix: prefix.clone(),
                read_at,
                start_key: start_key.clone(),
                limit: want,
            };
            let page =
                self.storage()
                    .list(&request)
                    .await
                    .map_err(|e| match (&continued_from, e) {
                        (Some(start), kapi_storage::StorageError::Expired { .. }) => {
                            continue_expired(start)
                        }
                        (_, e) => ApiError::from_storage(info, "", &e),
                    })?;
            revision.get_or_insert(page.revision);
            let last_key = page.items.last().map(|kv| kv.key.clone());
            items.reserve(page.items.len());
            // One conversion per storage page, before the selectors look at fields.
            let page_items = page.items.into_iter().map(StoredObject::from).collect();
            for stored in self.served(page_items).await? {
                if predicate.is_everything() {
                    items.push(ListItem {
                        stored,
                        decoded: None,
                    });
                    continue;
                }
                let obj = stored.decode(info)?;
                if predicate.matches(&obj) {
                    items.push(ListItem {
                        stored,
                        decoded: Some(obj),
                    });
                }
            }
            remaining = page.remaining;
            match (opts.limit, last_key) {
                (Some(limit), Some(last)) if page.remaining > 0 => {
                    // Every page after the first reads the same snapshot.
                    read_at = ReadAt::Exact(page.revision);
                    start_key = Some(format!("{last}\u{0}"));
                    if items.len() >= limit {
                        next = Some(start_key.clone().unwrap_or_default());
                        break;
                    }
                }
                _ => break,
            }
        }
        let revision = revision.unwrap_or(0);
        let mut metadata = json!({ "resourceVersion": revision.to_string() });
        if let Some(next) = next {
            let relative = next.strip_prefix(&prefix).unwrap_or(&next);
            metadata["continue"] = json!(encode_continue(revision, relative));
            if predicate.is_everything() {
                metadata["remainingItemCount"] = json!(remaining);
            }
        }
        Ok(ObjectList { items, metadata })
    }

    /// The objects a collection delete removes: every object that passes the selectors.
    pub async fn list_all(
        &self,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        let mut opts = opts.clone();
        opts.limit = None;
        opts.continue_token = None;
        let list = self.list(namespace, &opts).await?;
        Ok(list["items"].as_array().cloned().unwrap_or_default())
    }

    /// `DELETE` of a collection: deletes every object that passes the selectors, and
    /// answers with the list of what was deleted (or is now waiting for finalizers).
    pub async fn delete_collection(
        &self,
        namespace: Option<&str>,
        list_opts: &ListOptions,
        delete_opts: &super::DeleteOptions,
    ) -> Result<Value, ApiError> {
        let mut deleted = Vec::new();
        let mut revision = String::new();
        for obj in self.list_all(namespace, list_opts).await? {
            let ns = object::namespace(&obj).to_string();
            let ns = (!ns.is_empty()).then_some(ns);
            match self
                .delete(ns.as_deref(), object::name(&obj), delete_opts)
                .await
            {
                Ok(super::Deletion::Deleted(o) | super::Deletion::Pending(o)) => {
                    revision = object::meta_str(&o, "resourceVersion").to_string();
                    deleted.push(o);
                }
                // Deleted by someone else meanwhile: the goal is reached.
                Err(e) if e.code == http::StatusCode::NOT_FOUND => {}
                Err(e) => return Err(e),
            }
        }
        Ok(json!({
            "apiVersion": self.info().api_version(),
            "kind": self.info().list_kind,
            "metadata": { "resourceVersion": revision },
            "items": deleted,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let t = encode_continue(42, "default/w1\u{0}");
        assert_eq!(
            decode_continue(&t).unwrap(),
            (Some(42), "default/w1\u{0}".to_string())
        );
        // The continuation of an expired token reads the latest revision.
        assert_eq!(
            decode_continue(&encode_continue(-1, "default/w1\u{0}")).unwrap(),
            (None, "default/w1\u{0}".to_string())
        );
        let garbage = decode_continue("!!").unwrap_err();
        assert_eq!(garbage.code, 400);
        assert!(
            garbage
                .message
                .starts_with("invalid continue token: continue key is not valid: "),
            "{}",
            garbage.message
        );
        let zero = BASE64.encode(json!({"v": "meta.k8s.io/v1", "rv": 0, "start": "x"}).to_string());
        assert_eq!(decode_continue(&zero).unwrap_err().code, 400);
        let escaping =
            BASE64.encode(json!({"v": "meta.k8s.io/v1", "rv": 1, "start": "../x"}).to_string());
        assert_eq!(decode_continue(&escaping).unwrap_err().code, 400);
    }

    #[test]
    fn json_lists_are_the_parsed_lists_serialized() {
        let info = crate::registry::test_support::widget_info("v1");
        let item = |name: &str, revision| ListItem {
            stored: StoredObject::new(
                super::super::codec::encode(&json!({"apiVersion": "example.kapi.dev/v1",
                    "kind": "Widget", "metadata": {"name": name}, "spec": {"n": 1.5}})),
                revision,
            ),
            decoded: None,
        };
        for items in [vec![], vec![item("a", 3)], vec![item("a", 3), item("b", 4)]] {
            let list = ObjectList {
                items,
                metadata: json!({"resourceVersion": "9", "continue": "x"}),
            };
            // The list written in one pass is the one written a chunk at a time.
            let body = list.json_body(&info).unwrap().to_bytes();
            assert_eq!(body, list.json_document(&info, "\n").unwrap());
            assert!(body.len() <= list.json_len_estimate());
            let fast: Value = serde_json::from_slice(&list.to_json(&info).unwrap()).unwrap();
            assert_eq!(fast, list.into_value(&info).unwrap());
        }
    }
}
