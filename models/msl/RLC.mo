// The series RLC circuit of `tests/modelica/flat/rlc_flat.dae` built
// from the shipped Modelica library.
model RLC "Series RLC circuit driven by a constant voltage"
  import Modelica.Electrical.Analog.Basic.*;
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 1);
  Resistor R1(R = 10);
  Inductor L1(L = 0.1, i(fixed = true));
  Capacitor C1(C = 1e-3, v(fixed = true));
  Ground ground;
equation
  connect(source.p, R1.p);
  connect(R1.n, L1.p);
  connect(L1.n, C1.p);
  connect(C1.n, source.n);
  connect(source.n, ground.p);
  annotation(experiment(StopTime = 0.5, Interval = 0.01));
end RLC;
