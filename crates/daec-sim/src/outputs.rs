//! Output equations: equations that only define a variable for the
//! results, such as an energy `E = m/2*(vx^2 + vy^2) + m*g*y` that no
//! other equation uses. For the formulations that cannot take them they
//! are split off the model before the analysis ([`split_outputs`]) and
//! evaluated from the other unknowns at every accepted step and output
//! point ([`Outputs::row`]); the results keep all the model's
//! columns.
//!
//! An equation is an output equation of the unknown `v` when
//!
//! * `v` occurs in it and in no other (remaining) equation, never
//!   differentiated — so every matching assigns the equation to `v`, and
//!   the canonical offsets of the pair are 0: the Σ-method neither
//!   differentiates it nor needs it for the others;
//! * it is explicit in `v`: `a·v + b = 0` with `a` a constant or an
//!   expression of parameters, nonzero at their values, and `b` free of
//!   derivatives (a value from the solution at one point);
//! * `v` is not `fixed`, and occurs in no initial equation, `when`
//!   condition or `reinit`.
//!
//! Removing such pairs repeatedly also removes outputs of outputs
//! (`E = K + U` with `K` and `U` defined by output equations); at least
//! one unknown is kept.
//!
//! The split is made for the index-3 formulation of projected Radau IIA
//! and for GGL ([`splits_outputs`]): with an output equation the DAE as
//! written is no index-3 Hessenberg system (an algebraic equation in
//! velocities), and GGL finds an algebraic equation that is not a
//! position constraint; without it both apply. The other formulations
//! integrate output equations as index-1 algebraic rows, and keep them:
//! splitting would make their Newton systems smaller, but it takes the
//! outputs out of RADAU5's error estimate and so changes the step sizes
//! and results of models the library has validated (eight of them have
//! such equations).

use crate::bounds::Bounded;
use daec_expr::{Env, ExprId, ExprPool, Leaf, ParamId, Tape, TapeFrame};
use daec_model::Dae;
use daec_regularize::Form;
use rustc_hash::FxHashMap;

/// The output equations split off a model, and the columns of its
/// results: the model's unknowns as declared.
#[derive(Debug, Clone)]
pub struct Outputs {
    /// Names of the model's unknowns (the columns of the results).
    names: Vec<String>,
    /// The unknowns with `min` or `max` (by column).
    bounded: Vec<Bounded>,
    /// Column of each unknown of the remaining model.
    columns: Vec<usize>,
    /// Columns of the outputs, in the order of the tape's outputs.
    outputs: Vec<usize>,
    /// The outputs as functions of the remaining unknowns (inputs in
    /// their order), with its frame.
    code: Option<(Tape, TapeFrame)>,
    values: Vec<f64>,
    /// The parameters of the discrete variables, whose values are the
    /// last columns, after the unknowns'.
    discrete: Vec<usize>,
    /// The discrete variables defined outside `when`, the last columns
    /// ([`Defined`]).
    defined: Defined,
    /// The current parameter values (the discrete variables change at
    /// events, [`Outputs::set_params`]).
    params: Vec<f64>,
}

/// The columns of the discrete variables defined outside `when`
/// ([`daec_model::Dae::defined`]): their definitions, evaluated from the
/// model's unknowns and the current parameter values at each row. The
/// relations in them are evaluated at the row's point, as those of an
/// output equation are.
#[derive(Clone, Debug, Default)]
struct Defined {
    /// The definitions as functions of the unknowns they read, with the
    /// tape's frame (`None`: no such variable, or a definition the tape
    /// cannot take; the columns are then NaN).
    code: Option<(Tape, TapeFrame)>,
    /// The tape's inputs: `(unknown, order)` of each, a derivative read
    /// as NaN.
    inputs: Vec<(usize, u32)>,
    /// The input values of the current row.
    buffer: Vec<f64>,
    /// The values of the current row.
    values: Vec<f64>,
}

impl Defined {
    /// The tape of the definitions of `dae`.
    fn of(dae: &Dae) -> Defined {
        let n = dae.defined.len();
        let roots: Vec<ExprId> = dae.defined.iter().map(|d| d.value).collect();
        let mut leaves: Vec<ExprId> = Vec::new();
        let mut inputs = Vec::new();
        for leaf in roots.iter().flat_map(|&r| dae.pool.leaves(r)) {
            if let Some(Leaf::Var { unknown, order }) = dae.pool.as_leaf(leaf)
                && !leaves.contains(&leaf)
            {
                leaves.push(leaf);
                inputs.push((unknown as usize, order));
            }
        }
        let code = match n {
            0 => None,
            _ => Tape::compile(&dae.pool, &roots, &leaves).ok().map(|tape| {
                let frame = tape.frame(&dae.parameter_values());
                (tape, frame)
            }),
        };
        Defined {
            code,
            inputs,
            buffer: Vec::new(),
            values: vec![f64::NAN; n],
        }
    }

