// A `while` loop on run-time values that never ends for x > 0: daec
// calls `count` at run time, and the run stops with the iteration limit.
model Endless
  function count "counts up while x is positive: never ends for x > 0"
    input Real x;
    output Real y;
  algorithm
    y := 0;
    while x > 0 loop
      y := y + 1;
    end while;
  end count;
  Real y;
equation
  y = count(time - 0.5);
  annotation(experiment(StopTime = 1));
end Endless;
