//! The integration method of `daec simulate` (`--method`): the
//! overdetermined Radau IIA integrator (default) or the half-explicit
//! Runge–Kutta methods of Bäse (2017), behind one `Solver` interface for
//! the driver in [`crate::simulate()`].

use crate::error::{BadOption, SimError, Unsupported};
use daec_solve::{
    Herk, HerkOptions, Options, QuasiLinearDae, Radau5, Radau5Storage, SolveError, Stats, Step,
    StepControl, Tableau,
};
use std::fmt;
use std::str::FromStr;

/// Why `--method`/`--tableau` name no method ([`Method::from_names`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MethodError {
    /// `--tableau` with a method other than `herk`.
    #[error("--tableau applies only to --method herk")]
    TableauWithoutHerk {
        /// The method named.
        method: Method,
    },
    /// No method of this name.
    #[error("unknown method `{name}`; the methods are {}", Method::NAMES.join(", "))]
    UnknownMethod {
        /// The name given.
        name: String,
    },
    /// No tableau of this name.
    #[error(
        "unknown tableau `{name}`; the tableaus are {}",
        Tableau::ALL.map(Tableau::name).join(", ")
    )]
    UnknownTableau {
        /// The name given.
        name: String,
    },
}

/// The integrator refused the problem or its options.
pub(crate) fn refused(e: SolveError) -> SimError {
    let message = format!("the integrator refused the problem: {e}");
    SimError::options(BadOption::Integrator(e), message)
}

/// The integrator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Method {
    /// Overdetermined Radau IIA of order 5 (the default).
    #[default]
    Radau5,
    /// Projected Radau IIA for index-3 Hessenberg systems
    /// (projected-rk-index3-daes, §2): Radau IIA on the DAE as written
    /// (`--form index3`), each step's end point projected onto the
    /// position and velocity constraints.
    Radau5Projected,
    /// NDSolve's "Projection" method (ndsolve-dae-tutorial, "ODEs with
    /// Invariants", "Projection"): Radau IIA on the index-reduced
    /// formulation (HiC, or DI1) without the declared invariants, each
    /// accepted step's end point projected onto the model's constraints,
    /// all hidden constraints and the invariants with the least Euclidean
    /// change.
    Projection,
    /// The direct Radau IIA discretisation of second-order DAEs
    /// (wunderlich2005-second-order-daes, eqs. (29)/(30)) on the model as
    /// written, run by [`crate::second_order::integrate_second_order`].
    Radau2nd,
    /// The modified variable-step variable-order BDF method for
    /// second-order DAEs (wunderlich2005 §2.1, (15)) on the model as
    /// written, orders 1 to 5 with error control.
    Bdf2nd,
    /// 2-stage Gauss collocation on the second-order form
    /// (wunderlich2005 Example 2.4, order 4), step doubling.
    Gauss2nd,
    /// The order-2 general linear method in Nordsieck form of
    /// wunderlich2005 Example 2.11 with step-size changes (60), step
    /// doubling.
    Glm2nd,
    /// Half-explicit Runge–Kutta (Bäse 2017, Algorithm 3.3) with the given
    /// explicit tableau and step doubling; refused with
    /// [`SimError::Unsupported`] where it does not apply.
    Herk(Tableau),
}

impl Method {
    /// The method names `--method` accepts.
    pub const NAMES: [&'static str; 8] = [
        "radau5",
        "radau5-projected",
        "projection",
        "radau-2nd",
        "bdf-2nd",
        "gauss-2nd",
        "glm-2nd",
        "herk",
    ];

    /// Whether the method integrates the model as written in second-order
    /// form ([`crate::second_order::integrate_second_order`]).
    pub fn is_second_order(self) -> bool {
        matches!(
            self,
            Method::Radau2nd | Method::Bdf2nd | Method::Gauss2nd | Method::Glm2nd
        )
    }

