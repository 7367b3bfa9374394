model Top
  function halve "halves x until it is below 1"
    input Real x;
    output Real y;
  algorithm
    y := x;
    while y >= 1 loop
      y := y/2;
    end while;
  end halve;
  Real a;
equation
  a = halve(10 + time);
end Top;
