model Top
  Real x(start = 0, fixed = true);
  Integer k;
equation
  der(x) = 1;
  k = if x > 1 then 1 else 0;
  k = if x > 2 then 2 else 0;
end Top;
