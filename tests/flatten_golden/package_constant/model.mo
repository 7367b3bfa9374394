// Constants of packages in expressions, and a parameter through the
// hierarchy.
package Consts
  constant Real two = 2;
  constant Real four = two*two;
end Consts;

model Decay
  parameter Real rate = Consts.two;
  Real x(start = Consts.four, fixed = true);
equation
  der(x) = -rate*x;
end Decay;

model Top
  parameter Real r = 3;
  Decay d1;
  Decay d2(rate = r);
end Top;
