within Modelica.Thermal.HeatTransfer;
package Sources "Thermal sources"
  import Modelica.Units.SI;

  model FixedTemperature "Fixed temperature boundary condition in Kelvin: port.T = T"
    parameter SI.Temperature T "Fixed temperature at port";
    Interfaces.HeatPort_b port;
  equation
    port.T = T;
  end FixedTemperature;

  model FixedHeatFlow "Fixed heat flow boundary condition: port.Q_flow = -Q_flow*(1 + alpha*(port.T - T_ref))"
    parameter SI.HeatFlowRate Q_flow "Fixed heat flow rate at port";
    parameter SI.Temperature T_ref = 293.15 "Reference temperature";
    parameter SI.LinearTemperatureCoefficient alpha = 0 "Temperature coefficient of heat flow rate";
    Interfaces.HeatPort_b port;
  equation
    port.Q_flow = -Q_flow*(1 + alpha*(port.T - T_ref));
  end FixedHeatFlow;

  model PrescribedHeatFlow "Prescribed heat flow boundary condition: port.Q_flow = -Q_flow*(1 + alpha*(port.T - T_ref))"
    parameter SI.Temperature T_ref = 293.15 "Reference temperature";
    parameter SI.LinearTemperatureCoefficient alpha = 0 "Temperature coefficient of heat flow rate";
    Modelica.Blocks.Interfaces.RealInput Q_flow(unit = "W") "Heat flow rate at port as input signal";
    Interfaces.HeatPort_b port;
  equation
    port.Q_flow = -Q_flow*(1 + alpha*(port.T - T_ref));
  end PrescribedHeatFlow;
end Sources;
