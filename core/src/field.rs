//! Field paths and field errors, worded as Kubernetes' `k8s.io/apimachinery/pkg/util/validation/field`.
//!
//! Every check that can fail on user data (schema validation, CEL rules, hooks, CRD
//! checks) reports a [`FieldError`]; the server turns an [`ErrorList`] into a 422
//! `Status` with one cause per error, and the code generator maps the path back to a
//! file, line and column.

use std::fmt;

use serde_json::Value;

/// One step of a [`FieldPath`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathSegment {
    /// An object field: `.name`.
    Field(String),
    /// A list position: `[3]`.
    Index(usize),
    /// A map key (or list-map key) rendered as `[key]`.
    Key(String),
}

/// A path into an object, rendered the way Kubernetes does: `spec.containers[0].env[FOO]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldPath {
    segments: Vec<PathSegment>,
}

impl FieldPath {
    /// The empty path (the object root).
    pub fn root() -> Self {
        Self::default()
    }

    /// A path made of dot-separated field names, e.g. `FieldPath::new("spec.replicas")`.
    pub fn new(dotted: &str) -> Self {
        let mut p = Self::root();
        for part in dotted.split('.').filter(|s| !s.is_empty()) {
            p.segments.push(PathSegment::Field(part.to_string()));
        }
        p
    }

    /// This path extended by a field name.
    pub fn child(&self, name: &str) -> Self {
        let mut p = self.clone();
        p.segments.push(PathSegment::Field(name.to_string()));
        p
    }

    /// This path extended by a list index.
    pub fn index(&self, i: usize) -> Self {
        let mut p = self.clone();
        p.segments.push(PathSegment::Index(i));
        p
    }

    /// This path extended by a map key.
    pub fn key(&self, k: &str) -> Self {
        let mut p = self.clone();
        p.segments.push(PathSegment::Key(k.to_string()));
        p
    }

    /// The segments, root first.
    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    /// True for the root path.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// The path rendered with every step as a dotted name or index, as a YAML document
    /// path (`spec.versions[0].schema.openAPIV3Schema.properties.size`): map keys are
    /// written as fields, which is how a person reads a YAML file.
    pub fn to_document_path(&self) -> String {
        let mut s = String::new();
        for seg in &self.segments {
            match seg {
                PathSegment::Field(f) | PathSegment::Key(f) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(f);
                }
                PathSegment::Index(i) => {
                    s.push('[');
                    s.push_str(&i.to_string());
                    s.push(']');
                }
            }
        }
        s
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for seg in &self.segments {
            match seg {
                PathSegment::Field(name) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                PathSegment::Index(i) => write!(f, "[{i}]")?,
                PathSegment::Key(k) => write!(f, "[{k}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

/// The kind of a [`FieldError`], with Kubernetes' `field.ErrorType` wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// "Not found".
    NotFound,
    /// "Required value".
    Required,
    /// "Duplicate value".
    Duplicate,
    /// "Invalid value".
    Invalid,
    /// "Unsupported value".
    NotSupported,
    /// "Forbidden".
    Forbidden,
    /// "Too long".
    TooLong,
    /// "Too many".
    TooMany,
    /// "Internal error".
    Internal,
    /// "Invalid value", for a value of the wrong type.
    TypeInvalid,
}

impl ErrorType {
    /// Kubernetes' text for the type.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }

    /// The `reason` of a `StatusCause` (`FieldValueInvalid`, ...).
    pub fn cause_reason(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }
}

/// One problem with one field.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// What kind of problem.
    pub kind: ErrorType,
    /// Where.
    pub path: FieldPath,
    /// The offending value, when it is shown in the message.
    pub bad_value: Option<Value>,
    /// Further explanation.
    pub detail: String,
}

impl FieldError {
    fn make(
        kind: ErrorType,
        path: &FieldPath,
        bad_value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            path: path.clone(),
            bad_value,
            detail: detail.into(),
        }
    }

    /// `field.NotFound`.
    pub fn not_found(path: &FieldPath, value: impl Into<Value>) -> Self {
        Self::make(ErrorType::NotFound, path, Some(value.into()), "")
    }

    /// `field.Required`.
    pub fn required(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Required, path, None, detail)
    }

