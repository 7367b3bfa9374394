within Modelica.Mechanics.Rotational;
package Components "Rotational components: fixed flange, inertia, spring, damper, gear"
  import Modelica.Units.SI;

  model Fixed "Flange fixed in housing at a given angle phi0"
    parameter SI.Angle phi0 = 0 "Fixed offset angle of housing";
    Interfaces.Flange_b flange "Flange fixed in housing at a given angle";
  equation
    flange.phi = phi0;
  end Fixed;

  model Inertia "1D-rotational component with inertia: J*der(w) = flange_a.tau + flange_b.tau"
    parameter SI.Inertia J(min = 0, start = 1) "Moment of inertia";
    Interfaces.Flange_a flange_a "Left flange of shaft";
    Interfaces.Flange_b flange_b "Right flange of shaft";
    SI.Angle phi(start = 0) "Absolute rotation angle of component";
    SI.AngularVelocity w(start = 0) "Absolute angular velocity of component (= der(phi))";
    SI.AngularAcceleration a(start = 0) "Absolute angular acceleration of component (= der(w))";
  equation
    phi = flange_a.phi;
    phi = flange_b.phi;
    w = der(phi);
    a = der(w);
    J*a = flange_a.tau + flange_b.tau;
  end Inertia;

  model Spring "Linear 1D rotational spring: tau = c*(phi_rel - phi_rel0)"
    extends Interfaces.PartialCompliant;
    parameter SI.RotationalSpringConstant c(final min = 0, start = 1.0e5) "Spring constant";
    parameter SI.Angle phi_rel0 = 0 "Unstretched spring angle";
  equation
    tau = c*(phi_rel - phi_rel0);
  end Spring;

  model Damper "Linear 1D rotational damper: tau = d*w_rel"
    extends Interfaces.PartialCompliantWithRelativeStates;
    parameter SI.RotationalDampingConstant d(final min = 0, start = 0) "Damping constant";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
  equation
    tau = d*w_rel;
    lossPower = tau*w_rel;
  end Damper;

  model IdealGear "Ideal gear without inertia: flange_a.phi - support.phi = ratio*(flange_b.phi - support.phi), 0 = ratio*flange_a.tau + flange_b.tau"
    extends Interfaces.PartialElementaryTwoFlangesAndSupport2;
    parameter Real ratio(start = 1) "Transmission ratio (flange_a.phi/flange_b.phi)";
    SI.Angle phi_a "Angle between left shaft flange and support";
    SI.Angle phi_b "Angle between right shaft flange and support";
  equation
    phi_a = flange_a.phi - phi_support;
    phi_b = flange_b.phi - phi_support;
    phi_a = ratio*phi_b;
    0 = ratio*flange_a.tau + flange_b.tau;
  end IdealGear;
end Components;
