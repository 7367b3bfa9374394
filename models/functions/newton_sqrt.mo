// Functions evaluated at run time: `sqrt` by Newton's iteration, a
// `while` loop on the argument, which daec cannot inline. `SqrtAnnotated`
// gives its derivative by `annotation(derivative = …)` (MLS 3.6 §12.7.1);
// `SqrtPlain` is the same algorithm without it, differentiated by forward
// mode automatic differentiation of the algorithm.
//
// Index1:   der(x) = -x, y = sqrt(x)        x = 4 e^{-t},  y = 2 e^{-t/2}
// Index2:   der(x) = z,  sqrt(x) = 2 + t    x = (2 + t)^2, z = 2 (2 + t)
// (and the same with SqrtPlain: Index1AD, Index2AD)
package NewtonSqrt
  function SqrtAnnotated "sqrt(x) by Newton's iteration, with its derivative"
    input Real x;
    output Real y;
  protected
    Real d;
  algorithm
    y := if x > 1 then x else 1;
    d := 1;
    while abs(d) > 1e-15*y loop
      d := (y*y - x)/(2*y);
      y := y - d;
    end while;
    annotation(derivative = SqrtDer);
  end SqrtAnnotated;

  function SqrtDer "the derivative of sqrt: der_x/(2 sqrt(x))"
    input Real x;
    input Real der_x;
    output Real der_y;
  algorithm
    der_y := 0.5*der_x/sqrt(x);
  end SqrtDer;

  function SqrtPlain "sqrt(x) by Newton's iteration"
    input Real x;
    output Real y;
  protected
    Real d;
  algorithm
    y := if x > 1 then x else 1;
    d := 1;
    while abs(d) > 1e-15*y loop
      d := (y*y - x)/(2*y);
      y := y - d;
    end while;
  end SqrtPlain;

  model Index1
    Real x(start = 4, fixed = true);
    Real y;
  equation
    der(x) = -x;
    y = SqrtAnnotated(x);
    annotation(experiment(StopTime = 2, Interval = 0.1));
  end Index1;

  model Index2
    Real x(start = 4);
    Real z(start = 4);
  equation
    der(x) = z;
    SqrtAnnotated(x) = 2 + time;
    annotation(experiment(StopTime = 2, Interval = 0.1));
  end Index2;

  model Index1AD
    Real x(start = 4, fixed = true);
    Real y;
  equation
    der(x) = -x;
    y = SqrtPlain(x);
    annotation(experiment(StopTime = 2, Interval = 0.1));
  end Index1AD;

  model Index2AD
    Real x(start = 4);
    Real z(start = 4);
  equation
    der(x) = z;
    SqrtPlain(x) = 2 + time;
    annotation(experiment(StopTime = 2, Interval = 0.1));
  end Index2AD;
end NewtonSqrt;
