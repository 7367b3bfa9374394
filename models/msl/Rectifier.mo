// A half-wave rectifier: a 10 V, 50 Hz sine source drives a 100 Ohm load
// through an ideal diode; the load carries the positive half-waves.
model Rectifier "Half-wave rectifier with an ideal diode"
  Modelica.Electrical.Analog.Sources.SineVoltage source(V = 10, f = 50);
  Modelica.Electrical.Analog.Ideal.IdealDiode diode;
  Modelica.Electrical.Analog.Basic.Resistor load(R = 100);
  Modelica.Electrical.Analog.Basic.Ground ground;
equation
  connect(source.p, diode.p);
  connect(diode.n, load.p);
  connect(load.n, source.n);
  connect(source.n, ground.p);
  annotation(experiment(StopTime = 0.04, Interval = 0.0005));
end Rectifier;
