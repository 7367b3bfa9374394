model Top
  function f
    input Real x;
    output Real y;
  algorithm
    y := x;
  end f;
  Real a;
equation
  a = f(time, 2);
end Top;
