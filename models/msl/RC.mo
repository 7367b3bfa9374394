// An RC circuit from the shipped Modelica library: a 1 V step charges
// C = 1 mF through R = 1 kOhm; the capacitor voltage is 1 - exp(-t/(R*C)).
model RC "RC circuit driven by a voltage step"
  Modelica.Electrical.Analog.Sources.StepVoltage source(V = 1, startTime = 0);
  Modelica.Electrical.Analog.Basic.Resistor resistor(R = 1000);
  Modelica.Electrical.Analog.Basic.Capacitor capacitor(C = 1e-3, v(fixed = true));
  Modelica.Electrical.Analog.Basic.Ground ground;
equation
  connect(source.p, resistor.p);
  connect(resistor.n, capacitor.p);
  connect(capacitor.n, source.n);
  connect(source.n, ground.p);
  annotation(experiment(StopTime = 5, Interval = 0.05));
end RC;
