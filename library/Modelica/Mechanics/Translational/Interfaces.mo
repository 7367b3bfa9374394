within Modelica.Mechanics.Translational;
package Interfaces "Connectors and partial models of translational components"
  import Modelica.Units.SI;

  connector Flange_a "One-dimensional translational flange (left, flange axis directed INTO cut plane)"
    SI.Position s "Absolute position of flange";
    flow SI.Force f "Cut force directed into flange";
  end Flange_a;

  connector Flange_b "One-dimensional translational flange (right, flange axis directed OUT OF cut plane)"
    SI.Position s "Absolute position of flange";
    flow SI.Force f "Cut force directed into flange";
  end Flange_b;

  connector Support "Support/housing flange of a one-dimensional translational component"
    SI.Position s "Absolute position of the support/housing";
    flow SI.Force f "Reaction force in the support/housing";
  end Support;

  partial model PartialElementaryOneFlangeAndSupport2 "Partial model for a component with one translational flange and a conditional support (useSupport), implicitly grounded without it"
    parameter Boolean useSupport = false "= true, if support flange enabled, otherwise implicitly grounded";
    SI.Length s = flange.s - s_support "Distance between flange and support (= flange.s - support.s)";
    Flange_b flange "Flange of component";
    Support support(final s = s_support, final f = -flange.f) if useSupport "Support/housing of component";
  protected
    SI.Length s_support "Absolute position of support flange";
  equation
    if not useSupport then
      s_support = 0;
    end if;
  end PartialElementaryOneFlangeAndSupport2;

  partial model PartialForce "Partial model of a force acting at the flange (accelerates the flange)"
    extends PartialElementaryOneFlangeAndSupport2;
    SI.Force f "Accelerating force acting at flange (= flange.f)";
  equation
    f = flange.f;
  end PartialForce;

  partial model PartialRigid "Rigid connection of two translational 1D flanges: flange_a.s = s - L/2, flange_b.s = s + L/2"
    SI.Position s "Absolute position of center of component (s = flange_a.s + L/2 = flange_b.s - L/2)";
    parameter SI.Length L = 0 "Length of component, from left flange to right flange (= flange_b.s - flange_a.s)";
    Flange_a flange_a "Left flange of translational component";
    Flange_b flange_b "Right flange of translational component";
  equation
    flange_a.s = s - L/2;
    flange_b.s = s + L/2;
  end PartialRigid;

  partial model PartialCompliant "Compliant connection of two translational 1D flanges: f = flange_b.f = -flange_a.f"
    Flange_a flange_a "Left flange of compliant 1-dim. translational component";
    Flange_b flange_b "Right flange of compliant 1-dim. translational component";
    SI.Position s_rel(start = 0) "Relative distance (= flange_b.s - flange_a.s; a Position, not the MSL's Distance, whose min = 0 a compressed spring leaves)";
    SI.Force f "Force between flanges (positive in direction of flange axis R)";
  equation
    s_rel = flange_b.s - flange_a.s;
    flange_b.f = f;
    flange_a.f = -f;
  end PartialCompliant;

  partial model PartialCompliantWithRelativeStates "Compliant connection of two translational 1D flanges with the relative position and velocity"
    Flange_a flange_a "Left flange of compliant 1-dim. translational component";
    Flange_b flange_b "Right flange of compliant 1-dim. translational component";
    SI.Position s_rel(start = 0) "Relative distance (= flange_b.s - flange_a.s)";
    SI.Velocity v_rel(start = 0) "Relative velocity (= der(s_rel))";
    SI.Force f "Force between flanges (= flange_b.f)";
  equation
    s_rel = flange_b.s - flange_a.s;
    v_rel = der(s_rel);
    flange_b.f = f;
    flange_a.f = -f;
  end PartialCompliantWithRelativeStates;
end Interfaces;
