// A double pendulum from PlanarMechanics: two bodies on massless rods,
// each hung from a revolute joint. `tests/planar/double_pendulum.dae` is the same
// system written by hand.
model PlanarDoublePendulum
  inner PlanarMechanics.World world;
  PlanarMechanics.Parts.Fixed fixed;
  PlanarMechanics.Joints.Revolute revolute1(phi(start = 0, fixed = true), w(start = 0, fixed = true));
  PlanarMechanics.Parts.FixedTranslation rod1(r = {1, 0});
  PlanarMechanics.Parts.Body body1(m = 1, I = 0.1);
  PlanarMechanics.Joints.Revolute revolute2(phi(start = 0.5, fixed = true), w(start = 0, fixed = true));
  PlanarMechanics.Parts.FixedTranslation rod2(r = {0.8, 0});
  PlanarMechanics.Parts.Body body2(m = 0.5, I = 0.05);
equation
  connect(fixed.frame, revolute1.frame_a);
  connect(revolute1.frame_b, rod1.frame_a);
  connect(rod1.frame_b, body1.frame_a);
  connect(rod1.frame_b, revolute2.frame_a);
  connect(revolute2.frame_b, rod2.frame_a);
  connect(rod2.frame_b, body2.frame_a);
  annotation(experiment(StopTime = 2, Interval = 0.02, Tolerance = 1e-8));
end PlanarDoublePendulum;
