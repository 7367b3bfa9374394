// Four capacitors to ground, coupled in a ring by resistors: component
// arrays connected in `for` loops. `tests/modelica/flat/rc_ring_flat.dae` is the same system
// flattened by hand.
model RCRing
  import Electrical.{Resistor, Capacitor, Ground};
  parameter Integer N = 4;
  Resistor R[N](each R = 1);
  Capacitor C[N](C = {1, 2, 3, 4}, v(start = {1, 0, 0, 0}));
  Ground ground;
equation
  for i in 1:N loop
    connect(R[i].n, C[i].p);
    connect(C[i].n, ground.p);
  end for;
  for i in 1:N - 1 loop
    connect(C[i].p, R[i + 1].p);
  end for;
  connect(C[N].p, R[1].p);
  annotation(experiment(StopTime = 3, Interval = 0.05));
end RCRing;
