model Top
  function f
    input Real x;
    output Real y;
  algorithm
    x := 2*x;
    y := x;
  end f;
  Real a;
equation
  a = f(time);
end Top;
