model Gain
  final parameter Real k = 2;
  Real y;
equation
  y = k;
end Gain;

model Top
  Gain g(k = 3);
end Top;
