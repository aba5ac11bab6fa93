//! The JSONPath subset printer columns are written in, evaluated as client-go's
//! `jsonpath` package does with missing keys allowed.
//!
//! Supported: `.field`, `['field.with.dots']` / `["..."]`, `[0]`, `[-1]`, `[*]`, `.*`,
//! and filters `[?(@.path)]`, `[?(@.path OP literal)]` with `==`, `!=`, `<`, `<=`,
//! `>`, `>=` against a quoted string, a number, `true`, `false` or `null`. Slices and
//! recursive descent parse as errors, and such a column prints nothing.

use std::cmp::Ordering;

use serde_json::Value;

/// A parsed column path.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ColumnPath {
    segments: Vec<Segment>,
}

#[derive(Clone, Debug, PartialEq)]
enum Segment {
    Field(String),
    Index(i64),
    Wildcard,
    Filter(Filter),
}

#[derive(Clone, Debug, PartialEq)]
struct Filter {
    left: Vec<Segment>,
    /// `None` for an existence test.
    compare: Option<(Op, Value)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl ColumnPath {
    /// Parses a path such as `.status.conditions[?(@.type=="Ready")].status`; the
    /// `{...}` braces of a template are accepted around it.
    pub fn parse(path: &str) -> Result<Self, String> {
        let path = path.trim();
        let path = path
            .strip_prefix('{')
            .and_then(|p| p.strip_suffix('}'))
            .unwrap_or(path);
        let mut p = Parser {
            s: path.as_bytes(),
            i: 0,
        };
        let segments = p.segments(false)?;
        if p.i != p.s.len() {
            return Err(format!("unexpected {:?} in {path:?}", &path[p.i..]));
        }
        Ok(Self { segments })
    }

    /// Every value the path selects in `root`, in document order.
    pub fn find<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        eval(&self.segments, root)
    }
}

fn eval<'a>(segments: &[Segment], root: &'a Value) -> Vec<&'a Value> {
    let mut current = vec![root];
    for seg in segments {
        let mut next = Vec::new();
        for v in current {
            match seg {
                Segment::Field(name) => next.extend(v.get(name.as_str())),
                Segment::Index(i) => {
                    if let Some(items) = v.as_array() {
                        let len = items.len() as i64;
                        let at = if *i < 0 { len + i } else { *i };
                        if (0..len).contains(&at) {
                            next.push(&items[at as usize]);
                        }
                    }
                }
                Segment::Wildcard => match v {
                    Value::Array(items) => next.extend(items.iter()),
                    Value::Object(map) => next.extend(map.values()),
                    _ => {}
                },
                Segment::Filter(f) => {
                    if let Some(items) = v.as_array() {
                        next.extend(items.iter().filter(|item| f.matches(item)));
                    }
                }
            }
        }
        current = next;
    }
    current
}

impl Filter {
    fn matches(&self, item: &Value) -> bool {
        let found = eval(&self.left, item);
        let Some((op, literal)) = &self.compare else {
            return !found.is_empty();
        };
        found.into_iter().any(|v| match op {
            Op::Eq => loosely_equal(v, literal),
            Op::Ne => !loosely_equal(v, literal),
            _ => match (v.as_f64(), literal.as_f64()) {
                (Some(a), Some(b)) => {
                    let ord = a.partial_cmp(&b);
                    match op {
                        Op::Lt => ord == Some(Ordering::Less),
                        Op::Le => matches!(ord, Some(Ordering::Less | Ordering::Equal)),
                        Op::Gt => ord == Some(Ordering::Greater),
                        _ => matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
                    }
                }
                _ => false,
            },
        })
    }
}

