// A component array connected in a ring by `for` loops.
connector C
  Real e;
  flow Real f;
end C;

model Node
  parameter Real g = 1;
  C a;
  C b;
  Real q(start = 0, fixed = true);
equation
  der(q) = a.f;
  a.f + b.f = 0;
  a.e - b.e = g*a.f;
end Node;

model Top
  parameter Integer n = 3;
  Node nodes[n](g = {1, 2, 3});
equation
  for i in 1:n - 1 loop
    connect(nodes[i].b, nodes[i + 1].a);
  end for;
  connect(nodes[n].b, nodes[1].a);
end Top;
