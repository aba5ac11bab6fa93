//! The runtime cost of a CEL expression, in the spirit of cel-go's actual cost that
//! kube-apiserver limits: one unit per evaluation step, string arguments of calls a
//! tenth of a unit per byte, and comprehensions (`all`, `exists`, `map`, `filter`, …)
//! their range plus every iteration's condition and step. The cost is measured on the
//! data the expression is evaluated with, and the walk stops as soon as it passes the
//! limit, so measuring is bounded by the limit too.
//!
//! Where it differs from cel-go: the units are kapi's (close to, not equal to, cel-go's
//! per-function costs), and an iteration's accumulator is taken as its initial value,
//! so a comprehension nested in another's step is measured with the outer accumulator
//! empty.

use cel::common::ast::Expr;
use cel::{Context, IdedExpr, Value};

use super::cel_tree::children;

/// Why a measure stopped.
#[derive(Debug, PartialEq, Eq)]
pub struct OverLimit;

/// Measures expressions against one limit.
pub struct Meter {
    spent: u64,
    limit: u64,
}

impl Meter {
    /// A meter that stops past `limit`.
    pub fn new(limit: u64) -> Self {
        Self { spent: 0, limit }
    }

    /// What was measured so far.
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// Adds `cost` units; past the limit, [`OverLimit`].
    pub fn charge(&mut self, cost: u64) -> Result<(), OverLimit> {
        self.spent = self.spent.saturating_add(cost);
        if self.spent > self.limit {
            Err(OverLimit)
        } else {
            Ok(())
        }
    }

    /// Adds the cost of `expr` evaluated in `ctx`.
    pub fn measure(&mut self, expr: &IdedExpr, ctx: &Context<'_, '_>) -> Result<(), OverLimit> {
        self.charge(1)?;
        match &expr.expr {
            Expr::Call(call) => {
                if let Some(target) = &call.target {
                    self.measure(target, ctx)?;
                    self.charge(string_cost(target, ctx))?;
                }
                for arg in &call.args {
                    self.measure(arg, ctx)?;
                    if call.func_name.starts_with('_') {
                        continue;
                    }
                    self.charge(string_cost(arg, ctx))?;
                }
                Ok(())
            }
            Expr::Comprehension(c) => {
                self.measure(&c.iter_range, ctx)?;
                self.measure(&c.accu_init, ctx)?;
                let items = match ctx.resolve(&c.iter_range) {
                    Ok(Value::List(items)) => items.iter().cloned().collect::<Vec<_>>(),
                    Ok(Value::Map(map)) => map.map.keys().map(|k| Value::from(k.clone())).collect(),
                    // A range that does not evaluate fails the expression anyway.
                    _ => Vec::new(),
                };
                let accu = ctx.resolve(&c.accu_init).unwrap_or(Value::Null);
                for item in items {
                    let mut inner = ctx.new_inner_scope();
                    inner.add_variable_from_value(c.iter_var.clone(), item);
                    inner.add_variable_from_value(c.accu_var.clone(), accu.clone());
                    self.measure(&c.loop_cond, &inner)?;
                    self.measure(&c.loop_step, &inner)?;
                }
                self.measure(&c.result, ctx)
            }
            _ => children(expr)
                .into_iter()
                .try_for_each(|e| self.measure(e, ctx)),
        }
    }
}

/// A tenth of a unit per byte of a string argument (what cel-go charges string
/// functions), for arguments that are strings; nothing for the rest.
fn string_cost(arg: &IdedExpr, ctx: &Context<'_, '_>) -> u64 {
    // Only identifiers and selections are resolved again: literals are short, and
    // anything else was measured as it is.
    if !matches!(arg.expr, Expr::Ident(_) | Expr::Select(_)) {
        return 0;
    }
    match ctx.resolve(arg) {
        Ok(Value::String(s)) => (s.len() as u64).div_ceil(10),
        _ => 0,
    }
}
