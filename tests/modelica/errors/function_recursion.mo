model Top
  function fact
    input Integer n;
    output Integer y;
  algorithm
    y := if n <= 1 then 1 else n*fact(n - 1);
  end fact;
  Real a;
equation
  a = fact(3)*time;
end Top;
