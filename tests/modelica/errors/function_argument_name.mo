model Top
  function f
    input Real x;
    input Real k = 1;
    output Real y;
  algorithm
    y := k*x;
  end f;
  Real a;
equation
  a = f(time, gain = 2);
end Top;
