//! Kubernetes naming: the defaults derived from a kind and the syntax rules for group,
//! version, kind and resource names, worded as in `k8s.io/apimachinery/pkg/util/validation`.

/// Kubernetes' guess of a resource's plural from its lowercase singular
/// (`widget` → `widgets`, `class` → `classes`, `policy` → `policies`, `box` → `boxes`).
pub fn guess_plural(singular: &str) -> String {
    let ends_in_consonant_y = singular.strip_suffix('y').is_some_and(|stem| {
        stem.chars()
            .last()
            .is_some_and(|c| !matches!(c, 'a' | 'e' | 'i' | 'o' | 'u'))
    });
    if ends_in_consonant_y {
        format!("{}ies", &singular[..singular.len() - 1])
    } else if ["s", "ch", "sh", "x", "z"]
        .iter()
        .any(|end| singular.ends_with(end))
    {
        format!("{singular}es")
    } else {
        format!("{singular}s")
    }
}

/// Why `value` is not a lowercase RFC 1123 label (plural, singular, short names,
/// categories), or `None` when it is one.
pub fn dns1123_label_error(value: &str) -> Option<String> {
    const MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric \
                           characters or '-', and must start and end with an alphanumeric \
                           character (e.g. 'my-name', or '123-abc')";
    if value.len() > kapi_validation::DNS1123_LABEL_MAX {
        return Some("must be no more than 63 characters".to_string());
    }
    let ok = kapi_validation::matches_dns1123_label(value);
    (!ok).then(|| MESSAGE.to_string())
}

/// Why `value` is not a lowercase RFC 1123 subdomain (the group), or `None`.
pub fn dns1123_subdomain_error(value: &str) -> Option<String> {
    const MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
                           alphanumeric characters, '-' or '.', and must start and end with an \
                           alphanumeric character (e.g. 'example.com')";
    if value.len() > kapi_validation::DNS1123_SUBDOMAIN_MAX {
        return Some("must be no more than 253 characters".to_string());
    }
    let ok = value.split('.').all(kapi_validation::is_dns1123_label);
    (!ok).then(|| MESSAGE.to_string())
}

/// Why `value` is not an RFC 1035 label (the version: `v1`, `v1beta2`), or `None`.
pub fn dns1035_label_error(value: &str) -> Option<String> {
    const MESSAGE: &str = "a DNS-1035 label must consist of lower case alphanumeric characters \
                           or '-', start with an alphabetic character, and end with an \
                           alphanumeric character (e.g. 'v1', or 'v1beta2')";
    if value.len() > kapi_validation::DNS1035_LABEL_MAX {
        return Some("must be no more than 63 characters".to_string());
    }
    let ok = kapi_validation::matches_dns1035_label(value);
    (!ok).then(|| MESSAGE.to_string())
}

/// Why `value` is not a kind (`Widget`, `WidgetList`), or `None`.
pub fn kind_error(value: &str) -> Option<String> {
    if !value.starts_with(|c: char| c.is_ascii_uppercase()) {
        return Some("must start with an uppercase ASCII letter (e.g. 'Widget')".to_string());
    }
    if !value.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Some("must contain only ASCII letters and digits (e.g. 'Widget')".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        let cases = [
            ("widget", "widgets"),
            ("class", "classes"),
            ("policy", "policies"),
            ("gateway", "gateways"),
            ("box", "boxes"),
            ("batch", "batches"),
            ("mesh", "meshes"),
            ("quiz", "quizes"),
            ("y", "ys"),
        ];
        for (singular, plural) in cases {
            assert_eq!(guess_plural(singular), plural, "{singular}");
        }
    }

    #[test]
    fn rules() {
        assert!(dns1123_label_error("widgets").is_none());
        assert!(dns1123_label_error("Widgets").is_some());
        assert!(dns1123_label_error("-w").is_some());
        assert!(dns1123_subdomain_error("example.kapi.dev").is_none());
        assert!(dns1123_subdomain_error("example..dev").is_some());
        assert!(dns1035_label_error("v1beta1").is_none());
        assert!(dns1035_label_error("1v").is_some());
        assert!(kind_error("Widget").is_none());
        assert!(kind_error("widget").is_some());
        assert!(kind_error("Wid-get").is_some());
    }
}
