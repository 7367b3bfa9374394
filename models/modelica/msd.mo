// A mass-spring-damper built from components; `tests/modelica/flat/msd_flat.dae` is the same
// system flattened by hand.
model MassSpringDamper
  Mechanics.Fixed fixed;
  Mechanics.Spring spring(c = 10);
  Mechanics.Damper damper(d = 0.5);
  Mechanics.Mass mass(m = 1, s(start = 1, fixed = true), v(start = 0, fixed = true));
equation
  connect(fixed.flange, spring.flange_a);
  connect(spring.flange_b, mass.flange);
  connect(fixed.flange, damper.flange_a);
  connect(damper.flange_b, mass.flange);
  annotation(experiment(StopTime = 5, Interval = 0.05));
end MassSpringDamper;
