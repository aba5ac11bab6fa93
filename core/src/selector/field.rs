//! Field selectors: the string syntax of `?fieldSelector=`, as Kubernetes'
//! `k8s.io/apimachinery/pkg/fields` parses, renders and matches it.
//!
//! A selector is a comma-separated list of `field=value`, `field==value` (the same) or
//! `field!=value` terms, all of which must hold. In a value, `\`, `,` and `=` are
//! written `\\`, `\,` and `\=`; any other escape, or an unescaped `,`/`=` in a value,
//! is an error. Field names are not validated here: which fields a resource supports
//! is the server's business (see [`FieldSelector::requirements`]). Whitespace is not
//! trimmed, as in Kubernetes.

use std::fmt;

use super::SelectorError;

/// The operator of a [`FieldRequirement`] (`=` and `==` are the same operator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldOperator {
    /// `field=value` or `field==value`.
    Equals,
    /// `field!=value`.
    NotEquals,
}

impl FieldOperator {
    /// The operator as written in a selector (`=` or `!=`).
    pub fn as_str(self) -> &'static str {
        match self {
            FieldOperator::Equals => "=",
            FieldOperator::NotEquals => "!=",
        }
    }
}

/// One term of a [`FieldSelector`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldRequirement {
    /// The field path, e.g. `metadata.name`.
    pub field: String,
    /// `=` or `!=`.
    pub operator: FieldOperator,
    /// The value, unescaped.
    pub value: String,
}

impl FieldRequirement {
    /// Whether the field's value satisfies the term. A field `get` does not resolve
    /// counts as the empty string, as with Kubernetes' `fields.Set`.
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        let actual = get(&self.field).unwrap_or_default();
        match self.operator {
            FieldOperator::Equals => actual == self.value,
            FieldOperator::NotEquals => actual != self.value,
        }
    }
}

impl fmt::Display for FieldRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}{}",
            self.field,
            self.operator.as_str(),
            escape_value(&self.value)
        )
    }
}

/// A parsed field selector: the AND of its [`FieldRequirement`]s. The empty selector
/// (from `""`) selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// The selector that matches everything.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Parses the string syntax of `?fieldSelector=` as Kubernetes' `fields.ParseSelector`:
    /// terms are split on unescaped commas and sorted, empty terms are skipped.
    ///
    /// Errors carry Kubernetes' message: `invalid selector: 'x'; can't understand 'x'`,
    /// `invalid field selector: invalid escape sequence: \x`, or
    /// `invalid field selector: unescaped character in value: 61` (the character's code,
    /// as Kubernetes prints it).
    pub fn parse(selector: &str) -> Result<Self, SelectorError> {
        let mut parts = split_terms(selector);
        parts.sort_unstable();
        let mut requirements = Vec::new();
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((lhs, op, rhs)) = split_term(part) else {
                return Err(SelectorError::new(format!(
                    "invalid selector: '{selector}'; can't understand '{part}'"
                )));
            };
            requirements.push(FieldRequirement {
                field: lhs.to_string(),
                operator: op,
                value: unescape_value(rhs)?,
            });
        }
        // Sorted again by the canonical form, so that what `Display` writes parses back
        // into the same selector (`a==z,a=b` is `a=z,a=b`, which sorts the other way).
        requirements.sort_by_cached_key(ToString::to_string);
        Ok(Self { requirements })
    }

    /// The terms, in the (sorted) order Kubernetes keeps them; a server checks each
    /// `field` against the fields the resource supports.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// True when the selector has no term (it matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The value `field` must equal, if some `=` term requires it (Kubernetes'
    /// `RequiresExactMatch`), e.g. to look up a single object by `metadata.name`.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.operator == FieldOperator::Equals && r.field == field)
            .map(|r| r.value.as_str())
    }

    /// Whether every term holds; `get` resolves a field path such as `metadata.name`
    /// to its string value (`None` counts as the empty string).
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements.iter().all(|r| r.matches(&get))
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        super::write_comma_separated(f, &self.requirements)
    }
}

impl std::str::FromStr for FieldSelector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// Escapes `\`, `,` and `=` in a field selector value (Kubernetes' `fields.EscapeValue`).
pub fn escape_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Undoes [`escape_value`] (Kubernetes' `fields.UnescapeValue`): `\\`, `\,` and `\=` are
/// the only escapes, and `,` or `=` must be escaped.
pub fn unescape_value(s: &str) -> Result<String, SelectorError> {
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(SelectorError::new(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                )));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(SelectorError::new(format!(
                    "invalid field selector: unescaped character in value: {}",
                    u32::from(c)
                )));
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err(SelectorError::new(
            "invalid field selector: invalid escape sequence: \\",
        ));
    }
    Ok(out)
}

/// Splits on commas not preceded by a backslash escape.
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// Splits a term at its first operator (`!=`, `==`, then `=`, tried at each position).
fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, kind) in [
            ("!=", FieldOperator::NotEquals),
            ("==", FieldOperator::Equals),
            ("=", FieldOperator::Equals),
        ] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((&term[..i], kind, rhs));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `selectors` fuzz target: terms sorted as written came back in
    /// another order once shown.
    #[test]
    fn what_is_shown_parses_back_into_the_same_selector() {
        for text in ["a==z,a=b", "b!=x,a==\\,,a=\\=", "x=1,,x==0", "k=\\\\,k!="] {
            let sel = FieldSelector::parse(text).unwrap();
            let shown = sel.to_string();
            assert_eq!(
                FieldSelector::parse(&shown).unwrap(),
                sel,
                "{text} → {shown}"
            );
        }
        assert_eq!(
            FieldSelector::parse("a==z,a=b").unwrap().to_string(),
            "a=b,a=z"
        );
    }
}
