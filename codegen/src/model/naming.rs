//! Deterministic Rust names for JSON names.

/// Words split on anything that is not a letter or digit, and on lower→upper case steps
/// (`targetPort` → `target`, `Port`; `HPAReplicas` → `HPA`, `Replicas`).
fn words(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = if i > 0 {
            chars.get(i - 1).copied()
        } else {
            None
        };
        let next = chars.get(i + 1).copied();
        let boundary = c.is_ascii_uppercase()
            && !cur.is_empty()
            && (prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase())
                    && next.is_some_and(|n| n.is_ascii_lowercase())));
        if boundary {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `targetPort` → `TargetPort`, `HPAReplicas` → `HpaReplicas`, `x-foo` → `XFoo`.
pub fn pascal_case(s: &str) -> String {
    let mut out = String::new();
    for w in words(s) {
        let mut chars = w.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars.map(|c| c.to_ascii_lowercase()));
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'V');
    }
    out
}

/// `targetPort` → `target_port`, `HPAReplicas` → `hpa_replicas`, `$ref` → `ref_`.
/// Rust keywords are returned as they are; the emitter writes them as raw identifiers.
pub fn field_ident_name(s: &str) -> String {
    let mut out = words(s)
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("_");
    if out.is_empty() {
        out.push_str("field");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if s.starts_with(|c: char| !c.is_ascii_alphanumeric()) && !out.ends_with('_') {
        out.push('_');
    }
    if matches!(out.as_str(), "self" | "super" | "crate" | "_") {
        out.push('_');
    }
    out
}

/// An enum variant for a string value: `ReadWriteOnce` stays, `in-progress` →
/// `InProgress`, `""` → `Empty`, `*` → `Value{index}`.
pub fn variant_name(value: &str, index: usize) -> String {
    if value.is_empty() {
        return "Empty".to_string();
    }
    match pascal_case(value) {
        p if p.is_empty() => format!("Value{index}"),
        // `Self` is the one keyword a PascalCase name can hit.
        p if p == "Self" => "Self_".to_string(),
        p => p,
    }
}

/// `example.kapi.dev` → `example_kapi_dev`; the core group `""` → `core`.
pub fn module_name(group: &str) -> String {
    if group.is_empty() {
        return "core".to_string();
    }
    group
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(pascal_case("targetPort"), "TargetPort");
        assert_eq!(pascal_case("HPAReplicas"), "HpaReplicas");
        assert_eq!(pascal_case("x-kubernetes-foo"), "XKubernetesFoo");
        assert_eq!(pascal_case("3scale"), "V3scale");
        assert_eq!(field_ident_name("targetPort"), "target_port");
        assert_eq!(field_ident_name("HPAReplicas"), "hpa_replicas");
        assert_eq!(field_ident_name("$ref"), "ref_");
        assert_eq!(field_ident_name("type"), "type");
        assert_eq!(field_ident_name("self"), "self_");
        assert_eq!(field_ident_name("2xx"), "_2xx");
        assert_eq!(field_ident_name("apiVersion"), "api_version");
        assert_eq!(variant_name("", 0), "Empty");
        assert_eq!(variant_name("in-progress", 0), "InProgress");
        assert_eq!(variant_name("*", 3), "Value3");
        assert_eq!(variant_name("self", 0), "Self_");
        assert_eq!(module_name("example.kapi.dev"), "example_kapi_dev");
        assert_eq!(module_name(""), "core");
    }
}
