//! Tapes evaluated in two halves, on two threads when the run has them.
//!
//! A formulation's residual and Jacobian tapes have one output per row or
//! per Jacobian entry, each computed from the inputs alone: a large tape
//! is compiled as two tapes over the first and the second half of its
//! roots, and the halves are evaluated concurrently
//! (`std::thread::scope`) when the run is allowed a second thread
//! ([`FormProblem::set_threads`](crate::FormProblem::set_threads)), one
//! after the other otherwise. A tape computes every root bit for bit as
//! [`daec_expr::ExprPool::eval`] does, whichever tape it is compiled
//! into, so the values do not depend on the split or on the number of
//! threads; the halves repeat only the subexpressions both need.

use daec_expr::{ExprId, ExprPool, Tape, TapeError, TapeFrame, TapeLanes};
use std::cell::RefCell;

/// The number of outputs from which a tape is compiled in two halves. A
/// thread costs some tens of microseconds to start; half a tape of this
/// many outputs (a few instructions each) takes longer than that.
pub const PARALLEL_MIN_OUTPUTS: usize = 16_384;

/// One tape with its frame (parameters and constants loaded) and, for the
/// tape of the Radau stages, its three-lane frame.
#[derive(Debug, Clone)]
struct Part {
    tape: Tape,
    frame: RefCell<TapeFrame>,
    lanes: Option<RefCell<TapeLanes<3>>>,
}

impl Part {
    fn new(tape: Tape, params: &[f64], lanes: bool) -> Self {
        let frame = RefCell::new(tape.frame(params));
        let lanes = lanes.then(|| RefCell::new(tape.lanes::<3>(params)));
        Self { tape, frame, lanes }
    }

    fn set_params(&mut self, params: &[f64]) {
        *self.frame.get_mut() = self.tape.frame(params);
        if let Some(l) = &mut self.lanes {
            *l.get_mut() = self.tape.lanes::<3>(params);
        }
    }
}

/// A compiled list of roots: one tape, or two over its halves (from
/// [`PARALLEL_MIN_OUTPUTS`] roots on). The trait methods of the problem
/// take `&self`, hence the cells around the frames.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    head: Part,
    tail: Option<Part>,
}

impl Compiled {
    /// Compiles `roots` over `inputs` with the parameter values `params`;
    /// `lanes` adds the frame of three-point evaluations
    /// ([`Compiled::eval_lanes`]).
    pub(crate) fn new(
        pool: &ExprPool,
        roots: &[ExprId],
        inputs: &[ExprId],
        params: &[f64],
        lanes: bool,
    ) -> Result<Self, TapeError> {
        let cut = if roots.len() >= PARALLEL_MIN_OUTPUTS {
            roots.len() / 2
        } else {
            roots.len()
        };
        let (a, b) = roots.split_at(cut);
        let head = Part::new(Tape::compile(pool, a, inputs)?, params, lanes);
        let tail = if b.is_empty() {
            None
        } else {
            Some(Part::new(Tape::compile(pool, b, inputs)?, params, lanes))
        };
        Ok(Self { head, tail })
    }

    /// Whether the tape is compiled in two halves.
    pub(crate) fn is_split(&self) -> bool {
        self.tail.is_some()
    }

    /// Loads the parameter values `params` into the frames.
    pub(crate) fn set_params(&mut self, params: &[f64]) {
        self.head.set_params(params);
        if let Some(t) = &mut self.tail {
            t.set_params(params);
        }
    }

    /// True if the outputs depend on neither the inputs nor the time.
    pub(crate) fn is_constant(&self) -> bool {
        self.head.tape.is_constant() && self.tail.as_ref().is_none_or(|t| t.tape.is_constant())
    }

    /// Evaluates every root into `out` ([`Tape::eval_frame`]) with the
    /// inputs `inputs` concatenated, the halves on two threads if
    /// `threads > 1`.
    pub(crate) fn eval(&self, threads: usize, t: f64, inputs: &[&[f64]], out: &mut [f64]) {
        let head = &self.head;
        let Some(tail) = &self.tail else {
            head.tape
                .eval_frame(&mut head.frame.borrow_mut(), t, inputs, out);
            return;
        };
        let cut = head.tape.n_outputs().min(out.len());
        let (a, b) = out.split_at_mut(cut);
        let (mut fa, mut fb) = (head.frame.borrow_mut(), tail.frame.borrow_mut());
        let (fa, fb): (&mut TapeFrame, &mut TapeFrame) = (&mut fa, &mut fb);
        if threads > 1 {
            let tape = &tail.tape;
            std::thread::scope(|s| {
                s.spawn(|| tape.eval_frame(fb, t, inputs, b));
                head.tape.eval_frame(fa, t, inputs, a);
            });
        } else {
            head.tape.eval_frame(fa, t, inputs, a);
            tail.tape.eval_frame(fb, t, inputs, b);
        }
    }

