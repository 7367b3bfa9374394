connector Pin
  Real v;
  flow Real i;
end Pin;

model Resistor
  Pin p;
  Pin n;
  parameter Real R = 1;
equation
  p.v - n.v = R * p.i;
  p.i + n.i = 0;
end Resistor;

model Divider
  Pin p;
  Pin n;
  Resistor R1;
  Resistor R2;
  Real u;
equation
  connect(p, R1.p);
  connect(R1.n, R2.p);
  connect(R2.n, n);
end Divider;

model Source
  Pin p;
  Pin n;
equation
  p.v - n.v = 1;
  p.i + n.i = 0;
end Source;

model Ground
  Pin p;
equation
  p.v = 0;
end Ground;

model Top
  Divider d;
  Source s;
  Ground g;
equation
  connect(s.p, d.p);
  connect(s.n, d.n);
  connect(s.n, g.p);
end Top;
