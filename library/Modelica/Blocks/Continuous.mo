within Modelica.Blocks;
package Continuous "Continuous control blocks with internal states"
  import Modelica.Units.SI;
  import Modelica.Blocks.Types.Init;

  block Integrator "Output the integral of the input signal: der(y) = k*u; initialised by initType (default InitialState: y = y_start)"
    parameter Real k(unit = "1") = 1 "Integrator gain";
    parameter Init initType = Init.InitialState "Type of initialization (Modelica.Blocks.Types.Init: 1 no init, 2 steady state, 3 initial state, 4 initial output)";
    parameter Real y_start = 0 "Initial or guess value of output (= state)";
    extends Interfaces.SISO(y(start = y_start));
  initial equation
    if initType == Init.SteadyState then
      der(y) = 0;
    elseif initType == Init.InitialState or initType == Init.InitialOutput then
      y = y_start;
    end if;
  equation
    der(y) = k*u;
  end Integrator;

  block FirstOrder "First order transfer function block: T*der(y) + y = k*u; initialised by initType (default NoInit: y starts near y_start)"
    parameter Real k(unit = "1") = 1 "Gain";
    parameter SI.Time T(start = 1) "Time Constant";
    parameter Init initType = Init.NoInit "Type of initialization (Modelica.Blocks.Types.Init: 1 no init, 2 steady state, 3 initial state, 4 initial output)";
    parameter Real y_start = 0 "Initial or guess value of output (= state)";
    extends Interfaces.SISO(y(start = y_start));
  initial equation
    if initType == Init.SteadyState then
      der(y) = 0;
    elseif initType == Init.InitialState or initType == Init.InitialOutput then
      y = y_start;
    end if;
  equation
    der(y) = (k*u - y)/T;
  end FirstOrder;
end Continuous;
