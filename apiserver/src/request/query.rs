//! The query string of a request, decoded once: `a=1&b=2` as Go's `url.ParseQuery`
//! reads it, a repeated key keeping its first value.

use std::collections::HashMap;

use crate::status::ApiError;

/// The decoded query string; a repeated key keeps its first value.
#[derive(Debug, Default)]
pub struct Query(HashMap<String, String>);

impl Query {
    /// Parses `a=1&b=2`.
    pub fn parse(query: Option<&str>) -> Self {
        let mut map = HashMap::new();
        for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            map.entry(k.into_owned()).or_insert_with(|| v.into_owned());
        }
        Self(map)
    }

    /// One parameter.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A boolean parameter, read as kube-apiserver reads one: absent, `0` and `false`
    /// (in any case) are false, any other value is true.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key)
            .is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
    }

    /// An integer parameter: `None` when absent, 400 when it is not a 64-bit integer
    /// (an empty value included), as kube-apiserver's parameter decoding answers.
    pub fn int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
                ApiError::bad_request(format!(
                    "{key}: strconv.ParseInt: parsing {v:?}: invalid syntax"
                ))
            }),
        }
    }
}
