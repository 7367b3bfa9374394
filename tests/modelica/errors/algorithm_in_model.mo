model Top
  Real a;
algorithm
  a := time;
end Top;
