model Node
  Real x;
  Node next;
equation
  x = 1;
end Node;

model Top
  Node n;
end Top;
