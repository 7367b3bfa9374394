model Top
  function f
    input Real x;
    output Real y;
  algorithm
    if x > 0 then
      y := x;
    end if;
  end f;
  Real a;
equation
  a = f(time);
end Top;
