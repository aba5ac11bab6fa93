//! CEL rules (`x-kubernetes-validations`), on top of the `cel` crate.
//!
//! Rules are compiled once when a schema is parsed ([`CompiledRule::compile`]) and run
//! with `self` (and `oldSelf` for transition rules) bound to the JSON value of the node
//! the rule sits on. The environment is CEL's standard library and its strings and lists
//! extensions, plus the Kubernetes library functions that CRDs commonly use
//! (`isSorted`, `sum`, `min`, `max`, list `indexOf`/`lastIndexOf`, `find`, `findAll`,
//! `isURL`).

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

use cel::common::types::{CelOptional, DYN_TYPE, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{Context, Env, ExecutionError, Program, Value};
use serde_json::Value as Json;

use super::Schema;

use super::cel_values::schema_to_cel_selected;
pub use super::cel_values::{json_to_cel, schema_to_cel};

pub use super::cel_static::{Estimate, Ty};
pub use super::cost::Meter;

/// The environment every rule is compiled and run in, built once.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(build_env()));

/// Function names (besides operators) a rule may call; anything else is rejected when
/// the rule is compiled, as Kubernetes' type checker does, instead of failing per object.
const KNOWN_FUNCTIONS: &[&str] = &[
    // standard library and macros
    "size",
    "has",
    "all",
    "exists",
    "exists_one",
    "map",
    "filter",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "type",
    "dyn",
    "duration",
    "timestamp",
    "getFullYear",
    "getMonth",
    "getDayOfYear",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
    "optional.of",
    "optional.none",
    "optional.ofNonZeroValue",
    "hasValue",
    "value",
    "orValue",
    "or",
    "null_type",
    // strings extension
    "charAt",
    "indexOf",
    "lastIndexOf",
    "join",
    "lowerAscii",
    "upperAscii",
    "trim",
    "replace",
    "split",
    "substring",
    "format",
    "strings.quote",
    "reverse",
    // lists extension
    "distinct",
    "flatten",
    "lists.range",
    "slice",
    "sort",
    "sortBy",
    // Kubernetes library
    "isSorted",
    "sum",
    "min",
    "max",
    "find",
    "findAll",
    "isURL",
];

/// A compiled `x-kubernetes-validations` rule (and its `messageExpression`, if any).
#[derive(Clone, Debug, Default)]
pub struct CompiledRule {
    inner: Option<Arc<Programs>>,
}

#[derive(Debug)]
struct Programs {
    rule: Program,
    message: Option<Program>,
    uses_old_self: bool,
    /// The fields of `self` the rule and its message read, when they read it only by
    /// selecting fields: the rest of the object is not converted for them.
    self_fields: Option<BTreeSet<String>>,
    /// The same of `oldSelf`.
    old_self_fields: Option<BTreeSet<String>>,
}

/// The fields of `name` that every program reads, when each reads it only by selecting
/// fields ([`super::cel_tree::selected_fields`]).
fn fields_read<'p>(
    programs: impl IntoIterator<Item = &'p Program>,
    name: &str,
) -> Option<BTreeSet<String>> {
    let mut all = BTreeSet::new();
    for program in programs {
        all.extend(super::cel_tree::selected_fields(
            program.expression(),
            name,
        )?);
    }
    Some(all)
}

/// Why a rule failed to evaluate, already worded for the field error.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalError {
    /// Kubernetes reports an overload mismatch at run time with its own wording.
    NoSuchOverload(String),
    /// Any other evaluation error (`no such key: x`, division by zero, ...).
    Other(String),
}

impl CompiledRule {
    /// Compiles `rule` and, when given, `message_expression`.
    ///
    /// The error names the offending field (`rule` or `messageExpression`) and the
    /// compiler's message.
    pub fn compile(
        rule: &str,
        message_expression: Option<&str>,
    ) -> Result<Self, (&'static str, String)> {
        let program = compile_one(rule, &[]).map_err(|e| ("rule", e))?;
        let uses_old_self = program.references().has_variable("oldSelf");
        let message = match message_expression {
            Some(src) => Some(compile_one(src, &[]).map_err(|e| ("messageExpression", e))?),
            None => None,
        };
        let programs = || std::iter::once(&program).chain(message.as_ref());
        let self_fields = fields_read(programs(), "self");
        let old_self_fields = fields_read(programs(), "oldSelf");
        Ok(Self {
            inner: Some(Arc::new(Programs {
                rule: program,
                message,
                uses_old_self,
                self_fields,
                old_self_fields,
            })),
        })
    }

