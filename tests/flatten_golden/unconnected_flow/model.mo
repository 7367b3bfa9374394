// Unconnected flow variables of inside connectors are zero (MLS 9.2); a
// connection with an outside connector enters the sum with a minus sign.
connector Pin
  Real v;
  flow Real i;
end Pin;

model Res
  parameter Real R = 1;
  Pin p;
  Pin n;
equation
  p.v - n.v = R*p.i;
  p.i + n.i = 0;
end Res;

model Two "Two resistors in series between outside pins"
  Pin a;
  Pin b;
  Res r1;
  Res r2(R = 2);
equation
  connect(a, r1.p);
  connect(r1.n, r2.p);
  connect(r2.n, b);
end Two;

model Gnd
  Pin p;
equation
  p.v = 0;
end Gnd;

model Top "`t.a` stays unconnected: its current is zero"
  Two t;
  Res load(R = 3);
  Gnd gnd;
equation
  connect(t.b, load.p);
  connect(load.n, gnd.p);
end Top;
