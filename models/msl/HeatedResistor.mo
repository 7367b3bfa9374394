// Electro-thermal coupling through the conditional heat ports: a 10 V
// source heats a resistor (R = 10 Ohm at 300.15 K, alpha = 0.01 1/K)
// whose heat port warms a body (C = 10 J/K) that loses heat to the
// ambient (G = 1 W/K); `tests/modelica/flat/heated_resistor_flat.dae` is
// the same system flattened by hand. A second, separate body takes the
// loss power of a rotational damper braking a flywheel driven by a
// constant torque.
model HeatedResistor "Resistor and damper heating bodies through heat ports"
  import Modelica.Thermal.HeatTransfer;
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 10);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 10, alpha = 0.01, useHeatPort = true);
  Modelica.Electrical.Analog.Basic.Ground ground;
  HeatTransfer.Components.HeatCapacitor body(C = 10, T(start = 300.15, fixed = true));
  HeatTransfer.Components.ThermalConductor wall(G = 1);
  HeatTransfer.Sources.FixedTemperature ambient(T = 300.15);
  Modelica.Mechanics.Rotational.Sources.ConstantTorque motor(tau_constant = 2);
  Modelica.Mechanics.Rotational.Components.Inertia flywheel(J = 0.5, phi(fixed = true), w(fixed = true));
  Modelica.Mechanics.Rotational.Components.Damper brake(d = 1, useHeatPort = true);
  Modelica.Mechanics.Rotational.Components.Fixed housing;
  HeatTransfer.Components.HeatCapacitor brakeBody(C = 20, T(start = 300.15, fixed = true));
equation
  connect(source.p, resistor.p);
  connect(resistor.n, source.n);
  connect(source.n, ground.p);
  connect(resistor.heatPort, body.port);
  connect(body.port, wall.port_a);
  connect(wall.port_b, ambient.port);
  connect(motor.flange, flywheel.flange_a);
  connect(flywheel.flange_b, brake.flange_a);
  connect(brake.flange_b, housing.flange);
  connect(brake.heatPort, brakeBody.port);
  annotation(experiment(StopTime = 30, Interval = 0.1));
end HeatedResistor;
