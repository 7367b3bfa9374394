// The shipped `PlanarMechanics` package: a pendulum from a fixed frame,
// a revolute joint, a rod and a body under the `inner` world's gravity.
model Top
  inner PlanarMechanics.World world(g = 9.81);
  PlanarMechanics.Parts.Fixed fixed;
  PlanarMechanics.Joints.Revolute revolute(phi(start = 0, fixed = true), w(start = 0, fixed = true));
  PlanarMechanics.Parts.FixedTranslation rod(r = {1, 0});
  PlanarMechanics.Parts.Body body(m = 1, I = 0.1);
equation
  connect(fixed.frame, revolute.frame_a);
  connect(revolute.frame_b, rod.frame_a);
  connect(rod.frame_b, body.frame_a);
end Top;
