//! The cost and result of each function call: cel-go's estimates for the standard
//! library and its strings extension (`checker/cost.go`), and kube-apiserver's for
//! the Kubernetes list and regex functions (`apiserver/pkg/cel/library/cost.go`).

use super::types::{Shape, Ty, Val, scalar_ty, shape, value_of};

/// What cel-go multiplies a string's length by to traverse it once.
const STRING_TRAVERSAL: f64 = 0.1;
/// What it multiplies a regex's length by to apply it to one character.
const REGEX_LENGTH: f64 = 0.25;

/// The size used where nothing is known: kapi charges such a value as one unit
/// where cel-go would charge it as unbounded, so that a value kapi cannot type never
/// makes a rule cost more than cel-go finds.
fn known(size: Option<u64>) -> u64 {
    size.unwrap_or(1)
}

fn factor(size: u64, f: f64) -> u64 {
    let c = (size as f64 * f).ceil();
    if c >= u64::MAX as f64 {
        u64::MAX
    } else {
        c as u64
    }
}

fn bool_val<'s>(cost: u64) -> Val<'s> {
    Val {
        ty: Ty::Bool,
        size: Some(1),
        cost,
    }
}

fn of<'s>(ty: Ty<'s>, size: Option<u64>, cost: u64) -> Val<'s> {
    Val { ty, size, cost }
}

/// The call `name` on `target` (for `x.f(...)`) with `args`, their own costs included.
pub(super) fn call<'s>(name: &str, target: Option<Val<'s>>, args: Vec<Val<'s>>) -> Val<'s> {
    let operands = target
        .iter()
        .chain(&args)
        .fold(0u64, |sum, v| sum.saturating_add(v.cost));
    let arg = |i: usize| args.get(i);
    let size_of = |v: Option<&Val<'s>>| v.and_then(|v| v.size);
    let t_size = size_of(target.as_ref());
    match name {
        "_&&_" | "_||_" | "!_" | "@not_strictly_false" => bool_val(operands),
        "_?_:_" => {
            let cond = arg(0).map_or(0, |v| v.cost);
            let branches = arg(1)
                .map_or(0, |v| v.cost)
                .max(arg(2).map_or(0, |v| v.cost));
            let (ty, size) = match (arg(1), arg(2)) {
                (Some(a), Some(b))
                    if std::mem::discriminant(&a.ty) == std::mem::discriminant(&b.ty) =>
                {
                    (a.ty.clone(), a.size.max(b.size))
                }
                _ => (Ty::Dyn, None),
            };
            of(ty, size, cond.saturating_add(branches))
        }
        "_==_" | "_!=_" => bool_val(compare(arg(0), arg(1)).saturating_add(operands)),
        "_<_" | "_<=_" | "_>_" | "_>=_" => {
            let strings = [arg(0), arg(1)].iter().any(|v| {
                v.is_some_and(|v| matches!(shape(&v.ty), Shape::Scalar("string" | "bytes")))
            });
            let cost = if strings { compare(arg(0), arg(1)) } else { 1 };
            bool_val(cost.saturating_add(operands))
        }
        "_+_" => add(arg(0), arg(1), operands),
        "_-_" | "_*_" | "_/_" | "_%_" | "-_" => {
            let ty = match arg(0).map(|v| shape(&v.ty)) {
                Some(Shape::Scalar(n)) => scalar_ty(n),
                _ => Ty::Dyn,
            };
            of(ty, Some(1), operands.saturating_add(1))
        }
        "@in" => {
            let cost = match arg(1).map(|v| shape(&v.ty)) {
                Some(Shape::List(..)) => known(size_of(arg(1))),
                _ => 1,
            };
            bool_val(cost.saturating_add(operands))
        }
        "_[_]" => {
            let ty = match arg(0).map(|v| shape(&v.ty)) {
                Some(Shape::List(item, item_size)) => {
                    let mut v = value_of(item);
                    v.size = item_size.or(v.size);
                    return Val {
                        cost: operands.saturating_add(1),
                        ..v
                    };
                }
                Some(Shape::Map(values)) => {
                    let mut v = value_of(Ty::Node(values));
                    v.cost = operands.saturating_add(1);
                    return v;
                }
                _ => Ty::Dyn,
            };
            of(ty, None, operands.saturating_add(1))
        }
        "matches" | "find" | "findAll" => {
            let (text, pattern) = match &target {
                Some(_) => (t_size, size_of(arg(0))),
                None => (size_of(arg(0)), size_of(arg(1))),
            };
            let cost = factor(known(text).saturating_add(1), STRING_TRAVERSAL)
                .saturating_mul(factor(known(pattern), REGEX_LENGTH));
            let ty = match name {
                "matches" => Ty::Bool,
                "find" => Ty::String,
                _ => Ty::List(Box::new(Ty::String), t_size),
            };
            of(ty, t_size, cost.saturating_add(operands))
        }
        "contains" => {
            let cost = factor(known(t_size), STRING_TRAVERSAL)
                .saturating_mul(factor(known(size_of(arg(0))), STRING_TRAVERSAL));
            bool_val(cost.saturating_add(operands))
        }
        "startsWith" | "endsWith" => {
            bool_val(factor(known(size_of(arg(0))), STRING_TRAVERSAL).saturating_add(operands))
        }
        "size" => of(Ty::Int, Some(1), operands.saturating_add(1)),
        "dyn" => {
            let mut v = arg(0).cloned().unwrap_or_else(|| value_of(Ty::Dyn));
            v.cost = operands.saturating_add(1);
            v
        }
        "isSorted" | "sum" | "min" | "max" | "indexOf" | "lastIndexOf"
            if target
                .as_ref()
                .is_some_and(|t| matches!(shape(&t.ty), Shape::List(..))) =>
        {
            list_function(name, target.as_ref(), operands)
        }
        "charAt" | "indexOf" | "lastIndexOf" | "lowerAscii" | "upperAscii" | "replace"
        | "substring" | "trim" | "reverse" | "format" | "isURL" | "url" | "ip" | "cidr"
        | "isIP" | "isCIDR" | "quantity" | "isQuantity" => {
            let text = t_size.or(size_of(arg(0)));
            let ty = match name {
                "charAt" | "lowerAscii" | "upperAscii" | "replace" | "substring" | "trim"
                | "reverse" | "format" => Ty::String,
                "indexOf" | "lastIndexOf" => Ty::Int,
                "isURL" | "isIP" | "isCIDR" | "isQuantity" => Ty::Bool,
                _ => Ty::Dyn,
            };
            of(
                ty,
                text,
                factor(known(text), STRING_TRAVERSAL).saturating_add(operands),
            )
        }
        "split" | "join" => {
            let text = t_size;
            let ty = if name == "split" {
                Ty::List(Box::new(Ty::String), text)
            } else {
                Ty::String
            };
            of(
                ty,
                text,
                factor(known(text), STRING_TRAVERSAL).saturating_add(operands),
            )
        }
        "string" => of(Ty::String, size_of(arg(0)), operands.saturating_add(1)),
        "int" => of(Ty::Int, Some(1), operands.saturating_add(1)),
        "uint" => of(Ty::Uint, Some(1), operands.saturating_add(1)),
        "double" => of(Ty::Double, Some(1), operands.saturating_add(1)),
        "bool" => of(Ty::Bool, Some(1), operands.saturating_add(1)),
        _ => of(Ty::Dyn, None, operands.saturating_add(1)),
    }
}

