// The pendulum of `tests/modelica/flat/pendulum_flat.dae` with its
// length constraint written through a function: index 3, the same
// offsets and the same solution as the flat form.
model FunctionPendulum
  function squaredNorm "x^2 + y^2"
    input Real x;
    input Real y;
    output Real n;
  algorithm
    n := 0;
    for v in {x, y} loop
      n := n + v^2;
    end for;
  end squaredNorm;
  parameter Real m = 1;
  parameter Real g = 9.81;
  parameter Real L = 1;
  Real x(start = 1);
  Real y(start = 0, fixed = true);
  Real vx(start = 0);
  Real vy(start = 0, fixed = true);
  Real lambda;
equation
  der(x) = vx;
  der(y) = vy;
  m*der(vx) = lambda*x;
  m*der(vy) = lambda*y - m*g;
  squaredNorm(x, y) = L^2;
  annotation(experiment(StopTime = 2, Interval = 0.02, Tolerance = 1e-8));
end FunctionPendulum;