    /// Writes the definitions' values at `t` into `out`, from the model's
    /// unknowns `unknowns`.
    fn eval_into(&mut self, t: f64, unknowns: &[f64], out: &mut [f64]) {
        if let Some((tape, frame)) = &mut self.code {
            self.buffer.clear();
            self.buffer
                .extend(self.inputs.iter().map(|&(j, order)| match order {
                    0 => unknowns.get(j).copied().unwrap_or(f64::NAN),
                    _ => f64::NAN,
                }));
            tape.eval_frame(frame, t, &[&self.buffer], &mut self.values);
        }
        for (o, &v) in out.iter_mut().zip(&self.values) {
            *o = v;
        }
    }
}

/// Parameter values only (to evaluate the coefficient of an output).
struct ParamsOnly<'a>(&'a [f64]);

impl Env for ParamsOnly<'_> {
    fn var(&self, _: u32, _: u32) -> f64 {
        f64::NAN
    }
    fn param(&self, p: ParamId) -> f64 {
        self.0.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        f64::NAN
    }
}

impl Outputs {
    /// No output equations: the results' columns are the unknowns of
    /// `dae`.
    pub fn none(dae: &Dae) -> Outputs {
        let discrete: Vec<usize> = dae
            .discrete
            .iter()
            .map(|d| d.param as usize)
            .filter(|&p| !dae.parameters[p].name.starts_with('$'))
            .collect();
        let mut names: Vec<String> = dae.unknowns.iter().map(|u| u.name().into_owned()).collect();
        names.extend(discrete.iter().map(|&p| dae.parameters[p].name.clone()));
        names.extend(dae.defined.iter().map(|d| d.name.clone()));
        Outputs {
            names,
            bounded: Bounded::of(dae),
            columns: (0..dae.unknowns.len()).collect(),
            outputs: Vec::new(),
            code: None,
            values: Vec::new(),
            discrete,
            defined: Defined::of(dae),
            params: dae.parameter_values(),
        }
    }

    /// Takes new parameter values (the discrete variables' after an
    /// event).
    pub fn set_params(&mut self, params: &[f64]) {
        if params == self.params.as_slice() {
            return;
        }
        self.params = params.to_vec();
        if let Some((tape, frame)) = &mut self.code {
            *frame = tape.frame(params);
        }
        if let Some((tape, frame)) = &mut self.defined.code {
            *frame = tape.frame(params);
        }
    }

    /// The names of the results' columns (the model's unknowns).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The names of the variables computed by output equations, in
    /// column order.
    pub fn output_names(&self) -> Vec<&str> {
        let mut cols = self.outputs.clone();
        cols.sort_unstable();
        cols.iter().map(|&c| self.names[c].as_str()).collect()
    }

    /// The variables with `min` or `max`.
    pub(crate) fn bounded(&self) -> &[Bounded] {
        &self.bounded
    }

    /// The results' row at `t` from the values `z` of the remaining
    /// unknowns (further entries of `z`, the formulation's own unknowns,
    /// are ignored).
    pub(crate) fn row_into(&mut self, t: f64, z: &[f64], row: &mut Vec<f64>) {
        row.clear();
        row.resize(self.names.len(), 0.0);
        for (&c, &v) in self.columns.iter().zip(z) {
            row[c] = v;
        }
        if let Some((tape, frame)) = &mut self.code {
            let n = self.columns.len().min(z.len());
            self.values.resize(self.outputs.len(), 0.0);
            tape.eval_frame(frame, t, &[&z[..n]], &mut self.values);
            for (&c, &v) in self.outputs.iter().zip(&self.values) {
                row[c] = v;
            }
        }
        let defined = self.names.len() - self.defined.values.len();
        let first = defined - self.discrete.len();
        for (i, &p) in self.discrete.iter().enumerate() {
            row[first + i] = self.params.get(p).copied().unwrap_or(f64::NAN);
        }
        let (unknowns, rest) = row.split_at_mut(first);
        self.defined
            .eval_into(t, unknowns, &mut rest[defined - first..]);
    }

