connector Pin
  Real v;
  flow Real i;
end Pin;

connector Flange
  Real s;
  flow Real f;
end Flange;

model A
  Pin p;
equation
  p.v = 1;
end A;

model B
  Flange flange;
equation
  flange.s = 1;
end B;

model Circuit
  A a;
  B b;
equation
  connect(a.p, b.flange);
end Circuit;
