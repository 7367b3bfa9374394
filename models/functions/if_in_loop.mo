// An `if` on run-time values in a `for` loop of 50 iterations: inlined,
// each iteration would double the expression (E0115 beyond a few
// iterations), so daec evaluates the function at run time. `collatz`
// halves a value above 1 and otherwise multiplies it by 1.5 and adds
// 0.1, 50 times; y = collatz(1 + t) and its derivative
// v = der(y) (forward-mode differentiation of the algorithm: the product
// of the factors 0.5 and 1.5 of the branches taken).
model IfInLoop
  function collatz "50 steps of a piecewise linear map"
    input Real x;
    output Real y;
  algorithm
    y := x;
    for i in 1:50 loop
      if y > 1 then
        y := y/2;
      else
        y := 1.5*y + 0.1;
      end if;
    end for;
  end collatz;
  Real y;
  Real v;
equation
  y = collatz(1 + time);
  v = der(y);
  annotation(experiment(StopTime = 1, Interval = 0.05));
end IfInLoop;
