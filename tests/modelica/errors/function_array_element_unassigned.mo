model Top
  function f
    input Real x;
    output Real p[2];
  algorithm
    p[2] := p[1]*x;
    p[1] := x;
  end f;
  Real q[2];
equation
  q = f(time);
end Top;
