connector Pin
  Real v;
  flow Real i;
end Pin;

model A
  Pin p;
  Real x;
equation
  p.v = x;
  der(x) = -x;
end A;

model Circuit
  A a;
  A b;
equation
  connect(a.p, b.x);
end Circuit;
