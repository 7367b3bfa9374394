within Modelica.Mechanics.Translational;
package Components "Translational components: fixed point, mass, spring, damper"
  import Modelica.Units.SI;

  model Fixed "Fixed flange at the position s0"
    parameter SI.Position s0 = 0 "Fixed offset position of housing";
    Interfaces.Flange_b flange "Flange fixed in housing at a given position";
  equation
    flange.s = s0;
  end Fixed;

  model Mass "Sliding mass with inertia: m*der(v) = flange_a.f + flange_b.f"
    parameter SI.Mass m(min = 0, start = 1) "Mass of the sliding mass";
    extends Interfaces.PartialRigid(L = 0, s(start = 0));
    SI.Velocity v(start = 0) "Absolute velocity of component";
    SI.Acceleration a(start = 0) "Absolute acceleration of component";
  equation
    v = der(s);
    a = der(v);
    m*a = flange_a.f + flange_b.f;
  end Mass;

  model Spring "Linear 1D translational spring: f = c*(s_rel - s_rel0)"
    extends Interfaces.PartialCompliant;
    parameter SI.TranslationalSpringConstant c(final min = 0, start = 1) "Spring constant";
    parameter SI.Distance s_rel0 = 0 "Unstretched spring length";
  equation
    f = c*(s_rel - s_rel0);
  end Spring;

  model Damper "Linear 1D translational damper: f = d*v_rel"
    extends Interfaces.PartialCompliantWithRelativeStates;
    parameter SI.TranslationalDampingConstant d(final min = 0, start = 0) "Damping constant";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
  equation
    f = d*v_rel;
    lossPower = f*v_rel;
  end Damper;

  model SpringDamper "Linear 1D translational spring and damper in parallel: f = c*(s_rel - s_rel0) + d*v_rel"
    extends Interfaces.PartialCompliantWithRelativeStates;
    parameter SI.TranslationalSpringConstant c(final min = 0, start = 1) "Spring constant";
    parameter SI.TranslationalDampingConstant d(final min = 0, start = 1) "Damping constant";
    parameter SI.Position s_rel0 = 0 "Unstretched spring length";
    extends Modelica.Thermal.HeatTransfer.Interfaces.PartialElementaryConditionalHeatPortWithoutT;
  protected
    SI.Force f_c "Spring force";
    SI.Force f_d "Linear damping force";
  equation
    f_c = c*(s_rel - s_rel0);
    f_d = d*v_rel;
    f = f_c + f_d;
    lossPower = f_d*v_rel;
  end SpringDamper;
end Components;
