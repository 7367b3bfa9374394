// A function with two outputs, used as a tuple equation and (its first
// output) in an expression: polar coordinates of (cos 2t, sin 2t)·(1 + t);
// a function with an array output filled by a `for` loop:
// powers(t) = {t, t^2, t^3}.
model Outputs
  function polar "the radius and angle of (x, y)"
    input Real x;
    input Real y;
    output Real r;
    output Real phi;
  algorithm
    r := sqrt(x^2 + y^2);
    phi := Modelica.Math.atan2(y, x);
  end polar;
  function sumDiff
    input Real a;
    input Real b;
    output Real s;
    output Real d;
  protected
    Real t;
  algorithm
    (s, t) := polar(a, b);
    s := a + b;
    d := a - b;
  end sumDiff;
  function powers "the first n powers of x"
    input Real x;
    input Integer n = 3;
    output Real p[n];
  algorithm
    p[1] := x;
    for k in 2:n loop
      p[k] := p[k - 1]*x;
    end for;
  end powers;
  Real r;
  Real phi;
  Real q[3];
  Real r2;
  Real s;
  Real d;
equation
  (r, phi) = polar((1 + time)*cos(2*time), (1 + time)*sin(2*time));
  r2 = 2*polar(3, 4);
  (s, d) = sumDiff(time, 1);
  q = powers(time);
  annotation(experiment(StopTime = 1, Interval = 0.1));
end Outputs;