/// cel-go's equality and string ordering: traversing the shorter side.
fn compare(a: Option<&Val<'_>>, b: Option<&Val<'_>>) -> u64 {
    let smallest = match (a.and_then(|v| v.size), b.and_then(|v| v.size)) {
        (Some(x), Some(y)) => x.min(y),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => 1,
    };
    factor(smallest, STRING_TRAVERSAL)
}

fn add<'s>(a: Option<&Val<'s>>, b: Option<&Val<'s>>, operands: u64) -> Val<'s> {
    let size = match (a.and_then(|v| v.size), b.and_then(|v| v.size)) {
        (Some(x), Some(y)) => Some(x.saturating_add(y)),
        _ => None,
    };
    match (a.map(|v| shape(&v.ty)), b.map(|v| shape(&v.ty))) {
        (Some(Shape::Scalar("string" | "bytes")), _)
        | (_, Some(Shape::Scalar("string" | "bytes"))) => {
            let cost = factor(known(size), STRING_TRAVERSAL);
            of(Ty::String, size, cost.saturating_add(operands))
        }
        (Some(Shape::List(x, xs)), Some(Shape::List(y, ys))) => {
            let (item, item_size) = match x {
                Ty::Dyn => (y, ys),
                _ => (x, xs.max(ys)),
            };
            of(
                Ty::List(Box::new(item), item_size),
                size,
                operands.saturating_add(1),
            )
        }
        (Some(Shape::Scalar(n)), _) => of(scalar_ty(n), Some(1), operands.saturating_add(1)),
        _ => of(Ty::Dyn, None, operands.saturating_add(1)),
    }
}

/// kube's list functions charge one unit per item, plus the traversal of string items.
fn list_function<'s>(name: &str, target: Option<&Val<'s>>, operands: u64) -> Val<'s> {
    let Some(t) = target else {
        return of(Ty::Dyn, None, operands.saturating_add(1));
    };
    let Shape::List(item, item_size) = shape(&t.ty) else {
        return of(Ty::Dyn, None, operands.saturating_add(1));
    };
    let per_item = match shape(&item) {
        Shape::Scalar("string" | "bytes") => 1 + factor(known(item_size), STRING_TRAVERSAL),
        _ => 1,
    };
    let cost = known(t.size).saturating_mul(per_item);
    let ty = match name {
        "isSorted" => Ty::Bool,
        "indexOf" | "lastIndexOf" => Ty::Int,
        _ => item,
    };
    of(ty, item_size, cost.saturating_add(operands))
}
