within Modelica.Blocks;
package Continuous "Continuous control blocks with internal states"
  import Modelica.Units.SI;

  block Integrator "Output the integral of the input signal: der(y) = k*u, y = y_start at the start (MSL initType = InitialState; the initType parameter is not provided)"
    parameter Real k(unit = "1") = 1 "Integrator gain";
    parameter Real y_start = 0 "Initial value of output";
    extends Interfaces.SISO(y(start = y_start, fixed = true));
  equation
    der(y) = k*u;
  end Integrator;

  block FirstOrder "First order transfer function block: T*der(y) + y = k*u (MSL initType = NoInit: y starts near y_start, which the consistent initialisation keeps; the initType parameter is not provided)"
    parameter Real k(unit = "1") = 1 "Gain";
    parameter SI.Time T(start = 1) "Time Constant";
    parameter Real y_start = 0 "Initial or guess value of output (= state)";
    extends Interfaces.SISO(y(start = y_start));
  equation
    der(y) = (k*u - y)/T;
  end FirstOrder;
end Continuous;
