within Modelica.Mechanics.Rotational;
package Sources "Torque sources (acting between the flange and the support flange, or the fixed ground without useSupport)"
  import Modelica.Units.SI;

  model Torque "Input signal acting as external torque on a flange: flange.tau = -tau"
    extends Interfaces.PartialElementaryOneFlangeAndSupport2;
    Modelica.Blocks.Interfaces.RealInput tau(unit = "N.m") "Accelerating torque acting at flange (= -flange.tau)";
  equation
    flange.tau = -tau;
  end Torque;

  model ConstantTorque "Constant torque, not dependent on speed: tau = -flange.tau = tau_constant"
    extends Interfaces.PartialTorque;
    parameter SI.Torque tau_constant "Constant torque (if negative, torque is acting as load in positive direction of rotation)";
    SI.AngularVelocity w "Angular velocity of flange with respect to support (= der(phi))";
    SI.Torque tau "Accelerating torque acting at flange (= -flange.tau)";
  equation
    w = der(phi);
    tau = -flange.tau;
    tau = tau_constant;
  end ConstantTorque;
end Sources;
