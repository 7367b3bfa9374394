// Two copies of a damped oscillator m*der(v) = F - c*s - d*v (m = 1,
// c = 4, d = 0.4, F = 1, s(0) = 2, v(0) = 0): the first with a spring and
// a damper in parallel and a constant force, the second with a
// spring-damper and a force from a constant signal.
model MassSpringDamper "Translational mass-spring-damper, two ways"
  import Modelica.Mechanics.Translational.Components.*;
  Fixed fixed1;
  Spring spring(c = 4);
  Damper damper(d = 0.4);
  Mass mass1(m = 1, s(start = 2, fixed = true), v(fixed = true));
  Modelica.Mechanics.Translational.Sources.ConstantForce force1(f_constant = 1);
  Fixed fixed2(s0 = 0);
  SpringDamper springDamper(c = 4, d = 0.4);
  Mass mass2(m = 1, s(start = 2, fixed = true), v(fixed = true));
  Modelica.Mechanics.Translational.Sources.Force force2;
  Modelica.Blocks.Sources.Constant forceSignal(k = 1);
equation
  connect(fixed1.flange, spring.flange_a);
  connect(spring.flange_b, mass1.flange_a);
  connect(fixed1.flange, damper.flange_a);
  connect(damper.flange_b, mass1.flange_a);
  connect(force1.flange, mass1.flange_b);
  connect(fixed2.flange, springDamper.flange_a);
  connect(springDamper.flange_b, mass2.flange_a);
  connect(forceSignal.y, force2.f);
  connect(force2.flange, mass2.flange_b);
  annotation(experiment(StopTime = 10, Interval = 0.05));
end MassSpringDamper;
