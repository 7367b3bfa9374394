model A
  extends B;
end A;

model B
  extends A;
  Real x;
equation
  x = 1;
end B;

model Top
  A a;
end Top;
