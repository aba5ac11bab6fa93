//! The generic handlers of a resource: one function per verb, each decoding the
//! request, calling the resource's [`Store`], and encoding the answer in the format the
//! client accepts.

use std::sync::Arc;

use http::{Method, Request, Response, StatusCode, header};
use kapi_storage::ReadAt;
use serde_json::Value;

use super::patch::PatchType;
use super::{
    Api, ApiDocument, Body, api_document, document, document_body, error_response, output_of,
    read_body, with_warnings,
};
use crate::negotiation::{self, Output, decode_body};
use crate::presentation::{Presentation, present, to_yaml};
use crate::registry::list_body::{EncodedItem, ListBody};
use crate::registry::{Deletion, FieldValidation, Store, Subresource, WriteOptions};
use crate::request::{Query, RequestInfo, ResourcePath, Verb};
use crate::status::ApiError;
use crate::table::IncludeObject;

/// The verb of a request, as kube-apiserver names it (and lists it in discovery), for
/// the routes a resource has: a create names no object unless it is on a subresource,
/// an update or patch names one, and HEAD is not served.
fn verb(info: &RequestInfo, r: &ResourcePath) -> Option<Verb> {
    let named = r.name.is_some();
    if info.method == Method::HEAD {
        return None;
    }
    let verb = info.verb?;
    let routed = match verb {
        Verb::Create => !named || r.subresource.is_some(),
        Verb::Update | Verb::Patch => named,
        _ => true,
    };
    routed.then_some(verb)
}

/// Serves a request, resolved as `info`, for the resource path `r` (`info`'s).
pub async fn handle<B>(
    api: &Api,
    req: Request<B>,
    info: &RequestInfo,
    r: &ResourcePath,
) -> Response<Body>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let Some(store) = api.registry.get(&r.group, &r.version, &r.plural) else {
        return error_response(&ApiError::no_route());
    };
    // Negotiated once: the answer's format, and an error's (kube's ErrorNegotiated):
    // a typed client of a built-in kind gets a protobuf Status.
    let wire = api.wire_for(store.info());
    let output = output_of(&req, wire);
    let errors_in = match output {
        Ok(output @ Output::Protobuf(wire)) => Some((output, wire)),
        _ => None,
    };
    let negotiated = Negotiated { wire, output };
    match serve(api, req, info, r, store, negotiated).await {
        Ok(res) => res,
        Err(e) => {
            let protobuf = errors_in.and_then(|(output, wire)| {
                let body = super::protobuf::encode_status(wire.catalog, &e.to_status())?;
                Some(document(e.code, negotiation::content_type(output), body))
            });
            protobuf.unwrap_or_else(|| error_response(&e))
        }
    }
}

/// What [`handle`] negotiated for a resource: its protobuf form, if it has one, and the
/// answer's format (a 406 once the request is otherwise valid).
struct Negotiated {
    wire: Option<negotiation::Wire>,
    output: Result<Output, ApiError>,
}

/// A request for one resource, resolved: everything the verb's handler needs.
struct Call<'a> {
    api: &'a Api,
    store: Arc<Store>,
    query: &'a Query,
    namespace: Option<&'a str>,
    /// The object's name (empty for a collection).
    name: String,
    sub: Option<Subresource>,
    wire: Option<negotiation::Wire>,
    output: Output,
    how: Presentation,
}

