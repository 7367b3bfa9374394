// The force elements of PlanarMechanics against the damped oscillator's
// closed form. A free body (m = 1) hangs from the fixed point (0, 0) on a
// spring (c = 4, unstretched length 1) and a damper (d = 0.4) in
// parallel; a second one hangs from (5, 0) on a SpringDamper of the same
// constants. Released at rest 2 below its suspension, each moves on the
// vertical: with s the length, s'' = g - c*(s - 1) - d*s', so
// s = s_eq + (2 - s_eq)*e^(-a*t)*(cos(w*t) + a/w*sin(w*t)) with
// s_eq = 1 + g/c, a = d/2 = 0.2 and w = sqrt(c - a^2). The elements'
// r0 and s have no start values: the start point takes them from the
// bodies' positions through the elements' equations (docs/planar.md).
model PlanarSpringDamper
  inner PlanarMechanics.World world;
  PlanarMechanics.Parts.Fixed fixedA;
  PlanarMechanics.Parts.Body bodyA(m = 1, I = 0.1, r(start = {0, -2}, each fixed = true), v(start = {0, 0}, each fixed = true), phi(start = 0, fixed = true), w(start = 0, fixed = true));
  PlanarMechanics.Parts.Spring spring(c = 4, s_unstretched = 1);
  PlanarMechanics.Parts.Damper damper(d = 0.4);
  PlanarMechanics.Parts.Fixed fixedB(r = {5, 0});
  PlanarMechanics.Parts.Body bodyB(m = 1, I = 0.1, r(start = {5, -2}, each fixed = true), v(start = {0, 0}, each fixed = true), phi(start = 0, fixed = true), w(start = 0, fixed = true));
  PlanarMechanics.Parts.SpringDamper springDamper(c = 4, s_unstretched = 1, d = 0.4);
equation
  connect(fixedA.frame, spring.frame_a);
  connect(spring.frame_b, bodyA.frame_a);
  connect(fixedA.frame, damper.frame_a);
  connect(damper.frame_b, bodyA.frame_a);
  connect(fixedB.frame, springDamper.frame_a);
  connect(springDamper.frame_b, bodyB.frame_a);
  annotation(experiment(StopTime = 5, Interval = 0.05));
end PlanarSpringDamper;