    /// The results' row at `t` from the values `z` of the remaining
    /// unknowns: the model's unknowns in their declared order, the
    /// outputs computed.
    pub fn row(&mut self, t: f64, z: &[f64]) -> Vec<f64> {
        let mut row = Vec::with_capacity(self.names.len());
        self.row_into(t, z, &mut row);
        row
    }
}

/// The value `−b/a` of unknown `j` that `residual = a·z_j + b` defines,
/// when `a` is a constant or parameter expression, nonzero at the
/// parameter values, and `b` contains no derivatives.
fn explicit(pool: &mut ExprPool, residual: ExprId, j: u32, params: &[f64]) -> Option<ExprId> {
    let v = pool.var(j, 0);
    let (coefs, rest) = pool.linear_in(residual, &[v])?;
    let a = *coefs.first()?;
    let only_params = pool
        .leaves(a)
        .iter()
        .all(|&l| matches!(pool.as_leaf(l), Some(Leaf::Param(_))));
    let value = pool.eval(a, &ParamsOnly(params));
    let no_derivatives = pool
        .leaves(rest)
        .iter()
        .all(|&l| !matches!(pool.as_leaf(l), Some(Leaf::Var { order, .. }) if order > 0));
    if !(only_params && value.is_finite() && value != 0.0 && no_derivatives) {
        return None;
    }
    let minus = pool.neg(rest);
    Some(pool.div(minus, a))
}

/// Unknowns that must stay in the model: `fixed` ones and those in
/// initial equations, `when` conditions and `reinit`s.
fn pinned(dae: &Dae) -> Vec<bool> {
    let mut pinned: Vec<bool> = dae.unknowns.iter().map(|u| u.fixed).collect();
    let mut roots: Vec<ExprId> = dae.initial_equations.iter().map(|e| e.residual).collect();
    for ev in &dae.events {
        roots.push(ev.condition);
        for &(j, v) in &ev.reinits {
            roots.push(v);
            if let Some(p) = pinned.get_mut(j as usize) {
                *p = true;
            }
        }
    }
    for id in dae.pool.topo_order(&roots) {
        if let Some(Leaf::Var { unknown, .. }) = dae.pool.as_leaf(id)
            && let Some(p) = pinned.get_mut(unknown as usize)
        {
            *p = true;
        }
    }
    pinned
}

/// The output equations of `dae` (see the module docs) as
/// `(unknown, equation, value)` in the order found: an output's value
/// may use the outputs found after it.
fn find_outputs(dae: &mut Dae) -> Vec<(usize, usize, ExprId)> {
    let n = dae.unknowns.len();
    let mut occurs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut differentiated = vec![false; n];
    let mut members: Vec<Vec<usize>> = Vec::with_capacity(dae.equations.len());
    for (i, eq) in dae.equations.iter().enumerate() {
        let orders = dae.pool.max_orders(eq.residual);
        for &(j, k) in &orders {
            if let Some(o) = occurs.get_mut(j as usize) {
                o.push(i);
                differentiated[j as usize] |= k > 0;
            }
        }
        members.push(orders.iter().map(|&(j, _)| j as usize).collect());
    }
    let pinned = pinned(dae);
    let params = dae.parameter_values();
    let mut live: Vec<usize> = occurs.iter().map(Vec::len).collect();
    let mut removed_eq = vec![false; dae.equations.len()];
    let mut removed = vec![false; n];
    let mut found = Vec::new();
    let mut changed = true;
    while changed && found.len() + 1 < n {
        changed = false;
        for j in 0..n {
            if removed[j] || pinned[j] || differentiated[j] || live[j] != 1 {
                continue;
            }
            let Some(&i) = occurs[j].iter().find(|&&i| !removed_eq[i]) else {
                continue;
            };
            let residual = dae.equations[i].residual;
            let Some(value) = explicit(&mut dae.pool, residual, j as u32, &params) else {
                continue;
            };
            removed[j] = true;
            removed_eq[i] = true;
            for &k in &members[i] {
                live[k] -= 1;
            }
            found.push((j, i, value));
            changed = true;
            if found.len() + 1 >= n {
                break;
            }
        }
    }
    found
}

/// `items` without the ones marked in `drop` (entries beyond `drop` are
/// kept).
fn without<T: Clone>(items: &[T], drop: &[bool]) -> Vec<T> {
    items
        .iter()
        .enumerate()
        .filter(|&(i, _)| !drop.get(i).copied().unwrap_or(false))
        .map(|(_, x)| x.clone())
        .collect()
}

