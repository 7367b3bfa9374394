// A user's own `Modelica` library, which shadows the one shipped with
// daec as a whole.
package Modelica "A user's Modelica package"
  model Decay "der(x) = -k*x from x = 1"
    parameter Real k = 2;
    Real x(start = 1, fixed = true);
  equation
    der(x) = -k*x;
  end Decay;
end Modelica;
