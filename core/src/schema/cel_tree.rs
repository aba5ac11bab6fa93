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

/// The fields `expr` reads of the variable `name` when it reads it only by selecting
/// fields (`self.a`, `has(self.b)`, `self.c.d`); `None` when it uses the variable any
/// other way (whole, as in `self == oldSelf`, iterated, passed to a function) or a
/// comprehension binds the same name.
pub fn selected_fields(expr: &IdedExpr, name: &str) -> Option<BTreeSet<String>> {
    let mut fields = BTreeSet::new();
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        match &e.expr {
            Expr::Select(s) if matches!(&s.operand.expr, Expr::Ident(i) if i == name) => {
                fields.insert(s.field.clone());
            }
            Expr::Ident(i) if i == name => return None,
            Expr::Comprehension(c)
                if c.iter_var == name
                    || c.iter_var2.as_deref() == Some(name)
                    || c.accu_var == name =>
            {
                return None;
            }
            _ => stack.extend(children(e)),
        }
    }
    Some(fields)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(src: &str) -> Option<Vec<String>> {
        let program = cel::Program::compile(src).expect(src);
        selected_fields(program.expression(), "self").map(|f| f.into_iter().collect())
    }

    #[test]
    fn fields_selected_from_a_variable_and_uses_of_it_whole() {
        let some = |f: &[&str]| Some(f.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            fields("self.a <= 10 || has(self.b) && self.c.d == 'x'"),
            some(&["a", "b", "c"])
        );
        assert_eq!(fields("self.a.all(i, i > self.b)"), some(&["a", "b"]));
        assert_eq!(fields("oldSelf.a == 1"), some(&[]));
        assert_eq!(fields("self == oldSelf"), None);
        assert_eq!(fields("size(self) > 1"), None);
        assert_eq!(fields("self.all(k, k != 'x')"), None);
        assert_eq!(fields("[1].all(self, self > 0)"), None);
    }
}