    /// Type-checks the rule against the schema-typed `variables` (`self`, `oldSelf`)
    /// and estimates its cost; `None` for the empty rule.
    pub fn check_rule(&self, variables: &[(&str, Ty<'_>)]) -> Option<Result<Estimate, String>> {
        let p = self.inner.as_ref()?;
        Some(check_program(&p.rule, variables))
    }

    /// [`CompiledRule::check_rule`] for the `messageExpression`, when there is one.
    pub fn check_message(&self, variables: &[(&str, Ty<'_>)]) -> Option<Result<Estimate, String>> {
        let msg = self.inner.as_ref()?.message.as_ref()?;
        Some(check_program(msg, variables))
    }

    /// True when the rule refers to `oldSelf` (a transition rule).
    pub fn uses_old_self(&self) -> bool {
        self.inner.as_ref().is_some_and(|p| p.uses_old_self)
    }

    /// True when a `messageExpression` was compiled.
    pub fn has_message_expression(&self) -> bool {
        self.inner.as_ref().is_some_and(|p| p.message.is_some())
    }

    /// Evaluates the rule. `old_self` is `None` when there is no correlated old value;
    /// `optional_old_self` binds `oldSelf` as a CEL optional as Kubernetes does.
    /// An empty (default) rule always passes.
    pub fn eval(
        &self,
        node: &Schema,
        this: &Json,
        old_self: Option<&Json>,
        optional_old_self: bool,
    ) -> Result<bool, EvalError> {
        let Some(p) = &self.inner else {
            return Ok(true);
        };
        let ctx = context(p, node, this, old_self, optional_old_self);
        match p.rule.execute(&ctx) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(EvalError::Other(format!(
                "rule did not evaluate to a bool but to {}",
                other.type_of()
            ))),
            Err(e) => Err(convert_error(e)),
        }
    }

    /// Evaluates the `messageExpression`: `None` when there is none, else the message or
    /// Kubernetes' detail for why it could not be used.
    pub fn eval_message(
        &self,
        node: &Schema,
        this: &Json,
        old_self: Option<&Json>,
        optional_old_self: bool,
    ) -> Option<Result<String, String>> {
        let p = self.inner.as_ref()?;
        let msg = p.message.as_ref()?;
        let ctx = context(p, node, this, old_self, optional_old_self);
        // Wording from apiextensions-apiserver pkg/apiserver/schema/cel/validation.go
        // (evalMessageExpression).
        Some(match msg.execute(&ctx) {
            Err(e) => Err(format!(
                "messageExpression evaluation failed due to: {}",
                error_text(&e)
            )),
            Ok(Value::String(s)) => {
                let t = s.trim();
                if t.contains('\n') {
                    Err("messageExpression should not contain line breaks".to_string())
                } else if t.is_empty() {
                    Err("messageExpression should evaluate to a non-empty string".to_string())
                } else if t.len() > 5 * 1024 {
                    Err(format!(
                        "messageExpression beyond allowable length of {}",
                        5 * 1024
                    ))
                } else {
                    Ok(t.to_string())
                }
            }
            Ok(_) => Err("messageExpression failed to convert to string".to_string()),
        })
    }
}

/// A CEL expression over named JSON variables, in the same environment as the schema
/// rules: admission webhooks' `matchConditions` (`object`, `oldObject`, `request`) and
/// admission policies' expressions.
#[derive(Clone, Debug)]
pub struct Expression {
    program: Arc<Program>,
    /// Whether it has a comprehension, whose cost depends on the data.
    comprehension: bool,
}

/// kube's error when an expression costs more than its limit.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

impl Expression {
    /// Compiles `src`; only the `variables` named may be referred to, so that a typo is
    /// an error here rather than on every evaluation.
    pub fn compile(src: &str, variables: &[&str]) -> Result<Self, String> {
        // The authorizer library comes with the `authorizer` variable, as in kube.
        let extra = if variables.contains(&"authorizer") {
            super::cel_authz::FUNCTIONS
        } else {
            &[]
        };
        let program = compile_one(src, extra)?;
        let refs = program.references();
        // A comprehension's own variables (`x` of `items.all(x, ...)`) are not free.
        let bound = super::cel_tree::bound_variables(program.expression());
        let mut unknown: Vec<&str> = refs
            .variables()
            .into_iter()
            .filter(|v| !variables.contains(v) && !bound.contains(*v))
            .collect();
        unknown.sort_unstable();
        if let Some(v) = unknown.first() {
            return Err(format!("undeclared reference to '{v}'"));
        }
        Ok(Self {
            comprehension: super::cel_tree::has_comprehension(program.expression()),
            program: Arc::new(program),
        })
    }

    /// Type-checks the expression against schema-typed `variables` and estimates its
    /// cost, as kube-apiserver does for an admission policy's `status.typeChecking`.
    pub fn check(&self, variables: &[(&str, Ty<'_>)]) -> Result<Estimate, String> {
        check_program(&self.program, variables)
    }

    /// Evaluates the expression with each `(name, value)` bound; it must give a bool.
    pub fn eval_bool(&self, variables: &[(&str, &Json)]) -> Result<bool, String> {
        to_bool(self.run(variables, None)?)
    }

    /// [`Expression::eval_bool`], charging its cost to `meter` first: an expression
    /// that would take `meter` past its limit is not run, and fails with
    /// [`COST_LIMIT_EXCEEDED`].
    pub fn eval_bool_metered(
        &self,
        variables: &[(&str, &Json)],
        meter: &mut Meter,
    ) -> Result<bool, String> {
        to_bool(self.run(variables, Some(meter))?)
    }

    /// Evaluates the expression with each `(name, value)` bound, giving its value as
    /// JSON: admission policies' `variables`, `messageExpression`s and audit
    /// annotations.
    pub fn eval_json(&self, variables: &[(&str, &Json)]) -> Result<Json, String> {
        let v = self.run(variables, None)?;
        v.json().map_err(|e| e.to_string())
    }

    /// [`Expression::eval_json`], charged to `meter` as [`Expression::eval_bool_metered`].
    pub fn eval_json_metered(
        &self,
        variables: &[(&str, &Json)],
        meter: &mut Meter,
    ) -> Result<Json, String> {
        let v = self.run(variables, Some(meter))?;
        v.json().map_err(|e| e.to_string())
    }

    fn run(&self, variables: &[(&str, &Json)], meter: Option<&mut Meter>) -> Result<Value, String> {
        let mut ctx = Context::with_env(Arc::clone(&ENV));
        for (name, value) in variables {
            ctx.add_variable_from_value(*name, json_to_cel(value));
        }
        if let Some(meter) = meter {
            // Without a comprehension an expression costs about its size, which its
            // source bounds; with one, it is measured on the data.
            let measured = if self.comprehension {
                meter.measure(self.program.expression(), &ctx)
            } else {
                meter.charge(1)
            };
            measured.map_err(|_| COST_LIMIT_EXCEEDED.to_string())?;
        }
        self.program.execute(&ctx).map_err(|e| error_text(&e))
    }
}

fn check_program(program: &Program, variables: &[(&str, Ty<'_>)]) -> Result<Estimate, String> {
    super::cel_static::check(program.expression(), program.source_info(), variables)
}

fn to_bool(v: Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(b),
        other => Err(format!(
            "expression did not evaluate to a bool but to {}",
            other.type_of()
        )),
    }
}

/// Compiles `src`, refusing functions other than CEL's, the extensions' and
/// Kubernetes' (and `extra`, the authorizer library where `authorizer` is declared).
fn compile_one(src: &str, extra: &[&str]) -> Result<Program, String> {
    if src.trim().is_empty() {
        return Err("rule must not be empty".to_string());
    }
    let program = ENV.compile(src).map_err(|e| e.to_string())?;
    let refs = program.references();
    let mut unknown: Vec<&str> = refs
        .functions()
        .into_iter()
        .filter(|f| !is_operator(f) && !KNOWN_FUNCTIONS.contains(f) && !extra.contains(f))
        .collect();
    unknown.sort_unstable();
    if let Some(f) = unknown.first() {
        return Err(format!("undeclared reference to '{f}'"));
    }
    Ok(program)
}

fn is_operator(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('@') || name.starts_with('!') || name.starts_with('-')
}

fn context<'v>(
    p: &Programs,
    node: &Schema,
    this: &Json,
    old_self: Option<&Json>,
    optional_old_self: bool,
) -> Context<'static, 'v> {
    let convert = |v: &Json, fields: Option<&BTreeSet<String>>| match fields {
        Some(fields) => schema_to_cel_selected(v, node, fields),
        None => schema_to_cel(v, node),
    };
    let old_fields = p.old_self_fields.as_ref();
    let mut ctx = Context::with_env(Arc::clone(&ENV));
    ctx.add_variable_from_value("self", convert(this, p.self_fields.as_ref()));
    if optional_old_self {
        let opt = match old_self {
            Some(old) => match Box::<dyn Val>::try_from(convert(old, old_fields)) {
                Ok(b) => CelOptional::of(b),
                Err(_) => CelOptional::none(),
            },
            None => CelOptional::none(),
        };
        ctx.add_variable_as_val("oldSelf", Box::new(opt));
    } else if let Some(old) = old_self {
        ctx.add_variable_from_value("oldSelf", convert(old, old_fields));
    }
    ctx
}

fn error_text(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        other => {
            let s = other.to_string();
            let mut c = s.chars();
            match c.next() {
                Some(first) => first.to_lowercase().chain(c).collect(),
                None => s,
            }
        }
    }
}

fn convert_error(e: ExecutionError) -> EvalError {
    match &e {
        ExecutionError::NoSuchOverload(_) => {
            EvalError::NoSuchOverload(format!("no such overload: {e}"))
        }
        _ => EvalError::Other(error_text(&e)),
    }
}

fn build_env() -> Env {
    let mut env = Env::stdlib();
    // The standard extensions and ours are declared once, on a fresh environment; a
    // failure here is a programming error caught by every test that compiles a rule.
    let _ = env.add_extension(cel::extensions::strings);
    let _ = env.add_extension(cel::extensions::lists);
    let _ = env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted);
    let _ = env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum);
    let _ = env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min);
    let _ = env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max);
    let _ = env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        list_index_of,
    );
    let _ = env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        list_last_index_of,
    );
    let _ = env.add_member_overload("find", "string_find", STRING_TYPE, vec![STRING_TYPE], find);
    let _ = env.add_member_overload(
        "findAll",
        "string_find_all",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    );
    let _ = env.add_member_overload(
        "findAll",
        "string_find_all_n",
        STRING_TYPE,
        vec![STRING_TYPE, DYN_TYPE],
        find_all_n,
    );
    let _ = env.add_overload("isURL", "is_url", vec![STRING_TYPE], is_url);
    super::cel_authz::install(&mut env);
    env
}

