within Modelica.Mechanics.Rotational;
package Interfaces "Connectors and partial models of rotational components"
  import Modelica.Units.SI;

  connector Flange_a "One-dimensional rotational flange of a shaft (filled circle icon)"
    SI.Angle phi "Absolute rotation angle of flange";
    flow SI.Torque tau "Cut torque in the flange";
  end Flange_a;

  connector Flange_b "One-dimensional rotational flange of a shaft (non-filled circle icon)"
    SI.Angle phi "Absolute rotation angle of flange";
    flow SI.Torque tau "Cut torque in the flange";
  end Flange_b;

  partial model PartialCompliant "Compliant connection of two rotational 1D flanges: tau = flange_b.tau = -flange_a.tau"
    SI.Angle phi_rel(start = 0) "Relative rotation angle (= flange_b.phi - flange_a.phi)";
    SI.Torque tau "Torque between flanges (= flange_b.tau)";
    Flange_a flange_a "Left flange of compliant 1-dim. rotational component";
    Flange_b flange_b "Right flange of compliant 1-dim. rotational component";
  equation
    phi_rel = flange_b.phi - flange_a.phi;
    flange_b.tau = tau;
    flange_a.tau = -tau;
  end PartialCompliant;

  partial model PartialCompliantWithRelativeStates "Compliant connection of two rotational 1D flanges with the relative angle, speed and acceleration"
    SI.Angle phi_rel(start = 0) "Relative rotation angle (= flange_b.phi - flange_a.phi)";
    SI.AngularVelocity w_rel(start = 0) "Relative angular velocity (= der(phi_rel))";
    SI.AngularAcceleration a_rel(start = 0) "Relative angular acceleration (= der(w_rel))";
    SI.Torque tau "Torque between flanges (= flange_b.tau)";
    Flange_a flange_a "Left flange of compliant 1-dim. rotational component";
    Flange_b flange_b "Right flange of compliant 1-dim. rotational component";
  equation
    phi_rel = flange_b.phi - flange_a.phi;
    w_rel = der(phi_rel);
    a_rel = der(w_rel);
    flange_b.tau = tau;
    flange_a.tau = -tau;
  end PartialCompliantWithRelativeStates;
end Interfaces;
