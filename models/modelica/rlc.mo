// A series RLC circuit built from components; `tests/modelica/flat/rlc_flat.dae` is the same
// circuit flattened by hand.
model RLCCircuit "Series RLC circuit driven by a constant voltage"
  import Electrical.*;
  parameter Real Rval = 10 "resistance";
  Electrical.ConstantVoltage source(V = 1);
  Resistor R1(R = Rval);
  Inductor L1(L = 0.1);
  Capacitor C1(C = 1e-3);
  Ground ground;
equation
  connect(source.p, R1.p);
  connect(R1.n, L1.p);
  connect(L1.n, C1.p);
  connect(C1.n, source.n);
  connect(source.n, ground.p);
  annotation(experiment(StopTime = 0.5, Interval = 0.01));
end RLCCircuit;
