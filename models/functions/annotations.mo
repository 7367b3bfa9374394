// `Inline = false` makes daec call `sq` at run time, and its `derivative`
// annotation is then what differentiates it: `sqHalf` is deliberately
// half the derivative (u*du), so v = der(x) with x = sq(time) is t, not
// 2t — the annotation is honoured, as MLS 3.6 §12.7.1 says. `sq2` has
// `LateInline = true` and is inlined: w = der(sq2(time)) is the exact
// 2t whatever its annotation says. `halve` is the workaround the E0140
// diagnostic of a `while` on run-time values proposes: a `for` over a
// known bound with `break` halves 10 + t until it is below 1:
// h = (10 + t)/16 for t in [0, 6).
model Annotations
  function sq "u^2, called at run time, with half its derivative"
    input Real u;
    output Real y;
  algorithm
    y := u^2;
    annotation(derivative = sqHalf, Inline = false);
  end sq;
  function sq2 "u^2, inlined"
    input Real u;
    output Real y;
  algorithm
    y := u^2;
    annotation(derivative = sqHalf, LateInline = true);
  end sq2;
  function sqHalf "half the derivative of sq"
    input Real u;
    input Real du;
    output Real dy;
  algorithm
    dy := u*du;
  end sqHalf;
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
  Real x2;
  Real w;
  Real h;
equation
  x = sq(time);
  v = der(x);
  x2 = sq2(time);
  w = der(x2);
  h = halve(10 + time);
  annotation(experiment(StopTime = 5, Interval = 0.1));
end Annotations;
