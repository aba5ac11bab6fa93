//! Kubernetes' syntax rules for names and labels, worded as
//! `k8s.io/apimachinery/pkg/util/validation` words them: DNS-1123 labels and
//! subdomains, DNS-1035 labels, qualified names (label and annotation keys,
//! finalizers) and label values.
//!
//! Beside them, [`go`]: Go's `%q` quoting and apimachinery's aggregated errors, the
//! formatting those messages (and RBAC's, and the schema checks') are written in.
//!
//! This crate owns the rules and their words, and nothing else: it knows no resource,
//! no field path and no JSON, and depends on nothing, so the derive macros (at compile
//! time), the schema and CRD checks, authorization and the per-kind strategies (at run
//! time) all apply the same rules in the same words.

pub mod go;

/// Maximum length of a DNS-1123 label (namespaces, label name parts).
pub const DNS1123_LABEL_MAX: usize = 63;
/// Maximum length of a DNS-1123 subdomain (most object names).
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// Maximum length of a DNS-1035 label (Service names, versions).
pub const DNS1035_LABEL_MAX: usize = 63;
/// Maximum length of a qualified name's name part, and of a label value.
pub const QUALIFIED_NAME_MAX: usize = 63;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Go's `validation.RegexError`: the message, examples and the regex.
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        examples.join(" or ")
    )
}

/// Whether `s` matches a DNS-1123 label's pattern, whatever its length.
pub fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => alnum(f) && alnum(l) && b.iter().all(|c| alnum(c) || *c == b'-'),
        _ => false,
    }
}

/// Whether `s` matches a DNS-1123 subdomain's pattern, whatever its length.
pub fn matches_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(matches_dns1123_label)
}

/// Whether `s` matches a DNS-1035 label's pattern (a DNS-1123 label starting with a
/// letter), whatever its length.
pub fn matches_dns1035_label(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase()) && matches_dns1123_label(s)
}

/// Whether `s` is a DNS-1123 label (`IsDNS1123Label` finds nothing wrong).
pub fn is_dns1123_label(s: &str) -> bool {
    s.len() <= DNS1123_LABEL_MAX && matches_dns1123_label(s)
}

/// Whether `s` is a DNS-1123 subdomain (`IsDNS1123Subdomain` finds nothing wrong).
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= DNS1123_SUBDOMAIN_MAX && matches_dns1123_subdomain(s)
}

/// Whether `s` is a DNS-1035 label (`IsDNS1035Label` finds nothing wrong).
pub fn is_dns1035_label(s: &str) -> bool {
    s.len() <= DNS1035_LABEL_MAX && matches_dns1035_label(s)
}

/// The message of a name over `n` characters, as the DNS rules word it.
fn max_chars_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// The message of a label key or value over `n` bytes, as the label rules word it.
fn max_bytes_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

/// `IsDNS1123Label`: the problems with `s`, empty when it is valid.
pub fn dns1123_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(max_chars_error(DNS1123_LABEL_MAX));
    }
    if !matches_dns1123_label(s) {
        errs.push(dns1123_label_pattern_error());
    }
    errs
}

/// `IsDNS1123Label`'s message for a value that does not match the pattern.
pub fn dns1123_label_pattern_error() -> String {
    regex_error(
        DNS1123_LABEL_MSG,
        DNS1123_LABEL_FMT,
        &["my-name", "123-abc"],
    )
}

/// `IsDNS1123Subdomain`: the problems with `s`, empty when it is valid.
pub fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_chars_error(DNS1123_SUBDOMAIN_MAX));
    }
    if !matches_dns1123_subdomain(s) {
        errs.push(dns1123_subdomain_pattern_error());
    }
    errs
}

/// `IsDNS1123Subdomain`'s message for a value that does not match the pattern.
fn dns1123_subdomain_pattern_error() -> String {
    regex_error(
        DNS1123_SUBDOMAIN_MSG,
        DNS1123_SUBDOMAIN_FMT,
        &["example.com"],
    )
}

/// `IsDNS1035Label`: the problems with `s`, empty when it is valid.
pub fn dns1035_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1035_LABEL_MAX {
        errs.push(max_chars_error(DNS1035_LABEL_MAX));
    }
    if !matches_dns1035_label(s) {
        errs.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: a qualified name's name part, or a
/// non-empty label value.
fn matches_qualified_name(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `IsQualifiedName` (Kubernetes' `content.IsLabelKey`): `[prefix/]name`, as label
/// keys, annotation keys and finalizers are. The problems, empty when it is valid.
pub fn qualified_name_errors(value: &str) -> Vec<String> {
    let examples = ["MyName", "my.name", "123-abc"];
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > DNS1123_SUBDOMAIN_MAX {
                    errs.push(format!(
                        "prefix part {}",
                        max_bytes_error(DNS1123_SUBDOMAIN_MAX)
                    ));
                }
                if !matches_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {}", dns1123_subdomain_pattern_error()));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &examples)
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_bytes_error(QUALIFIED_NAME_MAX)));
    }
    if !matches_qualified_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &examples)
        ));
    }
    errs
}

/// `IsValidLabelValue` (Kubernetes' `content.IsLabelValue`): the problems, empty when
/// it is valid.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > QUALIFIED_NAME_MAX {
        errs.push(max_bytes_error(QUALIFIED_NAME_MAX));
    }
    if !value.is_empty() && !matches_qualified_name(value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_names_follow_their_patterns_and_lengths() {
        for ok in ["a", "my-name", "123-abc", &"a".repeat(63)] {
            assert!(is_dns1123_label(ok), "{ok}");
            assert!(dns1123_label_errors(ok).is_empty(), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a.b", "a_b", &"a".repeat(64)] {
            assert!(!is_dns1123_label(bad), "{bad}");
            assert!(!dns1123_label_errors(bad).is_empty(), "{bad}");
        }
        assert!(is_dns1123_subdomain("example.com"));
        assert!(!is_dns1123_subdomain("example..com"));
        assert!(!is_dns1123_subdomain(&format!("{}.com", "a".repeat(250))));
        assert!(matches_dns1123_subdomain(&format!(
            "{}.com",
            "a".repeat(250)
        )));
        assert!(is_dns1035_label("v1beta2"));
        assert!(!is_dns1035_label("1v"));
        assert_eq!(
            dns1035_label_errors("1v"),
            [
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(
            dns1123_label_errors(&"a".repeat(64)),
            ["must be no more than 63 characters"]
        );
    }

    #[test]
    fn qualified_names_and_label_values_are_worded_as_kube_words_them() {
        assert!(qualified_name_errors("example.com/My_name.1").is_empty());
        assert_eq!(
            qualified_name_errors("/x"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(
            qualified_name_errors("a/b/c"),
            [
                "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ]
        );
        assert_eq!(
            qualified_name_errors(&"n".repeat(64)),
            ["name part must be no more than 63 bytes"]
        );
        assert!(label_value_errors("").is_empty());
        assert_eq!(label_value_errors("-x").len(), 1);
    }
}
