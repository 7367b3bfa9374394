// The initialisation of the continuous blocks by `initType`
// (Modelica.Blocks.Types.Init) and the continuous sine. A constant u = 1
// drives: `hold`, an Integrator with its default InitialState (y = 2 + t);
// `free`, an Integrator with NoInit (y keeps its start value 5: y = 5 + t);
// `steady`, a FirstOrder (k = 2, T = 0.5) with SteadyState (y = 2 for all
// t); `initOut`, the same with InitialOutput from y_start = 0
// (y = 2*(1 - exp(-2*t))). `smoothSine` (continuous = true) holds
// amplitude*sin(phase) before its start time 0.5, `stepSine` holds 0.
model BlockInit "Integrators and first-order blocks initialised by initType; continuous sine"
  import Modelica.Blocks.*;
  import Modelica.Blocks.Types.Init;
  Sources.Constant one(k = 1);
  Continuous.Integrator hold(y_start = 2);
  Continuous.Integrator free(initType = Init.NoInit, y_start = 5);
  Continuous.FirstOrder steady(k = 2, T = 0.5, initType = Init.SteadyState, y_start = 7);
  Continuous.FirstOrder initOut(k = 2, T = 0.5, initType = Modelica.Blocks.Types.Init.InitialOutput);
  Sources.Sine smoothSine(amplitude = 2, f = 1, phase = 0.3, startTime = 0.5, continuous = true);
  Sources.Sine stepSine(amplitude = 2, f = 1, phase = 0.3, startTime = 0.5);
equation
  connect(one.y, hold.u);
  connect(one.y, free.u);
  connect(one.y, steady.u);
  connect(one.y, initOut.u);
  annotation(experiment(StopTime = 1, Interval = 0.01));
end BlockInit;