// ---- Kubernetes library functions, computed on owned `Value`s ----

fn args_of(args: &[CowVal<'_, '_>]) -> Result<Vec<Value>, ExecutionError> {
    args.iter().map(|a| Value::try_from(a.as_ref())).collect()
}

fn ret<'b, 'v>(v: Value) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let b: Box<dyn Val> = v.try_into()?;
    Ok(CowVal::from(b))
}

fn list_arg(v: &Value, f: &str) -> Result<Arc<Vec<Value>>, ExecutionError> {
    match v {
        Value::List(l) => Ok(Arc::clone(l)),
        _ => Err(ExecutionError::function_error(f, "expected a list")),
    }
}

fn str_arg<'a>(v: &'a Value, f: &str) -> Result<&'a str, ExecutionError> {
    match v {
        Value::String(s) => Ok(s.as_str()),
        _ => Err(ExecutionError::function_error(f, "expected a string")),
    }
}

fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::UInt(x), Value::UInt(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = args_of(&args)?;
    let l = list_arg(&a[0], "isSorted")?;
    let mut sorted = true;
    for w in l.windows(2) {
        match compare(&w[0], &w[1]) {
            Some(std::cmp::Ordering::Greater) => sorted = false,
            Some(_) => {}
            None => {
                return Err(ExecutionError::function_error(
                    "isSorted",
                    "list elements are not comparable",
                ));
            }
        }
    }
    ret(Value::Bool(sorted))
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = args_of(&args)?;
    let l = list_arg(&a[0], "sum")?;
    let mut acc = Value::Int(0);
    for (i, v) in l.iter().enumerate() {
        acc = match (&acc, v) {
            (Value::Int(x), Value::Int(y)) => Value::Int(
                x.checked_add(*y)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            ),
            (Value::Int(_), Value::UInt(y)) if i == 0 => Value::UInt(*y),
            (Value::UInt(x), Value::UInt(y)) => Value::UInt(
                x.checked_add(*y)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            ),
            (Value::Int(_), Value::Float(y)) if i == 0 => Value::Float(*y),
            (Value::Float(x), Value::Float(y)) => Value::Float(x + y),
            _ => {
                return Err(ExecutionError::function_error(
                    "sum",
                    "list elements are not summable",
                ));
            }
        };
    }
    ret(acc)
}

