// Nested modifiers (`a(b(c = 1))` and `a.b.c = 1`), `each` and `final`.
model Inner
  parameter Real p = 0;
  Real x[3](start = {1, 2, 3});
equation
  der(x) = -p*x;
end Inner;

model Outer
  Inner i1(final p = 2);
  Inner i2(x(each fixed = true));
end Outer;

model Top
  Outer o(i2(p = 4), i1.x(start = {4, 5, 6}));
end Top;