    /// Builds a method from `--method NAME [--tableau T]` (the tableau
    /// only for `herk`, default HEM4).
    pub fn from_names(method: &str, tableau: Option<&str>) -> Result<Self, MethodError> {
        let plain = match method.trim().to_ascii_lowercase().as_str() {
            "radau5" => Method::Radau5,
            "radau5-projected" => Method::Radau5Projected,
            "projection" => Method::Projection,
            "radau-2nd" => Method::Radau2nd,
            "bdf-2nd" => Method::Bdf2nd,
            "gauss-2nd" => Method::Gauss2nd,
            "glm-2nd" => Method::Glm2nd,
            "herk" => {
                return Ok(Method::Herk(match tableau {
                    None => Tableau::default(),
                    Some(t) => t.parse().map_err(|_| MethodError::UnknownTableau {
                        name: t.to_string(),
                    })?,
                }));
            }
            _ => {
                return Err(MethodError::UnknownMethod {
                    name: method.to_string(),
                });
            }
        };
        match tableau {
            None => Ok(plain),
            Some(_) => Err(MethodError::TableauWithoutHerk { method: plain }),
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Method::Radau5 => f.write_str("radau5"),
            Method::Radau5Projected => f.write_str("radau5-projected"),
            Method::Projection => f.write_str("projection"),
            Method::Radau2nd => f.write_str("radau-2nd"),
            Method::Bdf2nd => f.write_str("bdf-2nd"),
            Method::Gauss2nd => f.write_str("gauss-2nd"),
            Method::Glm2nd => f.write_str("glm-2nd"),
            Method::Herk(t) => write!(f, "herk ({t})"),
        }
    }
}

impl FromStr for Method {
    type Err = MethodError;

    /// `radau5`, `herk` or `herk:TABLEAU`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once(':') {
            Some((m, t)) => Method::from_names(m, Some(t)),
            None => Method::from_names(s, None),
        }
    }
}

