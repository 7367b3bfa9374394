// Small translational and planar mechanical components for the
// hierarchical-model tests (written for daec; not the Modelica Standard
// Library). Flow variables are the forces acting on a component at its
// connector.
package Mechanics "Translational and planar mechanics"
  connector Flange "Translational flange"
    Real s "position";
    flow Real f "force on the component";
  end Flange;

  model Fixed "A flange at a fixed position"
    parameter Real s0 = 0;
    Flange flange;
  equation
    flange.s = s0;
  end Fixed;

  model Mass "A sliding mass"
    parameter Real m = 1 "mass";
    Flange flange;
    Real s "position";
    Real v "velocity";
  equation
    s = flange.s;
    v = der(s);
    m*der(v) = flange.f;
  end Mass;

  partial model Compliant "Two flanges and the force between them"
    Flange flange_a;
    Flange flange_b;
    Real s_rel "elongation";
    Real f "force from flange_a to flange_b";
  equation
    s_rel = flange_b.s - flange_a.s;
    flange_b.f = f;
    flange_a.f = -f;
  end Compliant;

  model Spring
    extends Compliant;
    parameter Real c = 1 "stiffness";
  equation
    f = c*s_rel;
  end Spring;

  model Damper
    extends Compliant;
    parameter Real d = 1 "damping";
  equation
    f = d*der(s_rel);
  end Damper;

  connector Frame "A point of a planar mechanism"
    Real x;
    Real y;
    flow Real fx "force on the component";
    flow Real fy;
  end Frame;

  model Pivot "A fixed point"
    Frame frame;
  equation
    frame.x = 0;
    frame.y = 0;
  end Pivot;

  model Rod "A massless rod of fixed length"
    parameter Real L = 1 "length";
    Frame frame_a;
    Frame frame_b;
    Real lambda "tension per length";
  equation
    (frame_b.x - frame_a.x)^2 + (frame_b.y - frame_a.y)^2 = L^2;
    frame_b.fx = -lambda*(frame_b.x - frame_a.x);
    frame_b.fy = -lambda*(frame_b.y - frame_a.y);
    frame_a.fx + frame_b.fx = 0;
    frame_a.fy + frame_b.fy = 0;
  end Rod;

  model Body "A point mass under gravity"
    parameter Real m = 1 "mass";
    parameter Real g = 9.81 "gravity";
    Frame frame;
    Real x;
    Real y;
    Real vx;
    Real vy;
  equation
    x = frame.x;
    y = frame.y;
    der(x) = vx;
    der(y) = vy;
    m*der(vx) = frame.fx;
    m*der(vy) = frame.fy - m*g;
  end Body;
end Mechanics;
