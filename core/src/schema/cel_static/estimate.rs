//! One walk over a compiled expression that types each step from the schema, reports
//! fields the schema does not have, and adds up cel-go's worst-case cost.

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, LiteralValue, SourceInfo};

use super::types::{Root, Shape, Ty, Val, item_ty, shape, value_of};
use crate::schema::{Schema, SchemaType};

/// What [`check`] found out about an expression that passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// The most the expression can cost, in cel-go's units.
    pub max_cost: u64,
}

/// Type-checks `expr` with `variables` bound, and estimates its cost. The error is
/// cel-go's report (`ERROR: <input>:1:5: undefined field 'shelfs'`, with the line and a
/// caret), one line per finding.
pub fn check<'s>(
    expr: &IdedExpr,
    info: &SourceInfo,
    variables: &[(&str, Ty<'s>)],
) -> Result<Estimate, String> {
    let mut walker = Walker {
        scopes: variables
            .iter()
            .map(|(name, ty)| (name.to_string(), value_of(ty.clone())))
            .collect(),
        errors: Vec::new(),
    };
    let v = walker.walk(expr);
    if walker.errors.is_empty() {
        return Ok(Estimate { max_cost: v.cost });
    }
    Err(walker
        .errors
        .iter()
        .map(|(id, msg)| report(info, *id, msg))
        .collect::<Vec<_>>()
        .join("\n"))
}

/// cel-go's rendering of one issue: position, message, the line and a caret.
fn report(info: &SourceInfo, id: u64, msg: &str) -> String {
    let Some((start, _)) = info.offset_for(id) else {
        return format!("ERROR: <input>: {msg}");
    };
    // An offset that is not a character boundary (it should be) reports at the end.
    let before = info.source.get(..start as usize).unwrap_or(&info.source);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    let text = info.source.lines().nth(line - 1).unwrap_or("");
    format!(
        "ERROR: <input>:{line}:{col}: {msg}\n | {text}\n | {}^",
        ".".repeat(col - 1)
    )
}

struct Walker<'s> {
    /// Variables, the innermost last.
    scopes: Vec<(String, Val<'s>)>,
    errors: Vec<(u64, String)>,
}

impl<'s> Walker<'s> {
    fn walk(&mut self, expr: &IdedExpr) -> Val<'s> {
        match &expr.expr {
            Expr::Literal(lit) => literal(lit),
            Expr::Ident(name) => {
                let mut v = self
                    .scopes
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| value_of(Ty::Dyn));
                v.cost = 1;
                v
            }
            Expr::Select(sel) => {
                let operand = self.walk(&sel.operand);
                let (ty, charged) = self.select(expr.id, &operand.ty, &sel.field);
                if sel.test {
                    return Val {
                        ty: Ty::Bool,
                        size: Some(1),
                        cost: operand.cost.saturating_add(1),
                    };
                }
                let mut v = value_of(ty);
                v.cost = operand.cost.saturating_add(u64::from(charged));
                v
            }
            Expr::Call(call) => {
                let target = call.target.as_deref().map(|t| self.walk(t));
                let args: Vec<Val<'s>> = call.args.iter().map(|a| self.walk(a)).collect();
                super::calls::call(&call.func_name, target, args)
            }
            Expr::List(list) => {
                let items: Vec<Val<'s>> = list.elements.iter().map(|e| self.walk(e)).collect();
                let cost = items
                    .iter()
                    .fold(10u64, |sum, v| sum.saturating_add(v.cost));
                let item = items.first().map(|v| v.ty.clone()).unwrap_or(Ty::Dyn);
                let item_size = items.iter().filter_map(|v| v.size).max();
                Val {
                    ty: Ty::List(Box::new(item), item_size),
                    size: Some(items.len() as u64),
                    cost,
                }
            }
            Expr::Map(map) => self.entries(&map.entries, 30, Some(map.entries.len() as u64)),
            Expr::Struct(s) => self.entries(&s.entries, 40, None),
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::Unspecified => value_of(Ty::Dyn),
        }
    }

    fn entries(
        &mut self,
        entries: &[cel::common::ast::IdedEntryExpr],
        base: u64,
        size: Option<u64>,
    ) -> Val<'s> {
        let mut cost = base;
        for e in entries {
            let parts: Vec<&IdedExpr> = match &e.expr {
                EntryExpr::MapEntry(m) => vec![&m.key, &m.value],
                EntryExpr::StructField(f) => vec![&f.value],
            };
            for p in parts {
                cost = cost.saturating_add(self.walk(p).cost);
            }
        }
        Val {
            ty: Ty::Dyn,
            size,
            cost,
        }
    }

    /// The type of `operand.field`, and whether cel-go charges the selection (it does
    /// on objects and maps).
    fn select(&mut self, id: u64, operand: &Ty<'s>, field: &str) -> (Ty<'s>, bool) {
        match shape(operand) {
            Shape::Object { node, root } => {
                if root != Root::No {
                    if let Some(ty) = resource_field(node, field, root) {
                        return (ty, true);
                    }
                }
                if let Some(prop) = property(node, field) {
                    return (item_ty(prop), true);
                }
                if node.x_preserve_unknown_fields {
                    return (Ty::Dyn, true);
                }
                self.errors.push((id, format!("undefined field '{field}'")));
                (Ty::Dyn, true)
            }
            Shape::MetaNames => {
                if field != "name" && field != "generateName" {
                    self.errors.push((id, format!("undefined field '{field}'")));
                }
                (Ty::String, true)
            }
            Shape::Map(values) => (item_ty(values), true),
            Shape::Scalar(name) => {
                self.errors.push((
                    id,
                    format!("type '{name}' does not support field selection"),
                ));
                (Ty::Dyn, false)
            }
            Shape::List(..) | Shape::Dyn => (Ty::Dyn, false),
        }
    }

    fn comprehension(&mut self, c: &cel::common::ast::ComprehensionExpr) -> Val<'s> {
        let range = self.walk(&c.iter_range);
        let init = self.walk(&c.accu_init);
        let (first, second) = iteration_vars(&range.ty);
        let depth = self.scopes.len();
        match &c.iter_var2 {
            Some(v2) => {
                self.scopes.push((c.iter_var.clone(), first));
                self.scopes.push((v2.clone(), second));
            }
            None => {
                let only = if matches!(shape(&range.ty), Shape::Map(_)) {
                    first
                } else {
                    second
                };
                self.scopes.push((c.iter_var.clone(), only));
            }
        }
        let accu = Val {
            cost: 0,
            ..init.clone()
        };
        self.scopes.push((c.accu_var.clone(), accu));
        let cond = self.walk(&c.loop_cond);
        let step = self.walk(&c.loop_step);
        self.scopes.truncate(depth);
        self.scopes.push((
            c.accu_var.clone(),
            Val {
                cost: 0,
                ..step.clone()
            },
        ));
        let result = self.walk(&c.result);
        self.scopes.truncate(depth);
        let iterations = range.size.unwrap_or(1);
        let cost = range
            .cost
            .saturating_add(init.cost)
            .saturating_add(result.cost)
            .saturating_add(iterations.saturating_mul(cond.cost.saturating_add(step.cost)));
        let (ty, size) = match (&init.ty, &c.accu_init.expr) {
            // map() and filter(): a list as long as the range at most.
            (_, Expr::List(_)) => match step.ty {
                Ty::List(item, item_size) => (Ty::List(item, item_size), range.size),
                _ => (Ty::List(Box::new(Ty::Dyn), None), range.size),
            },
            (ty, _) => (ty.clone(), init.size),
        };
        Val { ty, size, cost }
    }
}