    /// [`Tape::eval_lanes`] at three points (the Radau stages), the halves
    /// on two threads if `threads > 1`. Nothing is written without the
    /// three-lane frames (`lanes` false at compilation).
    pub(crate) fn eval_lanes(
        &self,
        threads: usize,
        t: [f64; 3],
        inputs: &[[&[f64]; 3]],
        out: [&mut [f64]; 3],
    ) {
        let head = &self.head;
        let Some(la) = &head.lanes else {
            return;
        };
        let Some((tail, lb)) = self
            .tail
            .as_ref()
            .and_then(|p| Some((p, p.lanes.as_ref()?)))
        else {
            head.tape.eval_lanes(&mut la.borrow_mut(), t, inputs, out);
            return;
        };
        let n_head = head.tape.n_outputs();
        let [o0, o1, o2] = out;
        let (a0, b0) = o0.split_at_mut(n_head.min(o0.len()));
        let (a1, b1) = o1.split_at_mut(n_head.min(o1.len()));
        let (a2, b2) = o2.split_at_mut(n_head.min(o2.len()));
        let (mut fa, mut fb) = (la.borrow_mut(), lb.borrow_mut());
        let (fa, fb): (&mut TapeLanes<3>, &mut TapeLanes<3>) = (&mut fa, &mut fb);
        if threads > 1 {
            let tape = &tail.tape;
            std::thread::scope(|s| {
                s.spawn(|| tape.eval_lanes(fb, t, inputs, [b0, b1, b2]));
                head.tape.eval_lanes(fa, t, inputs, [a0, a1, a2]);
            });
        } else {
            head.tape.eval_lanes(fa, t, inputs, [a0, a1, a2]);
            tail.tape.eval_lanes(fb, t, inputs, [b0, b1, b2]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use daec_expr::Func;

    /// `sin(z_i)·z_{i+1} + t` for every `i`: roots enough for two halves.
    fn chain(pool: &mut ExprPool, n: usize) -> (Vec<ExprId>, Vec<ExprId>) {
        let z: Vec<ExprId> = (0..n as u32).map(|j| pool.var(j, 0)).collect();
        let t = pool.time();
        let roots = (0..n)
            .map(|i| {
                let s = pool.func(Func::Sin, z[i]);
                let p = pool.mul(s, z[(i + 1) % n]);
                pool.add(p, t)
            })
            .collect();
        (roots, z)
    }

    #[test]
    fn halves_on_two_threads_give_the_values_of_one_tape() {
        let mut pool = ExprPool::new();
        let n = PARALLEL_MIN_OUTPUTS + 3;
        let (roots, z) = chain(&mut pool, n);
        let split = Compiled::new(&pool, &roots, &z, &[], true).unwrap();
        assert!(split.is_split());
        let whole = Tape::compile(&pool, &roots, &z).unwrap();
        let x: Vec<f64> = (0..n).map(|i| 0.1 * i as f64 - 3.0).collect();
        let mut want = vec![0.0; n];
        whole.eval(0.25, &x, &[], &mut want, &mut Vec::new());
        for threads in [1, 2] {
            let mut got = vec![f64::NAN; n];
            split.eval(threads, 0.25, &[&x], &mut got);
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
            let mut lanes = [vec![f64::NAN; n], vec![f64::NAN; n], vec![f64::NAN; n]];
            let [l0, l1, l2] = &mut lanes;
            split.eval_lanes(threads, [0.25; 3], &[[&x, &x, &x]], [l0, l1, l2]);
            for l in &lanes {
                assert!(l.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
            }
        }
    }

    #[test]
    fn a_small_tape_stays_whole() {
        let mut pool = ExprPool::new();
        let (roots, z) = chain(&mut pool, 10);
        let c = Compiled::new(&pool, &roots, &z, &[], false).unwrap();
        assert!(!c.is_split());
        let mut out = vec![0.0; 10];
        c.eval(2, 0.0, &[&[1.0; 10]], &mut out);
        assert_eq!(out[0], 1.0f64.sin());
    }
}
