// The `derivative`, `Inline` and `LateInline` annotations change nothing:
// every call is inlined and the inlined body differentiated exactly. `sq`
// names a deliberately wrong derivative (100*u*du); v = der(x) with
// x = sq(time) is still 2*t. `halve` is the workaround the E0140
// diagnostic of a `while` on run-time values proposes: a `for` over a
// known bound with `break` halves 10 + t until it is below 1:
// h = (10 + t)/16 for t in [0, 6).
model Annotations
  function sq "u^2, with a wrong derivative annotation"
    input Real u;
    output Real y;
  algorithm
    y := u^2;
    annotation(derivative = sqWrong, Inline = false, LateInline = true);
  end sq;
  function sqWrong "not the derivative of sq"
    input Real u;
    input Real du;
    output Real dy;
  algorithm
    dy := 100*u*du;
  end sqWrong;
  function halve "halves x until it is below 1, at most 6 times"
    input Real x;
    output Real y;
  algorithm
    y := x;
    for i in 1:6 loop
      if y < 1 then
        break;
      end if;
      y := y/2;
    end for;
  end halve;
  Real x;
  Real v;
  Real h;
equation
  x = sq(time);
  v = der(x);
  h = halve(10 + time);
  annotation(experiment(StopTime = 5, Interval = 0.1));
end Annotations;
