//! YAML → JSON values, keeping where every node came from.
//!
//! Parsing knows nothing about CRDs: it turns each YAML document into a
//! `serde_json::Value` plus a [`SourceMap`] from document paths to positions, so that any
//! later check that reports a field path can be pointed at a file, line and column.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kapi_core::field::{FieldPath, PathSegment};
use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use serde_json::{Map, Number, Value};

use crate::diagnostic::Diagnostic;

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

/// Where each node of one document is: map entries by their key, list items by the item.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    positions: HashMap<String, Position>,
}

impl SourceMap {
    /// The position of the node at `path`, or of its nearest ancestor that exists
    /// (a missing required field is reported where its parent is).
    pub fn position_of(&self, path: &FieldPath) -> Position {
        let segments = path.segments();
        for len in (0..=segments.len()).rev() {
            let key = document_key(&segments[..len]);
            if let Some(p) = self.positions.get(&key) {
                return *p;
            }
        }
        Position::default()
    }
}

fn document_key(segments: &[PathSegment]) -> String {
    let mut p = FieldPath::root();
    for s in segments {
        p = match s {
            PathSegment::Field(f) | PathSegment::Key(f) => p.child(f),
            PathSegment::Index(i) => p.index(*i),
        };
    }
    p.to_document_path()
}

/// One YAML document of a schema file.
#[derive(Clone, Debug)]
pub struct Document {
    /// The file it came from.
    pub file: PathBuf,
    /// The document as JSON.
    pub value: Value,
    /// Positions of its nodes.
    pub source_map: SourceMap,
}

impl Document {
    /// A diagnostic for `path` in this document.
    pub fn diagnostic(&self, path: &FieldPath, message: impl Into<String>) -> Diagnostic {
        let pos = self.source_map.position_of(path);
        Diagnostic {
            file: self.file.clone(),
            line: pos.line,
            column: pos.column,
            path: path.to_document_path(),
            message: message.into(),
        }
    }
}

/// Parses every non-empty document of `source`, read from `file`.
pub fn parse_documents(file: &Path, source: &str) -> Result<Vec<Document>, Vec<Diagnostic>> {
    let nodes = MarkedYaml::load_from_str(source).map_err(|e| {
        vec![Diagnostic {
            file: file.to_path_buf(),
            line: e.marker().line(),
            column: e.marker().col() + 1,
            path: String::new(),
            message: format!("invalid YAML: {}", e.info()),
        }]
    })?;
    let mut docs = Vec::new();
    let mut errs = Vec::new();
    for node in &nodes {
        if matches!(node.data, YamlData::Value(Scalar::Null)) {
            continue; // an empty document, e.g. after a trailing `---`
        }
        let mut converter = Converter {
            file,
            positions: HashMap::new(),
            errs: Vec::new(),
        };
        let root = FieldPath::root();
        converter.record(&root, node);
        let value = converter.convert(node, &root);
        if converter.errs.is_empty() {
            docs.push(Document {
                file: file.to_path_buf(),
                value,
                source_map: SourceMap {
                    positions: converter.positions,
                },
            });
        } else {
            errs.extend(converter.errs);
        }
    }
    if errs.is_empty() { Ok(docs) } else { Err(errs) }
}

struct Converter<'a> {
    file: &'a Path,
    positions: HashMap<String, Position>,
    errs: Vec<Diagnostic>,
}

impl Converter<'_> {
    fn position(node: &MarkedYaml<'_>) -> Position {
        Position {
            line: node.span.start.line(),
            column: node.span.start.col() + 1,
        }
    }

    fn record(&mut self, path: &FieldPath, node: &MarkedYaml<'_>) {
        self.positions
            .insert(path.to_document_path(), Self::position(node));
    }

    fn error(&mut self, node: &MarkedYaml<'_>, path: &FieldPath, message: String) {
        let pos = Self::position(node);
        self.errs.push(Diagnostic {
            file: self.file.to_path_buf(),
            line: pos.line,
            column: pos.column,
            path: path.to_document_path(),
            message,
        });
    }

    fn convert(&mut self, node: &MarkedYaml<'_>, path: &FieldPath) -> Value {
        match &node.data {
            YamlData::Value(s) => self.scalar(node, s, path),
            YamlData::Representation(..) => {
                self.error(node, path, "unresolved YAML scalar".into());
                Value::Null
            }
            YamlData::Tagged(_, inner) => self.convert(inner, path),
            YamlData::Sequence(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let p = path.index(i);
                        self.record(&p, item);
                        self.convert(item, &p)
                    })
                    .collect(),
            ),
            YamlData::Mapping(entries) => {
                let mut map = Map::new();
                for (k, v) in entries {
                    let key = match &k.data {
                        YamlData::Value(Scalar::String(s)) => s.to_string(),
                        YamlData::Value(Scalar::Integer(i)) => i.to_string(),
                        YamlData::Value(Scalar::Boolean(b)) => b.to_string(),
                        YamlData::Value(Scalar::FloatingPoint(f)) => f.to_string(),
                        YamlData::Value(Scalar::Null) => "null".to_string(),
                        _ => {
                            self.error(k, path, "mapping keys must be scalars".into());
                            continue;
                        }
                    };
                    let p = path.child(&key);
                    self.record(&p, k);
                    let value = self.convert(v, &p);
                    map.insert(key, value);
                }
                Value::Object(map)
            }
            YamlData::Alias(_) => {
                self.error(
                    node,
                    path,
                    "YAML aliases are not supported in schema files".into(),
                );
                Value::Null
            }
            YamlData::BadValue => {
                self.error(node, path, "invalid YAML value".into());
                Value::Null
            }
        }
    }

    fn scalar(&mut self, node: &MarkedYaml<'_>, s: &Scalar<'_>, path: &FieldPath) -> Value {
        match s {
            Scalar::Null => Value::Null,
            Scalar::Boolean(b) => Value::Bool(*b),
            Scalar::Integer(i) => Value::from(*i),
            Scalar::FloatingPoint(f) => match Number::from_f64(f.into_inner()) {
                Some(n) => Value::Number(n),
                None => {
                    self.error(
                        node,
                        path,
                        format!("number {f} cannot be represented in JSON"),
                    );
                    Value::Null
                }
            },
            Scalar::String(s) => Value::String(s.to_string()),
        }
    }
}
