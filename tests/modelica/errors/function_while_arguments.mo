model Top
  function halve "halves x until it is below 1, keeping the steps"
    input Real x;
    output Real y;
  protected
    Real steps[2];
  algorithm
    y := x;
    while y >= 1 loop
      y := y/2;
    end while;
    steps := {x, y};
  end halve;
  Real a;
equation
  a = halve(10 + time);
end Top;
