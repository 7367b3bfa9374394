// A conditional heat port of the shipped Modelica library switched on:
// the port's bindings (final T = T_heatPort, final Q_flow = -LossPower)
// become equations, and the if-equation T_heatPort = T is dropped.
model Top
  Modelica.Electrical.Analog.Sources.ConstantCurrent source(I = 2);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 5, alpha = 0.004, useHeatPort = true);
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Thermal.HeatTransfer.Sources.FixedTemperature sink(T = 350);
equation
  connect(source.p, resistor.n);
  connect(source.n, resistor.p);
  connect(resistor.p, ground.p);
  connect(resistor.heatPort, sink.port);
end Top;