/// The property that CEL spells `field` (escaped, as `__namespace__` for `namespace`).
fn property<'s>(node: &'s Schema, field: &str) -> Option<&'s Schema> {
    if let Some(prop) = node.properties.get(field) {
        if super::escape(field).as_deref() == Some(field) {
            return Some(prop);
        }
    }
    node.properties
        .iter()
        .find(|(name, _)| super::escape(name).as_deref() == Some(field))
        .map(|(_, prop)| prop)
}

/// `apiVersion`, `kind` and `metadata` of a resource where its schema leaves them out
/// or, for `metadata`, does not describe `name` and `generateName`.
fn resource_field<'s>(node: &'s Schema, field: &str, root: Root) -> Option<Ty<'s>> {
    match field {
        "apiVersion" | "kind" if !node.properties.contains_key(field) => Some(Ty::String),
        "metadata" => {
            let described = node.properties.get("metadata").filter(|m| {
                ["name", "generateName"].iter().all(|f| {
                    m.properties
                        .get(*f)
                        .is_some_and(|p| p.type_ == Some(SchemaType::String))
                })
            });
            let undescribed = if root == Root::Full {
                Ty::Dyn
            } else {
                Ty::MetaNames
            };
            Some(described.map_or(undescribed, Ty::Node))
        }
        _ => None,
    }
}

/// The variables one iteration binds: for a map its key and value, for a list its
/// index and item.
fn iteration_vars<'s>(range: &Ty<'s>) -> (Val<'s>, Val<'s>) {
    match shape(range) {
        // kube sizes map keys as its bare string type, with no length: zero.
        Shape::Map(values) => (
            Val {
                ty: Ty::String,
                size: Some(0),
                cost: 0,
            },
            value_of(item_ty(values)),
        ),
        Shape::List(item, item_size) => (
            value_of(Ty::Int),
            Val {
                size: item_size.or(value_of(item.clone()).size),
                ty: item,
                cost: 0,
            },
        ),
        _ => (value_of(Ty::Dyn), value_of(Ty::Dyn)),
    }
}

fn literal(lit: &LiteralValue) -> Val<'static> {
    let (ty, size) = match lit {
        LiteralValue::String(s) => (Ty::String, s.inner().chars().count() as u64),
        LiteralValue::Bytes(b) => (Ty::Bytes, b.inner().len() as u64),
        LiteralValue::Int(_) => (Ty::Int, 1),
        LiteralValue::UInt(_) => (Ty::Uint, 1),
        LiteralValue::Double(_) => (Ty::Double, 1),
        LiteralValue::Boolean(_) => (Ty::Bool, 1),
        LiteralValue::Null => (Ty::Null, 1),
    };
    Val {
        ty,
        size: Some(size),
        cost: 0,
    }
}
