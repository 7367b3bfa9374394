within PlanarMechanics;
package Interfaces "Connectors of planar mechanics"
  connector Frame "A coordinate system in the plane: its origin and angle in world coordinates, and the force and torque on the component"
    Real x "x of the origin (m)";
    Real y "y of the origin (m)";
    Real phi "angle of the frame (rad)";
    flow Real fx "x of the force on the component (N)";
    flow Real fy "y of the force on the component (N)";
    flow Real t "torque on the component (N.m)";
  end Frame;

  connector Frame_a "A frame (the first of a component)"
    extends Frame;
  end Frame_a;

  connector Frame_b "A frame (the second of a component)"
    extends Frame;
  end Frame_b;

  partial model PartialTwoFrames "Two frames, with the vector from frame_a to frame_b in world coordinates"
    Frame_a frame_a;
    Frame_b frame_b;
  end PartialTwoFrames;
end Interfaces;