async fn serve<B>(
    api: &Api,
    req: Request<B>,
    request: &RequestInfo,
    r: &ResourcePath,
    store: Arc<Store>,
    negotiated: Negotiated,
) -> Result<Response<Body>, ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let info = store.info();
    let query = &request.query;
    let verb = verb(request, r).ok_or_else(ApiError::method_not_allowed)?;
    let namespace = namespace_of(info, r, verb)?;
    let sub = match r.subresource.as_deref() {
        None => None,
        Some("status") if info.subresources.status => Some(Subresource::Status),
        Some("scale") if info.subresources.scale.is_some() => {
            let scale = super::scale::handle(api, &store, req, namespace, r, verb, query);
            return Box::pin(scale).await;
        }
        Some(s) => match info.subresources.extra.iter().find(|e| e.name == s) {
            Some(extra) if extra.verbs.iter().any(|v| v == verb.as_str()) => {
                if verb == Verb::Create {
                    let create = create_on_subresource(api, &store, req, namespace, r, s, query);
                    return Box::pin(create).await;
                }
                Some(Subresource::Extra(extra.name.clone()))
            }
            Some(_) => return Err(ApiError::method_not_supported(info, verb.as_str())),
            None => return Err(ApiError::no_route()),
        },
    };
    let served = matches!(verb, Verb::Get | Verb::Update | Verb::Patch) || sub.is_none();
    if !served || (sub.is_none() && !info.serves(verb.as_str())) {
        return Err(ApiError::method_not_supported(info, verb.as_str()));
    }
    let Negotiated { wire, output } = negotiated;
    let call = Call {
        api,
        output: output?,
        how: Presentation {
            include_object: IncludeObject::from_query(query.get("includeObject"))
                .map_err(ApiError::bad_request)?,
            no_headers: false,
        },
        name: r.name.clone().unwrap_or_default(),
        store,
        query,
        namespace,
        sub,
        wire,
    };
    // The writes' futures are boxed: each is several times a read's, and every
    // request's future is as large as its largest branch, copied whole when the
    // connection boxes it (callgrind: 10,700 instructions of `memcpy` per GET).
    match verb {
        Verb::Get => get(&call).await,
        Verb::List => list(&call).await,
        Verb::Watch => {
            let (store, name) = (&call.store, r.name.as_deref());
            super::watch::serve(api, store, namespace, name, query, call.output).await
        }
        Verb::Create => Box::pin(create(&call, req)).await,
        Verb::Update => Box::pin(update(&call, req)).await,
        Verb::Patch => Box::pin(patch(&call, req)).await,
        Verb::Delete => Box::pin(delete(&call, req)).await,
        Verb::DeleteCollection => Box::pin(delete_collection(&call, req)).await,
    }
}

/// The namespace a request for `verb` on `r` works in: a namespaced resource needs one
/// for anything but list, watch and deletecollection across all namespaces; a
/// cluster-scoped one must not get one (404 either way, as kube-apiserver's routes).
fn namespace_of<'a>(
    info: &kapi_core::ResourceInfo,
    r: &'a ResourcePath,
    verb: Verb,
) -> Result<Option<&'a str>, ApiError> {
    match (info.namespaced(), &r.namespace) {
        (true, Some(ns)) => Ok(Some(ns.as_str())),
        (true, None)
            if matches!(verb, Verb::List | Verb::Watch | Verb::DeleteCollection)
                && r.name.is_none() =>
        {
            Ok(None)
        }
        (true, None) | (false, Some(_)) => Err(ApiError::no_route()),
        (false, None) => Ok(None),
    }
}

async fn get(c: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let info = c.store.info();
    let read_at = match c.query.get("resourceVersion").unwrap_or("") {
        "" => ReadAt::Latest,
        "0" => ReadAt::Any,
        rv => ReadAt::NotOlderThan(
            rv.parse::<i64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| ApiError::bad_request(format!("invalid resource version: {rv}")))?,
        ),
    };
    let stored = c.store.get_stored(c.namespace, &c.name, read_at).await?;
    match c.output {
        Output::Json => Ok(json_ok(stored.to_json(info)?)),
        Output::Protobuf(wire) => {
            let body = super::protobuf::encode_stored(wire, info, &stored)?;
            Ok(protobuf_ok(c.output, body))
        }
        _ => c.respond(StatusCode::OK, &stored.decode(info)?, false),
    }
}

/// The size above which a list is written a chunk at a time; below it, in one piece
/// (a JSON list in one pass, by its estimated length), which costs least: 16 clients
/// listing 130 KiB JSON lists over HTTP/1.1 ran 10-15 % slower in chunks, resolving
/// every item before writing any cost a list of 100 a tenth of its instructions
/// (callgrind), and a list of 1,000 ConfigMaps (1.3 MB) at one client over HTTP/2 a
/// fifth of its rate. 16 lists held whole at once hold at most 64 MiB; the lists
/// chunks are for, 10,000 objects and more, are several times this.
const STREAM_ABOVE: u64 = 4 * 1024 * 1024;

/// A list's answer: in one piece up to [`STREAM_ABOVE`], as any other answer (chunks
/// only pay where the whole list would be a large buffer), else a chunk at a time.
fn list_response<I>(output: Output, body: ListBody<I>) -> Response<Body>
where
    I: EncodedItem + Send + Sync + 'static,
    I::Shared: Send + Sync,
{
    let content_type = negotiation::content_type(output);
    let res = if body.len() as u64 <= STREAM_ABOVE {
        document(StatusCode::OK, content_type, body.to_bytes())
    } else {
        document_body(StatusCode::OK, content_type, body)
    };
    marked(output, res)
}

