// A polynomial evaluated by Horner's scheme in a function with a `for`
// loop: x(t) = p(t) with p(s) = 1 + 2 s + 3 s^2 + 4 s^3, so
// x = 1 + 2t + 3t² + 4t³ and y = ∫ p = t + t² + t³ + t⁴.
model Horner
  function polyval "p(s) = a[1] + a[2] s + … + a[n] s^(n-1)"
    input Real a[:] "coefficients, lowest degree first";
    input Real s;
    output Real p;
  protected
    Integer n = size(a, 1);
  algorithm
    p := a[n];
    for i in n - 1:-1:1 loop
      p := p*s + a[i];
    end for;
  end polyval;
  Real x;
  Real y(start = 0, fixed = true);
equation
  x = polyval({1, 2, 3, 4}, time);
  der(y) = x;
  annotation(experiment(StopTime = 1, Interval = 0.1));
end Horner;
