// A simple pendulum from PlanarMechanics: a body on a massless rod
// hung from a revolute joint at the origin. `tests/planar/pendulum.dae` is the same
// system written by hand.
model PlanarPendulum
  inner PlanarMechanics.World world;
  PlanarMechanics.Parts.Fixed fixed;
  PlanarMechanics.Joints.Revolute revolute(phi(start = 0, fixed = true), w(start = 0, fixed = true));
  PlanarMechanics.Parts.FixedTranslation rod(r = {1, 0});
  PlanarMechanics.Parts.Body body(m = 1, I = 0.1);
equation
  connect(fixed.frame, revolute.frame_a);
  connect(revolute.frame_b, rod.frame_a);
  connect(rod.frame_b, body.frame_a);
  annotation(experiment(StopTime = 2, Interval = 0.02, Tolerance = 1e-8));
end PlanarPendulum;
