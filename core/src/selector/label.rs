//! Label selectors: the string syntax of `?labelSelector=`, as Kubernetes'
//! `k8s.io/apimachinery/pkg/labels` parses, validates, renders and matches it.
//!
//! A selector is a comma-separated list of requirements, all of which must hold:
//!
//! | syntax           | [`Operator`]                  | holds when                                   |
//! |------------------|-------------------------------|----------------------------------------------|
//! | `k=v`, `k==v`    | `Equals`, `DoubleEquals`      | label `k` exists and equals `v`              |
//! | `k!=v`           | `NotEquals`                   | label `k` is absent or differs from `v`      |
//! | `k in (a,b)`     | `In`                          | label `k` exists and is one of the values    |
//! | `k notin (a,b)`  | `NotIn`                       | label `k` is absent or none of the values    |
//! | `k`              | `Exists`                      | label `k` exists                             |
//! | `!k`             | `DoesNotExist`                | label `k` is absent                          |
//! | `k>1`, `k<1`     | `GreaterThan`, `LessThan`     | label `k` is an integer above / below        |
//!
//! Whitespace between tokens is ignored; a value may be empty (`k=`, `k in ()`).
//! Requirements are kept sorted by key (stably), values sorted and deduplicated,
//! so [`LabelSelector`]'s `Display` gives Kubernetes' canonical string.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde_json::Value;

use super::SelectorError;
use crate::field::{FieldError, FieldPath};
use kapi_validation::go::aggregate;
use kapi_validation::{label_value_errors, qualified_name_errors as label_key_errors};

/// The operator of one label [`Requirement`], as `k8s.io/apimachinery/pkg/selection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `k=v`.
    Equals,
    /// `k==v`.
    DoubleEquals,
    /// `k!=v`.
    NotEquals,
    /// `k in (a,b)`.
    In,
    /// `k notin (a,b)`.
    NotIn,
    /// `k`.
    Exists,
    /// `!k`.
    DoesNotExist,
    /// `k>n` (`gt`).
    GreaterThan,
    /// `k<n` (`lt`).
    LessThan,
}

impl Operator {
    /// Kubernetes' name of the operator (`=`, `==`, `!=`, `in`, `notin`, `exists`,
    /// `!`, `gt`, `lt`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => "in",
            Operator::NotIn => "notin",
            Operator::Exists => "exists",
            Operator::DoesNotExist => "!",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of labels a selector can be matched against.
///
/// Implemented for `BTreeMap<String, String>`, `HashMap<String, String>` and a JSON
/// object (`metadata.labels` as a `serde_json::Map`, where non-string values count as
/// absent).
pub trait Labels {
    /// The value of label `key`, if present.
    fn label(&self, key: &str) -> Option<&str>;
}

impl Labels for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl<S: std::hash::BuildHasher> Labels for HashMap<String, String, S> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl Labels for serde_json::Map<String, Value> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
}

impl<L: Labels + ?Sized> Labels for &L {
    fn label(&self, key: &str) -> Option<&str> {
        (**self).label(key)
    }
}