/// Numbers compare by value, so `1` equals `1.0`.
fn loosely_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek() == Some(b' ') {
            self.i += 1;
        }
    }

    /// Segments up to the end, or (inside a filter) up to an operator or `)`.
    fn segments(&mut self, in_filter: bool) -> Result<Vec<Segment>, String> {
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                b'.' => {
                    self.i += 1;
                    match self.peek() {
                        Some(b'.') => return Err("recursive descent is not supported".into()),
                        Some(b'*') => {
                            self.i += 1;
                            out.push(Segment::Wildcard);
                        }
                        // A trailing or lone `.` selects the current value.
                        None | Some(b'[') => {}
                        Some(_) => out.push(Segment::Field(self.name())),
                    }
                }
                b'[' => {
                    self.i += 1;
                    out.push(self.bracket()?);
                }
                b' ' | b'=' | b'!' | b'<' | b'>' | b')' if in_filter => break,
                _ => return Err(format!("unexpected character {:?}", c as char)),
            }
        }
        Ok(out)
    }

    fn name(&mut self) -> String {
        let start = self.i;
        while let Some(c) = self.peek() {
            if matches!(c, b'.' | b'[' | b' ' | b'=' | b'!' | b'<' | b'>' | b')') {
                break;
            }
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn bracket(&mut self) -> Result<Segment, String> {
        self.skip_spaces();
        let seg = match self.peek() {
            Some(b'*') => {
                self.i += 1;
                Segment::Wildcard
            }
            Some(q @ (b'\'' | b'"')) => Segment::Field(self.quoted(q)?),
            Some(b'?') => {
                self.i += 1;
                self.expect(b'(')?;
                let filter = self.filter()?;
                self.expect(b')')?;
                Segment::Filter(filter)
            }
            _ => {
                let start = self.i;
                while matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                let index = text
                    .parse()
                    .map_err(|_| format!("unsupported subscript at {start}"))?;
                Segment::Index(index)
            }
        };
        self.skip_spaces();
        self.expect(b']')?;
        Ok(seg)
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        self.skip_spaces();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected {:?} at {}", c as char, self.i))
        }
    }

    fn quoted(&mut self, quote: u8) -> Result<String, String> {
        self.i += 1;
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == quote {
                let s = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.i += 1;
                return Ok(s);
            }
            self.i += 1;
        }
        Err("unterminated quote".into())
    }

    fn filter(&mut self) -> Result<Filter, String> {
        self.skip_spaces();
        self.expect(b'@')?;
        let left = self.segments(true)?;
        self.skip_spaces();
        let op = match (self.peek(), self.s.get(self.i + 1).copied()) {
            (Some(b')'), _) => {
                return Ok(Filter {
                    left,
                    compare: None,
                });
            }
            (Some(b'='), Some(b'=')) => Op::Eq,
            (Some(b'!'), Some(b'=')) => Op::Ne,
            (Some(b'<'), Some(b'=')) => Op::Le,
            (Some(b'>'), Some(b'=')) => Op::Ge,
            (Some(b'<'), _) => Op::Lt,
            (Some(b'>'), _) => Op::Gt,
            _ => return Err(format!("expected a comparison at {}", self.i)),
        };
        self.i += if matches!(op, Op::Lt | Op::Gt) { 1 } else { 2 };
        self.skip_spaces();
        let literal = match self.peek() {
            Some(q @ (b'\'' | b'"')) => Value::String(self.quoted(q)?),
            _ => {
                let start = self.i;
                while !matches!(self.peek(), None | Some(b')' | b' ')) {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                serde_json::from_str(text).map_err(|_| format!("unsupported literal {text:?}"))?
            }
        };
        self.skip_spaces();
        Ok(Filter {
            left,
            compare: Some((op, literal)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ColumnPath;
    use serde_json::{Value, json};

    fn first(path: &str, obj: &Value) -> Option<Value> {
        ColumnPath::parse(path)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .find(obj)
            .first()
            .map(|v| (*v).clone())
    }

    #[test]
    fn paths_printer_columns_use() {
        let obj = json!({
            "metadata": {"labels": {"app.kubernetes.io/name": "web"}},
            "spec": {"replicas": 3, "ports": [{"name": "http"}, {"name": "grpc"}]},
            "status": {
                "conditions": [
                    {"type": "Synced", "status": "False", "message": "m0"},
                    {"type": "Ready", "status": "True", "message": "m1", "observedGeneration": 2}
                ],
                "addresses": [{"value": "10.0.0.1"}, {"value": "10.0.0.2"}]
            }
        });
        assert_eq!(first(".spec.replicas", &obj), Some(json!(3)));
        assert_eq!(first("{.spec.replicas}", &obj), Some(json!(3)));
        assert_eq!(
            first(".status.conditions[0].message", &obj),
            Some(json!("m0"))
        );
        assert_eq!(
            first(".status.conditions[-1].type", &obj),
            Some(json!("Ready"))
        );
        assert_eq!(
            first(r#".status.conditions[?(@.type=="Ready")].status"#, &obj),
            Some(json!("True"))
        );
        assert_eq!(
            first(".status.conditions[?(@.type == 'Synced')].status", &obj),
            Some(json!("False"))
        );
        assert_eq!(
            first(r#".status.conditions[?(@.type != "Synced")].type"#, &obj),
            Some(json!("Ready"))
        );
        assert_eq!(
            first(
                ".status.conditions[?(@.observedGeneration >= 2)].type",
                &obj
            ),
            Some(json!("Ready"))
        );
        assert_eq!(
            first(".status.conditions[?(@.observedGeneration)].message", &obj),
            Some(json!("m1"))
        );
        assert_eq!(
            first(".status.addresses[*].value", &obj),
            Some(json!("10.0.0.1"))
        );
        assert_eq!(
            ColumnPath::parse(".status.addresses[*].value")
                .unwrap()
                .find(&obj)
                .len(),
            2
        );
        assert_eq!(
            first(".metadata.labels['app.kubernetes.io/name']", &obj),
            Some(json!("web"))
        );
        assert_eq!(
            first(r#".metadata.labels["app.kubernetes.io/name"]"#, &obj),
            Some(json!("web"))
        );
        assert_eq!(first(".spec.ports[*].name", &obj), Some(json!("http")));
        assert_eq!(first(".spec.missing.deeper", &obj), None);
        assert_eq!(first(".status.conditions[7].type", &obj), None);
        assert_eq!(first(".", &obj), Some(obj.clone()));
    }

    #[test]
    fn unsupported_forms_are_errors() {
        for bad in [".a..b", ".a[1:2]", ".a[?(@.x ~ 1)]", ".a[", "a.b"] {
            assert!(ColumnPath::parse(bad).is_err(), "{bad}");
        }
    }
}
