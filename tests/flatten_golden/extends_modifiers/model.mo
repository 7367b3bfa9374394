// `extends` with modifiers: the outer modifier wins over the clause's,
// which wins over the base class declaration.
partial model Base
  parameter Real k = 1;
  parameter Real c = 2;
  Real x(start = 0, fixed = true);
end Base;

model Middle
  extends Base(k = 3, x(start = 1));
equation
  der(x) = -k*x + c;
end Middle;

model Top
  Middle a;
  Middle b(k = 5, c = 7);
end Top;
