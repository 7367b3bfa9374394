within PlanarMechanics;
package Joints "Ideal joints without a drive flange"
  model Revolute "A revolute joint: frame_b turns by phi about the common origin"
    extends Interfaces.PartialTwoFrames;
    Real phi "angle of frame_b against frame_a (rad)";
    Real w "angular velocity (rad/s)";
  equation
    w = der(phi);
    frame_b.x = frame_a.x;
    frame_b.y = frame_a.y;
    frame_b.phi = frame_a.phi + phi;
    frame_a.fx + frame_b.fx = 0;
    frame_a.fy + frame_b.fy = 0;
    frame_a.t = 0;
    frame_b.t = 0;
  end Revolute;

  model Prismatic "A prismatic joint: frame_b slides by s along r (resolved in frame_a)"
    extends Interfaces.PartialTwoFrames;
    parameter Real r[2] = {1, 0} "direction of the motion in frame_a (a unit vector)";
    Real s "position of frame_b along r (m)";
    Real v "velocity (m/s)";
    Real e0[2](start = r) "the direction in world coordinates (starts at r: a zero guess would zero the Jacobian's entries for s)";
  equation
    v = der(s);
    e0[1] = cos(frame_a.phi)*r[1] - sin(frame_a.phi)*r[2];
    e0[2] = sin(frame_a.phi)*r[1] + cos(frame_a.phi)*r[2];
    frame_b.x = frame_a.x + s*e0[1];
    frame_b.y = frame_a.y + s*e0[2];
    frame_b.phi = frame_a.phi;
    frame_a.fx + frame_b.fx = 0;
    frame_a.fy + frame_b.fy = 0;
    frame_a.t + frame_b.t + s*(e0[1]*frame_b.fy - e0[2]*frame_b.fx) = 0;
    e0[1]*frame_b.fx + e0[2]*frame_b.fy = 0;
  end Prismatic;
end Joints;
