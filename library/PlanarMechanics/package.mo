package PlanarMechanics "Planar multibody mechanics shipped with daec"
  annotation(Documentation(info = "Frames, bodies, joints and force elements in the plane, with the class names, connector variables and equations of the open PlanarMechanics library, written for daec; see docs/planar.md."));
end PlanarMechanics;
