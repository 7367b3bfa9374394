// A feedback loop: the reference r = 0.5 + step(1 at t = 0.5) (an Add of
// a constant and a step) drives a proportional controller (Gain K = 4)
// on a first-order plant (T = 0.2); the plant output is fed back. The
// closed loop is T*der(y) = K*(r - y) - y. A separate integrator
// integrates a sine: z = A/(2*pi*f)*(1 - cos(2*pi*f*t)).
model FeedbackLoop "Proportional control of a first-order plant, and an integrator"
  import Modelica.Blocks.*;
  Sources.Constant base(k = 0.5);
  Sources.Step step(height = 1, startTime = 0.5);
  Math.Add reference;
  Math.Feedback error;
  Math.Gain controller(k = 4);
  Continuous.FirstOrder plant(k = 1, T = 0.2, y(fixed = true));
  Sources.Sine sine(amplitude = 3, f = 2);
  Continuous.Integrator integrator;
equation
  connect(base.y, reference.u1);
  connect(step.y, reference.u2);
  connect(reference.y, error.u1);
  connect(plant.y, error.u2);
  connect(error.y, controller.u);
  connect(controller.y, plant.u);
  connect(sine.y, integrator.u);
  annotation(experiment(StopTime = 2, Interval = 0.01));
end FeedbackLoop;