/// A bound integrator of either method (built once per integration
/// segment, so the size difference of the variants does not matter).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Solver<'p, P: QuasiLinearDae + ?Sized> {
    /// Radau IIA.
    Radau5(Radau5<'p, P>),
    /// Half-explicit Runge–Kutta.
    Herk(Herk<'p, P>),
}

impl<'p, P: QuasiLinearDae + ?Sized> Solver<'p, P> {
    /// Binds `method` to `problem` with the Radau options `options` (the
    /// tolerances, the step limit, the largest step and the error control
    /// are passed on to HERK). For HERK the
    /// applicability is checked at `(t, z)` (Bäse 2017, Criterion 3.6):
    /// if it does not apply, [`SimError::Unsupported`] says why.
    pub(crate) fn new(
        method: Method,
        problem: &'p P,
        options: Options,
        t: f64,
        z: &[f64],
    ) -> Result<Self, SimError> {
        match method {
            Method::Radau5 | Method::Radau5Projected | Method::Projection => Ok(Solver::Radau5(
                Radau5::new(problem, options).map_err(refused)?,
            )),
            Method::Radau2nd | Method::Bdf2nd | Method::Gauss2nd | Method::Glm2nd => {
                Err(SimError::unsupported(
                    Unsupported::MethodModel { method },
                    format!(
                        "--method {method} integrates the model as written (daec_sim::integrate_second_order), not a first-order formulation"
                    ),
                ))
            }
            Method::Herk(tableau) => {
                let herk_options = HerkOptions {
                    tableau,
                    rtol: options.rtol,
                    atol: options.atol,
                    max_steps: options.max_steps,
                    h_max: options.h_max,
                    error_control: options.error_control,
                    ..HerkOptions::default()
                };
                let mut herk = Herk::new(problem, herk_options).map_err(refused)?;
                match herk.selectors_at(t, z) {
                    Ok(_) => Ok(Solver::Herk(herk)),
                    Err(SolveError::InvalidProblem(m)) => Err(SimError::unsupported(
                        Unsupported::MethodModel { method },
                        format!(
                            "the half-explicit Runge–Kutta method does not apply to this model: {m}; use --method radau5"
                        ),
                    )),
                    Err(e) => Err(refused(e)),
                }
            }
        }
    }

    /// [`Solver::new`] at `(t, z)`; a Radau integrator on the storage
    /// `kept` (taken from it; [`Solver::keep`] gives it back).
    pub(crate) fn with_storage(
        method: Method,
        problem: &'p P,
        options: Options,
        (t, z): (f64, &[f64]),
        kept: &mut Radau5Storage,
    ) -> Result<Self, SimError> {
        match method {
            Method::Radau5 | Method::Radau5Projected | Method::Projection => {
                let storage = std::mem::take(kept);
                let radau = Radau5::with_storage(problem, options, storage).map_err(refused)?;
                Ok(Solver::Radau5(radau))
            }
            _ => Self::new(method, problem, options, t, z),
        }
    }

    /// Puts the storage of a Radau integrator back into `kept`, for the
    /// next [`Solver::with_storage`].
    pub(crate) fn keep(self, kept: &mut Radau5Storage) {
        if let Solver::Radau5(radau) = self {
            *kept = radau.into_storage();
        }
    }

    /// Integrates as [`Radau5::integrate`].
    pub(crate) fn integrate<F>(
        &mut self,
        t0: f64,
        z0: &[f64],
        t_end: f64,
        observer: F,
    ) -> Result<Stats, SolveError>
    where
        F: FnMut(&Step<'_>) -> StepControl,
    {
        match self {
            Solver::Radau5(s) => s.integrate(t0, z0, t_end, observer),
            Solver::Herk(s) => s.integrate(t0, z0, t_end, observer),
        }
    }

    /// Work counters of the last integration.
    pub(crate) fn stats(&self) -> Stats {
        match self {
            Solver::Radau5(s) => s.stats(),
            Solver::Herk(s) => s.stats(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_parse() {
        assert_eq!(Method::from_names("radau5", None), Ok(Method::Radau5));
        assert_eq!(
            Method::from_names("HERK", Some("kutta3")),
            Ok(Method::Herk(Tableau::Kutta3))
        );
        assert_eq!(
            Method::from_names("Projection", None),
            Ok(Method::Projection)
        );
        assert_eq!("herk".parse(), Ok(Method::Herk(Tableau::Hem4)));
        assert_eq!("herk:rk4".parse(), Ok(Method::Herk(Tableau::Rk4)));
        assert_eq!(
            Method::from_names("radau5", Some("rk4")),
            Err(MethodError::TableauWithoutHerk {
                method: Method::Radau5
            })
        );
        let unknown = Method::from_names("euler", None).unwrap_err();
        assert_eq!(
            unknown,
            MethodError::UnknownMethod {
                name: "euler".into()
            }
        );
        assert!(unknown.to_string().contains(
            "radau5, radau5-projected, projection, radau-2nd, bdf-2nd, gauss-2nd, glm-2nd, herk"
        ));
        for (name, m) in [
            ("bdf-2nd", Method::Bdf2nd),
            ("Gauss-2nd", Method::Gauss2nd),
            ("glm-2nd", Method::Glm2nd),
        ] {
            assert_eq!(Method::from_names(name, None), Ok(m));
            assert!(m.is_second_order());
            assert_eq!(
                Method::from_names(name, Some("rk4")),
                Err(MethodError::TableauWithoutHerk { method: m })
            );
        }
        assert_eq!(Method::Glm2nd.to_string(), "glm-2nd");
        assert!(!Method::Radau5.is_second_order());
        let tableau = Method::from_names("herk", Some("rk9")).unwrap_err();
        assert_eq!(tableau, MethodError::UnknownTableau { name: "rk9".into() });
        // the message of `Tableau`'s own parser
        assert_eq!(tableau.to_string(), "rk9".parse::<Tableau>().unwrap_err());
    }
}
