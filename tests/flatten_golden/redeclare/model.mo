// `replaceable` components and `redeclare` in a modifier (MLS 7.3): the
// redeclared class replaces the declared one, with its own modifiers.
model Slow
  parameter Real k = 1;
  Real x(start = 1, fixed = true);
equation
  der(x) = -k*x;
end Slow;

model Fast
  parameter Real k = 10;
  parameter Real c = 0;
  Real x(start = 1, fixed = true);
equation
  der(x) = -k*x + c;
end Fast;

model System
  replaceable Slow part;
  Slow other;
end System;

model Top
  System s(redeclare Fast part(c = 2));
end Top;
