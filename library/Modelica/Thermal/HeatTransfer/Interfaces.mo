within Modelica.Thermal.HeatTransfer;
package Interfaces "Connectors and partial models of lumped thermal components"
  import Modelica.Units.SI;

  connector HeatPort_a "Thermal port for 1-dim. heat transfer (filled rectangular icon)"
    SI.Temperature T "Port temperature";
    flow SI.HeatFlowRate Q_flow "Heat flow rate (positive if flowing from outside into the component)";
  end HeatPort_a;

  connector HeatPort_b "Thermal port for 1-dim. heat transfer (unfilled rectangular icon)"
    SI.Temperature T "Port temperature";
    flow SI.HeatFlowRate Q_flow "Heat flow rate (positive if flowing from outside into the component)";
  end HeatPort_b;

  partial model Element1D "Partial heat transfer element with two HeatPorts that does not store energy: port_a.Q_flow = Q_flow = -port_b.Q_flow"
    SI.HeatFlowRate Q_flow "Heat flow rate from port_a -> port_b";
    SI.TemperatureDifference dT "port_a.T - port_b.T";
    HeatPort_a port_a;
    HeatPort_b port_b;
  equation
    dT = port_a.T - port_b.T;
    port_a.Q_flow = Q_flow;
    port_b.Q_flow = -Q_flow;
  end Element1D;

  partial model PartialElementaryConditionalHeatPortWithoutT "Partial model to include a conditional heat port for the loss power of a component"
    parameter Boolean useHeatPort = false "= true, if heatPort is enabled";
    HeatPort_a heatPort(final Q_flow = -lossPower) if useHeatPort "Optional port to which dissipated losses are transported in form of heat";
    SI.Power lossPower "Loss power leaving component via heatPort (> 0, if heat is flowing out of component)";
  end PartialElementaryConditionalHeatPortWithoutT;
end Interfaces;
