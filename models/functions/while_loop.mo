// A `while` loop whose condition is known at each iteration: the n-th
// partial sum of the exponential series, y = Σ_{k=0}^{n} (a t)^k / k!
// with n = firstAbove(20) + 7 = 13, and early `return`/`break`:
// c = max(t - 0.5, 0).
model WhileLoop
  function expSeries "the partial sum of exp(x) up to the term x^n/n!"
    input Real x;
    input Integer n;
    output Real y;
  protected
    Real term;
    Integer k;
  algorithm
    y := 1;
    term := 1;
    k := 0;
    while k < n loop
      k := k + 1;
      term := term*x/k;
      y := y + term;
    end while;
  end expSeries;
  function firstAbove "1 + the first i in 1:10 with i*i > m, by `break`"
    input Integer m;
    output Integer r;
  algorithm
    r := 0;
    for i in 1:10 loop
      if i*i > m then
        r := i;
        break;
      end if;
    end for;
    r := r + 1;
  end firstAbove;
  function clipped "x, or 0 when x < 0, by `return`"
    input Real x;
    output Real y;
  algorithm
    y := 0;
    if x < 0 then
      return;
    end if;
    y := x;
  end clipped;
  parameter Real a = 0.5;
  parameter Integer n = firstAbove(20) + 7;
  Real y;
  Real c;
equation
  y = expSeries(a*time, n);
  c = clipped(time - 0.5);
  annotation(experiment(StopTime = 1, Interval = 0.1));
end WhileLoop;