/// One requirement of a [`LabelSelector`]: a key, an operator and (sorted, unique)
/// values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// Builds and validates a requirement as Kubernetes' `labels.NewRequirement`: the
    /// key must be a qualified name, `in`/`notin` need at least one value, `=`/`==`/`!=`
    /// exactly one, exists/does-not-exist none, `gt`/`lt` one integer; every value must
    /// be a valid label value. Values are sorted and deduplicated.
    ///
    /// This is also how `matchExpressions` of a `metav1.LabelSelector` can be checked.
    pub fn new(
        key: impl Into<String>,
        operator: Operator,
        values: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<Self, SelectorError> {
        let key = key.into();
        let mut errs: Vec<String> = Vec::new();
        if let Err(e) = validate_label_key(&key, &FieldPath::new("key")) {
            errs.push(e.to_string());
        }
        Self::build(key, operator, values.into_iter().map(Into::into), errs)
    }

    /// `NewRequirement` after the key check: the operator/value checks.
    fn build(
        key: String,
        operator: Operator,
        values: impl Iterator<Item = String>,
        mut errs: Vec<String>,
    ) -> Result<Self, SelectorError> {
        let mut values: Vec<String> = values.collect();
        values.sort();
        values.dedup();
        let vpath = FieldPath::new("values");
        let list = Value::from(values.clone());
        match operator {
            Operator::In | Operator::NotIn => {
                if values.is_empty() {
                    errs.push(
                        FieldError::invalid(
                            &vpath,
                            list,
                            "for 'in', 'notin' operators, values set can't be empty",
                        )
                        .to_string(),
                    );
                }
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals => {
                if values.len() != 1 {
                    errs.push(
                        FieldError::invalid(
                            &vpath,
                            list,
                            "exact-match compatibility requires one single value",
                        )
                        .to_string(),
                    );
                }
            }
            Operator::Exists | Operator::DoesNotExist => {
                if !values.is_empty() {
                    errs.push(
                        FieldError::invalid(
                            &vpath,
                            list,
                            "values set must be empty for exists and does not exist",
                        )
                        .to_string(),
                    );
                }
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(
                        FieldError::invalid(
                            &vpath,
                            list,
                            "for 'Gt', 'Lt' operators, exactly one value is required",
                        )
                        .to_string(),
                    );
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(
                            FieldError::invalid(
                                &vpath.index(i),
                                v.as_str(),
                                "for 'Gt', 'Lt' operators, the value must be an integer",
                            )
                            .to_string(),
                        );
                    }
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let msgs = label_value_errors(v);
            if !msgs.is_empty() {
                errs.push(
                    FieldError::invalid(&vpath.index(i).key(&key), v.as_str(), msgs.join("; "))
                        .to_string(),
                );
            }
        }
        if errs.is_empty() {
            Ok(Self {
                key,
                operator,
                values,
            })
        } else {
            Err(SelectorError::new(aggregate(&errs)))
        }
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, sorted and without duplicates (empty for exists / does not exist).
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Whether the labels satisfy this requirement, as Kubernetes' `Requirement.Matches`.
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        // Values are sorted: a selector of many values costs a list log(values) per
        // object, not values.
        let has = |v: &str| self.values.binary_search_by(|x| x.as_str().cmp(v)).is_ok();
        match self.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::In => {
                labels.label(&self.key).is_some_and(has)
            }
            Operator::NotEquals | Operator::NotIn => !labels.label(&self.key).is_some_and(has),
            Operator::Exists => labels.label(&self.key).is_some(),
            Operator::DoesNotExist => labels.label(&self.key).is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(actual) = labels.label(&self.key).and_then(|v| v.parse::<i64>().ok())
                else {
                    return false;
                };
                let [wanted] = self.values.as_slice() else {
                    return false;
                };
                let Ok(wanted) = wanted.parse::<i64>() else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    actual > wanted
                } else {
                    actual < wanted
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let op = match self.operator {
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in ",
            Operator::NotIn => " notin ",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
        };
        f.write_str(op)?;
        let set = matches!(self.operator, Operator::In | Operator::NotIn);
        if set {
            f.write_str("(")?;
        }
        f.write_str(&self.values.join(","))?;
        if set {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A parsed label selector: the AND of its [`Requirement`]s, sorted by key. The empty
/// selector (from `""`) selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// The selector that matches every label set.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Parses the string syntax of `?labelSelector=` as Kubernetes' `labels.Parse`.
    ///
    /// Errors carry Kubernetes' message, e.g.
    /// `unable to parse requirement: found '', expected: identifier` or
    /// `found ')', expected: !, identifier, or 'end of string'`.
    pub fn parse(selector: &str) -> Result<Self, SelectorError> {
        let mut parser = Parser::new(selector);
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self { requirements })
    }

    /// A selector made of these requirements (sorted by key).
    pub fn from_requirements(mut requirements: Vec<Requirement>) -> Self {
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Self { requirements }
    }

    /// A `metav1.LabelSelector` object (`matchLabels`, `matchExpressions`) as a selector,
    /// as `metav1.LabelSelectorAsSelector` converts it; a plain `{key: value}` map (a
    /// ReplicationController's selector) selects those labels. `null` or `{}` selects
    /// everything.
    pub fn from_json(selector: &serde_json::Value) -> Result<Self, SelectorError> {
        use serde_json::Value;
        let Some(obj) = selector.as_object() else {
            return Ok(Self::everything());
        };
        let is_label_selector = obj
            .keys()
            .all(|k| k == "matchLabels" || k == "matchExpressions")
            && obj.values().all(|v| !v.is_string());
        let mut reqs = Vec::new();
        let labels = if is_label_selector {
            obj.get("matchLabels").and_then(Value::as_object)
        } else {
            Some(obj)
        };
        for (k, v) in labels.into_iter().flatten() {
            let v = v.as_str().unwrap_or_default();
            reqs.push(Requirement::new(k.as_str(), Operator::Equals, [v])?);
        }
        let exprs = obj.get("matchExpressions").and_then(Value::as_array);
        for e in exprs.into_iter().flatten().filter(|_| is_label_selector) {
            let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
            let op = match e
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or_default()
            {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(SelectorError::new(format!(
                        "{other:?} is not a valid label selector operator"
                    )));
                }
            };
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|vs| vs.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            reqs.push(Requirement::new(key, op, values)?);
        }
        Ok(Self::from_requirements(reqs))
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// True when the selector has no requirement (it matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether the labels satisfy every requirement.
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        super::write_comma_separated(f, &self.requirements)
    }
}

impl std::str::FromStr for LabelSelector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

// ---------------------------------------------------------------------------------
// Validation: the rules and words are `kapi_validation`'s.

fn validate_label_key(key: &str, path: &FieldPath) -> Result<(), FieldError> {
    let errs = label_key_errors(key);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(FieldError::invalid(path, key, errs.join("; ")))
    }
}