fn extreme<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    name: &str,
    want: std::cmp::Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = args_of(&args)?;
    let l = list_arg(&a[0], name)?;
    let mut best: Option<&Value> = None;
    for v in l.iter() {
        best = match best {
            None => Some(v),
            Some(b) => match compare(v, b) {
                Some(o) if o == want => Some(v),
                Some(_) => Some(b),
                None => {
                    return Err(ExecutionError::function_error(
                        name,
                        "list elements are not comparable",
                    ));
                }
            },
        };
    }
    match best {
        Some(v) => ret(v.clone()),
        None => Err(ExecutionError::function_error(
            name,
            format!("{name} called on empty list"),
        )),
    }
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "min", std::cmp::Ordering::Less)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "max", std::cmp::Ordering::Greater)
}

fn list_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = args_of(&args)?;
    let l = list_arg(&a[0], "indexOf")?;
    let pos = l.iter().position(|v| *v == a[1]).map_or(-1, |p| p as i64);
    ret(Value::Int(pos))
}

fn list_last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = args_of(&args)?;
    let l = list_arg(&a[0], "lastIndexOf")?;
    let pos = l.iter().rposition(|v| *v == a[1]).map_or(-1, |p| p as i64);
    ret(Value::Int(pos))
}

fn regex_of(pattern: &str, f: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(pattern).map_err(|e| ExecutionError::function_error(f, e))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = args_of(&args)?;
    let re = regex_of(str_arg(&a[1], "find")?, "find")?;
    let s = str_arg(&a[0], "find")?;
    ret(Value::from(
        re.find(s)
            .map(|m| m.as_str().to_string())
            .unwrap_or_default(),
    ))
}

fn find_all_impl<'b, 'v>(
    a: &[Value],
    limit: Option<i64>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let re = regex_of(str_arg(&a[1], "findAll")?, "findAll")?;
    let s = str_arg(&a[0], "findAll")?;
    let n = match limit {
        Some(n) if n >= 0 => usize::try_from(n).unwrap_or(usize::MAX),
        _ => usize::MAX,
    };
    let found: Vec<Value> = re
        .find_iter(s)
        .take(n)
        .map(|m| Value::from(m.as_str().to_string()))
        .collect();
    ret(Value::List(Arc::new(found)))
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = args_of(&args)?;
    find_all_impl(&a, None)
}

fn find_all_n<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = args_of(&args)?;
    let n = match a.get(2) {
        Some(Value::Int(n)) => *n,
        _ => {
            return Err(ExecutionError::function_error(
                "findAll",
                "expected an int limit",
            ));
        }
    };
    find_all_impl(&a, Some(n))
}

fn is_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = args_of(&args)?;
    let s = str_arg(&a[0], "isURL")?;
    ret(Value::Bool(crate::schema::format::is_absolute_uri_or_path(
        s,
    )))
}

#[cfg(test)]
mod tests;