/// A JSON answer is a document pretty-printing may apply to.
fn marked(output: Output, mut res: Response<Body>) -> Response<Body> {
    if matches!(output, Output::Json) {
        res.extensions_mut().insert(ApiDocument);
    }
    res
}

async fn list(c: &Call<'_>) -> Result<Response<Body>, ApiError> {
    let info = c.store.info();
    let opts = c.query.list_options()?;
    let list = c.store.list_objects(c.namespace, &opts).await?;
    match c.output {
        Output::Json if list.json_len_estimate() as u64 <= STREAM_ABOVE => {
            let json = list.json_document(info, "\n")?;
            let content_type = negotiation::content_type(c.output);
            Ok(marked(
                c.output,
                document(StatusCode::OK, content_type, json),
            ))
        }
        Output::Json => Ok(list_response(c.output, list.json_body(info)?)),
        Output::Protobuf(wire) => Ok(list_response(
            c.output,
            super::protobuf::list_body(wire, info, &list)?,
        )),
        _ => c.respond(StatusCode::OK, &list.into_value(info)?, true),
    }
}

async fn create<B>(c: &Call<'_>, req: Request<B>) -> Result<Response<Body>, ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let info = c.store.info();
    let opts = super::for_request(c.query.write_options("CreateOptions")?, &req);
    let (body, dup_warnings) = decoded(req, &opts, Some(info), c.wire).await?;
    super::body_kind::check(&c.api.registry, c.api.built_in_groups, info, &body)?;
    let (obj, mut warnings) = c.store.create(c.namespace, body, &opts).await?;
    warnings.extend(dup_warnings);
    Ok(with_warnings(
        c.respond(StatusCode::CREATED, &obj, false)?,
        &warnings,
    ))
}

async fn update<B>(c: &Call<'_>, req: Request<B>) -> Result<Response<Body>, ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let info = c.store.info();
    let opts = super::for_request(c.query.write_options("UpdateOptions")?, &req);
    let (body, dup_warnings) = decoded(req, &opts, Some(info), c.wire).await?;
    super::body_kind::check(&c.api.registry, c.api.built_in_groups, info, &body)?;
    let sub = c.sub.clone().unwrap_or(Subresource::Main);
    let (obj, mut warnings) = c
        .store
        .update(c.namespace, &c.name, body, sub, &opts)
        .await?;
    warnings.extend(dup_warnings);
    Ok(with_warnings(
        c.respond(StatusCode::OK, &obj, false)?,
        &warnings,
    ))
}

async fn patch<B>(c: &Call<'_>, req: Request<B>) -> Result<Response<Body>, ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let content_type = content_type(&req);
    let patch_type = PatchType::from_content_type(&content_type)?;
    let apply = patch_type == PatchType::Apply;
    let opts = super::for_request(c.query.patch_options(apply)?, &req);
    let bytes = read_body(req.into_body()).await?;
    let patch = decode_body(&content_type, &bytes)?.value;
    let sub = c.sub.clone().unwrap_or(Subresource::Main);
    if apply {
        // Server-side apply is the store's: it merges by the schema and owns fields.
        let ((obj, warnings), created) = c
            .store
            .apply(c.namespace, &c.name, patch, sub, &opts)
            .await?;
        let code = if created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        return Ok(with_warnings(c.respond(code, &obj, false)?, &warnings));
    }
    let store = c.store.clone();
    let name = c.name.clone();
    let (obj, warnings) = c
        .store
        .update_with(c.namespace, &c.name, sub, &opts, move |current| {
            let patched = patch_type.apply(current, &patch, store.strategy().schema())?;
            check_patched(store.info(), &name, current, &patched)?;
            // The patched object keeps the current resourceVersion unless the patch
            // changed it (any patch type): then it is a precondition (409).
            Ok(patched)
        })
        .await?;
    Ok(with_warnings(
        c.respond(StatusCode::OK, &obj, false)?,
        &warnings,
    ))
}

async fn delete<B>(c: &Call<'_>, req: Request<B>) -> Result<Response<Body>, ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let admission = super::admission_of(&req);
    let body = delete_body(req, c.api.protobuf).await?;
    let mut opts = c.query.delete_options(body.as_ref())?;
    opts.admission = admission;
    match c.store.delete(c.namespace, &c.name, &opts).await? {
        Deletion::Deleted(obj) => c.respond(StatusCode::OK, &obj, false),
        // 202 only for the legacy `orphanDependents: false`, as kube-apiserver.
        Deletion::Pending(obj) if opts.orphan_dependents_false => {
            c.respond(StatusCode::ACCEPTED, &obj, false)
        }
        Deletion::Pending(obj) => c.respond(StatusCode::OK, &obj, false),
    }
}

