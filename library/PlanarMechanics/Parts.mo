within PlanarMechanics;
package Parts "Rigid parts and force elements"
  model Fixed "A frame fixed in the world"
    parameter Real r[2] = {0, 0} "position of the frame (m)";
    parameter Real phi = 0 "angle of the frame (rad)";
    Interfaces.Frame_b frame;
  equation
    frame.x = r[1];
    frame.y = r[2];
    frame.phi = phi;
  end Fixed;

  model Body "A rigid body with mass and inertia, its centre of mass at the frame"
    outer World world;
    parameter Real m = 1 "mass (kg)";
    parameter Real I = 0.1 "moment of inertia about the centre of mass (kg.m2)";
    Interfaces.Frame_a frame_a;
    Real r[2] "position of the centre of mass (m)";
    Real v[2] "velocity (m/s)";
    Real phi "angle (rad)";
    Real w "angular velocity (rad/s)";
  equation
    frame_a.x = r[1];
    frame_a.y = r[2];
    frame_a.phi = phi;
    v = der(r);
    w = der(phi);
    m*der(v[1]) = frame_a.fx + m*world.g*world.n[1];
    m*der(v[2]) = frame_a.fy + m*world.g*world.n[2];
    I*der(w) = frame_a.t;
  end Body;

  model FixedTranslation "A massless rod: frame_b at r (resolved in frame_a) from frame_a"
    extends Interfaces.PartialTwoFrames;
    parameter Real r[2] = {1, 0} "frame_b from frame_a, resolved in frame_a (m)";
    Real r0[2](start = r) "frame_b from frame_a, in world coordinates (m)";
  equation
    r0[1] = cos(frame_a.phi)*r[1] - sin(frame_a.phi)*r[2];
    r0[2] = sin(frame_a.phi)*r[1] + cos(frame_a.phi)*r[2];
    frame_b.x = frame_a.x + r0[1];
    frame_b.y = frame_a.y + r0[2];
    frame_b.phi = frame_a.phi;
    frame_a.fx + frame_b.fx = 0;
    frame_a.fy + frame_b.fy = 0;
    frame_a.t + frame_b.t + r0[1]*frame_b.fy - r0[2]*frame_b.fx = 0;
  end FixedTranslation;

  model FixedRotation "frame_b rotated by alpha against frame_a at the same origin"
    extends Interfaces.PartialTwoFrames;
    parameter Real alpha = 0 "angle of frame_b against frame_a (rad)";
  equation
    frame_b.x = frame_a.x;
    frame_b.y = frame_a.y;
    frame_b.phi = frame_a.phi + alpha;
    frame_a.fx + frame_b.fx = 0;
    frame_a.fy + frame_b.fy = 0;
    frame_a.t + frame_b.t = 0;
  end FixedRotation;

  partial model PartialLineForce "A force along the line between the two origins (give r0 and s start values near the initial geometry)"
    extends Interfaces.PartialTwoFrames;
    parameter Real s_small = 1e-10 "the least length divided by (m)";
    Real r0[2] "frame_b from frame_a, in world coordinates (m)";
    Real s "distance of the origins (m)";
    Real f "force pushing the frames apart (N)";
  equation
    r0[1] = frame_b.x - frame_a.x;
    r0[2] = frame_b.y - frame_a.y;
    s = sqrt(r0[1]^2 + r0[2]^2);
    frame_b.fx = -f*r0[1]/max(s, s_small);
    frame_b.fy = -f*r0[2]/max(s, s_small);
    frame_a.fx + frame_b.fx = 0;
    frame_a.fy + frame_b.fy = 0;
    frame_a.t = 0;
    frame_b.t = 0;
  end PartialLineForce;

  model Spring "A linear spring between the two origins"
    extends PartialLineForce;
    parameter Real c = 1 "stiffness (N/m)";
    parameter Real s_unstretched = 0 "unstretched length (m)";
  equation
    f = -c*(s - s_unstretched);
  end Spring;

  model Damper "A linear damper between the two origins"
    extends PartialLineForce;
    parameter Real d = 1 "damping (N.s/m)";
  equation
    f = -d*der(s);
  end Damper;

  model SpringDamper "A linear spring and damper in parallel between the two origins"
    extends PartialLineForce;
    parameter Real c = 1 "stiffness (N/m)";
    parameter Real s_unstretched = 0 "unstretched length (m)";
    parameter Real d = 1 "damping (N.s/m)";
  equation
    f = -c*(s - s_unstretched) - d*der(s);
  end SpringDamper;
end Parts;
