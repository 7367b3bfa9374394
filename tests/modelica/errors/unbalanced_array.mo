model Decay
  parameter Integer n = 2;
  Real x[n](each start = 1, each fixed = true);
  Real y[n];
equation
  der(x) = -x;
end Decay;

model Top
  Decay d(n = 3);
end Top;
