// An index-6 model: x1 = f(time) is differentiated five times, beyond
// the derivatives daec makes of a function called at run time.
model Order
  function f "sin by its series summed to a tolerance"
    input Real x;
    output Real y;
  protected
    Real term;
    Real k;
  algorithm
    term := x;
    y := x;
    k := 1;
    while abs(term) > 1e-16 loop
      term := -term*x*x/((2*k)*(2*k + 1));
      y := y + term;
      k := k + 1;
    end while;
  end f;
  Real x1;
  Real x2;
  Real x3;
  Real x4;
  Real x5;
  Real u;
equation
  der(x1) = x2;
  der(x2) = x3;
  der(x3) = x4;
  der(x4) = x5;
  der(x5) = u;
  x1 = f(time);
end Order;
