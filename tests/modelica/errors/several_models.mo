model A
  Real x = 1;
end A;

model B
  Real y = 2;
end B;
