// Conditional components: the component whose condition is false is
// removed with its connections.
connector P
  Real v;
  flow Real i;
end P;

model Load
  P p;
  parameter Real r = 1;
equation
  p.v = r*p.i;
end Load;

model Top
  parameter Boolean withB = false;
  Load a(r = 2);
  Load b if withB;
equation
  connect(a.p, b.p);
end Top;
