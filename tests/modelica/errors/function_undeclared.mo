model Top
  function f
    input Real x;
    output Real y;
  algorithm
    y := x + z;
  end f;
  Real a;
equation
  a = f(time);
end Top;
