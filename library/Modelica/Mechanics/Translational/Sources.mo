within Modelica.Mechanics.Translational;
package Sources "Force sources (acting between the flange and the support flange, or the fixed ground without useSupport)"
  import Modelica.Units.SI;

  model Force "External force defined by the input signal: flange.f = -f"
    extends Interfaces.PartialElementaryOneFlangeAndSupport2;
    Modelica.Blocks.Interfaces.RealInput f(unit = "N") "Driving force as input signal";
  equation
    flange.f = -f;
  end Force;

  model ConstantForce "Constant force, not dependent on speed: f = flange.f = -f_constant"
    extends Interfaces.PartialForce;
    parameter SI.Force f_constant "Nominal force (if negative, force is acting as load)";
  equation
    f = -f_constant;
  end ConstantForce;
end Sources;
