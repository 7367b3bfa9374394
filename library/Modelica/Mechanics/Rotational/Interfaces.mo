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

  connector Support "Support/housing flange of a one-dimensional rotational shaft"
    SI.Angle phi "Absolute rotation angle of the support/housing";
    flow SI.Torque tau "Reaction torque in the support/housing";
  end Support;

  partial model PartialElementaryOneFlangeAndSupport2 "Partial model for a component with one rotational flange and a conditional support (useSupport), implicitly grounded without it"
    parameter Boolean useSupport = false "= true, if support flange enabled, otherwise implicitly grounded";
    Flange_b flange "Flange of shaft";
    Support support(final phi = phi_support, final tau = -flange.tau) if useSupport "Support/housing of component";
  protected
    SI.Angle phi_support "Absolute angle of support flange";
  equation
    if not useSupport then
      phi_support = 0;
    end if;
  end PartialElementaryOneFlangeAndSupport2;

  partial model PartialElementaryTwoFlangesAndSupport2 "Partial model for a component with two rotational flanges and a conditional support (useSupport), implicitly grounded without it"
    parameter Boolean useSupport = false "= true, if support flange enabled, otherwise implicitly grounded";
    Flange_a flange_a "Flange of left shaft";
    Flange_b flange_b "Flange of right shaft";
    Support support(final phi = phi_support, final tau = -flange_a.tau - flange_b.tau) if useSupport "Support/housing of component";
  protected
    SI.Angle phi_support "Absolute angle of support flange";
  equation
    if not useSupport then
      phi_support = 0;
    end if;
  end PartialElementaryTwoFlangesAndSupport2;

  partial model PartialTorque "Partial model of a torque acting at the flange (accelerates the flange)"
    extends PartialElementaryOneFlangeAndSupport2;
    SI.Angle phi "Angle of flange with respect to support (= flange.phi - support.phi)";
  equation
    phi = flange.phi - phi_support;
  end PartialTorque;

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
