model Chain
  parameter Integer n = 4;
  Real x[n](each start = 0, each fixed = true);
equation
  for i in 1:n - 1 loop
    der(x[i]) = x[i + 1] - x[i];
  end for;
end Chain;

model Top
  Chain c;
end Top;
