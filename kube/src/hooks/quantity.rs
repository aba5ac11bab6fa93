//! Quantities as numbers, for the comparisons several groups' rules make (core's
//! volumes, node's RuntimeClass overhead, storage's capacities, the RuntimeClass
//! admission plugin).

use kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// The numeric value of a quantity (`10Gi`, `500M`, `1.5`, `2e3`), for comparisons;
/// `None` when it does not parse.
pub(crate) fn quantity_value(q: &Quantity) -> Option<f64> {
    let s = q.0.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exp if exp.starts_with(['e', 'E']) => 10f64.powi(exp[1..].parse().ok()?),
        _ => return None,
    };
    Some(n * mult)
}
