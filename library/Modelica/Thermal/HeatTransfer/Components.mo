within Modelica.Thermal.HeatTransfer;
package Components "Lumped thermal components"
  import Modelica.Units.SI;

  model HeatCapacitor "Lumped thermal element storing heat: C*der(T) = port.Q_flow"
    parameter SI.HeatCapacity C "Heat capacity of element (= cp*m)";
    SI.Temperature T(start = 293.15, displayUnit = "degC") "Temperature of element";
    SI.TemperatureSlope der_T(start = 0) "Time derivative of temperature (= der(T))";
    Interfaces.HeatPort_a port;
  equation
    T = port.T;
    der_T = der(T);
    C*der(T) = port.Q_flow;
  end HeatCapacitor;

  model ThermalConductor "Lumped thermal element transporting heat without storing it: Q_flow = G*dT"
    extends Interfaces.Element1D;
    parameter SI.ThermalConductance G "Constant thermal conductance of material";
  equation
    Q_flow = G*dT;
  end ThermalConductor;
end Components;
