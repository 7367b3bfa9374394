// A pendulum built from components: a body on a rod hung from a pivot.
// The rod's length constraint makes it an index-3 DAE; `tests/modelica/flat/pendulum_flat.dae`
// is the same system flattened by hand.
model ComponentPendulum
  Mechanics.Pivot pivot;
  Mechanics.Rod rod(L = 1);
  Mechanics.Body body(m = 1, g = 9.81, x(start = 1), y(start = 0, fixed = true),
    vx(start = 0), vy(start = 0, fixed = true));
equation
  connect(pivot.frame, rod.frame_a);
  connect(rod.frame_b, body.frame);
  annotation(experiment(StopTime = 2, Interval = 0.02, Tolerance = 1e-8));
end ComponentPendulum;
