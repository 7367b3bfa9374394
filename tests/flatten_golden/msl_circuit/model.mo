// An RC circuit of the shipped Modelica library: the SI types' quantity
// and unit on every variable, a constant of Modelica.Constants.
model Top
  parameter Real tau = 2*Modelica.Constants.pi "time constant";
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 10);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 1000);
  Modelica.Electrical.Analog.Basic.Capacitor capacitor(C = tau/1000);
  Modelica.Electrical.Analog.Basic.Ground ground;
equation
  connect(source.p, resistor.p);
  connect(resistor.n, capacitor.p);
  connect(capacitor.n, source.n);
  connect(source.n, ground.p);
end Top;
