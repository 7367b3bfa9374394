// A slider crank from PlanarMechanics: a crank with a body at its end
// turns about the origin; a massless connecting rod, pinned to the
// crank's end and to a slider, drives the slider along the x axis. The
// kinematic loop closes through a prismatic joint. `tests/planar/slider_crank.dae`
// is the same system written by hand.
model PlanarSliderCrank
  inner PlanarMechanics.World world;
  PlanarMechanics.Parts.Fixed fixed;
  PlanarMechanics.Joints.Revolute revolute1(phi(start = 1, fixed = true), w(start = 0, fixed = true));
  PlanarMechanics.Parts.FixedTranslation crank(r = {0.2, 0});
  PlanarMechanics.Parts.Body crankBody(m = 1, I = 0.01);
  PlanarMechanics.Joints.Revolute revolute2(phi(start = -1.28));
  PlanarMechanics.Parts.FixedTranslation rod(r = {0.6, 0});
  PlanarMechanics.Joints.Revolute revolute3(phi(start = 0.28));
  PlanarMechanics.Joints.Prismatic prismatic(r = {1, 0}, s(start = 0.68));
  PlanarMechanics.Parts.Body slider(m = 0.5, I = 0.01);
equation
  connect(fixed.frame, revolute1.frame_a);
  connect(revolute1.frame_b, crank.frame_a);
  connect(crank.frame_b, crankBody.frame_a);
  connect(crank.frame_b, revolute2.frame_a);
  connect(revolute2.frame_b, rod.frame_a);
  connect(rod.frame_b, revolute3.frame_a);
  connect(fixed.frame, prismatic.frame_a);
  connect(prismatic.frame_b, revolute3.frame_b);
  connect(prismatic.frame_b, slider.frame_a);
  annotation(experiment(StopTime = 2, Interval = 0.02, Tolerance = 1e-8));
end PlanarSliderCrank;
