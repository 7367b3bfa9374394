// Mechanics of the shipped Modelica library: a torque acting between a
// rotor and a housing through its support flange (useSupport = true), a
// gear without one (its support angle is 0), and a constant force on a
// mass against the ground.
model Top
  Modelica.Blocks.Sources.Constant signal(k = 2);
  Modelica.Mechanics.Rotational.Sources.Torque torque(useSupport = true);
  Modelica.Mechanics.Rotational.Components.Inertia rotor(J = 0.5);
  Modelica.Mechanics.Rotational.Components.Inertia housing(J = 2);
  Modelica.Mechanics.Rotational.Components.IdealGear gear(ratio = 2);
  Modelica.Mechanics.Rotational.Components.Inertia load(J = 1);
  Modelica.Mechanics.Translational.Sources.ConstantForce force(f_constant = 3);
  Modelica.Mechanics.Translational.Components.Mass mass(m = 1);
equation
  connect(signal.y, torque.tau);
  connect(torque.flange, rotor.flange_a);
  connect(torque.support, housing.flange_a);
  connect(rotor.flange_b, gear.flange_a);
  connect(gear.flange_b, load.flange_a);
  connect(force.flange, mass.flange_a);
end Top;