/// Whether the formulation `form` is integrated without the model's
/// output equations (see the module docs): the index-3 formulation and
/// GGL.
pub fn splits_outputs(form: Form) -> bool {
    matches!(form, Form::Index3 | Form::Ggl)
}

/// For a formulation that `splits_outputs`, splits the output
/// equations (see the module docs) off `dae`, which keeps the other
/// equations and unknowns (renumbered, in their order); the returned
/// [`Outputs`] computes the removed unknowns from the remaining ones.
/// Call it before the analysis. A model without output equations, or
/// for another formulation, is left as it is.
pub fn split_outputs(dae: &mut Dae, form: Form) -> Outputs {
    let mut outputs = Outputs::none(dae);
    if !splits_outputs(form) {
        return outputs;
    }
    let found = find_outputs(dae);
    if found.is_empty() {
        return outputs;
    }
    let n = dae.unknowns.len();
    // The values in the remaining unknowns: an output's value may use
    // outputs found after it, which are substituted first.
    let mut value_of: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut roots = Vec::with_capacity(found.len());
    let mut cols = Vec::with_capacity(found.len());
    for &(j, _, value) in found.iter().rev() {
        let v = dae.pool.substitute(value, &|l| value_of.get(&l).copied());
        let leaf = dae.pool.var(j as u32, 0);
        value_of.insert(leaf, v);
        roots.push(v);
        cols.push(j);
    }
    let mut removed = vec![false; n];
    let mut removed_eq = vec![false; dae.equations.len()];
    for &(j, i, _) in &found {
        removed[j] = true;
        removed_eq[i] = true;
    }
    let columns: Vec<usize> = (0..n).filter(|&j| !removed[j]).collect();
    let inputs: Vec<ExprId> = columns.iter().map(|&j| dae.pool.var(j as u32, 0)).collect();
    let Ok(tape) = Tape::compile(&dae.pool, &roots, &inputs) else {
        return outputs;
    };
    let frame = tape.frame(&dae.parameter_values());
    renumber(dae, &removed, &removed_eq, &columns);
    outputs.columns = columns;
    outputs.outputs = cols;
    outputs.code = Some((tape, frame));
    outputs
}

/// Removes the unknowns `removed` and equations `removed_eq` from `dae`
/// and renumbers the remaining unknowns (`columns[k]` becomes `k`) in
/// the equations, initial equations and events.
fn renumber(dae: &mut Dae, removed: &[bool], removed_eq: &[bool], columns: &[usize]) {
    let mut index: Vec<Option<u32>> = vec![None; removed.len()];
    for (k, &j) in columns.iter().enumerate() {
        index[j] = Some(k as u32);
    }
    dae.equations = without(&dae.equations, removed_eq);
    dae.spans.equations = dae.spans.equations.without(removed_eq);
    dae.unknowns = without(&dae.unknowns, removed);
    dae.spans.unknowns = dae.spans.unknowns.without(removed);
    let mut roots: Vec<ExprId> = Vec::new();
    for e in dae.equations.iter().chain(&dae.initial_equations) {
        roots.extend([e.lhs, e.rhs, e.residual]);
    }
    for ev in &dae.events {
        roots.push(ev.condition);
        roots.extend(ev.reinits.iter().map(|&(_, v)| v));
    }
    let mut map: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    for id in dae.pool.topo_order(&roots) {
        if let Some(Leaf::Var { unknown, order }) = dae.pool.as_leaf(id)
            && let Some(Some(k)) = index.get(unknown as usize)
            && *k != unknown
        {
            let to = dae.pool.var(*k, order);
            map.insert(id, to);
        }
    }
    if map.is_empty() {
        return;
    }
    let pool = &mut dae.pool;
    let mut remap = |e: ExprId| pool.substitute(e, &|l| map.get(&l).copied());
    for e in dae.equations.iter_mut().chain(&mut dae.initial_equations) {
        e.lhs = remap(e.lhs);
        e.rhs = remap(e.rhs);
        e.residual = remap(e.residual);
    }
    for ev in &mut dae.events {
        ev.condition = remap(ev.condition);
        for (j, v) in &mut ev.reinits {
            *j = index.get(*j as usize).copied().flatten().unwrap_or(*j);
            *v = remap(*v);
        }
    }
}
