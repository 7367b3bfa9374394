// Two heat capacitors (C = 500 J/K, from 293.15 K) each coupled through a
// thermal conductance G = 10 W/K to a fixed temperature of 353.15 K and
// heated by Q = 200 W: the first by a fixed heat flow, the second by a
// prescribed one from a constant signal. Both follow
// T(t) = T_inf + (T(0) - T_inf)*exp(-G*t/C), T_inf = 353.15 + Q/G.
model HeatingChain "Heated capacitors losing heat to a fixed temperature"
  import Modelica.Thermal.HeatTransfer.*;
  Sources.FixedTemperature ambient(T = 353.15);
  Components.ThermalConductor wall1(G = 10);
  Components.HeatCapacitor body1(C = 500, T(start = 293.15, fixed = true));
  Sources.FixedHeatFlow heater1(Q_flow = 200);
  Components.ThermalConductor wall2(G = 10);
  Components.HeatCapacitor body2(C = 500, T(start = 293.15, fixed = true));
  Sources.PrescribedHeatFlow heater2;
  Modelica.Blocks.Sources.Constant power(k = 200);
equation
  connect(ambient.port, wall1.port_a);
  connect(wall1.port_b, body1.port);
  connect(heater1.port, body1.port);
  connect(ambient.port, wall2.port_a);
  connect(wall2.port_b, body2.port);
  connect(power.y, heater2.Q_flow);
  connect(heater2.port, body2.port);
  annotation(experiment(StopTime = 200, Interval = 1));
end HeatingChain;
