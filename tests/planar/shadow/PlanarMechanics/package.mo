// A user's own `PlanarMechanics`: it shadows the shipped package, and
// only that one, when tests/planar/shadow is a library directory.
package PlanarMechanics
  model Decay
    parameter Real k = 1;
    Real x(start = 1, fixed = true);
  equation
    der(x) = -k*x;
  end Decay;
end PlanarMechanics;
