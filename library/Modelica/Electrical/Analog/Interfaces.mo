within Modelica.Electrical.Analog;
package Interfaces "Connectors and partial models of analog electrical components"
  import Modelica.Units.SI;

  connector Pin "Pin of an electrical component"
    SI.ElectricPotential v "Potential at the pin";
    flow SI.Current i "Current flowing into the pin";
  end Pin;

  connector PositivePin "Positive pin of an electrical component"
    SI.ElectricPotential v "Potential at the pin";
    flow SI.Current i "Current flowing into the pin";
  end PositivePin;

  connector NegativePin "Negative pin of an electrical component"
    SI.ElectricPotential v "Potential at the pin";
    flow SI.Current i "Current flowing into the pin";
  end NegativePin;

  partial model TwoPin "Component with two electrical pins: v = p.v - n.v"
    SI.Voltage v "Voltage drop of the two pins (= p.v - n.v)";
    PositivePin p "Positive electrical pin";
    NegativePin n "Negative electrical pin";
  equation
    v = p.v - n.v;
  end TwoPin;

  partial model OnePort "Component with two electrical pins p and n and current i from p to n"
    SI.Voltage v "Voltage drop of the two pins (= p.v - n.v)";
    SI.Current i "Current flowing from pin p to pin n";
    PositivePin p "Positive electrical pin";
    NegativePin n "Negative electrical pin";
  equation
    v = p.v - n.v;
    0 = p.i + n.i;
    i = p.i;
  end OnePort;

  partial model ConditionalHeatPort "Partial model to include a conditional HeatPort in order to describe the power loss via a thermal network"
    parameter Boolean useHeatPort = false "= true, if heatPort is enabled";
    parameter SI.Temperature T = 293.15 "Fixed device temperature if useHeatPort = false";
    Modelica.Thermal.HeatTransfer.Interfaces.HeatPort_a heatPort(final T = T_heatPort, final Q_flow = -LossPower) if useHeatPort "Conditional heat port";
    SI.Power LossPower "Loss power leaving component via heatPort";
    SI.Temperature T_heatPort "Temperature of heatPort";
  equation
    if not useHeatPort then
      T_heatPort = T;
    end if;
  end ConditionalHeatPort;
end Interfaces;
