model Top
  function f
    input Real x;
    input Real k;
    output Real y;
  algorithm
    y := k*x;
  end f;
  Real a;
equation
  a = f(time);
end Top;
