// A drivetrain: a motor torque (a step signal) accelerates a motor
// inertia, which drives a load inertia through an ideal gear and an
// elastic shaft; a damper to the housing brakes the load.
// `tests/modelica/flat/drivetrain_flat.dae` is the same system flattened by hand. A second,
// separate shaft: a constant torque against a damper on one inertia.
model Drivetrain "Motor, gear, elastic shaft and damped load"
  import Modelica.Mechanics.Rotational.Components.*;
  Modelica.Blocks.Sources.Step torqueSignal(height = 10, startTime = 0);
  Modelica.Mechanics.Rotational.Sources.Torque motor;
  Inertia motorInertia(J = 0.01, phi(fixed = true), w(fixed = true));
  IdealGear gear(ratio = 5);
  Spring shaft(c = 2000);
  Inertia load(J = 0.5, phi(fixed = true), w(fixed = true));
  Damper friction(d = 4);
  Fixed housing;
  Modelica.Mechanics.Rotational.Sources.ConstantTorque constantTorque(tau_constant = 2);
  Inertia flywheel(J = 0.2, phi(fixed = true), w(fixed = true));
  Damper bearing(d = 0.5);
  Fixed housing2;
equation
  connect(torqueSignal.y, motor.tau);
  connect(motor.flange, motorInertia.flange_a);
  connect(motorInertia.flange_b, gear.flange_a);
  connect(gear.flange_b, shaft.flange_a);
  connect(shaft.flange_b, load.flange_a);
  connect(load.flange_b, friction.flange_a);
  connect(friction.flange_b, housing.flange);
  connect(constantTorque.flange, flywheel.flange_a);
  connect(flywheel.flange_b, bearing.flange_a);
  connect(bearing.flange_b, housing2.flange);
  annotation(experiment(StopTime = 2, Interval = 0.01));
end Drivetrain;
