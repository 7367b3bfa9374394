model Top
  function f
    input Real x;
    output Real y;
  protected
    Integer k = 0;
  algorithm
    y := x;
    while k >= 0 loop
      k := k + 1;
    end while;
  end f;
  Real a;
equation
  a = f(time);
end Top;
