within Modelica.Mechanics.Rotational;
package Sources "Torque sources (acting between the flange and the fixed ground: no support flange)"
  import Modelica.Units.SI;

  model Torque "Input signal acting as external torque on a flange: flange.tau = -tau"
    Modelica.Blocks.Interfaces.RealInput tau(unit = "N.m") "Accelerating torque acting at flange (= -flange.tau)";
    Interfaces.Flange_b flange "Flange of shaft";
  equation
    flange.tau = -tau;
  end Torque;

  model ConstantTorque "Constant torque, not dependent on speed: tau = -flange.tau = tau_constant"
    parameter SI.Torque tau_constant "Constant torque (if negative, torque is acting as load in positive direction of rotation)";
    Interfaces.Flange_b flange "Flange of shaft";
    SI.Angle phi "Angle of flange with respect to support (= flange.phi)";
    SI.AngularVelocity w "Angular velocity of flange with respect to support (= der(phi))";
    SI.Torque tau "Accelerating torque acting at flange (= -flange.tau)";
  equation
    phi = flange.phi;
    w = der(phi);
    tau = -flange.tau;
    tau = tau_constant;
  end ConstantTorque;
end Sources;