async fn delete_collection<B>(c: &Call<'_>, req: Request<B>) -> Result<Response<Body>, ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let list_opts = c.query.list_options()?;
    let admission = super::admission_of(&req);
    let body = delete_body(req, c.api.protobuf).await?;
    let mut opts = c.query.delete_options(body.as_ref())?;
    opts.admission = admission;
    let list = c
        .store
        .delete_collection(c.namespace, &list_opts, &opts)
        .await?;
    c.respond(StatusCode::OK, &list, true)
}

impl Call<'_> {
    /// The answer `obj` (a list when `is_list`) in the negotiated format.
    fn respond(
        &self,
        code: StatusCode,
        obj: &Value,
        is_list: bool,
    ) -> Result<Response<Body>, ApiError> {
        respond(&self.store, code, self.output, obj, is_list, self.how)
    }
}

/// A 200 of a protobuf body already encoded.
fn protobuf_ok(output: Output, body: impl Into<bytes::Bytes>) -> Response<Body> {
    document(StatusCode::OK, negotiation::content_type(output), body)
}

/// `POST .../{name}/{subresource}` (`pods/binding`): the hooks apply the posted object;
/// the answer is a `Status` of success, as kube-apiserver gives for a binding.
async fn create_on_subresource<B>(
    api: &Api,
    store: &Arc<Store>,
    req: Request<B>,
    namespace: Option<&str>,
    r: &ResourcePath,
    sub: &str,
    query: &Query,
) -> Result<Response<Body>, ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let opts = super::for_request(query.write_options("CreateOptions")?, &req);
    let wire = Some(negotiation::Wire::catalog(api.protobuf));
    let (body, _) = decoded(req, &opts, None, wire).await?;
    let name = r.name.clone().unwrap_or_default();
    store
        .create_on_subresource(namespace, &name, sub, &body, &opts)
        .await?;
    let status = crate::status::Status::success(StatusCode::CREATED);
    Ok(api_document(
        StatusCode::CREATED,
        negotiation::content_type(Output::Json),
        crate::go_json::encode(&status),
    ))
}

/// What kube-apiserver refuses in a patched object before the update runs, each a 422
/// Invalid: a changed (or removed) `apiVersion` or `kind`, and an object nested deeper
/// than a request body may be, which could be stored but never read back.
fn check_patched(
    info: &kapi_core::ResourceInfo,
    name: &str,
    current: &Value,
    patched: &Value,
) -> Result<(), ApiError> {
    use kapi_core::{FieldError, FieldPath};
    for field in ["apiVersion", "kind"] {
        if patched.get(field) != current.get(field) {
            let want = current.get(field).and_then(Value::as_str).unwrap_or("");
            let got = patched.get(field).cloned().unwrap_or(Value::Null);
            let errs = vec![FieldError::invalid(
                &FieldPath::new(field),
                got,
                format!("must be {want}"),
            )];
            return Err(ApiError::invalid(info, name, &errs));
        }
    }
    if negotiation::nesting(patched) > negotiation::MAX_NESTING {
        let errs = vec![FieldError::invalid_omit_value(
            &FieldPath::new("patch"),
            format!(
                "the patched object is nested deeper than {} levels",
                negotiation::MAX_NESTING
            ),
        )];
        return Err(ApiError::invalid(info, name, &errs));
    }
    Ok(())
}

fn content_type<B>(req: &Request<B>) -> String {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string()
}

