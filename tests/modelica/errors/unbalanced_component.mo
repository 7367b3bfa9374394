connector Pin
  Real v;
  flow Real i;
end Pin;

partial model OnePort
  Pin p;
  Pin n;
  Real v;
  Real i;
equation
  v = p.v - n.v;
  0 = p.i + n.i;
  i = p.i;
end OnePort;

model Resistor
  extends OnePort;
  parameter Real R = 1;
end Resistor;

model Ground
  Pin p;
equation
  p.v = 0;
end Ground;

model Circuit
  Resistor R1(R = 2);
  Ground G;
equation
  connect(R1.p, G.p);
  connect(R1.n, G.p);
end Circuit;
