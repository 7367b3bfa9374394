// Blocks of the shipped Modelica library: a step through a gain into an
// integrator (short connector classes, extends with modifiers, the
// integrator's initial equation by its default initType).
model Top
  Modelica.Blocks.Sources.Step step(height = 2, startTime = 1);
  Modelica.Blocks.Math.Gain gain(k = 3);
  Modelica.Blocks.Continuous.Integrator integrator(y_start = 0.5);
equation
  connect(step.y, gain.u);
  connect(gain.y, integrator.u);
end Top;
