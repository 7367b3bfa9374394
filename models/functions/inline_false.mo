// `annotation(Inline = false)` makes daec call a function it could
// inline at run time; `LateInline = true` (and `Inline = true`) keep
// inlining. `cubeCall` and `cubeInline` compute the same u^3 + sin(u);
// the pendulum-like index-2 model constrains x through each, so the
// derivative of the call (forward-mode differentiation of the algorithm)
// is used: both copies give the same results to round-off.
model InlineFalse
  function cubeCall
    input Real u;
    output Real y;
  protected
    Real s;
  algorithm
    s := u*u;
    y := s*u + sin(u);
    annotation(Inline = false);
  end cubeCall;
  function cubeInline
    input Real u;
    output Real y;
  protected
    Real s;
  algorithm
    s := u*u;
    y := s*u + sin(u);
    annotation(LateInline = true);
  end cubeInline;
  Real x1(start = 0.5);
  Real z1(start = 1);
  Real x2(start = 0.5);
  Real z2(start = 1);
equation
  der(x1) = z1;
  cubeCall(x1) = cubeCall(0.5) + time;
  der(x2) = z2;
  cubeInline(x2) = cubeInline(0.5) + time;
  annotation(experiment(StopTime = 1, Interval = 0.05));
end InlineFalse;