    /// `field.Invalid`.
    pub fn invalid(path: &FieldPath, value: impl Into<Value>, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Invalid, path, Some(value.into()), detail)
    }

    /// `field.Invalid` with the value left out of the message.
    pub fn invalid_omit_value(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Invalid, path, None, detail)
    }

    /// `field.TypeInvalid`.
    pub fn type_invalid(
        path: &FieldPath,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::make(ErrorType::TypeInvalid, path, Some(value.into()), detail)
    }

    /// `field.NotSupported`: the value is not one of `supported`.
    pub fn not_supported(path: &FieldPath, value: impl Into<Value>, supported: &[Value]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(render_value).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::make(ErrorType::NotSupported, path, Some(value.into()), detail)
    }

    /// `field.Forbidden`.
    pub fn forbidden(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Forbidden, path, None, detail)
    }

    /// `field.Duplicate`.
    pub fn duplicate(path: &FieldPath, value: impl Into<Value>) -> Self {
        Self::make(ErrorType::Duplicate, path, Some(value.into()), "")
    }

    /// `field.TooLong`: longer than `max` characters (or bytes).
    pub fn too_long(path: &FieldPath, max: u64) -> Self {
        Self::make(
            ErrorType::TooLong,
            path,
            None,
            format!("may not be more than {max} bytes"),
        )
    }

    /// `field.TooMany`: more than `max` items.
    pub fn too_many(path: &FieldPath, actual: u64, max: u64) -> Self {
        Self::make(
            ErrorType::TooMany,
            path,
            Some(Value::from(actual)),
            format!("must have at most {max} items"),
        )
    }

    /// `field.TypeInvalid` for a JSON value of the wrong type:
    /// `must be of type string, not number`.
    pub fn wrong_type(path: &FieldPath, value: &Value, want: &str) -> Self {
        let detail = format!("must be of type {want}, not {}", json_type_name(value));
        Self::type_invalid(path, value.clone(), detail)
    }

    /// `field.InternalError`.
    pub fn internal(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Internal, path, None, detail)
    }

    /// The message after the path: `Invalid value: -1: must be ...`.
    pub fn body(&self) -> String {
        let mut s = String::from(self.kind.as_str());
        let show_value = !matches!(
            self.kind,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        );
        if show_value {
            if let Some(v) = &self.bad_value {
                s.push_str(": ");
                s.push_str(&render_value(v));
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.body())
    }
}

impl std::error::Error for FieldError {}

/// The most bytes of a value a field error quotes; the rest is cut, and the message
/// says how long the value was. A value can be as large as the request (megabytes), and
/// one error per item of a long list would otherwise quote it whole in the `Status`,
/// its causes and the audit log.
pub const MAX_RENDERED_VALUE_BYTES: usize = 1024;

/// Renders a bad value as Go's `%#v`-like form Kubernetes uses: strings quoted,
/// numbers and booleans bare, null as `null`, objects and lists as JSON; at most
/// [`MAX_RENDERED_VALUE_BYTES`] of it, without rendering more than that.
pub fn render_value(v: &Value) -> String {
    let limit = MAX_RENDERED_VALUE_BYTES;
    match v {
        Value::String(s) if s.len() <= limit => format!("{s:?}"),
        Value::String(s) => {
            let cut = floor_char_boundary(s, limit);
            format!("{:?}... ({} bytes, truncated)", &s[..cut], s.len())
        }
        Value::Null => "null".to_string(),
        other => {
            let mut out = Bounded {
                bytes: Vec::new(),
                total: 0,
                limit,
            };
            // The only error is the writer's own, past the limit: `total` goes on counting.
            let _ = serde_json::to_writer(&mut out, other);
            if out.total <= limit {
                return String::from_utf8_lossy(&out.bytes).into_owned();
            }
            let text = String::from_utf8_lossy(&out.bytes);
            let cut = floor_char_boundary(&text, limit);
            format!("{}... (over {limit} bytes, truncated)", &text[..cut])
        }
    }
}

/// A writer keeping the first `limit` bytes written and failing past them.
struct Bounded {
    bytes: Vec<u8>,
    total: usize,
    limit: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.total += buf.len();
        let room = (self.limit + 1).saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&buf[..buf.len().min(room)]);
        if self.total > self.limit {
            return Err(std::io::Error::other("value too long to quote"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The largest index at most `at` that is a character boundary of `s` (where a text
/// may be cut).
pub fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The JSON type of a value, as JSON Schema names it (`number` for every number).
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A list of field errors, as returned by every validation step.
pub type ErrorList = Vec<FieldError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_quoted_in_part() {
        let path = FieldPath::new("spec").child("data");
        let short = FieldError::invalid(&path, "abc", "bad");
        assert_eq!(short.to_string(), "spec.data: Invalid value: \"abc\": bad");
        let long = FieldError::invalid(&path, "é".repeat(2_000_000), "bad");
        let text = long.to_string();
        assert!(text.len() < 2 * MAX_RENDERED_VALUE_BYTES, "{}", text.len());
        assert!(
            text.ends_with("... (4000000 bytes, truncated): bad"),
            "{text}"
        );
        let list: Vec<Value> = (0..1_000_000).map(Value::from).collect();
        let text = FieldError::invalid(&path, list, "bad").to_string();
        assert!(text.len() < 2 * MAX_RENDERED_VALUE_BYTES);
        assert!(
            text.starts_with("spec.data: Invalid value: [0,1,2,"),
            "{text}"
        );
        assert!(
            text.ends_with("... (over 1024 bytes, truncated): bad"),
            "{text}"
        );
        let exact = "x".repeat(MAX_RENDERED_VALUE_BYTES - 4);
        assert_eq!(
            render_value(&Value::from(vec![exact.clone()])),
            format!("[\"{exact}\"]")
        );
    }
}
