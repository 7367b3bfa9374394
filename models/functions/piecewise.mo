// A piecewise-linear saturation written with `if`/`elseif`/`else` in a
// function, called with named and default arguments: y = sat(sin(2πt))
// with limits ±0.5, and z = sat(x = 2 sin(2πt), hi = 1) (lo = -hi).
model Piecewise
  function sat "clip x to [lo, hi]"
    input Real x;
    input Real hi = 0.5;
    input Real lo = -hi;
    output Real y;
  algorithm
    if x > hi then
      y := hi;
    elseif x < lo then
      y := lo;
    else
      y := x;
    end if;
  end sat;
  Real y;
  Real z;
equation
  y = sat(Modelica.Math.sin(2*Modelica.Constants.pi*time));
  z = sat(hi = 1, x = 2*sin(2*Modelica.Constants.pi*time));
  annotation(experiment(StopTime = 1, Interval = 0.05));
end Piecewise;
