//! The query string of a request, decoded once: `a=1&b=2` as Go's `url.ParseQuery`
//! reads it, a repeated key keeping its first value.

use crate::status::ApiError;

/// The decoded query string, in the order sent; a repeated key keeps its first value.
/// A request carries a handful of parameters and each is looked up a few times, so a
/// list searched in order costs less than hashing every key into a map.
#[derive(Debug, Default)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parses `a=1&b=2`.
    pub fn parse(query: Option<&str>) -> Self {
        let Some(query) = query.filter(|q| !q.is_empty()) else {
            return Self::default();
        };
        let pairs = form_urlencoded::parse(query.as_bytes());
        Self(
            pairs
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// One parameter: its first value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_keeps_its_first_value() {
        let q = Query::parse(Some("watch=1&limit=5&watch=false&a%20b=c%2Bd&plus=x+y"));
        assert_eq!(q.get("watch"), Some("1"));
        assert!(q.flag("watch"));
        assert_eq!(q.int("limit").unwrap(), Some(5));
        assert_eq!(q.get("a b"), Some("c+d"));
        assert_eq!(q.get("plus"), Some("x y"));
        assert_eq!(q.get("missing"), None);
        assert_eq!(Query::parse(None).get("watch"), None);
        assert_eq!(Query::parse(Some("")).get(""), None);
    }
}
