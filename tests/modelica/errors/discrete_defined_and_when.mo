model Top
  Real x(start = 0, fixed = true);
  Integer k(start = 0);
equation
  der(x) = 1;
  k = if x > 1 then 1 else 0;
  when x > 2 then
    k = 2;
  end when;
end Top;
