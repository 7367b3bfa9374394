//! Names and subscripts: unknowns, parameters (evaluated on demand),
//! constants and `for` variables referenced by name, whole arrays and
//! indexed elements, and the report of an undeclared name.

use super::{Access, EvalState, Lowerer, Mode, R, Reported, SymKind, Val, shape_text, ty_name};
use crate::BaseType;

use crate::suggest::did_you_mean;
use daec_diag::{Diagnostic, Span, codes};
use daec_expr::{ExprId, ParamId};
use daec_syntax::ast::{self, BinOp, ExprKind};

impl<'a> Lowerer<'a> {
    pub(super) fn name(&mut self, parts: &[ast::Ident], span: Span, mode: Mode) -> R<Val> {
        let first = &parts[0];
        if parts.len() > 1 {
            let dotted: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
            let value = match dotted.as_slice() {
                ["Modelica", "Constants", "pi"] => Some(std::f64::consts::PI),
                ["Modelica", "Constants", "e"] => Some(std::f64::consts::E),
                ["Modelica", "Constants", "g_n"] => Some(9.80665),
                _ => None,
            };
            return match value {
                Some(v) => Ok(Val::Scalar(BaseType::Real, self.pool.constant(v))),
                None => Err(self.error(
                    Diagnostic::error(
                        codes::UNDECLARED,
                        format!("cannot find `{}`", dotted.join(".")),
                    )
                    .with_primary(span, "not declared")
                    .with_note("daec models are flat: components and records are not supported"),
                )),
            };
        }
        let name = first.name.as_str();
        if let Some(&(_, v)) = self.loop_vars.iter().rev().find(|(n, _)| *n == name) {
            return Ok(Val::Scalar(BaseType::Integer, self.pool.constant(v as f64)));
        }
        if name == "time" {
            if mode == Mode::Const {
                return Err(self.error(
                    Diagnostic::error(codes::TYPE_MISMATCH, "`time` is not a constant")
                        .with_primary(span, "varies in time")
                        .with_note("sizes, parameter values and start values must be constant"),
                ));
            }
            return Ok(Val::Scalar(BaseType::Real, self.pool.time()));
        }
        let Some(&s) = self.by_name.get(name) else {
            return Err(self.undeclared(first));
        };
        let kind = self.symbols[s].kind;
        if kind == SymKind::Unknown {
            if mode == Mode::Const {
                return Err(self.error(
                    Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        format!("`{name}` is an unknown, not a constant"),
                    )
                    .with_primary(span, "unknowns vary in time")
                    .with_note("sizes, parameter values and start values must be constant")
                    .with_help(format!(
                        "declare `{name}` as a `parameter` if it is constant"
                    )),
                ));
            }
            if self.symbols[s].state != EvalState::Done {
                return Err(Reported);
            }
            let first_idx = self.symbols[s].first;
            if self.symbols[s].dims.is_empty() {
                return Ok(Val::Scalar(
                    BaseType::Real,
                    self.pool.var(first_idx as u32, 0),
                ));
            }
            let dims = self.symbols[s].dims.clone();
            let n: usize = dims.iter().product();
            let elems: Vec<ExprId> = (0..n)
                .map(|i| self.pool.var((first_idx + i) as u32, 0))
                .collect();
            return Ok(Val::from_parts(BaseType::Real, dims, elems));
        }
        if kind == SymKind::Discrete
            && let Some(v) = self.discrete_name(s, span, mode)
        {
            return v;
        }
        self.evaluate_parameter(s)?;
        let sym = &self.symbols[s];
        let (first_idx, ty, dims) = (sym.first, sym.ty, sym.dims.clone());
        let n: usize = dims.iter().product();
        let symbolic = mode == Mode::Equation
            && ((kind == SymKind::Parameter && ty == BaseType::Real) || kind == SymKind::Discrete);
        if dims.is_empty() {
            let e = if symbolic {
                self.pool.param(ParamId(first_idx as u32))
            } else {
                self.pool.constant(self.param_values[first_idx])
            };
            return Ok(Val::Scalar(ty, e));
        }
        let elems: Vec<ExprId> = (0..n)
            .map(|i| {
                if symbolic {
                    self.pool.param(ParamId((first_idx + i) as u32))
                } else {
                    self.pool.constant(self.param_values[first_idx + i])
                }
            })
            .collect();
        Ok(Val::from_parts(ty, dims, elems))
    }

    fn undeclared(&mut self, id: &ast::Ident) -> Reported {
        let mut candidates: Vec<&str> = self.by_name.keys().copied().collect();
        candidates.extend(self.loop_vars.iter().map(|(n, _)| *n));
        candidates.push("time");
        candidates.sort_unstable();
        let mut d = Diagnostic::error(
            codes::UNDECLARED,
            format!("cannot find `{}` in this model", id.name),
        )
        .with_primary(id.span, "not declared");
        if let Some(s) = did_you_mean(&id.name, candidates) {
            d = d.with_help(format!("did you mean `{s}`?"));
        } else {
            d = d.with_help(format!(
                "declare it, e.g. `Real {};` or `parameter Real {} = …;`",
                id.name, id.name
            ));
        }
        self.error(d)
    }

    /// A declared array referenced by name, without materialising all its
    /// elements (so that `x[k]` in a loop over `k` costs O(1), not O(N)).
    fn lazy_symbol(&mut self, id: &ast::Ident, mode: Mode) -> R<Option<(BaseType, usize, Access)>> {
        let name = id.name.as_str();
        if self.loop_vars.iter().any(|(n, _)| *n == name) || name == "time" {
            return Ok(None);
        }
        let Some(&s) = self.by_name.get(name) else {
            return Ok(None);
        };
        match self.symbols[s].kind {
            SymKind::Unknown => {
                if mode == Mode::Const {
                    return Ok(None);
                }
                if self.symbols[s].state != EvalState::Done {
                    return Err(Reported);
                }
                Ok(Some((
                    BaseType::Real,
                    s,
                    Access::Unknown(self.symbols[s].first),
                )))
            }
            SymKind::Discrete if mode == Mode::Const || self.decl(s).binding.is_some() => Ok(None),
            kind => {
                self.evaluate_parameter(s)?;
                let sym = &self.symbols[s];
                let symbolic = mode == Mode::Equation
                    && ((kind == SymKind::Parameter && sym.ty == BaseType::Real)
                        || kind == SymKind::Discrete);
                let access = if symbolic {
                    Access::Param(sym.first)
                } else {
                    Access::Value(sym.first)
                };
                Ok(Some((sym.ty, s, access)))
            }
        }
    }

    fn element(&mut self, access: Access, offset: usize) -> ExprId {
        match access {
            Access::Unknown(first) => self.pool.var((first + offset) as u32, 0),
            Access::Param(first) => self.pool.param(ParamId((first + offset) as u32)),
            Access::Value(first) => self.pool.constant(self.param_values[first + offset]),
        }
    }

    /// A subscript that is an integer literal or a loop variable (the
    /// common case `x[k]`, `x[k + 1]` in loops), without building values.
    fn quick_subscript(&self, ix: &ast::Expr) -> Option<i64> {
        let leaf = |e: &ast::Expr| -> Option<i64> {
            match &e.kind {
                ExprKind::Integer(i) => Some(*i),
                ExprKind::Name(p) if p.len() == 1 => self
                    .loop_vars
                    .iter()
                    .rev()
                    .find(|(n, _)| *n == p[0].name)
                    .map(|&(_, v)| v),
                _ => None,
            }
        };
        match &ix.kind {
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } => leaf(lhs)?.checked_add(leaf(rhs)?),
            ExprKind::Binary {
                op: BinOp::Sub,
                lhs,
                rhs,
            } => leaf(lhs)?.checked_sub(leaf(rhs)?),
            _ => leaf(ix),
        }
    }

    pub(super) fn index(
        &mut self,
        base: &ast::Expr,
        indices: &[ast::Expr],
        span: Span,
        mode: Mode,
    ) -> R<Val> {
        let lazy = match &base.kind {
            ExprKind::Name(p) if p.len() == 1 => self.lazy_symbol(&p[0], mode)?,
            _ => None,
        };
        // Fast path: all subscripts are in-range integers.
        if let Some((ty, sym, access)) = &lazy
            && self.symbols[*sym].dims.len() == indices.len()
        {
            let dims = &self.symbols[*sym].dims;
            let mut offset = 0usize;
            let mut ok = true;
            for (k, ix) in indices.iter().enumerate() {
                match self.quick_subscript(ix) {
                    Some(i) if i >= 1 && (i as usize) <= dims[k] => {
                        offset = offset * dims[k] + (i as usize - 1);
                    }
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                return Ok(Val::Scalar(*ty, self.element(*access, offset)));
            }
        }
        let (ty, shape, value, access) = match lazy {
            Some((ty, sym, access)) => (ty, self.symbols[sym].dims.clone(), None, Some(access)),
            None => {
                let v = self.lower_expr(base, mode)?;
                (v.ty(), v.shape().to_vec(), Some(v), None)
            }
        };
        let base_name = match &base.kind {
            ExprKind::Name(p) => p
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>()
                .join("."),
            _ => "this expression".to_string(),
        };
        if indices.len() != shape.len() {
            return Err(self.error(
                Diagnostic::error(
                    codes::SHAPE,
                    format!(
                        "`{base_name}` has {} dimension{} but {} subscript{} given",
                        shape.len(),
                        if shape.len() == 1 { "" } else { "s" },
                        indices.len(),
                        if indices.len() == 1 { " is" } else { "s are" },
                    ),
                )
                .with_primary(span, format!("`{base_name}` is {}", shape_text(&shape))),
            ));
        }
        // Each subscript selects a list of positions; scalar subscripts drop
        // the dimension.
        let mut selections: Vec<(Vec<usize>, bool)> = Vec::with_capacity(indices.len());
        for (k, ix) in indices.iter().enumerate() {
            let size = shape[k];
            let picks: Vec<i64>;
            let keep_dim;
            match &ix.kind {
                ExprKind::Colon => {
                    picks = (1..=size as i64).collect();
                    keep_dim = true;
                }
                ExprKind::End => {
                    picks = vec![size as i64];
                    keep_dim = false;
                }
                _ => {
                    let iv = self.lower_subscript(ix, size)?;
                    keep_dim = iv.1;
                    picks = iv.0;
                }
            }
            let mut pos = Vec::with_capacity(picks.len());
            for p in picks {
                if p < 1 || p as usize > size {
                    return Err(self.error(
                        Diagnostic::error(
                            codes::INDEX_RANGE,
                            format!("index {p} is out of range for `{base_name}` of size {size}"),
                        )
                        .with_primary(ix.span, format!("valid subscripts are 1 to {size}"))
                        .with_secondary(span, "in this subscript")
                        .with_note("Modelica arrays are indexed from 1"),
                    ));
                }
                pos.push(p as usize - 1);
            }
            selections.push((pos, keep_dim));
        }
        let mut strides = vec![1usize; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * shape[k + 1];
        }
        let mut out_shape = Vec::new();
        for (pos, keep) in &selections {
            if *keep {
                out_shape.push(pos.len());
            }
        }
        let mut out = Vec::new();
        let mut counter = vec![0usize; selections.len()];
        let total: usize = selections.iter().map(|(p, _)| p.len()).product();
        for _ in 0..total {
            let off: usize = counter
                .iter()
                .enumerate()
                .map(|(k, &c)| selections[k].0[c] * strides[k])
                .sum();
            let e = match (&value, access) {
                (Some(v), _) => v.elems()[off],
                (None, Some(a)) => self.element(a, off),
                (None, None) => return Err(Reported),
            };
            out.push(e);
            for k in (0..counter.len()).rev() {
                counter[k] += 1;
                if counter[k] < selections[k].0.len() {
                    break;
                }
                counter[k] = 0;
            }
        }
        Ok(Val::from_parts(ty, out_shape, out))
    }

    /// A subscript: an Integer (scalar) or an Integer range/array (keeps the
    /// dimension). `end` inside it means the size.
    fn lower_subscript(&mut self, ix: &ast::Expr, size: usize) -> R<(Vec<i64>, bool)> {
        self.loop_vars.push(("end", size as i64));
        let v = self.lower_expr(ix, Mode::Const);
        self.loop_vars.pop();
        let v = v?;
        if v.ty() != BaseType::Integer {
            return Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("a subscript must be an Integer, found {}", ty_name(v.ty())),
                )
                .with_primary(ix.span, format!("this is {}", ty_name(v.ty()))),
            ));
        }
        let keep = !v.shape().is_empty();
        let picks = v
            .elems()
            .iter()
            .map(|&e| self.const_value(e).map_or(i64::MIN, |x| x as i64))
            .collect();
        Ok((picks, keep))
    }
}