// ---------------------------------------------------------------------------------
// Lexer and parser (the grammar of k8s.io/apimachinery/pkg/labels/selector.go).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    /// The next byte, or 0 at the end (a NUL byte also reads as 0, as in Kubernetes).
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn scan_id_or_keyword(&mut self) -> (Token, String) {
        let mut buf = Vec::new();
        loop {
            let c = self.read();
            if c == 0 {
                break;
            }
            if is_special(c) || is_whitespace(c) {
                self.unread();
                break;
            }
            buf.push(c);
        }
        let tok = keyword(&buf).unwrap_or(Token::Identifier);
        (tok, String::from_utf8_lossy(&buf).into_owned())
    }

    fn scan_special(&mut self) -> (Token, String) {
        let mut buf = Vec::new();
        let mut last: Option<(Token, usize)> = None;
        loop {
            let c = self.read();
            if c == 0 {
                break;
            }
            if !is_special(c) {
                self.unread();
                break;
            }
            buf.push(c);
            if let Some(t) = keyword(&buf) {
                last = Some((t, buf.len()));
            } else if last.is_some() {
                self.unread();
                break;
            }
        }
        match last {
            Some((t, n)) => (t, String::from_utf8_lossy(&buf[..n]).into_owned()),
            // Unreachable: every special character is a token by itself.
            None => (Token::EndOfString, String::new()),
        }
    }

    fn lex(&mut self) -> (Token, String) {
        let mut c = self.read();
        while is_whitespace(c) {
            c = self.read();
        }
        if c == 0 {
            return (Token::EndOfString, String::new());
        }
        self.unread();
        if is_special(c) {
            self.scan_special()
        } else {
            self.scan_id_or_keyword()
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

impl Parser {
    fn new(selector: &str) -> Self {
        let mut lexer = Lexer {
            s: selector.as_bytes(),
            pos: 0,
        };
        let mut items = Vec::new();
        loop {
            let (t, lit) = lexer.lex();
            items.push((t, lit));
            if t == Token::EndOfString {
                break;
            }
        }
        Self { items, position: 0 }
    }

    fn item(&self, i: usize, ctx: Context) -> (Token, String) {
        let (t, lit) = self
            .items
            .get(i)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()));
        let t = match (ctx, t) {
            (Context::Values, Token::In | Token::NotIn) => Token::Identifier,
            _ => t,
        };
        (t, lit)
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        self.item(self.position, ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let r = self.item(self.position, ctx);
        self.position += 1;
        r
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut reqs = Vec::new();
        loop {
            let (t, lit) = self.lookahead(Context::Values);
            match t {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self.parse_requirement().map_err(|e| {
                        SelectorError::new(format!("unable to parse requirement: {e}"))
                    })?;
                    reqs.push(r);
                    let (t, lit) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(reqs),
                        Token::Comma => {
                            let (t2, lit2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(SelectorError::new(format!(
                                    "found '{lit2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{lit}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Token::EndOfString => return Ok(reqs),
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, SelectorError> {
        let (key, op) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = op {
            return Requirement::build(key, op, std::iter::empty(), Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::build(key, op, values.into_iter(), Vec::new())
    }

    fn parse_key_and_infer_operator(
        &mut self,
    ) -> Result<(String, Option<Operator>), SelectorError> {
        let mut op = None;
        let (mut t, mut lit) = self.consume(Context::Values);
        if t == Token::DoesNotExist {
            op = Some(Operator::DoesNotExist);
            (t, lit) = self.consume(Context::Values);
        }
        if t != Token::Identifier {
            return Err(SelectorError::new(format!(
                "found '{lit}', expected: identifier"
            )));
        }
        validate_label_key(&lit, &FieldPath::new("<nil>"))
            .map_err(|e| SelectorError::new(e.to_string()))?;
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) && op.is_none() {
            op = Some(Operator::Exists);
        }
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<Operator, SelectorError> {
        let (t, lit) = self.consume(Context::KeyAndOperator);
        Ok(match t {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(SelectorError::new(format!(
                    "found '{lit}', expected: {BINARY_OPERATORS}"
                )));
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, SelectorError> {
        let (t, lit) = self.consume(Context::Values);
        if t != Token::OpenPar {
            return Err(SelectorError::new(format!("found '{lit}' expected: '('")));
        }
        let (t, lit) = self.lookahead(Context::Values);
        match t {
            Token::Identifier | Token::Comma => {
                let s = self.parse_identifiers_list()?;
                let (t, _) = self.consume(Context::Values);
                if t != Token::ClosedPar {
                    // Kubernetes reports the token that followed '(' here.
                    return Err(SelectorError::new(format!("found '{lit}', expected: ')'")));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(SelectorError::new(format!(
                "found '{lit}', expected: ',', ')' or identifier"
            ))),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, SelectorError> {
        let mut s: Vec<String> = Vec::new();
        loop {
            let (t, lit) = self.consume(Context::Values);
            match t {
                Token::Identifier => {
                    s.push(lit);
                    let (t2, lit2) = self.lookahead(Context::Values);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(s),
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{lit2}', expected: ',' or ')'"
                            )));
                        }
                    }
                }
                Token::Comma => {
                    if s.is_empty() {
                        s.push(String::new());
                    }
                    let (t2, _) = self.lookahead(Context::Values);
                    if t2 == Token::ClosedPar {
                        s.push(String::new());
                        return Ok(s);
                    }
                    if t2 == Token::Comma {
                        s.push(String::new());
                    }
                }
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: ',', or identifier"
                    )));
                }
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, SelectorError> {
        let (t, _) = self.lookahead(Context::Values);
        if matches!(t, Token::EndOfString | Token::Comma) {
            return Ok(vec![String::new()]);
        }
        let (t, lit) = self.consume(Context::Values);
        if t == Token::Identifier {
            Ok(vec![lit])
        } else {
            Err(SelectorError::new(format!(
                "found '{lit}', expected: identifier"
            )))
        }
    }
}
