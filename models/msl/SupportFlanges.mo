// Sources and a gear with support flanges (useSupport = true). A constant
// force F = 3 pushes two free masses apart (m1 = 1, m2 = 2):
// s1 = F/(2*m1)*t^2, s2 = -F/(2*m2)*t^2. A torque 2 (a signal) acts between
// a rotor (J = 0.5) and a free housing (J = 2): w = 4*t, housing.w = -t.
// A constant torque 1 drives an inertia (J = 1) through a gear (ratio 2)
// whose support is fixed into a load (J = 1): with the load reflected,
// J_eff = 1 + 1/2^2 and w_a = 0.8*t, w_b = 0.4*t.
model SupportFlanges "Force, torque and gear acting against their support flanges"
  import Modelica.Mechanics.Rotational.Components.*;
  Modelica.Mechanics.Translational.Sources.ConstantForce force(f_constant = 3, useSupport = true);
  Modelica.Mechanics.Translational.Components.Mass m1(m = 1, s(fixed = true), v(fixed = true));
  Modelica.Mechanics.Translational.Components.Mass m2(m = 2, s(fixed = true), v(fixed = true));
  Modelica.Blocks.Sources.Constant signal(k = 2);
  Modelica.Mechanics.Rotational.Sources.Torque torque(useSupport = true);
  Inertia rotor(J = 0.5, phi(fixed = true), w(fixed = true));
  Inertia housing(J = 2, phi(fixed = true), w(fixed = true));
  Modelica.Mechanics.Rotational.Sources.ConstantTorque drive(tau_constant = 1);
  Inertia inertiaA(J = 1, phi(fixed = true), w(fixed = true));
  IdealGear gear(ratio = 2, useSupport = true);
  Inertia inertiaB(J = 1);
  Fixed ground;
equation
  connect(force.flange, m1.flange_a);
  connect(force.support, m2.flange_a);
  connect(signal.y, torque.tau);
  connect(torque.flange, rotor.flange_a);
  connect(torque.support, housing.flange_a);
  connect(drive.flange, inertiaA.flange_a);
  connect(inertiaA.flange_b, gear.flange_a);
  connect(gear.flange_b, inertiaB.flange_a);
  connect(gear.support, ground.flange);
  annotation(experiment(StopTime = 1, Interval = 0.01));
end SupportFlanges;
