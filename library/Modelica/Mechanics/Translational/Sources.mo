within Modelica.Mechanics.Translational;
package Sources "Force sources (acting between the flange and the fixed ground: no support flange)"
  import Modelica.Units.SI;

  model Force "External force defined by the input signal: flange.f = -f"
    Interfaces.Flange_b flange "Flange of component";
    Modelica.Blocks.Interfaces.RealInput f(unit = "N") "Driving force as input signal";
  equation
    flange.f = -f;
  end Force;

  model ConstantForce "Constant force, not dependent on speed: f = flange.f = -f_constant"
    parameter SI.Force f_constant "Nominal force (if negative, force is acting as load)";
    Interfaces.Flange_b flange "Flange of component";
    SI.Position s "Distance between flange and support (= flange.s)";
    SI.Force f "Accelerating force acting at flange (= flange.f)";
  equation
    s = flange.s;
    f = flange.f;
    f = -f_constant;
  end ConstantForce;
end Sources;
