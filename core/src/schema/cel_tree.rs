//! Walking a compiled CEL expression's tree: what [`super::cel`] and [`super::cost`]
//! need to know of it before it runs.

use std::collections::BTreeSet;

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr};

/// The expressions directly under `expr`.
pub fn children(expr: &IdedExpr) -> Vec<&IdedExpr> {
    match &expr.expr {
        Expr::Call(call) => call
            .target
            .as_deref()
            .into_iter()
            .chain(&call.args)
            .collect(),
        Expr::Select(s) => vec![&s.operand],
        Expr::List(l) => l.elements.iter().collect(),
        Expr::Map(m) => m
            .entries
            .iter()
            .flat_map(|e| match &e.expr {
                EntryExpr::MapEntry(e) => vec![&e.key, &e.value],
                EntryExpr::StructField(f) => vec![&f.value],
            })
            .collect(),
        Expr::Struct(s) => s
            .entries
            .iter()
            .map(|e| match &e.expr {
                EntryExpr::MapEntry(e) => &e.value,
                EntryExpr::StructField(f) => &f.value,
            })
            .collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

/// Whether `expr` has a comprehension (a macro such as `all` or `map`).
pub fn has_comprehension(expr: &IdedExpr) -> bool {
    matches!(expr.expr, Expr::Comprehension(_)) || children(expr).into_iter().any(has_comprehension)
}

/// The variables the comprehensions in `expr` bind (`x` of `list.all(x, ...)`, and
/// their accumulators), which are not free variables of the expression.
pub fn bound_variables(expr: &IdedExpr) -> BTreeSet<String> {
    let mut bound = BTreeSet::new();
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        if let Expr::Comprehension(c) = &e.expr {
            bound.insert(c.iter_var.clone());
            bound.extend(c.iter_var2.clone());
            bound.insert(c.accu_var.clone());
        }
        stack.extend(children(e));
    }
    bound
}
