model Top
  function f "triples the size of y at each iteration"
    input Real x;
    output Real y;
  algorithm
    y := x;
    for i in 1:40 loop
      if y > 1 then
        y := y/2;
      else
        y := 3*y;
      end if;
    end for;
  end f;
  Real a;
equation
  a = f(time);
end Top;