/// Reads a create/update body in JSON or YAML (of `info`'s kind: one that does not
/// decode is refused in kube-apiserver's words for it); duplicated fields are refused
/// under `fieldValidation=Strict` and become warnings under `Warn`.
async fn decoded<B>(
    req: Request<B>,
    opts: &WriteOptions,
    info: Option<&kapi_core::ResourceInfo>,
    wire: Option<negotiation::Wire>,
) -> Result<(Value, Vec<String>), ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let content_type = content_type(&req);
    let essence = negotiation::essence(&content_type);
    // A subresource's body (a Binding, an Eviction) is whatever kind its envelope says.
    let protobuf = match (info, wire) {
        (Some(info), Some(wire)) if negotiation::is_protobuf(&content_type) => {
            wire.object.map(|m| (Some(info), wire, Some(m)))
        }
        (None, Some(wire)) if negotiation::is_protobuf(&content_type) => Some((None, wire, None)),
        _ => None,
    };
    if protobuf.is_none()
        && !matches!(
            essence.as_str(),
            "application/json" | "application/yaml" | "application/x-yaml" | "text/yaml" | ""
        )
    {
        return Err(ApiError::unsupported_media_type(
            &content_type,
            negotiation::served(wire),
        ));
    }
    let bytes = read_body(req.into_body()).await?;
    if let Some((info, wire, message)) = protobuf {
        let body = match (info, message) {
            (Some(info), Some(message)) => {
                super::protobuf::decode_body(wire.catalog, &bytes, message, &info.kind)?
            }
            _ => super::protobuf::decode_enveloped(wire.catalog, &bytes)?,
        };
        let messages: Vec<String> = body.unknown.iter().map(ToString::to_string).collect();
        return field_validation(opts, body.value, messages);
    }
    let decoded = match info {
        Some(info) => negotiation::decode_object(&content_type, &bytes, &info.kind)?,
        None => decode_body(&content_type, &bytes)?,
    };
    let messages: Vec<String> = decoded
        .duplicates
        .iter()
        .map(|p| format!("duplicate field \"{p}\""))
        .collect();
    field_validation(opts, decoded.value, messages)
}

/// A decoded body with what `fieldValidation` says of its duplicate or unknown fields:
/// refused (Strict), warned of (Warn, the default) or let be (Ignore).
fn field_validation(
    opts: &WriteOptions,
    value: Value,
    messages: Vec<String>,
) -> Result<(Value, Vec<String>), ApiError> {
    match opts.field_validation {
        FieldValidation::Strict if !messages.is_empty() => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            messages.join(", ")
        ))),
        FieldValidation::Ignore => Ok((value, Vec::new())),
        _ => Ok((value, messages)),
    }
}

async fn delete_body<B>(
    req: Request<B>,
    catalog: &'static kapi_core::protobuf::Catalog,
) -> Result<Option<Value>, ApiError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let content_type = content_type(&req);
    let bytes = read_body(req.into_body()).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    // kubectl's typed deletes send `DeleteOptions` in protobuf, for custom resources too
    // (kube-apiserver reads it with its own scheme whatever the resource).
    if negotiation::is_protobuf(&content_type) {
        let message = catalog
            .by_name(DELETE_OPTIONS)
            .ok_or_else(|| ApiError::unsupported_media_type(&content_type, negotiation::SERVED))?;
        let body = super::protobuf::decode_body(catalog, &bytes, message, "DeleteOptions")?;
        return Ok(Some(body.value));
    }
    Ok(Some(decode_body(&content_type, &bytes)?.value))
}

/// The protobuf message of a delete's body.
const DELETE_OPTIONS: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions";

/// A 200 with a JSON body made from stored bytes (by [`crate::registry::StoredObject`]
/// or [`crate::registry::ObjectList`]), ended by a newline as kube-apiserver ends one.
fn json_ok(body: bytes::Bytes) -> Response<Body> {
    let mut body = bytes::BytesMut::from(body);
    body.extend_from_slice(b"\n");
    api_document(
        StatusCode::OK,
        negotiation::content_type(Output::Json),
        body.freeze(),
    )
}

/// Encodes an object or list in the client's format.
pub fn respond(
    store: &Arc<Store>,
    code: StatusCode,
    output: Output,
    value: &Value,
    is_list: bool,
    how: Presentation,
) -> Result<Response<Body>, ApiError> {
    let json = |value: &Value| {
        let mut bytes = serde_json::to_vec(value).unwrap_or_default();
        bytes.push(b'\n');
        Ok(api_document(code, negotiation::content_type(output), bytes))
    };
    if output == Output::Json {
        return json(value);
    }
    if let Output::Protobuf(wire) = output {
        let bytes = super::protobuf::encode_known(wire.catalog, value)?;
        return Ok(document(code, negotiation::content_type(output), bytes));
    }
    let body = present(store.strategy().as_ref(), output, value, is_list, how)?;
    match output {
        Output::Yaml => Ok(document(
            code,
            negotiation::content_type(output),
            to_yaml(&body).into_bytes(),
        )),
        _ => json(&body),
    }
}
